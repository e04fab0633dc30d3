//! Reply addresses: every guest email about a booking carries
//! `Reply-To: <brand> <reply+TOKEN@REPLY_DOMAIN>`, and a guest's answer to it comes back to the
//! Worker's `email()` handler (Cloudflare Email Routing, plus-addressing:
//! <https://developers.cloudflare.com/email-routing/setup/email-routing-addresses/#subaddressing>).
//! The token alone decides which booking a message is about; the `From` header never does.
//!
//! A token names **the email it answers** (a reference derived from that email's dedupe key) and
//! **its booking** (a short hash of the booking id, checked against the stored reference), with
//! the hour it was issued, signed with HMAC-SHA-256 under `REPLY_SIGNING_KEY`:
//!
//! ```text
//! bytes   = version (1, = 1) ‖ issued hour (4, big-endian, hours since 1970-01-01T00:00Z)
//!         ‖ email reference (8) ‖ booking hash (4) ‖ MAC (10)
//! MAC     = HMAC-SHA-256(key, "reply-address\n" ‖ the first 17 bytes), first 10 bytes
//! email reference = SHA-256(dedupe key)[0..8]      booking hash = SHA-256(booking id)[0..4]
//! token   = lower-case RFC 4648 base32 of the 27 bytes, no padding: 44 characters
//! address = "reply+" token "@" REPLY_DOMAIN        (local part: 50 of the 64 octets RFC 5321
//!                                                   §4.5.3.1.1 allows)
//! ```
//!
//! Base32 because some mail servers lower-case local parts: the token reads back in any case.
//! 80 bits of MAC: each guess costs the guesser an email, so a forgery is out of reach. The MAC
//! is checked (constant time) before anything else in the token is read.

use data_encoding::BASE32_NOPAD;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// The local part's prefix before the token.
pub const LOCAL_PREFIX: &str = "reply+";
/// Length of a token in characters.
pub const TOKEN_CHARS: usize = 44;
const VERSION: u8 = 1;
const BYTES: usize = 27;
const SIGNED: usize = 17;
const MAC_BYTES: usize = 10;
const MAC_CONTEXT: &[u8] = b"reply-address\n";
/// A token issued later than now plus this (clock skew between isolates), hours, is refused.
const FUTURE_SKEW_HOURS: i64 = 1;

/// The reference of one email in a token: the first 8 bytes of SHA-256 of its dedupe key, as 16
/// lower-case hex characters (D1 `reply_addresses.reply_ref`).
pub fn email_ref(dedupe_key: &str) -> String {
    hex::encode(&Sha256::digest(dedupe_key.as_bytes())[..8])
}

fn booking_hash(booking_id: &str) -> [u8; 4] {
    let d = Sha256::digest(booking_id.as_bytes());
    [d[0], d[1], d[2], d[3]]
}

fn mac(key: &[u8], signed: &[u8]) -> HmacSha256 {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    m.update(MAC_CONTEXT);
    m.update(signed);
    m
}

/// The token for an email (`dedupe_key`) about `booking_id`, issued at `now_ms` (ms UTC).
pub fn sign(key: &[u8], dedupe_key: &str, booking_id: &str, now_ms: i64) -> String {
    let mut bytes = Vec::with_capacity(BYTES);
    bytes.push(VERSION);
    let hour = u32::try_from(now_ms.div_euclid(3_600_000)).unwrap_or(0);
    bytes.extend_from_slice(&hour.to_be_bytes());
    bytes.extend_from_slice(&Sha256::digest(dedupe_key.as_bytes())[..8]);
    bytes.extend_from_slice(&booking_hash(booking_id));
    let tag = mac(key, &bytes).finalize().into_bytes();
    bytes.extend_from_slice(&tag[..MAC_BYTES]);
    BASE32_NOPAD.encode(&bytes).to_ascii_lowercase()
}

/// The whole reply address: `reply+<token>@<domain>`.
pub fn address(
    key: &[u8],
    domain: &str,
    dedupe_key: &str,
    booking_id: &str,
    now_ms: i64,
) -> String {
    format!(
        "{LOCAL_PREFIX}{}@{domain}",
        sign(key, dedupe_key, booking_id, now_ms)
    )
}

