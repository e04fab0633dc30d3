//! liteAPI (Nuitee) webhooks — research/formats.md §1.
//!
//! Delivery: `POST` with the dashboard's static token verbatim in the `authorization` header (no
//! HMAC, no timestamp), at-least-once, unordered; dedupe on `event_id`.
//! Envelope: `{event_id, event_name, request, response, sandbox}` where `request` and `response`
//! are JSON documents *encoded as strings* (parsed twice). Inner shapes are unpublished, so inner
//! fields are read tolerantly (`response.data.X`, falling back to `response.X`).

use super::{secrets_match, AuthError, ParseError};
use crate::domain::event::{
    BookedRoom, BookingRef, EmailAddress, EventId, Holder, HotelBooking, Interpretation, Money,
    PersonName, SupplierEvent,
};
use chrono::NaiveDate;
use serde_json::{Map, Value};

/// Header carrying the static token.
pub const TOKEN_HEADER: &str = "authorization";

/// Checks the `authorization` header against the configured token (constant time). An optional
/// `Bearer ` prefix is accepted so the dashboard value can be either form.
pub fn verify_token(header: Option<&str>, expected: &str) -> Result<(), AuthError> {
    if expected.is_empty() {
        return Err(AuthError::NotConfigured);
    }
    let presented = header
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .ok_or(AuthError::Missing(TOKEN_HEADER))?;
    let presented = presented
        .strip_prefix("Bearer ")
        .or_else(|| presented.strip_prefix("bearer "))
        .unwrap_or(presented);
    if secrets_match(presented, expected) {
        Ok(())
    } else {
        Err(AuthError::Mismatch(TOKEN_HEADER))
    }
}

/// A parsed liteAPI envelope with `request`/`response` already decoded from their string form.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub event_id: EventId,
    pub event_name: String,
    pub request: Value,
    pub response: Value,
    pub sandbox: bool,
}

/// Reads the `event_id` of a body that may be otherwise malformed (to label a rejected raw row).
pub fn peek_event_id(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    v.get("event_id")?.as_str().map(str::to_string)
}

fn required_str<'a>(obj: &'a Map<String, Value>, field: &str) -> Result<&'a str, ParseError> {
    match obj.get(field) {
        None | Some(Value::Null) => Err(ParseError::Missing(field.to_string())),
        Some(Value::String(s)) if s.trim().is_empty() => Err(ParseError::Invalid {
            field: field.to_string(),
            reason: "is empty".into(),
        }),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ParseError::Invalid {
            field: field.to_string(),
            reason: "must be a string".into(),
        }),
    }
}

fn json_string_field(obj: &Map<String, Value>, field: &str) -> Result<Value, ParseError> {
    match obj.get(field) {
        None | Some(Value::Null) => Err(ParseError::Missing(field.to_string())),
        Some(Value::String(s)) => {
            serde_json::from_str::<Value>(s).map_err(|e| ParseError::Invalid {
                field: field.to_string(),
                reason: format!("must be a JSON document encoded as a string ({e})"),
            })
        }
        Some(_) => Err(ParseError::Invalid {
            field: field.to_string(),
            reason: "must be a JSON document encoded as a string".into(),
        }),
    }
}

/// Parses and checks the envelope: `event_id` and `event_name` non-empty strings; `request` and
/// `response` strings holding JSON; `sandbox` a boolean (or 0/1) when present.
pub fn parse_envelope(body: &[u8]) -> Result<Envelope, ParseError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| ParseError::Json(e.to_string()))?;
    let obj = v.as_object().ok_or(ParseError::NotAnObject)?;
    let event_id =
        EventId::parse(required_str(obj, "event_id")?).map_err(|e| ParseError::Invalid {
            field: "event_id".into(),
            reason: e.to_string(),
        })?;
    let event_name = required_str(obj, "event_name")?.trim().to_string();
    let request = json_string_field(obj, "request")?;
    let response = json_string_field(obj, "response")?;
    let sandbox = match obj.get("sandbox") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) if n.as_i64() == Some(0) || n.as_i64() == Some(1) => {
            n.as_i64() == Some(1)
        }
        Some(_) => {
            return Err(ParseError::Invalid {
                field: "sandbox".into(),
                reason: "must be a boolean".into(),
            })
        }
    };
    Ok(Envelope {
        event_id,
        event_name,
        request,
        response,
        sandbox,
    })
}

/// Field lookup inside `response`: `response.data.<path>` then `response.<path>`.
struct Inner<'a> {
    root: &'a Value,
    prefix: &'static str,
}

impl<'a> Inner<'a> {
    fn data(&self) -> &'a Value {
        match self.root.get("data") {
            Some(d) if d.is_object() => d,
            _ => self.root,
        }
    }

    fn path(&self, field: &str) -> String {
        if self.root.get("data").is_some_and(Value::is_object) {
            format!("{}.data.{field}", self.prefix)
        } else {
            format!("{}.{field}", self.prefix)
        }
    }

    fn get(&self, field: &str) -> Option<&'a Value> {
        self.data().get(field).filter(|v| !v.is_null())
    }

    fn str_opt(&self, field: &str) -> Option<String> {
        self.get(field)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }

    fn str_req(&self, field: &str) -> Result<String, ParseError> {
        match self.get(field) {
            None => Err(ParseError::Missing(self.path(field))),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Some(_) => Err(ParseError::Invalid {
                field: self.path(field),
                reason: "must be a non-empty string".into(),
            }),
        }
    }

    fn date_req(&self, field: &str) -> Result<NaiveDate, ParseError> {
        let s = self.str_req(field)?;
        NaiveDate::parse_from_str(&s, "%Y-%m-%d").map_err(|_| ParseError::Invalid {
            field: self.path(field),
            reason: format!("must be a date YYYY-MM-DD, got {s:?}"),
        })
    }
}

