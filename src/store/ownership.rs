//! Who owns the records an event names (migration 0016: `source` / `partner` of bookings,
//! checkout attempts and compensations), and what links a payment to them. The verdicts are the
//! core's (`crate::domain::ownership`); this file only reads. Every lookup is served by an index
//! (`bookings` primary key, `bookings_by_prebook`, `bookings_by_reference`,
//! `checkout_attempts` primary key, `attempts_by_transaction`, `attempts_by_reference`,
//! `compensations` primary key, `compensations_by_intent`, `compensations_by_reference`).

use super::{opt, s};
use crate::domain::ownership::{judge, Owner, Verdict};
use serde::Deserialize;
use worker::{D1Database, Result};

/// The owner columns of one stored record.
#[derive(Debug, Clone, Deserialize)]
pub struct OwnerRow {
    pub source: String,
    pub partner: Option<String>,
}

impl OwnerRow {
    /// The verdict on `actor` acting on this record, described as `what` in the reason.
    pub fn verdict(&self, actor: &Owner, what: &str) -> Verdict {
        judge(actor, what, &self.source, self.partner.as_deref())
    }
}

async fn one(db: &D1Database, sql: &str, value: &str) -> Result<Option<OwnerRow>> {
    db.prepare(sql)
        .bind(&[s(value)])?
        .first::<OwnerRow>(None)
        .await
}

/// The owner of booking `booking_id`, if it is stored.
pub async fn booking(db: &D1Database, booking_id: &str) -> Result<Option<OwnerRow>> {
    one(
        db,
        "SELECT source, partner FROM bookings WHERE booking_id = ?1",
        booking_id,
    )
    .await
}

/// The owner of compensation `id`, if it is stored.
pub async fn compensation(db: &D1Database, id: &str) -> Result<Option<OwnerRow>> {
    one(
        db,
        "SELECT source, partner FROM compensations WHERE compensation_id = ?1",
        id,
    )
    .await
}

/// The owners of the checkout attempt `prebook_id` and of every booking recorded for it.
pub async fn prebook(db: &D1Database, prebook_id: &str) -> Result<Vec<OwnerRow>> {
    prebook_statement(db, prebook_id)?.all().await?.results()
}

/// The first foreign verdict of `actor` on the owners a [`prebook_statement`] found.
pub fn foreign_prebook(rows: &[OwnerRow], actor: &Owner, prebook_id: &str) -> Option<String> {
    rows.iter().find_map(
        |row| match row.verdict(actor, &format!("checkout {prebook_id}")) {
            Verdict::Foreign { reason } => Some(reason),
            Verdict::Own => None,
        },
    )
}

/// The statement of [`prebook`], for a caller's own batch.
pub fn prebook_statement(db: &D1Database, prebook_id: &str) -> Result<worker::D1PreparedStatement> {
    db.prepare(
        "SELECT source, partner FROM checkout_attempts WHERE prebook_id = ?1 \
             UNION ALL SELECT source, partner FROM bookings WHERE prebook_id = ?1",
    )
    .bind(&[s(prebook_id)])
}

/// The first foreign verdict of `actor` on the records a booking-creating or failing event names
/// by id: the booking itself, the booking it replaces, its checkout (prebook id). `None` when all
/// are the actor's own or not stored.
pub async fn foreign_named(
    db: &D1Database,
    actor: &Owner,
    booking_ids: &[&str],
    prebook_id: Option<&str>,
) -> Result<Option<String>> {
    for id in booking_ids {
        if let Some(row) = booking(db, id).await? {
            if let Verdict::Foreign { reason } = row.verdict(actor, &format!("booking {id}")) {
                return Ok(Some(reason));
            }
        }
    }
    if let Some(p) = prebook_id.filter(|p| !p.trim().is_empty()) {
        return Ok(foreign_prebook(&prebook(db, p).await?, actor, p));
    }
    Ok(None)
}

