//! Generic source: the engine's own canonical event JSON, delivered with Standard Webhooks
//! (<https://www.standardwebhooks.com>, spec: github.com/standard-webhooks/standard-webhooks
//! `spec/standard-webhooks.md`), for suppliers without an adapter.
//!
//! Authenticity: [`super::signature::verify_standard_webhook`] over the `webhook-id`,
//! `webhook-timestamp` and `webhook-signature` headers, against every partner's secrets
//! (`GENERIC_WEBHOOK_SECRETS`, `name=whsec_…`): the partner holding the secret that matched is
//! the delivery's partner, the owner of what it creates and the only partner it may act for
//! (`crate::domain::event::ownership`). The event id (dedupe key) is the `webhook-id` header, scoped to
//! the partner (`<partner>/<id>` for a named partner, see `ownership::scoped_event_id`); the
//! body carries none.
//!
//! Body (the Standard Webhooks payload convention `{type, timestamp, data}`):
//!
//! - `type` (required string): a canonical kind, exactly as `SupplierEvent::kind()` names it —
//!   `hotel_booked`, `hotel_confirmation_number`, `checkin_instructions`, `hotel_amended`,
//!   `booking_cancelled`, `flight_booked`, `flight_schedule_changed`, `status_changed`,
//!   `booking_failed` (the supplier failed a booking after payment: `booking_kind` `hotel` |
//!   `flight`, `reason`, and at least one of `booking_id`, `prebook_id`, `client_reference`;
//!   optional `transaction_id` (the Stripe payment intent), `email`, `guest_name`, `description`,
//!   `fee`). Any other
//!   `type` is stored and acknowledged as `Ignored(type)` (its `data` is not read).
//! - `timestamp` (optional string): RFC 3339 time the sender produced the event; checked when
//!   present, otherwise unused (the engine times everything from its own receipt time).
//! - `data` (required object): the fields of that kind's `SupplierEvent` in its serde JSON form
//!   (snake_case names; dates `YYYY-MM-DD`; local date-times `YYYY-MM-DDTHH:MM:SS`; money as
//!   `{"amount": "<decimal text>", "currency": "EUR"}`; optional fields may be omitted). The
//!   `kind` tag is taken from `type`; `data.kind` may be present but must then equal `type`.
//!
//! Errors: malformed JSON → `Json`; a non-object body → `NotAnObject`; missing `type`/`data` →
//! `Missing`; anything serde rejects inside `data` → `Invalid { field: "data", reason: <serde's
//! message, e.g. "missing field `hotel_name`"> }`; `checkout` before `checkin` →
//! `Invalid { field: "data.checkout" }`.
//!
//! Complete example (`hotel_booked`; parsed verbatim by `tests/host/sources_generic.rs`):
//!
//! ```json
//! {
//!   "type": "hotel_booked",
//!   "timestamp": "2026-03-02T11:00:00Z",
//!   "data": {
//!     "booking_id": "gen_bk_0001",
//!     "client_reference": "trip_fake_0001",
//!     "status": "CONFIRMED",
//!     "hotel_id": "gen_hotel_42",
//!     "hotel_name": "Example Harbour Hotel",
//!     "checkin": "2026-06-12",
//!     "checkout": "2026-06-15",
//!     "rooms": [
//!       {"room_name": "Standard Double", "board_name": "Breakfast included", "adults": 2, "children": 0}
//!     ],
//!     "holder": {
//!       "name": {"first_name": "Testa", "last_name": "Guestington"},
//!       "email": "guest@example.com",
//!       "phone": "+15550100001"
//!     },
//!     "guests": [
//!       {"first_name": "Testa", "last_name": "Guestington"},
//!       {"first_name": "Otto", "last_name": "Guestington"}
//!     ],
//!     "total": {"amount": "540.00", "currency": "EUR"},
//!     "hotel_confirmation_number": null,
//!     "sandbox": false,
//!     "location": {"time_zone": "Europe/Madrid", "latitude": 41.38, "longitude": 2.18},
//!     "checkin_instructions": "Check-in from 15:00; check-out by 11:00"
//!   }
//! }
//! ```
//!
//! A language hint (`data.locale` and/or `data.language`: a BCP 47 tag, an `Accept-Language`-style
//! list or an array of tags) is read from any JSON value and never refuses the event (anything
//! else is ignored, see [`language_hint`]).
//!
//! Required `data` fields per kind follow the canonical types in `domain::event`; e.g. a
//! cancellation is `{"type": "booking_cancelled", "data": {"booking_id": "gen_bk_0001",
//! "with_charges": false, "cancellation_fee": null, "refund": {"amount": "540.00", "currency":
//! "EUR"}}}`.

