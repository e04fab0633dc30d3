//! Resend as the main provider (`MAIN_PROVIDER = "resend"`): `POST {RESEND_BASE_URL}/emails` with
//! the bearer key and the dedupe key as `Idempotency-Key` (<https://resend.com/docs/api-reference/emails/send-email>,
//! <https://resend.com/docs/dashboard/emails/idempotency-keys>). Building the request and
//! reading the answer are pure (`crate::domain::outbox::resend`); this file only does the `fetch`.
//!
//! A lost answer (timeout, broken connection) is reported as `maybe_handed_over`: Resend may have
//! taken the email. The outbox retries it with the same key and payload, which Resend answers with
//! the first result instead of sending again (see `crate::domain::outbox::status_after_success`).

use super::SendFailure;
use crate::domain::marketing::Suppression;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::outbox::resend::{self, IDEMPOTENCY_HEADER};
use crate::domain::outbox::ProviderErrorClass;
use crate::domain::render::Branding;
use futures::future::{select, Either};
use worker::{AbortController, Delay, Fetch, Headers, Method, Request, RequestInit};

/// Longest wait for Resend's answer, ms. After it the request is aborted and the outcome is unknown.
pub const TIMEOUT_MS: u64 = 15_000;

/// Sends one email; `Ok` carries Resend's email id.
pub async fn send(
    api_key: &str,
    base_url: &str,
    email: &OutgoingEmail,
    branding: &Branding,
) -> Result<String, SendFailure> {
    let unknown = |message: String| SendFailure {
        class: ProviderErrorClass::Transient,
        message,
        maybe_handed_over: true,
        ..SendFailure::default()
    };
    let before_send = |message: String| SendFailure {
        class: ProviderErrorClass::Transient,
        message,
        ..SendFailure::default()
    };
    let from = resend::from_field(&branding.brand, branding.from.as_str());
    let mut body = resend::request_body(email, &from, &email.headers_to_send());
    if let Some(reply_to) = &email.reply_to {
        // Resend's `reply_to` field (a `Reply-To` header would be refused as a duplicate of it).
        body["reply_to"] = resend::from_field(&branding.brand, reply_to).into();
    }
    let body = body.to_string();
    let headers = Headers::new();
    let set = |name: &str, value: &str| {
        headers
            .set(name, value)
            .map_err(|e| before_send(format!("request header {name}: {e}")))
    };
    set("Authorization", &format!("Bearer {api_key}"))?;
    set("Content-Type", "application/json")?;
    set(
        IDEMPOTENCY_HEADER,
        &resend::idempotency_key(email.dedupe_key.as_str()),
    )?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers.clone())
        .with_body(Some(body.into()));
    let url = format!("{base_url}/emails");
    let request = Request::new_with_init(&url, &init)
        .map_err(|e| before_send(format!("request to {url}: {e}")))?;
    let controller = AbortController::default();
    let signal = controller.signal();
    let fetcher = Fetch::Request(request);
    let fetch = Box::pin(fetcher.send_with_signal(&signal));
    let timer = Box::pin(Delay::from(std::time::Duration::from_millis(TIMEOUT_MS)));
    let mut response = match select(fetch, timer).await {
        Either::Left((Ok(r), _)) => r,
        // The request may have reached Resend: unknown outcome, never a refusal.
        Either::Left((Err(e), _)) => return Err(unknown(format!("POST {url}: {e}"))),
        Either::Right(_) => {
            controller.abort();
            return Err(unknown(format!(
                "POST {url}: no answer within {TIMEOUT_MS} ms"
            )));
        }
    };
    let status = response.status_code();
    // An unreadable body is classified by the status alone; the read error is kept in the message.
    let text = match response.text().await {
        Ok(t) => t,
        Err(e) => format!("(body unreadable: {e})"),
    };
    if (200..300).contains(&status) {
        // A 2xx whose body we cannot read: retrying with the same key returns the first result.
        return resend::parse_success(&text)
            .map_err(|e| unknown(format!("Resend answered {status} without an id: {e}")));
    }
    let retry_after = response.headers().get("retry-after").ok().flatten();
    let failure = resend::classify(status, &text, retry_after.as_deref());
    Err(SendFailure {
        class: failure.class,
        message: format!("{status} {}", failure.describe()),
        maybe_handed_over: false,
        retry_after_ms: failure.retry_after_ms,
        // An address Resend calls invalid cannot receive anything we send.
        suppress: (failure.name.as_deref() == Some("invalid_to_address"))
            .then_some(Suppression::HardBounce),
        fault: Some(failure.name.clone().unwrap_or_else(|| status.to_string())),
    })
}
