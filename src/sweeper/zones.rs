//! Hotel time repaired: a hotel whose bookings were planned in UTC (its location lookup failed,
//! or there was no API key to ask) is looked up again with back-off
//! (`crate::domain::timezone::lookup_retry_after_ms`: 15 min, doubling, at most a day). Once its
//! zone is known, its bookings' sends still planned move to hotel time
//! (`crate::domain::sweeper::replan`), each recorded on its row (`replanned_from`, `replanned_at_ms`,
//! shown in the booking's timeline) and as one repair per booking; the sweeper then makes them at
//! their new time (`sends.rs`).
//!
//! At most [`HOTELS_PER_TICK`] lookups a tick (each is a subrequest to the supplier).

use super::Tick;
use crate::domain::event::{HotelBooking, HotelLocation};
use crate::domain::journey::schedule::ScheduledKind;
use crate::domain::sweeper::replan::replanned;
use crate::domain::sweeper::RepairKind;
use crate::domain::timezone::{hotel_zone_located, lookup_retry_after_ms, HotelZone, ZoneSource};
use crate::platform::config_or_err;
use crate::store;
use crate::store::hotel_zones::PendingHotel;
use crate::store::schedule::{CachedLocation, Move};
use worker::Result;

/// Most hotels looked up (or re-planned) per tick.
const HOTELS_PER_TICK: u32 = 10;
/// Most bookings of one hotel re-planned per tick (the rest on the next).
const BOOKINGS_PER_HOTEL: u32 = 50;
/// Without an API key nothing can be looked up: a marked hotel is looked at again this much later.
const NO_KEY_RECHECK_MS: i64 = 3_600_000;

pub(super) async fn repair(t: &mut Tick<'_>) -> Result<()> {
    let due = store::hotel_zones::replan_due(&t.db, t.now_ms, HOTELS_PER_TICK).await?;
    if due.is_empty() {
        return Ok(());
    }
    let cfg = config_or_err(t.env)?;
    for hotel in due {
        let location = match &hotel.error {
            None => Some(HotelLocation {
                time_zone: hotel.time_zone.clone(),
                latitude: hotel.latitude,
                longitude: hotel.longitude,
                address: None,
                ..Default::default()
            }),
            Some(_) if cfg.liteapi_api_key.is_empty() => {
                store::hotel_zones::put_off(
                    &t.db,
                    &hotel.hotel_id,
                    t.now_ms + NO_KEY_RECHECK_MS,
                    None,
                )
                .await?;
                None
            }
            Some(_) => look_up(t, &cfg, &hotel).await?,
        };
        let Some(location) = location else {
            continue;
        };
        let (zone, source) = hotel_zone_located(Some(&location));
        store::hotel_zones::record(&t.db, &hotel.hotel_id, &zone, source).await?;
        if source == ZoneSource::Utc {
            // The supplier knows the hotel but gives no usable location: nothing to move to.
            store::hotel_zones::replan_done(&t.db, &hotel.hotel_id).await?;
            continue;
        }
        t.report.zones_found += 1;
        let bookings =
            store::schedule::planned_in_utc_at(&t.db, &hotel.hotel_id, BOOKINGS_PER_HOTEL).await?;
        let all_done = bookings.len() < BOOKINGS_PER_HOTEL as usize;
        for booking in bookings {
            replan_booking(t, &booking, &zone, source).await?;
        }
        if all_done {
            store::hotel_zones::replan_done(&t.db, &hotel.hotel_id).await?;
        }
    }
    Ok(())
}

/// One lookup of a marked hotel: its location on success (cached), `None` after a failure
/// (recorded, the next try put off).
async fn look_up(
    t: &mut Tick<'_>,
    cfg: &crate::config::Config,
    hotel: &PendingHotel,
) -> Result<Option<HotelLocation>> {
    t.report.zone_lookups += 1;
    match crate::suppliers::liteapi::hotel_location(cfg, &hotel.hotel_id).await {
        Ok(l) => {
            let cached = CachedLocation {
                latitude: l.latitude,
                longitude: l.longitude,
                time_zone: l.time_zone.clone(),
                error: None,
                fetched_at_ms: t.now_ms,
                lookup_failures: 0,
                retry_at_ms: None,
            };
            store::schedule::cache_location(&t.db, &hotel.hotel_id, &cached, t.now_ms).await?;
            Ok(Some(l))
        }
        Err(e) => {
            let failures = hotel.lookup_failures.saturating_add(1);
            let retry_at = t.now_ms + lookup_retry_after_ms(failures);
            worker::console_warn!(
                "sweeper: hotel data lookup for {} failed again ({failures} in a row): {e}",
                hotel.hotel_id
            );
            store::hotel_zones::put_off(&t.db, &hotel.hotel_id, retry_at, Some(&e.to_string()))
                .await?;
            Ok(None)
        }
    }
}

/// Moves one booking's sends still planned in UTC to `zone` and records the repair once.
async fn replan_booking(
    t: &mut Tick<'_>,
    booking_id: &str,
    zone: &HotelZone,
    source: ZoneSource,
) -> Result<()> {
    let Some(row) = store::bookings::get(&t.db, booking_id).await? else {
        return Ok(());
    };
    let b: HotelBooking = serde_json::from_str(&row.details_json)?;
    let planned = store::schedule::utc_planned(&t.db, booking_id).await?;
    let pairs: Vec<(&store::schedule::UtcPlanned, Move)> = planned
        .iter()
        .filter_map(|p| {
            let kind = ScheduledKind::parse(&p.kind)?;
            let m = Move {
                kind: &p.kind,
                journey_version: p.journey_version,
                replanned: replanned(kind, b.checkin, b.checkout, zone)?,
            };
            Some((p, m))
        })
        .collect();
    let lines: Vec<String> = pairs
        .iter()
        .map(|(p, m)| {
            format!(
                "{} {} → {}",
                p.kind.replace('_', " "),
                p.local_time.as_deref().unwrap_or("(no time)"),
                m.replanned.local_time.as_deref().unwrap_or("(no time)")
            )
        })
        .collect();
    let moves: Vec<Move> = pairs.into_iter().map(|(_, m)| m).collect();
    let zone_name = zone.to_string();
    let moved =
        store::schedule::replan(&t.db, booking_id, &moves, (&zone_name, source), t.now_ms).await?;
    if moved == 0 {
        return Ok(());
    }
    t.report.sends_replanned += moved;
    let why = format!(
        "the hotel's zone became known ({zone_name}, from its {source}): {}",
        lines.join("; ")
    );
    t.note_repair(RepairKind::ZoneReplanned, booking_id, &why)
        .await
}