use super::signature::{
    verify_standard_webhook, WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER,
};
use super::{Delivery, Inbound, ParseError, Unauthenticated, Verified, WebhookSource};
use crate::config::Config;
use crate::domain::event::{EventId, Interpretation, Source, SupplierEvent};
use chrono::DateTime;
use serde_json::Value;

/// The canonical kinds of a checkout and its money (liteAPI's prebook, Stripe's payment and refund
/// events): not a partner's to report, so a `type` naming one is ignored like any unknown name.
const CHECKOUT_KINDS: [&str; 3] = ["checkout_started", "payment_updated", "refund_updated"];

/// The canonical kinds this source accepts as `type`: every [`SupplierEvent::KINDS`] name but
/// the checkout's ([`CHECKOUT_KINDS`]), in that list's order.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    SupplierEvent::KINDS
        .into_iter()
        .filter(|kind| !CHECKOUT_KINDS.contains(kind))
}

/// The generic webhook in [`super::WEBHOOKS`]: Standard Webhooks headers against
/// `GENERIC_WEBHOOK_SECRETS` within `WEBHOOK_TOLERANCE_S` ([`verify_standard_webhook`]); the event
/// id is the `webhook-id` header, the event name the canonical kind (or the ignored `type`).
pub struct Webhook;

impl WebhookSource for Webhook {
    fn source(&self) -> Source {
        Source::Generic
    }

    /// The partner is the one holding the secret that matched: a partner's key verifies only its
    /// own deliveries, and everything the delivery does acts for that partner alone.
    fn verify(&self, cfg: &Config, inbound: &Inbound<'_>) -> Result<Verified, Unauthenticated> {
        let header = inbound.header;
        let secrets: Vec<&str> = cfg
            .generic_partners
            .iter()
            .map(|p| p.secret.as_str())
            .collect();
        let signer = verify_standard_webhook(
            header(WEBHOOK_ID_HEADER).as_deref(),
            header(WEBHOOK_TIMESTAMP_HEADER).as_deref(),
            header(WEBHOOK_SIGNATURE_HEADER).as_deref(),
            inbound.body,
            &secrets,
            inbound.now_s,
            cfg.webhook_tolerance_s,
        )?;
        Ok(Verified {
            partner: Some(cfg.generic_partners[signer].partner.clone()),
        })
    }

    fn parse(&self, inbound: &Inbound<'_>) -> Result<Delivery, ParseError> {
        let id = (inbound.header)(WEBHOOK_ID_HEADER);
        let event_id =
            EventId::parse(id.as_deref().unwrap_or("")).map_err(|e| ParseError::Invalid {
                field: WEBHOOK_ID_HEADER.into(),
                reason: e.to_string(),
            })?;
        let interpretation = interpret(inbound.body)?;
        let event_name = match &interpretation {
            Interpretation::Journey(e) => e.kind().to_string(),
            Interpretation::Ignored(name) => name.clone(),
        };
        Ok(Delivery {
            event_id,
            event_name,
            interpretation,
        })
    }

    fn claimed_id(&self, inbound: &Inbound<'_>) -> Option<String> {
        (inbound.header)(WEBHOOK_ID_HEADER)
    }
}

