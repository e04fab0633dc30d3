//! The consumers of the delivery queue and of its dead letter queue.
//!
//! One queue message = one attempt of one delivery. The consumer loads the delivery from D1, takes
//! the next attempt number (a guarded `UPDATE`, so a delivered or dead row is never sent again),
//! signs the stored body with a fresh timestamp, POSTs it without following redirects within
//! `WEBHOOK_TIMEOUT_MS`, appends the attempt to D1 and decides
//! ([`crate::domain::webhooks::decide`]): ack, retry with a delay, disable the subscriber (410), or
//! send the message to the dead letter queue. The dead letter consumer marks the delivery dead and
//! alerts the owner at most once per subscriber and UTC day.

use crate::config::{Config, DB_BINDING, WEBHOOKS_DLQ_BINDING};
use crate::domain::render::webhooks::{owner_webhook_alert, WebhookAlert};
use crate::domain::webhooks::{self, check_url, decide, excerpt, sign, Answer, Decision};
use crate::outbox::client::deliver;
use crate::platform::{config_or_err, fetch_within, now_ms, random_u64, rust_err, NoAnswer};
use crate::publisher::DeliveryMessage;
use crate::store::webhooks::{self as store, Attempt, DeliveryJob, Ending};
use futures::future::join_all;
use worker::{
    D1Database, Env, Message, MessageBatch, MessageExt, Method, QueueRetryOptionsBuilder, Result,
};

/// What to do with one message after its attempt.
enum Action {
    Ack,
    /// Retry after this many seconds.
    Retry(u32),
}

/// `User-Agent` of every delivery.
const USER_AGENT: &str = "booking-email-engine-webhooks/1";

/// Consumes a batch of the delivery queue: the attempts run concurrently; each message is acked
/// or retried on its own.
pub async fn consume_deliveries(batch: MessageBatch<serde_json::Value>, env: &Env) -> Result<()> {
    let cfg = config_or_err(env)?;
    let db = env.d1(DB_BINDING)?;
    let messages: Vec<Message<serde_json::Value>> = batch.messages()?;
    let actions = join_all(messages.iter().map(|m| one(env, &cfg, &db, m.body()))).await;
    for (m, action) in messages.iter().zip(actions) {
        match action {
            Action::Ack => m.ack(),
            Action::Retry(delay_s) => m.retry_with_options(
                &QueueRetryOptionsBuilder::new()
                    .with_delay_seconds(delay_s)
                    .build(),
            ),
        }
    }
    Ok(())
}

async fn one(env: &Env, cfg: &Config, db: &D1Database, body: &serde_json::Value) -> Action {
    let msg: DeliveryMessage = match crate::domain::basics::json::from_value(body) {
        Ok(m) => m,
        Err(e) => {
            worker::console_error!("webhooks: a queue message is not a delivery ({e}); dropped");
            return Action::Ack;
        }
    };
    match attempt(env, cfg, db, &msg).await {
        Ok(action) => action,
        Err(e) => {
            // D1 or the dead letter queue failed: the attempt (if made) is recorded or not; the
            // message comes back and the guarded writes keep the record straight.
            worker::console_error!(
                "webhooks: delivery {} failed in the engine: {e}",
                msg.delivery_id
            );
            Action::Retry(cfg.webhook_retry.base_s)
        }
    }
}

/// Delay before a message whose processing failed in the engine (D1, the queue) is read again, s.
pub const ENGINE_RETRY_S: u32 = 30;

/// How long past the attempt's own time bound its lease holds, ms.
const LEASE_MARGIN_MS: i64 = 30_000;
/// How long a delivery sent to the dead letter queue may stay pending before the sweeper sends it
/// again (the dead letter was lost), ms.
pub const DEAD_LETTER_GRACE_MS: i64 = 15 * 60_000;