/// What a verified token says. The shell finds the email by [`Claims::email_ref`] and accepts it
/// only when [`Claims::names_booking`] agrees with the email's booking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// [`email_ref`] of the email answered.
    pub email_ref: String,
    /// When the token was issued, ms UTC (to the hour).
    pub issued_at_ms: i64,
    booking: [u8; 4],
}

impl Claims {
    /// Whether this token was made for `booking_id`.
    pub fn names_booking(&self, booking_id: &str) -> bool {
        self.booking == booking_hash(booking_id)
    }
}

/// Why a recipient address is not a valid reply address. Every variant keeps the message off
/// every booking.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not `reply+…@REPLY_DOMAIN` at all (a plain address routed to the Worker).
    #[error("not a reply address")]
    NotReplyAddress,
    /// Not base32 of the right length, or an unknown version.
    #[error("the reply token is malformed")]
    Malformed,
    /// The MAC does not match: tampered, or signed with another key.
    #[error("the reply token's signature does not match")]
    BadSignature,
    /// Older than the configured lifetime.
    #[error("the reply token expired (issued {issued_days} days ago)")]
    Expired { issued_days: i64 },
    /// Issued in the future (beyond clock skew).
    #[error("the reply token is issued in the future")]
    FromTheFuture,
    /// Replies are not configured (no `REPLY_DOMAIN` or no usable key).
    #[error("reply addresses are not configured")]
    NotConfigured,
}

