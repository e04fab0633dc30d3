//! D1 for the owner's admin: sessions, the failed-login limiter, and the reads behind each page.
//! Every query is bound (no text is ever spliced into SQL) and bounded by a `LIMIT`.

use super::{changes, n, opt, s};
use crate::domain::admin::limiter::{Scope, Slot};
use crate::domain::admin::timeline::MAX_PER_KIND;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, D1Result, Result};

/// Rows listed on a list page.
pub const PAGE_ROWS: u32 = 100;

#[derive(Deserialize)]
struct SlotRow {
    limit_key: String,
    attempts: i64,
    window_start_ms: i64,
}

/// Takes this attempt's slot in both counters (IP and account) with one atomic statement: a
/// counter whose window started at or before `stale_before_ms` starts again at 1 with its window
/// at `now_ms`; any other counts one more. Returns both counters after the attempt.
pub async fn take_login_slots(
    db: &D1Database,
    ip_key: &str,
    account_key: &str,
    now_ms: i64,
    stale_before_ms: i64,
) -> Result<Vec<Slot>> {
    let r = db
        .prepare(
            "INSERT INTO admin_login_limits (limit_key, window_start_ms, attempts) VALUES (?1, ?3, 1), (?2, ?3, 1) \
             ON CONFLICT(limit_key) DO UPDATE SET \
               attempts = CASE WHEN window_start_ms <= ?4 THEN 1 ELSE attempts + 1 END, \
               window_start_ms = CASE WHEN window_start_ms <= ?4 THEN ?3 ELSE window_start_ms END \
             RETURNING limit_key, attempts, window_start_ms",
        )
        .bind(&[s(ip_key), s(account_key), n(now_ms), n(stale_before_ms)])?
        .all()
        .await?;
    Ok(r.results::<SlotRow>()?
        .into_iter()
        .map(|row| Slot {
            scope: if row.limit_key == ip_key {
                Scope::Ip
            } else {
                Scope::Account
            },
            attempts: row.attempts,
            window_start_ms: row.window_start_ms,
        })
        .collect())
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

fn rows<T: DeserializeOwned>(r: Option<&D1Result>) -> Result<Vec<T>> {
    match r {
        Some(r) => r.results::<T>(),
        None => Ok(Vec::new()),
    }
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

/// A sweeper repair (the overview's "last repairs").
#[derive(Debug, Clone, Deserialize)]
pub struct RepairRow {
    pub kind: String,
    pub subject: String,
    pub reason: String,
    pub at_ms: i64,
}

/// What the overview reads from D1, in one batch (4 statements, one round trip).
#[derive(Debug, Default)]
pub struct Overview {
    pub email_counts: Vec<StatusCount>,
    pub recent_failures: Vec<EmailRow>,
    pub open_holds: i64,
    pub rejected_events_7d: i64,
    pub repairs: Vec<RepairRow>,
}

#[derive(Deserialize)]
struct Count {
    n: i64,
}

/// The overview's D1 reads at `now_ms`.
pub async fn overview(db: &D1Database, now_ms: i64) -> Result<Overview> {
    let week_ago = now_ms - 7 * 86_400_000;
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
    })
}

// ---------------------------------------------------------------------------------------------
// Bookings

/// A booking as the search lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct BookingHit {
    pub booking_id: String,
    pub kind: String,
    pub status: String,
    pub hotel_name: Option<String>,
    pub checkin: Option<String>,
    pub checkout: Option<String>,
    pub contact_email: String,
    pub first_name: String,
    pub last_name: String,
    pub journey_version: i64,
    pub hotel_confirmation_number: Option<String>,
    pub prebook_id: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

const BOOKING_COLUMNS: &str = "b.booking_id, b.kind, b.status, b.hotel_name, b.checkin, b.checkout, b.contact_email, \
     c.first_name, c.last_name, b.journey_version, b.hotel_confirmation_number, b.prebook_id, b.created_at_ms, b.updated_at_ms";

/// Bookings matching `q` (at most 50, newest first): its booking id exactly, a guest email
/// (case-insensitive), a last name or a full name "first last" (case-insensitive). An empty `q`
/// lists the newest 50.
pub async fn search_bookings(db: &D1Database, q: &str) -> Result<Vec<BookingHit>> {
    let q = q.trim();
    let sql = if q.is_empty() {
        format!(
            "SELECT {BOOKING_COLUMNS} FROM bookings b JOIN contacts c ON c.email = b.contact_email \
             ORDER BY b.created_at_ms DESC LIMIT 50"
        )
    } else {
        format!(
            "SELECT {BOOKING_COLUMNS} FROM bookings b JOIN contacts c ON c.email = b.contact_email \
             WHERE b.booking_id = ?1 OR b.contact_email = lower(?1) \
             OR c.last_name = ?1 COLLATE NOCASE OR (c.first_name || ' ' || c.last_name) = ?1 COLLATE NOCASE \
             ORDER BY b.created_at_ms DESC LIMIT 50"
        )
    };
    let binds = if q.is_empty() { vec![] } else { vec![s(q)] };
    db.prepare(&sql).bind(&binds)?.all().await?.results()
}

