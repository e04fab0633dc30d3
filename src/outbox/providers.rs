//! The main provider: Cloudflare Email Service through the `send_email` binding
//! (<https://developers.cloudflare.com/email-service/api/send-emails/workers-api/>).
//! Errors carry a `code` (`E_DAILY_LIMIT_EXCEEDED`, …) that the core classifies.

use crate::domain::basics::text::{header_value, HEADER_MAX_CHARS, SUBJECT_MAX_CHARS};
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::render::Branding;
use wasm_bindgen::{JsCast, JsValue};
use worker::{Env, Error};

/// A refused or failed call to the main provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MainFailure {
    /// The service's error code, e.g. `E_DAILY_LIMIT_EXCEEDED`; `None` for errors without one.
    pub code: Option<String>,
    pub message: String,
    /// The call reached the binding (it may have been sent even though an error came back);
    /// `false` when it failed before (no binding).
    pub handed_over: bool,
}

fn code_of(e: &Error) -> Option<String> {
    match e {
        Error::DailyLimitExceeded(_) => Some("E_DAILY_LIMIT_EXCEEDED".into()),
        Error::RateLimitExceeded(_) => Some("E_RATE_LIMIT_EXCEEDED".into()),
        Error::EmailRecipientSuppressed(_) => Some("E_RECIPIENT_SUPPRESSED".into()),
        Error::EmailRecipientNotAllowed(_) => Some("E_RECIPIENT_NOT_ALLOWED".into()),
        Error::InternalError(_) => Some("E_INTERNAL_SERVER_ERROR".into()),
        Error::UnknownJsError { code, .. } => code.clone(),
        _ => None,
    }
}

/// Sends through `env.<binding>.send({from, to, subject, text, html})` — `EMAIL` (the main
/// provider) or `OWNER_ROUTE` (owner alerts while every guest route is paused); returns the
/// provider's message id.
///
/// The service sets `Message-ID` itself (it is not an allowed custom header), so our deterministic
/// Message-ID only travels on the SMTP path.
pub async fn send_cloudflare(
    env: &Env,
    binding_name: &str,
    email: &OutgoingEmail,
    branding: &Branding,
) -> Result<String, MainFailure> {
    let binding = env.send_email(binding_name).map_err(|e| MainFailure {
        code: None,
        message: format!("{binding_name} binding: {e}"),
        handed_over: false,
    })?;
    let from = worker::EmailAddress::new(&branding.brand, branding.from.as_str());
    // One line, bounded: a CR/LF never reaches the binding as a header of its own.
    let subject = header_value(&email.subject, SUBJECT_MAX_CHARS);
    let mut builder = worker::SendEmailBuilder::builder_with_email_address_and_str(
        &from,
        email.to.as_str(),
        &subject,
    )
    .text(&email.text)
    .html(&email.html);
    if let Some(reply_to) = &email.reply_to {
        // The service refuses a `Reply-To` header (E_HEADER_USE_API_FIELD): its own field.
        builder = builder
            .reply_to_with_email_address(&worker::EmailAddress::new(&branding.brand, reply_to));
    }
    let extra = email.headers_to_send();
    if !extra.is_empty() {
        // `List-Unsubscribe`, `List-Unsubscribe-Post`, `Auto-Submitted`, `In-Reply-To` and
        // `References` are on the service's allow-list
        // (<https://developers.cloudflare.com/email-service/reference/headers/>).
        let headers = js_sys::Object::new();
        for (name, value) in &extra {
            js_sys::Reflect::set(
                &headers,
                &JsValue::from_str(name),
                &JsValue::from_str(&header_value(value, HEADER_MAX_CHARS)),
            )
            .map_err(|_| MainFailure {
                code: None,
                message: format!("header {name} could not be set"),
                handed_over: false,
            })?;
        }
        builder = builder.headers(headers.unchecked_ref());
    }
    let attachments: Vec<worker::EmailAttachment> = email
        .calendar_parts()
        .map(|calendar| {
            // Each calendar part as an attachment (`text/calendar; method=…`): the binding's
            // structured form takes attachments, not extra body parts.
            worker::EmailAttachment::new_attachment(
                &calendar.file_name,
                &calendar.content_type(),
                calendar.text(),
            )
        })
        .collect();
    if !attachments.is_empty() {
        builder = builder.attachments(&attachments);
    }
    let message = builder.build();
    match binding.send_with_builder(&message).await {
        Ok(result) => Ok(result.message_id()),
        Err(js) => {
            let e = Error::from(js);
            Err(MainFailure {
                code: code_of(&e),
                message: e.to_string(),
                handed_over: true,
            })
        }
    }
}
