//! Signed one-click owner action links (card-testing holds): one token per hold and action.
//!
//! A token binds **one hold**, **one action** and **an expiry**, and is signed with HMAC-SHA256
//! under a secret key (configuration `ACTION_SIGNING_KEY`; use ≥ [`MIN_KEY_LEN`] random bytes).
//! This module only signs and checks; the shell makes a token **single-use** by recording
//! [`ActionClaims::token_id`] in D1 (`owner_actions`, unique) on the first POST, and refuses a hold
//! that was already handled.
//!
//! Format (URL-safe, no padding, only `A–Z a–z 0–9 - _ .`):
//!
//! ```text
//! base64url(payload) "." base64url(HMAC-SHA256(key, "owner-action\n" + payload))
//! payload = "v1." hold_id "." action "." expires_at_s
//! ```
//!
//! `action` is [`OwnerAction::as_str`]; `expires_at_s` is Unix seconds (UTC), decimal. The hold
//! id may itself contain dots (the payload is split from the right). The MAC is checked (constant
//! time, `hmac::Mac::verify_slice`) **before** the payload is read, so any change to the hold id,
//! the action or the expiry is a [`TokenError::BadSignature`].

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// Version tag at the start of every payload.
const VERSION: &str = "v1";
/// Domain separation: a MAC made for something else with the same key never verifies here.
const MAC_CONTEXT: &[u8] = b"owner-action\n";

/// Recommended minimum key length in bytes (256 bits). [`verify`] refuses only an empty key; the
/// configuration should refuse shorter ones.
pub const MIN_KEY_LEN: usize = 32;

/// Default lifetime of an action link: 7 days, in seconds (configuration `ACTION_LINK_TTL_S`).
pub const DEFAULT_TTL_S: i64 = 7 * 24 * 3600;

/// What the owner can do about a card-testing hold. Stored names (`as_str`) are stable: they are
/// inside signed tokens and in D1 (`holds.action`, `owner_actions.action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum OwnerAction {
    /// Send the customer the "insufficient funds" email (`checkout_declined_funds`).
    SendInsufficientFunds,
    /// Send the customer the "blocked by a security check" email (`checkout_declined_security`).
    SendSecurityCheck,
    /// Close the hold; nothing is sent.
    Dismiss,
    /// Compensation: refund the guest's payment now through Stripe (the token's subject is a
    /// compensation id, `comp-…`).
    RefundNow,
    /// Compensation: the owner already refunded (or settled) it outside the engine; nothing is
    /// sent to Stripe.
    RefundHandled,
}

crate::domain::basics::stored_names!(OwnerAction);

impl OwnerAction {
    /// Every action on a card-testing hold, in the order the owner sees them.
    pub const ALL: [OwnerAction; 3] = [
        OwnerAction::SendInsufficientFunds,
        OwnerAction::SendSecurityCheck,
        OwnerAction::Dismiss,
    ];

    /// The button text, e.g. `Send "insufficient funds" email`.
    pub fn label(self) -> &'static str {
        match self {
            OwnerAction::SendInsufficientFunds => "Send \u{201c}insufficient funds\u{201d} email",
            OwnerAction::SendSecurityCheck => {
                "Send \u{201c}blocked by security check\u{201d} email"
            }
            OwnerAction::Dismiss => "Dismiss (send nothing)",
            OwnerAction::RefundNow => "Refund now (through Stripe)",
            OwnerAction::RefundHandled => "Already handled (refund nothing)",
        }
    }

    /// `true` for the two actions that email the customer.
    pub fn sends_email(self) -> bool {
        matches!(
            self,
            OwnerAction::SendInsufficientFunds | OwnerAction::SendSecurityCheck
        )
    }

    /// `true` for the two actions on a compensation's refund (their token names a compensation,
    /// not a hold).
    pub fn is_refund(self) -> bool {
        matches!(self, OwnerAction::RefundNow | OwnerAction::RefundHandled)
    }
}

/// What a valid token grants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionClaims {
    pub hold_id: String,
    pub action: OwnerAction,
    /// Unix seconds (UTC); the token is valid up to and including this second.
    pub expires_at_s: i64,
    /// Stable id of this token for single-use bookkeeping: lowercase hex SHA-256 of the token text
    /// (the encoding is canonical, so one token has one id).
    pub token_id: String,
}

