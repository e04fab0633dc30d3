//! Intent at the send turn (`crate::domain::outbox::intent`): a booking-bound guest email is re-checked
//! against the booking in D1 just before it may reach a provider, and a cancellation withdraws a
//! booking's queued emails at once (`POST /withdraw`). Email without intent (owner alerts, the
//! cancellation notice, checkout and marketing email) is never held or withdrawn here.

use super::queue::Row;
use super::Outbox;
use crate::domain::email::EmailStatus;
use crate::domain::outbox::intent::{decide, Intent, SendDecision, SkipReason};
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::platform::now_ms;
use crate::store;
use serde::{Deserialize, Serialize};
use worker::Result;

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
    /// Applies [`decide`] to `email` against its booking as re-read at this turn (`booking`: the
    /// row's intent booking, read by the send gate with the suppression list in one round trip);
    /// a skip parks the row `skipped` with its reason (written to D1 `emails` by the sync).
    pub(super) fn check_intent(
        &self,
        row: &Row,
        email: &OutgoingEmail,
        booking: Option<&store::bookings::BookingRow>,
        intent: &Intent,
    ) -> Result<IntentCheck> {
        let at = now_ms();
        let booking = booking.map(|b| b.intent_view());
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
