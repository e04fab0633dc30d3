//! Host tests of the Stripe adapter (`sources::stripe`): every Stripe fixture becomes the exact
//! canonical `PaymentUpdate`, the envelope checks name the field at fault, and the
//! `Stripe-Signature` golden vector verifies (tampered, expired, rotated, v0-only are refused).

use crate::fixtures::{assert_refuses_non_objects, fixture, fixture_bytes};
use booking_email_engine::domain::event::{
    EmailAddress, Interpretation, PaymentOutcome, PaymentUpdate, PersonName, SupplierEvent,
};
use booking_email_engine::sources::signature::{verify_t_v1, SignatureError};
use booking_email_engine::sources::stripe::{interpret, parse_envelope, peek_event_id, WEBHOOK};
use booking_email_engine::sources::ParseError;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

const SECRET: &str = "whsec_fake_stripe_endpoint_secret_0001";
const T: i64 = 1_767_225_600;
fn update_of(body: &[u8]) -> PaymentUpdate {
    let env = parse_envelope(body).expect("envelope parses");
    match interpret(&env).expect("interprets") {
        Interpretation::Journey(SupplierEvent::PaymentUpdated(p)) => *p,
        other => panic!("expected PaymentUpdated, got {other:?}"),
    }
}

/// [`update_of`] the event `v`.
fn update_of_value(v: &Value) -> PaymentUpdate {
    update_of(&serde_json::to_vec(v).unwrap())
}

fn interpreted(v: &Value) -> Interpretation {
    interpret(&parse_envelope(&serde_json::to_vec(v).unwrap()).unwrap()).unwrap()
}

fn email(s: &str) -> Option<EmailAddress> {
    Some(EmailAddress::parse(s).unwrap())
}

fn testa() -> Option<PersonName> {
    Some(PersonName {
        first_name: "Testa".into(),
        last_name: "Guestington".into(),
    })
}

/// An update that says nothing but its `outcome`.
fn bare(outcome: PaymentOutcome) -> PaymentUpdate {
    PaymentUpdate {
        outcome,
        payment_intent: None,
        session_id: None,
        client_reference: None,
        email: None,
        name: None,
        decline_code: None,
        amount_minor: None,
        currency: None,
        locale: None,
    }
}

/// What every checkout fixture says of its guest and trip, with its own `outcome` and payment
/// intent.
fn fixture_guest(outcome: PaymentOutcome, payment_intent: &str) -> PaymentUpdate {
    PaymentUpdate {
        payment_intent: Some(payment_intent.into()),
        client_reference: Some("trip_fake_0001".into()),
        email: email("guest@example.com"),
        name: testa(),
        currency: Some("EUR".into()),
        ..bare(outcome)
    }
}

// ---------------------------------------------------------------- fixtures → exact updates

#[test]
fn payment_failed_fixture_records_the_decline_code() {
    let body = fixture_bytes("stripe-payment-intent-failed.json");
    let env = parse_envelope(&body).unwrap();
    assert_eq!(env.id.as_str(), "evt_3FAKEpifailed000000001");
    assert_eq!(env.event_type, "payment_intent.payment_failed");
    assert!(!env.livemode);
    assert_eq!(env.created, Some(1_767_226_000));
    assert_eq!(
        update_of(&body),
        PaymentUpdate {
            decline_code: Some("insufficient_funds".into()),
            ..fixture_guest(PaymentOutcome::Failed, "pi_3FAKEpaymentintent0001")
        }
    );
}

#[test]
fn completed_paid_session_is_paid_and_expired_session_is_expired() {
    for (fixture, session, outcome, payment_intent) in [
        (
            "stripe-checkout-session-completed.json",
            "cs_test_FAKEcompleted0001",
            PaymentOutcome::Paid,
            "pi_3FAKEpaymentintent0002",
        ),
        (
            "stripe-checkout-session-expired.json",
            "cs_test_FAKEexpired0001",
            PaymentOutcome::Expired,
            "pi_3FAKEpaymentintent0001",
        ),
    ] {
        assert_eq!(
            update_of(&fixture_bytes(fixture)),
            PaymentUpdate {
                session_id: Some(session.into()),
                amount_minor: Some(54_000),
                ..fixture_guest(outcome, payment_intent)
            },
            "{fixture}"
        );
    }
}

#[test]
fn signature_vector_body_is_a_minimal_expired_session() {
    let v = fixture("signature-vectors.json");
    let body = v["stripe"]["raw_body"]
        .as_str()
        .unwrap()
        .as_bytes()
        .to_vec();
    assert_eq!(peek_event_id(&body).as_deref(), Some("evt_TESTFAKE0001"));
    assert_eq!(
        update_of(&body),
        PaymentUpdate {
            session_id: Some("cs_test_FAKE0001".into()),
            ..bare(PaymentOutcome::Expired)
        }
    );
}

