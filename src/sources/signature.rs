//! Webhook signature verification (pure): every input — header values, the raw body bytes, the
//! configured secret(s) and the current time — is an argument, so the checks are host-tested with
//! golden vectors (`tests/fixtures/signature-vectors.json`).
//!
//! Two schemes (<https://duffel.com/docs/guides/receiving-webhooks>,
//! <https://docs.stripe.com/webhooks#verify-manually>, <https://www.standardwebhooks.com>):
//!
//! - [`verify_t_v1`]: `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, used by Duffel
//!   (`X-Duffel-Signature`) and Stripe (`Stripe-Signature`). Signed payload `t + "." + raw body`,
//!   HMAC-SHA256 keyed with the secret string's bytes *as configured* (for Stripe the whole
//!   `whsec_…` string, never base64-decoded), lowercase hex.
//! - [`verify_standard_webhook`]: Standard Webhooks (`webhook-id`, `webhook-timestamp`,
//!   `webhook-signature`). Signed content `id + "." + timestamp + "." + raw body`, key =
//!   base64-decode of the secret after its `whsec_` prefix, signature list of `v1,<base64>`.
//!
//! Invariants shared by both:
//! - Signatures are compared in constant time (`hmac::Mac::verify_slice`).
//! - Several configured secrets (rotation) and several signatures in one header are allowed: the
//!   delivery is accepted when **any** signature matches **any** secret.
//! - The timestamp must lie within `tolerance_s` of `now_unix_s` in **both** directions
//!   (`|now - t| <= tolerance`); it is checked before any MAC is computed.
//! - A header that parses but carries no signature of the accepted version (`v1`) is a
//!   [`SignatureError::Mismatch`]: nothing we accept vouches for the body.
//!
//! Every error maps to HTTP 401 in the route; the variants exist so the caller can log why.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Default replay window in seconds: Stripe's libraries, the Standard Webhooks reference library
/// (5 minutes), and what integrators use for Duffel (which documents none).
pub const DEFAULT_TOLERANCE_S: i64 = 300;

/// Duffel v2 signature header (<https://duffel.com/docs/guides/receiving-webhooks>).
pub const DUFFEL_SIGNATURE_HEADER: &str = "X-Duffel-Signature";
/// Stripe signature header (<https://docs.stripe.com/webhooks#verify-manually>).
pub const STRIPE_SIGNATURE_HEADER: &str = "Stripe-Signature";
/// Standard Webhooks message id header (stable across retries; the event id).
pub const WEBHOOK_ID_HEADER: &str = "webhook-id";
/// Standard Webhooks timestamp header (Unix seconds of this attempt).
pub const WEBHOOK_TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// Standard Webhooks signature header (space-separated `v1,<base64>` list).
pub const WEBHOOK_SIGNATURE_HEADER: &str = "webhook-signature";

/// Why a delivery's signature was not accepted. Every variant → HTTP 401 (body not processed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The named header is absent or blank.
    #[error("missing {0} header")]
    Missing(&'static str),
    /// The named header is present but cannot be parsed (no timestamp, bad hex/base64, …).
    #[error("{0} header is malformed")]
    Malformed(&'static str),
    /// The signed timestamp is outside the tolerance. `age_s = now - t` (negative when the
    /// timestamp lies in the future).
    #[error("signature timestamp is outside the tolerance (age {age_s} s)")]
    Expired { age_s: i64 },
    /// No signature matches any configured secret.
    #[error("signature does not match")]
    Mismatch,
    /// No (non-empty) secret is configured: nothing can be verified.
    #[error("webhook secret is not configured")]
    NotConfigured,
    /// A configured Standard Webhooks secret is not `whsec_<base64>`.
    #[error("webhook secret is not a valid whsec_ base64 secret")]
    BadSecret,
}

/// The non-empty configured secrets (trimmed), or `NotConfigured`.
fn configured<'a>(secrets: &[&'a str]) -> Result<Vec<&'a str>, SignatureError> {
    let list: Vec<&str> = secrets
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if list.is_empty() {
        Err(SignatureError::NotConfigured)
    } else {
        Ok(list)
    }
}

/// The header value, trimmed, or `Missing(name)` when absent or blank.
fn present<'a>(header: Option<&'a str>, name: &'static str) -> Result<&'a str, SignatureError> {
    header
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .ok_or(SignatureError::Missing(name))
}

fn check_age(t: i64, now_unix_s: i64, tolerance_s: i64) -> Result<(), SignatureError> {
    let age_s = now_unix_s.saturating_sub(t);
    if age_s.unsigned_abs() > tolerance_s.unsigned_abs() {
        Err(SignatureError::Expired { age_s })
    } else {
        Ok(())
    }
}

/// `true` when `HMAC-SHA256(key, parts…)` equals one of `signatures` (constant-time compare).
fn any_matches(key: &[u8], parts: &[&[u8]], signatures: &[Vec<u8>]) -> bool {
    let Ok(mut mac) = HmacSha256::new_from_slice(key) else {
        return false; // unreachable: HMAC accepts keys of any length
    };
    for part in parts {
        mac.update(part);
    }
    signatures
        .iter()
        .any(|sig| mac.clone().verify_slice(sig).is_ok())
}

