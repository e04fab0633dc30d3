//! `webhook_subscribers`, `webhook_events`, `webhook_deliveries`, `webhook_attempts` (migration
//! 0013): the record of every outbound webhook event, delivery and attempt. Cloudflare Queues
//! carries deliveries; every state change is a guarded `UPDATE … WHERE status = …`, so a queue
//! message delivered twice cannot move a delivered or dead row back.

use super::{changes, n, opt, s};
use crate::domain::webhooks::{delivery_id, Publication};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{D1Database, Result};

/// One subscriber as listed by the operator API (the secret is shown only once, at creation).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all(serialize = "camelCase"))]
pub struct SubscriberRow {
    pub subscriber_id: String,
    pub url: String,
    pub event_types: String,
    pub description: Option<String>,
    pub enabled: i64,
    pub disabled_reason: Option<String>,
    pub disabled_at_ms: Option<i64>,
    pub created_at_ms: i64,
}

const SUBSCRIBER_COLUMNS: &str = "subscriber_id, url, event_types, description, enabled, \
    disabled_reason, disabled_at_ms, created_at_ms";

/// Stores a new subscriber (enabled). `event_types` is the stored form (`*` or names).
#[allow(clippy::too_many_arguments)]
pub async fn create_subscriber(
    db: &D1Database,
    subscriber_id: &str,
    url: &str,
    secret: &str,
    event_types: &str,
    description: Option<&str>,
    now_ms: i64,
) -> Result<()> {
    db.prepare(
        "INSERT INTO webhook_subscribers (subscriber_id, url, secret, event_types, description, enabled, created_at_ms, updated_at_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?6)",
    )
    .bind(&[s(subscriber_id), s(url), s(secret), s(event_types), opt(description), n(now_ms)])?
    .run()
    .await?;
    Ok(())
}

/// Most subscribers (every publish reads them all).
pub const SUBSCRIBERS_MAX: usize = 500;

/// Every subscriber, oldest first (at most [`SUBSCRIBERS_MAX`]).
pub async fn subscribers(db: &D1Database) -> Result<Vec<SubscriberRow>> {
    db.prepare(format!(
        "SELECT {SUBSCRIBER_COLUMNS} FROM webhook_subscribers ORDER BY created_at_ms, subscriber_id LIMIT 500"
    ))
    .all()
    .await?
    .results()
}

/// One subscriber.
pub async fn subscriber(db: &D1Database, subscriber_id: &str) -> Result<Option<SubscriberRow>> {
    super::row_by(
        db,
        &format!("SELECT {SUBSCRIBER_COLUMNS} FROM webhook_subscribers WHERE subscriber_id = ?1"),
        subscriber_id,
    )
    .await
}

/// Enables or disables a subscriber. Disabling keeps `reason`; returns `true` only when the state
/// changed (so a 410 answered twice alerts the owner once).
pub async fn set_enabled(
    db: &D1Database,
    subscriber_id: &str,
    enabled: bool,
    reason: Option<&str>,
    now_ms: i64,
) -> Result<bool> {
    let r = if enabled {
        db.prepare(
            "UPDATE webhook_subscribers SET enabled = 1, disabled_reason = NULL, disabled_at_ms = NULL, updated_at_ms = ?2 \
             WHERE subscriber_id = ?1 AND enabled = 0",
        )
        .bind(&[s(subscriber_id), n(now_ms)])?
    } else {
        db.prepare(
            "UPDATE webhook_subscribers SET enabled = 0, disabled_reason = ?2, disabled_at_ms = ?3, updated_at_ms = ?3 \
             WHERE subscriber_id = ?1 AND enabled = 1",
        )
        .bind(&[s(subscriber_id), opt(reason), n(now_ms)])?
    };
    Ok(changes(&r.run().await?) == 1)
}

#[derive(Deserialize)]
struct Wanted {
    subscriber_id: String,
    event_types: String,
}

/// A delivery to put on the queue: its id and the claim generation the message carries (only a
/// message of the delivery's current generation acts).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Claimed {
    pub delivery_id: String,
    pub gen: u32,
}

