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
use crate::domain::calendar::{Method, Stamp};
use crate::domain::email::{Audience, OutgoingEmail};
use crate::domain::event::{BookingRef, HotelAmendment, HotelBooking, JourneyParams};
use crate::domain::ids::InstanceId;
use crate::domain::intent::{self, Intent, SendDecision};
use crate::domain::render::{self, guard::guarded};
use crate::domain::schedule::{
    hotel_plan, sleep_chunks, stay_is_over, within_reach, ScheduledKind,
};
use crate::domain::snapshot::hotel_snapshot;
use crate::domain::text::step_part;
use crate::store;
use crate::store::bookings::FactsUpdate;
use crate::store::schedule::{PlannedRow, SendStatus};
use serde::{Deserialize, Serialize};
use worker::{Env, Result};

/// The plan of one journey version, as returned by the plan step (cached on replay; the kinds are
/// serialized by their stored names).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Plan {
    /// What to send, and when (ms since the epoch, UTC).
    sends: Vec<(ScheduledKind, i64)>,
    zone: String,
    /// When each send becomes pointless (ms UTC, `domain::intent::expires_at_ms`); empty in plans
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
    let stamp = Stamp::at_version(recorded.version, params.received_at_ms, Method::Publish);
    let mut confirmation = guarded(&cfg.content_lock(), b, |b| {
        let part = render::calendar::hotel_stay(b, &guest, stamp);
        render::calendar::attach(render::booking_confirmation(b, &guest), part)
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
        &cfg.owner_email,
        &cfg.branding,
    )
    .map_err(rust_err)?;
    deliver_once(step, env, alert, params.received_at_ms, &mut out).await;
    let confirmed = crate::domain::webhook_events::hotel_confirmed(
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

/// Who makes a scheduled send: the journey that planned it (waking at its planned time) or the
/// sweeper (a send whose journey stopped, or one moved to hotel time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SendBy {
    Journey,
    Sweeper,
}

/// Why the journey leaves a send alone that was moved to hotel time after it was planned.
const MOVED: &str =
    "moved to hotel time after it was planned: the sweeper makes it at its new time";

/// One scheduled send, decided against the booking as it is now and the clock
/// (`domain::intent::decide`: cancelled, replaced, superseded, stale → skipped). Returns
/// `(dedupe key, delivery)` when sent, `(reason, None)` when skipped. The email carries `intent`,
/// so the outbox decides again at its turn. A send moved to hotel time belongs to the sweeper:
/// the journey, waking at the old time, leaves it (`by`).
pub(crate) async fn scheduled_send(
    env: &Env,
    id: &str,
    kind: ScheduledKind,
    intent: Intent,
    due_at_ms: i64,
    by: SendBy,
) -> Result<(String, Option<super::Delivery>)> {
    let db = env.d1(DB_BINDING)?;
    let version = intent.journey_version.unwrap_or_default();
    // One round trip: who makes the send now, the booking as it is now, and its language.
    let read = db
        .batch(vec![
            store::schedule::planned_by_statement(&db, id, kind, version)?,
            store::bookings::get_statement(&db, id)?,
            store::guest_locale::get_statement(&db, id)?,
        ])
        .await?;
    let [planned, booking_read, locale_read] = read.as_slice() else {
        return Err(rust_err("a scheduled send's read came back incomplete"));
    };
    if by == SendBy::Journey {
        if let Some(Some(owner)) = store::schedule::planned_by_of(planned)? {
            if owner == "sweeper" {
                return Ok((MOVED.into(), None));
            }
        }
    }
    let row = store::bookings::row_of(booking_read)?;
    let booking = row.as_ref().map(|r| r.intent_view());
    let now = crate::platform::now_ms();
    let email_kind = intent::email_kind(kind);
    let decision = intent::decide(email_kind, Audience::Client, &intent, booking.as_ref(), now);
    let row = match (decision, row) {
        (SendDecision::Send, Some(row)) => row,
        (SendDecision::Skip(reason), _) => {
            let reason = reason.to_string();
            store::schedule::decide(
                &db,
                id,
                kind,
                version,
                SendStatus::Skipped,
                Some(&reason),
                due_at_ms,
            )
            .await?;
            return Ok((reason, None));
        }
        // `decide` skips an unknown booking; kept total without a panic.
        (SendDecision::Send, None) => return Ok(("booking unknown".into(), None)),
    };
    let cfg = config(env)?;
    let b: HotelBooking = serde_json::from_str(&row.details_json)?;
    let language = store::guest_locale::stored_of(locale_read)?
        .and_then(|l| l.current)
        .map_or(cfg.default_guest_locale, |g| g.locale);
    let guest = cfg.branding.in_locale(language);
    let mut email = guarded(&cfg.content_lock(), &b, |b| match kind {
        ScheduledKind::ArrivalGuide => render::arrival_guide(b, &guest),
        ScheduledKind::CheckinDay => render::checkin_day(b, &guest),
        ScheduledKind::ThankYou => render::thank_you(b, &guest),
    })
    .map_err(rust_err)?;
    email.intent = Some(intent);
    // The send is marked sent in the claim's own batch: the claim, not this mark, is what makes
    // it once (a repeat finds the key claimed and hands the same email over again at most).
    let delivery = crate::outbox::client::deliver_with(env, &email, due_at_ms, |db| {
        Ok(vec![store::schedule::decide_statement(
            db,
            id,
            kind,
            version,
            SendStatus::Sent,
            None,
            due_at_ms,
        )?])
    })
    .await?;
    Ok((email.dedupe_key.to_string(), Some(delivery)))
}

/// The hotel's confirmation number arrived: store it and send it once per distinct number.
pub async fn confirmation_number(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    booking_id: &BookingRef,
    number: &str,
) -> Result<JourneyOutput> {
    let mut out = JourneyOutput::new("hotel_confirmation_number");
    let email: Option<OutgoingEmail> = {
        let (env, id, number, at) = (
            env.clone(),
            booking_id.to_string(),
            number.to_string(),
            params.received_at_ms,
        );
        step.run(
            &format!("store hcn {} {}", step_part(&id), step_part(&number)),
            StepConfig::AWAIT_BOOKING,
            async move || {
                let db = env.d1(DB_BINDING)?;
                let row = known_booking(&db, &id).await?;
                if row.is_closed() {
                    return Ok(None);
                }
                let mut b: HotelBooking = serde_json::from_str(&row.details_json)?;
                b.hotel_confirmation_number = Some(number.clone());
                let hash = hotel_snapshot(&b).hash();
                let details = serde_json::to_string(&b)?;
                let update = FactsUpdate {
                    details_json: &details,
                    snapshot_hash: Some(&hash),
                    hotel_confirmation_number: Some(&number),
                    ..FactsUpdate::keep(&row, at)
                };
                store::bookings::write_facts(&db, &update).await?;
                let cfg = config(&env)?;
                let guest = super::guest_branding(&db, &cfg, &id).await?;
                // The stay event again, now with the number: the same UID, and a higher
                // SEQUENCE than the confirmation's under the same journey version (a stay's
                // SEQUENCE counts the known number, see domain::calendar).
                let stamp = Stamp::at_version(row.journey_version, at, Method::Publish);
                let mut email =
                    guarded(&cfg.content_lock(), &(b, number.clone()), |(b, number)| {
                        let part = render::calendar::hotel_stay(b, &guest, stamp);
                        render::calendar::attach(
                            render::hotel_confirmation_number(b, number, &guest),
                            part,
                        )
                    })
                    .map_err(rust_err)?;
                email.intent = Some(Intent {
                    journey_version: Some(row.journey_version),
                    expires_at_ms: None,
                    moment_ms: None,
                });
                Ok(Some(email))
            },
        )
        .await?
    };
    match email {
        Some(email) => {
            deliver_once(step, env, email, params.received_at_ms, &mut out).await;
        }
        None => out
            .skipped
            .push(("hotel_confirmation_number".into(), "booking closed".into())),
    }
    Ok(out)
}

/// Check-in instructions arrived: stored with the booking; the arrival guide and check-in-day note
/// include them when they go out. No email of their own.
pub async fn checkin_instructions(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    booking_id: &BookingRef,
    instructions: &str,
) -> Result<JourneyOutput> {
    let name = format!(
        "store checkin instructions {}",
        step_part(booking_id.as_str())
    );
    let (env, id, text, at) = (
        env.clone(),
        booking_id.to_string(),
        instructions.to_string(),
        params.received_at_ms,
    );
    step.run(&name, StepConfig::AWAIT_BOOKING, async move || {
        let db = env.d1(DB_BINDING)?;
        let row = known_booking(&db, &id).await?;
        let mut b: HotelBooking = serde_json::from_str(&row.details_json)?;
        b.checkin_instructions = Some(text.clone());
        let details = serde_json::to_string(&b)?;
        let update = FactsUpdate {
            details_json: &details,
            ..FactsUpdate::keep(&row, at)
        };
        store::bookings::write_facts(&db, &update).await?;
        Ok(true)
    })
    .await?;
    Ok(JourneyOutput::new("checkin_instructions"))
}

/// Applies an amendment's facts to a stored booking.
fn apply(mut b: HotelBooking, a: &HotelAmendment) -> HotelBooking {
    if let Some(v) = &a.hotel_name {
        b.hotel_name = v.clone();
    }
    if let Some(v) = a.checkin {
        b.checkin = v;
    }
    if let Some(v) = a.checkout {
        b.checkout = v;
    }
    if let Some(v) = &a.rooms {
        b.rooms = v.clone();
    }
    if let Some(v) = &a.guests {
        b.guests = v.clone();
    }
    if let Some(v) = &a.holder_name {
        b.holder.name = v.clone();
    }
    b
}

/// An amendment: one "booking updated" email per distinct traveller snapshot, then a re-plan under
/// a new journey version (the old plan's sends skip).
pub async fn amended(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    a: &HotelAmendment,
) -> Result<JourneyOutput> {
    let mut out = JourneyOutput::new("hotel_amended");
    let Some(booking_id) = a.booking_id.clone() else {
        return Ok(out);
    };
    let result: Option<(i64, OutgoingEmail)> = {
        let (env, a, id, at) = (
            env.clone(),
            a.clone(),
            booking_id.to_string(),
            params.received_at_ms,
        );
        step.run(
            &format!("amend {}", step_part(&id)),
            StepConfig::AWAIT_BOOKING,
            async move || {
                let db = env.d1(DB_BINDING)?;
                let row = known_booking(&db, &id).await?;
                if row.is_closed() {
                    return Ok(None);
                }
                store::guest_locale::explicit_change(&db, &id, a.locale.as_deref(), at).await?;
                let before: HotelBooking = serde_json::from_str(&row.details_json)?;
                let after = apply(before.clone(), &a);
                let (old, new) = (hotel_snapshot(&before), hotel_snapshot(&after));
                let hash = new.hash();
                if row.snapshot_hash.as_deref() == Some(hash.as_str()) || old.hash() == hash {
                    return Ok(None);
                }
                let details = serde_json::to_string(&after)?;
                let (checkin, checkout) = (after.checkin.to_string(), after.checkout.to_string());
                let update = FactsUpdate {
                    bump: true,
                    details_json: &details,
                    snapshot_hash: Some(&hash),
                    checkin: Some(&checkin),
                    checkout: Some(&checkout),
                    ..FactsUpdate::keep(&row, at)
                };
                store::bookings::write_facts(&db, &update).await?;
                let changes: Vec<(String, String, String)> = old
                    .diff(&new)
                    .into_iter()
                    .map(|c| (c.field, c.before, c.after))
                    .collect();
                let cfg = config(&env)?;
                let guest = super::guest_branding(&db, &cfg, &id).await?;
                let input = (after, hash, changes);
                // The same stay event, moved: same UID, a higher SEQUENCE (the new version).
                let stamp = Stamp::at_version(row.journey_version + 1, at, Method::Publish);
                let email = guarded(&cfg.content_lock(), &input, |(after, hash, changes)| {
                    let part = render::calendar::hotel_stay(after, &guest, stamp);
                    let email = render::booking_updated(after, hash, changes, &guest);
                    render::calendar::attach(email, part)
                })
                .map_err(rust_err)?;
                Ok(Some((row.journey_version + 1, email)))
            },
        )
        .await?
    };
    let Some((version, mut email)) = result else {
        out.skipped.push((
            "booking_updated".into(),
            "no traveller-visible change, or booking closed".into(),
        ));
        return Ok(out);
    };
    email.intent = Some(Intent {
        journey_version: Some(version),
        expires_at_ms: None,
        moment_ms: None,
    });
    deliver_once(step, env, email, params.received_at_ms, &mut out).await;
    let updated = crate::domain::webhook_events::booking_updated(
        booking_id.as_str(),
        params.source,
        params.event_id.as_str(),
        &params.event_name,
        params.event.kind(),
        params.received_at_ms,
    );
    super::publish(step, env, vec![updated], &mut out).await;
    run_plan(step, env, params, &booking_id, version, &mut out).await?;
    Ok(out)
}
