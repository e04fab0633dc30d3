//! The backlog, seen from the queue: the forecast of `crate::domain::outbox::backlog` fed with counts the
//! indexes give (`queue_ready` per rank, `queue_time_bound` for the emails with a moment), the
//! owner's alert when time-bound guest email is forecast to miss its moment (one a UTC day), and
//! the catch-up the owner may allow (`POST /pace`).
//!
//! Cost per alarm: nothing when no time-bound email is queued (one look through
//! `queue_time_bound`, named with `INDEXED BY`: without it SQLite may walk `queue_ready` and read
//! every queued row to find none); else one grouped count over the queued urgent, booking and
//! service rows (never marketing), one read of at most [`CANDIDATES`] time-bound rows, and one
//! count per such row over the rows ahead of it in its rank; the whole forecast only on the day's
//! alert.

use super::storage::StateKey;
use super::Outbox;
use crate::config::Config;
use crate::domain::email::{Audience, Rank};
use crate::domain::outbox::backlog::{self, CatchUp, Forecast, QueueNow, TimeBound};
use crate::domain::outbox::{choose_provider, ProviderChoice};
use crate::domain::render;
use crate::platform::rust_err;
use serde::Deserialize;
use worker::Result;

/// Most time-bound emails the forecast looks at (soonest moment first).
const CANDIDATES: usize = 50;

#[derive(Deserialize)]
struct RankCount {
    rank: i64,
    n: i64,
}

#[derive(Deserialize)]
struct Candidate {
    seq: i64,
    rank: i64,
    dedupe_key: String,
    intent_booking_id: Option<String>,
    moment_ms: i64,
}

impl Outbox {
    /// The catch-up in force at `now`, if any.
    pub(super) fn catch_up(&self, now: i64) -> Result<Option<CatchUp>> {
        let gap_ms = self.get_state(StateKey::CatchUpGapMs)?.unwrap_or(0);
        let until_ms = self.get_state(StateKey::CatchUpUntilMs)?.unwrap_or(0);
        Ok((gap_ms > 0 && until_ms > now).then_some(CatchUp { gap_ms, until_ms }))
    }

    /// Records the owner's catch-up (`None`: stop it now). The fast lane opens at once.
    pub(super) fn set_catch_up(&self, c: Option<CatchUp>) -> Result<()> {
        self.set_state(StateKey::CatchUpGapMs, c.map_or(0, |c| c.gap_ms))?;
        self.set_state(StateKey::CatchUpUntilMs, c.map_or(0, |c| c.until_ms))?;
        self.set_state(StateKey::FastSlotAtMs, 0)
    }

    /// The forecast at `now` (see `crate::domain::outbox::backlog` for the formula), every rank counted.
    pub(super) fn forecast(&self, cfg: &Config, now: i64) -> Result<Forecast> {
        self.forecast_of(cfg, now, Rank::Marketing)
    }

    /// The forecast at `now` with the queued emails of ranks up to `up_to` counted (the others
    /// count as none, so their drain figures are not meaningful). Time-bound email is never of
    /// the marketing rank and goes ahead of it, so whether any misses its moment is the same
    /// without counting marketing: each alarm's check leaves a campaign's backlog unread.
    fn forecast_of(&self, cfg: &Config, now: i64, up_to: Rank) -> Result<Forecast> {
        let counts: Vec<RankCount> = self.rows(
            "SELECT rank, COUNT(*) AS n FROM queue WHERE status = 'queued' AND audience = 'client' \
             AND rank <= ? GROUP BY rank",
            vec![up_to.as_i64().into()],
        )?;
        let mut queued = [0u64; 4];
        for c in counts {
            if let Some(slot) = usize::try_from(c.rank).ok().and_then(|r| queued.get_mut(r)) {
                *slot = u64::try_from(c.n).unwrap_or(0);
            }
        }
        let routes_back_at_ms = match choose_provider(now, self.availability(cfg)?) {
            ProviderChoice::WaitUntil(t) => Some(t),
            ProviderChoice::Send(_) => None,
        };
        let q = QueueNow {
            now_ms: now,
            next_slot_at_ms: self.get_state(StateKey::NextSlotAtMs)?.unwrap_or(0),
            fast_slot_at_ms: self.get_state(StateKey::FastSlotAtMs)?.unwrap_or(0),
            routes_back_at_ms,
            queued,
            pacing: cfg.pacing,
            catch_up: self.catch_up(now)?,
        };
        let candidates = self.time_bound(&queued)?;
        Ok(backlog::forecast(&q, &candidates))
    }

