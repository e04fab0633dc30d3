//! Intent at the send turn: should an email planned earlier still go out now?
//!
//! A booking-bound guest email carries an [`Intent`]: the journey version it was planned under and
//! the moment after which it is pointless. Whoever is about to hand it on — the journey at a
//! scheduled send, the outbox's send gate at its turn, a sweeper repairing due work — re-reads the
//! booking and asks [`decide`] with an explicit `now`. The answer is the same everywhere.
//!
//! # When an email is pointless ([`expires_at_ms`])
//!
//! | email                                  | pointless from (hotel local time)                  |
//! |----------------------------------------|----------------------------------------------------|
//! | arrival guide                          | 00:00 on the check-in day (the stay has begun)     |
//! | check-in-day note                      | 00:00 the day after check-in (the day is over)     |
//! | thank-you                              | 00:00, 15 days after check-out (14 full days late) |
//! | confirmation, hotel confirmation number, booking updated, flight confirmation, flight changed | never: a record the guest keeps |
//! | cancellation notice                    | never, and never withdrawn (it carries no intent)  |
//!
//! # The decision ([`decide`]), first match wins
//!
//! 1. owner alerts always go (they are never held by a booking's fate);
//! 2. booking not in the record → skip (`BookingUnknown`);
//! 3. replaced by a rebook → skip (`Replaced`); cancelled → skip (`Cancelled`);
//! 4. a scheduled email (arrival guide, check-in-day note, thank-you) planned under an older
//!    journey version → skip (`Superseded`): an amendment re-planned it with the new facts;
//!    other kinds are records of a moment and do not go stale by version;
//! 5. `now` at or past its moment → skip (`Stale`);
//! 6. otherwise send.

use crate::domain::email::{Audience, EmailKind};
use crate::domain::journey::schedule::{local_time_to_utc, HotelZone, ScheduledKind, DAY_MS};
use chrono::{Days, NaiveDate, NaiveTime};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Days after check-out after which a thank-you is pointless (it is pointless from 00:00 hotel
/// time of the day after those days).
pub const THANK_YOU_STALE_AFTER_DAYS: u64 = 14;

/// What a booking-bound email was planned under (carried on `OutgoingEmail::intent`, and as
/// columns of the outbox queue). The booking itself is `OutgoingEmail::booking_id`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    /// `bookings.journey_version` when it was planned; `None` when the version does not matter
    /// (e.g. a flight confirmation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journey_version: Option<i64>,
    /// From this instant on the email is pointless, ms since the epoch (UTC); `None` = never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<i64>,
    /// The moment a time-bound email should be out by, ms since the epoch (UTC), when it differs
    /// from `expires_at_ms`: a schedule change's first new departure. Only the outbox's backlog
    /// forecast reads it ([`Intent::moment`]); it never skips an email.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment_ms: Option<i64>,
}

impl Intent {
    /// The moment the backlog forecast holds a time-bound email of `kind` to
    /// (`crate::domain::outbox::backlog::is_time_bound`): its own `moment_ms`, else the instant it becomes
    /// pointless. `None` for other kinds.
    pub fn moment(&self, kind: EmailKind) -> Option<i64> {
        crate::domain::outbox::backlog::is_time_bound(kind)
            .then(|| self.moment_ms.or(self.expires_at_ms))
            .flatten()
    }
}

/// The booking as it is now (D1 `bookings`), as far as intent goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BookingNow {
    pub cancelled: bool,
    /// Replaced by a rebook (`bookings.replaced_by` set).
    pub replaced: bool,
    pub journey_version: i64,
}

