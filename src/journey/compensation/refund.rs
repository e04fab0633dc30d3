//! The refund step (`crate::domain::payment::compensation::plan_refund`, Stripe through
//! `crate::suppliers::stripe`): claimed by one actor at a time, one idempotency key per round,
//! every write guarded by its claimant.

use super::*;
use crate::domain::payment::payment_proof::Verdict as Proof;

/// Retries of the refund step: 6 from 5 s, exponential (5 s … 160 s, about 5 minutes in all),
/// for rate limits, 5xx and no answer, always with the same idempotency key. Past them the step
/// is recorded `failed` and the owner gets the links.
pub(super) const REFUND: StepConfig = StepConfig {
    retries: 6,
    delay_ms: 5_000,
    timeout_ms: 60_000,
};

/// What the refund step left.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RefundOutcome {
    pub status: StepStatus,
    pub state: RefundState,
    pub detail: String,
}

impl RefundOutcome {
    /// The step's `status`, the compensation's `state` and the step's `detail` (text for the
    /// owner).
    pub fn new(status: StepStatus, state: RefundState, detail: String) -> Self {
        Self {
            status,
            state,
            detail,
        }
    }
}

/// The refund step as the journey runs it (claimant: the event id, stable across retries).
/// A final state publishes `booking.compensated` (see [`super::publish_if_final`]) — here only
/// best effort, logged: a failed publish must not fail a refund that was made. The saga's own
/// step publishes it again (same event id) after this step.
pub(super) async fn refund_by_journey(
    env: &Env,
    id: &str,
    claimant: &str,
) -> Result<RefundOutcome> {
    let outcome = refund_step(env, id, claimant).await?;
    if let Err(e) = super::publish_if_final(env, id, outcome.state).await {
        worker::console_error!("compensation {id}: publishing booking.compensated failed: {e}");
    }
    Ok(outcome)
}

