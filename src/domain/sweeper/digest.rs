//! The owner's daily digest: one email a day, at a configured hour of the owner's own clock,
//! about the day before (in the owner's time zone): bookings, emails sent / failed / skipped as
//! stale, and what waits for the owner now (dead letters, refunds, holds, dead webhook
//! deliveries, paused routes), plus the sweeper's repairs. A day with nothing to report sends
//! nothing. Pure: the sweeper reads the facts and the clock, this module says whether a digest is
//! due, for which day, and whether it has anything to say.
//!
//! Exactly one a day: its dedupe key is `owner_digest:<owner-local date it is sent on>`, claimed
//! in D1 before the outbox sees it, so overlapping sweeper ticks send it once.

use crate::domain::journey::schedule::local_time_to_utc;
use crate::domain::timezone::HotelZone;
use chrono::{Datelike, Days, NaiveDate, NaiveTime};

/// When the digest goes: `DIGEST_HOUR` (0–23, default 7) on the owner's clock
/// (`OWNER_TIME_ZONE`, an IANA name, default UTC).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DigestSchedule {
    pub hour: u32,
    pub zone: HotelZone,
}

impl Default for DigestSchedule {
    fn default() -> Self {
        DigestSchedule {
            hour: DEFAULT_HOUR,
            zone: HotelZone::Fixed { offset_minutes: 0 },
        }
    }
}

/// Default `DIGEST_HOUR`.
pub const DEFAULT_HOUR: u32 = 7;

/// A digest that is due: the owner-local day it is sent on, and the day it covers as a UTC window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestDay {
    /// The owner-local date it is sent on (`YYYY-MM-DD`): its dedupe key's reference.
    pub sent_on: String,
    /// The owner-local date it covers (`YYYY-MM-DD`), the day before `sent_on`.
    pub covers: String,
    /// The covered day, `[from_ms, to_ms)` in ms UTC (owner-local midnight to midnight; 23 or 25
    /// hours on a DST change).
    pub from_ms: i64,
    pub to_ms: i64,
}

/// The digest due at `now_ms` (ms UTC): `Some` from the configured hour of the owner-local day on,
/// `None` before it (the sweeper then asks nothing of D1).
pub fn due(now_ms: i64, schedule: &DigestSchedule) -> Option<DigestDay> {
    let now = chrono::DateTime::from_timestamp_millis(now_ms)?;
    let local = schedule.zone.to_local(now).naive_local();
    let today = local.date();
    let at = NaiveTime::from_hms_opt(schedule.hour.min(23), 0, 0)?;
    if local.time() < at {
        return None;
    }
    let yesterday = today.checked_sub_days(Days::new(1))?;
    let midnight = NaiveTime::MIN;
    Some(DigestDay {
        sent_on: ymd(today),
        covers: ymd(yesterday),
        from_ms: local_time_to_utc(yesterday, midnight, &schedule.zone).timestamp_millis(),
        to_ms: local_time_to_utc(today, midnight, &schedule.zone).timestamp_millis(),
    })
}

fn ymd(d: NaiveDate) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day())
}

/// What the digest reports. Counts of the covered day, and what waits now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DigestFacts {
    /// Bookings recorded on the covered day, and up to [`LISTED_MAX`] of them.
    pub bookings: u64,
    pub booking_lines: Vec<BookingLine>,
    /// Client emails of the covered day by outcome.
    pub emails_sent: u64,
    /// Dead, dropped or blocked.
    pub emails_failed: u64,
    /// Skipped because their moment had passed (in the outbox or at their planned time).
    pub emails_stale: u64,
    /// Now: client emails dead in the outbox (redrive from the outbox page).
    pub dead_letters: u64,
    /// Now: refunds waiting for the owner, and up to [`LISTED_MAX`] of them.
    pub refunds_waiting: u64,
    pub refund_lines: Vec<WaitingLine>,
    /// Now: open card-testing holds, and up to [`LISTED_MAX`] of them.
    pub holds_open: u64,
    pub hold_lines: Vec<WaitingLine>,
    /// Now: outbound webhook deliveries dead.
    pub webhooks_dead: u64,
    /// The sweeper's repairs of the covered day, and up to [`LISTED_MAX`] of them.
    pub repairs: u64,
    pub repair_lines: Vec<RepairLine>,
    /// Now: routes paused (one line each, e.g. "SMTP failover paused until 2027-03-02 10:00 UTC").
    pub routes_paused: Vec<String>,
    /// Now: bookings whose guest wrote last and waits for an answer (`crate::domain::inbound`),
    /// and up to [`LISTED_MAX`] of them (id = booking id, words = the guest's subject).
    pub conversations_waiting: u64,
    pub conversation_lines: Vec<WaitingLine>,
}

