//! The guest's hotel emails: confirmation, the hotel's own confirmation number, arrival guide,
//! check-in day, thank-you and "booking updated". Each goes to the booking holder, keyed by
//! booking id (plus what makes a new email: the number, the check-in date, the snapshot hash).

use super::text::{greet, guest_list, non_empty, plain_instructions};
use super::{compose, Branding, Envelope, RenderError};
use crate::domain::email::markup::{self, Status};
use crate::domain::email::{DedupeKey, EmailKind};
use crate::domain::event::{BookedRoom, HotelBooking};
use crate::domain::i18n::Tr;
use crate::domain::outbox::outgoing::OutgoingEmail;

/// The facts of one stay, shared by the hotel emails (`_stay_details.*`).
struct StayView<'a> {
    hotel_name: &'a str,
    booking_id: &'a str,
    hotel_confirmation_number: Option<&'a str>,
    checkin: String,
    checkout: String,
    nights: i64,
    rooms: &'a [BookedRoom],
    guests: String,
    total: Option<String>,
}

impl<'a> StayView<'a> {
    /// Every fact, the hotel confirmation number when known, no price.
    fn of(b: &'a HotelBooking, tr: Tr) -> Self {
        Self {
            hotel_name: &b.hotel_name,
            booking_id: b.booking_id.as_str(),
            hotel_confirmation_number: non_empty(b.hotel_confirmation_number.as_deref()),
            checkin: tr.date(b.checkin),
            checkout: tr.date(b.checkout),
            nights: b.nights(),
            rooms: &b.rooms,
            guests: guest_list(b),
            total: None,
        }
    }

    fn with_total(self, b: &HotelBooking, tr: Tr) -> Self {
        Self {
            total: tr.money_of(&b.total),
            ..self
        }
    }

    fn without_confirmation_number(self) -> Self {
        Self {
            hotel_confirmation_number: None,
            ..self
        }
    }
}

/// The supplier's check-in instructions as plain text, when there are any.
fn instructions_of(b: &HotelBooking) -> Option<String> {
    b.checkin_instructions
        .as_deref()
        .map(plain_instructions)
        .filter(|s| !s.is_empty())
}

/// To the booking holder, about this booking: key `<kind>:<booking id>`, or
/// `<kind>:<booking id>:<part>` with a `part`; the subject is the message `subject` naming the
/// hotel.
fn to_holder<'a>(
    b: &'a HotelBooking,
    kind: EmailKind,
    part: Option<&str>,
    subject: &str,
    tr: Tr,
) -> Envelope<'a> {
    let key = match part {
        Some(part) => DedupeKey::for_booking_part(kind, &b.booking_id, part),
        None => DedupeKey::for_booking(kind, &b.booking_id),
    };
    let subject = tr.t1(subject, "hotel", &b.hotel_name);
    Envelope::new(kind, key, &b.holder.email, subject).about(&b.booking_id)
}

/// An email of the check-in date (arrival guide, check-in day): key
/// `<kind>:<booking id>:<check-in YYYY-MM-DD>`, so a moved stay gets a new one, with the
/// confirmed stay's markup.
fn on_checkin_date<'a>(
    b: &'a HotelBooking,
    kind: EmailKind,
    subject: &str,
    tr: Tr,
) -> Envelope<'a> {
    to_holder(b, kind, Some(&b.checkin.to_string()), subject, tr).with_markup(markup::lodging(
        b,
        Status::Confirmed,
        None,
    ))
}

struct Confirmation<'a> {
    tr: Tr,
    brand: &'a str,
    greeting: String,
    stay: StayView<'a>,
    instructions: Option<String>,
}
email_body!(
    Confirmation = "booking_confirmation.html",
    "booking_confirmation.txt"
);

struct HotelNumber<'a> {
    tr: Tr,
    brand: &'a str,
    greeting: String,
    number: &'a str,
    stay: StayView<'a>,
}
email_body!(
    HotelNumber = "hotel_confirmation_number.html",
    "hotel_confirmation_number.txt"
);

struct ArrivalGuide<'a> {
    tr: Tr,
    brand: &'a str,
    greeting: String,
    stay: StayView<'a>,
    instructions: Option<String>,
}
email_body!(ArrivalGuide = "arrival_guide.html", "arrival_guide.txt");

struct CheckinDay<'a> {
    tr: Tr,
    brand: &'a str,
    greeting: String,
    hcn: Option<&'a str>,
    stay: StayView<'a>,
    instructions: Option<String>,
}
email_body!(CheckinDay = "checkin_day.html", "checkin_day.txt");

struct ThankYou<'a> {
    tr: Tr,
    brand: &'a str,
    greeting: String,
    hotel_name: &'a str,
}
email_body!(ThankYou = "thank_you.html", "thank_you.txt");

struct Updated<'a> {
    tr: Tr,
    brand: &'a str,
    greeting: String,
    changes: Vec<(String, String, String)>,
    stay: StayView<'a>,
    instructions: Option<String>,
}
email_body!(Updated = "booking_updated.html", "booking_updated.txt");

