-- Who may start a stored delivery's journey now: the delivery that stored it, until this time (ms
-- UTC); after it — or at once when that delivery's start failed and it let go — a redelivery of
-- the same event may claim the start. NULL: nobody holds it.
ALTER TABLE raw_events ADD COLUMN start_lease_until_ms INTEGER;
