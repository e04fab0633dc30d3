//! `emails`: one row per email ever claimed, keyed by its dedupe key (unique, never expires).

use super::{changes, n, opt, s};
use crate::domain::email::EmailStatus;
use crate::domain::outbox::outgoing::OutgoingEmail;
use serde::Deserialize;
use worker::{D1Database, Result};

/// The parts of an email row callers branch on.
#[derive(Debug, Clone, Deserialize)]
pub struct EmailRow {
    pub status: EmailStatus,
    /// The error or skip reason recorded with the status.
    pub last_error: Option<String>,
}

/// Claims the dedupe key, keeping the email itself (`payload_json`) until the outbox records its
/// outcome, so the sweeper can hand it over again if it never reached the outbox. Returns `true` if this call created the row, `false` if the key was
/// already claimed (by an earlier attempt of the same step, or another journey).
///
/// The same batch (one D1 transaction) keeps what the email says in `email_contents` (subject,
/// text, HTML, extra headers) for the admin's "email as sent" page.
pub async fn claim(db: &D1Database, e: &OutgoingEmail, now_ms: i64) -> Result<bool> {
    claim_with(db, e, now_ms, Vec::new()).await
}

/// [`claim`], with `with` run in the same batch after it (one D1 transaction): the caller's own
/// record of what it did with the email, e.g. a scheduled send marked sent.
pub async fn claim_with(
    db: &D1Database,
    e: &OutgoingEmail,
    now_ms: i64,
    with: Vec<worker::D1PreparedStatement>,
) -> Result<bool> {
    let claim = db
        .prepare(
            "INSERT INTO emails (dedupe_key, kind, audience, booking_id, to_addr, subject, rank, status, message_id, attempts, created_at_ms, updated_at_ms, payload_json) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?10, ?8, 0, ?9, ?9, ?11) ON CONFLICT(dedupe_key) DO NOTHING",
        )
        .bind(&[
            s(e.dedupe_key.as_str()),
            s(e.kind.as_str()),
            s(e.audience.as_str()),
            opt(e.booking_id.as_deref()),
            s(e.to.as_str()),
            s(&e.subject),
            n(e.rank.as_i64()),
            s(&e.message_id),
            n(now_ms),
            s(EmailStatus::Claimed.as_str()),
            s(&serde_json::to_string(e)?),
        ])?;
    let content = db
        .prepare(
            "INSERT INTO email_contents (dedupe_key, subject, text_body, html_body, headers_json, created_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(dedupe_key) DO NOTHING",
        )
        .bind(&[
            s(e.dedupe_key.as_str()),
            s(&e.subject),
            s(&e.text),
            s(&e.html),
            s(&serde_json::to_string(&e.headers)?),
            n(now_ms),
        ])?;
    let mut batch = vec![claim, content];
    batch.extend(with);
    let results = db.batch(batch).await?;
    Ok(results.first().map(changes) == Some(1))
}

/// The row for a dedupe key.
pub async fn find(db: &D1Database, dedupe_key: &str) -> Result<Option<EmailRow>> {
    super::row_by::<EmailRow>(
        db,
        "SELECT status, last_error FROM emails WHERE dedupe_key = ?1",
        dedupe_key,
    )
    .await
}

/// Marks a claimed row as handed to the outbox (never moves a row backwards from a later state).
pub async fn mark_queued(db: &D1Database, dedupe_key: &str, now_ms: i64) -> Result<()> {
    queued_statement(db, dedupe_key, now_ms)?.run().await?;
    Ok(())
}

/// The statement of [`mark_queued`]: the row `dedupe_key` moves from `claimed` to `queued` at
/// `now_ms` (ms UTC), and no other state moves.
fn queued_statement(
    db: &D1Database,
    dedupe_key: &str,
    now_ms: i64,
) -> Result<worker::D1PreparedStatement> {
    db.prepare(
        "UPDATE emails SET status = ?3, updated_at_ms = ?2 WHERE dedupe_key = ?1 AND status = ?4",
    )
    .bind(&[
        s(dedupe_key),
        n(now_ms),
        s(EmailStatus::Queued.as_str()),
        s(EmailStatus::Claimed.as_str()),
    ])
}

