-- Supplier data is data.
-- raw_events gains
--   normalised: what the adapters' normalisation changed in the delivery's text (JSON array of
--               {field, kind, chars_before, chars_after, controls, truncated}; NULL when nothing);
--   status 'errored': the delivery's journey ended in a fatal error (the owner was alerted).
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt, rows kept.
CREATE TABLE raw_events_new (
  id             INTEGER PRIMARY KEY,
  source         TEXT NOT NULL,
  event_id       TEXT,
  event_name     TEXT,
  status         TEXT NOT NULL CHECK (status IN ('received', 'started', 'ignored', 'rejected', 'errored')),
  error          TEXT,
  headers_json   TEXT NOT NULL,
  body           TEXT NOT NULL,
  received_at_ms INTEGER NOT NULL,
  instance_id    TEXT,
  normalised     TEXT,
  UNIQUE (source, event_id)
);
INSERT INTO raw_events_new (id, source, event_id, event_name, status, error, headers_json, body, received_at_ms, instance_id)
  SELECT id, source, event_id, event_name, status, error, headers_json, body, received_at_ms, instance_id FROM raw_events;
DROP TABLE raw_events;
ALTER TABLE raw_events_new RENAME TO raw_events;
CREATE INDEX raw_events_by_time ON raw_events(received_at_ms);
CREATE INDEX raw_events_by_status ON raw_events(status, received_at_ms);
