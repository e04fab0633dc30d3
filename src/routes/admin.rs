//! The operator API (`/admin/…`), JSON in and out, every route behind
//! `Authorization: Bearer <OPERATOR_TOKEN>` ([`crate::domain::admin::operator::check_bearer`], constant
//! time). An empty `OPERATOR_TOKEN` answers 503 `unavailable` (the API is off); a missing or wrong
//! token 401 `unauthorized`.
//!
//! - `GET /admin/health`: what `/health` keeps from the world — `{"status": "ok"|"degraded",
//!   "service", "environment": "production"|"development", "refused": [{"variable", "reason"}]}`,
//!   every feature the configuration turned off and why ([`crate::config::guard`]).
//! - `POST /admin/marketing/send`: one campaign to up to 200 recipients (body and reply in
//!   [`crate::domain::marketing::campaign`]). Refused with 503 when `UNSUBSCRIBE_SIGNING_KEY` is empty
//!   or `PUBLIC_BASE_URL` was refused by the production guard, and with 500 `misconfigured` when
//!   `PUBLIC_BASE_URL` is not `https://` (in development a loopback `http://` is allowed, see
//!   [`base_url_allows_marketing`](crate::domain::marketing::campaign::base_url_allows_marketing)).
//!   Each recipient is checked against D1 `suppressions` (suppressed → `skipped`, not enqueued),
//!   rendered with its own unsubscribe link and RFC 8058 headers, content-locked, then claimed in
//!   D1 and enqueued through [`crate::outbox::client::deliver`] (dedupe key
//!   `marketing:<campaign>:<address>`). The outbox checks suppressions, the daily cap and the
//!   per-person limit again at send time. Reply 202 with the counts. A storage failure midway
//!   answers 503: submitting the same request again is safe (already claimed recipients count as
//!   `duplicates`).
//! - `POST /admin/outbox/redrive` `{"dedupeKey": "…"}`: forwarded to the outbox
//!   (`POST https://outbox/redrive`); its status and JSON body are returned unchanged (200
//!   `{"status":"queued","dedupeKey"}`, 404 `not_found`, 409 `conflict` when the email is not a
//!   dead letter).
//! - `POST /admin/outbox/release` `{"dedupeKey", "decision": "release"|"reject", "reason", "by"?}`:
//!   the operator's one decision on an email the content lock blocked (`crate::domain::admin::release`),
//!   forwarded to the outbox (`POST https://outbox/release`): 200
//!   `{"dedupeKey","decision","status","by","atMs"}`, 404 `not_found`, 409 `conflict` when the
//!   email is not blocked or was already decided.
//! - `POST /admin/outbox/provider` `{"provider": "main"|"smtp", "action": "pause"|"resume",
//!   "minutes"?}`: pauses a route of the outbox (for `minutes`, default 60, at most a week) or
//!   resumes it now, e.g. once a refused sender or password is fixed; forwarded to the outbox
//!   (`POST https://outbox/pause`): 200 `{"provider","pausedUntilMs","released"}` (`released`:
//!   emails that waited only for a route, back in line), 400 naming the field.
//! - `GET /admin/outbox/email?dedupe_key=<key>`: one queued email as rendered (subject, text,
//!   HTML, extra headers such as `List-Unsubscribe`), e.g. to inspect one the content lock
//!   blocked; 404 when the outbox has no such key.
//! - `GET /admin/outbox[?status=<status>][&dedupe_key=<key>][&limit=<1–500>]`: the outbox's own
//!   view (`GET https://outbox/state`: queue items newest first, their attempts, counts by status,
//!   next client slot, provider pauses), unchanged; `truncated` says when more items match than
//!   were listed (e.g. `?status=dead` finds every dead letter to redrive).

