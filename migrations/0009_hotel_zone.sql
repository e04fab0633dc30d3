-- The hotel's time zone is resolved once per hotel and kept with how it was chosen, and
-- every planned send shows its zone, how that zone was chosen and its local wall-clock time beside
-- the UTC instant (due_at_ms).

-- The zone resolved from the cached location (supplier IANA name → coordinates lookup → longitude
-- fallback → UTC): zone is its display name ('Europe/Madrid', 'UTC+00:15', 'UTC'); zone_source
-- one of 'iana', 'coordinates', 'longitude', 'utc' (src/domain/timezone.rs ZoneSource). NULL on
-- rows cached before this migration: the plan resolves and writes them on first use.
ALTER TABLE hotel_locations ADD COLUMN zone TEXT;
ALTER TABLE hotel_locations ADD COLUMN zone_source TEXT
  CHECK (zone_source IS NULL OR zone_source IN ('iana', 'coordinates', 'longitude', 'utc'));

-- scheduled_sends.zone (0002) now holds the zone's name alone ('Europe/Madrid'; before: the name
-- followed by the source in parentheses); zone_source as above; local_time is due_at_ms in that zone
-- as ISO 8601 with its offset ('2027-07-15T08:00:00+02:00'), NULL for rows without a due time.
ALTER TABLE scheduled_sends ADD COLUMN zone_source TEXT
  CHECK (zone_source IS NULL OR zone_source IN ('iana', 'coordinates', 'longitude', 'utc'));
ALTER TABLE scheduled_sends ADD COLUMN local_time TEXT;
