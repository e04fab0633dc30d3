//! Resend (<https://resend.com>) as an alternative main provider: the `POST /emails` body, the
//! `Idempotency-Key`, and what an error answer means (https://resend.com/docs/api-reference/errors). Pure: the shell does the
//! `fetch`, passes the status, body and `retry-after` header here, and feeds the class to
//! [`crate::domain::outbox::after_failure_with_hint`].
//!
//! ```text
//! POST https://api.resend.com/emails
//! Authorization: Bearer re_…
//! Content-Type: application/json
//! Idempotency-Key: <idempotency_key(email.dedupe_key.as_str())>
//!
//! <request_body(&email, "Brand <bookings@mail.example.com>", &extra_headers)>
//! ```
//!
//! 2xx → [`parse_success`] gives Resend's email id; anything else → [`classify`].
//!
//! # Idempotency
//!
//! Resend keeps an `Idempotency-Key` for 24 hours: the same key with the same payload returns the
//! first answer without sending again. Our key is derived from the dedupe key alone and the payload
//! for a key never changes (the outbox stores the rendered email; the unsubscribe token of
//! `crate::domain::marketing::unsubscribe::sign` is deterministic), so every retry of one email is the same
//! request. Hence:
//! - a 2xx whose body we cannot read is safe to retry (Resend answers the first result again);
//! - `invalid_idempotent_request` (409, same key, *different* payload) cannot happen unless we
//!   have a bug (or the `from` configuration changed between attempts): it is **permanent** (dead
//!   letter + owner alert), never retried, because retrying the same thing cannot succeed and
//!   changing the payload silently could send a second, different email.
//!
//! # Classification (by error `name` first, then by HTTP status)
//!
//! Three questions: the recipient's fault, ours (the account, key, sender, request), or nobody's
//! yet. A name or status this build does not know is *not* a refusal: it is retried with backoff,
//! and the owner hears of it when it keeps failing (a dead letter after the attempt ceiling).
//!
//! | name | status | class |
//! |---|---|---|
//! | `daily_quota_exceeded` | 429 | `DailyLimit` |
//! | `monthly_quota_exceeded` | 429 | `DailyLimit` (see below) |
//! | `email_above_quota` | 403 | `DailyLimit` (a quota name: wait for the reset) |
//! | `rate_limit_exceeded` | 429 | `RateLimited` |
//! | `concurrent_idempotent_requests` | 409 | `RateLimited` (the first request is still running: retry) |
//! | `resource_locked` | 409 | `Transient` (a lock is temporary by nature) |
//! | `invalid_idempotent_request` | 409 | `Permanent` (see above) |
//! | `invalid_to_address` | 403/422 | `RecipientRejected` (the only recipient name) |
//! | `application_error`, `internal_server_error`, `service_unavailable` | 500/503 | `Transient` |
//! | key errors: `missing_api_key`, `invalid_api_key`, `restricted_api_key`, `suspended_api_key` | 401/403 | `CredentialsRejected` (pause Resend, alert the owner, fail over to SMTP; the email keeps its place) |
//! | ours: `validation_error` (401/403: an unverified domain, a testing-only sender, a bad key), `invalid_from_address`, `invalid_access`, `invalid_permission`, `invalid_idempotency_key`, `invalid_scope`, `invalid_parameter`, `invalid_region`, `missing_required_parameter`, `not_found`, `method_not_allowed` | 4xx | `Configuration` (pause Resend, alert the owner with Resend's message, fail over; the email keeps its place) |
//! | maybe this message alone: `validation_error` (400/422: a field of this message), `invalid_attachment`, `missing_required_field`, `security_error` (451) | 4xx | `MessageRefused` (set aside; the next email on Resend decides: accepted → a dead letter, refused the same way → Resend paused) |
//! | unknown name / no JSON body | 429 | `RateLimited` |
//! | unknown name / no JSON body | anything else (4xx, 5xx, 1xx–3xx, 0) | `Transient` (retried with backoff; bounded by the attempt ceiling, then a dead letter and an owner alert) |
//!
//! Resend does not refuse suppressed or bouncing recipients at send time (it accepts the email and
//! reports `email.suppressed` / `email.bounced` later by webhook), so `RecipientRejected` only comes
//! from `invalid_to_address`. `validation_error` 403 "you can only send testing emails to your own
//! address" is a *configuration* problem (domain not verified): Resend is paused and the owner
//! told, the email waits or goes by SMTP meanwhile.
//!
//! **`monthly_quota_exceeded`** is mapped to `DailyLimit` rather than a new class: the outbox then
//! pauses the main provider until the next UTC midnight and fails over to SMTP, which is exactly
//! right for the email at hand; the next day one probe finds the quota still exhausted and pauses
//! again (one wasted request a day). The owner is told of every pause of the main provider (once a
//! day), so an exhausted plan does not go unnoticed.

