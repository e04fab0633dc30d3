//! HTTP entry: routes requests to handlers. Every handler answers [`Answer`]; its [`AppError`]
//! becomes a response in one place, the Worker's `fetch` in `lib.rs` (one JSON shape,
//! [`crate::platform::ErrorBody`], or an HTML [`crate::platform::Page`]).

pub mod actions;
pub mod admin;
pub mod admin_pages;
pub mod resend;
pub mod unsubscribe;
pub mod webhook_admin;
pub mod webhooks;

pub(crate) use crate::platform::config;
pub use crate::platform::AppError;
use crate::sources;
use serde_json::json;
use worker::{Env, Method, Request, Response};

/// What every route returns: a response, or the error `lib.rs` turns into one
/// ([`AppError::into_response`]).
pub type Answer = Result<Response, AppError>;

/// The methods each path answers (the `Allow` header of a 405), `None` for an unknown path.
/// HEAD is allowed where GET is (the runtime drops the body).
pub fn allowed_methods(path: &str) -> Option<&'static str> {
    if path
        .strip_prefix("/webhooks/")
        .and_then(sources::webhook)
        .is_some()
    {
        return Some("POST");
    }
    match path {
        "/" | "/health" => Some("GET, HEAD"),
        "/webhooks/resend"
        | "/admin/marketing/send"
        | "/admin/outbox/redrive"
        | "/admin/outbox/release"
        | "/admin/outbox/provider"
        | "/admin/outbox/pace"
        | "/admin/compensations/act"
        | "/admin/webhooks/redrive" => Some("POST"),
        "/admin/outbox"
        | "/admin/outbox/email"
        | "/admin/webhooks/deliveries"
        | "/admin/compensations" => Some("GET"),
        "/admin"
        | "/admin/"
        | "/admin/bookings"
        | "/admin/booking"
        | "/admin/email"
        | "/admin/email/html"
        | "/admin/queue"
        | "/admin/holds"
        | "/admin/events"
        | "/admin/events/body"
        | "/admin/suppressions"
        | "/admin/refunds"
        | "/admin/deliveries"
        | "/admin/delivery"
        | "/admin/conversations" => Some("GET, HEAD"),
        "/admin/login" => Some("GET, HEAD, POST"),
        "/admin/logout"
        | "/admin/queue/redrive"
        | "/admin/queue/provider"
        | "/admin/holds/act"
        | "/admin/suppressions/add"
        | "/admin/suppressions/remove"
        | "/admin/queue/pace"
        | "/admin/refunds/act"
        | "/admin/booking/answer"
        | "/admin/booking/done"
        | "/admin/deliveries/redrive" => Some("POST"),
        "/admin/webhooks/subscribers" => Some("GET, HEAD, POST"),
        p if p.starts_with("/admin/webhooks/subscribers/") => Some("POST"),
        p if p.starts_with("/unsubscribe/") => Some("GET, HEAD, POST"),
        p if p.starts_with("/actions/") => Some("GET, HEAD, POST"),
        _ => None,
    }
}

/// Entry point for every HTTP request. The method is read as the client sent it: workers-rs maps
/// any method it does not know to GET, so a method is matched on its exact name and anything not
/// in [`allowed_methods`] answers 405 with `Allow`.
pub async fn handle(req: Request, env: Env) -> Answer {
    let path = req.path();
    let Some(allow) = allowed_methods(&path) else {
        return Err(AppError::NotFound);
    };
    let method = match req.inner().method().as_str() {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        _ => return Err(AppError::MethodNotAllowed(allow)),
    };
    if !allow.split(", ").any(|m| m == method.as_ref()) {
        return Err(AppError::MethodNotAllowed(allow));
    }
    // The supplier webhooks: one table (`sources::WEBHOOKS`), one handler.
    if let Some(hook) = path.strip_prefix("/webhooks/").and_then(sources::webhook) {
        return webhooks::receive(hook, req, &env).await;
    }
    let answer = route(&path, method, req, &env).await;
    if admin_pages::is_page_path(&path) {
        // The admin's pages answer their errors as pages, not as the JSON error shape.
        return admin_pages::as_page(answer);
    }
    answer
}

