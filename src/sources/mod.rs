//! Supplier adapters (pure): verify a delivery's authenticity and parse its body into the one
//! canonical [`crate::domain::event::SupplierEvent`]. Nothing after an adapter sees supplier formats.
//!
//! - [`liteapi`]: static token + string-encoded envelope (formats.md §1);
//! - [`duffel`]: `X-Duffel-Signature` (verified with [`signature::verify_t_v1`]) + v2 envelope (§2);
//! - [`generic`]: Standard Webhooks ([`signature::verify_standard_webhook`]) carrying canonical
//!   event JSON (§4);
//! - [`resend`]: Resend delivery reports (Svix = Standard Webhooks headers) → suppressions;
//! - [`signature`]: the HMAC schemes (Duffel, Stripe, Standard Webhooks), time passed in.

pub mod duffel;
pub mod generic;
mod json;
pub mod liteapi;
pub mod resend;
pub mod signature;
pub mod stripe;

pub use signature::SignatureError;

use sha2::{Digest, Sha256};

/// Why a delivery was not accepted as authentic (→ HTTP 401, body not processed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("missing {0} header")]
    Missing(&'static str),
    #[error("{0} header does not match")]
    Mismatch(&'static str),
    #[error("webhook secret is not configured")]
    NotConfigured,
}

/// Why a body could not be parsed (→ HTTP 400; the raw body is still stored, marked rejected).
/// Every variant names the offending field with its JSON path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("body is not valid JSON: {0}")]
    Json(String),
    #[error("body must be a JSON object")]
    NotAnObject,
    #[error("missing required field `{0}`")]
    Missing(String),
    #[error("field `{field}` is invalid: {reason}")]
    Invalid { field: String, reason: String },
}

impl ParseError {
    /// The JSON path of the field at fault, when there is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            ParseError::Missing(f) | ParseError::Invalid { field: f, .. } => Some(f),
            _ => None,
        }
    }
}

/// Compares a presented secret with the expected one in constant time (both are hashed with
/// SHA-256 first, so neither the content nor the length leaks through timing).
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
