//! The outbox's backlog forecast and its bounded catch-up. Pure: the Durable Object counts its
//! queue through its indexes and asks here when each queued client email will go, how long each
//! rank takes to drain, and which time-bound guest emails will miss their moment.
//!
//! # The forecast
//!
//! Client email leaves one per slot in a fixed order (lowest rank, then oldest), so the `k`-th
//! queued client email (0-based, in that order) goes at
//!
//! ```text
//! t(k) = s + F(k)·f + (k − F(k))·g
//! s    = max(now, next client slot, the moment a paused route is back); during a catch-up with
//!        urgent or booking email queued, the catch-up lane's slot when it opens sooner
//! g    = (OUTBOX_GAP_MIN_MS + OUTBOX_GAP_MAX_MS) / 2        the mean gap (155 s in production)
//! f    = the catch-up gap while a catch-up runs (until U)
//! F(k) = min(k, ⌈(U − s) / f⌉, N₀₁ − 1)                      gaps taken at the catch-up pace
//! N₀₁  = queued urgent + booking emails (only they ride the catch-up)
//! ```
//!
//! (`F = 0` without a catch-up.) The rank `r` drains at `t(N₀ + … + N_r − 1) + g` — when its last
//! email has gone and the lane is free again. The forecast assumes nothing new of a lower rank
//! number arrives meanwhile (a new confirmation goes ahead of every waiting arrival guide), and
//! counts emails in backoff as not there: it is a floor, not a promise.
//!
//! # A moment missed
//!
//! Time-bound guest email (arrival guide, check-in-day note, schedule change) carries its moment
//! (`Intent::moment_ms`): after it the email is pointless (an arrival guide after check-in) or
//! too late to act on (a schedule change after departure). One forecast to go after its moment is
//! a [`Miss`]; the outbox alerts the owner once a UTC day with the figures.
//!
//! # The catch-up
//!
//! The owner may let urgent and booking email go faster for a bounded time
//! ([`CatchUp::new`]: a gap of at least [`CatchUpLimits::min_gap_ms`], for at most
//! [`CatchUpLimits::max_duration_ms`]). Service and marketing email still wait the normal gap after
//! the newest send of any rank, so marketing never speeds up and the default pace is unchanged.

use crate::domain::email::EmailKind;
use crate::domain::outbox::Pacing;
use serde::{Deserialize, Serialize};

/// Kinds whose moment the forecast watches.
pub fn is_time_bound(kind: EmailKind) -> bool {
    matches!(
        kind,
        EmailKind::ArrivalGuide | EmailKind::CheckinDay | EmailKind::FlightChanged
    )
}

/// The bounds of a catch-up (configuration `OUTBOX_CATCHUP_MIN_GAP_MS`,
/// `OUTBOX_CATCHUP_MAX_MS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatchUpLimits {
    /// The shortest gap a catch-up may use, ms (default 20 000).
    pub min_gap_ms: i64,
    /// The longest a catch-up may run, ms (default 6 h).
    pub max_duration_ms: i64,
}

impl CatchUpLimits {
    pub const DEFAULT: CatchUpLimits = CatchUpLimits {
        min_gap_ms: 20_000,
        max_duration_ms: 6 * 3_600_000,
    };
}

impl Default for CatchUpLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A catch-up in force: urgent and booking email one per `gap_ms` until `until_ms` (ms UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatchUp {
    pub gap_ms: i64,
    pub until_ms: i64,
}

/// Why a catch-up was refused (the operator's form or API names the field).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatchUpError {
    #[error("gapMs must be at least {min} ms and below the normal gap of {normal} ms, got {got}")]
    Gap { min: i64, normal: i64, got: i64 },
    #[error("the catch-up may last from 1 minute to {max} ms, got {got} ms")]
    Duration { max: i64, got: i64 },
}

impl CatchUp {
    /// A catch-up of `gap_ms` for `duration_ms` from `now_ms`, within `limits`; the gap must be
    /// shorter than the normal pace's minimum (else it would be no catch-up).
    pub fn new(
        gap_ms: i64,
        duration_ms: i64,
        now_ms: i64,
        pacing: Pacing,
        limits: CatchUpLimits,
    ) -> Result<Self, CatchUpError> {
        if gap_ms < limits.min_gap_ms || gap_ms >= pacing.min_ms() {
            return Err(CatchUpError::Gap {
                min: limits.min_gap_ms,
                normal: pacing.min_ms(),
                got: gap_ms,
            });
        }
        if !(60_000..=limits.max_duration_ms).contains(&duration_ms) {
            return Err(CatchUpError::Duration {
                max: limits.max_duration_ms,
                got: duration_ms,
            });
        }
        Ok(CatchUp {
            gap_ms,
            until_ms: now_ms.saturating_add(duration_ms),
        })
    }

