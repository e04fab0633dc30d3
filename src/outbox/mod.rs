//! The outbox: one Durable Object (SQLite-backed) that is the single sender of every email.
//!
//! Queue rows live in the object's SQLite. The policy (`crate::domain::outbox`) decides; this file
//! carries it out:
//! - `POST /enqueue` stores an email once per dedupe key (a second enqueue is a no-op) and re-arms
//!   the alarm;
//! - `alarm()` sends every queued owner alert at once, then at most one client email if the client
//!   slot is open, records outcomes (also in D1), and re-arms for the next thing to do;
//! - an item found in `sending` when an alarm starts was interrupted between the hand-over to a
//!   provider and the record of its outcome (a crash or a deploy). It is sent again with the same
//!   Message-ID and, once accepted, marked `sent_possibly_twice`: neither Cloudflare Email Service
//!   nor SMTP can tell us whether the first hand-over went through, and losing an email is worse
//!   than a rare visible duplicate. A lost SMTP reply after DATA began is treated the same way,
//!   never as a refusal.
//!
//! Every pick uses a partial index (`queue_ready`, `queue_waiting`), so an alarm reads a handful of
//! rows whatever the queue length.

pub mod client;
pub mod providers;
pub mod smtp;

use crate::config::{Config, DB_BINDING};
use crate::domain::content_lock::{self, ContentLock};
use crate::domain::email::{Audience, EmailStatus, OutgoingEmail};
use crate::domain::outbox::{
    after_failure, choose_provider, classify_cloudflare_code, next_wake, AfterFailure, Provider,
    QueueFacts,
};
use crate::domain::render;
use crate::store;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::cell::Cell;
use worker::{
    durable_object, DurableObject, Env, Method, Request, Response, Result, SqlStorage,
    SqlStorageValue as V, State,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS queue (
  seq                 INTEGER PRIMARY KEY,
  dedupe_key          TEXT NOT NULL UNIQUE,
  audience            TEXT NOT NULL,
  rank                INTEGER NOT NULL,
  status              TEXT NOT NULL,
  email_json          TEXT NOT NULL,
  attempts            INTEGER NOT NULL DEFAULT 0,
  not_before_ms       INTEGER NOT NULL DEFAULT 0,
  enqueued_at_ms      INTEGER NOT NULL,
  updated_at_ms       INTEGER NOT NULL,
  provider            TEXT,
  provider_message_id TEXT,
  last_error          TEXT,
  sent_at_ms          INTEGER,
  interrupted         INTEGER NOT NULL DEFAULT 0,
  record_synced       INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS queue_ready ON queue(audience, rank, seq) WHERE status = 'queued';
CREATE INDEX IF NOT EXISTS queue_waiting ON queue(not_before_ms) WHERE status = 'waiting';
CREATE INDEX IF NOT EXISTS queue_sending ON queue(seq) WHERE status = 'sending';
CREATE INDEX IF NOT EXISTS queue_unsynced ON queue(seq) WHERE record_synced = 0;
CREATE TABLE IF NOT EXISTS attempts (
  seq      INTEGER NOT NULL,
  attempt  INTEGER NOT NULL,
  provider TEXT NOT NULL,
  at_ms    INTEGER NOT NULL,
  outcome  TEXT NOT NULL,
  error    TEXT,
  PRIMARY KEY (seq, attempt)
);
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
";

/// `state` keys.
const NEXT_SLOT_AT: &str = "next_slot_at_ms";
const MAIN_PAUSED_UNTIL: &str = "main_paused_until_ms";
/// Cost of the last alarm: SQLite rows read, and wall time in ms (observability and benchmarks).
const LAST_ALARM_ROWS_READ: &str = "last_alarm_rows_read";
const LAST_ALARM_MS: &str = "last_alarm_ms";

/// Most owner alerts sent in one alarm (the rest go in the next, a millisecond later).
const OWNER_BATCH: usize = 10;

fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}

fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    // crypto.getRandomValues cannot fail for 8 bytes; fall back to the clock if it ever does.
    if getrandom::fill(&mut b).is_err() {
        return now_ms() as u64;
    }
    u64::from_le_bytes(b)
}

/// One queue row as read for sending.
#[derive(Debug, Clone, Deserialize)]
struct Row {
    seq: i64,
    email_json: String,
    attempts: i64,
    interrupted: i64,
}

