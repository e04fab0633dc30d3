//! One-click unsubscribe (RFC 8058, https://www.rfc-editor.org/rfc/rfc8058): signed tokens, the two headers, and the POST
//! body check.
//!
//! - A token names one address and one list, signed with HMAC-SHA256 under `key`
//!   (`UNSUBSCRIBE_SIGNING_KEY`, ≥ 32 random bytes). It has **no expiry**: an unsubscribe link in an
//!   old email must keep working for ever (Gmail and Yahoo require unsubscribes to be honoured, and
//!   RFC 8058 POSTs carry no cookie or other context: the URI alone must identify the request).
//! - Tokens are deterministic (same address, list and key → same token). That keeps the email of
//!   one dedupe key byte-identical across attempts, which Resend's `Idempotency-Key` requires.
//! - A token is integrity-protected, not encrypted: its payload is base64url and carries the address
//!   the email was sent to. Rotating the key invalidates every link already sent; verify with the
//!   old key as well during a rotation.
//! - Format: `<base64url(payload)>.<base64url(HMAC-SHA256(domain ‖ payload-b64))>`, no padding,
//!   characters `A–Z a–z 0–9 - _ .` only (safe in a URL path without escaping). The payload is the
//!   JSON array `[email, list]`, so neither part can smuggle a separator into the other.
//!
//! The route (`POST /unsubscribe/<token>`) must check [`is_one_click_body`], must not redirect, and a
//! `GET` on the same URL must only show a confirmation page: scanners pre-fetch links.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Domain separation: a MAC made for something else with the same key never verifies here.
const MAC_DOMAIN: &[u8] = b"booking-email-engine/unsubscribe/v1\n";

/// Longest token [`verify`] looks at (a real one is ~100–400 characters).
pub const TOKEN_MAX: usize = 2_048;

/// Path prefix of the unsubscribe route, under the engine's public base URL.
pub const PATH_PREFIX: &str = "/unsubscribe/";

/// The exact `List-Unsubscribe-Post` value (RFC 8058 §3.1).
pub const ONE_CLICK: &str = "List-Unsubscribe=One-Click";

/// What a valid token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsubscribeClaims {
    /// The address to unsubscribe, as it was signed.
    pub email: String,
    /// The list (e.g. `marketing`).
    pub list: String,
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UnsubscribeError {
    /// Not a token of ours (shape, base64, length or payload).
    #[error("malformed unsubscribe token")]
    Malformed,
    /// Well-formed, but not signed with this key (forged, tampered or another key).
    #[error("unsubscribe token signature does not match")]
    BadSignature,
}

fn mac_of(payload_b64: &str, key: &[u8]) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length");
    mac.update(MAC_DOMAIN);
    mac.update(payload_b64.as_bytes());
    mac
}

/// A token for `email` on `list`, signed with `key`. Deterministic, never expires.
pub fn sign(email: &str, list: &str, key: &[u8]) -> String {
    let payload = serde_json::to_vec(&[email, list]).expect("two strings always serialise");
    let payload_b64 = URL_SAFE_NO_PAD.encode(payload);
    let tag = mac_of(&payload_b64, key).finalize().into_bytes();
    format!("{payload_b64}.{}", URL_SAFE_NO_PAD.encode(tag))
}

/// Checks a token's signature (constant time) and returns what it names.
pub fn verify(token: &str, key: &[u8]) -> Result<UnsubscribeClaims, UnsubscribeError> {
    use UnsubscribeError::*;
    let token = token.trim();
    if token.is_empty() || token.len() > TOKEN_MAX {
        return Err(Malformed);
    }
    let (payload_b64, tag_b64) = token.split_once('.').ok_or(Malformed)?;
    if payload_b64.is_empty() || tag_b64.contains('.') {
        return Err(Malformed);
    }
    let tag = URL_SAFE_NO_PAD.decode(tag_b64).map_err(|_| Malformed)?;
    if tag.len() != 32 {
        return Err(Malformed);
    }
    let payload = URL_SAFE_NO_PAD.decode(payload_b64).map_err(|_| Malformed)?;
    mac_of(payload_b64, key)
        .verify_slice(&tag)
        .map_err(|_| BadSignature)?;
    // Only a payload we signed gets here; still parse it strictly.
    let [email, list]: [String; 2] =
        crate::domain::basics::json::from_body(&payload).map_err(|_| Malformed)?;
    if email.is_empty() || list.is_empty() {
        return Err(Malformed);
    }
    Ok(UnsubscribeClaims { email, list })
}

/// `https://<host>[/<path>]` of `base_url`: a trailing `/` is removed, `http://` becomes
/// `https://`, and a base without a scheme gets `https://`. RFC 8058 requires an HTTPS URI and
/// Cloudflare Email Service rejects an `http:` `List-Unsubscribe`, so an `http://` base (local
/// development) is upgraded rather than emitted; configuration should reject it (see
/// [`is_https`]).
fn https_base(base_url: &str) -> String {
    let b = base_url.trim().trim_end_matches('/');
    let lower = b.to_ascii_lowercase();
    if lower.starts_with("https://") {
        format!("https://{}", &b["https://".len()..])
    } else if lower.starts_with("http://") {
        format!("https://{}", &b["http://".len()..])
    } else {
        format!("https://{b}")
    }
}

