//! Resend as a main provider: request body, idempotency key, error classification (https://resend.com/docs/api-reference/errors)
//! and the fixtures `resend-send-email-request.json` / `resend-error-daily-quota.json`.

use crate::fixtures::{confirmation_email, fixture};
use booking_email_engine::domain::email::EmailKind;
use booking_email_engine::domain::marketing::unsubscribe;
use booking_email_engine::domain::outbox::outgoing::OutgoingEmail;
use booking_email_engine::domain::outbox::resend::{
    class_of_name, classify, idempotency_key, parse_retry_after_ms, parse_success, request_body,
    tag_value, SuccessParseError, IDEMPOTENCY_HEADER, MESSAGE_MAX,
};
use booking_email_engine::domain::outbox::{
    after_failure_with_hint, AfterFailure, Backoff, Provider, ProviderErrorClass,
};
use serde_json::json;
fn email() -> OutgoingEmail {
    OutgoingEmail {
        message_id: "<abc@mail.example.com>".into(),
        ..confirmation_email(
            "BK_fake_7Q2w",
            "Your stay at Example Harbour Hotel is confirmed",
            "Hi Testa, your booking BK_fake_7Q2w is confirmed.",
            "<p>Hi Testa, your booking BK_fake_7Q2w is confirmed.</p>",
        )
    }
}

const FROM: &str = "Example Trips <bookings@mail.example.com>";

#[test]
fn request_body_has_the_fields_of_the_fixture() {
    let fx = fixture("resend-send-email-request.json");
    let want = &fx["body"];
    let extra = vec![
        (
            "List-Unsubscribe".to_string(),
            want["headers"]["List-Unsubscribe"]
                .as_str()
                .unwrap()
                .to_string(),
        ),
        (
            "List-Unsubscribe-Post".to_string(),
            "List-Unsubscribe=One-Click".to_string(),
        ),
    ];
    let body = request_body(&email(), FROM, &extra);
    for field in ["from", "to", "subject", "html", "text", "headers"] {
        assert_eq!(body[field], want[field], "{field}");
    }
    assert!(body["to"].is_array());
    assert_eq!(
        body["tags"],
        json!([{ "name": "kind", "value": "booking_confirmation" }])
    );
    // Exactly these keys: nothing the fixture's API would not accept.
    let mut keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["from", "headers", "html", "subject", "tags", "text", "to"]
    );
    assert_eq!(fx["url"], "https://api.resend.com/emails");
    assert!(fx["headers"][IDEMPOTENCY_HEADER].is_string());
}

#[test]
fn request_body_without_extra_headers_has_no_headers_object() {
    let body = request_body(&email(), FROM, &[]);
    assert!(body.get("headers").is_none());
    assert_eq!(body["to"], json!(["guest@example.com"]));
}

#[test]
fn request_body_carries_unsubscribe_headers_and_is_deterministic() {
    let token = unsubscribe::sign(
        "guest@example.com",
        "marketing",
        b"0123456789abcdef0123456789abcdef",
    );
    let h = unsubscribe::headers("https://engine.example.com", &token).to_vec();
    let a = request_body(&email(), FROM, &h);
    let token2 = unsubscribe::sign(
        "guest@example.com",
        "marketing",
        b"0123456789abcdef0123456789abcdef",
    );
    let b = request_body(
        &email(),
        FROM,
        &unsubscribe::headers("https://engine.example.com", &token2),
    );
    // Same email → byte-identical payload (Resend's idempotency needs it).
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    assert_eq!(
        a["headers"]["List-Unsubscribe"],
        format!("<https://engine.example.com/unsubscribe/{token}>")
    );
    assert_eq!(
        a["headers"]["List-Unsubscribe-Post"],
        "List-Unsubscribe=One-Click"
    );
}

