//! Outbound webhooks, the queue consumers: deliveries (one attempt per message, signed,
//! decided per answer), their dead letter queue (dead in D1, one owner alert a subscriber and
//! day), and Cloudflare Email Service delivery events (suppressions, email statuses). Publishing
//! is in `crate::publisher`; the decisions are pure, in [`crate::domain::webhooks`].

mod deliver;
mod email_events;

pub use deliver::{consume_dead_letters, consume_deliveries};
pub use email_events::consume_email_events;
