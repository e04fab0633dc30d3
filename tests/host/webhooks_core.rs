//! Outbound webhooks, the pure core: signing against the Standard Webhooks reference
//! vector, stable event ids, subscriber URL rules, the retry schedule per answer, and the Email
//! Service delivery events. Host-run, milliseconds.

use booking_email_engine::domain::marketing::Suppression;
use booking_email_engine::domain::webhooks::events::{checkout_fact, email_outcome, EmailFact};
use booking_email_engine::domain::webhooks::{
    ceiling, check_url, decide, event_id, excerpt, new_secret, parse_event_types, publication,
    retry_after_s, sign, stored_types, wants, Answer, Decision, EventType, RetryPolicy, UrlError,
};
use booking_email_engine::sources::email_service;
use serde_json::json;

#[test]
fn signs_like_the_standard_webhooks_reference() {
    // The vector of https://github.com/standard-webhooks/standard-webhooks (and the
    // `standardwebhooks` npm library 1.1.1 gives the same).
    assert_eq!(
        sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            r#"{"test": 2432232314}"#,
        )
        .unwrap(),
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    );
    // One of ours, checked with the same library.
    assert_eq!(
        sign(
            "whsec_dGVzdC1zZWNyZXQtZm9yLXRoZS1lbmdpbmUtMDEyMzQ1Njc=",
            "evt_0123456789abcdef0123456789abcdef",
            1_796_212_800,
            r#"{"id":"evt_0123456789abcdef0123456789abcdef","type":"booking.confirmed"}"#,
        )
        .unwrap(),
        "v1,VRCLP+cWMr1UPLdCrhbjH4hwOBQE2R9W0zhSqtWf7jg="
    );
    assert!(sign("whsec_not base64!", "id", 1, "{}").is_err());
    assert!(sign("whsec_", "id", 1, "{}").is_err());
}

#[test]
fn secrets_are_whsec_and_32_random_bytes() {
    let s = new_secret(&[7u8; 32]);
    assert!(s.starts_with("whsec_"));
    assert_eq!(s.len(), "whsec_".len() + 44);
    assert!(sign(&s, "evt_x", 1, "{}").is_ok());
}

#[test]
fn event_ids_are_stable_per_cause_and_type_and_never_show_the_cause() {
    let a = event_id(EventType::BookingConfirmed, "BK-1");
    assert_eq!(a, event_id(EventType::BookingConfirmed, "BK-1"));
    assert_ne!(a, event_id(EventType::BookingCancelled, "BK-1"));
    assert_ne!(a, event_id(EventType::BookingConfirmed, "BK-2"));
    assert!(a.starts_with("evt_") && a.len() == 36);
    let weird = event_id(EventType::BookingUpdated, "liteapi:<script>\r\nX: y");
    assert!(weird[4..].chars().all(|c| c.is_ascii_hexdigit()));
    // A replayed step builds the same body: same id, same bytes.
    let build = || {
        publication(
            EventType::BookingConfirmed,
            "BK-1",
            Some("BK-1"),
            json!({"a": 1}),
            1_796_212_800_000,
        )
    };
    let p1 = build();
    assert_eq!(p1, build());
    let body: serde_json::Value = serde_json::from_str(&p1.body).unwrap();
    assert_eq!(
        body,
        json!({"id": a, "type": "booking.confirmed", "version": 1, "createdAt": "2026-12-02T12:00:00.000Z", "data": {"a": 1}})
    );
}