fn number_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    }
}

fn person(v: &Value) -> PersonName {
    let s = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string()
    };
    PersonName {
        first_name: s("firstName"),
        last_name: s("lastName"),
    }
}

/// Builds the canonical hotel booking from a `booking.book` envelope.
///
/// Required: `bookingId`, `checkin`, `checkout` (YYYY-MM-DD, checkout ≥ checkin), `hotel.name`,
/// and the holder's `email` (from `response…holder`, else `request.holder`).
pub fn hotel_booking(env: &Envelope) -> Result<HotelBooking, ParseError> {
    let r = Inner {
        root: &env.response,
        prefix: "response",
    };
    let booking_id =
        BookingRef::parse(&r.str_req("bookingId")?).map_err(|e| ParseError::Invalid {
            field: r.path("bookingId"),
            reason: e.to_string(),
        })?;
    let checkin = r.date_req("checkin")?;
    let checkout = r.date_req("checkout")?;
    if checkout < checkin {
        return Err(ParseError::Invalid {
            field: r.path("checkout"),
            reason: "is before checkin".into(),
        });
    }
    let hotel = r.get("hotel");
    let hotel_name = hotel
        .and_then(|h| h.get("name"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ParseError::Missing(r.path("hotel.name")))?
        .to_string();
    let hotel_id = hotel
        .and_then(|h| h.get("hotelId"))
        .and_then(Value::as_str)
        .map(str::to_string);

    let (holder_value, holder_path) = match r.get("holder") {
        Some(h) if h.get("email").is_some_and(|e| !e.is_null()) => (h, r.path("holder")),
        _ => match env.request.get("holder") {
            Some(h) => (h, "request.holder".to_string()),
            None => return Err(ParseError::Missing(r.path("holder.email"))),
        },
    };
    let email_raw = match holder_value.get("email") {
        None | Some(Value::Null) => {
            return Err(ParseError::Missing(format!("{holder_path}.email")))
        }
        Some(Value::String(s)) => s.as_str(),
        // Present but not text: a malformed value, not an absent one.
        Some(_) => {
            return Err(ParseError::Invalid {
                field: format!("{holder_path}.email"),
                reason: "must be a string".into(),
            })
        }
    };
    let email = EmailAddress::parse(email_raw).map_err(|e| ParseError::Invalid {
        field: format!("{holder_path}.email"),
        reason: e.to_string(),
    })?;
    let holder = Holder {
        name: person(holder_value),
        email,
        phone: holder_value
            .get("phone")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    };

    let mut rooms = Vec::new();
    let mut guests = Vec::new();
    if let Some(list) = r.get("bookedRooms").and_then(Value::as_array) {
        for room in list {
            let room_name = room
                .get("roomType")
                .and_then(|t| t.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("Room")
                .to_string();
            rooms.push(BookedRoom {
                room_name,
                board_name: room
                    .get("boardName")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                adults: room.get("adults").and_then(Value::as_u64).unwrap_or(0) as u32,
                children: room.get("children").and_then(Value::as_u64).unwrap_or(0) as u32,
            });
            for g in room
                .get("guests")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let p = person(g);
                if !p.full().is_empty() && !guests.contains(&p) {
                    guests.push(p);
                }
            }
        }
    }

    let currency = r.str_opt("currency");
    let total = match (r.get("price").and_then(number_text), currency.clone()) {
        (Some(amount), Some(currency)) => Some(Money {
            amount,
            currency: currency.to_ascii_uppercase(),
        }),
        _ => r
            .get("bookedRooms")
            .and_then(|rs| rs.get(0))
            .and_then(|room| room.pointer("/rate/retailRate/total"))
            .and_then(|t| {
                Some(Money {
                    amount: number_text(t.get("amount")?)?,
                    currency: t.get("currency")?.as_str()?.to_ascii_uppercase(),
                })
            }),
    };

    Ok(HotelBooking {
        booking_id,
        client_reference: r.str_opt("clientReference").or_else(|| {
            env.request
                .get("clientReference")
                .and_then(Value::as_str)
                .map(str::to_string)
        }),
        prebook_id: r.str_opt("prebookId").or_else(|| {
            env.request
                .get("prebookId")
                .and_then(Value::as_str)
                .map(str::to_string)
        }),
        status: r.str_opt("status").unwrap_or_else(|| "CONFIRMED".into()),
        hotel_id,
        hotel_name,
        checkin,
        checkout,
        rooms,
        holder,
        guests,
        total,
        hotel_confirmation_number: r.str_opt("hotelConfirmationCode"),
        sandbox: env.sandbox,
        location: None,
        checkin_instructions: r
            .get("checkinInstructions")
            .and_then(|c| c.get("instructions"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        replaces: r
            .str_opt("rebookFrom")
            .and_then(|s| BookingRef::parse(&s).ok()),
    })
}

/// Maps an envelope to what the engine does with it. `booking.book` starts a journey; every other
/// name (known or not) is stored and acknowledged without starting anything — journeys for the
/// rest of the lifecycle are added by later adapters of the same function.
pub fn interpret(env: &Envelope) -> Result<Interpretation, ParseError> {
    match env.event_name.as_str() {
        "booking.book" => Ok(Interpretation::Journey(SupplierEvent::HotelBooked(
            Box::new(hotel_booking(env)?),
        ))),
        other => Ok(Interpretation::Ignored(other.to_string())),
    }
}
