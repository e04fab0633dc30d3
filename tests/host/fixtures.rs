//! Shared test inputs: the supplier payloads under `tests/fixtures/`, the brand the rendering
//! tests send as, and the liteAPI fixture booking the email tests start from.

#![allow(dead_code)]

use booking_email_engine::domain::email::{Audience, DedupeKey, EmailKind};
use booking_email_engine::domain::event::{
    BookedRoom, BookingRef, EmailAddress, Holder, HotelBooking, PersonName,
};
use booking_email_engine::domain::i18n::{Locale, Region};
use booking_email_engine::domain::outbox::outgoing::OutgoingEmail;
use booking_email_engine::domain::render::Branding;
use booking_email_engine::sources::liteapi::{hotel_booking, parse_envelope};
use booking_email_engine::sources::ParseError;
use chrono::NaiveDate;
use serde_json::Value;

/// The bytes of `tests/fixtures/<name>`; panics naming the path when it cannot be read.
pub fn fixture_bytes(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// `tests/fixtures/<name>` parsed as JSON.
pub fn fixture(name: &str) -> Value {
    serde_json::from_slice(&fixture_bytes(name)).expect("fixture is JSON")
}

/// "Example Trips", sending from `bookings@mail.example.com`, in `locale` (default region).
pub fn branding_in(locale: Locale) -> Branding {
    Branding {
        brand: "Example Trips".into(),
        from: EmailAddress::parse("bookings@mail.example.com").unwrap(),
        locale,
        region: Region::DEFAULT,
    }
}

/// [`branding_in`] English.
pub fn branding() -> Branding {
    branding_in(Locale::En)
}

/// The liteAPI `booking.book` fixture (`liteapi-booking-confirmed.json`) as the canonical booking:
/// `BK_fake_7Q2w`, Example Harbour Hotel, 12–15 June 2026, Testa Guestington
/// <guest@example.com>, sandbox.
pub fn liteapi_hotel() -> HotelBooking {
    let env = parse_envelope(&fixture_bytes("liteapi-booking-confirmed.json"))
        .expect("fixture envelope parses");
    let b = hotel_booking(&env).expect("fixture is a hotel booking");
    assert_eq!(b.booking_id.as_str(), "BK_fake_7Q2w");
    assert_eq!(b.hotel_name, "Example Harbour Hotel");
    b
}

/// Testa Guestington, the guest of the example payloads.
pub fn testa() -> PersonName {
    PersonName {
        first_name: "Testa".into(),
        last_name: "Guestington".into(),
    }
}

/// The stay the Duffel and generic example payloads both describe, under their ids: Example
/// Harbour Hotel, 12–15 June 2026, CONFIRMED, held by Testa Guestington <guest@example.com>
/// (+15550100001) with check-in instructions; as it stands one adult in one "Room", no other
/// guest, no total, no location, no hotel confirmation number, live. Each source's test sets
/// what its payload says besides.
pub fn example_harbour_stay(
    booking_id: &str,
    client_reference: &str,
    hotel_id: &str,
) -> HotelBooking {
    HotelBooking {
        booking_id: BookingRef::parse(booking_id).unwrap(),
        client_reference: Some(client_reference.into()),
        prebook_id: None,
        status: "CONFIRMED".into(),
        hotel_id: Some(hotel_id.into()),
        hotel_name: "Example Harbour Hotel".into(),
        checkin: NaiveDate::from_ymd_opt(2026, 6, 12).unwrap(),
        checkout: NaiveDate::from_ymd_opt(2026, 6, 15).unwrap(),
        rooms: vec![BookedRoom {
            room_name: "Room".into(),
            board_name: None,
            adults: 1,
            children: 0,
        }],
        holder: Holder {
            name: testa(),
            email: EmailAddress::parse("guest@example.com").unwrap(),
            phone: Some("+15550100001".into()),
        },
        guests: vec![],
        total: None,
        hotel_confirmation_number: None,
        sandbox: false,
        location: None,
        checkin_instructions: Some("Check-in from 15:00; check-out by 11:00".into()),
        replaces: None,
        locale: None,
    }
}

/// The error of a supplier body that must fail somewhere: `envelope` (its parsed envelope) when
/// that failed, else what `interpret` makes of the envelope, which must be an error too.
pub fn first_error<E, I: std::fmt::Debug>(
    envelope: Result<E, ParseError>,
    interpret: impl FnOnce(&E) -> Result<I, ParseError>,
) -> ParseError {
    match envelope {
        Err(e) => e,
        Ok(env) => match interpret(&env) {
            Err(e) => e,
            Ok(i) => panic!("expected a parse error, got {i:?}"),
        },
    }
}

/// `err` is "missing" at `path` (a dotted JSON path, as [`ParseError::field`] names it).
pub fn assert_missing(err: &ParseError, path: &str) {
    assert_eq!(err, &ParseError::Missing(path.to_string()), "{err}");
    assert_eq!(err.field(), Some(path));
}

/// `err` is "invalid" at `path`.
pub fn assert_invalid(err: &ParseError, path: &str) {
    assert!(
        matches!(err, ParseError::Invalid { field, .. } if field == path),
        "expected Invalid at `{path}`, got {err:?}"
    );
}

/// Removes `key` from the JSON object `object`.
pub fn remove(object: &mut Value, key: &str) {
    object.as_object_mut().unwrap().remove(key);
}

/// `parse` refuses `not_json` as a JSON error and `not_object` (JSON, but not an object) as
/// [`ParseError::NotAnObject`].
pub fn assert_refuses_non_objects<T>(
    parse: impl Fn(&[u8]) -> Result<T, ParseError>,
    not_json: &[u8],
    not_object: &[u8],
) {
    let refusal = |body: &[u8]| match parse(body) {
        Err(e) => e,
        Ok(_) => panic!("{} was accepted", String::from_utf8_lossy(body)),
    };
    let err = refusal(not_json);
    assert!(matches!(err, ParseError::Json(_)), "{err:?}");
    assert_eq!(refusal(not_object), ParseError::NotAnObject);
}

/// How a parser refuses a field: absent, or present but unreadable.
#[derive(Debug, Clone, Copy)]
pub enum Refused {
    /// [`assert_missing`].
    Missing,
    /// [`assert_invalid`].
    Invalid,
}

impl Refused {
    /// `err` is this refusal at `path` (a dotted JSON path); `case` names the case on failure.
    pub fn assert(self, err: &ParseError, path: &str, case: &str) {
        assert_eq!(err.field(), Some(path), "{case}: {err:?}");
        match self {
            Refused::Missing => assert_missing(err, path),
            Refused::Invalid => assert_invalid(err, path),
        }
    }
}

/// A booking confirmation of `booking_id` to `guest@example.com` as the outbox receives it, with
/// the given subject and bodies and nothing else (no headers, intent, lock or calendar).
pub fn confirmation_email(
    booking_id: &str,
    subject: &str,
    text: &str,
    html: &str,
) -> OutgoingEmail {
    let kind = EmailKind::BookingConfirmation;
    OutgoingEmail {
        dedupe_key: DedupeKey::new(kind, booking_id),
        kind,
        audience: Audience::Client,
        rank: kind.rank(),
        booking_id: Some(booking_id.into()),
        to: EmailAddress::parse("guest@example.com").unwrap(),
        subject: subject.into(),
        text: text.into(),
        html: html.into(),
        message_id: "<x@mail.example.com>".into(),
        headers: Vec::new(),
        intent: None,
        lock: None,
        calendars: Vec::new(),
        legacy_calendar: None,
        reply_to: None,
    }
}