/// Records `p` and one pending delivery for each enabled subscriber in `wanted` (the ids of the
/// subscribers whose types match, decided by the caller), all in one D1 batch. Deliveries are
/// created only by the call that inserts the event: a second call with the same event id inserts
/// nothing (a subscriber created in between does not get an old event). Then claims the
/// deliveries of this event that have no queue message yet (`enqueued_at_ms IS NULL`) and returns
/// them: the caller sends them and, if that fails, calls [`unclaim`] (a claim whose send was lost
/// is found by the sweeper through `due_at_ms`, see [`overdue`]).
pub async fn insert_event(
    db: &D1Database,
    p: &Publication,
    wanted: &[String],
    now_ms: i64,
) -> Result<Vec<Claimed>> {
    let mut statements = vec![db
        .prepare(
            "INSERT INTO webhook_events (event_id, event_type, booking_id, body, created_at_ms) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT(event_id) DO NOTHING",
        )
        .bind(&[
            s(&p.event_id),
            s(p.event_type.as_str()),
            opt(p.booking_id.as_deref()),
            s(&p.body),
            n(now_ms),
        ])?];
    for sub in wanted {
        // Only for an event inserted by this very batch (its created_at_ms is this call's now).
        statements.push(
            db.prepare(
                "INSERT INTO webhook_deliveries (delivery_id, event_id, subscriber_id, status, created_at_ms, updated_at_ms) \
                 SELECT ?1, ?2, ?3, 'pending', ?4, ?4 WHERE (SELECT created_at_ms FROM webhook_events WHERE event_id = ?2) = ?4 \
                 ON CONFLICT(delivery_id) DO NOTHING",
            )
            .bind(&[s(&delivery_id(&p.event_id, sub)), s(&p.event_id), s(sub), n(now_ms)])?,
        );
    }
    statements.push(
        db.prepare(
            "UPDATE webhook_deliveries SET enqueued_at_ms = ?2, due_at_ms = ?2, claim_gen = claim_gen + 1 WHERE event_id = ?1 AND status = 'pending' \
             AND enqueued_at_ms IS NULL RETURNING delivery_id, claim_gen AS gen",
        )
        .bind(&[s(&p.event_id), n(now_ms)])?,
    );
    let results = db.batch(statements).await?;
    super::rows(results.last())
}

/// Enabled subscribers with their stored types (at most 500).
pub async fn enabled_subscribers(db: &D1Database) -> Result<Vec<(String, String)>> {
    subscribers_of(&enabled_subscribers_statement(db)?.all().await?)
}

/// The statement of [`enabled_subscribers`], for a caller's own batch (read its result with
/// [`subscribers_of`]).
pub fn enabled_subscribers_statement(db: &D1Database) -> Result<worker::D1PreparedStatement> {
    Ok(db.prepare(
        "SELECT subscriber_id, event_types FROM webhook_subscribers WHERE enabled = 1 \
         ORDER BY created_at_ms, subscriber_id LIMIT 500",
    ))
}

/// The subscribers an [`enabled_subscribers_statement`] found in a batch: `(id, stored types)`.
pub fn subscribers_of(r: &worker::D1Result) -> Result<Vec<(String, String)>> {
    Ok(r.results::<Wanted>()?
        .into_iter()
        .map(|w| (w.subscriber_id, w.event_types))
        .collect())
}

/// Gives back claims whose queue message could not be sent (the next publish of the event, or a
/// redrive, enqueues them).
pub async fn unclaim(db: &D1Database, claimed: &[Claimed]) -> Result<()> {
    super::run_each(
        db,
        "UPDATE webhook_deliveries SET enqueued_at_ms = NULL WHERE delivery_id = ?1 AND status = 'pending' \
         AND claim_gen = ?2",
        claimed
            .iter()
            .map(|c| vec![s(&c.delivery_id), n(i64::from(c.gen))]),
    )
    .await
}

/// Pending deliveries whose next attempt was due before `before_ms` (ms UTC) and that no attempt
/// holds: their queue message was lost. Each is re-claimed (`due_at_ms` = `now_ms`, so the next
/// sweep does not take it again at once) and returned, at most `limit`.
pub async fn overdue(
    db: &D1Database,
    before_ms: i64,
    now_ms: i64,
    limit: u32,
) -> Result<Vec<Claimed>> {
    db.prepare(
        "UPDATE webhook_deliveries SET due_at_ms = ?2, enqueued_at_ms = COALESCE(enqueued_at_ms, ?2), claim_gen = claim_gen + 1 \
         WHERE delivery_id IN (SELECT delivery_id FROM webhook_deliveries WHERE status = 'pending' \
         AND due_at_ms < ?1 AND (lease_until_ms IS NULL OR lease_until_ms < ?2) ORDER BY due_at_ms LIMIT ?3) \
         RETURNING delivery_id, claim_gen AS gen",
    )
    .bind(&[n(before_ms), n(now_ms), n(i64::from(limit))])?
    .all()
    .await?
    .results()
}

