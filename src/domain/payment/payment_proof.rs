//! Proof before any refund: which payment a compensation may refund is decided from Stripe's own
//! record, never from what a supplier's event says.
//!
//! A failure's `transaction_id`, a payment webhook, a client reference: each is only a *hint* to
//! look up. Before asking Stripe for a refund the shell reads the PaymentIntent
//! (`GET /v1/payment_intents/{id}?expand[]=latest_charge`,
//! <https://docs.stripe.com/api/payment_intents/retrieve>) and the Checkout Session that created
//! it (`GET /v1/checkout/sessions?payment_intent=…`,
//! <https://docs.stripe.com/api/checkout/sessions/list>), and [`judge`] decides: the payment is
//! this compensation's only when the session's `client_reference_id`, or one of its
//! [`METADATA_KEYS`], names one of the compensation's own ids ([`Link`]), the payment succeeded,
//! its currency is the one expected and what remains refundable (the charge's `amount_captured −
//! amount_refunded`, <https://docs.stripe.com/api/charges/object>) covers the amount. The proven
//! payment intent, amount and currency are kept with the refund step, and every retry, claim and
//! owner click uses exactly those. Stripe not answering is never a verdict: the caller waits and
//! asks again ([`Verdict::Retry`]), it never falls back to an intent Stripe did not vouch for.
//!
//! Pure: the shell fetches, this module decides.

use crate::domain::payment::compensation::format_minor;

/// The Checkout Session metadata keys a booking site may name its reference under (besides
/// `client_reference_id`): the ones the Stripe webhook adapter reads (`trip_id`,
/// `client_reference`), and the engine's own ids (`booking_id`, `prebook_id`).
pub const METADATA_KEYS: [&str; 4] = ["trip_id", "client_reference", "booking_id", "prebook_id"];

/// Most payment intents looked up for one compensation (each costs two Stripe reads).
pub const MAX_HINTS: usize = 3;

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
    /// `amount_received`, minor units.
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

/// What Stripe answered about one hinted payment intent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// The hint looked up (a `pi_…` id).
    pub hint: String,
    /// `None`: Stripe has no such payment intent (404).
    pub intent: Option<StripeIntent>,
    /// The sessions Stripe lists for it.
    pub sessions: Vec<StripeSession>,
}

/// Which of the compensation's own records an id comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// The compensation's client reference.
    ClientReference,
    /// Its prebook id (the checkout).
    Prebook,
    /// Its booking id.
    Booking,
    /// The client reference of its checkout attempt, recorded for the same owner.
    CheckoutReference,
    /// The client reference of its booking, recorded for the same owner.
    BookingReference,
}

impl LinkKind {
    fn words(self) -> &'static str {
        match self {
            LinkKind::ClientReference => "client reference",
            LinkKind::Prebook => "prebook id",
            LinkKind::Booking => "booking id",
            LinkKind::CheckoutReference => "checkout's client reference (same owner)",
            LinkKind::BookingReference => "booking's client reference (same owner)",
        }
    }
}

/// One id of the compensation a session may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link<'a> {
    pub id: &'a str,
    pub kind: LinkKind,
}

/// What the refund must match.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The compensation's own ids (empty ones are ignored).
    pub links: &'a [Link<'a>],
    /// The payment's currency as recorded (or the supplier's fee's), when known.
    pub currency: Option<&'a str>,
    /// The amount the plan chose (a fee subtracted, the supplier's refund), minor units; `None`
    /// = everything that remains refundable.
    pub amount_minor: Option<i64>,
}

/// The payment a compensation may refund, as Stripe's record proved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proven {
    pub payment_intent: String,
    /// What the refund request names, minor units (> 0).
    pub amount_minor: i64,
    /// ISO 4217, upper case.
    pub currency: String,
    /// What Stripe said, one line (for the refund step, the owner's alert and the admin).
    pub evidence: String,
}

