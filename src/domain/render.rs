//! Rendering: canonical facts → subject, text and HTML of one email (askama templates in
//! `templates/`, checked at compile time, HTML-escaped), and a rendered email → RFC 5322 bytes for
//! SMTP (mail-builder: multipart/alternative, RFC 2047 encoded UTF-8 headers, our own Message-ID).

use crate::domain::email::{DedupeKey, EmailKind, OutgoingEmail};
use crate::domain::event::{BookedRoom, EmailAddress, HotelBooking, Money, Source};
use crate::domain::ids::message_id_for;
use askama::Template;
use chrono::NaiveDate;

/// Errors while rendering; the journey step fails (and is retried) rather than send a broken email.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("template {template} failed: {source}")]
    Template {
        template: &'static str,
        #[source]
        source: askama::Error,
    },
    #[error("building the MIME message failed: {0}")]
    Mime(#[from] std::io::Error),
}

/// Sender identity and brand shown in every email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branding {
    /// Shown in bodies and as the From display name, e.g. `Example Trips`.
    pub brand: String,
    /// From address, e.g. `bookings@mail.example.com`.
    pub from: EmailAddress,
}

fn long_date(d: NaiveDate) -> String {
    d.format("%a %-d %B %Y").to_string()
}

fn money(m: &Option<Money>) -> Option<String> {
    m.as_ref().map(|m| format!("{} {}", m.amount, m.currency))
}

fn guest_list(b: &HotelBooking) -> String {
    let names: Vec<String> = if b.guests.is_empty() {
        vec![b.holder.name.full()]
    } else {
        b.guests.iter().map(|g| g.full()).collect()
    };
    names.join(", ")
}

#[derive(Template)]
#[template(path = "booking_confirmation.html")]
struct ConfirmationHtml<'a> {
    brand: &'a str,
    guest_first_name: &'a str,
    hotel_name: &'a str,
    booking_id: &'a str,
    checkin: String,
    checkout: String,
    nights: i64,
    rooms: &'a [BookedRoom],
    guests: String,
    total: Option<String>,
}

#[derive(Template)]
#[template(path = "booking_confirmation.txt")]
struct ConfirmationText<'a> {
    brand: &'a str,
    guest_first_name: &'a str,
    hotel_name: &'a str,
    booking_id: &'a str,
    checkin: String,
    checkout: String,
    nights: i64,
    rooms: &'a [BookedRoom],
    guests: String,
    total: Option<String>,
}

#[derive(Template)]
#[template(path = "owner_new_booking.html")]
struct OwnerNewBookingHtml<'a> {
    brand: &'a str,
    sandbox: bool,
    booking_id: &'a str,
    guest_name: String,
    guest_email: &'a str,
    guest_phone: Option<&'a str>,
    hotel_name: &'a str,
    checkin: String,
    checkout: String,
    nights: i64,
    total: Option<String>,
    source: &'a str,
    event_id: &'a str,
}

#[derive(Template)]
#[template(path = "owner_new_booking.txt")]
struct OwnerNewBookingText<'a> {
    sandbox: bool,
    booking_id: &'a str,
    guest_name: String,
    guest_email: &'a str,
    guest_phone: Option<&'a str>,
    hotel_name: &'a str,
    checkin: String,
    checkout: String,
    nights: i64,
    total: Option<String>,
    source: &'a str,
    event_id: &'a str,
}

fn render<T: Template>(name: &'static str, t: &T) -> Result<String, RenderError> {
    t.render().map_err(|source| RenderError::Template {
        template: name,
        source,
    })
}

/// The guest's booking confirmation (kind `booking_confirmation`, rank booking).
pub fn booking_confirmation(
    b: &HotelBooking,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::BookingConfirmation;
    let first = if b.holder.name.first_name.trim().is_empty() {
        "there"
    } else {
        b.holder.name.first_name.trim()
    };
    let html = render(
        "booking_confirmation.html",
        &ConfirmationHtml {
            brand: &branding.brand,
            guest_first_name: first,
            hotel_name: &b.hotel_name,
            booking_id: b.booking_id.as_str(),
            checkin: long_date(b.checkin),
            checkout: long_date(b.checkout),
            nights: b.nights(),
            rooms: &b.rooms,
            guests: guest_list(b),
            total: money(&b.total),
        },
    )?;
    let text = render(
        "booking_confirmation.txt",
        &ConfirmationText {
            brand: &branding.brand,
            guest_first_name: first,
            hotel_name: &b.hotel_name,
            booking_id: b.booking_id.as_str(),
            checkin: long_date(b.checkin),
            checkout: long_date(b.checkout),
            nights: b.nights(),
            rooms: &b.rooms,
            guests: guest_list(b),
            total: money(&b.total),
        },
    )?;
    let dedupe_key = DedupeKey::for_booking(kind, &b.booking_id);
    Ok(OutgoingEmail {
        message_id: message_id_for(dedupe_key.as_str(), branding.from.domain()),
        dedupe_key,
        kind,
        audience: kind.audience(),
        rank: kind.rank(),
        booking_id: Some(b.booking_id.to_string()),
        to: b.holder.email.clone(),
        subject: format!("Your stay at {} is confirmed", b.hotel_name),
        text,
        html,
    })
}

