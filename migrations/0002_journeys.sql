-- Journeys over weeks: the plan of scheduled sends per booking and journey version, hotel
-- locations looked up for local time, and which booking replaced which.

ALTER TABLE bookings ADD COLUMN replaced_by TEXT;

-- One row per scheduled email of one journey version. due_at_ms is UTC ms; status:
-- planned → sent | skipped (cancelled, superseded by a newer version, booking unknown) |
-- merged (a late booking: folded into the confirmation) | late (past at booking time).
CREATE TABLE scheduled_sends (
  booking_id      TEXT NOT NULL,
  kind            TEXT NOT NULL,
  journey_version INTEGER NOT NULL,
  due_at_ms       INTEGER,
  status          TEXT NOT NULL,
  reason          TEXT,
  zone            TEXT,
  planned_at_ms   INTEGER NOT NULL,
  decided_at_ms   INTEGER,
  PRIMARY KEY (booking_id, kind, journey_version)
);

-- Coordinates / time zone of a hotel from the supplier's hotel data API, cached.
CREATE TABLE hotel_locations (
  hotel_id      TEXT PRIMARY KEY,
  latitude      REAL,
  longitude     REAL,
  time_zone     TEXT,
  fetched_at_ms INTEGER NOT NULL,
  error         TEXT
);
