//! Host tests of `sources::signature`: the golden vectors of `tests/fixtures/signature-vectors.json`
//! (Duffel, Stripe, Standard Webhooks) and every way a delivery is refused, with an explicit clock.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use booking_email_engine::sources::signature::{
    verify_standard_webhook, verify_t_v1, SignatureError, DEFAULT_TOLERANCE_S,
    DUFFEL_SIGNATURE_HEADER, STRIPE_SIGNATURE_HEADER, WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER,
    WEBHOOK_TIMESTAMP_HEADER,
};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

/// The timestamp all three vectors were signed at.
const T: i64 = 1_767_225_600;

fn vectors() -> Value {
    let path = format!(
        "{}/tests/fixtures/signature-vectors.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

struct TV1 {
    secret: String,
    header: String,
    body: Vec<u8>,
}

fn t_v1_vector(name: &str, header: &str) -> TV1 {
    let v = &vectors()[name];
    TV1 {
        secret: v["secret"].as_str().unwrap().to_string(),
        header: v["headers"][header].as_str().unwrap().to_string(),
        body: v["raw_body"].as_str().unwrap().as_bytes().to_vec(),
    }
}

fn duffel() -> TV1 {
    t_v1_vector("duffel", "X-Duffel-Signature")
}

fn stripe() -> TV1 {
    t_v1_vector("stripe", "Stripe-Signature")
}

impl TV1 {
    /// This vector's own header and body, verified as a Duffel delivery with `secrets` at `now`.
    fn verify_duffel(&self, secrets: &[&str], now: i64) -> Result<(), SignatureError> {
        verify_duffel(Some(&self.header), &self.body, secrets, now)
    }
}

fn verify_duffel(
    header: Option<&str>,
    body: &[u8],
    secrets: &[&str],
    now: i64,
) -> Result<(), SignatureError> {
    verify_t_v1(
        header,
        body,
        secrets,
        now,
        DEFAULT_TOLERANCE_S,
        DUFFEL_SIGNATURE_HEADER,
    )
}

/// [`verify_t_v1`] of a Stripe delivery at the vectors' time, with the default tolerance.
fn verify_stripe(
    header: Option<&str>,
    body: &[u8],
    secrets: &[&str],
) -> Result<(), SignatureError> {
    verify_t_v1(
        header,
        body,
        secrets,
        T,
        DEFAULT_TOLERANCE_S,
        STRIPE_SIGNATURE_HEADER,
    )
}

/// Lowercase hex HMAC-SHA256 of `t.body` with `secret` (to build headers for edge cases).
fn sign_hex(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

struct Sw {
    secret: String,
    id: String,
    timestamp: String,
    signature: String,
    body: Vec<u8>,
}

fn standard() -> Sw {
    let v = &vectors()["standard_webhooks"];
    let h = &v["headers"];
    Sw {
        secret: v["secret"].as_str().unwrap().to_string(),
        id: h["webhook-id"].as_str().unwrap().to_string(),
        timestamp: h["webhook-timestamp"].as_str().unwrap().to_string(),
        signature: h["webhook-signature"].as_str().unwrap().to_string(),
        body: v["raw_body"].as_str().unwrap().as_bytes().to_vec(),
    }
}

impl Sw {
    /// [`verify_standard_webhook`] of this delivery as it came (its own headers and body) with
    /// `secrets` at `now` (Unix seconds) and the default tolerance: the index of the secret that
    /// matched.
    fn check(&self, secrets: &[&str], now: i64) -> Result<usize, SignatureError> {
        verify_standard_webhook(
            Some(&self.id),
            Some(&self.timestamp),
            Some(&self.signature),
            &self.body,
            secrets,
            now,
            DEFAULT_TOLERANCE_S,
        )
    }
}

fn verify_sw(sw: &Sw, secrets: &[&str], now: i64) -> Result<(), SignatureError> {
    sw.check(secrets, now).map(|_| ())
}

/// [`verify_sw`] with the delivery's own secret, at the vector's time.
fn verify_own(sw: &Sw) -> Result<(), SignatureError> {
    verify_sw(sw, &[&sw.secret], T)
}

/// The delivery's body with these headers (`None`: absent), verified with its own secret at the
/// vector's time and the default tolerance.
fn verify_headers(
    sw: &Sw,
    id: Option<&str>,
    ts: Option<&str>,
    sig: Option<&str>,
) -> Result<(), SignatureError> {
    let secrets = [sw.secret.as_str()];
    verify_standard_webhook(id, ts, sig, &sw.body, &secrets, T, DEFAULT_TOLERANCE_S).map(|_| ())
}

/// `v1,<base64>` of `id.ts.body` with a `whsec_` secret.
pub(crate) fn sign_sw(secret: &str, id: &str, ts: &str, body: &[u8]) -> String {
    let key = BASE64
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(body);
    format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
}

// ---------------------------------------------------------------- golden vectors

#[test]
fn duffel_vector_verifies_at_its_timestamp() {
    let d = duffel();
    assert_eq!(d.verify_duffel(&[&d.secret], T), Ok(()));
}

#[test]
fn stripe_vector_verifies_with_the_whole_whsec_string_as_key() {
    let s = stripe();
    assert!(s.secret.starts_with("whsec_"));
    assert_eq!(
        verify_stripe(Some(&s.header), &s.body, &[&s.secret]),
        Ok(())
    );
}

#[test]
fn standard_webhooks_vector_verifies_at_its_timestamp() {
    assert_eq!(verify_own(&standard()), Ok(()));
}

// ---------------------------------------------------------------- t=,v1= refusals

#[test]
fn tampered_body_is_a_mismatch() {
    let d = duffel();
    let mut body = d.body.clone();
    body.push(b' ');
    assert_eq!(
        verify_duffel(Some(&d.header), &body, &[&d.secret], T),
        Err(SignatureError::Mismatch)
    );
    let s = stripe();
    let tampered = String::from_utf8(s.body.clone())
        .unwrap()
        .replace("expired", "complete");
    assert_eq!(
        verify_stripe(Some(&s.header), tampered.as_bytes(), &[&s.secret]),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn wrong_secret_is_a_mismatch() {
    let d = duffel();
    assert_eq!(
        d.verify_duffel(&["fake_duffel_webhook_secret_0002"], T),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn stripe_key_is_the_whole_whsec_string_not_its_tail() {
    // The `whsec_` prefix is part of the HMAC key: without it the vector no longer verifies.
    let s = stripe();
    let tail = s.secret.strip_prefix("whsec_").unwrap();
    assert_eq!(
        verify_stripe(Some(&s.header), &s.body, &[tail]),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn timestamp_exactly_at_the_tolerance_is_accepted_one_second_later_expired() {
    let d = duffel();
    let secrets = [d.secret.as_str()];
    assert_eq!(d.verify_duffel(&secrets, T + 300), Ok(()));
    assert_eq!(
        d.verify_duffel(&secrets, T + 301),
        Err(SignatureError::Expired { age_s: 301 })
    );
}

#[test]
fn timestamp_too_far_in_the_future_is_expired() {
    let d = duffel();
    let secrets = [d.secret.as_str()];
    assert_eq!(d.verify_duffel(&secrets, T - 300), Ok(()));
    assert_eq!(
        d.verify_duffel(&secrets, T - 301),
        Err(SignatureError::Expired { age_s: -301 })
    );
}

#[test]
fn rotation_accepts_when_only_the_second_secret_matches() {
    let d = duffel();
    assert_eq!(
        d.verify_duffel(&["old_secret_no_longer_used", &d.secret], T),
        Ok(())
    );
}

#[test]
fn header_with_two_v1_accepts_when_only_the_second_matches() {
    let d = duffel();
    let good = sign_hex(&d.secret, T, &d.body);
    let bad = sign_hex("some_other_secret", T, &d.body);
    let header = format!("t={T},v1={bad},v1={good}");
    assert_eq!(
        verify_duffel(Some(&header), &d.body, &[&d.secret], T),
        Ok(())
    );
}

#[test]
fn v0_and_unknown_schemes_are_ignored() {
    let s = stripe();
    let good = sign_hex(&s.secret, T, &s.body);
    let header = format!("t={T},v0=deadbeef,v1={good},v9=anything");
    assert_eq!(verify_stripe(Some(&header), &s.body, &[&s.secret]), Ok(()));
    // A correct signature under `v0` only proves nothing.
    let only_v0 = format!("t={T},v0={good}");
    assert_eq!(
        verify_stripe(Some(&only_v0), &s.body, &[&s.secret]),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn missing_or_blank_header_is_missing_and_names_the_header() {
    let d = duffel();
    for header in [None, Some(""), Some("  ")] {
        assert_eq!(
            verify_duffel(header, &d.body, &[&d.secret], T),
            Err(SignatureError::Missing("X-Duffel-Signature")),
            "{header:?}"
        );
    }
    let s = stripe();
    assert_eq!(
        verify_stripe(None, &s.body, &[&s.secret]),
        Err(SignatureError::Missing("Stripe-Signature"))
    );
}

#[test]
fn garbled_header_is_malformed() {
    let d = duffel();
    let good = sign_hex(&d.secret, T, &d.body);
    for header in [
        "garbage".to_string(),
        format!("v1={good}"),                // no timestamp
        format!("t=soon,v1={good}"),         // timestamp not an integer
        format!("t={T},v1=not-hex"),         // signature not hex
        format!("t={T};v1={good}"),          // wrong separator
        format!("t={T},v1={good},trailing"), // item without `=`
    ] {
        assert_eq!(
            verify_duffel(Some(&header), &d.body, &[&d.secret], T),
            Err(SignatureError::Malformed("X-Duffel-Signature")),
            "{header}"
        );
    }
}

#[test]
fn empty_secret_list_is_not_configured() {
    let d = duffel();
    assert_eq!(d.verify_duffel(&[], T), Err(SignatureError::NotConfigured));
    // Blank entries do not count as configured secrets, even with no header at all.
    assert_eq!(
        verify_duffel(None, &d.body, &["", "  "], T),
        Err(SignatureError::NotConfigured)
    );
}

#[test]
fn expired_is_checked_before_the_signature() {
    // A stale delivery is refused as such whether or not its signature matches.
    let d = duffel();
    assert_eq!(
        verify_duffel(Some(&d.header), b"tampered", &[&d.secret], T + 3600),
        Err(SignatureError::Expired { age_s: 3600 })
    );
}

// ---------------------------------------------------------------- Standard Webhooks refusals

/// A change made to the Standard Webhooks vector's delivery.
type SwEdit = fn(&mut Sw);

#[test]
fn standard_webhooks_a_tampered_body_or_id_or_only_v1a_signatures_are_a_mismatch() {
    let edits: [(&str, SwEdit); 3] = [
        ("tampered body", |sw| {
            sw.body = sw.body.iter().copied().rev().collect()
        }),
        ("the id is part of the signed content", |sw| {
            sw.id = "msg_FAKE0000000000000000000002".into()
        }),
        ("only v1a signatures", |sw| {
            sw.signature = "v1a,c29tZSBlZDI1NTE5IHNpZ25hdHVyZQ==".into()
        }),
    ];
    for (case, edit) in edits {
        let mut sw = standard();
        edit(&mut sw);
        assert_eq!(verify_own(&sw), Err(SignatureError::Mismatch), "{case}");
    }
}

#[test]
fn standard_webhooks_wrong_secret_is_a_mismatch() {
    let sw = standard();
    let other = format!("whsec_{}", BASE64.encode([7u8; 32]));
    assert_eq!(verify_sw(&sw, &[&other], T), Err(SignatureError::Mismatch));
}

#[test]
fn standard_webhooks_tolerance_is_five_minutes_both_ways() {
    let sw = standard();
    let secrets = [sw.secret.as_str()];
    assert_eq!(verify_sw(&sw, &secrets, T + 300), Ok(()));
    assert_eq!(verify_sw(&sw, &secrets, T - 300), Ok(()));
    assert_eq!(
        verify_sw(&sw, &secrets, T + 301),
        Err(SignatureError::Expired { age_s: 301 })
    );
    assert_eq!(
        verify_sw(&sw, &secrets, T - 301),
        Err(SignatureError::Expired { age_s: -301 })
    );
}

#[test]
fn standard_webhooks_rotation_accepts_the_second_secret() {
    let sw = standard();
    let old = format!("whsec_{}", BASE64.encode([9u8; 24]));
    assert_eq!(verify_sw(&sw, &[&old, &sw.secret], T), Ok(()));
}

#[test]
fn standard_webhooks_accepts_any_of_several_signatures_and_skips_v1a() {
    let mut sw = standard();
    let other_secret = format!("whsec_{}", BASE64.encode([3u8; 32]));
    let wrong = sign_sw(&other_secret, &sw.id, &sw.timestamp, &sw.body);
    sw.signature = format!(
        "v1a,c29tZSBlZDI1NTE5IHNpZ25hdHVyZQ== {wrong} {}",
        sw.signature
    );
    assert_eq!(verify_own(&sw), Ok(()));
}

#[test]
fn standard_webhooks_missing_headers_are_named() {
    let sw = standard();
    let run = |id, ts, sig| verify_headers(&sw, id, ts, sig);
    assert_eq!(
        run(None, Some(&sw.timestamp), Some(&sw.signature)),
        Err(SignatureError::Missing(WEBHOOK_ID_HEADER))
    );
    assert_eq!(
        run(Some(&sw.id), Some(" "), Some(&sw.signature)),
        Err(SignatureError::Missing(WEBHOOK_TIMESTAMP_HEADER))
    );
    assert_eq!(
        run(Some(&sw.id), Some(&sw.timestamp), None),
        Err(SignatureError::Missing(WEBHOOK_SIGNATURE_HEADER))
    );
    assert_eq!(WEBHOOK_ID_HEADER, "webhook-id");
    assert_eq!(WEBHOOK_TIMESTAMP_HEADER, "webhook-timestamp");
    assert_eq!(WEBHOOK_SIGNATURE_HEADER, "webhook-signature");
}

#[test]
fn standard_webhooks_garbled_headers_are_malformed() {
    let sw = standard();
    let run = |ts: &str, sig: &str| verify_headers(&sw, Some(&sw.id), Some(ts), Some(sig));
    assert_eq!(
        run("2026-01-01T00:00:00Z", &sw.signature),
        Err(SignatureError::Malformed(WEBHOOK_TIMESTAMP_HEADER))
    );
    // Entries that do not decode are skipped (the spec: any valid signature verifies); with no
    // decodable `v1` left, nothing vouches for the body.
    for sig in [
        "garbage",
        "v1,***not base64***",
        "v1,BADSIG",
        "v1,BADSIG v2,x",
    ] {
        assert_eq!(
            run(&sw.timestamp, sig),
            Err(SignatureError::Mismatch),
            "{sig}"
        );
    }
}

#[test]
fn standard_webhooks_an_undecodable_entry_beside_a_valid_one_is_skipped() {
    let sw = standard();
    for sig in [
        format!("v1,BADSIG {}", sw.signature),
        format!("{} v1,BADSIG", sw.signature),
        format!("v1,***not base64*** nocomma {}", sw.signature),
    ] {
        let verified = verify_headers(&sw, Some(&sw.id), Some(&sw.timestamp), Some(&sig));
        assert_eq!(verified, Ok(()), "{sig}");
    }
}

#[test]
fn standard_webhooks_signer_names_the_secret_that_matched() {
    let sw = standard();
    let other = format!("whsec_{}", BASE64.encode([9u8; 24]));
    let run = |secrets: &[&str]| sw.check(secrets, T);
    assert_eq!(run(&[&other, "", &sw.secret]), Ok(2));
    assert_eq!(run(&[&sw.secret, &other]), Ok(0));
    assert_eq!(run(&[&other]), Err(SignatureError::Mismatch));
}

#[test]
fn standard_webhooks_empty_secret_list_is_not_configured() {
    let sw = standard();
    assert_eq!(verify_sw(&sw, &[], T), Err(SignatureError::NotConfigured));
}

#[test]
fn standard_webhooks_secret_that_is_not_base64_is_a_bad_secret() {
    let sw = standard();
    assert_eq!(
        verify_sw(&sw, &["whsec_%%%not-base64%%%"], T),
        Err(SignatureError::BadSecret)
    );
    assert_eq!(
        verify_sw(&sw, &["whsec_"], T),
        Err(SignatureError::BadSecret)
    );
}

#[test]
fn standard_webhooks_secret_without_prefix_is_decoded_whole() {
    let sw = standard();
    let bare = sw.secret.strip_prefix("whsec_").unwrap();
    assert_eq!(verify_sw(&sw, &[bare], T), Ok(()));
}

#[test]
fn errors_read_well_in_logs() {
    assert_eq!(
        SignatureError::Missing("X-Duffel-Signature").to_string(),
        "missing X-Duffel-Signature header"
    );
    assert_eq!(
        SignatureError::Expired { age_s: 301 }.to_string(),
        "signature timestamp is outside the tolerance (age 301 s)"
    );
}
