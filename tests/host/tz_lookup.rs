//! Hotels located only by coordinates: the coordinate → IANA zone lookup, and 08:00 at the hotel
//! on DST change days, across the date line, in half- and quarter-hour zones and at sea.
//! Every expected zone and instant is written by hand (from the tz database's rules), never
//! computed by the code under test.
//!
//! The `#[ignore]`d test at the end prints lookup time and accuracy figures for `bench/tz.mjs`;
//! it is a measurement, not a check (`npm run bench`, never `cargo test`).

use booking_email_engine::domain::event::HotelLocation;
use booking_email_engine::domain::timezone::tz_lookup::{zone_at, zone_name_at};
use booking_email_engine::domain::timezone::{hotel_zone_located, HotelZone, ZoneSource};
use chrono::{DateTime, NaiveDate, Utc};

fn located(latitude: f64, longitude: f64) -> HotelLocation {
    HotelLocation {
        address: None,
        time_zone: None,
        latitude: Some(latitude),
        longitude: Some(longitude),
        ..Default::default()
    }
}

/// The UTC instant of 08:00 local time on `date` at a hotel known only by its coordinates,
/// with the zone it was resolved in.
fn local_0800_utc(latitude: f64, longitude: f64, date: &str) -> (String, String) {
    let (zone, source) = hotel_zone_located(Some(&located(latitude, longitude)));
    assert_eq!(source, ZoneSource::Coordinates, "{latitude},{longitude}");
    let local = date
        .parse::<NaiveDate>()
        .unwrap()
        .and_hms_opt(8, 0, 0)
        .unwrap();
    let instant: DateTime<Utc> = zone.resolve(local);
    (
        zone.to_string(),
        instant.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    )
}

