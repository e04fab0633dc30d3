//! What a provider's refusal means: whose fault it is, the retry, pause or drop it leads to, and
//! how long to wait.

use super::*;
use serde::{Deserialize, Serialize};

/// Classification of one provider failure; decides failover, retry, drop or dead letter. Three
/// questions, in the words of the classification table in docs/internals.md: is it the recipient's fault
/// (`RecipientRejected`), ours — our account, sender, message or configuration
/// (`CredentialsRejected`, `Configuration`, and the quota classes) — or nobody's yet
/// (`Transient`, `RateLimited`)? Anything a provider says that this build does not know is
/// `Transient`: retried with backoff, and only after the attempt ceiling a dead letter the owner is
/// told about; never dropped or suppressed on first sight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum ProviderErrorClass {
    /// The provider's daily quota is used up, or our account may not send for now (for SMTP: a
    /// daily or submission quota, an outbound-spam suspension): pause that route until the next
    /// UTC midnight and tell the owner; a main provider fails over now. Never the email's fault:
    /// its attempt budget is untouched.
    DailyLimit,
    /// Too many requests right now: retry later (with a floor). From the SMTP route, a
    /// temporary (4xx) refusal about our sender, client or IP, or of our sending rate: the route
    /// pauses for [`SMTP_DEFERRAL_PAUSE_MS`] (the attempt not counted) instead of every email
    /// meeting it in turn.
    RateLimited,
    /// The recipient's address is invalid, unknown, disabled or suppressed: drop the email, alert
    /// the owner (and learn a hard bounce where the provider says so).
    RecipientRejected,
    /// The recipient's side will not take this email, without saying the address is bad: its
    /// policy refused us (access denied, a group that only takes its members' mail), or it refused
    /// an address without saying the address does not exist. Drop the email and alert the owner;
    /// the address is **not** suppressed (a later email may well be taken) and the route is not
    /// paused (one recipient's rule says nothing about the route).
    RecipientDeclined,
    /// 4xx, 5xx server errors, timeouts, connection errors, codes this build does not know: retry
    /// with backoff.
    Transient,
    /// Refused for good for a reason no retry and no configuration change can fix (our own
    /// rendering failed, Resend's idempotency conflict): dead letter + owner alert.
    Permanent,
    /// The provider refused our credentials (SMTP AUTH failure, authentication required, a
    /// revoked or restricted API key): nothing is wrong with the email. Pause that provider, alert
    /// the owner, fail over if another provider is available, else wait; the email keeps its
    /// place and its attempt budget.
    CredentialsRejected,
    /// The provider refused something that is ours to fix, not the guest's: our sender address or
    /// domain, relaying, a policy (DMARC, SPF), the message's size or format, the account's
    /// sending rights. Handled like [`ProviderErrorClass::CredentialsRejected`]: that route is
    /// paused, the owner told once with the provider's exact words, the email stays queued with
    /// its attempt budget untouched — the first time: the same email refused so again by the same
    /// provider after the pause counts the attempt ([`FailurePolicy::verdict`]), so an email only
    /// it carries the fault of ends as a dead letter instead of stalling the route.
    Configuration,
    /// The route refused this email in a way that may concern this message alone: a content or
    /// spam verdict, its size, a refusal after the data without words about our sender or
    /// account, a provider's validation error about this message's fields or headers. Nobody can
    /// tell from one refusal whether the message or the route is at fault, so the email is set
    /// aside ([`AfterFailure::SetAside`]) and the next different email on the same route decides
    /// ([`judge_probe`]): accepted → this email alone is refused (a dead letter, the owner told,
    /// the guest not suppressed, the route never paused); refused the same way → the route is
    /// ours to fix (paused like [`ProviderErrorClass::Configuration`], both emails keep their
    /// places).
    MessageRefused,
}

impl ProviderErrorClass {
    /// Only the owner can fix it (credentials, configuration): the route is paused and they are
    /// told, even when another route carries the email.
    pub fn owner_must_fix(self) -> bool {
        matches!(
            self,
            ProviderErrorClass::CredentialsRejected | ProviderErrorClass::Configuration
        )
    }
}

