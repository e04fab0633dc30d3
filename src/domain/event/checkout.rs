//! Checkouts before a booking exists: a started checkout (a prebook) and the payment processor's
//! word on it.

use super::{EmailAddress, Money, PersonName};
use crate::domain::basics::stored_names;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// A checkout that started (liteAPI `booking.prebook`, with a payment transaction id when the
/// payment SDK is used). Guest facts are optional: a prebook may not carry them; Stripe events
/// can fill them in later (matched by transaction id / client reference).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckoutAttempt {
    pub prebook_id: String,
    #[serde(default)]
    pub transaction_id: Option<String>,
    #[serde(default)]
    pub client_reference: Option<String>,
    #[serde(default)]
    pub email: Option<EmailAddress>,
    #[serde(default)]
    pub guest_name: Option<PersonName>,
    #[serde(default)]
    pub hotel_id: Option<String>,
    #[serde(default)]
    pub hotel_name: Option<String>,
    #[serde(default)]
    pub checkin: Option<NaiveDate>,
    #[serde(default)]
    pub checkout: Option<NaiveDate>,
    #[serde(default)]
    pub price: Option<Money>,
}

/// What the payment processor says about a checkout (Stripe). Matched to attempts by
/// `transaction_id` (the payment intent) or `client_reference`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaymentUpdate {
    /// `failed` (payment_intent.payment_failed), `paid` (checkout.session.completed with
    /// payment_status paid), `expired` (checkout.session.expired).
    pub outcome: PaymentOutcome,
    /// Stripe payment intent id (`pi_…`), when known.
    #[serde(default)]
    pub payment_intent: Option<String>,
    /// Checkout session id (`cs_…`), when known.
    #[serde(default)]
    pub session_id: Option<String>,
    /// `client_reference_id` or `metadata.trip_id`.
    #[serde(default)]
    pub client_reference: Option<String>,
    #[serde(default)]
    pub email: Option<EmailAddress>,
    #[serde(default)]
    pub name: Option<PersonName>,
    /// `last_payment_error.decline_code` (e.g. `insufficient_funds`), else its `code`.
    #[serde(default)]
    pub decline_code: Option<String>,
    /// What was captured, in the currency's minor unit (Stripe `amount_total` of a session,
    /// `amount_received` of a payment intent), when given.
    #[serde(default)]
    pub amount_minor: Option<i64>,
    /// ISO 4217, upper case (Stripe sends it lower case).
    #[serde(default)]
    pub currency: Option<String>,
    /// The Checkout Session's `locale` (`es`, `pt-BR`, `auto`; ≤ 35 chars of `[A-Za-z0-9-]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

/// Stripe's verdict on a payment attempt. Stored names (D1 `checkout_attempts.payment_status`,
/// step names): `failed`, `paid`, `processing`, `expired`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum PaymentOutcome {
    Failed,
    Paid,
    /// Completed with a delayed payment method that is still processing.
    Processing,
    Expired,
}

stored_names!(PaymentOutcome);

impl PaymentOutcome {
    /// The processor took the money, or will (a delayed method still processing): no follow-up.
    pub fn is_paid(self) -> bool {
        matches!(self, PaymentOutcome::Paid | PaymentOutcome::Processing)
    }
}
