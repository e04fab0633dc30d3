//! `raw_events`: every delivery a supplier made, stored before anything else happens, including
//! the ones we rejected (`status = 'rejected'`, `event_id` NULL so a later valid delivery of the
//! same id is still processed).
//!
//! Status ([`RawEventStatus`]): `received` (stored, journey not yet started) → `started` |
//! `ignored`; or `rejected`; a started journey that ended in a fatal error → `errored`.

use super::{changes, n, opt, rows_read, s};
use crate::domain::basics::stored_names;
use crate::domain::event::Source;
use serde::{Deserialize, Serialize};
use worker::{D1Database, Result};

/// Where a stored delivery stands (D1 `raw_events.status`; stored names are the variants in
/// `snake_case`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum RawEventStatus {
    /// Stored; its journey is not started yet (a redelivery starts it).
    Received,
    /// Its journey was started (the row holds the instance id).
    Started,
    /// Well-formed, but this engine does not act on it.
    Ignored,
    /// Malformed: stored with `event_id` NULL and the error.
    Rejected,
    /// Its journey ended in a fatal error (the error is stored and the owner alerted).
    Errored,
}

stored_names!(RawEventStatus);

/// What was already stored for a `(source, event_id)`.
#[derive(Debug, Clone, Deserialize)]
pub struct Stored {
    pub status: RawEventStatus,
    pub received_at_ms: i64,
    pub instance_id: Option<String>,
}

/// A delivery to store.
pub struct NewRawEvent<'a> {
    pub source: Source,
    pub event_id: Option<&'a str>,
    pub event_name: Option<&'a str>,
    pub status: RawEventStatus,
    /// Why it was rejected; stored cut at [`NOTE_MAX_BYTES`].
    pub error: Option<&'a str>,
    pub headers_json: &'a str,
    pub body: &'a str,
    pub received_at_ms: i64,
    /// What normalising the delivery's text changed (JSON array of `domain::basics::text::Cut`), if any.
    pub normalised: Option<&'a str>,
    /// The booking the delivery is about (for the admin's timeline), when it names one.
    pub booking_id: Option<&'a str>,
    /// The generic source's partner that signed it (`None` for other sources).
    pub partner: Option<&'a str>,
}

/// Inserts a delivery. Returns `true` when it was new, `false` when `(source, event_id)` already
/// existed (a duplicate delivery; nothing was written).
pub async fn insert(db: &D1Database, e: &NewRawEvent<'_>) -> Result<bool> {
    let r = insert_statement(db, e)?.run().await?;
    Ok(changes(&r) == 1)
}

const INSERT_SQL: &str = "INSERT INTO raw_events (source, event_id, event_name, status, error, headers_json, body, received_at_ms, normalised, booking_id, partner, start_lease_until_ms) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, CASE WHEN ?4 = 'received' THEN ?8 + ?12 END) \
     ON CONFLICT(source, event_id) DO NOTHING";

/// How long the delivery that stored an event holds the start of its journey, ms (10 s): it
/// creates the Workflow instance within milliseconds, or lets go at once when that fails; a
/// redelivery meanwhile answers `duplicate`, one after it may start the journey
/// ([`claim_start`]).
pub const START_LEASE_MS: i64 = 10_000;
const FIND_SQL: &str =
    "SELECT status, received_at_ms, instance_id FROM raw_events WHERE source = ?1 AND event_id = ?2";

/// Longest error or refusal reason stored on a raw event, in bytes (cut on a character boundary):
/// whatever a message quotes, the column stays bounded.
pub const NOTE_MAX_BYTES: usize = 1000;

fn insert_statement(db: &D1Database, e: &NewRawEvent<'_>) -> Result<worker::D1PreparedStatement> {
    db.prepare(INSERT_SQL).bind(&[
        s(e.source.as_str()),
        opt(e.event_id),
        opt(e.event_name),
        s(e.status.as_str()),
        opt(e
            .error
            .map(|m| crate::domain::basics::text::cut_bytes(m, NOTE_MAX_BYTES))),
        s(e.headers_json),
        s(e.body),
        n(e.received_at_ms),
        opt(e.normalised),
        opt(e.booking_id),
        opt(e.partner),
        n(START_LEASE_MS),
    ])
}

/// A redelivery claims the start of a stored event's journey: `true` when the event is still
/// `received` and nobody holds the start (its lease ran out, or the delivery that stored it let
/// go after a failed start), and this call now holds it for [`START_LEASE_MS`] from `now_ms`.
/// One conditional UPDATE, so of concurrent redeliveries exactly one gets it.
pub async fn claim_start(
    db: &D1Database,
    source: Source,
    event_id: &str,
    now_ms: i64,
) -> Result<bool> {
    super::changed_one(
        db,
        "UPDATE raw_events SET start_lease_until_ms = ?3 + ?4 \
         WHERE source = ?1 AND event_id = ?2 AND status = 'received' \
           AND (start_lease_until_ms IS NULL OR start_lease_until_ms <= ?3)",
        &[
            s(source.as_str()),
            s(event_id),
            n(now_ms),
            n(START_LEASE_MS),
        ],
    )
    .await
}