/// The decision over every hint looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Proven(Proven),
    /// Nothing Stripe returned links a payment to this compensation: the engine refunds nothing,
    /// the owner settles it. `why` says what Stripe returned, one line.
    NotProven {
        why: String,
    },
    /// Stripe could not be asked (no answer, a 5xx, a rate limit): wait and ask again.
    Retry {
        why: String,
    },
}

/// A Stripe payment intent id as the API writes them (`pi_` and letters, digits, `_`): anything
/// else a supplier names is no hint at all, and never reaches a URL.
pub fn is_intent_id(id: &str) -> bool {
    id.len() <= 255
        && id.starts_with("pi_")
        && id.len() > 3
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The distinct payment intent ids among `hints`, in order, at most [`MAX_HINTS`].
pub fn hints<'a>(hints: impl IntoIterator<Item = Option<&'a str>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for h in hints.into_iter().flatten().map(str::trim) {
        if is_intent_id(h) && !out.iter().any(|o| o == h) && out.len() < MAX_HINTS {
            out.push(h.to_string());
        }
    }
    out
}

/// Decides one looked-up payment intent.
pub fn judge_one(expected: &Expected<'_>, lookup: &Lookup) -> Result<Proven, String> {
    let hint = &lookup.hint;
    let Some(intent) = &lookup.intent else {
        return Err(format!("Stripe has no payment intent {hint}"));
    };
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
    let links: Vec<&Link> = expected
        .links
        .iter()
        .filter(|l| !l.id.trim().is_empty())
        .collect();
    let named = |value: &str| links.iter().find(|l| l.id.trim() == value.trim()).copied();
    let linked = sessions.iter().find_map(|s| {
        if let Some(l) = s.client_reference_id.as_deref().and_then(named) {
            return Some((s, "client_reference_id".to_string(), l));
        }
        s.metadata
            .iter()
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
        let ours: Vec<&str> = links.iter().map(|l| l.id).collect();
        return Err(format!(
            "{} of payment intent {}: none of this compensation's ids ({})",
            said.join("; "),
            intent.id,
            if ours.is_empty() {
                "none".to_string()
            } else {
                ours.join(", ")
            }
        ));
    };
    let currency = intent.currency.clone().unwrap_or_default();
    if let Some(want) = expected.currency {
        if !want.eq_ignore_ascii_case(&currency) {
            return Err(format!(
                "payment intent {} is in {}, this compensation's payment in {}",
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
    let refundable = intent
        .refundable_minor
        .unwrap_or(intent.amount_received)
        .max(0);
    let amount = expected.amount_minor.unwrap_or(refundable);
    if refundable == 0 {
        return Err(format!(
            "nothing remains refundable on payment intent {} (refunded already)",
            intent.id
        ));
    }
    if amount <= 0 || amount > refundable {
        return Err(format!(
            "the refund of {} is above what remains refundable on payment intent {} ({})",
            format_minor(amount, &currency),
            intent.id,
            format_minor(refundable, &currency)
        ));
    }
    Ok(Proven {
        payment_intent: intent.id.clone(),
        amount_minor: amount,
        evidence: format!(
            "Stripe: payment intent {} succeeded, {} refundable; Checkout Session {} {field} is this compensation's {} {}",
            intent.id,
            format_minor(refundable, &currency),
            session.id,
            link.kind.words(),
            link.id
        ),
        currency,
    })
}

/// The verdict over the hints looked up in order: the first proven one; a lookup that failed
/// (`Err`, what the request came to) stops everything as [`Verdict::Retry`] — never a fall back
/// to another intent, proven or not; else [`Verdict::NotProven`] with what Stripe said of each.
/// No hint at all is not provable either.
pub fn judge(expected: &Expected<'_>, lookups: &[Result<Lookup, String>]) -> Verdict {
    let mut said: Vec<String> = Vec::new();
    for l in lookups {
        match l {
            Err(why) => return Verdict::Retry { why: why.clone() },
            Ok(lookup) => match judge_one(expected, lookup) {
                Ok(p) => return Verdict::Proven(p),
                Err(why) => said.push(why),
            },
        }
    }
    if said.is_empty() {
        said.push(
            "no Stripe payment intent is known for it (nothing a supplier named is one)".into(),
        );
    }
    Verdict::NotProven {
        why: crate::domain::basics::text::cut_chars(&said.join("; "), 600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent(id: &str) -> StripeIntent {
        StripeIntent {
            id: id.into(),
            status: "succeeded".into(),
            currency: Some("EUR".into()),
            amount_received: 54_000,
            refundable_minor: Some(54_000),
        }
    }

    fn session(pi: &str, reference: Option<&str>, metadata: &[(&str, &str)]) -> StripeSession {
        StripeSession {
            id: format!("cs_{pi}"),
            payment_intent: Some(pi.into()),
            client_reference_id: reference.map(str::to_string),
            metadata: metadata
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn lookup(intent: Option<StripeIntent>, sessions: Vec<StripeSession>) -> Lookup {
        Lookup {
            hint: "pi_1".into(),
            intent,
            sessions,
        }
    }

    const LINKS: [Link; 3] = [
        Link {
            id: "trip_1",
            kind: LinkKind::ClientReference,
        },
        Link {
            id: "PB1",
            kind: LinkKind::Prebook,
        },
        Link {
            id: "trip_checkout",
            kind: LinkKind::CheckoutReference,
        },
    ];

    fn expected(amount: Option<i64>) -> Expected<'static> {
        Expected {
            links: &LINKS,
            currency: Some("eur"),
            amount_minor: amount,
        }
    }

    fn proven(v: Verdict) -> Proven {
        match v {
            Verdict::Proven(p) => p,
            other => panic!("not proven: {other:?}"),
        }
    }

    fn not_proven(v: Verdict) -> String {
        match v {
            Verdict::NotProven { why } => why,
            other => panic!("expected not proven: {other:?}"),
        }
    }

    #[test]
    fn linked_by_client_reference_id_names_every_refund_amount() {
        let l = lookup(
            Some(intent("pi_1")),
            vec![session("pi_1", Some("trip_1"), &[])],
        );
        let p = proven(judge(&expected(None), &[Ok(l.clone())]));
        assert_eq!(
            (
                p.payment_intent.as_str(),
                p.amount_minor,
                p.currency.as_str()
            ),
            ("pi_1", 54_000, "EUR"),
            "everything refundable is named, never left to Stripe's default"
        );
        assert!(
            p.evidence
                .contains("client_reference_id is this compensation's client reference trip_1"),
            "{}",
            p.evidence
        );
        assert_eq!(
            proven(judge(&expected(Some(49_950)), &[Ok(l)])).amount_minor,
            49_950
        );
    }

    #[test]
    fn linked_by_metadata() {
        let l = lookup(
            Some(intent("pi_1")),
            vec![session("pi_1", Some("cart-9"), &[("prebook_id", "PB1")])],
        );
        let p = proven(judge(&expected(None), &[Ok(l)]));
        assert!(p
            .evidence
            .contains("metadata.prebook_id is this compensation's prebook id PB1"));
    }

    #[test]
    fn linked_by_a_checkout_of_the_same_owner() {
        let l = lookup(
            Some(intent("pi_1")),
            vec![session("pi_1", None, &[("trip_id", "trip_checkout")])],
        );
        let p = proven(judge(&expected(None), &[Ok(l)]));
        assert!(p
            .evidence
            .contains("checkout's client reference (same owner) trip_checkout"));
    }

    #[test]
    fn a_session_of_another_reference_proves_nothing_and_says_what_stripe_returned() {
        let l = lookup(
            Some(intent("pi_victim")),
            vec![session(
                "pi_victim",
                Some("trip_victim"),
                &[("trip_id", "trip_victim")],
            )],
        );
        let why = not_proven(judge(&expected(None), &[Ok(l)]));
        assert!(
            why.contains("Checkout Session cs_pi_victim names client_reference_id trip_victim, metadata.trip_id trip_victim of payment intent pi_victim: none of this compensation's ids (trip_1, PB1, trip_checkout)"),
            "{why}"
        );
    }

    #[test]
    fn no_session_no_intent_or_an_unfinished_payment_proves_nothing() {
        let why = not_proven(judge(
            &expected(None),
            &[Ok(lookup(Some(intent("pi_1")), vec![]))],
        ));
        assert!(
            why.starts_with("no Checkout Session created payment intent pi_1"),
            "{why}"
        );
        let why = not_proven(judge(&expected(None), &[Ok(lookup(None, vec![]))]));
        assert_eq!(why, "Stripe has no payment intent pi_1");
        let mut processing = intent("pi_1");
        processing.status = "processing".into();
        let l = lookup(Some(processing), vec![session("pi_1", Some("trip_1"), &[])]);
        assert!(not_proven(judge(&expected(None), &[Ok(l)])).contains("is processing"));
        // A session listed for another intent (Stripe filters by intent; checked again) is none.
        let l = lookup(
            Some(intent("pi_1")),
            vec![session("pi_2", Some("trip_1"), &[])],
        );
        assert!(not_proven(judge(&expected(None), &[Ok(l)])).starts_with("no Checkout Session"));
        assert!(not_proven(judge(&expected(None), &[])).contains("no Stripe payment intent"));
    }

    #[test]
    fn a_currency_mismatch_proves_nothing() {
        let mut usd = intent("pi_1");
        usd.currency = Some("USD".into());
        let l = lookup(Some(usd), vec![session("pi_1", Some("trip_1"), &[])]);
        let why = not_proven(judge(&expected(None), &[Ok(l)]));
        assert_eq!(
            why,
            "payment intent pi_1 is in USD, this compensation's payment in EUR"
        );
    }

    #[test]
    fn an_amount_above_what_remains_refundable_proves_nothing() {
        let mut partly = intent("pi_1");
        partly.refundable_minor = Some(20_000);
        let l = lookup(Some(partly), vec![session("pi_1", Some("trip_1"), &[])]);
        let why = not_proven(judge(&expected(Some(49_950)), &[Ok(l.clone())]));
        assert!(
            why.contains("the refund of EUR 499.50 is above what remains refundable on payment intent pi_1 (EUR 200.00)"),
            "{why}"
        );
        // Everything: what remains.
        assert_eq!(
            proven(judge(&expected(None), &[Ok(l)])).amount_minor,
            20_000
        );
        let mut spent = intent("pi_1");
        spent.refundable_minor = Some(0);
        let l = lookup(Some(spent), vec![session("pi_1", Some("trip_1"), &[])]);
        assert!(not_proven(judge(&expected(None), &[Ok(l)])).contains("nothing remains refundable"));
    }

    #[test]
    fn stripe_unreachable_is_a_retry_never_a_fall_back() {
        let good = lookup(
            Some(intent("pi_1")),
            vec![session("pi_1", Some("trip_1"), &[])],
        );
        // The first hint could not be looked up: the second (provable) one is not used.
        assert_eq!(
            judge(
                &expected(None),
                &[Err("Stripe did not answer".into()), Ok(good.clone())]
            ),
            Verdict::Retry {
                why: "Stripe did not answer".into()
            }
        );
        // A not-proven first hint, then a proven one: the proven one (both are Stripe's word).
        let other = lookup(
            Some(intent("pi_x")),
            vec![session("pi_x", Some("nope"), &[])],
        );
        assert_eq!(
            proven(judge(&expected(None), &[Ok(other), Ok(good)])).payment_intent,
            "pi_1"
        );
    }

    #[test]
    fn only_stripe_intent_ids_are_hints() {
        assert_eq!(
            hints([
                Some("pi_1"),
                None,
                Some(" pi_1 "),
                Some("pi_2/../../v1/refunds"),
                Some("ch_3"),
                Some("pi_"),
                Some("pi_4"),
                Some("pi_5"),
                Some("pi_6"),
            ]),
            ["pi_1", "pi_4", "pi_5"]
        );
    }
}
