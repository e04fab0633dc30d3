//! Host tests of the liteAPI adapter (`sources::liteapi`): envelope parsing, `booking.book`
//! interpretation, error variants with their JSON paths, and token verification.

use crate::fixtures::{
    assert_invalid, assert_missing, assert_refuses_non_objects, first_error, fixture,
    fixture_bytes, remove, Refused,
    Refused::{Invalid, Missing},
};
use booking_email_engine::domain::event::{
    BookedRoom, HotelBooking, Interpretation, Money, PersonName, SupplierEvent,
};
use booking_email_engine::sources::liteapi::{
    interpret, parse_envelope, peek_event_id, verify_token, TOKEN_HEADER,
};
use booking_email_engine::sources::{AuthError, ParseError};
use chrono::NaiveDate;
use serde_json::{json, Value};

fn confirmed() -> Value {
    fixture("liteapi-booking-confirmed.json")
}

/// Decodes one of the string-encoded inner documents (`request` / `response`).
fn inner(envelope: &Value, key: &str) -> Value {
    serde_json::from_str(envelope[key].as_str().expect("inner document is a string"))
        .expect("inner document is JSON")
}

/// Re-encodes an inner document into its string form.
fn set_inner(envelope: &mut Value, key: &str, doc: &Value) {
    envelope[key] = Value::String(doc.to_string());
}