/// A delivery with what the consumer needs to make an attempt.
#[derive(Debug, Clone, Deserialize)]
pub struct DeliveryJob {
    pub delivery_id: String,
    pub event_id: String,
    pub event_type: String,
    pub subscriber_id: String,
    pub status: String,
    pub body: String,
    pub url: String,
    pub secret: String,
    pub enabled: i64,
    /// The current claim generation (see [`Claimed`]).
    pub claim_gen: u32,
    pub attempts: u32,
    pub budget_from: u32,
    pub lease_until_ms: Option<i64>,
    /// The last attempt's HTTP status (none: no attempt yet, or no answer).
    pub last_status_code: Option<u16>,
}

/// The job of `delivery_id`, if it exists.
pub async fn job(db: &D1Database, delivery_id: &str) -> Result<Option<DeliveryJob>> {
    super::row_by(
        db,
        "SELECT d.delivery_id, d.event_id, e.event_type, d.subscriber_id, d.status, e.body, s.url, s.secret, s.enabled, \
         d.claim_gen, d.attempts, d.budget_from, d.lease_until_ms, d.last_status_code \
         FROM webhook_deliveries d JOIN webhook_events e ON e.event_id = d.event_id \
         JOIN webhook_subscribers s ON s.subscriber_id = d.subscriber_id WHERE d.delivery_id = ?1",
        delivery_id,
    )
    .await
}

/// Takes the next attempt of a pending delivery of claim generation `gen`, leasing it until
/// `lease_until_ms` (an attempt in progress: a duplicate message of the same delivery finds the
/// lease and waits). Returns `(attempt, attempt within the current budget)`, both 1-based; `None`
/// when the delivery is no longer pending in that budget, or leased by another attempt.
pub async fn next_attempt(
    db: &D1Database,
    delivery_id: &str,
    gen: u32,
    now_ms: i64,
    lease_until_ms: i64,
) -> Result<Option<(u32, u32)>> {
    #[derive(Deserialize)]
    struct Row {
        attempts: f64,
        budget_from: f64,
    }
    let row: Option<Row> = db
        .prepare(
            "UPDATE webhook_deliveries SET attempts = attempts + 1, lease_until_ms = ?4, updated_at_ms = ?3 \
             WHERE delivery_id = ?1 AND status = 'pending' AND claim_gen = ?2 \
             AND (lease_until_ms IS NULL OR lease_until_ms <= ?3) RETURNING attempts, budget_from",
        )
        .bind(&[s(delivery_id), n(i64::from(gen)), n(now_ms), n(lease_until_ms)])?
        .first(None)
        .await?;
    Ok(row.map(|r| {
        (
            r.attempts as u32,
            (r.attempts - r.budget_from).max(1.0) as u32,
        )
    }))
}

/// One attempt as recorded.
pub struct Attempt<'a> {
    pub delivery_id: &'a str,
    /// The claim generation of the message that made it: the delivery moves only if it is still
    /// the current one (a redrive or re-send since then wins).
    pub gen: u32,
    pub attempt: u32,
    pub at_ms: i64,
    pub status_code: Option<u16>,
    /// `delivered`, `retry`, `dead` or `disabled`.
    pub outcome: &'a str,
    pub duration_ms: i64,
    pub error: Option<&'a str>,
    pub excerpt: Option<&'a str>,
    /// When the next attempt is expected (ms UTC): the retry time, or for `dead` the time by
    /// which the dead letter consumer should have marked it (else the sweeper sends it again).
    pub next_due_ms: Option<i64>,
}

