//! Journeys: the body of the Journey Workflow, one instance per supplier event, written in Rust.
//!
//! The JS glue class in `src/entry.mjs` (a `WorkflowEntrypoint`, which workers-rs cannot define)
//! calls [`run_journey`] with the event, the `step` object and the env. Everything with a side
//! effect happens inside a named `step.do`; code between steps only computes from the params and
//! from step results, so a replay after a sleep takes the same path (no clock reads outside steps).
//!
//! Send-once: every email is claimed in D1 under its dedupe key (unique, never expires) and handed
//! to the outbox, which is idempotent on the same key. Scheduled sends re-read the booking first and
//! go out only while the booking is open and the journey version they were planned under is still
//! current (versioned intent): a cancellation or an amendment moves the version on, and every older
//! plan then skips.

pub mod checkout;
pub mod compensation;
pub mod failures;
pub mod flight;
mod foreign;
pub mod hotel;
mod hotel_record;
mod hotel_zone;
pub mod workflow;

use crate::config::DB_BINDING;
use crate::domain::basics::text::step_part;
use crate::domain::email::markup;
use crate::domain::event::{
    Cancellation, FlightBooking, HotelBooking, JourneyParams, SupplierEvent,
};
use crate::domain::journey::booking::{BookingKind, BookingStatus};
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::render::{self, guard::guarded};
use crate::domain::webhooks::events;
use crate::domain::webhooks::Publication;
pub use crate::outbox::client::{deliver, Delivery};
use crate::store;
use crate::store::bookings::FactsUpdate;
pub use failures::deliver_once;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use worker::{Env, Error, Result};
use workflow::{Step, StepConfig};

/// Summary returned by a journey run (the instance's output; tests read it).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JourneyOutput {
    pub kind: String,
    /// `(dedupe key, what happened)` for every email this run handed to the outbox.
    pub emails: Vec<(String, Delivery)>,
    /// `(kind, reason)` for every planned email this run decided not to send.
    pub skipped: Vec<(String, String)>,
    /// `(dedupe key or "<kind> v<version>", error)` for every email whose step failed past its
    /// retries; the journey went on (see `failures`).
    #[serde(default)]
    pub failed: Vec<(String, String)>,
}

impl JourneyOutput {
    fn new(kind: &str) -> Self {
        Self {
            kind: kind.to_string(),
            ..Default::default()
        }
    }
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
    let output = match run(&step, &env, &params).await {
        Ok(output) => output,
        Err(e) => {
            failed(&step, &env, &params, &e.to_string()).await;
            return Err(JsValue::from(js_sys::Error::new(&e.to_string())));
        }
    };
    let text = serde_json::to_string(&output).map_err(|e| js_sys::Error::new(&e.to_string()))?;
    js_sys::JSON::parse(&text)
}

/// A journey that ends in a fatal error is never silent: its raw event is marked `errored` with
/// the error and the owner gets an `owner_journey_failed` alert (in a step of its own, so a replay
/// does neither twice), and the error is logged.
/// Best effort: the instance fails either way.
async fn failed(step: &Step, env: &Env, params: &JourneyParams, error: &str) {
    worker::console_error!(
        "journey {} {} failed: {error}",
        params.source,
        params.event_id
    );
    let (env, params, error) = (env.clone(), params.clone(), error.to_string());
    let marked = step
        .run("journey failed", StepConfig::STORAGE, async move || {
            let db = env.d1(DB_BINDING)?;
            let (source, event_id) = (params.source, params.event_id.as_str());
            store::raw_events::mark_errored(&db, source, event_id, &error).await?;
            let cfg = config(&env)?;
            let alert = render::owner_journey_failed(
                source,
                event_id,
                &params.event_name,
                &error,
                cfg.owner_inbox(),
            )
            .map_err(rust_err)?;
            deliver(&env, &alert, params.received_at_ms).await
        })
        .await;
    if let Err(e) = marked {
        worker::console_error!("journey failure could not be recorded: {e}");
    }
}

