//! Flight journeys: confirmation with each segment in its airport's local time; an airline schedule
//! change → one urgent "your flight changed" email per change, showing old and new times; a
//! status-only move never emails (see `super::status_changed`).

use super::workflow::{Step, StepConfig};
use super::{config, deliver_once, known_booking, rust_err, JourneyOutput};
use crate::config::DB_BINDING;
use crate::domain::basics::text::step_part;
use crate::domain::email::calendar::Method;
use crate::domain::event::{BookingRef, FlightBooking, FlightChange, FlightSegment, JourneyParams};
use crate::domain::i18n::Lang;
use crate::domain::journey::schedule::segment_times;
use crate::domain::journey::snapshot::flight_snapshot;
use crate::domain::outbox::intent::Intent;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::render::{self, guard::guarded, SegmentView};
use crate::store;
use crate::store::bookings::FactsUpdate;
use worker::{Env, Result};

/// What the record step found.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct FlightRecorded {
    /// The compensation that closed this order (the supplier failed it after payment first).
    compensated: Option<String>,
    /// Why the event was refused: the order id belongs to another source or partner.
    foreign: Option<String>,
}

/// A confirmed flight order: record it, send the confirmation.
pub async fn booked(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    f: &FlightBooking,
) -> Result<JourneyOutput> {
    let mut out = JourneyOutput::new("flight_booked");
    let recorded: FlightRecorded = {
        let (env, f, owner, at) = (
            env.clone(),
            f.clone(),
            params.owner(),
            params.received_at_ms,
        );
        // (Named "record flight order": its result type grew the `foreign` verdict; the step is
        // idempotent, so an instance that ran the older "record flight" step runs this once.)
        step.run(
            &format!("record flight order {}", step_part(f.booking_id.as_str())),
            StepConfig::STORAGE,
            async move || {
                let db = env.d1(DB_BINDING)?;
                let hash = flight_snapshot(&f).hash();
                let id = f.booking_id.as_str();
                let foreign = |reason| FlightRecorded {
                    compensated: None,
                    foreign: Some(reason),
                };
                // Another owner's order: refused before anything is written (its contact too).
                if let Some(reason) =
                    store::ownership::foreign_named(&db, &owner, &[id], None).await?
                {
                    return Ok(foreign(reason));
                }
                // The contact is written only if the order is then this owner's (one batch), and
                // the order as stored afterwards is judged again: one another owner inserted
                // between the two is left alone, and the event refused.
                store::bookings::upsert_flight_booking(&db, &f, &hash, &owner, at).await?;
                if let Some(reason) =
                    store::ownership::foreign_named(&db, &owner, &[id], None).await?
                {
                    return Ok(foreign(reason));
                }
                // The supplier failed this order after payment and said so first.
                let compensated =
                    super::compensation::closed_by_compensation(&db, &owner, id, None, None, at)
                        .await?;
                Ok(FlightRecorded {
                    compensated,
                    foreign: None,
                })
            },
        )
        .await?
    };
    if let Some(reason) = &recorded.foreign {
        super::foreign::refuse(step, env, params, f.booking_id.as_str(), reason, &mut out).await?;
        return Ok(out);
    }
    if let Some(c) = recorded.compensated {
        out.skipped.push((
            "flight_confirmation".into(),
            format!("compensated ({c}): the supplier reported this booking failed after payment"),
        ));
        return Ok(out);
    }
    // The traveller's language: the event's own, else the Stripe Checkout Session of its client
    // reference, else what the booking already has, else the default (a step of its own, so a
    // replay reuses it; results cached before regions read back as the bare language).
    let language: Lang = {
        let (env, f) = (env.clone(), f.clone());
        step.run(
            &format!("language {}", step_part(f.booking_id.as_str())),
            StepConfig::STORAGE,
            async move || {
                let db = env.d1(DB_BINDING)?;
                let default = config(&env)?.default_guest_locale;
                store::guest_locale::record_flight(&db, &f, default).await
            },
        )
        .await?
    };
    let cfg = config(env)?;
    let guest = cfg.branding.in_locale(language);
    let mut email = guarded(&cfg.content_lock(), f, |f| {
        let parts = render::calendar::flight_segments(f, &guest, Method::Publish);
        let email = render::flight_confirmation(f, &SegmentView::list(&f.segments), &guest);
        render::calendar::attach(email, parts, guest.tr())
    })
    .map_err(rust_err)?;
    // Withdrawn if the order is cancelled before its turn; the version does not matter.
    email.intent = Some(Intent::default());
    deliver_once(step, env, email, params.received_at_ms, &mut out).await;
    let confirmed = crate::domain::webhooks::events::flight_confirmed(
        f,
        params.source,
        params.event_id.as_str(),
        params.received_at_ms,
    );
    super::publish(step, env, vec![confirmed], &mut out).await;
    Ok(out)
}

/// Same flight (by flight number and departure) in two lists.
fn same_flight(a: &FlightSegment, b: &FlightSegment) -> bool {
    a.flight_number == b.flight_number
        && a.departing_at == b.departing_at
        && a.origin.iata_code == b.origin.iata_code
}

