//! Canonical events: what every supplier adapter (`crate::sources`) produces and the only thing
//! journeys ever see.
//!
//! Persisted as Workflow params (JSON), so every shape here is versioned through
//! [`JourneyParams::params_version`]; add fields as `Option` / `#[serde(default)]` to stay readable
//! by instances that are already running.

use crate::domain::stored_names;
use chrono::{NaiveDate, NaiveDateTime};
use serde::{Deserialize, Serialize};
use std::fmt;

mod failure;
pub use failure::{BookingFailure, FailedKind, RefundUpdate};

/// Version of [`JourneyParams`] written by this build. Bump when a change is not backwards
/// compatible, and keep reading older versions.
pub const PARAMS_VERSION: u32 = 1;

/// Where an event came from. Stored names (`as_str`, the variant in `snake_case`) are stable: they
/// appear in D1 `raw_events.source` and in Workflow instance ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Source {
    /// liteAPI (Nuitee) hotel and flight webhooks.
    Liteapi,
    /// Duffel flights and stays webhooks.
    Duffel,
    /// Stripe payment webhooks.
    Stripe,
    /// Standard Webhooks carrying the engine's canonical event JSON.
    Generic,
    /// Resend's delivery reports (bounces, complaints), signed with Svix: stored in `raw_events`,
    /// recorded as suppressions; never starts a journey.
    Resend,
    /// Cloudflare Email Service delivery events, consumed from a Queue (event subscriptions):
    /// stored in `raw_events`, bounces and complaints recorded as suppressions, statuses onto the
    /// email record; never starts a journey.
    EmailService,
}

stored_names!(Source);

/// Why a value could not become one of the core's newtypes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidValue {
    #[error("is empty")]
    Empty,
    #[error("is longer than {0} characters")]
    TooLong(usize),
    #[error("contains a control character")]
    ControlCharacter,
    #[error("is not an email address")]
    NotAnEmailAddress,
}

fn check_text(raw: &str, max: usize) -> Result<String, InvalidValue> {
    let value = raw.trim();
    if value.is_empty() {
        return Err(InvalidValue::Empty);
    }
    if value.chars().count() > max {
        return Err(InvalidValue::TooLong(max));
    }
    if value.chars().any(char::is_control) {
        return Err(InvalidValue::ControlCharacter);
    }
    Ok(value.to_string())
}

macro_rules! text_newtype {
    ($(#[$doc:meta])* $name:ident, $max:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Maximum length in characters.
            pub const MAX_LEN: usize = $max;

            /// Parses a trimmed, non-empty value of at most [`Self::MAX_LEN`] characters with no
            /// control characters.
            pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
                check_text(raw, $max).map(Self)
            }

            /// The value as given (trimmed).
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = InvalidValue;
            fn try_from(raw: String) -> Result<Self, Self::Error> {
                Self::parse(&raw)
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_newtype!(
    /// A supplier's event id (liteAPI `event_id`, Duffel `wev_…`, Stripe `evt_…`, Standard Webhooks
    /// `webhook-id`): the dedupe key of an inbound delivery.
    EventId,
    256
);
text_newtype!(
    /// A booking's id at its supplier (liteAPI `bookingId`, Duffel `ord_…` / `bok_…`).
    BookingRef,
    128
);

/// An email address, checked for the shape `local@domain`: one `@`, ≤ 254 characters, no spaces,
/// no unquoted specials (`"(),:;<>[]\`), no invisible characters, no leading, trailing or double
/// dot in the local part, a domain of letters (any script), digits, `-` and dots with at least one
/// dot. The domain is lower-cased; the local part is kept as given.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EmailAddress(String);

impl EmailAddress {
    /// Parses `local@domain`; see the type docs for the rules.
    pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
        let value = check_text(raw, 254)?;
        let (local, domain) = value
            .rsplit_once('@')
            .ok_or(InvalidValue::NotAnEmailAddress)?;
        // Unquoted RFC 5322 specials, and characters that render as nothing (zero-width, soft
        // hyphen, bidi controls, BOM): never in an address we send to. Quoted local parts
        // (`"a b"@x`) and IP-literal domains (`a@[127.0.0.1]`) are valid mail syntax but are not
        // accepted: no guest uses them and providers treat them inconsistently.
        let refused = |c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '<' | '>' | ',' | '"' | '(' | ')' | ';' | ':' | '[' | ']' | '\\'
                )
                || matches!(c,
                    '\u{00AD}' | '\u{034F}' | '\u{180E}' | '\u{200B}'..='\u{200F}'
                    | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}'
                    | '\u{FEFF}')
        };
        let ok = !local.is_empty()
            && !domain.is_empty()
            && !local.contains('@')
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains("..")
            && domain
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '.')
            && !value.chars().any(refused);
        if !ok {
            return Err(InvalidValue::NotAnEmailAddress);
        }
        Ok(Self(format!("{local}@{}", domain.to_ascii_lowercase())))
    }

    /// The address, e.g. `guest@example.com`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The part after `@`, lower case.
    pub fn domain(&self) -> &str {
        self.0.rsplit_once('@').map(|(_, d)| d).unwrap_or("")
    }
}

