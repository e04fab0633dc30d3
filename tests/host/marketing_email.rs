//! Marketing email (`domain::marketing::campaign`, `domain::render::marketing`) and the operator API's pure parts
//! (`domain::admin::operator`): the send request's validation, the rendered email (visible unsubscribe
//! link, the two RFC 8058 headers, escaping, the content lock), the unsubscribe pages, the bearer
//! check and the redrive request.

use crate::fixtures::assert_refuses_non_objects;
use booking_email_engine::config::Config;
use booking_email_engine::domain::admin::operator::{
    check_bearer, parse_redrive_request, OperatorAuthError,
};
use booking_email_engine::domain::email::content_lock::ContentLock;
use booking_email_engine::domain::email::{Audience, DedupeKey, EmailKind, Rank};
use booking_email_engine::domain::event::ids::message_id_for;
use booking_email_engine::domain::event::EmailAddress;
use booking_email_engine::domain::marketing::campaign::{
    base_url_allows_marketing, check_content, parse_send_request, Campaign, CampaignId, Rejected,
    SendReport, Skipped, CAMPAIGN_ID_MAX, LIST, RECIPIENTS_MAX, SUBJECT_MAX, TEXT_MAX,
};
use booking_email_engine::domain::marketing::unsubscribe::{self, ONE_CLICK};
use booking_email_engine::domain::render::marketing::{render, unsubscribe_url};
use booking_email_engine::domain::render::{unsubscribe_confirm_page, unsubscribe_result_page};
use booking_email_engine::domain::render::{Branding, RenderError};
use booking_email_engine::sources::ParseError;
use serde_json::{json, Value};

const KEY: &[u8] = b"test-unsubscribe-signing-key-0123456789abcdef";
const BASE: &str = "https://engine.test";

fn branding() -> Branding {
    Branding {
        brand: "Example Trips".into(),
        from: EmailAddress::parse("news@mail.example.com").unwrap(),
        locale: booking_email_engine::domain::i18n::Locale::En,
        region: booking_email_engine::domain::i18n::Region::DEFAULT,
    }
}

fn addr(s: &str) -> EmailAddress {
    EmailAddress::parse(s).unwrap()
}

/// The content lock as production configures it by default (`INTERNAL_NAMES` unset).
fn default_lock() -> ContentLock {
    let cfg = Config::parse(|k| match k {
        "OWNER_EMAIL" => Some("owner@example.com".into()),
        "SENDER_EMAIL" => Some("news@mail.example.com".into()),
        _ => None,
    })
    .unwrap();
    assert!(cfg.internal_names.contains("outbox"));
    ContentLock::from_config(BASE, &cfg.internal_names)
}

fn request(
    v: Value,
) -> Result<booking_email_engine::domain::marketing::campaign::SendRequest, ParseError> {
    parse_send_request(v.to_string().as_bytes())
}

fn valid() -> Value {
    json!({
        "campaign": "spring-2026_a",
        "subject": "  Spring offers  ",
        "text": "First paragraph.\r\n\r\nSecond paragraph,\nwith a line break.  \n\n\n",
        "recipients": ["a@example.com", "B@Example.com"]
    })
}

fn with(field: &str, value: Value) -> Value {
    let mut v = valid();
    v[field] = value;
    v
}

fn without(field: &str) -> Value {
    let mut v = valid();
    v.as_object_mut().unwrap().remove(field);
    v
}

fn campaign() -> Campaign {
    request(valid()).unwrap().campaign
}

fn field_of(r: Result<impl std::fmt::Debug, ParseError>) -> String {
    let e = r.unwrap_err();
    e.field()
        .unwrap_or_else(|| panic!("{e:?} names no field"))
        .to_string()
}

// ---- the send request ----

#[test]
fn a_valid_request_is_normalized() {
    let r = request(valid()).unwrap();
    assert_eq!(r.campaign.id.as_str(), "spring-2026_a");
    assert_eq!(r.campaign.subject, "Spring offers");
    assert_eq!(
        r.campaign.text,
        "First paragraph.\n\nSecond paragraph,\nwith a line break."
    );
    assert_eq!(
        r.recipients,
        vec![addr("a@example.com"), addr("B@example.com")]
    );
    assert!(r.rejected.is_empty());
    assert_eq!(r.repeated, 0);
    assert_eq!(
        r.campaign.paragraphs(),
        vec![
            vec!["First paragraph."],
            vec!["Second paragraph,", "with a line break."]
        ]
    );
}

