//! Configuration: every binding name and variable in one place, parsed once per request from the
//! environment (`wrangler.toml` `[vars]`, `.dev.vars` locally, `wrangler secret put` in production).
//!
//! Parsing is pure (it takes a lookup function), so its rules are host-tested; the shell passes a
//! closure over `worker::Env`.

use crate::domain::event::ownership::{parse_partner_secrets, PartnerSecret};
use crate::domain::event::EmailAddress;
use crate::domain::marketing::MarketingPolicy;
use crate::domain::outbox::smtp::{SmtpTimeouts, TlsMode};
use crate::domain::outbox::{Backoff, Pacing};
use crate::domain::render::Branding;

/// D1 database binding.
pub const DB_BINDING: &str = "DB";
/// Journey Workflow binding.
pub const JOURNEY_BINDING: &str = "JOURNEY";
/// Outbox Durable Object namespace binding.
pub const OUTBOX_BINDING: &str = "OUTBOX";
/// Cloudflare Email Service `send_email` binding (main provider).
pub const EMAIL_BINDING: &str = "EMAIL";
/// The owner route: a `send_email` binding restricted to the owner's verified address
/// (`destination_address` in wrangler.toml), used for owner alerts while every route that carries
/// guest mail is paused (`crate::domain::outbox::Provider::OwnerRoute`). Optional.
pub const OWNER_ROUTE_BINDING: &str = "OWNER_ROUTE";
/// Cloudflare Queues producer binding of outbound webhook deliveries (one message per delivery).
pub const WEBHOOKS_QUEUE_BINDING: &str = "WEBHOOKS";
/// Producer binding of the deliveries' dead letter queue (a delivery past its ceiling is sent
/// there explicitly; Queues also moves a message there after `max_retries`).
pub const WEBHOOKS_DLQ_BINDING: &str = "WEBHOOKS_DLQ";
/// Queue names, as in wrangler.toml: the consumer tells its queues apart by name.
pub const WEBHOOKS_QUEUE: &str = "booking-email-webhooks";
pub const WEBHOOKS_DLQ: &str = "booking-email-webhooks-dlq";
/// The queue Cloudflare Email Service event subscriptions publish delivery events to.
pub const EMAIL_EVENTS_QUEUE: &str = "booking-email-email-events";
/// Name of the single outbox instance.
pub const OUTBOX_NAME: &str = "outbox";

mod admin;
pub mod guard;
pub mod replies;
mod routes;
mod smtp;
#[doc(hidden)]
pub mod testing;

pub use admin::MAX_ADMIN_SESSION_TTL_S;

/// A feature the engine refuses to run with its configuration (the production guard,
/// [`guard::apply`], or a secret list that cannot be used): the feature is off, the rest of the
/// engine runs. Logged, and listed by `GET /health`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    /// The variable at fault, e.g. `ACTION_SIGNING_KEY`.
    pub variable: &'static str,
    /// Why, and what is off because of it (one line).
    pub reason: String,
}

/// A configuration value that is missing or malformed. The message names the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration variable {0} is not set")]
    Missing(&'static str),
    #[error("configuration variable {name} is invalid: {reason}")]
    Invalid { name: &'static str, reason: String },
}

/// SMTP failover settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmtpConfig {
    pub host: String,
    pub port: u16,
    pub tls: TlsMode,
    /// `None` when the server needs no AUTH (local maildev).
    pub credentials: Option<(String, String)>,
    /// Name sent in EHLO.
    pub hello_name: String,
    /// How long each step may take, ms (`SMTP_TIMEOUT_MS`, `SMTP_GREETING_TIMEOUT_MS`,
    /// `SMTP_DATA_TIMEOUT_MS`, `SMTP_DATA_BLOCK_TIMEOUT_MS`, `SMTP_FINAL_REPLY_TIMEOUT_MS`,
    /// `SMTP_CONVERSATION_MAX_MS`; RFC 5321 §4.5.3.2 defaults, see [`SmtpTimeouts`]).
    pub timeouts: SmtpTimeouts,
}

/// Which service is the main email provider (`MAIN_PROVIDER`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MainProvider {
    /// `cloudflare` (default): Cloudflare Email Service through the `send_email` binding `EMAIL`.
    Cloudflare,
    /// `resend`: Resend's HTTP API, `POST {base_url}/emails` with `Authorization: Bearer {api_key}`.
    Resend {
        /// `RESEND_API_KEY` (secret, `re_…`); required when `MAIN_PROVIDER = "resend"`.
        api_key: String,
        /// `RESEND_BASE_URL` (default `https://api.resend.com`, no trailing slash); tests point it
        /// at a local fake.
        base_url: String,
    },
}

