//! Scheduled sends still `planned` well past due whose Workflow instance will never make them
//! (errored, terminated, complete, unknown): decided and sent here, with the journey's own code
//! ([`crate::journey::hotel::scheduled_send`]: cancelled / replaced / superseded / stale →
//! `skipped`). A live instance (queued, running, paused, waiting) keeps its sends, and so does one
//! whose status cannot be read this tick; a send left (or one the sweeper fails to make, recorded
//! once for the owner) is looked at again a grace period later, behind newer orphans. Sending twice is impossible either way: the send claims
//! its dedupe key in D1 first, so an instance that wakes up late finds it claimed.

use super::Tick;
use crate::domain::event::ids::InstanceId;
use crate::domain::journey::schedule::ScheduledKind;
use crate::domain::outbox::intent::Intent;
use crate::domain::sweeper::{instance_is_dead, RepairKind};
use crate::journey::{hotel, workflow};
use crate::store::schedule::{self, DueSend};
use std::collections::HashMap;
use worker::{Env, Result};

pub(super) async fn take_over(t: &mut Tick<'_>) -> Result<()> {
    // Sends moved to hotel time are the sweeper's own: made at their new time, no grace.
    let (moved, read) = schedule::sweeper_due(&t.db, t.now_ms, t.cfg.batch).await?;
    t.report.rows_read += read;
    for row in &moved {
        if let Err(e) = send_one(t, row, true).await {
            t.report.scheduled_failed += 1;
            let why = format!("moved to hotel time; the sweeper could not send it: {e}");
            t.note_repair(RepairKind::SendFailed, &subject(row), &why)
                .await?;
        }
    }
    let before = t.cut.abandoned_before_ms;
    let (rows, read) = schedule::past_due(&t.db, before, before, t.cfg.batch).await?;
    t.report.rows_read += read;
    // One status call per instance this tick, however many of its sends are due.
    let mut statuses: HashMap<String, Option<bool>> = HashMap::new();
    // Sends left `planned` this tick: looked at again after a grace period, behind newer orphans.
    let mut left: Vec<&DueSend> = Vec::new();
    for row in &rows {
        let key = row.instance_id.clone().unwrap_or_default();
        let dead = match statuses.get(&key) {
            Some(known) => *known,
            None => {
                let known = instance_dead(t.env, row.instance_id.as_deref()).await;
                statuses.insert(key, known);
                known
            }
        };
        if dead != Some(true) {
            t.report.scheduled_left += 1;
            left.push(row);
            continue;
        }
        if let Err(e) = send_one(t, row, false).await {
            // Left `planned` (tried again after a grace period), and recorded once for the owner.
            t.report.scheduled_failed += 1;
            left.push(row);
            let why =
                format!("past due and its journey had stopped; the sweeper could not send it: {e}");
            t.note_repair(RepairKind::SendFailed, &subject(row), &why)
                .await?;
        }
    }
    schedule::mark_swept(&t.db, &left, t.now_ms).await
}

/// A scheduled send's repair subject: `<booking>:<kind>:v<journey version>`.
fn subject(row: &DueSend) -> String {
    format!("{}:{}:v{}", row.booking_id, row.kind, row.journey_version)
}

/// `Some(true)` when the instance will never make its sends, `Some(false)` when it is alive,
/// `None` when its status could not be read (left for the next tick). A row with no stored
/// instance (planned before migration 0011) or an invalid one counts as unknown: dead.
async fn instance_dead(env: &Env, instance_id: Option<&str>) -> Option<bool> {
    let Some(id) = instance_id.and_then(InstanceId::parse) else {
        return Some(true);
    };
    match workflow::status(env, &id).await {
        Ok(status) => Some(instance_is_dead(status.as_deref())),
        Err(e) => {
            worker::console_warn!("sweeper: status of {id} unknown: {e}");
            None
        }
    }
}

/// Makes one due send; `moved`: a send moved to hotel time, the sweeper's own (no repair to
/// record: the move was recorded), else one whose journey stopped (recorded as a repair).
async fn send_one(t: &mut Tick<'_>, row: &DueSend, moved: bool) -> Result<()> {
    let Some(kind) = ScheduledKind::parse(&row.kind) else {
        return Err(worker::Error::RustError(format!(
            "unknown scheduled kind {:?}",
            row.kind
        )));
    };
    let intent = Intent {
        journey_version: Some(row.journey_version),
        expires_at_ms: row.expires_at_ms,
        moment_ms: None,
    };
    let (what, delivery) = hotel::scheduled_send(
        t.env,
        &row.booking_id,
        kind,
        intent,
        row.due_at_ms,
        hotel::SendBy::Sweeper,
    )
    .await?;
    let why = match delivery {
        Some(_) => {
            t.report.scheduled_sent += 1;
            "past due and its journey had stopped: sent by the sweeper".to_string()
        }
        None => {
            t.report.scheduled_skipped += 1;
            format!("past due and its journey had stopped: skipped ({what})")
        }
    };
    if moved {
        return Ok(());
    }
    t.note_repair(RepairKind::ScheduledSend, &subject(row), &why)
        .await
}