/// The route of a path whose method was checked.
async fn route(path: &str, method: Method, req: Request, env: &Env) -> Answer {
    match path {
        "/" | "/health" => health(env),
        "/webhooks/resend" => resend::resend(req, env).await,
        "/admin/marketing/send" => admin::marketing_send(req, env).await,
        "/admin/outbox/redrive" => admin::outbox_redrive(req, env).await,
        "/admin/outbox/release" => admin::outbox_release(req, env).await,
        "/admin/outbox/provider" => admin::outbox_provider(req, env).await,
        "/admin/outbox/pace" => admin::outbox_pace(req, env).await,
        "/admin/compensations" => admin::compensations(req, env).await,
        "/admin/compensations/act" => admin::compensations_act(req, env).await,
        "/admin/outbox" => admin::outbox_state(req, env).await,
        "/admin/outbox/email" => admin::outbox_email(req, env).await,
        "/admin/webhooks/subscribers" => match method {
            Method::Post => webhook_admin::create_subscriber(req, env).await,
            _ => webhook_admin::list_subscribers(req, env).await,
        },
        "/admin/webhooks/deliveries" => webhook_admin::deliveries(req, env).await,
        "/admin" | "/admin/" => admin_pages::overview(req, env).await,
        "/admin/login" => match method {
            Method::Post => admin_pages::login(req, env).await,
            _ => admin_pages::login_form(req, env).await,
        },
        "/admin/logout" => admin_pages::logout(req, env).await,
        "/admin/bookings" => admin_pages::bookings(req, env).await,
        "/admin/booking" => admin_pages::booking(req, env).await,
        "/admin/booking/answer" => admin_pages::booking_answer(req, env).await,
        "/admin/booking/done" => admin_pages::booking_done(req, env).await,
        "/admin/conversations" => admin_pages::conversations(req, env).await,
        "/admin/email" => admin_pages::email(req, env).await,
        "/admin/email/html" => admin_pages::email_html(req, env).await,
        "/admin/queue" => admin_pages::queue(req, env).await,
        "/admin/queue/redrive" => admin_pages::queue_redrive(req, env).await,
        "/admin/queue/provider" => admin_pages::queue_provider(req, env).await,
        "/admin/holds" => admin_pages::holds(req, env).await,
        "/admin/holds/act" => admin_pages::holds_act(req, env).await,
        "/admin/events" => admin_pages::events(req, env).await,
        "/admin/events/body" => admin_pages::event_body(req, env).await,
        "/admin/suppressions" => admin_pages::suppressions(req, env).await,
        "/admin/suppressions/add" => admin_pages::suppressions_add(req, env).await,
        "/admin/suppressions/remove" => admin_pages::suppressions_remove(req, env).await,
        "/admin/queue/pace" => admin_pages::queue_pace(req, env).await,
        "/admin/refunds" => admin_pages::refunds(req, env).await,
        "/admin/refunds/act" => admin_pages::refunds_act(req, env).await,
        "/admin/deliveries" => admin_pages::deliveries(req, env).await,
        "/admin/delivery" => admin_pages::delivery(req, env).await,
        "/admin/deliveries/redrive" => admin_pages::deliveries_redrive(req, env).await,
        "/admin/webhooks/redrive" => webhook_admin::redrive(req, env).await,
        p if p.starts_with("/admin/webhooks/subscribers/") => {
            let rest = p["/admin/webhooks/subscribers/".len()..].to_string();
            webhook_admin::subscriber_state(req, env, &rest).await
        }
        p if p.starts_with("/unsubscribe/") => {
            let token = p.trim_start_matches("/unsubscribe/").to_string();
            match method {
                Method::Post => unsubscribe::unsubscribe(req, env, &token).await,
                _ => unsubscribe::confirm(req, env, &token).await,
            }
        }
        p if p.starts_with("/actions/") => {
            let token = p.trim_start_matches("/actions/").to_string();
            match method {
                Method::Post => actions::act(req, env, &token).await,
                _ => actions::confirm(req, env, &token).await,
            }
        }
        _ => Err(AppError::NotFound),
    }
}

/// `GET /health`: `200 {"status":"ok","service":…}` when every configured feature runs; `503
/// {"status":"refused","service":…,"refused":[{"variable","reason"}]}` when the configuration
/// turned features off (the production guard: a published example secret, a key shorter than 32
/// bytes, SMTP credentials without TLS; a refused partner list), naming each variable — the
/// rest of the engine runs. A configuration that cannot be parsed at all answers 500 naming the
/// variable.
fn health(env: &Env) -> Answer {
    let cfg = config(env)?;
    if cfg.refused.is_empty() {
        return Ok(Response::from_json(
            &json!({"status": "ok", "service": "booking-email-engine"}),
        )?);
    }
    Ok(Response::from_json(&json!({
        "status": "refused",
        "service": "booking-email-engine",
        "refused": cfg.refused,
    }))?
    .with_status(503))
}