async fn run(step: &Step, env: &Env, params: &JourneyParams) -> Result<JourneyOutput> {
    // A follow-up event about another owner's booking changes nothing (see `foreign`).
    if let Some(refused) = foreign::follow_up(step, env, params).await? {
        return Ok(refused);
    }
    let mut out = match &params.event {
        SupplierEvent::HotelBooked(b) => hotel::booked(step, env, params, b).await,
        SupplierEvent::HotelConfirmationNumber {
            booking_id,
            hotel_confirmation_number,
        } => {
            hotel::confirmation_number(step, env, params, booking_id, hotel_confirmation_number)
                .await
        }
        SupplierEvent::CheckinInstructions {
            booking_id,
            instructions,
        } => hotel::checkin_instructions(step, env, params, booking_id, instructions).await,
        SupplierEvent::HotelAmended(a) => hotel::amended(step, env, params, a).await,
        SupplierEvent::BookingCancelled(c) => cancelled(step, env, params, c).await,
        SupplierEvent::FlightBooked(f) => flight::booked(step, env, params, f).await,
        SupplierEvent::FlightScheduleChanged {
            order_id,
            change_id,
        } => flight::schedule_changed(step, env, params, order_id, change_id.as_deref()).await,
        SupplierEvent::StatusChanged { booking_id, status } => {
            status_changed(step, env, params, booking_id.as_str(), status).await
        }
        SupplierEvent::CheckoutStarted(a) => checkout::started(step, env, params, a).await,
        SupplierEvent::PaymentUpdated(p) => checkout::payment_updated(step, env, params, p).await,
        SupplierEvent::BookingFailed(f) => compensation::booking_failed(step, env, params, f).await,
        SupplierEvent::RefundUpdated(r) => compensation::refund_updated(step, env, params, r).await,
    }?;
    // Events of handlers that never sleep are published once the handler is done; the others
    // (booked, amended, cancelled) publish before their plan's first sleep.
    let (at, source, event_id) = (
        params.received_at_ms,
        params.source,
        params.event_id.as_str(),
    );
    let updated = |id: &str| {
        vec![events::booking_updated(
            id,
            source,
            event_id,
            &params.event_name,
            params.event.kind(),
            at,
        )]
    };
    let after: Vec<Publication> = match &params.event {
        SupplierEvent::HotelConfirmationNumber { booking_id, .. }
        | SupplierEvent::CheckinInstructions { booking_id, .. } => updated(booking_id.as_str()),
        SupplierEvent::FlightScheduleChanged { order_id, .. } => updated(order_id.as_str()),
        SupplierEvent::CheckoutStarted(_) | SupplierEvent::PaymentUpdated(_) => out
            .emails
            .iter()
            .filter_map(|(key, _)| events::checkout_fact(key, at))
            .collect(),
        _ => Vec::new(),
    };
    publish(step, env, after, &mut out).await;
    Ok(out)
}

/// Publishes outbound webhook events (`crate::publisher::publish`) in a step of their own, named
/// by the first event id (hex: safe in a step name), so a replay publishes nothing again. A
/// failure past the step's retries is logged and listed in `out.failed`; the journey goes on
/// (guest email never waits on a subscriber).
/// Publishes outbound webhook events (`crate::publisher::publish`) in a step of their own, named
/// by the first event id (hex: safe in a step name), so a replay publishes nothing again. A
/// failure past the step's retries (hours of backoff) is listed in `out.failed`, logged, and told
/// to the owner in a step of its own (one alert per event and day); the journey goes on (guest
/// email never waits on a subscriber).
pub(crate) async fn publish(step: &Step, env: &Env, ps: Vec<Publication>, out: &mut JourneyOutput) {
    let Some(first) = ps.first() else {
        return;
    };
    let name = format!("webhooks {}", first.event_id);
    let (event_type, event_id) = (first.event_type, first.event_id.clone());
    let env2 = env.clone();
    let sent: Result<usize> = step
        .run(&name, StepConfig::STORAGE, async move || {
            crate::publisher::publish_all(&env2, &ps).await
        })
        .await;
    let Err(e) = sent else {
        return;
    };
    worker::console_error!("journey: {name} failed: {e}");
    let error = crate::domain::basics::text::cut_bytes(&e.to_string(), 300).to_string();
    out.failed.push((name, error.clone()));
    let env3 = env.clone();
    let alerted: Result<bool> = step
        .run(
            &format!("webhooks failed {event_id}"),
            StepConfig::STORAGE,
            async move || {
                let cfg = config(&env3)?;
                let now = crate::platform::now_ms();
                let alert = render::webhooks::owner_webhook_alert(
                    render::webhooks::WebhookAlert::NotPublished,
                    "",
                    "",
                    event_type.as_str(),
                    &event_id,
                    &error,
                    &crate::domain::outbox::intent::utc_day(now),
                    cfg.owner_inbox(),
                )
                .map_err(rust_err)?;
                deliver(&env3, &alert, now).await?;
                Ok(true)
            },
        )
        .await;
    if let Err(e) = alerted {
        worker::console_error!("journey: alerting the owner of an unpublished event failed: {e}");
    }
}

