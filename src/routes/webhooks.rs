//! `POST /webhooks/{source}`: verify, store the raw event, start the journey, answer fast.
//!
//! Order of checks (DESIGN "Webhook handler rules"):
//! 1. size (413, nothing read past the limit is kept);
//! 2. authenticity (401, body not processed or stored);
//! 3. parse; malformed → the raw body is stored with `status = 'rejected'`, then 400 naming the field;
//! 4. store the raw event, unique on `(source, event_id)`; a duplicate answers 200 `duplicate`;
//! 5. unknown / not-acted-on names → 200 `ignored`, nothing started;
//! 6. create the Journey instance with a deterministic id; "already exists" is a duplicate.

use super::{config, ApiError};
use crate::domain::event::{Interpretation, JourneyParams, Source, PARAMS_VERSION};
use crate::domain::ids::InstanceId;
use crate::journey::workflow;
use crate::sources::{liteapi, ParseError};
use crate::store::raw_events::{self, NewRawEvent};
use serde_json::json;
use worker::{D1Database, Env, Request, Response};

/// Request headers worth keeping with a raw event (never `authorization` or signatures' secrets).
const KEPT_HEADERS: [&str; 4] = [
    "content-type",
    "content-length",
    "user-agent",
    "x-request-id",
];

fn kept_headers(req: &Request) -> String {
    let mut map = serde_json::Map::new();
    for name in KEPT_HEADERS {
        if let Ok(Some(v)) = req.headers().get(name) {
            map.insert(name.to_string(), json!(v));
        }
    }
    serde_json::Value::Object(map).to_string()
}

/// Reads the body, refusing anything over `limit` bytes (checked on `content-length` first, then
/// on the bytes actually received).
async fn read_limited(req: &mut Request, limit: usize) -> Result<Vec<u8>, ApiError> {
    if let Ok(Some(len)) = req.headers().get("content-length") {
        if let Ok(size) = len.trim().parse::<usize>() {
            if size > limit {
                return Err(ApiError::TooLarge { size, limit });
            }
        }
    }
    let body = req.bytes().await?;
    if body.len() > limit {
        return Err(ApiError::TooLarge {
            size: body.len(),
            limit,
        });
    }
    Ok(body)
}

fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}

/// The liteAPI webhook (formats.md §1).
pub async fn liteapi(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let cfg = config(env)?;
    let body = read_limited(&mut req, cfg.max_webhook_body_bytes).await?;
    let auth = req.headers().get(liteapi::TOKEN_HEADER).ok().flatten();
    liteapi::verify_token(auth.as_deref(), &cfg.liteapi_webhook_token)
        .map_err(|e| ApiError::Unauthorized(e.to_string()))?;

    let received_at_ms = now_ms();
    let headers_json = kept_headers(&req);
    let db = env.d1(crate::config::DB_BINDING)?;
    let text = String::from_utf8_lossy(&body).into_owned();

    let parsed = liteapi::parse_envelope(&body)
        .and_then(|envelope| liteapi::interpret(&envelope).map(|i| (envelope, i)));
    let (envelope, interpretation) = match parsed {
        Ok(ok) => ok,
        Err(e) => {
            return reject(
                &db,
                Source::Liteapi,
                &body,
                &text,
                &headers_json,
                received_at_ms,
                e,
            )
            .await
        }
    };
    let event_id = envelope.event_id.as_str();
    let (status, name) = match &interpretation {
        Interpretation::Journey(_) => ("received", envelope.event_name.as_str()),
        Interpretation::Ignored(name) => ("ignored", name.as_str()),
    };
    let inserted = raw_events::insert(
        &db,
        &NewRawEvent {
            source: Source::Liteapi,
            event_id: Some(event_id),
            event_name: Some(name),
            status,
            error: None,
            headers_json: &headers_json,
            body: &text,
            received_at_ms,
        },
    )
    .await?;

    // A duplicate is only "done" once its journey was started (or it needs none). A row left in
    // `received` means an earlier delivery stored it but failed to start the journey: start it now.
    let first_received_at_ms = if inserted {
        received_at_ms
    } else {
        match raw_events::find(&db, Source::Liteapi, event_id).await? {
            Some(stored) if stored.status == "received" => stored.received_at_ms,
            _ => return duplicate(event_id),
        }
    };

    let event = match interpretation {
        Interpretation::Ignored(name) => {
            return Ok(Response::from_json(&json!({
                "status": "ignored",
                "eventId": event_id,
                "message": format!("event {name:?} is stored; it starts no journey"),
            }))?)
        }
        Interpretation::Journey(event) => event,
    };

    let instance_id = InstanceId::for_event(Source::Liteapi, &envelope.event_id);
    let params = JourneyParams {
        params_version: PARAMS_VERSION,
        source: Source::Liteapi,
        event_id: envelope.event_id.clone(),
        event_name: envelope.event_name.clone(),
        received_at_ms: first_received_at_ms,
        event,
    };
    let created = workflow::create(env, &instance_id, &params).await?;
    raw_events::mark(
        &db,
        Source::Liteapi,
        event_id,
        "started",
        Some(instance_id.as_str()),
    )
    .await?;
    if !created {
        return duplicate(event_id);
    }
    Ok(Response::from_json(&json!({
        "status": "accepted",
        "eventId": event_id,
        "instanceId": instance_id.as_str(),
    }))?
    .with_status(202))
}

fn duplicate(event_id: &str) -> Result<Response, ApiError> {
    Ok(Response::from_json(
        &json!({"status": "duplicate", "eventId": event_id}),
    )?)
}

/// Stores a malformed delivery (status `rejected`, `event_id` NULL) and answers 400.
async fn reject(
    db: &D1Database,
    source: Source,
    body: &[u8],
    text: &str,
    headers_json: &str,
    received_at_ms: i64,
    error: ParseError,
) -> Result<Response, ApiError> {
    let claimed = liteapi::peek_event_id(body);
    let message = match &claimed {
        Some(id) => format!("{error} (event_id {id:?})"),
        None => error.to_string(),
    };
    raw_events::insert(
        db,
        &NewRawEvent {
            source,
            event_id: None,
            event_name: None,
            status: "rejected",
            error: Some(&message),
            headers_json,
            body: text,
            received_at_ms,
        },
    )
    .await?;
    Err(ApiError::BadRequest {
        message: error.to_string(),
        field: error.field().map(str::to_string),
    })
}