/// Most lines listed per section; the rest are counted.
pub const LISTED_MAX: usize = 20;

/// A booking of the covered day (read from D1 `bookings` as is, `hotel_name AS what`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct BookingLine {
    pub booking_id: String,
    /// `hotel` or `flight`.
    pub kind: String,
    pub source: String,
    /// The hotel's name, when known.
    pub what: Option<String>,
}

/// Something that waits for the owner: its id, since when (ms UTC), and a few words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingLine {
    pub id: String,
    pub since_ms: i64,
    pub words: String,
}

/// One repair of the covered day (a D1 `repairs` row).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct RepairLine {
    /// ms UTC.
    pub at_ms: i64,
    /// Stored name of a `crate::domain::sweeper::RepairKind`.
    pub kind: String,
    pub subject: String,
    pub reason: String,
}

impl DigestFacts {
    /// Nothing happened and nothing waits: no digest is sent.
    pub fn is_empty(&self) -> bool {
        self.bookings == 0
            && self.emails_sent == 0
            && self.emails_failed == 0
            && self.emails_stale == 0
            && self.dead_letters == 0
            && self.refunds_waiting == 0
            && self.holds_open == 0
            && self.webhooks_dead == 0
            && self.repairs == 0
            && self.routes_paused.is_empty()
            && self.conversations_waiting == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::sweeper::tests::ms;

    #[test]
    fn due_from_the_hour_of_the_owners_day_covering_the_day_before() {
        let madrid = DigestSchedule {
            hour: 7,
            zone: HotelZone::parse("Europe/Madrid").unwrap(),
        };
        // 05:59 UTC = 06:59 in Madrid (winter): not yet.
        assert_eq!(due(ms("2027-01-15T05:59:00Z"), &madrid), None);
        let d = due(ms("2027-01-15T06:00:00Z"), &madrid).unwrap();
        assert_eq!(d.sent_on, "2027-01-15");
        assert_eq!(d.covers, "2027-01-14");
        assert_eq!(d.from_ms, ms("2027-01-13T23:00:00Z"));
        assert_eq!(d.to_ms, ms("2027-01-14T23:00:00Z"));
        // Late in the owner's day it is still that day's digest (one key a day).
        assert_eq!(
            due(ms("2027-01-15T22:30:00Z"), &madrid).unwrap().sent_on,
            "2027-01-15"
        );
        // 23:30 UTC is already the next day in Madrid.
        assert_eq!(
            due(ms("2027-01-15T23:30:00Z"), &madrid),
            None,
            "00:30 local, before 07:00"
        );
    }

    #[test]
    fn a_dst_day_is_covered_whole() {
        let madrid = DigestSchedule {
            hour: 7,
            zone: HotelZone::parse("Europe/Madrid").unwrap(),
        };
        // 2027-03-28 is the spring-forward day in Madrid: 23 hours long.
        let d = due(ms("2027-03-29T08:00:00Z"), &madrid).unwrap();
        assert_eq!(d.covers, "2027-03-28");
        assert_eq!(d.to_ms - d.from_ms, 23 * 3_600_000);
    }

    #[test]
    fn utc_by_default_and_an_empty_day_is_empty() {
        let d = due(ms("2027-01-15T07:00:00Z"), &DigestSchedule::default()).unwrap();
        assert_eq!(d.from_ms, ms("2027-01-14T00:00:00Z"));
        assert!(DigestFacts::default().is_empty());
        let f = DigestFacts {
            holds_open: 1,
            ..Default::default()
        };
        assert!(!f.is_empty(), "an open hold is worth a digest");
        let f = DigestFacts {
            routes_paused: vec!["SMTP failover paused".into()],
            ..Default::default()
        };
        assert!(!f.is_empty());
    }
}
