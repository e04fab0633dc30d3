//! `compensations`, `compensation_steps` (migration 0012): the record of every compensation and
//! each of its steps, so the owner and the tests can see exactly what was undone (the payments
//! they refund: `super::payments`, re-exported here). Every lookup is served by an index of
//! migration 0012.

pub use super::payments::*;
use super::{changes, n, opt, s};
use crate::domain::event::ownership::Owner;
use crate::domain::payment::compensation::{Cause, RefundState, StepKind, StepStatus};
pub use crate::domain::payment::compensation::{CompensationRow, StepRow};
use serde::Deserialize;
use worker::{D1Database, Result};

const COLUMNS: &str = "compensation_id, cause, booking_id, prebook_id, client_reference, payment_intent, guest_email, \
     guest_name, trip, source, partner, event_id, event_name, reason, fee_amount, fee_currency, supplier_refund, state, created_at_ms, reminders_sent";

/// What opens (or completes) a compensation row.
pub struct NewCompensation<'a> {
    pub compensation_id: &'a str,
    pub cause: Cause,
    pub booking_id: Option<&'a str>,
    pub prebook_id: Option<&'a str>,
    pub client_reference: Option<&'a str>,
    pub payment_intent: Option<&'a str>,
    pub guest_email: Option<&'a str>,
    pub guest_name: Option<&'a str>,
    pub trip: Option<&'a str>,
    pub source: &'a str,
    /// The generic partner of the event that opens it (`None` for other sources).
    pub partner: Option<&'a str>,
    pub event_id: &'a str,
    pub event_name: &'a str,
    pub reason: &'a str,
    pub fee_amount: Option<&'a str>,
    pub fee_currency: Option<&'a str>,
    pub supplier_refund: Option<&'a str>,
    pub at_ms: i64,
}

/// Inserts the compensation and its five step rows (`pending`), or — when it exists (the failure
/// delivered twice, or named by another event first) — fills in facts it lacked and keeps
/// everything else. One batch; returns the row as stored.
pub async fn open(db: &D1Database, c: &NewCompensation<'_>) -> Result<CompensationRow> {
    let row = db
        .prepare(
            "INSERT INTO compensations (compensation_id, cause, booking_id, prebook_id, client_reference, payment_intent, \
             guest_email, guest_name, trip, source, event_id, event_name, reason, fee_amount, fee_currency, supplier_refund, \
             state, created_at_ms, updated_at_ms, partner) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, 'open', ?17, ?17, ?18) \
             ON CONFLICT(compensation_id) DO UPDATE SET \
             booking_id = COALESCE(compensations.booking_id, excluded.booking_id), \
             prebook_id = COALESCE(compensations.prebook_id, excluded.prebook_id), \
             client_reference = COALESCE(compensations.client_reference, excluded.client_reference), \
             payment_intent = COALESCE(compensations.payment_intent, excluded.payment_intent), \
             guest_email = COALESCE(compensations.guest_email, excluded.guest_email), \
             guest_name = COALESCE(compensations.guest_name, excluded.guest_name), \
             trip = COALESCE(compensations.trip, excluded.trip)",
        )
        .bind(&[
            s(c.compensation_id),
            s(c.cause.as_str()),
            opt(c.booking_id),
            opt(c.prebook_id),
            opt(c.client_reference),
            opt(c.payment_intent),
            opt(c.guest_email),
            opt(c.guest_name),
            opt(c.trip),
            s(c.source),
            s(c.event_id),
            s(c.event_name),
            s(c.reason),
            opt(c.fee_amount),
            opt(c.fee_currency),
            opt(c.supplier_refund),
            n(c.at_ms),
            opt(c.partner),
        ])?;
    let mut batch = vec![row];
    for kind in StepKind::ALL {
        batch.push(
            db.prepare(
                "INSERT INTO compensation_steps (compensation_id, step, position, status, updated_at_ms) \
                 VALUES (?1, ?2, ?3, 'pending', ?4) ON CONFLICT(compensation_id, step) DO NOTHING",
            )
            .bind(&[
                s(c.compensation_id),
                s(kind.as_str()),
                n(kind.position()),
                n(c.at_ms),
            ])?,
        );
    }
    db.batch(batch).await?;
    get(db, c.compensation_id)
        .await?
        .ok_or_else(|| worker::Error::RustError("compensation vanished after its insert".into()))
}

