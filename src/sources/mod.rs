//! Supplier adapters (pure): verify a delivery's authenticity and parse its body into the one
//! canonical [`crate::domain::event::SupplierEvent`]. Nothing after an adapter sees supplier formats.
//!
//! - [`liteapi`]: static token + string-encoded envelope;
//! - [`duffel`]: `X-Duffel-Signature` (verified with [`signature::verify_t_v1`]) + v2 envelope;
//! - [`stripe`]: `Stripe-Signature` (the same `t=…,v1=…` scheme) + event envelope;
//! - [`generic`]: Standard Webhooks ([`signature::verify_standard_webhook`]) carrying canonical
//!   event JSON;
//! - [`hotel_data`]: liteAPI's `/data/hotel` answer (a read-API, called by
//!   [`crate::suppliers`]);
//! - [`resend`]: Resend delivery reports (Svix = Standard Webhooks headers) → suppressions;
//! - [`email_service`]: Cloudflare Email Service delivery events (from a Queue) → suppressions;
//! - [`signature`]: the HMAC schemes (Duffel, Stripe, Standard Webhooks), time passed in.

pub mod duffel;
pub mod email_service;
pub mod generic;
pub mod hotel_data;
mod json;
pub mod liteapi;
pub mod resend;
pub mod signature;
pub mod stripe;

pub use signature::SignatureError;

pub use crate::domain::basics::parse_error::ParseError;
pub use crate::domain::basics::secret::secrets_match;

use crate::config::Config;
use crate::domain::basics::text::{self, Cut, TextKind};
use crate::domain::event::ownership::{scoped_event_id, Owner};
use crate::domain::event::{EventId, Interpretation, Source, SupplierEvent};

/// The supplier webhooks the engine takes at `POST /webhooks/<source>` (`<source>` =
/// [`Source::as_str`]), one line each. A new source is one file implementing [`WebhookSource`]
/// and one line here. (Resend's delivery reports are not here: they record suppressions, they
/// start no journey.)
pub const WEBHOOKS: [&dyn WebhookSource; 4] = [
    &liteapi::Webhook,
    &duffel::Webhook,
    &stripe::Webhook,
    &generic::Webhook,
];

/// The webhook source named `name` in [`WEBHOOKS`] (`"liteapi"`, `"duffel"`, …).
pub fn webhook(name: &str) -> Option<&'static dyn WebhookSource> {
    WEBHOOKS.into_iter().find(|w| w.source().as_str() == name)
}

/// One delivery as the shell received it: the raw body, a header lookup (case-insensitive, as
/// HTTP headers are) and the time of receipt.
pub struct Inbound<'a> {
    /// The raw body bytes, exactly as received (signatures cover these bytes).
    pub body: &'a [u8],
    /// The value of a request header by name, `None` when absent.
    pub header: &'a dyn Fn(&str) -> Option<String>,
    /// Now, Unix seconds (UTC): signed timestamps are checked against it.
    pub now_s: i64,
}

/// One authenticated delivery, parsed: what the route stores and starts a journey from.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The supplier's event id: the dedupe key of the delivery (unique per source).
    pub event_id: EventId,
    /// The supplier's event name (`booking.book`, `order.created`, …), or the canonical kind.
    pub event_name: String,
    pub interpretation: Interpretation,
}

