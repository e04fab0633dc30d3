//! `scheduled_sends` and `hotel_locations`: the plan of each journey version, and the cache of
//! hotel coordinates used for local time.

use super::{n, opt, s};
use crate::domain::basics::stored_names;
use crate::domain::journey::schedule::{HotelPlan, ScheduledKind};
use crate::domain::timezone::ZoneSource;
use serde::{Deserialize, Serialize};
use worker::{D1Database, Result};

/// Where a scheduled send stands (D1 `scheduled_sends.status`; stored names are the variants in
/// `snake_case`): planned, then sent, skipped or failed; or never planned (merged, late).
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
    /// Not sent at its time (booking cancelled, replaced, a newer journey version, or stale).
    Skipped,
    /// Its send step failed past every retry: the error is the reason; the journey went on.
    Failed,
}

stored_names!(SendStatus);

/// One row of a journey version's plan.
pub struct PlannedRow<'a> {
    pub kind: ScheduledKind,
    /// When it is due, ms since the epoch (UTC); `None` for merged / late rows.
    pub due_at_ms: Option<i64>,
    /// `Planned`, `Merged`, `Late` or (too far ahead, stay already over) `Skipped`.
    pub status: SendStatus,
    pub reason: Option<&'a str>,
    /// When it becomes pointless, ms UTC (`crate::domain::outbox::intent::expires_at_ms`); `None` for
    /// merged / late rows.
    pub expires_at_ms: Option<i64>,
    /// `due_at_ms` as a wall-clock time in the hotel's zone, RFC 3339 with its offset
    /// (`2027-07-15T08:00:00+02:00`); `None` for merged / late rows.
    pub local_time: Option<String>,
}

impl<'a> PlannedRow<'a> {
    /// The rows recording `plan`: every send `planned`; sends too far ahead `skipped` with the
    /// reason; the arrival guide past at booking time `merged` into the confirmation, or `skipped`
    /// with `stay_over_reason` when the stay was already over (`stay_over`: no confirmation went
    /// out); other past sends `late`. Their `expires_at_ms` and `local_time` are left `None` for
    /// the caller, which knows the hotel's zone.
    pub fn of_plan(plan: &HotelPlan, stay_over: bool, stay_over_reason: &'a str) -> Vec<Self> {
        let row = |kind, due_at_ms, status, reason| PlannedRow {
            kind,
            due_at_ms,
            status,
            reason,
            expires_at_ms: None,
            local_time: None,
        };
        let too_far = "too far ahead: beyond the longest wait a journey makes (about 7.9 years)";
        let (merged_status, merged) = if stay_over {
            (SendStatus::Skipped, stay_over_reason)
        } else {
            (
                SendStatus::Merged,
                "past at booking time: its facts are in the confirmation",
            )
        };
        let late = "past at booking time";
        let planned = plan
            .sends
            .iter()
            .map(|s| row(s.kind, Some(s.at_ms), SendStatus::Planned, None));
        let far = plan
            .too_far
            .iter()
            .map(|s| row(s.kind, Some(s.at_ms), SendStatus::Skipped, Some(too_far)));
        let merged = plan
            .merged_into_confirmation
            .iter()
            .map(|&k| row(k, None, merged_status, Some(merged)));
        let past = plan
            .skipped
            .iter()
            .map(|&k| row(k, None, SendStatus::Late, Some(late)));
        planned.chain(far).chain(merged).chain(past).collect()
    }
}

/// Records the plan of one journey version in one batch, each row with the hotel's zone (display
/// name, e.g. `Europe/Madrid`), how it was chosen and its local time. Idempotent: a replayed step
/// writes nothing new.
pub async fn plan(
    db: &D1Database,
    booking_id: &str,
    version: i64,
    rows: &[PlannedRow<'_>],
    (zone, zone_source): (&str, ZoneSource),
    instance_id: &str,
    now_ms: i64,
) -> Result<()> {
    let mut statements = Vec::with_capacity(rows.len());
    for r in rows {
        statements.push(
            db.prepare(
                "INSERT INTO scheduled_sends (booking_id, kind, journey_version, due_at_ms, status, reason, zone, planned_at_ms, expires_at_ms, zone_source, local_time, instance_id) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT DO NOTHING",
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
                r.expires_at_ms.map(n).unwrap_or(wasm_bindgen::JsValue::NULL),
                s(zone_source.as_str()),
                opt(r.local_time.as_deref()),
                s(instance_id),
            ])?,
        );
    }
    if !statements.is_empty() {
        db.batch(statements).await?;
    }
    Ok(())
}

/// A planned send past its due time (D1 `scheduled_sends`), as the sweeper reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct DueSend {
    pub booking_id: String,
    /// Stored name of a [`ScheduledKind`].
    pub kind: String,
    pub journey_version: i64,
    /// ms since the epoch, UTC.
    pub due_at_ms: i64,
    /// ms since the epoch, UTC; `None` = never stale.
    pub expires_at_ms: Option<i64>,
    /// The Workflow instance that planned it; `None` for rows planned before migration 0011.
    pub instance_id: Option<String>,
}