/// Checks the envelope recipient `to` (any case) against `domain` and `key`; `ttl_ms` is how long
/// a token stays valid after it was issued, `now_ms` ms UTC.
pub fn verify(
    key: &[u8],
    domain: &str,
    to: &str,
    now_ms: i64,
    ttl_ms: i64,
) -> Result<Claims, TokenError> {
    if key.is_empty() || domain.is_empty() {
        return Err(TokenError::NotConfigured);
    }
    let to = to.trim().trim_start_matches('<').trim_end_matches('>');
    let (local, at_domain) = to.rsplit_once('@').ok_or(TokenError::NotReplyAddress)?;
    if !at_domain.eq_ignore_ascii_case(domain) {
        return Err(TokenError::NotReplyAddress);
    }
    let token = local
        .get(..LOCAL_PREFIX.len())
        .filter(|p| p.eq_ignore_ascii_case(LOCAL_PREFIX))
        .map(|_| &local[LOCAL_PREFIX.len()..])
        .ok_or(TokenError::NotReplyAddress)?;
    if token.len() != TOKEN_CHARS {
        return Err(TokenError::Malformed);
    }
    let bytes = BASE32_NOPAD
        .decode(token.to_ascii_uppercase().as_bytes())
        .map_err(|_| TokenError::Malformed)?;
    if bytes.len() != BYTES {
        return Err(TokenError::Malformed);
    }
    let (signed, tag) = bytes.split_at(SIGNED);
    mac(key, signed)
        .verify_truncated_left(tag)
        .map_err(|_| TokenError::BadSignature)?;
    if signed[0] != VERSION {
        return Err(TokenError::Malformed);
    }
    let hour = i64::from(u32::from_be_bytes([
        signed[1], signed[2], signed[3], signed[4],
    ]));
    let issued_at_ms = hour * 3_600_000;
    if issued_at_ms > now_ms + FUTURE_SKEW_HOURS * 3_600_000 {
        return Err(TokenError::FromTheFuture);
    }
    if now_ms - issued_at_ms > ttl_ms {
        return Err(TokenError::Expired {
            issued_days: (now_ms - issued_at_ms) / 86_400_000,
        });
    }
    Ok(Claims {
        email_ref: hex::encode(&signed[5..13]),
        issued_at_ms,
        booking: [signed[13], signed[14], signed[15], signed[16]],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"test-reply-signing-key-0123456789abcdef";
    const NOW: i64 = 1_780_000_000_000;
    const TTL: i64 = 400 * 86_400_000;
    const KEY_OF: &str = "booking_confirmation:BK_1";

    #[test]
    fn an_address_fits_a_local_part_and_verifies_in_any_case() {
        let a = address(KEY, "reply.example.com", KEY_OF, "BK_1", NOW);
        let (local, domain) = a.split_once('@').unwrap();
        assert_eq!(domain, "reply.example.com");
        assert_eq!(local.len(), LOCAL_PREFIX.len() + TOKEN_CHARS);
        assert!(local.len() <= 64, "{local}");
        assert!(local[6..]
            .bytes()
            .all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b)));
        for to in [a.clone(), a.to_ascii_uppercase(), format!("<{a}>")] {
            let c = verify(KEY, "reply.example.com", &to, NOW, TTL).unwrap();
            assert_eq!(c.email_ref, email_ref(KEY_OF));
            assert!(c.names_booking("BK_1") && !c.names_booking("BK_2"));
            assert_eq!(c.issued_at_ms, NOW - NOW % 3_600_000);
        }
    }

    #[test]
    fn a_changed_character_key_or_domain_never_verifies() {
        let a = address(KEY, "reply.example.com", KEY_OF, "BK_1", NOW);
        let at = a.find('@').unwrap();
        for i in LOCAL_PREFIX.len()..at {
            let mut b = a.clone().into_bytes();
            b[i] = if b[i] == b'a' { b'b' } else { b'a' };
            let tampered = String::from_utf8(b).unwrap();
            let r = verify(KEY, "reply.example.com", &tampered, NOW, TTL);
            assert!(
                matches!(r, Err(TokenError::BadSignature | TokenError::Malformed)),
                "{tampered}: {r:?}"
            );
        }
        assert_eq!(
            verify(
                b"another-key-0123456789abcdef0123456",
                "reply.example.com",
                &a,
                NOW,
                TTL
            ),
            Err(TokenError::BadSignature)
        );
        assert_eq!(
            verify(KEY, "other.example.com", &a, NOW, TTL),
            Err(TokenError::NotReplyAddress)
        );
    }

    #[test]
    fn plain_short_long_and_unconfigured_addresses_are_refused() {
        let r = |to: &str| verify(KEY, "reply.example.com", to, NOW, TTL);
        assert_eq!(
            r("bookings@reply.example.com"),
            Err(TokenError::NotReplyAddress)
        );
        assert_eq!(
            r("reply@reply.example.com"),
            Err(TokenError::NotReplyAddress)
        );
        assert_eq!(r("no-at-sign"), Err(TokenError::NotReplyAddress));
        assert_eq!(r("reply+abc@reply.example.com"), Err(TokenError::Malformed));
        assert_eq!(
            r(&format!(
                "reply+{}@reply.example.com",
                "1".repeat(TOKEN_CHARS)
            )),
            Err(TokenError::Malformed)
        );
        assert_eq!(
            verify(
                b"",
                "reply.example.com",
                "reply+x@reply.example.com",
                NOW,
                TTL
            ),
            Err(TokenError::NotConfigured)
        );
    }

    #[test]
    fn tokens_expire_and_future_ones_are_refused() {
        let old = address(KEY, "r.test", KEY_OF, "BK_1", NOW - TTL - 3_600_000);
        assert!(matches!(
            verify(KEY, "r.test", &old, NOW, TTL),
            Err(TokenError::Expired { issued_days: 400 })
        ));
        let edge = address(KEY, "r.test", KEY_OF, "BK_1", NOW - TTL + 3_600_000);
        assert!(verify(KEY, "r.test", &edge, NOW, TTL).is_ok());
        let future = address(KEY, "r.test", KEY_OF, "BK_1", NOW + 3 * 3_600_000);
        assert_eq!(
            verify(KEY, "r.test", &future, NOW, TTL),
            Err(TokenError::FromTheFuture)
        );
    }

    /// The format, byte for byte, as the end-to-end tests rebuild it in JavaScript.
    #[test]
    fn golden_token() {
        assert_eq!(
            sign(b"k", "booking_confirmation:BK_1", "BK_1", 3_600_000 * 10),
            sign(
                b"k",
                "booking_confirmation:BK_1",
                "BK_1",
                3_600_000 * 10 + 59_000
            )
        );
        let t = sign(b"k", "booking_confirmation:BK_1", "BK_1", 3_600_000 * 10);
        let bytes = BASE32_NOPAD
            .decode(t.to_ascii_uppercase().as_bytes())
            .unwrap();
        assert_eq!(&bytes[..5], &[1, 0, 0, 0, 10]);
        assert_eq!(
            hex::encode(&bytes[5..13]),
            email_ref("booking_confirmation:BK_1")
        );
    }
}
