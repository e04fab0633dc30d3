//! Owner alerts the outbox raises itself: a client email that ended dropped, dead, blocked,
//! skipped or possibly sent twice, and a provider paused (daily limit, refused credentials or
//! configuration). Alerts are ordinary queue rows (audience `owner`), so they are sent at once by
//! the owner lane — as soon as any route can carry them — and deduplicated by key.

use super::queue::Row;
use super::Outbox;
use crate::config::Config;
use crate::domain::email::{Audience, DedupeKey, EmailStatus};
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::outbox::{AfterPause, Provider, ProviderPause};
use crate::domain::render;
use crate::platform::rust_err;
use worker::Result;

impl Outbox {
    /// Queues the owner's alert about a client email that ended `outcome` (dropped, dead, blocked,
    /// skipped, sent_possibly_twice); never about an owner alert: that would loop. A redriven email that fails again
    /// gets a new alert (its key carries the redrive count).
    pub(super) fn alert_owner(
        &self,
        email: &OutgoingEmail,
        row: &Row,
        outcome: EmailStatus,
        reason: &str,
        cfg: &Config,
        now: i64,
    ) -> Result<()> {
        if email.audience == Audience::Owner {
            return Ok(());
        }
        let mut alert = render::owner_email_failed(
            email,
            outcome.as_str(),
            row.attempts,
            reason,
            cfg.owner_inbox(),
        )
        .map_err(rust_err)?;
        if row.budget_from > 0 {
            let key = format!("{}#{}", alert.dedupe_key, row.budget_from);
            if let Some(k) = DedupeKey::from_stored(&key) {
                alert.message_id = crate::domain::event::ids::message_id_for(
                    k.as_str(),
                    cfg.branding.from.domain(),
                );
                alert.dedupe_key = k;
            }
        }
        self.enqueue(&alert, now)?;
        Ok(())
    }

    /// Queues the owner's alert that `provider` is paused (`pause`: until when, why), with the
    /// provider's words (`reason`, bounded to one line) and where the mail goes meanwhile (`next`:
    /// another route, or nowhere until a time); one per provider, `fault` and UTC day.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn alert_provider(
        &self,
        provider: Provider,
        pause: ProviderPause,
        reason: &str,
        fault: &str,
        next: AfterPause,
        cfg: &Config,
        now: i64,
    ) -> Result<()> {
        let (fallback, wait_until_ms) = match next {
            AfterPause::FailOverTo(p) => (Some(p.as_str()), None),
            AfterPause::WaitUntil(t) => (None, Some(t)),
        };
        let alert = render::owner_provider_paused(
            &render::ProviderPaused {
                provider: provider.as_str(),
                until_ms: pause.until_ms,
                reason,
                fault,
                fallback,
                wait_until_ms,
                cause: pause.cause,
                now_ms: now,
            },
            cfg.owner_inbox(),
        )
        .map_err(rust_err)?;
        self.enqueue(&alert, now)?;
        Ok(())
    }
}