/// Records the operator's decision on a blocked email (`crate::domain::admin::release`): who, when (ms
/// UTC), why. Writes only a row that has no decision yet; returns `false` otherwise.
pub async fn record_operator_decision(
    db: &D1Database,
    dedupe_key: &str,
    decision: &str,
    by: &str,
    at_ms: i64,
    reason: &str,
) -> Result<bool> {
    super::changed_one(
        db,
        "UPDATE emails SET operator_decision = ?2, operator_by = ?3, operator_at_ms = ?4, operator_reason = ?5 \
         WHERE dedupe_key = ?1 AND operator_decision IS NULL",
        &[s(dedupe_key), s(decision), s(by), n(at_ms), s(reason)],
    )
    .await
}

/// What the outbox learned about one email; written back to D1 after each attempt.
pub struct Outcome<'a> {
    pub dedupe_key: &'a str,
    pub status: EmailStatus,
    pub provider: Option<&'a str>,
    pub provider_message_id: Option<&'a str>,
    pub attempts: i64,
    pub last_error: Option<&'a str>,
    pub sent_at_ms: Option<i64>,
    pub now_ms: i64,
}

/// Records an attempt's outcome, written by the outbox; the kept payload is dropped (the outbox holds
/// the email from now on, and the D1 record keeps no body). Returns `false` if no row matched (should not happen: rows are
/// claimed before enqueue).
pub async fn record_outcome(db: &D1Database, o: &Outcome<'_>) -> Result<bool> {
    let r = outcome_statement(db, o)?.run().await?;
    Ok(changes(&r) == 1)
}

/// [`record_outcome`] and, in the same round trip, the enabled outbound webhook subscribers (to
/// publish the outcome to): `(recorded, subscribers)`.
pub async fn record_outcome_for_subscribers(
    db: &D1Database,
    o: &Outcome<'_>,
) -> Result<(bool, Vec<(String, String)>)> {
    let results = db
        .batch(vec![
            outcome_statement(db, o)?,
            super::webhooks::enabled_subscribers_statement(db)?,
        ])
        .await?;
    let recorded = results.first().map(changes) == Some(1);
    let subscribers = match results.get(1) {
        Some(r) => super::webhooks::subscribers_of(r)?,
        None => Vec::new(),
    };
    Ok((recorded, subscribers))
}

fn outcome_statement(db: &D1Database, o: &Outcome<'_>) -> Result<worker::D1PreparedStatement> {
    db
        .prepare(
            "UPDATE emails SET status = ?2, provider = COALESCE(?3, provider), provider_message_id = COALESCE(?4, provider_message_id), \
             attempts = MAX(attempts, ?5), last_error = ?6, sent_at_ms = COALESCE(?7, sent_at_ms), updated_at_ms = ?8, \
             payload_json = NULL WHERE dedupe_key = ?1",
        )
        .bind(&[
            s(o.dedupe_key),
            s(o.status.as_str()),
            opt(o.provider),
            opt(o.provider_message_id),
            n(o.attempts),
            opt(o.last_error),
            o.sent_at_ms.map(n).unwrap_or(wasm_bindgen::JsValue::NULL),
            n(o.now_ms),
        ])
}

/// Marks a row still `claimed` as `failed` with `error`: the journey could not hand it to the
/// outbox after every retry. The row is found by `dedupe_key`, or — for a scheduled send whose key
/// was never rendered — by booking and kind. A row the outbox already holds is left alone (its
/// outcome comes from the outbox). Returns how many rows changed (0 when nothing was claimed).
pub async fn mark_failed(
    db: &D1Database,
    dedupe_key: Option<&str>,
    booking_id: &str,
    kind: &str,
    error: &str,
    now_ms: i64,
) -> Result<usize> {
    let r = db
        .prepare(
            "UPDATE emails SET status = ?5, last_error = ?4, updated_at_ms = ?6, payload_json = NULL WHERE status = ?7 AND \
             (dedupe_key = ?1 OR (?1 IS NULL AND booking_id = ?2 AND kind = ?3))",
        )
        .bind(&[
            opt(dedupe_key),
            s(booking_id),
            s(kind),
            s(error),
            s(EmailStatus::Failed.as_str()),
            n(now_ms),
            s(EmailStatus::Claimed.as_str()),
        ])?
        .run()
        .await?;
    Ok(changes(&r))
}

/// An unsettled row (`claimed` or `queued`) as the sweeper checks it.
#[derive(Debug, Clone, Deserialize)]
pub struct UnsettledEmail {
    pub dedupe_key: String,
    pub status: EmailStatus,
    /// JSON of the `OutgoingEmail`; `None` for rows claimed before migration 0011.
    pub payload_json: Option<String>,
    /// ms since the epoch, UTC (the journey's logical time of the claim).
    pub created_at_ms: i64,
    /// When a tick last checked it (ms UTC); 0 = never.
    pub swept_at_ms: i64,
}

