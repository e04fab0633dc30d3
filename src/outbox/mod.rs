//! The outbox: one Durable Object (SQLite-backed) that is the single sender of every email.
//!
//! Queue rows live in the object's SQLite. The policy (`crate::domain::outbox`,
//! `crate::domain::marketing`) decides; this file carries it out:
//! - `POST /enqueue` stores an email once per dedupe key (a second enqueue is a no-op) and re-arms
//!   the alarm;
//! - `alarm()` sends every queued owner alert at once, then at most one client email if the client
//!   slot is open, records outcomes (also in D1), and re-arms for the next thing to do;
//! - `POST /redrive` puts a dead letter back in line with a fresh attempt budget (same row, same
//!   dedupe key: it cannot be sent twice).
//!
//! # The gap between "provider accepted" and "we recorded it"
//!
//! A row is marked `sending` (with its provider and time) before the hand-over. An alarm that finds
//! a row in `sending` knows the previous run died in between (a crash, an eviction, a deploy): the
//! row goes back in line with `maybe_handed_to` / `maybe_handed_at_ms` set, and is sent again:
//! - with **Resend**, the retry carries the same `Idempotency-Key` and byte-identical payload, so
//!   Resend answers the first result instead of sending again: the email ends `sent`;
//! - with **Cloudflare Email Service or SMTP**, nobody can tell whether the first hand-over went
//!   through: the email is re-sent with the same deterministic Message-ID (SMTP; Cloudflare sets
//!   its own) and ends `sent_possibly_twice`, visible to the operator. Losing a booking email is
//!   worse than a rare duplicate.
//!
//! A lost answer (a timeout or broken connection after the request or DATA went out) is handled the
//! same way and is never treated as a refusal. The decision is
//! `crate::domain::outbox::status_after_success`.
//!
//! Every pick uses a partial index (`queue_ready`, `queue_waiting`, …), so an alarm reads a
//! handful of rows whatever the queue length.

pub mod client;
pub mod providers;
pub mod resend;
pub mod smtp;

use crate::config::{Config, MainProvider, DB_BINDING};
use crate::domain::content_lock::{self, ContentLock};
use crate::domain::email::{Audience, DedupeKey, EmailStatus, OutgoingEmail, Rank};
use crate::domain::marketing::{self, DeferReason, MarketingDecision, SkipReason, Suppression};
use crate::domain::outbox::{
    after_failure_with_hint, choose_provider, classify_cloudflare_code, merge_maybe_handed_over,
    next_wake, status_after_success, AfterFailure, Availability, Provider, ProviderChoice,
    ProviderErrorClass, QueueFacts, DAY_MS,
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

/// Tables; indexes come after the column migrations in [`MIGRATIONS`].
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
  record_synced       INTEGER NOT NULL DEFAULT 1,
  recipient           TEXT,
  budget_from         INTEGER NOT NULL DEFAULT 0,
  maybe_handed_to     TEXT,
  maybe_handed_at_ms  INTEGER
);
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

/// Columns added after the first release (an `ALTER` that finds the column already there fails
/// harmlessly), then every index.
const MIGRATIONS: [&str; 4] = [
    "ALTER TABLE queue ADD COLUMN recipient TEXT",
    "ALTER TABLE queue ADD COLUMN budget_from INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE queue ADD COLUMN maybe_handed_to TEXT",
    "ALTER TABLE queue ADD COLUMN maybe_handed_at_ms INTEGER",
];

const INDEXES: &str = "
CREATE INDEX IF NOT EXISTS queue_ready ON queue(audience, rank, seq) WHERE status = 'queued';
CREATE INDEX IF NOT EXISTS queue_waiting ON queue(not_before_ms) WHERE status = 'waiting';
CREATE INDEX IF NOT EXISTS queue_waiting_booking ON queue(seq)
  WHERE status = 'waiting' AND audience = 'client' AND rank < 3;
CREATE INDEX IF NOT EXISTS queue_sending ON queue(seq) WHERE status = 'sending';
CREATE INDEX IF NOT EXISTS queue_unsynced ON queue(seq) WHERE record_synced = 0;
CREATE INDEX IF NOT EXISTS queue_marketing_sent ON queue(sent_at_ms)
  WHERE rank = 3 AND sent_at_ms IS NOT NULL;
CREATE INDEX IF NOT EXISTS queue_marketing_person ON queue(recipient, sent_at_ms)
  WHERE rank = 3 AND sent_at_ms IS NOT NULL;
";

/// Schema version kept in `state` (`schema_version`); bump when [`MIGRATIONS`] grows.
const SCHEMA_VERSION: i64 = 2;