pub(crate) use crate::platform::{config_or_err as config, rust_err};

/// The stored booking `id`, or the "not known yet" error that makes the engine retry the step.
pub(crate) async fn known_booking(
    db: &worker::D1Database,
    id: &str,
) -> Result<store::bookings::BookingRow> {
    store::bookings::get(db, id)
        .await?
        .ok_or_else(|| booking_not_known(id))
}

/// The booking a late event refers to is not in D1 yet (suppliers do not order their webhooks):
/// the step fails and the engine retries it with [`StepConfig::AWAIT_BOOKING`].
pub(crate) fn booking_not_known(id: &str) -> Error {
    Error::RustError(format!(
        "booking {id} is not known yet; retrying until its booking event arrives"
    ))
}

/// The branding of a guest email about `booking_id`: the sender, writing in the booking's
/// stored language (else `DEFAULT_GUEST_LOCALE`); [`branding_for`] with no checkout to ask.
pub(crate) async fn guest_branding(
    db: &worker::D1Database,
    cfg: &crate::config::Config,
    booking_id: &str,
) -> Result<crate::domain::render::Branding> {
    branding_for(db, cfg, Some(booking_id), None).await
}

/// The branding of a guest email that may come before any booking: in the language
/// [`store::guest_locale::locale_for`] finds for `booking_id`, else for the checkout of
/// `client_reference`, else `DEFAULT_GUEST_LOCALE`.
pub(crate) async fn branding_for(
    db: &worker::D1Database,
    cfg: &crate::config::Config,
    booking_id: Option<&str>,
    client_reference: Option<&str>,
) -> Result<crate::domain::render::Branding> {
    let language =
        store::guest_locale::locale_for(db, booking_id, client_reference, cfg.default_guest_locale)
            .await?;
    Ok(cfg.branding.in_locale(language))
}

/// Cancellation of a hotel or flight booking: mark it cancelled (moving the journey version on, so
/// every pending scheduled send skips), then one cancellation email to the guest and one alert to
/// the owner.
/// The calendar method of a cancellation's parts.
const CANCEL: crate::domain::email::calendar::Method =
    crate::domain::email::calendar::Method::Cancel;

