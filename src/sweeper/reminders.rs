//! What waits for the owner comes back to the owner (`crate::domain::sweeper::reminders`): refunds waiting
//! for a decision are reminded with fresh links (the older links go out of date), open
//! card-testing holds are recalled once, and unanswered holds are closed when the business says
//! so. Each is bounded by the tick's batch and read through an index; a reminder or a recall is an
//! email with its own dedupe key, so overlapping ticks send it once.

use super::Tick;
use crate::domain::event::CheckoutAttempt;
use crate::domain::render;
use crate::domain::sweeper::RepairKind;
use crate::journey::compensation;
use crate::outbox::client::{self, Delivery};
use crate::platform::{config_or_err, rust_err};
use crate::store;
use crate::store::checkout::HoldStatus;
use worker::Result;

/// Refund reminders due this tick: one email each (`owner_compensation:<id>:reminder_<n>`).
pub(super) async fn refunds(t: &mut Tick<'_>) -> Result<()> {
    let loops = t.cfg.loops;
    let told_before = t.now_ms.saturating_sub(loops.refund_reminder_after_ms) + 1;
    let (rows, read) =
        store::refunds::reminders_due(&t.db, told_before, loops.refund_reminder_max, t.cfg.batch)
            .await?;
    t.report.rows_read += read;
    for r in rows {
        let Some(n) = loops.refund_reminder_due(
            r.waiting_since_ms,
            r.owner_told_at_ms,
            r.reminders_sent,
            t.now_ms,
        ) else {
            continue;
        };
        match compensation::remind(t.env, &r.compensation_id, n, t.now_ms).await {
            Ok(true) => t.report.refund_reminders += 1,
            Ok(false) => {}
            Err(e) => {
                t.report.parts_failed += 1;
                worker::console_error!(
                    "sweeper: reminder {n} of compensation {} failed: {e}",
                    r.compensation_id
                );
            }
        }
    }
    Ok(())
}

/// Unanswered holds closed as configured, then open holds recalled once.
pub(super) async fn holds(t: &mut Tick<'_>) -> Result<()> {
    let loops = t.cfg.loops;
    if let Some(before) = loops.unanswered_made_before_ms(t.now_ms) {
        let unanswered =
            store::checkout::open_holds_made_before(&t.db, before, false, t.cfg.batch).await?;
        for h in unanswered {
            let act = store::checkout::Act {
                action: "dismiss",
                at_ms: t.now_ms,
                from: Some("sweeper"),
            };
            let closed =
                store::checkout::close_hold(&t.db, &h.hold_id, HoldStatus::Dismissed, &act).await?;
            if closed {
                t.report.holds_dismissed += 1;
                let hours = loops.hold_unanswered_after_ms / 3_600_000;
                let why = format!(
                    "nobody answered this hold in {hours} h: dismissed as configured \
                     (HOLD_UNANSWERED_ACTION = dismiss); nothing was sent to the customer"
                );
                t.note_repair(RepairKind::HoldUnanswered, &h.hold_id, &why)
                    .await?;
            }
        }
    }
    let due = store::checkout::open_holds_made_before(
        &t.db,
        loops.recall_made_before_ms(t.now_ms),
        true,
        t.cfg.batch,
    )
    .await?;
    if due.is_empty() {
        return Ok(());
    }
    let cfg = config_or_err(t.env)?;
    for h in due {
        let Some(row) = store::checkout::get(&t.db, &h.prebook_id).await? else {
            continue;
        };
        let attempt: CheckoutAttempt = serde_json::from_str(&row.details_json)?;
        let links = crate::journey::checkout::action_links(&cfg, &h.hold_id, t.now_ms / 1000);
        let email = render::owner_hold_recall(
            &h.hold_id,
            &h.reason,
            t.now_ms - h.created_at_ms,
            loops.hold_unanswered.words(),
            &attempt,
            &links,
            cfg.owner_inbox(),
        )
        .map_err(rust_err)?;
        if client::deliver(t.env, &email, t.now_ms).await? == Delivery::Enqueued {
            t.report.holds_recalled += 1;
        }
        store::checkout::mark_recalled(&t.db, &h.hold_id, t.now_ms).await?;
    }
    Ok(())
}