use crate::domain::basics::text::{header_value, HEADER_MAX_CHARS, SUBJECT_MAX_CHARS};
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::outbox::ProviderErrorClass;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::fmt;

/// `POST` target of a single send.
pub const SEND_URL: &str = "https://api.resend.com/emails";

/// Request header carrying [`idempotency_key`].
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";

/// Resend's limit on an idempotency key, in characters.
pub const IDEMPOTENCY_KEY_MAX: usize = 256;

/// Resend's limit on a tag name or value, in characters.
pub const TAG_MAX: usize = 256;

/// Longest [`ResendFailure::message`] kept (it ends up in `last_error` and owner alerts).
pub const MESSAGE_MAX: usize = 500;

/// The JSON body of `POST /emails` for one email.
///
/// - `from`: as given, e.g. `"Example Trips <bookings@mail.example.com>"`;
/// - `to`: a one-element array;
/// - `subject`, `html`, `text` from the email;
/// - `headers`: `extra_headers` in order (e.g. the two RFC 8058 headers of
///   `crate::domain::marketing::unsubscribe::headers`); omitted when empty. A later duplicate name replaces an
///   earlier one; CR/LF in names or values become spaces (no header injection);
/// - `tags`: `[{"name": "kind", "value": <kind>}]`, restricted to ASCII letters, digits, `_` and
///   `-` (anything else becomes `_`), at most 256 characters;
/// - `attachments`: the calendar parts when the email has any, each `{"filename": "stay.ics",
///   "content": <base64 of the .ics>, "content_type": "text/calendar; charset=utf-8;
///   method=PUBLISH"}` (Resend's attachment fields: <https://resend.com/docs/api-reference/emails/send-email>).
///
/// `Message-ID` is not set: like Cloudflare Email Service, Resend chooses it; pass it in
/// `extra_headers` if that is ever wanted. The body must be identical on every attempt of one
/// email (see the module docs on idempotency), so it depends on nothing but its arguments.
pub fn request_body(
    email: &OutgoingEmail,
    from: &str,
    extra_headers: &[(String, String)],
) -> Value {
    let mut body = Map::new();
    body.insert("from".into(), Value::String(from.to_string()));
    body.insert("to".into(), json!([email.to.as_str()]));
    body.insert(
        "subject".into(),
        Value::String(header_value(&email.subject, SUBJECT_MAX_CHARS)),
    );
    body.insert("html".into(), Value::String(email.html.clone()));
    body.insert("text".into(), Value::String(email.text.clone()));
    if !extra_headers.is_empty() {
        let mut headers = Map::new();
        for (name, value) in extra_headers {
            headers.insert(
                no_line_breaks(name.trim()),
                Value::String(no_line_breaks(value)),
            );
        }
        body.insert("headers".into(), Value::Object(headers));
    }
    body.insert(
        "tags".into(),
        json!([{ "name": "kind", "value": tag_value(email.kind.as_str()) }]),
    );
    let attachments: Vec<Value> = email
        .calendar_parts()
        .map(|calendar| {
            use base64::Engine as _;
            json!({
                "filename": calendar.file_name,
                "content": base64::engine::general_purpose::STANDARD.encode(calendar.text().as_bytes()),
                "content_type": calendar.content_type(),
            })
        })
        .collect();
    if !attachments.is_empty() {
        body.insert("attachments".into(), Value::Array(attachments));
    }
    Value::Object(body)
}

