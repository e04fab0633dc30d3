//! liteAPI (Nuitee) webhooks (<https://docs.liteapi.travel/docs/using-liteapi-webhooks>; the booking
//! object as in the Booking API's OpenAPI, github.com/liteapi-travel/mcp-server
//! `openapi-schemas/booking.json`).
//!
//! Delivery: `POST` with the dashboard's static token verbatim in the `authorization` header (no
//! HMAC, no timestamp), at-least-once, unordered; dedupe on `event_id`.
//! Envelope: `{event_id, event_name, request, response, sandbox}` where `request` and `response`
//! are JSON documents *encoded as strings* (parsed twice). Inner shapes are unpublished, so inner
//! fields are read tolerantly (`response.data.X`, falling back to `response.X`).
//!
//! What [`interpret`] makes of each `event_name`:
//!
//! | `event_name`                                   | canonical event                         |
//! |------------------------------------------------|-----------------------------------------|
//! | `booking.book`, `booking.rebook.rfn`/`.nrfn`   | `HotelBooked` (rebook: `rebookFrom` → `replaces`) |
//! | `booking.book.hotelConfirmationNumber`         | `HotelConfirmationNumber`               |
//! | `booking.cancel`                               | `BookingCancelled` (fee/refund as money) |
//! | `booking.checkinInstruction`                   | `CheckinInstructions`                   |
//! | `booking.amendment`, `booking.amendment.relocation` | `HotelAmended` (facts present only) |
//! | `flight.book.confirmed`                        | `FlightBooked`                          |
//! | `flight.book.cancelled`                        | `BookingCancelled`                      |
//! | `flight.book.created`, `.pending.confirmation`, `.expired` | `StatusChanged`        |
//! | `booking.book_error`, `flight.book.failed`     | `BookingFailed` (compensation, see [`failure`]) |
//! | `booking.prebook`                              | `CheckoutStarted` (see [`checkout_attempt`]) |
//! | other `*_error`, `booking.refund`, `booking.compensation`, `flight.prebook`, unknown | `Ignored(name)` |
//!
//! Booking ids are read from the response (`bookingId`), falling back to `request.bookingId`;
//! errors name the response path.

use super::json::At;
use super::{envelope_delivery, peek_str};
use super::{
    secrets_match, AuthError, Delivery, Inbound, ParseError, Unauthenticated, Verified,
    WebhookSource,
};
use crate::config::Config;
use crate::domain::event::{
    BookingRef, Cancellation, EventId, FailedKind, Interpretation, Source, SupplierEvent,
};
use chrono::NaiveDate;
use serde_json::{Map, Value};

mod failure;
pub(crate) use failure::reason_text;
mod flight;
mod hotel;

use flight::{flight_booking, flight_booking_at, flight_booking_id};
use hotel::{amendment, checkin_instructions, hotel_cancellation, hotel_confirmation_number};
pub use hotel::{checkout_attempt, hotel_booking};

/// Header carrying the static token.
pub const TOKEN_HEADER: &str = "authorization";

/// Checks the `authorization` header against the configured token (constant time). The token is
/// read without any `Bearer ` scheme ([`crate::domain::basics::secret::bearer_token`]), so the dashboard
/// value can be either form and a doubled scheme is no other token.
pub fn verify_token(header: Option<&str>, expected: &str) -> Result<(), AuthError> {
    if expected.is_empty() {
        return Err(AuthError::NotConfigured);
    }
    let presented = header
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .ok_or(AuthError::Missing(TOKEN_HEADER))?;
    // The configured token is read the same way (the production guard strips its scheme).
    let presented = crate::domain::basics::secret::bearer_token(presented);
    if secrets_match(presented, expected) {
        Ok(())
    } else {
        Err(AuthError::Mismatch(TOKEN_HEADER))
    }
}

/// The liteAPI webhook in [`super::WEBHOOKS`]: the static token `LITEAPI_WEBHOOK_TOKEN` in
/// `authorization` ([`verify_token`]), then the envelope ([`parse_envelope`], [`interpret`]).
pub struct Webhook;