/// `state` keys.
const NEXT_SLOT_AT: &str = "next_slot_at_ms";
const MAIN_PAUSED_UNTIL: &str = "main_paused_until_ms";
const SMTP_PAUSED_UNTIL: &str = "smtp_paused_until_ms";
/// Marketing is held (daily cap reached) until then, ms UTC.
const MARKETING_HELD_UNTIL: &str = "marketing_held_until_ms";
/// Cost of the last alarm: SQLite rows read, and wall time in ms (observability and benchmarks).
const LAST_ALARM_ROWS_READ: &str = "last_alarm_rows_read";
const LAST_ALARM_MS: &str = "last_alarm_ms";
const SCHEMA_VERSION_KEY: &str = "schema_version";

/// Most owner alerts sent in one alarm (the rest go in the next, a millisecond later).
const OWNER_BATCH: usize = 10;

/// A client email whose suppression could not be read (D1 unavailable) waits this long, ms; no
/// attempt is counted (nothing was tried).
const SUPPRESSION_RETRY_MS: i64 = 30_000;

use crate::platform::{now_ms, random_u64};

/// One failed hand-over, whichever provider: the class decides what happens next
/// (`crate::domain::outbox::after_failure_with_hint`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendFailure {
    pub class: ProviderErrorClass,
    /// The provider's words (code, reply, error name), kept in `last_error` and owner alerts.
    pub message: String,
    /// The email may have reached the provider (lost answer): the outcome is unknown, never a
    /// refusal.
    pub maybe_handed_over: bool,
    /// The provider's `Retry-After`, ms, if it gave one.
    pub retry_after_ms: Option<i64>,
    /// What this failure teaches about the address (a permanent recipient refusal → hard bounce).
    pub suppress: Option<Suppression>,
    /// Only the owner can fix the cause (plan, quota, account): alert them even if the email
    /// fails over.
    pub owner_must_act: bool,
}

impl Default for SendFailure {
    fn default() -> Self {
        Self {
            class: ProviderErrorClass::Transient,
            message: String::new(),
            maybe_handed_over: false,
            retry_after_ms: None,
            suppress: None,
            owner_must_act: false,
        }
    }
}

impl From<smtp::SmtpFailure> for SendFailure {
    fn from(f: smtp::SmtpFailure) -> Self {
        Self {
            class: f.class,
            message: format!("SMTP {}: {}", f.stage, f.message),
            maybe_handed_over: f.maybe_handed_over,
            retry_after_ms: None,
            // 550/551/553 to RCPT: the mailbox does not exist (or is refused for good).
            suppress: (f.class == ProviderErrorClass::RecipientRejected)
                .then_some(Suppression::HardBounce),
            owner_must_act: f.auth_failed,
        }
    }
}

/// One queue row as read for sending.
#[derive(Debug, Clone, Deserialize)]
struct Row {
    seq: i64,
    email_json: String,
    attempts: i64,
    budget_from: i64,
    maybe_handed_to: Option<String>,
    maybe_handed_at_ms: Option<i64>,
}

impl Row {
    fn maybe_handed_over(&self) -> Option<(Provider, i64)> {
        let provider = Provider::parse(self.maybe_handed_to.as_deref()?)?;
        Some((provider, self.maybe_handed_at_ms.unwrap_or(0)))
    }
}

/// Whether a client email may go to a provider now ([`Outbox::gate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    Open,
    Held,
}

/// What one attempt at the head of a lane came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attempted {
    /// A provider accepted it (the client slot is used).
    Sent,
    /// Not handed over (failed, skipped, blocked, deferred).
    NotSent,
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
    budget_from: i64,
    not_before_ms: i64,
    enqueued_at_ms: i64,
    provider: Option<String>,
    provider_message_id: Option<String>,
    last_error: Option<String>,
    sent_at_ms: Option<i64>,
    maybe_handed_to: Option<String>,
}

const ITEM_COLUMNS: &str =
    "seq, dedupe_key, audience, rank, status, attempts, budget_from, not_before_ms, \
     enqueued_at_ms, provider, provider_message_id, last_error, sent_at_ms, maybe_handed_to";

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

#[derive(Deserialize)]
struct StatusRow {
    seq: i64,
    status: String,
}

/// `GET /state` query: `status`, `dedupe_key`, `limit`.
#[derive(Debug, Default)]
struct ViewFilter {
    status: Option<String>,
    dedupe_key: Option<String>,
    limit: Option<u32>,
}

