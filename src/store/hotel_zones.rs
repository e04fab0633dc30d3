//! `hotel_locations.zone` / `zone_source` (migration 0009): a hotel's time zone, resolved once from
//! its cached location and re-used by every plan. Kept apart from the location cache itself
//! (`schedule::cached_location` / `cache_location`) so the zone never changes how that cache is
//! fetched or retried: a zone is written only onto a row whose location lookup succeeded.

use super::s;
use crate::domain::timezone::{HotelZone, ZoneSource};
use serde::Deserialize;
use worker::{D1Database, Result};

#[derive(Deserialize)]
struct Row {
    zone: Option<String>,
    zone_source: Option<String>,
}

/// The stored zone of `hotel_id` and how it was chosen; `None` when the hotel has no row, its
/// lookup failed (`error` set), or its zone was never resolved (rows cached before migration 0009)
/// or no longer parses (a name dropped from the tz database): the caller then resolves it again.
pub async fn stored(db: &D1Database, hotel_id: &str) -> Result<Option<(HotelZone, ZoneSource)>> {
    let row = stored_statement(db, hotel_id)?.first::<Row>(None).await?;
    Ok(zone_of(row))
}

/// The statement of [`stored`], for a caller's own batch (read its result with [`stored_of`]).
pub fn stored_statement(db: &D1Database, hotel_id: &str) -> Result<worker::D1PreparedStatement> {
    db.prepare(
        "SELECT zone, zone_source FROM hotel_locations \
         WHERE hotel_id = ?1 AND error IS NULL AND zone IS NOT NULL",
    )
    .bind(&[s(hotel_id)])
}

/// The zone a [`stored_statement`] found in a batch.
pub fn stored_of(r: &worker::D1Result) -> Result<Option<(HotelZone, ZoneSource)>> {
    Ok(zone_of(r.results::<Row>()?.into_iter().next()))
}

fn zone_of(row: Option<Row>) -> Option<(HotelZone, ZoneSource)> {
    row.and_then(|r| {
        let zone = HotelZone::parse(r.zone.as_deref()?)?;
        let source = ZoneSource::parse(r.zone_source.as_deref()?)?;
        Some((zone, source))
    })
}

/// Writes the zone resolved from `hotel_id`'s cached location (display name, e.g. `Europe/Madrid`,
/// `UTC+00:15`, and its [`ZoneSource`] stored name). Only a row whose lookup succeeded is changed;
/// no row, no write.
pub async fn record(
    db: &D1Database,
    hotel_id: &str,
    zone: &HotelZone,
    source: ZoneSource,
) -> Result<()> {
    db.prepare(
        "UPDATE hotel_locations SET zone = ?2, zone_source = ?3 WHERE hotel_id = ?1 AND error IS NULL",
    )
    .bind(&[s(hotel_id), s(&zone.to_string()), s(source.as_str())])?
    .run()
    .await?;
    Ok(())
}

/// Marks `hotel_id` for the sweeper's hotel-time repair: a booking of it was planned in UTC. A
/// hotel never looked up gets a row (its lookup due at `now_ms`); a failed lookup keeps its
/// back-off.
pub async fn mark_replan(db: &D1Database, hotel_id: &str, now_ms: i64) -> Result<()> {
    db.prepare(
        "INSERT INTO hotel_locations (hotel_id, fetched_at_ms, error, retry_at_ms, replan_pending) \
         VALUES (?1, ?2, 'no zone known yet', ?2, 1) \
         ON CONFLICT(hotel_id) DO UPDATE SET replan_pending = 1",
    )
    .bind(&[s(hotel_id), super::n(now_ms)])?
    .run()
    .await?;
    Ok(())
}

/// A hotel waiting for its time repair, as the sweeper reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct PendingHotel {
    pub hotel_id: String,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub time_zone: Option<String>,
    /// The last lookup's error; `None` when the location is known.
    pub error: Option<String>,
    pub lookup_failures: u32,
}

/// Hotels marked for the repair whose next try is due at `now_ms` (ms UTC), at most `limit`,
/// through `hotel_locations_replan`.
pub async fn replan_due(db: &D1Database, now_ms: i64, limit: u32) -> Result<Vec<PendingHotel>> {
    db.prepare(
        "SELECT hotel_id, latitude, longitude, time_zone, error, lookup_failures FROM hotel_locations \
         WHERE replan_pending = 1 AND COALESCE(retry_at_ms, 0) <= ?1 ORDER BY retry_at_ms LIMIT ?2",
    )
    .bind(&[super::n(now_ms), super::n(i64::from(limit))])?
    .all()
    .await?
    .results()
}

/// Puts off the next try of a marked hotel to `retry_at_ms` (ms UTC), counting a failure when
/// `failed` (with its error).
pub async fn put_off(
    db: &D1Database,
    hotel_id: &str,
    retry_at_ms: i64,
    failure: Option<&str>,
) -> Result<()> {
    let statement = match failure {
        Some(e) => db
            .prepare(
                "UPDATE hotel_locations SET retry_at_ms = ?2, error = ?3, \
                 lookup_failures = lookup_failures + 1 WHERE hotel_id = ?1",
            )
            .bind(&[s(hotel_id), super::n(retry_at_ms), s(e)])?,
        None => db
            .prepare("UPDATE hotel_locations SET retry_at_ms = ?2 WHERE hotel_id = ?1")
            .bind(&[s(hotel_id), super::n(retry_at_ms)])?,
    };
    statement.run().await?;
    Ok(())
}

/// Clears the repair mark of `hotel_id` (its bookings are re-planned, or nothing can be).
pub async fn replan_done(db: &D1Database, hotel_id: &str) -> Result<()> {
    db.prepare("UPDATE hotel_locations SET replan_pending = 0 WHERE hotel_id = ?1")
        .bind(&[s(hotel_id)])?
        .run()
        .await?;
    Ok(())
}
