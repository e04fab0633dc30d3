//! Recording a hotel booking event (the first step of `super::hotel::booked`): insert the booking,
//! or refresh its facts under a new journey version, mark the booking a rebook replaces — and
//! none of it when the booking, the one it replaces or its checkout belongs to another source or
//! partner (`crate::domain::ownership`).

use super::rust_err;
use crate::config::DB_BINDING;
use crate::domain::booking::BookingStatus;
use crate::domain::event::HotelBooking;
use crate::domain::i18n::Locale;
use crate::domain::ownership::Owner;
use crate::domain::snapshot::hotel_snapshot;
use crate::store;
use crate::store::bookings::FactsUpdate;
use serde::{Deserialize, Serialize};
use worker::{Env, Result};

/// What the record step found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Recorded {
    /// Journey version this run owns from now on (moved on when a redelivery carried new facts).
    pub(super) version: i64,
    /// The compensation that closed this booking (the supplier failed it after payment, and said
    /// so before this event arrived): nothing is confirmed or planned.
    #[serde(default)]
    pub(super) compensated: Option<String>,
    /// Why the event was refused: the booking id, the booking it replaces or its checkout
    /// belongs to another source or partner. Nothing was written.
    #[serde(default)]
    pub(super) foreign: Option<String>,
    /// The booking's language after this event (English in results cached before it existed).
    #[serde(default)]
    pub(super) locale: Locale,
}

/// Records the booking: inserts it (version 1), or — if it was stored before with different
/// traveller facts — writes the new facts and moves the version on. A rebook marks the booking it
/// replaces, whose plan then stops.
pub(super) async fn record(
    env: &Env,
    b: &HotelBooking,
    owner: &Owner,
    at: i64,
) -> Result<Recorded> {
    let db = env.d1(DB_BINDING)?;
    let hash = hotel_snapshot(b).hash();
    // The booking itself, the one it replaces and its checkout must be this owner's (or not
    // stored yet): otherwise nothing is written. A booking another source inserts meanwhile
    // makes the insert below conflict, and the retried step finds it here.
    let named: Vec<&str> = [
        Some(b.booking_id.as_str()),
        b.replaces.as_ref().map(|r| r.as_str()),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(reason) =
        store::ownership::foreign_named(&db, owner, &named, b.prebook_id.as_deref()).await?
    {
        return Ok(Recorded {
            version: 0,
            compensated: None,
            foreign: Some(reason),
            locale: Locale::default(),
        });
    }
    if let Some(old) = &b.replaces {
        store::bookings::mark_replaced(&db, old.as_str(), b.booking_id.as_str(), at).await?;
    }
    match store::bookings::get(&db, b.booking_id.as_str()).await? {
        None => {
            if !store::bookings::insert_hotel_booking(&db, b, &hash, owner, at).await? {
                // Inserted by a concurrent journey: the retried step takes the branches below.
                return Err(rust_err("booking inserted concurrently; retrying"));
            }
            Ok(Recorded {
                version: 1,
                compensated: None,
                foreign: None,
                locale: Locale::default(),
            })
        }
        Some(row) if row.snapshot_hash.as_deref() == Some(hash.as_str()) => Ok(Recorded {
            version: row.journey_version,
            compensated: None,
            foreign: None,
            locale: Locale::default(),
        }),
        Some(row) => {
            let details = serde_json::to_string(b)?;
            let (status, checkin, checkout) = (
                BookingStatus::of(&b.status),
                b.checkin.to_string(),
                b.checkout.to_string(),
            );
            let update = FactsUpdate {
                bump: true,
                status: &status,
                details_json: &details,
                snapshot_hash: Some(&hash),
                checkin: Some(&checkin),
                checkout: Some(&checkout),
                hotel_confirmation_number: b.hotel_confirmation_number.as_deref(),
                ..FactsUpdate::keep(&row, at)
            };
            store::bookings::write_facts(&db, &update).await?;
            Ok(Recorded {
                version: row.journey_version + 1,
                compensated: None,
                foreign: None,
                locale: Locale::default(),
            })
        }
    }
}