#[test]
fn missing_fields_are_named() {
    for f in ["campaign", "subject", "text", "recipients"] {
        assert_eq!(
            request(without(f)).unwrap_err(),
            ParseError::Missing(f.into()),
            "{f}"
        );
        assert_eq!(
            request(with(f, Value::Null)).unwrap_err(),
            ParseError::Missing(f.into())
        );
    }
}

#[test]
fn wrong_types_are_named() {
    for f in ["campaign", "subject", "text"] {
        assert_eq!(field_of(request(with(f, json!(7)))), f);
    }
    assert_eq!(
        field_of(request(with("recipients", json!("a@example.com")))),
        "recipients"
    );
    assert_eq!(
        field_of(request(with(
            "recipients",
            json!(["a@example.com", "b@example.com", 3])
        ))),
        "recipients[2]"
    );
}

#[test]
fn not_json_or_not_an_object_is_refused_without_a_field() {
    assert_refuses_non_objects(parse_send_request, b"{nope", b"[1,2]");
}

#[test]
fn campaign_ids_are_1_to_64_safe_characters() {
    assert!(CampaignId::parse("a").is_ok());
    assert!(CampaignId::parse(&"x".repeat(CAMPAIGN_ID_MAX)).is_ok());
    for bad in [
        String::new(),
        "x".repeat(CAMPAIGN_ID_MAX + 1),
        "spring 2026".into(),
        "spring:2026".into(),
        "spring/2026".into(),
        " spring".into(),
        "früh".into(),
    ] {
        let e = CampaignId::parse(&bad).unwrap_err();
        assert_eq!(e.field(), Some("campaign"), "{bad:?}");
        assert_eq!(field_of(request(with("campaign", json!(bad)))), "campaign");
    }
}

#[test]
fn subjects_are_one_short_line() {
    for bad in [
        "   ".to_string(),
        "x".repeat(SUBJECT_MAX + 1),
        "Hello\r\nBcc: everyone@example.com".into(),
        "tab\there".into(),
    ] {
        let e = request(with("subject", json!(bad))).unwrap_err();
        assert_eq!(e.field(), Some("subject"), "{bad:?}");
    }
    assert!(request(with("subject", json!("é".repeat(SUBJECT_MAX)))).is_ok());
}

#[test]
fn texts_are_plain_and_bounded() {
    for bad in [
        " \n\n ".to_string(),
        "x".repeat(TEXT_MAX + 1),
        "bell\u{7}".into(),
        "nul\u{0}".into(),
    ] {
        let e = request(with("text", json!(bad))).unwrap_err();
        assert_eq!(e.field(), Some("text"), "{bad:?}");
    }
    let ok = request(with("text", json!("a\tb\n\nc"))).unwrap();
    assert_eq!(ok.campaign.text, "a\tb\n\nc");
}

#[test]
fn recipients_are_1_to_200() {
    assert_eq!(
        field_of(request(with("recipients", json!([])))),
        "recipients"
    );
    let many: Vec<String> = (0..=RECIPIENTS_MAX)
        .map(|i| format!("p{i}@example.com"))
        .collect();
    let e = request(with("recipients", json!(many))).unwrap_err();
    assert_eq!(e.field(), Some("recipients"));
    assert!(e.to_string().contains("201"), "{e}");
    let r = request(with("recipients", json!(many[..RECIPIENTS_MAX]))).unwrap();
    assert_eq!(r.recipients.len(), RECIPIENTS_MAX);
}

#[test]
fn invalid_addresses_are_rejected_not_fatal_and_repeats_collapse() {
    let long_local = "l".repeat(240);
    let r = request(with(
        "recipients",
        json!([
            "a@example.com",
            "not an address",
            "A@EXAMPLE.com",
            "",
            "a@example.com",
            "b@example.com",
            format!("{long_local}@example.com"),
        ]),
    ))
    .unwrap();
    assert_eq!(
        r.recipients,
        vec![addr("a@example.com"), addr("b@example.com")]
    );
    // `A@EXAMPLE.com` differs from `a@example.com` only in case: the same person.
    assert_eq!(r.repeated, 2);
    assert_eq!(r.rejected.len(), 3);
    assert_eq!(
        r.rejected[0],
        Rejected {
            email: "not an address".into(),
            message: "is not an email address".into()
        }
    );
    assert_eq!(r.rejected[1].message, "is empty");
    // A valid address whose dedupe key would not fit the outbox's 256 bytes.
    assert!(
        r.rejected[2].message.contains("dedupe key"),
        "{:?}",
        r.rejected[2]
    );
}

