//! `POST /webhooks/{source}`: verify, store the raw event, start the journey, answer fast.
//!
//! Every supplier of [`crate::sources::WEBHOOKS`] goes through [`receive`]; what differs between
//! suppliers (authentication, body format) is its [`WebhookSource`]. Order of checks:
//! 1. a source that authenticates with a header alone (liteAPI's token) is checked before the
//!    body is read (401);
//! 2. size, enforced while the body streams in (413, nothing read past the limit);
//! 3. authenticity of a signed body (401, body not processed or stored);
//! 4. parse and normalise its text (`domain::basics::text`; what was cut goes to `raw_events.normalised`);
//!    malformed → the raw body is stored with `status = 'rejected'`, then 400 naming the field;
//! 5. store the raw event, unique on `(source, event_id)`; a duplicate of a started event answers
//!    200 `duplicate`; a duplicate of one whose journey was never started (its start failed, or
//!    the delivery that stored it died) claims the start and starts it;
//! 6. unknown / not-acted-on names → 200 `ignored`, nothing started;
//! 7. create the Journey instance with a deterministic id; "already exists" is a duplicate.

use super::{config, Answer, AppError};
use crate::domain::basics::text::Cut;
use crate::domain::event::ownership::Owner;
use crate::domain::event::Interpretation;
use crate::journey::workflow;
use crate::platform::now_ms;
use crate::sources::{Delivery, Inbound, ParseError, WebhookSource};
use crate::store::raw_events::{self, stored_body, NewRawEvent, RawEventStatus};
use serde_json::json;
use worker::{D1Database, Env, Request, Response};

/// Request headers worth keeping with a raw event (never `authorization` or signatures' secrets).
/// Headers kept with every stored delivery: what helps match it to the sender's dashboard and
/// replay it. Signatures are not kept (they are secrets-derived and useless once verified).
const KEPT_HEADERS: [&str; 8] = [
    "content-type",
    "content-length",
    "user-agent",
    "x-request-id",
    "webhook-id",
    "webhook-timestamp",
    "svix-id",
    "svix-timestamp",
];

pub(super) fn kept_headers(req: &Request) -> String {
    let mut map = serde_json::Map::new();
    for name in KEPT_HEADERS {
        if let Ok(Some(v)) = req.headers().get(name) {
            map.insert(name.to_string(), json!(v));
        }
    }
    serde_json::Value::Object(map).to_string()
}