    /// The queued time-bound client emails (at most [`CANDIDATES`], soonest moment first) with
    /// their place in the send order: the rows of lower rank numbers, plus the rows of the same
    /// rank queued before them, counted in `(rank, seq)` order so the index is walked once.
    fn time_bound(&self, queued: &[u64; 4]) -> Result<Vec<TimeBound>> {
        let mut rows: Vec<Candidate> = self.rows(
            &format!(
                "SELECT seq, rank, dedupe_key, intent_booking_id, moment_ms FROM queue \
                 INDEXED BY queue_time_bound \
                 WHERE moment_ms IS NOT NULL AND status = 'queued' AND audience = 'client' \
                 ORDER BY moment_ms LIMIT {CANDIDATES}"
            ),
            vec![],
        )?;
        crate::domain::basics::sort::sort_by_key(&mut rows, |r| (r.rank, r.seq));
        let mut out = Vec::with_capacity(rows.len());
        // Within one rank: the count up to the previous candidate, carried forward.
        let mut carried: Option<(i64, i64, u64)> = None;
        for r in rows {
            // `seq` is an INTEGER PRIMARY KEY: 1 and up, so 0 is below every row.
            let from_seq = match carried {
                Some((rank, seq, _)) if rank == r.rank => seq,
                _ => 0,
            };
            let between = self
                .first_value(
                    "SELECT COUNT(*) AS value FROM queue WHERE status = 'queued' AND audience = 'client' \
                     AND rank = ? AND seq >= ? AND seq < ?",
                    vec![r.rank.into(), from_seq.into(), r.seq.into()],
                )?
                .unwrap_or(0);
            let within = match carried {
                Some((rank, _, n)) if rank == r.rank => n,
                _ => 0,
            } + u64::try_from(between).unwrap_or(0);
            carried = Some((r.rank, r.seq, within));
            let ahead: u64 = queued
                .iter()
                .take(usize::try_from(r.rank).unwrap_or(0).min(4))
                .sum();
            out.push(TimeBound {
                dedupe_key: r.dedupe_key,
                booking_id: r.intent_booking_id,
                position: ahead + within,
                moment_ms: r.moment_ms,
            });
        }
        Ok(out)
    }

    /// At the end of an alarm: when a time-bound email is forecast to miss its moment, the
    /// owner's backlog alert (one a UTC day, `owner_backlog:<day>`), queued like every alert.
    pub(super) fn watch_backlog(&self, cfg: &Config, now: i64) -> Result<()> {
        let today = now.div_euclid(crate::domain::outbox::DAY_MS);
        if self.get_state(StateKey::BacklogAlertedDay)? == Some(today) {
            return Ok(());
        }
        // Nothing time-bound queued: no forecast to make.
        if self
            .first_value(
                "SELECT seq AS value FROM queue INDEXED BY queue_time_bound \
                 WHERE moment_ms IS NOT NULL AND status = 'queued' AND audience = 'client' LIMIT 1",
                vec![],
            )?
            .is_none()
        {
            return Ok(());
        }
        if self.forecast_of(cfg, now, Rank::Service)?.misses.is_empty() {
            return Ok(());
        }
        // A miss: the alert's figures count every rank.
        let f = self.forecast(cfg, now)?;
        let alert = render::owner_backlog(
            &f,
            &backlog::alert_day(now),
            cfg.public_link("/admin/queue").as_ref(),
            cfg.owner_inbox(),
        )
        .map_err(rust_err)?;
        debug_assert_eq!(alert.audience, Audience::Owner);
        self.enqueue(&alert, now)?;
        self.set_state(StateKey::BacklogAlertedDay, today)
    }
}
