//! liteAPI failures after payment: `booking.book_error` (a hotel booking request the supplier
//! refused) and `flight.book.failed` (a flight booking that could not be completed). Both start
//! the compensation (`crate::domain::payment::compensation`).
//!
//! The inner documents are unpublished. Read tolerantly:
//! - `request` is the `POST /rates/book` (or flight book) request: `prebookId`, `clientReference`,
//!   `holder{firstName,lastName,email}` (else `guests[0]`, else `contact`), `payment{method,
//!   transactionId}`, `bookingId`;
//! - `response` carries the error: `error{code,message|description}`, else `errors[0]`, else a
//!   top-level `message`; for flights also the booking object with its `bookingId` and `status`.
//!
//! Required: at least one of prebook id, client reference, booking id (named in the error),
//! so the failure can be matched to a checkout, a payment or a booking.

use super::super::json::At;
use super::{flight::flight_booking_at, response_data, Envelope, ParseError};
use crate::domain::basics::text::{clean, cut_chars, TextKind};
use crate::domain::event::{BookingFailure, BookingRef, EmailAddress, FailedKind};

/// Longest supplier reason kept, in characters (one line).
pub const REASON_MAX_CHARS: usize = 300;

/// The supplier's reason, one line, at most [`REASON_MAX_CHARS`]; a neutral sentence when the
/// event gives none.
pub(crate) fn reason_text(raw: Option<String>) -> String {
    let text = raw
        .map(|r| clean(&r, TextKind::Other))
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "the supplier reported an error without a message".into());
    cut_chars(&text, REASON_MAX_CHARS)
}

fn error_message(response: &At<'_>) -> Option<String> {
    let error = response.get("error");
    let first = response.get("errors").index(0);
    [
        error.get("message"),
        error.get("description"),
        error.clone(),
        first.get("message"),
        first.get("title"),
        response.get("message"),
        response.get("data").get("message"),
    ]
    .iter()
    .find_map(At::str_opt)
}

/// `booking.book_error` (hotel) or `flight.book.failed` (flight) → [`BookingFailure`].
pub(super) fn booking_failure(
    env: &Envelope,
    kind: FailedKind,
) -> Result<BookingFailure, ParseError> {
    let request = At::root(&env.request, "request");
    let response = At::root(&env.response, "response");
    let data = response_data(env);
    let booking = match kind {
        FailedKind::Flight => flight_booking_at(env),
        FailedKind::Hotel => data.clone(),
    };
    let prebook_id = request
        .get("prebookId")
        .str_opt()
        .or_else(|| data.get("prebookId").str_opt());
    let client_reference = request
        .get("clientReference")
        .str_opt()
        .or_else(|| data.get("clientReference").str_opt());
    let booking_id = match booking.get("bookingId").str_opt() {
        Some(id) => Some(id),
        None => request.get("bookingId").str_opt(),
    };
    let booking_id = booking_id
        .map(|id| {
            BookingRef::parse(&id).map_err(|e| booking.get("bookingId").invalid(e.to_string()))
        })
        .transpose()?;
    if prebook_id.is_none() && client_reference.is_none() && booking_id.is_none() {
        return Err(request.get("prebookId").invalid(
            "is missing, and so are request.clientReference and a bookingId: the failure matches no checkout",
        ));
    }
    let people = [
        request.get("holder"),
        request.get("guests").index(0),
        request.get("contact"),
        booking.get("contact"),
    ];
    let email = people
        .iter()
        .filter_map(|p| p.get("email").str_opt())
        .find_map(|e| EmailAddress::parse(&e).ok());
    let guest_name = people
        .iter()
        .map(|p| p.person("firstName", "lastName"))
        .find(|n| !n.full().is_empty());
    let description = data
        .get("hotel")
        .get("name")
        .str_opt()
        .or_else(|| data.get("hotelName").str_opt())
        .map(|d| clean(&d, TextKind::PlaceName));
    Ok(BookingFailure {
        booking_kind: kind,
        booking_id,
        prebook_id,
        client_reference,
        transaction_id: request.get("payment").get("transactionId").str_opt(),
        email,
        guest_name,
        description,
        reason: reason_text(error_message(&response)),
        fee: None,
    })
}
