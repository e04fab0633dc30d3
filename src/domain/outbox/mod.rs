//! Outbox policy: when the next client slot opens, when the outbox wakes, which provider sends,
//! and what a failure means. Pure: the Durable Object (`crate::outbox`) feeds it facts, `now` and
//! random numbers, and carries out the answer.
//!
//! Invariants:
//! - Owner alerts are sent as soon as they are queued; they never wait for, or consume, a client slot.
//! - Client email: one per slot; the next slot opens a uniformly random 150–160 s (configurable)
//!   after the previous client send. An idle outbox (slot already open) sends at once.
//! - Among eligible client items, the lowest rank number goes first, then the oldest (arrival order).
//!   That order is SQL in the Durable Object (`crate::outbox::queue`, `ORDER BY rank, seq` through
//!   the `queue_ready` index); `tests/e2e/outbox-order.test.mjs` checks it against the real queue.
//!
//! May use: `basics`, `event`, `email`, `journey`.

pub mod backlog;
mod failure;
mod handover;
pub mod intent;
pub mod outgoing;
mod probe;
mod providers;
pub mod resend;
mod route_settings;
pub mod smtp;
#[doc(hidden)]
pub mod testing;

pub use failure::*;
pub use handover::*;
pub use probe::*;
pub use providers::*;
pub use route_settings::*;

use serde::{Deserialize, Serialize};

/// Milliseconds in one UTC day.
pub const DAY_MS: i64 = 86_400_000;

/// Why a pacing configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PacingError {
    #[error("OUTBOX_GAP_MIN_MS must be ≥ 0 and ≤ OUTBOX_GAP_MAX_MS (got min {min}, max {max})")]
    Range { min: i64, max: i64 },
}

/// Gap between two client sends, in milliseconds (`OUTBOX_GAP_MIN_MS` … `OUTBOX_GAP_MAX_MS`,
/// production 150 000 … 160 000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pacing {
    gap_min_ms: i64,
    gap_max_ms: i64,
}

impl Pacing {
    /// Production pacing: 150–160 s.
    pub const PRODUCTION: Pacing = Pacing {
        gap_min_ms: 150_000,
        gap_max_ms: 160_000,
    };

    /// `min` ≤ `max`, both ≥ 0, in milliseconds.
    pub fn new(gap_min_ms: i64, gap_max_ms: i64) -> Result<Self, PacingError> {
        if gap_min_ms < 0 || gap_min_ms > gap_max_ms {
            return Err(PacingError::Range {
                min: gap_min_ms,
                max: gap_max_ms,
            });
        }
        Ok(Self {
            gap_min_ms,
            gap_max_ms,
        })
    }

    /// A gap drawn uniformly from `[min, max]` ms using one random `u64` (from the shell's CSPRNG,
    /// or a seeded sequence in tests).
    pub fn gap_ms(&self, random: u64) -> i64 {
        let span = (self.gap_max_ms - self.gap_min_ms) as u64 + 1;
        self.gap_min_ms + (random % span) as i64
    }

    /// When the next client slot opens after a client send that finished at `sent_at_ms`.
    pub fn next_slot_after(&self, sent_at_ms: i64, random: u64) -> i64 {
        sent_at_ms + self.gap_ms(random)
    }

    pub fn min_ms(&self) -> i64 {
        self.gap_min_ms
    }

    pub fn max_ms(&self) -> i64 {
        self.gap_max_ms
    }
}

/// What the queue looks like to the scheduler: the cheap facts the Durable Object reads through its
/// indexes (never a scan).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueFacts {
    /// At least one owner alert is `queued`.
    pub owner_ready: bool,
    /// At least one client email is `queued`.
    pub client_ready: bool,
    /// Earliest `not_before_ms` among `waiting` items (backoff), if any.
    pub earliest_waiting_ms: Option<i64>,
    /// While a catch-up runs and urgent or booking client email is queued: when the catch-up
    /// lane opens (ms UTC; `crate::domain::outbox::backlog`).
    pub fast_lane_at_ms: Option<i64>,
}

/// When the outbox must wake up next (ms since epoch, UTC), or `None` when there is nothing to do.
///
/// `next_slot_at_ms` is when the client lane opens (0 if nothing was ever sent).
pub fn next_wake(now_ms: i64, next_slot_at_ms: i64, facts: QueueFacts) -> Option<i64> {
    let mut wake: Option<i64> = None;
    let mut consider = |t: i64| wake = Some(wake.map_or(t, |w: i64| w.min(t)));
    if facts.owner_ready {
        consider(now_ms);
    }
    if facts.client_ready {
        consider(next_slot_at_ms.max(now_ms));
    }
    if let Some(t) = facts.earliest_waiting_ms {
        consider(t.max(now_ms));
    }
    if let Some(t) = facts.fast_lane_at_ms {
        consider(t.max(now_ms));
    }
    wake
}

/// `true` when a client email may be sent at `now_ms`.
pub fn client_slot_open(now_ms: i64, next_slot_at_ms: i64) -> bool {
    now_ms >= next_slot_at_ms
}

#[cfg(test)]
mod tests;
