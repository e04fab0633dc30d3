//! Compensation journeys (shell of `crate::domain::payment::compensation`): a paid booking the supplier
//! failed is undone step by step, each step a named Workflow step that records itself in D1
//! (`compensations`, `compensation_steps`), so a replay or a duplicate event repeats nothing.
//!
//! Order of events does not matter:
//! - the failure twice → the same compensation id, every step already recorded, the same send-once
//!   keys: nothing more happens;
//! - the failure before the payment record → the journey waits `COMPENSATION_PAYMENT_WAIT_MS` for
//!   it, then goes on; a paid payment arriving later still resumes the refund
//!   ([`resume_waiting`], from the payment's own journey);
//! - the failure before the booking event → the booking journey finds the compensation, records
//!   the booking closed and sends no confirmation ([`closed_by_compensation`]);
//! - the failure after the confirmation went out → the guest notice is a cancellation.

use super::workflow::{Step, StepConfig};
use super::{config, deliver, deliver_once, rust_err, JourneyOutput};
use crate::config::{Config, DB_BINDING};
use crate::domain::basics::text::step_part;
use crate::domain::email::EmailKind;
use crate::domain::event::ownership::Verdict;
use crate::domain::event::{
    BookingFailure, Cancellation, EmailAddress, JourneyParams, Money, RefundUpdate,
};
use crate::domain::journey::booking::BookingStatus;
use crate::domain::payment::action_token::{self, OwnerAction};
use crate::domain::payment::compensation::{
    self, classify_refund_error, compensation_id, format_minor, plan_refund,
    refund_idempotency_key, Cause, PaymentFacts, RefundErrorClass, RefundPlan, RefundState,
    StepKind, StepStatus,
};
use crate::domain::render::{self, guard::guarded};
use crate::platform::now_ms;
use crate::store;
use crate::store::bookings::FactsUpdate;
use crate::store::compensation::{CompensationRow, NewCompensation, StepRow, StepUpdate};
use crate::suppliers::stripe;
use serde::{Deserialize, Serialize};

mod cancellation;
mod notices;
mod owner;
mod proof;
mod refund;
mod updates;

pub(crate) use cancellation::for_cancellation;
use notices::*;
pub use notices::{refund_links, remind};
pub use owner::{owner_handled, owner_refund, OwnerRefund};
pub use refund::RefundOutcome;
use refund::*;
pub use updates::refund_updated;
use worker::{D1Database, Env, Result};

/// What the open step found.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Opened {
    id: String,
    booking_id: Option<String>,
    payment_known: bool,
    /// `(record, reason)` when the failure names a booking, checkout or compensation of another
    /// source or partner: nothing was opened (`super::foreign`).
    #[serde(default)]
    foreign: Option<(String, String)>,
}

/// The supplier failed a booking: open (or find) its compensation and undo every step.
pub async fn booking_failed(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    f: &BookingFailure,
) -> Result<JourneyOutput> {
    let mut out = JourneyOutput::new("booking_failed");
    let Some(id) = compensation_id(
        f.prebook_id.as_deref(),
        f.client_reference.as_deref(),
        f.booking_id.as_ref().map(|b| b.as_str()),
    ) else {
        // The adapters refuse such an event; the generic source's JSON could still carry one.
        out.skipped.push((
            "compensation".into(),
            "the failure names no checkout".into(),
        ));
        return Ok(out);
    };
    let open_step = |name: String| {
        let (env, f, params) = (env.clone(), f.clone(), params.clone());
        let id = id.clone();
        async move {
            step.run(&name, StepConfig::STORAGE, async move || {
                open_for_failure(&env, &id, &f, &params).await
            })
            .await
        }
    };
    let mut opened: Opened = open_step(format!("compensation open {}", step_part(&id))).await?;
    if let Some((record, reason)) = &opened.foreign {
        super::foreign::refuse(step, env, params, record, reason, &mut out).await?;
        return Ok(out);
    }
    if !opened.payment_known {
        // Webhooks are unordered: give the payment record a fixed time (from the event's receipt,
        // never from a clock read after the sleep) to arrive, then look once more.
        let cfg = config(env)?;
        step.sleep_until(
            &format!("compensation wait for payment {}", step_part(&id)),
            params.received_at_ms + cfg.compensation_payment_wait_ms,
        )
        .await?;
        opened = open_step(format!("compensation look again {}", step_part(&id))).await?;
        // What arrived during the wait may be another owner's (its booking stored under the id
        // this failure names): refused then as at first sight, nothing is undone, and the
        // compensation the first look opened is removed, so it cannot make the rightful owner's
        // own failure of that booking (the same compensation id) look foreign.
        if let Some((record, reason)) = &opened.foreign {
            let (env2, id2, owner) = (env.clone(), id.clone(), params.owner());
            step.run(
                &format!("compensation discard {}", step_part(&id)),
                StepConfig::STORAGE,
                async move || {
                    let db = env2.d1(DB_BINDING)?;
                    store::compensation::discard_unstarted(&db, &id2, &owner).await
                },
            )
            .await?;
            super::foreign::refuse(step, env, params, record, reason, &mut out).await?;
            return Ok(out);
        }
    }
    undo(step, env, params, &opened, &mut out).await?;
    Ok(out)
}

