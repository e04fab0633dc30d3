//! Comparing a presented shared secret (a static webhook token, the operator's bearer token) with
//! the configured one without leaking it through timing. Used by the liteAPI adapter and the
//! operator API; `crate::sources` re-exports it.

use sha2::{Digest, Sha256};

/// Compares a presented secret with the expected one in constant time: both are hashed with
/// SHA-256 first and the digests compared with `subtle`, so neither the content nor the length of
/// the expected secret leaks through timing.
pub fn secrets_match(presented: &str, expected: &str) -> bool {
    use subtle::ConstantTimeEq;
    let a = Sha256::digest(presented.as_bytes());
    let b = Sha256::digest(expected.as_bytes());
    a.ct_eq(&b).into()
}

/// The key bytes of a Standard Webhooks secret (<https://www.standardwebhooks.com>, symmetric
/// `v1`): the base64 (RFC 4648 standard alphabet, padded) after the `whsec_` prefix, or of the
/// whole value when written without it, as the specification's reference libraries read it.
/// `None` when it is not base64 or decodes to nothing. Two values with the same key are the same
/// secret, however they are written.
pub fn standard_webhooks_key(secret: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let encoded = secret.trim();
    let encoded = encoded.strip_prefix("whsec_").unwrap_or(encoded);
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .filter(|k| !k.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standard_webhooks_key_is_the_same_with_or_without_its_prefix() {
        assert_eq!(standard_webhooks_key("whsec_QUFB"), Some(b"AAA".to_vec()));
        assert_eq!(standard_webhooks_key("QUFB"), Some(b"AAA".to_vec()));
        assert_eq!(standard_webhooks_key("whsec_"), None);
        assert_eq!(standard_webhooks_key("whsec_not base64!"), None);
    }

    #[test]
    fn secrets_compare() {
        assert!(secrets_match("abc", "abc"));
        assert!(!secrets_match("abc", "abd"));
        assert!(!secrets_match("abc", "abcd"));
        assert!(!secrets_match("", "abc"));
    }
}
