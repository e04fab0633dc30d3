//! Proof before any refund (shell of `crate::domain::payment::payment_proof`): the payment intents a
//! compensation's records hint at are looked up at Stripe, and only one whose Checkout Session
//! names the compensation's own ids is refunded. The journey's refund step and the owner's click
//! (alert link, reminder link, admin page, JSON API) all come through [`prove`]; what it proved is
//! kept with the refund step ([`keep`]), so every later request names exactly that intent and
//! amount.

use super::*;
use crate::domain::event::ownership::Owner;
use crate::domain::payment::payment_proof::{self, Expected, Link, LinkKind, Lookup, Verdict};

/// Looks compensation `c`'s payment up at Stripe and decides ([`payment_proof::judge`]).
/// `payment` is what the payment records hold for it (its intent is the first hint, its currency
/// the one expected); `amount_minor` the amount the plan chose (`None` = what remains refundable).
///
/// Hints, in order: the recorded payment's intent, the transaction id of the compensation's own
/// checkout attempt, the intent the failure named. Links: the compensation's client reference,
/// prebook id and booking id, and the client references its own owner's checkout attempt and
/// booking record — a reference that a checkout or booking of another owner also records links
/// nothing (a partner that recorded a booking under a liteAPI checkout's reference cannot prove
/// that checkout's payment its own).
pub(super) async fn prove(
    db: &D1Database,
    cfg: &Config,
    c: &CompensationRow,
    payment: Option<&PaymentFacts>,
    amount_minor: Option<i64>,
) -> Result<Verdict> {
    let owner = Owner::stored(&c.source, c.partner.as_deref());
    let records = store::ownership::compensation_records(
        db,
        c.prebook_id.as_deref(),
        c.booking_id.as_deref(),
    )
    .await?;
    let own: Vec<&store::ownership::RecordRow> = records
        .iter()
        .filter(|r| owner.is_some() && Owner::stored(&r.source, r.partner.as_deref()) == owner)
        .collect();
    let mut named: Vec<(Option<&str>, LinkKind)> = vec![
        (c.client_reference.as_deref(), LinkKind::ClientReference),
        (c.prebook_id.as_deref(), LinkKind::Prebook),
        (c.booking_id.as_deref(), LinkKind::Booking),
    ];
    named.extend(own.iter().map(|r| {
        let kind = if r.kind == "checkout" {
            LinkKind::CheckoutReference
        } else {
            LinkKind::BookingReference
        };
        (r.client_reference.as_deref(), kind)
    }));
    let mut candidates: Vec<Link> = Vec::new();
    for (id, kind) in named {
        if let Some(id) = id.map(str::trim).filter(|i| !i.is_empty()) {
            if !candidates.iter().any(|l| l.id == id) {
                candidates.push(Link { id, kind });
            }
        }
    }
    let mut links: Vec<Link> = Vec::new();
    for l in candidates {
        let shared = match l.kind {
            LinkKind::Prebook | LinkKind::Booking => false,
            _ => store::ownership::reference_owners(db, l.id)
                .await?
                .iter()
                .any(|o| Owner::stored(&o.source, o.partner.as_deref()) != owner),
        };
        if !shared {
            links.push(l);
        }
    }
    let hints = payment_proof::hints(
        [payment.and_then(|p| p.payment_intent.as_deref())]
            .into_iter()
            .chain(own.iter().map(|r| r.transaction_id.as_deref()))
            .chain([c.payment_intent.as_deref()]),
    );
    let expected = Expected {
        links: &links,
        currency: payment
            .and_then(|p| p.currency.as_deref())
            .or(c.fee_currency.as_deref()),
        amount_minor,
    };
    let mut lookups: Vec<std::result::Result<Lookup, String>> = Vec::new();
    for hint in hints {
        let looked = look_up(cfg, &hint).await.map_err(|e| e.to_string());
        // Stop at the first proven intent, and at the first look-up that failed (no fall back).
        let done = looked
            .as_ref()
            .map_or(true, |l| payment_proof::judge_one(&expected, l).is_ok());
        lookups.push(looked);
        if done {
            break;
        }
    }
    Ok(payment_proof::judge(&expected, &lookups))
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
        Verdict::Retry { .. } => return Ok(false),
    };
    store::compensation::update_step(db, id, StepKind::Refund, &update, open, now).await
}

/// The refund step's detail when Stripe's record does not tie the payment to the compensation
/// (what Stripe said follows it, from the step's `proof`).
pub(super) const NOT_PROVEN: &str = "not refunded by the engine: Stripe's record does not tie \
     this payment to this compensation; settle it yourself, then use \u{201c}already handled\u{201d}";
