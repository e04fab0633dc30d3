//! Hotel journeys: booking → confirmation now, hotel confirmation number when it arrives, arrival
//! guide 3 days before check-in (08:00 hotel time), check-in-day note (08:00 hotel time), thank-you
//! the day after check-out (10:00 hotel time). Amendments re-plan under a new journey version;
//! cancellations stop every pending send (see `super` for the rules).

use super::failures::{self, Failed};
use super::hotel_record::{record, Recorded};
use super::hotel_zone::plan_zone;
use super::workflow::{Step, StepConfig};
use super::{config, deliver_once, known_booking, rust_err, JourneyOutput};
use crate::config::DB_BINDING;
use crate::domain::basics::text::step_part;
use crate::domain::email::calendar::Method;
use crate::domain::email::Audience;
use crate::domain::event::ids::InstanceId;
use crate::domain::event::{BookingRef, HotelAmendment, HotelBooking, JourneyParams};
use crate::domain::journey::schedule::{
    hotel_plan, sleep_chunks, stay_is_over, within_reach, ScheduledKind,
};
use crate::domain::journey::snapshot::hotel_snapshot;
use crate::domain::outbox::intent::{self, Intent, SendDecision};
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::render::{self, guard::guarded};
use crate::store;
use crate::store::bookings::FactsUpdate;
use crate::store::schedule::{PlannedRow, SendStatus};
use serde::{Deserialize, Serialize};
use worker::{Env, Result};

mod sends;
mod updates;

pub(crate) use sends::{scheduled_send, SendBy};
pub use updates::{amended, checkin_instructions, confirmation_number};

/// The plan of one journey version, as returned by the plan step (cached on replay; the kinds are
/// serialized by their stored names).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Plan {
    /// What to send, and when (ms since the epoch, UTC).
    sends: Vec<(ScheduledKind, i64)>,
    zone: String,
    /// When each send becomes pointless (ms UTC, `domain::outbox::intent::expires_at_ms`); empty in plans
    /// cached before intent existed (their sends then never go stale).
    #[serde(default)]
    expires: Vec<(ScheduledKind, i64)>,
    /// Whether the hotel's zone was known (plans cached before this field: taken as known).
    #[serde(default = "known")]
    zone_known: bool,
}

fn known() -> bool {
    true
}

/// Why a booking whose stay was already over gets no guest email (journey output and plan rows).
const STAY_OVER: &str = "the stay was over when the booking event arrived: no guest email";

/// A confirmed hotel booking (also a rebook replacing an older booking id).
pub async fn booked(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    b: &HotelBooking,
) -> Result<JourneyOutput> {
    let mut out = JourneyOutput::new("hotel_booked");
    let id = b.booking_id.to_string();
    let recorded: Recorded = {
        let (env, b, owner, at) = (
            env.clone(),
            b.clone(),
            params.owner(),
            params.received_at_ms,
        );
        step.run(
            &format!("record booking {}", step_part(&id)),
            StepConfig::STORAGE,
            async move || {
                let default = config(&env)?.default_guest_locale;
                record(&env, &b, &owner, at, default).await
            },
        )
        .await?
    };
    if let Some(reason) = &recorded.foreign {
        super::foreign::refuse(step, env, params, &id, reason, &mut out).await?;
        return Ok(out);
    }
    if let Some(c) = &recorded.compensated {
        out.skipped.push((
            "booking_confirmation".into(),
            format!("compensated ({c}): the supplier reported this booking failed after payment"),
        ));
        return Ok(out);
    }

    let cfg = config(env)?;
    let guest = cfg.branding.in_locale(recorded.locale);
    let mut confirmation = guarded(&cfg.content_lock(), b, |b| {
        let part = render::calendar::hotel_stay(b, &guest, Method::Publish);
        render::calendar::attach(
            render::booking_confirmation(b, &guest),
            vec![part],
            guest.tr(),
        )
    })
    .map_err(rust_err)?;
    confirmation.intent = Some(Intent {
        journey_version: Some(recorded.version),
        expires_at_ms: None,
        moment_ms: None,
    });
    // A stay that was over before the event arrived: recorded, the owner told, the guest not
    // written to ("your stay is confirmed" would be wrong).
    let over = stay_is_over(b.checkout, params.received_at_ms);
    if over {
        out.skipped.push((
            confirmation.kind.as_str().to_string(),
            STAY_OVER.to_string(),
        ));
    } else {
        deliver_once(step, env, confirmation, params.received_at_ms, &mut out).await;
    }
    // The plan before the owner's alert, so the alert can say whether the hotel's time is known.
    // The plan from the booking as recorded (its facts are this event's) and the hotel's zone as
    // the record step read it: the plan step only writes.
    let known = Known {
        booking: b.clone(),
        zone: recorded.zone.clone(),
    };
    let plan = plan_step(
        step,
        env,
        params,
        &b.booking_id,
        recorded.version,
        Some(known),
    )
    .await?;
    let alert = render::owner_new_booking(
        b,
        params.source,
        params.event_id.as_str(),
        plan.zone_known.then_some(plan.zone.as_str()),
        over,
        cfg.owner_inbox(),
    )
    .map_err(rust_err)?;
    deliver_once(step, env, alert, params.received_at_ms, &mut out).await;
    let confirmed = crate::domain::webhooks::events::hotel_confirmed(
        b,
        params.source,
        params.event_id.as_str(),
        params.received_at_ms,
    );
    // No subscriber wanted `booking.confirmed` when the record step looked: nothing to publish.
    if recorded.confirmed_wanted {
        super::publish(step, env, vec![confirmed], &mut out).await;
    }
    run_sends(
        step,
        env,
        params,
        &b.booking_id,
        recorded.version,
        plan,
        &mut out,
    )
    .await?;
    Ok(out)
}

