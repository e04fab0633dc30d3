//! Table tests of the hotel plan, local time resolution, hotel zones, sleeps and flight times.
//! Every expected instant is written by hand as a literal (RFC 3339 and epoch milliseconds).

use booking_email_engine::domain::event::{Airport, FlightSegment, HotelLocation};
use booking_email_engine::domain::journey::schedule::{
    format_local, hotel_plan, local_time_to_utc, segment_times, sleep_chunks, HotelPlan,
    PlannedSend, ScheduleError, ScheduledKind, DAY_MS, MAX_SLEEP_CHUNKS, MAX_SLEEP_MS,
};
use booking_email_engine::domain::timezone::{
    hotel_zone, hotel_zone_located, HotelZone, ZoneSource,
};
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use proptest::prelude::*;

use ScheduledKind::{ArrivalGuide, CheckinDay, ThankYou};

fn date(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn time(s: &str) -> NaiveTime {
    NaiveTime::parse_from_str(s, "%H:%M").unwrap()
}

fn ms(rfc3339: &str) -> i64 {
    DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .timestamp_millis()
}

fn iso(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn zone(name: &str) -> HotelZone {
    HotelZone::iana(name).unwrap()
}

fn utc_of(d: &str, t: &str, z: &HotelZone) -> String {
    local_time_to_utc(date(d), time(t), z)
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The plan of a stay in Madrid from 12 to 15 June 2026 (CEST, UTC+2), booked at `booked_ms`
/// (epoch milliseconds).
fn madrid_stay(booked_ms: i64) -> HotelPlan {
    hotel_plan(
        date("2026-06-12"),
        date("2026-06-15"),
        &zone("Europe/Madrid"),
        booked_ms,
    )
}

fn send(kind: ScheduledKind, at_ms: i64) -> PlannedSend {
    PlannedSend { kind, at_ms }
}

// ---------------------------------------------------------------- hotel plan

#[test]
fn normal_booking_in_madrid_gets_three_sends_at_exact_instants() {
    // Booked 2026-05-01T10:00Z for 12–15 June 2026 (CEST, UTC+2).
    let plan = madrid_stay(1_777_629_600_000);
    assert_eq!(
        plan,
        HotelPlan {
            sends: vec![
                // 2026-06-09 08:00 CEST = 06:00Z
                send(ArrivalGuide, 1_780_984_800_000),
                // 2026-06-12 08:00 CEST = 06:00Z
                send(CheckinDay, 1_781_244_000_000),
                // 2026-06-16 10:00 CEST = 08:00Z
                send(ThankYou, 1_781_596_800_000),
            ],
            merged_into_confirmation: vec![],
            skipped: vec![],
            too_far: vec![],
        }
    );
    assert_eq!(iso(plan.sends[0].at_ms), "2026-06-09T06:00:00Z");
    assert_eq!(iso(plan.sends[1].at_ms), "2026-06-12T06:00:00Z");
    assert_eq!(iso(plan.sends[2].at_ms), "2026-06-16T08:00:00Z");
}

#[test]
fn booked_the_day_before_checkin_merges_the_arrival_guide() {
    // Booked 2026-06-11 15:00 CEST = 13:00Z.
    let plan = madrid_stay(1_781_182_800_000);
    assert_eq!(plan.merged_into_confirmation, vec![ArrivalGuide]);
    assert_eq!(plan.skipped, vec![]);
    assert_eq!(
        plan.sends,
        vec![
            send(CheckinDay, 1_781_244_000_000),
            send(ThankYou, 1_781_596_800_000)
        ]
    );
}

#[test]
fn booked_on_checkin_day_at_nine_local_skips_the_checkin_note() {
    // Booked 2026-06-12 09:00 CEST = 07:00Z.
    let plan = madrid_stay(1_781_247_600_000);
    assert_eq!(plan.merged_into_confirmation, vec![ArrivalGuide]);
    assert_eq!(plan.skipped, vec![CheckinDay]);
    assert_eq!(plan.sends, vec![send(ThankYou, 1_781_596_800_000)]);
}

#[test]
fn a_send_due_exactly_at_booking_time_counts_as_past() {
    // Booked at 2026-06-12T06:00:00.000Z, the check-in note's own instant.
    let plan = madrid_stay(1_781_244_000_000);
    assert_eq!(plan.skipped, vec![CheckinDay]);
    // One millisecond earlier it is still planned.
    let plan = madrid_stay(1_781_244_000_000 - 1);
    assert_eq!(plan.skipped, vec![]);
    assert_eq!(plan.sends[0], send(CheckinDay, 1_781_244_000_000));
}

#[test]
fn an_arrival_guide_due_soon_after_booking_is_still_sent() {
    // Booked 2026-06-09T05:59Z, one minute before the guide's 06:00Z.
    let plan = madrid_stay(ms("2026-06-09T05:59:00Z"));
    assert_eq!(plan.sends.len(), 3);
    assert_eq!(plan.sends[0], send(ArrivalGuide, 1_780_984_800_000));
}

#[test]
fn booked_after_checkout_skips_everything_but_merges_the_guide() {
    let plan = madrid_stay(ms("2026-06-20T00:00:00Z"));
    assert_eq!(plan.sends, vec![]);
    assert_eq!(plan.merged_into_confirmation, vec![ArrivalGuide]);
    assert_eq!(plan.skipped, vec![CheckinDay, ThankYou]);
}

#[test]
fn same_day_checkout_thank_you_is_the_next_morning() {
    // Day use: check-in = check-out = 2026-06-12 (UTC zone).
    let plan = hotel_plan(date("2026-06-12"), date("2026-06-12"), &HotelZone::UTC, 0);
    assert_eq!(
        plan.sends.iter().map(|s| iso(s.at_ms)).collect::<Vec<_>>(),
        [
            "2026-06-09T08:00:00Z",
            "2026-06-12T08:00:00Z",
            "2026-06-13T10:00:00Z"
        ]
    );
}

#[test]
fn booking_700_days_ahead_sleeps_in_two_chunks_to_the_right_day() {
    // Booked 2026-01-10T12:00Z; check-in 2027-12-14 in Madrid (CET, UTC+1) → arrival guide
    // 2027-12-11 08:00 CET = 07:00Z, 699 days 19 hours later.
    let booked = 1_768_046_400_000;
    let z = zone("Europe/Madrid");
    let plan = hotel_plan(date("2027-12-14"), date("2027-12-16"), &z, booked);
    let guide = plan.sends[0];
    assert_eq!(guide, send(ArrivalGuide, 1_828_508_400_000));
    let chunks = sleep_chunks(booked, guide.at_ms).unwrap();
    assert_eq!(chunks, vec![1_799_150_400_000, 1_828_508_400_000]);
    assert_eq!(iso(chunks[0]), "2027-01-05T12:00:00Z");
    let mut prev = booked;
    for c in &chunks {
        assert!(*c - prev <= MAX_SLEEP_MS && *c > prev);
        prev = *c;
    }
    assert_eq!(*chunks.last().unwrap(), guide.at_ms);
    let local = z.to_local(DateTime::from_timestamp_millis(guide.at_ms).unwrap());
    assert_eq!(local.to_rfc3339(), "2027-12-11T08:00:00+01:00");
}

#[test]
fn plan_across_the_spring_forward_day_in_paris() {
    // Check-in 2027-03-28 (clocks go 02:00 → 03:00): guide on the 25th in CET, note in CEST.
    let plan = hotel_plan(
        date("2027-03-28"),
        date("2027-03-30"),
        &zone("Europe/Paris"),
        0,
    );
    assert_eq!(
        plan.sends,
        vec![
            send(ArrivalGuide, 1_805_958_000_000), // 2027-03-25T07:00Z
            send(CheckinDay, 1_806_213_600_000),   // 2027-03-28T06:00Z
            send(ThankYou, ms("2027-03-31T08:00:00Z")),
        ]
    );
}

// ---------------------------------------------------------------- local time → UTC

#[test]
fn dst_days_in_europe() {
    let paris = zone("Europe/Paris");
    // Spring forward 2027-03-28: 08:00 is CEST (+2); the day before still CET (+1).
    assert_eq!(
        utc_of("2027-03-28", "08:00", &paris),
        "2027-03-28T06:00:00Z"
    );
    assert_eq!(
        local_time_to_utc(date("2027-03-28"), time("08:00"), &paris).timestamp_millis(),
        1_806_213_600_000
    );
    assert_eq!(
        utc_of("2027-03-27", "08:00", &paris),
        "2027-03-27T07:00:00Z"
    );
    assert_eq!(
        local_time_to_utc(date("2027-03-27"), time("08:00"), &paris).timestamp_millis(),
        1_806_130_800_000
    );
    // Fall back 2026-10-25: 08:00 is CET again.
    assert_eq!(
        utc_of("2026-10-25", "08:00", &paris),
        "2026-10-25T07:00:00Z"
    );
    assert_eq!(
        local_time_to_utc(date("2026-10-25"), time("08:00"), &paris).timestamp_millis(),
        1_792_911_600_000
    );
    assert_eq!(
        utc_of("2026-10-24", "08:00", &paris),
        "2026-10-24T06:00:00Z"
    );
}

#[test]
fn dst_days_in_the_us() {
    let ny = zone("America/New_York");
    // Spring forward 2027-03-14: 08:00 EDT (−4).
    assert_eq!(utc_of("2027-03-14", "08:00", &ny), "2027-03-14T12:00:00Z");
    assert_eq!(
        local_time_to_utc(date("2027-03-14"), time("08:00"), &ny).timestamp_millis(),
        1_805_025_600_000
    );
    assert_eq!(utc_of("2027-03-13", "08:00", &ny), "2027-03-13T13:00:00Z");
    // Fall back 2026-11-01: 08:00 EST (−5).
    assert_eq!(utc_of("2026-11-01", "08:00", &ny), "2026-11-01T13:00:00Z");
    assert_eq!(
        local_time_to_utc(date("2026-11-01"), time("08:00"), &ny).timestamp_millis(),
        1_793_538_000_000
    );
    assert_eq!(utc_of("2026-10-31", "08:00", &ny), "2026-10-31T12:00:00Z");
}

#[test]
fn nonexistent_local_time_is_the_first_instant_after_the_gap() {
    // Paris 2027-03-28 02:30 does not exist: clocks jump 02:00 CET → 03:00 CEST at 01:00Z.
    assert_eq!(
        utc_of("2027-03-28", "02:30", &zone("Europe/Paris")),
        "2027-03-28T01:00:00Z"
    );
    // New York 2027-03-14 02:30 does not exist: 02:00 EST → 03:00 EDT at 07:00Z.
    assert_eq!(
        utc_of("2027-03-14", "02:30", &zone("America/New_York")),
        "2027-03-14T07:00:00Z"
    );
    // The edges: 02:00 (first missing minute) and 03:00 (first valid local time).
    assert_eq!(
        utc_of("2027-03-14", "02:00", &zone("America/New_York")),
        "2027-03-14T07:00:00Z"
    );
    assert_eq!(
        utc_of("2027-03-14", "03:00", &zone("America/New_York")),
        "2027-03-14T07:00:00Z"
    );
    assert_eq!(
        utc_of("2027-03-14", "01:59", &zone("America/New_York")),
        "2027-03-14T06:59:00Z"
    );
}

#[test]
fn ambiguous_local_time_is_the_earlier_instant() {
    // New York 2026-11-01 01:30 happens twice: EDT (05:30Z) then EST (06:30Z).
    assert_eq!(
        utc_of("2026-11-01", "01:30", &zone("America/New_York")),
        "2026-11-01T05:30:00Z"
    );
    // Paris 2026-10-25 02:30 happens twice: CEST (00:30Z) then CET (01:30Z).
    assert_eq!(
        utc_of("2026-10-25", "02:30", &zone("Europe/Paris")),
        "2026-10-25T00:30:00Z"
    );
}

#[test]
fn date_line_zones() {
    // Kiritimati is UTC+14: 08:00 on 12 June is still 11 June in UTC.
    let k = local_time_to_utc(
        date("2026-06-12"),
        time("08:00"),
        &zone("Pacific/Kiritimati"),
    );
    assert_eq!(k.to_rfc3339(), "2026-06-11T18:00:00+00:00");
    assert_eq!(k.timestamp_millis(), 1_781_200_800_000);
    // Pago Pago is UTC−11: 08:00 on 12 June is 19:00Z the same day.
    let p = local_time_to_utc(
        date("2026-06-12"),
        time("08:00"),
        &zone("Pacific/Pago_Pago"),
    );
    assert_eq!(p.to_rfc3339(), "2026-06-12T19:00:00+00:00");
    assert_eq!(p.timestamp_millis(), 1_781_290_800_000);
    // 25 hours apart for the "same" local time.
    assert_eq!(p.timestamp_millis() - k.timestamp_millis(), 25 * 3_600_000);
}

// ---------------------------------------------------------------- hotel zones

fn loc(tz: Option<&str>, lat: Option<f64>, lon: Option<f64>) -> HotelLocation {
    HotelLocation {
        address: None,
        time_zone: tz.map(str::to_string),
        latitude: lat,
        longitude: lon,
        ..Default::default()
    }
}

#[test]
fn zone_table() {
    let cases: Vec<(&str, Option<HotelLocation>, &str, ZoneSource)> = vec![
        ("no location", None, "UTC", ZoneSource::Utc),
        (
            "empty location",
            Some(loc(None, None, None)),
            "UTC",
            ZoneSource::Utc,
        ),
        (
            "IANA",
            Some(loc(Some("Europe/Madrid"), None, None)),
            "Europe/Madrid",
            ZoneSource::Iana,
        ),
        (
            "IANA wins over coordinates",
            Some(loc(Some("Asia/Tokyo"), Some(41.38), Some(2.18))),
            "Asia/Tokyo",
            ZoneSource::Iana,
        ),
        (
            "IANA with spaces",
            Some(loc(Some("  America/New_York "), None, None)),
            "America/New_York",
            ZoneSource::Iana,
        ),
        (
            "Barcelona coordinates → the zone lookup",
            Some(loc(None, Some(41.38), Some(2.18))),
            "Europe/Madrid",
            ZoneSource::Coordinates,
        ),
        (
            "Honolulu coordinates → the zone lookup",
            Some(loc(None, Some(21.31), Some(-157.8))),
            "Pacific/Honolulu",
            ZoneSource::Coordinates,
        ),
        (
            "invalid IANA falls back to coordinates",
            Some(loc(Some("Europe/Atlantis"), Some(41.38), Some(2.18))),
            "Europe/Madrid",
            ZoneSource::Coordinates,
        ),
        (
            "wrong-case IANA is not a name",
            Some(loc(Some("europe/madrid"), Some(21.31), Some(-157.8))),
            "Pacific/Honolulu",
            ZoneSource::Coordinates,
        ),
        (
            "invalid IANA, no coordinates",
            Some(loc(Some("Not/AZone"), None, None)),
            "UTC",
            ZoneSource::Utc,
        ),
        (
            "blank IANA",
            Some(loc(Some("   "), None, Some(2.18))),
            "UTC",
            ZoneSource::Utc,
        ),
        (
            "longitude without latitude",
            Some(loc(None, None, Some(2.18))),
            "UTC",
            ZoneSource::Utc,
        ),
        (
            "latitude out of range",
            Some(loc(None, Some(95.0), Some(2.18))),
            "UTC",
            ZoneSource::Utc,
        ),
        (
            "longitude out of range",
            Some(loc(None, Some(41.38), Some(200.0))),
            "UTC",
            ZoneSource::Utc,
        ),
        (
            "NaN",
            Some(loc(None, Some(f64::NAN), Some(2.18))),
            "UTC",
            ZoneSource::Utc,
        ),
        (
            "(0, 0) placeholder",
            Some(loc(None, Some(0.0), Some(0.0))),
            "UTC",
            ZoneSource::Utc,
        ),
        (
            "east edge: Vanua Levu, Fiji",
            Some(loc(None, Some(-16.5), Some(179.9))),
            "Pacific/Fiji",
            ZoneSource::Coordinates,
        ),
        (
            "west of the date line: Apia, Samoa (UTC+13)",
            Some(loc(None, Some(-13.83), Some(-171.76))),
            "Pacific/Apia",
            ZoneSource::Coordinates,
        ),
    ];
    for (name, location, want_zone, want_source) in cases {
        let (z, source) = hotel_zone_located(location.as_ref());
        assert_eq!(z.to_string(), want_zone, "{name}");
        assert_eq!(source, want_source, "{name}");
    }
}

/// Barcelona by its coordinates: 08:00 is 06:00Z in summer (CEST), 07:00Z in winter (CET), and
/// 06:00Z on the morning of the 2027-03-28 spring-forward day (the change is at 01:00Z). The old
/// longitude rule said 07:45Z on every date.
#[test]
fn coordinates_give_the_true_zone_instants() {
    let (z, source) = hotel_zone_located(Some(&loc(None, Some(41.38), Some(2.18))));
    assert_eq!(source, ZoneSource::Coordinates);
    assert_eq!(utc_of("2026-06-12", "08:00", &z), "2026-06-12T06:00:00Z");
    assert_eq!(utc_of("2027-01-15", "08:00", &z), "2027-01-15T07:00:00Z");
    assert_eq!(utc_of("2027-03-28", "08:00", &z), "2027-03-28T06:00:00Z");
    assert_eq!(utc_of("2027-10-31", "08:00", &z), "2027-10-31T07:00:00Z");
    let plan = hotel_plan(date("2027-07-15"), date("2027-07-18"), &z, 0);
    assert_eq!(iso(plan.sends[1].at_ms), "2027-07-15T06:00:00Z");
    let (h, _) = hotel_zone_located(Some(&loc(None, Some(21.31), Some(-157.8))));
    assert_eq!(utc_of("2026-06-12", "08:00", &h), "2026-06-12T18:00:00Z");
}

/// The fallback when the lookup has no answer (`hotel_zone` alone): a fixed offset of
/// longitude / 15 h, no DST.
#[test]
fn longitude_fallback_is_a_fixed_offset() {
    let (z, _) = hotel_zone(Some(&loc(None, Some(41.38), Some(2.18))));
    assert_eq!(z, HotelZone::Fixed { offset_minutes: 15 });
    // 08:00 at UTC+00:15 = 07:45Z, summer or winter alike.
    assert_eq!(utc_of("2026-06-12", "08:00", &z), "2026-06-12T07:45:00Z");
    assert_eq!(utc_of("2027-03-28", "08:00", &z), "2027-03-28T07:45:00Z");
    let (h, _) = hotel_zone(Some(&loc(None, Some(21.31), Some(-157.8))));
    assert_eq!(
        h,
        HotelZone::Fixed {
            offset_minutes: -630
        }
    );
    assert_eq!(utc_of("2026-06-12", "08:00", &h), "2026-06-12T18:30:00Z");
}

#[test]
fn utc_zone_plan() {
    let (z, source) = hotel_zone(None);
    assert_eq!(source, ZoneSource::Utc);
    let plan = hotel_plan(date("2026-06-12"), date("2026-06-15"), &z, 0);
    assert_eq!(iso(plan.sends[0].at_ms), "2026-06-09T08:00:00Z");
}

// ---------------------------------------------------------------- sleeps

#[test]
fn sleep_chunk_table() {
    let from = ms("2026-01-10T12:00:00Z");
    // Past or now: no sleep.
    assert_eq!(sleep_chunks(from, from - 1), Ok(vec![]));
    assert_eq!(sleep_chunks(from, from), Ok(vec![]));
    // One millisecond.
    assert_eq!(sleep_chunks(from, from + 1), Ok(vec![from + 1]));
    // Exactly 360 days: one chunk.
    assert_eq!(
        sleep_chunks(from, from + 360 * DAY_MS),
        Ok(vec![from + 360 * DAY_MS])
    );
    // 361 days: two.
    assert_eq!(
        sleep_chunks(from, from + 361 * DAY_MS),
        Ok(vec![from + 360 * DAY_MS, from + 361 * DAY_MS])
    );
    // 360 days + 1 ms: two.
    assert_eq!(
        sleep_chunks(from, from + MAX_SLEEP_MS + 1),
        Ok(vec![from + MAX_SLEEP_MS, from + MAX_SLEEP_MS + 1])
    );
    // The cap: exactly 8 × 360 days is allowed…
    let cap = from + MAX_SLEEP_CHUNKS as i64 * MAX_SLEEP_MS;
    let chunks = sleep_chunks(from, cap).unwrap();
    assert_eq!(chunks.len(), MAX_SLEEP_CHUNKS);
    assert_eq!(*chunks.last().unwrap(), cap);
    // …one millisecond more is too far.
    assert_eq!(
        sleep_chunks(from, cap + 1),
        Err(ScheduleError::TooFar { target_ms: cap + 1 })
    );
    // Far beyond (year 2100).
    let far = ms("2100-01-01T00:00:00Z");
    assert_eq!(
        sleep_chunks(from, far),
        Err(ScheduleError::TooFar { target_ms: far })
    );
    assert!(ScheduleError::TooFar { target_ms: far }
        .to_string()
        .contains("too far"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn chunks_increase_stay_under_the_limit_and_end_at_the_target(
        from in -4_000_000_000_000_000i64..4_000_000_000_000_000i64,
        distance in 1i64..=(MAX_SLEEP_CHUNKS as i64 * MAX_SLEEP_MS),
    ) {
        let target = from + distance;
        let chunks = sleep_chunks(from, target).unwrap();
        prop_assert!(!chunks.is_empty() && chunks.len() <= MAX_SLEEP_CHUNKS);
        prop_assert_eq!(*chunks.last().unwrap(), target);
        let mut prev = from;
        for c in &chunks {
            prop_assert!(*c > prev, "not increasing");
            prop_assert!(*c - prev <= MAX_SLEEP_MS, "gap too long");
            prev = *c;
        }
        // As few chunks as possible.
        let min = ((distance + MAX_SLEEP_MS - 1) / MAX_SLEEP_MS) as usize;
        prop_assert_eq!(chunks.len(), min);
    }

    #[test]
    fn chunks_are_total_over_all_i64(from in any::<i64>(), target in any::<i64>()) {
        match sleep_chunks(from, target) {
            Ok(chunks) if target <= from => prop_assert!(chunks.is_empty()),
            Ok(chunks) => prop_assert_eq!(*chunks.last().unwrap(), target),
            Err(ScheduleError::TooFar { target_ms }) => {
                prop_assert_eq!(target_ms, target);
                prop_assert!(i128::from(target) - i128::from(from)
                    > MAX_SLEEP_CHUNKS as i128 * i128::from(MAX_SLEEP_MS));
            }
        }
    }

    #[test]
    fn plan_is_ordered_and_partitions_the_three_kinds(
        checkin_offset in 0i64..2000,
        nights in 0u64..30,
        booked in 1_700_000_000_000i64..1_900_000_000_000i64,
        zone_ix in 0usize..5,
    ) {
        let zones = ["Europe/Madrid", "America/New_York", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kolkata"];
        let z = zone(zones[zone_ix]);
        let checkin = date("2024-01-01") + chrono::Days::new(checkin_offset as u64);
        let checkout = checkin + chrono::Days::new(nights);
        let plan = hotel_plan(checkin, checkout, &z, booked);
        let mut kinds: Vec<ScheduledKind> = plan.sends.iter().map(|s| s.kind)
            .chain(plan.merged_into_confirmation.iter().copied())
            .chain(plan.skipped.iter().copied())
            .collect();
        kinds.sort();
        prop_assert_eq!(kinds, vec![ArrivalGuide, CheckinDay, ThankYou]);
        prop_assert!(plan.sends.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        prop_assert!(plan.sends.iter().all(|s| s.at_ms > booked));
        prop_assert!(plan.merged_into_confirmation.iter().all(|k| *k == ArrivalGuide));
    }
}

// ---------------------------------------------------------------- flights

fn airport(iata: &str, city: &str, tz: Option<&str>) -> Airport {
    Airport {
        iata_code: iata.into(),
        name: format!("{city} airport"),
        city_name: Some(city.into()),
        time_zone: tz.map(str::to_string),
    }
}

fn at(s: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
}

fn segment(origin: Airport, destination: Airport, dep: &str, arr: &str) -> FlightSegment {
    FlightSegment {
        flight_number: "ZZ 0472".into(),
        origin,
        destination,
        departing_at: at(dep),
        arriving_at: at(arr),
        airline: None,
    }
}

#[test]
fn segment_times_use_each_airports_zone() {
    let s = segment(
        airport("LHR", "London", Some("Europe/London")),
        airport("JFK", "New York", Some("America/New_York")),
        "2026-06-12 07:15",
        "2026-06-12 10:30",
    );
    let (dep, arr) = segment_times(&s);
    let (dep, arr) = (dep.unwrap(), arr.unwrap());
    assert_eq!(dep.to_rfc3339(), "2026-06-12T07:15:00+01:00");
    assert_eq!(arr.to_rfc3339(), "2026-06-12T10:30:00-04:00");
    assert_eq!(format_local(&dep), "Fri 12 June 2026, 07:15");
    assert_eq!(format_local(&arr), "Fri 12 June 2026, 10:30");
    // 8h15 in the air: 06:15Z → 14:30Z.
    assert_eq!((arr - dep).num_minutes(), 8 * 60 + 15);
}

#[test]
fn segment_times_across_the_date_line_and_in_winter() {
    let s = segment(
        airport("HNL", "Honolulu", Some("Pacific/Honolulu")),
        airport("SYD", "Sydney", Some("Australia/Sydney")),
        "2026-12-01 13:00",
        "2026-12-02 20:45",
    );
    let (dep, arr) = segment_times(&s);
    assert_eq!(dep.unwrap().to_rfc3339(), "2026-12-01T13:00:00-10:00");
    assert_eq!(arr.unwrap().to_rfc3339(), "2026-12-02T20:45:00+11:00");
    assert_eq!(format_local(&arr.unwrap()), "Wed 2 December 2026, 20:45");
    assert_eq!((arr.unwrap() - dep.unwrap()).num_minutes(), 10 * 60 + 45);
}

#[test]
fn segment_times_without_a_valid_zone_are_none() {
    let s = segment(
        airport("AAA", "Nowhere", None),
        airport("BBB", "Atlantis", Some("Atlantis/Capital")),
        "2026-06-12 07:15",
        "2026-06-12 10:30",
    );
    assert_eq!(segment_times(&s), (None, None));
}

#[test]
fn segment_departure_in_a_dst_gap_resolves_forward() {
    let s = segment(
        airport("JFK", "New York", Some("America/New_York")),
        airport("BOS", "Boston", Some("America/New_York")),
        "2027-03-14 02:30",
        "2027-03-14 04:00",
    );
    let (dep, _) = segment_times(&s);
    assert_eq!(dep.unwrap().to_rfc3339(), "2027-03-14T03:00:00-04:00");
}

#[test]
fn format_local_pads_nothing_but_the_time() {
    let z = zone("Asia/Tokyo");
    let t = z.to_local(local_time_to_utc(date("2027-01-03"), time("09:05"), &z));
    assert_eq!(format_local(&t), "Sun 3 January 2027, 09:05");
}

#[test]
fn sends_further_than_a_journey_can_wait_are_too_far_not_planned() {
    // Check-in in a month, check-out in the year 2200: the thank-you cannot be waited for.
    let booked_at_ms = 1_777_629_600_000; // 2026-05-01
    let plan = booking_email_engine::domain::journey::schedule::within_reach(
        hotel_plan(
            date("2026-06-12"),
            date("2200-01-01"),
            &zone("Europe/Madrid"),
            booked_at_ms,
        ),
        booked_at_ms,
    );
    assert_eq!(
        plan.sends.iter().map(|s| s.kind).collect::<Vec<_>>(),
        [ArrivalGuide, CheckinDay]
    );
    assert_eq!(
        plan.too_far.iter().map(|s| s.kind).collect::<Vec<_>>(),
        [ThankYou]
    );
}

#[test]
fn a_stay_is_over_only_when_check_out_is_before_the_day_the_event_arrived() {
    use booking_email_engine::domain::journey::schedule::stay_is_over;
    let noon_june_15 = 1_781_524_800_000; // 2026-06-15T12:00Z
    assert!(stay_is_over(date("2026-06-14"), noon_june_15));
    assert!(!stay_is_over(date("2026-06-15"), noon_june_15));
    assert!(!stay_is_over(date("2026-06-16"), noon_june_15));
}
