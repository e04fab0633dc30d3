//! Intent at the send turn (`crate::domain::intent`): a booking-bound guest email is re-checked
//! against the booking in D1 just before it may reach a provider, and a cancellation withdraws a
//! booking's queued emails at once (`POST /withdraw`). Email without intent (owner alerts, the
//! cancellation notice, checkout and marketing email) is never held or withdrawn here.

use super::queue::Row;
use super::Outbox;
use crate::config::DB_BINDING;
use crate::domain::email::{EmailStatus, OutgoingEmail};
use crate::domain::intent::{decide, Intent, SendDecision, SkipReason};
use crate::platform::now_ms;
use crate::store;
use serde::{Deserialize, Serialize};
use worker::Result;

/// An email whose booking could not be read (D1 unavailable) waits this long, ms; no attempt is
/// counted (nothing was tried).
const BOOKING_RETRY_MS: i64 = 30_000;

/// `POST /withdraw` body: withdraw every queued or waiting email of `booking_id` that carries
/// intent, except the dedupe keys in `except`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WithdrawRequest {
    pub(super) booking_id: String,
    #[serde(default)]
    pub(super) except: Vec<String>,
}

/// `POST /withdraw` answer: how many emails were withdrawn.
#[derive(Debug, Serialize, Deserialize)]
pub struct WithdrawAnswer {
    pub withdrawn: u32,
}

/// What the intent check of one email came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IntentCheck {
    /// Nothing against it: go on with the other checks.
    Pass,
    /// Parked (skipped with its reason, or waiting for D1).
    Held,
}

impl Outbox {
    /// Re-reads `booking_id` (the row's intent column) and applies [`decide`] to `email`; a skip parks the row `skipped` with
    /// its reason (written to D1 `emails` by the sync), a D1 failure parks it `waiting`.
    pub(super) async fn check_intent(
        &self,
        row: &Row,
        email: &OutgoingEmail,
        booking_id: &str,
        intent: &Intent,
    ) -> Result<IntentCheck> {
        let booking = match self.env.d1(DB_BINDING) {
            Ok(db) => store::bookings::get(&db, booking_id).await,
            Err(e) => Err(e),
        };
        let at = now_ms();
        let booking = match booking {
            Ok(b) => b.map(|b| b.intent_view()),
            Err(e) => {
                let reason = format!("booking record unavailable: {e}");
                self.park(
                    row.seq,
                    EmailStatus::Waiting,
                    at + BOOKING_RETRY_MS,
                    &reason,
                    at,
                )?;
                return Ok(IntentCheck::Held);
            }
        };
        match decide(email.kind, email.audience, intent, booking.as_ref(), at) {
            SendDecision::Send => Ok(IntentCheck::Pass),
            SendDecision::Skip(reason) => {
                self.park(row.seq, EmailStatus::Skipped, 0, &reason.to_string(), at)?;
                Ok(IntentCheck::Held)
            }
        }
    }

    /// Withdraws the queued and waiting emails of a booking that carry intent (never one in the
    /// middle of a hand-over), except `except`: `skipped` with reason "booking cancelled". Goes
    /// through the `queue_intent_booking` index. Returns how many were withdrawn.
    pub(super) fn withdraw(&self, req: &WithdrawRequest, now: i64) -> Result<u32> {
        let cursor = self.exec(
            "UPDATE queue SET status = 'skipped', last_error = ?, updated_at_ms = ?, record_synced = 0 \
             WHERE intent_booking_id = ? AND status IN ('queued', 'waiting') \
             AND dedupe_key NOT IN (SELECT value FROM json_each(?))",
            vec![
                SkipReason::Cancelled.to_string().into(),
                now.into(),
                req.booking_id.as_str().into(),
                serde_json::to_string(&req.except)?.into(),
            ],
        )?;
        Ok(u32::try_from(cursor.rows_written()).unwrap_or(u32::MAX))
    }
}
