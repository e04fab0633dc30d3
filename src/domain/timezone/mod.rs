//! A hotel's local time zone, and the one rule for turning a local wall-clock time into an instant.
//!
//! # How the zone is chosen ([`hotel_zone`], [`hotel_zone_located`])
//!
//! 1. The supplier's IANA name (`HotelLocation::time_zone`, e.g. `Europe/Madrid`) when it is a
//!    valid name in the bundled tz database ([`crate::domain::timezone::tzdb`]; surrounding whitespace is
//!    ignored, the name is case-sensitive as in the database) → [`HotelZone::Iana`], [`ZoneSource::Iana`].
//!    DST-correct for every date.
//! 2. Else the coordinates, when both latitude and longitude are present, finite and in range
//!    (latitude −90…90, longitude −180…180; `(0, 0)`, the usual "unknown" placeholder, counts as
//!    missing; a single bad or missing value discards the pair):
//!    - [`hotel_zone_located`] looks the point up in the compiled-in zone boundaries
//!      ([`crate::domain::timezone::tz_lookup`]) → [`HotelZone::Iana`], [`ZoneSource::Coordinates`];
//!      DST-correct, right for ~98 % of world cities (both January and July offsets; measured in
//!      `docs/timezone-data.md`); at sea it is the nautical zone (`Etc/GMT+3`).
//!    - should the lookup ever fail, [`hotel_zone_located`] (what the journeys call) falls back
//!      to [`hotel_zone`], which uses a fixed offset of
//!      **longitude / 15 hours, rounded to the nearest 15 minutes** → [`HotelZone::Fixed`],
//!      [`ZoneSource::Longitude`]. Barcelona (2.18° E) is `UTC+00:15`, Honolulu (157.8° W) is
//!      `UTC-10:30`. Such a zone knows nothing of DST or political borders: it can be off by an
//!      hour or more (Madrid's real offset is +01:00/+02:00).
//! 3. Else UTC → [`ZoneSource::Utc`] (also for no location at all).
//!
//! # Why not a crates.io coordinate → zone crate (measured 2026-11-29)
//!
//! Candidates from crates.io were built into a tiny `cdylib` for `wasm32-unknown-unknown`,
//! release, `opt-level = "s"`, LTO, one codegen unit, each next to `chrono-tz` (the tz database
//! this crate used then; [`crate::domain::timezone::tzdb`] has replaced it). Sizes are of the `.wasm` cargo writes, gzip at `-9`:
//!
//! | build                                   | raw wasm     | gzip         | added over baseline      |
//! |-----------------------------------------|--------------|--------------|--------------------------|
//! | empty cdylib (no chrono-tz)             | 1,252 B      | 746 B        |                          |
//! | baseline: chrono + chrono-tz            | 916,412 B    | 129,301 B    |                          |
//! | + `tzf-rs` 2.3.0 (`DefaultFinder`)      | 5,160,913 B  | 2,836,335 B  | +4.24 MB raw, +2.71 MB gz|
//! | + `tzf-rs` 2.3.0 (`EmbeddedFinder`)     | 5,084,215 B  | 2,805,075 B  | +4.17 MB raw, +2.68 MB gz|
//! | + `rtz` 0.10.0 (`tz-ned`, self-contained)| 2,997,819 B | 1,252,365 B  | +2.08 MB raw, +1.12 MB gz|
//!
//! Not buildable or not acceptable at all:
//! - `tz-search` 0.1.1 (a 2015 port of bradfitz/latlong, ~360 KB of tables) does not compile for
//!   wasm32-unknown-unknown (`flate2` 0.2 / `miniz-sys` need libc types), and its data is from 2015.
//! - `spatialtime` 0.3 and `geotz` 0.1 (`geotz-data`) download their data sets in `build.rs`:
//!   network at build time, refused.
//! - `zone-detect` 1.1 needs its 4.8 MB database file at run time (or embedded: +4.8 MB).
//!
//! Every offline candidate adds megabytes, so [`crate::domain::timezone::tz_lookup`] decodes the compact
//! quadtree of npm `@photostructure/tz-lookup` instead (~29 KB gzip of data).
//!
//! # Local time → instant ([`HotelZone::resolve`])
//!
//! - A local time that exists once maps to that instant.
//! - An **ambiguous** local time (the repeated hour when clocks go back) maps to the **earlier**
//!   instant: 01:30 in New York on 2026-11-01 is 01:30 EDT = 05:30Z, not 01:30 EST.
//! - A **nonexistent** local time (skipped when clocks go forward) maps to the **first valid instant
//!   after the gap**, i.e. the moment the clocks jump: 02:30 in Paris on 2027-03-28 is 03:00 CEST
//!   = 01:00Z (not 03:30).
//!
//! May use: `basics`, `event`.

