//! The send gate: checks that must pass before an email reaches any provider. For every email the
//! content lock (the render-time verdict, `crate::domain::render::guard::judge`; owner alerts are
//! defanged, never held; an operator-released email is not checked again); for client email with
//! intent the booking as it is now (`intent.rs`); for client email the suppression list (D1, read
//! at send time: an unsubscribe or a
//! bounce since enqueue counts); for marketing the daily cap and one email per person per UTC day
//! (`crate::domain::marketing::may_send`). A held email is already parked (blocked, skipped,
//! waiting) or left queued behind a marketing hold.

use super::intent::IntentCheck;
use super::queue::Row;
use super::storage::StateKey;
use super::Outbox;
use crate::config::{Config, DB_BINDING};
use crate::domain::email::{Audience, EmailStatus, Rank};
use crate::domain::marketing::{self, DeferReason, MarketingDecision, SkipReason};
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::outbox::DAY_MS;
use crate::domain::render::guard;
use crate::platform::now_ms;
use crate::store;
use worker::Result;

/// A client email whose suppression could not be read (D1 unavailable) waits this long, ms; no
/// attempt is counted (nothing was tried).
const SUPPRESSION_RETRY_MS: i64 = 30_000;

/// Whether an email may go to a provider now ([`Outbox::gate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Gate {
    Open,
    /// An owner alert that would trip the lock: send this copy, its markers broken apart.
    Defanged(Box<OutgoingEmail>),
    Held,
}

impl Outbox {
    /// Runs the checks of the module docs on `email` (the email of `row`).
    pub(super) async fn gate(
        &self,
        row: &Row,
        email: &OutgoingEmail,
        cfg: &Config,
    ) -> Result<Gate> {
        // Content lock on what we wrote (verdict made at render time, `domain::render::guard`).
        // Owner alerts are never silenced: markers in them are defanged and they go out. An email
        // the operator released (`POST /admin/outbox/release`) is not checked again.
        if !row.released() {
            if let Err(tripped) = guard::judge(&cfg.content_lock(), email) {
                if email.audience == Audience::Owner {
                    let mut defanged = email.clone();
                    guard::defang_placeholders(&mut defanged);
                    return Ok(Gate::Defanged(Box::new(defanged)));
                }
                let reason = tripped.describe();
                let at = now_ms();
                self.park(row.seq, EmailStatus::Blocked, 0, &reason, at)?;
                self.alert_owner(email, row, EmailStatus::Blocked, &reason, cfg, at)?;
                return Ok(Gate::Held);
            }
        }
        if email.audience == Audience::Owner {
            return Ok(Gate::Open);
        }
        // One round trip: the suppression list and, for email with intent, its booking now.
        let intent = row.intent();
        let read = match self.env.d1(DB_BINDING) {
            Ok(db) => {
                store::suppressions::send_turn(&db, email.to.as_str(), intent.map(|(b, _)| b)).await
            }
            Err(e) => Err(e),
        };
        let suppression = match read {
            Ok((suppression, booking)) => {
                // Intent at the send turn: cancelled, replaced, superseded or stale → skipped.
                if let Some((_, intent)) = intent {
                    let booking = booking.flatten();
                    if self.check_intent(row, email, booking.as_ref(), &intent)?
                        == IntentCheck::Held
                    {
                        return Ok(Gate::Held);
                    }
                }
                suppression
            }
            Err(e) => {
                let at = now_ms();
                let reason = format!("booking record or suppression list unavailable: {e}");
                self.park(
                    row.seq,
                    EmailStatus::Waiting,
                    at + SUPPRESSION_RETRY_MS,
                    &reason,
                    at,
                )?;
                return Ok(Gate::Held);
            }
        };
        if suppression.suppresses(email.rank) {
            let at = now_ms();
            let reason = format!("suppressed: {}", suppression.as_str());
            self.park(row.seq, EmailStatus::Skipped, 0, &reason, at)?;
            // Booking mail that cannot go is the owner's business; a skipped marketing email is not.
            if email.rank != Rank::Marketing {
                self.alert_owner(email, row, EmailStatus::Skipped, &reason, cfg, at)?;
            }
            return Ok(Gate::Held);
        }
        if email.rank == Rank::Marketing {
            let now = now_ms();
            let day_start = now.div_euclid(DAY_MS) * DAY_MS;
            let total = self.marketing_sent_since(day_start, None)?;
            let person = self
                .marketing_sent_since(day_start, Some(&email.to.as_str().to_ascii_lowercase()))?;
            match marketing::may_send(
                now,
                total,
                person,
                suppression,
                self.booking_mail_waiting()?,
                cfg.marketing,
            ) {
                MarketingDecision::Send => {}
                MarketingDecision::Skip(SkipReason::Suppressed(s)) => {
                    let reason = format!("suppressed: {}", s.as_str());
                    self.park(row.seq, EmailStatus::Skipped, 0, &reason, now)?;
                    return Ok(Gate::Held);
                }
                MarketingDecision::Defer {
                    until_ms,
                    reason: DeferReason::PersonAlreadyServed,
                } => {
                    // This one email waits for the next UTC day; others keep going.
                    self.park(
                        row.seq,
                        EmailStatus::Waiting,
                        until_ms,
                        "one marketing email per person per UTC day: waits for the next day",
                        now,
                    )?;
                    return Ok(Gate::Held);
                }
                MarketingDecision::Defer { until_ms, .. } => {
                    // The email stays queued in its place; the lane skips marketing until then.
                    self.set_state(StateKey::MarketingHeldUntilMs, until_ms)?;
                    return Ok(Gate::Held);
                }
            }
        }
        Ok(Gate::Open)
    }
}
