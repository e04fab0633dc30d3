//! `checkout_attempts`, `holds`, `owner_actions`: unfinished checkouts, card-testing holds and the
//! used one-click tokens. Every lookup here is served by an index from `migrations/0003`.

use super::{changes, n, opt, s};
use crate::domain::event::PaymentOutcome;
use crate::domain::payment::checkout::CheckoutOutcome;
pub use crate::domain::payment::checkout::HoldStatus;
use serde::Deserialize;
use worker::{D1Database, Result};

/// An attempt as the decision reads it back.
#[derive(Debug, Clone, Deserialize)]
pub struct AttemptRow {
    pub prebook_id: String,
    pub email: Option<String>,
    pub guest_name: Option<String>,
    pub hotel_id: Option<String>,
    pub checkin: Option<String>,
    pub checkout: Option<String>,
    pub attempt_day: String,
    pub attempted_at_ms: i64,
    pub payment_status: Option<PaymentOutcome>,
    pub decline_code: Option<String>,
    pub details_json: String,
}

const ATTEMPT_COLUMNS: &str =
    "prebook_id, email, guest_name, hotel_id, checkin, checkout, attempt_day, \
     attempted_at_ms, payment_status, decline_code, details_json";

/// A new attempt to record.
pub struct NewAttempt<'a> {
    pub prebook_id: &'a str,
    pub transaction_id: Option<&'a str>,
    pub client_reference: Option<&'a str>,
    pub email: Option<&'a str>,
    pub guest_name: Option<&'a str>,
    pub hotel_id: Option<&'a str>,
    pub checkin: Option<&'a str>,
    pub checkout: Option<&'a str>,
    pub attempt_day: &'a str,
    pub attempted_at_ms: i64,
    pub details_json: &'a str,
    /// Its owner: the source of the checkout event (and its generic partner, if any).
    pub owner: &'a crate::domain::event::ownership::Owner,
}

/// Records an attempt once (a redelivered prebook changes nothing), and only while no booking of
/// another owner than `a.owner` holds its prebook id (checked in the statement itself,
/// [`super::ownership::owned_by`]). An attempt of that prebook id stored before, whoever's, is
/// kept as it is. The caller judges the owners of the prebook id before and after
/// ([`super::ownership::prebook`]).
pub async fn record(db: &D1Database, a: &NewAttempt<'_>) -> Result<()> {
    db.prepare(format!(
        "INSERT INTO checkout_attempts (prebook_id, transaction_id, client_reference, email, guest_name, hotel_id, \
         checkin, checkout, attempt_day, attempted_at_ms, details_json, source, partner) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13 \
         WHERE NOT EXISTS (SELECT 1 FROM bookings WHERE prebook_id = ?1 AND NOT ({})) \
         ON CONFLICT(prebook_id) DO NOTHING",
        super::ownership::owned_by(12, 13)
    ))
    .bind(&[
        s(a.prebook_id),
        opt(a.transaction_id),
        opt(a.client_reference),
        opt(a.email),
        opt(a.guest_name),
        opt(a.hotel_id),
        opt(a.checkin),
        opt(a.checkout),
        s(a.attempt_day),
        n(a.attempted_at_ms),
        s(a.details_json),
        s(a.owner.source.as_str()),
        opt(a.owner.partner_column()),
    ])?
    .run()
    .await?;
    Ok(())
}

pub async fn get(db: &D1Database, prebook_id: &str) -> Result<Option<AttemptRow>> {
    super::row_by::<AttemptRow>(
        db,
        &format!("SELECT {ATTEMPT_COLUMNS} FROM checkout_attempts WHERE prebook_id = ?1"),
        prebook_id,
    )
    .await
}

/// Attempts of one UTC day sharing the email or the name (card-testing rules).
pub async fn same_day(
    db: &D1Database,
    day: &str,
    email: Option<&str>,
    name: Option<&str>,
) -> Result<Vec<AttemptRow>> {
    let r = db
        .prepare(format!(
            "SELECT {ATTEMPT_COLUMNS} FROM checkout_attempts WHERE attempt_day = ?1 AND email = ?2 \
             UNION SELECT {ATTEMPT_COLUMNS} FROM checkout_attempts WHERE attempt_day = ?1 AND guest_name = ?3"
        ))
        .bind(&[s(day), opt(email), opt(name)])?
        .all()
        .await?;
    r.results::<AttemptRow>()
}

