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
    /// lane opens (ms UTC; `crate::domain::backlog`).
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

/// Which provider sends. The main provider is [`Provider::Cloudflare`] or [`Provider::Resend`]
/// (configuration `MAIN_PROVIDER`); [`Provider::Smtp`] is the failover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Provider {
    /// Cloudflare Email Service through the `send_email` binding (main). Stored as
    /// `cloudflare_email` (queue `provider`, D1 `emails.provider`, attempts log).
    #[strum(serialize = "cloudflare_email")]
    Cloudflare,
    /// Resend's HTTP API (main, when configured); idempotent per `Idempotency-Key` for 24 h.
    Resend,
    /// SMTP over `cloudflare:sockets` (failover).
    Smtp,
}

crate::domain::stored_names!(Provider);

impl Provider {
    /// `true` for a main provider (everything but SMTP).
    pub fn is_main(self) -> bool {
        self != Provider::Smtp
    }

    /// `true` when re-sending the same email is deduplicated by the provider itself (Resend's
    /// `Idempotency-Key`, within [`RESEND_IDEMPOTENCY_WINDOW_MS`]).
    pub fn is_idempotent(self) -> bool {
        self == Provider::Resend
    }
}

/// What the outbox knows about each provider's availability at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Availability {
    /// The configured main provider.
    pub main: Provider,
    /// The main provider is paused until then (daily limit, refused credentials), ms UTC.
    pub main_paused_until_ms: Option<i64>,
    /// SMTP failover is configured (`SMTP_HOST` set).
    pub smtp_configured: bool,
    /// SMTP is paused until then (refused credentials), ms UTC.
    pub smtp_paused_until_ms: Option<i64>,
}

/// Which provider sends now, or when to ask again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderChoice {
    Send(Provider),
    /// No provider is available before this time (ms UTC); the email keeps its place.
    WaitUntil(i64),
}

fn paused(now_ms: i64, until: Option<i64>) -> bool {
    matches!(until, Some(t) if now_ms < t)
}

/// The main provider unless it is paused; then SMTP if configured and not paused itself; else wait
/// for the earliest pause to end (an unconfigured SMTP never ends a wait).
pub fn choose_provider(now_ms: i64, a: Availability) -> ProviderChoice {
    let main_paused = paused(now_ms, a.main_paused_until_ms);
    if !main_paused {
        return ProviderChoice::Send(a.main);
    }
    let smtp_paused = paused(now_ms, a.smtp_paused_until_ms);
    if a.smtp_configured && !smtp_paused {
        return ProviderChoice::Send(Provider::Smtp);
    }
    let main_until = a.main_paused_until_ms.unwrap_or(now_ms);
    let until = match (a.smtp_configured, a.smtp_paused_until_ms) {
        (true, Some(s)) => main_until.min(s),
        _ => main_until,
    };
    ProviderChoice::WaitUntil(until)
}

/// How long Resend keeps an `Idempotency-Key`: 24 hours
/// (<https://resend.com/docs/dashboard/emails/idempotency-keys>).
pub const RESEND_IDEMPOTENCY_WINDOW_MS: i64 = DAY_MS;

/// Margin kept inside [`RESEND_IDEMPOTENCY_WINDOW_MS`] before a retry with the same key is no longer
/// trusted to be deduplicated (clock skew, queueing): 1 hour.
pub const RESEND_IDEMPOTENCY_MARGIN_MS: i64 = 3_600_000;

