//! The email that travels: what a journey, the sweeper or an operator request hands to the outbox,
//! what the outbox stores and what every provider sends ([`OutgoingEmail`]). Its vocabulary (kind,
//! rank, audience, dedupe key) is [`crate::domain::email`]; what it carries besides the rendered
//! parts comes from the modules that decide it: the intent it was planned under
//! ([`crate::domain::outbox::intent`]), the content lock's verdict made at render time
//! ([`crate::domain::email::content_lock::LockVerdict`]) and its calendar parts
//! ([`crate::domain::email::calendar`]).

use crate::domain::email::{Audience, DedupeKey, EmailKind, Rank};
use crate::domain::event::EmailAddress;
use serde::{Deserialize, Serialize};

/// A rendered email, ready for the outbox: what the journey hands over and the outbox stores.
///
/// `message_id` is deterministic (see [`crate::domain::event::ids::message_id_for`]) so every attempt and
/// every provider sends the same Message-ID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutgoingEmail {
    pub dedupe_key: DedupeKey,
    pub kind: EmailKind,
    pub audience: Audience,
    pub rank: Rank,
    pub booking_id: Option<String>,
    pub to: EmailAddress,
    pub subject: String,
    pub text: String,
    pub html: String,
    pub message_id: String,
    /// Extra header lines, in order, e.g. the two RFC 8058 unsubscribe headers of a marketing
    /// email (`List-Unsubscribe`, `List-Unsubscribe-Post`). Every provider sends them; empty for
    /// booking mail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// What this booking-bound guest email was planned under (journey version, the moment it
    /// becomes pointless): the outbox re-checks it against the booking at its send turn
    /// ([`crate::domain::outbox::intent::decide`]) and a cancellation withdraws it. `None` (owner alerts,
    /// the cancellation notice, checkout and marketing email, rows queued before this field):
    /// never re-checked, never withdrawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<crate::domain::outbox::intent::Intent>,
    /// The content lock's verdict made at render time on the template's own output
    /// ([`crate::domain::render::guard`]); `None` for owner alerts and for email rendered without
    /// one (checked whole at send time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<crate::domain::email::content_lock::LockVerdict>,
    /// The calendar parts (RFC 5545) of a guest email that sets or changes the plan, one per
    /// event: each sent as a `text/calendar; method=…` attachment by every provider; empty for
    /// every other email. Their SEQUENCE and DTSTAMP are stamped when the email is handed over
    /// (`crate::store::calendar`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calendars: Vec<crate::domain::email::calendar::CalendarPart>,
    /// The one finished part of an email queued before parts were stamped at hand-over (the
    /// field's old name): read, never written ([`OutgoingEmail::calendar_parts`]).
    #[serde(default, rename = "calendar", skip_serializing)]
    pub legacy_calendar: Option<crate::domain::email::calendar::CalendarPart>,
    /// The reply address of a guest email about a booking, `reply+TOKEN@REPLY_DOMAIN`
    /// ([`crate::domain::inbound::reply_token`]), given when the email is claimed
    /// (`crate::outbox::client::deliver`); sent as `Reply-To: <brand> <address>` by every
    /// provider. `None`: replies are off, or the email is not a guest's about a booking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
}

/// RFC 3834 §5's header on mail a program wrote, so that auto-responders do not answer it
/// (<https://www.rfc-editor.org/rfc/rfc3834#section-5>).
pub const AUTO_SUBMITTED: (&str, &str) = ("Auto-Submitted", "auto-generated");

impl OutgoingEmail {
    /// Every calendar part to attach: the stamped parts, or the one part of an email queued
    /// before them.
    pub fn calendar_parts(
        &self,
    ) -> impl Iterator<Item = &crate::domain::email::calendar::CalendarPart> {
        self.calendars.iter().chain(self.legacy_calendar.iter())
    }

    /// The extra headers every provider sends: the email's own ([`OutgoingEmail::headers`]), then
    /// `Auto-Submitted: auto-generated` on everything but the owner's answer, which a person
    /// wrote ([`EmailKind::ConversationAnswer`]).
    pub fn headers_to_send(&self) -> Vec<(String, String)> {
        let mut h = self.headers.clone();
        let has = |name: &str| h.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        if self.kind != EmailKind::ConversationAnswer && !has(AUTO_SUBMITTED.0) {
            h.push((AUTO_SUBMITTED.0.into(), AUTO_SUBMITTED.1.into()));
        }
        h
    }
}
