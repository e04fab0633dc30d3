-- The guest's language: one per booking, resolved when the booking is recorded (see
-- src/domain/i18n/locale.rs). guest_locale is a shipped BCP 47 tag (en, es, fr, de, pt, it);
-- guest_locale_source says who stated it (event | stripe_checkout | default). NULL on bookings
-- recorded before this migration: they read as the configured DEFAULT_GUEST_LOCALE.
ALTER TABLE bookings ADD COLUMN guest_locale TEXT;
ALTER TABLE bookings ADD COLUMN guest_locale_source TEXT;
-- A Stripe Checkout Session that arrives after its booking finds it by the booking's
-- client_reference column (migration 0016, index bookings_by_reference).

-- The Stripe Checkout Session's `locale` (the language the guest saw at checkout), kept with the
-- payment so a booking recorded later can take it by client reference.
ALTER TABLE payments ADD COLUMN locale TEXT;
