//! Steps 4 and 5: the guest's notice and the owner's alert, from the refund as recorded.

use super::*;

/// What the guest's notice says about the money, from the refund step as recorded.
pub(super) fn refund_state_of(c: &CompensationRow, refund: &StepRow) -> RefundState {
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
pub(super) fn amount_text(refund: &StepRow) -> Option<String> {
    Some(format_minor(
        refund.amount_minor?,
        refund.currency.as_deref()?,
    ))
}

/// Steps 4 and 5: the guest's notice (once per compensation) and the owner's alert (`stage`
/// names which: `opened`, `payment`, `refund_failed_<n>`, `reminder_<n>`; one alert per stage).
/// The alert's refund links are of the compensation's newest generation (a reminder's are of its
/// own, [`remind`]).
pub(super) async fn notices(
    env: &Env,
    id: &str,
    confirmation_sent: bool,
    stage: &str,
    now: i64,
) -> Result<Vec<crate::domain::outbox::outgoing::OutgoingEmail>> {
    notices_of_generation(env, id, confirmation_sent, stage, now, None).await
}

/// The owner's reminder `n` about a refund that waits for the owner: the compensation's alert
/// with fresh links of generation `n` (every older link is out of date once it is recorded),
/// claimed and handed to the outbox (`owner_compensation:<id>:reminder_<n>`: once), then recorded
/// on the compensation. Safe to repeat: a repeat finds the reminder claimed and records it.
pub async fn remind(env: &Env, id: &str, n: i64, now: i64) -> Result<bool> {
    let stage = format!("reminder_{n}");
    let emails = notices_of_generation(env, id, false, &stage, now, Some(n)).await?;
    let mut fresh = false;
    for email in emails {
        fresh |= deliver(env, &email, now).await? == crate::outbox::client::Delivery::Enqueued;
    }
    let db = env.d1(DB_BINDING)?;
    store::refunds::record_reminder(&db, id, n, now).await?;
    Ok(fresh)
}

async fn notices_of_generation(
    env: &Env,
    id: &str,
    confirmation_sent: bool,
    stage: &str,
    now: i64,
    generation: Option<i64>,
) -> Result<Vec<crate::domain::outbox::outgoing::OutgoingEmail>> {
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
                    calendar: if confirmation_sent {
                        calendar_cancel(&db, &c).await?
                    } else {
                        None
                    },
                };
                let (booking, reference) = (c.booking_id.as_deref(), c.client_reference.as_deref());
                let branding = crate::journey::branding_for(&db, &cfg, booking, reference).await?;
                let email = guarded(&cfg.content_lock(), &view, |v| {
                    render::booking_not_confirmed(v, to, &branding)
                })
                .map_err(rust_err)?;
                emails.push(email);
                store::compensation::settle(
                    &db,
                    id,
                    StepKind::GuestNotice,
                    StepStatus::Done,
                    &format!(
                        "{} notice, refund wording: {}",
                        if confirmation_sent {
                            "cancellation"
                        } else {
                            "not confirmed"
                        },
                        state.as_str()
                    ),
                    now,
                )
                .await?;
            }
            None => {
                store::compensation::settle(
                    &db,
                    id,
                    StepKind::GuestNotice,
                    StepStatus::Skipped,
                    "no usable guest email address",
                    now,
                )
                .await?;
            }
        }
    } else if stage == "opened" {
        // A cancellation: the guest's cancellation email is the notice.
        store::compensation::settle(
            &db,
            id,
            StepKind::GuestNotice,
            StepStatus::Skipped,
            "the guest's cancellation email is the notice",
            now,
        )
        .await?;
    }
    let links = if matches!(
        refund.status,
        StepStatus::AwaitingOwner | StepStatus::Failed
    ) {
        let round = compensation::next_owner_round(refund.status, refund.round);
        let generation = generation.unwrap_or(c.reminders_sent);
        refund_links(
            &cfg,
            id,
            round,
            generation,
            now / 1000,
            !refund.not_provable(),
        )
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
        cfg.owner_inbox(),
    )
    .map_err(rust_err)?;
    emails.push(alert);
    if stage == "opened" {
        store::compensation::settle(
            &db,
            id,
            StepKind::OwnerAlert,
            StepStatus::Done,
            if links.is_empty() {
                "alert with the facts"
            } else {
                "alert with the facts and one-click refund links"
            },
            now,
        )
        .await?;
    }
    Ok(emails)
}

/// The calendar cancellation a cancellation notice carries: the compensation's booking as stored
/// (its details give the confirmation's UIDs) at the journey version its closing moved it to.
/// `None` when no booking is recorded for the compensation or its details do not read back (the
/// notice then goes without a calendar part rather than not at all).
async fn calendar_cancel(
    db: &D1Database,
    c: &CompensationRow,
) -> Result<Option<render::CalendarCancel>> {
    use crate::domain::event::{FlightBooking, HotelBooking};
    use crate::domain::journey::booking::BookingKind;
    use render::calendar::Booked;
    let Some(booking_id) = c.booking_id.as_deref() else {
        return Ok(None);
    };
    let Some(row) = store::bookings::get(db, booking_id).await? else {
        return Ok(None);
    };
    let booked = match row.kind {
        BookingKind::Hotel => serde_json::from_str::<HotelBooking>(&row.details_json)
            .map(|b| Booked::Hotel(Box::new(b))),
        BookingKind::Flight => serde_json::from_str::<FlightBooking>(&row.details_json)
            .map(|f| Booked::Flight(Box::new(f))),
    };
    match booked {
        Ok(booked) => Ok(Some(render::CalendarCancel { booked })),
        Err(e) => {
            worker::console_warn!(
                "compensation {}: booking {booking_id} details unreadable ({e}); notice without calendar part",
                c.compensation_id
            );
            Ok(None)
        }
    }
}

/// The owner's one-click links of a compensation's refund round `round` and link generation
/// `generation`, signed like card-testing holds (subject [`compensation::link_subject`]) for
/// [`crate::domain::sweeper::reminders::REFUND_LINK_TTL_S`]: the newest links work until someone acts.
/// Without `refund_now` (a payment Stripe's record does not tie to the compensation) only
/// "already handled" is offered.
pub fn refund_links(
    cfg: &Config,
    id: &str,
    round: i64,
    generation: i64,
    now_s: i64,
    refund_now: bool,
) -> Vec<(OwnerAction, String)> {
    if cfg.action_signing_key.is_empty() {
        return Vec::new();
    }
    [OwnerAction::RefundNow, OwnerAction::RefundHandled]
        .into_iter()
        .filter(|a| refund_now || *a != OwnerAction::RefundNow)
        .map(|action| {
            let token = action_token::sign(
                &compensation::link_subject(id, round, generation),
                action,
                now_s + crate::domain::sweeper::reminders::REFUND_LINK_TTL_S,
                cfg.action_signing_key.as_bytes(),
            );
            (
                action,
                cfg.public_link(&format!("/actions/{token}")).to_string(),
            )
        })
        .collect()
}
