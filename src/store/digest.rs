//! What the owner's daily digest reports (`crate::domain::sweeper::digest`), read in one D1 batch through
//! indexes (`bookings_by_created`, `emails_by_status`, `scheduled_sends_due`,
//! `compensation_steps_refund`, `holds_by_status`, `webhook_deliveries_by_status`,
//! `repairs_by_time`), and D1 `owner_digests`: which days are done.

use super::{n, rows_read, s};
use crate::domain::sweeper::digest::{
    BookingLine, DigestDay, DigestFacts, RepairLine, WaitingLine, LISTED_MAX,
};
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement, Result};

#[derive(Deserialize)]
struct Count {
    n: u64,
}

#[derive(Deserialize)]
struct StatusCount {
    status: String,
    n: u64,
}

#[derive(Deserialize)]
struct Waiting {
    id: String,
    since_ms: i64,
    words: Option<String>,
}

/// Whether the digest due on `sent_on` (owner-local `YYYY-MM-DD`) was already sent or found
/// empty.
pub async fn done(db: &D1Database, sent_on: &str) -> Result<bool> {
    Ok(db
        .prepare("SELECT status FROM owner_digests WHERE sent_on = ?1")
        .bind(&[s(sent_on)])?
        .first::<String>(Some("status"))
        .await?
        .is_some())
}

/// Records the digest of `sent_on` as `sent` or `empty` (the first record stands).
pub async fn mark(db: &D1Database, sent_on: &str, sent: bool, now_ms: i64) -> Result<()> {
    db.prepare(
        "INSERT INTO owner_digests (sent_on, status, at_ms) VALUES (?1, ?2, ?3) \
         ON CONFLICT(sent_on) DO NOTHING",
    )
    .bind(&[
        s(sent_on),
        s(if sent { "sent" } else { "empty" }),
        n(now_ms),
    ])?
    .run()
    .await?;
    Ok(())
}

