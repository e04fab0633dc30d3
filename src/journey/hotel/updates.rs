//! What changes a hotel booking after it is recorded: its hotel confirmation number, check-in
//! instructions, an amendment (a new journey version, re-planned).

use super::*;

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
                let guest = crate::journey::guest_branding(&db, &cfg, &id).await?;
                // The stay event again, now with the number: the same UID, its SEQUENCE and
                // DTSTAMP stamped above the confirmation's when it is handed over.
                let mut email =
                    guarded(&cfg.content_lock(), &(b, number.clone()), |(b, number)| {
                        let part = render::calendar::hotel_stay(b, &guest, Method::Publish);
                        render::calendar::attach(
                            render::hotel_confirmation_number(b, number, at, &guest),
                            vec![part],
                            guest.tr(),
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
                let guest = crate::journey::guest_branding(&db, &cfg, &id).await?;
                let input = (after, hash, changes);
                // The same stay event, moved: same UID, a higher SEQUENCE (stamped at hand-over).
                let email = guarded(&cfg.content_lock(), &input, |(after, hash, changes)| {
                    let part = render::calendar::hotel_stay(after, &guest, Method::Publish);
                    let email = render::booking_updated(after, hash, changes, at, &guest);
                    render::calendar::attach(email, vec![part], guest.tr())
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
    let updated = crate::domain::webhooks::events::booking_updated(
        booking_id.as_str(),
        params.source,
        params.event_id.as_str(),
        &params.event_name,
        params.event.kind(),
        params.received_at_ms,
    );
    crate::journey::publish(step, env, vec![updated], &mut out).await;
    run_plan(step, env, params, &booking_id, version, &mut out).await?;
    Ok(out)
}