    /// In force at `now_ms`.
    pub fn active(&self, now_ms: i64) -> bool {
        now_ms < self.until_ms
    }

    /// When the fast lane opens after a send at `sent_at_ms`: the catch-up gap plus up to a tenth
    /// of it (drawn from `random`), so sends are not a perfect metronome.
    pub fn next_fast_slot_after(&self, sent_at_ms: i64, random: u64) -> i64 {
        let span = (self.gap_ms / 10).max(0) as u64 + 1;
        sent_at_ms + self.gap_ms + (random % span) as i64
    }
}

/// What the forecast starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueNow {
    /// ms UTC.
    pub now_ms: i64,
    /// When the client lane opens next (ms UTC; 0 when open).
    pub next_slot_at_ms: i64,
    /// When the catch-up lane opens next (ms UTC; 0 when open); read only while a catch-up runs.
    pub fast_slot_at_ms: i64,
    /// When a route can carry mail again, if every route is paused (ms UTC).
    pub routes_back_at_ms: Option<i64>,
    /// Queued client emails per rank, index = rank number (urgent, booking, service, marketing).
    pub queued: [u64; 4],
    pub pacing: Pacing,
    pub catch_up: Option<CatchUp>,
}

/// How long one rank takes to drain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RankDrain {
    /// Rank number, 0 (urgent) … 3 (marketing).
    pub rank: i64,
    pub queued: u64,
    /// When its last queued email (and every one ahead of it) has gone, ms UTC; `now` when none.
    pub drained_at_ms: i64,
}

impl QueueNow {
    /// The mean gap `g`, ms.
    pub fn mean_gap_ms(&self) -> i64 {
        (self.pacing.min_ms() + self.pacing.max_ms()) / 2
    }

    /// The first send's time `s`, ms UTC.
    pub fn start_ms(&self) -> i64 {
        let riders = self.queued[0] + self.queued[1] > 0;
        let lane = match self.catch_up {
            Some(c) if riders && c.until_ms > self.now_ms => {
                self.next_slot_at_ms.min(self.fast_slot_at_ms)
            }
            _ => self.next_slot_at_ms,
        };
        self.now_ms
            .max(lane)
            .max(self.routes_back_at_ms.unwrap_or(i64::MIN))
    }

    /// When the `position`-th queued client email (0-based, in send order) is forecast to go,
    /// ms UTC (see the module docs for the formula).
    pub fn send_at_ms(&self, position: u64) -> i64 {
        let s = self.start_ms();
        let g = self.mean_gap_ms();
        let k = i64::try_from(position).unwrap_or(i64::MAX / 4);
        let fast_gaps = match self.catch_up {
            Some(c) if c.until_ms > s && c.gap_ms > 0 => {
                let riders = i64::try_from(self.queued[0] + self.queued[1]).unwrap_or(i64::MAX);
                let in_window = (c.until_ms - s + c.gap_ms - 1) / c.gap_ms;
                k.min(in_window).min((riders - 1).max(0))
            }
            _ => 0,
        };
        let f = self.catch_up.map_or(g, |c| c.gap_ms);
        s.saturating_add(fast_gaps.saturating_mul(f))
            .saturating_add((k - fast_gaps).saturating_mul(g))
    }

    /// Per rank, how long the queue takes to drain at the current pace.
    pub fn drains(&self) -> [RankDrain; 4] {
        let mut ahead = 0u64;
        let g = self.mean_gap_ms();
        std::array::from_fn(|r| {
            ahead += self.queued[r];
            RankDrain {
                rank: r as i64,
                queued: self.queued[r],
                drained_at_ms: if ahead == 0 {
                    self.now_ms
                } else {
                    self.send_at_ms(ahead - 1).saturating_add(g)
                },
            }
        })
    }
}

/// A time-bound email as the outbox holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeBound {
    pub dedupe_key: String,
    pub booking_id: Option<String>,
    /// Its place in the send order (0-based) among queued client email.
    pub position: u64,
    /// Its moment, ms UTC.
    pub moment_ms: i64,
}

