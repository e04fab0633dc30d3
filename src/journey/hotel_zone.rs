//! Where a hotel is and what time it keeps there: the booking's own location, else the supplier's
//! hotel data API (cached in D1; a failed lookup is retried with back-off, by the sweeper too),
//! resolved once per hotel into an IANA zone with its source (`timezone::hotel_zone_located`) and
//! stored. A plan made in UTC for want of a location marks the hotel for the sweeper's repair.

use crate::config::{Config, DB_BINDING};
use crate::domain::event::{HotelBooking, HotelLocation};
use crate::domain::timezone::{
    hotel_zone_located, location_lookup, lookup_retry_after_ms, HotelZone, LocationLookup,
    ZoneSource,
};
use crate::store;
use crate::store::schedule::CachedLocation;
use worker::Env;

/// The hotel's zone and how it was chosen (`timezone::hotel_zone_located`: supplier IANA name →
/// coordinates lookup → longitude / 15 h → UTC).
/// - A booking that carries its own location (Duffel Stays coordinates, a generic `time_zone`) is
///   resolved from it, a pure lookup with no D1 call.
/// - Otherwise the hotel's zone is resolved once from its location in the supplier's hotel data
///   API and stored with its source in `hotel_locations` (migration 0009); every later plan for the
///   hotel reads it back (one D1 read, the one the location cache read cost before). A failed
///   lookup stores no zone: the plan uses UTC until the location cache retries it.
///
/// `stored`: the hotel's stored zone when the caller read it already (no read here then).
pub(super) async fn plan_zone(
    env: &Env,
    cfg: &Config,
    b: &HotelBooking,
    stored: Option<(HotelZone, ZoneSource)>,
) -> (HotelZone, ZoneSource) {
    let hotel_id = b.hotel_id.as_deref().filter(|_| own_location(b).is_none());
    if let (Some(_), Some(stored)) = (hotel_id, stored) {
        return stored;
    }
    let db = env.d1(DB_BINDING).ok();
    if let (Some(id), Some(db)) = (hotel_id, &db) {
        match store::hotel_zones::stored(db, id).await {
            Ok(Some(stored)) => return stored,
            Ok(None) => {}
            Err(e) => worker::console_warn!("reading the stored zone of hotel {id} failed: {e}"),
        }
    }
    let location = hotel_location(env, cfg, b).await;
    let (zone, source) = hotel_zone_located(location.as_ref());
    if let (Some(id), Some(db), Some(_)) = (hotel_id, &db, &location) {
        if let Err(e) = store::hotel_zones::record(db, id, &zone, source).await {
            worker::console_warn!("storing the zone of hotel {id} failed: {e}");
        }
    }
    // Planned in UTC for want of a location: the sweeper looks the hotel up again with back-off
    // and moves this plan to hotel time once the zone is known.
    if let (Some(id), Some(db), ZoneSource::Utc) = (hotel_id, &db, source) {
        if let Err(e) = store::hotel_zones::mark_replan(db, id, crate::platform::now_ms()).await {
            worker::console_warn!("marking hotel {id} for its time repair failed: {e}");
        }
    }
    (zone, source)
}

/// The booking's own location when it says where the hotel is (a zone name or both coordinates).
fn own_location(b: &HotelBooking) -> Option<&HotelLocation> {
    b.location
        .as_ref()
        .filter(|l| l.time_zone.is_some() || (l.latitude.is_some() && l.longitude.is_some()))
}

/// The hotel's location: from the booking when it has one; else from the supplier's hotel data
/// API (liteAPI `GET /data/hotel?hotelId=…` → `data.location{latitude,longitude}`), cached in D1.
/// Any failure falls back to `None` (the schedule then uses UTC) and is cached with its error so a
/// broken lookup is not retried on every plan.
pub(super) async fn hotel_location(
    env: &Env,
    cfg: &Config,
    b: &HotelBooking,
) -> Option<HotelLocation> {
    if let Some(l) = own_location(b) {
        return Some(l.clone());
    }
    let hotel_id = b.hotel_id.as_deref()?;
    let db = env.d1(DB_BINDING).ok()?;
    let now = crate::platform::now_ms();
    let cached = store::schedule::cached_location(&db, hotel_id)
        .await
        .ok()
        .flatten();
    let seen = cached.as_ref().map(|c| (c.error.is_some(), c.retry_at()));
    let failures = cached.as_ref().map_or(0, |c| c.lookup_failures);
    match (location_lookup(seen, now), cached) {
        (LocationLookup::UseCached, Some(c)) => {
            return Some(HotelLocation {
                address: None,
                time_zone: c.time_zone,
                latitude: c.latitude,
                longitude: c.longitude,
                ..Default::default()
            })
        }
        // A failed lookup is retried at its back-off time (by the sweeper or a later plan), not
        // on every plan in between.
        (LocationLookup::BackOff, _) => return None,
        _ => {}
    }
    if cfg.liteapi_api_key.is_empty() {
        return None;
    }
    let fetched = crate::suppliers::liteapi::hotel_location(cfg, hotel_id).await;
    let cached = match &fetched {
        Ok(l) => CachedLocation {
            latitude: l.latitude,
            longitude: l.longitude,
            time_zone: l.time_zone.clone(),
            error: None,
            fetched_at_ms: now,
            lookup_failures: 0,
            retry_at_ms: None,
        },
        Err(e) => {
            worker::console_warn!("hotel data lookup for {hotel_id} failed: {e}");
            CachedLocation {
                latitude: None,
                longitude: None,
                time_zone: None,
                error: Some(e.to_string()),
                fetched_at_ms: now,
                lookup_failures: failures + 1,
                retry_at_ms: Some(now + lookup_retry_after_ms(failures + 1)),
            }
        }
    };
    if let Err(e) = store::schedule::cache_location(&db, hotel_id, &cached, now).await {
        worker::console_warn!("caching the location of hotel {hotel_id} failed: {e}");
    }
    fetched.ok()
}
