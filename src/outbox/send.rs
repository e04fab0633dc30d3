//! One send of one queue row, staged like svix-server's worker (`IncompleteDispatch` →
//! `CompletedDispatch`): the row is marked `sending` ([`HandOver`]), the email is handed to one
//! provider ([`Completed`]), the result is judged by the policy ([`Outcome`], pure), and the
//! judgement is applied to the queue ([`Next`]). A failure that pauses the provider (a daily
//! limit, our credentials or configuration refused) hands the same email to the other provider
//! (at most three hand-overs per pick) and tells the owner whether another route carries the mail.
//! A hand-over is only started when the alarm has time left for it (`alarm_deadline_ms`).

use super::gate::Gate;
use super::queue::{AttemptOutcome, Row};
use super::{providers, resend, smtp, Outbox};
use crate::config::{Config, MainProvider};
use crate::domain::email::Audience;
use crate::domain::email::EmailStatus;
use crate::domain::marketing::Suppression;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::outbox::smtp::ALARM_BUDGET_MS;
use crate::domain::outbox::{
    after_pause, choose_owner_route, choose_provider, classify_cloudflare_code, judge_probe,
    merge_maybe_handed_over, status_after_success, stop_after_uncertain, AfterFailure, AfterPause,
    Availability, FailurePolicy, PauseCause, ProbeOutcome, ProbeVerdict, Provider, ProviderChoice,
    ProviderErrorClass, ProviderPause, Verdict,
};
use crate::domain::render;
use crate::platform::{now_ms, random_u64};
use worker::Result;

/// One failed hand-over, whichever provider: the class decides what happens next
/// (`crate::domain::outbox::FailurePolicy::after_failure`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendFailure {
    pub class: ProviderErrorClass,
    /// The provider's words (code, reply, error name), kept in `last_error` and owner alerts.
    pub message: String,
    /// The email may have reached the provider (lost answer): the outcome is unknown, never a
    /// refusal.
    pub maybe_handed_over: bool,
    /// The provider's `Retry-After`, ms, if it gave one.
    pub retry_after_ms: Option<i64>,
    /// What this failure teaches about the address (a permanent recipient refusal → hard bounce).
    pub suppress: Option<Suppression>,
    /// A short name for the fault, the same each time it recurs (an SMTP step and its codes, the
    /// provider's error code or name): a route paused for it is told to the owner once per fault
    /// and UTC day.
    pub fault: Option<String>,
}

impl Default for SendFailure {
    fn default() -> Self {
        Self {
            class: ProviderErrorClass::Transient,
            message: String::new(),
            maybe_handed_over: false,
            retry_after_ms: None,
            suppress: None,
            fault: None,
        }
    }
}

impl From<smtp::SmtpFailure> for SendFailure {
    fn from(f: smtp::SmtpFailure) -> Self {
        Self {
            class: f.class,
            message: f.to_string(),
            maybe_handed_over: f.maybe_handed_over,
            retry_after_ms: None,
            // 5.1.1, 5.1.10, 5.2.1 …: the mailbox does not exist or is disabled, for good. A
            // recipient's policy or an address refused without saying it does not exist
            // (`RecipientDeclined`) drops the email but never suppresses the address.
            suppress: (f.class == ProviderErrorClass::RecipientRejected)
                .then_some(Suppression::HardBounce),
            fault: Some(f.fault),
        }
    }
}

/// What one attempt at the head of a lane came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Attempted {
    /// A provider accepted it, or may have twice (the client slot is used).
    Sent,
    /// Not handed over (failed, skipped, blocked, deferred).
    NotSent,
    /// The alarm has no time left for this hand-over: the row stays queued for the next alarm.
    OutOfTime,
}

/// Longest a hand-over to each provider can take, ms: SMTP its whole conversation, Resend its
/// request timeout, the `send_email` binding a generous bound.
fn worst_case_ms(provider: Provider, cfg: &Config) -> i64 {
    match provider {
        Provider::Smtp => cfg
            .smtp
            .as_ref()
            .map_or(0, |s| s.timeouts.conversation_ms as i64),
        Provider::Resend => resend::TIMEOUT_MS as i64,
        Provider::Cloudflare | Provider::OwnerRoute => 60_000,
    }
}