pub mod tz_lookup;
pub mod tzdb;

use crate::domain::event::HotelLocation;
use crate::domain::timezone::tzdb::Tz;
use chrono::{DateTime, FixedOffset, LocalResult, NaiveDateTime, Offset, TimeZone, Utc};
use std::fmt;

/// Where a hotel keeps its clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HotelZone {
    /// An IANA zone from the bundled tz database: DST-correct.
    Iana(Tz),
    /// A fixed offset east of UTC, in minutes (−10:30 is `-630`). No DST. Offsets are clamped to
    /// less than ±24 hours when used.
    Fixed { offset_minutes: i32 },
}

/// How [`hotel_zone`] chose the zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum ZoneSource {
    /// The supplier's IANA name.
    Iana,
    /// The coordinate → zone lookup ([`crate::domain::timezone::tz_lookup`]); only [`hotel_zone_located`]
    /// produces it.
    Coordinates,
    /// The longitude / 15 hours fallback.
    Longitude,
    /// Nothing usable: UTC.
    Utc,
}

crate::domain::basics::stored_names!(ZoneSource);

impl HotelZone {
    /// UTC (a zero fixed offset).
    pub const UTC: HotelZone = HotelZone::Fixed { offset_minutes: 0 };

    /// The zone named `name` in the tz database (trimmed; case-sensitive), if there is one.
    pub fn iana(name: &str) -> Option<HotelZone> {
        parse_iana(name).map(HotelZone::Iana)
    }

    /// The zone whose [`Display`](fmt::Display) form is `name`: `UTC`, `UTC+HH:MM` / `UTC-HH:MM`
    /// (a fixed offset, less than 24 hours) or an IANA name of the tz database. `None` for anything
    /// else. Used to read back a zone stored in D1 (`hotel_locations.zone`).
    pub fn parse(name: &str) -> Option<HotelZone> {
        let name = name.trim();
        if name == "UTC" {
            return Some(HotelZone::UTC);
        }
        if let Some(rest) = name.strip_prefix("UTC") {
            let (sign, hhmm) = match rest.split_at_checked(1)? {
                ("+", hhmm) => (1, hhmm),
                ("-", hhmm) => (-1, hhmm),
                _ => return None,
            };
            let (h, m) = hhmm.split_once(':')?;
            let ok = h.len() == 2 && m.len() == 2;
            let (h, m): (i32, i32) = (h.parse().ok()?, m.parse().ok()?);
            return (ok && h < 24 && m < 60).then_some(HotelZone::Fixed {
                offset_minutes: sign * (h * 60 + m),
            });
        }
        HotelZone::iana(name)
    }

    /// The UTC offset in force at `instant`.
    pub fn offset_at(&self, instant: DateTime<Utc>) -> FixedOffset {
        match self {
            HotelZone::Iana(tz) => tz.offset_from_utc_datetime(&instant.naive_utc()).fix(),
            HotelZone::Fixed { offset_minutes } => fixed_offset(*offset_minutes),
        }
    }

    /// `instant` as a wall-clock time in this zone.
    pub fn to_local(&self, instant: DateTime<Utc>) -> DateTime<FixedOffset> {
        instant.with_timezone(&self.offset_at(instant))
    }

    /// The instant `at_ms` (ms since the epoch, UTC) as this zone's wall-clock time, RFC 3339 with
    /// the offset in force then, whole seconds: `2027-07-15T08:00:00+02:00`. `None` when `at_ms`
    /// is outside chrono's range.
    pub fn local_rfc3339(&self, at_ms: i64) -> Option<String> {
        let instant = DateTime::from_timestamp_millis(at_ms)?;
        Some(
            self.to_local(instant)
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
        )
    }

    /// The instant of the local wall-clock time `local`: ambiguous → the earlier instant;
    /// nonexistent → the first valid instant after the gap (see the module docs).
    pub fn resolve(&self, local: NaiveDateTime) -> DateTime<Utc> {
        match self {
            HotelZone::Iana(tz) => resolve_in(tz, local),
            HotelZone::Fixed { offset_minutes } => {
                resolve_in(&fixed_offset(*offset_minutes), local)
            }
        }
    }
}

