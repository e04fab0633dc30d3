//! Stripe's word on a refund (`refund.updated`, `charge.refunded`) applied to the recorded step.

use super::*;

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
    let emails: Vec<crate::domain::outbox::outgoing::OutgoingEmail> = {
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

pub(super) async fn apply_refund_update(
    env: &Env,
    r: &RefundUpdate,
    at: i64,
) -> Result<Vec<crate::domain::outbox::outgoing::OutgoingEmail>> {
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
                super::publish_if_final(env, &id, state).await?;
            }
            Ok(Vec::new())
        }
    }
}
