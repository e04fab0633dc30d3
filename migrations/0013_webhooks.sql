-- Outbound webhooks: subscribers, the events the engine publishes, one delivery per
-- (event, subscriber) and every attempt of it. Cloudflare Queues carries the deliveries; D1 is
-- the record. Times are ms since the Unix epoch, UTC.

-- Who receives what. `secret` is a Standard Webhooks `whsec_<base64>` secret (one per
-- subscriber); `event_types` is a space-separated list of event types, or `*` for all.
CREATE TABLE webhook_subscribers (
  subscriber_id     TEXT PRIMARY KEY,          -- sub_<hex>
  url               TEXT NOT NULL,
  secret            TEXT NOT NULL,
  event_types       TEXT NOT NULL,
  description       TEXT,
  enabled           INTEGER NOT NULL DEFAULT 1,
  disabled_reason   TEXT,
  disabled_at_ms    INTEGER,
  created_at_ms     INTEGER NOT NULL,
  updated_at_ms     INTEGER NOT NULL
);

-- One row per fact. `event_id` is derived from what caused the event (src/domain/webhooks.rs),
-- so a replayed Workflow step or a repeated sweep publishes the same id and nothing new. `body`
-- is the exact JSON sent (a redrive sends the same bytes).
CREATE TABLE webhook_events (
  event_id          TEXT PRIMARY KEY,          -- evt_<hex>
  event_type        TEXT NOT NULL,
  booking_id        TEXT,
  body              TEXT NOT NULL,
  created_at_ms     INTEGER NOT NULL
);
CREATE INDEX webhook_events_by_time ON webhook_events(created_at_ms);

-- One delivery per (event, subscriber). `attempts` counts every attempt ever made; a redrive
-- sets `budget_from` to it and counts itself in `redrives`, so the retry ceiling counts only
-- attempts since then. `claim_gen` moves on with every queue message sent for the delivery
-- (publish, the sweeper's re-send, a redrive) and the message carries it: a message of an earlier
-- generation (late, duplicated, or of a previous budget) does nothing, so one delivery never has
-- two retry loops. `enqueued_at_ms`: when a queue message was first claimed.
-- `due_at_ms`: when the next attempt is expected (now, or now + the retry delay); a pending
-- delivery long past it lost its message (a crash between D1 and the queue) and the sweeper
-- sends it again. `lease_until_ms`: an attempt in progress (a duplicate message waits for it).
CREATE TABLE webhook_deliveries (
  delivery_id       TEXT PRIMARY KEY,          -- <event_id>.<subscriber_id>
  event_id          TEXT NOT NULL REFERENCES webhook_events(event_id),
  subscriber_id     TEXT NOT NULL REFERENCES webhook_subscribers(subscriber_id),
  status            TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead', 'cancelled')),
  attempts          INTEGER NOT NULL DEFAULT 0,
  budget_from       INTEGER NOT NULL DEFAULT 0,
  redrives          INTEGER NOT NULL DEFAULT 0,
  claim_gen         INTEGER NOT NULL DEFAULT 0,
  last_status_code  INTEGER,
  last_error        TEXT,
  enqueued_at_ms    INTEGER,
  due_at_ms         INTEGER,
  lease_until_ms    INTEGER,
  created_at_ms     INTEGER NOT NULL,
  updated_at_ms     INTEGER NOT NULL,
  delivered_at_ms   INTEGER,
  dead_at_ms        INTEGER
);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries(event_id);
CREATE INDEX webhook_deliveries_by_subscriber ON webhook_deliveries(subscriber_id, status, created_at_ms);
CREATE INDEX webhook_deliveries_by_status ON webhook_deliveries(status, created_at_ms);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, due_at_ms);

-- Every attempt, appended: the answer's status (NULL for a timeout or connection error), how
-- long it took, and at most 512 bytes of what the receiver said.
CREATE TABLE webhook_attempts (
  delivery_id       TEXT NOT NULL REFERENCES webhook_deliveries(delivery_id),
  attempt           INTEGER NOT NULL,
  at_ms             INTEGER NOT NULL,
  status_code       INTEGER,
  outcome           TEXT NOT NULL,             -- delivered | retry | dead | disabled
  duration_ms       INTEGER NOT NULL,
  error             TEXT,
  response_excerpt  TEXT,
  PRIMARY KEY (delivery_id, attempt)
);

-- What the provider later said about a sent email (Cloudflare Email Service delivery events:
-- delivered, deferred, bounced, failed, rejected, complained), found by its provider message id.
ALTER TABLE emails ADD COLUMN delivery_status TEXT;
ALTER TABLE emails ADD COLUMN delivery_status_at_ms INTEGER;
CREATE INDEX emails_by_provider_message ON emails(provider_message_id);