impl fmt::Display for HotelZone {
    /// `Europe/Madrid`, `UTC`, `UTC+00:15`, `UTC-10:30`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HotelZone::Iana(tz) => f.write_str(tz.name()),
            HotelZone::Fixed { offset_minutes: 0 } => f.write_str("UTC"),
            HotelZone::Fixed { offset_minutes } => {
                let m = fixed_offset(*offset_minutes).local_minus_utc() / 60;
                let sign = if m < 0 { '-' } else { '+' };
                write!(f, "UTC{sign}{:02}:{:02}", m.abs() / 60, m.abs() % 60)
            }
        }
    }
}

/// The tz-database zone called `name` (trimmed; case-sensitive), if any.
pub fn parse_iana(name: &str) -> Option<Tz> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    name.parse::<Tz>().ok()
}

/// The longitude fallback: `longitude / 15` hours rounded to the nearest 15 minutes, in minutes
/// east of UTC; `None` for a longitude that is not finite or outside −180…180.
pub fn longitude_offset_minutes(longitude: f64) -> Option<i32> {
    if !longitude.is_finite() || !(-180.0..=180.0).contains(&longitude) {
        return None;
    }
    // 1° of longitude = 4 minutes of time; quarter hours of time = 3.75° steps.
    let quarters = (longitude * 4.0 / 15.0).round() as i32;
    Some(quarters * 15)
}

/// The hotel's zone and how it was chosen; see the module docs for the order.
pub fn hotel_zone(location: Option<&HotelLocation>) -> (HotelZone, ZoneSource) {
    let Some(location) = location else {
        return (HotelZone::UTC, ZoneSource::Utc);
    };
    if let Some(tz) = location.time_zone.as_deref().and_then(parse_iana) {
        return (HotelZone::Iana(tz), ZoneSource::Iana);
    }
    if let Some((_, longitude)) = valid_coordinates(location) {
        if let Some(offset_minutes) = longitude_offset_minutes(longitude) {
            return (HotelZone::Fixed { offset_minutes }, ZoneSource::Longitude);
        }
    }
    (HotelZone::UTC, ZoneSource::Utc)
}

/// The hotel's zone and how it was chosen, with the coordinate lookup: supplier IANA name →
/// [`crate::domain::timezone::tz_lookup::zone_at`] of the coordinates → longitude / 15 h → UTC (see the
/// module docs). The coordinate rule is the same as [`hotel_zone`]'s: `(0, 0)` or a missing, bad
/// or out-of-range value means no coordinates.
pub fn hotel_zone_located(location: Option<&HotelLocation>) -> (HotelZone, ZoneSource) {
    let Some(location) = location else {
        return (HotelZone::UTC, ZoneSource::Utc);
    };
    if location.time_zone.as_deref().and_then(parse_iana).is_none() {
        if let Some((latitude, longitude)) = valid_coordinates(location) {
            if let Some(tz) = tz_lookup::zone_at(latitude, longitude) {
                return (HotelZone::Iana(tz), ZoneSource::Coordinates);
            }
        }
    }
    hotel_zone(Some(location))
}

/// `(latitude, longitude)` when both are present, finite, in range and not the `(0, 0)`
/// placeholder.
fn valid_coordinates(location: &HotelLocation) -> Option<(f64, f64)> {
    let (lat, lon) = (location.latitude?, location.longitude?);
    let ok = lat.is_finite()
        && lon.is_finite()
        && (-90.0..=90.0).contains(&lat)
        && (-180.0..=180.0).contains(&lon)
        && !(lat == 0.0 && lon == 0.0);
    ok.then_some((lat, lon))
}

/// A chrono offset of `minutes` east, clamped to less than ±24 hours.
fn fixed_offset(minutes: i32) -> FixedOffset {
    let seconds = minutes.clamp(-(24 * 60 - 1), 24 * 60 - 1) * 60;
    FixedOffset::east_opt(seconds).unwrap_or(FixedOffset::east_opt(0).expect("zero offset"))
}

fn resolve_in<Z: TimeZone>(zone: &Z, local: NaiveDateTime) -> DateTime<Utc> {
    match zone.from_local_datetime(&local) {
        LocalResult::Single(t) => t.with_timezone(&Utc),
        LocalResult::Ambiguous(a, b) => a.with_timezone(&Utc).min(b.with_timezone(&Utc)),
        LocalResult::None => first_instant_after_gap(zone, local),
    }
}

