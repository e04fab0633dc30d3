//! When the scheduled emails of a journey go out, and how to sleep until then — all computed from
//! fixed inputs (booking dates, the hotel's zone, the instant the booking was received). Nothing
//! here reads a clock: a Workflow replays its body after every sleep, so every instant must come
//! out the same on every replay.
//!
//! # Hotel plan ([`hotel_plan`])
//!
//! | kind                             | when (hotel local time)                 |
//! |----------------------------------|-----------------------------------------|
//! | [`ScheduledKind::ArrivalGuide`]  | 08:00, 3 days before the check-in date  |
//! | [`ScheduledKind::CheckinDay`]    | 08:00 on the check-in date              |
//! | [`ScheduledKind::ThankYou`]      | 10:00 the day after the check-out date  |
//!
//! Local times become instants with [`local_time_to_utc`] (DST-correct for IANA zones; see
//! `domain::timezone` for gaps and repeated hours). A check-out before the check-in is treated as
//! a check-out on the check-in date.
//!
//! **Late-booking rule.** A scheduled message whose instant is already past at the moment of
//! booking (`at_ms <= booked_at_ms`) is never sent late, so a last-minute booking gets no burst of
//! overdue mail:
//! - a past arrival guide is **merged into the confirmation**
//!   ([`HotelPlan::merged_into_confirmation`]): its facts — check-in date and time, check-in
//!   instructions — are already in the confirmation email;
//! - a past check-in-day note is **skipped** ([`HotelPlan::skipped`]);
//! - a past thank-you is **skipped**.
//!
//! Only "already past" counts; a message due one minute after booking is still planned.
//!
//! # Sleeps ([`sleep_chunks`])
//!
//! A wait is split into successive wake-up instants, each at most [`MAX_SLEEP_MS`] (360 days)
//! after the previous one, computed from the two fixed values only; more than
//! [`MAX_SLEEP_CHUNKS`] chunks (≈ 7.9 years) is refused with [`ScheduleError::TooFar`] instead of
//! looping.
//!
//! # Flights ([`segment_times`], [`format_local`])
//!
//! Segment times are local wall-clock times at each airport; with the airport's IANA zone they
//! become offset-aware times, shown to travellers as `Fri 12 June 2026, 07:15`.

use crate::domain::basics::stored_names;
use crate::domain::event::{Airport, FlightSegment};
use crate::domain::timezone::parse_iana;
use crate::domain::timezone::tzdb::Tz;
pub use crate::domain::timezone::HotelZone;
use chrono::{DateTime, Days, FixedOffset, NaiveDate, NaiveTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One day in milliseconds.
pub const DAY_MS: i64 = 86_400_000;
/// The longest single sleep: 360 days (under the platform's 365-day limit).
pub const MAX_SLEEP_MS: i64 = 360 * DAY_MS;
/// The most sleeps [`sleep_chunks`] returns: 8 × 360 days ≈ 7.9 years.
pub const MAX_SLEEP_CHUNKS: usize = 8;

/// Days before check-in that the arrival guide goes out.
pub const ARRIVAL_GUIDE_DAYS_BEFORE: u64 = 3;
/// Local hour of the arrival guide and of the check-in-day note.
pub const MORNING_HOUR: u32 = 8;
/// Local hour of the thank-you (the day after check-out).
pub const THANK_YOU_HOUR: u32 = 10;

/// A scheduled hotel email. The stored name (`as_str`: `arrival_guide`, `checkin_day`,
/// `thank_you`) is stable: it is written to D1 `scheduled_sends.kind` and used in Workflow step
/// names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum ScheduledKind {
    /// 08:00 local, 3 days before check-in.
    ArrivalGuide,
    /// 08:00 local on the check-in day.
    CheckinDay,
    /// 10:00 local, the day after check-out.
    ThankYou,
}

stored_names!(ScheduledKind);

impl ScheduledKind {
    /// All kinds, in plan order.
    pub const ALL: [ScheduledKind; 3] = [
        ScheduledKind::ArrivalGuide,
        ScheduledKind::CheckinDay,
        ScheduledKind::ThankYou,
    ];
}

/// One email to send at a fixed instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedSend {
    pub kind: ScheduledKind,
    /// Milliseconds since the Unix epoch (UTC).
    pub at_ms: i64,
}