impl TryFrom<String> for EmailAddress {
    type Error = InvalidValue;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl From<EmailAddress> for String {
    fn from(v: EmailAddress) -> String {
        v.0
    }
}

impl fmt::Display for EmailAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A person's name as a supplier gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PersonName {
    pub first_name: String,
    pub last_name: String,
}

impl PersonName {
    /// "First Last", or whichever part is present.
    pub fn full(&self) -> String {
        format!("{} {}", self.first_name.trim(), self.last_name.trim())
            .trim()
            .to_string()
    }
}

/// An amount of money exactly as the supplier wrote it (decimal text, never a float) plus its
/// ISO 4217 currency code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Money {
    /// Decimal text, e.g. `"540"` or `"212.40"`.
    pub amount: String,
    /// ISO 4217 code, upper case, e.g. `"EUR"`.
    pub currency: String,
}

/// One booked room of a hotel booking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookedRoom {
    pub room_name: String,
    pub board_name: Option<String>,
    pub adults: u32,
    pub children: u32,
}

/// The person who booked and receives the guest emails.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub name: PersonName,
    pub email: EmailAddress,
    pub phone: Option<String>,
}

/// Where a hotel is, as far as the supplier says. Used to find its local time zone: the IANA zone
/// when given, else the coordinates (see `domain::schedule`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct HotelLocation {
    /// IANA time zone, e.g. `Europe/Madrid`, when a supplier gives one.
    pub time_zone: Option<String>,
    /// WGS84 degrees.
    pub latitude: Option<f64>,
    /// WGS84 degrees, east positive.
    pub longitude: Option<f64>,
    /// The hotel's street address on one line, when given (the calendar event's `LOCATION`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
}

/// A confirmed hotel booking (liteAPI `booking.book` / `booking.rebook.*`, Duffel
/// `stays.booking.created`).
///
/// Dates are the hotel's local calendar dates (`checkin` ≤ `checkout`), as the supplier gives them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HotelBooking {
    pub booking_id: BookingRef,
    pub client_reference: Option<String>,
    pub prebook_id: Option<String>,
    /// Supplier status text, e.g. `CONFIRMED`. Never part of a traveller snapshot.
    pub status: String,
    pub hotel_id: Option<String>,
    pub hotel_name: String,
    pub checkin: NaiveDate,
    pub checkout: NaiveDate,
    pub rooms: Vec<BookedRoom>,
    pub holder: Holder,
    pub guests: Vec<PersonName>,
    pub total: Option<Money>,
    /// Arrives later through `booking.book.hotelConfirmationNumber`; usually `None` here.
    pub hotel_confirmation_number: Option<String>,
    /// `true` when the supplier marked the booking as sandbox/test.
    pub sandbox: bool,
    /// Location facts for the hotel's time zone; `None` when the payload has none (the journey
    /// then looks the hotel up by `hotel_id`).
    #[serde(default)]
    pub location: Option<HotelLocation>,
    /// Check-in instructions when known (liteAPI `checkinInstructions.instructions`, Duffel
    /// `check_in_information`).
    #[serde(default)]
    pub checkin_instructions: Option<String>,
    /// The booking this one replaces (liteAPI rebook: a new booking id auto-cancels the old one).
    #[serde(default)]
    pub replaces: Option<BookingRef>,
    /// The guest's language as stated (BCP 47; generic `locale`/`language`): `i18n::locale`.
    #[serde(default, alias = "language", skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

impl HotelBooking {
    /// Number of nights between check-in and check-out (≥ 0).
    pub fn nights(&self) -> i64 {
        (self.checkout - self.checkin).num_days().max(0)
    }
}

/// An airport as a flight segment gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Airport {
    /// IATA code, e.g. `LHR`.
    pub iata_code: String,
    pub name: String,
    pub city_name: Option<String>,
    /// IANA time zone of the airport (Duffel `time_zone`, else the zone at Duffel's airport
    /// coordinates), e.g. `Europe/London`; `None` for liteAPI, which gives neither.
    pub time_zone: Option<String>,
}