async fn cancelled(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    c: &Cancellation,
) -> Result<JourneyOutput> {
    let mut out = JourneyOutput::new("booking_cancelled");
    let emails: Vec<OutgoingEmail> = {
        let (env, c, at) = (env.clone(), c.clone(), params.received_at_ms);
        step.run(
            &format!("cancel {}", step_part(c.booking_id.as_str())),
            StepConfig::AWAIT_BOOKING,
            async move || {
                let db = env.d1(DB_BINDING)?;
                let row = known_booking(&db, c.booking_id.as_str()).await?;
                if !row.status.is_cancelled() {
                    let status = BookingStatus::cancelled(c.with_charges);
                    let update = FactsUpdate {
                        bump: true,
                        status: &status,
                        ..FactsUpdate::keep(&row, at)
                    };
                    store::bookings::write_facts(&db, &update).await?;
                }
                let cfg = config(&env)?;
                let summary = match row.kind {
                    BookingKind::Flight => {
                        let f: FlightBooking = serde_json::from_str(&row.details_json)?;
                        render::CancelledBooking::for_flight(&f)
                    }
                    BookingKind::Hotel => {
                        let b: HotelBooking = serde_json::from_str(&row.details_json)?;
                        render::CancelledBooking::for_hotel(&b)
                    }
                };
                // The guest's email is rendered from the booking itself (not the summary) so the
                // lock sees the template's own words around the supplier's values.
                let lock = cfg.content_lock();
                let branding = guest_branding(&db, &cfg, c.booking_id.as_str()).await?;
                let tr = branding.tr();
                let guest = match row.kind {
                    BookingKind::Flight => {
                        let f: FlightBooking = serde_json::from_str(&row.details_json)?;
                        guarded(&lock, &(f, c.clone()), |(f, c)| {
                            let parts = render::calendar::flight_segments(f, &branding, CANCEL);
                            let markup = markup::flight(f, markup::Status::Cancelled, Some(at));
                            let email = render::booking_cancelled(
                                &render::CancelledBooking::for_flight_in(f, tr).marked_up(markup),
                                c,
                                &branding,
                            );
                            render::calendar::attach(email, parts, tr)
                        })
                    }
                    BookingKind::Hotel => {
                        let b: HotelBooking = serde_json::from_str(&row.details_json)?;
                        guarded(&lock, &(b, c.clone()), |(b, c)| {
                            let part = render::calendar::hotel_stay(b, &branding, CANCEL);
                            let markup = markup::lodging(b, markup::Status::Cancelled, Some(at));
                            let email = render::booking_cancelled(
                                &render::CancelledBooking::for_hotel_in(b, tr).marked_up(markup),
                                c,
                                &branding,
                            );
                            render::calendar::attach(email, vec![part], tr)
                        })
                    }
                }
                .map_err(rust_err)?;
                let owner = render::owner_booking_cancelled(&summary, &c, cfg.owner_inbox())
                    .map_err(rust_err)?;
                Ok(vec![guest, owner])
            },
        )
        .await?
    };
    // Withdraw the booking's queued emails at once (the cancellation notice and the owner's alert
    // carry no intent, and are named as exceptions too). Not fatal: the send gate re-reads the
    // booking at each email's turn anyway.
    let except: Vec<String> = emails.iter().map(|e| e.dedupe_key.to_string()).collect();
    let withdrawn: Result<u32> = {
        let (env, id) = (env.clone(), c.booking_id.to_string());
        step.run(
            &format!("withdraw {}", step_part(c.booking_id.as_str())),
            StepConfig::STORAGE,
            async move || crate::outbox::client::withdraw(&env, &id, &except).await,
        )
        .await
    };
    if let Err(e) = withdrawn {
        out.failed
            .push((format!("withdraw {}", c.booking_id), e.to_string()));
    }
    for email in emails {
        deliver_once(step, env, email, params.received_at_ms, &mut out).await;
    }
    let cancelled = events::booking_cancelled(
        c,
        params.source,
        params.event_id.as_str(),
        params.received_at_ms,
    );
    publish(step, env, vec![cancelled], &mut out).await;
    // A booking the guest paid for, cancelled by the supplier: its refund (by policy).
    compensation::for_cancellation(step, env, params, c, &mut out).await?;
    Ok(out)
}

/// A status-only move (e.g. CONFIRMED → TICKETED): recorded, never emailed. The owner check ran
/// before ([`foreign::follow_up`]) without waiting for the booking; a booking stored since then is
/// judged again here, in the step that writes, and the write itself carries the owner
/// ([`FactsUpdate::owner`]): a booking another owner stored meanwhile is never changed, and the
/// event is refused.
async fn status_changed(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    booking_id: &str,
    status: &str,
) -> Result<JourneyOutput> {
    let name = format!("status {} {}", step_part(booking_id), step_part(status));
    let (env2, id, status, at, actor) = (
        env.clone(),
        booking_id.to_string(),
        BookingStatus::of(status),
        params.received_at_ms,
        params.owner(),
    );
    // `None` when the status was recorded (or there was nothing to record), else why the booking
    // is not this event's.
    let foreign: Option<String> = step
        .run(&name, StepConfig::STORAGE, async move || {
            let db = env2.d1(DB_BINDING)?;
            let Some(row) = store::bookings::get(&db, &id).await? else {
                return Ok(None);
            };
            if let crate::domain::event::ownership::Verdict::Foreign { reason } =
                row.verdict(&actor)
            {
                return Ok(Some(reason));
            }
            if !row.is_closed() {
                let update = FactsUpdate {
                    status: &status,
                    owner: Some(&actor),
                    ..FactsUpdate::keep(&row, at)
                };
                // A lost race (another journey of this booking moved its version meanwhile, or
                // the row is no longer this owner's) is retried by the step, never dropped.
                if !store::bookings::update_facts(&db, &update).await? {
                    return Err(rust_err(format!(
                        "booking {id} changed while its status was being moved; retrying"
                    )));
                }
            }
            Ok(None)
        })
        .await?;
    let mut out = JourneyOutput::new("status_changed");
    if let Some(reason) = foreign {
        foreign::refuse(step, env, params, booking_id, &reason, &mut out).await?;
    }
    Ok(out)
}
