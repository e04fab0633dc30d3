//! The supplier failure events and Stripe's refund events, parsed from the real-shaped fixtures
//! (`tests/fixtures/*failed*.json`, `*book-error*`, `stripe-refund-*`, `stripe-charge-refunded`)
//! and from hostile variants: what each adapter makes of them, and the clear error when a failure
//! names no checkout.

use crate::fixtures::fixture;
use booking_email_engine::domain::event::{
    BookingFailure, BookingRef, EmailAddress, FailedKind, Interpretation, PersonName, RefundUpdate,
    SupplierEvent,
};
use booking_email_engine::sources::{duffel, generic, liteapi, stripe, ParseError};
use serde_json::{json, Value};
fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

fn liteapi_event(v: &Value) -> Result<Interpretation, ParseError> {
    liteapi::interpret(&liteapi::parse_envelope(&bytes(v))?)
}

fn failure_of(i: Interpretation) -> BookingFailure {
    match i {
        Interpretation::Journey(SupplierEvent::BookingFailed(f)) => *f,
        other => panic!("not a booking failure: {other:?}"),
    }
}

fn refund_of(i: Interpretation) -> RefundUpdate {
    match i {
        Interpretation::Journey(SupplierEvent::RefundUpdated(r)) => *r,
        other => panic!("not a refund update: {other:?}"),
    }
}

fn testa() -> Option<PersonName> {
    Some(PersonName {
        first_name: "Testa".into(),
        last_name: "Guestington".into(),
    })
}

#[test]
fn liteapi_book_error_fixture_names_the_checkout_the_payment_and_the_reason() {
    let f = failure_of(liteapi_event(&fixture("liteapi-booking-book-error.json")).unwrap());
    assert_eq!(
        f,
        BookingFailure {
            booking_kind: FailedKind::Hotel,
            booking_id: None,
            prebook_id: Some("PB_fake_9xYz".into()),
            client_reference: Some("trip_fake_0001".into()),
            transaction_id: Some("pi_3FAKEpaymentintent0002".into()),
            email: EmailAddress::parse("guest@example.com").ok(),
            guest_name: testa(),
            description: None,
            reason: "Room is no longer available at the hotel".into(),
            fee: None,
        }
    );
}

#[test]
fn liteapi_flight_failure_fixture_carries_its_booking_id() {
    let f = failure_of(liteapi_event(&fixture("liteapi-flight-book-failed.json")).unwrap());
    assert_eq!(f.booking_kind, FailedKind::Flight);
    assert_eq!(f.booking_id, BookingRef::parse("fl_fake_failed_0001").ok());
    assert_eq!(f.client_reference.as_deref(), Some("trip_fake_flight_0001"));
    assert_eq!(f.reason, "The airline did not confirm the fare");
    assert_eq!(f.email, EmailAddress::parse("guest@example.com").ok());
}

