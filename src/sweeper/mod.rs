//! The sweeper (issue #11 item 3): a Cron Trigger (`[triggers] crons` in wrangler.toml) that
//! treats D1 as the authority on due work and does what nobody is doing. Its decisions are pure
//! ([`crate::domain::sweep`]); this module carries them out, each kind of work bounded by
//! `SWEEP_BATCH` rows read through an index, so a tick costs the same with 0 or 100,000 bookings.
//!
//! Per tick:
//! - raw events still `received` after `SWEEP_GRACE_MS` → their journey is started with the same
//!   instance id (an instance that already exists means someone else started it: fine);
//! - retention: bodies of finished raw events older than `RETENTION_RAW_BODY_DAYS` are blanked
//!   (the row stays);
//! - the outbox is asked to re-arm: due work and no alarm (a lost alarm) → armed again;
//! - every repair is recorded once in D1 `repairs` (unique on its key).
//!
//! Exactly once: starting a journey is idempotent on its instance id, marking is a conditional
//! `UPDATE … WHERE status = 'received'`, and repairs are `INSERT … ON CONFLICT DO NOTHING`.

use crate::config::{DB_BINDING, OUTBOX_BINDING, OUTBOX_NAME};
use crate::domain::event::{Interpretation, JourneyParams, Source, PARAMS_VERSION};
use crate::domain::ids::InstanceId;
use crate::domain::sweep::{repair_key, RepairKind, SweepConfig};
use crate::journey::workflow;
use crate::sources::Inbound;
use crate::store::raw_events::{self, RawEventStatus, StuckEvent};
use crate::store::repairs;
use serde::Deserialize;
use worker::{D1Database, Env, Error, Method, Request, RequestInit, Result};

/// What one tick did (logged; returned for tests and the bench).
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct TickReport {
    /// Journeys the sweeper started for stuck raw events.
    pub journeys_started: u32,
    /// Stuck raw events that could not be started (logged with the reason).
    pub raw_events_failed: u32,
    /// Raw bodies pruned.
    pub raw_bodies_pruned: u32,
    /// Whether the outbox had due work and no alarm, and was re-armed.
    pub outbox_rearmed: bool,
    /// Repairs newly recorded in D1 (not counting ones another tick recorded first).
    pub repairs_recorded: u32,
    /// D1 rows read by the sweeper's own queries (D1 `meta.rows_read`; the journey starts and
    /// the outbox's re-arm are not included).
    pub rows_read: u64,
}

/// The sweeper's variables, read through the Worker's env.
fn sweep_config(env: &Env) -> Result<SweepConfig> {
    SweepConfig::from_vars(|name| env.var(name).ok().map(|v| v.to_string()))
        .map_err(|e| Error::RustError(e.to_string()))
}

/// One sweep at `now_ms` (ms since the Unix epoch, UTC).
pub async fn tick(env: &Env, now_ms: i64) -> Result<TickReport> {
    let cfg = sweep_config(env)?;
    let cut = cfg.cutoffs(now_ms);
    let db = env.d1(DB_BINDING)?;
    let mut report = TickReport::default();
    start_stuck_journeys(
        env,
        &db,
        cut.abandoned_before_ms,
        cfg.batch,
        now_ms,
        &mut report,
    )
    .await?;
    let (pruned, read) = raw_events::prune_bodies(&db, cut.raw_body_before_ms, cfg.batch).await?;
    report.raw_bodies_pruned = pruned;
    report.rows_read += read;
    if let Some(at) = rearm_outbox(env).await? {
        report.outbox_rearmed = true;
        let key = repair_key(RepairKind::OutboxRearmed, &at.to_string());
        let why = "the outbox had due work and no alarm";
        if repairs::record(&db, &key, RepairKind::OutboxRearmed, "outbox", why, now_ms).await? {
            report.repairs_recorded += 1;
        }
    }
    Ok(report)
}

/// Raw events left `received` (their journey never started): re-read the stored delivery (it was
/// verified when it arrived) and start its journey under the same instance id.
async fn start_stuck_journeys(
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
                let key = repair_key(RepairKind::JourneyStarted, instance.as_str());
                let why = "raw event still received after the grace period";
                if repairs::record(
                    db,
                    &key,
                    RepairKind::JourneyStarted,
                    instance.as_str(),
                    why,
                    now_ms,
                )
                .await?
                {
                    report.repairs_recorded += 1;
                }
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
    let instance_id = InstanceId::for_event(source, &delivery.event_id);
    let params = JourneyParams {
        params_version: PARAMS_VERSION,
        source,
        event_id: delivery.event_id.clone(),
        event_name: delivery.event_name.clone(),
        received_at_ms: row.received_at_ms,
        event,
    };
    // `false` = the instance exists already (a redelivery started it): still ours to mark.
    let created = workflow::create(env, &instance_id, &params).await?;
    raw_events::mark(
        db,
        source,
        &row.event_id,
        RawEventStatus::Started,
        Some(instance_id.as_str()),
    )
    .await?;
    Ok((instance_id, created))
}

/// Asks the outbox to re-arm (`POST /rearm`). `Some(alarm at, ms UTC)` when it had due work and
/// no alarm, `None` when its alarm was in place or it has nothing to do.
async fn rearm_outbox(env: &Env) -> Result<Option<i64>> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Answer {
        rearmed: bool,
        alarm_at_ms: Option<i64>,
    }
    let stub = env
        .durable_object(OUTBOX_BINDING)?
        .get_by_name(OUTBOX_NAME)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post);
    let req = Request::new_with_init("https://outbox/rearm", &init)?;
    let mut resp = stub.fetch_with_request(req).await?;
    if resp.status_code() != 200 {
        return Err(Error::RustError(format!(
            "outbox /rearm answered {}",
            resp.status_code()
        )));
    }
    let a: Answer = resp.json().await?;
    Ok(if a.rearmed { a.alarm_at_ms } else { None })
}