/// Everything the engine reads from its environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// `ENGINE_ENV` (`development` | `production`, default production): development is declared in
    /// `.dev.vars`, never in `wrangler.toml`; outside it every guard check applies ([`guard`]).
    pub engine_env: guard::EngineEnv,
    /// `LITEAPI_WEBHOOK_TOKEN` (secret): the static token liteAPI sends in `authorization`.
    pub liteapi_webhook_token: String,
    /// `MAX_WEBHOOK_BODY_BYTES`: larger bodies get 413. Default 262 144 (256 KiB).
    pub max_webhook_body_bytes: usize,
    /// `OUTBOX_GAP_MIN_MS` / `OUTBOX_GAP_MAX_MS`: client pacing.
    pub pacing: Pacing,
    /// `OUTBOX_CATCHUP_MIN_GAP_MS` (20 000) / `OUTBOX_CATCHUP_MAX_MS` (6 h): the bounds of a
    /// catch-up the owner may allow ([`crate::domain::outbox::backlog::CatchUp`]).
    pub catch_up: crate::domain::outbox::backlog::CatchUpLimits,
    /// `OUTBOX_MAX_ATTEMPTS`, `OUTBOX_RETRY_BASE_MS`, `OUTBOX_RETRY_CAP_MS`.
    pub backoff: Backoff,
    /// `OWNER_EMAIL`: where owner alerts go.
    pub owner_email: EmailAddress,
    /// `SENDER_EMAIL` + `BRAND_NAME`, in `OWNER_LOCALE` (only `en`, the default, is accepted:
    /// owner templates and their date and money helpers ship in English only): the owner's
    /// alerts. Guest emails take the booking's language instead ([`Branding::in_locale`]).
    pub branding: Branding,
    /// `DEFAULT_GUEST_LOCALE` (a shipped language tag, region allowed for its formats: `en`,
    /// `en-US`, `es`, `es-MX`, `fr`, `de`, `pt-PT`, `it`, …; default
    /// `en`): the language of a guest no source gave a language for.
    pub default_guest_locale: crate::domain::i18n::Lang,
    /// `SMTP_HOST`, `SMTP_PORT`, `SMTP_TLS`, `SMTP_USERNAME`, `SMTP_PASSWORD`, and the timeouts
    /// (`SMTP_*_TIMEOUT_MS`, `SMTP_CONVERSATION_MAX_MS`); `None` when `SMTP_HOST` is empty (no
    /// failover configured).
    pub smtp: Option<SmtpConfig>,
    /// `DUFFEL_WEBHOOK_SECRETS` (secret): one or more secrets, comma or space separated (several
    /// during rotation).
    pub duffel_webhook_secrets: Vec<String>,
    /// `GENERIC_WEBHOOK_SECRETS` (secret): the generic source's partners and their Standard
    /// Webhooks secrets, `name=whsec_…` (several per name during rotation) or an unnamed
    /// `whsec_…` (partner `default`), comma or space separated
    /// ([`crate::domain::event::ownership::parse_partner_secrets`]). Empty when the list is refused
    /// (listed in [`Config::refused`]).
    pub generic_partners: Vec<PartnerSecret>,
    /// `RESEND_WEBHOOK_SECRETS` (secret): Resend's webhook secrets (`whsec_…`), comma or space
    /// separated.
    pub resend_webhook_secrets: Vec<String>,
    /// `WEBHOOK_TOLERANCE_S`: accepted age of a signed delivery's timestamp, seconds (300).
    pub webhook_tolerance_s: i64,
    /// `DUFFEL_API_BASE_URL` (default `https://api.duffel.com`) and `DUFFEL_API_TOKEN` (secret):
    /// used to list an order's airline-initiated changes.
    pub duffel_api_base_url: String,
    pub duffel_api_token: String,
    /// `LITEAPI_DATA_BASE_URL` (default `https://api.liteapi.travel/v3.0`) and `LITEAPI_API_KEY`
    /// (secret): used to look up a hotel's coordinates for its local time.
    pub liteapi_data_base_url: String,
    pub liteapi_api_key: String,
    /// `STRIPE_WEBHOOK_SECRETS` (secret): Stripe endpoint secrets (`whsec_…`), several during
    /// rotation.
    pub stripe_webhook_secrets: Vec<String>,
    /// `ACTION_SIGNING_KEY` (secret): HMAC key of the owner's one-click action links. Empty = the
    /// links cannot be made (holds are still kept and alerted, without buttons).
    pub action_signing_key: String,
    /// `ACTION_LINK_TTL_S`: how long an action link stays valid, seconds (7 days).
    pub action_link_ttl_s: i64,
    /// `PUBLIC_BASE_URL`: where this Worker is reachable, for links in owner emails
    /// (e.g. `https://engine.example.com`), without a trailing `/`. Default
    /// `http://127.0.0.1:8787` (`wrangler dev`): outside development an unset, loopback or
    /// `http://` base is refused and no link is written ([`guard`]).
    pub public_base_url: String,
    /// `PUBLIC_BASE_URL` parsed once (an absolute URL, else a [`ConfigError`]); build links with
    /// [`Config::public_link`].
    pub public_base: url::Url,
    /// `BOOKING_SITE_URL`: where a guest retries a checkout (the booking site, never an admin URL).
    pub booking_site_url: String,
    /// `CHECKOUT_FOLLOW_UP_MS`: wait after a checkout attempt before deciding, ms (20 minutes).
    pub checkout_follow_up_ms: i64,
    /// `CARD_TESTING_NAMES_PER_EMAIL` (2) and `CARD_TESTING_EMAILS_PER_NAME` (3): same-day
    /// thresholds of the card-testing rules.
    pub card_testing_names_per_email: usize,
    pub card_testing_emails_per_name: usize,
    /// `INTERNAL_NAMES`: comma-separated words that must never appear in a client email (the
    /// content lock), e.g. supplier and platform names.
    pub internal_names: String,
    /// `MAIN_PROVIDER` (`cloudflare` | `resend`) with `RESEND_API_KEY` / `RESEND_BASE_URL`.
    pub main_provider: MainProvider,
    /// `PROVIDER_AUTH_PAUSE_MS`: how long a provider whose credentials were refused (SMTP AUTH
    /// failure, Resend key errors) stays paused before one probe, ms (1 hour). The owner is alerted.
    pub provider_auth_pause_ms: i64,
    /// `OPERATOR_TOKEN` (secret): bearer token of the operator endpoints (`/admin/…`: redrive,
    /// marketing sends). Empty = those endpoints answer 503.
    pub operator_token: String,
    /// `UNSUBSCRIBE_SIGNING_KEY` (secret, ≥ 32 bytes): HMAC key of unsubscribe links. Empty (or
    /// refused, [`guard`]) = marketing sends are refused (no email may go out without a working
    /// unsubscribe link); nothing else stops.
    pub unsubscribe_signing_key: String,
    /// `MARKETING_DAILY_CAP` (50, all recipients, per UTC day) and `MARKETING_PER_PERSON_PER_DAY` (1).
    pub marketing: MarketingPolicy,
    /// Compensation (`COMPENSATION_REFUND_POLICY`): who refunds a paid booking the supplier
    /// failed — `owner` (default: one-click links) or `automatic`.
    pub refund_policy: crate::domain::payment::compensation::RefundPolicy,
    /// How long a compensation whose payment is not known yet waits for the payment record
    /// before going on without it (`COMPENSATION_PAYMENT_WAIT_MS`, ms, default 600 000 = 10 min).
    pub compensation_payment_wait_ms: i64,
    /// Stripe API (`STRIPE_API_BASE_URL`, default `https://api.stripe.com`) and its secret key
    /// (`STRIPE_SECRET_KEY`, a secret; empty = refunds cannot be made, the owner is told).
    pub stripe_api_base_url: String,
    pub stripe_secret_key: String,
    /// Outbound webhooks: `WEBHOOK_RETRY_BASE_S` (60), `WEBHOOK_RETRY_FACTOR` (3),
    /// `WEBHOOK_RETRY_CAP_S` (43 200), `WEBHOOK_MAX_ATTEMPTS` (8),
    /// `WEBHOOK_CLIENT_ERROR_ATTEMPTS` (3); see [`crate::domain::webhooks::decide`].
    pub webhook_retry: crate::domain::webhooks::RetryPolicy,
    /// `WEBHOOK_TIMEOUT_MS`: how long one delivery attempt may take, ms (10 000).
    pub webhook_timeout_ms: u64,
    /// `WEBHOOK_ALLOW_HTTP_LOOPBACK` (`true`/`false`, default false): accept `http://` subscriber
    /// URLs to a loopback host (local development and tests only).
    pub webhook_allow_http_loopback: bool,
    /// The owner's admin: `ADMIN_ACCOUNTS`, `ADMIN_SESSION_TTL_S`, `ADMIN_LOGIN_*`
    /// ([`crate::domain::admin::AdminConfig`]).
    pub admin: crate::domain::admin::AdminConfig,
    /// Guests' replies: `REPLY_*` and `INBOUND_*` ([`replies::ReplyConfig`]).
    pub replies: replies::ReplyConfig,
    /// Features turned off by their configuration, each naming its variable (see [`Refusal`]):
    /// the production guard's refusals and a refused `GENERIC_WEBHOOK_SECRETS`.
    pub refused: Vec<Refusal>,
}