/// The facts of `day` (its bookings, emails and repairs) and what waits now (dead letters,
/// refunds, holds, dead webhook deliveries, guests waiting for an answer), in one batch. Paused routes are the outbox's to say
/// (left empty here). Returns the facts and the D1 rows read.
pub async fn facts(db: &D1Database, day: &DigestDay) -> Result<(DigestFacts, u64)> {
    let window = [n(day.from_ms), n(day.to_ms)];
    let limit = n(LISTED_MAX as i64);
    let q = |sql: &str, binds: &[wasm_bindgen::JsValue]| -> Result<D1PreparedStatement> {
        db.prepare(sql).bind(binds)
    };
    let waiting_refunds =
        "FROM compensation_steps s JOIN compensations c ON c.compensation_id = s.compensation_id \
         WHERE s.step = 'refund' AND s.status IN ('awaiting_owner', 'failed')";
    let statements = vec![
        q(
            "SELECT COUNT(*) AS n FROM bookings WHERE created_at_ms >= ?1 AND created_at_ms < ?2",
            &window,
        )?,
        q(
            "SELECT booking_id, kind, source, hotel_name AS what FROM bookings \
             WHERE created_at_ms >= ?1 AND created_at_ms < ?2 ORDER BY created_at_ms LIMIT ?3",
            &[n(day.from_ms), n(day.to_ms), limit.clone()],
        )?,
        q(
            "SELECT status, COUNT(*) AS n FROM emails \
             WHERE status IN ('sent', 'sent_possibly_twice', 'dead', 'dropped', 'blocked') \
             AND updated_at_ms >= ?1 AND updated_at_ms < ?2 AND audience = 'client' GROUP BY status",
            &window,
        )?,
        q(
            "SELECT COUNT(*) AS n FROM emails WHERE status = 'skipped' \
             AND updated_at_ms >= ?1 AND updated_at_ms < ?2 AND last_error LIKE 'stale%'",
            &window,
        )?,
        q(
            "SELECT COUNT(*) AS n FROM scheduled_sends WHERE status = 'skipped' \
             AND due_at_ms >= ?1 AND due_at_ms < ?2 AND reason LIKE 'stale%'",
            &window,
        )?,
        q(
            "SELECT COUNT(*) AS n FROM emails WHERE status = 'dead' AND audience = 'client'",
            &[],
        )?,
        q(&format!("SELECT COUNT(*) AS n {waiting_refunds}"), &[])?,
        q(
            &format!(
                "SELECT c.compensation_id AS id, s.updated_at_ms AS since_ms, \
                 COALESCE(c.guest_name, c.guest_email, 'unknown guest') || COALESCE(', ' || c.trip, '') AS words \
                 {waiting_refunds} ORDER BY s.updated_at_ms LIMIT ?1"
            ),
            std::slice::from_ref(&limit),
        )?,
        q("SELECT COUNT(*) AS n FROM holds WHERE status = 'held'", &[])?,
        q(
            "SELECT hold_id AS id, created_at_ms AS since_ms, reason AS words FROM holds \
             WHERE status = 'held' ORDER BY created_at_ms LIMIT ?1",
            std::slice::from_ref(&limit),
        )?,
        q(
            "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'dead'",
            &[],
        )?,
        q(
            "SELECT COUNT(*) AS n FROM repairs WHERE at_ms >= ?1 AND at_ms < ?2",
            &window,
        )?,
        q(
            "SELECT kind, subject, reason, at_ms FROM repairs WHERE at_ms >= ?1 AND at_ms < ?2 \
             ORDER BY at_ms LIMIT ?3",
            &[n(day.from_ms), n(day.to_ms), limit.clone()],
        )?,
        q("SELECT COUNT(*) AS n FROM conversations WHERE waiting = 1", &[])?,
        q(
            "SELECT c.booking_id AS id, c.last_guest_at_ms AS since_ms,              m.from_addr || ': ' || m.subject AS words              FROM conversations c JOIN inbound_messages m ON m.id = c.last_message_id              WHERE c.waiting = 1 ORDER BY c.last_guest_at_ms LIMIT ?1",
            std::slice::from_ref(&limit),
        )?,
    ];
    let results = db.batch(statements).await?;
    let read = results.iter().map(rows_read).sum();
    let count = |i: usize| -> Result<u64> {
        Ok(results
            .get(i)
            .map(|r| r.results::<Count>())
            .transpose()?
            .and_then(|v| v.first().map(|c| c.n))
            .unwrap_or(0))
    };
    let list = |i: usize| -> Result<Vec<Waiting>> { super::rows(results.get(i)) };
    let waiting = |rows: Vec<Waiting>| -> Vec<WaitingLine> {
        rows.into_iter()
            .map(|w| WaitingLine {
                id: w.id,
                since_ms: w.since_ms,
                words: w.words.unwrap_or_default(),
            })
            .collect()
    };
    let outcomes: Vec<StatusCount> = super::rows(results.get(2))?;
    let outcome = |names: &[&str]| -> u64 {
        outcomes
            .iter()
            .filter(|c| names.contains(&c.status.as_str()))
            .map(|c| c.n)
            .sum()
    };

    let facts = DigestFacts {
        bookings: count(0)?,
        booking_lines: super::rows::<BookingLine>(results.get(1))?,
        emails_sent: outcome(&["sent", "sent_possibly_twice"]),
        emails_failed: outcome(&["dead", "dropped", "blocked"]),
        emails_stale: count(3)? + count(4)?,
        dead_letters: count(5)?,
        refunds_waiting: count(6)?,
        refund_lines: waiting(list(7)?),
        holds_open: count(8)?,
        hold_lines: waiting(list(9)?),
        webhooks_dead: count(10)?,
        repairs: count(11)?,
        repair_lines: super::rows::<RepairLine>(results.get(12))?,
        routes_paused: Vec::new(),
        conversations_waiting: count(13)?,
        conversation_lines: waiting(list(14)?),
    };
    Ok((facts, read))
}
