//! Least authority in the journeys: an event acts only on bookings (and checkouts, and
//! compensations) of its own owner — its source and, for the generic source, the partner whose
//! key signed it (`crate::domain::event::ownership`).
//!
//! - Follow-up events (hotel confirmation number, check-in instructions, amendment, cancellation,
//!   schedule change, status change) are checked by [`follow_up`] in a step of their own before
//!   the handler runs. The owner of a stored booking never changes, so a check that passed stays
//!   true for the handler's own read.
//! - Events that create or fail a booking (hotel and flight bookings, supplier failures) and
//!   checkout starts check the records they name inside the step that writes, before any write,
//!   and their writes carry the owner in SQL, so a booking or checkout inserted meanwhile by
//!   another source is never overwritten and a refused event writes nothing — no contact, no
//!   language, no replaced mark (`hotel::record`, `flight::booked`, `checkout::started`,
//!   [`failure`]).
//!
//! A refused event changes nothing and sends no guest email: [`refuse`] records the reason on its
//! raw event (`raw_events.refused_reason`, shown in the booking's admin timeline) and tells the
//! owner once per named record and UTC day.

use super::workflow::{Step, StepConfig};
use super::{config, deliver, rust_err, JourneyOutput};
use crate::config::DB_BINDING;
use crate::domain::basics::text::step_part;
use crate::domain::event::ownership::Verdict;
use crate::domain::event::{BookingFailure, JourneyParams, SupplierEvent};
use crate::domain::render;
use crate::store;
use worker::{Env, Result};

/// The booking a follow-up event acts on, and whether its handler waits for that booking to be
/// stored (suppliers do not order their webhooks). `None` for events that create bookings or
/// name none.
fn followed_booking(event: &SupplierEvent) -> Option<(&str, bool)> {
    match event {
        SupplierEvent::HotelConfirmationNumber { booking_id, .. }
        | SupplierEvent::CheckinInstructions { booking_id, .. } => {
            Some((booking_id.as_str(), true))
        }
        SupplierEvent::HotelAmended(a) => a.booking_id.as_ref().map(|b| (b.as_str(), true)),
        SupplierEvent::BookingCancelled(c) => Some((c.booking_id.as_str(), true)),
        SupplierEvent::FlightScheduleChanged { order_id, .. } => Some((order_id.as_str(), true)),
        // A status of a booking not stored (yet) changes nothing: no need to wait for it.
        SupplierEvent::StatusChanged { booking_id, .. } => Some((booking_id.as_str(), false)),
        _ => None,
    }
}

/// For a follow-up event: whether the booking it names belongs to another owner. Returns the
/// refused output (after [`refuse`]) when it does, `None` when the handler may run. Waits for the
/// booking like the handler would (a step retried with [`StepConfig::AWAIT_BOOKING`]).
pub(super) async fn follow_up(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
) -> Result<Option<JourneyOutput>> {
    let Some((booking_id, wait)) = followed_booking(&params.event) else {
        return Ok(None);
    };
    let foreign: Option<String> = {
        let (env, id, actor) = (env.clone(), booking_id.to_string(), params.owner());
        let retry = if wait {
            StepConfig::AWAIT_BOOKING
        } else {
            StepConfig::STORAGE
        };
        step.run(
            &format!("owner check {}", step_part(booking_id)),
            retry,
            async move || {
                let db = env.d1(DB_BINDING)?;
                match store::ownership::booking(&db, &id).await? {
                    Some(row) => Ok(match row.verdict(&actor, &format!("booking {id}")) {
                        Verdict::Own => None,
                        Verdict::Foreign { reason } => Some(reason),
                    }),
                    None if wait => Err(super::booking_not_known(&id)),
                    None => Ok(None),
                }
            },
        )
        .await?
    };
    match foreign {
        None => Ok(None),
        Some(reason) => {
            let mut out = JourneyOutput::new(params.event.kind());
            refuse(step, env, params, booking_id, &reason, &mut out).await?;
            Ok(Some(out))
        }
    }
}

/// The records a supplier failure names that another owner holds, if any: its booking, its
/// checkout (prebook id, with the bookings recorded for it), the checkouts and bookings that
/// record its client reference, and the compensation its ids lead to. Returns `(record, reason)`
/// for the first foreign one.
pub(super) async fn failure(
    db: &worker::D1Database,
    params: &JourneyParams,
    f: &BookingFailure,
    compensation_id: &str,
) -> Result<Option<(String, String)>> {
    let actor = params.owner();
    let booking = f.booking_id.as_ref().map(|b| b.as_str());
    let ids: Vec<&str> = booking.into_iter().collect();
    if let Some(reason) =
        store::ownership::foreign_named(db, &actor, &ids, f.prebook_id.as_deref()).await?
    {
        let record = booking
            .or(f.prebook_id.as_deref())
            .unwrap_or(compensation_id);
        return Ok(Some((record.to_string(), reason)));
    }
    // The client reference may key the compensation (when no prebook id is named), and it is how
    // a booking and a payment find their compensation: a reference another owner's checkout or
    // booking records is not this event's to claim, unless the checkout it names (its own)
    // records it too.
    if let Some(reference) = f.client_reference.as_deref() {
        if let Some(reason) =
            store::ownership::foreign_reference(db, &actor, reference, f.prebook_id.as_deref())
                .await?
        {
            return Ok(Some((reference.to_string(), reason)));
        }
    }
    if let Some(row) = store::ownership::compensation(db, compensation_id).await? {
        if let Verdict::Foreign { reason } =
            row.verdict(&actor, &format!("compensation {compensation_id}"))
        {
            let record = booking.unwrap_or(compensation_id);
            return Ok(Some((record.to_string(), reason)));
        }
    }
    Ok(None)
}

/// Refuses the event: its raw event keeps the reason (`refused_reason`), the owner is told once
/// per `record` and UTC day of the event's receipt (`owner_foreign_event:<record>:<day>`), and the
/// journey's output lists it as skipped. Nothing else is written and no guest email is sent.
pub(super) async fn refuse(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    record: &str,
    reason: &str,
    out: &mut JourneyOutput,
) -> Result<()> {
    worker::console_warn!(
        "journey {} {}: refused: {reason}",
        params.source,
        params.event_id
    );
    let (env2, p, record2, reason2) = (
        env.clone(),
        params.clone(),
        record.to_string(),
        reason.to_string(),
    );
    let _: bool = step
        .run(
            &format!("refused {}", step_part(record)),
            StepConfig::STORAGE,
            async move || {
                let db = env2.d1(DB_BINDING)?;
                store::raw_events::mark_refused(&db, p.source, p.event_id.as_str(), &reason2)
                    .await?;
                let cfg = config(&env2)?;
                let day = crate::domain::outbox::intent::utc_day(p.received_at_ms);
                let alert = render::owner_foreign_event(
                    &p.owner(),
                    &record2,
                    p.event_id.as_str(),
                    &p.event_name,
                    &reason2,
                    &day,
                    cfg.owner_inbox(),
                )
                .map_err(rust_err)?;
                deliver(&env2, &alert, p.received_at_ms).await?;
                Ok(true)
            },
        )
        .await?;
    out.skipped.push((
        params.event.kind().to_string(),
        format!("refused: {reason}"),
    ));
    Ok(())
}