/// The scheduled emails of one hotel booking; see the module docs for the rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HotelPlan {
    /// What to send and when, earliest first.
    pub sends: Vec<PlannedSend>,
    /// Past at booking time and covered by the confirmation (the arrival guide).
    pub merged_into_confirmation: Vec<ScheduledKind>,
    /// Past at booking time and dropped (check-in-day note, thank-you).
    pub skipped: Vec<ScheduledKind>,
    /// Further away than a journey can wait ([`sleep_chunks`] refuses it, e.g. an absurd
    /// check-out year): recorded as skipped with the reason, never as planned. Filled by
    /// [`within_reach`].
    #[serde(default)]
    pub too_far: Vec<PlannedSend>,
}

/// Why a sleep cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The target needs more than [`MAX_SLEEP_CHUNKS`] sleeps of [`MAX_SLEEP_MS`].
    #[error(
        "target {target_ms} ms is too far away: more than {MAX_SLEEP_CHUNKS} sleeps of 360 days"
    )]
    TooFar { target_ms: i64 },
}

/// The instant of the local wall-clock time `date time` in `zone`. DST-correct; a nonexistent time
/// (spring-forward gap) gives the first valid instant after the gap, an ambiguous one (fall-back)
/// the earlier instant.
pub fn local_time_to_utc(date: NaiveDate, time: NaiveTime, zone: &HotelZone) -> DateTime<Utc> {
    zone.resolve(date.and_time(time))
}

fn hour(h: u32) -> NaiveTime {
    NaiveTime::from_hms_opt(h, 0, 0).expect("valid hour")
}

/// The plan of a hotel booking's scheduled emails (see the module docs, including the
/// late-booking rule). `booked_at_ms` is when the booking was received (ms since the epoch, UTC).
pub fn hotel_plan(
    checkin: NaiveDate,
    checkout: NaiveDate,
    zone: &HotelZone,
    booked_at_ms: i64,
) -> HotelPlan {
    let checkout = checkout.max(checkin);
    let candidates = [
        (
            ScheduledKind::ArrivalGuide,
            checkin.checked_sub_days(Days::new(ARRIVAL_GUIDE_DAYS_BEFORE)),
            MORNING_HOUR,
        ),
        (ScheduledKind::CheckinDay, Some(checkin), MORNING_HOUR),
        (
            ScheduledKind::ThankYou,
            checkout.checked_add_days(Days::new(1)),
            THANK_YOU_HOUR,
        ),
    ];
    let mut plan = HotelPlan::default();
    for (kind, date, h) in candidates {
        let at_ms = date.map(|d| local_time_to_utc(d, hour(h), zone).timestamp_millis());
        match at_ms {
            Some(at_ms) if at_ms > booked_at_ms => plan.sends.push(PlannedSend { kind, at_ms }),
            _ if kind == ScheduledKind::ArrivalGuide => plan.merged_into_confirmation.push(kind),
            _ => plan.skipped.push(kind),
        }
    }
    crate::domain::basics::sort::sort_by_key(&mut plan.sends, |s| (s.at_ms, s.kind));
    plan
}

/// `plan` with every send that cannot be waited for from `from_ms` ([`sleep_chunks`] refuses it)
/// moved from `sends` to `too_far`. The journey waits from the event's receipt time.
pub fn within_reach(mut plan: HotelPlan, from_ms: i64) -> HotelPlan {
    let (sends, too_far) = plan
        .sends
        .into_iter()
        .partition(|s| sleep_chunks(from_ms, s.at_ms).is_ok());
    plan.sends = sends;
    plan.too_far = too_far;
    plan
}

/// `true` when a stay was over before its booking event arrived: its check-out date is before the
/// UTC day of `received_at_ms` (ms since the epoch). Such a booking is recorded and the owner
/// alerted, but the guest gets no confirmation and no scheduled email (nothing to look forward
/// to). A UTC day is a day's grace for hotels west of Greenwich, never a false "over".
pub fn stay_is_over(checkout: NaiveDate, received_at_ms: i64) -> bool {
    DateTime::<Utc>::from_timestamp_millis(received_at_ms)
        .is_some_and(|received| checkout < received.date_naive())
}

