//! Rendering: canonical facts → the subject, text and HTML of one email, and the HTML pages the
//! engine serves (one-click action and unsubscribe pages); a rendered email → RFC 5322 bytes for
//! SMTP.
//!
//! Every email is built one way: a *view* (the facts as the templates read them) plus a pair of
//! askama templates in `templates/` (`<name>.html` extends `base.html`, `<name>.txt`), declared
//! with the `email_body!` macro as a [`Body`], then [`compose`]d with an
//! [`Envelope`] (kind, dedupe key, recipient, subject) into an [`OutgoingEmail`]. Templates are
//! checked at compile time; askama HTML-escapes every value in `.html` templates (numeric
//! entities: `<` → `&#60;`, `&` → `&#38;`) and leaves `.txt` templates as written.
//!
//! Layout, by audience and job:
//! - [`hotel`]: the guest's hotel emails (confirmation, hotel confirmation number, arrival guide,
//!   check-in day, thank-you, booking updated);
//! - [`flight`]: the guest's flight emails (confirmation, schedule change);
//! - [`cancellation`]: the guest's cancellation, hotel or flight;
//! - [`checkout`]: unfinished-checkout emails to the customer (follow-up, declines);
//! - [`owner`]: the owner's alerts (new booking, cancellation, failed email, paused provider,
//!   checkout hold);
//! - [`digest`]: the owner's daily digest and the outbox's backlog alert;
//! - [`pages`]: the one-click action pages, the unsubscribe pages and the bare fallback page;
//! - [`mime`]: a rendered email as RFC 5322 bytes ([`to_mime`]);
//! - [`text`]: formatting shared by all of them (dates, money, names, plain instructions).
//!
//! Rendering is deterministic: the same facts give byte-identical emails (every attempt of one
//! dedupe key sends the same message).
//!
//! May use: `basics`, `event`, `timezone`, `i18n`, `email`, `payment`, `inbound`, `outbox`, `marketing`, `admin`,
//! `sweeper` (it comes last in the order; nothing in `domain` uses it).

use crate::domain::basics::text::{header_value, HEADER_MAX_CHARS, SUBJECT_MAX_CHARS};
use crate::domain::email::{DedupeKey, EmailKind};
use crate::domain::event::ids::message_id_for;
use crate::domain::event::{BookingRef, EmailAddress};
use crate::domain::i18n::{self, Lang, Locale, Region, Tr};
use crate::domain::outbox::outgoing::OutgoingEmail;

/// Declares the HTML and the text template of one email over one view, and implements [`Body`].
///
/// - `email_body!(View = "x.html", "x.txt");` — `View<'a>` itself is the body.
/// - `email_body!(Name(View) = "x.html", "x.txt");` — declares a private
///   `struct Name<'a, 'b>(&'b View<'a>)` as the body, for a view that feeds more than one email.
///
/// The templates read the view's fields by name (two private wrapper types deref to the view).
macro_rules! email_body {
    ($view:ident = $html:tt, $text:tt) => {
        $crate::domain::render::email_body!(@impl [$view<'_>] $view, $html, $text, |view| view);
    };
    ($body:ident($view:ident) = $html:tt, $text:tt) => {
        #[doc = concat!("The view rendered with `", $html, "` and `", $text, "`.")]
        struct $body<'a, 'b>(&'b $view<'a>);
        $crate::domain::render::email_body!(@impl [$body<'_, '_>] $view, $html, $text, |body| body.0);
    };
    (@impl [$($target:tt)*] $view:ident, $html:tt, $text:tt, |$this:ident| $get:expr) => {
        const _: () = {
            $crate::domain::render::email_body!(@template Html = $html over $view);
            $crate::domain::render::email_body!(@template Text = $text over $view);

            impl $crate::domain::render::Body for $($target)* {
                fn parts(
                    &self,
                ) -> Result<$crate::domain::render::Parts, $crate::domain::render::RenderError> {
                    let $this = self;
                    let view: &$view<'_> = $get;
                    Ok($crate::domain::render::Parts {
                        html: $crate::domain::render::render_template($html, &Html(view))?,
                        text: $crate::domain::render::render_template($text, &Text(view))?,
                    })
                }
            }
        };
    };
    (@template $wrapper:ident = $path:tt over $view:ident) => {
        #[derive(askama::Template)]
        #[template(path = $path)]
        struct $wrapper<'a, 'b>(&'b $view<'a>);

        impl<'a> std::ops::Deref for $wrapper<'a, '_> {
            type Target = $view<'a>;
            fn deref(&self) -> &$view<'a> {
                self.0
            }
        }
    };
}
/// The one way to declare an email body, also for emails rendered outside this module (marketing).
pub(crate) use email_body;

pub mod admin;
pub mod admin_conversations;
pub mod admin_waiting;
pub mod calendar;
pub mod cancellation;
pub mod checkout;
pub mod compensation;
pub mod conversation;
pub mod digest;
pub mod flight;
pub mod foreign;
pub mod guard;
pub mod hotel;
pub mod journey_failed;
pub mod marketing;
pub mod mime;
pub mod owner;
pub mod pages;
pub mod text;
pub mod webhooks;

