//! One scheduled send of a hotel journey (arrival guide, check-in-day note, thank-you), made by
//! the journey that planned it or by the sweeper.

use super::*;

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
/// (`domain::outbox::intent::decide`: cancelled, replaced, superseded, stale → skipped). Returns
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
) -> Result<(String, Option<crate::journey::Delivery>)> {
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
            )?
            .run()
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
        .map_or(cfg.default_guest_locale, |g| g.lang);
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
        Ok(vec![store::schedule::decide(
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