/// The body of the open step: the compensation row (inserted or completed), its booking and
/// whether a payment is known.
async fn open_for_failure(
    env: &Env,
    id: &str,
    f: &BookingFailure,
    params: &JourneyParams,
) -> Result<Opened> {
    let db = env.d1(DB_BINDING)?;
    if let Some(foreign) = super::foreign::failure(&db, params, f, id).await? {
        return Ok(Opened {
            id: id.to_string(),
            booking_id: None,
            payment_known: false,
            foreign: Some(foreign),
        });
    }
    let attempt = match f.prebook_id.as_deref() {
        Some(p) => store::checkout::get(&db, p).await?,
        None => None,
    };
    let booking_id = match f.booking_id.as_ref() {
        Some(b) => Some(b.to_string()),
        None => match f.prebook_id.as_deref() {
            Some(p) => store::bookings::by_prebook(&db, p).await?,
            None => None,
        },
    };
    let email = f
        .email
        .as_ref()
        .map(|e| e.as_str().to_string())
        .or_else(|| attempt.as_ref().and_then(|a| a.email.clone()));
    let name = f
        .guest_name
        .as_ref()
        .map(|n| n.full())
        .filter(|n| !n.is_empty());
    let row = store::compensation::open(
        &db,
        &NewCompensation {
            compensation_id: id,
            cause: Cause::SupplierFailed,
            booking_id: booking_id.as_deref(),
            prebook_id: f.prebook_id.as_deref(),
            client_reference: f.client_reference.as_deref(),
            payment_intent: f.transaction_id.as_deref(),
            guest_email: email.as_deref(),
            guest_name: name.as_deref(),
            trip: f.description.as_deref(),
            source: params.source.as_str(),
            partner: params.owner().partner_column(),
            event_id: params.event_id.as_str(),
            event_name: &params.event_name,
            reason: &f.reason,
            fee_amount: f.fee.as_ref().map(|m| m.amount.as_str()),
            fee_currency: f.fee.as_ref().map(|m| m.currency.as_str()),
            supplier_refund: None,
            at_ms: params.received_at_ms,
        },
    )
    .await?;
    Ok(Opened {
        id: id.to_string(),
        booking_id: row.booking_id.clone(),
        // Only a captured payment ends the wait: an expired or failed earlier attempt may be
        // followed by the session the guest did pay with.
        payment_known: payment_of(&db, &row)
            .await?
            .is_some_and(|p| p.outcome.is_paid()),
        foreign: None,
    })
}

