//! The routes' pauses and their history. A pause is recorded with its cause; one that blames our
//! credentials or configuration also records a fingerprint of the route's settings, so a change of
//! those settings lifts it at the next look (an alarm, an enqueue, or the sweeper's five-minute
//! `/rearm`) without the operator's click (`crate::domain::outbox::check_pause`). Every pause,
//! resume and lift, and every verdict on an email set aside, is a line of the route history
//! (`route_log`, the last [`ROUTE_LOG_KEPT`] lines) shown on the admin's outbox page; a lift is
//! also recorded in D1 `repairs`, so the overview and the daily digest show it.

use super::storage::StateKey;
use super::Outbox;
use crate::config::Config;
use crate::domain::outbox::{
    check_pause, fingerprint, PauseCause, PauseCheck, Provider, ProviderPause, SettingsFingerprint,
};
use serde::{Deserialize, Serialize};
use worker::Result;

/// Lines of the route history kept (older ones are pruned as new ones come).
pub(super) const ROUTE_LOG_KEPT: i64 = 200;

/// One line of the route history, as the operator view shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RouteEvent {
    /// ms UTC.
    pub at_ms: i64,
    /// The route's stored name (`cloudflare_email`, `resend`, `smtp`, `owner_route`).
    pub route: String,
    /// What happened ([`RouteEventKind`]'s stored name).
    pub event: String,
    /// One line: the cause and the provider's words, the settings that changed, the email.
    pub detail: String,
}

/// What a route history line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub(super) enum RouteEventKind {
    /// The route was paused after a failure (daily limit, credentials, configuration).
    Paused,
    /// The operator paused the route by hand.
    PausedByOperator,
    /// The operator resumed the route.
    ResumedByOperator,
    /// The settings a credentials or configuration pause blamed changed: the pause was lifted.
    LiftedSettingsChanged,
    /// The next email on the route was accepted: the email set aside before it was refused alone.
    RefusedAlone,
    /// The next email on the route was refused the same way: the route was paused.
    RefusedTwice,
}

/// The `state` keys of one route's pause: until when, why, and the settings it blamed.
struct PauseKeys {
    until: StateKey,
    cause: Option<StateKey>,
    settings: Option<(StateKey, StateKey)>,
}

fn pause_keys(provider: Provider) -> PauseKeys {
    match provider {
        Provider::Cloudflare | Provider::Resend => PauseKeys {
            until: StateKey::MainPausedUntilMs,
            cause: Some(StateKey::MainPauseCause),
            settings: Some((StateKey::MainPauseFingerprint, StateKey::MainPauseSettings)),
        },
        Provider::Smtp => PauseKeys {
            until: StateKey::SmtpPausedUntilMs,
            cause: Some(StateKey::SmtpPauseCause),
            settings: Some((StateKey::SmtpPauseFingerprint, StateKey::SmtpPauseSettings)),
        },
        Provider::OwnerRoute => PauseKeys {
            until: StateKey::OwnerRoutePausedUntilMs,
            cause: None,
            settings: None,
        },
    }
}

impl Outbox {
    /// Records that `provider`'s route is paused (`pause`: until when, why) after the failure
    /// named `fault` (`reason`: the provider's words), with the fingerprint of its settings when the
    /// pause blames them, and a line of the route history.
    pub(super) fn record_pause(
        &self,
        provider: Provider,
        pause: ProviderPause,
        fault: &str,
        reason: &str,
        cfg: &Config,
        at: i64,
    ) -> Result<()> {
        let keys = pause_keys(provider);
        self.set_state(keys.until, pause.until_ms)?;
        if let Some(cause) = keys.cause {
            self.set_state(cause, pause.cause.stored())?;
        }
        if let Some((whole, per_setting)) = keys.settings {
            match pause.cause {
                PauseCause::Credentials | PauseCause::Configuration => {
                    let f = fingerprint(&cfg.route_settings(provider));
                    self.set_state(whole, f.whole)?;
                    self.set_state(per_setting, f.per_setting)?;
                }
                PauseCause::DailyLimit => {
                    self.delete_state(whole)?;
                    self.delete_state(per_setting)?;
                }
            }
        }
        let cause = match pause.cause {
            PauseCause::DailyLimit => "daily limit",
            PauseCause::Credentials => "credentials refused",
            PauseCause::Configuration => "refused for a reason of ours",
        };
        let fault = if fault.is_empty() {
            String::new()
        } else {
            format!(" [{fault}]")
        };
        self.log_route(
            provider,
            RouteEventKind::Paused,
            &format!(
                "{cause}{fault} until {} UTC: {reason}",
                crate::domain::render::utc_minute(pause.until_ms)
            ),
            at,
        )
    }