/// (hotel, latitude, longitude, local date, zone, UTC instant of 08:00 local)
#[rustfmt::skip]
const HOTELS: &[(&str, f64, f64, &str, &str, &str)] = &[
    // Europe, clocks forward on 2027-03-28 at 01:00Z: 08:00 that day is already summer time.
    ("Barcelona, day before spring", 41.3851, 2.1734, "2027-03-27", "Europe/Madrid", "2027-03-27T07:00:00Z"),
    ("Barcelona, spring forward", 41.3851, 2.1734, "2027-03-28", "Europe/Madrid", "2027-03-28T06:00:00Z"),
    ("Barcelona, summer", 41.3851, 2.1734, "2027-07-15", "Europe/Madrid", "2027-07-15T06:00:00Z"),
    ("Barcelona, fall back", 41.3851, 2.1734, "2027-10-31", "Europe/Madrid", "2027-10-31T07:00:00Z"),
    ("London, spring forward", 51.5074, -0.1278, "2027-03-28", "Europe/London", "2027-03-28T07:00:00Z"),
    ("London, fall back", 51.5074, -0.1278, "2027-10-31", "Europe/London", "2027-10-31T08:00:00Z"),
    ("Lisbon, spring forward", 38.7223, -9.1393, "2027-03-28", "Europe/Lisbon", "2027-03-28T07:00:00Z"),
    ("Paris, fall back", 48.8566, 2.3522, "2027-10-31", "Europe/Paris", "2027-10-31T07:00:00Z"),
    ("Reykjavik, no DST", 64.1466, -21.9426, "2027-07-15", "Atlantic/Reykjavik", "2027-07-15T08:00:00Z"),
    ("Cape Town, winter south", -33.9249, 18.4241, "2027-07-15", "Africa/Johannesburg", "2027-07-15T06:00:00Z"),
    // United States, clocks forward on 2027-03-14, back on 2027-11-07.
    ("New York, day before", 40.7128, -74.0060, "2027-03-13", "America/New_York", "2027-03-13T13:00:00Z"),
    ("New York, spring forward", 40.7128, -74.0060, "2027-03-14", "America/New_York", "2027-03-14T12:00:00Z"),
    ("New York, fall back", 40.7128, -74.0060, "2027-11-07", "America/New_York", "2027-11-07T13:00:00Z"),
    ("Chicago, spring forward", 41.8781, -87.6298, "2027-03-14", "America/Chicago", "2027-03-14T13:00:00Z"),
    ("Los Angeles, spring forward", 34.0522, -118.2437, "2027-03-14", "America/Los_Angeles", "2027-03-14T15:00:00Z"),
    ("Phoenix, no DST", 33.4484, -112.0740, "2027-03-14", "America/Phoenix", "2027-03-14T15:00:00Z"),
    ("Honolulu", 21.3069, -157.8583, "2027-03-14", "Pacific/Honolulu", "2027-03-14T18:00:00Z"),
    ("São Paulo", -23.5505, -46.6333, "2027-03-14", "America/Sao_Paulo", "2027-03-14T11:00:00Z"),
    // Southern hemisphere: Sydney clocks back on 2027-04-04, forward on 2027-10-03.
    ("Sydney, day before fall back", -33.8688, 151.2093, "2027-04-03", "Australia/Sydney", "2027-04-02T21:00:00Z"),
    ("Sydney, fall back", -33.8688, 151.2093, "2027-04-04", "Australia/Sydney", "2027-04-03T22:00:00Z"),
    ("Sydney, spring forward", -33.8688, 151.2093, "2027-10-03", "Australia/Sydney", "2027-10-02T21:00:00Z"),
    ("Brisbane, no DST", -27.4698, 153.0251, "2027-04-04", "Australia/Brisbane", "2027-04-03T22:00:00Z"),
    ("Adelaide, half hour, fall back", -34.9285, 138.6007, "2027-04-04", "Australia/Adelaide", "2027-04-03T22:30:00Z"),
    ("Auckland, fall back", -36.8485, 174.7633, "2027-04-04", "Pacific/Auckland", "2027-04-03T20:00:00Z"),
    ("Tokyo", 35.6762, 139.6503, "2027-07-15", "Asia/Tokyo", "2027-07-14T23:00:00Z"),
    // The date line: same local date, a day apart in UTC.
    ("Suva, Fiji", -18.1416, 178.4419, "2027-07-15", "Pacific/Fiji", "2027-07-14T20:00:00Z"),
    ("Taveuni, Fiji, east of 180", -16.8, -179.97, "2027-07-15", "Pacific/Fiji", "2027-07-14T20:00:00Z"),
    ("Apia, Samoa", -13.8333, -171.7667, "2027-07-15", "Pacific/Apia", "2027-07-14T19:00:00Z"),
    ("Tarawa, Kiribati", 1.4518, 172.9717, "2027-07-15", "Pacific/Tarawa", "2027-07-14T20:00:00Z"),
    ("Kiritimati, Kiribati (UTC+14)", 1.8721, -157.4278, "2027-07-15", "Pacific/Kiritimati", "2027-07-14T18:00:00Z"),
    // Islands where the quadtree alone is a day off (corrected in tz_lookup::DAY_OFF_ISLANDS).
    ("Pago Pago, American Samoa", -14.2766, -170.7066, "2027-07-15", "Pacific/Pago_Pago", "2027-07-15T19:00:00Z"),
    ("Fakaofo, Tokelau", -9.38, -171.22, "2027-07-15", "Pacific/Fakaofo", "2027-07-14T19:00:00Z"),
    ("Gambell, St Lawrence Island", 63.78, -171.73, "2027-07-15", "America/Nome", "2027-07-15T16:00:00Z"),
    ("Little Diomede", 65.76, -168.95, "2027-07-15", "America/Nome", "2027-07-15T16:00:00Z"),
    ("Ta'u, American Samoa (tree right)", -14.23, -169.5, "2027-07-15", "Pacific/Pago_Pago", "2027-07-15T19:00:00Z"),
    // Half- and quarter-hour zones.
    ("Kolkata", 22.5726, 88.3639, "2027-03-28", "Asia/Kolkata", "2027-03-28T02:30:00Z"),
    ("Kathmandu", 27.7172, 85.3240, "2027-03-28", "Asia/Kathmandu", "2027-03-28T02:15:00Z"),
    ("Tehran", 35.6892, 51.3890, "2027-07-15", "Asia/Tehran", "2027-07-15T04:30:00Z"),
    ("Chatham Islands, winter", -43.9535, -176.5597, "2027-07-15", "Pacific/Chatham", "2027-07-14T19:15:00Z"),
    ("Chatham Islands, summer", -43.9535, -176.5597, "2027-01-15", "Pacific/Chatham", "2027-01-14T18:15:00Z"),
    // At sea: the nautical zones (Etc/GMT+3 is UTC−3, POSIX sign).
    ("mid-Atlantic", 30.0, -40.0, "2027-07-15", "Etc/GMT+3", "2027-07-15T11:00:00Z"),
    ("mid-Pacific", 0.5, -140.0, "2027-07-15", "Etc/GMT+9", "2027-07-15T17:00:00Z"),
    ("Indian Ocean", -30.0, 80.0, "2027-07-15", "Etc/GMT-5", "2027-07-15T03:00:00Z"),
];

