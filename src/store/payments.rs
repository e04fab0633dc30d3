//! `payments` (migration 0012): the processor's word on each payment, whether or not its
//! checkout attempt was known when it arrived (webhooks are unordered). A compensation finds the
//! payment to refund here, by payment intent or client reference.

use super::{n, opt, s};
use crate::domain::event::{PaymentOutcome, PaymentUpdate};
use crate::domain::payment::compensation::PaymentFacts;
use serde::Deserialize;
use worker::{D1Database, Result};

/// Stores the processor's latest word on one payment (keyed by its payment intent, else its
/// session), whether or not its checkout attempt is known yet. A payment with neither id is not
/// stored (nothing could refund it). `paid` / `processing` is sticky: a late or redelivered
/// failure of an earlier card attempt on the same intent never turns a captured payment back into
/// "not charged", and a zero amount never overwrites the captured one.
pub async fn record_payment(db: &D1Database, p: &PaymentUpdate, at_ms: i64) -> Result<bool> {
    let Some(key) = p.payment_intent.as_deref().or(p.session_id.as_deref()) else {
        return Ok(false);
    };
    super::changed_one(
        db,
        "INSERT INTO payments (payment_key, payment_intent, session_id, client_reference, outcome, amount_minor, currency, updated_at_ms, locale) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
         ON CONFLICT(payment_key) DO UPDATE SET \
         outcome = CASE WHEN payments.outcome IN ('paid', 'processing') AND excluded.outcome IN ('failed', 'expired') \
           THEN payments.outcome ELSE excluded.outcome END, \
         payment_intent = COALESCE(excluded.payment_intent, payment_intent), \
         session_id = COALESCE(excluded.session_id, session_id), \
         client_reference = COALESCE(excluded.client_reference, client_reference), \
         amount_minor = COALESCE(NULLIF(excluded.amount_minor, 0), amount_minor), \
         currency = COALESCE(excluded.currency, currency), locale = COALESCE(excluded.locale, locale), \
         updated_at_ms = excluded.updated_at_ms \
         WHERE excluded.updated_at_ms >= payments.updated_at_ms",
        &[
            s(key),
            opt(p.payment_intent.as_deref()),
            opt(p.session_id.as_deref()),
            opt(p.client_reference.as_deref()),
            s(p.outcome.as_str()),
            p.amount_minor.map(n).unwrap_or(wasm_bindgen::JsValue::NULL),
            opt(p.currency.as_deref()),
            n(at_ms),
            opt(p.locale.as_deref()),
        ],
    )
    .await
}

#[derive(Debug, Deserialize)]
struct PaymentRow {
    payment_intent: Option<String>,
    client_reference: Option<String>,
    outcome: String,
    amount_minor: Option<f64>,
    currency: Option<String>,
}

fn facts(r: PaymentRow) -> Option<PaymentFacts> {
    PaymentOutcome::parse(&r.outcome).map(|outcome| PaymentFacts {
        payment_intent: r.payment_intent,
        outcome,
        amount_minor: r.amount_minor.map(|a| a as i64),
        currency: r.currency,
        claim_only: false,
    })
}

/// The payment rows whose payment intent is one of `intents` or whose client reference is one
/// of `references` (empty strings ignored), newest first per key, at most 5 per key.
async fn candidates(
    db: &D1Database,
    intents: &[&str],
    references: &[&str],
) -> Result<Vec<PaymentRow>> {
    let mut found: Vec<PaymentRow> = Vec::new();
    for (column, values) in [
        ("payment_intent", intents),
        ("client_reference", references),
    ] {
        for v in values.iter().filter(|v| !v.is_empty()) {
            found.extend(
                db.prepare(format!(
                    "SELECT payment_intent, client_reference, outcome, amount_minor, currency FROM payments \
                     WHERE {column} = ?1 ORDER BY updated_at_ms DESC LIMIT 5"
                ))
                .bind(&[s(v)])?
                .all()
                .await?
                .results::<PaymentRow>()?,
            );
        }
    }
    Ok(found)
}

/// The payment of a checkout: the newest row whose payment intent is one of `intents` or whose
/// client reference is one of `references` (empty strings ignored), a paid one before any other.
/// Whoever's it is: compensations use [`find_payment_for`].
pub async fn find_payment(
    db: &D1Database,
    intents: &[&str],
    references: &[&str],
) -> Result<Option<PaymentFacts>> {
    let all: Vec<PaymentFacts> = candidates(db, intents, references)
        .await?
        .into_iter()
        .filter_map(facts)
        .collect();
    Ok(all
        .iter()
        .find(|p| p.outcome.is_paid())
        .or(all.first())
        .cloned())
}

/// [`find_payment`] limited to payments `owner`'s compensation `compensation_id` may refund
/// (`crate::domain::event::ownership::payment_link` over [`super::ownership::payment_links`]): one
/// another owner's checkout, booking or earlier claim names is left out; one only compensations
/// of `owner` name is returned with `claim_only` set (the owner decides its refund). A paid one
/// first, else the newest.
pub async fn find_payment_for(
    db: &D1Database,
    intents: &[&str],
    references: &[&str],
    owner: &crate::domain::event::ownership::Owner,
    compensation_id: &str,
) -> Result<Option<PaymentFacts>> {
    let mut usable: Vec<PaymentFacts> = Vec::new();
    for row in candidates(db, intents, references).await? {
        let (records, claims) = super::ownership::payment_links(
            db,
            row.payment_intent.as_deref(),
            row.client_reference.as_deref(),
            compensation_id,
        )
        .await?;
        let pairs = |v: &[super::ownership::OwnerRow]| -> Vec<(String, Option<String>)> {
            v.iter()
                .map(|l| (l.source.clone(), l.partner.clone()))
                .collect()
        };
        let (records, claims) = (pairs(&records), pairs(&claims));
        let link = crate::domain::event::ownership::payment_link(
            owner,
            records.iter().map(|(s, p)| (s.as_str(), p.as_deref())),
            claims.iter().map(|(s, p)| (s.as_str(), p.as_deref())),
        );
        if link == crate::domain::event::ownership::PaymentLink::Foreign {
            worker::console_warn!(
                "compensation {compensation_id}: payment {:?} is linked to another source or partner; not used",
                row.payment_intent
            );
            continue;
        }
        if let Some(mut f) = facts(row) {
            f.claim_only = link == crate::domain::event::ownership::PaymentLink::ClaimOnly;
            usable.push(f);
        }
    }
    Ok(usable
        .iter()
        .find(|p| p.outcome.is_paid())
        .or(usable.first())
        .cloned())
}
