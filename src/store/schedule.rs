//! `scheduled_sends` and `hotel_locations`: the plan of each journey version, and the cache of
//! hotel coordinates used for local time.

use super::{n, opt, s};
use crate::domain::schedule::ScheduledKind;
use crate::domain::stored_names;
use serde::{Deserialize, Serialize};
use worker::{D1Database, Result};

/// Where a scheduled send stands (D1 `scheduled_sends.status`; stored names are the variants in
/// `snake_case`): planned, then sent or skipped; or never planned (merged, late).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum SendStatus {
    /// Waiting for its time.
    Planned,
    /// Past at booking time; its facts went out in the confirmation (arrival guide).
    Merged,
    /// Past at booking time; dropped.
    Late,
    /// Handed to the outbox at its time.
    Sent,
    /// Not sent at its time (booking cancelled, replaced, or a newer journey version).
    Skipped,
}

stored_names!(SendStatus);

/// One row of a journey version's plan.
pub struct PlannedRow<'a> {
    pub kind: ScheduledKind,
    /// When it is due, ms since the epoch (UTC); `None` for merged / late rows.
    pub due_at_ms: Option<i64>,
    /// `Planned`, `Merged` or `Late`.
    pub status: SendStatus,
    pub reason: Option<&'a str>,
}

/// Records the plan of one journey version in one batch. Idempotent: a replayed step writes
/// nothing new.
pub async fn plan(
    db: &D1Database,
    booking_id: &str,
    version: i64,
    rows: &[PlannedRow<'_>],
    zone: &str,
    now_ms: i64,
) -> Result<()> {
    let mut statements = Vec::with_capacity(rows.len());
    for r in rows {
        statements.push(
            db.prepare(
                "INSERT INTO scheduled_sends (booking_id, kind, journey_version, due_at_ms, status, reason, zone, planned_at_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING",
            )
            .bind(&[
                s(booking_id),
                s(r.kind.as_str()),
                n(version),
                r.due_at_ms.map(n).unwrap_or(wasm_bindgen::JsValue::NULL),
                s(r.status.as_str()),
                opt(r.reason),
                s(zone),
                n(now_ms),
            ])?,
        );
    }
    if !statements.is_empty() {
        db.batch(statements).await?;
    }
    Ok(())
}

/// Records what became of a planned send (`Sent` / `Skipped`, with the reason).
pub async fn decide(
    db: &D1Database,
    booking_id: &str,
    kind: ScheduledKind,
    version: i64,
    status: SendStatus,
    reason: Option<&str>,
    now_ms: i64,
) -> Result<()> {
    db.prepare(
        "UPDATE scheduled_sends SET status = ?4, reason = ?5, decided_at_ms = ?6 \
         WHERE booking_id = ?1 AND kind = ?2 AND journey_version = ?3 AND status = ?7",
    )
    .bind(&[
        s(booking_id),
        s(kind.as_str()),
        n(version),
        s(status.as_str()),
        opt(reason),
        n(now_ms),
        s(SendStatus::Planned.as_str()),
    ])?
    .run()
    .await?;
    Ok(())
}

/// A cached hotel location.
#[derive(Debug, Clone, Deserialize)]
pub struct CachedLocation {
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub time_zone: Option<String>,
    pub error: Option<String>,
    /// When it was fetched (or failed), ms since the epoch; 0 for a value not read from D1.
    #[serde(default)]
    pub fetched_at_ms: i64,
}

pub async fn cached_location(db: &D1Database, hotel_id: &str) -> Result<Option<CachedLocation>> {
    db.prepare(
        "SELECT latitude, longitude, time_zone, error, fetched_at_ms FROM hotel_locations WHERE hotel_id = ?1",
    )
    .bind(&[s(hotel_id)])?
    .first::<CachedLocation>(None)
    .await
}

pub async fn cache_location(
    db: &D1Database,
    hotel_id: &str,
    location: &CachedLocation,
    now_ms: i64,
) -> Result<()> {
    let f = |v: Option<f64>| {
        v.map(wasm_bindgen::JsValue::from_f64)
            .unwrap_or(wasm_bindgen::JsValue::NULL)
    };
    db.prepare(
        "INSERT INTO hotel_locations (hotel_id, latitude, longitude, time_zone, fetched_at_ms, error) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(hotel_id) DO UPDATE SET latitude = excluded.latitude, \
         longitude = excluded.longitude, time_zone = excluded.time_zone, fetched_at_ms = excluded.fetched_at_ms, \
         error = excluded.error",
    )
    .bind(&[
        s(hotel_id),
        f(location.latitude),
        f(location.longitude),
        opt(location.time_zone.as_deref()),
        n(now_ms),
        opt(location.error.as_deref()),
    ])?
    .run()
    .await?;
    Ok(())
}
