//! `suppressions`: addresses that must not receive some or all email (migrations/0004_outbox.sql).
//!
//! Read by the outbox at send time for every client email; written by the unsubscribe route, by
//! the outbox when an SMTP server refuses a recipient for good, and by provider webhooks that
//! report hard bounces and complaints. Addresses are compared lower-cased.

use super::{n, opt, s};
use crate::domain::marketing::Suppression;
use serde::Deserialize;
use worker::{D1Database, Result};

#[derive(Deserialize)]
struct ReasonRow {
    reason: String,
}

/// What is on record for `email` (`Suppression::None` when nothing is).
pub async fn get(db: &D1Database, email: &str) -> Result<Suppression> {
    let row = get_statement(db, email)?.first::<ReasonRow>(None).await?;
    Ok(reason_of(row))
}

fn get_statement(db: &D1Database, email: &str) -> Result<worker::D1PreparedStatement> {
    db.prepare("SELECT reason FROM suppressions WHERE email = ?1")
        .bind(&[s(&email.trim().to_ascii_lowercase())])
}

fn reason_of(row: Option<ReasonRow>) -> Suppression {
    row.and_then(|r| Suppression::parse(&r.reason))
        .unwrap_or(Suppression::None)
}

/// What the outbox reads at a client email's send turn, in one round trip: the recipient's
/// suppression and, for an email bound to `booking_id`, the booking as it is now (`None` inside:
/// not in the record).
pub async fn send_turn(
    db: &D1Database,
    email: &str,
    booking_id: Option<&str>,
) -> Result<(Suppression, Option<Option<super::bookings::BookingRow>>)> {
    let mut batch = vec![get_statement(db, email)?];
    if let Some(id) = booking_id {
        batch.push(super::bookings::get_statement(db, id)?);
    }
    let results = db.batch(batch).await?;
    let suppression = match results.first() {
        Some(r) => reason_of(r.results::<ReasonRow>()?.into_iter().next()),
        None => Suppression::None,
    };
    let booking = match (booking_id, results.get(1)) {
        (Some(_), Some(r)) => Some(super::bookings::row_of(r)?),
        _ => None,
    };
    Ok((suppression, booking))
}

/// Records `reason` for `email` unless a stronger reason is already on record (complaint >
/// hard bounce > marketing unsubscribe; see [`Suppression::max`]). `source` says where the fact
/// came from (`unsubscribe_link`, `smtp`, `resend_webhook`, `operator`); `detail` is free text
/// (e.g. the SMTP reply). Idempotent. `Suppression::None` records nothing. Returns the reason on
/// record afterwards (the stronger of the old and the new).
pub async fn record(
    db: &D1Database,
    email: &str,
    reason: Suppression,
    source: &str,
    detail: Option<&str>,
    now_ms: i64,
) -> Result<Suppression> {
    let email = email.trim().to_ascii_lowercase();
    if reason == Suppression::None {
        return get(db, &email).await;
    }
    let current = get(db, &email).await?;
    if current.max(reason) != reason || current == reason {
        return Ok(current.max(reason));
    }
    db.prepare(
        "INSERT INTO suppressions (email, reason, source, detail, created_at_ms, updated_at_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?5) ON CONFLICT(email) DO UPDATE SET reason = excluded.reason, \
         source = excluded.source, detail = excluded.detail, updated_at_ms = excluded.updated_at_ms",
    )
    .bind(&[
        s(&email),
        s(reason.as_str()),
        s(source),
        opt(detail),
        n(now_ms),
    ])?
    .run()
    .await?;
    Ok(reason)
}
