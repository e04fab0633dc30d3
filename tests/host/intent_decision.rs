//! Table tests of the send-turn decision (`domain::outbox::intent::decide`) with an explicit clock, and of
//! the "pointless from" table (`domain::outbox::intent::expires_at_ms`). Instants are literals.

use booking_email_engine::domain::email::{Audience, EmailKind};
use booking_email_engine::domain::journey::schedule::ScheduledKind;
use booking_email_engine::domain::outbox::intent::{
    decide, email_kind, expires_at_ms, utc_day, BookingNow, Intent, SendDecision, SkipReason,
};
use booking_email_engine::domain::timezone::HotelZone;
use chrono::{DateTime, NaiveDate};

fn ms(rfc3339: &str) -> i64 {
    DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .timestamp_millis()
}

fn date(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

const OPEN_V2: BookingNow = BookingNow {
    cancelled: false,
    replaced: false,
    journey_version: 2,
};

/// name, kind, audience, intent, booking now, now (ms UTC), expected.
type Case = (
    &'static str,
    EmailKind,
    Audience,
    Intent,
    Option<BookingNow>,
    i64,
    SendDecision,
);

#[test]
fn the_decision_table() {
    let moment = ms("2026-06-12T00:00:00+02:00");
    let v1 = Intent {
        journey_version: Some(1),
        expires_at_ms: Some(moment),
        moment_ms: None,
    };
    let v2 = Intent {
        journey_version: Some(2),
        ..v1
    };
    let cancelled = BookingNow {
        cancelled: true,
        ..OPEN_V2
    };
    let replaced = BookingNow {
        replaced: true,
        cancelled: true,
        ..OPEN_V2
    };
    let before = moment - 1;
    let guide = EmailKind::ArrivalGuide;
    let client = Audience::Client;
    use SendDecision::{Send, Skip};
    let cases: Vec<Case> = vec![
        (
            "current, in time",
            guide,
            client,
            v2,
            Some(OPEN_V2),
            before,
            Send,
        ),
        (
            "unknown booking",
            guide,
            client,
            v2,
            None,
            before,
            Skip(SkipReason::BookingUnknown),
        ),
        (
            "cancelled",
            guide,
            client,
            v2,
            Some(cancelled),
            before,
            Skip(SkipReason::Cancelled),
        ),
        (
            "replaced wins over cancelled",
            guide,
            client,
            v2,
            Some(replaced),
            before,
            Skip(SkipReason::Replaced),
        ),
        (
            "older version",
            guide,
            client,
            v1,
            Some(OPEN_V2),
            before,
            Skip(SkipReason::Superseded),
        ),
        (
            "cancelled wins over stale",
            guide,
            client,
            v2,
            Some(cancelled),
            moment + 1,
            Skip(SkipReason::Cancelled),
        ),
        (
            "at its moment: stale",
            guide,
            client,
            v2,
            Some(OPEN_V2),
            moment,
            Skip(SkipReason::Stale {
                expired_at_ms: moment,
            }),
        ),
        (
            "superseded wins over stale",
            guide,
            client,
            v1,
            Some(OPEN_V2),
            moment,
            Skip(SkipReason::Superseded),
        ),
        // A confirmation is a record of a moment: an amendment does not withdraw it.
        (
            "confirmation, older version",
            EmailKind::BookingConfirmation,
            client,
            Intent {
                journey_version: Some(1),
                expires_at_ms: None,
                moment_ms: None,
            },
            Some(OPEN_V2),
            i64::MAX,
            Send,
        ),
        (
            "confirmation, cancelled",
            EmailKind::BookingConfirmation,
            client,
            Intent::default(),
            Some(cancelled),
            before,
            Skip(SkipReason::Cancelled),
        ),
        (
            "no version carried: version not checked",
            EmailKind::ThankYou,
            client,
            Intent {
                journey_version: None,
                expires_at_ms: None,
                moment_ms: None,
            },
            Some(OPEN_V2),
            before,
            Send,
        ),
        // Owner alerts are never held, whatever the booking.
        (
            "owner alert, cancelled booking",
            EmailKind::OwnerEmailFailed,
            Audience::Owner,
            v1,
            Some(cancelled),
            moment + 1,
            Send,
        ),
        (
            "owner alert, unknown booking",
            EmailKind::OwnerNewBooking,
            Audience::Owner,
            v1,
            None,
            moment,
            Send,
        ),
    ];
    for (name, kind, audience, intent, booking, now, want) in cases {
        assert_eq!(
            decide(kind, audience, &intent, booking.as_ref(), now),
            want,
            "{name}"
        );
    }
}

#[test]
fn skip_reasons_read_as_stored() {
    assert_eq!(SkipReason::Cancelled.to_string(), "booking cancelled");
    assert_eq!(
        SkipReason::Replaced.to_string(),
        "booking replaced by a rebook"
    );
    assert_eq!(
        SkipReason::Superseded.to_string(),
        "superseded by a newer journey version"
    );
    assert_eq!(SkipReason::BookingUnknown.to_string(), "booking unknown");
    assert_eq!(
        SkipReason::Stale {
            expired_at_ms: ms("2026-06-11T22:00:00Z")
        }
        .to_string(),
        "stale: pointless since 2026-06-11T22:00Z"
    );
}

#[test]
fn pointless_from_table_in_hotel_time() {
    let madrid = HotelZone::iana("Europe/Madrid").unwrap();
    let (checkin, checkout) = (date("2026-06-12"), date("2026-06-15"));
    let cases = [
        (ScheduledKind::ArrivalGuide, "2026-06-12T00:00:00+02:00"),
        (ScheduledKind::CheckinDay, "2026-06-13T00:00:00+02:00"),
        (ScheduledKind::ThankYou, "2026-06-30T00:00:00+02:00"),
    ];
    for (kind, want) in cases {
        assert_eq!(
            expires_at_ms(kind, checkin, checkout, &madrid),
            ms(want),
            "{kind:?}"
        );
    }
    // UTC, and a check-out before the check-in counts as the check-in day.
    assert_eq!(
        expires_at_ms(
            ScheduledKind::ThankYou,
            checkin,
            date("2026-06-01"),
            &HotelZone::UTC
        ),
        ms("2026-06-27T00:00:00Z")
    );
    // A zone east of UTC: the day starts the evening before in UTC.
    let tokyo = HotelZone::iana("Asia/Tokyo").unwrap();
    assert_eq!(
        expires_at_ms(ScheduledKind::ArrivalGuide, checkin, checkout, &tokyo),
        ms("2026-06-11T15:00:00Z")
    );
}

#[test]
fn every_planned_send_is_in_time_at_its_planned_instant() {
    // Each scheduled send is due before it becomes pointless (08:00 / 08:00 / 10:00 hotel time).
    use booking_email_engine::domain::journey::schedule::hotel_plan;
    let zone = HotelZone::iana("America/New_York").unwrap();
    let (checkin, checkout) = (date("2026-11-01"), date("2026-11-03"));
    let plan = hotel_plan(checkin, checkout, &zone, ms("2026-01-01T00:00:00Z"));
    assert_eq!(plan.sends.len(), 3);
    for s in plan.sends {
        let intent = Intent {
            journey_version: Some(1),
            expires_at_ms: Some(expires_at_ms(s.kind, checkin, checkout, &zone)),
            moment_ms: None,
        };
        let open = BookingNow {
            journey_version: 1,
            ..OPEN_V2
        };
        let kind = email_kind(s.kind);
        assert_eq!(
            decide(kind, Audience::Client, &intent, Some(&open), s.at_ms),
            SendDecision::Send
        );
        let late = intent.expires_at_ms.unwrap();
        assert!(matches!(
            decide(kind, Audience::Client, &intent, Some(&open), late),
            SendDecision::Skip(SkipReason::Stale { .. })
        ));
    }
}

#[test]
fn intent_json_is_optional_and_camel_case() {
    let i: Intent = serde_json::from_str("{}").unwrap();
    assert_eq!(i, Intent::default());
    let i = Intent {
        journey_version: Some(3),
        expires_at_ms: Some(5),
        moment_ms: None,
    };
    assert_eq!(
        serde_json::to_string(&i).unwrap(),
        r#"{"journeyVersion":3,"expiresAtMs":5}"#
    );
    assert_eq!(utc_day(ms("2026-06-11T23:59:59Z")), "2026-06-11");
}
