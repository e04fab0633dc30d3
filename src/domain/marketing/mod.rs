//! Marketing rules: a daily cap, at most one marketing email per person per UTC day, suppression,
//! and never ahead of booking mail. Pure: the caller counts today's sends (by [`utc_day`], e.g. with
//! [`count_on_utc_day`]), knows the person's [`Suppression`] and whether booking mail is queued.
//!
//! Marketing is rank 3 ([`Rank::Marketing`]): the outbox's ordering already puts it behind
//! everything else; [`may_send`] additionally holds it back while any booking mail waits, so a
//! marketing email never takes the client slot a booking email could have used.
//!
//! May use: `basics`, `event`, `i18n`, `email`, `outbox`.

pub mod campaign;
pub mod unsubscribe;

use crate::domain::email::Rank;
use crate::domain::outbox::{next_utc_midnight, DAY_MS};
use chrono::{DateTime, NaiveDate};
use serde::{Deserialize, Serialize};

/// How long a marketing email waits when booking mail is queued before it asks again: one maximal
/// client gap (160 s), by which time the outbox has sent the next booking email.
pub const BOOKING_MAIL_RECHECK_MS: i64 = 160_000;

/// Limits on marketing email.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarketingPolicy {
    /// Marketing emails per UTC day, all recipients together. `0` pauses marketing.
    pub daily_cap: u32,
    /// Marketing emails one person may receive per UTC day (1). `0` means none.
    pub per_person_per_day: u32,
}

impl MarketingPolicy {
    /// A conservative default: 50 a day (half a free Resend day), one per person.
    pub const DEFAULT: MarketingPolicy = MarketingPolicy {
        daily_cap: 50,
        per_person_per_day: 1,
    };
}

impl Default for MarketingPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What we know that forbids mail to one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Suppression {
    /// Nothing on record.
    None,
    /// Used a (one-click) unsubscribe link: no more marketing; booking mail still goes.
    MarketingUnsubscribed,
    /// The address hard-bounced: it does not exist; nothing goes.
    HardBounce,
    /// The recipient marked our mail as spam: nothing goes.
    Complaint,
}

crate::domain::basics::stored_names!(Suppression);

impl Suppression {
    /// `true` when this suppression forbids mail of `rank`: an unsubscribe only stops
    /// [`Rank::Marketing`]; a hard bounce or a complaint stops every rank (sending more would hurt
    /// the sender's reputation, and a booking email to a dead address cannot arrive anyway).
    pub fn suppresses(self, rank: Rank) -> bool {
        match self {
            Suppression::None => false,
            Suppression::MarketingUnsubscribed => rank == Rank::Marketing,
            Suppression::HardBounce | Suppression::Complaint => true,
        }
    }

    /// The stronger of two records (complaint > hard bounce > unsubscribe > none), for merging
    /// several facts about one address.
    pub fn max(self, other: Suppression) -> Suppression {
        let weight = |s: Suppression| match s {
            Suppression::None => 0,
            Suppression::MarketingUnsubscribed => 1,
            Suppression::HardBounce => 2,
            Suppression::Complaint => 3,
        };
        if weight(other) > weight(self) {
            other
        } else {
            self
        }
    }
}

/// Why a marketing email is not sent at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The address is suppressed for marketing.
    Suppressed(Suppression),
}

/// Why a marketing email waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeferReason {
    /// Today's cap of marketing emails (all recipients) is reached: the whole marketing lane
    /// waits for the next UTC day.
    DailyCap,
    /// The person already received their marketing email(s) today: this one email waits for the
    /// next UTC day (a second campaign the same day reaches them tomorrow, it is not lost).
    PersonAlreadyServed,
    /// Booking mail is waiting: marketing never goes ahead of it.
    BookingMailWaiting,
}

/// What to do with one marketing email now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarketingDecision {
    /// Send it (in its turn, through the paced client lane).
    Send,
    /// Not now; ask again at `until_ms` (cap reached or person served → the next UTC midnight;
    /// booking mail waiting → [`BOOKING_MAIL_RECHECK_MS`] later).
    Defer { until_ms: i64, reason: DeferReason },
    /// Do not send it.
    Skip(SkipReason),
}

/// The UTC calendar day of `ms` (ms since the Unix epoch). Out of chrono's range → its min/max
/// date.
pub fn utc_day(ms: i64) -> NaiveDate {
    match DateTime::from_timestamp_millis(ms) {
        Some(t) => t.date_naive(),
        None if ms < 0 => NaiveDate::MIN,
        None => NaiveDate::MAX,
    }
}

/// `true` when `a_ms` and `b_ms` fall on the same UTC day.
pub fn same_utc_day(a_ms: i64, b_ms: i64) -> bool {
    a_ms.div_euclid(DAY_MS) == b_ms.div_euclid(DAY_MS)
}

/// How many of `sent_at_ms` fall on the UTC day of `now_ms` (for `sent_today_total` and
/// `sent_today_to_person`).
pub fn count_on_utc_day(now_ms: i64, sent_at_ms: &[i64]) -> u32 {
    let n = sent_at_ms
        .iter()
        .filter(|&&t| same_utc_day(now_ms, t))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Decides one marketing email at `now_ms`. Checks, in order:
///
/// 1. suppression (unsubscribe, hard bounce, complaint) → `Skip(Suppressed)`;
/// 2. the person already got `per_person_per_day` marketing emails today →
///    `Defer(PersonAlreadyServed)` to the next UTC midnight (only this email waits);
/// 3. today's total reached `daily_cap` → `Defer(DailyCap)` to the next UTC midnight (the whole
///    marketing lane waits);
/// 4. booking (non-marketing client) mail is waiting → `Defer(BookingMailWaiting)` by
///    [`BOOKING_MAIL_RECHECK_MS`];
/// 5. otherwise `Send`.
///
/// The counts are of marketing emails sent on the UTC day of `now_ms`.
pub fn may_send(
    now_ms: i64,
    sent_today_total: u32,
    sent_today_to_person: u32,
    suppressed: Suppression,
    booking_mail_waiting: bool,
    policy: MarketingPolicy,
) -> MarketingDecision {
    if suppressed.suppresses(Rank::Marketing) {
        return MarketingDecision::Skip(SkipReason::Suppressed(suppressed));
    }
    if sent_today_to_person >= policy.per_person_per_day {
        return MarketingDecision::Defer {
            until_ms: next_utc_midnight(now_ms),
            reason: DeferReason::PersonAlreadyServed,
        };
    }
    if sent_today_total >= policy.daily_cap {
        return MarketingDecision::Defer {
            until_ms: next_utc_midnight(now_ms),
            reason: DeferReason::DailyCap,
        };
    }
    if booking_mail_waiting {
        return MarketingDecision::Defer {
            until_ms: now_ms.saturating_add(BOOKING_MAIL_RECHECK_MS),
            reason: DeferReason::BookingMailWaiting,
        };
    }
    MarketingDecision::Send
}