/// `true` when `base_url` is an `https://` URL with a host (what the configuration should require
/// of `PUBLIC_BASE_URL` before sending marketing email).
pub fn is_https(base_url: &str) -> bool {
    let b = base_url.trim();
    match (b.get(..8), b.get(8..)) {
        (Some(scheme), Some(rest)) => {
            scheme.eq_ignore_ascii_case("https://")
                && !rest.is_empty()
                && !rest.starts_with('/')
                && !rest.contains(char::is_whitespace)
        }
        _ => false,
    }
}

/// The unsubscribe URL for `token`: `https://…/unsubscribe/<token>` (also the visible link in the
/// body, which Gmail requires besides the headers).
pub fn url(base_url: &str, token: &str) -> String {
    format!("{}{PATH_PREFIX}{token}", https_base(base_url))
}

/// The two RFC 8058 headers, exactly:
///
/// ```text
/// List-Unsubscribe: <https://…/unsubscribe/<token>>
/// List-Unsubscribe-Post: List-Unsubscribe=One-Click
/// ```
///
/// One HTTPS URI and nothing else (no `mailto:`: we cannot process unsubscribe emails). The URL is
/// always `https` (see [`url`]). Both headers must be covered by the DKIM signature, which both
/// providers apply to every header they send.
pub fn headers(base_url: &str, token: &str) -> [(String, String); 2] {
    [
        (
            "List-Unsubscribe".into(),
            format!("<{}>", url(base_url, token)),
        ),
        ("List-Unsubscribe-Post".into(), ONE_CLICK.into()),
    ]
}

/// `true` when a POST body is the RFC 8058 one-click request: an
/// `application/x-www-form-urlencoded` body with the pair `List-Unsubscribe=One-Click`
/// (percent-decoded, `+` as space, surrounding whitespace ignored, other pairs allowed), or a
/// `multipart/form-data` body with a part named `List-Unsubscribe` whose value is `One-Click`.
/// Key and value are compared ASCII case-insensitively (receivers are not all careful).
pub fn is_one_click_body(body: &str) -> bool {
    let body = body.trim();
    if body.is_empty() {
        return false;
    }
    if body.starts_with("--") {
        return is_one_click_multipart(body);
    }
    // application/x-www-form-urlencoded (WHATWG URL standard §5), decoded by `form_urlencoded`:
    // a malformed escape cannot spell the expected pair, so lossy decoding accepts nothing more.
    form_urlencoded::parse(body.as_bytes()).any(|(k, v)| {
        k.trim().eq_ignore_ascii_case("List-Unsubscribe")
            && v.trim().eq_ignore_ascii_case("One-Click")
    })
}

/// A minimal `multipart/form-data` reader: the boundary is the body's first line.
fn is_one_click_multipart(body: &str) -> bool {
    let normalized = body.replace("\r\n", "\n");
    let Some(boundary) = normalized.lines().next().map(str::trim) else {
        return false;
    };
    normalized.split(boundary).any(|part| {
        let Some((head, value)) = part.trim_start_matches('\n').split_once("\n\n") else {
            return false;
        };
        let named = head.lines().any(|line| {
            let l = line.to_ascii_lowercase();
            let Some(params) = l.strip_prefix("content-disposition:") else {
                return false;
            };
            // `form-data; name="list-unsubscribe"`: the `name` parameter itself, never a
            // `filename=` that happens to end in it.
            let mut parts = params.split(';').map(str::trim);
            parts.next() == Some("form-data")
                && parts.any(|p| {
                    p.split_once('=').is_some_and(|(k, v)| {
                        k.trim() == "name" && v.trim().trim_matches('"') == "list-unsubscribe"
                    })
                })
        });
        named
            && value
                .trim_end_matches("--")
                .trim()
                .eq_ignore_ascii_case("One-Click")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_bodies_are_decoded_and_malformed_escapes_spell_nothing() {
        assert!(is_one_click_body("List-Unsubscribe=One-Click"));
        assert!(is_one_click_body("x=1&List%2DUnsubscribe=One%2dClick"));
        assert!(is_one_click_body("List-Unsubscribe=One-Click\r\n"));
        assert!(!is_one_click_body("List-Unsubscribe=One%zzClick"));
        assert!(!is_one_click_body("List-Unsubscribe=One-Click%FF"));
        assert!(!is_one_click_body("List-Unsubscribe=One+Click"));
    }

    #[test]
    fn https_base_forms() {
        assert_eq!(https_base("https://a.example/"), "https://a.example");
        assert_eq!(https_base("HTTP://a.example"), "https://a.example");
        assert_eq!(https_base("a.example/x/"), "https://a.example/x");
    }
}
