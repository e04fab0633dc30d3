//! liteAPI hotel events: `booking.book` (and rebooks), `booking.prebook`, the hotel confirmation
//! number, cancellations, check-in instructions and amendments (see the table in `super`).

use super::super::json::{is_nonzero_amount, number_text, At};
use super::{response_data, Envelope, Inner, ParseError};
use crate::domain::event::{
    BookedRoom, BookingRef, Cancellation, CheckoutAttempt, EmailAddress, Holder, HotelAmendment,
    HotelBooking, Money, PersonName, SupplierEvent,
};
use chrono::NaiveDate;
use serde_json::Value;

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

/// `checkin` and `checkout` of `d`, each `YYYY-MM-DD` when present; checkout ≥ checkin when both.
fn optional_stay(d: &At<'_>) -> Result<(Option<NaiveDate>, Option<NaiveDate>), ParseError> {
    let checkin = d.get("checkin").date_opt()?;
    let checkout_at = d.get("checkout");
    let checkout = checkout_at.date_opt()?;
    if let (Some(i), Some(o)) = (checkin, checkout) {
        if o < i {
            return Err(checkout_at.invalid("is before checkin"));
        }
    }
    Ok((checkin, checkout))
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
        locale: request_language(&env.request),
    })
}

/// The guest's browser language of a `POST /rates/book` request (`metadata.language`, e.g.
/// `fr-FR`; liteAPI booking API, `openapi-schemas/booking.json` of liteapi-travel/mcp-server,
/// <https://docs.liteapi.travel/reference/post_rates-book>), echoed in the webhook's `request`.
/// At most 35 characters of `[A-Za-z0-9_-]`; anything else reads as absent.
fn request_language(request: &Value) -> Option<String> {
    request
        .get("metadata")
        .and_then(|m| m.get("language"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|l| {
            (1..=35).contains(&l.len())
                && l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        .map(str::to_string)
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
    let (checkin, checkout) = optional_stay(&d)?;
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

/// The booking id of a hotel event: `response…bookingId`, else `request.bookingId`. Errors name
/// the response path.
fn hotel_booking_id(env: &Envelope) -> Result<BookingRef, ParseError> {
    super::booking_id_or_request(response_data(env).get("bookingId"), env)
}

/// `booking.book.hotelConfirmationNumber`: `bookingId` + `hotelConfirmationCode` (also read as
/// `hotelConfirmationNumber`), both required.
pub(super) fn hotel_confirmation_number(env: &Envelope) -> Result<SupplierEvent, ParseError> {
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
pub(super) fn hotel_cancellation(env: &Envelope) -> Result<Cancellation, ParseError> {
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
pub(super) fn checkin_instructions(env: &Envelope) -> Result<SupplierEvent, ParseError> {
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
pub(super) fn amendment(env: &Envelope, relocation: bool) -> Result<HotelAmendment, ParseError> {
    let d = response_data(env);
    let booking_id = hotel_booking_id(env)?;
    let (checkin, checkout) = optional_stay(&d)?;
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
        locale: None,
    })
}
