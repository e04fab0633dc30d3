//! The operator API of outbound webhooks (`/admin/webhooks/…`, JSON, behind the operator bearer
//! token like every `/admin/` route):
//!
//! - `POST /admin/webhooks/subscribers` `{"url", "eventTypes"?: ["booking.confirmed", …] (absent
//!   or `["*"]` = all), "description"?}` → 201 `{"subscriberId", "url", "eventTypes", "secret",
//!   "enabled": true}`. The `whsec_` secret is shown only here. At most 500 subscribers (409).
//!   The URL must be `https://` to a public host (`http://` only to loopback when
//!   `WEBHOOK_ALLOW_HTTP_LOOPBACK` is true); 400 names the problem (`url`, `eventTypes`).
//! - `GET /admin/webhooks/subscribers` → `{"subscribers": [{subscriberId, url, eventTypes,
//!   description, enabled, disabledReason, disabledAtMs, createdAtMs}]}`.
//! - `POST /admin/webhooks/subscribers/<id>/enable` | `/disable` `{"reason"?}` → 200 the
//!   subscriber; 404 for an unknown id.
//! - `GET /admin/webhooks/deliveries[?status=pending|delivered|dead|cancelled][&subscriber=<id>]
//!   [&event=<evt_…>][&before=<ms>][&limit=1–200]` → `{"deliveries": [...]}` newest first (the next
//!   page: `before` = the last row's `createdAtMs`); with
//!   `?delivery=<id>` → `{"delivery": {...}, "attempts": [{attempt, atMs, statusCode, outcome,
//!   durationMs, error, responseExcerpt}]}` (404 when unknown).
//! - `POST /admin/webhooks/redrive` with exactly one of `{"deliveryId"}`, `{"subscriberId"}`,
//!   `{"fromMs", "toMs"}` (deliveries created in `[fromMs, toMs)`, ms UTC): the selected **dead**
//!   deliveries of enabled subscribers get a fresh attempt budget and a new queue message (same
//!   event id and body, signed anew). 200 `{"redriven": [ids], "count"}`. A single delivery that
//!   is not dead is refused with 409 naming its state (a delivered event is never redriven); an
//!   unknown one 404.

use super::webhooks::read_limited;
use super::{config, Answer, AppError};
use crate::config::DB_BINDING;
use crate::domain::webhooks::{check_url, new_secret, parse_event_types, stored_types};
use crate::platform::now_ms;
use crate::store::webhooks::{self as store, Selection};
use serde::Deserialize;
use serde_json::json;
use worker::{Env, Request, Response};

/// Largest accepted body of these routes, bytes.
pub const MAX_BODY_BYTES: usize = 8_192;

