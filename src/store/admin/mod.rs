//! D1 for the owner's admin: sessions, the failed-login limiter, and the reads behind each page.
//! Every query is bound (no text is ever spliced into SQL) and bounded by a `LIMIT`.

use super::{changes, n, opt, rows, s};
use crate::domain::admin::limiter::{Scope, Slot};
use crate::domain::admin::timeline::{MAX_PER_KIND, MAX_RAW_EVENTS};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, Result};

/// Rows listed on a list page.
pub const PAGE_ROWS: u32 = 100;

#[derive(Deserialize)]
struct SlotRow {
    limit_key: String,
    attempts: i64,
    window_start_ms: i64,
}

/// Takes this attempt's slots, in one D1 batch (one transaction, statements in order): first
/// its IP's counter; then — only while that IP is within `max_per_ip` — its account's. A counter
/// whose window started at or before `stale_before_ms` starts again at 1 with its window at
/// `now_ms`; any other counts one more. Returns the counters after the attempt (the IP's alone
/// when the IP is over its limit).
///
/// So one IP writes at most `1 + max_per_ip` rows per window, whatever names it tries: an
/// attempt from a limited IP inserts nothing (a new account name would otherwise be one new row
/// per attempt). Expired windows are deleted by the sweeper ([`prune_login_limits`]).
pub async fn take_login_slots(
    db: &D1Database,
    ip_key: &str,
    account_key: &str,
    now_ms: i64,
    stale_before_ms: i64,
    max_per_ip: i64,
) -> Result<Vec<Slot>> {
    const UPSERT: &str = "ON CONFLICT(limit_key) DO UPDATE SET \
         attempts = CASE WHEN window_start_ms <= ?3 THEN 1 ELSE attempts + 1 END, \
         window_start_ms = CASE WHEN window_start_ms <= ?3 THEN ?2 ELSE window_start_ms END \
         RETURNING limit_key, attempts, window_start_ms";
    let r = db
        .batch(vec![
            db.prepare(format!(
                "INSERT INTO admin_login_limits (limit_key, window_start_ms, attempts) VALUES (?1, ?2, 1) {UPSERT}"
            ))
            .bind(&[s(ip_key), n(now_ms), n(stale_before_ms)])?,
            // `WHERE` on the SELECT also keeps SQLite's parser from reading `ON CONFLICT` as a
            // join constraint (https://sqlite.org/lang_upsert.html, "Parsing Ambiguity").
            db.prepare(format!(
                "INSERT INTO admin_login_limits (limit_key, window_start_ms, attempts) \
                 SELECT ?1, ?2, 1 WHERE (SELECT attempts FROM admin_login_limits WHERE limit_key = ?4) <= ?5 {UPSERT}"
            ))
            .bind(&[s(account_key), n(now_ms), n(stale_before_ms), s(ip_key), n(max_per_ip)])?,
        ])
        .await?;
    let mut slots = Vec::new();
    for result in &r {
        for row in result.results::<SlotRow>()? {
            slots.push(Slot {
                scope: if row.limit_key == ip_key {
                    Scope::Ip
                } else {
                    Scope::Account
                },
                attempts: row.attempts,
                window_start_ms: row.window_start_ms,
            });
        }
    }
    Ok(slots)
}

/// Retention: deletes at most `limit` limiter counters whose window started at or before
/// `stale_before_ms` (they count nothing any more), oldest first, through the index
/// `admin_login_limits_by_window`, and the admin sessions that expired before `now_ms`. Returns
/// the counters deleted.
pub async fn prune_login_limits(
    db: &D1Database,
    stale_before_ms: i64,
    now_ms: i64,
    limit: u32,
) -> Result<u32> {
    let r = db
        .batch(vec![
            db.prepare(
                "DELETE FROM admin_login_limits WHERE limit_key IN (SELECT limit_key FROM admin_login_limits \
                 WHERE window_start_ms <= ?1 ORDER BY window_start_ms LIMIT ?2)",
            )
            .bind(&[n(stale_before_ms), n(i64::from(limit))])?,
            db.prepare(
                "DELETE FROM admin_sessions WHERE session_hash IN (SELECT session_hash FROM admin_sessions \
                 WHERE expires_at_ms <= ?1 ORDER BY expires_at_ms LIMIT ?2)",
            )
            .bind(&[n(now_ms), n(i64::from(limit))])?,
        ])
        .await?;
    Ok(r.first().map(changes).unwrap_or(0) as u32)
}

