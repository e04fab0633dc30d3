//! Proof before any refund (shell of `crate::domain::payment::payment_proof`): the one payment intent the
//! refund plan judged is looked up at Stripe, and refunded only when its Checkout Session names
//! the client reference of a checkout attempt or booking recorded for the compensation's own
//! owner before the failure arrived; the amount is fixed by what Stripe says was captured. The
//! journey's refund step and the owner's click (alert link, reminder link, admin page, JSON API)
//! all come through [`decide`]; what it proved is kept with the refund step ([`keep`]), so every
//! later request names exactly that intent and amount.

use super::*;
use crate::domain::event::ownership::Owner;
use crate::domain::payment::payment_proof::{self, Expected, LinkKind, Lookup, Record, Verdict};
use crate::domain::payment::refund_ask::RefundAsk;

/// The refund plan of compensation `c` and the verdict on the one payment intent it judged.
pub(super) struct Decided {
    /// The payment the records hold for it ([`payment_of`]).
    pub payment: Option<PaymentFacts>,
    pub plan: RefundPlan,
    /// `None` when the plan moves no money (not charged, payment unknown).
    pub verdict: Option<Verdict>,
}

/// Plans compensation `c`'s refund ([`plan_refund`] over the payment its records hold and the
/// supplier's figures) and, when the plan refunds or leaves it to the owner, proves the plan's
/// own payment intent at Stripe ([`prove`]); when the plan judged no intent (a payment recorded
/// without one) the intent the failure named is looked up instead, and then only the owner can
/// act on it.
pub(super) async fn decide(db: &D1Database, cfg: &Config, c: &CompensationRow) -> Result<Decided> {
    let payment = payment_of(db, c).await?;
    let fee = money(c.fee_amount.as_deref(), c.fee_currency.as_deref());
    let supplier_refund = money(c.supplier_refund.as_deref(), c.fee_currency.as_deref());
    let plan = plan_refund(
        cfg.refund_policy,
        c.cause,
        payment.as_ref(),
        fee.as_ref(),
        supplier_refund.as_ref(),
    );
    let verdict = match &plan {
        RefundPlan::NotCharged | RefundPlan::PaymentUnknown => None,
        RefundPlan::Refund {
            payment_intent,
            ask,
        } => Some(prove(db, cfg, c, Some(payment_intent), ask).await?),
        RefundPlan::AwaitOwner {
            payment_intent,
            ask,
            ..
        } => {
            let intent = payment_proof::intent_to_prove(
                payment_intent.as_deref(),
                c.payment_intent.as_deref(),
            );
            Some(prove(db, cfg, c, intent.as_deref(), ask).await?)
        }
    };
    Ok(Decided {
        payment,
        plan,
        verdict,
    })
}

/// Looks payment intent `intent` up at Stripe and decides ([`payment_proof::judge`]) whether
/// it is compensation `c`'s and how much of `ask` it can refund. The links are the client
/// references of the checkout attempts and bookings its prebook id, booking id or client
/// reference find, kept when recorded for `c`'s own owner before `c` was opened (the failure's
/// arrival, `c.created_at_ms`) and recorded by no other owner ([`payment_proof::links`]).
async fn prove(
    db: &D1Database,
    cfg: &Config,
    c: &CompensationRow,
    intent: Option<&str>,
    ask: &RefundAsk,
) -> Result<Verdict> {
    let owner = Owner::stored(&c.source, c.partner.as_deref());
    let rows = store::ownership::compensation_records(
        db,
        c.prebook_id.as_deref(),
        c.booking_id.as_deref(),
        c.client_reference.as_deref(),
    )
    .await?;
    let mut records: Vec<Record> = Vec::new();
    for r in &rows {
        let same_owner = owner.is_some() && Owner::stored(&r.source, r.partner.as_deref()) == owner;
        let reference = r.client_reference.as_deref().map(str::trim);
        let reference_shared = match reference.filter(|r| !r.is_empty()) {
            Some(reference) if same_owner => store::ownership::reference_owners(db, reference)
                .await?
                .iter()
                .any(|o| Owner::stored(&o.source, o.partner.as_deref()) != owner),
            _ => false,
        };
        records.push(Record {
            kind: if r.kind == "checkout" {
                LinkKind::Checkout
            } else {
                LinkKind::Booking
            },
            client_reference: reference,
            same_owner,
            created_at_ms: r.created_at_ms,
            reference_shared,
        });
    }
    let links = payment_proof::links(&records, c.created_at_ms);
    let expected = Expected { links: &links, ask };
    let looked = match intent.filter(|pi| payment_proof::is_intent_id(pi)) {
        Some(pi) => Some(look_up(cfg, pi).await.map_err(|e| e.to_string())),
        None => None,
    };
    Ok(payment_proof::judge(&expected, looked.as_ref()))
}

/// The PaymentIntent `hint` and, when Stripe has it, the Checkout Sessions it lists for it.
async fn look_up(cfg: &Config, hint: &str) -> std::result::Result<Lookup, stripe::RefundError> {
    let intent = stripe::payment_intent(cfg, hint).await?;
    let sessions = match &intent {
        Some(_) => stripe::checkout_sessions(cfg, hint).await?,
        None => Vec::new(),
    };
    Ok(Lookup {
        hint: hint.to_string(),
        intent,
        sessions,
    })
}

/// Keeps a verdict with the refund step while it is still one of `open`: a proven intent (set
/// once: a step that holds one keeps it), its amount and currency, and what Stripe said; or, not
/// proven, what Stripe said and why nothing will be refunded. Returns whether it was written.
pub(super) async fn keep(
    db: &D1Database,
    id: &str,
    verdict: &Verdict,
    open: &[StepStatus],
    now: i64,
) -> Result<bool> {
    let update = match verdict {
        Verdict::Proven(p) => StepUpdate {
            payment_intent: Some(&p.payment_intent),
            amount_minor: Some(p.amount_minor),
            currency: Some(&p.currency),
            proof: Some(&p.evidence),
            ..Default::default()
        },
        Verdict::NotProven { why } => StepUpdate {
            proof: Some(why),
            ..Default::default()
        },
        Verdict::Covered { .. } | Verdict::Retry { .. } => return Ok(false),
    };
    store::compensation::update_step(db, id, StepKind::Refund, &update, open, now).await
}

/// The refund step's detail when Stripe's record does not tie the payment to the compensation
/// (what Stripe said follows it, from the step's `proof`).
pub(super) const NOT_PROVEN: &str = "not refunded by the engine: Stripe's record does not tie \
     this payment to this compensation; settle it yourself, then use \u{201c}already handled\u{201d}";

/// A supplier's figure as stored (decimal text and currency), when both are there.
fn money(amount: Option<&str>, currency: Option<&str>) -> Option<Money> {
    Some(Money {
        amount: amount?.to_string(),
        currency: currency?.to_string(),
    })
}
