//! Publishing outbound webhook events: the D1 record of an event and one Cloudflare
//! Queues message per subscriber that wants it, and redrive of dead deliveries. The consumers that
//! deliver them are in `src/webhooks/`; the decisions (ids, signing, URL rules, retry schedule)
//! are pure, in [`crate::domain::webhooks`] and [`crate::domain::webhooks::events`].
//!
//! Publishing never happens on the supplier-webhook hot path: journeys publish from their own
//! Workflow steps and the outbox from its D1 sync, so the answer to a supplier costs nothing more.
//! This layer sits below the outbox (which publishes email outcomes) and names only the store and
//! the platform.

use crate::config::{DB_BINDING, WEBHOOKS_QUEUE_BINDING};
use crate::domain::webhooks::{wants, Publication};
use crate::platform::now_ms;
use crate::store::webhooks::{self as store, Claimed, Selection};
use serde::{Deserialize, Serialize};
use worker::{Env, Result};

/// The body of one delivery message on the queue (and on its dead letter queue).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryMessage {
    pub delivery_id: String,
    /// The delivery's claim generation when the message was sent: a message of an earlier
    /// generation (late, duplicated, or from before a redrive or re-send) does nothing.
    #[serde(default)]
    pub gen: u32,
    /// Why it is on the dead letter queue (set by the consumer when it gives up; absent when
    /// Queues moved it there after `max_retries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Most messages in one `sendBatch` (the Queues limit).
const SEND_BATCH_MAX: usize = 100;

/// Sends one delivery message per claimed delivery, in batches of at most 100.
pub async fn enqueue(env: &Env, claimed: &[Claimed]) -> Result<()> {
    let queue = env.queue(WEBHOOKS_QUEUE_BINDING)?;
    for chunk in claimed.chunks(SEND_BATCH_MAX) {
        let batch: Vec<DeliveryMessage> = chunk
            .iter()
            .map(|c| DeliveryMessage {
                delivery_id: c.delivery_id.clone(),
                gen: c.gen,
                reason: None,
            })
            .collect();
        queue.send_batch(batch).await?;
    }
    Ok(())
}

/// Publishes `p`: with no subscriber wanting its type, one D1 read and nothing else; otherwise the
/// event and one pending delivery per subscriber are recorded (one D1 batch) and one queue message
/// per new delivery sent. Publishing the same event id again records and sends nothing new
/// (except deliveries whose earlier queue send failed). Returns the number of messages sent.
/// Errors (D1, Queues) are returned: callers retry (a Workflow step, the outbox's next sync).
pub async fn publish(env: &Env, p: &Publication) -> Result<usize> {
    let db = env.d1(DB_BINDING)?;
    publish_to(env, p, &store::enabled_subscribers(&db).await?).await
}

/// [`publish`] to `subscribers` as the caller read them (`(id, stored types)`, from
/// [`store::enabled_subscribers_statement`] in the caller's own batch): no D1 call at all when
/// none wants the event.
pub async fn publish_to(
    env: &Env,
    p: &Publication,
    subscribers: &[(String, String)],
) -> Result<usize> {
    let wanted: Vec<String> = subscribers
        .iter()
        .filter(|(_, types)| wants(types, p.event_type))
        .map(|(id, _)| id.clone())
        .collect();
    if wanted.is_empty() {
        return Ok(0);
    }
    let db = env.d1(DB_BINDING)?;
    let claimed = store::insert_event(&db, p, &wanted, now_ms()).await?;
    if claimed.is_empty() {
        return Ok(0);
    }
    if let Err(e) = enqueue(env, &claimed).await {
        if let Err(u) = store::unclaim(&db, &claimed).await {
            worker::console_error!(
                "webhooks: unclaiming {} deliveries failed: {u}",
                claimed.len()
            );
        }
        return Err(e);
    }
    Ok(claimed.len())
}

/// [`publish`] every publication, in order; stops at the first error.
pub async fn publish_all(env: &Env, ps: &[Publication]) -> Result<usize> {
    let mut sent = 0;
    for p in ps {
        sent += publish(env, p).await?;
    }
    Ok(sent)
}

/// Redrives the selected dead deliveries (same event id and body, fresh attempt budget, signed
/// anew at delivery). Returns the redriven delivery ids; when the queue refuses the messages the
/// deliveries go back to dead and the error is returned.
pub async fn redrive(env: &Env, sel: &Selection) -> Result<Vec<Claimed>> {
    let db = env.d1(DB_BINDING)?;
    let ids = store::redrive(&db, sel, now_ms()).await?;
    if ids.is_empty() {
        return Ok(ids);
    }
    if let Err(e) = enqueue(env, &ids).await {
        if let Err(u) = store::undo_redrive(&db, &ids, now_ms()).await {
            worker::console_error!("webhooks: undoing a redrive of {} failed: {u}", ids.len());
        }
        return Err(e);
    }
    Ok(ids)
}
