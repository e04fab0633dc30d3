//! liteAPI flight events: `flight.book.*` read from liteAPI's flight booking object (see the
//! table in `super`).

use super::super::json::At;
use super::{Envelope, ParseError};
use crate::domain::event::{Airport, BookingRef, FlightBooking, FlightSegment, Holder, Money};
use serde_json::Value;

/// The flight booking object inside a `flight.book.*` response. Tolerated shapes (the webhook's
/// inner document is unpublished): `response.data` as the booking, `response.data.booking`, the
/// `GET /flights/bookings/{id}` form `response.data[0].booking`, or `response` itself.
pub(super) fn flight_booking_at(env: &Envelope) -> At<'_> {
    let root = At::root(&env.response, "response");
    let data = root.get("data");
    let node = match data.value() {
        Some(Value::Array(_)) => data.index(0),
        Some(Value::Object(_)) => data,
        _ => root,
    };
    let booking = node.get("booking");
    if booking.value().is_some_and(Value::is_object) {
        booking
    } else {
        node
    }
}

/// The booking id of a flight event: the booking's `bookingId`, else `request.bookingId`.
pub(super) fn flight_booking_id(env: &Envelope) -> Result<BookingRef, ParseError> {
    super::booking_id_or_request(flight_booking_at(env).get("bookingId"), env)
}

/// `flight.book.confirmed` → the canonical flight booking, read from liteAPI's flight booking
/// object (`GET /flights/bookings/{id}`, OpenAPI `FlightBooking`): `bookingId`, `status`,
/// `contact{firstName,lastName,email,phoneCountryCode,phoneNumber}`, `passengers[]`,
/// `journey.segments[]{departureTime,arrivalTime (local, no offset), originCode, originName,
/// destinationCode, destinationName, carrier.marketingCode, flight.marketingNumber}`,
/// `pricing{totalAmount,currency}` / `journey.price{total,currency}`, airline PNRs.
///
/// liteAPI gives no airport time zones (`Airport.time_zone` is `None`), coordinates or city names:
/// segment times stay local without an offset (see `domain::journey::schedule::airport_zone`).
/// Required: `bookingId`, a contact email (`contact.email`, else a passenger's `email`), and at
/// least one segment with its codes, flight number and times.
pub(super) fn flight_booking(env: &Envelope) -> Result<FlightBooking, ParseError> {
    let b = flight_booking_at(env);
    let booking_id = flight_booking_id(env)?;

    let contact_at = b.get("contact");
    let passengers = b.get("passengers").array_opt();
    let email_owner = if contact_at.get("email").is_present() {
        contact_at.clone()
    } else {
        passengers
            .iter()
            .find(|p| p.get("email").is_present())
            .cloned()
            .unwrap_or_else(|| contact_at.clone())
    };
    let mut name = email_owner.person("firstName", "lastName");
    if name.full().is_empty() {
        if let Some(first) = passengers.first() {
            name = first.person("firstName", "lastName");
        }
    }
    let phone = match (
        email_owner.get("phoneCountryCode").str_opt(),
        email_owner.get("phoneNumber").str_opt(),
    ) {
        (Some(cc), Some(n)) if !n.starts_with('+') => {
            Some(format!("+{}{n}", cc.trim_start_matches('+')))
        }
        (_, n) => n.or_else(|| email_owner.get("phone").str_opt()),
    };
    let contact = Holder {
        name,
        email: email_owner.get("email").email_req()?,
        phone,
    };

    let segments_at = {
        let nested = b.get("journey").get("segments");
        if nested.is_present() {
            nested
        } else {
            b.get("segments")
        }
    };
    let segments = segments_at
        .array_req()?
        .iter()
        .map(flight_segment)
        .collect::<Result<Vec<_>, _>>()?;
    if segments.is_empty() {
        return Err(segments_at.invalid("has no segments"));
    }

    let pricing = b.get("pricing");
    let price = b.get("journey").get("price");
    let total = [
        (pricing.get("totalAmount"), pricing.get("currency")),
        (price.get("total"), price.get("currency")),
    ]
    .iter()
    .find_map(|(amount, currency)| {
        Some(Money {
            amount: amount.amount_opt()?,
            currency: currency.str_opt()?.to_ascii_uppercase(),
        })
    });

    Ok(FlightBooking {
        booking_id,
        booking_reference: flight_reference(&b),
        status: b
            .get("status")
            .str_opt()
            .unwrap_or_else(|| "CONFIRMED".into()),
        contact,
        passengers: passengers
            .iter()
            .map(|p| p.person("firstName", "lastName"))
            .filter(|n| !n.full().is_empty())
            .collect(),
        segments,
        total,
        sandbox: env.sandbox
            || b.get("providerEnvironment").str_opt().as_deref() == Some("sandbox"),
        locale: None,
        client_reference: b.get("clientReference").str_opt().or_else(|| {
            env.request
                .get("clientReference")
                .and_then(Value::as_str)
                .map(str::to_string)
        }),
    })
}

/// The reference a traveller uses with the airline: the first non-empty airline PNR, else the
/// provider PNR, else liteAPI's own `bookingRef`.
fn flight_reference(b: &At<'_>) -> Option<String> {
    let reference = b.get("order").get("reference");
    b.get("airlineLocators")
        .array_opt()
        .iter()
        .find_map(|l| l.get("airlinePnr").str_opt())
        .or_else(|| {
            reference
                .get("airlineBookings")
                .array_opt()
                .iter()
                .find_map(|l| l.get("pnr").str_opt())
        })
        .or_else(|| reference.get("provider").get("pnr").str_opt())
        .or_else(|| b.get("bookingRef").str_opt())
}

fn flight_segment(seg: &At<'_>) -> Result<FlightSegment, ParseError> {
    let number = seg.get("flight").get("marketingNumber").str_req()?;
    let carrier = seg.get("carrier").get("marketingCode").str_opt();
    let airport = |code: &str, name: &str| -> Result<Airport, ParseError> {
        let iata_code = seg.get(code).str_req()?.to_ascii_uppercase();
        Ok(Airport {
            name: seg.get(name).str_opt().unwrap_or_else(|| iata_code.clone()),
            city_name: None,
            time_zone: None,
            iata_code,
        })
    };
    Ok(FlightSegment {
        flight_number: match carrier {
            Some(c) if !number.starts_with(&c) => format!("{c} {number}"),
            _ => number,
        },
        origin: airport("originCode", "originName")?,
        destination: airport("destinationCode", "destinationName")?,
        departing_at: seg.get("departureTime").local_datetime_req()?,
        arriving_at: seg.get("arrivalTime").local_datetime_req()?,
        airline: seg.get("carrier").get("marketingName").str_opt(),
    })
}
