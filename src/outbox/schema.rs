//! The outbox's SQLite schema (Durable Object storage): the `queue`, `attempts`, `state` and
//! `route_log` tables,
//! the column migrations added since the first release, and the partial indexes every pick of the
//! alarm goes through. [`Outbox::ensure_schema`] brings any stored instance up to date once per
//! object lifetime.

use super::storage::StateKey;
use super::Outbox;
use worker::Result;

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
  maybe_handed_at_ms  INTEGER,
  intent_booking_id   TEXT,
  journey_version     INTEGER,
  expires_at_ms       INTEGER,
  operator_decision   TEXT,
  operator_by         TEXT,
  operator_at_ms      INTEGER,
  operator_reason     TEXT,
  route_wait          INTEGER NOT NULL DEFAULT 0,
  moment_ms           INTEGER,
  refused_ours        INTEGER NOT NULL DEFAULT 0,
  set_aside_on        INTEGER NOT NULL DEFAULT 0
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
CREATE TABLE IF NOT EXISTS route_log (
  seq    INTEGER PRIMARY KEY,
  at_ms  INTEGER NOT NULL,
  route  TEXT NOT NULL,
  event  TEXT NOT NULL,
  detail TEXT NOT NULL
);
";

/// Columns added after the first release (an `ALTER` that finds the column already there fails
/// harmlessly), then every index.
const MIGRATIONS: [&str; 15] = [
    "ALTER TABLE queue ADD COLUMN recipient TEXT",
    "ALTER TABLE queue ADD COLUMN budget_from INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE queue ADD COLUMN maybe_handed_to TEXT",
    "ALTER TABLE queue ADD COLUMN maybe_handed_at_ms INTEGER",
    // Intent (`crate::domain::outbox::intent`): the booking an email is withdrawn with, its plan version
    // and the moment it becomes pointless (ms UTC); NULL for email without intent.
    "ALTER TABLE queue ADD COLUMN intent_booking_id TEXT",
    "ALTER TABLE queue ADD COLUMN journey_version INTEGER",
    "ALTER TABLE queue ADD COLUMN expires_at_ms INTEGER",
    // The operator's decision on a blocked email (`release.rs`).
    "ALTER TABLE queue ADD COLUMN operator_decision TEXT",
    "ALTER TABLE queue ADD COLUMN operator_by TEXT",
    "ALTER TABLE queue ADD COLUMN operator_at_ms INTEGER",
    "ALTER TABLE queue ADD COLUMN operator_reason TEXT",
    // 1 while a row waits only because every route is paused (`queue.rs` `park_for_route`).
    "ALTER TABLE queue ADD COLUMN route_wait INTEGER NOT NULL DEFAULT 0",
    // The moment a time-bound guest email should be out by, ms UTC (`crate::domain::outbox::backlog`).
    "ALTER TABLE queue ADD COLUMN moment_ms INTEGER",
    // The providers (`Provider::bit`) that refused this row for a reason of ours since its
    // attempt budget was last renewed (`send.rs`: a second such refusal counts).
    "ALTER TABLE queue ADD COLUMN refused_ours INTEGER NOT NULL DEFAULT 0",
    // The routes (`Provider::bit`) this row is set aside on, waiting for the next different
    // email on that route to tell whether the route refused this message alone (`probe.rs`).
    "ALTER TABLE queue ADD COLUMN set_aside_on INTEGER NOT NULL DEFAULT 0",
];

/// The partial indexes. Their `WHERE` clauses name statuses literally (SQLite uses a partial index
/// only for a query whose `WHERE` implies the index's own, so the queries in `queue.rs` repeat
/// these literals instead of binding them).
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
CREATE INDEX IF NOT EXISTS queue_intent_booking ON queue(intent_booking_id)
  WHERE intent_booking_id IS NOT NULL AND status IN ('queued', 'waiting');
CREATE INDEX IF NOT EXISTS queue_time_bound ON queue(moment_ms)
  WHERE moment_ms IS NOT NULL AND status = 'queued' AND audience = 'client';
CREATE INDEX IF NOT EXISTS queue_set_aside ON queue(seq) WHERE set_aside_on != 0;
CREATE INDEX IF NOT EXISTS queue_finished ON queue(updated_at_ms)
  WHERE status IN ('sent', 'sent_possibly_twice', 'dropped', 'skipped') AND record_synced = 1;
";

/// Schema version kept in `state` (`schema_version`); bump when [`MIGRATIONS`] grows.
const SCHEMA_VERSION: i64 = 8;

impl Outbox {
    /// Creates the tables, runs the column migrations an older instance lacks, and creates the
    /// indexes; a no-op after the first success in this object's lifetime.
    pub(super) fn ensure_schema(&self) -> Result<()> {
        if self.schema_ready.get() {
            return Ok(());
        }
        self.sql().exec(SCHEMA, None)?;
        if self.get_state(StateKey::SchemaVersion)?.unwrap_or(0) < SCHEMA_VERSION {
            for alter in MIGRATIONS {
                // "duplicate column name" on a table created with the column: nothing to do. Any
                // other error is real and stops here.
                if let Err(e) = self.sql().exec(alter, None) {
                    if !e.to_string().contains("duplicate column") {
                        return Err(e);
                    }
                }
            }
            self.set_state(StateKey::SchemaVersion, SCHEMA_VERSION)?;
        }
        self.sql().exec(INDEXES, None)?;
        self.schema_ready.set(true);
        Ok(())
    }
}
