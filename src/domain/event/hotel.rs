//! Hotel bookings as the suppliers report them: a confirmed booking, its rooms and location, and
//! an amendment that may carry only some of its facts.

use super::{BookingRef, Holder, Money, PersonName};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// One booked room of a hotel booking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookedRoom {
    pub room_name: String,
    pub board_name: Option<String>,
    pub adults: u32,
    pub children: u32,
}

/// Where a hotel is, as far as the supplier says. Used to find its local time zone: the IANA zone
/// when given, else the coordinates (see `domain::journey::schedule`).
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
    /// The hotel's address in parts, when the supplier gives them (Duffel Stays
    /// `accommodation.location.address`; the generic source's `location` fields of the same
    /// names), as schema.org's `PostalAddress` names them (<https://schema.org/PostalAddress>):
    /// what the reservation markup of the emails needs (`crate::domain::email::markup`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub street_address: Option<String>,
    /// The city.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locality: Option<String>,
    /// The state, province or region.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    /// ISO 3166-1 alpha-2 code or the country's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// The hotel's telephone number as given (liteAPI
    /// `accommodation.phone_number`, the generic source's `location.telephone`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub telephone: Option<String>,
    /// Check-in from, hotel local wall-clock time `HH:MM` (Duffel
    /// `check_in_information.check_in_after_time`, the generic `location.checkin_time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkin_time: Option<String>,
    /// Check-out until, hotel local `HH:MM` (Duffel `check_out_before_time`, generic
    /// `location.checkout_time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkout_time: Option<String>,
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
    /// The guest's language as stated (generic `locale` or `language`): a BCP 47 tag or an
    /// `Accept-Language`-style list (the generic source reads the fields from any JSON value and
    /// never refuses a booking for them, `crate::sources::generic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

impl HotelBooking {
    /// Number of nights between check-in and check-out (≥ 0).
    pub fn nights(&self) -> i64 {
        (self.checkout - self.checkin).num_days().max(0)
    }
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
    /// A new language (generic `locale` / `language`, read as [`HotelBooking::locale`]): the
    /// **explicit** change of a booking's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}