fn bad(field: &str, message: impl Into<String>) -> AppError {
    AppError::BadRequest {
        message: message.into(),
        field: Some(field.into()),
    }
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, AppError> {
    crate::domain::basics::json::from_body(body).map_err(|e| AppError::BadRequest {
        message: format!("body is not the expected JSON: {e}"),
        field: None,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewSubscriber {
    url: String,
    #[serde(default)]
    event_types: Vec<String>,
    #[serde(default)]
    description: Option<String>,
}

/// `POST /admin/webhooks/subscribers` (see the module docs).
pub async fn create_subscriber(mut req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    super::admin::authorize(&req, env, &cfg).await?;
    let body = read_limited(&mut req, MAX_BODY_BYTES).await?;
    let s: NewSubscriber = parse(&body)?;
    let url = check_url(&s.url, cfg.webhook_allow_http_loopback)
        .map_err(|e| bad("url", e.to_string()))?;
    let types = parse_event_types(&s.event_types).map_err(|e| bad("eventTypes", e))?;
    let description = s
        .description
        .map(|d| crate::domain::basics::text::header_value(&d, 200))
        .filter(|d| !d.is_empty());
    let mut random = [0u8; 40];
    getrandom::fill(&mut random).map_err(AppError::unavailable)?;
    let id = format!("sub_{}", hex::encode(&random[..8]));
    let secret = new_secret(random[8..].try_into().expect("32 bytes"));
    let stored = stored_types(&types);
    let db = env.d1(DB_BINDING)?;
    if store::subscribers(&db).await?.len() >= store::SUBSCRIBERS_MAX {
        return Err(AppError::Conflict(format!(
            "there are {} subscribers already, the most this engine keeps; remove one first",
            store::SUBSCRIBERS_MAX
        )));
    }
    store::create_subscriber(
        &db,
        &id,
        url.as_str(),
        &secret,
        &stored,
        description.as_deref(),
        now_ms(),
    )
    .await?;
    Ok(Response::from_json(&json!({
        "subscriberId": id,
        "url": url.as_str(),
        "eventTypes": stored.split(' ').collect::<Vec<_>>(),
        "description": description,
        "secret": secret,
        "enabled": true,
    }))?
    .with_status(201))
}

/// `GET /admin/webhooks/subscribers` (see the module docs).
pub async fn list_subscribers(req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    super::admin::authorize(&req, env, &cfg).await?;
    let db = env.d1(DB_BINDING)?;
    let list: Vec<serde_json::Value> = store::subscribers(&db).await?.iter().map(shown).collect();
    Ok(Response::from_json(&json!({ "subscribers": list }))?)
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StateChange {
    #[serde(default)]
    reason: Option<String>,
}

/// `POST /admin/webhooks/subscribers/<id>/enable|disable` (see the module docs).
pub async fn subscriber_state(mut req: Request, env: &Env, rest: &str) -> Answer {
    let cfg = config(env)?;
    super::admin::authorize(&req, env, &cfg).await?;
    let (id, action) = rest.split_once('/').ok_or(AppError::NotFound)?;
    let enable = match action {
        "enable" => true,
        "disable" => false,
        _ => return Err(AppError::NotFound),
    };
    let body = read_limited(&mut req, MAX_BODY_BYTES).await?;
    let change: StateChange = if body.iter().all(u8::is_ascii_whitespace) {
        StateChange::default()
    } else {
        parse(&body)?
    };
    let db = env.d1(DB_BINDING)?;
    if store::subscriber(&db, id).await?.is_none() {
        return Err(AppError::NotFound);
    }
    let reason = change
        .reason
        .map(|r| crate::domain::basics::text::header_value(&r, 200))
        .unwrap_or_else(|| "disabled by the operator".into());
    store::set_enabled(&db, id, enable, Some(&reason), now_ms()).await?;
    let row = store::subscriber(&db, id)
        .await?
        .ok_or(AppError::NotFound)?;
    Ok(Response::from_json(&shown(&row))?)
}

/// A subscriber as every route shows it (the same shape as the creation's answer, without the
/// secret): `enabled` a boolean, `eventTypes` a list.
fn shown(s: &store::SubscriberRow) -> serde_json::Value {
    json!({
        "subscriberId": s.subscriber_id,
        "url": s.url,
        "eventTypes": s.event_types.split_whitespace().collect::<Vec<_>>(),
        "description": s.description,
        "enabled": s.enabled != 0,
        "disabledReason": s.disabled_reason,
        "disabledAtMs": s.disabled_at_ms,
        "createdAtMs": s.created_at_ms,
    })
}

/// `GET /admin/webhooks/deliveries` (see the module docs).
pub async fn deliveries(req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    super::admin::authorize(&req, env, &cfg).await?;
    let url = req.url()?;
    let q = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
            .filter(|v| !v.is_empty())
    };
    let db = env.d1(DB_BINDING)?;
    if let Some(id) = q("delivery") {
        let delivery = store::delivery(&db, &id).await?.ok_or(AppError::NotFound)?;
        let attempts = store::attempts(&db, &id).await?;
        return Ok(Response::from_json(
            &json!({"delivery": delivery, "attempts": attempts}),
        )?);
    }
    let status = q("status");
    if let Some(s) = &status {
        if !["pending", "delivered", "dead", "cancelled"].contains(&s.as_str()) {
            return Err(bad(
                "status",
                "status must be pending, delivered, dead or cancelled",
            ));
        }
    }
    let limit = match q("limit") {
        None => 50,
        Some(l) => l
            .parse::<u32>()
            .ok()
            .filter(|l| (1..=200).contains(l))
            .ok_or_else(|| bad("limit", "limit must be a whole number from 1 to 200"))?,
    };
    let before = match q("before") {
        None => None,
        Some(b) => Some(b.parse::<i64>().map_err(|_| {
            bad(
                "before",
                "before must be a time in ms (a row's createdAtMs)",
            )
        })?),
    };
    let rows = store::deliveries(
        &db,
        status.as_deref(),
        q("subscriber").as_deref(),
        q("event").as_deref(),
        before,
        limit,
    )
    .await?;
    Ok(Response::from_json(&json!({"deliveries": rows}))?)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RedriveRequest {
    delivery_id: Option<String>,
    subscriber_id: Option<String>,
    from_ms: Option<i64>,
    to_ms: Option<i64>,
}

/// `POST /admin/webhooks/redrive` (see the module docs).
pub async fn redrive(mut req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    super::admin::authorize(&req, env, &cfg).await?;
    let body = read_limited(&mut req, MAX_BODY_BYTES).await?;
    let r: RedriveRequest = parse(&body)?;
    let sel = match (r.delivery_id, r.subscriber_id, r.from_ms, r.to_ms) {
        (Some(d), None, None, None) => Selection::Delivery(d),
        (None, Some(s), None, None) => Selection::Subscriber(s),
        (None, None, Some(from_ms), Some(to_ms)) if from_ms < to_ms => {
            Selection::Range { from_ms, to_ms }
        }
        (None, None, Some(_), Some(_)) => return Err(bad("toMs", "toMs must be after fromMs")),
        _ => {
            return Err(AppError::BadRequest {
                message: "give exactly one of deliveryId, subscriberId, or fromMs with toMs".into(),
                field: None,
            })
        }
    };
    let redriven: Vec<String> = crate::publisher::redrive(env, &sel)
        .await?
        .into_iter()
        .map(|c| c.delivery_id)
        .collect();
    if let (Selection::Delivery(id), true) = (&sel, redriven.is_empty()) {
        let db = env.d1(DB_BINDING)?;
        let row = store::delivery(&db, id).await?.ok_or(AppError::NotFound)?;
        return Err(AppError::Conflict(match row.status.as_str() {
            "delivered" => {
                format!("delivery {id} was delivered; a delivered event is never redriven")
            }
            "pending" => format!("delivery {id} is still being delivered"),
            _ => format!("delivery {id} cannot be redriven while its subscriber is disabled"),
        }));
    }
    // At most REDRIVE_MAX a call: `more` says to call again.
    let more = redriven.len() as i64 >= store::REDRIVE_MAX;
    Ok(Response::from_json(
        &json!({"redriven": redriven, "count": redriven.len(), "more": more}),
    )?)
}