/// The first instant whose local time is later than `local`, which lies in a gap: that is the
/// instant the clocks jump. Found by bisection (whole seconds: tz data has second resolution)
/// over ±2 days around `local` read as UTC, where every real offset (< ±1 day) keeps the local
/// time below `local` at the start and above it at the end. At most ~18 iterations.
fn first_instant_after_gap<Z: TimeZone>(zone: &Z, local: NaiveDateTime) -> DateTime<Utc> {
    let as_utc = local.and_utc();
    let local_of = |secs: i64| {
        DateTime::from_timestamp(secs, 0)
            .map(|t| zone.from_utc_datetime(&t.naive_utc()).naive_local())
    };
    const TWO_DAYS: i64 = 2 * 86_400;
    let (mut lo, mut hi) = (as_utc.timestamp() - TWO_DAYS, as_utc.timestamp() + TWO_DAYS);
    // Invariant: local_of(lo) < local < local_of(hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match local_of(mid) {
            Some(l) if l > local => hi = mid,
            Some(_) => lo = mid,
            None => return as_utc,
        }
    }
    DateTime::from_timestamp(hi, 0).unwrap_or(as_utc)
}

/// The longest a failed hotel data lookup waits before it is tried again, ms (1 day).
pub const LOOKUP_RETRY_AFTER_MS: i64 = 86_400_000;

/// The first retry of a failed hotel data lookup comes this long after the failure, ms (15 min).
pub const LOOKUP_FIRST_RETRY_MS: i64 = 15 * 60_000;

/// How long after its `failures`-th failure in a row a hotel data lookup is tried again, ms:
/// 15 minutes, doubling with each failure, at most [`LOOKUP_RETRY_AFTER_MS`] (15 min, 30 min,
/// 1 h, … 16 h, then a day). The sweeper retries on this schedule; a plan made in between uses
/// UTC and is re-planned once the zone is known.
pub fn lookup_retry_after_ms(failures: u32) -> i64 {
    let doublings = failures.saturating_sub(1).min(16);
    LOOKUP_FIRST_RETRY_MS
        .saturating_mul(1i64 << doublings)
        .min(LOOKUP_RETRY_AFTER_MS)
}

/// What to do about a hotel's location, given its cached row (if any) and `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocationLookup {
    /// The cache holds a good location: use it.
    UseCached,
    /// The last lookup failed and its retry time has not come: no location, no lookup.
    BackOff,
    /// Nothing cached, or a failure whose retry time has come: ask the supplier.
    Fetch,
}

