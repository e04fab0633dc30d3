//! Hotel journeys: booking → confirmation now, hotel confirmation number when it arrives, arrival
//! guide 3 days before check-in (08:00 hotel time), check-in-day note (08:00 hotel time), thank-you
//! the day after check-out (10:00 hotel time). Amendments re-plan under a new journey version;
//! cancellations stop every pending send (see `super` for the rules).

use super::workflow::{Step, StepConfig};
use super::{config, deliver, deliver_once, known_booking, rust_err, JourneyOutput};
use crate::config::{Config, DB_BINDING};
use crate::domain::booking::BookingStatus;
use crate::domain::email::OutgoingEmail;
use crate::domain::event::{
    BookingRef, HotelAmendment, HotelBooking, HotelLocation, JourneyParams,
};
use crate::domain::render;
use crate::domain::schedule::{hotel_plan, sleep_chunks, ScheduledKind};
use crate::domain::snapshot::hotel_snapshot;
use crate::domain::timezone::{hotel_zone, location_lookup, LocationLookup};
use crate::store;
use crate::store::bookings::FactsUpdate;
use crate::store::schedule::{CachedLocation, PlannedRow, SendStatus};
use serde::{Deserialize, Serialize};
use worker::{Env, Result};

/// What the record step found.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Recorded {
    /// Journey version this run owns from now on (moved on when a redelivery carried new facts).
    version: i64,
}

/// The plan of one journey version, as returned by the plan step (cached on replay; the kinds are
/// serialized by their stored names).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Plan {
    /// What to send, and when (ms since the epoch, UTC).
    sends: Vec<(ScheduledKind, i64)>,
    zone: String,
}

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
        let (env, b, source, at) = (env.clone(), b.clone(), params.source, params.received_at_ms);
        step.run(
            &format!("record booking {id}"),
            StepConfig::STORAGE,
            async move || record(&env, &b, source, at).await,
        )
        .await?
    };

    let cfg = config(env)?;
    let confirmation = render::booking_confirmation(b, &cfg.branding).map_err(rust_err)?;
    let alert = render::owner_new_booking(
        b,
        params.source,
        params.event_id.as_str(),
        &cfg.owner_email,
        &cfg.branding,
    )
    .map_err(rust_err)?;
    for email in [confirmation, alert] {
        let key = email.dedupe_key.to_string();
        out.emails.push((
            key,
            deliver_once(step, env, email, params.received_at_ms).await?,
        ));
    }
    run_plan(step, env, params, &b.booking_id, recorded.version, &mut out).await?;
    Ok(out)
}

/// Records the booking: inserts it (version 1), or — if it was stored before with different
/// traveller facts — writes the new facts and moves the version on. A rebook marks the booking it
/// replaces, whose plan then stops.
async fn record(
    env: &Env,
    b: &HotelBooking,
    source: crate::domain::event::Source,
    at: i64,
) -> Result<Recorded> {
    let db = env.d1(DB_BINDING)?;
    let hash = hotel_snapshot(b).hash();
    if let Some(old) = &b.replaces {
        store::bookings::mark_replaced(&db, old.as_str(), b.booking_id.as_str(), at).await?;
    }
    match store::bookings::get(&db, b.booking_id.as_str()).await? {
        None => {
            if !store::bookings::insert_hotel_booking(&db, b, &hash, source, at).await? {
                // Inserted by a concurrent journey: the retried step takes the branches below.
                return Err(rust_err("booking inserted concurrently; retrying"));
            }
            Ok(Recorded { version: 1 })
        }
        Some(row) if row.snapshot_hash.as_deref() == Some(hash.as_str()) => Ok(Recorded {
            version: row.journey_version,
        }),
        Some(row) => {
            let details = serde_json::to_string(b)?;
            let (status, checkin, checkout) = (
                BookingStatus::of(&b.status),
                b.checkin.to_string(),
                b.checkout.to_string(),
            );
            let update = FactsUpdate {
                bump: true,
                status: &status,
                details_json: &details,
                snapshot_hash: Some(&hash),
                checkin: Some(&checkin),
                checkout: Some(&checkout),
                hotel_confirmation_number: b.hotel_confirmation_number.as_deref(),
                ..FactsUpdate::keep(&row, at)
            };
            store::bookings::write_facts(&db, &update).await?;
            Ok(Recorded {
                version: row.journey_version + 1,
            })
        }
    }
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
    let id = booking_id.to_string();
    let plan: Plan = {
        let (env, id, at) = (env.clone(), id.clone(), params.received_at_ms);
        step.run(
            &format!("plan {id} v{version}"),
            StepConfig::STORAGE,
            async move || make_plan(&env, &id, version, at).await,
        )
        .await?
    };
    for (kind, at_ms) in plan.sends {
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
            step.sleep_until(&format!("sleep {kind_name} {id} v{version} #{i}"), *wake)
                .await?;
        }
        let sent: (String, Option<super::Delivery>) = {
            let (env, id) = (env.clone(), id.clone());
            step.run(
                &format!("send {kind_name} {id} v{version}"),
                StepConfig::STORAGE,
                async move || scheduled_send(&env, &id, kind, version, at_ms).await,
            )
            .await?
        };
        match sent {
            (key, Some(d)) => out.emails.push((key, d)),
            (reason, None) => out.skipped.push((kind_name.to_string(), reason)),
        }
    }
    Ok(())
}

