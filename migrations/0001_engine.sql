-- booking-email-engine: our own record of contacts, bookings, raw events and every email.
-- Times are integers: milliseconds since the Unix epoch, UTC (suffix _ms). Dates of a stay are
-- the hotel's local calendar dates as text YYYY-MM-DD.

CREATE TABLE contacts (
  id            INTEGER PRIMARY KEY,
  email         TEXT NOT NULL UNIQUE,
  first_name    TEXT NOT NULL DEFAULT '',
  last_name     TEXT NOT NULL DEFAULT '',
  phone         TEXT,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);

CREATE TABLE bookings (
  booking_id                TEXT PRIMARY KEY,
  source                    TEXT NOT NULL,
  kind                      TEXT NOT NULL CHECK (kind IN ('hotel', 'flight')),
  contact_email             TEXT NOT NULL REFERENCES contacts(email),
  status                    TEXT NOT NULL,
  hotel_name                TEXT,
  checkin                   TEXT,
  checkout                  TEXT,
  hotel_confirmation_number TEXT,
  details_json              TEXT NOT NULL,
  -- Versioned intent: a scheduled send only goes out if its journey version is still current.
  journey_version           INTEGER NOT NULL DEFAULT 1,
  -- Hash of the traveller-visible snapshot (never includes status).
  snapshot_hash             TEXT,
  created_at_ms             INTEGER NOT NULL,
  updated_at_ms             INTEGER NOT NULL
);
CREATE INDEX bookings_by_contact ON bookings(contact_email);

-- Every delivery, before anything else happens. Rejected deliveries keep event_id NULL (their
-- claimed id is in error/body) so a later valid delivery of the same id is still processed.
CREATE TABLE raw_events (
  id             INTEGER PRIMARY KEY,
  source         TEXT NOT NULL,
  event_id       TEXT,
  event_name     TEXT,
  status         TEXT NOT NULL CHECK (status IN ('received', 'started', 'ignored', 'rejected')),
  error          TEXT,
  headers_json   TEXT NOT NULL,
  body           TEXT NOT NULL,
  received_at_ms INTEGER NOT NULL,
  instance_id    TEXT,
  UNIQUE (source, event_id)
);
CREATE INDEX raw_events_by_time ON raw_events(received_at_ms);
CREATE INDEX raw_events_by_status ON raw_events(status, received_at_ms);

-- One row per client or owner email, claimed before it is enqueued. dedupe_key never expires.
CREATE TABLE emails (
  id                  INTEGER PRIMARY KEY,
  dedupe_key          TEXT NOT NULL UNIQUE,
  kind                TEXT NOT NULL,
  audience            TEXT NOT NULL CHECK (audience IN ('client', 'owner')),
  booking_id          TEXT,
  to_addr             TEXT NOT NULL,
  subject             TEXT NOT NULL,
  rank                INTEGER NOT NULL,
  status              TEXT NOT NULL,
  provider            TEXT,
  provider_message_id TEXT,
  message_id          TEXT NOT NULL,
  attempts            INTEGER NOT NULL DEFAULT 0,
  last_error          TEXT,
  created_at_ms       INTEGER NOT NULL,
  updated_at_ms       INTEGER NOT NULL,
  sent_at_ms          INTEGER
);
CREATE INDEX emails_by_booking ON emails(booking_id, created_at_ms);
CREATE INDEX emails_by_status ON emails(status, updated_at_ms);
