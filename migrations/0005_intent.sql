-- Intent at the send turn (src/domain/intent.rs): the moment each planned send becomes pointless,
-- ms since the epoch (UTC), so whoever decides a send later (the journey, a sweeper repairing due
-- work) applies the same "stale" rule without recomputing the hotel's zone. NULL: never stale
-- (rows planned before this column, merged and late rows).
ALTER TABLE scheduled_sends ADD COLUMN expires_at_ms INTEGER;