/// A raw event as the timeline and the events page show it.
#[derive(Debug, Clone, Deserialize)]
pub struct RawEventRow {
    pub id: i64,
    pub source: String,
    pub event_id: Option<String>,
    pub event_name: Option<String>,
    pub status: String,
    pub error: Option<String>,
    pub body: String,
    pub received_at_ms: i64,
    pub instance_id: Option<String>,
    pub booking_id: Option<String>,
}

const RAW_EVENT_COLUMNS: &str =
    "id, source, event_id, event_name, status, error, body, received_at_ms, instance_id, booking_id";

/// A planned send and its decision.
#[derive(Debug, Clone, Deserialize)]
pub struct PlannedRow {
    pub kind: String,
    pub journey_version: i64,
    pub due_at_ms: Option<i64>,
    pub status: String,
    pub reason: Option<String>,
    pub zone: Option<String>,
    pub planned_at_ms: i64,
    pub decided_at_ms: Option<i64>,
}

/// A card-testing hold with its checkout's facts.
#[derive(Debug, Clone, Deserialize)]
pub struct HoldRow {
    pub hold_id: String,
    pub status: String,
    pub reason: String,
    pub prebook_id: String,
    pub created_at_ms: i64,
    pub action: Option<String>,
    pub acted_at_ms: Option<i64>,
    pub email: Option<String>,
    pub guest_name: Option<String>,
    pub hotel_id: Option<String>,
    pub checkin: Option<String>,
    pub checkout: Option<String>,
    pub decline_code: Option<String>,
}

const HOLD_COLUMNS: &str =
    "h.hold_id, h.status, h.reason, h.prebook_id, h.created_at_ms, h.action, h.acted_at_ms, \
     a.email, a.guest_name, a.hotel_id, a.checkin, a.checkout, a.decline_code";