/// Why an email is not sent at its turn. Its `Display` is the stored reason (D1
/// `scheduled_sends.reason`, `emails.last_error`, the outbox's `last_error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    BookingUnknown,
    Cancelled,
    Replaced,
    Superseded,
    /// Its moment passed: pointless since `expired_at_ms` (UTC ms).
    Stale {
        expired_at_ms: i64,
    },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::BookingUnknown => f.write_str("booking unknown"),
            SkipReason::Cancelled => f.write_str("booking cancelled"),
            SkipReason::Replaced => f.write_str("booking replaced by a rebook"),
            SkipReason::Superseded => f.write_str("superseded by a newer journey version"),
            SkipReason::Stale { expired_at_ms } => {
                let at = chrono::DateTime::from_timestamp_millis(*expired_at_ms)
                    .map(|t| t.format("%Y-%m-%dT%H:%MZ").to_string())
                    .unwrap_or_else(|| expired_at_ms.to_string());
                write!(f, "stale: pointless since {at}")
            }
        }
    }
}

/// What to do with an email at its send turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendDecision {
    Send,
    Skip(SkipReason),
}

/// The scheduled email kinds whose content depends on the journey version (see the module docs).
fn version_bound(kind: EmailKind) -> bool {
    matches!(
        kind,
        EmailKind::ArrivalGuide | EmailKind::CheckinDay | EmailKind::ThankYou
    )
}

/// Should an email of `kind` for `audience`, planned with `intent`, go out at `now_ms` (UTC ms),
/// given the booking as it is now (`None`: not in the record)? See the module docs for the order.
pub fn decide(
    kind: EmailKind,
    audience: Audience,
    intent: &Intent,
    booking: Option<&BookingNow>,
    now_ms: i64,
) -> SendDecision {
    if audience == Audience::Owner {
        return SendDecision::Send;
    }
    let Some(b) = booking else {
        return SendDecision::Skip(SkipReason::BookingUnknown);
    };
    if b.replaced {
        return SendDecision::Skip(SkipReason::Replaced);
    }
    if b.cancelled {
        return SendDecision::Skip(SkipReason::Cancelled);
    }
    if version_bound(kind)
        && intent
            .journey_version
            .is_some_and(|v| v != b.journey_version)
    {
        return SendDecision::Skip(SkipReason::Superseded);
    }
    match intent.expires_at_ms {
        Some(at) if now_ms >= at => SendDecision::Skip(SkipReason::Stale { expired_at_ms: at }),
        _ => SendDecision::Send,
    }
}

/// The email kind of a scheduled send.
pub fn email_kind(kind: ScheduledKind) -> EmailKind {
    match kind {
        ScheduledKind::ArrivalGuide => EmailKind::ArrivalGuide,
        ScheduledKind::CheckinDay => EmailKind::CheckinDay,
        ScheduledKind::ThankYou => EmailKind::ThankYou,
    }
}

/// The moment a scheduled hotel email becomes pointless (table in the module docs), ms UTC, from
/// the stay's dates and the hotel's zone. A check-out before the check-in counts as the check-in.
pub fn expires_at_ms(
    kind: ScheduledKind,
    checkin: NaiveDate,
    checkout: NaiveDate,
    zone: &HotelZone,
) -> i64 {
    let midnight = |date: NaiveDate, plus: u64| {
        date.checked_add_days(Days::new(plus))
            .map(|d| local_time_to_utc(d, NaiveTime::MIN, zone).timestamp_millis())
    };
    let at = match kind {
        ScheduledKind::ArrivalGuide => midnight(checkin, 0),
        ScheduledKind::CheckinDay => midnight(checkin, 1),
        ScheduledKind::ThankYou => midnight(checkout.max(checkin), THANK_YOU_STALE_AFTER_DAYS + 1),
    };
    // Only at the very end of chrono's calendar can a date not move on: a day later than that.
    at.unwrap_or_else(|| {
        local_time_to_utc(checkin, NaiveTime::MIN, zone).timestamp_millis() + DAY_MS
    })
}

/// The UTC day (`YYYY-MM-DD`) of `at_ms`, for keys like "one alert per booking and day".
pub fn utc_day(at_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(at_ms)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "unknown-day".to_string())
}
