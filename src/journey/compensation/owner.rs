//! The owner's one-click actions on a compensation's refund ("refund now", "already handled"),
//! called by the one-click action route (`/actions/{token}`).

use super::*;
use crate::domain::payment::payment_proof::Verdict as Proof;

/// What the owner's POST on a refund link did.
#[derive(Debug, Clone)]
pub enum OwnerRefund {
    /// Refunded (or Stripe already had the refund).
    Refunded(RefundOutcome),
    /// Stripe refused for good; the step is `failed` again.
    Refused(String),
    /// Stripe's record does not tie the payment to this compensation: nothing was asked of
    /// Stripe, only "already handled" is left. Carries what Stripe said.
    NotProven(String),
    /// No answer / rate limit / 5xx: nothing changed, the link works again.
    TryAgain(String),
    /// Another actor holds the refund, or it is already decided.
    AlreadyDecided(String),
    /// Marked handled outside the engine.
    Handled,
}

/// The owner's "refund now" (`claimant` = `owner:<token id>`, or the admin's): claims the step
/// from `awaiting_owner` or `failed` (a new round), refunds once, records. Only the payment intent
/// Stripe's record proved this compensation's is refunded, for the amount proven with it: the
/// one the step holds, else the one proven now ([`super::proof::decide`]); a payment Stripe does
/// not tie to the compensation is refused, and Stripe not answering changes nothing (try again).
pub async fn owner_refund(env: &Env, id: &str, claimant: &str) -> Result<OwnerRefund> {
    let db = env.d1(DB_BINDING)?;
    let cfg = config(env)?;
    let (c, mut before) = store::compensation::with_refund(&db, id).await?;
    // A click again after a decision whose publishing failed: publish it now (same event id).
    super::publish_if_final(env, id, c.state).await?;
    if before.amount_minor == Some(0) {
        // The supplier's fee covers the payment: "everything" would be wrong.
        return Ok(OwnerRefund::Refused(
            "the supplier's fee covers the whole payment, so the engine will not refund it; if you \
             decide otherwise, refund from the Stripe dashboard, then use \u{201c}already handled\u{201d}"
                .into(),
        ));
    }
    let waiting = [StepStatus::AwaitingOwner, StepStatus::Failed];
    if before.payment_intent.is_none() {
        if !waiting.contains(&before.status) {
            return Ok(OwnerRefund::AlreadyDecided(format!(
                "the refund is {}",
                before.status
            )));
        }
        // The same plan and proof as the journey's refund step: one intent, Stripe's figures.
        let Some(verdict) = super::proof::decide(&db, &cfg, &c).await?.verdict else {
            return Ok(OwnerRefund::AlreadyDecided(
                "no captured payment is known for this compensation".into(),
            ));
        };
        match &verdict {
            Proof::Retry { why } => return Ok(OwnerRefund::TryAgain(why.clone())),
            Proof::Covered { why, .. } => {
                return Ok(OwnerRefund::Refused(format!(
                    "{why}; if you decide otherwise, refund from the Stripe dashboard, then use \
                     \u{201c}already handled\u{201d}"
                )))
            }
            Proof::NotProven { why } => {
                let update = StepUpdate {
                    proof: Some(why),
                    detail: Some(super::proof::NOT_PROVEN),
                    ..Default::default()
                };
                store::compensation::update_step(
                    &db,
                    id,
                    StepKind::Refund,
                    &update,
                    &waiting,
                    now_ms(),
                )
                .await?;
                return Ok(OwnerRefund::NotProven(why.clone()));
            }
            Proof::Proven(_) => {
                super::proof::keep(&db, id, &verdict, &waiting, now_ms()).await?;
                before = store::compensation::step(&db, id, StepKind::Refund)
                    .await?
                    .ok_or_else(|| rust_err("refund step missing"))?;
            }
        }
    }
    // Exactly what the step holds: its proven intent, amount and currency.
    let (Some(pi), Some(amount)) = (before.payment_intent.clone(), before.amount_minor) else {
        return Ok(OwnerRefund::AlreadyDecided(format!(
            "the refund is {}",
            before.status
        )));
    };
    let claimed =
        match store::compensation::claim_refund(&db, id, claimant, &waiting, Some(&pi), now_ms())
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
    let currency = before.currency.clone();
    match make_refund(
        &db,
        &cfg,
        id,
        &pi,
        amount,
        currency.as_deref(),
        claimant,
        &claimed,
    )
    .await?
    {
        Made::Done(o) => {
            // The money moved: a failed publish must not turn that into an error page (a click
            // again publishes it, see above).
            if let Err(e) = super::publish_if_final(env, id, o.state).await {
                worker::console_error!(
                    "compensation {id}: publishing booking.compensated failed: {e}"
                );
            }
            Ok(OwnerRefund::Refunded(o))
        }
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
pub(super) async fn release(
    db: &D1Database,
    id: &str,
    claimant: &str,
    before: &StepRow,
    error: &str,
) -> Result<()> {
    // An abandoned claim taken over from a round-R link goes back to waiting for the owner at
    // round R, so that link works again (the key is safe: it looks at Stripe's refunds first).
    let status = if before.status == StepStatus::Running {
        StepStatus::AwaitingOwner
    } else {
        before.status
    };
    let update = StepUpdate {
        status: Some(status),
        round: Some(before.round),
        error: Some(error),
        ..Default::default()
    };
    update_claimed(db, id, claimant, update, now_ms()).await?;
    Ok(())
}

/// The owner's "already handled": the step is done without a Stripe call. Claimed first like a
/// refund (from `awaiting_owner`, `failed`, or a `running` claim abandoned past the lease), so it
/// never lands on a refund another actor is making right now.
pub async fn owner_handled(env: &Env, id: &str, claimant: &str) -> Result<OwnerRefund> {
    let db = env.d1(DB_BINDING)?;
    let now = now_ms();
    let claimed = store::compensation::claim_refund(
        &db,
        id,
        claimant,
        &[StepStatus::AwaitingOwner, StepStatus::Failed],
        None,
        now,
    )
    .await?;
    if !matches!(claimed, Ok(Some(_))) {
        // Decided before: if its publishing failed then, publish now (same event id).
        if let Some(c) = store::compensation::get(&db, id).await? {
            super::publish_if_final(env, id, c.state).await?;
        }
        return Ok(OwnerRefund::AlreadyDecided(
            "the refund was already decided".into(),
        ));
    }
    let update = StepUpdate {
        status: Some(StepStatus::Done),
        detail: Some("marked handled by the owner outside the engine"),
        ..Default::default()
    };
    update_claimed(&db, id, claimant, update, now).await?;
    store::compensation::set_state(&db, id, RefundState::Handled, None, now).await?;
    super::publish_if_final(env, id, RefundState::Handled).await?;
    Ok(OwnerRefund::Handled)
}
