//! Canonical events: what every supplier adapter (`crate::sources`) produces and the only thing
//! journeys ever see.
//!
//! Persisted as Workflow params (JSON), so every shape here is versioned through
//! [`JourneyParams::params_version`]; add fields as `Option` / `#[serde(default)]` to stay readable
//! by instances that are already running.
//!
//! Split by purpose: the shared values (`values`), hotel bookings (`hotel`), flight orders
//! (`flight`), checkouts and payments (`checkout`), the compensation saga's failures and refunds
//! (`failure`). Everything is re-exported here, so importers name `crate::domain::event::…` only.
//! This file holds what ties them together: the one [`SupplierEvent`], a cancellation (hotel or
//! flight) and the Workflow's [`JourneyParams`].
//!
//! May use: `basics`.

use serde::{Deserialize, Serialize};

mod checkout;
mod de;
mod failure;
mod flight;
mod hotel;
pub mod ids;
pub mod ownership;
mod values;

pub use checkout::{CheckoutAttempt, PaymentOutcome, PaymentUpdate};
pub use failure::{BookingFailure, FailedKind, RefundUpdate};
pub use flight::{Airport, FlightBooking, FlightChange, FlightSegment};
pub use hotel::{BookedRoom, HotelAmendment, HotelBooking, HotelLocation};
pub use values::{
    BookingRef, EmailAddress, EventId, Holder, InvalidValue, Money, PersonName, Source,
};

/// Version of [`JourneyParams`] written by this build. Bump when a change is not backwards
/// compatible, and keep reading older versions.
pub const PARAMS_VERSION: u32 = 1;

/// A cancellation of a hotel or flight booking, with the money facts when the supplier gives them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cancellation {
    pub booking_id: BookingRef,
    /// `true` for liteAPI `CANCELLED_WITH_CHARGES` or a non-zero fee.
    pub with_charges: bool,
    pub cancellation_fee: Option<Money>,
    pub refund: Option<Money>,
}

/// The one canonical event type. Journeys match on this and nothing else. JSON: the kind's
/// fields with `"kind": "<kind>"` ([`SupplierEvent::kind`]); read by hand (`event/de.rs`) without
/// serde's buffering of internally tagged enums.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SupplierEvent {
    /// A hotel booking was confirmed (liteAPI `booking.book` / `booking.rebook.*`, Duffel
    /// `stays.booking.created`).
    HotelBooked(Box<HotelBooking>),
    /// The hotel's own confirmation number arrived (liteAPI `booking.book.hotelConfirmationNumber`).
    HotelConfirmationNumber {
        booking_id: BookingRef,
        hotel_confirmation_number: String,
    },
    /// Check-in instructions arrived (liteAPI `booking.checkinInstruction`).
    CheckinInstructions {
        booking_id: BookingRef,
        instructions: String,
    },
    /// Some facts of a hotel booking changed (liteAPI `booking.amendment*`).
    HotelAmended(Box<HotelAmendment>),
    /// A hotel or flight booking was cancelled (liteAPI `booking.cancel`, Duffel
    /// `order_cancellation.confirmed`, `stays.booking.cancelled`).
    BookingCancelled(Cancellation),
    /// A flight order was confirmed (Duffel `order.created`, liteAPI `flight.book.confirmed`).
    FlightBooked(Box<FlightBooking>),
    /// The airline changed the schedule (Duffel `order.airline_initiated_change_detected`). The
    /// v2 event carries only ids; the journey lists the order's changes from the Duffel API.
    FlightScheduleChanged {
        order_id: BookingRef,
        change_id: Option<String>,
    },
    /// Only a status moved (e.g. CONFIRMED → TICKETED): recorded, never emailed.
    StatusChanged {
        booking_id: BookingRef,
        status: String,
    },
    /// A checkout started (liteAPI `booking.prebook`).
    CheckoutStarted(Box<CheckoutAttempt>),
    /// The payment processor reported on a checkout (Stripe).
    PaymentUpdated(Box<PaymentUpdate>),
    /// The supplier failed a booking after payment: compensation.
    BookingFailed(Box<BookingFailure>),
    /// The payment processor reported on a refund (Stripe).
    RefundUpdated(Box<RefundUpdate>),
}