#[test]
fn subscriber_urls_must_be_https_to_a_public_host() {
    assert!(check_url("https://hooks.example.com/in?x=1", false).is_ok());
    assert!(check_url("https://203.0.113.9/in", false).is_err()); // documentation range
    assert!(check_url("https://8.8.8.8/in", false).is_ok());
    for (url, want) in [
        ("http://hooks.example.com/in", UrlError::NotHttps),
        ("ftp://hooks.example.com/in", UrlError::NotHttps),
        ("https://user:pw@hooks.example.com/", UrlError::Credentials),
        ("nonsense", UrlError::Invalid),
        // Built without a Unicode IDNA back end (Cargo.toml pins idna_adapter 1.0): non-ASCII
        // host names are refused with a message saying how to write them.
        ("https://bücher.example/in", UrlError::InternationalHost),
    ] {
        assert_eq!(check_url(url, false).unwrap_err(), want, "{url}");
    }
    // The same host in punycode is an ordinary host name.
    assert_eq!(
        check_url("https://xn--bcher-kva.example/in", false)
            .unwrap()
            .host_str(),
        Some("xn--bcher-kva.example")
    );
    for url in [
        "https://10.0.0.1/",
        "https://172.16.5.4/",
        "https://192.168.1.1/",
        "https://127.0.0.1/",
        "https://169.254.169.254/latest/meta-data",
        "https://100.64.0.1/",
        "https://0.0.0.0/",
        "https://[::1]/",
        "https://[fd00::1]/",
        "https://[fe80::1]/",
        "https://[::ffff:10.0.0.1]/",
        "https://localhost/",
        "https://api.localhost/",
        "https://nas.local/",
        "https://svc.internal/",
        "https://intranet/",
    ] {
        assert!(
            matches!(check_url(url, false), Err(UrlError::NotPublic(_))),
            "{url}"
        );
    }
    // Plain http only to loopback, only when allowed.
    assert!(check_url("http://127.0.0.1:9000/hook", true).is_ok());
    assert!(check_url("http://localhost:9000/hook", true).is_ok());
    assert_eq!(
        check_url("http://127.0.0.1:9000/hook", false).unwrap_err(),
        UrlError::NotHttps
    );
    assert_eq!(
        check_url("http://10.0.0.1/hook", true).unwrap_err(),
        UrlError::NotHttps
    );
    let long = format!("https://hooks.example.com/{}", "a".repeat(3000));
    assert!(matches!(check_url(&long, false), Err(UrlError::TooLong(_))));
}

#[test]
fn event_type_lists_parse_with_clear_errors() {
    assert_eq!(parse_event_types(&[]).unwrap(), None);
    assert_eq!(parse_event_types(&["*".into()]).unwrap(), None);
    let t = parse_event_types(&[
        "email.sent".into(),
        "booking.cancelled".into(),
        "email.sent".into(),
    ])
    .unwrap();
    assert_eq!(stored_types(&t), "email.sent booking.cancelled");
    assert!(wants(
        "email.sent booking.cancelled",
        EventType::BookingCancelled
    ));
    assert!(!wants(
        "email.sent booking.cancelled",
        EventType::BookingConfirmed
    ));
    assert!(wants("*", EventType::CheckoutHeld));
    let e = parse_event_types(&["booking.exploded".into()]).unwrap_err();
    assert!(
        e.contains("unknown event type") && e.contains("booking.confirmed"),
        "{e}"
    );
}

const P: RetryPolicy = RetryPolicy {
    base_s: 60,
    factor: 3,
    cap_s: 43_200,
    max_attempts: 8,
    client_error_attempts: 3,
};

fn delay(attempt: u32, answer: Answer, jitter: f64) -> u32 {
    match decide(&P, attempt, answer, None, jitter) {
        Decision::Retry { delay_s } => delay_s,
        other => panic!("attempt {attempt}: {other:?}"),
    }
}

#[test]
fn the_production_schedule_grows_by_three_with_equal_jitter_up_to_twelve_hours() {
    let top: Vec<u32> = (1..8)
        .map(|a| delay(a, Answer::Status(503), 0.999_999))
        .collect();
    assert_eq!(top, [60, 180, 540, 1_620, 4_860, 14_580, 43_200]);
    let bottom: Vec<u32> = (1..8).map(|a| delay(a, Answer::Status(500), 0.0)).collect();
    assert_eq!(bottom, [30, 90, 270, 810, 2_430, 7_290, 21_600]);
    assert_eq!(delay(1, Answer::Timeout, 0.5), 45);
    assert_eq!(delay(2, Answer::Network, 0.5), 135);
    assert_eq!(delay(1, Answer::Status(408), 0.0), 30);
    assert!(matches!(
        decide(&P, 8, Answer::Status(500), None, 0.5),
        Decision::Dead { reason } if reason == "HTTP 500 on attempt 8 of 8"
    ));
    assert!(matches!(
        decide(&P, 8, Answer::Timeout, None, 0.5),
        Decision::Dead { .. }
    ));
}