/// Planned sends the sweeper should look at, at most `limit`, through the partial index
/// `scheduled_sends_sweep`: first (at most half the batch) the ones it left before
/// `checked_before_ms` (ms UTC), least recently checked first, then the ones it never looked at
/// that were due before `before_ms` (ms UTC), oldest first. A send it must keep leaving (a paused
/// instance, a send that keeps failing) therefore never hides a newer orphan. The status literal
/// repeats the index's own `WHERE`. Returns `(rows, D1 rows read)`.
pub async fn past_due(
    db: &D1Database,
    before_ms: i64,
    checked_before_ms: i64,
    limit: u32,
) -> Result<(Vec<DueSend>, u64)> {
    const COLUMNS: &str =
        "booking_id, kind, journey_version, due_at_ms, expires_at_ms, instance_id";
    super::swept_then_new(
        db,
        &format!(
            "SELECT {COLUMNS} FROM scheduled_sends INDEXED BY scheduled_sends_sweep \
             WHERE status = 'planned'"
        ),
        "due_at_ms",
        before_ms,
        checked_before_ms,
        limit,
    )
    .await
}

/// Notes that the sweeper looked at these planned sends at `now_ms` (ms UTC) and left them: one
/// batch. A row decided meanwhile (no longer `planned`) is not touched.
pub async fn mark_swept(db: &D1Database, sends: &[&DueSend], now_ms: i64) -> Result<()> {
    super::run_each(
        db,
        "UPDATE scheduled_sends SET swept_at_ms = ?4 \
         WHERE booking_id = ?1 AND kind = ?2 AND journey_version = ?3 AND status = 'planned'",
        sends.iter().map(|d| {
            vec![
                s(&d.booking_id),
                s(&d.kind),
                n(d.journey_version),
                n(now_ms),
            ]
        }),
    )
    .await
}

/// The statement that records what became of a planned send (`Sent` / `Skipped` / `Failed`,
/// with the reason), to run alone or in a caller's own batch. It changes only a row still
/// planned, so it may run again.
pub fn decide(
    db: &D1Database,
    booking_id: &str,
    kind: ScheduledKind,
    version: i64,
    status: SendStatus,
    reason: Option<&str>,
    now_ms: i64,
) -> Result<worker::D1PreparedStatement> {
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
    ])
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
    /// Failed lookups in a row (0 after a success).
    #[serde(default)]
    pub lookup_failures: u32,
    /// When a failed lookup may run again, ms UTC (`crate::domain::timezone::lookup_retry_after_ms`
    /// after the failure); `None` after a success, or on rows stored before retries existed.
    #[serde(default)]
    pub retry_at_ms: Option<i64>,
}

impl CachedLocation {
    /// When a failed lookup may run again: its retry time, else (rows from before retries) a day
    /// after it failed.
    pub fn retry_at(&self) -> i64 {
        self.retry_at_ms.unwrap_or(
            self.fetched_at_ms
                .saturating_add(crate::domain::timezone::LOOKUP_RETRY_AFTER_MS),
        )
    }
}

pub async fn cached_location(db: &D1Database, hotel_id: &str) -> Result<Option<CachedLocation>> {
    super::row_by::<CachedLocation>(
        db,
        "SELECT latitude, longitude, time_zone, error, fetched_at_ms, lookup_failures, retry_at_ms \
         FROM hotel_locations WHERE hotel_id = ?1",
        hotel_id,
    )
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
        "INSERT INTO hotel_locations (hotel_id, latitude, longitude, time_zone, fetched_at_ms, error, \
         lookup_failures, retry_at_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(hotel_id) DO UPDATE SET latitude = excluded.latitude, \
         longitude = excluded.longitude, time_zone = excluded.time_zone, fetched_at_ms = excluded.fetched_at_ms, \
         error = excluded.error, lookup_failures = excluded.lookup_failures, retry_at_ms = excluded.retry_at_ms",
    )
    .bind(&[
        s(hotel_id),
        f(location.latitude),
        f(location.longitude),
        opt(location.time_zone.as_deref()),
        n(now_ms),
        opt(location.error.as_deref()),
        n(i64::from(location.lookup_failures)),
        location.retry_at_ms.map(n).unwrap_or(wasm_bindgen::JsValue::NULL),
    ])?
    .run()
    .await?;
    Ok(())
}

/// The bookings with sends still planned in UTC at hotel `hotel_id` (their hotel's zone was
/// unknown when they were planned), at most `limit`, through `scheduled_sends_zone_unknown`.
pub async fn planned_in_utc_at(db: &D1Database, hotel_id: &str, limit: u32) -> Result<Vec<String>> {
    #[derive(Deserialize)]
    struct Row {
        booking_id: String,
    }
    let rows: Vec<Row> = db
        .prepare(
            "SELECT DISTINCT s.booking_id FROM scheduled_sends s JOIN bookings b ON b.booking_id = s.booking_id \
             WHERE s.status = 'planned' AND s.zone_source = 'utc' \
             AND json_extract(b.details_json, '$.hotel_id') = ?1 LIMIT ?2",
        )
        .bind(&[s(hotel_id), n(i64::from(limit))])?
        .all()
        .await?
        .results()?;
    Ok(rows.into_iter().map(|r| r.booking_id).collect())
}

