//! Who owns the records an event names (migration 0016: `source` / `partner` of bookings,
//! checkout attempts and compensations), and what links a payment to them. The verdicts are the
//! core's (`crate::domain::event::ownership`); this file only reads. Every lookup is served by an index
//! (`bookings` primary key, `bookings_by_prebook`, `bookings_by_reference`,
//! `checkout_attempts` primary key, `attempts_by_transaction`, `attempts_by_reference`,
//! `compensations` primary key, `compensations_by_intent`, `compensations_by_reference`).

use super::{opt, s};
use crate::domain::event::ownership::{judge, Owner, Verdict};
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
    super::row_by::<OwnerRow>(db, sql, value).await
}

/// The SQL condition "this row is the owner's" over a row's `source` / `partner` columns, the
/// owner's source bound at `?{source}` and its partner column ([`Owner::partner_column`]) at
/// `?{partner}`. It reads as [`Owner::stored`] compares: same source and, for an owner with a
/// partner (the generic source), the same partner, a `NULL` or empty stored partner reading as
/// [`crate::domain::event::ownership::DEFAULT_PARTNER`] (rows stored before partners existed); sources
/// without partners match whatever partner is stored. Writes that must not touch another owner's
/// row carry it in their `WHERE`, so a row stored meanwhile by another owner is never changed.
pub fn owned_by(source: u8, partner: u8) -> String {
    format!(
        "source = ?{source} AND (?{partner} IS NULL OR COALESCE(NULLIF(partner, ''), '{}') = ?{partner})",
        crate::domain::event::ownership::DEFAULT_PARTNER
    )
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
    /// As the core's [`crate::domain::event::ownership::reference_verdict`] reads it.
    pub fn record(&self) -> crate::domain::event::ownership::ReferenceRecord<'_> {
        crate::domain::event::ownership::ReferenceRecord {
            source: &self.source,
            partner: self.partner.as_deref(),
            named_checkout: self.named != 0,
        }
    }
}

/// The first foreign verdict of `actor` on client reference `reference` as a supplier failure
/// names it with `prebook_id` (see [`crate::domain::event::ownership::reference_verdict`]): the checkout
/// attempts and bookings that record the reference (`attempts_by_reference`,
/// `bookings_by_reference`). `None` when the actor may name it.
///
/// One row per owner and table ([`REFERENCE_OWNERS_SQL`]), never a `LIMIT` over records: however
/// many records one owner stores under the reference, another owner's record is always among what
/// the verdict reads (a cut list let 50 checkouts of one source hide a partner's booking).
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
        .prepare(REFERENCE_OWNERS_SQL)
        .bind(&[s(reference), opt(prebook)])?
        .all()
        .await?
        .results()?;
    Ok(
        match crate::domain::event::ownership::reference_verdict(
            actor,
            reference,
            rows.iter().map(ReferenceRow::record),
        ) {
            Verdict::Own => None,
            Verdict::Foreign { reason } => Some(reason),
        },
    )
}

/// The owners of client reference `?1` (checkout attempts, then bookings), one row per distinct
/// `(source, partner)` and table, `named` = 1 when that owner's group holds the checkout attempt of
/// prebook id `?2`. The rows read are the reference's index entries; what is returned is bounded by
/// the number of owners (sources and configured partners), not by what an owner stored.
pub const REFERENCE_OWNERS_SQL: &str =
    "SELECT source, partner, MAX(COALESCE(prebook_id = ?2, 0)) AS named \
     FROM checkout_attempts WHERE client_reference = ?1 GROUP BY source, partner \
     UNION ALL SELECT source, partner, 0 AS named FROM bookings WHERE client_reference = ?1 \
     GROUP BY source, partner";

/// The owners of the checkout attempts whose transaction id is payment intent `?1` or whose
/// client reference is `?2`, and of the bookings of those attempts or with that client reference:
/// one row per distinct `(source, partner)` and table (see [`REFERENCE_OWNERS_SQL`] on why no
/// `LIMIT`).
pub const PAYMENT_RECORD_OWNERS_SQL: &str =
    "SELECT source, partner FROM checkout_attempts WHERE transaction_id = ?1 OR client_reference = ?2 \
     GROUP BY source, partner \
     UNION ALL SELECT b.source, b.partner FROM bookings b \
       WHERE b.client_reference = ?2 \
       OR b.prebook_id IN (SELECT prebook_id FROM checkout_attempts WHERE transaction_id = ?1 OR client_reference = ?2) \
     GROUP BY b.source, b.partner";