#[test]
fn each_answer_has_its_decision() {
    // A cap below the base (a misconfiguration) never panics: the base wins.
    let odd = RetryPolicy {
        base_s: 100,
        cap_s: 10,
        ..P
    };
    let retry = |delay_s| Decision::Retry { delay_s };
    // (policy, attempt, answer, Retry-After, jitter) → decision
    let cases = [
        (&P, 1, Answer::Status(200), None, 0.5, Decision::Delivered),
        (&P, 8, Answer::Status(204), None, 0.5, Decision::Delivered),
        (&P, 1, Answer::Status(410), None, 0.5, Decision::Disable),
        // Retry-After is honoured for 429 and 503 when longer than the schedule, at most the cap.
        (&P, 1, Answer::Status(429), Some(120), 0.5, retry(120)),
        (&P, 1, Answer::Status(429), Some(1), 0.0, retry(30)),
        (&P, 3, Answer::Status(429), Some(1), 0.0, retry(270)),
        (&odd, 2, Answer::Status(500), Some(5), 0.999_999, retry(100)),
        (&odd, 2, Answer::Status(429), Some(5_000), 0.0, retry(100)),
        (
            &P,
            1,
            Answer::Status(503),
            Some(999_999),
            0.5,
            retry(43_200),
        ),
        // Not for a 500.
        (&P, 1, Answer::Status(500), Some(600), 0.0, retry(30)),
    ];
    for (policy, attempt, answer, retry_after, jitter, want) in cases {
        assert_eq!(
            decide(policy, attempt, answer, retry_after, jitter),
            want,
            "attempt {attempt}, {answer:?}, Retry-After {retry_after:?}, jitter {jitter}"
        );
    }
    // A redirect or another 4xx: three attempts, then dead.
    for s in [301, 302, 400, 401, 403, 404, 422] {
        assert!(
            matches!(
                decide(&P, 2, Answer::Status(s), None, 0.0),
                Decision::Retry { .. }
            ),
            "{s}"
        );
        assert!(
            matches!(
                decide(&P, 3, Answer::Status(s), None, 0.0),
                Decision::Dead { .. }
            ),
            "{s}"
        );
    }
    // The ceiling of each answer (also what stops a re-sent delivery without another POST).
    assert_eq!(ceiling(&P, Answer::Status(503)), 8);
    assert_eq!(ceiling(&P, Answer::Timeout), 8);
    assert_eq!(ceiling(&P, Answer::Status(404)), 3);
    assert_eq!(ceiling(&P, Answer::Status(302)), 3);
    assert_eq!(retry_after_s(" 7 "), Some(7));
    assert_eq!(retry_after_s("Wed, 21 Oct 2026 07:28:00 GMT"), None);
    assert_eq!(retry_after_s("9999999"), Some(86_400));
}

#[test]
fn excerpts_are_bounded_and_one_line() {
    let e = excerpt(&format!("line1\r\nline2{}", "é".repeat(600)));
    assert!(e.len() <= 512);
    assert!(!e.contains('\n') && !e.contains('\r'));
    assert!(e.starts_with("line1  line2"));
}

#[test]
fn email_and_checkout_facts_map_to_their_types() {
    let fact = |status| EmailFact {
        dedupe_key: "booking_confirmation:BK-1",
        status,
        provider: Some("cloudflare"),
        provider_message_id: Some("m1"),
        attempts: 1,
        reason: Some("550 user unknown"),
    };
    assert_eq!(
        email_outcome(&fact("sent"), 0).unwrap().event_type,
        EventType::EmailSent
    );
    assert_eq!(
        email_outcome(&fact("dead"), 0).unwrap().event_type,
        EventType::EmailDead
    );
    for s in ["skipped", "dropped", "blocked"] {
        assert_eq!(
            email_outcome(&fact(s), 0).unwrap().event_type,
            EventType::EmailSkipped
        );
    }
    for s in ["queued", "sending", "waiting", "claimed"] {
        assert!(email_outcome(&fact(s), 0).is_none());
    }
    let sent: serde_json::Value =
        serde_json::from_str(&email_outcome(&fact("sent"), 0).unwrap().body).unwrap();
    assert_eq!(sent["data"]["reason"], serde_json::Value::Null);
    assert_eq!(sent["data"]["kind"], "booking_confirmation");
    assert_eq!(sent["data"]["reference"], "BK-1");
    // A redriven email that dies again is a new event; the same outcome twice is not.
    assert_ne!(
        email_outcome(&fact("dead"), 0).unwrap().event_id,
        email_outcome(
            &EmailFact {
                attempts: 7,
                ..fact("dead")
            },
            0
        )
        .unwrap()
        .event_id
    );
    assert_eq!(
        checkout_fact("owner_checkout_hold:h1", 0)
            .unwrap()
            .event_type,
        EventType::CheckoutHeld
    );
    assert_eq!(
        checkout_fact("checkout_not_completed:pb1", 0)
            .unwrap()
            .event_type,
        EventType::CheckoutFollowUpSent
    );
    assert!(checkout_fact("booking_confirmation:BK-1", 0).is_none());
}

