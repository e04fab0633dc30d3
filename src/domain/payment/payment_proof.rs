//! Proof before any refund: which payment a compensation may refund, and how much, is decided
//! from Stripe's own record, never from what a supplier's event or a payment webhook's body says.
//!
//! The rule. A refund goes only to the one payment intent the refund plan judged
//! (`crate::domain::payment::compensation::plan_refund`: the same value is looked up here and named in
//! the refund request), and only when Stripe's API says:
//! - the intent succeeded (`GET /v1/payment_intents/{id}?expand[]=latest_charge`,
//!   <https://docs.stripe.com/api/payment_intents/retrieve>);
//! - a Checkout Session created it (`GET /v1/checkout/sessions?payment_intent=…`,
//!   <https://docs.stripe.com/api/checkout/sessions/list>) whose `client_reference_id`, or
//!   metadata `trip_id` / `client_reference` ([`REFERENCE_KEYS`]), is the client reference of a
//!   checkout attempt or booking that the engine recorded for the compensation's own owner (its
//!   source and partner) **before** the failure arrived, and that no other owner's checkout or
//!   booking records ([`links`]). The failure's own ids (booking id, prebook id, client reference,
//!   `transaction_id`) only find those records; they never link a payment themselves;
//! - the amount fits what Stripe says was captured: `amount_received`, less what was refunded
//!   already (the charge's `amount_captured − amount_refunded`,
//!   <https://docs.stripe.com/api/charges/object>) — see [`RefundAsk`].
//!
//! Stripe not answering is never a verdict: the caller waits and asks again
//! ([`Verdict::Retry`]), it never falls back to another intent.
//!
//! Pure: the shell fetches, this module decides.

use crate::domain::payment::compensation::format_minor;
use crate::domain::payment::refund_ask::RefundAsk;

/// The Checkout Session metadata keys read from Stripe (besides `client_reference_id`): the ones
/// the Stripe webhook adapter reads (`trip_id`, `client_reference`) and the engine's own ids.
pub const METADATA_KEYS: [&str; 4] = ["trip_id", "client_reference", "booking_id", "prebook_id"];

/// The metadata keys whose value is a client reference and so may link a session to a record
/// ([`links`]). A booking id or prebook id is the supplier's choice and may equal another
/// booking's client reference, so those keys never link.
pub const REFERENCE_KEYS: [&str; 2] = ["trip_id", "client_reference"];

impl crate::domain::payment::compensation::StepRow {
    /// A refund step whose payment Stripe's record did not tie to the compensation: the engine
    /// refunds nothing; the owner is offered "already handled" only.
    pub fn not_provable(&self) -> bool {
        self.proof.is_some() && self.payment_intent.is_none()
    }
}

/// A PaymentIntent as Stripe returned it, reduced to what the proof reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripeIntent {
    /// `pi_…`.
    pub id: String,
    /// `succeeded`, `processing`, `requires_payment_method`, … (bounded word).
    pub status: String,
    /// ISO 4217, upper case.
    pub currency: Option<String>,
    /// `amount_received`, minor units: what Stripe says was captured.
    pub amount_received: i64,
    /// The expanded `latest_charge`'s `amount_captured − amount_refunded`, minor units; `None`
    /// when Stripe returned no charge (then `amount_received` is the bound).
    pub refundable_minor: Option<i64>,
}

/// A Checkout Session as Stripe lists it, reduced to what links it to a booking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripeSession {
    /// `cs_…`.
    pub id: String,
    pub payment_intent: Option<String>,
    /// One line, bounded.
    pub client_reference_id: Option<String>,
    /// `(key, value)` of the [`METADATA_KEYS`] present, values one line and bounded.
    pub metadata: Vec<(String, String)>,
}

/// What Stripe answered about the payment intent looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// The intent looked up (a `pi_…` id).
    pub hint: String,
    /// `None`: Stripe has no such payment intent (404).
    pub intent: Option<StripeIntent>,
    /// The sessions Stripe lists for it.
    pub sessions: Vec<StripeSession>,
}

/// Which record a client reference comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// A checkout attempt (`checkout_attempts`).
    Checkout,
    /// A booking (`bookings`).
    Booking,
}

impl LinkKind {
    fn words(self) -> &'static str {
        match self {
            LinkKind::Checkout => "its checkout attempt",
            LinkKind::Booking => "its booking",
        }
    }
}

/// A client reference that may link a session to the compensation ([`links`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link<'a> {
    pub id: &'a str,
    pub kind: LinkKind,
}

