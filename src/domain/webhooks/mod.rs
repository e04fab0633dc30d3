//! Outbound webhooks, the pure part: event types and their envelope, stable event ids, Standard
//! Webhooks signing (<https://www.standardwebhooks.com>, symmetric `v1`), subscriber URL rules,
//! and what each answer of a receiver means for the delivery (retry schedule, dead, disable).
//! The shell (`src/publisher/`, `src/webhooks/`) publishes, enqueues on Cloudflare Queues and
//! fetches.
//!
//! # Envelope (version 1), the exact bytes signed and sent
//! ```json
//! {"id":"evt_…","type":"booking.confirmed","version":1,"createdAt":"2026-12-02T10:00:00.000Z",
//!  "data":{…}}
//! ```
//! `data` per type is documented in docs/suppliers.md "Outbound webhooks".
//!
//! # Headers
//! `webhook-id: evt_…` (the event id: the same on every attempt and redrive; receivers dedupe on
//! it), `webhook-timestamp: <unix seconds of this attempt>`, `webhook-signature: v1,<base64
//! HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` where `key` is the base64-decoded part of the
//! subscriber's `whsec_` secret.
//!
//! May use: `basics`, `event`.

pub mod events;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::net::{Ipv4Addr, Ipv6Addr};
use strum::{EnumIter, EnumString, IntoEnumIterator, IntoStaticStr};

/// Version of the envelope and of every `data` schema; bumped on a breaking change.
pub const SCHEMA_VERSION: u32 = 1;

/// What the engine tells subscribers. Stored and sent as the dotted name (`booking.confirmed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, IntoStaticStr, EnumString, EnumIter)]
pub enum EventType {
    /// A booking was confirmed by its supplier (its journey started).
    #[strum(serialize = "booking.confirmed")]
    BookingConfirmed,
    /// A booking changed: dates, hotel confirmation number, a flight schedule change.
    #[strum(serialize = "booking.updated")]
    BookingUpdated,
    /// A booking was cancelled.
    #[strum(serialize = "booking.cancelled")]
    BookingCancelled,
    /// A paid booking the supplier failed or cancelled was compensated (refund settled).
    #[strum(serialize = "booking.compensated")]
    BookingCompensated,
    /// A client email was accepted by a provider.
    #[strum(serialize = "email.sent")]
    EmailSent,
    /// A client email ended in the dead letters (attempts exhausted or refused for good).
    #[strum(serialize = "email.dead")]
    EmailDead,
    /// A client email was not sent on purpose (suppressed, superseded, blocked, dropped).
    #[strum(serialize = "email.skipped")]
    EmailSkipped,
    /// A provider reported a hard bounce or a complaint for an address (now suppressed).
    #[strum(serialize = "email.bounced")]
    EmailBounced,
    /// A checkout was held as suspected card testing, for the owner.
    #[strum(serialize = "checkout.held")]
    CheckoutHeld,
    /// The one follow-up of an unpaid checkout was handed to the outbox.
    #[strum(serialize = "checkout.follow_up_sent")]
    CheckoutFollowUpSent,
}

crate::domain::basics::stored_names!(EventType);

impl EventType {
    /// Every type, in declaration order.
    pub fn all() -> impl Iterator<Item = EventType> {
        EventType::iter()
    }
}

/// One fact to publish: its type, what caused it (the stable part of its identity, e.g. a booking
/// id and journey version), the booking it is about, and its `data` object.
#[derive(Debug, Clone, PartialEq)]
pub struct Publication {
    pub event_type: EventType,
    pub event_id: String,
    pub booking_id: Option<String>,
    /// The exact envelope bytes (see the module docs).
    pub body: String,
}

/// The event id of `event_type` caused by `cause` (e.g. `"BK-1"` or `"BK-1:v3"`): `evt_` and the
/// first 32 hex digits of SHA-256 over `type \n cause`. Deterministic, so a replayed step or a
/// repeated sweep derives the same id; the cause never appears raw (it may be supplier text).
pub fn event_id(event_type: EventType, cause: &str) -> String {
    let mut h = Sha256::new();
    h.update(event_type.as_str().as_bytes());
    h.update(b"\n");
    h.update(cause.as_bytes());
    format!("evt_{}", &hex::encode(h.finalize())[..32])
}

