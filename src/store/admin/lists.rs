//! The admin's lists and their writes: holds, raw events, suppressions (with their log).

use super::*;

// ---------------------------------------------------------------------------------------------
// Holds, raw events, suppressions

/// Open holds, newest first (at most [`PAGE_ROWS`]).
pub async fn open_holds(db: &D1Database) -> Result<Vec<HoldRow>> {
    db.prepare(format!(
        "SELECT {HOLD_COLUMNS} FROM holds h LEFT JOIN checkout_attempts a ON a.prebook_id = h.prebook_id \
         WHERE h.status = 'held' ORDER BY h.created_at_ms DESC LIMIT ?1"
    ))
    .bind(&[n(i64::from(PAGE_ROWS))])?
    .all()
    .await?
    .results()
}

/// The raw events filter: each `None` matches all; `before_ms` pages back (exclusive).
#[derive(Debug, Default, Clone)]
pub struct EventFilter {
    pub source: Option<String>,
    pub status: Option<String>,
    /// A UTC day `[from_ms, to_ms)`.
    pub day: Option<(i64, i64)>,
    pub before_ms: Option<i64>,
    /// With `before_ms`: the id of the last row shown (rows of that same ms with a smaller id
    /// come next).
    pub before_id: Option<i64>,
}

/// Raw events matching `f`, newest first, at most
/// [`crate::domain::admin::timeline::EVENTS_PAGE_ROWS`] + 1 (one more says "older").
pub async fn raw_events(db: &D1Database, f: &EventFilter) -> Result<Vec<RawEventRow>> {
    let (from, to) = f.day.unwrap_or((0, i64::MAX / 2));
    // Keyset paging on (received_at_ms, id): a burst of events in one millisecond is never cut.
    let (before_ms, before_id) = match f.before_ms {
        Some(b) if b < to => (b, f.before_id.unwrap_or(i64::MAX / 2)),
        _ => (to, 0),
    };
    db.prepare(format!(
        "SELECT {RAW_EVENT_COLUMNS} FROM raw_events \
         WHERE (?1 IS NULL OR source = ?1) AND (?2 IS NULL OR status = ?2) \
         AND received_at_ms >= ?3 AND (received_at_ms < ?4 OR (received_at_ms = ?4 AND id < ?6)) \
         ORDER BY received_at_ms DESC, id DESC LIMIT ?5"
    ))
    .bind(&[
        opt(f.source.as_deref()),
        opt(f.status.as_deref()),
        n(from),
        n(before_ms),
        n(i64::from(crate::domain::admin::timeline::EVENTS_PAGE_ROWS) + 1),
        n(before_id),
    ])?
    .all()
    .await?
    .results()
}

/// Characters `from` (1-based) to `from + len - 1` of raw event `id`'s stored body (`substr` in
/// SQL: the Worker never loads more than `len` of it); `None` when there is no such event, an
/// empty string past its end.
pub async fn raw_body_part(
    db: &D1Database,
    id: i64,
    from: i64,
    len: i64,
) -> Result<Option<String>> {
    db.prepare("SELECT substr(body, ?2, ?3) AS part FROM raw_events WHERE id = ?1")
        .bind(&[n(id), n(from), n(len)])?
        .first(Some("part"))
        .await
}