#[test]
fn eight_in_the_morning_at_the_hotel_is_the_right_utc_instant() {
    let mut wrong = Vec::new();
    for &(hotel, lat, lon, date, zone, instant) in HOTELS {
        let got = local_0800_utc(lat, lon, date);
        if got != (zone.to_string(), instant.to_string()) {
            wrong.push(format!(
                "{hotel}: expected {zone} {instant}, got {} {}",
                got.0, got.1
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn barcelona_is_no_longer_utc_plus_a_quarter_hour() {
    let (zone, source) = hotel_zone_located(Some(&located(41.3851, 2.1734)));
    assert_eq!(zone, HotelZone::iana("Europe/Madrid").unwrap());
    assert_eq!(source, ZoneSource::Coordinates);
    assert_eq!(source.as_str(), "coordinates");
}

#[test]
fn the_suppliers_iana_name_wins_over_the_coordinates() {
    let location = HotelLocation {
        time_zone: Some("Atlantic/Canary".into()),
        ..located(41.3851, 2.1734)
    };
    assert_eq!(
        hotel_zone_located(Some(&location)),
        (
            HotelZone::iana("Atlantic/Canary").unwrap(),
            ZoneSource::Iana
        )
    );
    // An unknown supplier name falls through to the lookup.
    let location = HotelLocation {
        time_zone: Some("Mars/Olympus_Mons".into()),
        ..located(41.3851, 2.1734)
    };
    assert_eq!(
        hotel_zone_located(Some(&location)).1,
        ZoneSource::Coordinates
    );
}

#[test]
fn missing_or_unusable_coordinates_fall_back_to_utc() {
    assert_eq!(hotel_zone_located(None), (HotelZone::UTC, ZoneSource::Utc));
    for (lat, lon) in [
        (Some(0.0), Some(0.0)), // the "unknown" placeholder
        (Some(41.3851), None),
        (None, Some(2.1734)),
        (Some(f64::NAN), Some(2.1734)),
        (Some(91.0), Some(2.1734)),
        (Some(41.3851), Some(180.5)),
    ] {
        let location = HotelLocation {
            latitude: lat,
            longitude: lon,
            ..Default::default()
        };
        assert_eq!(
            hotel_zone_located(Some(&location)),
            (HotelZone::UTC, ZoneSource::Utc),
            "{lat:?},{lon:?}"
        );
    }
}

#[test]
fn lookup_answers_for_every_valid_point_and_none_outside() {
    for (lat, lon) in [
        (90.0, 0.0),
        (-90.0, 0.0),
        (0.5, 180.0),
        (0.5, -180.0),
        (-89.9, 179.99),
    ] {
        assert!(zone_at(lat, lon).is_some(), "{lat},{lon}");
        assert!(zone_name_at(lat, lon).is_some(), "{lat},{lon}");
    }
    assert_eq!(zone_name_at(90.0, 10.0), Some("Etc/GMT"));
    for (lat, lon) in [
        (90.01, 0.0),
        (-90.01, 0.0),
        (0.0, 180.01),
        (0.0, -180.01),
        (f64::NAN, 0.0),
        (0.0, f64::INFINITY),
    ] {
        assert_eq!(zone_at(lat, lon), None, "{lat},{lon}");
        assert_eq!(zone_name_at(lat, lon), None, "{lat},{lon}");
    }
}

#[test]
fn a_coarse_world_grid_always_finds_a_zone_in_the_tz_database() {
    let mut lat = -89.5;
    while lat < 90.0 {
        let mut lon = -179.5;
        while lon < 180.0 {
            let name = zone_name_at(lat, lon).expect("a zone");
            let tz = zone_at(lat, lon).expect("in chrono-tz");
            assert_eq!(tz.name(), name, "{lat},{lon}");
            lon += 1.0;
        }
        lat += 1.0;
    }
}

#[test]
fn the_rust_decoder_gives_the_npm_packages_answers() {
    // Written by scripts/gen-tz-data.mjs from @photostructure/tz-lookup's own function.
    let golden = include_str!("../fixtures/tz_lookup_golden.csv");
    let mut checked = 0;
    for line in golden.lines().filter(|l| !l.starts_with('#')) {
        let mut fields = line.split(',');
        let lat: f64 = fields.next().unwrap().parse().unwrap();
        let lon: f64 = fields.next().unwrap().parse().unwrap();
        let want = fields.next().unwrap();
        assert_eq!(zone_name_at(lat, lon), Some(want), "{lat},{lon}");
        checked += 1;
    }
    assert_eq!(checked, 2000);
}

/// Figures for `bench/tz.mjs` (run with `--release -- --ignored --nocapture`): ns per lookup on
/// the host, and — when `TZ_BENCH_CITIES` names a CSV of `latitude,longitude,zone,name` rows from
/// a source other than the lookup's data — how often the lookup's zone has the reference zone's
/// UTC offsets on 2027-01-15 and 2027-07-15 12:00Z, how often its exact name, and the worst misses.
/// Output lines start with `TZBENCH ` followed by JSON.
#[test]
#[ignore = "measurement for bench/tz.mjs, not a check"]
fn bench_lookup_time_and_accuracy() {
    use chrono::{Offset, TimeZone};
    use std::hint::black_box;
    use std::time::Instant;

    // A fixed pseudo-random set of land and sea points (xorshift; no dependency).
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let points: Vec<(f64, f64)> = (0..100_000)
        .map(|_| (next() * 180.0 - 90.0, next() * 360.0 - 180.0))
        .collect();

    let first = Instant::now();
    black_box(zone_at(41.3851, 2.1734));
    let first_ns = first.elapsed().as_nanos();

    let rounds = 5;
    let started = Instant::now();
    for _ in 0..rounds {
        for &(lat, lon) in &points {
            black_box(zone_at(black_box(lat), black_box(lon)));
        }
    }
    let ns = started.elapsed().as_nanos() as f64 / (rounds * points.len()) as f64;
    println!(
        "TZBENCH {{\"kind\":\"time\",\"first_call_ns\":{first_ns},\"ns_per_lookup\":{ns:.1},\"lookups\":{}}}",
        rounds * points.len()
    );

    let Ok(path) = std::env::var("TZ_BENCH_CITIES") else {
        return;
    };
    let text = std::fs::read_to_string(&path).expect("TZ_BENCH_CITIES readable");
    let january = Utc.with_ymd_and_hms(2027, 1, 15, 12, 0, 0).unwrap();
    let july = Utc.with_ymd_and_hms(2027, 7, 15, 12, 0, 0).unwrap();
    let offsets = |tz: booking_email_engine::domain::timezone::tzdb::Tz| {
        [january, july].map(|t| {
            tz.offset_from_utc_datetime(&t.naive_utc())
                .fix()
                .local_minus_utc()
                / 60
        })
    };
    let (mut total, mut same_offsets, mut exact, mut unknown_reference) = (0, 0, 0, 0);
    let mut misses: Vec<(i32, String)> = Vec::new();
    for line in text.lines() {
        let mut fields = line.splitn(4, ',');
        let (Some(lat), Some(lon), Some(want), Some(name)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (Ok(lat), Ok(lon)) = (lat.parse::<f64>(), lon.parse::<f64>()) else {
            continue;
        };
        let Ok(want_tz) = want.parse::<booking_email_engine::domain::timezone::tzdb::Tz>() else {
            unknown_reference += 1;
            continue;
        };
        total += 1;
        let got = zone_at(lat, lon).expect("valid coordinates");
        if got.name() == want {
            exact += 1;
        }
        let (a, b) = (offsets(got), offsets(want_tz));
        if a == b {
            same_offsets += 1;
        } else {
            let worst = (a[0] - b[0]).abs().max((a[1] - b[1]).abs());
            misses.push((
                worst,
                format!(
                    "{name} ({lat:.3},{lon:.3}): {} instead of {want}, off by {worst} min",
                    got.name()
                ),
            ));
        }
    }
    misses.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    let worst: Vec<String> = misses
        .iter()
        .take(15)
        .map(|(_, m)| format!("{m:?}"))
        .collect();
    println!(
        "TZBENCH {{\"kind\":\"accuracy\",\"cities\":{total},\"unknown_reference_zone\":{unknown_reference},\"same_offsets\":{same_offsets},\"exact_name\":{exact},\"misses_over_1h\":{},\"worst\":[{}]}}",
        misses.iter().filter(|(w, _)| *w > 60).count(),
        worst.join(",")
    );
}