/// The payment of compensation `c`: found through its checkout attempt's transaction id and
/// client reference and its own, and only one the compensation's owner may refund
/// ([`store::compensation::find_payment_for`]: nothing recorded links it to another source or
/// partner).
async fn payment_of(db: &D1Database, c: &CompensationRow) -> Result<Option<PaymentFacts>> {
    let attempt = match c.prebook_id.as_deref() {
        Some(p) => store::checkout::get_ids(db, p).await?,
        None => None,
    };
    let (tx, reference) = attempt.unwrap_or_default();
    let intents: Vec<&str> = [c.payment_intent.as_deref(), tx.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let references: Vec<&str> = [c.client_reference.as_deref(), reference.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let Some(owner) =
        crate::domain::event::ownership::Owner::stored(&c.source, c.partner.as_deref())
    else {
        return Ok(None);
    };
    store::compensation::find_payment_for(db, &intents, &references, &owner, &c.compensation_id)
        .await
}

/// Steps 1–5 of a supplier failure, each a Workflow step recorded in D1.
async fn undo(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    opened: &Opened,
    out: &mut JourneyOutput,
) -> Result<()> {
    let id = opened.id.clone();
    let at = params.received_at_ms;
    // 1 + 2: close the booking (its scheduled sends stop) and withdraw its queued emails.
    let confirmation_sent: bool = {
        let (env, id) = (env.clone(), id.clone());
        step.run(
            &format!("compensation close {}", step_part(&id)),
            StepConfig::STORAGE,
            async move || close_and_withdraw(&env, &id, at).await,
        )
        .await?
    };
    refund_then_notify(step, env, params, &id, confirmation_sent, out).await
}

/// Steps 3–5, shared by a failure and a cancellation: the refund by policy (retryable errors
/// fail the step and the engine retries it with the same key; past the retries it is recorded
/// `failed` for the owner), then the guest's notice and the owner's alert from the state the
/// refund left.
async fn refund_then_notify(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    id: &str,
    confirmation_sent: bool,
    out: &mut JourneyOutput,
) -> Result<()> {
    let at = params.received_at_ms;
    let claimant = params.event_id.to_string();
    let refund: Result<RefundOutcome> = {
        let (env, id, claimant) = (env.clone(), id.to_string(), claimant.clone());
        step.run(
            &format!("compensation refund {}", step_part(&id)),
            REFUND,
            async move || refund_by_journey(&env, &id, &claimant).await,
        )
        .await
    };
    if let Ok(o) = &refund {
        // booking.compensated in a step of its own (published once; a failure is listed, the
        // notices still go).
        let (env2, owned, state) = (env.clone(), id.to_string(), o.state);
        let name = format!("webhooks compensated {}", step_part(id));
        let published: Result<bool> = step
            .run(&name, StepConfig::STORAGE, async move || {
                publish_if_final(&env2, &owned, state).await.map(|_| true)
            })
            .await;
        if let Err(e) = published {
            out.failed.push((name, e.to_string()));
        }
    }
    if let Err(e) = refund {
        let (env, owned, error) = (env.clone(), id.to_string(), e.to_string());
        let _: bool = step
            .run(
                &format!("compensation refund gave up {}", step_part(id)),
                StepConfig::STORAGE,
                async move || gave_up(&env, &owned, &claimant, &error).await,
            )
            .await?;
        out.failed.push((format!("refund {id}"), e.to_string()));
    }
    let emails: Vec<crate::domain::outbox::outgoing::OutgoingEmail> = {
        let (env, id) = (env.clone(), id.to_string());
        step.run(
            &format!("compensation notices {}", step_part(&id)),
            StepConfig::STORAGE,
            async move || notices(&env, &id, confirmation_sent, "opened", now_or(at)).await,
        )
        .await?
    };
    for email in emails {
        deliver_once(step, env, email, at, out).await;
    }
    Ok(())
}

/// Step times inside a step body may read the clock (a step's result is cached); the event time
/// is the floor.
fn now_or(at: i64) -> i64 {
    now_ms().max(at)
}

/// Steps 1 and 2: the booking closed (status `FAILED`, version moved on) and its queued emails
/// withdrawn. Returns whether the booking's confirmation already reached a provider.
async fn close_and_withdraw(env: &Env, id: &str, at: i64) -> Result<bool> {
    let db = env.d1(DB_BINDING)?;
    let c = store::compensation::get(&db, id)
        .await?
        .ok_or_else(|| rust_err("compensation vanished"))?;
    let now = now_or(at);
    // The booking event may have been recorded since the compensation opened (the two journeys
    // ran side by side): look again by prebook id before deciding there is none.
    let owner = crate::domain::event::ownership::Owner::stored(&c.source, c.partner.as_deref());
    let booking_id = match c.booking_id.clone() {
        // Recorded when the compensation opened; closed only while it is still this owner's
        // (a booking is never re-owned, but an id recorded before partners existed may be).
        Some(b) => match (store::ownership::booking(&db, &b).await?, &owner) {
            (Some(row), Some(owner)) if row.verdict(owner, "booking") != Verdict::Own => {
                worker::console_warn!(
                    "compensation {id}: booking {b} belongs to another source or partner; not closing"
                );
                None
            }
            _ => Some(b),
        },
        None => match c.prebook_id.as_deref() {
            Some(p) => {
                // Only a booking of the compensation's own owner: another source's booking that
                // happens to carry this prebook id is not this compensation's to close.
                let found = match store::bookings::by_prebook(&db, p).await? {
                    Some(b) => match (store::ownership::booking(&db, &b).await?, &owner) {
                        (Some(row), Some(owner))
                            if row.verdict(owner, "booking") == Verdict::Own =>
                        {
                            Some(b)
                        }
                        _ => None,
                    },
                    None => None,
                };
                if let Some(b) = &found {
                    store::compensation::attach_booking(&db, id, b).await?;
                }
                found
            }
            None => None,
        },
    };
    let Some(booking_id) = booking_id else {
        for kind in [StepKind::CloseBooking, StepKind::WithdrawEmails] {
            store::compensation::settle(
                &db,
                id,
                kind,
                StepStatus::Skipped,
                "no booking is recorded for this checkout",
                now,
            )
            .await?;
        }
        return Ok(false);
    };
    let closed = close_booking(&db, &booking_id, at).await?;
    store::compensation::settle(
        &db,
        id,
        StepKind::CloseBooking,
        StepStatus::Done,
        if closed {
            "booking recorded as FAILED; its scheduled emails stop"
        } else {
            "booking was already closed"
        },
        now,
    )
    .await?;
    let withdrawn = crate::outbox::client::withdraw(env, &booking_id, &[]).await?;
    let sent = confirmation_sent(&db, &booking_id).await?;
    let detail = format!(
        "{withdrawn} queued email(s) withdrawn; confirmation {}",
        if sent {
            "had already been sent"
        } else {
            "never sent"
        }
    );
    store::compensation::settle(
        &db,
        id,
        StepKind::WithdrawEmails,
        StepStatus::Done,
        &detail,
        now,
    )
    .await?;
    // What this step decided is kept in the detail; a retry reads it back the same.
    let stored = store::compensation::step(&db, id, StepKind::WithdrawEmails).await?;
    Ok(stored
        .and_then(|s| s.detail)
        .is_some_and(|d| d.contains("already been sent")))
}

/// Marks a booking `FAILED` and moves its journey version on (every planned send then skips);
/// `false` when it was already closed.
async fn close_booking(db: &D1Database, booking_id: &str, at: i64) -> Result<bool> {
    let Some(row) = store::bookings::get(db, booking_id).await? else {
        return Ok(false);
    };
    if row.is_closed() {
        return Ok(false);
    }
    let status = BookingStatus::Failed;
    let update = FactsUpdate {
        bump: true,
        status: &status,
        ..FactsUpdate::keep(&row, at)
    };
    store::bookings::write_facts(db, &update).await?;
    Ok(true)
}

/// Whether the guest's confirmation of `booking_id` reached a provider (sent, possibly twice, or
/// being handed over right now).
async fn confirmation_sent(db: &D1Database, booking_id: &str) -> Result<bool> {
    use crate::domain::email::EmailStatus::*;
    for kind in [
        EmailKind::BookingConfirmation,
        EmailKind::FlightConfirmation,
    ] {
        let key = format!("{}:{booking_id}", kind.as_str());
        if let Some(row) = store::emails::find(db, &key).await? {
            if matches!(row.status, Sent | SentPossiblyTwice | Sending) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// A booking journey's check before it confirms anything: is this booking (by id, prebook id or
/// client reference) being compensated by its own owner? If so the booking is recorded closed
/// (`FAILED`) and the compensation learns its booking id; returns the compensation id. Another
/// source's or partner's compensation never closes it (a client reference alone is no proof).
pub(crate) async fn closed_by_compensation(
    db: &D1Database,
    owner: &crate::domain::event::ownership::Owner,
    booking_id: &str,
    prebook_id: Option<&str>,
    client_reference: Option<&str>,
    at: i64,
) -> Result<Option<String>> {
    let found = store::compensation::find_for_booking(
        db,
        owner,
        Some(booking_id),
        prebook_id,
        client_reference,
    )
    .await?;
    closed_by_found_compensation(db, owner, booking_id, found, at).await
}

/// [`closed_by_compensation`] with the booking's compensation already read (`found`, from
/// [`store::compensation::find_for_booking_statement`] in the caller's own batch).
pub(crate) async fn closed_by_found_compensation(
    db: &D1Database,
    owner: &crate::domain::event::ownership::Owner,
    booking_id: &str,
    found: Option<CompensationRow>,
    at: i64,
) -> Result<Option<String>> {
    let Some(c) = found else {
        return Ok(None);
    };
    if c.cause != Cause::SupplierFailed {
        return Ok(None);
    }
    if crate::domain::event::ownership::Owner::stored(&c.source, c.partner.as_deref()).as_ref()
        != Some(owner)
    {
        worker::console_warn!(
            "booking {booking_id}: compensation {} belongs to another source or partner; not closing",
            c.compensation_id
        );
        return Ok(None);
    }
    store::compensation::attach_booking(db, &c.compensation_id, booking_id).await?;
    close_booking(db, booking_id, at).await?;
    Ok(Some(c.compensation_id))
}

/// A payment's own journey, after recording it: resumes every compensation whose refund waited
/// for this payment (matched by payment intent, client reference, or the prebook of the checkout
/// attempts it matched). Returns the emails to send (one owner alert per resumed compensation,
/// stage `payment`).
pub(crate) async fn resume_waiting(
    env: &Env,
    intents: &[&str],
    references: &[&str],
    claimant: &str,
) -> Result<Vec<crate::domain::outbox::outgoing::OutgoingEmail>> {
    let db = env.d1(DB_BINDING)?;
    let ids = store::compensation::waiting_for_payment(&db, intents, references, claimant).await?;
    let mut emails = Vec::new();
    for id in ids {
        let status = match refund_by_journey(env, &id, claimant).await {
            Ok(o) => o.status,
            // One try here (this is the payment's journey): past it the owner decides, with links.
            Err(e) => {
                gave_up(env, &id, claimant, &e.to_string()).await?;
                StepStatus::Failed
            }
        };
        if status != StepStatus::WaitingPayment {
            emails.extend(notices(env, &id, false, "payment", now_ms()).await?);
        }
    }
    Ok(emails)
}

/// Publishes `booking.compensated` when compensation `id` reached a final state (`refunded`,
/// `not_charged`, `handled`); any other state publishes nothing. The event id is derived from the
/// compensation and its state, so calling this again (a retried step, a repeated click) publishes
/// nothing new.
pub(crate) async fn publish_if_final(env: &Env, id: &str, state: RefundState) -> Result<()> {
    if !matches!(
        state,
        RefundState::Refunded | RefundState::NotCharged | RefundState::Handled
    ) {
        return Ok(());
    }
    let db = env.d1(DB_BINDING)?;
    let booking = store::compensation::get(&db, id)
        .await?
        .and_then(|c| c.booking_id);
    let p = crate::domain::webhooks::events::booking_compensated(
        id,
        booking.as_deref(),
        state.as_str(),
        crate::platform::now_ms(),
    );
    crate::publisher::publish(env, &p).await?;
    Ok(())
}