/// A compensation, as the timeline shows it.
#[derive(Debug, Clone, Deserialize)]
pub struct CompensationRow {
    pub compensation_id: String,
    pub cause: String,
    pub state: String,
    pub reason: String,
    pub event_name: String,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// An outbound webhook event about the booking.
#[derive(Debug, Clone, Deserialize)]
pub struct WebhookEventRow {
    pub event_id: String,
    pub event_type: String,
    pub created_at_ms: i64,
}

/// Everything a booking's timeline shows, read with one D1 batch of 7 statements (one round
/// trip), each bounded by [`MAX_PER_KIND`] rows.
#[derive(Debug)]
pub struct TimelineRows {
    pub booking: BookingHit,
    pub raw_events: Vec<RawEventRow>,
    pub planned: Vec<PlannedRow>,
    pub emails: Vec<EmailRow>,
    pub holds: Vec<HoldRow>,
    pub compensations: Vec<CompensationRow>,
    pub webhook_events: Vec<WebhookEventRow>,
}

/// The timeline's rows for `booking_id`, `None` when there is no such booking.
pub async fn timeline(db: &D1Database, booking_id: &str) -> Result<Option<TimelineRows>> {
    let id = s(booking_id);
    let lim = n(i64::from(MAX_PER_KIND));
    let r = db
        .batch(vec![
            stmt(
                db,
                &format!(
                    "SELECT {BOOKING_COLUMNS} FROM bookings b JOIN contacts c ON c.email = b.contact_email WHERE b.booking_id = ?1"
                ),
                std::slice::from_ref(&id),
            )?,
            stmt(
                db,
                &format!(
                    "SELECT {RAW_EVENT_COLUMNS} FROM raw_events WHERE booking_id = ?1 ORDER BY received_at_ms LIMIT ?2"
                ),
                &[id.clone(), lim.clone()],
            )?,
            stmt(
                db,
                "SELECT kind, journey_version, due_at_ms, status, reason, zone, planned_at_ms, decided_at_ms \
                 FROM scheduled_sends WHERE booking_id = ?1 ORDER BY planned_at_ms LIMIT ?2",
                &[id.clone(), lim.clone()],
            )?,
            stmt(
                db,
                &format!(
                    "SELECT {EMAIL_COLUMNS} FROM emails WHERE booking_id = ?1 ORDER BY created_at_ms LIMIT ?2"
                ),
                &[id.clone(), lim.clone()],
            )?,
            stmt(
                db,
                &format!(
                    "SELECT {HOLD_COLUMNS} FROM holds h LEFT JOIN checkout_attempts a ON a.prebook_id = h.prebook_id \
                     WHERE h.hold_id IN (SELECT a2.hold_id FROM checkout_attempts a2 \
                       WHERE a2.prebook_id = (SELECT prebook_id FROM bookings WHERE booking_id = ?1)) \
                     OR h.prebook_id = (SELECT prebook_id FROM bookings WHERE booking_id = ?1) LIMIT ?2"
                ),
                &[id.clone(), lim.clone()],
            )?,
            stmt(
                db,
                "SELECT compensation_id, cause, state, reason, event_name, created_at_ms, updated_at_ms \
                 FROM compensations WHERE booking_id = ?1 ORDER BY created_at_ms LIMIT ?2",
                &[id.clone(), lim.clone()],
            )?,
            stmt(
                db,
                "SELECT event_id, event_type, created_at_ms FROM webhook_events WHERE booking_id = ?1 \
                 ORDER BY created_at_ms LIMIT ?2",
                &[id, lim],
            )?,
        ])
        .await?;
    let Some(booking) = rows::<BookingHit>(r.first())?.into_iter().next() else {
        return Ok(None);
    };
    Ok(Some(TimelineRows {
        booking,
        raw_events: rows(r.get(1))?,
        planned: rows(r.get(2))?,
        emails: rows(r.get(3))?,
        holds: rows(r.get(4))?,
        compensations: rows(r.get(5))?,
        webhook_events: rows(r.get(6))?,
    }))
}

// ---------------------------------------------------------------------------------------------
// Email

/// What an email said, as kept at claim time.
#[derive(Debug, Clone, Deserialize)]
pub struct ContentRow {
    pub subject: String,
    pub text_body: String,
    pub html_body: String,
    pub headers_json: String,
}

/// One email's record and content (one batch of 2 statements); `None` for an unknown key.
pub async fn email(
    db: &D1Database,
    dedupe_key: &str,
) -> Result<Option<(EmailRow, Option<ContentRow>)>> {
    let key = s(dedupe_key);
    let r = db
        .batch(vec![
            stmt(
                db,
                &format!("SELECT {EMAIL_COLUMNS} FROM emails WHERE dedupe_key = ?1"),
                std::slice::from_ref(&key),
            )?,
            stmt(
                db,
                "SELECT subject, text_body, html_body, headers_json FROM email_contents WHERE dedupe_key = ?1",
                &[key],
            )?,
        ])
        .await?;
    let Some(row) = rows::<EmailRow>(r.first())?.into_iter().next() else {
        return Ok(None);
    };
    Ok(Some((
        row,
        rows::<ContentRow>(r.get(1))?.into_iter().next(),
    )))
}

/// An email's dedupe key's content only (the HTML frame).
pub async fn email_html(db: &D1Database, dedupe_key: &str) -> Result<Option<String>> {
    #[derive(Deserialize)]
    struct Html {
        html_body: String,
    }
    Ok(db
        .prepare("SELECT html_body FROM email_contents WHERE dedupe_key = ?1")
        .bind(&[s(dedupe_key)])?
        .first::<Html>(None)
        .await?
        .map(|h| h.html_body))
}

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

/// Raw events matching `f`, newest first, at most [`PAGE_ROWS`] + 1 (one more says "older").
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
        n(i64::from(PAGE_ROWS) + 1),
        n(before_id),
    ])?
    .all()
    .await?
    .results()
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
    let r = db
        .batch(vec![
            stmt(
                db,
                "SELECT email, reason, source, detail, created_at_ms, updated_at_ms FROM suppressions \
                 WHERE (?1 IS NULL OR email = lower(?1)) ORDER BY updated_at_ms DESC LIMIT ?2",
                &[opt(email), n(i64::from(PAGE_ROWS))],
            )?,
            stmt(
                db,
                "SELECT email, change, reason, note, by_account, at_ms FROM suppression_log \
                 WHERE (?1 IS NULL OR email = lower(?1)) ORDER BY at_ms DESC LIMIT 20",
                &[opt(email)],
            )?,
        ])
        .await?;
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

/// Whether `hold_id` exists, and its row.
pub async fn hold(db: &D1Database, hold_id: &str) -> Result<Option<HoldRow>> {
    db.prepare(format!(
        "SELECT {HOLD_COLUMNS} FROM holds h LEFT JOIN checkout_attempts a ON a.prebook_id = h.prebook_id \
         WHERE h.hold_id = ?1"
    ))
    .bind(&[s(hold_id)])?
    .first::<HoldRow>(None)
    .await
}

/// Retention: deletes at most `limit` kept email contents claimed before `before_ms` (ms UTC),
/// oldest first; the `emails` row stays. Returns `(contents deleted, D1 rows read)`.
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