    /// The operator paused (`until_ms` in the future) or resumed a route by hand: an operator's
    /// pause belongs to no settings (it stays until resumed or run out); a resume clears the cause.
    pub(super) fn record_operator_pause(
        &self,
        provider: Provider,
        until_ms: i64,
        now: i64,
    ) -> Result<()> {
        let keys = pause_keys(provider);
        self.set_state(keys.until, until_ms.max(0))?;
        if let Some(cause) = keys.cause {
            self.delete_state(cause)?;
        }
        if let Some((whole, per_setting)) = keys.settings {
            self.delete_state(whole)?;
            self.delete_state(per_setting)?;
        }
        if until_ms > now {
            self.log_route(
                provider,
                RouteEventKind::PausedByOperator,
                &format!("until {} UTC", crate::domain::render::utc_minute(until_ms)),
                now,
            )
        } else {
            self.log_route(provider, RouteEventKind::ResumedByOperator, "", now)
        }
    }

    /// Lifts every credentials or configuration pause whose route's settings changed since it was
    /// recorded; email that waited only for a route goes back in line. Returns what was lifted:
    /// the route and the settings that changed (for the D1 record).
    pub(super) fn lift_pauses_of_changed_settings(
        &self,
        cfg: &Config,
        now: i64,
    ) -> Result<Vec<(Provider, Vec<&'static str>)>> {
        let main = self.availability(cfg)?.main;
        let mut lifted = Vec::new();
        for provider in [main, Provider::Smtp] {
            let keys = pause_keys(provider);
            let (Some(cause_key), Some((whole_key, per_key))) = (keys.cause, keys.settings) else {
                continue;
            };
            if self.get_state(keys.until)?.unwrap_or(0) <= now {
                continue;
            }
            let cause = self.get_state(cause_key)?.and_then(PauseCause::from_stored);
            let recorded = match (self.get_state(whole_key)?, self.get_state(per_key)?) {
                (Some(whole), Some(per_setting)) => {
                    Some(SettingsFingerprint { whole, per_setting })
                }
                _ => None,
            };
            if let PauseCheck::Lift { changed } =
                check_pause(cause, recorded, &cfg.route_settings(provider))
            {
                self.set_state(keys.until, 0)?;
                self.delete_state(cause_key)?;
                self.delete_state(whole_key)?;
                self.delete_state(per_key)?;
                let named = if changed.is_empty() {
                    "its settings".to_string()
                } else {
                    changed.join(", ")
                };
                self.log_route(
                    provider,
                    RouteEventKind::LiftedSettingsChanged,
                    &format!("the pause blamed the route's settings, and {named} changed since"),
                    now,
                )?;
                lifted.push((provider, changed));
            }
        }
        if !lifted.is_empty() {
            self.release_route_waits(now)?;
        }
        Ok(lifted)
    }

    /// [`Outbox::lift_pauses_of_changed_settings`], then each lift recorded in D1 `repairs` (best
    /// effort: the route history already has it).
    pub(super) async fn lift_changed_settings(&self, cfg: &Config, now: i64) -> Result<()> {
        let lifted = self.lift_pauses_of_changed_settings(cfg, now)?;
        if lifted.is_empty() {
            return Ok(());
        }
        let db = self.env.d1(crate::config::DB_BINDING)?;
        for (provider, changed) in lifted {
            let (key, reason) = lift_record(provider, &changed, now);
            if let Err(e) = crate::store::repairs::record(
                &db,
                &key,
                crate::domain::sweeper::RepairKind::RouteLifted,
                provider.as_str(),
                &reason,
                now,
            )
            .await
            {
                worker::console_error!(
                    "outbox: the lifted pause of {provider} was not recorded in D1: {e}"
                );
            }
        }
        Ok(())
    }

    /// Appends a line to the route history (one bounded line of `detail`) and prunes old lines.
    pub(super) fn log_route(
        &self,
        provider: Provider,
        event: RouteEventKind,
        detail: &str,
        at: i64,
    ) -> Result<()> {
        let event: &'static str = event.into();
        let detail = crate::domain::basics::text::header_value(detail, 1_000);
        self.exec(
            "INSERT INTO route_log (at_ms, route, event, detail) VALUES (?, ?, ?, ?)",
            vec![
                at.into(),
                provider.as_str().into(),
                event.into(),
                detail.into(),
            ],
        )?;
        self.exec(
            "DELETE FROM route_log WHERE seq <= (SELECT MAX(seq) FROM route_log) - ?",
            vec![ROUTE_LOG_KEPT.into()],
        )?;
        Ok(())
    }

    /// The route history, newest first, at most `limit` lines.
    pub(super) fn route_history(&self, limit: i64) -> Result<Vec<RouteEvent>> {
        self.rows(
            "SELECT at_ms AS atMs, route, event, detail FROM route_log ORDER BY seq DESC LIMIT ?",
            vec![limit.into()],
        )
    }
}

/// The D1 `repairs` record of a lifted pause: its repair key (one per route and minute) and its
/// reason line.
pub(super) fn lift_record(provider: Provider, changed: &[&str], now: i64) -> (String, String) {
    let named = if changed.is_empty() {
        "its settings".to_string()
    } else {
        changed.join(", ")
    };
    (
        format!("route_lifted:{}:{}", provider.as_str(), now / 60_000),
        format!(
            "the {} route's pause was lifted: {named} changed since it was paused",
            provider.as_str()
        ),
    )
}