/// Decide a location lookup. `cached` is `(failed, retry_at_ms)` of the cached row: `failed` when
/// it records an error; `retry_at_ms` when a failed lookup may be tried again (ms since the Unix
/// epoch, UTC; [`lookup_retry_after_ms`] after the failure); `now_ms` on the same clock.
pub fn location_lookup(cached: Option<(bool, i64)>, now_ms: i64) -> LocationLookup {
    match cached {
        Some((false, _)) => LocationLookup::UseCached,
        Some((true, retry_at)) if now_ms < retry_at => LocationLookup::BackOff,
        _ => LocationLookup::Fetch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    /// `y-m-d h:min:00`, the local or UTC time a test reads from (shared with `tzdb`'s tests).
    pub(super) fn at(y: i32, m: u32, d: u32, h: u32, min: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(h, min, 0)
            .unwrap()
    }

    #[test]
    fn a_failed_lookup_is_retried_at_its_retry_time_with_back_off() {
        let failed_at = 1_780_000_000_000;
        let retry_at = failed_at + lookup_retry_after_ms(1);
        assert_eq!(location_lookup(None, failed_at), LocationLookup::Fetch);
        assert_eq!(
            location_lookup(Some((true, retry_at)), retry_at - 1),
            LocationLookup::BackOff
        );
        assert_eq!(
            location_lookup(Some((true, retry_at)), retry_at),
            LocationLookup::Fetch
        );
        assert_eq!(
            location_lookup(Some((false, 0)), failed_at),
            LocationLookup::UseCached
        );
        let minutes: Vec<i64> = (0..=10)
            .map(|n| lookup_retry_after_ms(n) / 60_000)
            .collect();
        assert_eq!(
            minutes,
            [15, 15, 30, 60, 120, 240, 480, 960, 1440, 1440, 1440]
        );
        assert_eq!(lookup_retry_after_ms(u32::MAX), LOOKUP_RETRY_AFTER_MS);
    }

    #[test]
    fn display_names() {
        assert_eq!(HotelZone::UTC.to_string(), "UTC");
        assert_eq!(
            HotelZone::Fixed { offset_minutes: 15 }.to_string(),
            "UTC+00:15"
        );
        assert_eq!(
            HotelZone::Fixed {
                offset_minutes: -630
            }
            .to_string(),
            "UTC-10:30"
        );
        assert_eq!(
            HotelZone::iana("Europe/Madrid").unwrap().to_string(),
            "Europe/Madrid"
        );
    }

    #[test]
    fn stored_names_parse_back() {
        for z in [
            HotelZone::UTC,
            HotelZone::Fixed { offset_minutes: 15 },
            HotelZone::Fixed {
                offset_minutes: -630,
            },
            HotelZone::Fixed {
                offset_minutes: 765,
            },
            HotelZone::iana("Europe/Madrid").unwrap(),
            HotelZone::iana("Etc/GMT+3").unwrap(),
        ] {
            assert_eq!(HotelZone::parse(&z.to_string()), Some(z), "{z}");
        }
        for bad in [
            "",
            "UTC+",
            "UTC+1:00",
            "UTC+24:00",
            "UTC+01:60",
            "UTC*01:00",
            "UTC+ab:cd",
            "Mars/Base",
            "europe/madrid",
        ] {
            assert_eq!(HotelZone::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn local_rfc3339_shows_the_offset_in_force() {
        let madrid = HotelZone::iana("Europe/Madrid").unwrap();
        let summer = madrid.resolve(at(2027, 7, 15, 8, 0)).timestamp_millis();
        assert_eq!(
            madrid.local_rfc3339(summer).as_deref(),
            Some("2027-07-15T08:00:00+02:00")
        );
        let winter = madrid.resolve(at(2027, 1, 15, 8, 0)).timestamp_millis();
        assert_eq!(
            madrid.local_rfc3339(winter).as_deref(),
            Some("2027-01-15T08:00:00+01:00")
        );
        assert_eq!(
            HotelZone::UTC.local_rfc3339(summer).as_deref(),
            Some("2027-07-15T06:00:00+00:00")
        );
        assert_eq!(HotelZone::UTC.local_rfc3339(i64::MAX), None);
    }

    #[test]
    fn longitude_rounding() {
        assert_eq!(longitude_offset_minutes(0.0), Some(0));
        assert_eq!(longitude_offset_minutes(2.18), Some(15));
        assert_eq!(longitude_offset_minutes(-157.8), Some(-630));
        assert_eq!(longitude_offset_minutes(180.0), Some(720));
        assert_eq!(longitude_offset_minutes(-180.0), Some(-720));
        assert_eq!(longitude_offset_minutes(1.8), Some(0)); // 7.2 min → 0
        assert_eq!(longitude_offset_minutes(180.5), None);
        assert_eq!(longitude_offset_minutes(f64::NAN), None);
    }

    #[test]
    fn gap_resolves_to_the_jump_in_fixed_and_iana() {
        let paris = HotelZone::iana("Europe/Paris").unwrap();
        assert_eq!(
            paris.resolve(at(2027, 3, 28, 2, 0)).to_rfc3339(),
            "2027-03-28T01:00:00+00:00"
        );
        assert_eq!(
            paris.resolve(at(2027, 3, 28, 2, 59)).to_rfc3339(),
            "2027-03-28T01:00:00+00:00"
        );
        // Fixed offsets have no gaps.
        let fixed = HotelZone::Fixed { offset_minutes: 60 };
        assert_eq!(
            fixed.resolve(at(2027, 3, 28, 2, 30)).to_rfc3339(),
            "2027-03-28T01:30:00+00:00"
        );
    }

    #[test]
    fn absurd_fixed_offsets_are_clamped_not_panicking() {
        let z = HotelZone::Fixed {
            offset_minutes: i32::MAX,
        };
        assert_eq!(
            z.offset_at(at(2026, 1, 1, 0, 0).and_utc())
                .local_minus_utc(),
            (24 * 60 - 1) * 60
        );
        let _ = z.resolve(at(2026, 1, 1, 8, 0));
    }
}