/// The publication of `event_type` caused by `cause`, with `data`, created at `created_at_ms`
/// (ms UTC; shown as RFC 3339 in the envelope).
pub fn publication(
    event_type: EventType,
    cause: &str,
    booking_id: Option<&str>,
    data: Value,
    created_at_ms: i64,
) -> Publication {
    let event_id = event_id(event_type, cause);
    let created = chrono::DateTime::from_timestamp_millis(created_at_ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let body = json!({
        "id": event_id,
        "type": event_type.as_str(),
        "version": SCHEMA_VERSION,
        "createdAt": created,
        "data": data,
    })
    .to_string();
    Publication {
        event_type,
        event_id,
        booking_id: booking_id.map(str::to_string),
        body,
    }
}

/// Prefix of a Standard Webhooks secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// A new subscriber secret from 32 random bytes: `whsec_<base64>`.
pub fn new_secret(random: &[u8; 32]) -> String {
    format!("{SECRET_PREFIX}{}", BASE64.encode(random))
}

/// Why a secret cannot sign.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("webhook secret is not whsec_<base64>")]
pub struct BadSecret;

/// The `webhook-signature` value for one attempt: `v1,<base64 HMAC-SHA256(key, id.ts.body)>`.
/// `timestamp_s` is Unix seconds. Errors when `secret` is not `whsec_<base64>` (or bare base64).
pub fn sign(secret: &str, id: &str, timestamp_s: i64, body: &str) -> Result<String, BadSecret> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    let key = BASE64.decode(encoded).map_err(|_| BadSecret)?;
    if key.is_empty() {
        return Err(BadSecret);
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| BadSecret)?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp_s.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    Ok(format!("v1,{}", BASE64.encode(mac.finalize().into_bytes())))
}

/// Why a subscriber URL is refused (the message is the API's answer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("url is not a valid absolute URL")]
    Invalid,
    /// The engine is built without a Unicode IDNA back end (the upload size budget): a host name
    /// with non-ASCII letters must be written in its ASCII (punycode) form.
    #[error(
        "url host must be ASCII: write an international domain name in its punycode form (xn--…)"
    )]
    InternationalHost,
    #[error("url is longer than {0} characters")]
    TooLong(usize),
    #[error("url must use https:// (plain http:// only to a loopback address when WEBHOOK_ALLOW_HTTP_LOOPBACK is true)")]
    NotHttps,
    #[error("url must not carry a user name or password")]
    Credentials,
    #[error("url host {0} is not a public host (private, loopback, link-local or reserved)")]
    NotPublic(String),
}

/// Longest subscriber URL accepted, in characters.
pub const URL_MAX_CHARS: usize = 2048;

/// Checks a subscriber URL: absolute, `https://` to a public host (no IP literal in a private,
/// loopback, link-local, shared, documentation or reserved range; not `localhost`, `*.local`,
/// `*.internal`, `*.localhost`), no credentials. `http://` is accepted only to a loopback host
/// and only when `allow_http_loopback` (local development and tests). Host names are not resolved
/// (a Worker cannot); Cloudflare's fetch does not reach private networks in any case.
pub fn check_url(raw: &str, allow_http_loopback: bool) -> Result<url::Url, UrlError> {
    if raw.chars().count() > URL_MAX_CHARS {
        return Err(UrlError::TooLong(URL_MAX_CHARS));
    }
    let u = url::Url::parse(raw.trim()).map_err(|e| match e {
        url::ParseError::IdnaError => UrlError::InternationalHost,
        _ => UrlError::Invalid,
    })?;
    if !u.username().is_empty() || u.password().is_some() {
        return Err(UrlError::Credentials);
    }
    let host = u.host().ok_or(UrlError::Invalid)?;
    let loopback = match &host {
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
    };
    match u.scheme() {
        "https" => {}
        "http" if allow_http_loopback && loopback => return Ok(u),
        _ => return Err(UrlError::NotHttps),
    }
    let public = match &host {
        url::Host::Ipv4(ip) => public_v4(*ip),
        url::Host::Ipv6(ip) => public_v6(*ip),
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            !(loopback
                || !d.contains('.')
                || d.ends_with(".local")
                || d.ends_with(".internal")
                || d.ends_with(".lan")
                || d.ends_with(".home.arpa"))
        }
    };
    if !public {
        return Err(UrlError::NotPublic(host.to_string()));
    }
    Ok(u)
}

fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space, RFC 6598
        || (a == 198 && (b == 18 || b == 19)) // benchmarking, RFC 2544
        || a >= 240)
}

fn public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return public_v4(v4);
    }
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link local
        || first == 0x2001 && ip.segments()[1] == 0x0db8) // documentation
}

/// Event types a subscriber wants: `None` = all (`*`). Errors name the unknown type.
pub fn parse_event_types(list: &[String]) -> Result<Option<Vec<EventType>>, String> {
    if list.is_empty() || list.iter().any(|t| t == "*") {
        return Ok(None);
    }
    let mut out = Vec::new();
    for t in list {
        let ty = EventType::parse(t.trim()).ok_or_else(|| {
            format!(
                "eventTypes: unknown event type {:?}; known: {}",
                crate::domain::basics::text::cut_chars(t, 64),
                EventType::all()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        if !out.contains(&ty) {
            out.push(ty);
        }
    }
    Ok(Some(out))
}

/// Stored form of a subscriber's types: `*` or space-separated names.
pub fn stored_types(types: &Option<Vec<EventType>>) -> String {
    match types {
        None => "*".into(),
        Some(t) => t.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(" "),
    }
}

/// Whether a subscriber whose stored types are `stored` wants `event_type`.
pub fn wants(stored: &str, event_type: EventType) -> bool {
    stored
        .split_whitespace()
        .any(|t| t == "*" || t == event_type.as_str())
}

/// The retry schedule, from configuration (`WEBHOOK_*` vars). Seconds throughout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// First retry delay, s (production 60).
    pub base_s: u32,
    /// Growth per retry (production 3: 1 m, 3 m, 9 m, 27 m, 81 m, 4 h 3 m, 12 h).
    pub factor: u32,
    /// Largest delay, s; Cloudflare Queues allows at most 43,200 (12 h).
    pub cap_s: u32,
    /// Attempts in one budget (first attempt included) before the dead letter queue (8).
    pub max_attempts: u32,
    /// Attempts for a 4xx other than 408/410/429 before the dead letter queue (3).
    pub client_error_attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            base_s: 60,
            factor: 3,
            cap_s: 43_200,
            max_attempts: 8,
            client_error_attempts: 3,
        }
    }
}