async fn attempt(
    env: &Env,
    cfg: &Config,
    db: &D1Database,
    msg: &DeliveryMessage,
) -> Result<Action> {
    let delivery_id = msg.delivery_id.as_str();
    let Some(job) = store::job(db, delivery_id).await? else {
        worker::console_error!("webhooks: delivery {delivery_id} is not on record; dropped");
        return Ok(Action::Ack);
    };
    // Delivered, dead, cancelled, or a message of an earlier generation (a late or duplicated
    // message, or one from before a redrive or a re-send): nothing.
    if job.status != "pending" || job.claim_gen != msg.gen {
        return Ok(Action::Ack);
    }
    let now = now_ms();
    let leased = job.lease_until_ms.is_some_and(|l| l > now);
    if job.enabled == 0 && !leased {
        store::end(
            db,
            delivery_id,
            msg.gen,
            Ending::Cancelled,
            "subscriber disabled",
            now,
        )
        .await?;
        return Ok(Action::Ack);
    }
    // Past the ceiling already (the dead letter was lost and the sweeper sent it again): no more
    // POSTs, straight back to the dead letter queue. The ceiling is the last answer's.
    let ceiling = match job.last_status_code {
        Some(code) => webhooks::ceiling(&cfg.webhook_retry, Answer::Status(code)),
        None => cfg.webhook_retry.max_attempts,
    };
    if !leased && job.attempts.saturating_sub(job.budget_from) >= ceiling {
        to_dead_letters(env, delivery_id, msg.gen, "attempts exhausted".into()).await?;
        return Ok(Action::Ack);
    }
    let lease_until = now + cfg.webhook_timeout_ms as i64 + LEASE_MARGIN_MS;
    let Some((number, in_budget)) =
        store::next_attempt(db, delivery_id, msg.gen, now, lease_until).await?
    else {
        // Another message of this delivery holds the lease (a duplicate): come back after it.
        let wait_ms = job.lease_until_ms.map_or(0, |l| l - now);
        return Ok(Action::Retry(
            u32::try_from(wait_ms / 1000 + 1)
                .unwrap_or(1)
                .max(cfg.webhook_retry.base_s.min(60)),
        ));
    };
    let started = now_ms();
    let (answer, retry_after, error, reply) = match post(cfg, &job).await {
        Ok(a) => (
            Answer::Status(a.status),
            a.retry_after.as_deref().and_then(webhooks::retry_after_s),
            None,
            Some(excerpt(&a.body)),
        ),
        Err(Refused::Url(e)) => (Answer::Status(0), None, Some(e), None),
        Err(Refused::NoAnswer(NoAnswer::Timeout(ms))) => (
            Answer::Timeout,
            None,
            Some(format!("no answer within {ms} ms")),
            None,
        ),
        Err(Refused::NoAnswer(NoAnswer::Network(e))) => {
            (Answer::Network, None, Some(excerpt(&e)), None)
        }
    };
    let duration_ms = now_ms() - started;
    let jitter = (random_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut decision = decide(&cfg.webhook_retry, in_budget, answer, retry_after, jitter);
    if let (Answer::Status(0), Some(e)) = (answer, &error) {
        // The URL itself is refused now (configuration changed): no attempt can succeed.
        decision = Decision::Dead { reason: e.clone() };
    }
    let status_code = match answer {
        Answer::Status(0) | Answer::Timeout | Answer::Network => None,
        Answer::Status(s) => Some(s),
    };
    let (outcome, next_due_ms) = match &decision {
        Decision::Delivered => ("delivered", None),
        Decision::Disable => ("disabled", None),
        Decision::Retry { delay_s } => (
            "retry",
            Some(started + i64::from(*delay_s) * 1000 + cfg.webhook_timeout_ms as i64),
        ),
        Decision::Dead { .. } => ("dead", Some(started + DEAD_LETTER_GRACE_MS)),
    };
    let error = error.or_else(|| match &decision {
        Decision::Delivered => None,
        Decision::Dead { reason } => Some(reason.clone()),
        _ => status_code.map(|s| format!("HTTP {s}")),
    });
    if decision == Decision::Disable {
        // Alert, then disable, then record: a failure at any point brings the message back to a
        // still-pending delivery, and the alert's dedupe key (subscriber, day) sends it once.
        let reason = format!("410 Gone on delivery {delivery_id}");
        alert(env, cfg, WebhookAlert::Disabled, &job, &reason).await?;
        store::set_enabled(db, &job.subscriber_id, false, Some(&reason), now_ms()).await?;
    }
    store::record_attempt(
        db,
        &Attempt {
            delivery_id,
            gen: msg.gen,
            attempt: number,
            at_ms: started,
            status_code,
            outcome,
            duration_ms,
            error: error.as_deref(),
            excerpt: reply.as_deref(),
            next_due_ms,
        },
    )
    .await?;
    Ok(match decision {
        Decision::Delivered | Decision::Disable => Action::Ack,
        Decision::Retry { delay_s } => Action::Retry(delay_s),
        Decision::Dead { reason } => {
            to_dead_letters(env, delivery_id, msg.gen, reason).await?;
            Action::Ack
        }
    })
}

/// Sends a delivery to the dead letter queue with the reason.
async fn to_dead_letters(env: &Env, delivery_id: &str, gen: u32, reason: String) -> Result<()> {
    env.queue(WEBHOOKS_DLQ_BINDING)?
        .send(DeliveryMessage {
            delivery_id: delivery_id.to_string(),
            gen,
            reason: Some(reason),
        })
        .await
}

enum Refused {
    Url(String),
    NoAnswer(NoAnswer),
}

/// One signed POST of the job's stored body.
async fn post(
    cfg: &Config,
    job: &DeliveryJob,
) -> std::result::Result<crate::platform::Answer, Refused> {
    check_url(&job.url, cfg.webhook_allow_http_loopback)
        .map_err(|e| Refused::Url(e.to_string()))?;
    let timestamp = now_ms() / 1000;
    let signature = sign(&job.secret, &job.event_id, timestamp, &job.body)
        .map_err(|e| Refused::Url(e.to_string()))?;
    let ts = timestamp.to_string();
    fetch_within(
        Method::Post,
        &job.url,
        &[
            ("content-type", "application/json"),
            ("user-agent", USER_AGENT),
            ("webhook-id", &job.event_id),
            ("webhook-timestamp", &ts),
            ("webhook-signature", &signature),
        ],
        Some(job.body.clone()),
        cfg.webhook_timeout_ms,
        false,
        webhooks::EXCERPT_MAX_BYTES * 4,
    )
    .await
    .map_err(Refused::NoAnswer)
}

/// The owner's alert about `job`'s subscriber (sent once: the dedupe key carries the subscriber,
/// what happened and the UTC day).
async fn alert(
    env: &Env,
    cfg: &Config,
    what: WebhookAlert,
    job: &DeliveryJob,
    reason: &str,
) -> Result<()> {
    let now = now_ms();
    let day = crate::domain::outbox::intent::utc_day(now);
    let email = owner_webhook_alert(
        what,
        &job.subscriber_id,
        &job.url,
        &job.event_type,
        &job.event_id,
        reason,
        &day,
        cfg.owner_inbox(),
    )
    .map_err(rust_err)?;
    deliver(env, &email, now).await?;
    Ok(())
}

/// Reason recorded when Queues itself moved a message to the dead letter queue.
pub const QUEUE_GAVE_UP: &str =
    "the queue gave up after max_retries (the consumer failed repeatedly)";

/// Consumes the dead letter queue: each delivery is marked dead in D1 (once) and the owner is
/// alerted at most once per subscriber and UTC day.
pub async fn consume_dead_letters(batch: MessageBatch<serde_json::Value>, env: &Env) -> Result<()> {
    let cfg = config_or_err(env)?;
    let db = env.d1(DB_BINDING)?;
    for m in batch.messages()? {
        let msg: DeliveryMessage = match crate::domain::basics::json::from_value(m.body()) {
            Ok(msg) => msg,
            Err(e) => {
                worker::console_error!("webhooks: a dead letter is not a delivery ({e}); dropped");
                m.ack();
                continue;
            }
        };
        match dead(env, &cfg, &db, &msg).await {
            Ok(()) => m.ack(),
            Err(e) => {
                worker::console_error!(
                    "webhooks: dead letter {} not recorded: {e}",
                    msg.delivery_id
                );
                m.retry_with_options(
                    &QueueRetryOptionsBuilder::new()
                        .with_delay_seconds(ENGINE_RETRY_S)
                        .build(),
                );
            }
        }
    }
    Ok(())
}

async fn dead(env: &Env, cfg: &Config, db: &D1Database, msg: &DeliveryMessage) -> Result<()> {
    let reason = msg.reason.as_deref().unwrap_or(QUEUE_GAVE_UP);
    let Some(job) = store::job(db, &msg.delivery_id).await? else {
        return Ok(());
    };
    // Already dead, or redriven or re-sent since (a dead letter of an earlier generation): nothing.
    if job.status != "pending" || job.claim_gen != msg.gen {
        return Ok(());
    }
    // Alert first, then mark: a failure brings the dead letter back to a still-pending delivery.
    // Once per subscriber and UTC day: the alert's dedupe key carries both (send-once in D1).
    alert(env, cfg, WebhookAlert::Dead, &job, reason).await?;
    store::end(
        db,
        &msg.delivery_id,
        msg.gen,
        Ending::Dead,
        reason,
        now_ms(),
    )
    .await?;
    Ok(())
}