/// The `from` field: `Display Name <address>`, the display name quoted (RFC 5322 quoted-string,
/// `"` and `\\` escaped) when it holds anything but letters, digits, spaces and the atext
/// symbols; just the address when the name is blank. Line breaks become spaces.
pub fn from_field(display_name: &str, address: &str) -> String {
    let name = no_line_breaks(display_name.trim());
    if name.is_empty() {
        return address.to_string();
    }
    let atext =
        |c: char| c.is_ascii_alphanumeric() || c == ' ' || "!#$%&'*+-/=?^_`{|}~".contains(c);
    if name.chars().all(atext) {
        format!("{name} <{address}>")
    } else {
        let quoted = name.replace('\\', "\\\\").replace('"', "\\\"");
        format!("\"{quoted}\" <{address}>")
    }
}

/// One line, bounded: the engine's one header-value builder ([`header_value`]).
fn no_line_breaks(s: &str) -> String {
    header_value(s, HEADER_MAX_CHARS)
}

/// `s` made acceptable as a Resend tag name or value: ASCII letters, digits, `_` and `-` kept,
/// every other character replaced by `_`, cut to [`TAG_MAX`] characters; an empty result is `_`.
pub fn tag_value(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(TAG_MAX)
        .collect();
    if out.is_empty() {
        "_".into()
    } else {
        out
    }
}

/// The `Idempotency-Key` for an email, from its dedupe key.
///
/// The dedupe key itself when it is 1–256 characters of printable ASCII (what an HTTP header
/// carries safely); otherwise `sha256:<64 hex>` of it (71 characters). Deterministic: every attempt
/// of one email sends the same key. A dedupe key never starts with `sha256:` (it starts with an
/// email kind), so the two forms cannot collide.
pub fn idempotency_key(dedupe_key: &str) -> String {
    let printable = dedupe_key.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let trimmed = dedupe_key.trim() == dedupe_key;
    if !dedupe_key.is_empty() && dedupe_key.len() <= IDEMPOTENCY_KEY_MAX && printable && trimmed {
        dedupe_key.to_string()
    } else {
        format!(
            "sha256:{}",
            hex::encode(Sha256::digest(dedupe_key.as_bytes()))
        )
    }
}

/// A refused or failed `POST /emails`, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResendFailure {
    /// What the outbox should do (see the module table).
    pub class: ProviderErrorClass,
    /// Resend's error `name`, e.g. `daily_quota_exceeded`; `None` when the body had none.
    pub name: Option<String>,
    /// Human-readable: Resend's `message`, else the start of the body, else `HTTP <status>`;
    /// at most [`MESSAGE_MAX`] characters.
    pub message: String,
    /// The `retry-after` header in ms (see [`parse_retry_after_ms`]), unclamped; the outbox clamps.
    pub retry_after_ms: Option<i64>,
}