/// Mutates `response.data` of the confirmed fixture and returns the re-serialized body.
fn with_response_data(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Vec<u8> {
    let mut env = confirmed();
    let mut response = inner(&env, "response");
    edit(
        response["data"]
            .as_object_mut()
            .expect("response.data is an object"),
    );
    set_inner(&mut env, "response", &response);
    serde_json::to_vec(&env).unwrap()
}

fn body(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

/// Parses and interprets a body, which must be a `booking.book` journey.
fn booked(body: &[u8]) -> HotelBooking {
    let env = parse_envelope(body).expect("envelope parses");
    match interpret(&env).expect("interprets") {
        Interpretation::Journey(SupplierEvent::HotelBooked(b)) => *b,
        other => panic!("expected a HotelBooked journey, got {other:?}"),
    }
}

/// Parses and interprets a body that must fail somewhere (envelope or inner document).
fn parse_failure(body: &[u8]) -> ParseError {
    first_error(parse_envelope(body), interpret)
}

// ---------------------------------------------------------------- happy path

#[test]
fn confirmed_booking_envelope_is_decoded() {
    let env = parse_envelope(&fixture_bytes("liteapi-booking-confirmed.json")).unwrap();
    assert_eq!(env.event_id.as_str(), "evt_fake_liteapi_0002");
    assert_eq!(env.event_name, "booking.book");
    assert!(env.sandbox);
    // `request` and `response` arrive as strings and are decoded into documents.
    assert_eq!(env.request["prebookId"], "PB_fake_9xYz");
    assert_eq!(env.response["data"]["bookingId"], "BK_fake_7Q2w");
}

#[test]
fn confirmed_booking_becomes_a_hotel_booked_journey() {
    let b = booked(&fixture_bytes("liteapi-booking-confirmed.json"));

    assert_eq!(b.booking_id.as_str(), "BK_fake_7Q2w");
    assert_eq!(b.checkin, NaiveDate::from_ymd_opt(2026, 6, 12).unwrap());
    assert_eq!(b.checkout, NaiveDate::from_ymd_opt(2026, 6, 15).unwrap());
    assert_eq!(b.nights(), 3);
    assert_eq!(b.hotel_name, "Example Harbour Hotel");
    assert_eq!(b.hotel_id.as_deref(), Some("lp_fake_1001"));
    assert_eq!(b.status, "CONFIRMED");

    assert_eq!(b.holder.email.as_str(), "guest@example.com");
    assert_eq!(
        b.holder.name,
        PersonName {
            first_name: "Testa".into(),
            last_name: "Guestington".into(),
        }
    );
    assert_eq!(b.holder.phone.as_deref(), Some("+15550100001"));

    assert_eq!(
        b.rooms,
        vec![BookedRoom {
            room_name: "Standard Double".into(),
            board_name: Some("Room Only".into()),
            adults: 2,
            children: 0,
        }]
    );
    assert_eq!(b.guests, vec![b.holder.name.clone()]);
    assert_eq!(
        b.total,
        Some(Money {
            amount: "540".into(),
            currency: "EUR".into(),
        })
    );
    assert_eq!(b.prebook_id.as_deref(), Some("PB_fake_9xYz"));
    assert_eq!(b.client_reference.as_deref(), Some("trip_fake_0001"));
    assert!(b.sandbox);
    assert_eq!(b.hotel_confirmation_number, None);
}

#[test]
fn prebook_starts_a_checkout_attempt() {
    // Checkout started: the attempt is recorded (its full mapping is tested in
    // tests/host/checkout_liteapi.rs).
    let env = parse_envelope(&fixture_bytes("liteapi-booking-prebook.json")).unwrap();
    assert_eq!(env.event_name, "booking.prebook");
    match interpret(&env).unwrap() {
        Interpretation::Journey(SupplierEvent::CheckoutStarted(a)) => {
            assert_eq!(a.prebook_id, "PB_fake_9xYz");
            assert_eq!(a.transaction_id.as_deref(), Some("tr_fake_0001"));
        }
        other => panic!("expected CheckoutStarted, got {other:?}"),
    }
}

#[test]
fn hotel_confirmation_number_and_cancel_are_no_longer_ignored() {
    for (file, name) in [
        (
            "liteapi-booking-hotel-confirmation-number.json",
            "booking.book.hotelConfirmationNumber",
        ),
        ("liteapi-booking-cancelled.json", "booking.cancel"),
    ] {
        let env = parse_envelope(&fixture_bytes(file))
            .unwrap_or_else(|e| panic!("{file} must parse as an envelope: {e}"));
        assert_eq!(env.event_name, name, "{file}");
        assert!(
            matches!(interpret(&env).unwrap(), Interpretation::Journey(_)),
            "{file}"
        );
    }
}

#[test]
fn unknown_event_name_is_ignored_not_rejected() {
    let mut env = confirmed();
    env["event_name"] = json!("booking.somethingNew");
    // Even an inner document the engine could not read is fine for an event it does not act on.
    env["response"] = json!("{}");
    let parsed = parse_envelope(&body(&env)).unwrap();
    assert_eq!(
        interpret(&parsed).unwrap(),
        Interpretation::Ignored("booking.somethingNew".into())
    );
}

#[test]
fn sandbox_defaults_to_false_and_accepts_zero_or_one() {
    let mut env = confirmed();
    remove(&mut env, "sandbox");
    assert!(!parse_envelope(&body(&env)).unwrap().sandbox);
    env["sandbox"] = json!(1);
    assert!(parse_envelope(&body(&env)).unwrap().sandbox);
    env["sandbox"] = json!(0);
    assert!(!parse_envelope(&body(&env)).unwrap().sandbox);
}

#[test]
fn response_without_data_wrapper_is_read_from_its_root() {
    let mut env = confirmed();
    let response = inner(&env, "response");
    set_inner(&mut env, "response", &response["data"]);
    let b = booked(&body(&env));
    assert_eq!(b.booking_id.as_str(), "BK_fake_7Q2w");
    assert_eq!(b.nights(), 3);

    // ...and errors then name the unwrapped path.
    let mut flat = response["data"].clone();
    remove(&mut flat, "bookingId");
    set_inner(&mut env, "response", &flat);
    assert_missing(&parse_failure(&body(&env)), "response.bookingId");
}

#[test]
fn total_falls_back_to_the_first_room_retail_rate() {
    let b = booked(&with_response_data(|d| {
        d.remove("price");
    }));
    assert_eq!(
        b.total,
        Some(Money {
            amount: "540".into(),
            currency: "EUR".into(),
        })
    );
}

#[test]
fn hotel_confirmation_code_is_carried_when_present() {
    let b = booked(&with_response_data(|d| {
        d.insert("hotelConfirmationCode".into(), json!(" HCN-123 "));
    }));
    assert_eq!(b.hotel_confirmation_number.as_deref(), Some("HCN-123"));
}

// ---------------------------------------------------------------- holder fallback

#[test]
fn holder_falls_back_to_the_request_when_response_has_none() {
    let mut env = confirmed();
    let mut response = inner(&env, "response");
    remove(&mut response["data"], "holder");
    set_inner(&mut env, "response", &response);
    let mut request = inner(&env, "request");
    request["holder"]["email"] = json!("request-holder@Example.COM");
    request["holder"]["firstName"] = json!("Reka");
    set_inner(&mut env, "request", &request);

    let b = booked(&body(&env));
    // Domain is lower-cased, local part kept.
    assert_eq!(b.holder.email.as_str(), "request-holder@example.com");
    assert_eq!(b.holder.name.first_name, "Reka");
}

#[test]
fn holder_without_email_in_response_falls_back_to_the_request() {
    let mut env = confirmed();
    let mut response = inner(&env, "response");
    remove(&mut response["data"]["holder"], "email");
    set_inner(&mut env, "response", &response);
    let mut request = inner(&env, "request");
    request["holder"]["email"] = json!("from-request@example.com");
    set_inner(&mut env, "request", &request);

    assert_eq!(
        booked(&body(&env)).holder.email.as_str(),
        "from-request@example.com"
    );
}

#[test]
fn invalid_request_holder_email_names_the_request_path() {
    let mut env = confirmed();
    let mut response = inner(&env, "response");
    remove(&mut response["data"], "holder");
    set_inner(&mut env, "response", &response);
    let mut request = inner(&env, "request");
    request["holder"]["email"] = json!("not-an-email");
    set_inner(&mut env, "request", &request);

    assert_invalid(&parse_failure(&body(&env)), "request.holder.email");
}

// ---------------------------------------------------------------- malformed envelopes

#[test]
fn body_that_is_not_json_is_a_json_error() {
    let err = parse_envelope(b"event_id=evt_1&event_name=booking.book").unwrap_err();
    assert!(matches!(err, ParseError::Json(_)), "{err:?}");
    assert_eq!(err.field(), None);
}

#[test]
fn json_array_body_is_not_an_object() {
    let err = parse_envelope(&body(&json!([confirmed()]))).unwrap_err();
    assert_eq!(err, ParseError::NotAnObject);
    assert_eq!(err.field(), None);
}

/// An edit of the confirmed envelope.
type Edit = fn(&mut Value);

#[test]
fn malformed_envelopes_are_refused_naming_the_field() {
    let cases: [(&str, Edit, Refused, &str); 10] = [
        (
            "missing event_id is reported",
            |e| remove(e, "event_id"),
            Missing,
            "event_id",
        ),
        (
            "null event_id counts as missing",
            |e| e["event_id"] = Value::Null,
            Missing,
            "event_id",
        ),
        (
            "empty event_id is invalid",
            |e| e["event_id"] = json!("   "),
            Invalid,
            "event_id",
        ),
        (
            "numeric event_id is invalid",
            |e| e["event_id"] = json!(12345),
            Invalid,
            "event_id",
        ),
        (
            "event_id with a control character is invalid",
            |e| e["event_id"] = json!("evt\u{0007}bell"),
            Invalid,
            "event_id",
        ),
        (
            "missing event_name is reported",
            |e| remove(e, "event_name"),
            Missing,
            "event_name",
        ),
        (
            "request as an object instead of a string is invalid",
            |e| e["request"] = inner(e, "request"),
            Invalid,
            "request",
        ),
        (
            "response string that is not JSON is invalid",
            |e| e["response"] = json!("{\"data\": {\"bookingId\": "),
            Invalid,
            "response",
        ),
        (
            "missing response is reported",
            |e| remove(e, "response"),
            Missing,
            "response",
        ),
        (
            "sandbox as a string is invalid",
            |e| e["sandbox"] = json!("true"),
            Invalid,
            "sandbox",
        ),
    ];
    for (case, edit, refused, field) in cases {
        let mut env = confirmed();
        edit(&mut env);
        refused.assert(&parse_envelope(&body(&env)).unwrap_err(), field, case);
    }
}

// ---------------------------------------------------------------- malformed booking.book documents

/// An edit of the confirmed delivery's `response.data`.
type DataEdit = fn(&mut serde_json::Map<String, Value>);

#[test]
fn malformed_booking_documents_are_refused_naming_the_field() {
    let cases: [(&str, DataEdit, Refused, &str); 6] = [
        (
            "a booking without bookingId is rejected",
            |d| {
                d.remove("bookingId");
            },
            Missing,
            "response.data.bookingId",
        ),
        (
            "a bookingId that is not a string is invalid",
            |d| {
                d.insert("bookingId".into(), json!(42));
            },
            Invalid,
            "response.data.bookingId",
        ),
        (
            "a checkin that is not a date is invalid",
            |d| {
                d.insert("checkin".into(), json!("12/06/2026"));
            },
            Invalid,
            "response.data.checkin",
        ),
        (
            "a booking without a hotel name is rejected",
            |d| remove(&mut d["hotel"], "name"),
            Missing,
            "response.data.hotel.name",
        ),
        (
            "an invalid holder email is rejected",
            |d| d["holder"]["email"] = json!("not-an-email"),
            Invalid,
            "response.data.holder.email",
        ),
        (
            "a holder email of the wrong type is invalid, not missing",
            |d| d["holder"]["email"] = json!(["guest@example.com"]),
            Invalid,
            "response.data.holder.email",
        ),
    ];
    for (case, edit, refused, field) in cases {
        refused.assert(&parse_failure(&with_response_data(edit)), field, case);
    }
}

#[test]
fn checkout_before_checkin_is_invalid() {
    let err = parse_failure(&with_response_data(|d| {
        d.insert("checkout".into(), json!("2026-06-11"));
    }));
    assert_invalid(&err, "response.data.checkout");
    assert!(err.to_string().contains("before checkin"), "{err}");
}

#[test]
fn same_day_checkout_is_zero_nights() {
    let b = booked(&with_response_data(|d| {
        d.insert("checkout".into(), json!("2026-06-12"));
    }));
    assert_eq!(b.nights(), 0);
}

#[test]
fn holder_missing_from_response_and_request_is_rejected() {
    let mut env = confirmed();
    let mut response = inner(&env, "response");
    remove(&mut response["data"], "holder");
    set_inner(&mut env, "response", &response);
    let mut request = inner(&env, "request");
    remove(&mut request, "holder");
    set_inner(&mut env, "request", &request);

    assert_missing(&parse_failure(&body(&env)), "response.data.holder.email");
}

// ---------------------------------------------------------------- peek_event_id

#[test]
fn peek_event_id_reads_the_id_of_an_otherwise_invalid_body() {
    let mut env = confirmed();
    env["response"] = json!({"not": "a string"});
    remove(&mut env, "event_name");
    let raw = body(&env);
    assert!(parse_envelope(&raw).is_err());
    assert_eq!(
        peek_event_id(&raw).as_deref(),
        Some("evt_fake_liteapi_0002")
    );
}

#[test]
fn peek_event_id_is_none_without_a_string_id() {
    assert_eq!(peek_event_id(b"<html>not json</html>"), None);
    assert_eq!(peek_event_id(b""), None);
    assert_eq!(peek_event_id(br#"{"event_id": 7}"#), None);
    assert_eq!(peek_event_id(br#"["evt_1"]"#), None);
}

// ---------------------------------------------------------------- verify_token

const TOKEN: &str = "whsec_liteapi_static_token_1";

#[test]
fn exact_token_is_accepted() {
    assert_eq!(verify_token(Some(TOKEN), TOKEN), Ok(()));
}

#[test]
fn bearer_prefixed_token_is_accepted() {
    assert_eq!(
        verify_token(Some(&format!("Bearer {TOKEN}")), TOKEN),
        Ok(())
    );
    assert_eq!(verify_token(Some(&format!("  {TOKEN}  ")), TOKEN), Ok(()));
}

#[test]
fn wrong_token_is_a_mismatch() {
    for presented in [
        "whsec_liteapi_static_token_2",
        "whsec_liteapi_static_token_",
        "Bearer whsec_liteapi_static_token_2",
        "Basic d2hzZWM=",
    ] {
        assert_eq!(
            verify_token(Some(presented), TOKEN),
            Err(AuthError::Mismatch(TOKEN_HEADER)),
            "{presented}"
        );
    }
    assert_eq!(TOKEN_HEADER, "authorization");
}

#[test]
fn missing_or_empty_header_is_missing() {
    for header in [None, Some(""), Some("   ")] {
        assert_eq!(
            verify_token(header, TOKEN),
            Err(AuthError::Missing(TOKEN_HEADER)),
            "{header:?}"
        );
    }
}

#[test]
fn empty_configured_token_is_not_configured() {
    // Even an (empty) header equal to the empty configuration must not pass.
    assert_eq!(verify_token(Some(""), ""), Err(AuthError::NotConfigured));
    assert_eq!(
        verify_token(Some("anything"), ""),
        Err(AuthError::NotConfigured)
    );
    assert_eq!(verify_token(None, ""), Err(AuthError::NotConfigured));
}

// ---- liteAPI static data: `GET /data/hotel` (`sources::hotel_data`) ----

#[test]
fn hotel_data_answer_gives_the_coordinates() {
    use booking_email_engine::sources::hotel_data::parse_hotel_location;
    let body = json!({"data": {"id": "lp1", "name": "Example Harbour Hotel",
        "location": {"latitude": 41.38, "longitude": 2.18}}});
    let loc = parse_hotel_location(body.to_string().as_bytes()).unwrap();
    assert_eq!(
        (loc.latitude, loc.longitude, loc.time_zone),
        (Some(41.38), Some(2.18), None)
    );
}

#[test]
fn hotel_data_without_a_location_names_the_path() {
    use booking_email_engine::sources::hotel_data::parse_hotel_location;
    assert_eq!(
        parse_hotel_location(br#"{"data": {"id": "lp1"}}"#),
        Err(ParseError::Missing("data.location".into()))
    );
    assert_eq!(
        parse_hotel_location(br#"{"data": {"location": {"latitude": 41.38}}}"#),
        Err(ParseError::Missing("data.location.longitude".into()))
    );
    assert!(matches!(
        parse_hotel_location(br#"{"data": {"location": {"latitude": "41.38", "longitude": 2}}}"#),
        Err(ParseError::Invalid { field, .. }) if field == "data.location.latitude"
    ));
    assert_refuses_non_objects(parse_hotel_location, b"<html>", b"[]");
}