impl Delivery {
    /// The delivery with every supplier text normalised once ([`crate::domain::basics::text`]): NFC,
    /// controls folded, each field bounded by its kind. Returns what was changed, for the raw
    /// event. Every route reads deliveries through [`read`], so no adapter can skip this.
    pub fn normalised(self) -> Result<(Delivery, Vec<Cut>), ParseError> {
        let mut cuts = Vec::new();
        let mut line = |field: &str, raw: String| {
            let (clean, controls, truncated) = text::normalise(&raw, TextKind::Status);
            if clean != raw {
                cuts.push(Cut {
                    field: field.to_string(),
                    kind: TextKind::Status,
                    chars_before: raw.chars().count(),
                    chars_after: clean.chars().count(),
                    controls,
                    truncated,
                });
            }
            clean
        };
        let event_name = line("event_name", self.event_name);
        let interpretation = match self.interpretation {
            Interpretation::Ignored(name) => Interpretation::Ignored(line("event_name", name)),
            Interpretation::Journey(event) => {
                let invalid = |e: serde_json::Error| ParseError::Invalid {
                    field: "event".into(),
                    reason: format!(
                        "cannot be normalised: {}",
                        crate::domain::basics::json::message(&e)
                    ),
                };
                let mut json = serde_json::to_value(&event).map_err(invalid)?;
                cuts.extend(text::normalise_json(&mut json, "event"));
                let event: SupplierEvent =
                    crate::domain::basics::json::from_value(&json).map_err(invalid)?;
                Interpretation::Journey(event)
            }
        };
        Ok((
            Delivery {
                event_id: self.event_id,
                event_name,
                interpretation,
            },
            cuts,
        ))
    }
}

/// Parses a delivery with `hook` and normalises its text ([`Delivery::normalised`]): the one way
/// the shell reads a webhook body. The event id is the one the delivery is stored and
/// deduplicated under: a generic partner's ids are scoped to it
/// ([`crate::domain::event::ownership::scoped_event_id`]), so no partner can take another's ids.
pub fn read(
    hook: &dyn WebhookSource,
    inbound: &Inbound<'_>,
    verified: &Verified,
) -> Result<(Delivery, Vec<Cut>), ParseError> {
    let (mut delivery, cuts) = hook.parse(inbound)?.normalised()?;
    let owner = Owner::new(hook.source(), verified.partner.as_deref());
    delivery.event_id =
        scoped_event_id(&owner, &delivery.event_id).map_err(|e| ParseError::Invalid {
            field: "event id".into(),
            reason: format!("with the partner's name in front, it {e}"),
        })?;
    Ok((delivery, cuts))
}

/// What verifying a delivery established beyond its source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verified {
    /// The generic source's partner whose secret signed the delivery (`None` for every other
    /// source): the owner of what the delivery creates, and the only partner it may act for
    /// ([`crate::domain::event::ownership`]).
    pub partner: Option<String>,
}

/// Why a delivery was not authentic (→ HTTP 401; the body is neither processed nor stored).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unauthenticated {
    /// A static token that is missing, wrong or not configured (liteAPI).
    #[error(transparent)]
    Token(#[from] AuthError),
    /// An HMAC signature that is missing, malformed, stale or wrong (Duffel, Stripe, Standard
    /// Webhooks).
    #[error(transparent)]
    Signature(#[from] SignatureError),
}

/// A supplier webhook: how its deliveries are authenticated and read. Pure: the route passes the
/// configuration and the [`Inbound`] delivery, and carries out the answer (store, dedupe, start
/// the journey; see `routes::webhooks`).
pub trait WebhookSource: Sync {
    /// The source recorded with the delivery (and its path segment).
    fn source(&self) -> Source;
    /// Checks the delivery's authenticity against the configured secret(s) and tolerance, and
    /// says who signed it ([`Verified`]).
    fn verify(&self, cfg: &Config, inbound: &Inbound<'_>) -> Result<Verified, Unauthenticated>;
    /// Reads the delivery into its event id, name and [`Interpretation`].
    fn parse(&self, inbound: &Inbound<'_>) -> Result<Delivery, ParseError>;
    /// `true` when [`Self::verify`] reads headers only (a static token): the shell then verifies
    /// before reading the body, so an unauthenticated sender cannot make it read one.
    fn header_only(&self) -> bool {
        false
    }
    /// The event id a malformed delivery claims, if it can be read (labels a rejected row).
    fn claimed_id(&self, inbound: &Inbound<'_>) -> Option<String>;
}

/// The configured secrets as `&str`s, for the verifiers.
fn strs(secrets: &[String]) -> Vec<&str> {
    secrets.iter().map(String::as_str).collect()
}

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