impl WebhookSource for Webhook {
    fn source(&self) -> Source {
        Source::Liteapi
    }

    fn verify(&self, cfg: &Config, inbound: &Inbound<'_>) -> Result<Verified, Unauthenticated> {
        let header = (inbound.header)(TOKEN_HEADER);
        verify_token(header.as_deref(), &cfg.liteapi_webhook_token)?;
        Ok(Verified::default())
    }

    fn header_only(&self) -> bool {
        true
    }

    fn parse(&self, inbound: &Inbound<'_>) -> Result<Delivery, ParseError> {
        envelope_delivery(inbound.body, parse_envelope, interpret, |e| {
            (e.event_id, e.event_name)
        })
    }

    fn claimed_id(&self, inbound: &Inbound<'_>) -> Option<String> {
        peek_event_id(inbound.body)
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
    peek_str(body, "event_id")
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
    let v: Value = crate::domain::basics::json::parse_body(body)?;
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

/// Maps an envelope to what the engine does with it (see the module table). Unknown names, and
/// known ones the engine does not act on, are `Ignored(name)`: stored and acknowledged.
pub fn interpret(env: &Envelope) -> Result<Interpretation, ParseError> {
    let name = env.event_name.as_str();
    let event =
        match name {
            "booking.book" | "booking.rebook.rfn" | "booking.rebook.nrfn" => {
                SupplierEvent::HotelBooked(Box::new(hotel_booking(env)?))
            }
            "booking.book.hotelConfirmationNumber" => hotel_confirmation_number(env)?,
            "booking.cancel" => SupplierEvent::BookingCancelled(hotel_cancellation(env)?),
            "booking.checkinInstruction" => checkin_instructions(env)?,
            "booking.prebook" => SupplierEvent::CheckoutStarted(Box::new(checkout_attempt(env)?)),
            "booking.amendment" => SupplierEvent::HotelAmended(Box::new(amendment(env, false)?)),
            "booking.amendment.relocation" => {
                SupplierEvent::HotelAmended(Box::new(amendment(env, true)?))
            }
            "flight.book.confirmed" => SupplierEvent::FlightBooked(Box::new(flight_booking(env)?)),
            "flight.book.cancelled" => SupplierEvent::BookingCancelled(Cancellation {
                booking_id: flight_booking_id(env)?,
                with_charges: false,
                cancellation_fee: None,
                refund: None,
            }),
            "booking.book_error" => SupplierEvent::BookingFailed(Box::new(
                failure::booking_failure(env, FailedKind::Hotel)?,
            )),
            "flight.book.failed" => SupplierEvent::BookingFailed(Box::new(
                failure::booking_failure(env, FailedKind::Flight)?,
            )),
            "flight.book.created" | "flight.book.pending.confirmation" | "flight.book.expired" => {
                let booking = flight_booking_at(env);
                SupplierEvent::StatusChanged {
                    booking_id: flight_booking_id(env)?,
                    status: booking.get("status").str_opt().unwrap_or_else(|| {
                        name["flight.book.".len()..]
                            .replace('.', "_")
                            .to_ascii_uppercase()
                    }),
                }
            }
            // Errors, refunds, compensations and anything unknown.
            other => return Ok(Interpretation::Ignored(other.to_string())),
        };
    Ok(Interpretation::Journey(event))
}

/// `response.data` when it is an object, else `response` itself (the inner shapes are
/// unpublished), with its path for error messages.
/// The booking id at `at` (the response's `bookingId`), else the request's `bookingId`; when
/// both are absent the error names `at`'s path.
fn booking_id_or_request(at: At<'_>, env: &Envelope) -> Result<BookingRef, ParseError> {
    if at.is_present() {
        return at.booking_ref_req();
    }
    let request = At::root(&env.request, "request").get("bookingId");
    if request.is_present() {
        request.booking_ref_req()
    } else {
        Err(at.missing())
    }
}

fn response_data(env: &Envelope) -> At<'_> {
    let root = At::root(&env.response, "response");
    let data = root.get("data");
    if data.value().is_some_and(Value::is_object) {
        data
    } else {
        root
    }
}
