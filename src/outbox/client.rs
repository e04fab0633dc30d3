//! How the rest of the Worker talks to the single outbox instance (Durable Object `OUTBOX`, name
//! `outbox`): JSON over the stub's `fetch`.

use crate::config::{DB_BINDING, OUTBOX_BINDING, OUTBOX_NAME};
use crate::domain::outbox::intent::SkipReason;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::platform::ErrorBody;
use crate::store;
use serde::{Deserialize, Serialize};
use worker::{D1Database, Env, Error, Method, Request, RequestInit, Result};

/// What [`deliver`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// First claim of this dedupe key: claimed in D1 and enqueued.
    Enqueued,
    /// The key was claimed before (a retry of this step, or another journey). While the email is
    /// unsettled the outbox was asked again, idempotently, in case the earlier attempt died
    /// between claim and enqueue; once it was sent, dead, dropped or blocked, nothing was done
    /// ([`crate::domain::email::EmailStatus::may_hand_over_again`]).
    AlreadyClaimed,
}

/// The send-once protocol: claims the email's dedupe key in D1 (unique, never expires), then hands
/// the email to the outbox (idempotent on that key). The D1 row stays `claimed` until the outbox
/// records its outcome (the sweeper tells a claimed email the outbox holds from one it never got:
/// `crate::sweeper`). Every step of it is safe to repeat, so call it inside a retried Workflow step
/// or an operator action.
pub async fn deliver(env: &Env, email: &OutgoingEmail, at_ms: i64) -> Result<Delivery> {
    deliver_with(env, email, at_ms, |_| Ok(Vec::new())).await
}

/// [`deliver`], with the caller's own record of what it did (`with`: statements run in the same
/// D1 batch as the claim, so the two are one transaction, e.g. a scheduled send marked sent).
/// They run again when the step is repeated, so they must be idempotent.
pub async fn deliver_with(
    env: &Env,
    email: &OutgoingEmail,
    at_ms: i64,
    with: impl FnOnce(&D1Database) -> Result<Vec<worker::D1PreparedStatement>>,
) -> Result<Delivery> {
    let db = env.d1(DB_BINDING)?;
    let mut statements = with(&db)?;
    let replies = crate::platform::config_or_err(env)?.replies;
    // Never issued in the future (a token from the future is refused), however early a step ran.
    let issued = at_ms.min(crate::platform::now_ms());
    let addressed = with_reply_address(&replies, email, issued);
    let email = match &addressed {
        Some((email, reply_ref)) => {
            let booking = email.booking_id.as_deref().unwrap_or_default();
            let key = email.dedupe_key.as_str();
            statements.push(store::inbound::reply_address_statement(
                &db, reply_ref, booking, key, issued,
            )?);
            email
        }
        None => email,
    };
    // The calendar parts' SEQUENCE and DTSTAMP, per UID across every email of the booking (the
    // same stamp on every repeat of this email), before the email is kept and handed over.
    let mut stamped;
    let email = if email.calendars.is_empty() {
        email
    } else {
        stamped = email.clone();
        store::calendar::stamp(&db, &mut stamped, at_ms).await?;
        &stamped
    };
    let fresh = store::emails::claim_with(&db, email, at_ms, statements).await?;
    if !fresh {
        // A repeat: ask the outbox again only while the email is still open. Once it was sent,
        // or decided against (dead, dropped, blocked, skipped other than as superseded), the
        // outbox's retention may have pruned its row, and a second enqueue would send it.
        let known = store::emails::find(&db, email.dedupe_key.as_str()).await?;
        let superseded = SkipReason::Superseded.to_string();
        if known.is_some_and(|row| {
            !row.status
                .may_hand_over_again(row.last_error.as_deref(), &superseded)
        }) {
            return Ok(Delivery::AlreadyClaimed);
        }
    }
    enqueue(env, email).await?;
    Ok(if fresh {
        Delivery::Enqueued
    } else {
        Delivery::AlreadyClaimed
    })
}

