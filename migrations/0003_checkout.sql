-- Unfinished checkouts and card testing: attempts, holds for a human, used one-click tokens.
-- attempt_day is the UTC calendar day (YYYY-MM-DD) of attempted_at_ms: the "same day" of the
-- card-testing rules.

ALTER TABLE bookings ADD COLUMN prebook_id TEXT;
CREATE INDEX bookings_by_prebook ON bookings(prebook_id);
CREATE INDEX bookings_by_guest_stay ON bookings(contact_email, checkin, checkout);

CREATE TABLE checkout_attempts (
  prebook_id       TEXT PRIMARY KEY,
  transaction_id   TEXT,
  client_reference TEXT,
  email            TEXT,             -- lower case
  guest_name       TEXT,             -- normalized full name
  hotel_id         TEXT,
  checkin          TEXT,
  checkout         TEXT,
  attempt_day      TEXT NOT NULL,
  attempted_at_ms  INTEGER NOT NULL,
  payment_status   TEXT,             -- failed | paid | expired (latest word from the processor)
  decline_code     TEXT,
  outcome          TEXT,             -- the decision 20 minutes after the attempt
  hold_id          TEXT,
  details_json     TEXT NOT NULL,
  decided_at_ms    INTEGER
);
CREATE INDEX attempts_by_email_day ON checkout_attempts(email, attempt_day);
CREATE INDEX attempts_by_name_day ON checkout_attempts(guest_name, attempt_day);
CREATE INDEX attempts_by_transaction ON checkout_attempts(transaction_id);
CREATE INDEX attempts_by_reference ON checkout_attempts(client_reference);
CREATE INDEX attempts_by_guest_stay ON checkout_attempts(email, hotel_id, checkin, attempted_at_ms);

CREATE TABLE holds (
  hold_id        TEXT PRIMARY KEY,
  status         TEXT NOT NULL CHECK (status IN ('held', 'acted', 'dismissed')),
  reason         TEXT NOT NULL,
  prebook_id     TEXT NOT NULL,       -- the attempt whose facts the owner sees and acts on
  created_at_ms  INTEGER NOT NULL,
  action         TEXT,
  acted_at_ms    INTEGER,
  acted_from     TEXT                 -- client IP of the click
);

-- One row per used one-click token: the unique key makes every link single-use, even for two
-- clicks at the same moment.
CREATE TABLE owner_actions (
  token_id    TEXT PRIMARY KEY,
  hold_id     TEXT NOT NULL,
  action      TEXT NOT NULL,
  used_at_ms  INTEGER NOT NULL,
  used_from   TEXT
);
CREATE INDEX owner_actions_by_hold ON owner_actions(hold_id);