impl ViewFilter {
    fn from_url(url: &worker::Url) -> std::result::Result<Self, String> {
        let mut f = ViewFilter::default();
        for (k, v) in url.query_pairs() {
            match k.as_ref() {
                "status" => {
                    if EmailStatus::parse(&v).is_none() {
                        return Err(format!("status {v:?} is not an email status (queued, waiting, sending, sent, sent_possibly_twice, dead, dropped, blocked, skipped)"));
                    }
                    f.status = Some(v.into_owned());
                }
                "dedupe_key" => f.dedupe_key = Some(v.into_owned()),
                "limit" => {
                    f.limit = Some(
                        v.parse::<u32>()
                            .ok()
                            .filter(|n| (1..=500).contains(n))
                            .ok_or_else(|| format!("limit {v:?} is not a number from 1 to 500"))?,
                    )
                }
                other => {
                    return Err(format!(
                        "unknown query parameter {other:?} (status, dedupe_key, limit)"
                    ))
                }
            }
        }
        Ok(f)
    }
}

/// `POST /redrive` body.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RedriveRequest {
    dedupe_key: String,
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
        if self.schema_ready.get() {
            return Ok(());
        }
        self.sql().exec(SCHEMA, None)?;
        if self.get_state(SCHEMA_VERSION_KEY)?.unwrap_or(0) < SCHEMA_VERSION {
            for alter in MIGRATIONS {
                // "duplicate column name" on a table created with the column: nothing to do. Any
                // other error is real and stops here.
                if let Err(e) = self.sql().exec(alter, None) {
                    if !e.to_string().contains("duplicate column") {
                        return Err(e);
                    }
                }
            }
            self.set_state(SCHEMA_VERSION_KEY, SCHEMA_VERSION)?;
        }
        self.sql().exec(INDEXES, None)?;
        self.schema_ready.set(true);
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
        crate::platform::config_or_err(&self.env)
    }

    fn availability(&self, cfg: &Config) -> Result<Availability> {
        Ok(Availability {
            main: match cfg.main_provider {
                MainProvider::Cloudflare => Provider::Cloudflare,
                MainProvider::Resend { .. } => Provider::Resend,
            },
            main_paused_until_ms: self.get_state(MAIN_PAUSED_UNTIL)?,
            smtp_configured: cfg.smtp.is_some(),
            smtp_paused_until_ms: self.get_state(SMTP_PAUSED_UNTIL)?,
        })
    }

    /// Stores `email` unless its dedupe key is already in the outbox. Returns `true` if new.
    fn enqueue(&self, email: &OutgoingEmail, now: i64) -> Result<bool> {
        let cursor = self.exec(
            "INSERT INTO queue (dedupe_key, audience, rank, status, email_json, enqueued_at_ms, updated_at_ms, recipient) \
             VALUES (?, ?, ?, 'queued', ?, ?, ?, ?) ON CONFLICT(dedupe_key) DO NOTHING",
            vec![
                email.dedupe_key.as_str().into(),
                email.audience.as_str().into(),
                email.rank.as_i64().into(),
                serde_json::to_string(email)?.into(),
                now.into(),
                now.into(),
                email.to.as_str().to_ascii_lowercase().into(),
            ],
        )?;
        Ok(cursor.rows_written() > 0)
    }

    /// Highest rank number the client lane may pick now: marketing (3) unless it is held (daily
    /// cap) or booking mail is backing off (marketing never goes ahead of booking mail).
    fn client_rank_limit(&self, now: i64) -> Result<i64> {
        let held = self.get_state(MARKETING_HELD_UNTIL)?.unwrap_or(0) > now;
        if held || self.booking_mail_waiting()? {
            Ok(Rank::Service.as_i64())
        } else {
            Ok(Rank::Marketing.as_i64())
        }
    }

    /// Some non-marketing client email is backing off (`queue_waiting_booking`).
    fn booking_mail_waiting(&self) -> Result<bool> {
        let rows: Vec<ValueRow> = self.rows(
            "SELECT seq AS value FROM queue WHERE status = 'waiting' AND audience = 'client' AND rank < 3 LIMIT 1",
            vec![],
        )?;
        Ok(!rows.is_empty())
    }

    /// The next queued item of `audience` up to `max_rank`: lowest rank, then oldest, through
    /// `queue_ready`.
    fn pick(&self, audience: Audience, max_rank: i64) -> Result<Option<Row>> {
        let rows: Vec<Row> = self.rows(
            "SELECT seq, email_json, attempts, budget_from, maybe_handed_to, maybe_handed_at_ms FROM queue \
             WHERE status = 'queued' AND audience = ? AND rank <= ? ORDER BY rank, seq LIMIT 1",
            vec![audience.as_str().into(), max_rank.into()],
        )?;
        Ok(rows.into_iter().next())
    }

    fn any_queued(&self, audience: Audience, min_rank: i64, max_rank: i64) -> Result<bool> {
        let rows: Vec<ValueRow> = self.rows(
            "SELECT seq AS value FROM queue WHERE status = 'queued' AND audience = ? AND rank >= ? AND rank <= ? LIMIT 1",
            vec![audience.as_str().into(), min_rank.into(), max_rank.into()],
        )?;
        Ok(!rows.is_empty())
    }

    fn facts(&self, now: i64) -> Result<QueueFacts> {
        let waiting: Vec<ValueRow> = self.rows(
            "SELECT not_before_ms AS value FROM queue WHERE status = 'waiting' ORDER BY not_before_ms LIMIT 1",
            vec![],
        )?;
        Ok(QueueFacts {
            owner_ready: self.any_queued(Audience::Owner, 0, Rank::Marketing.as_i64())?,
            client_ready: self.any_queued(Audience::Client, 0, self.client_rank_limit(now)?)?,
            earliest_waiting_ms: waiting.into_iter().next().and_then(|r| r.value),
        })
    }

    /// Sets the alarm for the next thing to do. Never `now` itself: an alarm set to the current
    /// millisecond inside `alarm()` can be dropped (workerd#6866), so at least now + 1 ms.
    async fn rearm(&self, now: i64) -> Result<Option<i64>> {
        let cfg = self.config()?;
        let mut wake = match choose_provider(now, self.availability(&cfg)?) {
            // No provider before `t`: nothing can be sent, except that backoffs ending earlier
            // only move rows back in line, which the alarm at `t` does anyway.
            ProviderChoice::WaitUntil(t) => {
                let f = self.facts(now)?;
                (f.owner_ready || f.client_ready || f.earliest_waiting_ms.is_some()).then_some(t)
            }
            ProviderChoice::Send(_) => {
                let next_slot = self.get_state(NEXT_SLOT_AT)?.unwrap_or(0);
                let mut wake = next_wake(now, next_slot, self.facts(now)?);
                // Marketing held by its daily cap: look again when the hold ends.
                let held_until = self.get_state(MARKETING_HELD_UNTIL)?.unwrap_or(0);
                if held_until > now
                    && self.any_queued(
                        Audience::Client,
                        Rank::Marketing.as_i64(),
                        Rank::Marketing.as_i64(),
                    )?
                {
                    let at = held_until.max(next_slot);
                    wake = Some(wake.map_or(at, |w| w.min(at)));
                }
                wake
            }
        };
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
        // Interrupted hand-overs (see the module docs): logged, then back in line with the
        // uncertain hand-over on record. A non-idempotent provider's uncertainty is kept.
        self.exec(
            "INSERT OR IGNORE INTO attempts (seq, attempt, provider, at_ms, outcome, error) \
             SELECT seq, attempts, provider, ?, 'interrupted', 'the run died between the hand-over and its record' \
             FROM queue WHERE status = 'sending'",
            vec![now.into()],
        )?;
        self.exec(
            "UPDATE queue SET status = 'queued', updated_at_ms = ?, \
               maybe_handed_at_ms = CASE WHEN maybe_handed_to IS NOT NULL AND maybe_handed_to != 'resend' \
                 THEN maybe_handed_at_ms ELSE updated_at_ms END, \
               maybe_handed_to = CASE WHEN maybe_handed_to IS NOT NULL AND maybe_handed_to != 'resend' \
                 THEN maybe_handed_to ELSE provider END \
             WHERE status = 'sending'",
            vec![now.into()],
        )?;
        // Backoffs that ended: back in line, keeping their rank and arrival order.
        self.exec(
            "UPDATE queue SET status = 'queued', updated_at_ms = ? WHERE status = 'waiting' AND not_before_ms <= ?",
            vec![now.into(), now.into()],
        )?;

        if let ProviderChoice::Send(_) = choose_provider(now, self.availability(&cfg)?) {
            for _ in 0..OWNER_BATCH {
                match self.pick(Audience::Owner, Rank::Marketing.as_i64())? {
                    Some(row) => {
                        self.attempt(row, &cfg).await?;
                    }
                    None => break,
                }
            }
            let next_slot = self.get_state(NEXT_SLOT_AT)?.unwrap_or(0);
            let t = now_ms();
            if t >= next_slot {
                if let Some(row) = self.pick(Audience::Client, self.client_rank_limit(t)?)? {
                    if self.attempt(row, &cfg).await? == Attempted::Sent {
                        let sent_at = now_ms();
                        self.set_state(
                            NEXT_SLOT_AT,
                            cfg.pacing.next_slot_after(sent_at, random_u64()),
                        )?;
                    }
                }
            }
        }

        self.sync_records().await;
        self.rearm(now_ms()).await?;
        Ok(())
    }

    /// Checks that must pass before a client email reaches any provider: the content lock, the
    /// suppression list (D1, read now: an unsubscribe or bounce since enqueue counts), and for
    /// marketing the daily cap and one-per-person-per-day. `Held`: not sent now (the row is
    /// already parked, blocked, skipped or left queued behind a marketing hold).
    async fn gate(&self, row: &Row, email: &OutgoingEmail, cfg: &Config) -> Result<Gate> {
        // Content lock: nothing internal reaches a client (owner alerts may carry admin and action
        // links, never unrendered placeholders). A locked email never reaches a provider.
        let lock = ContentLock::from_config(&cfg.public_base_url, &cfg.internal_names);
        if let Err(violations) = lock.check(email) {
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
            self.alert_owner(email, row, "blocked", &summary, cfg, at)?;
            return Ok(Gate::Held);
        }
        if email.audience == Audience::Owner {
            return Ok(Gate::Open);
        }
        let suppression = match self.env.d1(DB_BINDING) {
            Ok(db) => store::suppressions::get(&db, email.to.as_str()).await,
            Err(e) => Err(e),
        };
        let suppression = match suppression {
            Ok(s) => s,
            Err(e) => {
                let at = now_ms();
                let reason = format!("suppression list unavailable: {e}");
                self.park(row.seq, "waiting", at + SUPPRESSION_RETRY_MS, &reason, at)?;
                return Ok(Gate::Held);
            }
        };
        if suppression.suppresses(email.rank) {
            let at = now_ms();
            let reason = format!("suppressed: {}", suppression.as_str());
            self.park(row.seq, EmailStatus::Skipped.as_str(), 0, &reason, at)?;
            // Booking mail that cannot go is the owner's business; a skipped marketing email is not.
            if email.rank != Rank::Marketing {
                self.alert_owner(email, row, "skipped", &reason, cfg, at)?;
            }
            return Ok(Gate::Held);
        }
        if email.rank == Rank::Marketing {
            let now = now_ms();
            let day_start = now.div_euclid(DAY_MS) * DAY_MS;
            let total: Vec<ValueRow> = self.rows(
                "SELECT COUNT(*) AS value FROM queue WHERE rank = 3 AND sent_at_ms IS NOT NULL AND sent_at_ms >= ?",
                vec![day_start.into()],
            )?;
            let person: Vec<ValueRow> = self.rows(
                "SELECT COUNT(*) AS value FROM queue WHERE rank = 3 AND sent_at_ms IS NOT NULL AND recipient = ? AND sent_at_ms >= ?",
                vec![email.to.as_str().to_ascii_lowercase().into(), day_start.into()],
            )?;
            let count = |r: Vec<ValueRow>| {
                u32::try_from(r.into_iter().next().and_then(|r| r.value).unwrap_or(0))
                    .unwrap_or(u32::MAX)
            };
            match marketing::may_send(
                now,
                count(total),
                count(person),
                suppression,
                self.booking_mail_waiting()?,
                cfg.marketing,
            ) {
                MarketingDecision::Send => {}
                MarketingDecision::Skip(SkipReason::Suppressed(s)) => {
                    let reason = format!("suppressed: {}", s.as_str());
                    self.park(row.seq, EmailStatus::Skipped.as_str(), 0, &reason, now)?;
                    return Ok(Gate::Held);
                }
                MarketingDecision::Defer {
                    until_ms,
                    reason: DeferReason::PersonAlreadyServed,
                } => {
                    // This one email waits for the next UTC day; others keep going.
                    self.park(
                        row.seq,
                        "waiting",
                        until_ms,
                        "one marketing email per person per UTC day: waits for the next day",
                        now,
                    )?;
                    return Ok(Gate::Held);
                }
                MarketingDecision::Defer { until_ms, .. } => {
                    // The email stays queued in its place; the lane skips marketing until then.
                    self.set_state(MARKETING_HELD_UNTIL, until_ms)?;
                    return Ok(Gate::Held);
                }
            }
        }
        Ok(Gate::Open)
    }

    /// Tries to send one row.
    async fn attempt(&self, row: Row, cfg: &Config) -> Result<Attempted> {
        let email: OutgoingEmail = serde_json::from_str(&row.email_json)?;
        if self.gate(&row, &email, cfg).await? == Gate::Held {
            return Ok(Attempted::NotSent);
        }
        let mut attempts = row.attempts;
        let mut budget_from = row.budget_from;
        let mut maybe = row.maybe_handed_over();
        let ProviderChoice::Send(mut provider) = choose_provider(now_ms(), self.availability(cfg)?)
        else {
            return Ok(Attempted::NotSent);
        };
        // At most three hand-overs per pick: the main provider, then SMTP on a failover, and the
        // main provider again if SMTP itself is paused on the way.
        for _ in 0..3 {
            attempts += 1;
            let started = now_ms();
            self.exec(
                "UPDATE queue SET status = 'sending', attempts = ?, provider = ?, updated_at_ms = ? WHERE seq = ?",
                vec![attempts.into(), provider.as_str().into(), started.into(), row.seq.into()],
            )?;
            let result = self.hand_over(provider, &email, cfg).await;
            let at = now_ms();
            let failure = match result {
                Ok(provider_message_id) => {
                    let status = status_after_success(maybe, provider, at);
                    self.log_attempt(row.seq, attempts, provider, at, status.as_str(), None)?;
                    self.exec(
                        "UPDATE queue SET status = ?, provider_message_id = ?, sent_at_ms = ?, last_error = NULL, \
                         updated_at_ms = ?, record_synced = 0 WHERE seq = ?",
                        vec![status.as_str().into(), provider_message_id.into(), at.into(), at.into(), row.seq.into()],
                    )?;
                    return Ok(Attempted::Sent);
                }
                Err(failure) => failure,
            };
            self.log_attempt(
                row.seq,
                attempts,
                provider,
                at,
                "failed",
                Some(&failure.message),
            )?;
            if failure.maybe_handed_over {
                // Unknown outcome: kept, so the eventual success is judged by the restart rule.
                let merged = merge_maybe_handed_over(maybe, (provider, started));
                maybe = Some(merged);
                self.exec(
                    "UPDATE queue SET maybe_handed_to = ?, maybe_handed_at_ms = ? WHERE seq = ?",
                    vec![merged.0.as_str().into(), merged.1.into(), row.seq.into()],
                )?;
            }
            if let Some(s) = failure.suppress {
                self.learn_suppression(&email, s, provider, &failure.message)
                    .await;
            }
            let decision = after_failure_with_hint(
                failure.class,
                provider,
                u32::try_from(attempts - budget_from).unwrap_or(u32::MAX),
                at,
                cfg.backoff,
                random_u64(),
                failure.retry_after_ms,
            );
            let pause = match decision {
                AfterFailure::FailOver {
                    pause_main_until_ms,
                } => Some((pause_main_until_ms, false)),
                AfterFailure::PauseProvider { .. } => {
                    Some((at.saturating_add(cfg.provider_auth_pause_ms), true))
                }
                _ => None,
            };
            if let Some((until, credentials)) = pause {
                // The provider is the problem, not the email: this attempt does not count.
                budget_from += 1;
                self.exec(
                    "UPDATE queue SET budget_from = ? WHERE seq = ?",
                    vec![budget_from.into(), row.seq.into()],
                )?;
                let key = if provider.is_main() {
                    MAIN_PAUSED_UNTIL
                } else {
                    SMTP_PAUSED_UNTIL
                };
                self.set_state(key, until)?;
                let next = choose_provider(at, self.availability(cfg)?);
                if credentials || failure.owner_must_act {
                    let fallback = match next {
                        ProviderChoice::Send(p) if p != provider => Some(p.as_str()),
                        _ => None,
                    };
                    self.alert_provider(
                        provider,
                        until,
                        &failure.message,
                        fallback,
                        credentials,
                        cfg,
                        at,
                    )?;
                }
                match next {
                    ProviderChoice::Send(p) if p != provider => {
                        provider = p;
                        continue;
                    }
                    ProviderChoice::Send(_) => {
                        self.park(row.seq, "waiting", until, &failure.message, at)?;
                    }
                    ProviderChoice::WaitUntil(t) => {
                        self.park(row.seq, "waiting", t, &failure.message, at)?;
                    }
                }
                return Ok(Attempted::NotSent);
            }
            match decision {
                AfterFailure::RetryAt { at_ms } => {
                    self.park(row.seq, "waiting", at_ms, &failure.message, at)?;
                }
                AfterFailure::DeadLetter => {
                    self.park(row.seq, "dead", 0, &failure.message, at)?;
                    self.alert_owner(
                        &email,
                        &row_with(&row, attempts, budget_from),
                        "dead",
                        &failure.message,
                        cfg,
                        at,
                    )?;
                }
                AfterFailure::Drop => {
                    self.park(row.seq, "dropped", 0, &failure.message, at)?;
                    self.alert_owner(
                        &email,
                        &row_with(&row, attempts, budget_from),
                        "dropped",
                        &failure.message,
                        cfg,
                        at,
                    )?;
                }
                AfterFailure::FailOver { .. } | AfterFailure::PauseProvider { .. } => {}
            }
            return Ok(Attempted::NotSent);
        }
        Ok(Attempted::NotSent)
    }

    /// Records what a refusal taught about an address (best effort: a D1 failure is logged; the
    /// provider will refuse the address again next time anyway).
    async fn learn_suppression(
        &self,
        email: &OutgoingEmail,
        s: Suppression,
        provider: Provider,
        detail: &str,
    ) {
        let result = match self.env.d1(DB_BINDING) {
            Ok(db) => {
                store::suppressions::record(
                    &db,
                    email.to.as_str(),
                    s,
                    provider.as_str(),
                    Some(detail),
                    now_ms(),
                )
                .await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            worker::console_error!("outbox: recording suppression of {} failed: {e}", email.to);
        }
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

    /// Queues the owner's alert about a dropped, dead, blocked or skipped client email (never
    /// about an owner alert: that would loop). A redriven email that fails again gets a new alert
    /// (its key carries the redrive count).
    fn alert_owner(
        &self,
        email: &OutgoingEmail,
        row: &Row,
        outcome: &str,
        reason: &str,
        cfg: &Config,
        now: i64,
    ) -> Result<()> {
        if email.audience == Audience::Owner {
            return Ok(());
        }
        let mut alert = render::owner_email_failed(
            email,
            outcome,
            row.attempts,
            reason,
            &cfg.owner_email,
            &cfg.branding,
        )
        .map_err(|e| worker::Error::RustError(e.to_string()))?;
        if row.budget_from > 0 {
            let key = format!("{}#{}", alert.dedupe_key, row.budget_from);
            if let Some(k) = DedupeKey::from_stored(&key) {
                alert.message_id =
                    crate::domain::ids::message_id_for(k.as_str(), cfg.branding.from.domain());
                alert.dedupe_key = k;
            }
        }
        self.enqueue(&alert, now)?;
        Ok(())
    }

    /// Queues the owner's alert that `provider` is paused (one per provider per UTC day).
    #[allow(clippy::too_many_arguments)]
    fn alert_provider(
        &self,
        provider: Provider,
        until_ms: i64,
        reason: &str,
        fallback: Option<&str>,
        credentials: bool,
        cfg: &Config,
        now: i64,
    ) -> Result<()> {
        let alert = render::owner_provider_paused(
            &render::ProviderPaused {
                provider: provider.as_str(),
                until_ms,
                reason,
                fallback,
                credentials,
                now_ms: now,
            },
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
    ) -> std::result::Result<String, SendFailure> {
        match provider {
            Provider::Cloudflare => providers::send_cloudflare(&self.env, email, &cfg.branding)
                .await
                .map_err(|f| {
                    let class = classify_cloudflare_code(f.code.as_deref());
                    SendFailure {
                        class,
                        message: match &f.code {
                            Some(code) => format!("{code}: {}", f.message),
                            None => f.message,
                        },
                        // An error without a code after the call went out: unknown outcome.
                        maybe_handed_over: f.code.is_none() && f.handed_over,
                        suppress: (f.code.as_deref() == Some("E_RECIPIENT_SUPPRESSED"))
                            .then_some(Suppression::HardBounce),
                        ..SendFailure::default()
                    }
                }),
            Provider::Resend => match &cfg.main_provider {
                MainProvider::Resend { api_key, base_url } => {
                    resend::send(api_key, base_url, email, &cfg.branding).await
                }
                MainProvider::Cloudflare => Err(SendFailure {
                    class: ProviderErrorClass::Transient,
                    message: "Resend is not the configured main provider (MAIN_PROVIDER)".into(),
                    ..SendFailure::default()
                }),
            },
            Provider::Smtp => {
                let Some(smtp_cfg) = cfg.smtp.as_ref() else {
                    return Err(SendFailure {
                        class: ProviderErrorClass::Transient,
                        message: "SMTP failover is not configured (SMTP_HOST is empty)".into(),
                        ..SendFailure::default()
                    });
                };
                let message =
                    render::to_mime(email, &cfg.branding, now_ms() / 1000).map_err(|e| {
                        SendFailure {
                            class: ProviderErrorClass::Permanent,
                            message: e.to_string(),
                            ..SendFailure::default()
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
                .map_err(SendFailure::from)
            }
        }
    }

    /// Puts a dead letter back in line: same row, same dedupe key, a fresh attempt budget. Any other
    /// status is refused (a queued, sending or sent email cannot be redriven, so a redrive can never
    /// send twice).
    fn redrive(&self, dedupe_key: &str, now: i64) -> Result<Response> {
        let rows: Vec<StatusRow> = self.rows(
            "SELECT seq, status FROM queue WHERE dedupe_key = ?",
            vec![dedupe_key.into()],
        )?;
        let Some(row) = rows.into_iter().next() else {
            return json_response(
                404,
                json!({"error": "not_found", "message": format!("no email with dedupe key {dedupe_key:?} in the outbox")}),
            );
        };
        if row.status != EmailStatus::Dead.as_str() {
            return json_response(
                409,
                json!({
                    "error": "conflict",
                    "message": format!("{dedupe_key} is {}, not a dead letter; only dead letters can be redriven", row.status),
                    "status": row.status,
                }),
            );
        }
        self.exec(
            "UPDATE queue SET status = 'queued', budget_from = attempts, not_before_ms = 0, \
             updated_at_ms = ?, record_synced = 0 WHERE seq = ? AND status = 'dead'",
            vec![now.into(), row.seq.into()],
        )?;
        json_response(200, json!({"status": "queued", "dedupeKey": dedupe_key}))
    }

    /// Writes outcomes to D1 for rows whose record lags (`record_synced = 0`). A D1 failure leaves
    /// the row unsynced for the next alarm; the send itself is never repeated for it.
    async fn sync_records(&self) {
        let rows: Vec<ItemView> = match self.rows(
            &format!(
                "SELECT {ITEM_COLUMNS} FROM queue WHERE record_synced = 0 ORDER BY seq LIMIT 20"
            ),
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

    /// `GET /state`: counts by status, provider and lane state, and the newest items (default 200,
    /// at most 500) with their attempts, optionally only those of one `status` or one
    /// `dedupe_key`. `truncated` is true when more items match than are listed. An operator view
    /// (a `status` filter scans the queue); never used by the alarm.
    fn view(&self, filter: &ViewFilter) -> Result<serde_json::Value> {
        let limit = filter.limit.unwrap_or(200).clamp(1, 500);
        let mut query = format!("SELECT {ITEM_COLUMNS} FROM queue");
        let mut binds: Vec<V> = Vec::new();
        let mut conditions = Vec::new();
        if let Some(status) = &filter.status {
            conditions.push("status = ?");
            binds.push(status.as_str().into());
        }
        if let Some(key) = &filter.dedupe_key {
            conditions.push("dedupe_key = ?");
            binds.push(key.as_str().into());
        }
        if !conditions.is_empty() {
            query.push_str(&format!(" WHERE {}", conditions.join(" AND ")));
        }
        query.push_str(&format!(" ORDER BY seq DESC LIMIT {}", limit + 1));
        let mut items: Vec<ItemView> = self.rows(&query, binds)?;
        let truncated = items.len() > limit as usize;
        items.truncate(limit as usize);
        let (low, high) = match (items.last(), items.first()) {
            (Some(l), Some(h)) => (l.seq, h.seq),
            _ => (0, -1),
        };
        let attempts: Vec<AttemptView> = self.rows(
            "SELECT seq, attempt, provider, at_ms, outcome, error FROM attempts WHERE seq BETWEEN ? AND ? \
             ORDER BY seq DESC, attempt DESC LIMIT 2000",
            vec![low.into(), high.into()],
        )?;
        let listed: std::collections::HashSet<i64> = items.iter().map(|i| i.seq).collect();
        let attempts: Vec<AttemptView> = attempts
            .into_iter()
            .filter(|a| listed.contains(&a.seq))
            .collect();
        let counts: Vec<StatusCount> = self.rows(
            "SELECT status, COUNT(*) AS n FROM queue GROUP BY status",
            vec![],
        )?;
        Ok(json!({
            "nextSlotAtMs": self.get_state(NEXT_SLOT_AT)?,
            "mainPausedUntilMs": self.get_state(MAIN_PAUSED_UNTIL)?,
            "smtpPausedUntilMs": self.get_state(SMTP_PAUSED_UNTIL)?,
            "marketingHeldUntilMs": self.get_state(MARKETING_HELD_UNTIL)?,
            "lastAlarm": {
                "rowsRead": self.get_state(LAST_ALARM_ROWS_READ)?,
                "ms": self.get_state(LAST_ALARM_MS)?,
            },
            "counts": counts.into_iter().map(|c| (c.status, c.n)).collect::<std::collections::BTreeMap<_, _>>(),
            "truncated": truncated,
            "items": items,
            "attempts": attempts,
        }))
    }
}

/// A copy of `row` with the counts as they are after this attempt (for alerts).
fn row_with(row: &Row, attempts: i64, budget_from: i64) -> Row {
    Row {
        attempts,
        budget_from,
        ..row.clone()
    }
}

fn json_response(status: u16, body: serde_json::Value) -> Result<Response> {
    Ok(Response::from_json(&body)?.with_status(status))
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
            (Method::Post, "/redrive") => {
                let body: RedriveRequest = match req.json().await {
                    Ok(b) => b,
                    Err(e) => {
                        return json_response(
                            400,
                            json!({"error": "invalid_payload", "message": format!("expected {{\"dedupeKey\": \"…\"}}: {e}"), "field": "dedupeKey"}),
                        )
                    }
                };
                let now = now_ms();
                let resp = self.redrive(body.dedupe_key.trim(), now)?;
                self.sync_records().await;
                self.rearm(now).await?;
                Ok(resp)
            }
            (Method::Get, "/state") => match ViewFilter::from_url(&req.url()?) {
                Ok(filter) => Response::from_json(&self.view(&filter)?),
                Err(message) => json_response(
                    400,
                    json!({"error": "invalid_payload", "message": message, "field": "query"}),
                ),
            },
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
                    None => json_response(
                        404,
                        json!({"error": "not_found", "message": format!("no email with dedupe key {key:?} in the outbox")}),
                    ),
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