// ---------------------------------------------------------------- mapping rules

#[test]
fn completed_but_unpaid_session_is_processing_and_absent_status_is_ignored() {
    let mut v = fixture("stripe-checkout-session-completed.json");
    v["data"]["object"]["payment_status"] = json!("unpaid");
    assert_eq!(update_of_value(&v).outcome, PaymentOutcome::Processing);
    v["data"]["object"]
        .as_object_mut()
        .unwrap()
        .remove("payment_status");
    assert_eq!(
        interpreted(&v),
        Interpretation::Ignored("checkout.session.completed (payment_status absent)".into())
    );
}

#[test]
fn completed_with_no_payment_required_counts_as_paid() {
    let mut v = fixture("stripe-checkout-session-completed.json");
    v["data"]["object"]["payment_status"] = json!("no_payment_required");
    assert_eq!(update_of_value(&v).outcome, PaymentOutcome::Paid);
}

#[test]
fn failed_falls_back_to_code_receipt_email_and_client_reference_metadata() {
    let mut v = fixture("stripe-payment-intent-failed.json");
    let pi = &mut v["data"]["object"];
    pi["metadata"] = json!({"client_reference": "ref_42"});
    pi["receipt_email"] = json!("Payer@Example.COM");
    let err = &mut pi["last_payment_error"];
    err.as_object_mut().unwrap().remove("decline_code");
    err["code"] = json!("expired_card");
    err["payment_method"]["billing_details"] = json!({"email": null, "name": "Mary Ann Smith"});
    let p = update_of_value(&v);
    assert_eq!(p.decline_code.as_deref(), Some("expired_card"));
    assert_eq!(p.client_reference.as_deref(), Some("ref_42"));
    assert_eq!(
        p.email.as_ref().map(EmailAddress::as_str),
        Some("Payer@example.com")
    );
    let name = p.name.unwrap();
    assert_eq!(
        (name.first_name.as_str(), name.last_name.as_str()),
        ("Mary", "Ann Smith")
    );
    assert_eq!(name.full(), "Mary Ann Smith");
}

#[test]
fn failed_without_an_error_or_metadata_still_names_the_payment_intent() {
    let v = json!({
        "id": "evt_min", "object": "event", "type": "payment_intent.payment_failed",
        "livemode": true, "created": 1, "data": {"object": {"id": "pi_min", "object": "payment_intent"}}
    });
    assert_eq!(
        update_of_value(&v),
        PaymentUpdate {
            payment_intent: Some("pi_min".into()),
            ..bare(PaymentOutcome::Failed)
        }
    );
}

#[test]
fn expanded_payment_intent_and_unparseable_email_are_tolerated() {
    let mut v = fixture("stripe-checkout-session-expired.json");
    let s = &mut v["data"]["object"];
    s["payment_intent"] = json!({"id": "pi_expanded", "object": "payment_intent"});
    s["customer_details"]["email"] = json!("not an email");
    s["client_reference_id"] = Value::Null;
    let p = update_of_value(&v);
    assert_eq!(p.payment_intent.as_deref(), Some("pi_expanded"));
    // customer_details.email is unusable: customer_email is next.
    assert_eq!(p.email, email("guest@example.com"));
    // client_reference_id is null: metadata.trip_id is next.
    assert_eq!(p.client_reference.as_deref(), Some("trip_fake_0001"));
}

#[test]
fn other_types_are_ignored_with_their_name() {
    for t in [
        "payment_intent.succeeded",
        "charge.failed",
        "checkout.session.async_payment_failed",
        "customer.created",
    ] {
        let v = json!({"id": "evt_x", "object": "event", "type": t, "livemode": false, "data": {"object": {}}});
        assert_eq!(interpreted(&v), Interpretation::Ignored(t.into()), "{t}");
    }
}

// ---------------------------------------------------------------- envelope errors

fn parse_err(v: Value) -> ParseError {
    parse_envelope(&serde_json::to_vec(&v).unwrap()).expect_err("must fail")
}

#[test]
fn envelope_errors_name_the_field() {
    assert_refuses_non_objects(parse_envelope, b"{not json", b"[1]");
    assert_eq!(
        parse_err(json!({"type": "x"})),
        ParseError::Missing("id".into())
    );
    assert_eq!(
        parse_err(json!({"id": "evt_1"})),
        ParseError::Missing("type".into())
    );
    assert_eq!(
        parse_err(json!({"id": "evt_1", "type": "x", "livemode": "no"}))
            .field()
            .unwrap(),
        "livemode"
    );
    assert_eq!(
        parse_err(json!({"id": "evt_1", "type": "x", "created": "yesterday"}))
            .field()
            .unwrap(),
        "created"
    );
    assert_eq!(
        parse_err(json!({"id": "evt_1", "type": "x", "object": "charge"}))
            .field()
            .unwrap(),
        "object"
    );
    assert_eq!(
        parse_err(json!({"id": "evt_1", "type": "x", "data": []}))
            .field()
            .unwrap(),
        "data"
    );
}

