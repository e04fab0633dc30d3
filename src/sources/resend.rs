//! Resend delivery reports (pure): bounces and complaints become suppressions.
//!
//! # Authenticity
//!
//! Resend signs webhooks with Svix, which is Standard Webhooks under other header names
//! (<https://resend.com/docs/webhooks/verify-webhooks-requests>; Svix "Verifying Webhooks
//! Manually": `svix-id`, `svix-timestamp`, `svix-signature`, and the `webhook-` prefix for
//! white-labelled senders). Signed content `id.timestamp.body`, HMAC-SHA256 keyed with the
//! base64-decoded part of the `whsec_…` secret, signatures `v1,<base64>` (several during
//! rotation). [`signed_headers`] picks `svix-*` first, then `webhook-*`; [`verify`] delegates to
//! [`super::signature::verify_standard_webhook`] (5-minute tolerance, constant-time compare, any
//! configured secret) and names the Svix headers in its errors.
//!
//! # Payload (what this module assumes)
//!
//! From resend-node `src/webhooks/interfaces/webhook-event.interface.ts` and the docs page
//! <https://resend.com/docs/webhooks/emails/bounced>:
//!
//! ```json
//! {
//!   "type": "email.bounced",
//!   "created_at": "2026-03-02T11:00:00.000Z",
//!   "data": {
//!     "email_id": "4ef9a417-02e9-4d39-ad75-9611e0fcc33c",
//!     "from": "Example Trips <news@example.com>",
//!     "to": ["guest@example.com"],
//!     "subject": "Spring offers",
//!     "created_at": "2026-03-02T10:59:58.000Z",
//!     "bounce": {"message": "The recipient's mail server permanently rejected the email.",
//!                "subType": "General", "type": "Permanent"}
//!   }
//! }
//! ```
//!
//! `email.complained` has the same `data` without `bounce`. Rules:
//! - `email.bounced` with `data.bounce.type` `Permanent` (any case), or without a bounce type →
//!   [`Suppression::HardBounce`] for every `data.to` address. Another type (`Transient`,
//!   `Undetermined`: SES's vocabulary, which Resend passes on) is a soft bounce → ignored.
//! - `email.complained` → [`Suppression::Complaint`] for every `data.to` address.
//! - Any other `type` → ignored (stored, acknowledged, nothing recorded).
//!
//! `data.to` may be an array or a single string; an entry may carry a display name
//! (`Name <addr>`). Entries that are not addresses are skipped and reported when at least one
//! entry is usable (a bounce is never lost for one odd entry). Errors name the field: `type`,
//! `data`, `data.to`, `data.to[<i>]` (when no entry is usable),
//! `data.bounce`, `data.bounce.type`.

use super::signature::{self, SignatureError};
use super::ParseError;
use crate::domain::basics::text::cut_bytes;
use crate::domain::basics::text::{clean, TextKind};
use crate::domain::event::EmailAddress;
use crate::domain::marketing::Suppression;
use serde_json::{Map, Value};

/// Svix message id header (stable across retries; the event id of a delivery).
pub const SVIX_ID_HEADER: &str = "svix-id";
/// Svix timestamp header (Unix seconds of this attempt).
pub const SVIX_TIMESTAMP_HEADER: &str = "svix-timestamp";
/// Svix signature header (space-separated `v1,<base64>` list).
pub const SVIX_SIGNATURE_HEADER: &str = "svix-signature";

/// Longest `detail` kept with a suppression, bytes.
pub const DETAIL_MAX: usize = 500;

/// The three signature headers of one delivery, whichever prefix carried them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignedHeaders {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub signature: Option<String>,
}

/// Reads the signature headers with `get(name)` (a case-insensitive header lookup): each of
/// `svix-id` / `svix-timestamp` / `svix-signature`, else its `webhook-` twin. A blank value counts
/// as absent.
pub fn signed_headers(get: impl Fn(&str) -> Option<String>) -> SignedHeaders {
    let pick = |svix: &str, standard: &str| {
        get(svix)
            .filter(|v| !v.trim().is_empty())
            .or_else(|| get(standard).filter(|v| !v.trim().is_empty()))
    };
    SignedHeaders {
        id: pick(SVIX_ID_HEADER, signature::WEBHOOK_ID_HEADER),
        timestamp: pick(SVIX_TIMESTAMP_HEADER, signature::WEBHOOK_TIMESTAMP_HEADER),
        signature: pick(SVIX_SIGNATURE_HEADER, signature::WEBHOOK_SIGNATURE_HEADER),
    }
}