#[test]
fn the_reply_has_the_documented_shape() {
    let report = SendReport {
        campaign: "c1".into(),
        queued: 2,
        duplicates: 1,
        skipped: vec![Skipped {
            email: "x@example.com".into(),
            reason: "suppressed: marketing_unsubscribed".into(),
        }],
        rejected: vec![Rejected {
            email: "nope".into(),
            message: "is not an email address".into(),
        }],
    };
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        json!({
            "campaign": "c1", "queued": 2, "duplicates": 1,
            "skipped": [{"email": "x@example.com", "reason": "suppressed: marketing_unsubscribed"}],
            "rejected": [{"email": "nope", "message": "is not an email address"}]
        })
    );
}

// ---- the content lock on the operator's text ----

#[test]
fn the_content_lock_refuses_internal_names_admin_urls_and_placeholders_naming_the_field() {
    let lock = default_lock();
    assert_eq!(check_content(&lock, &campaign()), Ok(()));
    let mut c = campaign();
    c.text = "Manage it at https://engine.test/admin/bookings".into();
    let e = check_content(&lock, &c).unwrap_err();
    assert_eq!(e.field(), Some("text"));
    assert!(e.to_string().contains("admin URL"), "{e}");
    let mut c = campaign();
    c.subject = "News from the Outbox".into();
    let e = check_content(&lock, &c).unwrap_err();
    assert_eq!(e.field(), Some("subject"));
    assert!(e.to_string().contains("internal name: outbox"), "{e}");
    let mut c = campaign();
    c.text = "Hello {{ first_name }}".into();
    assert_eq!(check_content(&lock, &c).unwrap_err().field(), Some("text"));
    let mut c = campaign();
    c.text = "Approve: https://engine.test/actions/abc".into();
    assert_eq!(check_content(&lock, &c).unwrap_err().field(), Some("text"));
}

// ---- the rendered email ----

#[test]
fn the_email_carries_a_visible_link_and_the_two_rfc_8058_headers() {
    let to = addr("Guest@Example.com");
    let email = render(&campaign(), &to, BASE, KEY, &branding()).unwrap();
    let token = unsubscribe::sign("Guest@example.com", LIST, KEY);
    let url = format!("https://engine.test/unsubscribe/{token}");
    assert_eq!(unsubscribe_url(&to, BASE, KEY), url);
    assert_eq!(
        email.headers,
        vec![
            ("List-Unsubscribe".to_string(), format!("<{url}>")),
            (
                "List-Unsubscribe-Post".to_string(),
                "List-Unsubscribe=One-Click".to_string()
            ),
        ]
    );
    assert!(email.text.contains(&url), "{}", email.text);
    assert!(
        email.html.contains(&format!("href=\"{url}\"")),
        "{}",
        email.html
    );
    assert!(email
        .text
        .contains("Emails about your bookings will still reach you."));
    assert!(email
        .html
        .contains("Emails about your bookings will still reach you."));
    // The token names the address and the marketing list.
    let claims = unsubscribe::verify(&token, KEY).unwrap();
    assert_eq!(
        (claims.email.as_str(), claims.list.as_str()),
        ("Guest@example.com", "marketing")
    );
}

