//! A supplier cancellation of a booking the guest paid for: a compensation (cause
//! `booking_cancelled`) whose refund always waits for the owner.

use super::*;

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

pub(super) async fn open_for_cancellation(
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
    let Some(id) = compensation_id(
        b.prebook_id.as_deref(),
        b.client_reference.as_deref().or(reference.as_deref()),
        Some(c.booking_id.as_str()),
    ) else {
        return Ok(None);
    };
    // Only a payment nothing links to another source or partner (this cancellation's own
    // booking was checked before the journey acted on it).
    let owner = params.owner();
    let Some(payment) =
        store::compensation::find_payment_for(&db, &intents, &references, &owner, &id).await?
    else {
        return Ok(None);
    };
    if !payment.outcome.is_paid() {
        return Ok(None);
    }
    // A compensation of these ids opened by another owner is not this cancellation's to take.
    if let Some(row) = store::ownership::compensation(&db, &id).await? {
        if let crate::domain::event::ownership::Verdict::Foreign { reason } =
            row.verdict(&owner, &format!("compensation {id}"))
        {
            worker::console_warn!(
                "cancellation of {}: {reason}; no refund opened",
                c.booking_id
            );
            return Ok(None);
        }
    }
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
            partner: owner.partner_column(),
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
        store::compensation::settle(&db, &id, kind, StepStatus::Done, detail, now).await?;
    }
    Ok(Some(id))
}