/// Unsettled rows last checked before `checked_before_ms` (ms UTC; never-checked rows count as
/// checked at 0), least recently checked first, at most `limit`, through the partial index
/// `emails_unsettled` (its size is the outbox's backlog, not the number of bookings): the rows
/// read are at most `limit`, whatever the backlog. The status literals repeat the index's own
/// `WHERE`. Returns `(rows, D1 rows read)`.
pub async fn unsettled(
    db: &D1Database,
    checked_before_ms: i64,
    limit: u32,
) -> Result<(Vec<UnsettledEmail>, u64)> {
    let r = db
        .prepare(
            "SELECT dedupe_key, status, payload_json, created_at_ms, swept_at_ms FROM emails INDEXED BY emails_unsettled \
             WHERE status IN ('claimed', 'queued') AND swept_at_ms < ?1 \
             ORDER BY swept_at_ms LIMIT ?2",
        )
        .bind(&[n(checked_before_ms), n(i64::from(limit))])?
        .all()
        .await?;
    let read = super::rows_read(&r);
    Ok((r.results()?, read))
}

/// Notes that the sweeper checked these rows at `now_ms` (ms UTC): one batch.
pub async fn mark_swept(db: &D1Database, dedupe_keys: &[&str], now_ms: i64) -> Result<()> {
    mark_swept_and_queued(db, dedupe_keys, &[], now_ms).await
}

/// [`mark_swept`] for `dedupe_keys`, and `queued` (rows the outbox holds that D1 still says
/// `claimed`) marked `queued`, in one batch.
pub async fn mark_swept_and_queued(
    db: &D1Database,
    dedupe_keys: &[&str],
    queued: &[&str],
    now_ms: i64,
) -> Result<()> {
    let mut batch = Vec::with_capacity(dedupe_keys.len() + queued.len());
    for k in dedupe_keys {
        batch.push(
            db.prepare("UPDATE emails SET swept_at_ms = ?2 WHERE dedupe_key = ?1")
                .bind(&[s(k), n(now_ms)])?,
        );
    }
    for k in queued {
        batch.push(queued_statement(db, k, now_ms)?);
    }
    if !batch.is_empty() {
        db.batch(batch).await?;
    }
    Ok(())
}

/// Records a provider's later word on a sent email (`delivered`, `deferred`, `bounced`, `failed`,
/// `rejected`, `complained`), found by its provider message id. Events arrive in any order and
/// may repeat, so a status never replaces a weightier one: `deferred` < `delivered` < `bounced` /
/// `failed` / `rejected` < `complained` (a bounce after "delivered" is news; a late "delivered"
/// after a bounce is not). Returns whether a row with that provider message id exists (`false`:
/// not ours, or not recorded yet — the outbox writes the id a little after the send). The id is
/// matched with and without angle brackets (`<id@host>` and `id@host` are the same message).
pub async fn record_delivery_status(
    db: &D1Database,
    provider_message_id: &str,
    status: &str,
    at_ms: i64,
) -> Result<bool> {
    let bare = provider_message_id
        .trim()
        .trim_start_matches('<')
        .trim_end_matches('>');
    const RANK: &str = "CASE lower({}) WHEN 'deferred' THEN 0 WHEN 'delivered' THEN 1 WHEN 'bounced' THEN 2 \
                        WHEN 'failed' THEN 2 WHEN 'rejected' THEN 2 WHEN 'complained' THEN 3 ELSE -1 END";
    let rank = |x: &str| RANK.replace("{}", x);
    // One statement: every row with that id is touched (so RETURNING says whether it is ours), the
    // status only moves up. A status this build does not know ranks below every known one.
    let newer = format!(
        "(delivery_status IS NULL OR {} >= {})",
        rank("?2"),
        rank("delivery_status")
    );
    let sql = format!(
        "UPDATE emails SET delivery_status = CASE WHEN {newer} THEN ?2 ELSE delivery_status END, \
         delivery_status_at_ms = CASE WHEN {newer} THEN ?3 ELSE delivery_status_at_ms END \
         WHERE provider_message_id IN (?1, ?4) RETURNING id"
    );
    let rows: Vec<serde_json::Value> = db
        .prepare(sql)
        .bind(&[s(bare), s(status), n(at_ms), s(&format!("<{bare}>"))])?
        .all()
        .await?
        .results()?;
    Ok(!rows.is_empty())
}
