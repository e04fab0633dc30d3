-- Guests' replies: whose share of a booking's conversation a message counts in (`guest`: from the
-- address the answered email went to, not contradicted by the receiving server's checks;
-- `other`: anyone else). Each share has its own bound on messages kept and alerts per day, so
-- another holder of a reply address cannot use up the guest's room. Messages kept before this
-- migration were counted under one bound with the guest's; they stay in the guest's share.
ALTER TABLE inbound_messages ADD COLUMN sender_share TEXT NOT NULL DEFAULT 'guest';
CREATE INDEX inbound_by_booking_share ON inbound_messages(booking_id, sender_share, received_day);