/// A send of one booking still planned in UTC.
#[derive(Debug, Clone, Deserialize)]
pub struct UtcPlanned {
    /// Stored name of a [`ScheduledKind`].
    pub kind: String,
    pub journey_version: i64,
    pub local_time: Option<String>,
}

/// The sends of `booking_id` still planned in UTC.
pub async fn utc_planned(db: &D1Database, booking_id: &str) -> Result<Vec<UtcPlanned>> {
    db.prepare(
        "SELECT kind, journey_version, local_time FROM scheduled_sends \
         WHERE booking_id = ?1 AND status = 'planned' AND zone_source = 'utc'",
    )
    .bind(&[s(booking_id)])?
    .all()
    .await?
    .results()
}

/// One send moved to hotel time.
pub struct Move<'a> {
    pub kind: &'a str,
    pub journey_version: i64,
    pub replanned: crate::domain::sweeper::replan::Replanned,
}

/// Moves `booking_id`'s sends still planned in UTC to hotel time (`zone`, chosen by `source`),
/// in one batch: each gets its new due and stale instants and local time, keeps its old local
/// time in `replanned_from`, and is handed to the sweeper (`instance_id = 'sweeper'`), which
/// sends it at its new time; the journey that planned it leaves it alone when it wakes. A send
/// decided meanwhile is not touched. Returns how many moved.
pub async fn replan(
    db: &D1Database,
    booking_id: &str,
    moves: &[Move<'_>],
    (zone, source): (&str, ZoneSource),
    now_ms: i64,
) -> Result<u32> {
    let statements = moves
        .iter()
        .map(|m| {
            db.prepare(
                "UPDATE scheduled_sends SET due_at_ms = ?4, expires_at_ms = ?5, local_time = ?6, \
                 replanned_from = COALESCE(local_time, zone), replanned_at_ms = ?7, zone = ?8, \
                 zone_source = ?9, instance_id = 'sweeper', swept_at_ms = 0 \
                 WHERE booking_id = ?1 AND kind = ?2 AND journey_version = ?3 \
                 AND status = 'planned' AND zone_source = 'utc'",
            )
            .bind(&[
                s(booking_id),
                s(m.kind),
                n(m.journey_version),
                n(m.replanned.due_at_ms),
                n(m.replanned.expires_at_ms),
                opt(m.replanned.local_time.as_deref()),
                n(now_ms),
                s(zone),
                s(source.as_str()),
            ])
        })
        .collect::<Result<Vec<_>>>()?;
    if statements.is_empty() {
        return Ok(0);
    }
    let results = db.batch(statements).await?;
    Ok(results
        .iter()
        .map(super::changes)
        .sum::<usize>()
        .try_into()
        .unwrap_or(u32::MAX))
}

/// Planned sends the sweeper owns (moved to hotel time) that are due at `now_ms` (ms UTC), at
/// most `limit`, oldest first, through `scheduled_sends_by_sweeper`. Returns the rows and the
/// D1 rows read.
pub async fn sweeper_due(db: &D1Database, now_ms: i64, limit: u32) -> Result<(Vec<DueSend>, u64)> {
    let r = db
        .prepare(
            "SELECT booking_id, kind, journey_version, due_at_ms, expires_at_ms, instance_id \
             FROM scheduled_sends WHERE status = 'planned' AND instance_id = 'sweeper' \
             AND due_at_ms <= ?1 ORDER BY due_at_ms LIMIT ?2",
        )
        .bind(&[n(now_ms), n(i64::from(limit))])?
        .all()
        .await?;
    Ok((r.results()?, super::rows_read(&r)))
}

/// The statement asking who makes a planned send now, for a caller's own batch (read its result
/// with [`planned_by_of`]).
pub fn planned_by_statement(
    db: &D1Database,
    booking_id: &str,
    kind: ScheduledKind,
    version: i64,
) -> Result<worker::D1PreparedStatement> {
    db.prepare(
        "SELECT instance_id FROM scheduled_sends WHERE booking_id = ?1 AND kind = ?2 \
         AND journey_version = ?3 AND status = 'planned'",
    )
    .bind(&[s(booking_id), s(kind.as_str()), n(version)])
}

/// Who makes a planned send now, from a [`planned_by_statement`]: `Some(Some("sweeper"))` once it
/// was moved to hotel time, else the instance that planned it; `None` when the row is no longer
/// planned (decided already).
pub fn planned_by_of(r: &worker::D1Result) -> Result<Option<Option<String>>> {
    #[derive(Deserialize)]
    struct Row {
        instance_id: Option<String>,
    }
    Ok(r.results::<Row>()?
        .into_iter()
        .next()
        .map(|r| r.instance_id))
}
