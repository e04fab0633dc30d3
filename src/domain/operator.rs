//! Operator authentication for the `/admin/…` API: `Authorization: Bearer <OPERATOR_TOKEN>`.
//!
//! Pure: the caller passes the header value and the configured token. The comparison is constant
//! time ([`crate::domain::secret::secrets_match`]: both sides hashed with SHA-256, then compared with
//! `subtle`), so neither the token's content nor its length leaks through timing.
//!
//! An empty `OPERATOR_TOKEN` disables the operator API ([`OperatorAuthError::NotConfigured`], HTTP
//! 503): an empty token must never match an empty or missing header.
//!
//! Also the operator's request bodies that are not marketing ([`parse_redrive_request`]; the
//! marketing send request is in [`crate::domain::marketing_email`]).

use crate::domain::email::DedupeKey;
use crate::domain::parse_error::ParseError;
use crate::domain::secret::secrets_match;
use serde_json::Value;

/// The configuration variable that holds the operator's bearer token.
pub const OPERATOR_TOKEN_VAR: &str = "OPERATOR_TOKEN";

/// Why an operator request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OperatorAuthError {
    /// `OPERATOR_TOKEN` is empty: the operator API is disabled (→ 503).
    #[error("OPERATOR_TOKEN is not set: the operator API (/admin/…) is disabled until it is")]
    NotConfigured,
    /// No `Authorization` header, or a blank one (→ 401).
    #[error("missing Authorization header; send `Authorization: Bearer <OPERATOR_TOKEN>`")]
    Missing,
    /// An `Authorization` header that is not `Bearer <token>` (→ 401).
    #[error("Authorization header must be `Bearer <OPERATOR_TOKEN>`")]
    NotBearer,
    /// A bearer token that is not the operator token (→ 401).
    #[error("operator token does not match")]
    Mismatch,
}

/// Checks an `Authorization` header value against the configured operator token.
///
/// Accepts `Bearer <token>` with the scheme in any case and any surrounding whitespace. Errors, in
/// check order: `NotConfigured` (blank `expected`), `Missing`, `NotBearer`, `Mismatch`.
pub fn check_bearer(header: Option<&str>, expected: &str) -> Result<(), OperatorAuthError> {
    let expected = expected.trim();
    if expected.is_empty() {
        return Err(OperatorAuthError::NotConfigured);
    }
    let header = header
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .ok_or(OperatorAuthError::Missing)?;
    let (scheme, token) = header
        .split_once(char::is_whitespace)
        .ok_or(OperatorAuthError::NotBearer)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(OperatorAuthError::NotBearer);
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(OperatorAuthError::NotBearer);
    }
    if secrets_match(token, expected) {
        Ok(())
    } else {
        Err(OperatorAuthError::Mismatch)
    }
}

/// Parses the body of `POST /admin/outbox/redrive`: `{"dedupeKey": "<kind>:<ref>"}` (a dead
/// letter's dedupe key, e.g. `booking_confirmation:BK123`). Errors name the field: `Json`,
/// `NotAnObject`, `Missing("dedupeKey")`, `Invalid { field: "dedupeKey" }` (not a string, or not
/// the `<kind>:<ref>` shape of at most 256 bytes).
pub fn parse_redrive_request(body: &[u8]) -> Result<DedupeKey, ParseError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| ParseError::Json(e.to_string()))?;
    let obj = v.as_object().ok_or(ParseError::NotAnObject)?;
    match obj.get("dedupeKey") {
        None | Some(Value::Null) => Err(ParseError::Missing("dedupeKey".into())),
        Some(Value::String(s)) => {
            DedupeKey::from_stored(s.trim()).ok_or_else(|| ParseError::Invalid {
                field: "dedupeKey".into(),
                reason: "must be a dedupe key `<kind>:<ref>` of at most 256 bytes".into(),
            })
        }
        Some(_) => Err(ParseError::Invalid {
            field: "dedupeKey".into(),
            reason: "must be a string".into(),
        }),
    }
}
