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

use crate::domain::email::calendar::clean;
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

/// A JSON object being written, member by member (values escaped by serde_json): the markup is
/// a few fixed shapes, written straight to text.
struct Obj(String);

impl Obj {
    /// `{"@type":"<ty>"`, with the schema.org context when `context`.
    fn new(ty: &str, context: bool) -> Obj {
        let head = if context {
            "{\"@context\":\"http://schema.org\","
        } else {
            "{"
        };
        Obj(format!("{head}\"@type\":{}", quote(ty)))
    }

    /// A member whose value is text.
    fn text(self, key: &str, value: &str) -> Obj {
        self.json(key, &quote(value))
    }

    /// A member whose value is JSON already.
    fn json(mut self, key: &str, value: &str) -> Obj {
        self.0.push(',');
        self.0.push_str(&quote(key));
        self.0.push(':');
        self.0.push_str(value);
        self
    }

    /// `}`, after a space when the last member's value is an object: two closing braces never
    /// meet, so the content lock never reads the JSON's structure as an unrendered template
    /// (`}}`).
    fn end(mut self) -> String {
        if self.0.ends_with('}') {
            self.0.push(' ');
        }
        self.0.push('}');
        self.0
    }
}

/// A JSON string literal.
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
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
    let tz: crate::domain::timezone::tzdb::Tz = zone?.trim().parse().ok()?;
    let t = tz.from_local_datetime(&local).earliest()?;
    Some(t.format("%Y-%m-%dT%H:%M:%S%:z").to_string())
}

/// A stay's date with the hotel's clock time and offset when both are known, else the date.
fn stay_date(d: NaiveDate, time: Option<&str>, zone: Option<&str>) -> String {
    time.and_then(|t| NaiveTime::parse_from_str(t.trim(), "%H:%M").ok())
        .and_then(|t| with_offset(d.and_time(t), zone))
        .unwrap_or_else(|| d.format("%Y-%m-%d").to_string())
}

/// A reservation's common members, then `reservationFor`.
fn reservation(
    ty: &str,
    number: &str,
    status: Status,
    name: &str,
    modified_ms: Option<i64>,
    reservation_for: &str,
) -> Obj {
    let mut r = Obj::new(ty, true)
        .text("reservationNumber", number)
        // The same number under schema.org's current name, the one Apple Mail's Siri Event
        // Suggestions read (https://developer.apple.com/documentation/sirieventsuggestionsmarkup).
        .text("reservationId", number)
        .text("reservationStatus", status.url())
        .json(
            "underName",
            &Obj::new("Person", false).text("name", name).end(),
        );
    if let Some(m) = modified(modified_ms) {
        r = r.text("modifiedTime", &m);
    }
    r.json("reservationFor", reservation_for)
}

/// The `LodgingReservation` of a stay as JSON text, or `None` when a required property is
/// unknown (see the module docs). `modified_ms`: the receipt of the change this email tells of.
pub fn lodging(b: &HotelBooking, status: Status, modified_ms: Option<i64>) -> Option<String> {
    let location = b.location.as_ref()?;
    let a = location;
    let zone = location.time_zone.as_deref();
    let address = Obj::new("PostalAddress", false)
        .text("streetAddress", &text(a.street_address.as_deref())?)
        .text("addressLocality", &text(a.locality.as_deref())?)
        .text("addressRegion", &text(a.region.as_deref())?)
        .text("postalCode", &text(a.postal_code.as_deref())?)
        .text("addressCountry", &text(a.country.as_deref())?)
        .end();
    let hotel = Obj::new("LodgingBusiness", false)
        .text("name", &text(Some(&b.hotel_name))?)
        .json("address", &address)
        .text("telephone", &text(location.telephone.as_deref())?)
        .end();
    Some(
        reservation(
            "LodgingReservation",
            &text(Some(b.booking_id.as_str()))?,
            status,
            &text(Some(&b.holder.name.full()))?,
            modified_ms,
            &hotel,
        )
        .text(
            "checkinDate",
            &stay_date(b.checkin, location.checkin_time.as_deref(), zone),
        )
        .text(
            "checkoutDate",
            &stay_date(b.checkout, location.checkout_time.as_deref(), zone),
        )
        .end(),
    )
}

/// An airport as Gmail's flight pages name it.
fn airport(a: &Airport) -> Option<String> {
    Some(
        Obj::new("Airport", false)
            .text("name", &text(Some(&a.name))?)
            .text("iataCode", &text(Some(&a.iata_code))?)
            .end(),
    )
}

/// The flight of a segment: the airline's IATA code (the flight number's first two characters)
/// and name, the number without it, both airports and both times with their offsets.
fn flight_of(s: &FlightSegment) -> Option<String> {
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
    let airline = Obj::new("Airline", false)
        .text("name", &text(s.airline.as_deref())?)
        .text("iataCode", &carrier.to_ascii_uppercase())
        .end();
    Some(
        Obj::new("Flight", false)
            .text("flightNumber", if number.is_empty() { "0" } else { number })
            .json("airline", &airline)
            .json("departureAirport", &airport(&s.origin)?)
            .text(
                "departureTime",
                &with_offset(s.departing_at, s.origin.time_zone.as_deref())?,
            )
            .json("arrivalAirport", &airport(&s.destination)?)
            .text(
                "arrivalTime",
                &with_offset(s.arriving_at, s.destination.time_zone.as_deref())?,
            )
            .end(),
    )
}

/// One `FlightReservation` per segment and passenger of an order (the contact when no passenger
/// is named) as JSON text, or `None` when a required property of any segment is unknown: a card
/// with some flights of the journey missing would mislead.
pub fn flight(f: &FlightBooking, status: Status, modified_ms: Option<i64>) -> Option<String> {
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
    let flights: Vec<String> = f.segments.iter().map(flight_of).collect::<Option<_>>()?;
    let mut items = Vec::new();
    for flight in &flights {
        for name in &names {
            items.push(
                reservation(
                    "FlightReservation",
                    &number,
                    status,
                    name,
                    modified_ms,
                    flight,
                )
                .end(),
            );
        }
    }
    match items.len() {
        0 => None,
        1 => items.pop(),
        _ => Some(format!("[{}]", items.join(","))),
    }
}

/// `html` with `markup` (JSON text) as a `<script type="application/ld+json">` right after its
/// `<body …>` tag (at the start when it has none). `<`, `>` and `&` in the JSON are written as
/// `\u003c`, `\u003e`, `\u0026` (the same JSON), so no value can close the script element.
pub fn embed(html: &str, markup: &str) -> String {
    let json = markup
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