/// The owner's "new booking" alert (kind `owner_new_booking`, sent at once).
pub fn owner_new_booking(
    b: &HotelBooking,
    source: Source,
    event_id: &str,
    owner: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerNewBooking;
    let html = render(
        "owner_new_booking.html",
        &OwnerNewBookingHtml {
            brand: &branding.brand,
            sandbox: b.sandbox,
            booking_id: b.booking_id.as_str(),
            guest_name: b.holder.name.full(),
            guest_email: b.holder.email.as_str(),
            guest_phone: b.holder.phone.as_deref(),
            hotel_name: &b.hotel_name,
            checkin: long_date(b.checkin),
            checkout: long_date(b.checkout),
            nights: b.nights(),
            total: money(&b.total),
            source: source.as_str(),
            event_id,
        },
    )?;
    let text = render(
        "owner_new_booking.txt",
        &OwnerNewBookingText {
            sandbox: b.sandbox,
            booking_id: b.booking_id.as_str(),
            guest_name: b.holder.name.full(),
            guest_email: b.holder.email.as_str(),
            guest_phone: b.holder.phone.as_deref(),
            hotel_name: &b.hotel_name,
            checkin: long_date(b.checkin),
            checkout: long_date(b.checkout),
            nights: b.nights(),
            total: money(&b.total),
            source: source.as_str(),
            event_id,
        },
    )?;
    let dedupe_key = DedupeKey::for_booking(kind, &b.booking_id);
    let sandbox = if b.sandbox { " [sandbox]" } else { "" };
    Ok(OutgoingEmail {
        message_id: message_id_for(dedupe_key.as_str(), branding.from.domain()),
        dedupe_key,
        kind,
        audience: kind.audience(),
        rank: kind.rank(),
        booking_id: Some(b.booking_id.to_string()),
        to: owner.clone(),
        subject: format!(
            "New booking{sandbox}: {} · {} · {}",
            b.hotel_name,
            b.holder.name.full(),
            b.checkin
        ),
        text,
        html,
    })
}

#[derive(Template)]
#[template(path = "owner_email_failed.html")]
struct OwnerEmailFailedHtml<'a> {
    brand: &'a str,
    outcome: &'a str,
    kind: &'a str,
    dedupe_key: &'a str,
    to: &'a str,
    subject: &'a str,
    attempts: i64,
    reason: &'a str,
}

#[derive(Template)]
#[template(path = "owner_email_failed.txt")]
struct OwnerEmailFailedText<'a> {
    outcome: &'a str,
    kind: &'a str,
    dedupe_key: &'a str,
    to: &'a str,
    subject: &'a str,
    attempts: i64,
    reason: &'a str,
}

/// The owner's alert that a client email was dropped (`outcome = "dropped"`) or became a dead
/// letter (`"dead"`). Its dedupe key is derived from the failed email's key, so one alert per email.
pub fn owner_email_failed(
    failed: &OutgoingEmail,
    outcome: &str,
    attempts: i64,
    reason: &str,
    owner: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerEmailFailed;
    let html = render(
        "owner_email_failed.html",
        &OwnerEmailFailedHtml {
            brand: &branding.brand,
            outcome,
            kind: failed.kind.as_str(),
            dedupe_key: failed.dedupe_key.as_str(),
            to: failed.to.as_str(),
            subject: &failed.subject,
            attempts,
            reason,
        },
    )?;
    let text = render(
        "owner_email_failed.txt",
        &OwnerEmailFailedText {
            outcome,
            kind: failed.kind.as_str(),
            dedupe_key: failed.dedupe_key.as_str(),
            to: failed.to.as_str(),
            subject: &failed.subject,
            attempts,
            reason,
        },
    )?;
    let dedupe_key = DedupeKey::new(kind, failed.dedupe_key.as_str());
    Ok(OutgoingEmail {
        message_id: message_id_for(dedupe_key.as_str(), branding.from.domain()),
        dedupe_key,
        kind,
        audience: kind.audience(),
        rank: kind.rank(),
        booking_id: failed.booking_id.clone(),
        to: owner.clone(),
        subject: format!("Email {outcome}: {}", failed.subject),
        text,
        html,
    })
}

