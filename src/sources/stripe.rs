//! Stripe payment webhooks (<https://docs.stripe.com/webhooks>; event types:
//! <https://docs.stripe.com/api/events/types>).
//!
//! Delivery: `POST` signed with `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…][,v0=…]` — verify with
//! [`super::signature::verify_t_v1`] under [`super::signature::STRIPE_SIGNATURE_HEADER`] (key =
//! the whole `whsec_…` string; [`WEBHOOK`] does it) before calling
//! anything else here. At-least-once, unordered, retried for up to 3 days; dedupe on the event `id`
//! (`evt_…`).
//!
//! Envelope: `{id, object: "event", api_version, created, livemode, pending_webhooks, request,
//! type, data: {object, previous_attributes?}}`. [`parse_envelope`] checks it; [`interpret`] maps
//! the `type` to a canonical [`PaymentUpdate`]:
//!
//! | `type`                           | canonical event                                         |
//! |----------------------------------|---------------------------------------------------------|
//! | `payment_intent.payment_failed`  | `PaymentUpdated` `failed` (+ `decline_code`)            |
//! | `checkout.session.completed`     | `PaymentUpdated` `paid` when `payment_status` is `paid` or `no_payment_required`; `processing` when `unpaid`; otherwise `Ignored` |
//! | `checkout.session.expired`       | `PaymentUpdated` `expired` (counts as unpaid)           |
//! | `refund.created`, `refund.updated` | `RefundUpdated` (the Refund object: `id`, `status`, `payment_intent`, `amount`, `currency`, `failure_reason`) |
//! | `charge.refunded`                | `RefundUpdated` `succeeded` when the Charge is `refunded` (fully), else `pending`; `amount_refunded`, the first listed refund's id |
//! | anything else                    | `Ignored(type)`                                         |
//!
//! Amounts: a session's `amount_total` and a payment intent's `amount_received`
//! become `amount_minor` with the `currency` upper-cased: the captured amount a compensation
//! refunds.
//!
//! `checkout.session.completed` with `payment_status: "unpaid"` is a delayed payment method still
//! processing (Stripe later sends `checkout.session.async_payment_succeeded` / `_failed`): it is
//! neither paid nor a failure; it becomes `processing`, which the 20-minute decision treats like
//! paid (no "nothing was charged" email while money may be on its way). `no_payment_required` (a 100 % discount, a free trial) completed the checkout with
//! nothing to charge: counted as `paid`, because nothing is owed and no "not completed" email may
//! follow.
//!
//! Matching facts: `payment_intent` (`pi_…`, an id or an expanded object), `session_id` (`cs_…`),
//! `client_reference` (`client_reference_id`, else `metadata.trip_id`, else
//! `metadata.client_reference`), the customer's email and name. Optional facts are read tolerantly:
//! an email that does not parse reads as absent. Stripe gives one `name` string: it is split at the
//! first space into first name and the rest (`"Mary Ann Smith"` → `Mary` + `Ann Smith`), so
//! [`PersonName::full`] gives it back unchanged.
//!
//! The decline code only ever reaches the *owner's* view; customer emails never claim a decline.

use super::json::At;
use super::signature::STRIPE_SIGNATURE_HEADER;
use super::{peek_str, ParseError, SignedEnvelope};
use crate::domain::event::{
    EmailAddress, EventId, Interpretation, PaymentOutcome, PaymentUpdate, PersonName, RefundUpdate,
    Source, SupplierEvent,
};
use crate::domain::payment::payment_proof::{StripeIntent, StripeSession};
use serde_json::Value;

/// The Stripe webhook in [`super::WEBHOOKS`]: `Stripe-Signature` against
/// `STRIPE_WEBHOOK_SECRETS` within `WEBHOOK_TOLERANCE_S` ([`super::signature::verify_t_v1`]), then the
/// envelope ([`parse_envelope`], [`interpret`]).
pub const WEBHOOK: SignedEnvelope<Envelope> = SignedEnvelope {
    source: Source::Stripe,
    header: STRIPE_SIGNATURE_HEADER,
    secrets: |cfg| &cfg.stripe_webhook_secrets,
    parse: parse_envelope,
    interpret,
    names: |e| (e.id, e.event_type),
    claimed_id: peek_event_id,
};

/// A checked Stripe event envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// `id` (`evt_…`): the dedupe key of the delivery.
    pub id: EventId,
    /// `type`, e.g. `checkout.session.expired`.
    pub event_type: String,
    /// `livemode`: `false` for test-mode events (absent reads as `false`).
    pub livemode: bool,
    /// `data.object` (`Value::Null` when absent).
    pub object: Value,
    /// `created`: Unix seconds (UTC) when given.
    pub created: Option<i64>,
}