use super::webhooks::read_limited;
use super::{config, Answer, AppError};
use crate::config::{Config, ConfigError, DB_BINDING, OUTBOX_BINDING, OUTBOX_NAME};
use crate::domain::admin::operator::{self, OperatorAuthError};
use crate::domain::email::content_lock::{self, ContentLock};
use crate::domain::email::Rank;
use crate::domain::marketing;
use crate::domain::marketing::campaign::{Rejected, SendReport, Skipped};
use crate::domain::render;
use crate::outbox::client::{deliver, Delivery};
use crate::platform::now_ms;
use crate::store::campaigns::{self, Recorded};
use serde_json::json;
use worker::{Env, Headers, Method, Request, RequestInit, Response};

/// Largest accepted `POST /admin/marketing/send` body, bytes (200 addresses of 254 characters
/// plus a 20,000-character text fit comfortably).
pub const MAX_SEND_BODY_BYTES: usize = 1 << 20;
/// Largest accepted `POST /admin/outbox/redrive` body, bytes.
pub const MAX_REDRIVE_BODY_BYTES: usize = 4_096;

/// The operator API's door: `Authorization: Bearer <OPERATOR_TOKEN>` (constant time), or else a
/// signed-in admin session cookie (`crate::routes::admin_pages`); a state-changing request on a
/// session must also carry the session's CSRF token in `x-csrf-token` (a header another site
/// cannot set without CORS). A wrong bearer token is refused even when a session is present.
pub(super) async fn authorize(req: &Request, env: &Env, cfg: &Config) -> Result<(), AppError> {
    let header = req.headers().get("authorization").ok().flatten();
    if header.is_none() {
        if let Some(session) = super::admin_pages::session_of(req, env).await? {
            let writes = !matches!(req.inner().method().as_str(), "GET" | "HEAD");
            let token = req
                .headers()
                .get("x-csrf-token")
                .ok()
                .flatten()
                .unwrap_or_default();
            if writes && !crate::domain::admin::session::csrf_ok(&session.token, &token) {
                return Err(AppError::Unauthorized(
                    "a signed-in session must send its CSRF token in x-csrf-token".into(),
                ));
            }
            return Ok(());
        }
    }
    operator::check_bearer(header.as_deref(), &cfg.operator_token).map_err(|e| match e {
        OperatorAuthError::NotConfigured => AppError::Unavailable(e.to_string()),
        _ => AppError::Unauthorized(e.to_string()),
    })
}

/// `POST /admin/marketing/send` (see the module docs).
pub async fn marketing_send(mut req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    authorize(&req, env, &cfg).await?;
    if let Some(r) = cfg.refusal("PUBLIC_BASE_URL") {
        return Err(AppError::Unavailable(format!(
            "PUBLIC_BASE_URL {}",
            r.reason
        )));
    }
    if cfg.unsubscribe_signing_key.is_empty() {
        return Err(AppError::Unavailable(
            "UNSUBSCRIBE_SIGNING_KEY is not set: marketing email cannot carry a working \
             unsubscribe link, so none is sent"
                .into(),
        ));
    }
    if !marketing::campaign::base_url_allows_marketing(&cfg.public_base_url) {
        return Err(AppError::Config(ConfigError::Invalid {
            name: "PUBLIC_BASE_URL",
            reason: format!(
                "{:?} is not an https:// URL; unsubscribe links must be HTTPS (RFC 8058)",
                cfg.public_base_url
            ),
        }));
    }
    let body = read_limited(&mut req, MAX_SEND_BODY_BYTES).await?;
    let request = marketing::campaign::parse_send_request(&body)?;
    let campaign = &request.campaign;
    let lock = ContentLock::from_config(&cfg.public_base_url, &cfg.internal_names);
    marketing::campaign::check_content(&lock, campaign)?;

    let db = env.d1(DB_BINDING)?;
    let now = now_ms();
    if campaigns::record(&db, campaign, now).await? == Recorded::Different {
        return Err(AppError::BadRequest {
            message: format!(
                "campaign {} was submitted before with another subject or text; use a new campaign id",
                campaign.id
            ),
            field: Some("campaign".into()),
        });
    }
    let addresses: Vec<&str> = request.recipients.iter().map(|a| a.as_str()).collect();
    let suppressed = campaigns::suppressions_of(&db, &addresses).await?;

    let key = cfg.unsubscribe_signing_key.as_bytes();
    let mut report = SendReport {
        campaign: campaign.id.to_string(),
        duplicates: request.repeated,
        rejected: request.rejected.clone(),
        ..SendReport::default()
    };
    for to in &request.recipients {
        let on_record = suppressed
            .get(&to.as_str().to_ascii_lowercase())
            .filter(|s| s.suppresses(Rank::Marketing));
        if let Some(s) = on_record {
            report.skipped.push(Skipped {
                email: to.to_string(),
                reason: format!("suppressed: {}", s.as_str()),
            });
            continue;
        }
        let email = render::marketing::render(
            campaign,
            to,
            &cfg.public_base_url,
            key,
            &cfg.branding.in_locale(
                campaign
                    .locale
                    .map_or(cfg.default_guest_locale, crate::domain::i18n::Lang::from),
            ),
        )
        .map_err(AppError::unavailable)?;
        if let Err(v) = lock.check(&email) {
            report.rejected.push(Rejected {
                email: to.to_string(),
                message: format!(
                    "the content lock refuses it ({})",
                    content_lock::describe(&v)
                ),
            });
            continue;
        }
        match deliver(env, &email, now).await {
            Ok(Delivery::Enqueued) => report.queued += 1,
            Ok(Delivery::AlreadyClaimed) => report.duplicates += 1,
            Err(e) => {
                return Err(AppError::Unavailable(format!(
                    "queueing the email to {to} failed after {} were queued ({e}); send the same \
                     request again: recipients already queued count as duplicates",
                    report.queued
                )))
            }
        }
    }
    Ok(Response::from_json(&report)?.with_status(202))
}