/// Builds the RFC 5322 message for SMTP: multipart/alternative (text + HTML), encoded UTF-8
/// headers, the email's own deterministic Message-ID, `Date` from `date_unix_s` (UTC seconds).
pub fn to_mime(
    email: &OutgoingEmail,
    branding: &Branding,
    date_unix_s: i64,
) -> Result<Vec<u8>, RenderError> {
    let message_id = email
        .message_id
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_string();
    let bytes = mail_builder::MessageBuilder::new()
        .from((branding.brand.as_str(), branding.from.as_str()))
        .to(email.to.as_str())
        .subject(email.subject.as_str())
        .message_id(message_id)
        .date(date_unix_s)
        .text_body(email.text.as_str())
        .html_body(email.html.as_str())
        .write_to_vec()?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::event::{BookingRef, Holder, PersonName};

    pub(crate) fn sample_booking() -> HotelBooking {
        HotelBooking {
            booking_id: BookingRef::parse("BK_1").unwrap(),
            client_reference: None,
            prebook_id: None,
            status: "CONFIRMED".into(),
            hotel_id: Some("lp_1".into()),
            hotel_name: "Hôtel <Harbour> & Spa".into(),
            checkin: NaiveDate::from_ymd_opt(2026, 6, 12).unwrap(),
            checkout: NaiveDate::from_ymd_opt(2026, 6, 15).unwrap(),
            rooms: vec![BookedRoom {
                room_name: "Standard Double".into(),
                board_name: Some("Room Only".into()),
                adults: 2,
                children: 0,
            }],
            holder: Holder {
                name: PersonName {
                    first_name: "Zoë".into(),
                    last_name: "Guest".into(),
                },
                email: EmailAddress::parse("guest@example.com").unwrap(),
                phone: None,
            },
            guests: vec![],
            total: Some(Money {
                amount: "540".into(),
                currency: "EUR".into(),
            }),
            hotel_confirmation_number: None,
            sandbox: false,
            location: None,
            checkin_instructions: None,
            replaces: None,
        }
    }

    fn branding() -> Branding {
        Branding {
            brand: "Example Trips".into(),
            from: EmailAddress::parse("bookings@mail.example.com").unwrap(),
        }
    }

    #[test]
    fn confirmation_has_the_facts_and_escapes_html() {
        let e = booking_confirmation(&sample_booking(), &branding()).unwrap();
        assert_eq!(e.dedupe_key.as_str(), "booking_confirmation:BK_1");
        assert_eq!(e.to.as_str(), "guest@example.com");
        for needle in [
            "BK_1",
            "Fri 12 June 2026",
            "Mon 15 June 2026",
            "3 nights",
            "540 EUR",
            "Standard Double",
            "Zoë Guest",
        ] {
            assert!(e.text.contains(needle), "text lacks {needle}: {}", e.text);
            assert!(e.html.contains(needle), "html lacks {needle}");
        }
        assert!(
            e.html.contains("Hôtel &#60;Harbour&#62; &#38; Spa")
                || e.html.contains("Hôtel &lt;Harbour&gt; &amp; Spa"),
            "{}",
            e.html
        );
        assert!(e.text.contains("Hôtel <Harbour> & Spa"));
        assert!(!e.text.contains("{{") && !e.html.contains("{%"));
    }

    #[test]
    fn owner_alert_goes_to_the_owner_and_names_the_guest() {
        let owner = EmailAddress::parse("owner@example.com").unwrap();
        let e = owner_new_booking(
            &sample_booking(),
            Source::Liteapi,
            "evt_1",
            &owner,
            &branding(),
        )
        .unwrap();
        assert_eq!(e.to, owner);
        assert_eq!(e.dedupe_key.as_str(), "owner_new_booking:BK_1");
        assert!(e.text.contains("guest@example.com") && e.text.contains("evt_1"));
    }

    #[test]
    fn mime_is_multipart_alternative_with_encoded_subject_and_our_message_id() {
        let e = booking_confirmation(&sample_booking(), &branding()).unwrap();
        let raw = String::from_utf8(to_mime(&e, &branding(), 1_767_225_600).unwrap()).unwrap();
        assert!(raw.contains("multipart/alternative"), "{raw}");
        assert!(
            raw.contains(&format!("Message-ID: {}", e.message_id)),
            "{raw}"
        );
        assert!(
            raw.contains("Subject: =?utf-8?"),
            "non-ASCII subject must be RFC 2047 encoded: {raw}"
        );
        assert!(
            raw.contains("Date: Thu, 1 Jan 2026 00:00:00 +0000"),
            "{raw}"
        );
        assert!(raw.contains("text/plain") && raw.contains("text/html"));
    }
}
