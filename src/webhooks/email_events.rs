//! The consumer of Cloudflare Email Service delivery events (event subscriptions deliver them to a
//! Queue; <https://developers.cloudflare.com/email-service/platform/event-subscriptions/>), the
//! counterpart of the Resend webhook: every event is stored in `raw_events` (source
//! `email_service`, event id = `payload.eventId`, unique), a hard bounce or a complaint becomes a
//! suppression (never downgraded) and an `email.bounced` webhook event, and the delivery status
//! goes onto the email record found by its provider message id. Processing is idempotent per
//! event: the same event twice changes nothing more.

use crate::config::DB_BINDING;
use crate::domain::event::Source;
use crate::domain::webhooks::events::email_bounced;
use crate::platform::now_ms;
use crate::sources::email_service::{self, EmailServiceEvent};
use crate::store::raw_events::{self, NewRawEvent, RawEventStatus};
use crate::store::{emails, suppressions};
use worker::{D1Database, Env, MessageBatch, MessageExt, QueueRetryOptionsBuilder, Result};

/// `source` recorded with the suppressions.
pub const SUPPRESSION_SOURCE: &str = "email_service_event";

/// Largest stored event body, bytes (the events are small; a larger one is cut in the record).
const STORED_MAX: usize = 16_384;

/// How long an event about a message id we have not recorded yet waits before it is read again, s
/// (the outbox writes the provider's message id to D1 a moment after the send).
pub const UNKNOWN_MESSAGE_RETRY_S: u32 = 60;
/// After this long on the queue (ms), an event whose message id is still not ours is let go
/// (logged): it is another sender's mail on the same domain, or mail older than our record. Below
/// the queue's 10 retries of 60 s, so such events never fill the dead letter queue.
pub const UNKNOWN_MESSAGE_GIVE_UP_MS: u64 = 8 * 60_000;

/// Consumes a batch of Email Service events. A malformed event is recorded as `rejected` and
/// acked (it cannot become valid); a D1 failure retries the message; an event about a message id
/// not on record yet is applied (suppression) and retried later for the status.
pub async fn consume_email_events(batch: MessageBatch<serde_json::Value>, env: &Env) -> Result<()> {
    let db = env.d1(DB_BINDING)?;
    for m in batch.messages()? {
        match one(env, &db, m.body()).await {
            Ok(true) => m.ack(),
            Ok(false)
                if now_ms() as u64 >= m.timestamp().as_millis() + UNKNOWN_MESSAGE_GIVE_UP_MS =>
            {
                worker::console_log!(
                    "email service event for a message id not on record after {} min; status not kept",
                    UNKNOWN_MESSAGE_GIVE_UP_MS / 60_000
                );
                m.ack();
            }
            Ok(false) => m.retry_with_options(
                &QueueRetryOptionsBuilder::new()
                    .with_delay_seconds(UNKNOWN_MESSAGE_RETRY_S)
                    .build(),
            ),
            Err(e) => {
                // D1 failed: read it again in a while (not at once: a short outage must not use
                // up the queue's retries).
                worker::console_error!("email service event not processed: {e}");
                m.retry_with_options(
                    &QueueRetryOptionsBuilder::new()
                        .with_delay_seconds(super::deliver::ENGINE_RETRY_S)
                        .build(),
                );
            }
        }
    }
    Ok(())
}

/// `Ok(false)` when the event names a provider message id not on record yet.
async fn one(env: &Env, db: &D1Database, body: &serde_json::Value) -> Result<bool> {
    let text = body.to_string();
    let stored = &text[..text.floor_char_boundary(STORED_MAX)];
    let received_at_ms = now_ms();
    // The event's raw row as a rejected one; an event that reads names itself in it.
    let raw = NewRawEvent {
        source: Source::EmailService,
        event_id: None,
        event_name: None,
        status: RawEventStatus::Rejected,
        error: None,
        headers_json: "{}",
        body: stored,
        received_at_ms,
        normalised: None,
        booking_id: None,
        partner: None,
    };
    let event: EmailServiceEvent = match email_service::parse(body) {
        Ok(e) => e,
        Err(e) => {
            let error = e.to_string();
            let rejected = NewRawEvent {
                error: Some(&error),
                ..raw
            };
            raw_events::insert(db, &rejected).await?;
            worker::console_error!("email service event rejected: {e}");
            return Ok(true);
        }
    };
    let read = NewRawEvent {
        event_id: Some(&event.event_id),
        event_name: Some(&event.event_type),
        status: if event.suppression.is_some() || event.message_id.is_some() {
            RawEventStatus::Received
        } else {
            RawEventStatus::Ignored
        },
        ..raw
    };
    raw_events::insert(db, &read).await?;
    // Applied again on a redelivery (a first delivery may have failed midway): every write below
    // is idempotent and never downgrades.
    let known = match &event.message_id {
        Some(message_id) => {
            emails::record_delivery_status(db, message_id, &event.delivery_status, received_at_ms)
                .await?
        }
        None => true,
    };
    if let Some((reason, detail)) = &event.suppression {
        suppressions::record(
            db,
            event.recipient.as_str(),
            *reason,
            SUPPRESSION_SOURCE,
            detail.as_deref(),
            received_at_ms,
        )
        .await?;
        crate::publisher::publish(
            env,
            &email_bounced(
                event.recipient.as_str(),
                reason.as_str(),
                Source::EmailService.as_str(),
                &event.event_id,
                detail.as_deref(),
                received_at_ms,
            ),
        )
        .await?;
    }
    Ok(known)
}