/// A sign-in succeeded: in one transaction, clears the account's counter, gives back the slot
/// this attempt took in its IP's counter, removes expired sessions and counters whose window is
/// over, and stores the new session (only `session_hash`, the SHA-256 of its token, with the
/// credential tag of the password hash that signed it in).
#[allow(clippy::too_many_arguments)]
pub async fn sign_in(
    db: &D1Database,
    ip_key: &str,
    account_key: &str,
    session_hash: &str,
    account: &str,
    credential_tag: &str,
    ip: Option<&str>,
    now_ms: i64,
    expires_at_ms: i64,
    stale_before_ms: i64,
) -> Result<()> {
    db.batch(vec![
        db.prepare("DELETE FROM admin_login_limits WHERE limit_key = ?1")
            .bind(&[s(account_key)])?,
        db.prepare(
            "UPDATE admin_login_limits SET attempts = attempts - 1 WHERE limit_key = ?1 AND attempts > 0",
        )
        .bind(&[s(ip_key)])?,
        db.prepare("DELETE FROM admin_sessions WHERE expires_at_ms <= ?1")
            .bind(&[n(now_ms)])?,
        // Counters whose window is over count nothing: drop them (the table stays small).
        db.prepare("DELETE FROM admin_login_limits WHERE window_start_ms <= ?1")
            .bind(&[n(stale_before_ms)])?,
        db.prepare(
            "INSERT INTO admin_sessions (session_hash, account, credential_tag, created_at_ms, expires_at_ms, ip) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .bind(&[s(session_hash), s(account), s(credential_tag), n(now_ms), n(expires_at_ms), opt(ip)])?,
    ])
    .await?;
    Ok(())
}

/// A live session: its account and when it ends (ms UTC).
#[derive(Debug, Clone, Deserialize)]
pub struct SessionRow {
    pub account: String,
    pub credential_tag: String,
    pub expires_at_ms: i64,
}

/// The session whose token hashes to `session_hash`, if it has not expired at `now_ms`.
pub async fn session(
    db: &D1Database,
    session_hash: &str,
    now_ms: i64,
) -> Result<Option<SessionRow>> {
    db.prepare(
        "SELECT account, credential_tag, expires_at_ms FROM admin_sessions WHERE session_hash = ?1 AND expires_at_ms > ?2",
    )
    .bind(&[s(session_hash), n(now_ms)])?
    .first::<SessionRow>(None)
    .await
}

/// Ends a session (sign-out).
pub async fn end_session(db: &D1Database, session_hash: &str) -> Result<()> {
    db.prepare("DELETE FROM admin_sessions WHERE session_hash = ?1")
        .bind(&[s(session_hash)])?
        .run()
        .await?;
    Ok(())
}

fn stmt(db: &D1Database, sql: &str, binds: &[JsValue]) -> Result<D1PreparedStatement> {
    db.prepare(sql).bind(binds)
}

// ---------------------------------------------------------------------------------------------
// Overview

/// A count per status word.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct StatusCount {
    pub status: String,
    pub n: i64,
}

/// An email row as lists show it.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct EmailRow {
    pub dedupe_key: String,
    pub kind: String,
    pub audience: String,
    pub booking_id: Option<String>,
    pub to_addr: String,
    pub subject: String,
    pub rank: i64,
    pub status: String,
    pub provider: Option<String>,
    pub provider_message_id: Option<String>,
    pub message_id: String,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub delivery_status: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub sent_at_ms: Option<i64>,
}

const EMAIL_COLUMNS: &str = "dedupe_key, kind, audience, booking_id, to_addr, subject, rank, status, provider, \
     provider_message_id, message_id, attempts, last_error, delivery_status, created_at_ms, updated_at_ms, sent_at_ms";

