//! Resend delivery reports (`sources::resend`): Svix / Standard Webhooks verification under both
//! header names, and bounces / complaints → suppressions.

use crate::fixtures::assert_refuses_non_objects;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use booking_email_engine::domain::event::EmailAddress;
use booking_email_engine::domain::marketing::Suppression;
use booking_email_engine::sources::resend::{
    parse_event, signed_headers, verify, Report, SignedHeaders, DETAIL_MAX,
};
use booking_email_engine::sources::{ParseError, SignatureError};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::collections::HashMap;

const SECRET: &str = "whsec_dGVzdC1yZXNlbmQtd2ViaG9vay1zZWNyZXQtMDEyMzQ1";
const OLD_SECRET: &str = "whsec_b2xkLXJlc2VuZC1zZWNyZXQtMDEyMzQ1Njc4OQ==";
const NOW: i64 = 1_780_000_000;

fn sign(secret: &str, id: &str, t: i64, body: &[u8]) -> String {
    let key = BASE64.decode(secret.trim_start_matches("whsec_")).unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{t}.").as_bytes());
    mac.update(body);
    format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
}

fn headers(id: &str, t: i64, sig: &str) -> SignedHeaders {
    SignedHeaders {
        id: Some(id.into()),
        timestamp: Some(t.to_string()),
        signature: Some(sig.into()),
    }
}

fn bounced(bounce: Value) -> Value {
    json!({
        "type": "email.bounced",
        "created_at": "2026-03-02T11:00:00.000Z",
        "data": {
            "email_id": "4ef9a417-02e9-4d39-ad75-9611e0fcc33c",
            "from": "Example Trips <news@example.com>",
            "to": ["guest@example.com"],
            "subject": "Spring offers",
            "created_at": "2026-03-02T10:59:58.000Z",
            "bounce": bounce
        }
    })
}

fn parse(v: &Value) -> Result<booking_email_engine::sources::resend::ResendEvent, ParseError> {
    parse_event(v.to_string().as_bytes())
}

fn addr(s: &str) -> EmailAddress {
    EmailAddress::parse(s).unwrap()
}

// ---- authenticity ----

#[test]
fn svix_headers_are_preferred_and_webhook_headers_accepted() {
    let map: HashMap<&str, &str> = [
        ("svix-id", "msg_svix"),
        ("webhook-id", "msg_standard"),
        ("svix-timestamp", "  "),
        ("webhook-timestamp", "1780000000"),
        ("webhook-signature", "v1,abc"),
    ]
    .into();
    let h = signed_headers(|n| map.get(n).map(|v| v.to_string()));
    assert_eq!(
        h,
        SignedHeaders {
            id: Some("msg_svix".into()),
            timestamp: Some("1780000000".into()),
            signature: Some("v1,abc".into()),
        }
    );
    assert_eq!(signed_headers(|_| None), SignedHeaders::default());
}

#[test]
fn a_signed_delivery_verifies_with_any_configured_secret() {
    let body = bounced(json!({"type": "Permanent"})).to_string();
    let sig = sign(SECRET, "msg_1", NOW, body.as_bytes());
    let h = headers("msg_1", NOW, &sig);
    assert_eq!(verify(&h, body.as_bytes(), &[SECRET], NOW, 300), Ok(()));
    // Rotation: the new secret among old ones, and two signatures in one header.
    assert_eq!(
        verify(&h, body.as_bytes(), &[OLD_SECRET, SECRET], NOW + 299, 300),
        Ok(())
    );
    let both = format!("{} {sig}", sign(OLD_SECRET, "msg_1", NOW, body.as_bytes()));
    assert_eq!(
        verify(
            &headers("msg_1", NOW, &both),
            body.as_bytes(),
            &[SECRET],
            NOW,
            300
        ),
        Ok(())
    );
}