/// Reads the `id` of a body that may be otherwise malformed (to label a rejected raw row).
pub fn peek_event_id(body: &[u8]) -> Option<String> {
    peek_str(body, "id")
}

/// Parses and checks the envelope: `id` and `type` non-empty strings; `object` equal to `"event"`
/// when present; `livemode` a boolean when present; `created` an integer when present; `data` an
/// object when present. `data.object` is only required by [`interpret`] for the types it acts on.
pub fn parse_envelope(body: &[u8]) -> Result<Envelope, ParseError> {
    let (v, id, event_type) = super::envelope_head(body)?;
    let root = At::root(&v, "");
    let object_at = root.get("object");
    if object_at.is_present() && object_at.str_opt().as_deref() != Some("event") {
        return Err(object_at.invalid("must be \"event\""));
    }
    let live_at = root.get("livemode");
    let livemode = match live_at.value() {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(live_at.invalid("must be a boolean")),
    };
    let created_at = root.get("created");
    let created = match created_at.value() {
        None => None,
        Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64(),
        Some(_) => return Err(created_at.invalid("must be an integer (Unix seconds)")),
    };
    let data = root.get("data");
    if data.value().is_some_and(|d| !d.is_object()) {
        return Err(data.invalid("must be an object"));
    }
    Ok(Envelope {
        id,
        event_type,
        livemode,
        object: data.get("object").value().cloned().unwrap_or(Value::Null),
        created,
    })
}

/// Maps an envelope to what the engine does with it (see the module table).
pub fn interpret(env: &Envelope) -> Result<Interpretation, ParseError> {
    let update = match env.event_type.as_str() {
        "payment_intent.payment_failed" => payment_failed(&object(env)?)?,
        "checkout.session.completed" => {
            let obj = object(env)?;
            let status = obj.get("payment_status").str_opt().unwrap_or_default();
            match status.as_str() {
                "paid" | "no_payment_required" => session(&obj, PaymentOutcome::Paid)?,
                // A delayed payment method still processing: money may be on its way, so the
                // "nothing was charged" follow-up must not go out.
                "unpaid" => session(&obj, PaymentOutcome::Processing)?,
                other => {
                    let shown = if other.is_empty() { "absent" } else { other };
                    return Ok(Interpretation::Ignored(format!(
                        "{} (payment_status {shown})",
                        env.event_type
                    )));
                }
            }
        }
        "checkout.session.expired" => session(&object(env)?, PaymentOutcome::Expired)?,
        "refund.created" | "refund.updated" => {
            return Ok(Interpretation::Journey(SupplierEvent::RefundUpdated(
                Box::new(refund(&object(env)?)?),
            )))
        }
        "charge.refunded" => {
            return Ok(Interpretation::Journey(SupplierEvent::RefundUpdated(
                Box::new(charge_refunded(&object(env)?)?),
            )))
        }
        other => return Ok(Interpretation::Ignored(other.to_string())),
    };
    Ok(Interpretation::Journey(SupplierEvent::PaymentUpdated(
        Box::new(update),
    )))
}

/// `data.object`, required for the types [`interpret`] acts on.
fn object(env: &Envelope) -> Result<At<'_>, ParseError> {
    let at = At::root(&env.object, "data.object");
    match at.value() {
        None => Err(at.missing()),
        Some(Value::Object(_)) => Ok(at),
        Some(_) => Err(at.invalid("must be an object")),
    }
}

