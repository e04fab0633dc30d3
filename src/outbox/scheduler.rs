//! The alarm's work: recover interrupted hand-overs, release ended backoffs, send every queued
//! owner alert (up to [`OWNER_BATCH`]) and at most one client email if the client slot (or, during
//! a catch-up, the urgent and booking lane) is open, sync outcomes to D1, watch the backlog, then
//! re-arm the alarm for the next thing to do. What to do and when is
//! decided by the policy (`crate::domain::outbox::{choose_provider, next_wake}`).
//!
//! An alarm may run 15 minutes at most (`crate::domain::outbox::smtp::ALARM_WALL_LIMIT_MS`): a hand-over
//! is started only when its worst case fits in what is left of the alarm's budget; otherwise the
//! email stays queued and the next alarm (armed a millisecond later) sends it with a fresh budget.
//! The client pacing is counted from the end of a send, so a slow SMTP conversation postpones the
//! next client email and never shortens the 150–160 s gap.

use super::send::{alarm_deadline, route_for, Attempted};
use super::storage::StateKey;
use super::Outbox;
use crate::config::Config;
use crate::domain::email::{Audience, Rank};
use crate::domain::outbox::{choose_provider, next_wake, Availability, ProviderChoice};
use crate::platform::{now_ms, random_u64};
use worker::Result;

/// Most owner alerts sent in one alarm (the rest go in the next, a millisecond later).
const OWNER_BATCH: usize = 10;

/// An unsynced outcome is retried this long after a D1 failure, ms.
const SYNC_RETRY_MS: i64 = 30_000;

impl Outbox {
    /// The providers as the policy sees them now: the configured main one, the pauses on record,
    /// and the owner route when its binding exists.
    pub(super) fn availability(&self, cfg: &Config) -> Result<Availability> {
        let mut a = cfg.availability(
            self.get_state(StateKey::MainPausedUntilMs)?,
            self.get_state(StateKey::SmtpPausedUntilMs)?,
        );
        a.owner_route = js_sys::Reflect::has(
            self.env.as_ref(),
            &wasm_bindgen::JsValue::from_str(crate::config::OWNER_ROUTE_BINDING),
        )
        .unwrap_or(false);
        a.owner_route_paused_until_ms = self.get_state(StateKey::OwnerRoutePausedUntilMs)?;
        Ok(a)
    }

    /// Sets the alarm for the next thing to do. Never `now` itself: an alarm set to the current
    /// millisecond inside `alarm()` can be dropped (workerd#6866), so at least now + 1 ms.
    pub(super) async fn rearm(&self, now: i64) -> Result<Option<i64>> {
        let cfg = self.config()?;
        self.lift_changed_settings(&cfg, now).await?;
        let availability = self.availability(&cfg)?;
        let mut wake = match choose_provider(now, availability) {
            // No provider before `t`: nothing can be sent, except owner alerts by the owner route,
            // and backoffs ending earlier only move rows back in line, which the alarm at `t`
            // does anyway.
            ProviderChoice::WaitUntil(t) => {
                let f = self.facts(now)?;
                let owner_route = matches!(
                    route_for(Audience::Owner, now, availability),
                    ProviderChoice::Send(_)
                );
                if f.owner_ready && owner_route {
                    Some(now)
                } else {
                    (f.owner_ready || f.client_ready || f.earliest_waiting_ms.is_some())
                        .then_some(t)
                }
            }
            ProviderChoice::Send(_) => {
                let next_slot = self.get_state(StateKey::NextSlotAtMs)?.unwrap_or(0);
                let mut wake = next_wake(now, next_slot, self.facts(now)?);
                // Marketing held by its daily cap: look again when the hold ends.
                let held_until = self.get_state(StateKey::MarketingHeldUntilMs)?.unwrap_or(0);
                if held_until > now
                    && self.any_queued(
                        Audience::Client,
                        Rank::Marketing.as_i64(),
                        Rank::Marketing.as_i64(),
                    )?
                {
                    let at = held_until.max(next_slot);
                    wake = Some(wake.map_or(at, |w| w.min(at)));
                }
                wake
            }
        };
        if self.any_unsynced()? {
            let retry = now + SYNC_RETRY_MS;
            wake = Some(wake.map_or(retry, |w| w.min(retry)));
        }
        if let Some(at) = wake {
            let at = at.max(now + 1);
            // An i64 would be read as an offset from now; pass an absolute date.
            let when = worker::ScheduledTime::new(js_sys::Date::new(
                &wasm_bindgen::JsValue::from_f64(at as f64),
            ));
            self.state.storage().set_alarm(when).await?;
            return Ok(Some(at));
        }
        Ok(None)
    }

    /// One alarm's work.
    pub(super) async fn process(&self) -> Result<()> {
        let cfg = self.config()?;
        let now = now_ms();
        let deadline = alarm_deadline(now);
        self.recover_interrupted(now)?;
        self.lift_changed_settings(&cfg, now).await?;
        self.release_waiting(now)?;

        // Owner alerts go whenever any route can carry them (the owner route included).
        let mut out_of_time = false;
        if let ProviderChoice::Send(_) = route_for(Audience::Owner, now, self.availability(&cfg)?) {
            for _ in 0..OWNER_BATCH {
                match self.pick(Audience::Owner, Rank::Marketing.as_i64())? {
                    Some(row) => {
                        if self.attempt(row, &cfg, deadline).await? == Attempted::OutOfTime {
                            out_of_time = true;
                            break;
                        }
                    }
                    None => break,
                }
            }
        }
        if let ProviderChoice::Send(_) = choose_provider(now_ms(), self.availability(&cfg)?) {
            let next_slot = self.get_state(StateKey::NextSlotAtMs)?.unwrap_or(0);
            let t = now_ms();
            let catch_up = self.catch_up(t)?;
            // The normal slot carries any rank; while a catch-up runs, its own lane carries
            // urgent and booking email in between. Either send moves both slots on, so service
            // and marketing email always wait the normal gap after the newest send.
            let lane = if t >= next_slot {
                Some(self.client_rank_limit(t)?)
            } else if catch_up.is_some()
                && t >= self.get_state(StateKey::FastSlotAtMs)?.unwrap_or(0)
            {
                Some(self.client_rank_limit(t)?.min(Rank::Booking.as_i64()))
            } else {
                None
            };
            if let (Some(max_rank), false) = (lane, out_of_time) {
                if let Some(row) = self.pick(Audience::Client, max_rank)? {
                    if self.attempt(row, &cfg, deadline).await? == Attempted::Sent {
                        let sent_at = now_ms();
                        self.set_state(
                            StateKey::NextSlotAtMs,
                            cfg.pacing.next_slot_after(sent_at, random_u64()),
                        )?;
                        if let Some(c) = catch_up {
                            self.set_state(
                                StateKey::FastSlotAtMs,
                                c.next_fast_slot_after(sent_at, random_u64()),
                            )?;
                        }
                    }
                }
            }
        }

        self.sync_records().await;
        // The forecast is a look-ahead: a failure to make it never fails the alarm's sends.
        if let Err(e) = self.watch_backlog(&cfg, now_ms()) {
            worker::console_error!("outbox: backlog forecast failed: {e}");
        }
        self.rearm(now_ms()).await?;
        Ok(())
    }
}