/// The route an email of `audience` takes now: an owner alert may take the owner route while every
/// route that carries guest mail is paused ([`choose_owner_route`]).
pub(super) fn route_for(audience: Audience, now: i64, a: Availability) -> ProviderChoice {
    match audience {
        Audience::Owner => choose_owner_route(now, a),
        Audience::Client => choose_provider(now, a),
    }
}

/// The end of an alarm's time for hand-overs, ms UTC, when it started at `started_ms`.
pub(super) fn alarm_deadline(started_ms: i64) -> i64 {
    started_ms + ALARM_BUDGET_MS as i64
}

/// The row's counts and uncertainty as they evolve across the hand-overs of one pick.
struct Progress {
    attempts: i64,
    budget_from: i64,
    maybe: Option<(Provider, i64)>,
    /// The providers (`Provider::bit`) that refused it for a reason of ours.
    refused_ours: i64,
}

/// Stage 1: the row is marked `sending` with `provider`; the hand-over has not happened yet.
struct HandOver {
    provider: Provider,
    /// This attempt's number (attempts so far, including this one).
    attempt: i64,
    started_ms: i64,
}

/// Stage 2: the provider answered (or did not).
struct Completed {
    handover: HandOver,
    /// The provider's message id (or final reply), or why it failed.
    result: std::result::Result<String, SendFailure>,
    at_ms: i64,
}

/// Stage 3: the policy's judgement of a completed hand-over.
enum Outcome {
    /// Accepted: the row's final status (`sent` or `sent_possibly_twice`).
    Accepted {
        status: EmailStatus,
        provider_message_id: String,
    },
    /// Refused or unanswered: what to do about it, and whether the attempt counts.
    Failed {
        failure: SendFailure,
        verdict: Verdict,
    },
    /// Unanswered a second time after an uncertain hand-over to a provider that cannot
    /// deduplicate (`stop_after_uncertain`): not sent again, recorded `sent_possibly_twice`
    /// (unconfirmed) and the owner told.
    Unconfirmed { failure: SendFailure },
}

/// Stage 4: after the outcome was applied.
enum Next {
    Done(Attempted),
    /// The provider was paused: hand the same email to this one now.
    FailOver(Provider),
}

impl Outbox {
    /// Tries to send one row: gate, then hand-overs until one is accepted or the row is parked.
    /// No hand-over starts that could outlast `alarm_deadline_ms` (ms UTC): the row then stays
    /// queued and the answer is [`Attempted::OutOfTime`].
    pub(super) async fn attempt(
        &self,
        row: Row,
        cfg: &Config,
        alarm_deadline_ms: i64,
    ) -> Result<Attempted> {
        let mut email: OutgoingEmail = serde_json::from_str(&row.email_json)?;
        match self.gate(&row, &email, cfg).await? {
            Gate::Held => return Ok(Attempted::NotSent),
            Gate::Defanged(defanged) => email = *defanged,
            Gate::Open => {}
        }
        let mut progress = Progress {
            attempts: row.attempts,
            budget_from: row.budget_from,
            maybe: row.maybe_handed_over(),
            refused_ours: row.refused_ours,
        };
        let ProviderChoice::Send(mut provider) =
            route_for(email.audience, now_ms(), self.availability(cfg)?)
        else {
            return Ok(Attempted::NotSent);
        };
        let policy = FailurePolicy {
            backoff: cfg.backoff,
            credentials_pause_ms: cfg.provider_auth_pause_ms,
        };
        // At most three hand-overs per pick: the main provider, then SMTP on a failover, and the
        // main provider again if SMTP itself is paused on the way.
        for _ in 0..3 {
            let left_ms = alarm_deadline_ms - now_ms();
            if left_ms < worst_case_ms(provider, cfg) {
                return Ok(Attempted::OutOfTime);
            }
            let handover = self.begin(&row, provider, &mut progress)?;
            let completed = self.hand_over(handover, &email, cfg, left_ms).await;
            let outcome = judge(&completed, &progress, policy, random_u64());
            match self
                .apply(&row, &email, completed, outcome, &mut progress, cfg)
                .await?
            {
                Next::Done(attempted) => return Ok(attempted),
                Next::FailOver(next) => provider = next,
            }
        }
        Ok(Attempted::NotSent)
    }

