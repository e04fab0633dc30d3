-- The last explicit change of a booking's guest language (an event of the booking stating a new
-- one, src/store/guest_locale.rs `explicit_change`): when it happened (ms UTC) and the language it
-- replaced, so the admin timeline shows the switch. NULL while the language never changed.
ALTER TABLE bookings ADD COLUMN guest_locale_changed_at_ms INTEGER;
ALTER TABLE bookings ADD COLUMN guest_locale_before TEXT;
