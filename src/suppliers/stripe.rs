//! Stripe refunds (<https://docs.stripe.com/api/refunds/create>,
//! <https://docs.stripe.com/api/refunds/list>): the one payment-processor write the engine makes,
//! for the compensation of a paid booking the supplier failed (`crate::journey::compensation`),
//! and the two reads that prove the payment first (`crate::domain::payment::payment_proof`):
//! [`payment_intent`] (`GET /v1/payment_intents/{id}?expand[]=latest_charge`,
//! <https://docs.stripe.com/api/payment_intents/retrieve>) and [`checkout_sessions`]
//! (`GET /v1/checkout/sessions?payment_intent=…`,
//! <https://docs.stripe.com/api/checkout/sessions/list>).
//!
//! `POST {STRIPE_API_BASE_URL}/v1/refunds` (form-encoded `payment_intent`, `amount` — always
//! named, never a full refund by omission —, `reason=requested_by_customer`,
//! `metadata[compensation_id]`) with
//! `Authorization: Bearer {STRIPE_SECRET_KEY}` and an `Idempotency-Key`
//! (<https://docs.stripe.com/api/idempotent_requests>): every retry of one refund round sends the
//! same key, so Stripe creates at most one refund for it. Answers are parsed by
//! [`crate::sources::stripe`] (pure); classified by
//! [`crate::domain::payment::compensation::classify_refund_error`].

use crate::config::Config;
use crate::domain::event::RefundUpdate;
use crate::sources::stripe as parse;
use worker::Method;

/// Per-request bound, ms: an answer later than this counts as no answer (retried with the same
/// key, so a refund Stripe did make is returned, not made again).
pub const TIMEOUT_MS: u64 = 20_000;

/// Most bytes of a Stripe answer read (a list of 100 refunds is well under it).
const MAX_ANSWER_BYTES: usize = 4 << 20;

/// A refund request that did not create a refund.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundError {
    /// HTTP status; `None` when there was no answer (network error, timeout).
    pub status: Option<u16>,
    /// Stripe's `error.code` (e.g. `charge_already_refunded`, `expired_card`), when given.
    pub code: Option<String>,
    /// One line for the owner and the step record (bounded).
    pub message: String,
}

impl std::fmt::Display for RefundError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(s) => write!(f, "Stripe answered {s}: {}", self.message),
            None => write!(f, "Stripe did not answer: {}", self.message),
        }
    }
}

