//! Refunds by their state (D1 `compensation_steps` of step `refund` joined with `compensations`,
//! through the partial index `compensation_steps_refund`): the admin's refunds page, the
//! overview's count, and the sweeper's reminders of the ones that wait for the owner.

use super::{n, rows_read, s};
use crate::domain::payment::compensation::RefundGroup;
use serde::Deserialize;
use worker::{D1Database, Result};

/// One refund as the admin lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct RefundLine {
    pub compensation_id: String,
    pub booking_id: Option<String>,
    pub guest_name: Option<String>,
    pub guest_email: Option<String>,
    pub trip: Option<String>,
    pub source: String,
    pub cause: String,
    /// The refund step's status (stored name) and round.
    pub status: String,
    pub round: i64,
    pub amount_minor: Option<i64>,
    pub currency: Option<String>,
    pub detail: Option<String>,
    pub error: Option<String>,
    pub provider_id: Option<String>,
    /// When the step last changed (for a waiting one: since when it waits), ms UTC.
    pub updated_at_ms: i64,
    pub reminders_sent: i64,
    /// The proven payment intent and what Stripe said (`crate::domain::payment::payment_proof`).
    #[serde(default)]
    pub payment_intent: Option<String>,
    #[serde(default)]
    pub proof: Option<String>,
}

fn in_list(group: RefundGroup) -> String {
    group
        .statuses()
        .iter()
        .map(|st| format!("'{st}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The refunds of `group`, the longest waiting first, at most `limit`.
pub async fn in_group(db: &D1Database, group: RefundGroup, limit: u32) -> Result<Vec<RefundLine>> {
    let order = if group == RefundGroup::Done {
        "DESC"
    } else {
        ""
    };
    db.prepare(format!(
        "SELECT c.compensation_id, c.booking_id, c.guest_name, c.guest_email, c.trip, c.source, c.cause, \
         s.status, s.round, s.amount_minor, s.currency, s.detail, s.error, s.provider_id, s.updated_at_ms, \
         c.reminders_sent, s.payment_intent, s.proof \
         FROM compensation_steps s JOIN compensations c ON c.compensation_id = s.compensation_id \
         WHERE s.step = 'refund' AND s.status IN ({}) ORDER BY s.updated_at_ms {order} LIMIT ?1",
        in_list(group)
    ))
    .bind(&[n(i64::from(limit))])?
    .all()
    .await?
    .results()
}

/// How many refunds each group holds (every group named, zero when empty).
pub async fn counts(db: &D1Database) -> Result<Vec<(RefundGroup, u64)>> {
    #[derive(Deserialize)]
    struct Row {
        status: String,
        n: u64,
    }
    let rows: Vec<Row> = db
        .prepare(
            "SELECT status, COUNT(*) AS n FROM compensation_steps WHERE step = 'refund' GROUP BY status",
        )
        .all()
        .await?
        .results()?;
    Ok(<RefundGroup as strum::VariantArray>::VARIANTS
        .iter()
        .map(|g| {
            let total = rows
                .iter()
                .filter(|r| g.statuses().contains(&r.status.as_str()))
                .map(|r| r.n)
                .sum();
            (*g, total)
        })
        .collect())
}

/// A refund that waits for the owner, as the reminder rule reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct WaitingRefund {
    pub compensation_id: String,
    /// When the refund step began to wait (its last change), ms UTC.
    pub waiting_since_ms: i64,
    pub owner_told_at_ms: Option<i64>,
    pub reminders_sent: i64,
}

/// Refunds waiting for the owner (`awaiting_owner` or `failed`) whose owner was last told before
/// `told_before_ms` (ms UTC) and reminded fewer than `max` times, the longest waiting first, at
/// most `limit`. Returns the rows and the D1 rows read.
pub async fn reminders_due(
    db: &D1Database,
    told_before_ms: i64,
    max: i64,
    limit: u32,
) -> Result<(Vec<WaitingRefund>, u64)> {
    let r = db
        .prepare(
            "SELECT c.compensation_id, s.updated_at_ms AS waiting_since_ms, c.owner_told_at_ms, c.reminders_sent \
             FROM compensation_steps s JOIN compensations c ON c.compensation_id = s.compensation_id \
             WHERE s.step = 'refund' AND s.status IN ('awaiting_owner', 'failed') \
             AND s.updated_at_ms < ?1 AND c.reminders_sent < ?2 \
             AND COALESCE(c.owner_told_at_ms, 0) < ?1 \
             ORDER BY s.updated_at_ms LIMIT ?3",
        )
        .bind(&[n(told_before_ms), n(max), n(i64::from(limit))])?
        .all()
        .await?;
    Ok((r.results()?, rows_read(&r)))
}

/// Records reminder `number` of `compensation_id` at `now_ms` (its links' generation from now on).
/// Never moves the count back (a repeated record of an older reminder changes nothing).
pub async fn record_reminder(
    db: &D1Database,
    compensation_id: &str,
    number: i64,
    now_ms: i64,
) -> Result<()> {
    db.prepare(
        "UPDATE compensations SET reminders_sent = ?2, owner_told_at_ms = ?3 \
         WHERE compensation_id = ?1 AND reminders_sent < ?2",
    )
    .bind(&[s(compensation_id), n(number), n(now_ms)])?
    .run()
    .await?;
    Ok(())
}
