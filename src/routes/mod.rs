//! HTTP entry: routes requests to handlers and turns every error into one JSON shape
//! `{"error": <code>, "message": <text>, "field"?: <json path>}` in exactly one place.

pub mod actions;
pub mod admin;
pub mod resend;
pub mod unsubscribe;
pub mod webhooks;

use crate::config::ConfigError;
pub(crate) use crate::platform::config;
use serde_json::json;
use worker::{Env, Method, Request, Response, Result};

/// An error a route answers with. Maps to a status code in [`ApiError::into_response`].
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Unauthorized(String),
    #[error("{message}")]
    BadRequest {
        message: String,
        field: Option<String>,
    },
    #[error("body is {size} bytes; the limit is {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("not found")]
    NotFound,
    /// The path exists; the method does not. Carries the allowed methods for the `Allow` header
    /// (RFC 9110 §15.5.6), e.g. `"POST"`.
    #[error("method not allowed; this path accepts {0}")]
    MethodNotAllowed(&'static str),
    #[error("engine misconfigured: {0}")]
    Config(#[from] ConfigError),
    /// Storage or platform failure: the supplier should retry (5xx).
    #[error("temporary failure: {0}")]
    Unavailable(String),
}

impl From<worker::Error> for ApiError {
    fn from(e: worker::Error) -> Self {
        ApiError::Unavailable(e.to_string())
    }
}

impl ApiError {
    fn into_response(self) -> Result<Response> {
        let (status, code) = match &self {
            ApiError::Unauthorized(_) => (401, "unauthorized"),
            ApiError::BadRequest { .. } => (400, "invalid_payload"),
            ApiError::TooLarge { .. } => (413, "payload_too_large"),
            ApiError::NotFound => (404, "not_found"),
            ApiError::MethodNotAllowed(_) => (405, "method_not_allowed"),
            ApiError::Config(_) => (500, "misconfigured"),
            ApiError::Unavailable(_) => (503, "unavailable"),
        };
        let mut body = json!({ "error": code, "message": self.to_string() });
        if let ApiError::BadRequest {
            field: Some(field), ..
        } = &self
        {
            body["field"] = json!(field);
        }
        if status >= 500 {
            worker::console_error!("{}: {}", code, self);
        }
        let response = Response::from_json(&body)?.with_status(status);
        if let ApiError::MethodNotAllowed(allow) = &self {
            response.headers().set("allow", allow)?;
        }
        Ok(response)
    }
}

/// Entry point for every HTTP request.
pub async fn handle(req: Request, env: Env) -> Result<Response> {
    let path = req.path();
    let result = match (req.method(), path.as_str()) {
        (Method::Get, "/") | (Method::Get, "/health") => {
            return Response::from_json(&json!({"status": "ok", "service": "booking-email-engine"}))
        }
        (Method::Post, "/webhooks/liteapi") => webhooks::liteapi(req, &env).await,
        (Method::Post, "/webhooks/duffel") => webhooks::duffel(req, &env).await,
        (Method::Post, "/webhooks/generic") => webhooks::generic(req, &env).await,
        (Method::Post, "/webhooks/stripe") => webhooks::stripe(req, &env).await,
        (
            _,
            "/webhooks/liteapi" | "/webhooks/duffel" | "/webhooks/generic" | "/webhooks/stripe",
        ) => Err(ApiError::MethodNotAllowed("POST")),
        (Method::Post, "/webhooks/resend") => resend::resend(req, &env).await,
        (_, "/webhooks/resend") => Err(ApiError::MethodNotAllowed("POST")),
        (Method::Post, "/admin/marketing/send") => admin::marketing_send(req, &env).await,
        (Method::Post, "/admin/outbox/redrive") => admin::outbox_redrive(req, &env).await,
        (Method::Get, "/admin/outbox") => admin::outbox_state(req, &env).await,
        (Method::Get, "/admin/outbox/email") => admin::outbox_email(req, &env).await,
        (_, "/admin/marketing/send" | "/admin/outbox/redrive") => {
            Err(ApiError::MethodNotAllowed("POST"))
        }
        (_, "/admin/outbox" | "/admin/outbox/email") => Err(ApiError::MethodNotAllowed("GET")),
        // HEAD answers like GET (the runtime drops the body): link checkers see a live link.
        (Method::Get | Method::Head, p) if p.starts_with("/unsubscribe/") => {
            let token = p.trim_start_matches("/unsubscribe/").to_string();
            unsubscribe::confirm(req, &env, &token).await
        }
        (Method::Post, p) if p.starts_with("/unsubscribe/") => {
            let token = p.trim_start_matches("/unsubscribe/").to_string();
            unsubscribe::unsubscribe(req, &env, &token).await
        }
        (_, p) if p.starts_with("/unsubscribe/") => {
            Err(ApiError::MethodNotAllowed("GET, HEAD, POST"))
        }
        (Method::Get, p) if p.starts_with("/actions/") => {
            let token = p.trim_start_matches("/actions/").to_string();
            actions::confirm(req, &env, &token).await
        }
        (Method::Post, p) if p.starts_with("/actions/") => {
            let token = p.trim_start_matches("/actions/").to_string();
            actions::act(req, &env, &token).await
        }
        _ => Err(ApiError::NotFound),
    };
    match result {
        Ok(resp) => Ok(resp),
        Err(e) => e.into_response(),
    }
}