/// Verifies a `t=<unix>,v1=<hex>[,v1=<hex>…]` signature header (Duffel, Stripe).
///
/// - `header`: the header value (`None` when absent); `header_name` names it in errors
///   (e.g. [`DUFFEL_SIGNATURE_HEADER`]).
/// - `body`: the raw request bytes exactly as received.
/// - `secrets`: configured secrets, used as raw UTF-8 key bytes; blank entries are skipped.
/// - `now_unix_s`, `tolerance_s`: seconds; reject when `|now - t| > tolerance`.
///
/// Items other than `t` and `v1` (`v0`, future schemes) are ignored. Errors, in check order:
/// `NotConfigured` (no non-empty secret), `Missing` (absent/blank header), `Malformed` (an item
/// without `=`, no integer `t`, or a `v1` that is not hex), `Expired`, `Mismatch` (no `v1`
/// matches any secret, or the header has no `v1` at all).
pub fn verify_t_v1(
    header: Option<&str>,
    body: &[u8],
    secrets: &[&str],
    now_unix_s: i64,
    tolerance_s: i64,
    header_name: &'static str,
) -> Result<(), SignatureError> {
    let secrets = configured(secrets)?;
    let header = present(header, header_name)?;

    let mut timestamp: Option<&str> = None;
    let mut signatures = Vec::new();
    for item in header.split(',') {
        let (key, value) = item
            .split_once('=')
            .ok_or(SignatureError::Malformed(header_name))?;
        match key.trim() {
            // The first `t` wins, as in Stripe's libraries.
            "t" if timestamp.is_none() => timestamp = Some(value.trim()),
            "v1" => signatures.push(
                hex::decode(value.trim()).map_err(|_| SignatureError::Malformed(header_name))?,
            ),
            _ => {}
        }
    }
    let t_text = timestamp.ok_or(SignatureError::Malformed(header_name))?;
    let t: i64 = t_text
        .parse()
        .map_err(|_| SignatureError::Malformed(header_name))?;
    check_age(t, now_unix_s, tolerance_s)?;

    let parts: [&[u8]; 3] = [t_text.as_bytes(), b".", body];
    if secrets
        .iter()
        .any(|secret| any_matches(secret.as_bytes(), &parts, &signatures))
    {
        Ok(())
    } else {
        Err(SignatureError::Mismatch)
    }
}

/// Decodes a `whsec_<base64>` secret into its key bytes. A secret without the prefix is decoded
/// whole (as the Standard Webhooks reference libraries do).
fn standard_webhook_key(secret: &str) -> Result<Vec<u8>, SignatureError> {
    crate::domain::basics::secret::standard_webhooks_key(secret).ok_or(SignatureError::BadSecret)
}

/// Verifies a Standard Webhooks delivery (<https://www.standardwebhooks.com>, symmetric `v1`).
///
/// - `id`, `timestamp`, `signature`: the `webhook-id`, `webhook-timestamp` (Unix seconds) and
///   `webhook-signature` header values (`None` when absent).
/// - `body`: the raw request bytes exactly as received.
/// - `secrets`: configured `whsec_<base64>` secrets (rotation: any may match); blank entries are
///   skipped.
/// - `now_unix_s`, `tolerance_s`: seconds; reject when `|now - timestamp| > tolerance`.
///
/// Signature entries other than `v1,…` (e.g. `v1a,` ed25519), entries without `,` and `v1`
/// entries that are not base64 are skipped (spec: `spec/standard-webhooks.md` in
/// github.com/standard-webhooks/standard-webhooks, "Verifying webhook authenticity": any one valid
/// signature verifies the message). Errors, in check order: `NotConfigured`, `BadSecret` (any
/// configured secret is not valid base64 — a configuration fault reported loudly rather than
/// skipped), `Missing` (naming the header), `Malformed` (a non-integer timestamp), `Expired`,
/// `Mismatch` (no decodable `v1` entry matches any secret).
///
/// `Ok` says **which** secret signed the delivery: the index in `secrets` of the first one whose
/// MAC matches a `v1` entry (the generic source maps it to the partner that holds that secret).
pub fn verify_standard_webhook(
    id: Option<&str>,
    timestamp: Option<&str>,
    signature: Option<&str>,
    body: &[u8],
    secrets: &[&str],
    now_unix_s: i64,
    tolerance_s: i64,
) -> Result<usize, SignatureError> {
    configured(secrets)?;
    // Blank entries are skipped but keep their place, so the index is into `secrets` as given.
    let keys = secrets
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.trim().is_empty())
        .map(|(i, s)| standard_webhook_key(s.trim()).map(|k| (i, k)))
        .collect::<Result<Vec<_>, _>>()?;
    let id = present(id, WEBHOOK_ID_HEADER)?;
    let ts_text = present(timestamp, WEBHOOK_TIMESTAMP_HEADER)?;
    let header = present(signature, WEBHOOK_SIGNATURE_HEADER)?;

    let ts: i64 = ts_text
        .parse()
        .map_err(|_| SignatureError::Malformed(WEBHOOK_TIMESTAMP_HEADER))?;

    // Each space-separated entry is `<version>,<signature>`. Per the specification (and its
    // reference libraries, which compare each `v1` entry and move on), an entry that is not `v1`,
    // has no comma or does not decode is skipped, never fatal: one garbled signature next to a
    // valid one must not refuse the delivery. None left to check is a `Mismatch`.
    let signatures: Vec<Vec<u8>> = header
        .split_whitespace()
        .filter_map(|entry| entry.split_once(','))
        .filter(|(version, _)| *version == "v1")
        .filter_map(|(_, value)| BASE64.decode(value).ok())
        .collect();
    check_age(ts, now_unix_s, tolerance_s)?;

    let parts: [&[u8]; 5] = [id.as_bytes(), b".", ts_text.as_bytes(), b".", body];
    keys.iter()
        .find(|(_, key)| any_matches(key, &parts, &signatures))
        .map(|(i, _)| *i)
        .ok_or(SignatureError::Mismatch)
}
