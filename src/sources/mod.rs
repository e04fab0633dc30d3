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
    &duffel::WEBHOOK,
    &stripe::WEBHOOK,
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

/// A webhook whose deliveries are one JSON envelope signed `t=…,v1=…` in a header (Duffel,
/// Stripe): the signature checked against the configured secrets within `WEBHOOK_TOLERANCE_S`
/// ([`signature::verify_t_v1`]), then the envelope read and interpreted. `E` is the source's
/// checked envelope.
pub struct SignedEnvelope<E> {
    /// The source recorded with the delivery.
    pub source: Source,
    /// The signature header's name (e.g. `Stripe-Signature`).
    pub header: &'static str,
    /// The configured signing secrets of this source (several during a roll).
    pub secrets: fn(&Config) -> &[String],
    /// Reads and checks the envelope of a body.
    pub parse: fn(&[u8]) -> Result<E, ParseError>,
    /// What an envelope means.
    pub interpret: fn(&E) -> Result<Interpretation, ParseError>,
    /// An envelope's event id and event name.
    pub names: fn(E) -> (EventId, String),
    /// The event id a malformed body claims, if it can be read.
    pub claimed_id: fn(&[u8]) -> Option<String>,
}

impl<E> WebhookSource for SignedEnvelope<E> {
    fn source(&self) -> Source {
        self.source
    }

    fn verify(&self, cfg: &Config, inbound: &Inbound<'_>) -> Result<Verified, Unauthenticated> {
        signature::verify_t_v1(
            (inbound.header)(self.header).as_deref(),
            inbound.body,
            &strs((self.secrets)(cfg)),
            inbound.now_s,
            cfg.webhook_tolerance_s,
            self.header,
        )?;
        Ok(Verified::default())
    }

    fn parse(&self, inbound: &Inbound<'_>) -> Result<Delivery, ParseError> {
        envelope_delivery(inbound.body, self.parse, self.interpret, self.names)
    }

    fn claimed_id(&self, inbound: &Inbound<'_>) -> Option<String> {
        (self.claimed_id)(inbound.body)
    }
}

/// The [`Delivery`] of a body that is one supplier envelope: `parse` reads and checks it,
/// `interpret` says what it means, `names` gives its event id and event name.
fn envelope_delivery<E>(
    body: &[u8],
    parse: fn(&[u8]) -> Result<E, ParseError>,
    interpret: fn(&E) -> Result<Interpretation, ParseError>,
    names: fn(E) -> (EventId, String),
) -> Result<Delivery, ParseError> {
    let envelope = parse(body)?;
    let interpretation = interpret(&envelope)?;
    let (event_id, event_name) = names(envelope);
    Ok(Delivery {
        event_id,
        event_name,
        interpretation,
    })
}

/// What every `t=,v1=` envelope (Duffel, Stripe) starts with: the body's JSON object, its `id`
/// (an [`EventId`]) and its `type` (a non-empty string). A body that is not a JSON object is
/// [`ParseError::NotAnObject`]; a missing or bad `id`/`type` is an error naming the field.
fn envelope_head(body: &[u8]) -> Result<(serde_json::Value, EventId, String), ParseError> {
    let v: serde_json::Value = crate::domain::basics::json::parse_body(body)?;
    if !v.is_object() {
        return Err(ParseError::NotAnObject);
    }
    let root = json::At::root(&v, "");
    let id_at = root.get("id");
    let id = EventId::parse(&id_at.str_req()?).map_err(|e| id_at.invalid(e.to_string()))?;
    let event_type = root.get("type").str_req()?;
    Ok((v, id, event_type))
}

/// The string at the top-level `field` of a body that may be otherwise malformed (the event id a
/// rejected delivery claims, to label its raw row); `None` when the body is not a JSON object or
/// the field is not a string.
fn peek_str(body: &[u8], field: &str) -> Option<String> {
    let v: serde_json::Value = crate::domain::basics::json::parse_body(body).ok()?;
    v.get(field)?.as_str().map(str::to_string)
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
