-- The SEQUENCE and DTSTAMP of every calendar event each email carried (src/store/calendar.rs):
-- one row per event UID and email (dedupe key), allocated when the email is handed over, so a
-- UID's SEQUENCE and DTSTAMP rise strictly across every email of a booking (RFC 5546 §2.1.5) and
-- a retried hand-over of the same email reads back the same stamp. `dtstamp_ms` is whole seconds
-- (ms UTC); `method` is PUBLISH or CANCEL; `booking_id` for the admin and for pruning.
CREATE TABLE calendar_stamps (
  uid TEXT NOT NULL,
  dedupe_key TEXT NOT NULL,
  booking_id TEXT,
  sequence INTEGER NOT NULL,
  dtstamp_ms INTEGER NOT NULL,
  method TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  PRIMARY KEY (uid, dedupe_key)
) WITHOUT ROWID;

-- The next SEQUENCE of a UID reads its highest one through this index, not the UID's rows.
CREATE INDEX calendar_stamps_by_sequence ON calendar_stamps (uid, sequence);
