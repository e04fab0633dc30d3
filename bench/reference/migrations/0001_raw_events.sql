-- The reference Worker's only table: every delivery, once per event id.
CREATE TABLE raw_events (
  id             INTEGER PRIMARY KEY,
  event_id       TEXT NOT NULL UNIQUE,
  event_name     TEXT,
  body           TEXT NOT NULL,
  received_at_ms INTEGER NOT NULL
);
