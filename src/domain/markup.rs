//! Reservation markup: the schema.org JSON-LD that mail clients read a booking from (Gmail's
//! reservation cards, <https://developers.google.com/workspace/gmail/markup/reference/hotel-reservation>
//! and <https://developers.google.com/workspace/gmail/markup/reference/flight-reservation>),
//! written at the top of the HTML body of every booking email ([`embed`], as Gmail's JSON-LD
//! format page describes: <https://developers.google.com/workspace/gmail/markup/reference/formats/json-ld>).
//!
//! - A stay is one `LodgingReservation`; a flight order one `FlightReservation` per segment and
//!   passenger (a JSON array in one script, as Gmail's multi-segment and multi-passenger
//!   examples do).
//! - `reservationStatus` is `http://schema.org/Confirmed` for the confirmation and every change,
//!   `http://schema.org/Cancelled` for a cancellation (the values of Gmail's pages); a change
//!   (the hotel's number, an amendment, an airline's schedule change, a cancellation) carries
//!   `modifiedTime` (the event's receipt, UTC), which Gmail recommends for updates.
//! - `reservationNumber` is what the guest quotes: the booking id for a stay, the airline's
//!   booking reference (else the order id) for a flight; the same in every email of a booking,
//!   which is how a client matches an update to its card.
//! - Times carry the hotel's or airport's UTC offset (RFC 3339). A stay's check-in and check-out
//!   are date-times with the hotel's offset when the supplier gave the hotel's zone and its
//!   check-in/out times, else the calendar dates (`2026-06-12`).
//! - **Nothing when a required property is unknown**: every property Gmail's pages mark required
//!   must have a value (for a stay the hotel's street, city, region, postal code, country and
//!   telephone; for a flight the airline's name and code, both airports' names, codes and zones),
//!   or the email carries no markup at all rather than a card a client would show wrong or
//!   incomplete. `tests/e2e/reservation-markup.schema.json` is those required properties, and the
//!   end-to-end runs check every block against it.
//!
//! Only guest-facing facts go in (no URLs, no engine names): the content lock reads the HTML,
//! markup included.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use serde_json::{json, Value};

use crate::domain::calendar::clean;
use crate::domain::event::{Airport, FlightBooking, FlightSegment, HotelBooking};

/// A reservation's status as Gmail's pages write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Confirmed,
    Cancelled,
}

impl Status {
    fn url(self) -> &'static str {
        match self {
            Status::Confirmed => "http://schema.org/Confirmed",
            Status::Cancelled => "http://schema.org/Cancelled",
        }
    }
}

/// A non-empty cleaned value (control characters out, one line, bounded), or `None`.
fn text(s: Option<&str>) -> Option<String> {
    s.map(clean).filter(|s| !s.trim().is_empty())
}

