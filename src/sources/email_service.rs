//! Cloudflare Email Service delivery events, as its event subscriptions put them on a Queue
//! (<https://developers.cloudflare.com/email-service/platform/event-subscriptions/>):
//!
//! ```json
//! {"type":"cf.email.sending.message.bounced",
//!  "source":{"type":"email.sending","zoneId":"…","domain":"example.com"},
//!  "payload":{"eventId":"0190d0c4-…","messageId":"…","sender":"…","recipient":"user@example.net",
//!             "subject":"…","terminal":true,
//!             "delivery":{"status":"bounced","smtpStatusCode":"550","smtpResponse":"550 5.1.1 …"},
//!             "bounce":{"type":"hard","classification":"permanent_failure","reason":"550 5.1.1 …"}},
//!  "metadata":{"eventSchemaVersion":1,"eventTimestamp":"2026-06-01T02:48:57.132Z",…}}
//! ```
//!
//! Types (after the `cf.email.sending.` prefix): `message.delivered`, `message.deferred`,
//! `message.bounced` (`bounce.type` `hard`, or `soft` once temporary retries are exhausted),
//! `message.failed`, `message.rejected`, `message.complained`. Only a **hard** bounce and a
//! complaint suppress the recipient (a soft bounce or a deferral says nothing about the address).
//! Pure: the queue consumer (`src/webhooks/email_events.rs`) stores and acts.

use super::json::At;
use super::ParseError;
use crate::domain::basics::text::{clean, TextKind};
use crate::domain::event::EmailAddress;
use crate::domain::marketing::Suppression;
use serde_json::Value;

/// Prefix of every Email Sending event type.
pub const TYPE_PREFIX: &str = "cf.email.sending.";

/// Longest kept provider explanation, in bytes.
pub const DETAIL_MAX: usize = 300;

/// One Email Service delivery event, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailServiceEvent {
    /// `payload.eventId` (unique per event; the idempotency key of its processing).
    pub event_id: String,
    /// `type` without the prefix, e.g. `message.bounced`.
    pub event_type: String,
    /// `payload.messageId`: the provider message id recorded on our email row at send.
    pub message_id: Option<String>,
    pub recipient: EmailAddress,
    /// `payload.delivery.status` (`delivered`, `deferred`, `bounced`, `failed`, `rejected`,
    /// `complained`), one word, at most 32 characters.
    pub delivery_status: String,
    /// What to record for the recipient, with the provider's explanation (≤ [`DETAIL_MAX`]).
    pub suppression: Option<(Suppression, Option<String>)>,
}

/// Parses one queue message body (already JSON). Errors name the field at fault.
pub fn parse(body: &Value) -> Result<EmailServiceEvent, ParseError> {
    let root = At::root(body, "");
    let ty = root.get("type").str_req()?;
    let Some(event_type) = ty.strip_prefix(TYPE_PREFIX) else {
        return Err(root.get("type").invalid(format!(
            "is not an Email Sending event (expected {TYPE_PREFIX}…)"
        )));
    };
    let event_type = clean(event_type, TextKind::Other);
    let payload = root.get("payload");
    let event_id = payload.get("eventId").str_req()?;
    if event_id.len() > 128
        || !event_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(payload
            .get("eventId")
            .invalid("must be at most 128 letters, digits, '-' or '_'"));
    }
    let message_id = payload
        .get("messageId")
        .str_opt()
        .map(|m| clean(&m, TextKind::Other))
        .filter(|m| !m.is_empty() && m.len() <= 256);
    let recipient = payload.get("recipient").email_req()?;
    let status_word = |s: String| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(32)
            .collect()
    };
    let delivery_status = payload
        .get("delivery")
        .get("status")
        .str_opt()
        .map(status_word)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| status_word(event_type.trim_start_matches("message.").to_string()));
    let detail = |at: At| {
        at.str_opt()
            .map(|d| clean(&d, TextKind::Other))
            .filter(|d| !d.is_empty())
            .map(|d| crate::domain::basics::text::cut_bytes(&d, DETAIL_MAX).to_string())
    };
    let suppression = match event_type.as_str() {
        "message.complained" => Some((
            Suppression::Complaint,
            detail(payload.get("complaint").get("type")).map(|t| format!("complaint: {t}")),
        )),
        "message.bounced" => {
            let bounce = payload.get("bounce");
            let kind = bounce.get("type").str_opt().unwrap_or_default();
            if kind.eq_ignore_ascii_case("hard") {
                Some((
                    Suppression::HardBounce,
                    detail(bounce.get("reason"))
                        .or_else(|| detail(payload.get("delivery").get("smtpResponse"))),
                ))
            } else {
                None
            }
        }
        _ => None,
    };
    Ok(EmailServiceEvent {
        event_id,
        event_type,
        message_id,
        recipient,
        delivery_status,
        suppression,
    })
}
