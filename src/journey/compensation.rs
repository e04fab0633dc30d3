//! Compensation journeys (shell of `crate::domain::compensation`): a paid booking the supplier
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
use crate::domain::action_token::{self, OwnerAction};
use crate::domain::booking::BookingStatus;
use crate::domain::compensation::{
    self, classify_refund_error, compensation_id, format_minor, plan_refund,
    refund_idempotency_key, Cause, PaymentFacts, RefundErrorClass, RefundPlan, RefundState,
    StepKind, StepStatus,
};
use crate::domain::email::EmailKind;
use crate::domain::event::{
    BookingFailure, Cancellation, EmailAddress, JourneyParams, Money, RefundUpdate,
};
use crate::domain::render::{self, guard::guarded};
use crate::domain::text::step_part;
use crate::platform::now_ms;
use crate::store;
use crate::store::bookings::FactsUpdate;
use crate::store::compensation::{CompensationRow, NewCompensation, StepRow, StepUpdate};
use crate::suppliers::stripe;
use serde::{Deserialize, Serialize};
use worker::{D1Database, Env, Result};

/// Retries of the refund step: 6 from 5 s, exponential (5 s … 160 s, about 5 minutes in all),
/// for rate limits, 5xx and no answer, always with the same idempotency key. Past them the step
/// is recorded `failed` and the owner gets the links.
const REFUND: StepConfig = StepConfig {
    retries: 6,
    delay_ms: 5_000,
    timeout_ms: 60_000,
};

/// What the open step found.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Opened {
    id: String,
    booking_id: Option<String>,
    payment_known: bool,
}

/// What the refund step left.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RefundOutcome {
    pub status: StepStatus,
    pub state: RefundState,
    pub detail: String,
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
        payment_known: payment_of(&db, &row).await?.is_some(),
    })
}