/// Classifies a Cloudflare Email Service error code (`E_…`) thrown by the `send_email` binding
/// (<https://developers.cloudflare.com/email-service/api/send-emails/workers-api/>):
///
/// | code | class |
/// |---|---|
/// | `E_DAILY_LIMIT_EXCEEDED` | `DailyLimit` |
/// | `E_RATE_LIMIT_EXCEEDED` | `RateLimited` |
/// | `E_RECIPIENT_SUPPRESSED` | `RecipientRejected` (the service's own suppression list) |
/// | `E_RECIPIENT_NOT_ALLOWED` (the binding's `allowed_destination_addresses`, or an account not yet onboarded that may only write to verified addresses), `E_SENDER_NOT_VERIFIED`, `E_SENDER_DOMAIN_NOT_AVAILABLE` | `Configuration` (our account or sender: the route is paused, the owner told) |
/// | `E_CONTENT_TOO_LARGE`, `E_VALIDATION_ERROR`, `E_FIELD_MISSING`, `E_TOO_MANY_RECIPIENTS`, `E_HEADER_…`, `E_HEADERS_…` (the service's words are about this message's size, fields or headers) | `MessageRefused` (set aside; the next email on the route decides) |
/// | `E_INTERNAL_SERVER_ERROR`, `E_DELIVERY_FAILED`, no code, any other code | `Transient` |
pub fn classify_cloudflare_code(code: Option<&str>) -> ProviderErrorClass {
    let code = code.unwrap_or("");
    match code {
        "E_DAILY_LIMIT_EXCEEDED" => ProviderErrorClass::DailyLimit,
        "E_RATE_LIMIT_EXCEEDED" => ProviderErrorClass::RateLimited,
        "E_RECIPIENT_SUPPRESSED" => ProviderErrorClass::RecipientRejected,
        "E_RECIPIENT_NOT_ALLOWED"
        | "RCPT_NOT_ALLOWED"
        | "E_SENDER_NOT_VERIFIED"
        | "E_SENDER_DOMAIN_NOT_AVAILABLE" => ProviderErrorClass::Configuration,
        "E_CONTENT_TOO_LARGE"
        | "E_VALIDATION_ERROR"
        | "E_FIELD_MISSING"
        | "E_TOO_MANY_RECIPIENTS" => ProviderErrorClass::MessageRefused,
        _ if code.starts_with("E_HEADER_") || code.starts_with("E_HEADERS_") => {
            ProviderErrorClass::MessageRefused
        }
        _ => ProviderErrorClass::Transient,
    }
}

/// Retry policy after a transient failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// First retry delay, ms.
    pub base_ms: i64,
    /// Longest delay, ms.
    pub cap_ms: i64,
    /// Attempts (including the first) before an email becomes a dead letter.
    pub max_attempts: u32,
}

impl Backoff {
    pub const DEFAULT: Backoff = Backoff {
        base_ms: 30_000,
        cap_ms: 3_600_000,
        max_attempts: 6,
    };

    /// Delay before attempt `attempts + 1`, with "equal jitter": half the exponential delay fixed,
    /// half random. Always within `[d/2, d]` where `d = min(cap, base · 2^(attempts-1))`.
    pub fn delay_ms(&self, attempts: u32, random: u64) -> i64 {
        let exp = attempts.saturating_sub(1).min(30);
        let d = self.base_ms.saturating_mul(1i64 << exp).min(self.cap_ms);
        let half = d / 2;
        half + (random % (d - half + 1) as u64) as i64
    }
}

