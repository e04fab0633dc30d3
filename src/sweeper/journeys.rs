//! Raw events left `received` (their journey never started): started again from the stored
//! delivery, under the same instance id, so a concurrent supplier redelivery starts nothing twice.

use super::{note_repair, TickReport};
use crate::domain::event::{Interpretation, Source};
use crate::domain::ids::InstanceId;
use crate::domain::sweep::RepairKind;
use crate::journey::workflow;
use crate::sources::Inbound;
use crate::store::raw_events::{self, StuckEvent};
use worker::{D1Database, Env, Error, Result};

/// Raw events left `received` (their journey never started): re-read the stored delivery (it was
/// verified when it arrived) and start its journey under the same instance id.
pub(super) async fn start_stuck_journeys(
    env: &Env,
    db: &D1Database,
    before_ms: i64,
    batch: u32,
    now_ms: i64,
    report: &mut TickReport,
) -> Result<()> {
    let (rows, read) = raw_events::stuck_received(db, before_ms, batch).await?;
    report.rows_read += read;
    for row in rows {
        match start_one(env, db, &row, now_ms).await {
            // Someone else (a supplier redelivery, an overlapping tick) started it: not our repair.
            Ok((_, false)) => {}
            Ok((instance, true)) => {
                report.journeys_started += 1;
                let why = "raw event still received after the grace period";
                note_repair(
                    db,
                    RepairKind::JourneyStarted,
                    instance.as_str(),
                    why,
                    now_ms,
                    report,
                )
                .await?;
            }
            Err(e) => {
                report.raw_events_failed += 1;
                worker::console_warn!("sweeper: raw event could not be started: {e}");
            }
        }
    }
    Ok(())
}

/// Starts one stuck event's journey; `(instance id, whether this call created the instance)`.
async fn start_one(
    env: &Env,
    db: &D1Database,
    row: &StuckEvent,
    now_ms: i64,
) -> Result<(InstanceId, bool)> {
    let bad = |what: &str| Error::RustError(format!("stored event: {what}"));
    let source = Source::parse(&row.source).ok_or_else(|| bad("unknown source"))?;
    let hook = crate::sources::webhook(source.as_str()).ok_or_else(|| bad("no adapter"))?;
    let headers: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&row.headers_json).unwrap_or_default();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.as_str().map(str::to_string))
    };
    let body = raw_events::body_bytes(&row.body).ok_or_else(|| bad("undecodable body"))?;
    let inbound = Inbound {
        body: &body,
        header: &header,
        now_s: now_ms.div_euclid(1000),
    };
    let delivery = hook.parse(&inbound).map_err(|e| bad(&e.to_string()))?;
    if delivery.event_id.as_str() != row.event_id {
        return Err(bad("event id changed on re-read"));
    }
    let Interpretation::Journey(event) = delivery.interpretation else {
        return Err(bad("no journey for this event"));
    };
    workflow::start_for_event(
        env,
        db,
        source,
        &delivery.event_id,
        &delivery.event_name,
        row.received_at_ms,
        event,
    )
    .await
}
