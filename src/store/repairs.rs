//! D1 `repairs` (migration 0006): one row per repair the sweeper made (what, why, when), unique
//! on its repair key, so two overlapping ticks record a repair once.

use super::{n, s};
use crate::domain::sweeper::RepairKind;
use worker::{D1Database, Result};

/// Records a repair once. `true` when this call recorded it, `false` when another tick had.
/// `now_ms`: ms since the Unix epoch, UTC.
pub async fn record(
    db: &D1Database,
    key: &str,
    kind: RepairKind,
    subject: &str,
    reason: &str,
    now_ms: i64,
) -> Result<bool> {
    super::changed_one(
        db,
        "INSERT INTO repairs (repair_key, kind, subject, reason, at_ms) VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT(repair_key) DO NOTHING",
        &[s(key), s(kind.as_str()), s(subject), s(reason), n(now_ms)],
    )
    .await
}

/// One recorded repair (D1 `repairs`).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct RepairRow {
    pub kind: String,
    pub subject: String,
    pub reason: String,
    /// ms since the epoch, UTC.
    pub at_ms: i64,
}

/// The repairs made in `[from_ms, to_ms)` (ms UTC): how many in all, and the first `limit`,
/// oldest first, through the index `repairs_by_time`. Returns `(total, rows, D1 rows read)`.
pub async fn in_window(
    db: &D1Database,
    from_ms: i64,
    to_ms: i64,
    limit: u32,
) -> Result<(u64, Vec<RepairRow>, u64)> {
    #[derive(serde::Deserialize)]
    struct Count {
        n: u64,
    }
    let bounds = [n(from_ms), n(to_ms)];
    let counted = db
        .prepare("SELECT COUNT(*) AS n FROM repairs WHERE at_ms >= ?1 AND at_ms < ?2")
        .bind(&bounds)?
        .all()
        .await?;
    let total = counted.results::<Count>()?.first().map_or(0, |c| c.n);
    let listed = db
        .prepare(
            "SELECT kind, subject, reason, at_ms FROM repairs WHERE at_ms >= ?1 AND at_ms < ?2 \
             ORDER BY at_ms LIMIT ?3",
        )
        .bind(&[n(from_ms), n(to_ms), n(i64::from(limit))])?
        .all()
        .await?;
    let read = super::rows_read(&counted) + super::rows_read(&listed);
    Ok((total, listed.results()?, read))
}