/// Plans the scheduled sends of `version` from the stored booking, then sleeps until each and sends
/// it if the booking is still open and `version` still current.
async fn run_plan(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    booking_id: &BookingRef,
    version: i64,
    out: &mut JourneyOutput,
) -> Result<()> {
    let plan = plan_step(step, env, params, booking_id, version, None).await?;
    run_sends(step, env, params, booking_id, version, plan, out).await
}

/// What the plan step may take as known instead of reading it: the booking's facts and the
/// hotel's stored zone (display name, source).
#[derive(Clone)]
struct Known {
    booking: HotelBooking,
    zone: Option<(String, String)>,
}

/// The plan step of `version` (cached on replay).
async fn plan_step(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    booking_id: &BookingRef,
    version: i64,
    known: Option<Known>,
) -> Result<Plan> {
    let id = booking_id.to_string();
    let (env, at) = (env.clone(), params.received_at_ms);
    // This journey's own instance: the sweeper asks it before taking a past-due send over.
    let instance = InstanceId::for_event(params.source, &params.event_id);
    step.run(
        &format!("plan {} v{version}", step_part(&id)),
        StepConfig::STORAGE,
        async move || make_plan(&env, &id, version, at, &instance, known.as_ref()).await,
    )
    .await
}

/// Sleeps until each send of `plan` and makes it if the booking is still open and `version`
/// still current.
async fn run_sends(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    booking_id: &BookingRef,
    version: i64,
    plan: Plan,
    out: &mut JourneyOutput,
) -> Result<()> {
    let id = booking_id.to_string();
    for (kind, at_ms) in plan.sends {
        let expires_at_ms = plan
            .expires
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, t)| *t);
        let kind_name = kind.as_str();
        // Every wait is computed from fixed values (the event's receipt time and the plan), never
        // from a clock read, and is chunked under the platform's 365-day limit with a hard cap.
        let chunks = match sleep_chunks(params.received_at_ms, at_ms) {
            Ok(chunks) => chunks,
            Err(e) => {
                // Years away: not a wait this journey can make safely; recorded, not sent.
                out.skipped.push((kind_name.to_string(), e.to_string()));
                continue;
            }
        };
        for (i, wake) in chunks.iter().enumerate() {
            step.sleep_until(
                &format!("sleep {kind_name} {} v{version} #{i}", step_part(&id)),
                *wake,
            )
            .await?;
        }
        let intent = Intent {
            journey_version: Some(version),
            expires_at_ms,
            moment_ms: None,
        };
        let sent: Result<(String, Option<super::Delivery>)> = {
            let (env, id) = (env.clone(), id.clone());
            step.run(
                &format!("send {kind_name} {} v{version}", step_part(&id)),
                StepConfig::STORAGE,
                async move || scheduled_send(&env, &id, kind, intent, at_ms, SendBy::Journey).await,
            )
            .await
        };
        // A send that failed past its retries is recorded and the journey goes on.
        match sent {
            Ok((key, Some(d))) => out.emails.push((key, d)),
            Ok((reason, None)) => out.skipped.push((kind_name.to_string(), reason)),
            Err(e) => {
                let failed = Failed::Scheduled {
                    booking: id.clone(),
                    kind,
                    version,
                };
                failures::record(step, env, failed, &e, out).await;
            }
        }
    }
    Ok(())
}

/// The plan step: where the hotel is (zone), what to send when, recorded in `scheduled_sends`.
async fn make_plan(
    env: &Env,
    id: &str,
    version: i64,
    booked_at_ms: i64,
    instance: &InstanceId,
    known: Option<&Known>,
) -> Result<Plan> {
    let db = env.d1(DB_BINDING)?;
    let cfg = config(env)?;
    let b: HotelBooking = match known {
        Some(k) => k.booking.clone(),
        None => serde_json::from_str(&known_booking(&db, id).await?.details_json)?,
    };
    let stored = known
        .and_then(|k| k.zone.as_ref())
        .and_then(|(zone, source)| {
            Some((
                crate::domain::timezone::HotelZone::parse(zone)?,
                crate::domain::timezone::ZoneSource::parse(source)?,
            ))
        });
    let (zone, source) = plan_zone(env, &cfg, &b, stored).await;
    let zone_name = zone.to_string();
    let plan = within_reach(
        hotel_plan(b.checkin, b.checkout, &zone, booked_at_ms),
        booked_at_ms,
    );
    let expires = |kind| intent::expires_at_ms(kind, b.checkin, b.checkout, &zone);
    let rows: Vec<PlannedRow> =
        PlannedRow::of_plan(&plan, stay_is_over(b.checkout, booked_at_ms), STAY_OVER)
            .into_iter()
            .map(|row| PlannedRow {
                expires_at_ms: row.due_at_ms.map(|_| expires(row.kind)),
                local_time: row.due_at_ms.and_then(|ms| zone.local_rfc3339(ms)),
                ..row
            })
            .collect();
    let zone_of_rows = (zone_name.as_str(), source);
    let instance = instance.as_str();
    store::schedule::plan(
        &db,
        id,
        version,
        &rows,
        zone_of_rows,
        instance,
        booked_at_ms,
    )
    .await?;
    Ok(Plan {
        sends: plan.sends.iter().map(|s| (s.kind, s.at_ms)).collect(),
        zone: format!("{zone_name} ({source})"),
        zone_known: source != crate::domain::timezone::ZoneSource::Utc,
        expires: plan
            .sends
            .iter()
            .map(|s| (s.kind, expires(s.kind)))
            .collect(),
    })
}