/// Public view of a queue row (`GET /state`), for tests, admin pages and operators.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ItemView {
    seq: i64,
    dedupe_key: String,
    audience: String,
    rank: i64,
    status: String,
    attempts: i64,
    not_before_ms: i64,
    enqueued_at_ms: i64,
    provider: Option<String>,
    provider_message_id: Option<String>,
    last_error: Option<String>,
    sent_at_ms: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct AttemptView {
    seq: i64,
    attempt: i64,
    provider: String,
    at_ms: i64,
    outcome: String,
    error: Option<String>,
}

#[derive(Deserialize)]
struct EmailJson {
    email_json: String,
}

#[derive(Deserialize)]
struct StatusCount {
    status: String,
    n: i64,
}

#[derive(Deserialize)]
struct ValueRow {
    value: Option<i64>,
}

/// The outbox Durable Object (`OUTBOX`, one instance named `outbox`).
#[durable_object]
pub struct Outbox {
    state: State,
    env: Env,
    schema_ready: Cell<bool>,
    rows_read: Cell<usize>,
    /// An alarm of this very instance is running. Rows in `sending` are only in flight while this
    /// is set; after a crash or eviction the new instance starts with `false`, which is how
    /// interrupted hand-overs are told apart from live ones.
    busy: Cell<bool>,
}

impl Outbox {
    fn sql(&self) -> SqlStorage {
        self.state.storage().sql()
    }

    /// Runs a statement, counting the rows SQLite read for it (see `rows_read`).
    fn exec(&self, query: &str, binds: Vec<V>) -> Result<worker::SqlCursor> {
        let cursor = self.sql().exec(query, Some(binds))?;
        self.rows_read
            .set(self.rows_read.get() + cursor.rows_read());
        Ok(cursor)
    }

    /// Runs a query and returns its rows, counting rows read (for the cost figures in `/state`).
    fn rows<T: for<'de> Deserialize<'de>>(&self, query: &str, binds: Vec<V>) -> Result<Vec<T>> {
        // Not `self.exec`: rows are counted once, after the cursor was read.
        let cursor = self.sql().exec(query, Some(binds))?;
        let rows = cursor.to_array::<T>()?;
        self.rows_read
            .set(self.rows_read.get() + cursor.rows_read());
        Ok(rows)
    }

    fn ensure_schema(&self) -> Result<()> {
        if !self.schema_ready.get() {
            self.sql().exec(SCHEMA, None)?;
            self.schema_ready.set(true);
        }
        Ok(())
    }

    fn get_state(&self, key: &str) -> Result<Option<i64>> {
        let rows: Vec<ValueRow> =
            self.rows("SELECT value FROM state WHERE key = ?", vec![key.into()])?;
        Ok(rows.into_iter().next().and_then(|r| r.value))
    }

    fn set_state(&self, key: &str, value: i64) -> Result<()> {
        self.exec(
            "INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            vec![key.into(), value.into()],
        )?;
        Ok(())
    }

    fn config(&self) -> Result<Config> {
        crate::routes::config(&self.env).map_err(|e| worker::Error::RustError(e.to_string()))
    }

    /// Stores `email` unless its dedupe key is already in the outbox. Returns `true` if new.
    fn enqueue(&self, email: &OutgoingEmail, now: i64) -> Result<bool> {
        let cursor = self.exec(
            "INSERT INTO queue (dedupe_key, audience, rank, status, email_json, enqueued_at_ms, updated_at_ms) \
             VALUES (?, ?, ?, 'queued', ?, ?, ?) ON CONFLICT(dedupe_key) DO NOTHING",
            vec![
                email.dedupe_key.as_str().into(),
                email.audience.as_str().into(),
                email.rank.as_i64().into(),
                serde_json::to_string(email)?.into(),
                now.into(),
                now.into(),
            ],
        )?;
        Ok(cursor.rows_written() > 0)
    }

    /// The next queued item of `audience`: lowest rank, then oldest, through `queue_ready`.
    fn pick(&self, audience: Audience) -> Result<Option<Row>> {
        let rows: Vec<Row> = self.rows(
            "SELECT seq, email_json, attempts, interrupted FROM queue \
             WHERE status = 'queued' AND audience = ? ORDER BY rank, seq LIMIT 1",
            vec![audience.as_str().into()],
        )?;
        Ok(rows.into_iter().next())
    }

