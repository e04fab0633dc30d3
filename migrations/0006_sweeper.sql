-- The sweeper: every repair it makes, and the indexes that keep each tick's queries
-- bounded and flat in the number of bookings. Times are ms since the Unix epoch, UTC.

-- One row per repair; repair_key = '<kind>:<subject>' (src/domain/sweep.rs repair_key), unique
-- so two overlapping ticks record the same repair once.
CREATE TABLE repairs (
  repair_key  TEXT PRIMARY KEY,
  kind        TEXT NOT NULL,
  subject     TEXT NOT NULL,
  reason      TEXT NOT NULL,
  at_ms       INTEGER NOT NULL
);
CREATE INDEX repairs_by_time ON repairs(at_ms);

-- Due planned sends, oldest first.
CREATE INDEX scheduled_sends_due ON scheduled_sends(status, due_at_ms);

-- Raw bodies still held by finished deliveries, oldest first (retention prunes them in batches;
-- a pruned body is '' and leaves this partial index, so pruned rows cost nothing later).
CREATE INDEX raw_events_body_kept ON raw_events(received_at_ms)
  WHERE body <> '' AND status <> 'received';