/// `modifiedTime` of a change received at `at_ms` (UTC, RFC 3339).
fn modified(at_ms: Option<i64>) -> Option<String> {
    let t = Utc.timestamp_millis_opt(at_ms?).single()?;
    Some(t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// A local wall-clock time in an IANA zone as RFC 3339 with its offset, when the zone is known
/// and the time exists there.
fn with_offset(local: NaiveDateTime, zone: Option<&str>) -> Option<String> {
    let tz: chrono_tz::Tz = zone?.trim().parse().ok()?;
    let t = tz.from_local_datetime(&local).earliest()?;
    Some(t.format("%Y-%m-%dT%H:%M:%S%:z").to_string())
}

/// A stay's date with the hotel's clock time and offset when both are known, else the date.
fn stay_date(d: NaiveDate, time: Option<&str>, zone: Option<&str>) -> String {
    time.and_then(|t| NaiveTime::parse_from_str(t.trim(), "%H:%M").ok())
        .and_then(|t| with_offset(d.and_time(t), zone))
        .unwrap_or_else(|| d.format("%Y-%m-%d").to_string())
}

/// The `LodgingReservation` of a stay, or `None` when a required property is unknown (see the
/// module docs). `modified_ms`: the receipt of the change this email tells of.
pub fn lodging(b: &HotelBooking, status: Status, modified_ms: Option<i64>) -> Option<Value> {
    let location = b.location.as_ref()?;
    let address = location.postal_address.as_ref()?;
    let zone = location.time_zone.as_deref();
    let mut r = json!({
        "@context": "http://schema.org",
        "@type": "LodgingReservation",
        "reservationNumber": text(Some(b.booking_id.as_str()))?,
        "reservationStatus": status.url(),
        "underName": {"@type": "Person", "name": text(Some(&b.holder.name.full()))?},
        "reservationFor": {
            "@type": "LodgingBusiness",
            "name": text(Some(&b.hotel_name))?,
            "address": {
                "@type": "PostalAddress",
                "streetAddress": text(address.street_address.as_deref())?,
                "addressLocality": text(address.locality.as_deref())?,
                "addressRegion": text(address.region.as_deref())?,
                "postalCode": text(address.postal_code.as_deref())?,
                "addressCountry": text(address.country.as_deref())?,
            },
            "telephone": text(location.telephone.as_deref())?,
        },
        "checkinDate": stay_date(b.checkin, location.checkin_time.as_deref(), zone),
        "checkoutDate": stay_date(b.checkout, location.checkout_time.as_deref(), zone),
    });
    if let Some(m) = modified(modified_ms) {
        r["modifiedTime"] = Value::String(m);
    }
    Some(r)
}

/// An airport as Gmail's flight pages name it.
fn airport(a: &Airport) -> Option<Value> {
    Some(json!({
        "@type": "Airport",
        "name": text(Some(&a.name))?,
        "iataCode": text(Some(&a.iata_code))?,
    }))
}

/// The flight of a segment: the airline's IATA code (the flight number's first two characters)
/// and name, the number without it, both airports and both times with their offsets.
fn flight_of(s: &FlightSegment) -> Option<Value> {
    let compact: String = s
        .flight_number
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    if compact.len() < 3 {
        return None;
    }
    let (carrier, number) = compact.split_at(2);
    let number = number.trim_start_matches('0');
    Some(json!({
        "@type": "Flight",
        "flightNumber": if number.is_empty() { "0" } else { number },
        "airline": {
            "@type": "Airline",
            "name": text(s.airline.as_deref())?,
            "iataCode": carrier.to_ascii_uppercase(),
        },
        "departureAirport": airport(&s.origin)?,
        "departureTime": with_offset(s.departing_at, s.origin.time_zone.as_deref())?,
        "arrivalAirport": airport(&s.destination)?,
        "arrivalTime": with_offset(s.arriving_at, s.destination.time_zone.as_deref())?,
    }))
}

/// One `FlightReservation` per segment and passenger of an order (the contact when no passenger
/// is named), or `None` when a required property of any segment is unknown: a card with some
/// flights of the journey missing would mislead.
pub fn flight(f: &FlightBooking, status: Status, modified_ms: Option<i64>) -> Option<Value> {
    let number =
        text(f.booking_reference.as_deref()).or_else(|| text(Some(f.booking_id.as_str())))?;
    let mut names: Vec<String> = f
        .passengers
        .iter()
        .filter_map(|p| text(Some(&p.full())))
        .collect();
    if names.is_empty() {
        names.push(text(Some(&f.contact.name.full()))?);
    }
    let flights: Vec<Value> = f.segments.iter().map(flight_of).collect::<Option<_>>()?;
    if flights.is_empty() {
        return None;
    }
    let modified = modified(modified_ms);
    let mut items = Vec::new();
    for flight in &flights {
        for name in &names {
            let mut r = json!({
                "@context": "http://schema.org",
                "@type": "FlightReservation",
                "reservationNumber": number,
                "reservationStatus": status.url(),
                "underName": {"@type": "Person", "name": name},
                "reservationFor": flight,
            });
            if let Some(m) = &modified {
                r["modifiedTime"] = Value::String(m.clone());
            }
            items.push(r);
        }
    }
    Some(if items.len() == 1 {
        items.remove(0)
    } else {
        Value::Array(items)
    })
}

/// `html` with `markup` as a `<script type="application/ld+json">` right after its `<body …>`
/// tag (at the start when it has none). `<`, `>` and `&` in the JSON are written as `\u003c`,
/// `\u003e`, `\u0026` (the same JSON), so no value can close the script element.
pub fn embed(html: &str, markup: &Value) -> String {
    let json = markup
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    let script = format!("<script type=\"application/ld+json\">{json}</script>\n");
    let at = html
        .find("<body")
        .and_then(|b| html[b..].find('>').map(|e| b + e + 1))
        .unwrap_or(0);
    let mut out = String::with_capacity(html.len() + script.len() + 1);
    out.push_str(&html[..at]);
    if at > 0 {
        out.push('\n');
    }
    out.push_str(&script);
    out.push_str(&html[at..]);
    out
}
