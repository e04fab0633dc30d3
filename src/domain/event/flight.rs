//! Flight orders as the suppliers report them: airports, segments, a confirmed order and an
//! airline's schedule change.

use super::{BookingRef, Holder, Money, PersonName};
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

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
    /// The marketing airline's name (Duffel `marketing_carrier.name`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub airline: Option<String>,
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
    /// The traveller's language as stated; see
    /// [`HotelBooking::locale`](super::HotelBooking::locale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// The booking site's reference of the checkout this order was paid through (Duffel
    /// `metadata.client_reference`, else `metadata.trip_id`; liteAPI `clientReference`): how a
    /// Stripe Checkout Session's language reaches the order, as it reaches a stay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_reference: Option<String>,
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