    fn facts(&self) -> Result<QueueFacts> {
        let ready = |audience: Audience| -> Result<bool> {
            let rows: Vec<ValueRow> = self.rows(
                "SELECT seq AS value FROM queue WHERE status = 'queued' AND audience = ? LIMIT 1",
                vec![audience.as_str().into()],
            )?;
            Ok(!rows.is_empty())
        };
        let waiting: Vec<ValueRow> = self.rows(
            "SELECT not_before_ms AS value FROM queue WHERE status = 'waiting' ORDER BY not_before_ms LIMIT 1",
            vec![],
        )?;
        Ok(QueueFacts {
            owner_ready: ready(Audience::Owner)?,
            client_ready: ready(Audience::Client)?,
            earliest_waiting_ms: waiting.into_iter().next().and_then(|r| r.value),
        })
    }

    /// Sets the alarm for the next thing to do. Never `now` itself: an alarm set to the current
    /// millisecond inside `alarm()` can be dropped (workerd#6866), so at least now + 1 ms.
    async fn rearm(&self, now: i64) -> Result<Option<i64>> {
        let next_slot = self.get_state(NEXT_SLOT_AT)?.unwrap_or(0);
        let mut wake = next_wake(now, next_slot, self.facts()?);
        let unsynced: Vec<ValueRow> = self.rows(
            "SELECT seq AS value FROM queue WHERE record_synced = 0 LIMIT 1",
            vec![],
        )?;
        if !unsynced.is_empty() {
            let retry = now + 30_000;
            wake = Some(wake.map_or(retry, |w| w.min(retry)));
        }
        if let Some(at) = wake {
            let at = at.max(now + 1);
            // An i64 would be read as an offset from now; pass an absolute date.
            let when = worker::ScheduledTime::new(js_sys::Date::new(
                &wasm_bindgen::JsValue::from_f64(at as f64),
            ));
            self.state.storage().set_alarm(when).await?;
            return Ok(Some(at));
        }
        Ok(None)
    }

    /// One alarm's work.
    async fn process(&self) -> Result<()> {
        let cfg = self.config()?;
        let now = now_ms();
        // Interrupted hand-overs: see the module docs for the rule.
        self.exec(
            "UPDATE queue SET status = 'queued', interrupted = 1, updated_at_ms = ? WHERE status = 'sending'",
            vec![now.into()],
        )?;
        // Backoffs that ended: back in line, keeping their rank and arrival order.
        self.exec(
            "UPDATE queue SET status = 'queued', updated_at_ms = ? WHERE status = 'waiting' AND not_before_ms <= ?",
            vec![now.into(), now.into()],
        )?;

        for _ in 0..OWNER_BATCH {
            match self.pick(Audience::Owner)? {
                Some(row) => {
                    self.attempt(row, &cfg).await?;
                }
                None => break,
            }
        }

        let next_slot = self.get_state(NEXT_SLOT_AT)?.unwrap_or(0);
        if now_ms() >= next_slot {
            if let Some(row) = self.pick(Audience::Client)? {
                if self.attempt(row, &cfg).await? {
                    let sent_at = now_ms();
                    self.set_state(
                        NEXT_SLOT_AT,
                        cfg.pacing.next_slot_after(sent_at, random_u64()),
                    )?;
                }
            }
        }

        self.sync_records().await;
        self.rearm(now_ms()).await?;
        Ok(())
    }

