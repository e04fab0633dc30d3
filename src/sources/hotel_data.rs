//! liteAPI hotel data (pure): the answer of the static-data read API
//! `GET {LITEAPI_DATA_BASE_URL}/data/hotel?hotelId=<id>` (header `X-API-Key`), read for the
//! hotel's coordinates, from which the schedule finds its local time zone. The HTTP call is in
//! [`crate::suppliers::liteapi`]; this module only parses the body, so it is host-tested.
//!
//! Shape (the liteAPI API reference, <https://docs.liteapi.travel>): `{"data": {"id", "name",
//! "location": {"latitude": <number>, "longitude": <number>}, "address", "city", "country", …}}`.
//! liteAPI publishes no hotel time-zone field, so [`HotelLocation::time_zone`] stays `None`.

use super::json::At;
use super::ParseError;
use crate::domain::event::HotelLocation;
use serde_json::Value;

/// Parses a `/data/hotel` answer into the hotel's location: `data.location.latitude` and
/// `data.location.longitude` (WGS84 degrees) are both required numbers. Errors name the path
/// (`data.location`, `data.location.latitude`, …).
pub fn parse_hotel_location(body: &[u8]) -> Result<HotelLocation, ParseError> {
    let v: Value = crate::domain::basics::json::parse_body(body)?;
    if !v.is_object() {
        return Err(ParseError::NotAnObject);
    }
    let location = At::root(&v, "").get("data").get("location");
    if !location.is_present() {
        return Err(location.missing());
    }
    let degrees = |key: &str| -> Result<f64, ParseError> {
        let at = location.get(key);
        match at.value() {
            None => Err(at.missing()),
            Some(n) => n.as_f64().ok_or_else(|| at.invalid("must be a number")),
        }
    };
    Ok(HotelLocation {
        time_zone: None,
        latitude: Some(degrees("latitude")?),
        longitude: Some(degrees("longitude")?),
        address: None,
        ..Default::default()
    })
}
