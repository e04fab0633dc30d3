//! The production guard: unless development is declared (`ENGINE_ENV=development`, in
//! `.dev.vars` only, never in `wrangler.toml`), the engine refuses to run a feature on a secret
//! anyone can read — a value published in the repository's `.dev.vars.example`, recognised by the
//! key it produces — or on a signing key or operator token shorter than [`MIN_SECRET_BYTES`],
//! refuses SMTP credentials that would cross the network without TLS, and writes no link to a
//! public base URL that is missing, loopback or plain `http://`. Each refusal turns that feature
//! off (its secret is cleared, as if unset) and is listed in [`super::Config::refused`], naming the
//! variable, for the log and the operator (admin overview, `GET /admin/health`); `/health` tells
//! the world only `degraded`. Everything else keeps running (a correctly configured source's
//! webhooks still work). What no environment may run with (one key under two partner names, an
//! unsubscribe key shorter than [`MIN_SECRET_BYTES`]) is refused in development too.
//!
//! Pure: the shell logs the list and answers from it.

use super::{Config, ConfigError, Refusal};
use crate::domain::event::ownership::PartnerSecret;

/// Shortest signing key or operator token accepted in production, bytes (256 bits: HMAC-SHA-256
/// keys shorter than the hash add nothing, and a bearer token must not be guessable).
pub const MIN_SECRET_BYTES: usize = 32;

/// The repository's example secrets file: every value in it is public.
const EXAMPLE: &str = include_str!("../../.dev.vars.example");

/// Where the engine runs (`ENGINE_ENV`). Production unless development is declared: an
/// environment that forgot the variable runs under every check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineEnv {
    /// Every guard check applies (`ENGINE_ENV` unset, empty or `production`).
    #[default]
    Production,
    /// `ENGINE_ENV=development`: the published example secrets and a loopback `http://`
    /// `PUBLIC_BASE_URL` are what local development runs with.
    Development,
}

impl EngineEnv {
    /// `ENGINE_ENV` as given (trimmed; `None` or empty = production). Any other word than
    /// `production` or `development` is a [`ConfigError::Invalid`] naming it.
    pub fn parse(value: Option<&str>) -> Result<Self, ConfigError> {
        match value.map(str::trim).unwrap_or_default() {
            "" | "production" => Ok(EngineEnv::Production),
            "development" => Ok(EngineEnv::Development),
            other => Err(ConfigError::Invalid {
                name: "ENGINE_ENV",
                reason: format!("{other:?} is neither \"production\" nor \"development\""),
            }),
        }
    }

    /// `production` or `development`.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineEnv::Production => "production",
            EngineEnv::Development => "development",
        }
    }
}

impl Config {
    /// The refusal of `variable`, if the configuration refused it.
    pub fn refusal(&self, variable: &str) -> Option<&Refusal> {
        self.refused.iter().find(|r| r.variable == variable)
    }
}

/// The secrets whose published example values are refused in production. Values of other
/// variables in the example file (SMTP host, pacing) are settings, not secrets.
const SECRET_VARIABLES: [&str; 10] = [
    "LITEAPI_WEBHOOK_TOKEN",
    "DUFFEL_WEBHOOK_SECRETS",
    "GENERIC_WEBHOOK_SECRETS",
    "STRIPE_WEBHOOK_SECRETS",
    "RESEND_WEBHOOK_SECRETS",
    "ACTION_SIGNING_KEY",
    "UNSUBSCRIBE_SIGNING_KEY",
    "OPERATOR_TOKEN",
    "ADMIN_ACCOUNTS",
    "REPLY_SIGNING_KEY",
];

/// The admin passwords `.dev.vars.example` publishes (its comment names the password of its
/// `ADMIN_ACCOUNTS` entry; a test checks that entry is this password's hash). Outside
/// development no account signs in with one of them, whatever salt its entry was made with.
pub const PUBLISHED_ADMIN_PASSWORDS: [&str; 1] = ["dev-admin-password"];

/// The variables holding Standard Webhooks secrets: their key is the base64 after `whsec_`.
const STANDARD_WEBHOOKS: [&str; 2] = ["GENERIC_WEBHOOK_SECRETS", "RESEND_WEBHOOK_SECRETS"];