/// Verifies a Resend (Svix / Standard Webhooks) delivery. `secrets`: the configured
/// `RESEND_WEBHOOK_SECRETS` (`whsec_…`, any may match); `now_unix_s`, `tolerance_s`: seconds.
/// Errors are [`verify_standard_webhook`](signature::verify_standard_webhook)'s, with `Missing` /
/// `Malformed` naming the `svix-` headers.
pub fn verify(
    headers: &SignedHeaders,
    body: &[u8],
    secrets: &[&str],
    now_unix_s: i64,
    tolerance_s: i64,
) -> Result<(), SignatureError> {
    let rename = |name: &'static str| match name {
        signature::WEBHOOK_ID_HEADER => SVIX_ID_HEADER,
        signature::WEBHOOK_TIMESTAMP_HEADER => SVIX_TIMESTAMP_HEADER,
        signature::WEBHOOK_SIGNATURE_HEADER => SVIX_SIGNATURE_HEADER,
        other => other,
    };
    signature::verify_standard_webhook(
        headers.id.as_deref(),
        headers.timestamp.as_deref(),
        headers.signature.as_deref(),
        body,
        secrets,
        now_unix_s,
        tolerance_s,
    )
    .map(|_| ())
    .map_err(|e| match e {
        SignatureError::Missing(h) => SignatureError::Missing(rename(h)),
        SignatureError::Malformed(h) => SignatureError::Malformed(rename(h)),
        other => other,
    })
}

/// What a Resend event asks of the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// Record `reason` for every address (a hard bounce or a complaint). `detail` is the
    /// provider's explanation, at most [`DETAIL_MAX`] bytes (e.g. `Permanent/General: The
    /// recipient's mail server permanently rejected the email.`).
    Suppress {
        reason: Suppression,
        addresses: Vec<EmailAddress>,
        detail: Option<String>,
        /// `data.to` entries that are not addresses (`data.to[<i>]: <problem>`), skipped.
        not_addresses: Vec<String>,
    },
    /// Nothing to record; the message says why (e.g. `a Transient bounce is not a hard bounce`).
    Ignored(String),
}

