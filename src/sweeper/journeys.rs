//! Raw events left `received` (their journey never started): started again from the stored
//! delivery, under the same instance id, so a concurrent supplier redelivery starts nothing twice.

use super::Tick;
use crate::domain::event::ids::InstanceId;
use crate::domain::event::ownership::Owner;
use crate::domain::event::{Interpretation, Source};
use crate::domain::sweeper::RepairKind;
use crate::journey::workflow;
use crate::sources::Inbound;
use crate::store::raw_events::{self, RawEventStatus, StuckEvent};
use worker::{D1Database, Env, Error, Result};

/// Raw events left `received` (their journey never started): re-read the stored delivery (it was
/// verified when it arrived) and start its journey under the same instance id.
pub(super) async fn start_stuck_journeys(t: &mut Tick<'_>) -> Result<()> {
    let before = t.cut.abandoned_before_ms;
    let (rows, read) = raw_events::stuck_received(&t.db, before, before, t.cfg.batch).await?;
    t.report.rows_read += read;
    // Events that could not be started this tick (transient, or a source this build lacks).
    let mut left: Vec<&StuckEvent> = Vec::new();
    for row in &rows {
        match start_one(t.env, &t.db, row, t.now_ms).await {
            // Someone else (a supplier redelivery, an overlapping tick) started it, or it starts
            // no journey (marked `ignored`): not our repair.
            Ok(None | Some((_, false))) => {}
            Ok(Some((instance, true))) => {
                t.report.journeys_started += 1;
                let why = "raw event still received after the grace period";
                t.note_repair(RepairKind::JourneyStarted, instance.as_str(), why)
                    .await?;
            }
            // The stored delivery itself cannot start a journey (it will not change): marked
            // `errored` with the reason, so it leaves the sweeper's queue, and recorded once.
            Err(Start::Never(source, why)) => {
                t.report.raw_events_failed += 1;
                raw_events::mark_errored(&t.db, source, &row.event_id, &why).await?;
                let subject = format!("{}:{}", source.as_str(), row.event_id);
                let why = format!("raw event still received; it cannot start a journey: {why}");
                t.note_repair(RepairKind::EventErrored, &subject, &why)
                    .await?;
            }
            // Transient (the Workflow binding, D1) or no known source: tried again next tick.
            // Looked at again a grace period later, behind never-seen events.
            Err(Start::NotNow(e)) => {
                t.report.raw_events_failed += 1;
                worker::console_warn!("sweeper: raw event could not be started: {e}");
                left.push(row);
            }
        }
    }
    raw_events::mark_swept(&t.db, &left, t.now_ms).await?;
    Ok(())
}

/// Why a stuck event was not started.
enum Start {
    /// The stored delivery cannot start a journey, now or later (the reason).
    Never(Source, String),
    /// Transient: the next tick tries again.
    NotNow(Error),
}

/// Starts one stuck event's journey: `Some((instance id, whether this call created the
/// instance))`, or `None` when the event starts no journey (marked `ignored`).
async fn start_one(
    env: &Env,
    db: &D1Database,
    row: &StuckEvent,
    now_ms: i64,
) -> std::result::Result<Option<(InstanceId, bool)>, Start> {
    let Some(source) = Source::parse(&row.source) else {
        return Err(Start::NotNow(Error::RustError(format!(
            "stored event: unknown source {:?}",
            row.source
        ))));
    };
    let never = |what: String| Start::Never(source, format!("stored event: {what}"));
    let hook =
        crate::sources::webhook(source.as_str()).ok_or_else(|| never("no adapter".into()))?;
    let headers: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&row.headers_json).unwrap_or_default();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.as_str().map(str::to_string))
    };
    let body = raw_events::body_bytes(&row.body).ok_or_else(|| never("undecodable body".into()))?;
    let inbound = Inbound {
        body: &body,
        header: &header,
        now_s: now_ms.div_euclid(1000),
    };
    // Read as the route reads it: parsed, then every supplier text normalised and bounded; the
    // delivery was verified when it arrived, by the partner stored with it.
    let verified = crate::sources::Verified {
        partner: row.partner.clone(),
    };
    let owner = Owner::new(source, row.partner.as_deref());
    let (delivery, _cuts) =
        crate::sources::read(hook, &inbound, &verified).map_err(|e| never(e.to_string()))?;
    if delivery.event_id.as_str() != row.event_id {
        return Err(never("event id changed on re-read".into()));
    }
    let event = match delivery.interpretation {
        Interpretation::Journey(event) => event,
        Interpretation::Ignored(_) => {
            raw_events::mark(db, source, &row.event_id, RawEventStatus::Ignored, None)
                .await
                .map_err(Start::NotNow)?;
            return Ok(None);
        }
    };
    workflow::start_for_event(
        env,
        db,
        &owner,
        &delivery.event_id,
        &delivery.event_name,
        row.received_at_ms,
        event,
    )
    .await
    .map(Some)
    .map_err(Start::NotNow)
}
