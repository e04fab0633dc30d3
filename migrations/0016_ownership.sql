-- Least authority between suppliers: every booking, checkout attempt and compensation records its
-- owner (the source whose event created it and, for the generic source, the partner whose key
-- signed that event); an event acts only on records of its own owner (src/domain/ownership.rs).
-- Rows stored before this migration keep working: a generic row's partner is 'default', the
-- partner of every unnamed secret in GENERIC_WEBHOOK_SECRETS (the only form there was).

ALTER TABLE bookings ADD COLUMN partner TEXT;
UPDATE bookings SET partner = 'default' WHERE source = 'generic';
-- The booking's client reference as a column (it was only inside details_json), so a payment can
-- be traced to the bookings it belongs to.
ALTER TABLE bookings ADD COLUMN client_reference TEXT;
UPDATE bookings SET client_reference = json_extract(details_json, '$.client_reference')
  WHERE json_valid(details_json);
CREATE INDEX bookings_by_reference ON bookings(client_reference);

-- Checkout attempts came from liteAPI's booking.prebook only, before and after this migration.
ALTER TABLE checkout_attempts ADD COLUMN source TEXT NOT NULL DEFAULT 'liteapi';
ALTER TABLE checkout_attempts ADD COLUMN partner TEXT;

ALTER TABLE compensations ADD COLUMN partner TEXT;
UPDATE compensations SET partner = 'default' WHERE source = 'generic';

-- The partner that signed a generic delivery, and why an event was refused (it named a booking
-- of another source or partner: nothing changed). Shown in the booking's admin timeline.
ALTER TABLE raw_events ADD COLUMN partner TEXT;
UPDATE raw_events SET partner = 'default' WHERE source = 'generic';
ALTER TABLE raw_events ADD COLUMN refused_reason TEXT;