/// The status of an email a provider just accepted.
///
/// `maybe_handed_over` is the earlier hand-over whose outcome we never learned (the process was
/// killed between "provider accepted" and "we recorded it", or the response was lost): which
/// provider, and when (ms UTC). The rule, for the gap between a provider's acceptance and our
/// record of it:
/// - no such hand-over → `Sent`;
/// - the earlier hand-over and this one both went to Resend, less than 23 h apart → `Sent`: the
///   retry carried the same `Idempotency-Key` and the same payload, so Resend answered the first
///   result again instead of sending a second copy;
/// - anything else (Cloudflare Email Service or SMTP involved, a switch of provider, or the Resend
///   key window over) → `SentPossiblyTwice`: the email was re-sent with the same deterministic
///   Message-ID (SMTP; Cloudflare sets its own) and nobody can confirm the first copy did not
///   arrive. Losing a booking email is worse than a rare duplicate the operator can see.
pub fn status_after_success(
    maybe_handed_over: Option<(Provider, i64)>,
    sent_by: Provider,
    now_ms: i64,
) -> crate::domain::email::EmailStatus {
    use crate::domain::email::EmailStatus;
    match maybe_handed_over {
        None => EmailStatus::Sent,
        Some((earlier, at_ms))
            if earlier.is_idempotent()
                && sent_by == earlier
                && now_ms.saturating_sub(at_ms)
                    < RESEND_IDEMPOTENCY_WINDOW_MS - RESEND_IDEMPOTENCY_MARGIN_MS =>
        {
            EmailStatus::Sent
        }
        Some(_) => EmailStatus::SentPossiblyTwice,
    }
}

/// Merges a new uncertain hand-over into the one already on record: a non-idempotent provider's
/// uncertainty is never forgotten (a later Resend retry cannot vouch for a Cloudflare or SMTP copy).
pub fn merge_maybe_handed_over(
    earlier: Option<(Provider, i64)>,
    new: (Provider, i64),
) -> (Provider, i64) {
    match earlier {
        Some(e) if !e.0.is_idempotent() => e,
        _ => new,
    }
}

/// `true` when a hand-over whose outcome is unknown (`this_maybe_handed_over`: the connection was
/// lost after SMTP's final dot, Cloudflare Email Service answered without a code) must be the last
/// one: an earlier hand-over to a provider that cannot deduplicate (SMTP, Cloudflare) is already
/// on record, so the email may have reached the guest twice. Sending a third copy would only make
/// it worse; the email is recorded `sent_possibly_twice` (never confirmed) and the owner is told.
///
/// So an uncertain hand-over is tried at most once more, never in a loop. Resend's retries carry
/// the same `Idempotency-Key` and are deduplicated by Resend: they never end the retries.
pub fn stop_after_uncertain(
    earlier: Option<(Provider, i64)>,
    this_provider: Provider,
    this_maybe_handed_over: bool,
) -> bool {
    this_maybe_handed_over
        && !this_provider.is_idempotent()
        && earlier.is_some_and(|(p, _)| !p.is_idempotent())
}

/// Start of the next UTC day after `now_ms` (when a daily quota resets unless the provider says
/// otherwise).
pub fn next_utc_midnight(now_ms: i64) -> i64 {
    (now_ms.div_euclid(DAY_MS) + 1) * DAY_MS
}

