//! HTTP entry: routes requests to handlers. Every handler answers [`Answer`]; its [`AppError`]
//! becomes a response in one place, the Worker's `fetch` in `lib.rs` (one JSON shape,
//! [`crate::platform::ErrorBody`], or an HTML [`crate::platform::Page`]).

pub mod actions;
pub mod admin;
pub mod resend;
pub mod unsubscribe;
pub mod webhooks;

pub(crate) use crate::platform::config;
pub use crate::platform::AppError;
use crate::sources;
use serde_json::json;
use worker::{Env, Method, Request, Response};

/// What every route returns: a response, or the error `lib.rs` turns into one
/// ([`AppError::into_response`]).
pub type Answer = Result<Response, AppError>;

/// Entry point for every HTTP request.
pub async fn handle(req: Request, env: Env) -> Answer {
    let path = req.path();
    // The supplier webhooks: one table (`sources::WEBHOOKS`), one handler.
    if let Some(hook) = path.strip_prefix("/webhooks/").and_then(sources::webhook) {
        return match req.method() {
            Method::Post => webhooks::receive(hook, req, &env).await,
            _ => Err(AppError::MethodNotAllowed("POST")),
        };
    }
    match (req.method(), path.as_str()) {
        (Method::Get, "/") | (Method::Get, "/health") => Ok(Response::from_json(
            &json!({"status": "ok", "service": "booking-email-engine"}),
        )?),
        (Method::Post, "/webhooks/resend") => resend::resend(req, &env).await,
        (_, "/webhooks/resend") => Err(AppError::MethodNotAllowed("POST")),
        (Method::Post, "/admin/marketing/send") => admin::marketing_send(req, &env).await,
        (Method::Post, "/admin/outbox/redrive") => admin::outbox_redrive(req, &env).await,
        (Method::Post, "/admin/outbox/release") => admin::outbox_release(req, &env).await,
        (Method::Get, "/admin/outbox") => admin::outbox_state(req, &env).await,
        (Method::Get, "/admin/outbox/email") => admin::outbox_email(req, &env).await,
        (_, "/admin/marketing/send" | "/admin/outbox/redrive" | "/admin/outbox/release") => {
            Err(AppError::MethodNotAllowed("POST"))
        }
        (_, "/admin/outbox" | "/admin/outbox/email") => Err(AppError::MethodNotAllowed("GET")),
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
            Err(AppError::MethodNotAllowed("GET, HEAD, POST"))
        }
        (Method::Get, p) if p.starts_with("/actions/") => {
            let token = p.trim_start_matches("/actions/").to_string();
            actions::confirm(req, &env, &token).await
        }
        (Method::Post, p) if p.starts_with("/actions/") => {
            let token = p.trim_start_matches("/actions/").to_string();
            actions::act(req, &env, &token).await
        }
        _ => Err(AppError::NotFound),
    }
}
