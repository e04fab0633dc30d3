-- The sweeper's second half: what it needs to finish work nobody is doing.
-- Times are ms since the Unix epoch, UTC.

-- The Workflow instance that planned each send (the journey of one event: `e-<source>-<event id>`,
-- src/domain/ids.rs). The sweeper asks that instance's status before taking a past-due send over.
-- NULL for rows planned before this column: treated as an unknown instance.
ALTER TABLE scheduled_sends ADD COLUMN instance_id TEXT;
-- When the sweeper last looked at this planned send and left it (its instance alive, or the send
-- failed; 0 = never), so a send it must keep leaving cannot starve newer orphans behind it.
ALTER TABLE scheduled_sends ADD COLUMN swept_at_ms INTEGER NOT NULL DEFAULT 0;
-- Only planned rows: `swept_at_ms = 0 AND due_at_ms < ?` finds new orphans, `swept_at_ms` ranges
-- the ones to look at again; both stay flat in the number of bookings.
CREATE INDEX scheduled_sends_sweep ON scheduled_sends(swept_at_ms, due_at_ms) WHERE status = 'planned';

-- The email as handed to the outbox (JSON of OutgoingEmail), kept while the email is unsettled
-- (claimed or queued) so the sweeper can hand it to the outbox again if the outbox does not hold
-- it; cleared when the outbox records the email's outcome. NULL for rows claimed before this column.
ALTER TABLE emails ADD COLUMN payload_json TEXT;
-- When the sweeper last checked this unsettled row (0 = never), so each tick looks at the rows it
-- has checked least recently and a long backlog cannot starve an orphan.
ALTER TABLE emails ADD COLUMN swept_at_ms INTEGER NOT NULL DEFAULT 0;
-- Only unsettled rows are in it: its size is the outbox's backlog, not the number of bookings.
CREATE INDEX emails_unsettled ON emails(swept_at_ms) WHERE status IN ('claimed', 'queued');

-- When the sweeper last tried to start this `received` raw event and could not (0 = never), so an
-- event it keeps failing to start (a transient error, a source this build does not know) never
-- hides newer ones: never-tried rows by `received_at_ms`, tried ones again after a grace period.
ALTER TABLE raw_events ADD COLUMN swept_at_ms INTEGER NOT NULL DEFAULT 0;
CREATE INDEX raw_events_stuck ON raw_events(swept_at_ms, received_at_ms) WHERE status = 'received';