/// Lets go of the start of a stored event's journey after it failed (the supplier is answered
/// 503 and retries): its redelivery may start it at once.
pub async fn release_start(db: &D1Database, source: Source, event_id: &str) -> Result<()> {
    db.prepare(
        "UPDATE raw_events SET start_lease_until_ms = NULL \
         WHERE source = ?1 AND event_id = ?2 AND status = 'received'",
    )
    .bind(&[s(source.as_str()), s(event_id)])?
    .run()
    .await?;
    Ok(())
}

/// Stores a delivery that has an event id, or finds the one stored before, in one D1 round trip
/// (a batch: the insert, then the row as it now stands). Returns `(true, row)` when this call
/// inserted it, `(false, row)` for a delivery stored before (a redelivery): the insert's own
/// `meta.changes` says which, so two deliveries in the same millisecond are never confused.
pub async fn insert_or_find(
    db: &D1Database,
    e: &NewRawEvent<'_>,
    event_id: &str,
) -> Result<(bool, Option<Stored>)> {
    let find = db
        .prepare(FIND_SQL)
        .bind(&[s(e.source.as_str()), s(event_id)])?;
    let results = db.batch(vec![insert_statement(db, e)?, find]).await?;
    let inserted = results.first().is_some_and(|r| changes(r) == 1);
    let stored = match results.get(1) {
        Some(r) => r.results::<Stored>()?.into_iter().next(),
        None => None,
    };
    Ok((inserted, stored))
}

/// The stored row for `(source, event_id)`.
pub async fn find(db: &D1Database, source: Source, event_id: &str) -> Result<Option<Stored>> {
    db.prepare(FIND_SQL)
        .bind(&[s(source.as_str()), s(event_id)])?
        .first::<Stored>(None)
        .await
}

/// `true` when the stored delivery `(source, event_id)` has exactly `body` (a true redelivery),
/// `false` when it differs or is not stored.
pub async fn same_body(
    db: &D1Database,
    source: Source,
    event_id: &str,
    body: &str,
) -> Result<bool> {
    let row = db
        .prepare("SELECT body = ?3 AS same FROM raw_events WHERE source = ?1 AND event_id = ?2")
        .bind(&[s(source.as_str()), s(event_id), s(body)])?
        .first::<i64>(Some("same"))
        .await?;
    Ok(row == Some(1))
}

/// Moves a `received` row to `status` (`started` / `ignored`), recording the instance id.
pub async fn mark(
    db: &D1Database,
    source: Source,
    event_id: &str,
    status: RawEventStatus,
    instance_id: Option<&str>,
) -> Result<()> {
    db.prepare(
        "UPDATE raw_events SET status = ?3, instance_id = COALESCE(?4, instance_id) \
         WHERE source = ?1 AND event_id = ?2",
    )
    .bind(&[
        s(source.as_str()),
        s(event_id),
        s(status.as_str()),
        opt(instance_id),
    ])?
    .run()
    .await?;
    Ok(())
}

/// Marks the delivery whose journey ended in a fatal error: `status = 'errored'` and the error
/// (cut at [`NOTE_MAX_BYTES`]).
pub async fn mark_errored(
    db: &D1Database,
    source: Source,
    event_id: &str,
    error: &str,
) -> Result<()> {
    note_statement(
        db,
        "UPDATE raw_events SET status = 'errored', error = ?3 WHERE source = ?1 AND event_id = ?2",
        source,
        event_id,
        error,
    )?
    .run()
    .await?;
    Ok(())
}

/// Records why the event `(source, event_id)` was refused (it named a booking of another source
/// or partner; nothing changed). The status stays as it is (`started`): the journey ran and did
/// nothing. Shown in the booking's admin timeline.
pub async fn mark_refused(
    db: &D1Database,
    source: Source,
    event_id: &str,
    reason: &str,
) -> Result<()> {
    note_statement(
        db,
        "UPDATE raw_events SET refused_reason = ?3 WHERE source = ?1 AND event_id = ?2",
        source,
        event_id,
        reason,
    )?
    .run()
    .await?;
    Ok(())
}

