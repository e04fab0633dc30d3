//! `contacts` and `bookings`.

use super::{n, opt, s};
use crate::domain::event::{HotelBooking, Source};
use worker::{D1Database, Result};

/// Upserts the holder as a contact and the booking itself, in one batch. Idempotent: running it
/// twice with the same booking leaves the same rows (timestamps come from the event, not a clock).
pub async fn upsert_hotel_booking(
    db: &D1Database,
    b: &HotelBooking,
    source: Source,
    event_time_ms: i64,
) -> Result<()> {
    let details = serde_json::to_string(b).map_err(|e| worker::Error::RustError(e.to_string()))?;
    let contact = db
        .prepare(
            "INSERT INTO contacts (email, first_name, last_name, phone, created_at_ms, updated_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?5) \
             ON CONFLICT(email) DO UPDATE SET first_name = excluded.first_name, last_name = excluded.last_name, \
             phone = COALESCE(excluded.phone, contacts.phone), updated_at_ms = MAX(contacts.updated_at_ms, excluded.updated_at_ms)",
        )
        .bind(&[
            s(b.holder.email.as_str()),
            s(&b.holder.name.first_name),
            s(&b.holder.name.last_name),
            opt(b.holder.phone.as_deref()),
            n(event_time_ms),
        ])?;
    let booking = db
        .prepare(
            "INSERT INTO bookings (booking_id, source, kind, contact_email, status, hotel_name, checkin, checkout, \
             hotel_confirmation_number, details_json, journey_version, created_at_ms, updated_at_ms) \
             VALUES (?1, ?2, 'hotel', ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?10) \
             ON CONFLICT(booking_id) DO UPDATE SET status = excluded.status, hotel_name = excluded.hotel_name, \
             checkin = excluded.checkin, checkout = excluded.checkout, \
             hotel_confirmation_number = COALESCE(excluded.hotel_confirmation_number, bookings.hotel_confirmation_number), \
             details_json = excluded.details_json, updated_at_ms = MAX(bookings.updated_at_ms, excluded.updated_at_ms)",
        )
        .bind(&[
            s(b.booking_id.as_str()),
            s(source.as_str()),
            s(b.holder.email.as_str()),
            s(&b.status),
            s(&b.hotel_name),
            s(&b.checkin.to_string()),
            s(&b.checkout.to_string()),
            opt(b.hotel_confirmation_number.as_deref()),
            s(&details),
            n(event_time_ms),
        ])?;
    db.batch(vec![contact, booking]).await?;
    Ok(())
}