#[test]
fn header_values_cannot_inject_lines_and_later_duplicates_win() {
    let extra = vec![
        (
            "X-Ref".to_string(),
            "a\r\nBcc: evil@example.com".to_string(),
        ),
        ("X-Ref".to_string(), "b".to_string()),
        ("X-Other".to_string(), "c\nd".to_string()),
    ];
    let body = request_body(&email(), FROM, &extra);
    assert_eq!(body["headers"]["X-Ref"], "b");
    assert_eq!(body["headers"]["X-Other"], "c d");
}

#[test]
fn tags_only_carry_allowed_characters() {
    for kind in EmailKind::ALL {
        let mut e = email();
        e.kind = kind;
        let v = request_body(&e, FROM, &[])["tags"][0]["value"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(v, kind.as_str());
        assert!(v
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    }
    assert_eq!(tag_value("a b:c/é-d_e"), "a_b_c__-d_e");
    assert_eq!(tag_value(""), "_");
    assert_eq!(tag_value(&"x".repeat(300)).len(), 256);
}

#[test]
fn idempotency_key_is_the_dedupe_key_or_its_hash() {
    let k = email().dedupe_key;
    assert_eq!(
        idempotency_key(k.as_str()),
        "booking_confirmation:BK_fake_7Q2w"
    );
    assert_eq!(IDEMPOTENCY_HEADER, "Idempotency-Key");

    let exactly = "a".repeat(256);
    assert_eq!(idempotency_key(&exactly), exactly);

    let long = format!("arrival_guide:{}", "x".repeat(300));
    let hashed = idempotency_key(&long);
    assert!(hashed.starts_with("sha256:"));
    assert_eq!(hashed.len(), 7 + 64);
    assert_eq!(hashed, idempotency_key(&long), "deterministic");
    assert_ne!(hashed, idempotency_key(&format!("{long}y")));

    // Not safe in a header → hashed too; never empty.
    for odd in ["", "thank_you:BKé", "thank_you:a\nb", " thank_you:a"] {
        let key = idempotency_key(odd);
        assert!(key.starts_with("sha256:"), "{odd:?} → {key}");
        assert!((1..=256).contains(&key.len()));
    }
}

/// Every error name of Resend's error reference (https://resend.com/docs/api-reference/errors) (plus the older `invalid_to_address`), with its status.
#[test]
fn error_name_table() {
    use ProviderErrorClass::*;
    let table: &[(&str, u16, ProviderErrorClass)] = &[
        ("invalid_idempotency_key", 400, Configuration),
        // A field of this message (400, 422): set aside, the next email decides. Our key or our
        // unverified domain / testing-only sender (401, 403): ours, the route pauses.
        ("validation_error", 400, MessageRefused),
        ("validation_error", 401, Configuration),
        ("validation_error", 403, Configuration),
        ("validation_error", 422, MessageRefused),
        ("missing_api_key", 401, CredentialsRejected),
        ("restricted_api_key", 401, CredentialsRejected),
        ("invalid_api_key", 403, CredentialsRejected),
        ("invalid_access", 422, Configuration),
        ("email_above_quota", 403, DailyLimit),
        ("invalid_permission", 403, Configuration),
        ("suspended_api_key", 403, CredentialsRejected),
        ("not_found", 404, Configuration),
        ("method_not_allowed", 405, Configuration),
        ("concurrent_idempotent_requests", 409, RateLimited),
        ("invalid_idempotent_request", 409, Permanent),
        ("resource_locked", 409, Transient),
        ("invalid_from_address", 422, Configuration),
        ("invalid_attachment", 422, MessageRefused),
        ("invalid_parameter", 422, Configuration),
        ("invalid_region", 422, Configuration),
        ("missing_required_field", 422, MessageRefused),
        ("missing_required_parameter", 422, Configuration),
        ("daily_quota_exceeded", 429, DailyLimit),
        ("monthly_quota_exceeded", 429, DailyLimit),
        ("rate_limit_exceeded", 429, RateLimited),
        ("security_error", 451, MessageRefused),
        ("application_error", 500, Transient),
        ("internal_server_error", 500, Transient),
        ("service_unavailable", 503, Transient),
        ("invalid_to_address", 403, RecipientRejected),
    ];
    for &(name, status, want) in table {
        let body = json!({ "statusCode": status, "name": name, "message": format!("m {name}") })
            .to_string();
        let f = classify(status, &body, None);
        assert_eq!(f.class, want, "{name} {status}");
        assert_eq!(f.name.as_deref(), Some(name));
        assert_eq!(f.message, format!("m {name}"));
        assert_eq!(f.retry_after_ms, None);
        assert_eq!(class_of_name(name, status), Some(want), "{name}");
        // The name decides, whatever the status says — except `validation_error`, whose 401 and
        // 403 are about our key or sender and whose 400 and 422 are about this message's fields.
        if name != "validation_error" {
            assert_eq!(classify(500, &body, None).class, want, "{name} with 500");
        }
    }
}

#[test]
fn unknown_names_and_non_json_bodies_are_retried_never_dead_lettered_on_sight() {
    use ProviderErrorClass::*;
    let unknown = |status: u16| {
        json!({ "statusCode": status, "name": "brand_new_error", "message": "?" }).to_string()
    };
    for (status, want) in [
        (400, Transient),
        (401, Transient),
        (403, Transient),
        (404, Transient),
        (408, Transient),
        (409, Transient),
        (422, Transient),
        (429, RateLimited),
        (451, Transient),
        (500, Transient),
        (502, Transient),
        (503, Transient),
        (504, Transient),
        (520, Transient),
        (302, Transient),
        (0, Transient),
    ] {
        assert_eq!(
            classify(status, &unknown(status), None).class,
            want,
            "json {status}"
        );
        let html = classify(status, "<html><body>Bad gateway</body></html>", None);
        assert_eq!(html.class, want, "html {status}");
        assert_eq!(html.name, None);
        assert!(
            html.message.starts_with(&format!("HTTP {status}: <html>")),
            "{}",
            html.message
        );
        let empty = classify(status, "", None);
        assert_eq!(empty.class, want, "empty {status}");
        assert_eq!(empty.message, format!("HTTP {status}"));
    }
    // JSON that is not an error object: by status.
    assert_eq!(classify(503, "[1,2]", None).class, Transient);
    assert_eq!(classify(400, r#"{"name": 5}"#, None).class, Transient);
    assert_eq!(classify(400, r#"{"name": "  "}"#, None).name, None);
}

#[test]
fn long_messages_are_cut() {
    let body = json!({ "name": "validation_error", "message": "é".repeat(2_000) }).to_string();
    let f = classify(422, &body, None);
    assert_eq!(f.message.chars().count(), MESSAGE_MAX);
    let raw = classify(502, &"x".repeat(5_000), None);
    assert_eq!(raw.message.chars().count(), MESSAGE_MAX);
    assert_eq!(
        classify(
            429,
            &json!({"name":"rate_limit_exceeded","message":"slow"}).to_string(),
            None
        )
        .describe(),
        "rate_limit_exceeded: slow"
    );
}

#[test]
fn daily_quota_fixture() {
    let fx = fixture("resend-error-daily-quota.json");
    let status = fx["http_status"].as_u64().unwrap() as u16;
    let body = fx["body"].to_string();
    let retry_after = fx["headers"]["retry-after"].as_str();
    let f = classify(status, &body, retry_after);
    assert_eq!(f.class, ProviderErrorClass::DailyLimit);
    assert_eq!(f.name.as_deref(), Some("daily_quota_exceeded"));
    assert_eq!(
        f.message,
        "You have reached your daily email sending quota."
    );
    assert_eq!(
        f.retry_after_ms, None,
        "the fixture has no retry-after header"
    );

    // Wired into the outbox decision: pause the main provider until the next UTC day, fail over.
    let now = 1_767_225_600_000 + 13 * 3_600_000; // 2026-01-01T13:00Z
    let first_try = |hint| {
        after_failure_with_hint(
            f.class,
            Provider::Cloudflare,
            1,
            now,
            Backoff::DEFAULT,
            7,
            hint,
        )
    };
    let next_utc_day = AfterFailure::FailOver {
        pause_main_until_ms: 1_767_225_600_000 + 86_400_000,
    };
    assert_eq!(first_try(f.retry_after_ms), next_utc_day);
    // Even with a retry-after hint, the pause is the next UTC midnight.
    assert_eq!(first_try(Some(1_000)), next_utc_day);
}

#[test]
fn retry_after_header_is_parsed_into_ms() {
    for (raw, want) in [
        ("1", Some(1_000)),
        (" 30 ", Some(30_000)),
        ("0", Some(0)),
        ("1.5", Some(1_500)),
        ("0.0001", Some(1)),
        ("", None),
        ("-5", None),
        ("soon", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
        ("1e3", None),
        ("1.2.3", None),
        (".", None),
    ] {
        assert_eq!(parse_retry_after_ms(raw), want, "{raw:?}");
    }
    // Absurd values are cut to a year instead of overflowing.
    assert_eq!(
        parse_retry_after_ms("99999999999999999999999"),
        Some(365 * 86_400_000)
    );
    let f = classify(
        429,
        &json!({"name":"rate_limit_exceeded","message":"x"}).to_string(),
        Some("2"),
    );
    assert_eq!(f.retry_after_ms, Some(2_000));
    // Rate limited with a short hint: the 60 s floor still applies.
    match after_failure_with_hint(
        f.class,
        Provider::Cloudflare,
        1,
        0,
        Backoff::DEFAULT,
        0,
        f.retry_after_ms,
    ) {
        AfterFailure::RetryAt { at_ms } => assert_eq!(at_ms, 60_000),
        other => panic!("{other:?}"),
    }
}

#[test]
fn success_body_gives_the_id() {
    let fx = fixture("resend-send-email-request.json");
    let ok = fx["expected_response_200"].to_string();
    assert_eq!(
        parse_success(&ok).as_deref(),
        Ok("49a3999c-0ce1-4ea6-ab68-afcd6dc2e794")
    );
    assert_eq!(parse_success(r#"{"id":" x "}"#).as_deref(), Ok("x"));
    assert_eq!(parse_success(""), Err(SuccessParseError::NotJson));
    assert_eq!(parse_success("<html>"), Err(SuccessParseError::NotJson));
    assert_eq!(parse_success("[]"), Err(SuccessParseError::NotJson));
    assert_eq!(parse_success("{}"), Err(SuccessParseError::MissingId));
    assert_eq!(
        parse_success(r#"{"id":""}"#),
        Err(SuccessParseError::MissingId)
    );
    assert_eq!(
        parse_success(r#"{"id":42}"#),
        Err(SuccessParseError::MissingId)
    );
    // Unreadable success: retry (safe thanks to the Idempotency-Key).
    assert_eq!(
        SuccessParseError::NotJson.class(),
        ProviderErrorClass::Transient
    );
}

#[test]
fn from_field_quotes_display_names_only_when_needed() {
    use booking_email_engine::domain::outbox::resend::from_field;
    assert_eq!(
        from_field("Example Trips", "b@mail.example.com"),
        "Example Trips <b@mail.example.com>"
    );
    assert_eq!(
        from_field("Trips, Inc. \"Best\"", "b@x.com"),
        "\"Trips, Inc. \\\"Best\\\"\" <b@x.com>"
    );
    assert_eq!(from_field("  ", "b@x.com"), "b@x.com");
    assert_eq!(
        from_field("A\r\nBcc: x", "b@x.com"),
        "\"A Bcc: x\" <b@x.com>"
    );
}
