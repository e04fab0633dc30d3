//! Emails D1 says are unsettled (`claimed`: the send-once protocol died between its claim and the
//! outbox; `queued`: D1 says the outbox took it), each looked at once per `SWEEP_GRACE_MS`: the
//! outbox is asked whether it holds them, and the ones it does not — still unsettled at a second
//! look at least a grace period after the first — are handed over again from the copy D1 kept at
//! the claim ([`crate::domain::sweeper::unsettled_action`] decides). Enqueueing is
//! idempotent on the dedupe key, so two overlapping ticks hand an email over once.

use super::Tick;
use crate::domain::email::EmailStatus;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::sweeper::{unsettled_action, RepairKind, UnsettledAction, UnsettledFacts};
use crate::outbox::client;
use crate::store::emails::{self, UnsettledEmail};
use worker::Result;

pub(super) async fn restore(t: &mut Tick<'_>) -> Result<()> {
    // Each unsettled row is checked at most once per grace period: a long, healthy backlog is
    // looked at in turn instead of starving an orphan behind it, and a row is acted on only at
    // its second look (`UnsettledFacts::seen_before`), a grace period after the first.
    let (rows, read) = emails::unsettled(&t.db, t.cut.abandoned_before_ms, t.cfg.batch).await?;
    t.report.rows_read += read;
    if rows.is_empty() {
        return Ok(());
    }
    let keys: Vec<String> = rows.iter().map(|r| r.dedupe_key.clone()).collect();
    let held = client::held(t.env, &keys).await?;
    // Held by the outbox but still `claimed` in D1: marked `queued` with the looks below.
    let mut mark_queued: Vec<&str> = Vec::new();
    for row in &rows {
        let facts = UnsettledFacts {
            held: held.contains(&row.dedupe_key),
            claimed_only: row.status == EmailStatus::Claimed,
            has_payload: row.payload_json.is_some(),
            seen_before: row.swept_at_ms > 0,
            created_at_ms: row.created_at_ms,
        };
        let action = unsettled_action(facts, t.cut.outbox_before_ms);
        if action == UnsettledAction::MarkQueued {
            mark_queued.push(&row.dedupe_key);
            continue;
        }
        if let Err(e) = apply(t, row, action).await {
            // Looked at again a grace period later; recorded once for the owner.
            t.report.emails_failed += 1;
            let why = format!("the sweeper could not hand it over again: {e}");
            t.note_repair(RepairKind::SendFailed, &row.dedupe_key, &why)
                .await?;
        }
    }
    let checked: Vec<&str> = keys.iter().map(String::as_str).collect();
    emails::mark_swept_and_queued(&t.db, &checked, &mark_queued, t.now_ms).await
}

async fn apply(t: &mut Tick<'_>, row: &UnsettledEmail, action: UnsettledAction) -> Result<()> {
    match action {
        UnsettledAction::Leave | UnsettledAction::MarkQueued => Ok(()),
        UnsettledAction::Enqueue => {
            let email: OutgoingEmail =
                serde_json::from_str(row.payload_json.as_deref().unwrap_or_default())?;
            client::enqueue(t.env, &email).await?;
            emails::mark_queued(&t.db, &row.dedupe_key, t.now_ms).await?;
            t.report.emails_enqueued += 1;
            let why = format!(
                "D1 said {} but the outbox did not hold it: handed over again",
                row.status.as_str()
            );
            t.note_repair(RepairKind::Enqueued, &row.dedupe_key, &why)
                .await
        }
        UnsettledAction::CannotRestore(why) => {
            t.report.emails_unrestorable += 1;
            let why = format!(
                "{} and not in the outbox, not handed over: {why}",
                row.status.as_str()
            );
            t.note_repair(RepairKind::Unrestorable, &row.dedupe_key, &why)
                .await
        }
    }
}