/// Sends one request with the timeout; `(status, body)` of any answer.
async fn call(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> Result<(u16, String), RefundError> {
    crate::platform::fetch_within(
        method,
        url,
        headers,
        body,
        TIMEOUT_MS,
        true,
        MAX_ANSWER_BYTES,
    )
    .await
    .map(|a| (a.status, a.body))
    .map_err(|e| RefundError {
        status: None,
        code: None,
        message: e.to_string(),
    })
}

fn error_of(status: u16, body: &str) -> RefundError {
    let (code, message) = parse::api_error(body.as_bytes());
    RefundError {
        status: Some(status),
        code,
        message,
    }
}

fn not_configured() -> RefundError {
    RefundError {
        status: Some(401),
        code: Some("not_configured".into()),
        message: "STRIPE_SECRET_KEY is not set on this engine".into(),
    }
}

/// `GET {base}{path}` with the query pairs and the secret key; the body of a 200 answer.
async fn read(
    cfg: &Config,
    path: &[&str],
    query: &[(&str, &str)],
) -> Result<(u16, String), RefundError> {
    if cfg.stripe_secret_key.is_empty() {
        return Err(not_configured());
    }
    let mut url = url::Url::parse(&cfg.stripe_api_base_url).map_err(|e| RefundError {
        status: None,
        code: None,
        message: format!("STRIPE_API_BASE_URL: {e}"),
    })?;
    // Each id is one path segment, percent-encoded: nothing a supplier named can change the path.
    url.path_segments_mut()
        .map_err(|_| RefundError {
            status: None,
            code: None,
            message: "STRIPE_API_BASE_URL cannot take a path".into(),
        })?
        .pop_if_empty()
        .extend(path);
    url.query_pairs_mut().extend_pairs(query);
    let bearer = format!("Bearer {}", cfg.stripe_secret_key);
    call(
        Method::Get,
        url.as_str(),
        &[("Authorization", &bearer)],
        None,
    )
    .await
}

fn unreadable(what: &str, e: impl std::fmt::Display) -> RefundError {
    // A 200 we cannot read is no verdict: asked again later.
    RefundError {
        status: None,
        code: None,
        message: format!("Stripe's {what} is unreadable: {e}"),
    }
}

/// Stripe's PaymentIntent `id` with its latest charge expanded; `Ok(None)` when Stripe has no
/// such intent (404). Any other answer, or none, is an error (asked again later).
pub async fn payment_intent(
    cfg: &Config,
    id: &str,
) -> Result<Option<crate::domain::payment::payment_proof::StripeIntent>, RefundError> {
    let (status, body) = read(
        cfg,
        &["v1", "payment_intents", id],
        &[("expand[]", "latest_charge")],
    )
    .await?;
    match status {
        200 => parse::payment_intent_answer(body.as_bytes())
            .map(Some)
            .map_err(|e| unreadable("payment intent", e)),
        404 => Ok(None),
        _ => Err(error_of(status, &body)),
    }
}

/// The Checkout Sessions Stripe lists for payment intent `id` (at most 10; one created it).
pub async fn checkout_sessions(
    cfg: &Config,
    id: &str,
) -> Result<Vec<crate::domain::payment::payment_proof::StripeSession>, RefundError> {
    let (status, body) = read(
        cfg,
        &["v1", "checkout", "sessions"],
        &[("payment_intent", id), ("limit", "10")],
    )
    .await?;
    if status != 200 {
        return Err(error_of(status, &body));
    }
    parse::session_list(body.as_bytes()).map_err(|e| unreadable("session list", e))
}

/// Creates a refund of `amount_minor` (minor units, named in every request) of
/// `payment_intent` under `idempotency_key`. `Ok` is Stripe's Refund (its `status`:
/// `succeeded`, `pending`, `requires_action`, …); an error is any other answer or none.
pub async fn create_refund(
    cfg: &Config,
    payment_intent: &str,
    amount_minor: i64,
    compensation_id: &str,
    idempotency_key: &str,
) -> Result<RefundUpdate, RefundError> {
    if cfg.stripe_secret_key.is_empty() {
        return Err(not_configured());
    }
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("payment_intent", payment_intent);
    form.append_pair("amount", &amount_minor.to_string());
    form.append_pair("reason", "requested_by_customer");
    form.append_pair("metadata[compensation_id]", compensation_id);
    let bearer = format!("Bearer {}", cfg.stripe_secret_key);
    let url = format!("{}/v1/refunds", cfg.stripe_api_base_url);
    let (status, body) = call(
        Method::Post,
        &url,
        &[
            ("Authorization", &bearer),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Idempotency-Key", idempotency_key),
        ],
        Some(form.finish()),
    )
    .await?;
    if status != 200 {
        return Err(error_of(status, &body));
    }
    parse::refund_answer(body.as_bytes()).map_err(|e| RefundError {
        // A 200 we cannot read: the refund may exist; retrying with the same key returns it.
        status: None,
        code: None,
        message: format!("Stripe answered 200 with an unreadable refund: {e}"),
    })
}

/// The refunds Stripe already has for `payment_intent` (`GET /v1/refunds?payment_intent=…`,
/// first 100): looked at before a new refund round so a refund made by an earlier round (whose
/// answer was lost, or saved by Stripe as an error) is never made again.
pub async fn list_refunds(
    cfg: &Config,
    payment_intent: &str,
) -> Result<Vec<RefundUpdate>, RefundError> {
    let (status, body) = read(
        cfg,
        &["v1", "refunds"],
        &[("payment_intent", payment_intent), ("limit", "100")],
    )
    .await?;
    if status != 200 {
        return Err(error_of(status, &body));
    }
    parse::refund_list(body.as_bytes()).map_err(|e| RefundError {
        status: Some(status),
        code: None,
        message: format!("refund list unreadable: {e}"),
    })
}