/// What to do with an email whose send just failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Pause the main provider until `pause_main_until_ms` and send this same email by SMTP now.
    FailOver { pause_main_until_ms: i64 },
    /// Try again at `at_ms` (status `waiting`; keeps its rank and age).
    RetryAt { at_ms: i64 },
    /// Give up: dead letter, alert the owner.
    DeadLetter,
    /// The provider that failed is unusable until `until_ms` (credentials or configuration
    /// refused): pause it, alert the owner, and send this same email by the other provider if it
    /// is available.
    PauseProvider { until_ms: i64, cause: PauseCause },
    /// Refused for good for this recipient: drop, alert the owner.
    Drop,
    /// The route refused this email in a way that may concern it alone
    /// ([`ProviderErrorClass::MessageRefused`]): set it aside (status `waiting` until `retry_at_ms`,
    /// ms UTC, marked as set aside on this route) and try the next different email on the same
    /// route at once, ahead of pacing. That probe's outcome decides ([`judge_probe`]); with no other
    /// email to try, this one is tried again at `retry_at_ms` like a transient failure.
    SetAside { retry_at_ms: i64 },
}

impl AfterFailure {
    /// The pause of the provider that failed which this decision calls for, if any: after a main
    /// provider's daily limit (fail-over), refused credentials or a configuration fault. Such a
    /// failure is the provider's (or ours), not the email's, so the outbox does not count that
    /// attempt against the email.
    pub fn provider_pause(self) -> Option<ProviderPause> {
        match self {
            AfterFailure::FailOver {
                pause_main_until_ms,
            } => Some(ProviderPause {
                until_ms: pause_main_until_ms,
                cause: PauseCause::DailyLimit,
            }),
            AfterFailure::PauseProvider { until_ms, cause } => {
                Some(ProviderPause { until_ms, cause })
            }
            AfterFailure::RetryAt { .. }
            | AfterFailure::DeadLetter
            | AfterFailure::Drop
            | AfterFailure::SetAside { .. } => None,
        }
    }
}

/// Why a provider (a route) was taken out of use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseCause {
    /// A daily quota, or our account may not send for now (until the next UTC midnight).
    DailyLimit,
    /// Our credentials were refused.
    Credentials,
    /// Our sender, relay, policy, message size or request was refused.
    Configuration,
}

/// A provider taken out of use after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderPause {
    /// Paused until then, ms UTC.
    pub until_ms: i64,
    pub cause: PauseCause,
}

/// Where an email goes once the provider that failed it is paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterPause {
    /// Hand the same email to this other provider now (its attempt budget untouched).
    FailOverTo(Provider),
    /// No other provider: the email waits (status `waiting`, same rank and age) until then, ms UTC.
    WaitUntil(i64),
}

/// The next step for an email whose provider `failed` was just paused until `pause_until_ms`,
/// given the provider choice made after the pause ([`choose_provider`]).
pub fn after_pause(failed: Provider, pause_until_ms: i64, next: ProviderChoice) -> AfterPause {
    match next {
        ProviderChoice::Send(p) if p != failed => AfterPause::FailOverTo(p),
        ProviderChoice::Send(_) => AfterPause::WaitUntil(pause_until_ms),
        ProviderChoice::WaitUntil(t) => AfterPause::WaitUntil(t),
    }
}

/// Decides the fate of a failed attempt. `attempts` counts attempts made so far, including this one.
///
/// Same as [`after_failure_with_hint`] without a `Retry-After` hint.
pub fn after_failure(
    class: ProviderErrorClass,
    provider: Provider,
    attempts: u32,
    now_ms: i64,
    backoff: Backoff,
    random: u64,
) -> AfterFailure {
    after_failure_with_hint(class, provider, attempts, now_ms, backoff, random, None)
}

/// How long a provider whose credentials or configuration were refused stays paused by default,
/// ms (1 hour; the configuration `PROVIDER_AUTH_PAUSE_MS` sets
/// [`FailurePolicy::credentials_pause_ms`]). The operator can resume it sooner once fixed.
pub const CREDENTIALS_PAUSE_MS: i64 = 3_600_000;

/// Everything configurable that decides the fate of a failed attempt: the retry schedule and how
/// long a provider whose credentials were refused stays paused. One value, so the outbox and the
/// policy cannot disagree on a pause length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailurePolicy {
    pub backoff: Backoff,
    /// `PROVIDER_AUTH_PAUSE_MS`: pause of a provider whose credentials or configuration were
    /// refused, ms.
    pub credentials_pause_ms: i64,
}

