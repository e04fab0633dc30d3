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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare() {
        assert!(secrets_match("abc", "abc"));
        assert!(!secrets_match("abc", "abd"));
        assert!(!secrets_match("abc", "abcd"));
        assert!(!secrets_match("", "abc"));
    }
}