/// The owners of the compensations other than `?3` that named payment intent `?1` or client
/// reference `?2`, one row per distinct `(source, partner)`.
pub const PAYMENT_CLAIM_OWNERS_SQL: &str = "SELECT source, partner FROM compensations \
     WHERE (payment_intent = ?1 OR client_reference = ?2) AND compensation_id <> ?3 \
     GROUP BY source, partner";

/// What links a payment to owners: `records`, the checkout attempts whose transaction id is its
/// payment intent or whose client reference is its client reference, and the bookings of those
/// attempts or with that client reference; `claims`, the compensations other than `except` that
/// named the payment intent or the client reference. One row per owner and table, never a cut
/// list: a payment another owner's record links is always seen as such, however many records the
/// actor stored with it.
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
            db.prepare(PAYMENT_RECORD_OWNERS_SQL)
                .bind(&[opt(pi), opt(reference)])?,
            db.prepare(PAYMENT_CLAIM_OWNERS_SQL)
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

/// A compensation's own checkout attempt (by its prebook id) or booking (by its booking id, or its
/// prebook id), as the proof of its payment reads them.
#[derive(Debug, Clone, Deserialize)]
pub struct RecordRow {
    /// `checkout` or `booking`.
    pub kind: String,
    pub client_reference: Option<String>,
    pub source: String,
    pub partner: Option<String>,
    /// When the row was first written (a booking's `created_at_ms`, a checkout attempt's
    /// `attempted_at_ms`: the arrival of the event that wrote it; inserts never overwrite), ms UTC.
    pub created_at_ms: i64,
}

/// The checkout attempt of `prebook_id`, the bookings of `booking_id` or `prebook_id`, and the
/// checkout attempts and bookings recording `client_reference` (each through its own index, at
/// most 20 per index), whoever's: the caller keeps its owner's.
pub async fn compensation_records(
    db: &D1Database,
    prebook_id: Option<&str>,
    booking_id: Option<&str>,
    client_reference: Option<&str>,
) -> Result<Vec<RecordRow>> {
    if prebook_id.is_none() && booking_id.is_none() && client_reference.is_none() {
        return Ok(Vec::new());
    }
    db.prepare(
        "SELECT * FROM (SELECT 'checkout' AS kind, client_reference, source, partner, attempted_at_ms AS created_at_ms FROM checkout_attempts \
         WHERE prebook_id = ?1) \
         UNION ALL SELECT * FROM (SELECT 'booking', client_reference, source, partner, created_at_ms FROM bookings WHERE booking_id = ?2) \
         UNION ALL SELECT * FROM (SELECT 'booking', client_reference, source, partner, created_at_ms FROM bookings WHERE prebook_id = ?1) \
         UNION ALL SELECT * FROM (SELECT 'checkout', client_reference, source, partner, attempted_at_ms FROM checkout_attempts \
         WHERE client_reference = ?3 LIMIT 20) \
         UNION ALL SELECT * FROM (SELECT 'booking', client_reference, source, partner, created_at_ms FROM bookings \
         WHERE client_reference = ?3 LIMIT 20)",
    )
    .bind(&[opt(prebook_id), opt(booking_id), opt(client_reference)])?
    .all()
    .await?
    .results()
}

/// The owners of the checkout attempts and bookings that record client reference `reference`,
/// one row per owner and table (the indexes `attempts_by_reference`, `bookings_by_reference`).
pub async fn reference_owners(db: &D1Database, reference: &str) -> Result<Vec<OwnerRow>> {
    db.prepare(
        "SELECT source, partner FROM checkout_attempts WHERE client_reference = ?1 GROUP BY source, partner \
         UNION ALL SELECT source, partner FROM bookings WHERE client_reference = ?1 GROUP BY source, partner",
    )
    .bind(&[s(reference)])?
    .all()
    .await?
    .results()
}