fn list(get: &impl Fn(&str) -> Option<String>, name: &'static str) -> Vec<String> {
    get(name)
        .unwrap_or_default()
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect()
}

/// A shipped language tag (`en`, `es`, `fr`, `de`, `pt`, `it`; region subtags allowed, e.g.
/// `pt-BR`, which pick the regional formats), default `en`; any other value is a
/// [`ConfigError::Invalid`] naming the shipped tags.
fn locale(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
) -> Result<crate::domain::i18n::Lang, ConfigError> {
    match text(get, name)? {
        None => Ok(crate::domain::i18n::Locale::En.into()),
        Some(tag) => {
            crate::domain::i18n::Lang::from_tag(&tag).ok_or_else(|| ConfigError::Invalid {
                name,
                reason: format!("{tag:?} is not a shipped language (en, es, fr, de, pt, it)"),
            })
        }
    }
}

/// `OWNER_LOCALE`: `en` (or unset). Owner emails are written in English only (their templates
/// and their date and money helpers are English), so any other language tag is refused by name
/// rather than accepted and silently ignored.
fn owner_locale(
    get: &impl Fn(&str) -> Option<String>,
) -> Result<crate::domain::i18n::Locale, ConfigError> {
    let name = "OWNER_LOCALE";
    match locale(get, name)?.locale {
        crate::domain::i18n::Locale::En => Ok(crate::domain::i18n::Locale::En),
        other => {
            let tag: &'static str = other.into();
            Err(ConfigError::Invalid {
                name,
                reason: format!(
                    "{tag:?}: owner emails ship in English only; set en or leave it unset"
                ),
            })
        }
    }
}