pub use cancellation::{booking_cancelled, CancelledBooking};
pub use checkout::{checkout_declined, checkout_not_completed};
pub use compensation::{
    booking_not_confirmed, owner_compensation, CalendarCancel, CompensationNotice,
    OwnerCompensation,
};
pub use digest::{owner_backlog, owner_digest};
pub use flight::{flight_changed, flight_confirmation, SegmentView};
pub use foreign::owner_foreign_event;
pub use hotel::{
    arrival_guide, booking_confirmation, booking_updated, checkin_day, hotel_confirmation_number,
    thank_you,
};
pub use journey_failed::owner_journey_failed;
pub use mime::to_mime;
pub use owner::{
    fault_key, owner_booking_cancelled, owner_checkout_hold, owner_email_failed, owner_hold_recall,
    owner_new_booking, owner_provider_paused, owner_sends_failed, utc_minute, JourneyFailure,
    ProviderPaused,
};
// Kept at its old path for callers other branches are editing (the unsubscribe pages used it).
#[allow(unused_imports)]
pub(crate) use pages::fallback_page;
pub use pages::{
    action_confirm_page, action_result_page, refund_confirm_page, unsubscribe_confirm_page,
    unsubscribe_confirm_page_in, unsubscribe_result_page, unsubscribe_result_page_in, ConfirmForm,
};
pub use text::plain_instructions;

/// Errors while rendering; the journey step fails (and is retried) rather than send a broken email.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// An askama template failed (a value's `Display` failed); names the template file.
    #[error("template {template} failed: {source}")]
    Template {
        template: &'static str,
        #[source]
        source: askama::Error,
    },
    /// mail-builder could not write the message ([`to_mime`]).
    #[error("building the MIME message failed: {0}")]
    Mime(#[from] std::io::Error),
    /// The inputs would make an email that must not be sent (e.g. a customer email asked for the
    /// `dismiss` action, or a retry link that is not a public `http(s)` booking-site URL).
    #[error("refused to render: {0}")]
    Refused(String),
}

/// Sender identity and brand shown in every email, and the language it is written in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branding {
    /// Shown in bodies and as the From display name, e.g. `Example Trips`.
    pub brand: String,
    /// From address, e.g. `bookings@mail.example.com`.
    pub from: EmailAddress,
    /// The language of the email: `OWNER_LOCALE` in the configured branding (owner alerts), the
    /// booking's guest language for guest mail ([`Branding::in_locale`]).
    pub locale: Locale,
    /// The regional formats of its dates, times and money ([`Region::DEFAULT`]: the language's
    /// own).
    pub region: Region,
}

impl Branding {
    /// The same sender writing in `lang` (a guest email): its language and regional formats.
    pub fn in_locale(&self, lang: impl Into<Lang>) -> Branding {
        let lang = lang.into();
        Branding {
            locale: lang.locale,
            region: lang.region,
            ..self.clone()
        }
    }

    /// The translator of this email's language and region.
    pub fn tr(&self) -> Tr {
        Tr::of(Lang {
            locale: self.locale,
            region: self.region,
        })
    }
}

/// The two rendered parts of one email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    /// The `text/html` part (a full document extending `templates/base.html`).
    pub html: String,
    /// The `text/plain` part.
    pub text: String,
}

/// The body of one email: a view and its two templates (declare it with `email_body!`).
pub trait Body {
    /// Renders both templates over the view.
    fn parts(&self) -> Result<Parts, RenderError>;
}

/// Everything about one email but its body: what it is, under which dedupe key, to whom.
#[derive(Debug, Clone)]
pub struct Envelope<'a> {
    /// Gives the email's audience and rank ([`EmailKind::audience`], [`EmailKind::rank`]).
    pub kind: EmailKind,
    /// Also seeds the deterministic Message-ID ([`message_id_for`]).
    pub dedupe_key: DedupeKey,
    /// The booking the email is about; `None` for checkout emails and provider alerts.
    pub booking_id: Option<String>,
    /// The recipient: the guest, the customer or the owner.
    pub to: &'a EmailAddress,
    /// The subject as written; [`compose`] makes it one line of at most
    /// [`SUBJECT_MAX_CHARS`] characters, and mail-builder RFC 2047-encodes it when not ASCII.
    pub subject: String,
    /// Extra headers every provider sends, e.g. the RFC 8058 `List-Unsubscribe` pair of a
    /// marketing email; empty for booking mail.
    pub headers: Vec<(String, String)>,
    /// The schema.org reservation markup of a booking email (JSON-LD, [`crate::domain::email::markup`]),
    /// written at the top of the HTML body by [`compose`]; `None` for every other email.
    pub markup: Option<String>,
}

