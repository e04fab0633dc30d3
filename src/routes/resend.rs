//! `POST /webhooks/resend`: Resend's delivery reports. Hard bounces and complaints become D1
//! `suppressions` (source `resend_webhook`), which the outbox checks before every client email.
//!
//! Order of checks (as for the supplier webhooks):
//! 1. size (413, `MAX_WEBHOOK_BODY_BYTES`);
//! 2. authenticity: Svix / Standard Webhooks headers (`svix-id`, `svix-timestamp`,
//!    `svix-signature`, or their `webhook-` names) against `RESEND_WEBHOOK_SECRETS` (secret,
//!    `whsec_…`, comma or space separated, several during rotation), 5-minute tolerance
//!    (`WEBHOOK_TOLERANCE_S`). 401 when missing, wrong, stale or not configured; nothing stored;
//! 3. parse ([`crate::sources::resend::parse_event`]); malformed → stored in `raw_events` as
//!    `rejected`, then 400 naming the field;
//! 4. store in `raw_events` (source `resend`, event id = `svix-id`, unique): `received` for a
//!    bounce or complaint (the outcome is in `suppressions`), `ignored` for any other event;
//! 5. record the suppressions — also for a duplicate delivery with the same body (recording is
//!    idempotent and never downgrades), so a delivery that failed midway and is retried still
//!    takes effect; a duplicate id with a different body is answered `duplicate` and not acted on
//!    (the first delivery stands: only it is stored).
//!
//! Answers (JSON): 200 `{"status":"recorded","eventId","reason","suppressed":[addresses],
//! "onRecord":[{"email","reason"}] (the reason now on record: a complaint is never replaced by a
//! hard bounce), "notAddresses":["data.to[<i>]: <problem>"]}`,
//! 200 `{"status":"ignored","eventId","message"}`, 200 `{"status":"duplicate","eventId"}`, and the
//! shared error shapes (400, 401, 413, 503 — Resend retries 5xx).

use super::webhooks::{header, kept_headers, now_s, read_limited};
use super::{config, Answer, AppError};
use crate::config::DB_BINDING;
use crate::domain::event::{EventId, Source};
use crate::platform::now_ms;
use crate::sources::resend::{self, Report, ResendEvent};
use crate::sources::ParseError;
use crate::store::raw_events::stored_body;
use crate::store::raw_events::{self, NewRawEvent, RawEventStatus};
use crate::store::suppressions;
use serde_json::json;
use worker::{Env, Request, Response};

/// The variable of the secret(s) Resend signs with (`whsec_…`, comma or space separated;
/// parsed into `Config::resend_webhook_secrets`).
pub const SECRETS_VAR: &str = "RESEND_WEBHOOK_SECRETS";

/// `source` recorded with the suppressions.
pub const SUPPRESSION_SOURCE: &str = "resend_webhook";

/// `POST /webhooks/resend` (see the module docs).
pub async fn resend(mut req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    let body = read_limited(&mut req, cfg.max_webhook_body_bytes).await?;
    let secrets: Vec<&str> = cfg
        .resend_webhook_secrets
        .iter()
        .map(String::as_str)
        .collect();
    let signed = resend::signed_headers(|name| header(&req, name));
    resend::verify(&signed, &body, &secrets, now_s(), cfg.webhook_tolerance_s)
        .map_err(AppError::unauthorized)?;

    let received_at_ms = now_ms();
    let headers_json = kept_headers(&req);
    let text = stored_body(&body);
    let db = env.d1(DB_BINDING)?;
    // The delivery's raw row as a rejected one; a delivery that reads names itself in it.
    let raw = NewRawEvent {
        source: Source::Resend,
        event_id: None,
        event_name: None,
        status: RawEventStatus::Rejected,
        error: None,
        headers_json: &headers_json,
        body: &text,
        received_at_ms,
        normalised: None,
        booking_id: None,
        partner: None,
    };
    let parsed: Result<(EventId, ResendEvent), ParseError> =
        EventId::parse(signed.id.as_deref().unwrap_or(""))
            .map_err(|e| ParseError::Invalid {
                field: resend::SVIX_ID_HEADER.into(),
                reason: e.to_string(),
            })
            .and_then(|id| Ok((id, resend::parse_event(&body)?)));
    let (event_id, event) = match parsed {
        Ok(ok) => ok,
        Err(e) => {
            // The row keeps event_id NULL (a later valid delivery of the id is still processed);
            // the id goes into the error text and the kept headers, to match it to Resend's log.
            let error = match signed.id.as_deref() {
                Some(id) => format!("(svix-id {}) {e}", &id[..id.floor_char_boundary(256)]),
                None => e.to_string(),
            };
            let rejected = NewRawEvent {
                error: Some(&error),
                ..raw
            };
            raw_events::insert(&db, &rejected).await?;
            return Err(e.into());
        }
    };
    let status = match event.report {
        Report::Suppress { .. } => RawEventStatus::Received,
        Report::Ignored(_) => RawEventStatus::Ignored,
    };
    let read = NewRawEvent {
        event_id: Some(event_id.as_str()),
        event_name: Some(&event.event_type),
        status,
        ..raw
    };
    let inserted = raw_events::insert(&db, &read).await?;
    if !inserted && !raw_events::same_body(&db, Source::Resend, event_id.as_str(), &text).await? {
        // Same id, other body: the first delivery stands; this one changes nothing.
        return Ok(Response::from_json(&json!({
            "status": "duplicate",
            "eventId": event_id.as_str(),
            "message": "this event id was delivered before with a different body; the first delivery stands and this one is not acted on",
        }))?);
    }
    let reply = match event.report {
        Report::Ignored(message) => json!({
            "status": "ignored",
            "eventId": event_id.as_str(),
            "message": message,
        }),
        Report::Suppress {
            reason,
            addresses,
            detail,
            not_addresses,
        } => {
            let mut kept = Vec::with_capacity(addresses.len());
            for address in &addresses {
                let now = suppressions::record(
                    &db,
                    address.as_str(),
                    reason,
                    SUPPRESSION_SOURCE,
                    detail.as_deref(),
                    received_at_ms,
                )
                .await?;
                kept.push(json!({"email": address.as_str(), "reason": now.as_str()}));
                // Subscribers hear of it (same event id on a redelivery: nothing twice). A
                // failure answers 503 and Resend delivers again.
                let bounced = crate::domain::webhooks::events::email_bounced(
                    address.as_str(),
                    reason.as_str(),
                    Source::Resend.as_str(),
                    event_id.as_str(),
                    detail.as_deref(),
                    received_at_ms,
                );
                crate::publisher::publish(env, &bounced).await?;
            }
            json!({
                "status": "recorded",
                "eventId": event_id.as_str(),
                "reason": reason.as_str(),
                "suppressed": addresses.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
                "onRecord": kept,
                "notAddresses": not_addresses,
            })
        }
    };
    if !inserted {
        // A true redelivery: applied again above (idempotent, never downgrades).
        return Ok(Response::from_json(
            &json!({"status": "duplicate", "eventId": event_id.as_str()}),
        )?);
    }
    Ok(Response::from_json(&reply)?)
}