/// The published values of `name` in `.dev.vars.example`, one per list entry (split on commas
/// and whitespace, as the engine splits its secret lists); a `partner=secret` entry counts by its
/// secret too.
pub fn published(name: &str) -> Vec<String> {
    let mut values = Vec::new();
    for line in EXAMPLE.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() != name || line.trim_start().starts_with('#') {
            continue;
        }
        for entry in value
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|e| !e.is_empty())
        {
            values.push(entry.to_string());
            if let Some((_, secret)) = entry
                .split_once('=')
                .filter(|(_, s)| s.starts_with("whsec_"))
            {
                values.push(secret.to_string());
            }
        }
    }
    values
}

/// `true` when `url`'s host reaches only the machine it is typed on, so no guest or owner can
/// follow a link to it: a loopback or unspecified address in any spelling the URL parser
/// (WHATWG, <https://url.spec.whatwg.org/#host-parsing>) accepts — `127.0.0.0/8`, `0.0.0.0`,
/// `::1`, `::`, and those written as IPv4-mapped or IPv4-compatible IPv6 (`[::ffff:127.0.0.1]`)
/// — or the name `localhost`, any `*.localhost` (RFC 6761 §6.3), with or without a final dot.
pub fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => name_is_loopback(d),
        Some(url::Host::Ipv4(ip)) => ip_is_local_only(ip.into()),
        Some(url::Host::Ipv6(ip)) => ip_is_local_only(ip.into()),
        None => false,
    }
}

/// `localhost` or a name under it (RFC 6761 §6.3), any case, final dot or not.
fn name_is_loopback(name: &str) -> bool {
    let d = name.trim_end_matches('.').to_ascii_lowercase();
    d == "localhost" || d.ends_with(".localhost")
}

/// A loopback or unspecified address, IPv4 also when written inside IPv6 (mapped `::ffff:a.b.c.d`,
/// RFC 4291 §2.5.5.2, or the deprecated compatible `::a.b.c.d`, §2.5.5.1).
fn ip_is_local_only(ip: std::net::IpAddr) -> bool {
    use std::net::IpAddr;
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_unspecified(),
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                // `to_ipv4` reads both the mapped and the compatible form.
                || v6.to_ipv4().is_some_and(|v4| v4.is_loopback() || v4.is_unspecified())
        }
    }
}

/// `true` when `host` (an SMTP host setting: a name or an IP address, IPv6 with or without
/// brackets) is a loopback name or address.
fn host_is_loopback(host: &str) -> bool {
    let h = host.trim().trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = h.parse::<std::net::IpAddr>() {
        return ip_is_local_only(ip);
    }
    name_is_loopback(h)
}

/// Whether `value` of variable `name` is a published one, by the key it produces: for Standard
/// Webhooks secrets the decoded key bytes (`whsec_QUFB` and `QUFB` are one key), for the others
/// the value with or without a `whsec_` prefix (a published Stripe secret stripped of its prefix
/// is no secret either).
fn is_published(name: &str, value: &str) -> bool {
    use crate::domain::basics::secret::standard_webhooks_key;
    if value.is_empty() {
        return false;
    }
    let bare = |v: &str| v.strip_prefix("whsec_").unwrap_or(v).to_string();
    let key = STANDARD_WEBHOOKS
        .contains(&name)
        .then(|| standard_webhooks_key(value))
        .flatten();
    published(name)
        .iter()
        .any(|p| bare(p) == bare(value) || key.is_some() && standard_webhooks_key(p) == key)
}

/// Why `PUBLIC_BASE_URL` may carry no link outside development, if it may not: unset (`given`
/// false; the engine then reads it as loopback), a loopback address, or not `https://`.
fn public_base_refusal(given: bool, url: &url::Url) -> Option<String> {
    const OFF: &str = "owner action links and marketing are off";
    if !given {
        return Some(format!(
            "is not set: links are never written to a loopback address outside development \
             (ENGINE_ENV=development); {OFF}"
        ));
    }
    if is_loopback(url) {
        return Some(format!(
            "is a loopback address (or an unspecified one; either reaches only this machine): \
             links are never written to one outside development \
             (ENGINE_ENV=development); {OFF}"
        ));
    }
    (url.scheme() != "https").then(|| {
        format!(
            "is not https://: links that move money or unsubscribe would travel in clear; {OFF}"
        )
    })
}

