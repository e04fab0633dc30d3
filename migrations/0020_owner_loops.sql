-- The owner closes every loop: refunds that wait for the owner are reminded with fresh links,
-- card-testing holds are recalled, a hotel whose location lookup failed is retried and its
-- planned sends re-planned to hotel time, and one daily digest. Times are ms since the Unix
-- epoch, UTC.

-- A compensation's owner reminders: how many were sent (also the generation of its refund
-- links: a link signed for an older generation is out of date) and when the owner was last told
-- (the first alert is the refund step's own `updated_at_ms`).
ALTER TABLE compensations ADD COLUMN reminders_sent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE compensations ADD COLUMN owner_told_at_ms INTEGER;
-- Refunds by their step's state: the admin's refunds page, the overview's count, the reminders.
CREATE INDEX compensation_steps_refund ON compensation_steps(status, updated_at_ms)
  WHERE step = 'refund';

-- A card-testing hold recalled to the owner (once). What the engine did when nobody answered
-- (HOLD_UNANSWERED_ACTION = dismiss) is the hold's own action, acted_from 'sweeper'.
ALTER TABLE holds ADD COLUMN recalled_at_ms INTEGER;

-- A hotel whose bookings were planned in UTC (its location lookup failed, or could not run) is
-- marked `replan_pending`; the sweeper looks it up again with back-off (`lookup_failures` in a
-- row, next try at `retry_at_ms`) and, once its zone is known, moves those bookings' planned
-- sends to hotel time and clears the mark.
ALTER TABLE hotel_locations ADD COLUMN lookup_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hotel_locations ADD COLUMN retry_at_ms INTEGER;
ALTER TABLE hotel_locations ADD COLUMN replan_pending INTEGER NOT NULL DEFAULT 0;
CREATE INDEX hotel_locations_replan ON hotel_locations(retry_at_ms) WHERE replan_pending = 1;

-- A planned send moved to hotel time once the hotel's zone became known: when, and its local
-- time before (shown in the booking's timeline). Such a send is made by the sweeper at its new
-- time (instance_id 'sweeper'); the journey that planned it leaves it alone when it wakes.
ALTER TABLE scheduled_sends ADD COLUMN replanned_at_ms INTEGER;
ALTER TABLE scheduled_sends ADD COLUMN replanned_from TEXT;
CREATE INDEX scheduled_sends_zone_unknown ON scheduled_sends(booking_id)
  WHERE status = 'planned' AND zone_source = 'utc';
CREATE INDEX scheduled_sends_by_sweeper ON scheduled_sends(due_at_ms)
  WHERE status = 'planned' AND instance_id = 'sweeper';

-- Hotels already planned in UTC before this migration: marked for the sweeper (failed lookups
-- are retried at once; a hotel never looked up gets a row).
INSERT INTO hotel_locations (hotel_id, fetched_at_ms, error, retry_at_ms, replan_pending)
  SELECT DISTINCT json_extract(b.details_json, '$.hotel_id'), 0, 'no zone known yet', 0, 1
  FROM scheduled_sends s JOIN bookings b ON b.booking_id = s.booking_id
  WHERE s.status = 'planned' AND s.zone_source = 'utc'
    AND json_extract(b.details_json, '$.hotel_id') IS NOT NULL
  ON CONFLICT(hotel_id) DO UPDATE SET replan_pending = 1, retry_at_ms = 0;

-- The digest counts yesterday's bookings.
CREATE INDEX bookings_by_created ON bookings(created_at_ms);

-- The owner's daily digest, one row per owner-local day it is due on: `sent` (the email was
-- handed over; its own dedupe key `owner_digest:<day>` makes it once) or `empty` (nothing to
-- report: no email). A tick that finds the day's row does nothing more that day.
CREATE TABLE owner_digests (
  sent_on   TEXT PRIMARY KEY,          -- YYYY-MM-DD on the owner's clock
  status    TEXT NOT NULL CHECK (status IN ('sent', 'empty')),
  at_ms     INTEGER NOT NULL
);
