-- The owner's admin: sign-in sessions, the failed-login limiter, every email's content as sent,
-- a booking id on raw events (for a booking's timeline) and the log of suppression changes.

-- One row per session; only the SHA-256 of the cookie's token is kept.
CREATE TABLE admin_sessions (
  session_hash   TEXT PRIMARY KEY,
  account        TEXT NOT NULL,
  credential_tag TEXT NOT NULL,     -- which password hash signed it in: a new hash ends the session
  created_at_ms  INTEGER NOT NULL,
  expires_at_ms  INTEGER NOT NULL,
  ip             TEXT
);
CREATE INDEX admin_sessions_by_expiry ON admin_sessions(expires_at_ms);

-- Sign-in attempts per fixed window, one row per counter: `ip:<address>` or `account:<name>`.
CREATE TABLE admin_login_limits (
  limit_key        TEXT PRIMARY KEY,
  window_start_ms  INTEGER NOT NULL,
  attempts         INTEGER NOT NULL
);
CREATE INDEX admin_login_limits_by_window ON admin_login_limits(window_start_ms);

-- What each email said, kept for the admin's "email as sent" page (the outbox prunes its own copy
-- after delivery, and emails.payload_json is cleared once the outcome is known). The sweeper
-- deletes these with the raw bodies (RETENTION_RAW_BODY_DAYS, 30 days).
CREATE TABLE email_contents (
  dedupe_key     TEXT PRIMARY KEY,
  subject        TEXT NOT NULL,
  text_body      TEXT NOT NULL,
  html_body      TEXT NOT NULL,
  headers_json   TEXT NOT NULL,
  created_at_ms  INTEGER NOT NULL
);
CREATE INDEX email_contents_by_time ON email_contents(created_at_ms);

ALTER TABLE raw_events ADD COLUMN booking_id TEXT;
CREATE INDEX raw_events_by_booking ON raw_events(booking_id, received_at_ms);
CREATE INDEX raw_events_by_source ON raw_events(source, received_at_ms);
CREATE INDEX contacts_by_name ON contacts(last_name, first_name);
CREATE INDEX holds_by_status ON holds(status, created_at_ms);
CREATE INDEX webhook_events_by_booking ON webhook_events(booking_id, created_at_ms);

-- Every change an operator made to suppressions, with the reason given (a removed suppression's
-- own reason, source and detail are kept here too).
CREATE TABLE suppression_log (
  id          INTEGER PRIMARY KEY,
  email       TEXT NOT NULL,
  change      TEXT NOT NULL CHECK (change IN ('added', 'removed')),
  reason      TEXT NOT NULL,
  source      TEXT,
  detail      TEXT,
  note        TEXT,
  by_account  TEXT NOT NULL,
  at_ms       INTEGER NOT NULL
);
CREATE INDEX suppression_log_by_email ON suppression_log(email, at_ms);