/// One flight leg. Times are local wall-clock times at the airport concerned (Duffel
/// `departing_at` / `arriving_at` carry no offset: origin zone and destination zone respectively).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlightSegment {
    /// Marketing carrier code + number, e.g. `ZZ 0472`.
    pub flight_number: String,
    pub origin: Airport,
    pub destination: Airport,
    /// Local time at `origin`.
    pub departing_at: NaiveDateTime,
    /// Local time at `destination`.
    pub arriving_at: NaiveDateTime,
}

/// A confirmed flight order (Duffel `order.created`, liteAPI `flight.book.confirmed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlightBooking {
    /// Supplier order id (`ord_…`).
    pub booking_id: BookingRef,
    /// Airline booking reference (PNR), shown to the traveller.
    pub booking_reference: Option<String>,
    /// Supplier status text. Never part of a traveller snapshot.
    pub status: String,
    /// Who receives the emails (first passenger with an email address).
    pub contact: Holder,
    pub passengers: Vec<PersonName>,
    /// All segments of all slices, in travel order.
    pub segments: Vec<FlightSegment>,
    pub total: Option<Money>,
    pub sandbox: bool,
    /// The traveller's language as stated; see [`HotelBooking::locale`].
    #[serde(default, alias = "language", skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

/// One airline-initiated schedule change (Duffel AIC `aic_…`): the segments as they were and as
/// they are now (new segments may carry new ids; compare by position and flight).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlightChange {
    pub change_id: String,
    pub order_id: BookingRef,
    pub removed: Vec<FlightSegment>,
    pub added: Vec<FlightSegment>,
}

/// A hotel booking's change that may carry only some facts (liteAPI `booking.amendment*`: the
/// inner shape is unpublished). The journey applies it to the stored booking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct HotelAmendment {
    pub booking_id: Option<BookingRef>,
    #[serde(default)]
    pub hotel_name: Option<String>,
    #[serde(default)]
    pub checkin: Option<NaiveDate>,
    #[serde(default)]
    pub checkout: Option<NaiveDate>,
    #[serde(default)]
    pub rooms: Option<Vec<BookedRoom>>,
    #[serde(default)]
    pub guests: Option<Vec<PersonName>>,
    #[serde(default)]
    pub holder_name: Option<PersonName>,
    /// `true` for `booking.amendment.relocation` (the guest was moved to another hotel).
    #[serde(default)]
    pub relocation: bool,
    /// A new language (generic `locale` / `language`): the **explicit** change of a booking's.
    #[serde(default, alias = "language", skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

/// A cancellation of a hotel or flight booking, with the money facts when the supplier gives them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cancellation {
    pub booking_id: BookingRef,
    /// `true` for liteAPI `CANCELLED_WITH_CHARGES` or a non-zero fee.
    pub with_charges: bool,
    pub cancellation_fee: Option<Money>,
    pub refund: Option<Money>,
}

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

/// The one canonical event type. Journeys match on this and nothing else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// for this owner only (`crate::domain::ownership`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner: Option<String>,
}

impl JourneyParams {
    /// The owner this journey acts for: its source and, for the generic source, its partner.
    pub fn owner(&self) -> crate::domain::ownership::Owner {
        crate::domain::ownership::Owner::new(self.source, self.partner.as_deref())
    }
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

#[cfg(test)]
mod email_address_tests {
    use super::*;

    #[test]
    fn ordinary_addresses_parse_and_keep_their_local_part() {
        for (raw, want) in [
            ("guest@example.com", "guest@example.com"),
            (
                "  Guest.Name+tag@Example.COM ",
                "Guest.Name+tag@example.com",
            ),
            ("o'brien@mail.example.ie", "o'brien@mail.example.ie"),
            ("uni-ü@exämple.com", "uni-ü@exämple.com"),
            ("a@b-c.example", "a@b-c.example"),
        ] {
            assert_eq!(EmailAddress::parse(raw).unwrap().as_str(), want, "{raw}");
        }
    }

    #[test]
    fn specials_invisible_characters_and_odd_dots_are_refused() {
        for raw in [
            "quote\"x@example.com",
            "semi;x@example.com",
            "paren(comment)@example.com",
            "colon:x@example.com",
            "back\\slash@example.com",
            "zwsp\u{200b}@example.com",
            "rtl\u{202e}@example.com",
            "soft\u{00ad}hyphen@example.com",
            "ip@[127.0.0.1]",
            ".dot@example.com",
            "dot.@example.com",
            "two..dots@example.com",
            "x@example..com",
            "x@exa_mple.com",
            "x@localhost",
            "a b@example.com",
            "<x@example.com>",
            "x@example.com,y@example.com",
            "@example.com",
            "x@",
        ] {
            assert!(EmailAddress::parse(raw).is_err(), "{raw:?} was accepted");
        }
    }
}
