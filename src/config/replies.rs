//! Guests' replies: the reply address every guest email about a booking carries, and the bounds on
//! inbound mail (docs/internals.md "Guests' replies").
//!
//! | variable | meaning |
//! |---|---|
//! | `REPLY_DOMAIN` | the domain of reply addresses (`reply+TOKEN@REPLY_DOMAIN`), routed to this Worker by Email Routing; empty = replies off |
//! | `REPLY_SIGNING_KEY` (secret) | HMAC key of reply tokens (≥ 32 bytes in production) |
//! | `REPLY_TOKEN_TTL_DAYS` | how long a reply address works after its email, days (400) |
//! | `INBOUND_READ_MAX_BYTES` | bytes of a message read (4 MiB) |
//! | `INBOUND_ALERTS_PER_BOOKING_PER_DAY` | guest messages alerted per booking and UTC day (5) |
//! | `INBOUND_MAX_PER_BOOKING` | messages kept per booking from the guest's own address (200) |
//! | `INBOUND_MAX_PER_BOOKING_OTHERS` | messages kept per booking from all other senders together (50) |
//! | `INBOUND_UNMATCHED_PER_DAY` | unmatched messages kept per UTC day (200) |
//! | `INBOUND_AUTHSERV_ID` | the authserv-id whose `Authentication-Results` are trusted (`mx.cloudflare.net`, Email Routing's) |

use super::{number, text, ConfigError};
use crate::domain::inbound::{InboundLimits, CLOUDFLARE_AUTHSERV_ID};

/// Default lifetime of a reply address, days: a guest may answer a confirmation a year later,
/// after the stay.
pub const DEFAULT_TOKEN_TTL_DAYS: i64 = 400;

/// The reply settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyConfig {
    /// `REPLY_DOMAIN`, lower case, without `@`; empty when replies are off.
    pub domain: String,
    /// `REPLY_SIGNING_KEY`; empty when unset or refused by the production guard.
    pub signing_key: String,
    /// `REPLY_TOKEN_TTL_DAYS` in ms.
    pub token_ttl_ms: i64,
    /// `INBOUND_*`.
    pub limits: InboundLimits,
    /// `INBOUND_AUTHSERV_ID`, lower case: only an `Authentication-Results` header with this
    /// authserv-id is read (`crate::domain::inbound::trusted_verdicts`).
    pub authserv_id: String,
}

impl ReplyConfig {
    /// Whether guest emails get a reply address (a domain and a key).
    pub fn enabled(&self) -> bool {
        !self.domain.is_empty() && !self.signing_key.is_empty()
    }
}

/// Parses the reply settings. `REPLY_DOMAIN` must be a bare domain name (letters, digits, `-`,
/// `.`), else [`ConfigError::Invalid`].
pub fn parse(get: &impl Fn(&str) -> Option<String>) -> Result<ReplyConfig, ConfigError> {
    let domain = text(get, "REPLY_DOMAIN")?
        .unwrap_or_default()
        .trim_start_matches('@')
        .to_ascii_lowercase();
    if !domain.is_empty()
        && (domain.len() > 253
            || !domain.contains('.')
            || !domain
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.'))
    {
        return Err(ConfigError::Invalid {
            name: "REPLY_DOMAIN",
            reason: format!("{domain:?} is not a domain name"),
        });
    }
    let authserv_id = text(get, "INBOUND_AUTHSERV_ID")?
        .map(|id| id.trim().to_ascii_lowercase())
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| CLOUDFLARE_AUTHSERV_ID.to_string());
    if authserv_id.len() > 253
        || !authserv_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
    {
        return Err(ConfigError::Invalid {
            name: "INBOUND_AUTHSERV_ID",
            reason: format!("{authserv_id:?} is not a host name"),
        });
    }
    let d = InboundLimits::DEFAULT;
    Ok(ReplyConfig {
        authserv_id,
        domain,
        signing_key: text(get, "REPLY_SIGNING_KEY")?.unwrap_or_default(),
        token_ttl_ms: number(get, "REPLY_TOKEN_TTL_DAYS", DEFAULT_TOKEN_TTL_DAYS)?.max(1)
            * 86_400_000,
        limits: InboundLimits {
            read_max_bytes: number(get, "INBOUND_READ_MAX_BYTES", d.read_max_bytes)?.max(64 * 1024),
            alerts_per_booking_per_day: number(
                get,
                "INBOUND_ALERTS_PER_BOOKING_PER_DAY",
                d.alerts_per_booking_per_day,
            )?,
            max_per_booking: number(get, "INBOUND_MAX_PER_BOOKING", d.max_per_booking)?,
            max_per_booking_others: number(
                get,
                "INBOUND_MAX_PER_BOOKING_OTHERS",
                d.max_per_booking_others,
            )?,
            unmatched_per_day: number(get, "INBOUND_UNMATCHED_PER_DAY", d.unmatched_per_day)?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_with(vars: &[(&str, &str)]) -> Result<ReplyConfig, ConfigError> {
        parse(&|name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn replies_are_off_without_a_domain_or_a_key_and_bounded_by_default() {
        let off = parse_with(&[]).unwrap();
        assert!(!off.enabled());
        assert_eq!(off.limits, InboundLimits::DEFAULT);
        assert_eq!(off.token_ttl_ms, 400 * 86_400_000);
        let on = parse_with(&[
            ("REPLY_DOMAIN", "Reply.Example.com"),
            ("REPLY_SIGNING_KEY", "k".repeat(32).as_str()),
            ("INBOUND_ALERTS_PER_BOOKING_PER_DAY", "2"),
        ])
        .unwrap();
        assert!(on.enabled());
        assert_eq!(on.domain, "reply.example.com");
        assert_eq!(on.limits.alerts_per_booking_per_day, 2);
        assert!(!parse_with(&[("REPLY_DOMAIN", "reply.example.com")])
            .unwrap()
            .enabled());
        assert_eq!(off.authserv_id, "mx.cloudflare.net");
        let own = parse_with(&[("INBOUND_AUTHSERV_ID", " MX.Example.net ")]).unwrap();
        assert_eq!(own.authserv_id, "mx.example.net");
        let e = parse_with(&[("INBOUND_AUTHSERV_ID", "mx.example.net; dkim=pass")]).unwrap_err();
        assert!(e.to_string().contains("INBOUND_AUTHSERV_ID"), "{e}");
    }

    #[test]
    fn a_reply_domain_that_is_not_a_domain_is_refused_by_name() {
        for bad in ["localhost", "a b.com", "x@y.com>", "reply.example.com/x"] {
            let e = parse_with(&[("REPLY_DOMAIN", bad)]).unwrap_err();
            assert!(e.to_string().contains("REPLY_DOMAIN"), "{bad}: {e}");
        }
    }
}