/// A checkout attempt or booking the store found for a compensation's ids (whoever's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: LinkKind,
    pub client_reference: Option<&'a str>,
    /// Its source and partner are the compensation's (`crate::domain::ownership::Owner`).
    pub same_owner: bool,
    /// When it was first recorded, ms UTC.
    pub created_at_ms: i64,
    /// A checkout attempt or booking of another owner records the same client reference.
    pub reference_shared: bool,
}

/// The client references that may link a Checkout Session to a compensation whose failure
/// arrived at `failure_at_ms` (ms UTC): those of `records` of the compensation's own owner,
/// recorded strictly before the failure, that no other owner's record shares. A record the
/// failure's own event (or a later one) wrote links nothing: an owner cannot name a reference in
/// the same breath as the failure that claims its payment.
pub fn links<'a>(records: &[Record<'a>], failure_at_ms: i64) -> Vec<Link<'a>> {
    let mut out: Vec<Link<'a>> = Vec::new();
    for r in records {
        if !r.same_owner || r.reference_shared || r.created_at_ms >= failure_at_ms {
            continue;
        }
        let Some(id) = r.client_reference.map(str::trim).filter(|i| !i.is_empty()) else {
            continue;
        };
        if !out.iter().any(|l| l.id == id) {
            out.push(Link { id, kind: r.kind });
        }
    }
    out
}

/// What the refund must match.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The client references that may link a session ([`links`]).
    pub links: &'a [Link<'a>],
    /// What the plan asks for; Stripe's figures fix the amount.
    pub ask: &'a RefundAsk,
}

/// The payment a compensation may refund, as Stripe's record proved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proven {
    pub payment_intent: String,
    /// What the refund request names, minor units (> 0, ≤ what remains refundable).
    pub amount_minor: i64,
    /// ISO 4217, upper case (Stripe's).
    pub currency: String,
    /// What Stripe said, one line (for the refund step, the owner's alert and the admin).
    pub evidence: String,
}

/// The decision over the payment intent the plan judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Proven(Proven),
    /// The payment is this compensation's, but the supplier's fee covers everything Stripe says
    /// was captured (or the supplier refunds nothing): nothing to refund, the owner looks.
    Covered {
        why: String,
        /// ISO 4217, upper case (Stripe's).
        currency: String,
    },
    /// Nothing Stripe returned links a payment to this compensation, or the amount does not fit
    /// what Stripe holds: the engine refunds nothing, the owner settles it. `why` says what
    /// Stripe returned, one line.
    NotProven {
        why: String,
    },
    /// Stripe could not be asked (no answer, a 5xx, a rate limit): wait and ask again.
    Retry {
        why: String,
    },
}

