//! Host tests of the webhook table (`sources::WEBHOOKS`): every supplier route's verify → parse
//! path, exactly as `POST /webhooks/<source>` runs it, with the configuration parsed from vars.

use crate::fixtures::fixture_bytes;
use crate::sources_signatures::sign_sw;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use booking_email_engine::config::Config;
use booking_email_engine::domain::event::{Interpretation, Source};
use booking_email_engine::sources::{
    webhook, Inbound, ParseError, SignatureError, Unauthenticated, WebhookSource, WEBHOOKS,
};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::HashMap;

const NOW: i64 = 1_900_000_000;
const LITEAPI_TOKEN: &str = "liteapi-token";
const DUFFEL_SECRET: &str = "duffel-secret";
const STRIPE_SECRET: &str = "whsec_stripe";

fn generic_secret() -> String {
    format!(
        "whsec_{}",
        BASE64.encode(b"generic-webhook-secret-0123456789")
    )
}

fn config() -> Config {
    let map: HashMap<&str, String> = HashMap::from([
        ("OWNER_EMAIL", "owner@example.com".to_string()),
        ("SENDER_EMAIL", "bookings@mail.example.com".to_string()),
        ("LITEAPI_WEBHOOK_TOKEN", LITEAPI_TOKEN.to_string()),
        ("DUFFEL_WEBHOOK_SECRETS", format!("old {DUFFEL_SECRET}")),
        ("STRIPE_WEBHOOK_SECRETS", STRIPE_SECRET.to_string()),
        ("GENERIC_WEBHOOK_SECRETS", generic_secret()),
    ]);
    Config::parse(|k| map.get(k).cloned()).unwrap()
}

