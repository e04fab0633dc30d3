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
    let row = db
        .prepare(
            "SELECT zone, zone_source FROM hotel_locations \
             WHERE hotel_id = ?1 AND error IS NULL AND zone IS NOT NULL",
        )
        .bind(&[s(hotel_id)])?
        .first::<Row>(None)
        .await?;
    Ok(row.and_then(|r| {
        let zone = HotelZone::parse(r.zone.as_deref()?)?;
        let source = ZoneSource::parse(r.zone_source.as_deref()?)?;
        Some((zone, source))
    }))
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