/// Why a token was refused. The route shows a page and changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not a token of this format (garbage, truncated, wrong version).
    #[error("the action link is malformed")]
    Malformed,
    /// The signature does not match: altered, or signed with another key (a foreign engine).
    #[error("the action link's signature does not match")]
    BadSignature,
    /// Authentic but past its expiry.
    #[error("the action link expired at {expired_at_s}")]
    Expired { expired_at_s: i64 },
}

fn mac_of(key: &[u8], payload: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts any key length");
    mac.update(MAC_CONTEXT);
    mac.update(payload);
    mac
}

/// Signs a link for `action` on `hold_id`, valid until `expires_at_s` (Unix seconds, inclusive).
/// See the module docs for the format.
pub fn sign(hold_id: &str, action: OwnerAction, expires_at_s: i64, key: &[u8]) -> String {
    let payload = format!("{VERSION}.{hold_id}.{}.{expires_at_s}", action.as_str());
    let tag = mac_of(key, payload.as_bytes()).finalize().into_bytes();
    format!("{}.{}", B64URL.encode(payload), B64URL.encode(tag))
}

/// Checks a token at `now_s` (Unix seconds): shape → `Malformed`; signature (constant time; an
/// empty key verifies nothing) → `BadSignature`; payload → `Malformed`; `now_s > expires_at_s` →
/// `Expired`. Surrounding whitespace is ignored.
pub fn verify(token: &str, key: &[u8], now_s: i64) -> Result<ActionClaims, TokenError> {
    let token = token.trim();
    let (payload_b64, tag_b64) = token.split_once('.').ok_or(TokenError::Malformed)?;
    if payload_b64.is_empty() || tag_b64.is_empty() || tag_b64.contains('.') {
        return Err(TokenError::Malformed);
    }
    let payload = B64URL
        .decode(payload_b64)
        .map_err(|_| TokenError::Malformed)?;
    let tag = B64URL.decode(tag_b64).map_err(|_| TokenError::Malformed)?;

    if key.is_empty() || mac_of(key, &payload).verify_slice(&tag).is_err() {
        return Err(TokenError::BadSignature);
    }

    let payload = std::str::from_utf8(&payload).map_err(|_| TokenError::Malformed)?;
    let mut from_right = payload.rsplitn(3, '.');
    let expires = from_right.next().ok_or(TokenError::Malformed)?;
    let action = from_right.next().ok_or(TokenError::Malformed)?;
    let head = from_right.next().ok_or(TokenError::Malformed)?;
    let hold_id = head
        .strip_prefix(VERSION)
        .and_then(|rest| rest.strip_prefix('.'))
        .filter(|h| !h.is_empty())
        .ok_or(TokenError::Malformed)?;
    let action = OwnerAction::parse(action).ok_or(TokenError::Malformed)?;
    let expires_at_s: i64 = expires.parse().map_err(|_| TokenError::Malformed)?;

    if now_s > expires_at_s {
        return Err(TokenError::Expired {
            expired_at_s: expires_at_s,
        });
    }
    Ok(ActionClaims {
        hold_id: hold_id.to_string(),
        action,
        expires_at_s,
        token_id: hex::encode(Sha256::digest(token.as_bytes())),
    })
}

/// How long a confirmation page's form works after it was shown, seconds (30 minutes): long
/// enough to read the facts and decide, short enough that a page captured once is soon useless.
pub const FORM_NONCE_TTL_S: i64 = 30 * 60;

/// Clock skew tolerated on a nonce's issue time, seconds (a nonce "from the future" beyond this
/// was not made by this engine's clock).
const FORM_NONCE_SKEW_S: i64 = 60;

/// Domain separation of form nonces from the links' own MACs under the same key.
const NONCE_CONTEXT: &[u8] = b"owner-action-form\n";

/// Why a form post was not taken as coming from the engine's own confirmation page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NonceError {
    #[error("the form carried no nonce")]
    Missing,
    #[error("the form's nonce is malformed")]
    Malformed,
    #[error("the form's nonce was not made for this link")]
    BadSignature,
    #[error("the form is older than {FORM_NONCE_TTL_S} s; open the link again")]
    Expired,
}

fn nonce_mac(token_id: &str, issued_at_s: i64, key: &[u8]) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts any key length");
    mac.update(NONCE_CONTEXT);
    mac.update(format!("{token_id}.{issued_at_s}").as_bytes());
    mac
}

