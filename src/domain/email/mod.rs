//! Email kinds, ranks, audiences, statuses and dedupe keys: the vocabulary every email is described
//! in. The rendered email that travels to the outbox is `crate::domain::outbox::outgoing`.
//!
//! Every closed set here is stored (D1 `emails`, the outbox queue, dedupe keys): its stored names
//! are the variant names in `snake_case`, derived once by strum (`as_str`, `parse`) and by serde
//! (JSON) from the same rule; the tests pin that both agree for every variant.
//!
//! May use: `basics`, `event`, `timezone`.

pub mod calendar;
pub mod content_lock;
pub mod markup;

use crate::domain::basics::stored_names;
use crate::domain::event::{BookingRef, EmailAddress};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Outbox rank: lower goes first. Stored as its number (the discriminant) in the outbox queue and
/// D1 `emails.rank`; serialized by name (`"urgent"` …) in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(i64)]
#[derive(strum::FromRepr, strum::VariantArray)]
pub enum Rank {
    /// 0: flight changed, check-in day.
    Urgent = 0,
    /// 1: confirmations, hotel confirmation numbers, cancellations.
    Booking = 1,
    /// 2: arrival guides, thank-yous, checkout follow-ups.
    Service = 2,
    /// 3: marketing; never ahead of anything else.
    Marketing = 3,
}

impl Rank {
    /// Stored number, 0 (urgent) … 3 (marketing).
    pub fn as_i64(self) -> i64 {
        self as i64
    }

    /// Inverse of [`Rank::as_i64`].
    pub fn from_i64(n: i64) -> Option<Self> {
        Self::from_repr(n)
    }
}

/// Who an email is for. Owner alerts may carry internal facts; client email never may.
/// Stored names: `client`, `owner`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Audience {
    /// A guest or traveller: paced, ranked, content-locked.
    Client,
    /// The business owner: sent at once, outside the pacing.
    Owner,
}

stored_names!(Audience);

/// Every kind of email the engine sends. The stored name (`as_str`, the variant in `snake_case`,
/// e.g. `booking_confirmation`) is the first half of the dedupe key, so it must never change once
/// released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray, strum::EnumCount)]
#[strum(serialize_all = "snake_case")]
pub enum EmailKind {
    /// Guest: "your stay is confirmed".
    BookingConfirmation,
    /// Owner: "new booking".
    OwnerNewBooking,
    /// Owner: a client email was dropped or dead-lettered.
    OwnerEmailFailed,
    /// Guest: the hotel's own confirmation number arrived.
    HotelConfirmationNumber,
    /// Guest: "your stay starts in 3 days", with the check-in facts and a short checklist.
    ArrivalGuide,
    /// Guest: "today: check-in", on the morning of arrival.
    CheckinDay,
    /// Guest: a short thank-you after check-out.
    ThankYou,
    /// Guest: a hotel or flight booking was cancelled.
    BookingCancelled,
    /// Guest: facts of a hotel booking changed.
    BookingUpdated,
    /// Guest: a flight order is confirmed.
    FlightConfirmation,
    /// Guest: the airline changed the flight schedule.
    FlightChanged,
    /// Owner: a booking was cancelled.
    OwnerBookingCancelled,
    /// Guest: "your booking wasn't completed — nothing was charged", 20 minutes after an unpaid
    /// checkout; never claims a decline.
    CheckoutNotCompleted,
    /// Guest: the owner confirmed an "insufficient funds" decline (one-click action on a hold).
    CheckoutDeclinedFunds,
    /// Guest: the owner confirmed a "blocked by a security check" decline (one-click action).
    CheckoutDeclinedSecurity,
    /// Owner: a checkout looks like card testing and is held, with one-click actions.
    OwnerCheckoutHold,
    /// Client: a marketing email of an operator's campaign (rank marketing; capped, suppressible,
    /// with RFC 8058 one-click unsubscribe headers and a visible unsubscribe link).
    Marketing,
    /// Owner: an email provider is paused (refused credentials, exhausted plan) until a time.
    OwnerProviderPaused,
    /// Owner: a supplier event's journey ended in a fatal error after the supplier was answered.
    OwnerJourneyFailed,
    /// Owner: the daily repair summary of earlier releases. No longer sent (the daily digest,
    /// [`EmailKind::OwnerDigest`], carries the repairs); kept so rows stored by them read back.
    OwnerSweepSummary,
    /// Guest: the supplier failed (or cancelled) a paid booking: "we could not confirm your
    /// booking" with the refund's real state (`crate::domain::payment::compensation`).
    BookingNotConfirmed,
    /// Owner: a compensation's facts, steps and refund state, with one-click refund links.
    OwnerCompensation,
    /// Owner: an outbound webhook subscriber was disabled (410 Gone) or its deliveries went to
    /// the dead letter queue (at most one a subscriber and UTC day).
    OwnerWebhookAlert,
    /// Owner: a supplier event named a booking of another source or partner and was refused (at
    /// most one a booking and UTC day; `crate::domain::event::ownership`).
    OwnerForeignEvent,
    /// Owner: once a day at the owner's hour, the day before and what waits
    /// (`crate::domain::sweeper::digest`).
    OwnerDigest,
    /// Owner: time-bound guest email is forecast to miss its moment in the outbox's backlog (at
    /// most one a UTC day; `crate::domain::outbox::backlog`).
    OwnerBacklog,
    /// Owner: a guest wrote about a booking (a reply to one of its emails), with the guest's words
    /// and the booking's facts (`crate::domain::inbound`).
    OwnerGuestMessage,
    /// Guest: the owner's answer to the guest's message, written in the admin, framed in the
    /// guest's language. Written by a person: the one kind without `Auto-Submitted`.
    ConversationAnswer,
}