impl<'a> Envelope<'a> {
    /// An email about no booking (a checkout, a provider); [`Envelope::about`] names one.
    pub fn new(
        kind: EmailKind,
        dedupe_key: DedupeKey,
        to: &'a EmailAddress,
        subject: String,
    ) -> Self {
        Self {
            kind,
            dedupe_key,
            booking_id: None,
            to,
            subject,
            headers: Vec::new(),
            markup: None,
        }
    }

    /// The same envelope about the booking `booking_id`.
    pub fn about(self, booking_id: &BookingRef) -> Self {
        Self {
            booking_id: Some(booking_id.to_string()),
            ..self
        }
    }

    /// The same envelope with reservation markup, JSON text (`None`: none, see
    /// [`crate::domain::email::markup`]).
    pub fn with_markup(self, markup: Option<String>) -> Self {
        Self { markup, ..self }
    }
}

/// Where every owner alert goes and how it is signed: the owner's address (`OWNER_EMAIL`) and the
/// configured branding (in `OWNER_LOCALE`). Each owner alert's renderer takes one.
#[derive(Debug, Clone, Copy)]
pub struct OwnerInbox<'a> {
    /// The owner's address.
    pub to: &'a EmailAddress,
    /// The sender, brand and language of the alerts.
    pub branding: &'a Branding,
}

impl<'a> OwnerInbox<'a> {
    /// The inbox at `to`, alerts signed with `branding`.
    pub fn new(to: &'a EmailAddress, branding: &'a Branding) -> Self {
        Self { to, branding }
    }

    /// The brand shown in the alert's body.
    pub fn brand(&self) -> &'a str {
        &self.branding.brand
    }

    /// An envelope to the owner under the key `<kind>:<reference>`, about no booking (chain
    /// [`Envelope::about`] for one).
    pub fn envelope(&self, kind: EmailKind, reference: &str, subject: String) -> Envelope<'a> {
        Envelope::new(kind, DedupeKey::new(kind, reference), self.to, subject)
    }

    /// [`compose`]s `body` in `envelope` with the owner's branding.
    pub fn send(
        &self,
        envelope: Envelope<'_>,
        body: &dyn Body,
    ) -> Result<OutgoingEmail, RenderError> {
        compose(envelope, body, self.branding)
    }

    /// An alert about no booking: [`Self::envelope`], then [`Self::send`].
    pub fn alert(
        &self,
        kind: EmailKind,
        reference: &str,
        subject: String,
        body: &dyn Body,
    ) -> Result<OutgoingEmail, RenderError> {
        self.send(self.envelope(kind, reference, subject), body)
    }
}

/// The one way to an [`OutgoingEmail`]: renders `body` and fills in what every email carries the
/// same way (audience and rank from the kind, a Message-ID from the dedupe key and the sender's
/// domain).
///
/// Errors: [`RenderError::Refused`] when a message the body (or the subject) asked for exists in
/// no language file, English included (it would otherwise render as nothing).
pub fn compose(
    envelope: Envelope<'_>,
    body: &dyn Body,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let Parts { html, text } = body.parts()?;
    let missing = i18n::take_missing();
    if !missing.is_empty() {
        return Err(RenderError::Refused(format!(
            "messages missing from every language file: {}",
            missing.join(", ")
        )));
    }
    let Envelope {
        kind,
        dedupe_key,
        booking_id,
        to,
        subject,
        headers,
        markup,
    } = envelope;
    let html = match markup {
        Some(m) => crate::domain::email::markup::embed(&html, &m),
        None => html,
    };
    Ok(OutgoingEmail {
        message_id: message_id_for(dedupe_key.as_str(), branding.from.domain()),
        headers: headers
            .into_iter()
            .map(|(name, value)| (name, header_value(&value, HEADER_MAX_CHARS)))
            .collect(),
        dedupe_key,
        kind,
        audience: kind.audience(),
        rank: kind.rank(),
        booking_id,
        to: to.clone(),
        subject: header_value(&subject, SUBJECT_MAX_CHARS),
        text,
        html,
        intent: None,
        lock: None,
        calendars: Vec::new(),
        legacy_calendar: None,
        reply_to: None,
    })
}

/// Renders one template, naming it in the error.
pub(crate) fn render_template<T: askama::Template>(
    name: &'static str,
    t: &T,
) -> Result<String, RenderError> {
    t.render().map_err(|source| RenderError::Template {
        template: name,
        source,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::domain::event::{
        BookedRoom, BookingRef, EmailAddress, Holder, HotelBooking, Money, PersonName,
    };
    use chrono::NaiveDate;

    use super::Branding;

    /// A booking whose hotel name needs escaping and whose guest name is not ASCII.
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
            locale: None,
        }
    }

    pub(crate) fn branding() -> Branding {
        Branding {
            brand: "Example Trips".into(),
            from: EmailAddress::parse("bookings@mail.example.com").unwrap(),
            locale: crate::domain::i18n::Locale::En,
            region: crate::domain::i18n::Region::DEFAULT,
        }
    }
}