/// One compensation by id.
pub async fn get(db: &D1Database, id: &str) -> Result<Option<CompensationRow>> {
    super::row_by::<CompensationRow>(
        db,
        &format!("SELECT {COLUMNS} FROM compensations WHERE compensation_id = ?1"),
        id,
    )
    .await
}

/// The compensation of a booking, by booking id, prebook id or client reference (any given),
/// opened by `owner` (its source and partner): another owner's compensation that names the same
/// ids is never found, so it can neither close this booking nor hide this owner's own one.
pub async fn find_for_booking(
    db: &D1Database,
    owner: &Owner,
    booking_id: Option<&str>,
    prebook_id: Option<&str>,
    client_reference: Option<&str>,
) -> Result<Option<CompensationRow>> {
    let given = |v: Option<&str>| v.filter(|v| !v.trim().is_empty()).map(str::to_string);
    let (booking_id, prebook_id, client_reference) = (
        given(booking_id),
        given(prebook_id),
        given(client_reference),
    );
    match find_for_booking_statement(
        db,
        owner,
        booking_id.as_deref(),
        prebook_id.as_deref(),
        client_reference.as_deref(),
    )? {
        Some(statement) => statement.first::<CompensationRow>(None).await,
        None => Ok(None),
    }
}

/// The statement of [`find_for_booking`] (`None` when no identifier is given), for a caller's
/// own batch (read its result with [`row_of`]).
pub fn find_for_booking_statement(
    db: &D1Database,
    owner: &Owner,
    booking_id: Option<&str>,
    prebook_id: Option<&str>,
    client_reference: Option<&str>,
) -> Result<Option<worker::D1PreparedStatement>> {
    let given = |v: Option<&str>| v.filter(|v| !v.trim().is_empty()).map(str::to_string);
    let (booking_id, prebook_id, client_reference) = (
        given(booking_id),
        given(prebook_id),
        given(client_reference),
    );
    if booking_id.is_none() && prebook_id.is_none() && client_reference.is_none() {
        return Ok(None);
    }
    // One round trip: each identifier through its own index, the booking id first, then the
    // prebook id, then the client reference (a NULL one matches nothing); only the owner's own.
    db.prepare(format!(
        "SELECT {COLUMNS} FROM ( \
           SELECT {COLUMNS}, 1 AS priority FROM compensations WHERE booking_id = ?1 AND {mine} \
           UNION ALL SELECT {COLUMNS}, 2 FROM compensations WHERE prebook_id = ?2 AND {mine} \
           UNION ALL SELECT {COLUMNS}, 3 FROM compensations WHERE client_reference = ?3 AND {mine}) \
         ORDER BY priority LIMIT 1",
        mine = crate::store::ownership::owned_by(4, 5)
    ))
    .bind(&[
        opt(booking_id.as_deref()),
        opt(prebook_id.as_deref()),
        opt(client_reference.as_deref()),
        s(owner.source.as_str()),
        opt(owner.partner_column()),
    ])
    .map(Some)
}

/// Removes compensation `id` opened by `owner` while none of its steps has started (all
/// `pending`): what a supplier failure opened before it was found to name another owner's
/// booking. The id derives from the ids the failure named, not from its owner, so a row left
/// behind would make the rightful owner's own failure of that booking look foreign. Returns
/// whether a row was removed; a compensation any step of which has run is kept.
pub async fn discard_unstarted(db: &D1Database, id: &str, owner: &Owner) -> Result<bool> {
    let unstarted = "NOT EXISTS (SELECT 1 FROM compensation_steps WHERE compensation_id = ?1 \
                     AND status != 'pending')";
    let results = db
        .batch(vec![
            db.prepare(format!(
                "DELETE FROM compensation_steps WHERE compensation_id = ?1 AND {unstarted} \
                 AND EXISTS (SELECT 1 FROM compensations WHERE compensation_id = ?1 AND {mine})",
                mine = crate::store::ownership::owned_by(2, 3)
            ))
            .bind(&[s(id), s(owner.source.as_str()), opt(owner.partner_column())])?,
            db.prepare(format!(
                "DELETE FROM compensations WHERE compensation_id = ?1 AND {mine} AND {unstarted}",
                mine = crate::store::ownership::owned_by(2, 3)
            ))
            .bind(&[s(id), s(owner.source.as_str()), opt(owner.partner_column())])?,
        ])
        .await?;
    Ok(results.get(1).is_some_and(|r| changes(r) > 0))
}