    /// Stage 1: counts the attempt and marks the row `sending`.
    fn begin(&self, row: &Row, provider: Provider, progress: &mut Progress) -> Result<HandOver> {
        progress.attempts += 1;
        let started_ms = now_ms();
        self.mark_sending(row.seq, progress.attempts, provider, started_ms)?;
        Ok(HandOver {
            provider,
            attempt: progress.attempts,
            started_ms,
        })
    }

    /// Stage 2: hands the email to the provider of `handover`, within `left_ms`.
    async fn hand_over(
        &self,
        handover: HandOver,
        email: &OutgoingEmail,
        cfg: &Config,
        left_ms: i64,
    ) -> Completed {
        let result = self
            .call_provider(handover.provider, email, cfg, left_ms.max(0) as u64)
            .await;
        Completed {
            handover,
            result,
            at_ms: now_ms(),
        }
    }

    /// Stage 4: writes the outcome (attempt log, row status, pauses, alerts, learned suppression),
    /// and — when an email waits set aside on this route — what this hand-over says about it
    /// (`crate::domain::outbox::judge_probe`).
    async fn apply(
        &self,
        row: &Row,
        email: &OutgoingEmail,
        completed: Completed,
        outcome: Outcome,
        progress: &mut Progress,
        cfg: &Config,
    ) -> Result<Next> {
        let Completed {
            handover,
            at_ms: at,
            ..
        } = completed;
        let provider = handover.provider;
        let probed = match &outcome {
            Outcome::Accepted { .. } => ProbeOutcome::Accepted,
            Outcome::Unconfirmed { .. } => ProbeOutcome::Unknown,
            Outcome::Failed { failure, .. } if failure.maybe_handed_over => ProbeOutcome::Unknown,
            Outcome::Failed { failure, .. } => ProbeOutcome::Refused(failure.class),
        };
        let suspect = self.set_aside_on(provider, row.seq)?;
        let verdict = suspect.as_ref().map(|_| judge_probe(probed));
        let (failure, Verdict { decision, counts }) = match outcome {
            Outcome::Accepted {
                status,
                provider_message_id,
            } => {
                let logged = AttemptOutcome::accepted(status);
                self.log_attempt(row.seq, handover.attempt, provider, at, logged, None)?;
                self.mark_sent(row.seq, status, &provider_message_id, at)?;
                if status == EmailStatus::SentPossiblyTwice {
                    let counted = row.with_counts(progress.attempts, progress.budget_from);
                    let why = match progress.maybe {
                        Some((earlier, _)) => format!(
                            "an earlier hand-over to {earlier} was never confirmed (its answer was lost), so the email was sent again"
                        ),
                        None => "an earlier hand-over was never confirmed".into(),
                    };
                    self.alert_owner(email, &counted, status, &why, cfg, at)?;
                }
                if let (Some(suspect), Some(verdict)) = (&suspect, verdict) {
                    self.carry_out_verdict(suspect, verdict, provider, at, cfg, at)?;
                }
                return Ok(Next::Done(Attempted::Sent));
            }
            Outcome::Unconfirmed { failure } => {
                let why = format!(
                    "handed over twice without a confirmation; not sent again: {}",
                    failure.message
                );
                self.log_attempt(
                    row.seq,
                    handover.attempt,
                    provider,
                    at,
                    AttemptOutcome::SentPossiblyTwice,
                    Some(&failure.message),
                )?;
                self.mark_unconfirmed(row.seq, &why, at)?;
                let counted = row.with_counts(progress.attempts, progress.budget_from);
                self.alert_owner(
                    email,
                    &counted,
                    EmailStatus::SentPossiblyTwice,
                    &why,
                    cfg,
                    at,
                )?;
                return Ok(Next::Done(Attempted::Sent));
            }
            Outcome::Failed {
                mut failure,
                verdict: mut judged,
            } => {
                if verdict == Some(ProbeVerdict::RouteAtFault) {
                    // Two different emails refused the same way in a row: the route, not one
                    // message. Paused like a refusal of ours; neither email's attempt counts.
                    judged = Verdict {
                        decision: AfterFailure::PauseProvider {
                            until_ms: at.saturating_add(cfg.provider_auth_pause_ms),
                            cause: PauseCause::Configuration,
                        },
                        counts: false,
                    };
                    let earlier = suspect
                        .as_ref()
                        .and_then(|s| s.last_error.as_deref())
                        .unwrap_or("");
                    failure.message = format!(
                        "{}; the email before it on this route was refused the same way ({earlier}), so the route refuses every message, not one",
                        failure.message
                    );
                }
                (failure, judged)
            }
        };
        self.log_attempt(
            row.seq,
            handover.attempt,
            provider,
            at,
            AttemptOutcome::Failed,
            Some(&failure.message),
        )?;
        if failure.maybe_handed_over {
            // Unknown outcome: kept, so the eventual success is judged by the restart rule.
            let merged = merge_maybe_handed_over(progress.maybe, (provider, handover.started_ms));
            progress.maybe = Some(merged);
            self.note_maybe_handed(row.seq, merged)?;
        }
        if let Some(s) = failure.suppress {
            self.learn_suppression(email, s, provider, &failure.message)
                .await;
        }
        if failure.class == ProviderErrorClass::Configuration
            && progress.refused_ours & provider.bit() == 0
        {
            // Remembered, so the same refusal from this provider counts next time
            // (`FailurePolicy::verdict`).
            progress.refused_ours |= provider.bit();
            self.set_refused_ours(row.seq, progress.refused_ours)?;
        }
        if !counts {
            // The provider is the problem, not the email: this attempt does not count.
            progress.budget_from += 1;
            self.set_budget_from(row.seq, progress.budget_from)?;
        }
        if let Some(pause) = decision.provider_pause() {
            let next = self.pause_route(provider, pause, email, &failure, cfg, at)?;
            if let (Some(suspect), Some(verdict)) = (&suspect, verdict) {
                let until = match next {
                    AfterPause::FailOverTo(_) => at,
                    AfterPause::WaitUntil(t) => t,
                };
                self.carry_out_verdict(suspect, verdict, provider, until, cfg, at)?;
            }
            return match next {
                AfterPause::FailOverTo(p) => Ok(Next::FailOver(p)),
                AfterPause::WaitUntil(t) => {
                    self.park_for_route(row.seq, t, &failure.message, at)?;
                    Ok(Next::Done(Attempted::NotSent))
                }
            };
        }
        if let (Some(suspect), Some(verdict)) = (&suspect, verdict) {
            self.carry_out_verdict(suspect, verdict, provider, at, cfg, at)?;
        }
        let counted = row.with_counts(progress.attempts, progress.budget_from);
        match decision {
            AfterFailure::RetryAt { at_ms } => {
                self.park(row.seq, EmailStatus::Waiting, at_ms, &failure.message, at)?;
            }
            AfterFailure::SetAside { retry_at_ms } => {
                // Maybe this message alone: the next different email on this route decides.
                self.set_aside(row.seq, provider, retry_at_ms, &failure.message, at)?;
            }
            AfterFailure::DeadLetter => {
                let reason = if failure.class == ProviderErrorClass::Configuration {
                    format!(
                        "{}; {provider} refused this email again and again for a reason of ours, with its route resumed in between: it is a dead letter so it no longer holds up the route (fix the cause, then redrive it)",
                        failure.message
                    )
                } else {
                    failure.message.clone()
                };
                self.park(row.seq, EmailStatus::Dead, 0, &reason, at)?;
                self.alert_owner(email, &counted, EmailStatus::Dead, &reason, cfg, at)?;
            }
            AfterFailure::Drop => {
                self.park(row.seq, EmailStatus::Dropped, 0, &failure.message, at)?;
                self.alert_owner(
                    email,
                    &counted,
                    EmailStatus::Dropped,
                    &failure.message,
                    cfg,
                    at,
                )?;
            }
            AfterFailure::FailOver { .. } | AfterFailure::PauseProvider { .. } => {}
        }
        Ok(Next::Done(Attempted::NotSent))
    }