fn text(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
) -> Result<Option<String>, ConfigError> {
    Ok(get(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty()))
}

/// The URL in `name`, else `default`, without a trailing `/` (paths are appended to it).
fn base_url(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: &str,
) -> Result<String, ConfigError> {
    let url = text(get, name)?.unwrap_or_else(|| default.into());
    Ok(url.trim_end_matches('/').to_string())
}

fn number<T: std::str::FromStr>(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: T,
) -> Result<T, ConfigError> {
    match text(get, name)? {
        None => Ok(default),
        Some(v) => v.parse::<T>().map_err(|_| ConfigError::Invalid {
            name,
            reason: format!("{v:?} is not a number"),
        }),
    }
}

fn address(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
) -> Result<EmailAddress, ConfigError> {
    let v = text(get, name)?.ok_or(ConfigError::Missing(name))?;
    EmailAddress::parse(&v).map_err(|e| ConfigError::Invalid {
        name,
        reason: e.to_string(),
    })
}

impl Config {
    /// Parses the configuration; `get(name)` returns a var or secret by name.
    pub fn parse(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let pacing = Pacing::new(
            number(&get, "OUTBOX_GAP_MIN_MS", 150_000i64)?,
            number(&get, "OUTBOX_GAP_MAX_MS", 160_000i64)?,
        )
        .map_err(|e| ConfigError::Invalid {
            name: "OUTBOX_GAP_MIN_MS",
            reason: e.to_string(),
        })?;
        let backoff = Backoff {
            base_ms: number(&get, "OUTBOX_RETRY_BASE_MS", Backoff::DEFAULT.base_ms)?,
            cap_ms: number(&get, "OUTBOX_RETRY_CAP_MS", Backoff::DEFAULT.cap_ms)?,
            max_attempts: number(&get, "OUTBOX_MAX_ATTEMPTS", Backoff::DEFAULT.max_attempts)?,
        };
        if backoff.base_ms <= 0 || backoff.cap_ms < backoff.base_ms || backoff.max_attempts == 0 {
            return Err(ConfigError::Invalid {
                name: "OUTBOX_RETRY_BASE_MS",
                reason: "need 0 < OUTBOX_RETRY_BASE_MS ≤ OUTBOX_RETRY_CAP_MS and OUTBOX_MAX_ATTEMPTS ≥ 1".into(),
            });
        }
        let from = address(&get, "SENDER_EMAIL")?;
        let smtp = match text(&get, "SMTP_HOST")? {
            None => None,
            Some(host) => {
                let tls_raw = text(&get, "SMTP_TLS")?.unwrap_or_else(|| "starttls".into());
                let tls = TlsMode::parse(&tls_raw).ok_or_else(|| ConfigError::Invalid {
                    name: "SMTP_TLS",
                    reason: format!("{tls_raw:?} is not one of off, starttls, implicit"),
                })?;
                let default_port = match tls {
                    TlsMode::Implicit => 465,
                    _ => 587,
                };
                let credentials = match (text(&get, "SMTP_USERNAME")?, text(&get, "SMTP_PASSWORD")?)
                {
                    (Some(u), Some(p)) => Some((u, p)),
                    (None, None) => None,
                    (Some(_), None) => return Err(ConfigError::Missing("SMTP_PASSWORD")),
                    (None, Some(_)) => return Err(ConfigError::Missing("SMTP_USERNAME")),
                };
                Some(SmtpConfig {
                    port: number(&get, "SMTP_PORT", default_port)?,
                    tls,
                    credentials,
                    hello_name: text(&get, "SMTP_HELLO_NAME")?
                        .unwrap_or_else(|| from.domain().to_string()),
                    timeouts: smtp::timeouts(&get)?,
                    host,
                })
            }
        };
        let engine_env = guard::EngineEnv::parse(text(&get, "ENGINE_ENV")?.as_deref())?;
        let public_base_given = text(&get, "PUBLIC_BASE_URL")?.is_some();
        let public_base_url = base_url(&get, "PUBLIC_BASE_URL", "http://127.0.0.1:8787")?;
        let public_base = url::Url::parse(&public_base_url)
            .ok()
            .filter(|u| u.has_host())
            .ok_or_else(|| ConfigError::Invalid {
                name: "PUBLIC_BASE_URL",
                reason: format!("{public_base_url:?} is not an absolute URL with a host"),
            })?;
        let mut refused = Vec::new();
        let generic_partners =
            match parse_partner_secrets(&get("GENERIC_WEBHOOK_SECRETS").unwrap_or_default()) {
                Ok(p) => p,
                Err(e) => {
                    refused.push(Refusal {
                        variable: "GENERIC_WEBHOOK_SECRETS",
                        reason: format!("{e}; generic webhooks are refused (401)"),
                    });
                    Vec::new()
                }
            };
        let mut cfg = Config {
            engine_env,
            liteapi_webhook_token: text(&get, "LITEAPI_WEBHOOK_TOKEN")?.unwrap_or_default(),
            max_webhook_body_bytes: number(&get, "MAX_WEBHOOK_BODY_BYTES", 262_144usize)?,
            pacing,
            catch_up: crate::domain::outbox::backlog::CatchUpLimits {
                min_gap_ms: number(
                    &get,
                    "OUTBOX_CATCHUP_MIN_GAP_MS",
                    crate::domain::outbox::backlog::CatchUpLimits::DEFAULT.min_gap_ms,
                )?
                .max(1_000),
                max_duration_ms: number(
                    &get,
                    "OUTBOX_CATCHUP_MAX_MS",
                    crate::domain::outbox::backlog::CatchUpLimits::DEFAULT.max_duration_ms,
                )?
                .max(60_000),
            },
            backoff,
            owner_email: address(&get, "OWNER_EMAIL")?,
            branding: Branding {
                brand: text(&get, "BRAND_NAME")?.unwrap_or_else(|| "Bookings".into()),
                from,
                locale: owner_locale(&get)?,
                region: crate::domain::i18n::Region::DEFAULT,
            },
            default_guest_locale: locale(&get, "DEFAULT_GUEST_LOCALE")?,
            smtp,
            duffel_webhook_secrets: list(&get, "DUFFEL_WEBHOOK_SECRETS"),
            generic_partners,
            resend_webhook_secrets: list(&get, "RESEND_WEBHOOK_SECRETS"),
            webhook_tolerance_s: number(&get, "WEBHOOK_TOLERANCE_S", 300i64)?,
            duffel_api_base_url: base_url(&get, "DUFFEL_API_BASE_URL", "https://api.duffel.com")?,
            duffel_api_token: text(&get, "DUFFEL_API_TOKEN")?.unwrap_or_default(),
            liteapi_data_base_url: base_url(&get, "LITEAPI_DATA_BASE_URL", "https://api.liteapi.travel/v3.0")?,
            liteapi_api_key: text(&get, "LITEAPI_API_KEY")?.unwrap_or_default(),
            stripe_webhook_secrets: list(&get, "STRIPE_WEBHOOK_SECRETS"),
            action_signing_key: text(&get, "ACTION_SIGNING_KEY")?.unwrap_or_default(),
            action_link_ttl_s: number(&get, "ACTION_LINK_TTL_S", 7 * 86_400i64)?,
            public_base_url,
            public_base,
            booking_site_url: text(&get, "BOOKING_SITE_URL")?
                .unwrap_or_else(|| "https://example.com".into()),
            checkout_follow_up_ms: number(&get, "CHECKOUT_FOLLOW_UP_MS", 20 * 60_000i64)?,
            card_testing_names_per_email: number(&get, "CARD_TESTING_NAMES_PER_EMAIL", 2usize)?,
            card_testing_emails_per_name: number(&get, "CARD_TESTING_EMAILS_PER_NAME", 3usize)?,
            internal_names: text(&get, "INTERNAL_NAMES")?.unwrap_or_else(|| {
                "liteapi,nuitee,duffel,workflow,durable object,outbox,wrangler,miniflare,workerd".into()
            }),
            main_provider: match text(&get, "MAIN_PROVIDER")?.as_deref() {
                None | Some("cloudflare") => MainProvider::Cloudflare,
                Some("resend") => MainProvider::Resend {
                    api_key: text(&get, "RESEND_API_KEY")?
                        .ok_or(ConfigError::Missing("RESEND_API_KEY"))?,
                    base_url: base_url(&get, "RESEND_BASE_URL", "https://api.resend.com")?,
                },
                Some(other) => {
                    return Err(ConfigError::Invalid {
                        name: "MAIN_PROVIDER",
                        reason: format!("{other:?} is neither \"cloudflare\" nor \"resend\""),
                    })
                }
            },
            provider_auth_pause_ms: number(&get, "PROVIDER_AUTH_PAUSE_MS", 3_600_000i64)?,
            operator_token: text(&get, "OPERATOR_TOKEN")?.unwrap_or_default(),
            // Shorter than 32 bytes: refused by the guard (marketing stops, nothing else).
            unsubscribe_signing_key: text(&get, "UNSUBSCRIBE_SIGNING_KEY")?.unwrap_or_default(),
            marketing: MarketingPolicy {
                daily_cap: number(&get, "MARKETING_DAILY_CAP", MarketingPolicy::DEFAULT.daily_cap)?,
                per_person_per_day: number(
                    &get,
                    "MARKETING_PER_PERSON_PER_DAY",
                    MarketingPolicy::DEFAULT.per_person_per_day,
                )?,
            },
            refund_policy: match text(&get, "COMPENSATION_REFUND_POLICY")? {
                None => Default::default(),
                Some(v) => crate::domain::payment::compensation::RefundPolicy::parse(&v).ok_or_else(|| {
                    ConfigError::Invalid {
                        name: "COMPENSATION_REFUND_POLICY",
                        reason: format!("{v:?} is neither \"owner\" nor \"automatic\""),
                    }
                })?,
            },
            compensation_payment_wait_ms: number(&get, "COMPENSATION_PAYMENT_WAIT_MS", 600_000i64)?,
            stripe_api_base_url: base_url(&get, "STRIPE_API_BASE_URL", "https://api.stripe.com")?,
            stripe_secret_key: text(&get, "STRIPE_SECRET_KEY")?.unwrap_or_default(),
            webhook_retry: {
                let d = crate::domain::webhooks::RetryPolicy::default();
                crate::domain::webhooks::RetryPolicy {
                    base_s: number(&get, "WEBHOOK_RETRY_BASE_S", d.base_s)?,
                    factor: number(&get, "WEBHOOK_RETRY_FACTOR", d.factor)?,
                    cap_s: number(&get, "WEBHOOK_RETRY_CAP_S", d.cap_s)?.min(43_200),
                    max_attempts: number(&get, "WEBHOOK_MAX_ATTEMPTS", d.max_attempts)?.max(1),
                    client_error_attempts: number(
                        &get,
                        "WEBHOOK_CLIENT_ERROR_ATTEMPTS",
                        d.client_error_attempts,
                    )?
                    .max(1),
                }
            },
            webhook_timeout_ms: number(&get, "WEBHOOK_TIMEOUT_MS", 10_000u64)?,
            admin: admin::settings(&get),
            replies: replies::parse(&get)?,
            webhook_allow_http_loopback: matches!(
                text(&get, "WEBHOOK_ALLOW_HTTP_LOOPBACK")?.as_deref(),
                Some("true" | "1")
            ),
            refused,
        };
        guard::apply(&mut cfg, public_base_given);
        Ok(cfg)
    }
}