/// Classification of one provider failure; decides failover, retry, drop or dead letter. Three
/// questions, in the words of the README's classification table: is it the recipient's fault
/// (`RecipientRejected`), ours — our account, sender, message or configuration
/// (`CredentialsRejected`, `Configuration`, and the quota classes) — or nobody's yet
/// (`Transient`, `RateLimited`)? Anything a provider says that this build does not know is
/// `Transient`: retried with backoff, and only after the attempt ceiling a dead letter the owner is
/// told about; never dropped or suppressed on first sight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderErrorClass {
    /// The provider's daily quota is used up, or our account may not send for now (for SMTP: a
    /// daily or submission quota, an outbound-spam suspension): pause that route until the next
    /// UTC midnight and tell the owner; a main provider fails over now. Never the email's fault:
    /// its attempt budget is untouched.
    DailyLimit,
    /// Too many requests right now: retry later (with a floor).
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
/// | `E_RECIPIENT_NOT_ALLOWED` (the binding's `allowed_destination_addresses`, or an account not yet onboarded that may only write to verified addresses), `E_SENDER_NOT_VERIFIED`, `E_SENDER_DOMAIN_NOT_AVAILABLE`, `E_CONTENT_TOO_LARGE`, `E_VALIDATION_ERROR`, `E_FIELD_MISSING`, `E_TOO_MANY_RECIPIENTS`, `E_HEADER_…`, `E_HEADERS_…` | `Configuration` (ours: the route is paused, the owner told) |
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
        | "E_SENDER_DOMAIN_NOT_AVAILABLE"
        | "E_CONTENT_TOO_LARGE"
        | "E_VALIDATION_ERROR"
        | "E_FIELD_MISSING"
        | "E_TOO_MANY_RECIPIENTS" => ProviderErrorClass::Configuration,
        _ if code.starts_with("E_HEADER_") || code.starts_with("E_HEADERS_") => {
            ProviderErrorClass::Configuration
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
            AfterFailure::RetryAt { .. } | AfterFailure::DeadLetter | AfterFailure::Drop => None,
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
            ProviderErrorClass::RecipientRejected | ProviderErrorClass::RecipientDeclined => {
                AfterFailure::Drop
            }
            ProviderErrorClass::Permanent => AfterFailure::DeadLetter,
            _ if attempts >= backoff.max_attempts => AfterFailure::DeadLetter,
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

impl Provider {
    /// This provider's bit in a set of providers stored as one integer (the queue's
    /// `refused_ours`).
    pub fn bit(self) -> i64 {
        match self {
            Provider::Cloudflare => 1,
            Provider::Resend => 2,
            Provider::Smtp => 4,
        }
    }
}

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
/// by `crate::domain::resend::parse_retry_after_ms`).
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A tiny deterministic sequence for "seeded randomness" in tests (SplitMix64).
    fn seeded(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
    }

    #[test]
    fn production_gap_is_always_within_150_to_160_seconds() {
        let mut rng = seeded(7);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for _ in 0..100_000 {
            let g = Pacing::PRODUCTION.gap_ms(rng());
            assert!((150_000..=160_000).contains(&g), "{g}");
            lo = lo.min(g);
            hi = hi.max(g);
        }
        // Uniform over the whole range: both ends are reached within 1 s.
        assert!(lo < 151_000 && hi > 159_000, "{lo} {hi}");
        assert_eq!(Pacing::PRODUCTION.gap_ms(0), 150_000);
        assert_eq!(Pacing::PRODUCTION.gap_ms(10_000), 160_000);
        assert_eq!(
            Pacing::PRODUCTION.gap_ms(u64::MAX),
            150_000 + (u64::MAX % 10_001) as i64
        );
    }

    #[test]
    fn pacing_rejects_inverted_ranges() {
        assert!(Pacing::new(10, 5).is_err());
        assert!(Pacing::new(-1, 5).is_err());
        assert_eq!(Pacing::new(0, 0).unwrap().gap_ms(12345), 0);
    }

    #[test]
    fn idle_outbox_sends_at_once_and_busy_one_waits_for_the_slot() {
        let facts = QueueFacts {
            client_ready: true,
            ..Default::default()
        };
        // Never sent before: slot at 0 → now.
        assert_eq!(next_wake(1_000, 0, facts), Some(1_000));
        // Sent 10 s ago with a 155 s gap → wake at the slot.
        let slot = Pacing::PRODUCTION.next_slot_after(990_000, 5_000);
        assert_eq!(slot, 1_145_000);
        assert_eq!(next_wake(1_000_000, slot, facts), Some(slot));
        assert!(!client_slot_open(1_000_000, slot));
        assert!(client_slot_open(slot, slot));
    }

    #[test]
    fn owner_alerts_wake_now_even_inside_a_client_gap() {
        let facts = QueueFacts {
            owner_ready: true,
            client_ready: true,
            earliest_waiting_ms: None,
            fast_lane_at_ms: None,
        };
        assert_eq!(next_wake(5_000, 160_000, facts), Some(5_000));
    }

    #[test]
    fn a_catch_up_lane_wakes_before_the_normal_slot() {
        let facts = QueueFacts {
            client_ready: true,
            fast_lane_at_ms: Some(35_000),
            ..Default::default()
        };
        assert_eq!(next_wake(5_000, 160_000, facts), Some(35_000));
        assert_eq!(next_wake(40_000, 160_000, facts), Some(40_000));
    }

    #[test]
    fn waiting_items_wake_at_their_backoff_end() {
        let facts = QueueFacts {
            earliest_waiting_ms: Some(9_000),
            ..Default::default()
        };
        assert_eq!(next_wake(5_000, 0, facts), Some(9_000));
        assert_eq!(next_wake(10_000, 0, facts), Some(10_000));
        assert_eq!(next_wake(10_000, 0, QueueFacts::default()), None);
    }

    proptest! {
        #[test]
        fn any_configured_gap_stays_in_range(min in 0i64..1_000_000, extra in 0i64..100_000, r in any::<u64>()) {
            let p = Pacing::new(min, min + extra).unwrap();
            let g = p.gap_ms(r);
            prop_assert!(g >= min && g <= min + extra);
        }
    }

    #[test]
    fn main_provider_is_paused_until_next_utc_day() {
        let now = 1_767_225_600_000 + 13 * 3_600_000; // 2026-01-01T13:00Z
        let until = next_utc_midnight(now);
        assert_eq!(until, 1_767_225_600_000 + DAY_MS);
        assert_eq!(next_utc_midnight(until), until + DAY_MS);
        let a = |main_paused, smtp_configured, smtp_paused| Availability {
            main: Provider::Cloudflare,
            main_paused_until_ms: main_paused,
            smtp_configured,
            smtp_paused_until_ms: smtp_paused,
        };
        use ProviderChoice::*;
        assert_eq!(
            choose_provider(now, a(Some(until), true, None)),
            Send(Provider::Smtp)
        );
        assert_eq!(
            choose_provider(until, a(Some(until), true, None)),
            Send(Provider::Cloudflare)
        );
        assert_eq!(
            choose_provider(now, a(None, true, None)),
            Send(Provider::Cloudflare)
        );
        // Main paused, no SMTP: wait for the reset.
        assert_eq!(
            choose_provider(now, a(Some(until), false, None)),
            WaitUntil(until)
        );
        // Both paused: wait for whichever comes back first.
        assert_eq!(
            choose_provider(now, a(Some(until), true, Some(now + 5))),
            WaitUntil(now + 5)
        );
        assert_eq!(
            choose_provider(now, a(Some(now + 7), true, Some(until))),
            WaitUntil(now + 7)
        );
        // An SMTP pause that ended no longer counts.
        assert_eq!(
            choose_provider(now, a(Some(until), true, Some(now - 1))),
            Send(Provider::Smtp)
        );
        // SMTP paused but main fine: main.
        assert_eq!(
            choose_provider(now, a(None, true, Some(until))),
            Send(Provider::Cloudflare)
        );
        let resend = Availability {
            main: Provider::Resend,
            ..a(None, false, None)
        };
        assert_eq!(choose_provider(now, resend), Send(Provider::Resend));
    }

    #[test]
    fn provider_names_round_trip() {
        for p in [Provider::Cloudflare, Provider::Resend, Provider::Smtp] {
            assert_eq!(Provider::parse(p.as_str()), Some(p));
        }
        assert_eq!(Provider::parse("main"), None);
        assert!(Provider::Resend.is_main() && Provider::Cloudflare.is_main());
        assert!(!Provider::Smtp.is_main());
        assert!(Provider::Resend.is_idempotent() && !Provider::Smtp.is_idempotent());
    }

    #[test]
    fn restart_rule_resend_same_key_vs_possibly_twice() {
        use crate::domain::email::EmailStatus::*;
        let t = 1_000_000_000;
        assert_eq!(status_after_success(None, Provider::Cloudflare, t), Sent);
        // Resend retried with the same key within its window: Resend deduplicated it.
        assert_eq!(
            status_after_success(Some((Provider::Resend, t)), Provider::Resend, t + 60_000),
            Sent
        );
        // Window (24 h − 1 h margin) over: the key may have expired.
        assert_eq!(
            status_after_success(
                Some((Provider::Resend, t)),
                Provider::Resend,
                t + 23 * 3_600_000
            ),
            SentPossiblyTwice
        );
        // Cloudflare or SMTP cannot confirm; neither can a switch of provider.
        assert_eq!(
            status_after_success(Some((Provider::Cloudflare, t)), Provider::Cloudflare, t + 1),
            SentPossiblyTwice
        );
        assert_eq!(
            status_after_success(Some((Provider::Smtp, t)), Provider::Smtp, t + 1),
            SentPossiblyTwice
        );
        assert_eq!(
            status_after_success(Some((Provider::Resend, t)), Provider::Smtp, t + 1),
            SentPossiblyTwice
        );
        // A non-idempotent uncertainty is never replaced by a later Resend one.
        assert_eq!(
            merge_maybe_handed_over(Some((Provider::Smtp, t)), (Provider::Resend, t + 9)),
            (Provider::Smtp, t)
        );
        assert_eq!(
            merge_maybe_handed_over(Some((Provider::Resend, t)), (Provider::Smtp, t + 9)),
            (Provider::Smtp, t + 9)
        );
        assert_eq!(
            merge_maybe_handed_over(None, (Provider::Resend, t)),
            (Provider::Resend, t)
        );
    }

    #[test]
    fn an_uncertain_hand_over_is_tried_once_more_never_in_a_loop() {
        let t = 1_000;
        // The first uncertain SMTP hand-over: one more attempt.
        assert!(!stop_after_uncertain(None, Provider::Smtp, true));
        // The second: stop (the first may already have arrived).
        assert!(stop_after_uncertain(
            Some((Provider::Smtp, t)),
            Provider::Smtp,
            true
        ));
        assert!(stop_after_uncertain(
            Some((Provider::Cloudflare, t)),
            Provider::Smtp,
            true
        ));
        // A refusal or a sure failure is not uncertain.
        assert!(!stop_after_uncertain(
            Some((Provider::Smtp, t)),
            Provider::Smtp,
            false
        ));
        // Resend deduplicates by its key: its uncertainty never stops the retries, and an earlier
        // Resend uncertainty leaves SMTP one more try.
        assert!(!stop_after_uncertain(
            Some((Provider::Smtp, t)),
            Provider::Resend,
            true
        ));
        assert!(!stop_after_uncertain(
            Some((Provider::Resend, t)),
            Provider::Smtp,
            true
        ));
    }

    #[test]
    fn configuration_faults_pause_the_route_like_refused_credentials() {
        let b = Backoff::DEFAULT;
        for provider in [Provider::Cloudflare, Provider::Resend, Provider::Smtp] {
            let d = after_failure(ProviderErrorClass::Configuration, provider, 9, 10, b, 1);
            assert_eq!(
                d,
                AfterFailure::PauseProvider {
                    until_ms: 10 + CREDENTIALS_PAUSE_MS,
                    cause: PauseCause::Configuration,
                }
            );
            assert_eq!(
                d.provider_pause().map(|p| p.cause),
                Some(PauseCause::Configuration)
            );
        }
        assert!(ProviderErrorClass::Configuration.owner_must_fix());
        assert!(ProviderErrorClass::CredentialsRejected.owner_must_fix());
        assert!(!ProviderErrorClass::Transient.owner_must_fix());
    }

    #[test]
    fn refused_credentials_pause_the_provider_whatever_the_attempt_count() {
        let b = Backoff::DEFAULT;
        for provider in [Provider::Cloudflare, Provider::Resend, Provider::Smtp] {
            for attempts in [1, b.max_attempts, b.max_attempts + 3] {
                assert_eq!(
                    after_failure(
                        ProviderErrorClass::CredentialsRejected,
                        provider,
                        attempts,
                        10,
                        b,
                        7
                    ),
                    AfterFailure::PauseProvider {
                        until_ms: 10 + CREDENTIALS_PAUSE_MS,
                        cause: PauseCause::Credentials,
                    }
                );
            }
        }
        // A daily limit on either main provider fails over.
        assert!(matches!(
            after_failure(
                ProviderErrorClass::DailyLimit,
                Provider::Resend,
                1,
                10,
                b,
                0
            ),
            AfterFailure::FailOver { .. }
        ));
    }

    #[test]
    fn classification_table() {
        use ProviderErrorClass::*;
        let table = [
            (Some("E_DAILY_LIMIT_EXCEEDED"), DailyLimit),
            (Some("E_RATE_LIMIT_EXCEEDED"), RateLimited),
            (Some("E_RECIPIENT_SUPPRESSED"), RecipientRejected),
            (Some("E_INTERNAL_SERVER_ERROR"), Transient),
            (Some("E_DELIVERY_FAILED"), Transient),
            (None, Transient),
            (Some("E_SENDER_NOT_VERIFIED"), Configuration),
            (Some("E_RECIPIENT_NOT_ALLOWED"), Configuration),
            (Some("E_VALIDATION_ERROR"), Configuration),
            (Some("E_HEADER_VALUE_TOO_LONG"), Configuration),
            (Some("E_SOMETHING_NEW"), Transient),
        ];
        for (code, want) in table {
            assert_eq!(classify_cloudflare_code(code), want, "{code:?}");
        }
    }

    #[test]
    fn failure_decisions() {
        let b = Backoff::DEFAULT;
        let now = 1_000_000;
        assert_eq!(
            after_failure(
                ProviderErrorClass::DailyLimit,
                Provider::Cloudflare,
                1,
                now,
                b,
                0
            ),
            AfterFailure::FailOver {
                pause_main_until_ms: next_utc_midnight(now)
            }
        );
        // SMTP's own quota or suspension pauses SMTP until the day turns, whatever the count.
        for attempts in [1, b.max_attempts] {
            assert_eq!(
                after_failure(
                    ProviderErrorClass::DailyLimit,
                    Provider::Smtp,
                    attempts,
                    now,
                    b,
                    0
                ),
                AfterFailure::PauseProvider {
                    until_ms: next_utc_midnight(now),
                    cause: PauseCause::DailyLimit,
                }
            );
        }
        // A recipient's policy drops the email; the route is not paused.
        assert_eq!(
            after_failure(
                ProviderErrorClass::RecipientDeclined,
                Provider::Smtp,
                1,
                now,
                b,
                0
            ),
            AfterFailure::Drop
        );
        assert_eq!(
            after_failure(
                ProviderErrorClass::RecipientRejected,
                Provider::Cloudflare,
                1,
                now,
                b,
                0
            ),
            AfterFailure::Drop
        );
        assert_eq!(
            after_failure(
                ProviderErrorClass::Transient,
                Provider::Cloudflare,
                b.max_attempts,
                now,
                b,
                0
            ),
            AfterFailure::DeadLetter
        );
        match after_failure(
            ProviderErrorClass::RateLimited,
            Provider::Cloudflare,
            1,
            now,
            b,
            0,
        ) {
            AfterFailure::RetryAt { at_ms } => assert!(at_ms >= now + 60_000),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn backoff_grows_and_stays_within_bounds() {
        let b = Backoff::DEFAULT;
        let mut rng = seeded(42);
        for attempts in 1..=20u32 {
            let d = b
                .base_ms
                .saturating_mul(1 << (attempts - 1).min(30))
                .min(b.cap_ms);
            for _ in 0..1_000 {
                let got = b.delay_ms(attempts, rng());
                assert!(got >= d / 2 && got <= d, "attempt {attempts}: {got} vs {d}");
            }
        }
    }
}
