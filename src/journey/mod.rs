//! Journeys: the body of the Journey Workflow, one instance per supplier event, written in Rust.
//!
//! The JS glue class in `src/entry.mjs` (a `WorkflowEntrypoint`, which workers-rs cannot define)
//! calls [`run_journey`] with the event, the `step` object and the env. Everything with a side
//! effect happens inside a named `step.do`; code between steps is pure and may be replayed.

pub mod workflow;

use crate::config::{Config, DB_BINDING};
use crate::domain::email::OutgoingEmail;
use crate::domain::event::{HotelBooking, JourneyParams, SupplierEvent};
use crate::domain::render;
use crate::outbox::client as outbox;
use crate::store;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use worker::{Env, Error, Result};
use workflow::{Step, StepConfig};

/// What [`deliver_once`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// First claim of this dedupe key: claimed in D1 and enqueued.
    Enqueued,
    /// The key was claimed before (a retry of this step, or another journey); the outbox was
    /// asked again, idempotently, in case the earlier attempt died between claim and enqueue.
    AlreadyClaimed,
}

/// Summary returned by a journey run (visible in the instance's output).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct JourneyOutput {
    kind: &'static str,
    emails: Vec<(String, Delivery)>,
}

/// Entry point called by the glue class: `run_journey(event, step, env)`.
///
/// `event.payload` is a [`JourneyParams`]. Errors fail the step that raised them (the engine retries
/// it); a params error fails the instance.
#[wasm_bindgen]
pub async fn run_journey(
    event: JsValue,
    step: JsValue,
    env: JsValue,
) -> std::result::Result<JsValue, JsValue> {
    let env: Env = env.unchecked_into();
    let step = Step::new(step);
    let payload = js_sys::Reflect::get(&event, &JsValue::from_str("payload"))?;
    let json: String = js_sys::JSON::stringify(&payload)?.into();
    let params: JourneyParams = serde_json::from_str(&json)
        .map_err(|e| js_sys::Error::new(&format!("journey params are invalid: {e}")))?;
    let output = match &params.event {
        SupplierEvent::HotelBooked(b) => hotel_booked(&step, &env, &params, b).await,
        // No adapter produces these yet (journeys for them are being added); an instance that
        // receives one records it and ends without sending anything.
        other => Ok(JourneyOutput {
            kind: other.kind(),
            emails: Vec::new(),
        }),
    }
    .map_err(|e| JsValue::from(js_sys::Error::new(&e.to_string())))?;
    let text = serde_json::to_string(&output).map_err(|e| js_sys::Error::new(&e.to_string()))?;
    js_sys::JSON::parse(&text)
}

fn config(env: &Env) -> Result<Config> {
    crate::routes::config(env).map_err(|e| Error::RustError(e.to_string()))
}

/// Confirmed hotel booking: record it, then the guest confirmation and the owner's alert.
async fn hotel_booked(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    booking: &HotelBooking,
) -> Result<JourneyOutput> {
    let id = booking.booking_id.as_str();
    {
        let (env, booking, source, at) = (
            env.clone(),
            booking.clone(),
            params.source,
            params.received_at_ms,
        );
        step.run(
            &format!("record booking {id}"),
            StepConfig::STORAGE,
            move || {
                let (env, booking) = (env.clone(), booking.clone());
                Box::pin(async move {
                    let db = env.d1(DB_BINDING)?;
                    store::bookings::upsert_hotel_booking(&db, &booking, source, at).await?;
                    Ok(true)
                })
            },
        )
        .await?;
    }

    let cfg = config(env)?;
    let confirmation = render::booking_confirmation(booking, &cfg.branding)
        .map_err(|e| Error::RustError(e.to_string()))?;
    let alert = render::owner_new_booking(
        booking,
        params.source,
        params.event_id.as_str(),
        &cfg.owner_email,
        &cfg.branding,
    )
    .map_err(|e| Error::RustError(e.to_string()))?;

    let mut emails = Vec::new();
    for email in [confirmation, alert] {
        let key = email.dedupe_key.to_string();
        let outcome = deliver_once(step, env, email, params.received_at_ms).await?;
        emails.push((key, outcome));
    }
    Ok(JourneyOutput {
        kind: "hotel_booked",
        emails,
    })
}

/// Send-once: claims the email's dedupe key in D1 (unique, never expires), hands it to the outbox
/// (idempotent on the same key), and marks the D1 row `queued`. All in one step named after the
/// key, so a replay returns the cached result and a retry can neither lose nor double the email.
pub async fn deliver_once(
    step: &Step,
    env: &Env,
    email: OutgoingEmail,
    at_ms: i64,
) -> Result<Delivery> {
    let name = format!("email {}", email.dedupe_key);
    let env = env.clone();
    step.run(&name, StepConfig::STORAGE, move || {
        let (env, email) = (env.clone(), email.clone());
        Box::pin(async move {
            let db = env.d1(DB_BINDING)?;
            let fresh = store::emails::claim(&db, &email, at_ms).await?;
            outbox::enqueue(&env, &email).await?;
            store::emails::mark_queued(&db, email.dedupe_key.as_str(), at_ms).await?;
            Ok(if fresh {
                Delivery::Enqueued
            } else {
                Delivery::AlreadyClaimed
            })
        })
    })
    .await
}