/// Sends one request (`https://outbox{path}`, a JSON `body` if any) to the outbox Durable Object
/// and returns its status and body text. Shared by the JSON API and the admin pages.
pub(super) async fn outbox_call(
    env: &Env,
    method: Method,
    path: &str,
    body: Option<String>,
) -> Result<(u16, String), AppError> {
    let stub = env
        .durable_object(OUTBOX_BINDING)?
        .get_by_name(OUTBOX_NAME)?;
    let mut init = RequestInit::new();
    init.with_method(method);
    if let Some(body) = body {
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        init.with_headers(headers).with_body(Some(body.into()));
    }
    let req = Request::new_with_init(&format!("https://outbox{path}"), &init)?;
    let mut resp = stub.fetch_with_request(req).await?;
    Ok((resp.status_code(), resp.text().await?))
}

/// Sends one request to the outbox Durable Object and returns its status and JSON body
/// unchanged. A non-JSON answer (not an outbox route) becomes 503.
async fn forward(env: &Env, method: Method, path: &str, body: Option<String>) -> Answer {
    let (status, text) = outbox_call(env, method, path, body).await?;
    if serde_json::from_str::<serde_json::Value>(&text).is_err() {
        let shown = &text[..text.floor_char_boundary(200)];
        return Err(AppError::Unavailable(format!(
            "the outbox answered {path} with {status} and no JSON: {shown}"
        )));
    }
    let mut out = Response::ok(text)?.with_status(status);
    let h = out.headers_mut();
    h.set("content-type", "application/json")?;
    h.set("cache-control", "no-store")?;
    Ok(out)
}

/// `POST /admin/outbox/redrive` (see the module docs).
pub async fn outbox_redrive(mut req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    authorize(&req, env, &cfg).await?;
    let body = read_limited(&mut req, MAX_REDRIVE_BODY_BYTES).await?;
    let key = operator::parse_redrive_request(&body)?;
    let forwarded = json!({ "dedupeKey": key.as_str() }).to_string();
    forward(env, Method::Post, "/redrive", Some(forwarded)).await
}

/// `POST /admin/outbox/release` (see the module docs).
pub async fn outbox_release(mut req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    authorize(&req, env, &cfg).await?;
    let body = read_limited(&mut req, MAX_REDRIVE_BODY_BYTES).await?;
    // Parsed here for a clear 400 before the outbox is woken; the outbox parses the same body.
    crate::domain::admin::release::parse_release_request(&body)?;
    let body = String::from_utf8_lossy(&body).into_owned();
    forward(env, Method::Post, "/release", Some(body)).await
}