/// The guest's booking confirmation (kind `booking_confirmation`, rank booking). Carries the
/// hotel confirmation number and the check-in instructions when they are already known (a late
/// booking's arrival guide is merged into it).
pub fn booking_confirmation(
    b: &HotelBooking,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let tr = branding.tr();
    compose(
        to_holder(
            b,
            EmailKind::BookingConfirmation,
            None,
            "confirmation-subject",
            tr,
        )
        .with_markup(markup::lodging(b, Status::Confirmed, None)),
        &Confirmation {
            tr,
            brand: &branding.brand,
            greeting: greet(tr, &b.holder.name.first_name),
            stay: StayView::of(b, tr).with_total(b, tr),
            instructions: instructions_of(b),
        },
        branding,
    )
}

/// The hotel's own confirmation number (kind `hotel_confirmation_number`, rank booking), key
/// `hotel_confirmation_number:<booking id>:<number>`: a corrected number is a new email.
/// `at_ms`: the number's receipt (the markup's `modifiedTime`, UTC ms).
pub fn hotel_confirmation_number(
    b: &HotelBooking,
    number: &str,
    at_ms: i64,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let tr = branding.tr();
    let number = number.trim();
    compose(
        to_holder(
            b,
            EmailKind::HotelConfirmationNumber,
            Some(number),
            "hcn-subject",
            tr,
        )
        .with_markup(markup::lodging(b, Status::Confirmed, Some(at_ms))),
        &HotelNumber {
            tr,
            brand: &branding.brand,
            greeting: greet(tr, &b.holder.name.first_name),
            number,
            stay: StayView::of(b, tr).without_confirmation_number(),
        },
        branding,
    )
}

/// The arrival guide, three days before check-in (kind `arrival_guide`, rank service), key
/// `arrival_guide:<booking id>:<check-in YYYY-MM-DD>`: a moved stay gets a new guide.
pub fn arrival_guide(b: &HotelBooking, branding: &Branding) -> Result<OutgoingEmail, RenderError> {
    let tr = branding.tr();
    compose(
        on_checkin_date(b, EmailKind::ArrivalGuide, "arrival-subject", tr),
        &ArrivalGuide {
            tr,
            brand: &branding.brand,
            greeting: greet(tr, &b.holder.name.first_name),
            stay: StayView::of(b, tr),
            instructions: instructions_of(b),
        },
        branding,
    )
}

/// The check-in day email (kind `checkin_day`, rank urgent), key
/// `checkin_day:<booking id>:<check-in YYYY-MM-DD>`.
pub fn checkin_day(b: &HotelBooking, branding: &Branding) -> Result<OutgoingEmail, RenderError> {
    let tr = branding.tr();
    compose(
        on_checkin_date(b, EmailKind::CheckinDay, "checkin-subject", tr),
        &CheckinDay {
            tr,
            brand: &branding.brand,
            greeting: greet(tr, &b.holder.name.first_name),
            hcn: non_empty(b.hotel_confirmation_number.as_deref()),
            stay: StayView::of(b, tr).without_confirmation_number(),
            instructions: instructions_of(b),
        },
        branding,
    )
}

/// The thank-you after check-out (kind `thank_you`, rank service), key `thank_you:<booking id>`.
/// Short, warm, no marketing and no links.
pub fn thank_you(b: &HotelBooking, branding: &Branding) -> Result<OutgoingEmail, RenderError> {
    let tr = branding.tr();
    compose(
        to_holder(b, EmailKind::ThankYou, None, "thanks-subject", tr),
        &ThankYou {
            tr,
            brand: &branding.brand,
            greeting: greet(tr, &b.holder.name.first_name),
            hotel_name: &b.hotel_name,
        },
        branding,
    )
}

/// The guest's "booking updated" (kind `booking_updated`, rank booking), key
/// `booking_updated:<booking id>:<first 16 characters of snapshot_hash>`: one email per distinct
/// state. `changes` are `(label, before, after)` rows; the current details follow them. `at_ms`:
/// the change's receipt (the markup's `modifiedTime`, UTC ms).
pub fn booking_updated(
    b: &HotelBooking,
    snapshot_hash: &str,
    changes: &[(String, String, String)],
    at_ms: i64,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let tr = branding.tr();
    let hash: String = snapshot_hash.trim().chars().take(16).collect();
    compose(
        to_holder(
            b,
            EmailKind::BookingUpdated,
            Some(&hash),
            "updated-subject",
            tr,
        )
        .with_markup(markup::lodging(b, Status::Confirmed, Some(at_ms))),
        &Updated {
            tr,
            brand: &branding.brand,
            greeting: greet(tr, &b.holder.name.first_name),
            changes: changes
                .iter()
                .map(|(field, before, after)| {
                    // A board type reads in the guest's language when it is a known one.
                    let value = |v: &str| {
                        if field.ends_with(".board") {
                            tr.board(v)
                        } else {
                            tr.field_value(v)
                        }
                    };
                    (tr.field_label(field), value(before), value(after))
                })
                .collect(),
            stay: StayView::of(b, tr).with_total(b, tr),
            instructions: instructions_of(b),
        },
        branding,
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{branding, sample_booking};
    use super::*;

    #[test]
    fn confirmation_has_the_facts_and_escapes_html() {
        let e = booking_confirmation(&sample_booking(), &branding()).unwrap();
        assert_eq!(e.dedupe_key.as_str(), "booking_confirmation:BK_1");
        assert_eq!(e.to.as_str(), "guest@example.com");
        for needle in [
            "BK_1",
            "Friday, 12 June 2026",
            "Monday, 15 June 2026",
            "3 nights",
            "€540.00",
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
}