#[test]
fn a_failure_that_names_no_checkout_is_refused_by_name() {
    let mut v = fixture("liteapi-booking-book-error.json");
    v["request"] = json!(json!({"holder": {"email": "guest@example.com"}}).to_string());
    match liteapi_event(&v) {
        Err(ParseError::Invalid { field, reason }) => {
            assert_eq!(field, "request.prebookId");
            assert!(reason.contains("matches no checkout"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_suppliers_reason_is_one_bounded_line_and_defaults_when_absent() {
    let mut v = fixture("liteapi-booking-book-error.json");
    let long = format!("line one\r\nline\u{202e}two {}", "x".repeat(1000));
    v["response"] = json!(json!({"error": {"message": long}}).to_string());
    let f = failure_of(liteapi_event(&v).unwrap());
    assert!(f.reason.chars().count() <= 300, "{}", f.reason.len());
    assert!(!f.reason.chars().any(|c| c.is_control() || c == '\u{202e}'));
    assert!(f.reason.starts_with("line one line"));
    v["response"] = json!("{}");
    let f = failure_of(liteapi_event(&v).unwrap());
    assert_eq!(f.reason, "the supplier reported an error without a message");
}

#[test]
fn duffel_creation_failures_read_metadata_and_errors() {
    let env =
        duffel::parse_envelope(&bytes(&fixture("duffel-order-creation-failed.json"))).unwrap();
    let f = failure_of(duffel::interpret(&env).unwrap());
    assert_eq!(f.booking_kind, FailedKind::Flight);
    assert_eq!(f.client_reference.as_deref(), Some("trip_fake_duffel_0001"));
    assert_eq!(
        f.transaction_id.as_deref(),
        Some("pi_3FAKEduffelintent0001")
    );
    assert_eq!(f.reason, "The airline could not confirm the fare");
    assert_eq!(f.guest_name, testa());

    let env = duffel::parse_envelope(&bytes(&fixture(
        "duffel-stays-booking-creation-failed.json",
    )))
    .unwrap();
    let f = failure_of(duffel::interpret(&env).unwrap());
    assert_eq!(f.booking_kind, FailedKind::Hotel);
    assert_eq!(f.client_reference.as_deref(), Some("trip_fake_stays_0001"));
    assert_eq!(f.description.as_deref(), Some("Example Harbour Hotel"));
    assert_eq!(f.email, EmailAddress::parse("guest@example.com").ok());

    let mut v = fixture("duffel-order-creation-failed.json");
    v["data"]["object"]["metadata"] = json!({});
    let env = duffel::parse_envelope(&bytes(&v)).unwrap();
    match duffel::interpret(&env) {
        Err(ParseError::Invalid { field, .. }) => {
            assert_eq!(field, "data.object.metadata.client_reference")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn stripe_refund_events_become_refund_updates() {
    let env = stripe::parse_envelope(&bytes(&fixture("stripe-refund-updated.json"))).unwrap();
    assert_eq!(
        refund_of(stripe::interpret(&env).unwrap()),
        RefundUpdate {
            refund_id: Some("re_3FAKErefund0001".into()),
            payment_intent: Some("pi_3FAKEpaymentintent0002".into()),
            status: "failed".into(),
            amount_minor: Some(54_000),
            currency: Some("EUR".into()),
            failure_reason: Some("expired_or_canceled_card".into()),
            compensation_id: Some("comp-000000000000000000000000".into()),
        }
    );
    let env = stripe::parse_envelope(&bytes(&fixture("stripe-charge-refunded.json"))).unwrap();
    let r = refund_of(stripe::interpret(&env).unwrap());
    assert_eq!(r.status, "succeeded");
    assert_eq!(r.refund_id.as_deref(), Some("re_3FAKErefund0001"));
    assert_eq!(r.amount_minor, Some(54_000));

    // A partially refunded charge is not "succeeded"; odd ids read as absent, odd statuses as a
    // plain word.
    let mut v = fixture("stripe-charge-refunded.json");
    v["data"]["object"]["refunded"] = json!(false);
    v["data"]["object"]["payment_intent"] = json!("pi_<script>");
    let env = stripe::parse_envelope(&bytes(&v)).unwrap();
    let r = refund_of(stripe::interpret(&env).unwrap());
    assert_eq!(r.status, "pending");
    assert_eq!(r.payment_intent, None);

    let mut v = fixture("stripe-refund-updated.json");
    v["data"]["object"]["status"] = json!("Succeeded\r\nX-Evil: 1");
    let env = stripe::parse_envelope(&bytes(&v)).unwrap();
    assert_eq!(
        refund_of(stripe::interpret(&env).unwrap()).status,
        "succeededxevil1"
    );
}

#[test]
fn stripe_api_answers_parse() {
    let r = stripe::refund_answer(
        br#"{"id":"re_1","object":"refund","status":"pending","amount":49950,"currency":"eur","payment_intent":"pi_1"}"#,
    )
    .unwrap();
    assert_eq!(r.status, "pending");
    assert_eq!(r.amount_minor, Some(49_950));
    assert!(stripe::refund_answer(b"{}").is_err());
    let list = stripe::refund_list(
        br#"{"object":"list","data":[{"id":"re_1","status":"succeeded"},{"id":"re_2"}]}"#,
    )
    .unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(
        stripe::api_error(br#"{"error":{"type":"card_error","code":"expired_card","message":"The card has expired."}}"#),
        (Some("expired_card".into()), "The card has expired.".into())
    );
    assert_eq!(
        stripe::api_error(b"<html>bad gateway</html>"),
        (None, "<html>bad gateway</html>".into())
    );
}

#[test]
fn the_generic_source_takes_the_canonical_failure_and_refuses_one_that_names_nothing() {
    let ok = json!({"type": "booking_failed", "data": {
        "booking_kind": "hotel", "client_reference": "trip_1", "reason": "sold out",
        "transaction_id": "pi_1", "email": "guest@example.com"
    }});
    let f = failure_of(generic::interpret(&bytes(&ok)).unwrap());
    assert_eq!(f.client_reference.as_deref(), Some("trip_1"));
    let none = json!({"type": "booking_failed", "data": {"booking_kind": "flight", "reason": "x"}});
    match generic::interpret(&bytes(&none)) {
        Err(ParseError::Invalid { field, .. }) => assert_eq!(field, "data.prebook_id"),
        other => panic!("{other:?}"),
    }
    let blank = json!({"type": "booking_failed", "data": {"booking_kind": "flight", "prebook_id": "PB", "reason": " "}});
    assert!(matches!(
        generic::interpret(&bytes(&blank)),
        Err(ParseError::Invalid { field, .. }) if field == "data.reason"
    ));
}

/// Stripe's look-ups before a refund, in the shapes its API reference documents
/// (<https://docs.stripe.com/api/payment_intents/object>, `latest_charge` expanded:
/// <https://docs.stripe.com/api/charges/object>; <https://docs.stripe.com/api/checkout/sessions/list>).
#[test]
fn stripe_look_ups_read_what_proves_a_payment() {
    let pi = stripe::payment_intent_answer(&bytes(&json!({
        "id": "pi_3Pfake", "object": "payment_intent", "amount": 54000, "amount_received": 54000,
        "currency": "eur", "status": "succeeded", "metadata": {},
        "latest_charge": {"id": "ch_1", "object": "charge", "amount": 54000, "amount_captured": 54000,
                          "amount_refunded": 4050, "refunded": false, "currency": "eur"}
    })))
    .unwrap();
    assert_eq!(pi.id, "pi_3Pfake");
    assert_eq!(pi.status, "succeeded");
    assert_eq!(pi.currency.as_deref(), Some("EUR"));
    assert_eq!(pi.refundable_minor, Some(49_950));
    // The charge not expanded (an id only): what remains is unknown, the amount received bounds it.
    let bare = stripe::payment_intent_answer(&bytes(&json!({
        "id": "pi_2", "status": "processing", "amount_received": 0, "currency": "usd", "latest_charge": "ch_2"
    })))
    .unwrap();
    assert_eq!((bare.refundable_minor, bare.amount_received), (None, 0));
    assert!(stripe::payment_intent_answer(b"{\"status\":\"succeeded\"}").is_err());

    let sessions = stripe::session_list(&bytes(&json!({
        "object": "list", "url": "/v1/checkout/sessions", "has_more": false,
        "data": [
            {"id": "cs_test_1", "object": "checkout.session", "payment_intent": "pi_3Pfake",
             "client_reference_id": "trip_1\nInjected: header", "payment_status": "paid",
             "metadata": {"trip_id": "trip_1", "note": "ignored", "prebook_id": "  "}},
            {"object": "checkout.session", "payment_intent": "pi_x"}
        ]
    })))
    .unwrap();
    assert_eq!(sessions.len(), 1, "a session without an id is left out");
    let s = &sessions[0];
    assert_eq!(s.payment_intent.as_deref(), Some("pi_3Pfake"));
    let reference = s.client_reference_id.as_deref().unwrap();
    assert!(!reference.contains('\n'), "one line: {reference:?}");
    assert_eq!(s.metadata, [("trip_id".to_string(), "trip_1".to_string())]);
    assert!(stripe::session_list(b"{\"object\":\"list\"}").is_err());
}