/// `POST /admin/outbox/provider` (see the module docs).
pub async fn outbox_provider(mut req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    authorize(&req, env, &cfg).await?;
    let body = read_limited(&mut req, MAX_REDRIVE_BODY_BYTES).await?;
    let r = operator::parse_route_request(&body)?;
    let until_ms = r.pause_ms.map_or(0, |ms| now_ms() + ms);
    let forwarded = json!({ "provider": r.route, "untilMs": until_ms }).to_string();
    forward(env, Method::Post, "/pause", Some(forwarded)).await
}

/// `GET /admin/health` (see the module docs).
pub async fn health(req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    authorize(&req, env, &cfg).await?;
    Ok(Response::from_json(&json!({
        "status": if cfg.refused.is_empty() { "ok" } else { "degraded" },
        "service": "booking-email-engine",
        "environment": cfg.engine_env,
        "refused": cfg.refused,
    }))?)
}

/// `GET /admin/outbox` (see the module docs).
pub async fn outbox_state(req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    authorize(&req, env, &cfg).await?;
    // `?status=dead`, `?dedupe_key=…`, `?limit=…` pass through to the outbox's view.
    let query = req
        .url()?
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    forward(env, Method::Get, &format!("/state{query}"), None).await
}

/// `GET /admin/outbox/email?dedupe_key=…` (see the module docs).
pub async fn outbox_email(req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    authorize(&req, env, &cfg).await?;
    let url = req.url()?;
    let key = url
        .query_pairs()
        .find(|(k, _)| k == "dedupe_key")
        .map(|(_, v)| v.into_owned())
        .filter(|k| !k.trim().is_empty())
        .ok_or_else(|| AppError::BadRequest {
            message: "the query parameter dedupe_key is required".into(),
            field: Some("dedupe_key".into()),
        })?;
    let mut target = worker::Url::parse("https://outbox/email").map_err(AppError::unavailable)?;
    target.query_pairs_mut().append_pair("dedupe_key", &key);
    let path = format!("/email?{}", target.query().unwrap_or_default());
    forward(env, Method::Get, &path, None).await
}

/// `POST /admin/outbox/pace` `{"gapMs", "durationMs"}` or `{"stop": true}`: the owner's bounded
/// catch-up of urgent and booking email, forwarded to the outbox (`POST https://outbox/pace`): 200
/// `{"catchUp": {gapMs, untilMs} | null, "forecast"}`, 400 naming `gapMs` or `durationMs` when
/// outside `OUTBOX_CATCHUP_MIN_GAP_MS` / the normal pace / `OUTBOX_CATCHUP_MAX_MS`.
pub async fn outbox_pace(mut req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    authorize(&req, env, &cfg).await?;
    let body = read_limited(&mut req, MAX_REDRIVE_BODY_BYTES).await?;
    let parsed: serde_json::Value =
        crate::domain::basics::json::from_body(&body).map_err(|e| AppError::BadRequest {
            message: format!("body is not JSON: {e}"),
            field: None,
        })?;
    forward(env, Method::Post, "/pace", Some(parsed.to_string())).await
}

