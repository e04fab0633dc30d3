//! The operator's decision on an email the content lock blocked: `POST /admin/outbox/release`
//! `{"dedupeKey": "<kind>:<ref>", "decision": "release" | "reject", "reason": "…", "by"?: "…"}`.
//!
//! A blocked email is decided **once**: `release` puts it back in line and the send gate does not
//! check it again (the operator read it: `GET /admin/outbox/email`); `reject` keeps it unsent for
//! good (`skipped`). Who, when and why are recorded on the outbox row and in D1 `emails`
//! (`operator_decision`, `operator_by`, `operator_at_ms`, `operator_reason`). A second decision,
//! or one on an email that is not blocked, is refused (409).

use crate::domain::basics::parse_error::ParseError;
use crate::domain::email::DedupeKey;
use serde_json::Value;

/// Longest `reason`, characters (longer is refused, not cut: it is the record of a decision).
pub const MAX_REASON_CHARS: usize = 500;
/// Longest `by`, characters.
pub const MAX_BY_CHARS: usize = 100;
/// `by` when the request names nobody (the operator API has one bearer token).
pub const DEFAULT_BY: &str = "operator";

/// What the operator decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum OperatorDecision {
    /// Send it after all.
    Release,
    /// Never send it.
    Reject,
}

impl OperatorDecision {
    /// The stored name (`release` / `reject`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A parsed release request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseRequest {
    pub dedupe_key: DedupeKey,
    pub decision: OperatorDecision,
    /// Trimmed, one line, 1–[`MAX_REASON_CHARS`] characters.
    pub reason: String,
    /// Trimmed, one line, 1–[`MAX_BY_CHARS`] characters; [`DEFAULT_BY`] when absent.
    pub by: String,
}

/// Parses the body of `POST /admin/outbox/release`. Errors name the field: `Json`, `NotAnObject`,
/// `Missing(field)`, `Invalid { field }` (wrong type, unknown decision, blank, too long, or a
/// control character in `reason` / `by`).
pub fn parse_release_request(body: &[u8]) -> Result<ReleaseRequest, ParseError> {
    let v: Value = crate::domain::basics::json::parse_body(body)?;
    let obj = v.as_object().ok_or(ParseError::NotAnObject)?;
    let invalid = |field: &str, reason: &str| ParseError::Invalid {
        field: field.into(),
        reason: reason.into(),
    };
    let text = |field: &str, max: usize| -> Result<Option<String>, ParseError> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => {
                let s = s.trim();
                if s.is_empty() {
                    Err(invalid(field, "must not be blank"))
                } else if s.chars().count() > max {
                    Err(invalid(field, &format!("must be at most {max} characters")))
                } else if s.chars().any(char::is_control) {
                    Err(invalid(
                        field,
                        "must be one line without control characters",
                    ))
                } else {
                    Ok(Some(s.to_string()))
                }
            }
            Some(_) => Err(invalid(field, "must be a string")),
        }
    };
    let key = text("dedupeKey", 256)?.ok_or(ParseError::Missing("dedupeKey".into()))?;
    let dedupe_key = DedupeKey::from_stored(&key)
        .ok_or_else(|| invalid("dedupeKey", "must be a dedupe key `<kind>:<ref>`"))?;
    let decision = text("decision", 16)?.ok_or(ParseError::Missing("decision".into()))?;
    let decision = decision
        .parse::<OperatorDecision>()
        .map_err(|_| invalid("decision", "must be \"release\" or \"reject\""))?;
    let reason = text("reason", MAX_REASON_CHARS)?.ok_or(ParseError::Missing("reason".into()))?;
    let by = text("by", MAX_BY_CHARS)?.unwrap_or_else(|| DEFAULT_BY.to_string());
    Ok(ReleaseRequest {
        dedupe_key,
        decision,
        reason,
        by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_request_parses_with_its_defaults() {
        let r = parse_release_request(
            br#"{"dedupeKey":"booking_confirmation:BK1","decision":"release","reason":" read it "}"#,
        )
        .unwrap();
        assert_eq!(r.dedupe_key.as_str(), "booking_confirmation:BK1");
        assert_eq!(r.decision, OperatorDecision::Release);
        assert_eq!(r.reason, "read it");
        assert_eq!(r.by, DEFAULT_BY);
    }

    #[test]
    fn bad_requests_name_their_field() {
        let field_of = |body: &str| match parse_release_request(body.as_bytes()) {
            Err(ParseError::Invalid { field, .. }) | Err(ParseError::Missing(field)) => field,
            other => panic!("{body}: {other:?}"),
        };
        let long = "r".repeat(MAX_REASON_CHARS + 1);
        for (body, field) in [
            (r#"{"decision":"release","reason":"x"}"#, "dedupeKey"),
            (
                r#"{"dedupeKey":"nokind","decision":"release","reason":"x"}"#,
                "dedupeKey",
            ),
            (
                r#"{"dedupeKey":"a:b","decision":"send","reason":"x"}"#,
                "decision",
            ),
            (r#"{"dedupeKey":"a:b","reason":"x"}"#, "decision"),
            (r#"{"dedupeKey":"a:b","decision":"reject"}"#, "reason"),
            (
                r#"{"dedupeKey":"a:b","decision":"reject","reason":"  "}"#,
                "reason",
            ),
            (
                r#"{"dedupeKey":"a:b","decision":"reject","reason":"a\nb"}"#,
                "reason",
            ),
            (
                r#"{"dedupeKey":"a:b","decision":"reject","reason":7}"#,
                "reason",
            ),
            (
                &format!(r#"{{"dedupeKey":"a:b","decision":"reject","reason":"{long}"}}"#),
                "reason",
            ),
            (
                r#"{"dedupeKey":"a:b","decision":"reject","reason":"x","by":""}"#,
                "by",
            ),
        ] {
            assert_eq!(field_of(body), field, "{body}");
        }
        assert!(matches!(
            parse_release_request(b"[]"),
            Err(ParseError::NotAnObject)
        ));
        assert!(matches!(
            parse_release_request(b"{"),
            Err(ParseError::Json(_))
        ));
    }
}