/// The plan step: where the hotel is (zone), what to send when, recorded in `scheduled_sends`.
async fn make_plan(env: &Env, id: &str, version: i64, booked_at_ms: i64) -> Result<Plan> {
    let db = env.d1(DB_BINDING)?;
    let cfg = config(env)?;
    let row = known_booking(&db, id).await?;
    let b: HotelBooking = serde_json::from_str(&row.details_json)?;
    let location = hotel_location(env, &cfg, &b).await;
    let (zone, source) = hotel_zone(location.as_ref());
    let zone_desc = format!("{zone} ({source:?})");
    let plan = hotel_plan(b.checkin, b.checkout, &zone, booked_at_ms);
    let merged = "past at booking time: its facts are in the confirmation";
    let rows: Vec<PlannedRow> = plan
        .sends
        .iter()
        .map(|s| (s.kind, Some(s.at_ms), SendStatus::Planned, None))
        .chain(
            plan.merged_into_confirmation
                .iter()
                .map(|&k| (k, None, SendStatus::Merged, Some(merged))),
        )
        .chain(
            plan.skipped
                .iter()
                .map(|&k| (k, None, SendStatus::Late, Some("past at booking time"))),
        )
        .map(|(kind, due_at_ms, status, reason)| PlannedRow {
            kind,
            due_at_ms,
            status,
            reason,
        })
        .collect();
    store::schedule::plan(&db, id, version, &rows, &zone_desc, booked_at_ms).await?;
    Ok(Plan {
        sends: plan.sends.iter().map(|s| (s.kind, s.at_ms)).collect(),
        zone: zone_desc,
    })
}

/// One scheduled send, decided against the booking as it is now. Returns `(dedupe key, delivery)`
/// when sent, `(reason, None)` when skipped.
async fn scheduled_send(
    env: &Env,
    id: &str,
    kind: ScheduledKind,
    version: i64,
    due_at_ms: i64,
) -> Result<(String, Option<super::Delivery>)> {
    let db = env.d1(DB_BINDING)?;
    let skip = |reason: &str| (reason.to_string(), None);
    let Some(row) = store::bookings::get(&db, id).await? else {
        return Ok(skip("booking unknown"));
    };
    let reason = if row.replaced_by.is_some() {
        Some("booking replaced by a rebook")
    } else if row.status.is_cancelled() {
        Some("booking cancelled")
    } else if row.journey_version != version {
        Some("superseded by a newer journey version")
    } else {
        None
    };
    if let Some(reason) = reason {
        store::schedule::decide(
            &db,
            id,
            kind,
            version,
            SendStatus::Skipped,
            Some(reason),
            due_at_ms,
        )
        .await?;
        return Ok(skip(reason));
    }
    let cfg = config(env)?;
    let b: HotelBooking = serde_json::from_str(&row.details_json)?;
    let email = match kind {
        ScheduledKind::ArrivalGuide => render::arrival_guide(&b, &cfg.branding),
        ScheduledKind::CheckinDay => render::checkin_day(&b, &cfg.branding),
        ScheduledKind::ThankYou => render::thank_you(&b, &cfg.branding),
    }
    .map_err(rust_err)?;
    let delivery = deliver(env, &email, due_at_ms).await?;
    store::schedule::decide(&db, id, kind, version, SendStatus::Sent, None, due_at_ms).await?;
    Ok((email.dedupe_key.to_string(), Some(delivery)))
}