fn service_event(ty: &str, payload: serde_json::Value) -> serde_json::Value {
    json!({"type": ty, "source": {"type": "email.sending", "domain": "example.com"}, "payload": payload,
           "metadata": {"eventSchemaVersion": 1, "eventTimestamp": "2026-06-01T02:48:57.132Z"}})
}

#[test]
fn email_service_events_parse_and_only_hard_bounces_and_complaints_suppress() {
    let hard = email_service::parse(&service_event(
        "cf.email.sending.message.bounced",
        json!({"eventId": "0190d0c4-7ea1-7af2-8b88-c1d2e3f4a5b6", "messageId": "0101018f-msg", "recipient": "User@Example.net",
               "delivery": {"status": "bounced", "smtpResponse": "550 5.1.1 User unknown"},
               "bounce": {"type": "hard", "reason": "550 5.1.1 User unknown"}}),
    ))
    .unwrap();
    assert_eq!(hard.event_type, "message.bounced");
    assert_eq!(hard.delivery_status, "bounced");
    assert_eq!(hard.message_id.as_deref(), Some("0101018f-msg"));
    assert_eq!(
        hard.suppression,
        Some((
            Suppression::HardBounce,
            Some("550 5.1.1 User unknown".into())
        ))
    );
    let soft = email_service::parse(&service_event(
        "cf.email.sending.message.bounced",
        json!({"eventId": "e2", "recipient": "u@example.net", "bounce": {"type": "soft"}}),
    ))
    .unwrap();
    assert_eq!(soft.suppression, None);
    let complaint = email_service::parse(&service_event(
        "cf.email.sending.message.complained",
        json!({"eventId": "e3", "recipient": "u@example.net", "delivery": {"status": "complained"}, "complaint": {"type": "abuse"}}),
    ))
    .unwrap();
    assert_eq!(
        complaint.suppression,
        Some((Suppression::Complaint, Some("complaint: abuse".into())))
    );
    let delivered = email_service::parse(&service_event(
        "cf.email.sending.message.delivered",
        json!({"eventId": "e4", "recipient": "u@example.net", "delivery": {"status": "delivered\r\nX-Evil: 1"}}),
    ))
    .unwrap();
    assert_eq!(delivered.suppression, None);
    assert_eq!(delivered.delivery_status, "deliveredXEvil1");
    // Errors name the field.
    let e = email_service::parse(&json!({"type": "cf.queues.message"})).unwrap_err();
    assert!(e.to_string().contains("type"), "{e}");
    let e = email_service::parse(&service_event(
        "cf.email.sending.message.bounced",
        json!({"recipient": "u@example.net"}),
    ))
    .unwrap_err();
    assert!(e.to_string().contains("payload.eventId"), "{e}");
    let e = email_service::parse(&service_event(
        "cf.email.sending.message.bounced",
        json!({"eventId": "../../etc/passwd", "recipient": "u@example.net"}),
    ))
    .unwrap_err();
    assert!(e.to_string().contains("payload.eventId"), "{e}");
    let e = email_service::parse(&service_event(
        "cf.email.sending.message.bounced",
        json!({"eventId": "e5", "recipient": "nope"}),
    ))
    .unwrap_err();
    assert!(e.to_string().contains("payload.recipient"), "{e}");
}