/// A checkout attempt or booking that records a client reference: its owner, and whether it is
/// the checkout attempt of the prebook id the event names (`named`, 0 or 1).
#[derive(Debug, Clone, Deserialize)]
pub struct ReferenceRow {
    pub source: String,
    pub partner: Option<String>,
    pub named: i64,
}

impl ReferenceRow {
    /// As the core's [`crate::domain::ownership::reference_verdict`] reads it.
    pub fn record(&self) -> crate::domain::ownership::ReferenceRecord<'_> {
        crate::domain::ownership::ReferenceRecord {
            source: &self.source,
            partner: self.partner.as_deref(),
            named_checkout: self.named != 0,
        }
    }
}

/// The first foreign verdict of `actor` on client reference `reference` as a supplier failure
/// names it with `prebook_id` (see [`crate::domain::ownership::reference_verdict`]): the checkout
/// attempts and bookings that record the reference (`attempts_by_reference`,
/// `bookings_by_reference`), the named checkout first. `None` when the actor may name it. At most
/// 50 records are read (a verdict needs one foreign).
pub async fn foreign_reference(
    db: &D1Database,
    actor: &Owner,
    reference: &str,
    prebook_id: Option<&str>,
) -> Result<Option<String>> {
    let reference = reference.trim();
    if reference.is_empty() {
        return Ok(None);
    }
    let prebook = prebook_id.map(str::trim).filter(|p| !p.is_empty());
    let rows: Vec<ReferenceRow> = db
        .prepare(
            "SELECT source, partner, COALESCE(prebook_id = ?2, 0) AS named \
             FROM checkout_attempts WHERE client_reference = ?1 \
             UNION ALL SELECT source, partner, 0 AS named FROM bookings WHERE client_reference = ?1 \
             ORDER BY named DESC LIMIT 50",
        )
        .bind(&[s(reference), opt(prebook)])?
        .all()
        .await?
        .results()?;
    Ok(
        match crate::domain::ownership::reference_verdict(
            actor,
            reference,
            rows.iter().map(ReferenceRow::record),
        ) {
            Verdict::Own => None,
            Verdict::Foreign { reason } => Some(reason),
        },
    )
}

/// What links a payment to owners: `records`, the checkout attempts whose transaction id is its
/// payment intent or whose client reference is its client reference, and the bookings of those
/// attempts or with that client reference; `claims`, the compensations other than `except` that
/// named the payment intent or the client reference. At most 50 of each (a verdict needs one
/// foreign).
pub async fn payment_links(
    db: &D1Database,
    payment_intent: Option<&str>,
    client_reference: Option<&str>,
    except: &str,
) -> Result<(Vec<OwnerRow>, Vec<OwnerRow>)> {
    let pi = payment_intent.filter(|v| !v.is_empty());
    let reference = client_reference.filter(|v| !v.is_empty());
    if pi.is_none() && reference.is_none() {
        return Ok((Vec::new(), Vec::new()));
    }
    let r = db
        .batch(vec![
            db.prepare(
                "SELECT source, partner FROM checkout_attempts WHERE transaction_id = ?1 OR client_reference = ?2 \
                 UNION ALL SELECT b.source, b.partner FROM bookings b \
                   WHERE b.client_reference = ?2 \
                   OR b.prebook_id IN (SELECT prebook_id FROM checkout_attempts WHERE transaction_id = ?1 OR client_reference = ?2) \
                 LIMIT 50",
            )
            .bind(&[opt(pi), opt(reference)])?,
            db.prepare(
                "SELECT source, partner FROM compensations \
                 WHERE (payment_intent = ?1 OR client_reference = ?2) AND compensation_id <> ?3 LIMIT 50",
            )
            .bind(&[opt(pi), opt(reference), s(except)])?,
        ])
        .await?;
    let rows = |i: usize| -> Result<Vec<OwnerRow>> {
        match r.get(i) {
            Some(res) => res.results(),
            None => Ok(Vec::new()),
        }
    };
    Ok((rows(0)?, rows(1)?))
}