#[test]
fn forged_stale_or_unsigned_deliveries_are_refused_naming_the_svix_headers() {
    let body = bounced(json!({"type": "Permanent"})).to_string();
    let b = body.as_bytes();
    let sig = sign(SECRET, "msg_1", NOW, b);
    assert_eq!(
        verify(&headers("msg_1", NOW, &sig), b, &[OLD_SECRET], NOW, 300),
        Err(SignatureError::Mismatch)
    );
    assert_eq!(
        verify(&headers("msg_2", NOW, &sig), b, &[SECRET], NOW, 300),
        Err(SignatureError::Mismatch)
    );
    let tampered = body.replace("guest@", "other@");
    assert_eq!(
        verify(
            &headers("msg_1", NOW, &sig),
            tampered.as_bytes(),
            &[SECRET],
            NOW,
            300
        ),
        Err(SignatureError::Mismatch)
    );
    assert_eq!(
        verify(&headers("msg_1", NOW, &sig), b, &[SECRET], NOW + 301, 300),
        Err(SignatureError::Expired { age_s: 301 })
    );
    let mut h = headers("msg_1", NOW, &sig);
    h.id = None;
    assert_eq!(
        verify(&h, b, &[SECRET], NOW, 300),
        Err(SignatureError::Missing("svix-id"))
    );
    let mut h = headers("msg_1", NOW, &sig);
    h.timestamp = None;
    assert_eq!(
        verify(&h, b, &[SECRET], NOW, 300),
        Err(SignatureError::Missing("svix-timestamp"))
    );
    let mut h = headers("msg_1", NOW, &sig);
    h.signature = None;
    assert_eq!(
        verify(&h, b, &[SECRET], NOW, 300),
        Err(SignatureError::Missing("svix-signature"))
    );
    assert_eq!(
        verify(&headers("msg_1", NOW, "v1"), b, &[SECRET], NOW, 300),
        Err(SignatureError::Mismatch)
    );
    // An undecodable entry beside the valid one is skipped (the Standard Webhooks spec).
    assert_eq!(
        verify(
            &headers("msg_1", NOW, &format!("v1,BADSIG {sig}")),
            b,
            &[SECRET],
            NOW,
            300
        ),
        Ok(())
    );
    let mut h = headers("msg_1", NOW, &sig);
    h.timestamp = Some("yesterday".into());
    assert_eq!(
        verify(&h, b, &[SECRET], NOW, 300),
        Err(SignatureError::Malformed("svix-timestamp"))
    );
    assert_eq!(
        verify(&headers("msg_1", NOW, &sig), b, &[], NOW, 300),
        Err(SignatureError::NotConfigured)
    );
    assert_eq!(
        verify(&headers("msg_1", NOW, &sig), b, &["whsec_***"], NOW, 300),
        Err(SignatureError::BadSecret)
    );
}

// ---- events ----

#[test]
fn a_permanent_bounce_is_a_hard_bounce_for_every_recipient() {
    let mut v = bounced(json!({
        "message": "The recipient's mail server permanently rejected the email.",
        "subType": "General",
        "type": "Permanent"
    }));
    v["data"]["to"] = json!(["guest@example.com", "Second Guest <Second@Example.com>"]);
    let e = parse(&v).unwrap();
    assert_eq!(e.event_type, "email.bounced");
    assert_eq!(
        e.email_id.as_deref(),
        Some("4ef9a417-02e9-4d39-ad75-9611e0fcc33c")
    );
    assert_eq!(
        e.report,
        Report::Suppress {
            reason: Suppression::HardBounce,
            addresses: vec![addr("guest@example.com"), addr("Second@example.com")],
            detail: Some(
                "Permanent/General: The recipient's mail server permanently rejected the email."
                    .into()
            ),
            not_addresses: vec![],
        }
    );
}

#[test]
fn a_bounce_without_a_type_is_a_hard_bounce() {
    for bounce in [Value::Null, json!({}), json!({"message": "no such user"})] {
        let mut v = bounced(bounce.clone());
        if bounce.is_null() {
            v["data"].as_object_mut().unwrap().remove("bounce");
        }
        match parse(&v).unwrap().report {
            Report::Suppress { reason, .. } => assert_eq!(reason, Suppression::HardBounce),
            other => panic!("{bounce}: {other:?}"),
        }
    }
    let e = parse(&bounced(json!({"type": "permanent", "subType": "NoEmail"}))).unwrap();
    assert!(matches!(
        e.report,
        Report::Suppress { detail: Some(ref d), .. } if d == "permanent/NoEmail"
    ));
}