/// What happened on one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The receiver answered this HTTP status.
    Status(u16),
    /// No answer within the timeout.
    Timeout,
    /// The connection failed (refused, reset, DNS, TLS).
    Network,
}

/// What to do with a delivery after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// 2xx: done.
    Delivered,
    /// 410 Gone: disable the subscriber and alert the owner; nothing more is sent to it.
    Disable,
    /// Try again after `delay_s` seconds.
    Retry { delay_s: u32 },
    /// To the dead letter queue; `reason` says why.
    Dead { reason: String },
}

/// The decision after attempt number `attempt` (1-based, counted within the current budget) got
/// `answer`. `retry_after_s` is the receiver's `Retry-After` in seconds, if it sent one (honoured
/// for 429/503 when longer than the schedule's delay, at most `cap_s`). `jitter` in `[0, 1)` spreads retries: the delay is
/// drawn from `[d/2, d]` of the exponential delay `d` ("equal jitter").
///
/// - 2xx → `Delivered`; 410 → `Disable`;
/// - 408, 429, 5xx, timeout, connection error → retry until `max_attempts`, then `Dead`;
/// - any other status (3xx: redirects are not followed; other 4xx) → retry until
///   `client_error_attempts`, then `Dead`.
pub fn decide(
    p: &RetryPolicy,
    attempt: u32,
    answer: Answer,
    retry_after_s: Option<u32>,
    jitter: f64,
) -> Decision {
    let what = match answer {
        Answer::Status(s) if (200..300).contains(&s) => return Decision::Delivered,
        Answer::Status(410) => return Decision::Disable,
        Answer::Status(s) => format!("HTTP {s}"),
        Answer::Timeout => "timed out".to_string(),
        Answer::Network => "connection failed".to_string(),
    };
    let ceiling = ceiling(p, answer);
    if attempt >= ceiling {
        return Decision::Dead {
            reason: format!("{what} on attempt {attempt} of {ceiling}"),
        };
    }
    let (base, cap) = (u64::from(p.base_s), u64::from(p.cap_s.max(p.base_s)));
    let growth = u64::from(p.factor.max(1)).saturating_pow(attempt.saturating_sub(1));
    let d = base.saturating_mul(growth).min(cap);
    let jittered = d / 2 + ((d - d / 2) as f64 * jitter.clamp(0.0, 0.999_999)).round() as u64;
    // A receiver's Retry-After (429, 503) is honoured when it asks for more than the schedule,
    // never beyond the cap.
    let delay = match (answer, retry_after_s) {
        (Answer::Status(429 | 503), Some(ra)) => u64::from(ra).max(jittered),
        _ => jittered,
    };
    Decision::Retry {
        delay_s: u32::try_from(delay.min(cap)).unwrap_or(u32::MAX),
    }
}

/// How many attempts in one budget an answer allows: [`RetryPolicy::max_attempts`] for 408,
/// 429, 5xx, a timeout or a connection error (worth waiting for), `client_error_attempts` for any
/// other status (a redirect, another 4xx: retrying rarely helps). The consumer also uses it on the
/// last recorded answer to stop a delivery past its ceiling without another POST.
pub fn ceiling(p: &RetryPolicy, answer: Answer) -> u32 {
    match answer {
        Answer::Status(s) if s == 408 || s == 429 || (500..600).contains(&s) => p.max_attempts,
        Answer::Status(_) => p.client_error_attempts.min(p.max_attempts),
        Answer::Timeout | Answer::Network => p.max_attempts,
    }
}

/// `Retry-After` as whole seconds: delta-seconds only (an HTTP date is ignored: the receiver's
/// clock is not ours). At most a day.
pub fn retry_after_s(value: &str) -> Option<u32> {
    value.trim().parse::<u32>().ok().map(|s| s.min(86_400))
}

/// Longest response excerpt kept per attempt, in bytes.
pub const EXCERPT_MAX_BYTES: usize = 512;

/// At most [`EXCERPT_MAX_BYTES`] of a receiver's answer, on a character boundary, one line.
pub fn excerpt(body: &str) -> String {
    let cut = &body[..body.floor_char_boundary(EXCERPT_MAX_BYTES)];
    cut.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The delivery id of `event_id` for `subscriber_id`.
pub fn delivery_id(event_id: &str, subscriber_id: &str) -> String {
    format!("{event_id}.{subscriber_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in EventType::all() {
            assert_eq!(EventType::parse(t.as_str()), Some(t));
        }
    }
}