/// `GET /admin/compensations?group=waiting|failed|running|done` (default `waiting`): the refunds
/// of that group, the longest waiting first (at most 200), and every group's count:
/// `{"group", "counts": {"waiting": n, …}, "refunds": [{compensationId, bookingId, guestName,
/// guestEmail, trip, source, cause, status, round, amountMinor, currency, detail, error,
/// updatedAtMs, remindersSent}]}`; 400 naming `group`.
pub async fn compensations(req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    authorize(&req, env, &cfg).await?;
    let url = req.url()?;
    let group =
        match url.query_pairs().find(|(k, _)| k == "group") {
            None => crate::domain::payment::compensation::RefundGroup::Waiting,
            Some((_, g)) => crate::domain::payment::compensation::RefundGroup::parse(&g)
                .ok_or_else(|| AppError::BadRequest {
                    message: format!("group {g:?} is not one of waiting, failed, running, done"),
                    field: Some("group".into()),
                })?,
        };
    let db = env.d1(DB_BINDING)?;
    let counts = crate::store::refunds::counts(&db).await?;
    let rows = crate::store::refunds::in_group(&db, group, 200).await?;
    let refunds: Vec<serde_json::Value> = rows
        .into_iter()
        .map(|r| {
            json!({
                "compensationId": r.compensation_id, "bookingId": r.booking_id,
                "guestName": r.guest_name, "guestEmail": r.guest_email, "trip": r.trip,
                "source": r.source, "cause": r.cause, "status": r.status, "round": r.round,
                "amountMinor": r.amount_minor, "currency": r.currency, "detail": r.detail,
                "error": r.error, "updatedAtMs": r.updated_at_ms, "remindersSent": r.reminders_sent,
                "paymentIntent": r.payment_intent, "proof": r.proof,
                "refundNow": !(r.proof.is_some() && r.payment_intent.is_none()),
            })
        })
        .collect();
    let counts: serde_json::Map<String, serde_json::Value> = counts
        .into_iter()
        .map(|(g, n)| (g.as_str().to_string(), json!(n)))
        .collect();
    Ok(Response::from_json(
        &json!({"group": group.as_str(), "counts": counts, "refunds": refunds}),
    )?)
}

/// `POST /admin/compensations/act` `{"compensationId", "action": "refund_now" | "refund_handled",
/// "by"?}`: the owner's decision on a waiting refund through the alert links' own code path and
/// claim (a refund is made at most once, of the payment Stripe's record proved the
/// compensation's): 200 `{"compensationId", "outcome": "refunded" | "handled" | "refused" |
/// "not_proven" | "try_again" | "already_decided", "detail"}`; 404 for an unknown
/// compensation; 400 naming the field.
pub async fn compensations_act(mut req: Request, env: &Env) -> Answer {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Act {
        compensation_id: String,
        action: String,
        #[serde(default)]
        by: Option<String>,
    }
    let cfg = config(env)?;
    authorize(&req, env, &cfg).await?;
    let body = read_limited(&mut req, MAX_REDRIVE_BODY_BYTES).await?;
    let act: Act =
        crate::domain::basics::json::from_body(&body).map_err(|e| AppError::BadRequest {
            message: format!("expected {{\"compensationId\", \"action\"}}: {e}"),
            field: None,
        })?;
    let action = crate::domain::payment::action_token::OwnerAction::parse(&act.action)
        .filter(|a| a.is_refund())
        .ok_or_else(|| AppError::BadRequest {
            message: "action must be refund_now or refund_handled".into(),
            field: Some("action".into()),
        })?;
    let db = env.d1(DB_BINDING)?;
    let id = act.compensation_id.trim();
    if crate::store::compensation::get(&db, id).await?.is_none() {
        return Err(AppError::NotFound);
    }
    let by = act
        .by
        .map(|b| crate::domain::basics::text::header_value(&b, 60))
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| "api".into());
    // One claimant per request (the step's claim lets the same claimant in again while it runs).
    let claimant = format!("operator:{by}:{}", crate::platform::random_u64());
    use crate::journey::compensation::{owner_handled, owner_refund, OwnerRefund};
    let outcome = if action == crate::domain::payment::action_token::OwnerAction::RefundNow {
        owner_refund(env, id, &claimant).await?
    } else {
        owner_handled(env, id, &claimant).await?
    };
    let (name, detail) = match outcome {
        OwnerRefund::Refunded(o) => ("refunded", o.detail),
        OwnerRefund::Handled => ("handled", String::new()),
        OwnerRefund::Refused(why) => ("refused", why),
        OwnerRefund::NotProven(why) => ("not_proven", why),
        OwnerRefund::TryAgain(why) => ("try_again", why),
        OwnerRefund::AlreadyDecided(why) => ("already_decided", why),
    };
    Ok(Response::from_json(
        &json!({"compensationId": id, "outcome": name, "detail": detail}),
    )?)
}
