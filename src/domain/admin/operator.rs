//! Operator authentication for the `/admin/…` API: `Authorization: Bearer <OPERATOR_TOKEN>`.
//!
//! Pure: the caller passes the header value and the configured token. The comparison is constant
//! time ([`crate::domain::basics::secret::secrets_match`]: both sides hashed with SHA-256, then compared with
//! `subtle`), so neither the token's content nor its length leaks through timing.
//!
//! An empty `OPERATOR_TOKEN` disables the operator API ([`OperatorAuthError::NotConfigured`], HTTP
//! 503): an empty token must never match an empty or missing header.
//!
//! Also the operator's request bodies that are not marketing ([`parse_redrive_request`],
//! [`parse_route_request`]; the marketing send request is in [`crate::domain::marketing::campaign`]).

use crate::domain::basics::parse_error::ParseError;
use crate::domain::basics::secret::secrets_match;
use crate::domain::email::DedupeKey;
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
    let v: Value = crate::domain::basics::json::parse_body(body)?;
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

/// A route of the outbox the operator pauses or resumes (`POST /admin/outbox/provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteRequest {
    /// `main` (the main provider) or `smtp` (the failover), as the outbox's `POST /pause` names it.
    pub route: &'static str,
    /// `None`: resume now; `Some(ms)`: pause for that long.
    pub pause_ms: Option<i64>,
}

/// Longest pause the operator can ask for, minutes (one week).
pub const MAX_PAUSE_MINUTES: i64 = 7 * 24 * 60;

/// Parses the body of `POST /admin/outbox/provider`: `{"provider": "main"|"smtp", "action":
/// "pause"|"resume", "minutes"?: 1–10080}` (a pause lasts `minutes`, default 60). Errors name the
/// field.
pub fn parse_route_request(body: &[u8]) -> Result<RouteRequest, ParseError> {
    let v: Value = crate::domain::basics::json::parse_body(body)?;
    let obj = v.as_object().ok_or(ParseError::NotAnObject)?;
    let invalid = |field: &str, reason: &str| ParseError::Invalid {
        field: field.into(),
        reason: reason.into(),
    };
    let route = match obj.get("provider") {
        None | Some(Value::Null) => return Err(ParseError::Missing("provider".into())),
        Some(Value::String(s)) if s == "main" => "main",
        Some(Value::String(s)) if s == "smtp" => "smtp",
        Some(_) => return Err(invalid("provider", "must be \"main\" or \"smtp\"")),
    };
    let pause = match obj.get("action") {
        None | Some(Value::Null) => return Err(ParseError::Missing("action".into())),
        Some(Value::String(s)) if s == "pause" => true,
        Some(Value::String(s)) if s == "resume" => false,
        Some(_) => return Err(invalid("action", "must be \"pause\" or \"resume\"")),
    };
    let minutes = match obj.get("minutes") {
        None | Some(Value::Null) => 60,
        Some(Value::Number(n)) => n
            .as_i64()
            .filter(|m| (1..=MAX_PAUSE_MINUTES).contains(m))
            .ok_or_else(|| invalid("minutes", "must be a whole number from 1 to 10080"))?,
        Some(_) => return Err(invalid("minutes", "must be a number")),
    };
    Ok(RouteRequest {
        route,
        pause_ms: pause.then_some(minutes * 60_000),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_requests_parse_and_name_the_wrong_field() {
        assert_eq!(
            parse_route_request(br#"{"provider":"smtp","action":"resume"}"#),
            Ok(RouteRequest {
                route: "smtp",
                pause_ms: None
            })
        );
        assert_eq!(
            parse_route_request(br#"{"provider":"main","action":"pause","minutes":5}"#),
            Ok(RouteRequest {
                route: "main",
                pause_ms: Some(300_000)
            })
        );
        assert_eq!(
            parse_route_request(br#"{"provider":"main","action":"pause"}"#)
                .unwrap()
                .pause_ms,
            Some(3_600_000)
        );
        let field = |body: &[u8]| match parse_route_request(body) {
            Err(ParseError::Invalid { field, .. }) => field,
            Err(ParseError::Missing(field)) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(br#"{"provider":"resend","action":"resume"}"#),
            "provider"
        );
        assert_eq!(field(br#"{"action":"resume"}"#), "provider");
        assert_eq!(field(br#"{"provider":"smtp","action":"stop"}"#), "action");
        assert_eq!(field(br#"{"provider":"smtp"}"#), "action");
        assert_eq!(
            field(br#"{"provider":"smtp","action":"pause","minutes":0}"#),
            "minutes"
        );
        assert_eq!(
            field(br#"{"provider":"smtp","action":"pause","minutes":"5"}"#),
            "minutes"
        );
        assert!(matches!(
            parse_route_request(b"[]"),
            Err(ParseError::NotAnObject)
        ));
        assert!(matches!(
            parse_route_request(b"{"),
            Err(ParseError::Json(_))
        ));
    }
}
