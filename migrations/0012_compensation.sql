-- Compensation of the booking saga: a paid booking that the supplier failed (or
-- cancelled) is undone step by step, each step recorded. Times are ms since the Unix epoch, UTC.

-- What the payment processor said about each payment, whether or not its checkout attempt was
-- known when it arrived (webhooks are unordered): the compensation finds the payment to refund
-- here, by payment intent or client reference. One row per payment intent (`pi_…`), or per
-- Checkout Session (`cs_…`) when the session carried no intent.
CREATE TABLE payments (
  payment_key      TEXT PRIMARY KEY,   -- the payment intent, else the session id
  payment_intent   TEXT,
  session_id       TEXT,
  client_reference TEXT,
  outcome          TEXT NOT NULL,      -- failed | paid | processing | expired (latest word)
  amount_minor     INTEGER,            -- what was captured, in the currency's minor unit
  currency         TEXT,               -- ISO 4217, upper case
  updated_at_ms    INTEGER NOT NULL
);
CREATE INDEX payments_by_reference ON payments(client_reference);
CREATE INDEX payments_by_intent ON payments(payment_intent);

-- One row per compensation. `compensation_id` is derived from the first of prebook id, client
-- reference, booking id (src/domain/compensation.rs), so a failure delivered twice, or before
-- its booking event, or a cancellation of the same booking, lands on the same row.
CREATE TABLE compensations (
  compensation_id  TEXT PRIMARY KEY,
  cause            TEXT NOT NULL CHECK (cause IN ('supplier_failed', 'booking_cancelled')),
  booking_id       TEXT,
  prebook_id       TEXT,
  client_reference TEXT,
  payment_intent   TEXT,               -- filled in when the payment is found
  guest_email      TEXT,
  guest_name       TEXT,
  trip             TEXT,               -- what the guest booked, one line (hotel and dates, or the flight)
  source           TEXT NOT NULL,
  event_id         TEXT NOT NULL,      -- the event that opened it
  event_name       TEXT NOT NULL,
  reason           TEXT NOT NULL,      -- the supplier's words, bounded, one line
  fee_amount       TEXT,               -- supplier fee or refund amount as given (decimal text)
  fee_currency     TEXT,
  supplier_refund  TEXT,               -- supplier-reported refund amount (decimal text), cancellations
  state            TEXT NOT NULL,      -- see CompensationState
  created_at_ms    INTEGER NOT NULL,
  updated_at_ms    INTEGER NOT NULL
);
CREATE INDEX compensations_by_booking ON compensations(booking_id);
CREATE INDEX compensations_by_prebook ON compensations(prebook_id);
CREATE INDEX compensations_by_reference ON compensations(client_reference);
CREATE INDEX compensations_by_intent ON compensations(payment_intent);

-- One row per step of a compensation, in the order they are undone (`position`).
CREATE TABLE compensation_steps (
  compensation_id  TEXT NOT NULL,
  step             TEXT NOT NULL,      -- close_booking | withdraw_emails | refund | guest_notice | owner_alert
  position         INTEGER NOT NULL,
  status           TEXT NOT NULL,      -- pending | done | skipped | waiting_payment | awaiting_owner | running | failed
  claimed_by       TEXT,               -- who runs it now (an event id, or owner:<token id>)
  idempotency_key  TEXT,               -- Stripe Idempotency-Key of the refund request
  round            INTEGER NOT NULL DEFAULT 1,  -- refund: a new round only after a permanent failure
  provider_id      TEXT,               -- Stripe refund id (re_…)
  provider_status  TEXT,               -- pending | succeeded | failed | canceled | requires_action
  amount_minor     INTEGER,
  currency         TEXT,
  attempts         INTEGER NOT NULL DEFAULT 0,
  error            TEXT,
  detail           TEXT,
  updated_at_ms    INTEGER NOT NULL,
  PRIMARY KEY (compensation_id, step)
);
CREATE INDEX compensation_steps_by_provider ON compensation_steps(provider_id);

-- One refund per payment: the first compensation to claim a payment intent's refund owns it; any
-- other compensation of the same payment (a failure and a cancellation named by different ids)
-- is handed to the owner instead of refunding again. Inserted in the same batch as the claim.
CREATE TABLE refund_claims (
  payment_intent   TEXT PRIMARY KEY,
  compensation_id  TEXT NOT NULL,
  claimed_at_ms    INTEGER NOT NULL
);
