//! The sweeper's two questions to the outbox (`crate::sweeper`): which of these emails do you hold
//! (`POST /held`), and prune your finished rows older than a cut-off (`POST /prune`).

use super::Outbox;
use serde::{Deserialize, Serialize};
use worker::Result;

/// Most dedupe keys one `/held` call may ask about (the sweeper's batch is smaller).
pub const MAX_HELD_KEYS: usize = 500;
/// Most rows one `/prune` call may delete (the sweeper's batch is smaller).
pub const MAX_PRUNE: u32 = 1_000;

/// `POST /held` body: `{"dedupeKeys": ["…", …]}` (at most [`MAX_HELD_KEYS`]).
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldRequest {
    pub dedupe_keys: Vec<String>,
}

/// `POST /held` answer: the asked keys the outbox holds, in any status.
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldAnswer {
    pub held: Vec<String>,
}

/// `POST /prune` body: delete finished rows last changed before `before_ms` (ms UTC), at most
/// `limit` (≤ [`MAX_PRUNE`]).
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneRequest {
    pub before_ms: i64,
    pub limit: u32,
}

/// `POST /prune` answer: rows deleted (with their attempts).
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneAnswer {
    pub pruned: u32,
}

#[derive(Deserialize)]
struct KeyRow {
    dedupe_key: String,
}

#[derive(Deserialize)]
struct SeqRow {
    seq: i64,
}

impl Outbox {
    /// The keys of `keys` this outbox holds (one indexed lookup per key: `dedupe_key` is unique).
    pub(super) fn held(&self, keys: &[String]) -> Result<Vec<String>> {
        let mut held = Vec::new();
        for key in keys {
            let rows: Vec<KeyRow> = self.rows(
                "SELECT dedupe_key FROM queue WHERE dedupe_key = ?",
                vec![key.as_str().into()],
            )?;
            held.extend(rows.into_iter().map(|r| r.dedupe_key));
        }
        Ok(held)
    }

    /// Retention: deletes at most `limit` rows that are finished for good (`sent`,
    /// `sent_possibly_twice`, `dropped`, `skipped`), whose outcome D1 already has
    /// (`record_synced = 1`), last changed before `before_ms`, oldest first, with their attempts.
    /// Dead letters and blocked emails stay until an operator acts. The D1 `emails` record stays,
    /// and D1's claim on the dedupe key keeps the email from ever being sent again. The literals
    /// repeat the partial index `queue_finished` (`schema.rs`).
    pub(super) fn prune(&self, before_ms: i64, limit: u32) -> Result<u32> {
        let seqs: Vec<SeqRow> = self.rows(
            "SELECT seq FROM queue INDEXED BY queue_finished \
             WHERE status IN ('sent', 'sent_possibly_twice', 'dropped', 'skipped') \
             AND record_synced = 1 AND updated_at_ms < ? ORDER BY updated_at_ms LIMIT ?",
            vec![before_ms.into(), i64::from(limit.min(MAX_PRUNE)).into()],
        )?;
        for row in &seqs {
            self.exec("DELETE FROM attempts WHERE seq = ?", vec![row.seq.into()])?;
            self.exec("DELETE FROM queue WHERE seq = ?", vec![row.seq.into()])?;
        }
        Ok(u32::try_from(seqs.len()).unwrap_or(u32::MAX))
    }
}