/// The nonce of one render of a link's confirmation page:
/// `<issued_at_s>.<base64url(HMAC-SHA256(key, "owner-action-form\n" + token_id + "." +
/// issued_at_s))>`, bound to the link's token id and the time it was shown (Unix seconds, UTC).
/// Stateless: nothing is stored; the link itself stays single-use through `owner_actions`.
pub fn form_nonce(token_id: &str, issued_at_s: i64, key: &[u8]) -> String {
    let tag = nonce_mac(token_id, issued_at_s, key)
        .finalize()
        .into_bytes();
    format!("{issued_at_s}.{}", B64URL.encode(tag))
}

/// Checks a posted nonce for `token_id` at `now_s`: made by [`form_nonce`] with `key` (constant
/// time; an empty key verifies nothing), issued at most [`FORM_NONCE_TTL_S`] ago and not in the
/// future beyond a minute of skew.
pub fn check_form_nonce(
    nonce: Option<&str>,
    token_id: &str,
    key: &[u8],
    now_s: i64,
) -> Result<(), NonceError> {
    let nonce = nonce
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .ok_or(NonceError::Missing)?;
    let (issued, tag) = nonce.split_once('.').ok_or(NonceError::Malformed)?;
    let issued_at_s: i64 = issued.parse().map_err(|_| NonceError::Malformed)?;
    let tag = B64URL.decode(tag).map_err(|_| NonceError::Malformed)?;
    if key.is_empty()
        || nonce_mac(token_id, issued_at_s, key)
            .verify_slice(&tag)
            .is_err()
    {
        return Err(NonceError::BadSignature);
    }
    if issued_at_s > now_s + FORM_NONCE_SKEW_S || now_s - issued_at_s > FORM_NONCE_TTL_S {
        return Err(NonceError::Expired);
    }
    Ok(())
}

/// Whether a form post came from a page of this site, by its browser-set headers: a
/// `Sec-Fetch-Site` of `cross-site` or `same-site`, or an `Origin` that is not `own_origin`
/// (`null` included: sandboxed frames and privacy modes send it), is refused. Both absent is
/// allowed (older clients); the nonce still has to be right.
pub fn same_site_post(
    origin: Option<&str>,
    sec_fetch_site: Option<&str>,
    own_origin: &str,
) -> bool {
    let fetch_ok = match sec_fetch_site.map(|v| v.trim().to_ascii_lowercase()) {
        None => true,
        Some(v) => v == "same-origin" || v == "none",
    };
    let origin_ok = origin.is_none_or(|o| o.trim().eq_ignore_ascii_case(own_origin));
    fetch_ok && origin_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_nonces_are_bound_to_the_link_and_expire() {
        let key = b"0123456789abcdef0123456789abcdef";
        let n = form_nonce("tok1", 1_000, key);
        let check =
            |n: Option<&str>, tok: &str, key: &[u8], now: i64| check_form_nonce(n, tok, key, now);
        assert_eq!(check(Some(&n), "tok1", key, 1_000), Ok(()));
        assert_eq!(
            check(Some(&n), "tok1", key, 1_000 + FORM_NONCE_TTL_S),
            Ok(())
        );
        assert_eq!(
            check(Some(&n), "tok1", key, 1_001 + FORM_NONCE_TTL_S),
            Err(NonceError::Expired)
        );
        assert_eq!(check(Some(&n), "tok1", key, 900), Err(NonceError::Expired));
        assert_eq!(
            check(Some(&n), "tok2", key, 1_000),
            Err(NonceError::BadSignature)
        );
        assert_eq!(
            check(Some(&n), "tok1", b"another-key", 1_000),
            Err(NonceError::BadSignature)
        );
        assert_eq!(
            check(Some(&n), "tok1", b"", 1_000),
            Err(NonceError::BadSignature)
        );
        // A changed issue time breaks the MAC: a nonce cannot be made younger.
        let (_, tag) = n.split_once('.').unwrap();
        let younger = format!("1500.{tag}");
        assert_eq!(
            check(Some(&younger), "tok1", key, 1_500),
            Err(NonceError::BadSignature)
        );
        assert_eq!(check(None, "tok1", key, 1_000), Err(NonceError::Missing));
        assert_eq!(
            check(Some("garbage"), "tok1", key, 1_000),
            Err(NonceError::Malformed)
        );
    }

    #[test]
    fn only_same_origin_posts_pass() {
        let own = "https://engine.example.com";
        assert!(same_site_post(None, None, own));
        assert!(same_site_post(Some(own), Some("same-origin"), own));
        assert!(!same_site_post(Some("https://evil.example"), None, own));
        assert!(!same_site_post(Some("null"), None, own));
        assert!(!same_site_post(None, Some("cross-site"), own));
        assert!(!same_site_post(Some(own), Some("same-site"), own));
    }
}