/// The order's segments after a change: the removed ones replaced by the added ones, in time order.
fn apply_change(segments: &[FlightSegment], change: &FlightChange) -> Vec<FlightSegment> {
    let mut next: Vec<FlightSegment> = segments
        .iter()
        .filter(|s| !change.removed.iter().any(|r| same_flight(s, r)))
        .cloned()
        .collect();
    // A change applied before (the same AIC announced again) adds nothing twice.
    for added in &change.added {
        if !next.iter().any(|s| same_flight(s, added)) {
            next.push(added.clone());
        }
    }
    // Travel order is by the real instant of departure: local wall-clock times of different zones
    // do not compare (an airport without a known zone sorts by its local time as if UTC).
    crate::domain::basics::sort::sort_by_key(&mut next, |s| {
        segment_times(s)
            .0
            .map(|t| t.naive_utc())
            .unwrap_or(s.departing_at)
    });
    next
}

/// An airline schedule change: fetch the change, apply it to the stored order, and — if what the
/// traveller sees changed (snapshot hash) — send one urgent email for this change id. Only an
/// order Duffel's own events stored is looked up at Duffel (with the engine's `DUFFEL_API_TOKEN`):
/// another source's order (a generic partner's own flight booking, whatever id it chose) reads
/// nothing from Duffel and changes nothing; the change is listed as skipped.
pub async fn schedule_changed(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    order_id: &BookingRef,
    change_id: Option<&str>,
) -> Result<JourneyOutput> {
    let mut out = JourneyOutput::new("flight_schedule_changed");
    // `None`: the order is not Duffel's, so nothing was read from Duffel.
    let emails: Option<Vec<OutgoingEmail>> = {
        let (env, order, change_id, at) = (
            env.clone(),
            order_id.clone(),
            change_id.map(str::to_string),
            params.received_at_ms,
        );
        step.run(
            &format!(
                "apply change {} {}",
                step_part(order.as_str()),
                step_part(change_id.as_deref().unwrap_or("all"))
            ),
            StepConfig::AWAIT_BOOKING,
            async move || {
                let db = env.d1(DB_BINDING)?;
                let cfg = config(&env)?;
                let row = known_booking(&db, order.as_str()).await?;
                if row.source != crate::domain::event::Source::Duffel.as_str() {
                    return Ok(None);
                }
                if row.is_closed() {
                    return Ok(Some(Vec::new()));
                }
                let changes = crate::suppliers::duffel::airline_initiated_changes(&cfg, &order)
                    .await
                    .map_err(rust_err)?;
                let mut current: FlightBooking = serde_json::from_str(&row.details_json)?;
                let mut hash = row
                    .snapshot_hash
                    .clone()
                    .unwrap_or_else(|| flight_snapshot(&current).hash());
                let guest = super::guest_branding(&db, &cfg, order.as_str()).await?;
                let mut emails = Vec::new();
                for change in changes
                    .iter()
                    .filter(|c| change_id.as_deref().is_none_or(|id| c.change_id == id))
                {
                    let mut next = current.clone();
                    next.segments = apply_change(&current.segments, change);
                    let next_hash = flight_snapshot(&next).hash();
                    if next_hash == hash {
                        continue;
                    }
                    let input = (current.clone(), next.clone(), change.clone());
                    // Every flight as it now stands (a flight that only moved keeps its UID),
                    // and a CANCEL of each flight the change removed; SEQUENCE and DTSTAMP are
                    // stamped per UID when the email is handed over.
                    let email = guarded(&cfg.content_lock(), &input, |(before, next, change)| {
                        let parts = render::calendar::flight_change(before, next, &guest);
                        let email = render::flight_changed(
                            next,
                            &change.change_id,
                            &SegmentView::list(&change.removed),
                            &SegmentView::list(&change.added),
                            at,
                            &guest,
                        );
                        render::calendar::attach(email, parts, guest.tr())
                    })
                    .map_err(rust_err)?;
                    // Its moment for the outbox's backlog forecast: the first new departure.
                    let mut email = email;
                    email.intent = Some(Intent {
                        moment_ms: change
                            .added
                            .iter()
                            .filter_map(|seg| {
                                crate::domain::journey::schedule::segment_times(seg).0
                            })
                            .map(|t| t.timestamp_millis())
                            .min(),
                        ..Intent::default()
                    });
                    emails.push(email);
                    current = next;
                    hash = next_hash;
                }
                if !emails.is_empty() {
                    let details = serde_json::to_string(&current)?;
                    let update = FactsUpdate {
                        bump: true,
                        details_json: &details,
                        snapshot_hash: Some(&hash),
                        ..FactsUpdate::keep(&row, at)
                    };
                    store::bookings::write_facts(&db, &update).await?;
                }
                Ok(Some(emails))
            },
        )
        .await?
    };
    let Some(emails) = emails else {
        out.skipped.push((
            "flight_changed".into(),
            "not a Duffel order: airline changes are read from Duffel's API only for orders \
             Duffel's own events stored"
                .into(),
        ));
        return Ok(out);
    };
    if emails.is_empty() {
        out.skipped.push((
            "flight_changed".into(),
            "no traveller-visible change".into(),
        ));
    }
    for mut email in emails {
        email.intent.get_or_insert_with(Intent::default);
        deliver_once(step, env, email, params.received_at_ms, &mut out).await;
    }
    Ok(out)
}
