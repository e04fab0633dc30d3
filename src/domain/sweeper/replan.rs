//! Hotel time repaired: a booking planned in UTC because its hotel's location was unknown is
//! moved to hotel time once the zone is known. Pure: for one planned send, its new due instant
//! (the same local wall-clock rule as the first plan: `crate::domain::journey::schedule::hotel_plan`), the
//! instant it becomes pointless (`crate::domain::outbox::intent::expires_at_ms`) and its local time.

use crate::domain::journey::schedule::{hotel_plan, ScheduledKind};
use crate::domain::outbox::intent;
use crate::domain::timezone::HotelZone;
use chrono::NaiveDate;

/// A planned send moved to hotel time. Times are ms since the epoch, UTC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replanned {
    pub due_at_ms: i64,
    pub expires_at_ms: i64,
    /// `due_at_ms` on the hotel's clock, RFC 3339 with its offset.
    pub local_time: Option<String>,
}

/// `kind` of a stay `checkin`–`checkout` at a hotel in `zone`: when it is due there, when it goes
/// stale, and its local time. Every kind the plan knows has a due time (the late-booking rule is
/// not applied again: the send was planned, so its moment was ahead when the booking arrived; if
/// it has passed since, the send's own intent check skips it as stale).
pub fn replanned(
    kind: ScheduledKind,
    checkin: NaiveDate,
    checkout: NaiveDate,
    zone: &HotelZone,
) -> Option<Replanned> {
    let plan = hotel_plan(checkin, checkout, zone, i64::MIN);
    let due_at_ms = plan.sends.iter().find(|s| s.kind == kind)?.at_ms;
    Some(Replanned {
        due_at_ms,
        expires_at_ms: intent::expires_at_ms(kind, checkin, checkout, zone),
        local_time: zone.local_rfc3339(due_at_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::sweeper::tests::ms;

    #[test]
    fn a_utc_plan_moves_to_eight_in_the_morning_hotel_time() {
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let ny = HotelZone::parse("America/New_York").unwrap();
        let utc = HotelZone::UTC;
        let (checkin, checkout) = (d("2027-07-15"), d("2027-07-18"));
        let before = replanned(ScheduledKind::CheckinDay, checkin, checkout, &utc).unwrap();
        assert_eq!(
            before.due_at_ms,
            ms("2027-07-15T08:00:00Z"),
            "08:00 UTC: 04:00 in New York"
        );
        let after = replanned(ScheduledKind::CheckinDay, checkin, checkout, &ny).unwrap();
        assert_eq!(after.due_at_ms, ms("2027-07-15T12:00:00Z"));
        assert_eq!(
            after.local_time.as_deref(),
            Some("2027-07-15T08:00:00-04:00")
        );
        assert_eq!(
            after.expires_at_ms,
            ms("2027-07-16T04:00:00Z"),
            "midnight after check-in, EDT"
        );
        let guide = replanned(ScheduledKind::ArrivalGuide, checkin, checkout, &ny).unwrap();
        assert_eq!(guide.due_at_ms, ms("2027-07-12T12:00:00Z"));
        let thanks = replanned(ScheduledKind::ThankYou, checkin, checkout, &ny).unwrap();
        assert_eq!(
            thanks.local_time.as_deref(),
            Some("2027-07-19T10:00:00-04:00")
        );
        // East of UTC the send moves earlier: 08:00 in Tokyo is 23:00 UTC the day before.
        let tokyo = HotelZone::parse("Asia/Tokyo").unwrap();
        let t = replanned(ScheduledKind::CheckinDay, checkin, checkout, &tokyo).unwrap();
        assert_eq!(t.due_at_ms, ms("2027-07-14T23:00:00Z"));
    }
}