    /// Tries to send one row; returns `true` if a provider accepted it.
    async fn attempt(&self, row: Row, cfg: &Config) -> Result<bool> {
        let email: OutgoingEmail = serde_json::from_str(&row.email_json)?;
        // Content lock: nothing internal reaches a client (owner alerts may carry admin and action
        // links, never unrendered placeholders). A locked email never reaches a provider.
        let lock = ContentLock::from_config(&cfg.public_base_url, &cfg.internal_names);
        if let Err(violations) = lock.check(&email) {
            let reason = format!("content lock: {}", content_lock::describe(&violations));
            let at = now_ms();
            self.park(row.seq, EmailStatus::Blocked.as_str(), 0, &reason, at)?;
            // The alert names what was found without repeating template markers verbatim (the
            // alert itself must pass the placeholder rule); the queue row keeps the full detail.
            let for_owner: Vec<String> = violations
                .iter()
                .map(|v| match v {
                    content_lock::LockViolation::Placeholder(_) => {
                        "an unrendered template placeholder".to_string()
                    }
                    other => other.to_string(),
                })
                .collect();
            let summary = format!("content lock: {}", for_owner.join("; "));
            self.alert_owner(&email, "blocked", row.attempts, &summary, cfg, at)?;
            return Ok(false);
        }
        let mut attempts = row.attempts;
        let mut provider = choose_provider(now_ms(), self.get_state(MAIN_PAUSED_UNTIL)?);
        // At most two hand-overs per pick: the main provider, then SMTP on a daily-limit failover.
        for _ in 0..2 {
            attempts += 1;
            let started = now_ms();
            self.exec(
                "UPDATE queue SET status = 'sending', attempts = ?, provider = ?, updated_at_ms = ? WHERE seq = ?",
                vec![attempts.into(), provider.as_str().into(), started.into(), row.seq.into()],
            )?;
            let result = self.hand_over(provider, &email, cfg).await;
            let at = now_ms();
            match result {
                Ok(provider_message_id) => {
                    let status = if row.interrupted != 0 {
                        EmailStatus::SentPossiblyTwice
                    } else {
                        EmailStatus::Sent
                    };
                    self.log_attempt(row.seq, attempts, provider, at, status.as_str(), None)?;
                    self.exec(
                        "UPDATE queue SET status = ?, provider_message_id = ?, sent_at_ms = ?, last_error = NULL, \
                         updated_at_ms = ?, record_synced = 0 WHERE seq = ?",
                        vec![status.as_str().into(), provider_message_id.into(), at.into(), at.into(), row.seq.into()],
                    )?;
                    return Ok(true);
                }
                Err(failure) => {
                    self.log_attempt(
                        row.seq,
                        attempts,
                        provider,
                        at,
                        "failed",
                        Some(&failure.message),
                    )?;
                    if failure.maybe_handed_over {
                        // Unknown outcome: the retry must be reported as a possible duplicate.
                        self.exec(
                            "UPDATE queue SET interrupted = 1 WHERE seq = ?",
                            vec![row.seq.into()],
                        )?;
                    }
                    let decision = after_failure(
                        failure.class,
                        provider,
                        attempts as u32,
                        at,
                        cfg.backoff,
                        random_u64(),
                    );
                    match decision {
                        AfterFailure::FailOver {
                            pause_main_until_ms,
                        } => {
                            self.set_state(MAIN_PAUSED_UNTIL, pause_main_until_ms)?;
                            if cfg.smtp.is_some() {
                                provider = Provider::Smtp;
                                continue;
                            }
                            self.park(
                                row.seq,
                                "waiting",
                                pause_main_until_ms,
                                &failure.message,
                                at,
                            )?;
                        }
                        AfterFailure::RetryAt { at_ms } => {
                            self.park(row.seq, "waiting", at_ms, &failure.message, at)?;
                        }
                        AfterFailure::DeadLetter => {
                            self.park(row.seq, "dead", 0, &failure.message, at)?;
                            self.alert_owner(&email, "dead", attempts, &failure.message, cfg, at)?;
                        }
                        AfterFailure::Drop => {
                            self.park(row.seq, "dropped", 0, &failure.message, at)?;
                            self.alert_owner(
                                &email,
                                "dropped",
                                attempts,
                                &failure.message,
                                cfg,
                                at,
                            )?;
                        }
                    }
                    return Ok(false);
                }
            }
        }
        Ok(false)
    }

    fn park(
        &self,
        seq: i64,
        status: &str,
        not_before_ms: i64,
        error: &str,
        now: i64,
    ) -> Result<()> {
        self.exec(
            "UPDATE queue SET status = ?, not_before_ms = ?, last_error = ?, updated_at_ms = ?, record_synced = 0 WHERE seq = ?",
            vec![status.into(), not_before_ms.into(), error.into(), now.into(), seq.into()],
        )?;
        Ok(())
    }