    /// Pauses `provider`'s route after `failure` (recorded with its cause and settings), tells the
    /// owner (one alert per route, fault and UTC day) and says where `email` goes meanwhile.
    fn pause_route(
        &self,
        provider: Provider,
        pause: ProviderPause,
        email: &OutgoingEmail,
        failure: &SendFailure,
        cfg: &Config,
        at: i64,
    ) -> Result<AfterPause> {
        let fault = failure.fault.as_deref().unwrap_or("");
        self.record_pause(provider, pause, fault, &failure.message, cfg, at)?;
        let next = after_pause(
            provider,
            pause.until_ms,
            route_for(email.audience, at, self.availability(cfg)?),
        );
        // Every pause is the owner's to know about: a daily limit says whether another route
        // carries the mail, a refusal of ours quotes the provider's exact words.
        self.alert_provider(provider, pause, &failure.message, fault, next, cfg, at)?;
        Ok(next)
    }

    /// Hands the email to one provider within `left_ms`. `Ok` carries the provider's message id
    /// (or final reply).
    async fn call_provider(
        &self,
        provider: Provider,
        email: &OutgoingEmail,
        cfg: &Config,
        left_ms: u64,
    ) -> std::result::Result<String, SendFailure> {
        match provider {
            Provider::Cloudflare | Provider::OwnerRoute => providers::send_cloudflare(
                &self.env,
                if provider == Provider::OwnerRoute {
                    crate::config::OWNER_ROUTE_BINDING
                } else {
                    crate::config::EMAIL_BINDING
                },
                email,
                &cfg.branding,
            )
            .await
            .map_err(|f| {
                let class = classify_cloudflare_code(f.code.as_deref());
                SendFailure {
                    class,
                    message: match &f.code {
                        Some(code) => format!("{code}: {}", f.message),
                        None => f.message,
                    },
                    // An error without a code after the call went out: unknown outcome.
                    maybe_handed_over: f.code.is_none() && f.handed_over,
                    suppress: (f.code.as_deref() == Some("E_RECIPIENT_SUPPRESSED"))
                        .then_some(Suppression::HardBounce),
                    fault: f.code.clone(),
                    ..SendFailure::default()
                }
            }),
            Provider::Resend => match &cfg.main_provider {
                MainProvider::Resend { api_key, base_url } => {
                    resend::send(api_key, base_url, email, &cfg.branding).await
                }
                MainProvider::Cloudflare => Err(SendFailure {
                    class: ProviderErrorClass::Transient,
                    message: "Resend is not the configured main provider (MAIN_PROVIDER)".into(),
                    ..SendFailure::default()
                }),
            },
            Provider::Smtp => {
                let Some(smtp_cfg) = cfg.smtp.as_ref() else {
                    return Err(SendFailure {
                        class: ProviderErrorClass::Transient,
                        message: "SMTP failover is not configured (SMTP_HOST is empty)".into(),
                        ..SendFailure::default()
                    });
                };
                let message =
                    render::to_mime(email, &cfg.branding, now_ms() / 1000).map_err(|e| {
                        SendFailure {
                            class: ProviderErrorClass::Permanent,
                            message: e.to_string(),
                            ..SendFailure::default()
                        }
                    })?;
                smtp::send(
                    smtp_cfg,
                    smtp::Outgoing {
                        from: cfg.branding.from.as_str(),
                        to: email.to.as_str(),
                        message,
                    },
                    left_ms,
                )
                .await
                .map_err(SendFailure::from)
            }
        }
    }
}

/// Stage 3 (pure): judges a completed hand-over with the policy. Success: the restart rule
/// (`status_after_success`); failure: the failure policy's verdict, counting only the attempts
/// since the budget was last renewed, and knowing whether this provider already refused the email
/// for a reason of ours. `random` feeds the backoff jitter.
fn judge(
    completed: &Completed,
    progress: &Progress,
    policy: FailurePolicy,
    random: u64,
) -> Outcome {
    let provider = completed.handover.provider;
    match &completed.result {
        Ok(provider_message_id) => Outcome::Accepted {
            status: status_after_success(progress.maybe, provider, completed.at_ms),
            provider_message_id: provider_message_id.clone(),
        },
        Err(failure)
            if stop_after_uncertain(progress.maybe, provider, failure.maybe_handed_over) =>
        {
            Outcome::Unconfirmed {
                failure: failure.clone(),
            }
        }
        Err(failure) => Outcome::Failed {
            verdict: policy.verdict(
                failure.class,
                provider,
                u32::try_from(progress.attempts - progress.budget_from).unwrap_or(u32::MAX),
                progress.refused_ours & provider.bit() != 0,
                completed.at_ms,
                random,
                failure.retry_after_ms,
            ),
            failure: failure.clone(),
        },
    }
}