/// Parses a generic body (see the module docs) into what the engine does with it.
pub fn interpret(body: &[u8]) -> Result<Interpretation, ParseError> {
    let v: Value = crate::domain::basics::json::parse_body(body)?;
    let obj = v.as_object().ok_or(ParseError::NotAnObject)?;

    let kind = match obj.get("type") {
        None | Some(Value::Null) => return Err(ParseError::Missing("type".into())),
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(_) => {
            return Err(ParseError::Invalid {
                field: "type".into(),
                reason: "must be a non-empty string".into(),
            })
        }
    };

    match obj.get("timestamp") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if DateTime::parse_from_rfc3339(s.trim()).is_ok() => {}
        Some(_) => {
            return Err(ParseError::Invalid {
                field: "timestamp".into(),
                reason: "must be an RFC 3339 date-time".into(),
            })
        }
    }

    if !kinds().any(|k| k == kind) {
        return Ok(Interpretation::Ignored(kind));
    }

    let mut data = match obj.get("data") {
        None | Some(Value::Null) => return Err(ParseError::Missing("data".into())),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => {
            return Err(ParseError::Invalid {
                field: "data".into(),
                reason: "must be an object".into(),
            })
        }
    };
    match data.get("kind") {
        None => {}
        Some(Value::String(k)) if *k == kind => {}
        Some(_) => {
            return Err(ParseError::Invalid {
                field: "data.kind".into(),
                reason: format!("must equal `type` ({kind:?}) when present"),
            })
        }
    }
    data.insert("kind".into(), Value::String(kind));
    language_hint(&mut data);

    let event: SupplierEvent = crate::domain::basics::json::from_value(&Value::Object(data))
        .map_err(|e| ParseError::Invalid {
            field: "data".into(),
            reason: crate::domain::basics::json::message(&e),
        })?;
    check(&event)?;
    Ok(Interpretation::Journey(event))
}

/// Longest language hint kept, in characters.
const HINT_MAX_CHARS: usize = 256;

/// A partner's language fields (`locale`, `language`: either or both) read leniently into the
/// one `locale` the events carry, so a hint never costs a booking (`crate::domain::i18n::locale`
/// reads what is left): a string is kept (trimmed, at most 256 characters), an array of strings
/// becomes one `Accept-Language`-style list in its order, anything else (a number, an object,
/// `null`, an empty text) is no hint. Of two hints, the first that names a shipped language wins,
/// else the first given.
fn language_hint(data: &mut serde_json::Map<String, Value>) {
    let read = |v: Option<Value>| -> Option<String> {
        let text = match v? {
            Value::String(s) => s,
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .take(32)
                .collect::<Vec<_>>()
                .join(","),
            _ => return None,
        };
        let text: String = text.trim().chars().take(HINT_MAX_CHARS).collect();
        (!text.is_empty()).then_some(text)
    };
    let hints = [read(data.remove("locale")), read(data.remove("language"))];
    let chosen = hints
        .iter()
        .flatten()
        .find(|h| crate::domain::i18n::Lang::from_hint(h).is_some())
        .or_else(|| hints.iter().flatten().next());
    if let Some(hint) = chosen {
        data.insert("locale".into(), Value::String(hint.clone()));
    }
}

/// Invariants serde cannot express.
fn check(event: &SupplierEvent) -> Result<(), ParseError> {
    match event {
        SupplierEvent::HotelBooked(b) if b.checkout < b.checkin => Err(ParseError::Invalid {
            field: "data.checkout".into(),
            reason: "is before checkin".into(),
        }),
        SupplierEvent::HotelAmended(a) if matches!((a.checkin, a.checkout), (Some(i), Some(o)) if o < i) => {
            Err(ParseError::Invalid {
                field: "data.checkout".into(),
                reason: "is before checkin".into(),
            })
        }
        SupplierEvent::FlightBooked(f) if f.segments.is_empty() => Err(ParseError::Invalid {
            field: "data.segments".into(),
            reason: "has no segments".into(),
        }),
        SupplierEvent::BookingFailed(f)
            if f.booking_id.is_none()
                && f.prebook_id.as_deref().is_none_or(|p| p.trim().is_empty())
                && f.client_reference.as_deref().is_none_or(|r| r.trim().is_empty()) =>
        {
            Err(ParseError::Invalid {
                field: "data.prebook_id".into(),
                reason: "is missing, and so are booking_id and client_reference: the failure matches no checkout".into(),
            })
        }
        SupplierEvent::BookingFailed(f) if f.reason.trim().is_empty() => Err(ParseError::Invalid {
            field: "data.reason".into(),
            reason: "must be a non-empty string".into(),
        }),
        _ => Ok(()),
    }
}