/// Applies the guard to a parsed configuration; `public_base_given` says whether
/// `PUBLIC_BASE_URL` was set (unset, it reads as `http://127.0.0.1:8787`). Every refusal clears
/// what it refuses and is appended to `cfg.refused`.
pub(super) fn apply(cfg: &mut Config, public_base_given: bool) {
    let mut refused: Vec<Refusal> = Vec::new();
    let mut refuse = |variable: &'static str, reason: &str| {
        refused.push(Refusal {
            variable,
            reason: reason.to_string(),
        })
    };
    // Whatever the environment: bearer tokens are kept without their scheme, so `Bearer <token>`
    // stored is the token (the published one is recognised below) and a presented
    // `Bearer Bearer <token>` is no other token (both sides read by `bearer_token`).
    for token in [&mut cfg.liteapi_webhook_token, &mut cfg.operator_token] {
        *token = crate::domain::basics::secret::bearer_token(token).to_string();
    }
    // Whatever the environment: marketing never goes out with a guessable unsubscribe key (the
    // rest of the engine runs on).
    let unsubscribe = cfg.unsubscribe_signing_key.len();
    if unsubscribe > 0 && unsubscribe < MIN_SECRET_BYTES {
        cfg.unsubscribe_signing_key.clear();
        refuse(
            "UNSUBSCRIBE_SIGNING_KEY",
            &format!(
                "is {unsubscribe} bytes; at least {MIN_SECRET_BYTES} are needed: marketing sends are refused"
            ),
        );
    }
    if cfg.engine_env == EngineEnv::Development {
        cfg.refused.extend(refused);
        return;
    }
    const PUBLISHED: &str = "is a value published in .dev.vars.example";

    if is_published("LITEAPI_WEBHOOK_TOKEN", &cfg.liteapi_webhook_token) {
        cfg.liteapi_webhook_token.clear();
        refuse(
            "LITEAPI_WEBHOOK_TOKEN",
            &format!("{PUBLISHED}: liteAPI webhooks are refused (401)"),
        );
    }
    for (name, list) in [
        ("DUFFEL_WEBHOOK_SECRETS", &mut cfg.duffel_webhook_secrets),
        ("STRIPE_WEBHOOK_SECRETS", &mut cfg.stripe_webhook_secrets),
        ("RESEND_WEBHOOK_SECRETS", &mut cfg.resend_webhook_secrets),
    ] {
        if list.iter().any(|s| is_published(name, s)) {
            list.clear();
            let name: &'static str = name;
            refuse(
                name,
                &format!("{PUBLISHED}: this source's webhooks are refused (401)"),
            );
        }
    }
    // Per partner: the partner holding a published secret is off, the others keep working.
    let bad: Vec<String> = cfg
        .generic_partners
        .iter()
        .filter(|p| is_published("GENERIC_WEBHOOK_SECRETS", &p.secret))
        .map(|p| p.partner.clone())
        .collect();
    if !bad.is_empty() {
        cfg.generic_partners
            .retain(|p: &PartnerSecret| !bad.contains(&p.partner));
        let mut names = bad.clone();
        names.dedup();
        refuse(
            "GENERIC_WEBHOOK_SECRETS",
            &format!(
                "{PUBLISHED}: deliveries of partner(s) {} are refused (401)",
                names.join(", ")
            ),
        );
    }
    for (name, key, off) in [
        (
            "ACTION_SIGNING_KEY",
            &mut cfg.action_signing_key,
            "owner action links are off",
        ),
        (
            "UNSUBSCRIBE_SIGNING_KEY",
            &mut cfg.unsubscribe_signing_key,
            "marketing sends are refused",
        ),
        (
            "OPERATOR_TOKEN",
            &mut cfg.operator_token,
            "the operator API's bearer token is off",
        ),
        (
            "REPLY_SIGNING_KEY",
            &mut cfg.replies.signing_key,
            "reply addresses are off: guest emails carry none, and replies are kept unmatched",
        ),
    ] {
        if key.is_empty() {
            continue;
        }
        let why = if is_published(name, key) {
            PUBLISHED.to_string()
        } else if key.len() < MIN_SECRET_BYTES {
            format!(
                "is {} bytes; at least {MIN_SECRET_BYTES} are needed",
                key.len()
            )
        } else {
            continue;
        };
        key.clear();
        refuse(name, &format!("{why}: {off}"));
    }
    // No link to an address nobody else can reach or that travels in clear: owner action links
    // go (their key is cleared) and marketing stops (`Config::refusal` is read by its route);
    // unsubscribe links already sent keep working.
    if let Some(why) = public_base_refusal(public_base_given, &cfg.public_base) {
        cfg.action_signing_key.clear();
        refuse("PUBLIC_BASE_URL", &why);
    }
    // The published entry is refused here by its salt and hash; the published password under
    // any other salt can only be recognised where it is typed, so every account refuses it at
    // sign-in (`Account::signs_in`) rather than hashing it for each account at every start.
    let example_accounts =
        crate::domain::admin::password::parse_accounts(&published("ADMIN_ACCOUNTS").join(","))
            .unwrap_or_default();
    let before = cfg.admin.accounts.len();
    cfg.admin.accounts.retain(|a| {
        !example_accounts
            .iter()
            .any(|e| e.hash.tag() == a.hash.tag())
    });
    if cfg.admin.accounts.len() < before {
        refuse(
            "ADMIN_ACCOUNTS",
            &format!("holds an account {PUBLISHED} (its password is public): that account cannot sign in"),
        );
    }
    for account in &mut cfg.admin.accounts {
        account.refused_passwords = &PUBLISHED_ADMIN_PASSWORDS;
    }
    if let Some(smtp) = &cfg.smtp {
        if smtp.credentials.is_some()
            && smtp.tls == crate::domain::outbox::smtp::TlsMode::Off
            && !host_is_loopback(&smtp.host)
        {
            cfg.smtp = None;
            refuse(
                "SMTP_TLS",
                "is off while SMTP_USERNAME / SMTP_PASSWORD are set: the password would cross the network in clear; SMTP failover is off (use starttls or implicit)",
            );
        }
    }
    cfg.refused.extend(refused);
}