/// Appends `a`, releases the lease and moves the delivery: `delivered` sets it delivered;
/// `disabled` cancels it; `retry` and `dead` keep it pending (the dead letter consumer marks it
/// dead, see [`end`] with [`Ending::Dead`]).
pub async fn record_attempt(db: &D1Database, a: &Attempt<'_>) -> Result<()> {
    let code = a
        .status_code
        .map(|c| n(i64::from(c)))
        .unwrap_or(JsValue::NULL);
    let status = match a.outcome {
        "delivered" => "delivered",
        "disabled" => "cancelled",
        _ => "pending",
    };
    db.batch(vec![
        db.prepare(
            "INSERT INTO webhook_attempts (delivery_id, attempt, at_ms, status_code, outcome, duration_ms, error, response_excerpt) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING",
        )
        .bind(&[
            s(a.delivery_id),
            n(i64::from(a.attempt)),
            n(a.at_ms),
            code.clone(),
            s(a.outcome),
            n(a.duration_ms),
            opt(a.error),
            opt(a.excerpt),
        ])?,
        db.prepare(
            "UPDATE webhook_deliveries SET status = ?2, last_status_code = ?3, last_error = ?4, updated_at_ms = ?5, \
             delivered_at_ms = CASE WHEN ?2 = 'delivered' THEN ?5 ELSE delivered_at_ms END, \
             due_at_ms = ?6, lease_until_ms = NULL WHERE delivery_id = ?1 AND status = 'pending' AND claim_gen = ?7",
        )
        .bind(&[
            s(a.delivery_id),
            s(status),
            code,
            opt(a.error),
            n(a.at_ms),
            a.next_due_ms.map(n).unwrap_or(JsValue::NULL),
            n(i64::from(a.gen)),
        ])?,
    ])
    .await?;
    Ok(())
}

/// How a pending delivery ends without being delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Its subscriber is disabled (status `cancelled`), unless an attempt holds it.
    Cancelled,
    /// The dead letter queue's consumer gives it up (status `dead`, `dead_at_ms` set, the lease
    /// cleared).
    Dead,
}

/// Ends a pending delivery of claim generation `gen` as `ending` says, `reason` its last error (a
/// message of an earlier generation never ends a redriven delivery). `true` when it changed.
pub async fn end(
    db: &D1Database,
    delivery_id: &str,
    gen: u32,
    ending: Ending,
    reason: &str,
    now_ms: i64,
) -> Result<bool> {
    let sql = match ending {
        Ending::Cancelled => {
            "UPDATE webhook_deliveries SET status = 'cancelled', last_error = ?2, updated_at_ms = ?3 \
             WHERE delivery_id = ?1 AND status = 'pending' AND claim_gen = ?4 \
             AND (lease_until_ms IS NULL OR lease_until_ms <= ?3)"
        }
        Ending::Dead => {
            "UPDATE webhook_deliveries SET status = 'dead', last_error = ?2, dead_at_ms = ?3, updated_at_ms = ?3, \
             lease_until_ms = NULL WHERE delivery_id = ?1 AND status = 'pending' AND claim_gen = ?4"
        }
    };
    super::changed_one(
        db,
        sql,
        &[s(delivery_id), s(reason), n(now_ms), n(i64::from(gen))],
    )
    .await
}

/// Which dead deliveries a redrive takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Delivery(String),
    Subscriber(String),
    /// Deliveries created in `[from_ms, to_ms)`, ms UTC.
    Range {
        from_ms: i64,
        to_ms: i64,
    },
}

/// Most deliveries one redrive call takes.
pub const REDRIVE_MAX: i64 = 500;

/// Moves the selected **dead** (or cancelled: their subscriber was disabled) deliveries of enabled
/// subscribers back to pending with a fresh attempt budget (`budget_from = attempts`,
/// `redrives + 1`), claimed for enqueue; returns them, at most [`REDRIVE_MAX`] a call. A
/// delivered delivery is never selected.
pub async fn redrive(db: &D1Database, sel: &Selection, now_ms: i64) -> Result<Vec<Claimed>> {
    let (filter, binds) = match sel {
        Selection::Delivery(id) => ("delivery_id = ?2", vec![s(id)]),
        Selection::Subscriber(id) => ("subscriber_id = ?2", vec![s(id)]),
        Selection::Range { from_ms, to_ms } => (
            "created_at_ms >= ?2 AND created_at_ms < ?3",
            vec![n(*from_ms), n(*to_ms)],
        ),
    };
    let mut all = vec![n(now_ms)];
    all.extend(binds);
    let sql = format!(
        "UPDATE webhook_deliveries SET status = 'pending', budget_from = attempts, redrives = redrives + 1, claim_gen = claim_gen + 1, \
         enqueued_at_ms = ?1, due_at_ms = ?1, lease_until_ms = NULL, dead_at_ms = NULL, updated_at_ms = ?1 \
         WHERE delivery_id IN (SELECT delivery_id FROM webhook_deliveries WHERE status IN ('dead', 'cancelled') \
         AND {filter} AND subscriber_id IN (SELECT subscriber_id FROM webhook_subscribers WHERE enabled = 1) \
         ORDER BY created_at_ms LIMIT {REDRIVE_MAX}) RETURNING delivery_id, claim_gen AS gen"
    );
    db.prepare(sql).bind(&all)?.all().await?.results()
}