/// The successive wake-up instants (ms since the epoch) that reach `target_ms` from `from_ms`
/// with each wait at most [`MAX_SLEEP_MS`]: full 360-day chunks, then the remainder; the last
/// element is `target_ms`. A target at or before `from_ms` needs no sleep (empty). More than
/// [`MAX_SLEEP_CHUNKS`] chunks → [`ScheduleError::TooFar`].
pub fn sleep_chunks(from_ms: i64, target_ms: i64) -> Result<Vec<i64>, ScheduleError> {
    if target_ms <= from_ms {
        return Ok(Vec::new());
    }
    // i128: the distance between two i64 values may not fit an i64.
    let distance = i128::from(target_ms) - i128::from(from_ms);
    let max = i128::from(MAX_SLEEP_MS);
    let chunks = (distance + max - 1) / max;
    if chunks > MAX_SLEEP_CHUNKS as i128 {
        return Err(ScheduleError::TooFar { target_ms });
    }
    // chunks ≤ 8, so from + k × MAX < target stays in range for k < chunks.
    let mut wakes: Vec<i64> = (1..chunks as i64)
        .map(|k| from_ms + k * MAX_SLEEP_MS)
        .collect();
    wakes.push(target_ms);
    Ok(wakes)
}

/// The airport's IANA zone, when it has a valid one. Duffel gives every airport's `time_zone`;
/// where it does not, its adapter fills the field from the airport's coordinates
/// (`sources::duffel`, `tz_lookup`). liteAPI flights give an IATA code and a name only, with
/// neither zone nor coordinates, so there is nothing to look up and such a segment keeps its
/// supplier-local times without an offset rather than a guessed one.
pub fn airport_zone(airport: &Airport) -> Option<Tz> {
    airport.time_zone.as_deref().and_then(parse_iana)
}

fn local_at(zone: Option<Tz>, local: chrono::NaiveDateTime) -> Option<DateTime<FixedOffset>> {
    let zone = HotelZone::Iana(zone?);
    let instant = zone.resolve(local);
    Some(zone.to_local(instant))
}

/// `(departure, arrival)` of a segment as offset-aware local times: `departing_at` in the
/// origin's zone, `arriving_at` in the destination's. `None` for an airport without a valid IANA
/// zone. Gaps and repeated hours resolve as in [`local_time_to_utc`].
pub fn segment_times(
    segment: &FlightSegment,
) -> (Option<DateTime<FixedOffset>>, Option<DateTime<FixedOffset>>) {
    (
        local_at(airport_zone(&segment.origin), segment.departing_at),
        local_at(airport_zone(&segment.destination), segment.arriving_at),
    )
}

/// A local time as travellers read it: `Fri 12 June 2026, 07:15` (English names, 24-hour clock,
/// no zone: emails add the airport's city).
pub fn format_local<Z: TimeZone>(dt: &DateTime<Z>) -> String
where
    Z::Offset: fmt::Display,
{
    dt.format("%a %-d %B %Y, %H:%M").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip() {
        for k in ScheduledKind::ALL {
            assert_eq!(ScheduledKind::parse(k.as_str()), Some(k));
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.as_str())
            );
        }
        assert_eq!(ScheduledKind::parse("nope"), None);
    }

    #[test]
    fn extreme_sleep_inputs_do_not_overflow() {
        assert_eq!(
            sleep_chunks(i64::MIN, i64::MAX),
            Err(ScheduleError::TooFar {
                target_ms: i64::MAX
            })
        );
        assert_eq!(sleep_chunks(i64::MAX, i64::MIN), Ok(vec![]));
        assert_eq!(sleep_chunks(i64::MAX - 1, i64::MAX), Ok(vec![i64::MAX]));
    }

    #[test]
    fn checkout_before_checkin_is_clamped() {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        let plan = hotel_plan(d("2026-06-12"), d("2026-06-10"), &HotelZone::UTC, 0);
        let thank_you = plan
            .sends
            .iter()
            .find(|s| s.kind == ScheduledKind::ThankYou)
            .unwrap();
        // 2026-06-13T10:00:00Z
        assert_eq!(thank_you.at_ms, 1_781_344_800_000);
    }

    #[test]
    fn extreme_dates_are_skipped_not_panicking() {
        let plan = hotel_plan(NaiveDate::MIN, NaiveDate::MAX, &HotelZone::UTC, i64::MIN);
        assert_eq!(
            plan.merged_into_confirmation,
            vec![ScheduledKind::ArrivalGuide]
        );
        assert_eq!(plan.skipped, vec![ScheduledKind::ThankYou]);
        assert_eq!(plan.sends.len(), 1);
    }
}