async fn refund_step(env: &Env, id: &str, claimant: &str) -> Result<RefundOutcome> {
    let db = env.d1(DB_BINDING)?;
    let cfg = config(env)?;
    let (c, row) = store::compensation::with_refund(&db, id).await?;
    let now = now_ms();
    // A retry of this claimant's own round: finish it with the intent, key and amount already
    // proven and sent, never re-plan (a new amount under the same key is refused by Stripe), and
    // never an intent the step did not prove.
    if row.status == StepStatus::Running && row.claimed_by.as_deref() == Some(claimant) {
        let (Some(pi), Some(amount)) = (row.payment_intent.clone(), row.amount_minor) else {
            return Err(rust_err(
                "a running refund without a proven payment intent and amount: nothing is sent",
            ));
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
        let currency = row.currency.clone();
        return finish(
            &db,
            &cfg,
            &c,
            &pi,
            amount,
            currency.as_deref(),
            claimant,
            &row,
        )
        .await;
    }
    // "Not charged" was the processor's word then; a paid payment recorded since overrides it
    // (money first: the refund is made, the owner told).
    let not_charged = row.status == StepStatus::Skipped && c.state == RefundState::NotCharged;
    // Decided already (a duplicate event, a replay, the owner, another actor): report, never act.
    if !not_charged && !matches!(row.status, StepStatus::Pending | StepStatus::WaitingPayment) {
        return Ok(outcome_of(&c, &row));
    }
    // The plan and the proof judge one payment intent: the plan's (see `super::proof::decide`).
    let super::proof::Decided {
        payment,
        plan,
        verdict,
    } = super::proof::decide(&db, &cfg, &c).await?;
    let currency = payment.as_ref().and_then(|p| p.currency.as_deref());
    let open = [
        StepStatus::Pending,
        StepStatus::WaitingPayment,
        if not_charged {
            StepStatus::Skipped
        } else {
            StepStatus::Pending
        },
    ];
    // `pi`: the proven intent, recorded on the compensation too (other compensations' ownership
    // verdicts read it as this one's claim).
    let decided = |status: StepStatus,
                   state: RefundState,
                   detail: String,
                   amount: Option<i64>,
                   currency: Option<&str>,
                   pi: Option<&str>| {
        let db = &db;
        let (currency, pi) = (currency.map(str::to_string), pi.map(str::to_string));
        async move {
            store::compensation::update_step(
                db,
                id,
                StepKind::Refund,
                &StepUpdate {
                    status: Some(status),
                    detail: Some(&detail),
                    amount_minor: amount,
                    currency: currency.as_deref(),
                    ..Default::default()
                },
                &open,
                now,
            )
            .await?;
            store::compensation::set_state(db, id, state, pi.as_deref(), now).await?;
            Ok::<_, worker::Error>(RefundOutcome::new(status, state, detail))
        }
    };
    let (automatic, why) =
        match plan {
            RefundPlan::NotCharged => {
                return decided(
                    StepStatus::Skipped,
                    RefundState::NotCharged,
                    "not charged: the payment processor says this checkout expired unpaid".into(),
                    None,
                    currency,
                    None,
                )
                .await
            }
            RefundPlan::PaymentUnknown => return decided(
                StepStatus::WaitingPayment,
                RefundState::PaymentUnknown,
                "no captured payment is known for this checkout, so nothing was refunded; a paid \
                 payment recorded later resumes this refund"
                    .into(),
                None,
                currency,
                None,
            )
            .await,
            RefundPlan::AwaitOwner { why, .. } => (false, why),
            RefundPlan::Refund { .. } => (true, String::new()),
        };
    // Proof before any refund, whatever the policy: the owner's alert says whether the engine
    // can refund at all. Stripe not answering fails the step (retried, never a fall back).
    let Some(verdict) = verdict else {
        return Err(rust_err("a refund plan without a proof"));
    };
    let proven = match &verdict {
        Proof::Retry { why } => {
            return Err(rust_err(format!(
                "Stripe could not be asked to prove the payment, retrying: {why}"
            )))
        }
        Proof::Covered { why, currency } => {
            // The supplier's fee covers what Stripe says was captured: nothing to refund.
            return decided(
                StepStatus::AwaitingOwner,
                RefundState::Arranging,
                why.clone(),
                Some(0),
                Some(currency),
                None,
            )
            .await;
        }
        Proof::NotProven { .. } => {
            super::proof::keep(&db, id, &verdict, &open, now).await?;
            return decided(
                StepStatus::AwaitingOwner,
                RefundState::Arranging,
                super::proof::NOT_PROVEN.into(),
                None,
                currency,
                None,
            )
            .await;
        }
        Proof::Proven(p) => p,
    };
    super::proof::keep(&db, id, &verdict, &open, now).await?;
    // What the step holds from now on is what every request names (a step that held a proven
    // intent already keeps it).
    let stored = store::compensation::step(&db, id, StepKind::Refund)
        .await?
        .ok_or_else(|| rust_err("refund step missing"))?;
    let (Some(pi), Some(amount)) = (stored.payment_intent.clone(), stored.amount_minor) else {
        return Ok(outcome_of(&c, &stored));
    };
    let currency = stored.currency.clone().or(Some(proven.currency.clone()));
    if !automatic {
        return decided(
            StepStatus::AwaitingOwner,
            RefundState::Arranging,
            why,
            Some(amount),
            currency.as_deref(),
            Some(&pi),
        )
        .await;
    }
    store::compensation::set_state(&db, id, RefundState::Open, Some(&pi), now).await?;
    let claimed =
        match store::compensation::claim_refund(&db, id, claimant, &open, Some(&pi), now).await? {
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
                    Some(amount),
                    currency.as_deref(),
                    Some(&pi),
                )
                .await
            }
        };
    finish(
        &db,
        &cfg,
        &c,
        &pi,
        amount,
        currency.as_deref(),
        claimant,
        &claimed,
    )
    .await
}

