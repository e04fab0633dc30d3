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
//! | `flight.book.created`, `.pending.confirmation`, `.failed`, `.expired` | `StatusChanged` |
//! | `booking.prebook`                              | `CheckoutStarted` (see [`checkout_attempt`]) |
//! | `*_error`, `booking.refund`, `booking.compensation`, `flight.prebook`, unknown | `Ignored(name)` |
//!
//! Booking ids are read from the response (`bookingId`), falling back to `request.bookingId`;
//! errors name the response path.

use super::json::{is_nonzero_amount, number_text, At};
use super::{
    secrets_match, AuthError, Delivery, Inbound, ParseError, Unauthenticated, WebhookSource,
};
use crate::config::Config;
use crate::domain::event::{
    Airport, BookedRoom, BookingRef, Cancellation, CheckoutAttempt, EmailAddress, EventId,
    FlightBooking, FlightSegment, Holder, HotelAmendment, HotelBooking, Interpretation, Money,
    PersonName, Source, SupplierEvent,
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

/// The liteAPI webhook in [`super::WEBHOOKS`]: the static token `LITEAPI_WEBHOOK_TOKEN` in
/// `authorization` ([`verify_token`]), then the envelope ([`parse_envelope`], [`interpret`]).
pub struct Webhook;

impl WebhookSource for Webhook {
    fn source(&self) -> Source {
        Source::Liteapi
    }

    fn verify(&self, cfg: &Config, inbound: &Inbound<'_>) -> Result<(), Unauthenticated> {
        let header = (inbound.header)(TOKEN_HEADER);
        Ok(verify_token(header.as_deref(), &cfg.liteapi_webhook_token)?)
    }

    fn parse(&self, inbound: &Inbound<'_>) -> Result<Delivery, ParseError> {
        let envelope = parse_envelope(inbound.body)?;
        let interpretation = interpret(&envelope)?;
        Ok(Delivery {
            event_id: envelope.event_id,
            event_name: envelope.event_name,
            interpretation,
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

/// `bookedRooms[]` → the canonical rooms, and the distinct named guests across them.
fn rooms_and_guests(list: &[Value]) -> (Vec<BookedRoom>, Vec<PersonName>) {
    let mut rooms = Vec::new();
    let mut guests = Vec::new();
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
    (rooms, guests)
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

    let (rooms, guests) = r
        .get("bookedRooms")
        .and_then(Value::as_array)
        .map(|list| rooms_and_guests(list))
        .unwrap_or_default();

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

/// Maps an envelope to what the engine does with it (see the module table). Unknown names, and
/// known ones the engine does not act on, are `Ignored(name)`: stored and acknowledged.
pub fn interpret(env: &Envelope) -> Result<Interpretation, ParseError> {
    let name = env.event_name.as_str();
    let event = match name {
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
        "flight.book.created"
        | "flight.book.pending.confirmation"
        | "flight.book.failed"
        | "flight.book.expired" => {
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

/// `booking.prebook` (`POST /rates/prebook`: checkout started) → the canonical attempt.
///
/// From `response.data` (else `response`): `prebookId` (required), `transactionId` (present only
/// with the payment SDK), `hotelId`, `hotel.name` / `hotelName`, `checkin` / `checkout`
/// (`YYYY-MM-DD` when present; checkout ≥ checkin), `price` + `currency` as money (both or
/// neither). `clientReference` from the response, else the request. The guest's email and name
/// from `request.holder`, else `request.guests[0]` (`email`, `firstName`, `lastName`), when the
/// request carries them — a prebook usually does not: then `email` and `guest_name` are `None`.
/// An email that does not parse reads as absent (the attempt is still recorded).
pub fn checkout_attempt(env: &Envelope) -> Result<CheckoutAttempt, ParseError> {
    let d = response_data(env);
    let prebook_id = d.get("prebookId").str_req()?;
    let checkin = d.get("checkin").date_opt()?;
    let checkout_at = d.get("checkout");
    let checkout = checkout_at.date_opt()?;
    if let (Some(i), Some(o)) = (checkin, checkout) {
        if o < i {
            return Err(checkout_at.invalid("is before checkin"));
        }
    }
    let price = match (d.get("price").amount_opt(), d.get("currency").str_opt()) {
        (Some(amount), Some(currency)) => Some(Money {
            amount,
            currency: currency.to_ascii_uppercase(),
        }),
        _ => None,
    };
    let request = At::root(&env.request, "request");
    let holder = request.get("holder");
    let first_guest = request.get("guests").index(0);
    let email = [holder.get("email"), first_guest.get("email")]
        .iter()
        .filter_map(At::str_opt)
        .find_map(|e| EmailAddress::parse(&e).ok());
    let guest_name = [&holder, &first_guest]
        .into_iter()
        .map(|p| p.person("firstName", "lastName"))
        .find(|n| !n.full().is_empty());
    Ok(CheckoutAttempt {
        prebook_id,
        transaction_id: d.get("transactionId").str_opt(),
        client_reference: d
            .get("clientReference")
            .str_opt()
            .or_else(|| request.get("clientReference").str_opt()),
        email,
        guest_name,
        hotel_id: d.get("hotelId").str_opt(),
        hotel_name: d
            .get("hotel")
            .get("name")
            .str_opt()
            .or_else(|| d.get("hotelName").str_opt()),
        checkin,
        checkout,
        price,
    })
}

/// `response.data` when it is an object, else `response` itself (the inner shapes are
/// unpublished), with its path for error messages.
fn response_data(env: &Envelope) -> At<'_> {
    let root = At::root(&env.response, "response");
    let data = root.get("data");
    if data.value().is_some_and(Value::is_object) {
        data
    } else {
        root
    }
}

/// The booking id of a hotel event: `response…bookingId`, else `request.bookingId`. Errors name
/// the response path.
fn hotel_booking_id(env: &Envelope) -> Result<BookingRef, ParseError> {
    let at = response_data(env).get("bookingId");
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

/// `booking.book.hotelConfirmationNumber`: `bookingId` + `hotelConfirmationCode` (also read as
/// `hotelConfirmationNumber`), both required.
fn hotel_confirmation_number(env: &Envelope) -> Result<SupplierEvent, ParseError> {
    let booking_id = hotel_booking_id(env)?;
    let code = response_data(env)
        .get_any(&["hotelConfirmationCode", "hotelConfirmationNumber"])
        .str_req()?;
    Ok(SupplierEvent::HotelConfirmationNumber {
        booking_id,
        hotel_confirmation_number: code,
    })
}

/// `booking.cancel`: the `PUT /bookings/{id}` answer `{bookingId, status, cancellation_fee,
/// refund_amount, currency}`. Charges when the status is `CANCELLED_WITH_CHARGES` or the fee is
/// non-zero; money only when an amount and the currency are both given.
fn hotel_cancellation(env: &Envelope) -> Result<Cancellation, ParseError> {
    let d = response_data(env);
    let booking_id = hotel_booking_id(env)?;
    let currency = d.get("currency").str_opt().map(|c| c.to_ascii_uppercase());
    let money = |field: &str| {
        Some(Money {
            amount: d.get(field).amount_opt()?,
            currency: currency.clone()?,
        })
    };
    let cancellation_fee = money("cancellation_fee");
    let status = d.get("status").str_opt().unwrap_or_default();
    Ok(Cancellation {
        booking_id,
        with_charges: status.eq_ignore_ascii_case("CANCELLED_WITH_CHARGES")
            || cancellation_fee
                .as_ref()
                .is_some_and(|m| is_nonzero_amount(&m.amount)),
        cancellation_fee,
        refund: money("refund_amount"),
    })
}

/// `booking.checkinInstruction`: `bookingId` + `checkinInstructions.instructions` (also accepted:
/// `checkinInstructions` as plain text, or `instructions` at the data level).
fn checkin_instructions(env: &Envelope) -> Result<SupplierEvent, ParseError> {
    let d = response_data(env);
    let booking_id = hotel_booking_id(env)?;
    let nested = d.get("checkinInstructions");
    let instructions = nested
        .get("instructions")
        .str_opt()
        .or_else(|| nested.str_opt())
        .or_else(|| d.get("instructions").str_opt());
    match instructions {
        Some(instructions) => Ok(SupplierEvent::CheckinInstructions {
            booking_id,
            instructions,
        }),
        None => {
            let at = nested.get("instructions");
            // Present but unusable (a number, blank text) is invalid; absent everywhere is missing.
            match at.value() {
                Some(_) => Err(at.str_req().err().unwrap_or_else(|| at.missing())),
                None => Err(at.missing()),
            }
        }
    }
}

/// `booking.amendment` / `booking.amendment.relocation`: whatever facts are present. `bookingId`
/// is required; dates, when present, must be `YYYY-MM-DD` (checkout ≥ checkin when both).
fn amendment(env: &Envelope, relocation: bool) -> Result<HotelAmendment, ParseError> {
    let d = response_data(env);
    let booking_id = hotel_booking_id(env)?;
    let checkin = d.get("checkin").date_opt()?;
    let checkout_at = d.get("checkout");
    let checkout = checkout_at.date_opt()?;
    if let (Some(i), Some(o)) = (checkin, checkout) {
        if o < i {
            return Err(checkout_at.invalid("is before checkin"));
        }
    }
    let (rooms, mut guests) = match d.get("bookedRooms").value().and_then(Value::as_array) {
        Some(list) => {
            let (rooms, guests) = rooms_and_guests(list);
            (Some(rooms), guests)
        }
        None => (None, Vec::new()),
    };
    for g in d.get("guests").array_opt() {
        if let Some(v) = g.value() {
            let p = person(v);
            if !p.full().is_empty() && !guests.contains(&p) {
                guests.push(p);
            }
        }
    }
    let holder_name = d
        .get("holder")
        .value()
        .map(person)
        .filter(|p| !p.full().is_empty());
    Ok(HotelAmendment {
        booking_id: Some(booking_id),
        hotel_name: d.get("hotel").get("name").str_opt(),
        checkin,
        checkout,
        rooms,
        guests: (!guests.is_empty()).then_some(guests),
        holder_name,
        relocation,
    })
}

/// The flight booking object inside a `flight.book.*` response. Tolerated shapes (the webhook's
/// inner document is unpublished): `response.data` as the booking, `response.data.booking`, the
/// `GET /flights/bookings/{id}` form `response.data[0].booking`, or `response` itself.
fn flight_booking_at(env: &Envelope) -> At<'_> {
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
fn flight_booking_id(env: &Envelope) -> Result<BookingRef, ParseError> {
    let at = flight_booking_at(env).get("bookingId");
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

/// `flight.book.confirmed` → the canonical flight booking, read from liteAPI's flight booking
/// object (`GET /flights/bookings/{id}`, OpenAPI `FlightBooking`): `bookingId`, `status`,
/// `contact{firstName,lastName,email,phoneCountryCode,phoneNumber}`, `passengers[]`,
/// `journey.segments[]{departureTime,arrivalTime (local, no offset), originCode, originName,
/// destinationCode, destinationName, carrier.marketingCode, flight.marketingNumber}`,
/// `pricing{totalAmount,currency}` / `journey.price{total,currency}`, airline PNRs.
///
/// liteAPI gives no airport time zones (`Airport.time_zone` is `None`) nor city names.
/// Required: `bookingId`, a contact email (`contact.email`, else a passenger's `email`), and at
/// least one segment with its codes, flight number and times.
fn flight_booking(env: &Envelope) -> Result<FlightBooking, ParseError> {
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
    })
}