/// `sql`, an update of the delivery `(source, event_id)` (`?1`, `?2`) that stores `note` as `?3`,
/// cut at [`NOTE_MAX_BYTES`].
fn note_statement(
    db: &D1Database,
    sql: &str,
    source: Source,
    event_id: &str,
    note: &str,
) -> Result<worker::D1PreparedStatement> {
    let note = crate::domain::basics::text::cut_bytes(note, NOTE_MAX_BYTES);
    db.prepare(sql)
        .bind(&[s(source.as_str()), s(event_id), s(note)])
}

/// The body as stored: UTF-8 text as is; anything else base64 with a `base64:` prefix, so no byte a
/// supplier sent is lost. Inverse: [`body_bytes`].
pub fn stored_body(body: &[u8]) -> String {
    use base64::Engine;
    match std::str::from_utf8(body) {
        Ok(text) => text.to_string(),
        Err(_) => format!(
            "base64:{}",
            base64::engine::general_purpose::STANDARD.encode(body)
        ),
    }
}

/// The bytes of a stored body ([`stored_body`]); `None` for a `base64:` value that does not decode.
pub fn body_bytes(stored: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    match stored.strip_prefix("base64:") {
        Some(b64) => base64::engine::general_purpose::STANDARD.decode(b64).ok(),
        None => Some(stored.as_bytes().to_vec()),
    }
}

/// A raw event whose journey never started, as the sweeper re-reads it.
#[derive(Debug, Deserialize)]
pub struct StuckEvent {
    pub source: String,
    pub event_id: String,
    pub headers_json: String,
    /// As stored ([`stored_body`]).
    pub body: String,
    /// ms since the Unix epoch, UTC.
    pub received_at_ms: i64,
    /// The generic partner that signed it, as stored (`None` for other sources, and for generic
    /// events stored before partners existed: the default partner's).
    #[serde(default)]
    pub partner: Option<String>,
}

/// Raw events still `received` the sweeper should look at, at most `limit`, through the partial
/// index `raw_events_stuck`: first (at most half the batch) the ones it could not start before
/// `checked_before_ms` (ms UTC), least recently tried first, then the ones it never tried that
/// arrived before `before_ms` (ms UTC), oldest first. An event it keeps failing to start never
/// hides a newer one. The status literal repeats the index's own `WHERE`. Returns the rows with
/// the D1 rows read.
pub async fn stuck_received(
    db: &D1Database,
    before_ms: i64,
    checked_before_ms: i64,
    limit: u32,
) -> Result<(Vec<StuckEvent>, u64)> {
    const COLUMNS: &str = "source, event_id, headers_json, body, received_at_ms, partner";
    super::swept_then_new(
        db,
        &format!(
            "SELECT {COLUMNS} FROM raw_events INDEXED BY raw_events_stuck \
             WHERE status = 'received' AND event_id IS NOT NULL"
        ),
        "received_at_ms",
        before_ms,
        checked_before_ms,
        limit,
    )
    .await
}

/// Notes that the sweeper tried these stuck events at `now_ms` (ms UTC) and could not start
/// them: one batch. A row that moved on meanwhile is not touched.
pub async fn mark_swept(db: &D1Database, events: &[&StuckEvent], now_ms: i64) -> Result<()> {
    super::run_each(
        db,
        "UPDATE raw_events SET swept_at_ms = ?3 \
         WHERE source = ?1 AND event_id = ?2 AND status = 'received'",
        events
            .iter()
            .map(|e| vec![s(&e.source), s(&e.event_id), n(now_ms)]),
    )
    .await
}

/// Retention: blanks the bodies of finished raw events received before `before_ms` (ms UTC), at
/// most `limit` rows; the rows stay. Returns `(bodies pruned, D1 rows read)`. The status literal
/// repeats the partial index's own `WHERE` (SQLite uses a partial index only then).
pub async fn prune_bodies(db: &D1Database, before_ms: i64, limit: u32) -> Result<(u32, u64)> {
    let r = db
        .prepare(
            "UPDATE raw_events SET body = '' WHERE id IN (SELECT id FROM raw_events \
             INDEXED BY raw_events_body_kept WHERE body <> '' AND status <> 'received' \
             AND received_at_ms < ?1 ORDER BY received_at_ms LIMIT ?2)",
        )
        .bind(&[n(before_ms), n(i64::from(limit))])?
        .run()
        .await?;
    Ok((
        u32::try_from(changes(&r)).unwrap_or(u32::MAX),
        rows_read(&r),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_bodies_round_trip_text_and_bytes() {
        assert_eq!(stored_body(b"{\"a\":1}"), "{\"a\":1}");
        assert_eq!(stored_body(&[0xff]), "base64:/w==");
        for body in [&b"{\"a\":1}"[..], &[0xff, 0x00, 0xfe][..], &[][..]] {
            assert_eq!(body_bytes(&stored_body(body)).unwrap(), body);
        }
        assert!(body_bytes("base64:***").is_none());
    }
}