/// One refund request of a claimed round, as a journey step: a retryable error fails the step
/// (the engine retries it, same key).
#[allow(clippy::too_many_arguments)]
pub(super) async fn finish(
    db: &D1Database,
    cfg: &Config,
    c: &CompensationRow,
    pi: &str,
    amount_minor: i64,
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
pub(super) enum Made {
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
pub(super) async fn make_refund(
    db: &D1Database,
    cfg: &Config,
    id: &str,
    payment_intent: &str,
    amount_minor: i64,
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
                // Only a refund this compensation made (its metadata), never another refund of the
                // payment (a partial one from the dashboard).
                if let Some(r) = existing.iter().find(|r| {
                    r.compensation_id.as_deref() == Some(id)
                        && matches!(
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
    let still_mine = update_claimed(
        db,
        id,
        claimant,
        StepUpdate {
            idempotency_key: Some(&key),
            amount_minor: Some(amount_minor),
            currency,
            ..Default::default()
        },
        now,
    )
    .await?;
    if !still_mine {
        // Another actor took the step over while this one stalled: it refunds, not us.
        return Ok(Made::Retry(stripe::RefundError {
            status: Some(409),
            code: Some("claim_lost".into()),
            message: "another actor holds this refund now".into(),
        }));
    }
    match stripe::create_refund(cfg, payment_intent, amount_minor, id, &key).await {
        Ok(r) => Ok(Made::Done(
            record_made(db, id, &r, claimant, "refund accepted by Stripe").await?,
        )),
        Err(e) => match classify_refund_error(e.status, e.code.as_deref()) {
            RefundErrorClass::AlreadyRefunded => {
                let detail = "Stripe says this charge was already refunded: nothing more to do";
                let update = StepUpdate {
                    provider_status: Some("succeeded"),
                    error: Some(""),
                    detail: Some(detail),
                    ..Default::default()
                };
                let outcome =
                    RefundOutcome::new(StepStatus::Done, RefundState::Refunded, detail.into());
                Ok(Made::Done(
                    settle(db, id, claimant, update, outcome, None, now).await?,
                ))
            }
            RefundErrorClass::Retry => {
                let error = e.to_string();
                let update = StepUpdate {
                    error: Some(&error),
                    ..Default::default()
                };
                update_claimed(db, id, claimant, update, now).await?;
                Ok(Made::Retry(e))
            }
            RefundErrorClass::Permanent => {
                let error = e.to_string();
                let update = StepUpdate {
                    error: Some(&error),
                    detail: Some("Stripe refused the refund; the owner decides"),
                    ..Default::default()
                };
                let outcome =
                    RefundOutcome::new(StepStatus::Failed, RefundState::Arranging, error.clone());
                Ok(Made::Failed(
                    settle(db, id, claimant, update, outcome, None, now).await?,
                ))
            }
        },
    }
}

/// Records a refund Stripe made (`r`), and the compensation's state from its status.
pub(super) async fn record_made(
    db: &D1Database,
    id: &str,
    r: &RefundUpdate,
    claimant: &str,
    detail: &str,
) -> Result<RefundOutcome> {
    let update = StepUpdate {
        provider_id: r.refund_id.as_deref(),
        provider_status: Some(&r.status),
        amount_minor: r.amount_minor,
        currency: r.currency.as_deref(),
        error: Some(""),
        detail: Some(detail),
        ..Default::default()
    };
    let outcome = RefundOutcome::new(
        StepStatus::Done,
        RefundState::of_provider_status(&r.status),
        detail.into(),
    );
    let pi = r.payment_intent.as_deref();
    settle(db, id, claimant, update, outcome, pi, now_ms()).await
}

/// Writes `u` to compensation `id`'s refund step while it is `running` under `claimant`'s claim
/// (`now` in ms since the epoch). Returns whether it was written (`false`: the claim was lost).
pub(super) async fn update_claimed(
    db: &D1Database,
    id: &str,
    claimant: &str,
    u: StepUpdate<'_>,
    now: i64,
) -> Result<bool> {
    let u = StepUpdate {
        if_claimed_by: Some(claimant),
        ..u
    };
    store::compensation::update_step(db, id, StepKind::Refund, &u, &[StepStatus::Running], now)
        .await
}

/// Ends the refund step as `outcome` says: `u` with the outcome's status written under
/// `claimant`'s claim ([`update_claimed`]), then the compensation moved to the outcome's state
/// (recording the payment intent `pi` when given). Returns `outcome`.
async fn settle(
    db: &D1Database,
    id: &str,
    claimant: &str,
    u: StepUpdate<'_>,
    outcome: RefundOutcome,
    pi: Option<&str>,
    now: i64,
) -> Result<RefundOutcome> {
    let u = StepUpdate {
        status: Some(outcome.status),
        ..u
    };
    update_claimed(db, id, claimant, u, now).await?;
    store::compensation::set_state(db, id, outcome.state, pi, now).await?;
    Ok(outcome)
}

/// The refund step failed past its retries: recorded `failed` (the owner gets the links) — only
/// while this claimant still holds it (or nobody claimed it yet).
pub(super) async fn gave_up(env: &Env, id: &str, claimant: &str, error: &str) -> Result<bool> {
    let db = env.d1(DB_BINDING)?;
    let now = now_ms();
    let error = crate::domain::basics::text::cut_chars(error, 500);
    let moved = store::compensation::update_step(
        &db,
        id,
        StepKind::Refund,
        &StepUpdate {
            status: Some(StepStatus::Failed),
            error: Some(&error),
            detail: Some("the refund request, or the look-up at Stripe that proves the payment first, kept failing (rate limit, server error or no answer); the owner decides"),
            if_claimed_by: Some(claimant),
            ..Default::default()
        },
        &[
            StepStatus::Running,
            StepStatus::Pending,
            StepStatus::WaitingPayment,
        ],
        now,
    )
    .await?;
    if moved {
        store::compensation::set_state(&db, id, RefundState::Arranging, None, now).await?;
    }
    Ok(moved)
}

/// The outcome a recorded refund step stands for.
pub(super) fn outcome_of(c: &CompensationRow, row: &StepRow) -> RefundOutcome {
    RefundOutcome::new(row.status, c.state, row.detail.clone().unwrap_or_default())
}