/// A Stripe payment intent id as the API writes them (`pi_` and letters, digits, `_`): anything
/// else is no intent at all, and never reaches a URL.
pub fn is_intent_id(id: &str) -> bool {
    id.len() <= 255
        && id.starts_with("pi_")
        && id.len() > 3
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The one payment intent to look up: the plan's (`plan_intent`), else — only when the plan
/// judged no intent (a payment recorded without one; the owner decides then, never the engine
/// alone) — the one the failure named. `None` when neither is a Stripe intent id.
pub fn intent_to_prove(plan_intent: Option<&str>, failure_named: Option<&str>) -> Option<String> {
    match plan_intent.map(str::trim) {
        Some(pi) => is_intent_id(pi).then(|| pi.to_string()),
        None => failure_named
            .map(str::trim)
            .filter(|pi| is_intent_id(pi))
            .map(str::to_string),
    }
}

/// Decides the looked-up payment intent (`None`: there was none to look up; `Err`: what the
/// look-up came to when Stripe could not be asked → [`Verdict::Retry`]).
pub fn judge(expected: &Expected<'_>, lookup: Option<&Result<Lookup, String>>) -> Verdict {
    let lookup =
        match lookup {
            None => return Verdict::NotProven {
                why: "no Stripe payment intent is known for it (nothing recorded or named is one)"
                    .into(),
            },
            Some(Err(why)) => return Verdict::Retry { why: why.clone() },
            Some(Ok(l)) => l,
        };
    match judge_one(expected, lookup) {
        Ok(v) => v,
        Err(why) => Verdict::NotProven {
            why: crate::domain::basics::text::cut_chars(&why, 600),
        },
    }
}

fn judge_one(expected: &Expected<'_>, lookup: &Lookup) -> Result<Verdict, String> {
    let hint = &lookup.hint;
    let Some(intent) = &lookup.intent else {
        return Err(format!("Stripe has no payment intent {hint}"));
    };
    if intent.id != *hint {
        return Err(format!(
            "Stripe answered payment intent {} for {hint}",
            intent.id
        ));
    }
    if intent.status != "succeeded" {
        return Err(format!(
            "Stripe says payment intent {} is {}, not succeeded: nothing captured to refund",
            intent.id, intent.status
        ));
    }
    let sessions: Vec<&StripeSession> = lookup
        .sessions
        .iter()
        .filter(|s| s.payment_intent.as_deref() == Some(intent.id.as_str()))
        .collect();
    if sessions.is_empty() {
        return Err(format!(
            "no Checkout Session created payment intent {}: nothing at Stripe ties it to this booking",
            intent.id
        ));
    }
    let named = |value: &str| {
        expected
            .links
            .iter()
            .find(|l| !l.id.is_empty() && l.id == value.trim())
            .copied()
    };
    let linked = sessions.iter().find_map(|s| {
        if let Some(l) = s.client_reference_id.as_deref().and_then(named) {
            return Some((s, "client_reference_id".to_string(), l));
        }
        s.metadata
            .iter()
            .filter(|(k, _)| REFERENCE_KEYS.contains(&k.as_str()))
            .find_map(|(k, v)| named(v).map(|l| (s, format!("metadata.{k}"), l)))
    });
    let Some((session, field, link)) = linked else {
        let said: Vec<String> = sessions
            .iter()
            .map(|s| {
                let mut named: Vec<String> = s
                    .client_reference_id
                    .iter()
                    .map(|r| format!("client_reference_id {r}"))
                    .collect();
                named.extend(s.metadata.iter().map(|(k, v)| format!("metadata.{k} {v}")));
                if named.is_empty() {
                    named.push("no reference".into());
                }
                format!("Checkout Session {} names {}", s.id, named.join(", "))
            })
            .collect();
        let ours: Vec<&str> = expected.links.iter().map(|l| l.id).collect();
        return Err(format!(
            "{} of payment intent {}: none of this compensation's client references ({})",
            said.join("; "),
            intent.id,
            if ours.is_empty() {
                "none recorded for its owner before the failure".to_string()
            } else {
                ours.join(", ")
            }
        ));
    };
    let currency = intent
        .currency
        .clone()
        .unwrap_or_default()
        .to_ascii_uppercase();
    if let Some(want) = expected.ask.currency() {
        if !want.eq_ignore_ascii_case(&currency) {
            return Err(format!(
                "payment intent {} is in {}, the supplier's figure in {}",
                intent.id,
                if currency.is_empty() {
                    "no currency"
                } else {
                    &currency
                },
                want.to_ascii_uppercase()
            ));
        }
    }
    let captured = intent.amount_received.max(0);
    let remaining = intent
        .refundable_minor
        .unwrap_or(captured)
        .min(captured)
        .max(0);
    let amount = match expected.ask {
        RefundAsk::All => remaining,
        RefundAsk::UpTo { minor, .. } => (*minor).min(captured),
        RefundAsk::LessFee { minor, .. } => captured - minor,
    };
    if amount <= 0 && *expected.ask != RefundAsk::All {
        return Ok(Verdict::Covered {
            why: format!(
                "the supplier's figure leaves nothing to refund of the {} Stripe says payment intent {} captured",
                format_minor(captured, &currency),
                intent.id
            ),
            currency,
        });
    }
    if remaining == 0 {
        return Err(format!(
            "nothing remains refundable on payment intent {} (refunded already)",
            intent.id
        ));
    }
    if amount > remaining {
        return Err(format!(
            "the refund of {} is above what remains refundable on payment intent {} ({})",
            format_minor(amount, &currency),
            intent.id,
            format_minor(remaining, &currency)
        ));
    }
    Ok(Verdict::Proven(Proven {
        payment_intent: intent.id.clone(),
        amount_minor: amount,
        evidence: format!(
            "Stripe: payment intent {} succeeded, {} captured, {} refundable; Checkout Session {} {field} is this compensation's client reference {} ({}, recorded for the same owner before the failure)",
            intent.id,
            format_minor(captured, &currency),
            format_minor(remaining, &currency),
            session.id,
            link.id,
            link.kind.words()
        ),
        currency,
    }))
}