/// A time-bound email forecast to go after its moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Miss {
    pub dedupe_key: String,
    pub booking_id: Option<String>,
    pub position: u64,
    /// ms UTC.
    pub moment_ms: i64,
    /// ms UTC.
    pub forecast_ms: i64,
}

/// The time-bound emails of `candidates` forecast to go after their moment, soonest moment
/// first.
pub fn misses(q: &QueueNow, candidates: &[TimeBound]) -> Vec<Miss> {
    let mut out: Vec<Miss> = candidates
        .iter()
        .filter_map(|c| {
            let forecast_ms = q.send_at_ms(c.position);
            (forecast_ms > c.moment_ms).then(|| Miss {
                dedupe_key: c.dedupe_key.clone(),
                booking_id: c.booking_id.clone(),
                position: c.position,
                moment_ms: c.moment_ms,
                forecast_ms,
            })
        })
        .collect();
    crate::domain::basics::sort::sort_by_key(&mut out, |m| (m.moment_ms, m.position));
    out
}

/// The forecast the outbox reports (`GET /state` and its backlog alert).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Forecast {
    /// ms UTC.
    pub at_ms: i64,
    /// The mean gap used, ms.
    pub gap_ms: i64,
    pub catch_up: Option<CatchUp>,
    pub drains: Vec<RankDrain>,
    pub misses: Vec<Miss>,
}

/// The forecast of `q` with the time-bound `candidates`.
pub fn forecast(q: &QueueNow, candidates: &[TimeBound]) -> Forecast {
    Forecast {
        at_ms: q.now_ms,
        gap_ms: q.mean_gap_ms(),
        catch_up: q.catch_up.filter(|c| c.active(q.now_ms)),
        drains: q.drains().to_vec(),
        misses: misses(q, candidates),
    }
}

