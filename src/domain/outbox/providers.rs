//! Which route sends: the main provider or the SMTP failover, and when a paused one is back; and
//! how an owner alert still reaches the owner while every route that carries guest mail is paused
//! (the owner route).

use super::*;
use serde::{Deserialize, Serialize};

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
    /// The owner route: a `send_email` binding restricted to the owner's verified address
    /// (`destination_address`, binding `OWNER_ROUTE`), used for owner alerts only and only while
    /// every route that carries guest mail is paused. Cloudflare documents that sends to a
    /// verified destination address are free and count toward neither the monthly quota nor the
    /// daily sending limits, even with only Email Routing set up
    /// (<https://developers.cloudflare.com/email-service/platform/limits/>), so it works on the
    /// very day the main provider's quota ran out. Stored as `owner_route`.
    OwnerRoute,
}

crate::domain::basics::stored_names!(Provider);

impl Provider {
    /// `true` for a main provider (Cloudflare Email Service or Resend).
    pub fn is_main(self) -> bool {
        matches!(self, Provider::Cloudflare | Provider::Resend)
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
    /// The owner route is configured (the `OWNER_ROUTE` binding exists).
    pub owner_route: bool,
    /// The owner route failed and is not tried again before then, ms UTC.
    pub owner_route_paused_until_ms: Option<i64>,
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

/// Which provider sends an owner alert now: the route guest mail would take
/// ([`choose_provider`]); while every such route is paused, the owner route when it is configured
/// and not itself failing; else wait like guest mail.
pub fn choose_owner_route(now_ms: i64, a: Availability) -> ProviderChoice {
    match choose_provider(now_ms, a) {
        ProviderChoice::WaitUntil(_)
            if a.owner_route && !paused(now_ms, a.owner_route_paused_until_ms) =>
        {
            ProviderChoice::Send(Provider::OwnerRoute)
        }
        choice => choice,
    }
}

impl Provider {
    /// This provider's bit in a set of providers stored as one integer (the queue's
    /// `refused_ours` and `set_aside_on`).
    pub fn bit(self) -> i64 {
        match self {
            Provider::Cloudflare => 1,
            Provider::Resend => 2,
            Provider::Smtp => 4,
            Provider::OwnerRoute => 8,
        }
    }
}

/// Start of the next UTC day after `now_ms` (when a daily quota resets unless the provider says
/// otherwise).
pub fn next_utc_midnight(now_ms: i64) -> i64 {
    (now_ms.div_euclid(DAY_MS) + 1) * DAY_MS
}