/// One parsed Resend event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResendEvent {
    /// `type`, e.g. `email.bounced`.
    pub event_type: String,
    /// `data.email_id` when present (Resend's id of the email the report is about).
    pub email_id: Option<String>,
    pub report: Report,
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> ParseError {
    ParseError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

/// The address of `Name <addr>` or `addr`.
fn bare_address(raw: &str) -> &str {
    let raw = raw.trim();
    match (raw.rfind('<'), raw.ends_with('>')) {
        (Some(lt), true) => &raw[lt + 1..raw.len() - 1],
        _ => raw,
    }
}

/// The usable addresses of `data.to`, and the entries that are not addresses (as
/// `data.to[<i>]: <problem>`). A report with some usable addresses is acted on for those (a bounce
/// must not be lost because one entry is odd); with none it is an error naming the first entry.
fn recipients(data: &Map<String, Value>) -> Result<(Vec<EmailAddress>, Vec<String>), ParseError> {
    let entries: Vec<(String, &str)> = match data.get("to") {
        None | Some(Value::Null) => return Err(ParseError::Missing("data.to".into())),
        Some(Value::String(s)) => vec![("data.to".to_string(), s.as_str())],
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok((format!("data.to[{i}]"), s.as_str())),
                _ => Err(invalid(format!("data.to[{i}]"), "must be a string")),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(invalid("data.to", "must be an array of email addresses")),
    };
    if entries.is_empty() {
        return Err(invalid("data.to", "must list at least one address"));
    }
    let mut good = Vec::new();
    let mut bad: Vec<(String, String)> = Vec::new();
    for (field, raw) in entries {
        match EmailAddress::parse(bare_address(raw)) {
            Ok(a) => good.push(a),
            Err(e) => bad.push((field, e.to_string())),
        }
    }
    if good.is_empty() {
        let (field, reason) = bad.swap_remove(0);
        return Err(invalid(field, reason));
    }
    Ok((
        good,
        bad.into_iter().map(|(f, r)| format!("{f}: {r}")).collect(),
    ))
}

fn bounce_report(
    data: &Map<String, Value>,
    (addresses, not_addresses): (Vec<EmailAddress>, Vec<String>),
) -> Result<Report, ParseError> {
    let bounce = match data.get("bounce") {
        None | Some(Value::Null) => None,
        Some(Value::Object(b)) => Some(b),
        Some(_) => return Err(invalid("data.bounce", "must be an object")),
    };
    let text = |key: &str| -> Result<Option<String>, ParseError> {
        match bounce.and_then(|b| b.get(key)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(clean(s, TextKind::Other)).filter(|s| !s.is_empty())),
            Some(_) => Err(invalid(format!("data.bounce.{key}"), "must be a string")),
        }
    };
    let kind = text("type")?;
    let sub_type = text("subType")?;
    let message = text("message")?;
    let (kind, sub_type, message) = (kind.as_deref(), sub_type.as_deref(), message.as_deref());
    if let Some(kind) = kind {
        if !kind.eq_ignore_ascii_case("permanent") {
            return Ok(Report::Ignored(format!(
                "a {kind} bounce is not a hard bounce; nothing is suppressed"
            )));
        }
    }
    let head = match (kind, sub_type) {
        (Some(k), Some(s)) => Some(format!("{k}/{s}")),
        (Some(k), None) => Some(k.to_string()),
        (None, Some(s)) => Some(s.to_string()),
        (None, None) => None,
    };
    let detail = match (head, message) {
        (Some(h), Some(m)) => Some(format!("{h}: {m}")),
        (Some(h), None) => Some(h),
        (None, Some(m)) => Some(m.to_string()),
        (None, None) => None,
    }
    .map(|d| cut_bytes(&d, DETAIL_MAX).to_string());
    Ok(Report::Suppress {
        reason: Suppression::HardBounce,
        addresses,
        detail,
        not_addresses,
    })
}

/// Parses a Resend webhook body (see the module docs).
pub fn parse_event(body: &[u8]) -> Result<ResendEvent, ParseError> {
    let v: Value = crate::domain::basics::json::parse_body(body)?;
    let obj = v.as_object().ok_or(ParseError::NotAnObject)?;
    let event_type = match obj.get("type") {
        None | Some(Value::Null) => return Err(ParseError::Missing("type".into())),
        Some(Value::String(s)) if !s.trim().is_empty() => clean(s, TextKind::Status),
        Some(_) => return Err(invalid("type", "must be a non-empty string")),
    };
    let acted = matches!(event_type.as_str(), "email.bounced" | "email.complained");
    let data = match obj.get("data") {
        Some(Value::Object(d)) => Some(d),
        None | Some(Value::Null) if !acted => None,
        None | Some(Value::Null) => return Err(ParseError::Missing("data".into())),
        Some(_) if !acted => None,
        Some(_) => return Err(invalid("data", "must be an object")),
    };
    let email_id = data
        .and_then(|d| d.get("email_id"))
        .and_then(Value::as_str)
        .map(|id| clean(id, TextKind::Id));
    let report = match (event_type.as_str(), data) {
        ("email.bounced", Some(d)) => bounce_report(d, recipients(d)?)?,
        ("email.complained", Some(d)) => {
            let (addresses, not_addresses) = recipients(d)?;
            Report::Suppress {
                reason: Suppression::Complaint,
                addresses,
                detail: Some("the recipient marked the email as spam".into()),
                not_addresses,
            }
        }
        (other, _) => Report::Ignored(format!(
            "event {other:?} is stored; only email.bounced and email.complained are acted on"
        )),
    };
    Ok(ResendEvent {
        event_type,
        email_id,
        report,
    })
}
