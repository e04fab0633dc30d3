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
pub mod hotel_data;
mod json;
pub mod liteapi;
pub mod resend;
pub mod signature;
pub mod stripe;

pub use signature::SignatureError;

pub use crate::domain::parse_error::ParseError;
pub use crate::domain::secret::secrets_match;

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
