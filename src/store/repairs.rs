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