stored_names!(EmailKind);

impl EmailKind {
    /// Every kind, in declaration order.
    pub const ALL: [EmailKind; <EmailKind as strum::EnumCount>::COUNT] =
        match <EmailKind as strum::VariantArray>::VARIANTS.first_chunk() {
            Some(all) => *all,
            None => unreachable!(),
        };

    /// Who receives this kind.
    pub fn audience(self) -> Audience {
        match self {
            EmailKind::BookingConfirmation
            | EmailKind::HotelConfirmationNumber
            | EmailKind::ArrivalGuide
            | EmailKind::CheckinDay
            | EmailKind::ThankYou
            | EmailKind::BookingCancelled
            | EmailKind::BookingUpdated
            | EmailKind::FlightConfirmation
            | EmailKind::FlightChanged
            | EmailKind::CheckoutNotCompleted
            | EmailKind::CheckoutDeclinedFunds
            | EmailKind::CheckoutDeclinedSecurity
            | EmailKind::BookingNotConfirmed
            | EmailKind::ConversationAnswer
            | EmailKind::Marketing => Audience::Client,
            EmailKind::OwnerNewBooking
            | EmailKind::OwnerEmailFailed
            | EmailKind::OwnerBookingCancelled
            | EmailKind::OwnerCheckoutHold
            | EmailKind::OwnerProviderPaused
            | EmailKind::OwnerJourneyFailed
            | EmailKind::OwnerSweepSummary
            | EmailKind::OwnerCompensation
            | EmailKind::OwnerWebhookAlert
            | EmailKind::OwnerForeignEvent
            | EmailKind::OwnerDigest
            | EmailKind::OwnerGuestMessage
            | EmailKind::OwnerBacklog => Audience::Owner,
        }
    }

    /// The outbox rank of this kind: every owner alert ([`Audience::Owner`]) is urgent.
    pub fn rank(self) -> Rank {
        match self {
            EmailKind::FlightChanged | EmailKind::CheckinDay => Rank::Urgent,
            EmailKind::BookingConfirmation
            | EmailKind::HotelConfirmationNumber
            | EmailKind::BookingCancelled
            | EmailKind::BookingUpdated
            | EmailKind::FlightConfirmation
            | EmailKind::ConversationAnswer
            | EmailKind::BookingNotConfirmed => Rank::Booking,
            EmailKind::ArrivalGuide
            | EmailKind::ThankYou
            | EmailKind::CheckoutNotCompleted
            | EmailKind::CheckoutDeclinedFunds
            | EmailKind::CheckoutDeclinedSecurity => Rank::Service,
            EmailKind::Marketing => Rank::Marketing,
            // The kinds listed as owner alerts by `audience`, sent at once.
            _ => Rank::Urgent,
        }
    }
}