/// The hotel's location: from the booking when it has one; else from the supplier's hotel data
/// API (liteAPI `GET /data/hotel?hotelId=…` → `data.location{latitude,longitude}`), cached in D1.
/// Any failure falls back to `None` (the schedule then uses UTC) and is cached with its error so a
/// broken lookup is not retried on every plan.
async fn hotel_location(env: &Env, cfg: &Config, b: &HotelBooking) -> Option<HotelLocation> {
    if let Some(l) = &b.location {
        if l.time_zone.is_some() || (l.latitude.is_some() && l.longitude.is_some()) {
            return Some(l.clone());
        }
    }
    let hotel_id = b.hotel_id.as_deref()?;
    let db = env.d1(DB_BINDING).ok()?;
    let now = crate::platform::now_ms();
    let cached = store::schedule::cached_location(&db, hotel_id)
        .await
        .ok()
        .flatten();
    let seen = cached
        .as_ref()
        .map(|c| (c.error.is_some(), c.fetched_at_ms));
    match (location_lookup(seen, now), cached) {
        (LocationLookup::UseCached, Some(c)) => {
            return Some(HotelLocation {
                time_zone: c.time_zone,
                latitude: c.latitude,
                longitude: c.longitude,
            })
        }
        // A failed lookup is retried after a day, not on every plan in between.
        (LocationLookup::BackOff, _) => return None,
        _ => {}
    }
    if cfg.liteapi_api_key.is_empty() {
        return None;
    }
    let fetched = crate::suppliers::liteapi::hotel_location(cfg, hotel_id).await;
    let cached = match &fetched {
        Ok(l) => CachedLocation {
            latitude: l.latitude,
            longitude: l.longitude,
            time_zone: l.time_zone.clone(),
            error: None,
            fetched_at_ms: now,
        },
        Err(e) => {
            worker::console_warn!("hotel data lookup for {hotel_id} failed: {e}");
            CachedLocation {
                latitude: None,
                longitude: None,
                time_zone: None,
                error: Some(e.to_string()),
                fetched_at_ms: now,
            }
        }
    };
    if let Err(e) = store::schedule::cache_location(&db, hotel_id, &cached, now).await {
        worker::console_warn!("caching the location of hotel {hotel_id} failed: {e}");
    }
    fetched.ok()
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
            &format!("store hcn {id} {number}"),
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
                Ok(Some(
                    render::hotel_confirmation_number(&b, &number, &cfg.branding)
                        .map_err(rust_err)?,
                ))
            },
        )
        .await?
    };
    match email {
        Some(email) => {
            let key = email.dedupe_key.to_string();
            out.emails.push((
                key,
                deliver_once(step, env, email, params.received_at_ms).await?,
            ));
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
    let name = format!("store checkin instructions {booking_id}");
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
            &format!("amend {id}"),
            StepConfig::AWAIT_BOOKING,
            async move || {
                let db = env.d1(DB_BINDING)?;
                let row = known_booking(&db, &id).await?;
                if row.is_closed() {
                    return Ok(None);
                }
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
                let email = render::booking_updated(&after, &hash, &changes, &cfg.branding)
                    .map_err(rust_err)?;
                Ok(Some((row.journey_version + 1, email)))
            },
        )
        .await?
    };
    let Some((version, email)) = result else {
        out.skipped.push((
            "booking_updated".into(),
            "no traveller-visible change, or booking closed".into(),
        ));
        return Ok(out);
    };
    let key = email.dedupe_key.to_string();
    out.emails.push((
        key,
        deliver_once(step, env, email, params.received_at_ms).await?,
    ));
    run_plan(step, env, params, &booking_id, version, &mut out).await?;
    Ok(out)
}