#[test]
fn acted_on_types_require_their_object_and_its_id() {
    for t in [
        "payment_intent.payment_failed",
        "checkout.session.completed",
        "checkout.session.expired",
    ] {
        let env = parse_envelope(&serde_json::to_vec(&json!({"id": "evt_1", "type": t})).unwrap())
            .unwrap();
        assert_eq!(
            interpret(&env).unwrap_err(),
            ParseError::Missing("data.object".into()),
            "{t}"
        );
    }
    let env = parse_envelope(
        &serde_json::to_vec(&json!({"id": "evt_1", "type": "checkout.session.expired", "data": {"object": {"status": "expired"}}}))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        interpret(&env).unwrap_err(),
        ParseError::Missing("data.object.id".into())
    );
}

// ---------------------------------------------------------------- Stripe-Signature

fn vector() -> (String, Vec<u8>) {
    let v = fixture("signature-vectors.json");
    assert_eq!(v["stripe"]["secret"], SECRET);
    (
        v["stripe"]["headers"]["Stripe-Signature"]
            .as_str()
            .unwrap()
            .to_string(),
        v["stripe"]["raw_body"]
            .as_str()
            .unwrap()
            .as_bytes()
            .to_vec(),
    )
}

fn sign_hex(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

fn check(header: &str, body: &[u8], secrets: &[&str], now: i64) -> Result<(), SignatureError> {
    verify_t_v1(Some(header), body, secrets, now, 300, "Stripe-Signature")
}

#[test]
fn stripe_signature_vector_verifies() {
    let (header, body) = vector();
    assert_eq!(check(&header, &body, &[SECRET], T), Ok(()));
    // The Worker's Stripe source runs this same check on this header.
    assert_eq!(WEBHOOK.header, "Stripe-Signature");
    // Within the tolerance on both sides.
    assert_eq!(check(&header, &body, &[SECRET], T + 300), Ok(()));
    assert_eq!(check(&header, &body, &[SECRET], T - 300), Ok(()));
}

#[test]
fn tampered_body_is_refused() {
    let (header, body) = vector();
    let mut tampered = body.clone();
    let i = tampered.len() - 3;
    tampered[i] ^= 0x01;
    assert_eq!(
        check(&header, &tampered, &[SECRET], T),
        Err(SignatureError::Mismatch)
    );
    // Re-serialized JSON is not the signed bytes either.
    let reserialized =
        serde_json::to_vec_pretty(&serde_json::from_slice::<Value>(&body).unwrap()).unwrap();
    assert_eq!(
        check(&header, &reserialized, &[SECRET], T),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn expired_timestamp_is_refused() {
    let (header, body) = vector();
    assert_eq!(
        check(&header, &body, &[SECRET], T + 301),
        Err(SignatureError::Expired { age_s: 301 })
    );
    assert_eq!(
        check(&header, &body, &[SECRET], T - 301),
        Err(SignatureError::Expired { age_s: -301 })
    );
}

#[test]
fn rotation_two_signatures_second_matches() {
    let (_, body) = vector();
    let good = sign_hex(SECRET, T, &body);
    let old = sign_hex("whsec_old_secret", T, &body);
    let header = format!("t={T},v1={old},v1={good}");
    assert_eq!(check(&header, &body, &[SECRET], T), Ok(()));
}

#[test]
fn rotation_two_secrets_second_matches() {
    let (header, body) = vector();
    assert_eq!(
        check(
            &header,
            &body,
            &["whsec_new_secret_not_yet_used", SECRET],
            T
        ),
        Ok(())
    );
    assert_eq!(
        check(&header, &body, &["whsec_other"], T),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn v0_only_header_is_refused() {
    let (_, body) = vector();
    // A v0 value carrying a correct MAC still vouches for nothing: only v1 is accepted.
    let header = format!("t={T},v0={}", sign_hex(SECRET, T, &body));
    assert_eq!(
        check(&header, &body, &[SECRET], T),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn key_is_the_whole_whsec_string_not_its_decoding() {
    let (header, body) = vector();
    let without_prefix = SECRET.trim_start_matches("whsec_");
    assert_eq!(
        check(&header, &body, &[without_prefix], T),
        Err(SignatureError::Mismatch)
    );
}