impl ResendFailure {
    /// `"<name>: <message>"` (or just the message), for `last_error` and logs.
    pub fn describe(&self) -> String {
        match &self.name {
            Some(name) => format!("{name}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for ResendFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The class of a known Resend error name, answered with HTTP `status`; `None` for names we do not
/// know. Only `validation_error` depends on the status: 401 and 403 are about our key, our
/// unverified domain or a testing-only sender (ours), 400 and 422 about a field of this message.
pub fn class_of_name(name: &str, status: u16) -> Option<ProviderErrorClass> {
    use ProviderErrorClass::*;
    Some(match name {
        "validation_error" if matches!(status, 401 | 403) => Configuration,
        // About this message's fields, attachment or content: set aside, the next email on the
        // route decides (`crate::domain::outbox::judge_probe`).
        "validation_error" | "invalid_attachment" | "missing_required_field" | "security_error" => {
            MessageRefused
        }
        "daily_quota_exceeded" | "monthly_quota_exceeded" | "email_above_quota" => DailyLimit,
        "rate_limit_exceeded" | "concurrent_idempotent_requests" => RateLimited,
        "resource_locked" => Transient,
        "application_error" | "internal_server_error" | "service_unavailable" => Transient,
        "invalid_to_address" => RecipientRejected,
        "missing_api_key" | "invalid_api_key" | "restricted_api_key" | "suspended_api_key" => {
            CredentialsRejected
        }
        "invalid_idempotent_request" => Permanent,
        "invalid_idempotency_key"
        | "invalid_access"
        | "invalid_permission"
        | "invalid_from_address"
        | "invalid_parameter"
        | "invalid_region"
        | "invalid_scope"
        | "missing_required_parameter"
        | "not_found"
        | "method_not_allowed" => Configuration,
        _ => return None,
    })
}

/// The class of an HTTP status alone (unknown name or unreadable body): 429 is a rate limit,
/// anything else is retried with backoff — an answer this build cannot read is never taken for a
/// refusal.
pub fn class_of_status(status: u16) -> ProviderErrorClass {
    match status {
        429 => ProviderErrorClass::RateLimited,
        _ => ProviderErrorClass::Transient,
    }
}

/// Classifies a non-2xx answer of `POST /emails`: `status`, the raw `body`, and the `retry-after`
/// response header if present. Branches on the error `name`, then on `status` (see the module
/// table); never on the message text.
pub fn classify(status: u16, body: &str, retry_after: Option<&str>) -> ResendFailure {
    let parsed: Option<Map<String, Value>> = match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    };
    let field = |key: &str| {
        parsed
            .as_ref()
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let name = field("name");
    let class = name
        .as_deref()
        .and_then(|n| class_of_name(n, status))
        .unwrap_or_else(|| class_of_status(status));
    let message = match field("message") {
        Some(m) => m,
        None if parsed.is_none() && !body.trim().is_empty() => {
            format!("HTTP {status}: {}", body.trim())
        }
        None => format!("HTTP {status}"),
    };
    ResendFailure {
        class,
        name,
        message: truncate_chars(&message, MESSAGE_MAX),
        retry_after_ms: retry_after.and_then(parse_retry_after_ms),
    }
}

fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => s[..cut].to_string(),
        None => s.to_string(),
    }
}

/// Longest `retry-after` we represent (one year); longer values are cut to it (the outbox clamps
/// to its backoff cap anyway).
const RETRY_AFTER_MAX_S: f64 = 365.0 * 86_400.0;

/// `Retry-After` in delay-seconds (RFC 9110 §10.2.3: `1*DIGIT`; a decimal fraction such as `1.5`
/// is tolerated) → milliseconds, rounded up. `None` for an empty, negative or non-numeric value,
/// including the HTTP-date form (Resend sends seconds; a date would need `now`, and the outbox's
/// own backoff is a fine fallback).
pub fn parse_retry_after_ms(value: &str) -> Option<i64> {
    let v = value.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let secs: f64 = v.parse().ok()?;
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Some((secs.min(RETRY_AFTER_MAX_S) * 1000.0).ceil() as i64)
}

/// Why a 2xx answer could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuccessParseError {
    #[error("Resend answered 2xx with a body that is not a JSON object")]
    NotJson,
    #[error("Resend answered 2xx without an email id")]
    MissingId,
}

impl SuccessParseError {
    /// How the outbox should treat it: transient. Resend probably accepted the email, and a retry
    /// with the same `Idempotency-Key` within 24 h returns the first answer without sending again.
    pub fn class(&self) -> ProviderErrorClass {
        ProviderErrorClass::Transient
    }
}

/// Resend's email id from a 2xx body `{"id": "<uuid>"}`.
pub fn parse_success(body: &str) -> Result<String, SuccessParseError> {
    let value: Value = serde_json::from_str(body).map_err(|_| SuccessParseError::NotJson)?;
    let map = value.as_object().ok_or(SuccessParseError::NotJson)?;
    map.get("id")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_string)
        .ok_or(SuccessParseError::MissingId)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate_chars("ééé", 2), "éé");
        assert_eq!(truncate_chars("ab", 5), "ab");
    }

    #[test]
    fn line_breaks_are_flattened() {
        assert_eq!(no_line_breaks("a\r\nB: x"), "a B: x");
    }
}