    fn log_attempt(
        &self,
        seq: i64,
        attempt: i64,
        provider: Provider,
        at: i64,
        outcome: &str,
        error: Option<&str>,
    ) -> Result<()> {
        self.exec(
            "INSERT OR REPLACE INTO attempts (seq, attempt, provider, at_ms, outcome, error) VALUES (?, ?, ?, ?, ?, ?)",
            vec![seq.into(), attempt.into(), provider.as_str().into(), at.into(), outcome.into(), error.into()],
        )?;
        Ok(())
    }

    /// Queues the owner's alert about a dropped or dead client email (never about an owner alert:
    /// that would loop).
    fn alert_owner(
        &self,
        email: &OutgoingEmail,
        outcome: &str,
        attempts: i64,
        reason: &str,
        cfg: &Config,
        now: i64,
    ) -> Result<()> {
        if email.audience == Audience::Owner {
            return Ok(());
        }
        let alert = render::owner_email_failed(
            email,
            outcome,
            attempts,
            reason,
            &cfg.owner_email,
            &cfg.branding,
        )
        .map_err(|e| worker::Error::RustError(e.to_string()))?;
        self.enqueue(&alert, now)?;
        Ok(())
    }

    /// Hands the email to one provider. `Ok` carries the provider's message id (or final reply).
    async fn hand_over(
        &self,
        provider: Provider,
        email: &OutgoingEmail,
        cfg: &Config,
    ) -> std::result::Result<String, smtp::SmtpFailure> {
        match provider {
            Provider::Main => providers::send_cloudflare(&self.env, email, &cfg.branding)
                .await
                .map_err(|f| smtp::SmtpFailure {
                    class: classify_cloudflare_code(f.code.as_deref()),
                    stage: "send",
                    message: match &f.code {
                        Some(code) => format!("{code}: {}", f.message),
                        None => f.message,
                    },
                    maybe_handed_over: false,
                    auth_failed: false,
                }),
            Provider::Smtp => {
                let Some(smtp_cfg) = cfg.smtp.as_ref() else {
                    return Err(smtp::SmtpFailure {
                        class: crate::domain::outbox::ProviderErrorClass::Transient,
                        stage: "connect",
                        message: "SMTP failover is not configured (SMTP_HOST is empty)".into(),
                        maybe_handed_over: false,
                        auth_failed: false,
                    });
                };
                let message =
                    render::to_mime(email, &cfg.branding, now_ms() / 1000).map_err(|e| {
                        smtp::SmtpFailure {
                            class: crate::domain::outbox::ProviderErrorClass::Permanent,
                            stage: "send",
                            message: e.to_string(),
                            maybe_handed_over: false,
                            auth_failed: false,
                        }
                    })?;
                smtp::send(
                    smtp_cfg,
                    smtp::Outgoing {
                        from: cfg.branding.from.as_str(),
                        to: email.to.as_str(),
                        message,
                    },
                )
                .await
            }
        }
    }

    /// Writes outcomes to D1 for rows whose record lags (`record_synced = 0`). A D1 failure leaves
    /// the row unsynced for the next alarm; the send itself is never repeated for it.
    async fn sync_records(&self) {
        let rows: Vec<ItemView> = match self.rows(
            "SELECT seq, dedupe_key, audience, rank, status, attempts, not_before_ms, enqueued_at_ms, provider, \
             provider_message_id, last_error, sent_at_ms FROM queue WHERE record_synced = 0 ORDER BY seq LIMIT 20",
            vec![],
        ) {
            Ok(rows) => rows,
            Err(e) => {
                worker::console_error!("outbox: reading unsynced rows failed: {e}");
                return;
            }
        };
        if rows.is_empty() {
            return;
        }
        let db = match self.env.d1(DB_BINDING) {
            Ok(db) => db,
            Err(e) => {
                worker::console_error!("outbox: D1 binding: {e}");
                return;
            }
        };
        for r in rows {
            let Some(status) = EmailStatus::parse(&r.status) else {
                continue;
            };
            let outcome = store::emails::Outcome {
                dedupe_key: &r.dedupe_key,
                status,
                provider: r.provider.as_deref(),
                provider_message_id: r.provider_message_id.as_deref(),
                attempts: r.attempts,
                last_error: r.last_error.as_deref(),
                sent_at_ms: r.sent_at_ms,
                now_ms: now_ms(),
            };
            match store::emails::record_outcome(&db, &outcome).await {
                Ok(_) => {
                    if let Err(e) = self.exec(
                        "UPDATE queue SET record_synced = 1 WHERE seq = ?",
                        vec![r.seq.into()],
                    ) {
                        worker::console_error!(
                            "outbox: marking {} synced failed: {e}",
                            r.dedupe_key
                        );
                    }
                }
                Err(e) => {
                    worker::console_error!("outbox: recording {} in D1 failed: {e}", r.dedupe_key)
                }
            }
        }
    }