fn t_v1(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{NOW}.").as_bytes());
    mac.update(body);
    format!("t={NOW},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// A Standard Webhooks signature of `id`/`body` at NOW with the generic source's secret.
fn standard(id: &str, body: &[u8]) -> String {
    standard_with(&generic_secret(), id, body)
}

/// `then` with the request as the route hands it over at NOW: `body`, and `headers` matched by
/// name case-insensitively.
fn with_request<R>(
    headers: &[(&str, String)],
    body: &[u8],
    then: impl FnOnce(&Inbound<'_>) -> R,
) -> R {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    then(&Inbound {
        body,
        header: &get,
        now_s: NOW,
    })
}

/// Runs verify then parse as the route does; headers are matched case-insensitively.
fn run(
    hook: &dyn WebhookSource,
    headers: &[(&str, String)],
    body: &[u8],
) -> Result<Result<(String, String, bool), ParseError>, Unauthenticated> {
    with_request(headers, body, |inbound| {
        hook.verify(&config(), inbound)?;
        Ok(hook.parse(inbound).map(|d| {
            let journey = matches!(d.interpretation, Interpretation::Journey(_));
            (d.event_id.as_str().to_string(), d.event_name, journey)
        }))
    })
}

/// `run` of a delivery that must be verified and parse: its event id, name and whether it is a
/// journey.
fn accepted(
    hook: &dyn WebhookSource,
    headers: &[(&str, String)],
    body: &[u8],
) -> (String, String, bool) {
    run(hook, headers, body).unwrap().unwrap()
}

/// A delivery of `source` (its path segment) with the fixture `name` as body, signed
/// `t=…,v1=…` with `secret` in header `header`: the source's hook, the body, and what the hook
/// accepted (`accepted`).
fn t_v1_delivery(
    source: &str,
    name: &str,
    secret: &str,
    header: &'static str,
) -> (&'static dyn WebhookSource, Vec<u8>, (String, String, bool)) {
    let body = fixture_bytes(name);
    let hook = webhook(source).unwrap();
    let parsed = accepted(hook, &[(header, t_v1(secret, &body))], &body);
    (hook, body, parsed)
}

#[test]
fn the_table_names_each_source_by_its_path_segment() {
    let names: Vec<&str> = WEBHOOKS.iter().map(|w| w.source().as_str()).collect();
    assert_eq!(names, ["liteapi", "duffel", "stripe", "generic"]);
    assert_eq!(webhook("duffel").unwrap().source(), Source::Duffel);
    // Resend's reports have their own route; unknown names are not webhooks.
    assert!(webhook("resend").is_none());
    assert!(webhook("nope").is_none());
}

#[test]
fn liteapi_delivery_with_the_token_parses() {
    let body = fixture_bytes("liteapi-booking-confirmed.json");
    let hook = webhook("liteapi").unwrap();
    let (_, name, journey) = accepted(hook, &[("Authorization", LITEAPI_TOKEN.into())], &body);
    assert_eq!((name.as_str(), journey), ("booking.book", true));
    assert!(matches!(
        run(hook, &[("authorization", "wrong".into())], &body),
        Err(Unauthenticated::Token(_))
    ));
}

#[test]
fn duffel_delivery_signed_with_any_configured_secret_parses() {
    let (hook, body, (_, name, journey)) = t_v1_delivery(
        "duffel",
        "duffel-order-created.json",
        DUFFEL_SECRET,
        "x-duffel-signature",
    );
    assert_eq!((name.as_str(), journey), ("order.created", true));
    assert_eq!(
        run(hook, &[], &body).unwrap_err(),
        Unauthenticated::Signature(SignatureError::Missing("X-Duffel-Signature"))
    );
}

#[test]
fn stripe_delivery_signed_with_the_endpoint_secret_parses() {
    let (hook, body, (id, name, _)) = t_v1_delivery(
        "stripe",
        "stripe-checkout-session-expired.json",
        STRIPE_SECRET,
        "Stripe-Signature",
    );
    assert!(id.starts_with("evt_"), "{id}");
    assert_eq!(name, "checkout.session.expired");
    let wrong = t_v1("whsec_other", &body);
    assert!(matches!(
        run(hook, &[("Stripe-Signature", wrong)], &body),
        Err(Unauthenticated::Signature(SignatureError::Mismatch))
    ));
}

#[test]
fn generic_delivery_takes_its_event_id_from_webhook_id() {
    let body = br#"{"type": "loyalty.points", "data": {}}"#;
    let hook = webhook("generic").unwrap();
    let headers = [
        ("webhook-id", "msg_1".to_string()),
        ("webhook-timestamp", NOW.to_string()),
        ("webhook-signature", standard("msg_1", body)),
    ];
    assert_eq!(
        run(hook, &headers, body).unwrap(),
        Ok(("msg_1".into(), "loyalty.points".into(), false))
    );
    assert_eq!(
        with_request(&[("webhook-id", "msg_1".into())], body, |i| hook
            .claimed_id(i)),
        Some("msg_1".into())
    );
}

#[test]
fn malformed_bodies_are_parse_errors_after_verification() {
    let body = br#"{"event_id": "ev_1"}"#;
    let hook = webhook("liteapi").unwrap();
    let parsed = run(hook, &[("authorization", LITEAPI_TOKEN.into())], body).unwrap();
    assert_eq!(parsed, Err(ParseError::Missing("event_name".into())));
    assert_eq!(
        with_request(&[], body, |i| hook.claimed_id(i)),
        Some("ev_1".into())
    );
}

/// A Standard Webhooks signature of `id`/`body` at NOW with the `whsec_` secret `secret`.
fn standard_with(secret: &str, id: &str, body: &[u8]) -> String {
    sign_sw(secret, id, &NOW.to_string(), body)
}

#[test]
fn each_partner_key_verifies_only_its_own_deliveries_and_scopes_their_ids() {
    use booking_email_engine::sources::{read, Verified};
    let secret = |s: &[u8]| format!("whsec_{}", BASE64.encode(s));
    let (acme_old, acme_new, globex) = (
        secret(b"acme-old-key-0123456789abcdef"),
        secret(b"acme-new-key-0123456789abcdef"),
        secret(b"globex-key-0123456789abcdef01"),
    );
    let map: HashMap<&str, String> = HashMap::from([
        ("OWNER_EMAIL", "owner@example.com".to_string()),
        ("SENDER_EMAIL", "bookings@mail.example.com".to_string()),
        (
            "GENERIC_WEBHOOK_SECRETS",
            format!(
                "acme={acme_old} acme={acme_new} globex={globex} {}",
                generic_secret()
            ),
        ),
    ]);
    let cfg = Config::parse(|k| map.get(k).cloned()).unwrap();
    let hook = webhook("generic").unwrap();
    let body = br#"{"type": "loyalty.points", "data": {}}"#;
    let unknown = secret(b"nobody-knows-this-key-01234567");
    for (key, partner) in [
        (&acme_old, Some("acme")),
        (&acme_new, Some("acme")),
        (&globex, Some("globex")),
        (&generic_secret(), Some("default")),
        (&unknown, None),
    ] {
        let headers = [
            ("webhook-id", "msg_1".to_string()),
            ("webhook-timestamp", NOW.to_string()),
            ("webhook-signature", standard_with(key, "msg_1", body)),
        ];
        with_request(&headers, body, |inbound| {
            let verified = hook.verify(&cfg, inbound);
            match partner {
                None => assert!(
                    matches!(
                        verified,
                        Err(Unauthenticated::Signature(SignatureError::Mismatch))
                    ),
                    "{verified:?}"
                ),
                Some(p) => {
                    let verified = verified.unwrap();
                    assert_eq!(verified.partner.as_deref(), Some(p));
                    let (delivery, _) = read(hook, inbound, &verified).unwrap();
                    let want = if p == "default" {
                        "msg_1".to_string()
                    } else {
                        format!("{p}/msg_1")
                    };
                    assert_eq!(delivery.event_id.as_str(), want);
                }
            }
        });
    }
    // Other sources have no partners.
    let lite = webhook("liteapi").unwrap();
    assert_eq!(
        with_request(&[("authorization", LITEAPI_TOKEN.into())], b"", |i| lite
            .verify(&config(), i)
            .unwrap()),
        Verified::default()
    );
}