impl SupplierEvent {
    /// The booking this event is about, when it names one (the admin's booking timeline finds
    /// its raw events by it). Checkouts and payments name none (a prebook is not a booking yet).
    pub fn booking_ref(&self) -> Option<&str> {
        match self {
            SupplierEvent::HotelBooked(b) => Some(b.booking_id.as_str()),
            SupplierEvent::HotelConfirmationNumber { booking_id, .. }
            | SupplierEvent::CheckinInstructions { booking_id, .. }
            | SupplierEvent::StatusChanged { booking_id, .. } => Some(booking_id.as_str()),
            SupplierEvent::HotelAmended(a) => a.booking_id.as_ref().map(|b| b.as_str()),
            SupplierEvent::BookingCancelled(c) => Some(c.booking_id.as_str()),
            SupplierEvent::FlightBooked(f) => Some(f.booking_id.as_str()),
            SupplierEvent::FlightScheduleChanged { order_id, .. } => Some(order_id.as_str()),
            SupplierEvent::BookingFailed(f) => f.booking_id.as_ref().map(|b| b.as_str()),
            SupplierEvent::CheckoutStarted(_)
            | SupplierEvent::PaymentUpdated(_)
            | SupplierEvent::RefundUpdated(_) => None,
        }
    }

    /// Every kind's stored name, as [`SupplierEvent::kind`] gives it, in declaration order.
    pub const KINDS: [&'static str; 12] = [
        "hotel_booked",
        "hotel_confirmation_number",
        "checkin_instructions",
        "hotel_amended",
        "booking_cancelled",
        "flight_booked",
        "flight_schedule_changed",
        "status_changed",
        "checkout_started",
        "payment_updated",
        "booking_failed",
        "refund_updated",
    ];

    /// Stable name of the canonical kind, e.g. `hotel_booked`.
    pub fn kind(&self) -> &'static str {
        match self {
            SupplierEvent::HotelBooked(_) => "hotel_booked",
            SupplierEvent::HotelConfirmationNumber { .. } => "hotel_confirmation_number",
            SupplierEvent::CheckinInstructions { .. } => "checkin_instructions",
            SupplierEvent::HotelAmended(_) => "hotel_amended",
            SupplierEvent::BookingCancelled(_) => "booking_cancelled",
            SupplierEvent::FlightBooked(_) => "flight_booked",
            SupplierEvent::FlightScheduleChanged { .. } => "flight_schedule_changed",
            SupplierEvent::StatusChanged { .. } => "status_changed",
            SupplierEvent::CheckoutStarted(_) => "checkout_started",
            SupplierEvent::PaymentUpdated(_) => "payment_updated",
            SupplierEvent::BookingFailed(_) => "booking_failed",
            SupplierEvent::RefundUpdated(_) => "refund_updated",
        }
    }
}

/// What an adapter makes of one delivery.
#[derive(Debug, Clone, PartialEq)]
pub enum Interpretation {
    /// A known event that starts a journey.
    Journey(SupplierEvent),
    /// A well-formed event this engine does not act on (yet): stored and acknowledged, nothing
    /// started. Carries the supplier's event name.
    Ignored(String),
}

/// The params of one Journey Workflow instance (serialized as JSON; ≤ 1 MiB by platform limit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JourneyParams {
    pub params_version: u32,
    pub source: Source,
    pub event_id: EventId,
    /// The supplier's own event name, e.g. `booking.book`.
    pub event_name: String,
    /// When the Worker received the delivery, milliseconds since the Unix epoch (UTC). Every time a
    /// journey computes derives from this or from booking data, never from a clock read after a
    /// sleep (a Workflow replays its body after each sleep).
    pub received_at_ms: i64,
    pub event: SupplierEvent,
    /// The generic source's partner whose key signed the event (`None` for other sources, and
    /// in params written before partners existed: then the default partner). The journey acts
    /// for this owner only (`JourneyParams::owner`, in `crate::domain::event::ownership`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner: Option<String>,
}

#[cfg(test)]
mod stored_name_tests {
    use super::*;
    use strum::VariantArray;

    #[test]
    fn closed_sets_keep_their_released_names() {
        assert_eq!(
            Source::VARIANTS
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>(),
            [
                "liteapi",
                "duffel",
                "stripe",
                "generic",
                "resend",
                "email_service"
            ]
        );
        assert_eq!(
            PaymentOutcome::VARIANTS
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>(),
            ["failed", "paid", "processing", "expired"]
        );
        for s in Source::VARIANTS {
            assert_eq!(Source::parse(s.as_str()), Some(*s));
            assert_eq!(serde_json::to_string(s).unwrap(), format!("\"{s}\""));
        }
        for p in PaymentOutcome::VARIANTS {
            assert_eq!(PaymentOutcome::parse(p.as_str()), Some(*p));
            assert_eq!(serde_json::to_string(p).unwrap(), format!("\"{p}\""));
        }
        assert!(PaymentOutcome::Paid.is_paid() && PaymentOutcome::Processing.is_paid());
        assert!(!PaymentOutcome::Failed.is_paid() && !PaymentOutcome::Expired.is_paid());
    }
}