/// The dedupe key reference of the owner's backlog alert for the UTC day of `now_ms`: at most one
/// a day.
pub fn alert_day(now_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(now_ms)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "invalid-day".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::email::Rank;

    const MIN: i64 = 60_000;

    fn q(queued: [u64; 4], catch_up: Option<CatchUp>) -> QueueNow {
        QueueNow {
            now_ms: 1_000_000,
            next_slot_at_ms: 0,
            fast_slot_at_ms: 0,
            routes_back_at_ms: None,
            queued,
            pacing: Pacing::PRODUCTION,
            catch_up,
        }
    }

    /// A `kind` email of booking `booking` (key `<kind>:<booking>`), `position`-th in the send
    /// order, due at `moment_ms`.
    fn time_bound(kind: &str, booking: &str, position: u64, moment_ms: i64) -> TimeBound {
        TimeBound {
            dedupe_key: format!("{kind}:{booking}"),
            booking_id: Some(booking.into()),
            position,
            moment_ms,
        }
    }

    /// The outbox checks each alarm for misses without counting marketing: that holds only while
    /// no time-bound kind is of the marketing rank.
    #[test]
    fn time_bound_email_is_never_of_the_marketing_rank() {
        for kind in EmailKind::ALL.into_iter().filter(|k| is_time_bound(*k)) {
            assert!(kind.rank().as_i64() < Rank::Marketing.as_i64(), "{kind:?}");
        }
    }

    #[test]
    fn marketing_counts_change_no_miss_of_time_bound_email() {
        let candidates = [time_bound(
            "arrival_guide",
            "BK1",
            3,
            1_000_000 + 2 * 155_000,
        )];
        let without = forecast(&q([1, 1, 2, 0], None), &candidates);
        let with = forecast(&q([1, 1, 2, 90_000], None), &candidates);
        assert_eq!(without.misses.len(), 1);
        assert_eq!(without.misses, with.misses);
    }

    #[test]
    fn the_kth_email_goes_k_mean_gaps_after_the_slot_opens() {
        let q = q([2, 3, 0, 1], None);
        assert_eq!(q.mean_gap_ms(), 155_000);
        assert_eq!(q.send_at_ms(0), 1_000_000);
        assert_eq!(q.send_at_ms(4), 1_000_000 + 4 * 155_000);
        let d = q.drains();
        assert_eq!(d[0].drained_at_ms, 1_000_000 + 2 * 155_000);
        assert_eq!(d[1].drained_at_ms, 1_000_000 + 5 * 155_000);
        assert_eq!(d[2].drained_at_ms, d[1].drained_at_ms, "nothing of rank 2");
        assert_eq!(d[3].drained_at_ms, 1_000_000 + 6 * 155_000);
        // About 557 emails a day at this pace.
        assert_eq!(86_400_000 / q.mean_gap_ms(), 557);
    }

    #[test]
    fn a_closed_slot_or_a_paused_route_delays_the_start() {
        let mut q = q([1, 0, 0, 0], None);
        q.next_slot_at_ms = 1_100_000;
        assert_eq!(q.send_at_ms(0), 1_100_000);
        // A catch-up's own lane opens sooner for urgent and booking email.
        q.catch_up = Some(CatchUp {
            gap_ms: 30_000,
            until_ms: 9_000_000,
        });
        q.fast_slot_at_ms = 1_030_000;
        assert_eq!(q.send_at_ms(0), 1_030_000);
        q.routes_back_at_ms = Some(5_000_000);
        assert_eq!(q.send_at_ms(0), 5_000_000);
    }

    #[test]
    fn a_catch_up_speeds_urgent_and_booking_only_and_only_in_its_window() {
        let c = CatchUp {
            gap_ms: 30_000,
            until_ms: 1_000_000 + 10 * MIN,
        };
        let q = q([10, 10, 5, 5], Some(c));
        // 20 riders: gaps 1..=19 could be fast; the window holds ⌈600 s / 30 s⌉ = 20 of them.
        assert_eq!(q.send_at_ms(1), 1_030_000);
        assert_eq!(q.send_at_ms(19), 1_000_000 + 19 * 30_000);
        // The first service email waits the normal gap after the last rider.
        assert_eq!(q.send_at_ms(20), 1_000_000 + 19 * 30_000 + 155_000);
        // Marketing (positions 25…29) is at the normal pace throughout.
        assert_eq!(
            q.send_at_ms(29) - q.send_at_ms(25),
            4 * 155_000,
            "marketing never speeds up"
        );
        // A short window: only the gaps that start inside it are fast.
        let short = CatchUp {
            gap_ms: 30_000,
            until_ms: 1_000_000 + 65_000,
        };
        let q2 = self::q([10, 0, 0, 0], Some(short));
        // ⌈65/30⌉ = 3 fast gaps (sends at 0, 30, 60 s — the third gap starts at 60 s < 65 s).
        assert_eq!(q2.send_at_ms(3), 1_000_000 + 90_000);
        assert_eq!(q2.send_at_ms(4), 1_000_000 + 90_000 + 155_000);
        // An expired catch-up changes nothing.
        let old = CatchUp {
            gap_ms: 30_000,
            until_ms: 999_000,
        };
        assert_eq!(
            self::q([10, 0, 0, 0], Some(old)).send_at_ms(5),
            1_000_000 + 5 * 155_000
        );
    }

    #[test]
    fn a_time_bound_email_behind_a_backlog_is_a_miss_and_a_catch_up_saves_it() {
        let candidates = [time_bound("checkin_day", "BK_1", 20, 1_000_000 + 30 * MIN)];
        let slow = q([21, 0, 0, 0], None);
        let m = misses(&slow, &candidates);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].forecast_ms, 1_000_000 + 20 * 155_000);
        let fast = q(
            [21, 0, 0, 0],
            Some(CatchUp {
                gap_ms: 30_000,
                until_ms: 1_000_000 + 2 * 60 * MIN,
            }),
        );
        assert!(misses(&fast, &candidates).is_empty());
        assert_eq!(fast.send_at_ms(20), 1_000_000 + 20 * 30_000);
    }

    #[test]
    fn a_catch_up_is_bounded() {
        let p = Pacing::PRODUCTION;
        let l = CatchUpLimits::DEFAULT;
        assert!(CatchUp::new(30_000, 3_600_000, 0, p, l).is_ok());
        assert!(matches!(
            CatchUp::new(5_000, 3_600_000, 0, p, l),
            Err(CatchUpError::Gap { .. })
        ));
        assert!(matches!(
            CatchUp::new(150_000, 3_600_000, 0, p, l),
            Err(CatchUpError::Gap { .. })
        ));
        assert!(matches!(
            CatchUp::new(30_000, 7 * 3_600_000, 0, p, l),
            Err(CatchUpError::Duration { .. })
        ));
        let c = CatchUp::new(30_000, 3_600_000, 0, p, l).unwrap();
        assert!(c.active(3_599_999) && !c.active(3_600_000));
        for r in [0u64, 1, 2999, u64::MAX] {
            let t = c.next_fast_slot_after(0, r);
            assert!((30_000..=33_000).contains(&t), "{t}");
        }
    }
}