/// The send-once key of one email: `<kind>:<ref>`, e.g. `booking_confirmation:BK123`.
///
/// Claimed in D1 (`emails.dedupe_key`, unique, never expires) before the email is enqueued; the
/// outbox's enqueue is idempotent on the same key; Resend receives it as `Idempotency-Key`.
///
/// Deserializes through its shape check (`<kind>:<ref>`, both parts non-empty, see
/// [`InvalidDedupeKey`]), so a key read back from JSON (outbox queue rows, Workflow step results)
/// is as checked as one built here. The length cap of [`DedupeKey::from_stored`] is not part of
/// it: keys about long references may be longer and must still read back.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DedupeKey(String);

/// A text that is not a dedupe key: it lacks the shape `<kind>:<ref>` with both parts non-empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("is not a dedupe key of the shape <kind>:<ref>")]
pub struct InvalidDedupeKey;

impl DedupeKey {
    /// The key for `kind` about one booking.
    pub fn for_booking(kind: EmailKind, booking: &BookingRef) -> Self {
        Self(format!("{}:{}", kind.as_str(), booking.as_str()))
    }

    /// The key for `kind` about one booking and one more fact of it:
    /// `<kind>:<booking>:<part>`, e.g. `arrival_guide:BK123:2026-06-12`. `part` is trimmed.
    pub fn for_booking_part(kind: EmailKind, booking: &BookingRef, part: &str) -> Self {
        Self(format!(
            "{}:{}:{}",
            kind.as_str(),
            booking.as_str(),
            part.trim()
        ))
    }

    /// The key for `kind` about any reference (e.g. another email's dedupe key).
    pub fn new(kind: EmailKind, reference: &str) -> Self {
        Self(format!("{}:{}", kind.as_str(), reference))
    }

    /// The one key of a customer's decline email about a held checkout, shared by
    /// [`EmailKind::CheckoutDeclinedFunds`] and [`EmailKind::CheckoutDeclinedSecurity`]:
    /// `checkout_declined:<prebook id>` (one hold is about one attempt), so whichever reason the
    /// owner picks — or both, clicked in a race — the customer gets one decline email.
    pub fn for_checkout_decline(prebook_id: &str) -> Self {
        Self(format!("checkout_declined:{}", prebook_id.trim()))
    }

    /// The key of one campaign's marketing email to one address:
    /// `marketing:<campaign>:<lower-cased address>` (a campaign reaches a person at most once,
    /// however often the operator submits it).
    pub fn for_marketing(campaign: &str, to: &EmailAddress) -> Self {
        Self(format!(
            "{}:{}:{}",
            EmailKind::Marketing.as_str(),
            campaign.trim(),
            to.as_str().to_ascii_lowercase()
        ))
    }