/// The compensation a [`find_for_booking_statement`] found in a batch.
pub fn row_of(r: &worker::D1Result) -> Result<Option<CompensationRow>> {
    Ok(r.results::<CompensationRow>()?.into_iter().next())
}

/// Ids of the compensations whose refund waits for a payment that `intents` / `references`
/// may be, or is claimed by `claimant` already (a retried step of the same payment journey):
/// matched by the compensation's own payment intent or client reference, or through the prebook
/// of any checkout attempt whose transaction id or client reference it is. The prebooks are
/// joined in SQL, not listed first, so no number of other attempts carrying the same reference
/// can push the waiting compensation's own prebook out of a cut list.
pub async fn waiting_for_payment(
    db: &D1Database,
    intents: &[&str],
    references: &[&str],
    claimant: &str,
) -> Result<Vec<String>> {
    #[derive(Deserialize)]
    struct Id {
        compensation_id: String,
    }
    const WAITING: &str = "(st.status = 'waiting_payment' \
         OR (st.status = 'skipped' AND c.state = 'not_charged') \
         OR (st.status = 'running' AND st.claimed_by = ?2))";
    let mut ids: Vec<String> = Vec::new();
    for (own, attempt, values) in [
        ("payment_intent", "transaction_id", intents),
        ("client_reference", "client_reference", references),
    ] {
        for v in values.iter().filter(|v| !v.is_empty()) {
            let found = db
                .prepare(format!(
                    "SELECT c.compensation_id FROM compensations c JOIN compensation_steps st \
                       ON st.compensation_id = c.compensation_id AND st.step = 'refund' \
                     WHERE c.{own} = ?1 AND {WAITING} \
                     UNION \
                     SELECT c.compensation_id FROM checkout_attempts a \
                       JOIN compensations c ON c.prebook_id = a.prebook_id \
                       JOIN compensation_steps st \
                       ON st.compensation_id = c.compensation_id AND st.step = 'refund' \
                     WHERE a.{attempt} = ?1 AND {WAITING}"
                ))
                .bind(&[s(v), s(claimant)])?
                .all()
                .await?
                .results::<Id>()?;
            for f in found {
                if !ids.contains(&f.compensation_id) {
                    ids.push(f.compensation_id);
                }
            }
        }
    }
    Ok(ids)
}

/// Sets the compensation's payment intent (once) and its state.
pub async fn set_state(
    db: &D1Database,
    id: &str,
    state: RefundState,
    payment_intent: Option<&str>,
    at_ms: i64,
) -> Result<()> {
    db.prepare(
        "UPDATE compensations SET state = ?2, payment_intent = COALESCE(payment_intent, ?3), \
         updated_at_ms = MAX(updated_at_ms, ?4) WHERE compensation_id = ?1",
    )
    .bind(&[s(id), s(state.as_str()), opt(payment_intent), n(at_ms)])?
    .run()
    .await?;
    Ok(())
}

/// Attaches the booking id a compensation lacked (the booking event came after the failure).
pub async fn attach_booking(db: &D1Database, id: &str, booking_id: &str) -> Result<()> {
    db.prepare(
        "UPDATE compensations SET booking_id = COALESCE(booking_id, ?2) WHERE compensation_id = ?1",
    )
    .bind(&[s(id), s(booking_id)])?
    .run()
    .await?;
    Ok(())
}

const STEP_COLUMNS: &str =
    "step, status, claimed_by, idempotency_key, round, provider_id, provider_status, \
     amount_minor, currency, attempts, error, detail, updated_at_ms, payment_intent, proof";

/// Every step of a compensation, in order.
pub async fn steps(db: &D1Database, id: &str) -> Result<Vec<StepRow>> {
    db.prepare(format!(
        "SELECT {STEP_COLUMNS} FROM compensation_steps WHERE compensation_id = ?1 ORDER BY position"
    ))
    .bind(&[s(id)])?
    .all()
    .await?
    .results::<StepRow>()
}

/// One step of a compensation.
pub async fn step(db: &D1Database, id: &str, kind: StepKind) -> Result<Option<StepRow>> {
    db.prepare(format!(
        "SELECT {STEP_COLUMNS} FROM compensation_steps WHERE compensation_id = ?1 AND step = ?2"
    ))
    .bind(&[s(id), s(kind.as_str())])?
    .first::<StepRow>(None)
    .await
}

