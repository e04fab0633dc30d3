//! The canonical events of the compensation saga (`crate::domain::payment::compensation`): a supplier's
//! failure after payment, and the payment processor's word on a refund.

use super::{BookingRef, EmailAddress, Money, PersonName};
use serde::{Deserialize, Serialize};

/// Which kind of booking a supplier failed to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailedKind {
    Hotel,
    Flight,
}

/// The supplier could not make a booking the guest had (probably) paid for: liteAPI
/// `booking.book_error` / `flight.book.failed`, Duffel `order.creation_failed` /
/// `stays.booking_creation_failed`, or the generic source's `booking_failed`. Starts the
/// compensation (`crate::journey::compensation`). At least one of `booking_id`, `prebook_id`,
/// `client_reference` is present (adapters refuse an event with none: nothing could be matched).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BookingFailure {
    pub booking_kind: FailedKind,
    /// The supplier's booking/order id when one was made (a flight booking that failed after
    /// creation), else `None`.
    #[serde(default)]
    pub booking_id: Option<BookingRef>,
    #[serde(default)]
    pub prebook_id: Option<String>,
    #[serde(default)]
    pub client_reference: Option<String>,
    /// The payment's id as the supplier saw it (liteAPI `payment.transactionId`, Duffel
    /// `metadata.payment_intent`); matched against Stripe payment intents.
    #[serde(default)]
    pub transaction_id: Option<String>,
    #[serde(default)]
    pub email: Option<EmailAddress>,
    #[serde(default)]
    pub guest_name: Option<PersonName>,
    /// What was being booked, one line (hotel name, route), when the event says.
    #[serde(default)]
    pub description: Option<String>,
    /// The supplier's error message, one line, at most 300 characters.
    pub reason: String,
    /// A fee the supplier keeps, when it reports one (then the refund is the captured amount
    /// minus it).
    #[serde(default)]
    pub fee: Option<Money>,
}

/// Stripe's word on a refund (`refund.updated`, `charge.refunded`): matched to a compensation's
/// refund by refund id, else by payment intent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefundUpdate {
    /// `re_…`; `None` for a `charge.refunded` that lists no refund.
    #[serde(default)]
    pub refund_id: Option<String>,
    #[serde(default)]
    pub payment_intent: Option<String>,
    /// Stripe refund status: `pending`, `requires_action`, `succeeded`, `failed`, `canceled`.
    pub status: String,
    #[serde(default)]
    pub amount_minor: Option<i64>,
    #[serde(default)]
    pub currency: Option<String>,
    /// Stripe `failure_reason` (e.g. `expired_or_canceled_card`) when the refund failed.
    #[serde(default)]
    pub failure_reason: Option<String>,
    /// `metadata.compensation_id`: the compensation that made this refund (the engine sends it).
    #[serde(default)]
    pub compensation_id: Option<String>,
}