/// `true` when the same guest (email) tried the same stay (hotel, check-in) after `after_ms`.
pub async fn newer_attempt_exists(db: &D1Database, a: &AttemptRow) -> Result<bool> {
    let Some(email) = a.email.as_deref() else {
        return Ok(false);
    };
    let row: Option<serde_json::Value> = db
        .prepare(
            "SELECT 1 AS x FROM checkout_attempts WHERE email = ?1 AND hotel_id IS ?2 AND checkin IS ?3 \
             AND attempted_at_ms > ?4 LIMIT 1",
        )
        .bind(&[s(email), opt(a.hotel_id.as_deref()), opt(a.checkin.as_deref()), n(a.attempted_at_ms)])?
        .first(None)
        .await?;
    Ok(row.is_some())
}

/// `true` when a booking exists for this prebook, or for this guest and stay.
pub async fn booked(db: &D1Database, a: &AttemptRow) -> Result<bool> {
    let row: Option<serde_json::Value> = db
        .prepare(
            "SELECT 1 AS x FROM bookings WHERE prebook_id = ?1 \
             UNION ALL SELECT 1 AS x FROM bookings WHERE contact_email = ?2 AND checkin = ?3 AND checkout = ?4 LIMIT 1",
        )
        .bind(&[s(&a.prebook_id), opt(a.email.as_deref()), opt(a.checkin.as_deref()), opt(a.checkout.as_deref())])?
        .first(None)
        .await?;
    Ok(row.is_some())
}

/// Stores the processor's word on the attempts matching `transaction_id` or `client_reference`,
/// filling in a guest email/name the prebook lacked. Returns how many attempts matched.
#[allow(clippy::too_many_arguments)]
pub async fn record_payment(
    db: &D1Database,
    transaction_id: Option<&str>,
    client_reference: Option<&str>,
    status: PaymentOutcome,
    decline_code: Option<&str>,
    email: Option<&str>,
    name: Option<&str>,
) -> Result<usize> {
    let r = db
        .prepare(
            "UPDATE checkout_attempts SET payment_status = ?3, decline_code = COALESCE(?4, decline_code), \
             email = COALESCE(email, ?5), guest_name = COALESCE(guest_name, ?6) \
             WHERE (?1 IS NOT NULL AND transaction_id = ?1) OR (?2 IS NOT NULL AND client_reference = ?2)",
        )
        .bind(&[opt(transaction_id), opt(client_reference), s(status.as_str()), opt(decline_code), opt(email), opt(name)])?
        .run()
        .await?;
    Ok(changes(&r))
}

/// Records the decision on an attempt (and the hold it opened).
pub async fn set_outcome(
    db: &D1Database,
    prebook_id: &str,
    outcome: &CheckoutOutcome,
    hold_id: Option<&str>,
    at_ms: i64,
) -> Result<()> {
    db.prepare("UPDATE checkout_attempts SET outcome = ?2, hold_id = ?3, decided_at_ms = ?4 WHERE prebook_id = ?1")
        .bind(&[s(prebook_id), s(outcome.as_str()), opt(hold_id), n(at_ms)])?
        .run()
        .await?;
    Ok(())
}

/// A card-testing hold.
#[derive(Debug, Clone, Deserialize)]
pub struct HoldRow {
    pub hold_id: String,
    pub status: HoldStatus,
    pub reason: String,
    pub prebook_id: String,
    pub created_at_ms: i64,
    pub action: Option<String>,
    pub acted_at_ms: Option<i64>,
}

/// Opens a hold once (the same risk group on the same day keeps one hold). Returns `true` if new.
pub async fn open_hold(
    db: &D1Database,
    hold_id: &str,
    reason: &str,
    prebook_id: &str,
    at_ms: i64,
) -> Result<bool> {
    super::changed_one(
        db,
        "INSERT INTO holds (hold_id, status, reason, prebook_id, created_at_ms) VALUES (?1, ?5, ?2, ?3, ?4) \
         ON CONFLICT(hold_id) DO NOTHING",
        &[s(hold_id), s(reason), s(prebook_id), n(at_ms), s(HoldStatus::Held.as_str())],
    )
    .await
}

pub async fn get_hold(db: &D1Database, hold_id: &str) -> Result<Option<HoldRow>> {
    super::row_by::<HoldRow>(
        db,
        "SELECT hold_id, status, reason, prebook_id, created_at_ms, action, acted_at_ms FROM holds WHERE hold_id = ?1",
        hold_id,
    )
    .await
}