impl Config {
    /// Where owner alerts go: `OWNER_EMAIL`, signed with the configured branding.
    pub fn owner_inbox(&self) -> crate::domain::render::OwnerInbox<'_> {
        crate::domain::render::OwnerInbox::new(&self.owner_email, &self.branding)
    }

    /// The content lock of this configuration (`PUBLIC_BASE_URL`, `INTERNAL_NAMES`).
    pub fn content_lock(&self) -> crate::domain::email::content_lock::ContentLock {
        crate::domain::email::content_lock::ContentLock::from_config(
            &self.public_base_url,
            &self.internal_names,
        )
    }

    /// The public URL of `path` (`/actions/<token>`, `/unsubscribe/<token>`) on this Worker: the
    /// path of `PUBLIC_BASE_URL` (if any) followed by `path`, percent-encoded where needed.
    pub fn public_link(&self, path: &str) -> url::Url {
        let mut link = self.public_base.clone();
        let joined = format!("{}{path}", link.path().trim_end_matches('/'));
        link.set_path(&joined);
        link
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::i18n::Locale;
    use std::collections::HashMap;

    fn parse(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::parse(|k| map.get(k).cloned())
    }

    const BASE: [(&str, &str); 2] = [
        ("OWNER_EMAIL", "owner@example.com"),
        ("SENDER_EMAIL", "bookings@mail.example.com"),
    ];

    #[test]
    fn defaults_are_production_values() {
        let c = parse(&BASE).unwrap();
        assert_eq!(c.pacing, Pacing::PRODUCTION);
        assert_eq!(c.max_webhook_body_bytes, 262_144);
        assert!(c.smtp.is_none());
        assert_eq!(c.public_base.as_str(), "http://127.0.0.1:8787/");
    }

    #[test]
    fn a_bad_admin_setting_turns_sign_in_off_and_nothing_else() {
        let entry = "owner:pbkdf2-sha256:1000:MDEyMzQ1Njc4OWFiY2RlZg:VaxEbmTjCJ_sFpHCJUS2BflBhSFt3gRl5oudV8INrLw";
        let mut v = BASE.to_vec();
        v.push(("ADMIN_ACCOUNTS", entry));
        v.push(("ADMIN_SESSION_TTL_S", "99999999999"));
        let c = parse(&v).unwrap();
        assert_eq!(c.admin.accounts.len(), 1);
        assert_eq!(c.admin.session_ttl_s, MAX_ADMIN_SESSION_TTL_S);
        v.push(("ADMIN_LOGIN_MAX_PER_IP", "twenty"));
        let c = parse(&v).expect("the rest of the engine still parses");
        assert!(c.admin.accounts.is_empty());
        assert!(c
            .admin
            .accounts_error
            .unwrap()
            .contains("ADMIN_LOGIN_MAX_PER_IP"));
        let mut v = BASE.to_vec();
        v.push(("ADMIN_ACCOUNTS", "owner:plain:text"));
        let c = parse(&v).unwrap();
        assert!(c
            .admin
            .accounts_error
            .unwrap()
            .contains("ADMIN_ACCOUNTS is invalid"));
    }

    #[test]
    fn owner_locale_accepts_english_only() {
        assert_eq!(parse(&BASE).unwrap().branding.locale, Locale::En);
        let mut v = BASE.to_vec();
        v.push(("OWNER_LOCALE", "en"));
        assert_eq!(parse(&v).unwrap().branding.locale, Locale::En);
        let mut v = BASE.to_vec();
        v.push(("OWNER_LOCALE", "es"));
        let err = parse(&v).unwrap_err().to_string();
        assert!(err.contains("OWNER_LOCALE"), "{err}");
        assert!(err.contains("English only"), "{err}");
        let mut v = BASE.to_vec();
        v.push(("OWNER_LOCALE", "xx"));
        assert!(parse(&v).unwrap_err().to_string().contains("OWNER_LOCALE"));
    }

    #[test]
    fn public_links_keep_the_base_path() {
        let mut v = BASE.to_vec();
        v.push(("PUBLIC_BASE_URL", "https://engine.example.com/mail/"));
        let c = parse(&v).unwrap();
        assert_eq!(c.public_base_url, "https://engine.example.com/mail");
        assert_eq!(
            c.public_link("/actions/abc.def").as_str(),
            "https://engine.example.com/mail/actions/abc.def"
        );
        let mut v = BASE.to_vec();
        v.push(("PUBLIC_BASE_URL", "https://engine.example.com"));
        assert_eq!(
            parse(&v).unwrap().public_link("/unsubscribe/t").as_str(),
            "https://engine.example.com/unsubscribe/t"
        );
        let mut v = BASE.to_vec();
        v.push(("PUBLIC_BASE_URL", "engine.example.com"));
        assert!(parse(&v)
            .unwrap_err()
            .to_string()
            .contains("PUBLIC_BASE_URL"));
    }

    #[test]
    fn smtp_settings_parse_with_port_defaults() {
        let mut v = BASE.to_vec();
        v.extend([("SMTP_HOST", "smtp.example.com"), ("SMTP_TLS", "implicit")]);
        let s = parse(&v).unwrap().smtp.unwrap();
        assert_eq!(
            (s.port, s.tls, s.credentials),
            (465, TlsMode::Implicit, None)
        );
        v.push(("SMTP_USERNAME", "u"));
        assert_eq!(
            parse(&v).unwrap_err(),
            ConfigError::Missing("SMTP_PASSWORD")
        );
    }

    #[test]
    fn smtp_timeouts_default_to_rfc_5321_and_are_named_when_wrong() {
        let mut v = BASE.to_vec();
        v.push(("SMTP_HOST", "smtp.example.com"));
        let t = parse(&v).unwrap().smtp.unwrap().timeouts;
        assert_eq!(t, SmtpTimeouts::DEFAULT);
        v.extend([
            ("SMTP_TIMEOUT_MS", "2000"),
            ("SMTP_FINAL_REPLY_TIMEOUT_MS", "6000"),
            ("SMTP_CONVERSATION_MAX_MS", "400000"),
        ]);
        let t = parse(&v).unwrap().smtp.unwrap().timeouts;
        assert_eq!((t.command_ms, t.final_reply_ms), (2_000, 6_000));
        // The greeting's RFC default (5 min) fits in a 400 s conversation.
        assert_eq!(t.greeting_ms, 300_000);
        v.push(("SMTP_DATA_BLOCK_TIMEOUT_MS", "500000"));
        let e = parse(&v).unwrap_err();
        assert!(
            matches!(
                &e,
                ConfigError::Invalid {
                    name: "SMTP_DATA_BLOCK_TIMEOUT_MS",
                    ..
                }
            ),
            "{e}"
        );
        let mut v = BASE.to_vec();
        v.extend([
            ("SMTP_HOST", "smtp.example.com"),
            ("SMTP_CONVERSATION_MAX_MS", "900000"),
        ]);
        let e = parse(&v).unwrap_err();
        assert!(e.to_string().contains("Durable Object alarm"), "{e}");
    }

    #[test]
    fn secret_lists_split_on_commas_and_spaces() {
        let mut v = BASE.to_vec();
        v.push(("DUFFEL_WEBHOOK_SECRETS", "old, new  third"));
        assert_eq!(
            parse(&v).unwrap().duffel_webhook_secrets,
            ["old", "new", "third"]
        );
        assert!(parse(&BASE).unwrap().generic_partners.is_empty());
    }

    #[test]
    fn bad_values_name_the_variable() {
        let mut v = BASE.to_vec();
        v.push(("OUTBOX_GAP_MIN_MS", "soon"));
        let e = parse(&v).unwrap_err().to_string();
        assert!(e.contains("OUTBOX_GAP_MIN_MS"), "{e}");
        let mut v = BASE.to_vec();
        v.extend([("OUTBOX_GAP_MIN_MS", "10"), ("OUTBOX_GAP_MAX_MS", "5")]);
        assert!(parse(&v)
            .unwrap_err()
            .to_string()
            .contains("OUTBOX_GAP_MIN_MS"));
        assert_eq!(
            parse(&BASE[..1]).unwrap_err(),
            ConfigError::Missing("SENDER_EMAIL")
        );
        let mut v = BASE.to_vec();
        v.extend([("SMTP_HOST", "h"), ("SMTP_TLS", "ssl3")]);
        assert!(parse(&v).unwrap_err().to_string().contains("SMTP_TLS"));
    }

    #[test]
    fn main_provider_and_marketing_settings() {
        assert_eq!(
            parse(&BASE).unwrap().main_provider,
            MainProvider::Cloudflare
        );
        let mut v = BASE.to_vec();
        v.push(("MAIN_PROVIDER", "resend"));
        assert_eq!(
            parse(&v).unwrap_err(),
            ConfigError::Missing("RESEND_API_KEY")
        );
        v.extend([
            ("RESEND_API_KEY", "re_x"),
            ("RESEND_BASE_URL", "http://127.0.0.1:9/"),
        ]);
        assert_eq!(
            parse(&v).unwrap().main_provider,
            MainProvider::Resend {
                api_key: "re_x".into(),
                base_url: "http://127.0.0.1:9".into()
            }
        );
        let mut v = BASE.to_vec();
        v.push(("MAIN_PROVIDER", "mailgun"));
        assert!(parse(&v).unwrap_err().to_string().contains("MAIN_PROVIDER"));
        // A short unsubscribe key stops marketing only: the configuration still parses.
        let mut v = BASE.to_vec();
        v.push(("UNSUBSCRIBE_SIGNING_KEY", "short"));
        let c = parse(&v).unwrap();
        assert!(c.unsubscribe_signing_key.is_empty());
        assert!(c.refusal("UNSUBSCRIBE_SIGNING_KEY").is_some());
        let mut v = BASE.to_vec();
        v.extend([
            ("MARKETING_DAILY_CAP", "2"),
            ("MARKETING_PER_PERSON_PER_DAY", "1"),
        ]);
        let c = parse(&v).unwrap();
        assert_eq!(c.marketing.daily_cap, 2);
        assert_eq!(c.provider_auth_pause_ms, 3_600_000);
        assert!(c.operator_token.is_empty());
        assert!(c.admin.accounts.is_empty() && c.admin.accounts_error.is_none());
    }
}