/// `email` with its reply address (`reply_to`) and the address's reference, when replies are on
/// and it is a guest email about a booking without one yet; `None` otherwise. The token is
/// issued at `at_ms`, so a repeated step signs the same address (the first claim's copy is the
/// one kept either way).
fn with_reply_address(
    replies: &crate::config::replies::ReplyConfig,
    email: &OutgoingEmail,
    at_ms: i64,
) -> Option<(OutgoingEmail, String)> {
    use crate::domain::email::Audience;
    use crate::domain::inbound::reply_token;
    let booking = email.booking_id.as_deref()?;
    if !replies.enabled() || email.audience != Audience::Client || email.reply_to.is_some() {
        return None;
    }
    let key = email.dedupe_key.as_str();
    let mut addressed = email.clone();
    addressed.reply_to = Some(reply_token::address(
        replies.signing_key.as_bytes(),
        &replies.domain,
        key,
        booking,
        at_ms,
    ));
    Some((addressed, reply_token::email_ref(key)))
}

/// The outbox's answer to an enqueue.
#[derive(Debug, Clone, Deserialize)]
pub struct EnqueueReply {
    /// `queued` (new) or `duplicate` (the dedupe key was already in the outbox).
    pub status: String,
}

/// Hands one rendered email to the outbox. Idempotent on `email.dedupe_key`.
pub async fn enqueue(env: &Env, email: &OutgoingEmail) -> Result<EnqueueReply> {
    let mut resp = call(env, "enqueue", &serde_json::to_string(email)?).await?;
    resp.json().await
}

/// `POST https://outbox/<route>` with a JSON `body`; any answer but 200 is an error naming the
/// outbox's reason.
async fn call(env: &Env, route: &str, body: &str) -> Result<worker::Response> {
    let stub = env
        .durable_object(OUTBOX_BINDING)?
        .get_by_name(OUTBOX_NAME)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(body.into()));
    let req = Request::new_with_init(&format!("https://outbox/{route}"), &init)?;
    let mut resp = stub.fetch_with_request(req).await?;
    if resp.status_code() != 200 {
        // The outbox answers errors with `crate::platform::ErrorBody`; anything else is shown as is.
        let text = resp.text().await.unwrap_or_default();
        let reason = serde_json::from_str::<ErrorBody>(&text).map_or(text, |b| b.message);
        return Err(Error::RustError(format!(
            "outbox refused /{route}: {} {reason}",
            resp.status_code()
        )));
    }
    Ok(resp)
}

/// The outbox's own view with one item (`GET /state?limit=1`): route pauses, the client slot,
/// counts by status, the catch-up and the backlog forecast.
pub async fn state(env: &Env) -> Result<super::view::OutboxView> {
    let stub = env
        .durable_object(OUTBOX_BINDING)?
        .get_by_name(OUTBOX_NAME)?;
    let mut resp = stub.fetch_with_str("https://outbox/state?limit=1").await?;
    if resp.status_code() != 200 {
        return Err(Error::RustError(format!(
            "outbox /state answered {}",
            resp.status_code()
        )));
    }
    // From the text: the state's views are also parsed from JSON text in the admin pages.
    Ok(serde_json::from_str(&resp.text().await?)?)
}

/// Withdraws the queued emails of `booking_id` that carry intent, except the dedupe keys in
/// `except` (the outbox's `POST /withdraw`). Idempotent. Returns how many were withdrawn now.
pub async fn withdraw(env: &Env, booking_id: &str, except: &[String]) -> Result<u32> {
    let body = serde_json::json!({"bookingId": booking_id, "except": except});
    let mut resp = call(env, "withdraw", &body.to_string()).await?;
    Ok(resp.json::<super::WithdrawAnswer>().await?.withdrawn)
}

/// Which of `dedupe_keys` the outbox holds, in any status (`POST /held`; at most
/// [`super::maintenance::MAX_HELD_KEYS`] keys per call).
pub async fn held(env: &Env, dedupe_keys: &[String]) -> Result<Vec<String>> {
    let body = serde_json::to_string(&super::HeldRequest {
        dedupe_keys: dedupe_keys.to_vec(),
    })?;
    let mut resp = call(env, "held", &body).await?;
    Ok(resp.json::<super::HeldAnswer>().await?.held)
}

/// Retention (`POST /prune`): deletes at most `limit` finished rows last changed before
/// `before_ms` (ms UTC). Returns how many were deleted.
pub async fn prune(env: &Env, before_ms: i64, limit: u32) -> Result<u32> {
    let body = serde_json::to_string(&super::PruneRequest { before_ms, limit })?;
    let mut resp = call(env, "prune", &body).await?;
    Ok(resp.json::<super::PruneAnswer>().await?.pruned)
}