#[test]
fn the_email_is_a_marketing_email_with_its_dedupe_key() {
    let to = addr("guest@example.com");
    let email = render(&campaign(), &to, BASE, KEY, &branding()).unwrap();
    assert_eq!(email.kind, EmailKind::Marketing);
    assert_eq!(email.rank, Rank::Marketing);
    assert_eq!(email.audience, Audience::Client);
    assert_eq!(email.booking_id, None);
    assert_eq!(email.to, to);
    assert_eq!(email.subject, "Spring offers");
    assert_eq!(
        email.dedupe_key,
        DedupeKey::for_marketing("spring-2026_a", &to)
    );
    assert_eq!(
        email.dedupe_key.as_str(),
        "marketing:spring-2026_a:guest@example.com"
    );
    assert_eq!(
        email.message_id,
        message_id_for(email.dedupe_key.as_str(), "mail.example.com")
    );
    // Paragraphs in both parts.
    assert!(email
        .text
        .starts_with("First paragraph.\n\nSecond paragraph,\nwith a line break.\n\n"));
    assert!(
        email.html.contains("<p>First paragraph.</p>"),
        "{}",
        email.html
    );
    assert!(
        email
            .html
            .contains("<p>Second paragraph,<br>with a line break.</p>"),
        "{}",
        email.html
    );
    // Deterministic: every attempt of one dedupe key sends identical bytes.
    assert_eq!(
        email,
        render(&campaign(), &to, BASE, KEY, &branding()).unwrap()
    );
    let other = render(
        &campaign(),
        &addr("other@example.com"),
        BASE,
        KEY,
        &branding(),
    )
    .unwrap();
    assert_ne!(other.headers, email.headers);
}

#[test]
fn the_rendered_email_passes_the_content_lock() {
    let lock = default_lock();
    for to in ["guest@example.com", "x.y+tag@sub.example.org"] {
        let email = render(&campaign(), &addr(to), BASE, KEY, &branding()).unwrap();
        assert_eq!(lock.check(&email), Ok(()), "{to}");
    }
    // A local-development base (loopback http) is the engine's own host too.
    let local = ContentLock::from_config("http://127.0.0.1:8787", "outbox,workflow");
    let email = render(
        &campaign(),
        &addr("guest@example.com"),
        "http://127.0.0.1:8787",
        KEY,
        &branding(),
    )
    .unwrap();
    assert_eq!(local.check(&email), Ok(()));
    assert!(email.headers[0]
        .1
        .starts_with("<https://127.0.0.1:8787/unsubscribe/"));
}

#[test]
fn operator_text_is_escaped_in_html_and_kept_in_text() {
    let mut c = campaign();
    c.subject = "Tom & Jerry <deals>".into();
    c.text = "<script>alert(1)</script>\n\nFish & \"chips\" 'today'".into();
    let email = render(&c, &addr("guest@example.com"), BASE, KEY, &branding()).unwrap();
    assert!(!email.html.contains("<script>"), "{}", email.html);
    assert!(
        email
            .html
            .contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
        "{}",
        email.html
    );
    assert!(email
        .html
        .contains("Fish &#38; &#34;chips&#34; &#39;today&#39;"));
    assert!(email
        .html
        .contains("<title>Tom &#38; Jerry &#60;deals&#62;</title>"));
    assert!(email
        .text
        .contains("<script>alert(1)</script>\n\nFish & \"chips\" 'today'"));
    assert_eq!(email.subject, "Tom & Jerry <deals>");
}

#[test]
fn no_key_no_marketing_email() {
    let e = render(
        &campaign(),
        &addr("guest@example.com"),
        BASE,
        b"",
        &branding(),
    )
    .unwrap_err();
    assert!(matches!(e, RenderError::Refused(_)));
    assert!(e.to_string().contains("UNSUBSCRIBE_SIGNING_KEY"));
}

#[test]
fn public_base_url_must_be_https_except_on_loopback() {
    for ok in [
        "https://engine.test",
        "HTTPS://engine.example.com/",
        "http://127.0.0.1:8787",
        "http://localhost:8787/",
        "http://LOCALHOST",
        "http://[::1]:8787",
    ] {
        assert!(base_url_allows_marketing(ok), "{ok}");
    }
    for bad in [
        "http://engine.example.com",
        "http://127.0.0.1.evil.example",
        "http://localhost.example.com",
        "engine.example.com",
        "",
        "ftp://localhost",
        "https://",
    ] {
        assert!(!base_url_allows_marketing(bad), "{bad}");
    }
}

// ---- the unsubscribe pages ----

#[test]
fn the_confirmation_page_names_the_address_and_posts_the_one_click_body() {
    let post = "https://engine.test/unsubscribe/abc.def";
    let page = unsubscribe_confirm_page("guest@example.com", post, "Example Trips");
    assert!(
        page.contains("guest@example.com will no longer receive marketing emails"),
        "{page}"
    );
    assert!(
        page.contains(&format!("<form method=\"post\" action=\"{post}\"")),
        "{page}"
    );
    assert!(
        page.contains("<input type=\"hidden\" name=\"List-Unsubscribe\" value=\"One-Click\">"),
        "{page}"
    );
    assert!(page.contains("<button type=\"submit\""));
    assert!(page.contains("marketing emails"));
    assert!(page.contains("Emails about your bookings"));
    assert!(page.contains("Opening this page changed nothing."));
    assert!(page.contains("noindex"));
    // What the form sends is exactly the RFC 8058 body.
    assert!(unsubscribe::is_one_click_body(ONE_CLICK));
}

