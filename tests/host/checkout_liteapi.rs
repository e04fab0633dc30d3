//! Host tests of liteAPI `booking.prebook` → `CheckoutStarted` (`sources::liteapi`): the fixture
//! becomes the exact `CheckoutAttempt`; guest facts come from the request when present; errors
//! name the response path.

use booking_email_engine::domain::event::{
    CheckoutAttempt, EmailAddress, Interpretation, Money, PersonName, SupplierEvent,
};
use booking_email_engine::sources::liteapi::{checkout_attempt, interpret, parse_envelope};
use booking_email_engine::sources::ParseError;
use chrono::NaiveDate;
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = format!(
        "{}/tests/fixtures/liteapi-booking-prebook.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn inner(envelope: &Value, key: &str) -> Value {
    serde_json::from_str(envelope[key].as_str().unwrap()).unwrap()
}

fn attempt_of(v: &Value) -> Result<CheckoutAttempt, ParseError> {
    let env = parse_envelope(&serde_json::to_vec(v).unwrap()).expect("envelope parses");
    match interpret(&env)? {
        Interpretation::Journey(SupplierEvent::CheckoutStarted(a)) => {
            assert_eq!(checkout_attempt(&env).as_ref(), Ok(&*a));
            Ok(*a)
        }
        other => panic!("expected CheckoutStarted, got {other:?}"),
    }
}

fn with_request(request: Value) -> Value {
    let mut v = fixture();
    v["request"] = Value::String(request.to_string());
    v
}

fn with_response_data(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
    let mut v = fixture();
    let mut response = inner(&v, "response");
    edit(response["data"].as_object_mut().unwrap());
    v["response"] = Value::String(response.to_string());
    v
}

fn d(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}

#[test]
fn prebook_fixture_is_the_exact_attempt_without_guest_facts() {
    assert_eq!(
        attempt_of(&fixture()).unwrap(),
        CheckoutAttempt {
            prebook_id: "PB_fake_9xYz".into(),
            transaction_id: Some("tr_fake_0001".into()),
            client_reference: Some("trip_fake_0001".into()),
            email: None,
            guest_name: None,
            hotel_id: Some("lp_fake_1001".into()),
            hotel_name: None,
            checkin: Some(d("2026-06-12")),
            checkout: Some(d("2026-06-15")),
            price: Some(Money {
                amount: "540".into(),
                currency: "EUR".into(),
            }),
        }
    );
}

#[test]
fn holder_in_the_request_gives_email_and_name() {
    let a = attempt_of(&with_request(json!({
        "offerId": "OFFER_FAKE_ABC123",
        "clientReference": "trip_fake_0001",
        "holder": {"firstName": " Testa ", "lastName": "Guestington", "email": "guest@Example.com"}
    })))
    .unwrap();
    assert_eq!(
        a.email,
        Some(EmailAddress::parse("guest@example.com").unwrap())
    );
    assert_eq!(
        a.guest_name,
        Some(PersonName {
            first_name: "Testa".into(),
            last_name: "Guestington".into()
        })
    );
}

#[test]
fn first_guest_is_used_when_there_is_no_holder() {
    let a = attempt_of(&with_request(json!({
        "guests": [
            {"occupancyNumber": 1, "firstName": "Otto", "lastName": "Guest", "email": "otto@example.com"},
            {"occupancyNumber": 1, "firstName": "Second", "lastName": "Guest", "email": "second@example.com"}
        ]
    })))
    .unwrap();
    assert_eq!(a.email.unwrap().as_str(), "otto@example.com");
    assert_eq!(a.guest_name.unwrap().full(), "Otto Guest");
    // No clientReference anywhere.
    assert_eq!(a.client_reference, None);
}

#[test]
fn unparseable_email_reads_as_absent_and_the_attempt_is_kept() {
    let a = attempt_of(&with_request(json!({
        "holder": {"firstName": "Testa", "lastName": "Guestington", "email": "not-an-email"}
    })))
    .unwrap();
    assert_eq!(a.email, None);
    assert_eq!(a.guest_name.unwrap().full(), "Testa Guestington");
}

#[test]
fn without_payment_sdk_there_is_no_transaction_id() {
    let a = attempt_of(&with_response_data(|d| {
        d.remove("transactionId");
        d.remove("secretKey");
        d.insert(
            "hotel".into(),
            json!({"hotelId": "lp_fake_1001", "name": "Example Harbour Hotel"}),
        );
    }))
    .unwrap();
    assert_eq!(a.transaction_id, None);
    assert_eq!(a.hotel_name.as_deref(), Some("Example Harbour Hotel"));
}

#[test]
fn price_without_currency_is_no_money() {
    let a = attempt_of(&with_response_data(|d| {
        d.remove("currency");
    }))
    .unwrap();
    assert_eq!(a.price, None);
}

#[test]
fn missing_prebook_id_is_rejected_with_its_path() {
    let err = attempt_of(&with_response_data(|d| {
        d.remove("prebookId");
    }))
    .unwrap_err();
    assert_eq!(err, ParseError::Missing("response.data.prebookId".into()));
}

#[test]
fn bad_or_reversed_dates_are_invalid() {
    let err = attempt_of(&with_response_data(|d| {
        d.insert("checkin".into(), json!("12/06/2026"));
    }))
    .unwrap_err();
    assert_eq!(err.field(), Some("response.data.checkin"));
    let err = attempt_of(&with_response_data(|d| {
        d.insert("checkout".into(), json!("2026-06-01"));
    }))
    .unwrap_err();
    assert_eq!(err.field(), Some("response.data.checkout"));
}

#[test]
fn prebook_errors_stay_ignored() {
    let mut v = fixture();
    v["event_name"] = json!("booking.prebook_error");
    let env = parse_envelope(&serde_json::to_vec(&v).unwrap()).unwrap();
    assert_eq!(
        interpret(&env).unwrap(),
        Interpretation::Ignored("booking.prebook_error".into())
    );
}