/// A suppression as listed.
#[derive(Debug, Clone, Deserialize)]
pub struct SuppressionRow {
    pub email: String,
    pub reason: String,
    pub source: String,
    pub detail: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// A logged operator change to suppressions.
#[derive(Debug, Clone, Deserialize)]
pub struct SuppressionLogRow {
    pub email: String,
    pub change: String,
    pub reason: String,
    pub note: Option<String>,
    pub by_account: String,
    pub at_ms: i64,
}

/// Suppressions (optionally one address), newest first, and the newest operator changes.
pub async fn suppressions(
    db: &D1Database,
    email: Option<&str>,
) -> Result<(Vec<SuppressionRow>, Vec<SuppressionLogRow>)> {
    // One address: its primary key and suppression_log_by_email. All: the newest first through
    // suppressions_by_update / suppression_log_by_time, reading no more rows than the page shows.
    let (list, log) = match email {
        Some(e) => (
            stmt(
                db,
                "SELECT email, reason, source, detail, created_at_ms, updated_at_ms FROM suppressions \
                 WHERE email = lower(?1)",
                &[s(e)],
            )?,
            stmt(
                db,
                "SELECT email, change, reason, note, by_account, at_ms FROM suppression_log \
                 WHERE email = lower(?1) ORDER BY at_ms DESC LIMIT 20",
                &[s(e)],
            )?,
        ),
        None => (
            stmt(
                db,
                "SELECT email, reason, source, detail, created_at_ms, updated_at_ms FROM suppressions \
                 ORDER BY updated_at_ms DESC LIMIT ?1",
                &[n(i64::from(PAGE_ROWS))],
            )?,
            stmt(
                db,
                "SELECT email, change, reason, note, by_account, at_ms FROM suppression_log \
                 ORDER BY at_ms DESC LIMIT 20",
                &[],
            )?,
        ),
    };
    let r = db.batch(vec![list, log]).await?;
    Ok((rows(r.first())?, rows(r.get(1))?))
}

/// Adds a suppression by an operator (source `operator:<account>`, the note as its detail) and
/// logs it, in one transaction. `false` when the address was already suppressed (nothing changed).
pub async fn add_suppression(
    db: &D1Database,
    email: &str,
    reason: &str,
    note: &str,
    by: &str,
    now_ms: i64,
) -> Result<bool> {
    let source = format!("operator:{by}");
    let r = db
        .batch(vec![
            stmt(
                db,
                "INSERT INTO suppressions (email, reason, source, detail, created_at_ms, updated_at_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5) ON CONFLICT(email) DO NOTHING",
                &[s(email), s(reason), s(&source), s(note), n(now_ms)],
            )?,
            stmt(
                db,
                "INSERT INTO suppression_log (email, change, reason, source, detail, note, by_account, at_ms) \
                 SELECT ?1, 'added', ?2, ?3, NULL, ?4, ?5, ?6 WHERE changes() = 1",
                &[s(email), s(reason), s(&source), s(note), s(by), n(now_ms)],
            )?,
        ])
        .await?;
    Ok(r.first().map(changes) == Some(1))
}

/// Removes a suppression, keeping its reason, source and detail in the log with the operator's
/// note, in one transaction. `false` when there was none.
pub async fn remove_suppression(
    db: &D1Database,
    email: &str,
    note: &str,
    by: &str,
    now_ms: i64,
) -> Result<bool> {
    let r = db
        .batch(vec![
            stmt(
                db,
                "INSERT INTO suppression_log (email, change, reason, source, detail, note, by_account, at_ms) \
                 SELECT email, 'removed', reason, source, detail, ?2, ?3, ?4 FROM suppressions WHERE email = ?1",
                &[s(email), s(note), s(by), n(now_ms)],
            )?,
            stmt(db, "DELETE FROM suppressions WHERE email = ?1", &[s(email)])?,
        ])
        .await?;
    Ok(r.get(1).map(changes) == Some(1))
}

/// One subscriber's dead and retrying outbound deliveries.
#[derive(Debug, Clone, Deserialize)]
pub struct DeliverySummary {
    pub subscriber_id: String,
    pub url: Option<String>,
    pub enabled: Option<i64>,
    /// `dead` or `retrying` (pending after at least one attempt).
    pub state: String,
    pub n: u64,
    /// The oldest one's creation, ms UTC.
    pub oldest_ms: i64,
}

/// Dead and retrying deliveries per subscriber (through `webhook_deliveries_by_status`: reads the
/// dead and pending rows, not the delivered history).
pub async fn delivery_summary(db: &D1Database) -> Result<Vec<DeliverySummary>> {
    db.prepare(
        "SELECT d.subscriber_id, s.url, s.enabled, \
         CASE WHEN d.status = 'dead' THEN 'dead' ELSE 'retrying' END AS state, \
         COUNT(*) AS n, MIN(d.created_at_ms) AS oldest_ms \
         FROM webhook_deliveries d LEFT JOIN webhook_subscribers s ON s.subscriber_id = d.subscriber_id \
         WHERE d.status IN ('dead', 'pending') AND (d.status = 'dead' OR d.attempts > 0) \
         GROUP BY d.subscriber_id, state ORDER BY d.subscriber_id LIMIT 1000",
    )
    .all()
    .await?
    .results()
}
