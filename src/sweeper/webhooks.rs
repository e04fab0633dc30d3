//! Outbound webhook deliveries whose queue message was lost (a crash between the D1 record and
//! the queue send, a dead letter that never arrived): pending, not leased, and past their due
//! time by `WEBHOOK_OVERDUE_MS` (15 minutes) → a new queue message of the same budget. A message
//! that was only late finds the delivery done or leased and does nothing twice.

use super::Tick;
use crate::domain::sweeper::RepairKind;
use crate::store::webhooks as store;
use worker::Result;

/// How far past its due time a pending delivery must be before it is sent again, ms.
pub const WEBHOOK_OVERDUE_MS: i64 = 15 * 60_000;

/// Re-enqueues overdue deliveries, at most one sweeper batch a tick; each is a recorded repair.
pub(super) async fn reenqueue(t: &mut Tick<'_>) -> Result<()> {
    let claimed =
        store::overdue(&t.db, t.now_ms - WEBHOOK_OVERDUE_MS, t.now_ms, t.cfg.batch).await?;
    if claimed.is_empty() {
        return Ok(());
    }
    crate::publisher::enqueue(t.env, &claimed).await?;
    t.report.webhooks_reenqueued = u32::try_from(claimed.len()).unwrap_or(u32::MAX);
    for c in &claimed {
        let subject = format!("{}#{}", c.delivery_id, c.gen);
        t.note_repair(
            RepairKind::WebhookReenqueued,
            &subject,
            "a webhook delivery was past due with no queue message",
        )
        .await?;
    }
    Ok(())
}