/// The variables [`apply`] looks at for published values (documentation and tests).
pub fn secret_variables() -> &'static [&'static str] {
    &SECRET_VARIABLES
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::testing::production as parse;
    use std::collections::HashMap;

    const STRONG: &str = "a-production-key-of-forty-bytes-0123456789";

    fn example(name: &str) -> String {
        published(name).join(" ")
    }

    fn refused(c: &Config) -> Vec<&'static str> {
        c.refused.iter().map(|r| r.variable).collect()
    }

    #[test]
    fn the_example_file_is_read() {
        assert_eq!(published("LITEAPI_WEBHOOK_TOKEN"), ["dev-liteapi-token"]);
        for name in secret_variables() {
            assert!(!published(name).is_empty(), "{name} has no published value");
        }
        assert!(published("SMTP_HOST").contains(&"127.0.0.1".to_string()));
    }

    #[test]
    fn the_published_admin_passwords_are_those_of_the_published_entries() {
        let accounts =
            crate::domain::admin::password::parse_accounts(&published("ADMIN_ACCOUNTS").join(","))
                .unwrap();
        assert!(!accounts.is_empty());
        for a in &accounts {
            assert!(
                PUBLISHED_ADMIN_PASSWORDS.iter().any(|p| a.hash.verify(p)),
                "{a:?}: its password is not listed in PUBLISHED_ADMIN_PASSWORDS"
            );
        }
        for password in PUBLISHED_ADMIN_PASSWORDS {
            assert!(
                EXAMPLE.contains(&format!("password `{password}`")),
                "{password}"
            );
        }
    }

    #[test]
    fn the_published_admin_password_signs_in_in_development_only() {
        use crate::domain::admin::password::{check, PasswordHash};
        let salt = b"fresh-salt-16byt".to_vec();
        let entry = PasswordHash::of("dev-admin-password", salt, 1_000).entry("owner");
        let dev = parse(&[("ENGINE_ENV", "development"), ("ADMIN_ACCOUNTS", &entry)]);
        assert_eq!(
            check(&dev.admin.accounts, "owner", "dev-admin-password"),
            Some("owner")
        );
        let prod = parse(&[("ADMIN_ACCOUNTS", &entry)]);
        assert_eq!(
            check(&prod.admin.accounts, "owner", "dev-admin-password"),
            None
        );
        // A real password on the same engine signs in.
        let salt = b"fresh-salt-16byt".to_vec();
        let real = PasswordHash::of("a real passphrase", salt, 1_000).entry("owner");
        let prod = parse(&[("ADMIN_ACCOUNTS", &real)]);
        assert_eq!(
            check(&prod.admin.accounts, "owner", "a real passphrase"),
            Some("owner")
        );
    }

    #[test]
    fn a_published_bearer_token_is_recognised_however_its_scheme_is_written() {
        for stored in [
            "Bearer dev-liteapi-token",
            "bearer  Bearer dev-liteapi-token",
        ] {
            let c = parse(&[("LITEAPI_WEBHOOK_TOKEN", stored)]);
            assert_eq!(refused(&c), ["LITEAPI_WEBHOOK_TOKEN"], "{stored}");
        }
        let operator = published("OPERATOR_TOKEN").into_iter().next().unwrap();
        let c = parse(&[("OPERATOR_TOKEN", &format!("Bearer {operator}"))]);
        assert_eq!(refused(&c), ["OPERATOR_TOKEN"]);
        assert!(c.operator_token.is_empty());
        // A real token stored with its scheme is the token.
        let c = parse(&[("LITEAPI_WEBHOOK_TOKEN", "Bearer a-real-liteapi-token")]);
        assert_eq!(c.liteapi_webhook_token, "a-real-liteapi-token");
    }

    #[test]
    fn a_correct_production_configuration_starts_everything() {
        let c = parse(&[
            ("LITEAPI_WEBHOOK_TOKEN", "a-real-liteapi-token"),
            ("ACTION_SIGNING_KEY", STRONG),
            ("UNSUBSCRIBE_SIGNING_KEY", STRONG),
            ("OPERATOR_TOKEN", STRONG),
            (
                "GENERIC_WEBHOOK_SECRETS",
                "acme=whsec_cmVhbC1zZWNyZXQtb2YtYWNtZQ==",
            ),
            ("SMTP_HOST", "smtp.example.com"),
            ("SMTP_TLS", "starttls"),
            ("SMTP_USERNAME", "u"),
            ("SMTP_PASSWORD", "p"),
        ]);
        assert_eq!(c.refused, []);
        assert!(c.smtp.is_some() && !c.operator_token.is_empty());
    }

    #[test]
    fn every_published_secret_is_refused_in_production_and_named() {
        let mut pairs: Vec<(&str, String)> = secret_variables()
            .iter()
            .map(|n| (*n, example(n)))
            .collect();
        pairs.push((
            "DUFFEL_WEBHOOK_SECRETS",
            format!("{} another-real-secret", example("DUFFEL_WEBHOOK_SECRETS")),
        ));
        let borrowed: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let c = parse(&borrowed);
        let mut names = refused(&c);
        names.sort();
        let mut want = secret_variables().to_vec();
        want.sort();
        assert_eq!(names, want);
        assert!(c.liteapi_webhook_token.is_empty());
        assert!(c.duffel_webhook_secrets.is_empty() && c.stripe_webhook_secrets.is_empty());
        assert!(c.resend_webhook_secrets.is_empty() && c.generic_partners.is_empty());
        assert!(c.action_signing_key.is_empty() && c.unsubscribe_signing_key.is_empty());
        assert!(c.operator_token.is_empty() && c.admin.accounts.is_empty());
        for r in &c.refused {
            assert!(r.reason.contains(".dev.vars.example"), "{r:?}");
        }
    }

    /// Every published secret, at `base` (`None`: `PUBLIC_BASE_URL` unset), with `ENGINE_ENV`.
    fn published_everything(base: Option<&str>, env: Option<&str>) -> Config {
        let mut map: HashMap<String, String> = secret_variables()
            .iter()
            .map(|n| (n.to_string(), example(n)))
            .chain([
                ("OWNER_EMAIL".into(), "owner@example.com".into()),
                ("SENDER_EMAIL".into(), "bookings@mail.example.com".into()),
            ])
            .collect();
        map.extend(base.map(|b| ("PUBLIC_BASE_URL".to_string(), b.to_string())));
        map.extend(env.map(|e| ("ENGINE_ENV".to_string(), e.to_string())));
        Config::parse(|k| map.get(k).cloned()).unwrap()
    }

    #[test]
    fn locally_the_published_values_are_the_point_once_development_is_declared() {
        let c = published_everything(Some("http://127.0.0.1:8787"), Some("development"));
        assert_eq!(c.refused, []);
        assert_eq!(c.engine_env, EngineEnv::Development);
        assert_eq!(c.liteapi_webhook_token, "dev-liteapi-token");
        assert_eq!(
            published_everything(None, Some(" development ")).refused,
            []
        );
        for url in [
            "http://localhost:8787",
            "http://[::1]:8787",
            "http://127.1.2.3",
            "http://127.0.0.2",
            "http://app.localhost",
            "https://LOCALHOST.",
            "https://app.localhost.",
            "https://0.0.0.0:8787",
            "https://[::]:8787",
            "https://[::ffff:127.0.0.1]",
            "https://[::ffff:0.0.0.0]",
            "https://[::127.0.0.1]",
            "https://0x7f.1",
        ] {
            assert!(is_loopback(&url::Url::parse(url).unwrap()), "{url}");
        }
        for url in [
            "https://engine.example.com",
            "https://127.0.0.1.example.com",
            "https://localhost.example.com",
            "http://10.0.0.1",
            "https://[::ffff:203.0.113.7]",
            "https://[2001:db8::1]",
        ] {
            assert!(!is_loopback(&url::Url::parse(url).unwrap()), "{url}");
        }
    }

    #[test]
    fn short_keys_and_tokens_are_refused_with_their_length() {
        let c = parse(&[
            ("ACTION_SIGNING_KEY", "short-key"),
            ("OPERATOR_TOKEN", "0123456789012345678901234567890"),
        ]);
        assert_eq!(refused(&c), ["ACTION_SIGNING_KEY", "OPERATOR_TOKEN"]);
        assert!(
            c.refused[0].reason.starts_with("is 9 bytes; at least 32"),
            "{:?}",
            c.refused
        );
        assert!(
            c.refused[1].reason.contains("is 31 bytes"),
            "{:?}",
            c.refused
        );
        // Supplier secrets are theirs to choose: no length rule.
        assert_eq!(parse(&[("LITEAPI_WEBHOOK_TOKEN", "short")]).refused, []);
    }

    #[test]
    fn only_the_partner_holding_a_published_secret_is_refused() {
        let secrets = format!(
            "{} globex=whsec_cmVhbC1zZWNyZXQtb2YtZ2xvYmV4",
            example("GENERIC_WEBHOOK_SECRETS")
        );
        let c = parse(&[("GENERIC_WEBHOOK_SECRETS", &secrets)]);
        assert_eq!(refused(&c), ["GENERIC_WEBHOOK_SECRETS"]);
        assert!(c.refused[0].reason.contains("default"), "{:?}", c.refused);
        let left: Vec<&str> = c
            .generic_partners
            .iter()
            .map(|p| p.partner.as_str())
            .collect();
        assert_eq!(left, ["globex"]);
    }

    #[test]
    fn smtp_credentials_in_clear_over_the_network_are_refused() {
        let creds = [
            ("SMTP_USERNAME", "u"),
            ("SMTP_PASSWORD", "p"),
            ("SMTP_TLS", "off"),
        ];
        let remote = [&creds[..], &[("SMTP_HOST", "smtp.example.com")]].concat();
        let c = parse(&remote);
        assert_eq!(refused(&c), ["SMTP_TLS"]);
        assert!(c.smtp.is_none());
        // On this machine the password crosses no network (a local test server).
        for host in ["127.0.0.1", "localhost", "::1"] {
            let local = [&creds[..], &[("SMTP_HOST", host)]].concat();
            assert_eq!(parse(&local).refused, [], "{host}");
        }
        // Without credentials there is nothing to protect.
        assert_eq!(
            parse(&[("SMTP_HOST", "smtp.example.com"), ("SMTP_TLS", "off")]).refused,
            []
        );
    }

    #[test]
    fn a_refused_partner_list_is_named_whatever_the_environment() {
        for shared in ["a=whsec_QUFB b=whsec_QUFB", "a=whsec_QUFB QUFB"] {
            let c = parse(&[
                ("ENGINE_ENV", "development"),
                ("GENERIC_WEBHOOK_SECRETS", shared),
            ]);
            assert_eq!(refused(&c), ["GENERIC_WEBHOOK_SECRETS"], "{shared}");
            assert!(c.generic_partners.is_empty());
        }
    }

    #[test]
    fn without_engine_env_a_loopback_or_missing_base_url_is_no_excuse() {
        // A production section that forgot PUBLIC_BASE_URL (it reads as loopback), or set it to
        // this machine: every published secret is refused, and no link is written.
        for base in [
            None,
            Some("http://127.0.0.1:8787"),
            Some("http://localhost"),
        ] {
            let c = published_everything(base, None);
            let mut names = refused(&c);
            names.sort();
            let mut want = secret_variables().to_vec();
            want.push("PUBLIC_BASE_URL");
            want.sort();
            assert_eq!(names, want, "{base:?}");
            assert!(c.liteapi_webhook_token.is_empty() && c.admin.accounts.is_empty());
            let why = &c.refusal("PUBLIC_BASE_URL").unwrap().reason;
            assert!(
                why.contains("owner action links and marketing are off"),
                "{why}"
            );
            assert!(why.contains(if base.is_none() {
                "is not set"
            } else {
                "loopback"
            }));
        }
        assert_eq!(parse(&[("ENGINE_ENV", "production")]).refused, []);
        assert_eq!(
            EngineEnv::parse(Some("dev")).unwrap_err().to_string(),
            "configuration variable ENGINE_ENV is invalid: \"dev\" is neither \"production\" nor \"development\""
        );
    }

    #[test]
    fn an_http_base_url_turns_owner_links_and_marketing_off() {
        let c = parse(&[
            ("PUBLIC_BASE_URL", "http://engine.example.com"),
            ("ACTION_SIGNING_KEY", STRONG),
            ("UNSUBSCRIBE_SIGNING_KEY", STRONG),
        ]);
        assert_eq!(refused(&c), ["PUBLIC_BASE_URL"]);
        assert!(c.refused[0].reason.contains("is not https://"));
        // Links are off; the unsubscribe key stays, so links already sent keep working (the
        // marketing route reads the refusal).
        assert!(c.action_signing_key.is_empty());
        assert_eq!(c.unsubscribe_signing_key, STRONG);
        // In development a plain-http base is how `wrangler dev` runs.
        let dev = parse(&[
            ("ENGINE_ENV", "development"),
            ("PUBLIC_BASE_URL", "http://engine.example.com"),
            ("ACTION_SIGNING_KEY", STRONG),
        ]);
        assert_eq!(dev.refused, []);
    }

    #[test]
    fn published_secrets_are_recognised_by_the_key_they_produce() {
        let bare = |name: &str| {
            let v = published(name).into_iter().next().unwrap();
            v.strip_prefix("whsec_").unwrap_or(&v).to_string()
        };
        for name in [
            "GENERIC_WEBHOOK_SECRETS",
            "RESEND_WEBHOOK_SECRETS",
            "STRIPE_WEBHOOK_SECRETS",
        ] {
            let v = bare(name);
            assert!(!v.starts_with("whsec_") && !v.is_empty());
            let c = parse(&[(name, v.as_str())]);
            assert_eq!(refused(&c), [name], "{name} written without whsec_");
        }
        // A Standard Webhooks key with the prefix added to what was published bare is the same.
        assert!(is_published(
            "GENERIC_WEBHOOK_SECRETS",
            &format!("whsec_{}", bare("GENERIC_WEBHOOK_SECRETS"))
        ));
        assert!(!is_published("GENERIC_WEBHOOK_SECRETS", "whsec_QUFB"));
    }

    #[test]
    fn a_short_unsubscribe_key_stops_marketing_only_in_any_environment() {
        for env in ["production", "development"] {
            let c = parse(&[
                ("ENGINE_ENV", env),
                ("UNSUBSCRIBE_SIGNING_KEY", "short"),
                ("ACTION_SIGNING_KEY", STRONG),
            ]);
            assert_eq!(refused(&c), ["UNSUBSCRIBE_SIGNING_KEY"], "{env}");
            assert!(c.refused[0].reason.contains("marketing sends are refused"));
            assert!(c.unsubscribe_signing_key.is_empty());
            assert_eq!(c.action_signing_key, STRONG);
        }
    }
}
