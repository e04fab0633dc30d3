-- Guests' replies (docs/internals.md "Guests' replies"; src/domain/inbound/reply_token.rs, src/domain/inbound/).

-- The reply address of each guest email about a booking: its token carries `reply_ref`
-- (the first 8 bytes of SHA-256 of the email's dedupe key, hex); written in the same D1 batch as
-- the email's claim.
CREATE TABLE reply_addresses (
  reply_ref TEXT PRIMARY KEY,
  booking_id TEXT NOT NULL,
  dedupe_key TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL
);

-- Every inbound message kept: `kind` guest (a person, on its booking), auto (an automatic reply or
-- a delivery report, on its booking, never alerted) or unmatched (no valid token: on no booking).
-- `dedupe` (SHA-256 of the envelope recipient and the Message-ID, else of the raw bytes) makes a
-- redelivery by the sending server a no-op. Texts are bounded by src/domain/inbound.
CREATE TABLE inbound_messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  dedupe TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  booking_id TEXT,
  answers_key TEXT,
  auto_kind TEXT,
  reason TEXT,
  envelope_from TEXT NOT NULL,
  envelope_to TEXT NOT NULL,
  from_addr TEXT NOT NULL,
  from_name TEXT NOT NULL,
  subject TEXT NOT NULL,
  date_ms INTEGER,
  message_id TEXT,
  thread_ids_json TEXT NOT NULL,
  thread_ours INTEGER NOT NULL DEFAULT 0,
  text_body TEXT NOT NULL,
  quoted_removed INTEGER NOT NULL DEFAULT 0,
  note TEXT,
  auth_json TEXT NOT NULL,
  attachments_json TEXT NOT NULL,
  raw_size INTEGER NOT NULL,
  alerted INTEGER NOT NULL DEFAULT 0,
  received_at_ms INTEGER NOT NULL,
  received_day TEXT NOT NULL
);
CREATE INDEX inbound_by_booking ON inbound_messages(booking_id, received_at_ms);
CREATE INDEX inbound_by_kind ON inbound_messages(kind, received_day);

-- One row per booking with guest messages: `waiting` = 1 while its newest guest message has no
-- answer (the admin's conversations page and the digest count read it through the index).
CREATE TABLE conversations (
  booking_id TEXT PRIMARY KEY,
  last_guest_at_ms INTEGER NOT NULL,
  last_message_id INTEGER NOT NULL,
  last_answer_at_ms INTEGER,
  waiting INTEGER NOT NULL
);
CREATE INDEX conversations_waiting ON conversations(waiting, last_guest_at_ms);

-- The owner's answers, as written (the email itself is an ordinary guest email in `emails`).
CREATE TABLE conversation_answers (
  dedupe_key TEXT PRIMARY KEY,
  booking_id TEXT NOT NULL,
  answers_message_id INTEGER,
  text_body TEXT NOT NULL,
  answered_at_ms INTEGER NOT NULL
);
CREATE INDEX conversation_answers_by_booking ON conversation_answers(booking_id, answered_at_ms);
