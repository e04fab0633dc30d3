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

/// A bearer token as written in a header or a setting, without its scheme: trimmed, and every
/// leading `Bearer` (any case, RFC 9110 §11.1: the scheme is case-insensitive; RFC 6750 §2.1)
/// followed by whitespace removed, however many times it was written. `Bearer abc`, `bearer  abc`
/// and `Bearer Bearer abc` are all `abc`, so a token stored or sent with its scheme is the same
/// token, and a doubled scheme smuggles nothing past a comparison.
pub fn bearer_token(value: &str) -> &str {
    let mut token = value.trim();
    while let Some(rest) = token
        .get(..6)
        .filter(|scheme| scheme.eq_ignore_ascii_case("bearer"))
        .map(|_| &token[6..])
        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_whitespace()))
    {
        token = rest.trim();
    }
    token
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_token_is_read_without_any_number_of_schemes() {
        for written in [
            "abc",
            " abc ",
            "Bearer abc",
            "bearer abc",
            "BEARER\tabc",
            "Bearer  Bearer abc",
            "Bearer bearer BEARER abc",
        ] {
            assert_eq!(bearer_token(written), "abc", "{written:?}");
        }
        // A token that only starts like the scheme is kept whole; the scheme alone is no token.
        assert_eq!(bearer_token("Bearerabc"), "Bearerabc");
        assert_eq!(bearer_token("Bearer"), "Bearer");
        assert_eq!(bearer_token("Bearer "), "Bearer");
        assert_eq!(bearer_token("Beärer abc"), "Beärer abc");
    }

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