impl FailurePolicy {
    /// [`Backoff::DEFAULT`] and a 1 hour credentials pause ([`CREDENTIALS_PAUSE_MS`]).
    pub const DEFAULT: FailurePolicy = FailurePolicy {
        backoff: Backoff::DEFAULT,
        credentials_pause_ms: CREDENTIALS_PAUSE_MS,
    };

    /// Decides the fate of a failed attempt; `attempts` counts attempts made so far, including
    /// this one. The rules are those of [`after_failure_with_hint`] (which is this with the default
    /// credentials pause); refused credentials or configuration pause the provider for
    /// `credentials_pause_ms`.
    pub fn after_failure(
        &self,
        class: ProviderErrorClass,
        provider: Provider,
        attempts: u32,
        now_ms: i64,
        random: u64,
        retry_after_ms: Option<i64>,
    ) -> AfterFailure {
        let backoff = self.backoff;
        let retry_in = || {
            let jittered = backoff.delay_ms(attempts, random);
            let hinted =
                retry_after_ms.map_or(jittered, |h| jittered.max(clamp_retry_after_ms(h, backoff)));
            if class == ProviderErrorClass::RateLimited {
                hinted.max(RATE_LIMIT_FLOOR_MS)
            } else {
                hinted
            }
        };
        match class {
            ProviderErrorClass::DailyLimit if provider.is_main() => AfterFailure::FailOver {
                pause_main_until_ms: next_utc_midnight(now_ms),
            },
            // The SMTP account's own quota or suspension: the route waits for the day to turn
            // (and the owner is told), instead of every email failing on it one by one.
            ProviderErrorClass::DailyLimit => AfterFailure::PauseProvider {
                until_ms: next_utc_midnight(now_ms),
                cause: PauseCause::DailyLimit,
            },
            ProviderErrorClass::CredentialsRejected => AfterFailure::PauseProvider {
                until_ms: now_ms.saturating_add(self.credentials_pause_ms),
                cause: PauseCause::Credentials,
            },
            ProviderErrorClass::Configuration => AfterFailure::PauseProvider {
                until_ms: now_ms.saturating_add(self.credentials_pause_ms),
                cause: PauseCause::Configuration,
            },
            // The relay defers our sender, client or rate for now: every email would meet it.
            ProviderErrorClass::RateLimited if provider == Provider::Smtp => {
                AfterFailure::PauseProvider {
                    until_ms: now_ms.saturating_add(SMTP_DEFERRAL_PAUSE_MS),
                    cause: PauseCause::Configuration,
                }
            }
            ProviderErrorClass::RecipientRejected | ProviderErrorClass::RecipientDeclined => {
                AfterFailure::Drop
            }
            ProviderErrorClass::Permanent => AfterFailure::DeadLetter,
            _ if attempts >= backoff.max_attempts => AfterFailure::DeadLetter,
            ProviderErrorClass::MessageRefused => AfterFailure::SetAside {
                retry_at_ms: now_ms.saturating_add(retry_in()),
            },
            _ => AfterFailure::RetryAt {
                at_ms: now_ms.saturating_add(retry_in()),
            },
        }
    }
}

/// What a failed attempt comes to for its email: the decision, and whether the attempt counts
/// against the email's attempt budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub decision: AfterFailure,
    /// `false` for a failure that is the route's (or ours), not the email's: the shell moves the
    /// email's budget start past this attempt.
    pub counts: bool,
}