/// Puts redriven deliveries whose queue message could not be sent back to dead (a cancelled one
/// too: it can be redriven again).
pub async fn undo_redrive(db: &D1Database, claimed: &[Claimed], now_ms: i64) -> Result<()> {
    super::run_each(
        db,
        "UPDATE webhook_deliveries SET status = 'dead', redrives = redrives - 1, enqueued_at_ms = NULL, due_at_ms = NULL, \
         dead_at_ms = ?2 WHERE delivery_id = ?1 AND status = 'pending' AND attempts = budget_from AND claim_gen = ?3",
        claimed
            .iter()
            .map(|c| vec![s(&c.delivery_id), n(now_ms), n(i64::from(c.gen))]),
    )
    .await
}

/// The `SELECT … FROM … JOIN` of a [`DeliveryRow`].
const DELIVERY_SELECT: &str = "SELECT d.delivery_id, d.event_id, e.event_type, d.subscriber_id, d.status, d.attempts, d.budget_from, d.redrives, \
         d.last_status_code, d.last_error, d.created_at_ms, d.delivered_at_ms, d.dead_at_ms \
         FROM webhook_deliveries d JOIN webhook_events e ON e.event_id = d.event_id";

/// A delivery with its attempts, as the operator API shows it.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all(serialize = "camelCase"))]
pub struct DeliveryRow {
    pub delivery_id: String,
    pub event_id: String,
    pub event_type: String,
    pub subscriber_id: String,
    pub status: String,
    pub attempts: i64,
    pub budget_from: i64,
    pub redrives: i64,
    pub last_status_code: Option<i64>,
    pub last_error: Option<String>,
    pub created_at_ms: i64,
    pub delivered_at_ms: Option<i64>,
    pub dead_at_ms: Option<i64>,
}

/// Deliveries, newest first, filtered by status and/or subscriber and/or event, created before
/// `before_ms` when given (the next page: the last row's `createdAtMs`), at most `limit` (capped
/// at 200).
pub async fn deliveries(
    db: &D1Database,
    status: Option<&str>,
    subscriber_id: Option<&str>,
    event_id: Option<&str>,
    before_ms: Option<i64>,
    limit: u32,
) -> Result<Vec<DeliveryRow>> {
    db.prepare(format!(
        "{DELIVERY_SELECT} \
         WHERE (?1 IS NULL OR d.status = ?1) AND (?2 IS NULL OR d.subscriber_id = ?2) AND (?3 IS NULL OR d.event_id = ?3) \
         AND (?5 IS NULL OR d.created_at_ms < ?5) ORDER BY d.created_at_ms DESC LIMIT ?4"
    ))
    .bind(&[
        opt(status),
        opt(subscriber_id),
        opt(event_id),
        n(i64::from(limit.min(200))),
        before_ms.map(n).unwrap_or(JsValue::NULL),
    ])?
    .all()
    .await?
    .results()
}

/// One delivery, by id.
pub async fn delivery(db: &D1Database, delivery_id: &str) -> Result<Option<DeliveryRow>> {
    super::row_by(
        db,
        &format!("{DELIVERY_SELECT} WHERE d.delivery_id = ?1"),
        delivery_id,
    )
    .await
}

/// The attempts of one delivery, in order.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all(serialize = "camelCase"))]
pub struct AttemptRow {
    pub attempt: i64,
    pub at_ms: i64,
    pub status_code: Option<i64>,
    pub outcome: String,
    pub duration_ms: i64,
    pub error: Option<String>,
    pub response_excerpt: Option<String>,
}

/// Every attempt of `delivery_id`, in order.
pub async fn attempts(db: &D1Database, delivery_id: &str) -> Result<Vec<AttemptRow>> {
    db.prepare(
        "SELECT attempt, at_ms, status_code, outcome, duration_ms, error, response_excerpt FROM webhook_attempts \
         WHERE delivery_id = ?1 ORDER BY attempt",
    )
    .bind(&[s(delivery_id)])?
    .all()
    .await?
    .results()
}