/// What a step's record becomes; `None` fields keep their stored value.
#[derive(Default)]
pub struct StepUpdate<'a> {
    pub status: Option<StepStatus>,
    pub idempotency_key: Option<&'a str>,
    pub provider_id: Option<&'a str>,
    pub provider_status: Option<&'a str>,
    pub amount_minor: Option<i64>,
    pub currency: Option<&'a str>,
    /// `Some("")` clears the error.
    pub error: Option<&'a str>,
    pub detail: Option<&'a str>,
    /// Sets the refund round (a released claim gives its round back).
    pub round: Option<i64>,
    /// The proven payment intent of the refund: written once, never replaced.
    pub payment_intent: Option<&'a str>,
    /// What Stripe said when the payment was looked up.
    pub proof: Option<&'a str>,
    /// Guard, not a value: write only while the step is claimed by this claimant (or not claimed
    /// yet: `pending`, `waiting_payment`).
    pub if_claimed_by: Option<&'a str>,
}

/// Writes a step's record. With `only_if` set, only while the step's status is one of them
/// (returns whether it was written).
pub async fn update_step(
    db: &D1Database,
    id: &str,
    kind: StepKind,
    u: &StepUpdate<'_>,
    only_if: &[StepStatus],
    at_ms: i64,
) -> Result<bool> {
    let guard = if only_if.is_empty() {
        String::new()
    } else {
        format!(
            " AND status IN ({})",
            only_if
                .iter()
                .map(|st| format!("'{}'", st.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let r = db
        .prepare(format!(
            "UPDATE compensation_steps SET status = COALESCE(?3, status), \
             idempotency_key = COALESCE(?4, idempotency_key), provider_id = COALESCE(?5, provider_id), \
             provider_status = COALESCE(?6, provider_status), amount_minor = COALESCE(?7, amount_minor), \
             currency = COALESCE(?8, currency), error = CASE WHEN ?9 IS NULL THEN error WHEN ?9 = '' THEN NULL ELSE ?9 END, \
             detail = COALESCE(?10, detail), round = COALESCE(?12, round), updated_at_ms = MAX(updated_at_ms, ?11), \
             payment_intent = COALESCE(payment_intent, ?14), proof = COALESCE(?15, proof) \
             WHERE compensation_id = ?1 AND step = ?2{guard} \
             AND (?13 IS NULL OR status IN ('pending', 'waiting_payment') OR claimed_by = ?13)"
        ))
        .bind(&[
            s(id),
            s(kind.as_str()),
            opt(u.status.map(StepStatus::as_str)),
            opt(u.idempotency_key),
            opt(u.provider_id),
            opt(u.provider_status),
            u.amount_minor.map(n).unwrap_or(wasm_bindgen::JsValue::NULL),
            opt(u.currency),
            opt(u.error),
            opt(u.detail),
            n(at_ms),
            u.round.map(n).unwrap_or(wasm_bindgen::JsValue::NULL),
            opt(u.if_claimed_by),
            opt(u.payment_intent),
            opt(u.proof),
        ])?
        .run()
        .await?;
    Ok(changes(&r) == 1)
}

/// Settles a step not claimed by anyone (`pending`) once: `status` with `detail`. A step already
/// settled keeps its record (a replay or a duplicate event changes nothing); returns whether it was
/// written.
pub async fn settle(
    db: &D1Database,
    id: &str,
    kind: StepKind,
    status: StepStatus,
    detail: &str,
    at_ms: i64,
) -> Result<bool> {
    update_step(
        db,
        id,
        kind,
        &StepUpdate {
            status: Some(status),
            detail: Some(detail),
            ..Default::default()
        },
        &[StepStatus::Pending],
        at_ms,
    )
    .await
}

/// A compensation and its refund step (both must exist: the step rows are inserted with it).
pub async fn with_refund(db: &D1Database, id: &str) -> Result<(CompensationRow, StepRow)> {
    let c = get(db, id)
        .await?
        .ok_or_else(|| worker::Error::RustError(format!("compensation {id} is unknown")))?;
    let refund = step(db, id, StepKind::Refund)
        .await?
        .ok_or_else(|| worker::Error::RustError(format!("compensation {id} has no refund step")))?;
    Ok((c, refund))
}

/// How long a claim on a refund step holds, ms: longer than a Workflow step's timeout (60 s) and
/// an owner's request with Stripe's timeout (20 s). A claim older than this belongs to an actor
/// that died mid-way (a cancelled request, a failed journey); anyone may take it over, and the
/// refund then looks at Stripe's refunds of the payment before any request.
pub const CLAIM_LEASE_MS: i64 = 5 * 60_000;

/// Claims the refund step for `claimant` (an event id, or `owner:<token id>`): from one of `from`,
/// again by the same claimant while it is `running` (a retried Workflow step), or from anyone's
/// `running` claim older than [`CLAIM_LEASE_MS`]. A claim from `failed` starts a new round (a new
/// idempotency key). Counts the attempt. With `payment_intent`, the payment's refund is claimed
/// for this compensation in the same batch (D1 `refund_claims`): if another compensation owns it,
/// nothing is claimed.
///
/// Returns the claimed row, or `Err(owner)` naming the compensation that owns the payment's
/// refund, or `Ok(None)` when another actor holds the step or its status is not one of `from`.
pub async fn claim_refund(
    db: &D1Database,
    id: &str,
    claimant: &str,
    from: &[StepStatus],
    payment_intent: Option<&str>,
    at_ms: i64,
) -> Result<std::result::Result<Option<StepRow>, String>> {
    #[derive(Deserialize)]
    struct Owner {
        compensation_id: String,
    }
    let allowed = from
        .iter()
        .map(|st| format!("'{}'", st.as_str()))
        .collect::<Vec<_>>()
        .join(", ");
    let mut batch = Vec::new();
    if let Some(pi) = payment_intent {
        batch.push(
            db.prepare(
                "INSERT INTO refund_claims (payment_intent, compensation_id, claimed_at_ms) VALUES (?1, ?2, ?3) \
                 ON CONFLICT(payment_intent) DO NOTHING",
            )
            .bind(&[s(pi), s(id), n(at_ms)])?,
        );
    }
    batch.push(
        db.prepare(format!(
            "UPDATE compensation_steps SET status = 'running', claimed_by = ?2, attempts = attempts + 1, \
             round = round + CASE WHEN status = 'failed' THEN 1 ELSE 0 END, updated_at_ms = MAX(updated_at_ms, ?3) \
             WHERE compensation_id = ?1 AND step = 'refund' \
             AND (status IN ({allowed}) OR (status = 'running' AND (claimed_by = ?2 OR updated_at_ms < ?4))) \
             AND (?5 IS NULL OR EXISTS (SELECT 1 FROM refund_claims WHERE payment_intent = ?5 AND compensation_id = ?1))"
        ))
        .bind(&[s(id), s(claimant), n(at_ms), n(at_ms - CLAIM_LEASE_MS), opt(payment_intent)])?,
    );
    let results = db.batch(batch).await?;
    if results.last().map(changes) != Some(1) {
        if let Some(pi) = payment_intent {
            let owner = super::row_by::<Owner>(
                db,
                "SELECT compensation_id FROM refund_claims WHERE payment_intent = ?1",
                pi,
            )
            .await?;
            if let Some(o) = owner.filter(|o| o.compensation_id != id) {
                return Ok(Err(o.compensation_id));
            }
        }
        return Ok(Ok(None));
    }
    Ok(Ok(step(db, id, StepKind::Refund).await?))
}

/// The compensation whose refund Stripe reports on: by refund id (`re_…`), else by the payment
/// intent its refund step proved (never by an intent a supplier only named).
pub async fn find_by_refund(
    db: &D1Database,
    refund_id: Option<&str>,
    payment_intent: Option<&str>,
) -> Result<Option<String>> {
    if let Some(re) = refund_id.filter(|r| !r.is_empty()) {
        let found = db
            .prepare(
                "SELECT compensation_id FROM compensation_steps WHERE provider_id = ?1 LIMIT 1",
            )
            .bind(&[s(re)])?
            .first(Some("compensation_id"))
            .await?;
        if found.is_some() {
            return Ok(found);
        }
    }
    if let Some(pi) = payment_intent.filter(|p| !p.is_empty()) {
        return db
            .prepare(
                "SELECT compensation_id FROM compensation_steps WHERE payment_intent = ?1 \
                 AND step = 'refund' LIMIT 1",
            )
            .bind(&[s(pi)])?
            .first(Some("compensation_id"))
            .await;
    }
    Ok(None)
}