impl FailurePolicy {
    /// [`FailurePolicy::after_failure`] for one email, and whether the attempt counts.
    /// `refused_ours_here_before` is true when this email already met a refusal of ours
    /// (`Configuration`) from this same provider since its attempt budget was last renewed.
    ///
    /// A pause of the route (a daily limit, refused credentials, our configuration refused) does
    /// not count: the email is not at fault. Except a refusal of ours met *again* by the same
    /// email on the same route — the route was paused for it, then resumed (by the owner or by the
    /// pause running out) and the same email refused once more. If only that email trips the
    /// refusal (its size, its content, a rule nothing else meets) and goes first after every
    /// pause, the route would stall for good behind it. So that attempt counts (the route still
    /// pauses: it may refuse every email), and at the attempt ceiling the email becomes a dead
    /// letter with an owner alert instead of pausing the route again. A route that refuses every
    /// email still costs each email one uncounted refusal, and the owner is told of every pause.
    #[allow(clippy::too_many_arguments)]
    pub fn verdict(
        &self,
        class: ProviderErrorClass,
        provider: Provider,
        attempts: u32,
        refused_ours_here_before: bool,
        now_ms: i64,
        random: u64,
        retry_after_ms: Option<i64>,
    ) -> Verdict {
        let decision =
            self.after_failure(class, provider, attempts, now_ms, random, retry_after_ms);
        match decision.provider_pause() {
            None => Verdict {
                decision,
                counts: true,
            },
            Some(_) if class == ProviderErrorClass::Configuration && refused_ours_here_before => {
                Verdict {
                    decision: if attempts >= self.backoff.max_attempts {
                        AfterFailure::DeadLetter
                    } else {
                        decision
                    },
                    counts: true,
                }
            }
            Some(_) => Verdict {
                decision,
                counts: false,
            },
        }
    }
}

/// How long the SMTP route pauses after a temporary refusal about our sender, client or IP, or
/// of our sending rate (`451 4.7.1 … Sender address rejected`, Gmail's `421 4.7.0 … temporarily
/// rate limited`), ms (5 minutes): long enough that the emails behind it do not each meet the
/// same refusal at the outbox's pace, short enough for a deferral the server lifts by itself.
pub const SMTP_DEFERRAL_PAUSE_MS: i64 = 300_000;

/// Shortest wait after a `RateLimited` failure, whatever the backoff or the provider's hint says.
pub const RATE_LIMIT_FLOOR_MS: i64 = 60_000;

/// Shortest wait a provider's `Retry-After` hint can ask for (a `0` or negative hint means 1 s).
pub const RETRY_AFTER_MIN_MS: i64 = 1_000;

/// The wait a provider's `Retry-After` hint asks for, clamped to
/// `[RETRY_AFTER_MIN_MS, backoff.cap_ms]` (when the cap is below 1 s, the cap wins): a buggy or
/// hostile header can neither park an email for days nor make the outbox spin.
pub fn clamp_retry_after_ms(retry_after_ms: i64, backoff: Backoff) -> i64 {
    retry_after_ms
        .max(RETRY_AFTER_MIN_MS)
        .min(backoff.cap_ms.max(0))
}

/// [`after_failure`] that also honours the provider's `Retry-After` (already converted to ms, e.g.
/// by `crate::domain::outbox::resend::parse_retry_after_ms`).
///
/// - Drop / dead letter / fail-over decisions are exactly those of [`after_failure`]: a hint never
///   rescues a permanent failure, never adds attempts beyond `backoff.max_attempts`, and a main
///   provider's daily limit still pauses it until the next UTC midnight (the hint is ignored there:
///   a quota resets with the day, not after a few seconds).
/// - For a retry, the hint (clamped by [`clamp_retry_after_ms`]) is a *floor*: the email waits
///   `max(jittered backoff, hint)`. We never retry sooner than the provider asked, and a provider
///   that always answers "retry after 1 s" cannot burn the whole attempt budget in seconds.
/// - `RateLimited` then waits at least [`RATE_LIMIT_FLOOR_MS`] (60 s).
///
/// With `retry_after_ms = None` this is exactly [`after_failure`].
pub fn after_failure_with_hint(
    class: ProviderErrorClass,
    provider: Provider,
    attempts: u32,
    now_ms: i64,
    backoff: Backoff,
    random: u64,
    retry_after_ms: Option<i64>,
) -> AfterFailure {
    FailurePolicy {
        backoff,
        ..FailurePolicy::DEFAULT
    }
    .after_failure(class, provider, attempts, now_ms, random, retry_after_ms)
}
