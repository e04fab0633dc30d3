//! What the outbox writes to D1, the engine's record: each row's outcome (`emails`), and what a
//! provider's refusal taught about an address (`suppressions`). D1 lags the queue by design: a row
//! whose outcome is not recorded yet keeps `record_synced = 0` and is retried by the next alarm;
//! the send itself is never repeated for it.

use super::view::{ItemView, ITEM_COLUMNS};
use super::Outbox;
use crate::config::DB_BINDING;
use crate::domain::email::EmailStatus;
use crate::domain::marketing::Suppression;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::outbox::Provider;
use crate::domain::webhooks::events::{email_outcome, EmailFact};
use crate::platform::now_ms;
use crate::store;

/// Most outcomes written to D1 per alarm.
const SYNC_BATCH: u32 = 20;

impl Outbox {
    /// Writes outcomes to D1 for rows whose record lags (`record_synced = 0`). A D1 failure leaves
    /// the row unsynced for the next alarm. One run at a time per instance (`syncing`): a call
    /// while another run awaits D1 only asks that run for one more pass (`sync_again`), which
    /// writes the newer states after the older ones.
    pub(super) async fn sync_records(&self) {
        if self.syncing.replace(true) {
            self.sync_again.set(true);
            return;
        }
        loop {
            self.sync_batch().await;
            if !self.sync_again.replace(false) {
                break;
            }
        }
        self.syncing.set(false);
    }

    async fn sync_batch(&self) {
        let rows: Vec<ItemView> = match self.rows(
            &format!(
                "SELECT {ITEM_COLUMNS} FROM queue WHERE record_synced = 0 ORDER BY seq LIMIT {SYNC_BATCH}"
            ),
            vec![],
        ) {
            Ok(rows) => rows,
            Err(e) => {
                worker::console_error!("outbox: reading unsynced rows failed: {e}");
                return;
            }
        };
        if rows.is_empty() {
            return;
        }
        let db = match self.env.d1(DB_BINDING) {
            Ok(db) => db,
            Err(e) => {
                worker::console_error!("outbox: D1 binding: {e}");
                return;
            }
        };
        for r in rows {
            let Some(status) = EmailStatus::parse(&r.status) else {
                continue;
            };
            let outcome = store::emails::Outcome {
                dedupe_key: &r.dedupe_key,
                status,
                provider: r.provider.as_deref(),
                provider_message_id: r.provider_message_id.as_deref(),
                attempts: r.attempts,
                last_error: r.last_error.as_deref(),
                sent_at_ms: r.sent_at_ms,
                now_ms: now_ms(),
            };
            // A client email's outcome goes to the outbound webhook subscribers too: they are
            // read in the same round trip as the record.
            let client = r.audience == "client";
            let recorded = if client {
                store::emails::record_outcome_for_subscribers(&db, &outcome)
                    .await
                    .map(|(_, subscribers)| subscribers)
            } else {
                store::emails::record_outcome(&db, &outcome)
                    .await
                    .map(|_| Vec::new())
            };
            match recorded {
                Ok(subscribers) => {
                    // Subscribers learn a client email's outcome once it is on record; a failed
                    // publish leaves the row unsynced, so the next alarm records and publishes
                    // again (same event id: nothing twice).
                    if client {
                        let fact = EmailFact {
                            dedupe_key: &r.dedupe_key,
                            status: &r.status,
                            provider: r.provider.as_deref(),
                            provider_message_id: r.provider_message_id.as_deref(),
                            attempts: r.attempts,
                            reason: r.last_error.as_deref(),
                        };
                        if let Some(p) = email_outcome(&fact, r.updated_at_ms) {
                            if let Err(e) =
                                crate::publisher::publish_to(&self.env, &p, &subscribers).await
                            {
                                worker::console_error!(
                                    "outbox: publishing {} of {} failed: {e}",
                                    p.event_type,
                                    r.dedupe_key
                                );
                                continue;
                            }
                        }
                    }
                    // Only if the row is still what was recorded: a withdrawal, re-plan or
                    // redrive during the D1 write set `record_synced = 0` again, and that newer
                    // state must reach D1 before retention may prune the row.
                    if let Err(e) = self.exec(
                        "UPDATE queue SET record_synced = 1 WHERE seq = ? AND status = ? AND attempts = ? \
                         AND updated_at_ms = ?",
                        vec![
                            r.seq.into(),
                            r.status.as_str().into(),
                            r.attempts.into(),
                            r.updated_at_ms.into(),
                        ],
                    ) {
                        worker::console_error!(
                            "outbox: marking {} synced failed: {e}",
                            r.dedupe_key
                        );
                    }
                }
                Err(e) => {
                    worker::console_error!("outbox: recording {} in D1 failed: {e}", r.dedupe_key)
                }
            }
        }
    }

    /// Records what a refusal taught about an address (best effort: a D1 failure is logged; the
    /// provider will refuse the address again next time anyway).
    pub(super) async fn learn_suppression(
        &self,
        email: &OutgoingEmail,
        s: Suppression,
        provider: Provider,
        detail: &str,
    ) {
        let result = match self.env.d1(DB_BINDING) {
            Ok(db) => {
                store::suppressions::record(
                    &db,
                    email.to.as_str(),
                    s,
                    provider.as_str(),
                    Some(detail),
                    now_ms(),
                )
                .await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            worker::console_error!("outbox: recording suppression of {} failed: {e}", email.to);
        }
    }
}