/// Reads the body as a stream, refusing anything over `limit` bytes: on `content-length` first,
/// then while reading, so a body without a length (chunked) is refused at the first chunk past
/// the limit; nothing past it is read or kept (dropping the stream cancels it).
pub(super) async fn read_limited(req: &mut Request, limit: usize) -> Result<Vec<u8>, AppError> {
    use futures::StreamExt;
    if let Ok(Some(len)) = req.headers().get("content-length") {
        if let Ok(size) = len.trim().parse::<usize>() {
            if size > limit {
                return Err(AppError::TooLarge { size, limit });
            }
        }
    }
    if req.inner().body().is_none() {
        return Ok(Vec::new());
    }
    let mut stream = req.stream()?;
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > limit {
            return Err(AppError::TooLarge {
                size: body.len() + chunk.len(),
                limit,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `POST /webhooks/<source>` for every source of [`crate::sources::WEBHOOKS`]: a source that
/// authenticates with a header alone is verified before the body is read (401 without reading
/// it); then the body is read within `MAX_WEBHOOK_BODY_BYTES` (413), verified (401) by the
/// sources that sign it, parsed and normalised ([`crate::sources::read`]), then [`ingest`]ed.
pub async fn receive(hook: &dyn WebhookSource, mut req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    let mut verified = None;
    if hook.header_only() {
        let get = |name: &str| header(&req, name);
        let headers_only = Inbound {
            body: &[],
            header: &get,
            now_s: now_s(),
        };
        verified = Some(
            hook.verify(&cfg, &headers_only)
                .map_err(AppError::unauthorized)?,
        );
    }
    let body = read_limited(&mut req, cfg.max_webhook_body_bytes).await?;
    let get = |name: &str| header(&req, name);
    let inbound = Inbound {
        body: &body,
        header: &get,
        now_s: now_s(),
    };
    let verified = match verified {
        Some(v) => v,
        None => hook
            .verify(&cfg, &inbound)
            .map_err(AppError::unauthorized)?,
    };
    let parsed = crate::sources::read(hook, &inbound, &verified);
    let claimed_id = || hook.claimed_id(&inbound);
    let owner = Owner::new(hook.source(), verified.partner.as_deref());
    ingest(env, &req, &owner, &body, parsed, claimed_id).await
}

pub(super) fn now_s() -> i64 {
    now_ms().div_euclid(1000)
}

pub(super) fn header(req: &Request, name: &str) -> Option<String> {
    req.headers().get(name).ok().flatten()
}

/// Steps 3–6 of the module docs, shared by every source: store (or reject) the raw event (with
/// its generic partner), dedupe on `(source, event_id)`, start the journey acting for `owner`.
pub async fn ingest(
    env: &Env,
    req: &Request,
    owner: &Owner,
    body: &[u8],
    parsed: Result<(Delivery, Vec<Cut>), ParseError>,
    claimed_id: impl Fn() -> Option<String>,
) -> Answer {
    let received_at_ms = now_ms();
    let headers_json = kept_headers(req);
    let db = env.d1(crate::config::DB_BINDING)?;
    let text = stored_body(body);
    let source = owner.source;
    let partner = owner.partner_column();

    let (delivery, cuts) = match parsed {
        Ok(d) => d,
        Err(e) => {
            return reject(
                &db,
                owner,
                &text,
                &headers_json,
                received_at_ms,
                e,
                claimed_id(),
            )
            .await
        }
    };
    let event_id = delivery.event_id.as_str();
    let normalised = (!cuts.is_empty()).then(|| json!(cuts).to_string());
    let booking_id = match &delivery.interpretation {
        Interpretation::Journey(event) => event.booking_ref().map(str::to_string),
        Interpretation::Ignored(_) => None,
    };
    let (status, name) = match &delivery.interpretation {
        Interpretation::Journey(_) => (RawEventStatus::Received, delivery.event_name.as_str()),
        Interpretation::Ignored(name) => (RawEventStatus::Ignored, name.as_str()),
    };
    let (inserted, stored) = raw_events::insert_or_find(
        &db,
        &NewRawEvent {
            source,
            event_id: Some(event_id),
            event_name: Some(name),
            status,
            error: None,
            headers_json: &headers_json,
            body: &text,
            received_at_ms,
            normalised: normalised.as_deref(),
            booking_id: booking_id.as_deref(),
            partner,
        },
        event_id,
    )
    .await?;

    // A duplicate is only "done" once its journey was started (or it needs none): a started
    // one answers `duplicate` after this one D1 call. A row still `received` means the delivery
    // that stored it has not started its journey: it is starting it right now (it holds the
    // start for `START_LEASE_MS`), or its start failed (it let go before answering 503), or it
    // died in between (a crash, a deploy: its lease runs out). A redelivery claims the start with
    // one conditional UPDATE and starts the journey itself, so a retry seconds after a failure
    // starts what the failure stopped instead of leaving it to the sweeper's grace, while of
    // concurrent deliveries exactly one starts it and answers `accepted`.
    let first_received_at_ms = if inserted {
        received_at_ms
    } else {
        match stored {
            Some(stored)
                if stored.status == RawEventStatus::Received
                    && raw_events::claim_start(&db, source, event_id, received_at_ms).await? =>
            {
                stored.received_at_ms
            }
            _ => return duplicate(event_id),
        }
    };

    let event = match delivery.interpretation {
        Interpretation::Ignored(name) => {
            return Ok(Response::from_json(&json!({
                "status": "ignored",
                "eventId": event_id,
                "message": format!("event {name:?} is stored; it starts no journey"),
            }))?)
        }
        Interpretation::Journey(event) => event,
    };

    let started = workflow::start_for_event(
        env,
        &db,
        owner,
        &delivery.event_id,
        &delivery.event_name,
        first_received_at_ms,
        event,
    )
    .await;
    let (instance_id, created) = match started {
        Ok(started) => started,
        Err(e) => {
            // The supplier is told to retry (503): its retry may start the journey at once. A
            // failure to let go only delays that retry until the lease runs out.
            if let Err(release) = raw_events::release_start(&db, source, event_id).await {
                worker::console_error!("webhook {event_id}: the start was not released: {release}");
            }
            return Err(e.into());
        }
    };
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

fn duplicate(event_id: &str) -> Answer {
    Ok(Response::from_json(
        &json!({"status": "duplicate", "eventId": event_id}),
    )?)
}

/// Stores a malformed delivery (status `rejected`, `event_id` NULL) and answers 400.
async fn reject(
    db: &D1Database,
    owner: &Owner,
    text: &str,
    headers_json: &str,
    received_at_ms: i64,
    error: ParseError,
    claimed: Option<String>,
) -> Answer {
    // The claimed id is whatever the body or a header said: quoted bounded and on one line.
    let message = match &claimed {
        Some(id) => format!(
            "{error} (event_id {})",
            crate::domain::basics::text::quoted(id)
        ),
        None => error.to_string(),
    };
    raw_events::insert(
        db,
        &NewRawEvent {
            source: owner.source,
            event_id: None,
            event_name: None,
            status: RawEventStatus::Rejected,
            error: Some(&message),
            headers_json,
            body: text,
            received_at_ms,
            normalised: None,
            booking_id: None,
            partner: owner.partner_column(),
        },
    )
    .await?;
    Err(error.into())
}