#[test]
fn a_soft_bounce_suppresses_nothing() {
    for kind in ["Transient", "Undetermined"] {
        let e = parse(&bounced(json!({"type": kind, "subType": "MailboxFull"}))).unwrap();
        match e.report {
            Report::Ignored(m) => assert!(m.contains(kind), "{m}"),
            other => panic!("{kind}: {other:?}"),
        }
    }
}

#[test]
fn a_complaint_suppresses_everything() {
    let v = json!({
        "type": "email.complained",
        "created_at": "2026-03-02T11:00:00.000Z",
        "data": {"email_id": "e1", "from": "news@example.com", "to": "guest@example.com", "subject": "s"}
    });
    let e = parse(&v).unwrap();
    assert!(matches!(
        e.report,
        Report::Suppress { reason: Suppression::Complaint, ref addresses, .. }
            if addresses == &vec![addr("guest@example.com")]
    ));
}

#[test]
fn other_events_are_ignored_even_without_data() {
    for v in [
        json!({"type": "email.delivered", "data": {"to": ["guest@example.com"]}}),
        json!({"type": "email.opened"}),
        json!({"type": "contact.created", "data": "odd"}),
    ] {
        let e = parse(&v).unwrap();
        assert!(matches!(e.report, Report::Ignored(_)), "{v}");
    }
}

#[test]
fn long_details_are_cut() {
    let e = parse(&bounced(
        json!({"type": "Permanent", "message": "é".repeat(600)}),
    ))
    .unwrap();
    match e.report {
        Report::Suppress {
            detail: Some(d), ..
        } => assert!(d.len() <= DETAIL_MAX, "{}", d.len()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn malformed_reports_name_the_field() {
    let missing_to = {
        let mut v = bounced(json!({"type": "Permanent"}));
        v["data"].as_object_mut().unwrap().remove("to");
        v
    };
    assert_eq!(
        parse(&missing_to).unwrap_err(),
        ParseError::Missing("data.to".into())
    );
    let cases: Vec<(Value, &str)> = vec![
        (
            {
                let mut v = bounced(json!({"type": "Permanent"}));
                v["data"]["to"] = json!(["not-an-address", "nor this"]);
                v
            },
            "data.to[0]",
        ),
        (
            {
                let mut v = bounced(json!({"type": "Permanent"}));
                v["data"]["to"] = json!([1]);
                v
            },
            "data.to[0]",
        ),
        (
            {
                let mut v = bounced(json!({"type": "Permanent"}));
                v["data"]["to"] = json!([]);
                v
            },
            "data.to",
        ),
        (
            {
                let mut v = bounced(json!({"type": "Permanent"}));
                v["data"]["to"] = json!({"a": 1});
                v
            },
            "data.to",
        ),
        (bounced(json!("Permanent")), "data.bounce"),
        (bounced(json!({"type": 5})), "data.bounce.type"),
        (json!({"type": "email.bounced", "data": []}), "data"),
        (json!({"type": 3, "data": {}}), "type"),
        (json!({"type": "  "}), "type"),
    ];
    for (v, field) in cases {
        let e = parse(&v).unwrap_err();
        assert_eq!(e.field(), Some(field), "{v}: {e}");
    }
    assert_eq!(
        parse(&json!({"type": "email.complained"})).unwrap_err(),
        ParseError::Missing("data".into())
    );
    assert_eq!(
        parse(&json!({"data": {}})).unwrap_err(),
        ParseError::Missing("type".into())
    );
    assert_refuses_non_objects(parse_event, b"{", b"[]");
}

#[test]
fn a_bounce_with_one_odd_entry_still_suppresses_the_usable_addresses() {
    let mut v = bounced(json!({"type": "Permanent"}));
    v["data"]["to"] = json!(["guest@example.com", "not-an-address"]);
    match parse(&v).unwrap().report {
        Report::Suppress {
            reason,
            addresses,
            not_addresses,
            ..
        } => {
            assert_eq!(reason, Suppression::HardBounce);
            assert_eq!(
                addresses.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
                ["guest@example.com"]
            );
            assert_eq!(not_addresses.len(), 1);
            assert!(
                not_addresses[0].starts_with("data.to[1]: "),
                "{not_addresses:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}