/// What the overview reads from D1, in one batch (9 statements, one round trip).
#[derive(Debug, Default)]
pub struct Overview {
    pub email_counts: Vec<StatusCount>,
    pub recent_failures: Vec<EmailRow>,
    pub open_holds: i64,
    pub rejected_events_7d: i64,
    /// The last repairs, newest first.
    pub repairs: Vec<crate::domain::sweeper::digest::RepairLine>,
    /// Refunds waiting for the owner's decision (`awaiting_owner` or `failed`).
    pub refunds_waiting: i64,
    /// Guest emails skipped because their moment had passed, this UTC day and the one before
    /// (in the outbox, and at their planned time).
    pub stale_today: i64,
    pub stale_yesterday: i64,
}

#[derive(Deserialize)]
struct Count {
    n: i64,
}

/// The overview's D1 reads at `now_ms`.
pub async fn overview(db: &D1Database, now_ms: i64) -> Result<Overview> {
    const DAY: i64 = 86_400_000;
    let week_ago = now_ms - 7 * DAY;
    let today = now_ms.div_euclid(DAY) * DAY;
    let r = db
        .batch(vec![
            stmt(db, "SELECT status, COUNT(*) AS n FROM emails GROUP BY status ORDER BY status", &[])?,
            stmt(
                db,
                &format!(
                    "SELECT {EMAIL_COLUMNS} FROM emails WHERE status IN ('dead', 'dropped', 'blocked', 'sent_possibly_twice') \
                     ORDER BY updated_at_ms DESC LIMIT 10"
                ),
                &[],
            )?,
            stmt(db, "SELECT COUNT(*) AS n FROM holds WHERE status = 'held'", &[])?,
            stmt(
                db,
                "SELECT COUNT(*) AS n FROM raw_events WHERE status = 'rejected' AND received_at_ms >= ?1",
                &[n(week_ago)],
            )?,
            stmt(db, "SELECT kind, subject, reason, at_ms FROM repairs ORDER BY at_ms DESC LIMIT 10", &[])?,
            stmt(
                db,
                "SELECT COUNT(*) AS n FROM compensation_steps WHERE step = 'refund' \
                 AND status IN ('awaiting_owner', 'failed')",
                &[],
            )?,
            stmt(db, STALE_EMAILS, &[n(today), n(today + DAY)])?,
            stmt(db, STALE_EMAILS, &[n(today - DAY), n(today)])?,
            stmt(db, STALE_PLANNED, &[n(today), n(today + DAY)])?,
            stmt(db, STALE_PLANNED, &[n(today - DAY), n(today)])?,
        ])
        .await?;
    let count =
        |i: usize| -> Result<i64> { Ok(rows::<Count>(r.get(i))?.first().map_or(0, |c| c.n)) };
    Ok(Overview {
        email_counts: rows(r.first())?,
        recent_failures: rows(r.get(1))?,
        open_holds: count(2)?,
        rejected_events_7d: count(3)?,
        repairs: rows(r.get(4))?,
        refunds_waiting: count(5)?,
        stale_today: count(6)? + count(8)?,
        stale_yesterday: count(7)? + count(9)?,
    })
}

/// Client emails the outbox skipped as stale in `[?1, ?2)` (ms UTC), through `emails_by_status`.
const STALE_EMAILS: &str = "SELECT COUNT(*) AS n FROM emails WHERE status = 'skipped' \
     AND updated_at_ms >= ?1 AND updated_at_ms < ?2 AND last_error LIKE 'stale%'";
/// Planned sends skipped as stale at their time in `[?1, ?2)` (ms UTC), through
/// `scheduled_sends_due`.
const STALE_PLANNED: &str = "SELECT COUNT(*) AS n FROM scheduled_sends WHERE status = 'skipped' \
     AND due_at_ms >= ?1 AND due_at_ms < ?2 AND reason LIKE 'stale%'";

pub async fn prune_email_contents(
    db: &D1Database,
    before_ms: i64,
    limit: u32,
) -> Result<(u32, u64)> {
    let r = db
        .prepare(
            "DELETE FROM email_contents WHERE dedupe_key IN (SELECT dedupe_key FROM email_contents \
             WHERE created_at_ms < ?1 ORDER BY created_at_ms LIMIT ?2)",
        )
        .bind(&[n(before_ms), n(i64::from(limit))])?
        .run()
        .await?;
    Ok((
        u32::try_from(changes(&r)).unwrap_or(u32::MAX),
        super::rows_read(&r),
    ))
}

mod bookings;
mod lists;

pub use bookings::*;
pub use lists::*;