    fn view(&self) -> Result<serde_json::Value> {
        let items: Vec<ItemView> = self.rows(
            "SELECT seq, dedupe_key, audience, rank, status, attempts, not_before_ms, enqueued_at_ms, provider, \
             provider_message_id, last_error, sent_at_ms FROM queue ORDER BY seq DESC LIMIT 200",
            vec![],
        )?;
        let attempts: Vec<AttemptView> = self.rows(
            "SELECT seq, attempt, provider, at_ms, outcome, error FROM attempts ORDER BY seq DESC, attempt DESC LIMIT 400",
            vec![],
        )?;
        let counts: Vec<StatusCount> = self.rows(
            "SELECT status, COUNT(*) AS n FROM queue GROUP BY status",
            vec![],
        )?;
        Ok(json!({
            "nextSlotAtMs": self.get_state(NEXT_SLOT_AT)?,
            "mainPausedUntilMs": self.get_state(MAIN_PAUSED_UNTIL)?,
            "lastAlarm": {
                "rowsRead": self.get_state(LAST_ALARM_ROWS_READ)?,
                "ms": self.get_state(LAST_ALARM_MS)?,
            },
            "counts": counts.into_iter().map(|c| (c.status, c.n)).collect::<std::collections::BTreeMap<_, _>>(),
            "items": items,
            "attempts": attempts,
        }))
    }
}

impl DurableObject for Outbox {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            env,
            schema_ready: Cell::new(false),
            rows_read: Cell::new(0),
            busy: Cell::new(false),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        self.ensure_schema()?;
        match (req.method(), req.path().as_str()) {
            (Method::Post, "/enqueue") => {
                let email: OutgoingEmail = match req.json().await {
                    Ok(e) => e,
                    Err(e) => return Response::error(format!("invalid email: {e}"), 400),
                };
                let now = now_ms();
                let fresh = self.enqueue(&email, now)?;
                self.rearm(now).await?;
                Response::from_json(&json!({"status": if fresh { "queued" } else { "duplicate" }}))
            }
            (Method::Get, "/state") => Response::from_json(&self.view()?),
            (Method::Get, "/email") => {
                // The rendered email as queued, for inspection (owner pages, tests).
                let url = req.url()?;
                let key = url
                    .query_pairs()
                    .find(|(k, _)| k == "dedupe_key")
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                let rows: Vec<EmailJson> = self.rows(
                    "SELECT email_json FROM queue WHERE dedupe_key = ?",
                    vec![key.as_str().into()],
                )?;
                match rows.into_iter().next() {
                    Some(r) => Response::from_json(&serde_json::from_str::<serde_json::Value>(
                        &r.email_json,
                    )?),
                    None => Response::error("no such email", 404),
                }
            }
            _ => Response::error("not found", 404),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        self.ensure_schema()?;
        if self.busy.get() {
            // Alarms are at-least-once and may overlap with a run of this instance that is still
            // awaiting a provider; that run re-arms when it ends.
            return Response::ok("busy");
        }
        self.busy.set(true);
        self.rows_read.set(0);
        let started = now_ms();
        let result = self.process().await;
        self.busy.set(false);
        if result.is_ok() {
            let _ = self.set_state(LAST_ALARM_ROWS_READ, self.rows_read.get() as i64);
            let _ = self.set_state(LAST_ALARM_MS, now_ms() - started);
        }
        if let Err(e) = result {
            worker::console_error!("outbox alarm failed: {e}");
            // Re-arm before failing so the queue never stalls if the platform stops retrying.
            let _ = self.rearm(now_ms() + 1_000).await;
            return Err(e);
        }
        Response::ok(format!("rows_read={}", self.rows_read.get()))
    }
}
