//! booking-email-engine: the email engine of a hotel and flight booking business, as one
//! Cloudflare Worker.
//!
//! Layout (pure core apart from the shell):
//! - `domain`, `sources`: pure decisions and supplier adapters, host-tested;
//! - `routes` (HTTP), `journey` (Workflow body), `outbox` (Durable Object + providers), `store`
//!   (D1): the shell that carries decisions out.

pub mod config;
pub mod domain;
pub mod inbound;
pub mod journey;
pub mod outbox;
pub mod platform;
pub mod publisher;
pub mod routes;
pub mod sources;
pub mod store;
pub mod suppliers;
pub mod sweeper;
pub mod webhooks;

pub use journey::run_journey;
pub use outbox::Outbox;

use worker::{
    event, Context, Env, ForwardableEmailMessage, MessageBatch, Request, Response, Result,
    ScheduleContext, ScheduledEvent,
};

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    // The wasm boundary: the one place a route's error becomes a response.
    routes::handle(req, env)
        .await
        .or_else(routes::AppError::into_response)
}

/// Email Routing's delivery of a guest's reply (`reply+TOKEN@REPLY_DOMAIN` routed to this Worker):
/// see [`inbound`].
#[event(email)]
async fn email(message: ForwardableEmailMessage, env: Env, _ctx: Context) -> Result<()> {
    inbound::receive(&message, &env).await
}

/// The Cron Trigger (`[triggers] crons` in wrangler.toml): one sweep, see [`sweeper`].
#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    match sweeper::tick(&env, platform::now_ms()).await {
        Ok(report) => worker::console_log!(
            "sweeper: {}",
            serde_json::to_string(&report).unwrap_or_default()
        ),
        Err(e) => worker::console_error!("sweeper tick failed: {e}"),
    }
}

/// The Queues consumer (`[[queues.consumers]]` in wrangler.toml), one entry for three queues told
/// apart by name: outbound webhook deliveries, their dead letter queue, and Cloudflare Email
/// Service delivery events. See [`webhooks`].
#[event(queue)]
async fn queue(batch: MessageBatch<serde_json::Value>, env: Env, _ctx: Context) -> Result<()> {
    let name = batch.queue();
    match name.as_str() {
        config::WEBHOOKS_QUEUE => webhooks::consume_deliveries(batch, &env).await,
        config::WEBHOOKS_DLQ => webhooks::consume_dead_letters(batch, &env).await,
        config::EMAIL_EVENTS_QUEUE => webhooks::consume_email_events(batch, &env).await,
        other => {
            // Never acked: a queue bound by mistake keeps its messages (retried, then its own
            // dead letter queue, if any) rather than losing them here.
            worker::console_error!("queue {other:?} has no consumer in this Worker");
            batch.retry_all();
            Ok(())
        }
    }
}