    /// Re-reads a key stored earlier (outbox rows, D1 rows). `None` unless it has the shape
    /// `<kind>:<ref>` with both parts non-empty.
    pub fn from_stored(s: &str) -> Option<Self> {
        (s.len() <= 256)
            .then(|| Self::try_from(s.to_string()).ok())
            .flatten()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for DedupeKey {
    type Error = InvalidDedupeKey;

    /// The shape check: `<kind>:<ref>`, both parts non-empty.
    fn try_from(s: String) -> Result<Self, Self::Error> {
        match s.split_once(':') {
            Some((kind, rest)) if !kind.is_empty() && !rest.is_empty() => Ok(Self(s)),
            _ => Err(InvalidDedupeKey),
        }
    }
}

impl From<DedupeKey> for String {
    fn from(key: DedupeKey) -> String {
        key.0
    }
}

impl fmt::Display for DedupeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Lifecycle of an email row (D1 `emails.status` and the outbox queue's `status`). Stored names:
/// the variant in `snake_case` (`claimed`, `sent_possibly_twice`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum EmailStatus {
    /// Claimed in D1, not yet in the outbox.
    Claimed,
    /// In the outbox queue, eligible when its turn comes.
    Queued,
    /// Failed transiently; waits for its backoff to end, keeping its place by rank and age.
    Waiting,
    /// Handed to a provider; the outcome is not recorded yet.
    Sending,
    /// A provider accepted it.
    Sent,
    /// Accepted, but an earlier attempt was interrupted after the hand-over and before the outcome
    /// was recorded, and the provider could not confirm: the guest may have two copies (same
    /// Message-ID). Kept visible for the operator.
    SentPossiblyTwice,
    /// Gave up after the attempt ceiling (dead letter); an operator may redrive it.
    Dead,
    /// Refused for good (recipient rejected or suppressed).
    Dropped,
    /// Stopped by the content lock before any provider saw it (kept for inspection).
    Blocked,
    /// Not sent on purpose at send time: the address is suppressed (unsubscribed from marketing,
    /// hard bounce, complaint) or already had its marketing email that UTC day; or its booking was
    /// cancelled, replaced or re-planned, or its moment passed (`crate::domain::outbox::intent`). The
    /// reason is kept.
    Skipped,
    /// D1 only: the journey could not hand it to the outbox, even after every retry of its step;
    /// the error is kept, the owner alerted, and the journey went on.
    Failed,
}

stored_names!(EmailStatus);

impl EmailStatus {
    /// Whether an email whose dedupe key is already claimed with this D1 status (and, for
    /// `skipped`, this `last_error`) may be handed to the outbox again (the send-once protocol's
    /// repeat, `crate::outbox::client::deliver`). `true` while no provider has it for good: not
    /// yet in the outbox or still in line there (a repeat is a no-op on the dedupe key), failed
    /// before the outbox took it, or skipped as superseded (a newer journey version re-plans it,
    /// `superseded_reason`; the outbox's send gate decides again). `false` once a provider
    /// accepted it, it is dead, dropped or blocked, or skipped for any other reason (cancelled,
    /// stale, suppressed, an operator's rejection): those stay as they are, and the outbox's
    /// retention may have pruned its row, so a repeat would send what was decided against.
    pub fn may_hand_over_again(self, last_error: Option<&str>, superseded_reason: &str) -> bool {
        match self {
            EmailStatus::Claimed
            | EmailStatus::Queued
            | EmailStatus::Waiting
            | EmailStatus::Sending
            | EmailStatus::Failed => true,
            EmailStatus::Skipped => last_error == Some(superseded_reason),
            EmailStatus::Sent
            | EmailStatus::SentPossiblyTwice
            | EmailStatus::Dead
            | EmailStatus::Dropped
            | EmailStatus::Blocked => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_once_sent_or_refused_is_never_handed_over_again() {
        let superseded = "superseded by a newer journey version";
        let again: Vec<&str> = <EmailStatus as strum::VariantArray>::VARIANTS
            .iter()
            .filter(|s| s.may_hand_over_again(None, superseded))
            .map(|s| s.as_str())
            .collect();
        assert_eq!(again, ["claimed", "queued", "waiting", "sending", "failed"]);
        assert!(EmailStatus::Skipped.may_hand_over_again(Some(superseded), superseded));
        for other in [
            "booking cancelled",
            "stale: pointless since …",
            "rejected by operator",
        ] {
            assert!(!EmailStatus::Skipped.may_hand_over_again(Some(other), superseded));
        }
    }

    #[test]
    fn dedupe_key_is_kind_then_booking() {
        let b = BookingRef::parse("BK123").unwrap();
        let k = DedupeKey::for_booking(EmailKind::BookingConfirmation, &b);
        assert_eq!(k.as_str(), "booking_confirmation:BK123");
        assert_eq!(DedupeKey::from_stored(k.as_str()), Some(k));
        assert_eq!(DedupeKey::from_stored("nokind"), None);
        assert_eq!(DedupeKey::from_stored(":x"), None);
    }

    #[test]
    fn dedupe_keys_deserialize_through_their_check() {
        let k: DedupeKey = serde_json::from_str("\"thank_you:BK1:2026-06-13\"").unwrap();
        assert_eq!(k.as_str(), "thank_you:BK1:2026-06-13");
        assert_eq!(
            serde_json::to_string(&k).unwrap(),
            "\"thank_you:BK1:2026-06-13\""
        );
        for bad in ["\"\"", "\"nokind\"", "\":x\"", "\"x:\""] {
            assert!(serde_json::from_str::<DedupeKey>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn booking_part_keys_and_kind_names() {
        let b = BookingRef::parse("BK123").unwrap();
        let k = DedupeKey::for_booking_part(EmailKind::ArrivalGuide, &b, " 2026-06-12 ");
        assert_eq!(k.as_str(), "arrival_guide:BK123:2026-06-12");
        assert_eq!(DedupeKey::from_stored(k.as_str()), Some(k));
        for kind in EmailKind::ALL {
            assert_eq!(EmailKind::parse(kind.as_str()), Some(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
        assert_eq!(EmailKind::parse("nope"), None);
    }

    #[test]
    fn ranks_round_trip_and_order() {
        for r in [Rank::Urgent, Rank::Booking, Rank::Service, Rank::Marketing] {
            assert_eq!(Rank::from_i64(r.as_i64()), Some(r));
        }
        assert_eq!(
            [Rank::Urgent, Rank::Booking, Rank::Service, Rank::Marketing].map(Rank::as_i64),
            [0, 1, 2, 3]
        );
        assert!(Rank::Urgent < Rank::Booking && Rank::Service < Rank::Marketing);
        assert_eq!(Rank::from_i64(4), None);
        assert_eq!(serde_json::to_string(&Rank::Urgent).unwrap(), "\"urgent\"");
    }

    /// Every owner alert is urgent; each client kind's rank is pinned, so a new kind must be
    /// placed here by hand.
    #[test]
    fn every_kind_has_its_rank() {
        use EmailKind::*;
        let client = [
            (FlightChanged, Rank::Urgent),
            (CheckinDay, Rank::Urgent),
            (BookingConfirmation, Rank::Booking),
            (HotelConfirmationNumber, Rank::Booking),
            (BookingCancelled, Rank::Booking),
            (BookingUpdated, Rank::Booking),
            (FlightConfirmation, Rank::Booking),
            (ConversationAnswer, Rank::Booking),
            (BookingNotConfirmed, Rank::Booking),
            (ArrivalGuide, Rank::Service),
            (ThankYou, Rank::Service),
            (CheckoutNotCompleted, Rank::Service),
            (CheckoutDeclinedFunds, Rank::Service),
            (CheckoutDeclinedSecurity, Rank::Service),
            (Marketing, Rank::Marketing),
        ];
        for kind in EmailKind::ALL {
            let want = match kind.audience() {
                Audience::Owner => Rank::Urgent,
                Audience::Client => match client.iter().find(|(k, _)| *k == kind) {
                    Some((_, rank)) => *rank,
                    None => panic!("{kind:?}: a client kind with no rank pinned"),
                },
            };
            assert_eq!(kind.rank(), want, "{kind:?}");
        }
    }

    /// strum (`as_str`, `parse`) and serde derive the stored names from one rule; pinned here for
    /// every variant, plus the released names byte for byte.
    #[test]
    fn stored_names_round_trip_and_match_json() {
        use strum::VariantArray;
        fn check<T>(all: &[T], as_str: fn(T) -> &'static str, parse: fn(&str) -> Option<T>)
        where
            T: Copy + PartialEq + std::fmt::Debug + Serialize,
        {
            for &v in all {
                assert_eq!(parse(as_str(v)), Some(v));
                assert_eq!(
                    serde_json::to_string(&v).unwrap(),
                    format!("\"{}\"", as_str(v))
                );
            }
            assert_eq!(parse("nope"), None);
        }
        check(
            EmailStatus::VARIANTS,
            EmailStatus::as_str,
            EmailStatus::parse,
        );
        check(Audience::VARIANTS, Audience::as_str, Audience::parse);
        check(EmailKind::VARIANTS, EmailKind::as_str, EmailKind::parse);
        assert_eq!(EmailKind::ALL.as_slice(), EmailKind::VARIANTS);
        assert_eq!(
            EmailStatus::VARIANTS
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>(),
            [
                "claimed",
                "queued",
                "waiting",
                "sending",
                "sent",
                "sent_possibly_twice",
                "dead",
                "dropped",
                "blocked",
                "skipped",
                "failed"
            ]
        );
        assert_eq!(
            EmailKind::ALL.map(EmailKind::as_str),
            [
                "booking_confirmation",
                "owner_new_booking",
                "owner_email_failed",
                "hotel_confirmation_number",
                "arrival_guide",
                "checkin_day",
                "thank_you",
                "booking_cancelled",
                "booking_updated",
                "flight_confirmation",
                "flight_changed",
                "owner_booking_cancelled",
                "checkout_not_completed",
                "checkout_declined_funds",
                "checkout_declined_security",
                "owner_checkout_hold",
                "marketing",
                "owner_provider_paused",
                "owner_journey_failed",
                "owner_sweep_summary",
                "booking_not_confirmed",
                "owner_compensation",
                "owner_webhook_alert",
                "owner_foreign_event",
                "owner_digest",
                "owner_backlog",
                "owner_guest_message",
                "conversation_answer"
            ]
        );
        assert_eq!(
            [Audience::Client, Audience::Owner].map(Audience::as_str),
            ["client", "owner"]
        );
    }
}