/// Open holds made before `made_before_ms` (ms UTC), oldest first, at most `limit`, through
/// `holds_by_status`; with `unrecalled`, only those not recalled to the owner yet.
pub async fn open_holds_made_before(
    db: &D1Database,
    made_before_ms: i64,
    unrecalled: bool,
    limit: u32,
) -> Result<Vec<HoldRow>> {
    let recall = if unrecalled {
        " AND recalled_at_ms IS NULL"
    } else {
        ""
    };
    db.prepare(format!(
        "SELECT hold_id, status, reason, prebook_id, created_at_ms, action, acted_at_ms FROM holds \
         WHERE status = 'held' AND created_at_ms < ?1{recall} ORDER BY created_at_ms LIMIT ?2"
    ))
    .bind(&[n(made_before_ms), n(i64::from(limit))])?
    .all()
    .await?
    .results()
}

/// Notes that an open hold was recalled to the owner at `at_ms` (once: a later call changes
/// nothing). `true` when this call noted it.
pub async fn mark_recalled(db: &D1Database, hold_id: &str, at_ms: i64) -> Result<bool> {
    super::changed_one(
        db,
        "UPDATE holds SET recalled_at_ms = ?2 WHERE hold_id = ?1 AND recalled_at_ms IS NULL",
        &[s(hold_id), n(at_ms)],
    )
    .await
}

/// `true` if this token was used before.
pub async fn token_used(db: &D1Database, token_id: &str) -> Result<bool> {
    let row: Option<serde_json::Value> = super::row_by(
        db,
        "SELECT 1 AS x FROM owner_actions WHERE token_id = ?1",
        token_id,
    )
    .await?;
    Ok(row.is_some())
}

/// One act of the owner (or of the engine on the owner's behalf), as `owner_actions` and `holds`
/// record it: what, when and from where.
pub struct Act<'a> {
    /// The action's stored name (`OwnerAction::as_str`, e.g. `dismiss`).
    pub action: &'a str,
    /// When, Unix ms.
    pub at_ms: i64,
    /// The client's IP, or `sweeper` for the engine's own; `None` when unknown.
    pub from: Option<&'a str>,
}

/// Uses a token for `act` on `hold_id` (a hold or a compensation id): `true` for exactly one caller
/// per token, whatever the concurrency.
pub async fn use_token(
    db: &D1Database,
    token_id: &str,
    hold_id: &str,
    act: &Act<'_>,
) -> Result<bool> {
    super::changed_one(
        db,
        "INSERT INTO owner_actions (token_id, hold_id, action, used_at_ms, used_from) VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT(token_id) DO NOTHING",
        &[s(token_id), s(hold_id), s(act.action), n(act.at_ms), opt(act.from)],
    )
    .await
}

/// Closes a held hold with `status` (`Acted` / `Dismissed`) by `act`: `true` for exactly one caller.
pub async fn close_hold(
    db: &D1Database,
    hold_id: &str,
    status: HoldStatus,
    act: &Act<'_>,
) -> Result<bool> {
    super::changed_one(
        db,
        "UPDATE holds SET status = ?2, action = ?3, acted_at_ms = ?4, acted_from = ?5 WHERE hold_id = ?1 AND status = ?6",
        &[s(hold_id), s(status.as_str()), s(act.action), n(act.at_ms), opt(act.from), s(HoldStatus::Held.as_str())],
    )
    .await
}

/// Undoes [`use_token`] + [`close_hold`] when the action could not be carried out (nothing was
/// queued), so the same link can be used again.
pub async fn reopen(db: &D1Database, hold_id: &str, token_id: &str) -> Result<()> {
    let reopen = db
        .prepare("UPDATE holds SET status = ?2, action = NULL, acted_at_ms = NULL, acted_from = NULL WHERE hold_id = ?1")
        .bind(&[s(hold_id), s(HoldStatus::Held.as_str())])?;
    let forget = db
        .prepare("DELETE FROM owner_actions WHERE token_id = ?1")
        .bind(&[s(token_id)])?;
    db.batch(vec![reopen, forget]).await?;
    Ok(())
}

/// The payment keys of a checkout attempt: `(transaction id, client reference)`; `None` when the
/// attempt is unknown.
pub async fn get_ids(
    db: &D1Database,
    prebook_id: &str,
) -> Result<Option<(Option<String>, Option<String>)>> {
    #[derive(Deserialize)]
    struct Ids {
        transaction_id: Option<String>,
        client_reference: Option<String>,
    }
    Ok(super::row_by::<Ids>(
        db,
        "SELECT transaction_id, client_reference FROM checkout_attempts WHERE prebook_id = ?1",
        prebook_id,
    )
    .await?
    .map(|i| (i.transaction_id, i.client_reference)))
}

/// Gives a used token back (its action could not be carried out, nothing changed).
pub async fn release_token(db: &D1Database, token_id: &str) -> Result<()> {
    db.prepare("DELETE FROM owner_actions WHERE token_id = ?1")
        .bind(&[s(token_id)])?
        .run()
        .await?;
    Ok(())
}
