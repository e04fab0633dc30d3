-- 0007 rebuilt raw_events (to widen its status CHECK and add `normalised`), which dropped the
-- partial index 0006 made for the sweeper's retention: bodies of finished events not yet pruned,
-- by age. Made again on the rebuilt table.
CREATE INDEX IF NOT EXISTS raw_events_body_kept ON raw_events(received_at_ms)
  WHERE body <> '' AND status <> 'received';