/// The first of `candidates` that holds a valid email address.
fn first_email(candidates: &[At<'_>]) -> Option<EmailAddress> {
    candidates
        .iter()
        .filter_map(At::str_opt)
        .find_map(|s| EmailAddress::parse(&s).ok())
}

/// Stripe's single name string as a [`PersonName`]: first word, then the rest.
fn split_name(at: &At<'_>) -> Option<PersonName> {
    let full = at.str_opt()?;
    let words: Vec<&str> = full.split_whitespace().collect();
    let (first, rest) = words.split_first()?;
    Some(PersonName {
        first_name: (*first).to_string(),
        last_name: rest.join(" "),
    })
}

/// An id given either as a string or as an expanded object's `id`.
fn id_or_expanded(at: &At<'_>) -> Option<String> {
    at.str_opt().or_else(|| at.get("id").str_opt())
}

/// `payment_intent.payment_failed`: the PaymentIntent (`id` required) and its
/// `last_payment_error`.
fn payment_failed(pi: &At<'_>) -> Result<PaymentUpdate, ParseError> {
    let payment_intent = pi.get("id").str_req()?;
    let error = pi.get("last_payment_error");
    let billing = error.get("payment_method").get("billing_details");
    let metadata = pi.get("metadata");
    Ok(PaymentUpdate {
        outcome: PaymentOutcome::Failed,
        payment_intent: Some(payment_intent),
        session_id: None,
        client_reference: metadata
            .get("trip_id")
            .str_opt()
            .or_else(|| metadata.get("client_reference").str_opt()),
        email: first_email(&[billing.get("email"), pi.get("receipt_email")]),
        name: split_name(&billing.get("name")),
        decline_code: error
            .get("decline_code")
            .str_opt()
            .or_else(|| error.get("code").str_opt()),
        // Only what was received: a failed intent's `amount` was asked for, never captured.
        amount_minor: amount(&pi.get("amount_received")),
        currency: currency(pi),
        locale: None,
    })
}

/// A Stripe amount (an integer of the currency's minor unit, ≥ 0), when present.
fn amount(at: &At<'_>) -> Option<i64> {
    at.value().and_then(Value::as_i64).filter(|a| *a >= 0)
}

/// `currency`, upper case (Stripe writes ISO 4217 in lower case), when it is three letters.
fn currency(obj: &At<'_>) -> Option<String> {
    obj.get("currency")
        .str_opt()
        .filter(|c| c.len() == 3 && c.chars().all(|ch| ch.is_ascii_alphabetic()))
        .map(|c| c.to_ascii_uppercase())
}

/// Stripe ids are short ASCII (`re_…`, `pi_…`): anything else reads as absent.
fn stripe_id(at: &At<'_>) -> Option<String> {
    id_or_expanded(at).filter(|id| {
        id.len() <= 255
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    })
}

/// `refund.created` / `refund.updated`: the Refund object (`status` required).
fn refund(r: &At<'_>) -> Result<RefundUpdate, ParseError> {
    let status = r.get("status").str_req()?;
    Ok(RefundUpdate {
        refund_id: stripe_id(&r.get("id")),
        payment_intent: stripe_id(&r.get("payment_intent")),
        status: bounded_word(&status),
        amount_minor: amount(&r.get("amount")),
        currency: currency(r),
        failure_reason: r.get("failure_reason").str_opt().map(|f| bounded_word(&f)),
        compensation_id: r
            .get("metadata")
            .get("compensation_id")
            .str_opt()
            .filter(|c| c.starts_with("comp-") && c.len() <= 64),
    })
}

/// `charge.refunded`: the Charge (`refunded` true when fully refunded; `amount_refunded`).
fn charge_refunded(c: &At<'_>) -> Result<RefundUpdate, ParseError> {
    let full = c.get("refunded").bool_opt().unwrap_or(false);
    let first = c.get("refunds").get("data").index(0);
    Ok(RefundUpdate {
        refund_id: stripe_id(&first.get("id")),
        payment_intent: stripe_id(&c.get("payment_intent")),
        status: if full { "succeeded" } else { "pending" }.into(),
        amount_minor: amount(&c.get("amount_refunded")),
        currency: currency(c),
        failure_reason: None,
        compensation_id: None,
    })
}

/// A status or reason word from Stripe, kept short and plain (`a-z0-9_`, ≤ 64).
fn bounded_word(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(64)
        .collect::<String>()
        .to_ascii_lowercase()
}

/// `checkout.session.*`: the Checkout Session (`id` required).
fn session(s: &At<'_>, outcome: PaymentOutcome) -> Result<PaymentUpdate, ParseError> {
    let session_id = s.get("id").str_req()?;
    let metadata = s.get("metadata");
    let details = s.get("customer_details");
    Ok(PaymentUpdate {
        outcome,
        payment_intent: id_or_expanded(&s.get("payment_intent")),
        session_id: Some(session_id),
        client_reference: s
            .get("client_reference_id")
            .str_opt()
            .or_else(|| metadata.get("trip_id").str_opt())
            .or_else(|| metadata.get("client_reference").str_opt()),
        email: first_email(&[details.get("email"), s.get("customer_email")]),
        name: split_name(&details.get("name")),
        decline_code: None,
        amount_minor: amount(&s.get("amount_total")),
        currency: currency(s),
        // https://docs.stripe.com/api/checkout/sessions/object#checkout_session_object-locale
        locale: s.get("locale").str_opt().filter(|l| {
            (1..=35).contains(&l.len()) && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        }),
    })
}

/// A Refund object as Stripe returns it from `POST /v1/refunds` → [`RefundUpdate`] (`status`
/// required).
pub fn refund_answer(body: &[u8]) -> Result<RefundUpdate, ParseError> {
    let v: Value = crate::domain::basics::json::parse_body(body)?;
    refund(&At::root(&v, ""))
}

/// `GET /v1/refunds` → its `data` list (entries without a `status` are left out).
pub fn refund_list(body: &[u8]) -> Result<Vec<RefundUpdate>, ParseError> {
    list_data(body, |r| refund(r).ok())
}

/// A Stripe list object's `data` (required, an array), each entry read by `row`; the entries it
/// reads as `None` are left out.
fn list_data<T>(body: &[u8], row: impl Fn(&At<'_>) -> Option<T>) -> Result<Vec<T>, ParseError> {
    let v: Value = crate::domain::basics::json::parse_body(body)?;
    let root = At::root(&v, "");
    Ok(root
        .get("data")
        .array_req()?
        .iter()
        .filter_map(row)
        .collect())
}

/// A reference a Checkout Session names (`client_reference_id`, a metadata value): one line, at
/// most 128 characters, as supplier ids are kept; blank reads as absent.
fn reference(at: &At<'_>) -> Option<String> {
    at.str_opt()
        .map(|r| crate::domain::basics::text::clean(&r, crate::domain::basics::text::TextKind::Id))
        .filter(|r| !r.is_empty())
}

/// `GET /v1/payment_intents/{id}?expand[]=latest_charge`
/// (<https://docs.stripe.com/api/payment_intents/retrieve>) → a [`StripeIntent`] (`id` and
/// `status` required). What remains refundable is the expanded charge's `amount_captured −
/// amount_refunded` (<https://docs.stripe.com/api/charges/object>); without an expanded charge it
/// is left unknown.
pub fn payment_intent_answer(body: &[u8]) -> Result<StripeIntent, ParseError> {
    let v: Value = crate::domain::basics::json::parse_body(body)?;
    let pi = At::root(&v, "");
    let charge = pi.get("latest_charge");
    let refundable = match (
        amount(&charge.get("amount_captured")),
        amount(&charge.get("amount_refunded")),
    ) {
        (Some(captured), refunded) => Some(captured - refunded.unwrap_or(0)),
        _ => None,
    };
    Ok(StripeIntent {
        id: stripe_id(&pi.get("id")).ok_or_else(|| pi.get("id").missing())?,
        status: bounded_word(&pi.get("status").str_req()?),
        currency: currency(&pi),
        amount_received: amount(&pi.get("amount_received")).unwrap_or(0),
        refundable_minor: refundable,
    })
}

/// `GET /v1/checkout/sessions?payment_intent=…`
/// (<https://docs.stripe.com/api/checkout/sessions/list>) → its `data` list (entries without an
/// `id` left out), each with its `payment_intent`, `client_reference_id` and the
/// [`METADATA_KEYS`](crate::domain::payment::payment_proof::METADATA_KEYS) it carries.
pub fn session_list(body: &[u8]) -> Result<Vec<StripeSession>, ParseError> {
    list_data(body, |s| {
        let metadata = s.get("metadata");
        Some(StripeSession {
            id: stripe_id(&s.get("id"))?,
            payment_intent: stripe_id(&s.get("payment_intent")),
            client_reference_id: reference(&s.get("client_reference_id")),
            metadata: crate::domain::payment::payment_proof::METADATA_KEYS
                .iter()
                .filter_map(|k| reference(&metadata.get(k)).map(|v| (k.to_string(), v)))
                .collect(),
        })
    })
}

/// Stripe's error body `{error: {type, code, message, decline_code}}`
/// (<https://docs.stripe.com/api/errors>) → `(code, one-line message ≤ 300 chars)`; the code is
/// `error.code`, else `error.type`. A body that is not Stripe's shape gives `(None, its first
/// 300 characters on one line)`.
pub fn api_error(body: &[u8]) -> (Option<String>, String) {
    let v: Value = crate::domain::basics::json::parse_body(body).unwrap_or(Value::Null);
    let e = At::root(&v, "").get("error");
    let code = e
        .get("code")
        .str_opt()
        .or_else(|| e.get("type").str_opt())
        .map(|c| bounded_word(&c));
    let message = e
        .get("message")
        .str_opt()
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    (
        code,
        crate::domain::basics::text::cut_chars(
            &crate::domain::basics::text::clean(
                &message,
                crate::domain::basics::text::TextKind::Other,
            ),
            300,
        ),
    )
}