/// The checkout attempt's transaction id and client reference, with the compensation's own.
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
    store::compensation::find_payment(db, &intents, &references).await
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
    let emails: Vec<crate::domain::email::OutgoingEmail> = {
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
    let booking_id = match c.booking_id.clone() {
        Some(b) => Some(b),
        None => match c.prebook_id.as_deref() {
            Some(p) => {
                let found = store::bookings::by_prebook(&db, p).await?;
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
            store::compensation::update_step(
                &db,
                id,
                kind,
                &StepUpdate {
                    status: Some(StepStatus::Skipped),
                    detail: Some("no booking is recorded for this checkout"),
                    ..Default::default()
                },
                &[StepStatus::Pending],
                now,
            )
            .await?;
        }
        return Ok(false);
    };
    let closed = close_booking(&db, &booking_id, at).await?;
    store::compensation::update_step(
        &db,
        id,
        StepKind::CloseBooking,
        &StepUpdate {
            status: Some(StepStatus::Done),
            detail: Some(if closed {
                "booking recorded as FAILED; its scheduled emails stop"
            } else {
                "booking was already closed"
            }),
            ..Default::default()
        },
        &[StepStatus::Pending],
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
    store::compensation::update_step(
        &db,
        id,
        StepKind::WithdrawEmails,
        &StepUpdate {
            status: Some(StepStatus::Done),
            detail: Some(&detail),
            ..Default::default()
        },
        &[StepStatus::Pending],
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

/// The refund step as the journey runs it (claimant: the event id, stable across retries).
async fn refund_by_journey(env: &Env, id: &str, claimant: &str) -> Result<RefundOutcome> {
    let db = env.d1(DB_BINDING)?;
    let cfg = config(env)?;
    let c = store::compensation::get(&db, id)
        .await?
        .ok_or_else(|| rust_err("compensation vanished"))?;
    let row = store::compensation::step(&db, id, StepKind::Refund)
        .await?
        .ok_or_else(|| rust_err("refund step missing"))?;
    let now = now_ms();
    // A retry of this claimant's own round: finish it with the key and amount already sent,
    // never re-plan (a new amount under the same key is refused by Stripe).
    if row.status == StepStatus::Running && row.claimed_by.as_deref() == Some(claimant) {
        let Some(pi) = c.payment_intent.clone() else {
            return Err(rust_err("a running refund without a payment intent"));
        };
        // Renew the claim (counts the attempt); `Pending` never matches a running step, so only
        // this claimant's own claim (or an expired one) is taken.
        let row = match store::compensation::claim_refund(
            &db,
            id,
            claimant,
            &[StepStatus::Pending],
            Some(&pi),
            now,
        )
        .await?
        {
            Ok(Some(row)) => row,
            _ => {
                let row = store::compensation::step(&db, id, StepKind::Refund)
                    .await?
                    .ok_or_else(|| rust_err("refund step missing"))?;
                return Ok(outcome_of(&c, &row));
            }
        };
        return finish(
            &db,
            &cfg,
            &c,
            &pi,
            row.amount_minor,
            row.currency.as_deref(),
            claimant,
            &row,
        )
        .await;
    }
    // Decided already (a duplicate event, a replay, the owner, another actor): report, never act.
    if !matches!(row.status, StepStatus::Pending | StepStatus::WaitingPayment) {
        return Ok(outcome_of(&c, &row));
    }
    let payment = payment_of(&db, &c).await?;
    let fee = money(c.fee_amount.as_deref(), c.fee_currency.as_deref());
    let supplier_refund = money(c.supplier_refund.as_deref(), c.fee_currency.as_deref());
    let plan = plan_refund(
        cfg.refund_policy,
        c.cause,
        payment.as_ref(),
        fee.as_ref(),
        supplier_refund.as_ref(),
    );
    let pi = payment.as_ref().and_then(|p| p.payment_intent.as_deref());
    let currency = payment.as_ref().and_then(|p| p.currency.as_deref());
    let open = [StepStatus::Pending, StepStatus::WaitingPayment];
    let decided = |status: StepStatus, state: RefundState, detail: String, amount: Option<i64>| {
        let db = &db;
        async move {
            store::compensation::update_step(
                db,
                id,
                StepKind::Refund,
                &StepUpdate {
                    status: Some(status),
                    detail: Some(&detail),
                    amount_minor: amount,
                    currency,
                    ..Default::default()
                },
                &open,
                now,
            )
            .await?;
            store::compensation::set_state(db, id, state, pi, now).await?;
            Ok::<RefundOutcome, worker::Error>(RefundOutcome {
                status,
                state,
                detail,
            })
        }
    };
    match plan {
        RefundPlan::NotCharged => {
            decided(
                StepStatus::Skipped,
                RefundState::NotCharged,
                "not charged: the payment processor says this checkout expired unpaid".into(),
                None,
            )
            .await
        }
        RefundPlan::PaymentUnknown => {
            decided(
                StepStatus::WaitingPayment,
                RefundState::PaymentUnknown,
                "no captured payment is known for this checkout, so nothing was refunded; a paid \
                 payment recorded later resumes this refund"
                    .into(),
                None,
            )
            .await
        }
        RefundPlan::AwaitOwner {
            amount_minor, why, ..
        } => {
            decided(
                StepStatus::AwaitingOwner,
                RefundState::Arranging,
                why,
                amount_minor,
            )
            .await
        }
        RefundPlan::Refund {
            payment_intent,
            amount_minor,
        } => {
            store::compensation::set_state(&db, id, RefundState::Open, Some(&payment_intent), now)
                .await?;
            store::compensation::update_step(
                &db,
                id,
                StepKind::Refund,
                &StepUpdate {
                    amount_minor,
                    currency,
                    ..Default::default()
                },
                &open,
                now,
            )
            .await?;
            let claimed = match store::compensation::claim_refund(
                &db,
                id,
                claimant,
                &open,
                Some(&payment_intent),
                now,
            )
            .await?
            {
                Ok(Some(claimed)) => claimed,
                Ok(None) => {
                    let row = store::compensation::step(&db, id, StepKind::Refund)
                        .await?
                        .ok_or_else(|| rust_err("refund step missing"))?;
                    return Ok(outcome_of(&c, &row));
                }
                // One refund per payment: another compensation of the same payment owns it. A
                // human looks (the guest reads "we are arranging your refund", never "refunded").
                Err(other) => {
                    return decided(
                        StepStatus::AwaitingOwner,
                        RefundState::Arranging,
                        format!("this payment's refund belongs to compensation {other}: check it before refunding here"),
                        None,
                    )
                    .await
                }
            };
            finish(
                &db,
                &cfg,
                &c,
                &payment_intent,
                amount_minor,
                currency,
                claimant,
                &claimed,
            )
            .await
        }
    }
}

/// One refund request of a claimed round, as a journey step: a retryable error fails the step
/// (the engine retries it, same key).
#[allow(clippy::too_many_arguments)]
async fn finish(
    db: &D1Database,
    cfg: &Config,
    c: &CompensationRow,
    pi: &str,
    amount_minor: Option<i64>,
    currency: Option<&str>,
    claimant: &str,
    claimed: &StepRow,
) -> Result<RefundOutcome> {
    match make_refund(
        db,
        cfg,
        &c.compensation_id,
        pi,
        amount_minor,
        currency,
        claimant,
        claimed,
    )
    .await?
    {
        Made::Done(o) | Made::Failed(o) => Ok(o),
        Made::Retry(e) => Err(rust_err(format!("refund not made yet, retrying: {e}"))),
    }
}

/// What one refund request came to.
enum Made {
    /// Stripe made (or had already made) the refund.
    Done(RefundOutcome),
    /// A permanent error: recorded `failed`; the owner decides.
    Failed(RefundOutcome),
    /// Worth retrying with the same key (recorded as the step's error, status kept `running`).
    Retry(stripe::RefundError),
}

/// One refund request for a claimed step (round `claimed.round`, its key), recorded under the
/// claim (a write is refused once another actor took the step over).
#[allow(clippy::too_many_arguments)]
async fn make_refund(
    db: &D1Database,
    cfg: &Config,
    id: &str,
    payment_intent: &str,
    amount_minor: Option<i64>,
    currency: Option<&str>,
    claimant: &str,
    claimed: &StepRow,
) -> Result<Made> {
    let key = refund_idempotency_key(id, claimed.round);
    let now = now_ms();
    // A key was sent before (a retry, a taken-over claim, a new round): Stripe may hold a refund
    // whose answer was lost, saved as an error, or older than its 24 h idempotency window. Never
    // refund twice: look first, and make no request when the look itself fails.
    if claimed.idempotency_key.is_some() {
        match stripe::list_refunds(cfg, payment_intent).await {
            Ok(existing) => {
                if let Some(r) = existing.iter().find(|r| {
                    matches!(
                        r.status.as_str(),
                        "succeeded" | "pending" | "requires_action"
                    )
                }) {
                    return Ok(Made::Done(
                        record_made(
                            db,
                            id,
                            r,
                            claimant,
                            "Stripe already held a refund of this payment",
                        )
                        .await?,
                    ));
                }
            }
            Err(e) => return Ok(Made::Retry(e)),
        }
    }
    store::compensation::update_step(
        db,
        id,
        StepKind::Refund,
        &StepUpdate {
            idempotency_key: Some(&key),
            amount_minor,
            currency,
            if_claimed_by: Some(claimant),
            ..Default::default()
        },
        &[StepStatus::Running],
        now,
    )
    .await?;
    match stripe::create_refund(cfg, payment_intent, amount_minor, id, &key).await {
        Ok(r) => Ok(Made::Done(
            record_made(db, id, &r, claimant, "refund accepted by Stripe").await?,
        )),
        Err(e) => match classify_refund_error(e.status, e.code.as_deref()) {
            RefundErrorClass::AlreadyRefunded => {
                let detail = "Stripe says this charge was already refunded: nothing more to do";
                store::compensation::update_step(
                    db,
                    id,
                    StepKind::Refund,
                    &StepUpdate {
                        status: Some(StepStatus::Done),
                        provider_status: Some("succeeded"),
                        error: Some(""),
                        detail: Some(detail),
                        if_claimed_by: Some(claimant),
                        ..Default::default()
                    },
                    &[StepStatus::Running],
                    now,
                )
                .await?;
                store::compensation::set_state(db, id, RefundState::Refunded, None, now).await?;
                Ok(Made::Done(RefundOutcome {
                    status: StepStatus::Done,
                    state: RefundState::Refunded,
                    detail: detail.into(),
                }))
            }
            RefundErrorClass::Retry => {
                let error = e.to_string();
                store::compensation::update_step(
                    db,
                    id,
                    StepKind::Refund,
                    &StepUpdate {
                        error: Some(&error),
                        if_claimed_by: Some(claimant),
                        ..Default::default()
                    },
                    &[StepStatus::Running],
                    now,
                )
                .await?;
                Ok(Made::Retry(e))
            }
            RefundErrorClass::Permanent => {
                let error = e.to_string();
                store::compensation::update_step(
                    db,
                    id,
                    StepKind::Refund,
                    &StepUpdate {
                        status: Some(StepStatus::Failed),
                        error: Some(&error),
                        detail: Some("Stripe refused the refund; the owner decides"),
                        if_claimed_by: Some(claimant),
                        ..Default::default()
                    },
                    &[StepStatus::Running],
                    now,
                )
                .await?;
                store::compensation::set_state(db, id, RefundState::Arranging, None, now).await?;
                Ok(Made::Failed(RefundOutcome {
                    status: StepStatus::Failed,
                    state: RefundState::Arranging,
                    detail: error,
                }))
            }
        },
    }
}

/// Records a refund Stripe made (`r`), and the compensation's state from its status.
async fn record_made(
    db: &D1Database,
    id: &str,
    r: &RefundUpdate,
    claimant: &str,
    detail: &str,
) -> Result<RefundOutcome> {
    let now = now_ms();
    let state = RefundState::of_provider_status(&r.status);
    store::compensation::update_step(
        db,
        id,
        StepKind::Refund,
        &StepUpdate {
            status: Some(StepStatus::Done),
            provider_id: r.refund_id.as_deref(),
            provider_status: Some(&r.status),
            amount_minor: r.amount_minor,
            currency: r.currency.as_deref(),
            error: Some(""),
            detail: Some(detail),
            if_claimed_by: Some(claimant),
            ..Default::default()
        },
        &[StepStatus::Running],
        now,
    )
    .await?;
    store::compensation::set_state(db, id, state, r.payment_intent.as_deref(), now).await?;
    Ok(RefundOutcome {
        status: StepStatus::Done,
        state,
        detail: detail.into(),
    })
}

/// The refund step failed past its retries: recorded `failed` (the owner gets the links) — only
/// while this claimant still holds it (or nobody claimed it yet).
async fn gave_up(env: &Env, id: &str, claimant: &str, error: &str) -> Result<bool> {
    let db = env.d1(DB_BINDING)?;
    let now = now_ms();
    let error = crate::domain::text::cut_chars(error, 500);
    let moved = store::compensation::update_step(
        &db,
        id,
        StepKind::Refund,
        &StepUpdate {
            status: Some(StepStatus::Failed),
            error: Some(&error),
            detail: Some("the refund request kept failing (rate limit, server error or no answer); the owner decides"),
            if_claimed_by: Some(claimant),
            ..Default::default()
        },
        &[StepStatus::Running, StepStatus::Pending],
        now,
    )
    .await?;
    if moved {
        store::compensation::set_state(&db, id, RefundState::Arranging, None, now).await?;
    }
    Ok(moved)
}

fn money(amount: Option<&str>, currency: Option<&str>) -> Option<Money> {
    Some(Money {
        amount: amount?.to_string(),
        currency: currency?.to_string(),
    })
}

/// The outcome a recorded refund step stands for.
fn outcome_of(c: &CompensationRow, row: &StepRow) -> RefundOutcome {
    RefundOutcome {
        status: row.status,
        state: c.state,
        detail: row.detail.clone().unwrap_or_default(),
    }
}

/// What the guest's notice says about the money, from the refund step as recorded.
fn refund_state_of(c: &CompensationRow, refund: &StepRow) -> RefundState {
    match refund.status {
        StepStatus::Done => match refund.provider_status.as_deref() {
            Some(s) => RefundState::of_provider_status(s),
            None => RefundState::Refunding,
        },
        StepStatus::Skipped if c.state == RefundState::NotCharged => RefundState::NotCharged,
        StepStatus::WaitingPayment => RefundState::PaymentUnknown,
        _ => RefundState::Arranging,
    }
}

/// The amount the notices name: the refund's when known, else `None` (the wording then says
/// "your payment").
fn amount_text(refund: &StepRow) -> Option<String> {
    Some(format_minor(
        refund.amount_minor?,
        refund.currency.as_deref()?,
    ))
}

/// Steps 4 and 5: the guest's notice (once per compensation) and the owner's alert (`stage`
/// names which: `opened`, `payment`, `refund_failed_<n>`; one alert per stage).
async fn notices(
    env: &Env,
    id: &str,
    confirmation_sent: bool,
    stage: &str,
    now: i64,
) -> Result<Vec<crate::domain::email::OutgoingEmail>> {
    let db = env.d1(DB_BINDING)?;
    let cfg = config(env)?;
    let c = store::compensation::get(&db, id)
        .await?
        .ok_or_else(|| rust_err("compensation vanished"))?;
    let steps = store::compensation::steps(&db, id).await?;
    let refund = steps
        .iter()
        .find(|s| s.step == StepKind::Refund)
        .cloned()
        .ok_or_else(|| rust_err("refund step missing"))?;
    let state = refund_state_of(&c, &refund);
    let amount = amount_text(&refund);
    let mut emails = Vec::new();
    let guest = c
        .guest_email
        .as_deref()
        .and_then(|e| EmailAddress::parse(e).ok());
    if stage == "opened" && c.cause == Cause::SupplierFailed {
        match &guest {
            Some(to) => {
                let view = render::CompensationNotice {
                    compensation_id: c.compensation_id.clone(),
                    booking_id: c.booking_id.clone(),
                    guest_name: c.guest_name.clone(),
                    trip: c.trip.clone(),
                    confirmation_sent,
                    state,
                    amount: amount.clone(),
                };
                let email = guarded(&cfg.content_lock(), &view, |v| {
                    render::booking_not_confirmed(v, to, &cfg.branding)
                })
                .map_err(rust_err)?;
                emails.push(email);
                store::compensation::update_step(
                    &db,
                    id,
                    StepKind::GuestNotice,
                    &StepUpdate {
                        status: Some(StepStatus::Done),
                        detail: Some(&format!(
                            "{} notice, refund wording: {}",
                            if confirmation_sent {
                                "cancellation"
                            } else {
                                "not confirmed"
                            },
                            state.as_str()
                        )),
                        ..Default::default()
                    },
                    &[StepStatus::Pending],
                    now,
                )
                .await?;
            }
            None => {
                store::compensation::update_step(
                    &db,
                    id,
                    StepKind::GuestNotice,
                    &StepUpdate {
                        status: Some(StepStatus::Skipped),
                        detail: Some("no usable guest email address"),
                        ..Default::default()
                    },
                    &[StepStatus::Pending],
                    now,
                )
                .await?;
            }
        }
    } else if stage == "opened" {
        // A cancellation: the guest's cancellation email is the notice.
        store::compensation::update_step(
            &db,
            id,
            StepKind::GuestNotice,
            &StepUpdate {
                status: Some(StepStatus::Skipped),
                detail: Some("the guest's cancellation email is the notice"),
                ..Default::default()
            },
            &[StepStatus::Pending],
            now,
        )
        .await?;
    }
    let links = if matches!(
        refund.status,
        StepStatus::AwaitingOwner | StepStatus::Failed
    ) {
        let round = compensation::next_owner_round(refund.status, refund.round);
        refund_links(&cfg, id, round, now / 1000)
    } else {
        Vec::new()
    };
    let steps = store::compensation::steps(&db, id).await?;
    let alert = render::owner_compensation(
        &render::OwnerCompensation {
            compensation: &c,
            steps: &steps,
            state,
            amount: amount.as_deref(),
            links: &links,
            stage,
        },
        &cfg.owner_email,
        &cfg.branding,
    )
    .map_err(rust_err)?;
    emails.push(alert);
    if stage == "opened" {
        store::compensation::update_step(
            &db,
            id,
            StepKind::OwnerAlert,
            &StepUpdate {
                status: Some(StepStatus::Done),
                detail: Some(if links.is_empty() {
                    "alert with the facts"
                } else {
                    "alert with the facts and one-click refund links"
                }),
                ..Default::default()
            },
            &[StepStatus::Pending],
            now,
        )
        .await?;
    }
    Ok(emails)
}

/// The owner's one-click links of a compensation's refund round `round`, signed like
/// card-testing holds (subject [`compensation::link_subject`]).
pub fn refund_links(cfg: &Config, id: &str, round: i64, now_s: i64) -> Vec<(OwnerAction, String)> {
    if cfg.action_signing_key.is_empty() {
        return Vec::new();
    }
    [OwnerAction::RefundNow, OwnerAction::RefundHandled]
        .into_iter()
        .map(|action| {
            let token = action_token::sign(
                &compensation::link_subject(id, round),
                action,
                now_s + cfg.action_link_ttl_s,
                cfg.action_signing_key.as_bytes(),
            );
            (
                action,
                cfg.public_link(&format!("/actions/{token}")).to_string(),
            )
        })
        .collect()
}

/// A booking journey's check before it confirms anything: is this booking (by id, prebook id or
/// client reference) being compensated? If so the booking is recorded closed (`FAILED`) and the
/// compensation learns its booking id; returns the compensation id.
pub(crate) async fn closed_by_compensation(
    db: &D1Database,
    booking_id: &str,
    prebook_id: Option<&str>,
    client_reference: Option<&str>,
    at: i64,
) -> Result<Option<String>> {
    let Some(c) =
        store::compensation::find_for_booking(db, Some(booking_id), prebook_id, client_reference)
            .await?
    else {
        return Ok(None);
    };
    if c.cause != Cause::SupplierFailed {
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
) -> Result<Vec<crate::domain::email::OutgoingEmail>> {
    let db = env.d1(DB_BINDING)?;
    let prebooks = store::checkout::prebooks_of(&db, intents, references).await?;
    let prebooks: Vec<&str> = prebooks.iter().map(String::as_str).collect();
    let ids =
        store::compensation::waiting_for_payment(&db, intents, references, &prebooks, claimant)
            .await?;
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

/// A supplier cancellation of a booking the guest paid for: a compensation (cause
/// `booking_cancelled`) whose refund follows the policy; the guest's cancellation email is the
/// notice, the owner gets the refund alert. Nothing happens when no payment is known (most
/// cancellations are paid through the supplier).
pub(crate) async fn for_cancellation(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    c: &Cancellation,
    out: &mut JourneyOutput,
) -> Result<()> {
    let opened: Option<String> = {
        let (env, c, params) = (env.clone(), c.clone(), params.clone());
        step.run(
            &format!(
                "compensation for cancel {}",
                step_part(c.booking_id.as_str())
            ),
            StepConfig::STORAGE,
            async move || open_for_cancellation(&env, &c, &params).await,
        )
        .await?
    };
    let Some(id) = opened else {
        return Ok(());
    };
    // The guest's cancellation email is the notice; its confirmation had gone out.
    refund_then_notify(step, env, params, &id, true, out).await
}

async fn open_for_cancellation(
    env: &Env,
    c: &Cancellation,
    params: &JourneyParams,
) -> Result<Option<String>> {
    let db = env.d1(DB_BINDING)?;
    let Some(b) = store::bookings::payment_keys(&db, c.booking_id.as_str()).await? else {
        return Ok(None);
    };
    let (tx, reference) = match b.prebook_id.as_deref() {
        Some(p) => store::checkout::get_ids(&db, p).await?.unwrap_or_default(),
        None => (None, None),
    };
    let intents: Vec<&str> = tx.as_deref().into_iter().collect();
    let references: Vec<&str> = [reference.as_deref(), b.client_reference.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let Some(payment) = store::compensation::find_payment(&db, &intents, &references).await? else {
        return Ok(None);
    };
    if !payment.outcome.is_paid() {
        return Ok(None);
    }
    let Some(id) = compensation_id(
        b.prebook_id.as_deref(),
        b.client_reference.as_deref().or(reference.as_deref()),
        Some(c.booking_id.as_str()),
    ) else {
        return Ok(None);
    };
    let fee = c.cancellation_fee.as_ref();
    let reason = if c.with_charges {
        "the supplier cancelled the booking with charges"
    } else {
        "the supplier cancelled the booking"
    };
    store::compensation::open(
        &db,
        &NewCompensation {
            compensation_id: &id,
            cause: Cause::BookingCancelled,
            booking_id: Some(c.booking_id.as_str()),
            prebook_id: b.prebook_id.as_deref(),
            client_reference: b.client_reference.as_deref().or(reference.as_deref()),
            payment_intent: payment.payment_intent.as_deref(),
            guest_email: Some(&b.contact_email),
            guest_name: None,
            trip: b.trip.as_deref(),
            source: params.source.as_str(),
            event_id: params.event_id.as_str(),
            event_name: &params.event_name,
            reason,
            fee_amount: fee.map(|m| m.amount.as_str()),
            fee_currency: fee.or(c.refund.as_ref()).map(|m| m.currency.as_str()),
            supplier_refund: c.refund.as_ref().map(|m| m.amount.as_str()),
            at_ms: params.received_at_ms,
        },
    )
    .await?;
    let now = now_or(params.received_at_ms);
    for (kind, detail) in [
        (
            StepKind::CloseBooking,
            "the cancellation closed the booking",
        ),
        (
            StepKind::WithdrawEmails,
            "the cancellation withdrew the booking's queued emails",
        ),
    ] {
        store::compensation::update_step(
            &db,
            &id,
            kind,
            &StepUpdate {
                status: Some(StepStatus::Done),
                detail: Some(detail),
                ..Default::default()
            },
            &[StepStatus::Pending],
            now,
        )
        .await?;
    }
    Ok(Some(id))
}

/// Stripe's word on a refund: the step's provider status moves on; a refund that failed or was
/// canceled after Stripe accepted it goes back to the owner (alert with links, once per refund).
pub async fn refund_updated(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    r: &RefundUpdate,
) -> Result<JourneyOutput> {
    let mut out = JourneyOutput::new("refund_updated");
    let name = format!(
        "refund update {} {}",
        step_part(
            r.refund_id
                .as_deref()
                .or(r.payment_intent.as_deref())
                .unwrap_or("-")
        ),
        step_part(&r.status)
    );
    let emails: Vec<crate::domain::email::OutgoingEmail> = {
        let (env, r) = (env.clone(), r.clone());
        let at = params.received_at_ms;
        step.run(&name, StepConfig::STORAGE, async move || {
            apply_refund_update(&env, &r, at).await
        })
        .await?
    };
    if emails.is_empty() {
        out.skipped.push((
            "refund_updated".into(),
            "no compensation refund changed".into(),
        ));
    }
    for email in emails {
        deliver_once(step, env, email, params.received_at_ms, &mut out).await;
    }
    Ok(out)
}

async fn apply_refund_update(
    env: &Env,
    r: &RefundUpdate,
    at: i64,
) -> Result<Vec<crate::domain::email::OutgoingEmail>> {
    let db = env.d1(DB_BINDING)?;
    let Some(id) = store::compensation::find_by_refund(
        &db,
        r.refund_id.as_deref(),
        r.payment_intent.as_deref(),
    )
    .await?
    else {
        return Ok(Vec::new());
    };
    let Some(row) = store::compensation::step(&db, &id, StepKind::Refund).await? else {
        return Ok(Vec::new());
    };
    // Only a refund the engine made (or one Stripe made for this payment while the step was
    // with the owner) moves the record.
    let same_refund = match (&row.provider_id, &r.refund_id) {
        (Some(mine), Some(theirs)) => mine == theirs,
        _ => true,
    };
    if !same_refund {
        return Ok(Vec::new());
    }
    // Stripe's word arrived while the request that made the refund is still being recorded: the
    // step fails and the engine retries it, so the word is applied to the recorded refund.
    if row.status == StepStatus::Running {
        return Err(rust_err(
            "the refund is still being recorded; retrying Stripe's update after it",
        ));
    }
    // Final statuses win: a late `pending` never moves a succeeded refund back.
    let final_status = |s: Option<&str>| matches!(s, Some("succeeded" | "failed" | "canceled"));
    if final_status(row.provider_status.as_deref()) && !final_status(Some(&r.status)) {
        return Ok(Vec::new());
    }
    let now = now_or(at);
    let state = RefundState::of_provider_status(&r.status);
    match state {
        RefundState::RefundFailed => {
            let error = format!(
                "Stripe reports the refund {}{}",
                r.status,
                r.failure_reason
                    .as_deref()
                    .map(|f| format!(" ({f})"))
                    .unwrap_or_default()
            );
            let moved = store::compensation::update_step(
                &db,
                &id,
                StepKind::Refund,
                &StepUpdate {
                    status: Some(StepStatus::Failed),
                    provider_status: Some(&r.status),
                    error: Some(&error),
                    ..Default::default()
                },
                &[StepStatus::Done],
                now,
            )
            .await?;
            if !moved {
                return Ok(Vec::new());
            }
            store::compensation::set_state(&db, &id, RefundState::RefundFailed, None, now).await?;
            let stage = format!("refund_failed_{}", row.round);
            notices(env, &id, false, &stage, now).await
        }
        _ => {
            if row.status == StepStatus::Done {
                store::compensation::update_step(
                    &db,
                    &id,
                    StepKind::Refund,
                    &StepUpdate {
                        provider_status: Some(&r.status),
                        provider_id: r.refund_id.as_deref(),
                        ..Default::default()
                    },
                    &[StepStatus::Done],
                    now,
                )
                .await?;
                store::compensation::set_state(&db, &id, state, None, now).await?;
            }
            Ok(Vec::new())
        }
    }
}

/// What the owner's POST on a refund link did.
#[derive(Debug, Clone)]
pub enum OwnerRefund {
    /// Refunded (or Stripe already had the refund).
    Refunded(RefundOutcome),
    /// Stripe refused for good; the step is `failed` again.
    Refused(String),
    /// No answer / rate limit / 5xx: nothing changed, the link works again.
    TryAgain(String),
    /// Another actor holds the refund, or it is already decided.
    AlreadyDecided(String),
    /// Marked handled outside the engine.
    Handled,
}

/// The owner's "refund now" (`claimant` = `owner:<token id>`): claims the step from
/// `awaiting_owner` or `failed` (a new round), refunds once, records.
pub async fn owner_refund(env: &Env, id: &str, claimant: &str) -> Result<OwnerRefund> {
    let db = env.d1(DB_BINDING)?;
    let cfg = config(env)?;
    let c = store::compensation::get(&db, id)
        .await?
        .ok_or_else(|| rust_err("unknown compensation"))?;
    let before = store::compensation::step(&db, id, StepKind::Refund)
        .await?
        .ok_or_else(|| rust_err("refund step missing"))?;
    if before.amount_minor == Some(0) {
        // The supplier's fee covers the payment: "everything" (no amount) would be wrong.
        return Ok(OwnerRefund::Refused(
            "the supplier's fee covers the whole payment, so the engine will not refund it; if you \
             decide otherwise, refund from the Stripe dashboard, then use \u{201c}already handled\u{201d}"
                .into(),
        ));
    }
    let payment = payment_of(&db, &c).await?;
    let Some(pi) = payment
        .as_ref()
        .and_then(|p| p.payment_intent.clone())
        .or(c.payment_intent.clone())
    else {
        return Ok(OwnerRefund::Refused(
            "no Stripe payment intent is known for this payment: refund it from the Stripe dashboard, then use \u{201c}already handled\u{201d}".into(),
        ));
    };
    let claimed = match store::compensation::claim_refund(
        &db,
        id,
        claimant,
        &[StepStatus::AwaitingOwner, StepStatus::Failed],
        Some(&pi),
        now_ms(),
    )
    .await?
    {
        Ok(Some(claimed)) => claimed,
        Ok(None) => {
            return Ok(OwnerRefund::AlreadyDecided(format!(
                "the refund is {}",
                before.status
            )))
        }
        Err(other) => {
            return Ok(OwnerRefund::AlreadyDecided(format!(
                "this payment's refund belongs to compensation {other}"
            )))
        }
    };
    let currency = payment.as_ref().and_then(|p| p.currency.clone());
    match make_refund(
        &db,
        &cfg,
        id,
        &pi,
        before.amount_minor,
        currency.as_deref(),
        claimant,
        &claimed,
    )
    .await?
    {
        Made::Done(o) => Ok(OwnerRefund::Refunded(o)),
        Made::Failed(o) => {
            // The owner's links of this round are spent: a new alert carries the next round's.
            let now = now_ms();
            let stage = format!("refund_failed_{}", claimed.round);
            for email in notices(env, id, false, &stage, now).await? {
                deliver(env, &email, now).await?;
            }
            Ok(OwnerRefund::Refused(o.detail))
        }
        Made::Retry(e) => {
            release(&db, id, claimant, &before, &e.to_string()).await?;
            Ok(OwnerRefund::TryAgain(e.to_string()))
        }
    }
}

/// Gives a claimed refund step back to the owner: status and round as before the claim, so the
/// same link works again.
async fn release(
    db: &D1Database,
    id: &str,
    claimant: &str,
    before: &StepRow,
    error: &str,
) -> Result<()> {
    let status = if before.status == StepStatus::Running {
        StepStatus::Failed
    } else {
        before.status
    };
    store::compensation::update_step(
        db,
        id,
        StepKind::Refund,
        &StepUpdate {
            status: Some(status),
            round: Some(before.round),
            error: Some(error),
            if_claimed_by: Some(claimant),
            ..Default::default()
        },
        &[StepStatus::Running],
        now_ms(),
    )
    .await?;
    Ok(())
}

/// The owner's "already handled": the step is done without a Stripe call.
pub async fn owner_handled(env: &Env, id: &str) -> Result<OwnerRefund> {
    let db = env.d1(DB_BINDING)?;
    let now = now_ms();
    let moved = store::compensation::update_step(
        &db,
        id,
        StepKind::Refund,
        &StepUpdate {
            status: Some(StepStatus::Done),
            detail: Some("marked handled by the owner outside the engine"),
            ..Default::default()
        },
        &[StepStatus::AwaitingOwner, StepStatus::Failed],
        now,
    )
    .await?;
    if !moved {
        return Ok(OwnerRefund::AlreadyDecided(
            "the refund was already decided".into(),
        ));
    }
    store::compensation::set_state(&db, id, RefundState::Handled, None, now).await?;
    Ok(OwnerRefund::Handled)
}
