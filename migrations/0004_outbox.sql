-- Suppression list, checked by the outbox at send time (never only at enqueue time).
-- reason: 'marketing_unsubscribed' stops marketing only; 'hard_bounce' and 'complaint' stop every
-- email to the address (booking mail included). A stronger reason is never replaced by a weaker one
-- (complaint > hard_bounce > marketing_unsubscribed). Addresses are stored lower-cased.
CREATE TABLE suppressions (
  email         TEXT PRIMARY KEY,
  reason        TEXT NOT NULL CHECK (reason IN ('marketing_unsubscribed', 'hard_bounce', 'complaint')),
  -- Where the fact came from: 'unsubscribe_link', 'smtp', 'resend_webhook', 'operator'.
  source        TEXT NOT NULL,
  detail        TEXT,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);

-- Marketing campaigns submitted by the operator (one row per campaign id; recipients become emails
-- rows with dedupe key marketing:<campaign>:<address>).
CREATE TABLE campaigns (
  campaign_id   TEXT PRIMARY KEY,
  subject       TEXT NOT NULL,
  body_text     TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL
);