#[test]
fn pages_escape_what_they_show() {
    let page = unsubscribe_confirm_page(
        "\"><script>x</script>@example.com",
        "https://engine.test/unsubscribe/t\"x",
        "A & B",
    );
    assert!(!page.contains("<script>x"), "{page}");
    assert!(page.contains("&#60;script&#62;"));
    assert!(page.contains("A &#38; B"));
    assert!(!page.contains("t\"x"));
    let page = unsubscribe_result_page("<b>Done</b>", "a < b & c", "Example Trips");
    assert!(page.contains("&#60;b&#62;Done&#60;/b&#62;"));
    assert!(page.contains("a &#60; b &#38; c"));
    assert!(page.contains("Example Trips"));
}

// ---- operator authentication and the redrive request ----

#[test]
fn the_operator_token_is_a_bearer_token() {
    let t = "test-operator-token";
    // (the Authorization header, what the check says of it)
    let cases = [
        (Some("Bearer test-operator-token"), Ok(())),
        (Some("  bearer   test-operator-token "), Ok(())),
        (None, Err(OperatorAuthError::Missing)),
        (Some("  "), Err(OperatorAuthError::Missing)),
        (
            Some("test-operator-token"),
            Err(OperatorAuthError::NotBearer),
        ),
        (Some("Basic dGVzdA=="), Err(OperatorAuthError::NotBearer)),
        // `Bearer ` without a token.
        (Some("Bearer "), Err(OperatorAuthError::NotBearer)),
        (
            Some("Bearer test-operator-tokeN"),
            Err(OperatorAuthError::Mismatch),
        ),
        (
            Some("Bearer test-operator-token-and-more"),
            Err(OperatorAuthError::Mismatch),
        ),
    ];
    for (header, want) in cases {
        assert_eq!(check_bearer(header, t), want, "{header:?}");
    }
}

#[test]
fn an_empty_operator_token_disables_the_api() {
    for header in [None, Some(""), Some("Bearer "), Some("Bearer x")] {
        assert_eq!(
            check_bearer(header, ""),
            Err(OperatorAuthError::NotConfigured)
        );
        assert_eq!(
            check_bearer(header, "  "),
            Err(OperatorAuthError::NotConfigured)
        );
    }
    assert!(OperatorAuthError::NotConfigured
        .to_string()
        .contains("OPERATOR_TOKEN"));
}

#[test]
fn redrive_requests_name_a_dedupe_key() {
    assert_eq!(
        parse_redrive_request(br#"{"dedupeKey": "booking_confirmation:BK123"}"#)
            .unwrap()
            .as_str(),
        "booking_confirmation:BK123"
    );
    assert_eq!(
        parse_redrive_request(b"{}").unwrap_err(),
        ParseError::Missing("dedupeKey".into())
    );
    for bad in [
        json!({"dedupeKey": 5}),
        json!({"dedupeKey": "no-colon"}),
        json!({"dedupeKey": ":x"}),
        json!({"dedupeKey": format!("marketing:{}", "x".repeat(300))}),
    ] {
        let e = parse_redrive_request(bad.to_string().as_bytes()).unwrap_err();
        assert_eq!(e.field(), Some("dedupeKey"), "{bad}");
    }
    assert_refuses_non_objects(parse_redrive_request, b"nope", b"[]");
}

#[test]
fn a_campaign_may_name_its_language() {
    let with = |locale: serde_json::Value| {
        let mut v = valid();
        v["locale"] = locale;
        request(v)
    };
    assert_eq!(
        with(serde_json::json!("es-ES")).unwrap().campaign.locale,
        Some(booking_email_engine::domain::i18n::Locale::Es)
    );
    assert_eq!(with(serde_json::Value::Null).unwrap().campaign.locale, None);
    assert_eq!(field_of(with(serde_json::json!("tlh"))), "locale");
    assert_eq!(field_of(with(serde_json::json!(7))), "locale");
}
