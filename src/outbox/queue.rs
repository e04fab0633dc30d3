//! The queue: its rows, the attempt log, and every statement that moves a row between statuses
//! (enqueue, pick, park, mark sending / sent, redrive, recovery of interrupted hand-overs).
//!
//! A row's `status` holds an [`EmailStatus`] stored name (never `claimed`, which only D1 uses). The
//! pick order is SQL: owner alerts before client email (two lanes), then the lowest rank number,
//! then the oldest (`ORDER BY rank, seq` through the `queue_ready` index); it is checked end to end
//! by `tests/e2e/outbox-order.test.mjs`.

use super::storage::ValueRow;
use super::Outbox;
use crate::domain::admin::release::OperatorDecision;
use crate::domain::email::{Audience, EmailStatus, Rank};
use crate::domain::outbox::intent::{Intent, SkipReason};
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::outbox::{Provider, QueueFacts};
use serde::Deserialize;
use worker::Result;

/// One queue row as read for sending.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Row {
    pub(super) seq: i64,
    pub(super) email_json: String,
    pub(super) attempts: i64,
    pub(super) budget_from: i64,
    pub(super) maybe_handed_to: Option<String>,
    pub(super) maybe_handed_at_ms: Option<i64>,
    /// The intent columns (`schema.rs`); `intent_booking_id` is NULL for email without intent.
    #[serde(default)]
    pub(super) intent_booking_id: Option<String>,
    #[serde(default)]
    pub(super) journey_version: Option<i64>,
    #[serde(default)]
    pub(super) expires_at_ms: Option<i64>,
    /// The operator's decision on a blocked email (`release` / `reject`), if any.
    #[serde(default)]
    pub(super) operator_decision: Option<String>,
    /// The providers (`Provider::bit`) that refused it for a reason of ours since its attempt
    /// budget was last renewed.
    #[serde(default)]
    pub(super) refused_ours: i64,
}

impl Row {
    /// The operator released this email past the content lock (once; see [`Outbox::decide_blocked`]).
    pub(super) fn released(&self) -> bool {
        self.operator_decision.as_deref() == Some(OperatorDecision::Release.as_str())
    }

    /// The earlier hand-over whose outcome was never learned, if any: provider and time (ms UTC).
    pub(super) fn maybe_handed_over(&self) -> Option<(Provider, i64)> {
        let provider = Provider::parse(self.maybe_handed_to.as_deref()?)?;
        Some((provider, self.maybe_handed_at_ms.unwrap_or(0)))
    }

    /// The intent this row was queued with, if any (read from its columns, so the record the
    /// operator sees is the one the gate applies).
    pub(super) fn intent(&self) -> Option<(&str, Intent)> {
        let booking = self.intent_booking_id.as_deref()?;
        Some((
            booking,
            Intent {
                journey_version: self.journey_version,
                expires_at_ms: self.expires_at_ms,
                moment_ms: None,
            },
        ))
    }

    /// A copy with the counts as they are after an attempt (for alerts).
    pub(super) fn with_counts(&self, attempts: i64, budget_from: i64) -> Row {
        Row {
            attempts,
            budget_from,
            ..self.clone()
        }
    }
}

/// What one attempt log entry (`attempts.outcome`) records; stored as the snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
pub(super) enum AttemptOutcome {
    /// A provider accepted it.
    Sent,
    /// A provider accepted it after an uncertain earlier hand-over (see
    /// `crate::domain::outbox::status_after_success`).
    SentPossiblyTwice,
    /// The provider refused it or did not answer.
    Failed,
    /// The run died between the hand-over and its record (found `sending` by a later alarm).
    Interrupted,
}

impl AttemptOutcome {
    /// The stored name.
    pub(super) fn as_str(self) -> &'static str {
        self.into()
    }

    /// The log entry of an accepted email whose row status is `status`.
    pub(super) fn accepted(status: EmailStatus) -> Self {
        if status == EmailStatus::SentPossiblyTwice {
            AttemptOutcome::SentPossiblyTwice
        } else {
            AttemptOutcome::Sent
        }
    }
}

/// What a redrive request came to ([`Outbox::redrive`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Redrive {
    /// Back in line with a fresh attempt budget.
    Queued,
    /// No email with that dedupe key.
    NotFound,
    /// Not a dead letter: its stored status.
    NotDead(String),
}

#[derive(Deserialize)]
struct StatusRow {
    seq: i64,
    status: String,
}

#[derive(Deserialize)]
struct EmailJson {
    email_json: String,
}

impl Outbox {
    /// Stores `email` unless its dedupe key is already in the outbox. Returns `true` if new (or
    /// re-planned, below).
    ///
    /// One exception to "a second enqueue is a no-op": the same key planned again under a newer
    /// journey version (an amendment that kept the key, e.g. `thank_you:<booking>`) replaces a
    /// row that is still waiting for its turn, or that its turn skipped as superseded, with the
    /// new rendering and intent, back in line. Without it the newer plan's send would meet the
    /// old row's key and never go out. Nothing sent or being sent is ever touched.
    pub(super) fn enqueue(&self, email: &OutgoingEmail, now: i64) -> Result<bool> {
        let intent = email.intent.as_ref();
        let cursor = self.exec(
            "INSERT INTO queue (dedupe_key, audience, rank, status, email_json, enqueued_at_ms, updated_at_ms, recipient, \
             intent_booking_id, journey_version, expires_at_ms, moment_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13) ON CONFLICT(dedupe_key) DO UPDATE SET \
               email_json = excluded.email_json, journey_version = excluded.journey_version, \
               expires_at_ms = excluded.expires_at_ms, moment_ms = excluded.moment_ms, \
               status = 'queued', not_before_ms = 0, \
               last_error = NULL, updated_at_ms = excluded.updated_at_ms, record_synced = 0 \
             WHERE excluded.journey_version > queue.journey_version AND queue.sent_at_ms IS NULL \
               AND (queue.status IN ('queued', 'waiting') OR (queue.status = 'skipped' AND queue.last_error = ?12))",
            vec![
                email.dedupe_key.as_str().into(),
                email.audience.as_str().into(),
                email.rank.as_i64().into(),
                EmailStatus::Queued.as_str().into(),
                serde_json::to_string(email)?.into(),
                now.into(),
                now.into(),
                email.to.as_str().to_ascii_lowercase().into(),
                intent
                    .and(email.booking_id.as_deref())
                    .map(str::to_string)
                    .into(),
                intent.and_then(|i| i.journey_version).into(),
                intent.and_then(|i| i.expires_at_ms).into(),
                SkipReason::Superseded.to_string().into(),
                intent.and_then(|i| i.moment(email.kind)).into(),
            ],
        )?;
        Ok(cursor.rows_written() > 0)
    }

    /// The stored email of `dedupe_key` as JSON text, if it is in the outbox.
    pub(super) fn email_json(&self, dedupe_key: &str) -> Result<Option<String>> {
        let rows: Vec<EmailJson> = self.rows(
            "SELECT email_json FROM queue WHERE dedupe_key = ?",
            vec![dedupe_key.into()],
        )?;
        Ok(rows.into_iter().next().map(|r| r.email_json))
    }

    /// Highest rank number the client lane may pick now: marketing (3) unless it is held (daily
    /// cap) or booking mail is backing off (marketing never goes ahead of booking mail).
    pub(super) fn client_rank_limit(&self, now: i64) -> Result<i64> {
        let held = self
            .get_state(super::storage::StateKey::MarketingHeldUntilMs)?
            .unwrap_or(0)
            > now;
        if held || self.booking_mail_waiting()? {
            Ok(Rank::Service.as_i64())
        } else {
            Ok(Rank::Marketing.as_i64())
        }
    }

    /// Some non-marketing client email is backing off (`queue_waiting_booking`).
    pub(super) fn booking_mail_waiting(&self) -> Result<bool> {
        Ok(self
            .first_value(
                "SELECT seq AS value FROM queue WHERE status = 'waiting' AND audience = 'client' AND rank < 3 LIMIT 1",
                vec![],
            )?
            .is_some())
    }

    /// The next queued item of `audience` up to `max_rank`: lowest rank, then oldest, through
    /// `queue_ready`.
    pub(super) fn pick(&self, audience: Audience, max_rank: i64) -> Result<Option<Row>> {
        let rows: Vec<Row> = self.rows(
            "SELECT seq, email_json, attempts, budget_from, maybe_handed_to, maybe_handed_at_ms, \
             intent_booking_id, journey_version, expires_at_ms, operator_decision, refused_ours \
             FROM queue \
             WHERE status = 'queued' AND audience = ? AND rank <= ? ORDER BY rank, seq LIMIT 1",
            vec![audience.as_str().into(), max_rank.into()],
        )?;
        Ok(rows.into_iter().next())
    }

    /// Some item of `audience` with a rank number in `min_rank..=max_rank` is queued.
    pub(super) fn any_queued(
        &self,
        audience: Audience,
        min_rank: i64,
        max_rank: i64,
    ) -> Result<bool> {
        let rows: Vec<ValueRow> = self.rows(
            "SELECT seq AS value FROM queue WHERE status = 'queued' AND audience = ? AND rank >= ? AND rank <= ? LIMIT 1",
            vec![audience.as_str().into(), min_rank.into(), max_rank.into()],
        )?;
        Ok(!rows.is_empty())
    }

    /// The cheap facts the scheduler needs (three index lookups, never a scan).
    pub(super) fn facts(&self, now: i64) -> Result<QueueFacts> {
        let earliest_waiting_ms = self.first_value(
            "SELECT not_before_ms AS value FROM queue WHERE status = 'waiting' ORDER BY not_before_ms LIMIT 1",
            vec![],
        )?;
        let limit = self.client_rank_limit(now)?;
        let fast_lane_at_ms = match self.catch_up(now)? {
            Some(_)
                if self.any_queued(Audience::Client, 0, limit.min(Rank::Booking.as_i64()))? =>
            {
                Some(
                    self.get_state(super::storage::StateKey::FastSlotAtMs)?
                        .unwrap_or(0),
                )
            }
            _ => None,
        };
        Ok(QueueFacts {
            owner_ready: self.any_queued(Audience::Owner, 0, Rank::Marketing.as_i64())?,
            client_ready: self.any_queued(Audience::Client, 0, limit)?,
            earliest_waiting_ms,
            fast_lane_at_ms,
        })
    }

    /// Some row's outcome is not in D1 yet (`queue_unsynced`).
    pub(super) fn any_unsynced(&self) -> Result<bool> {
        Ok(self
            .first_value(
                "SELECT seq AS value FROM queue WHERE record_synced = 0 LIMIT 1",
                vec![],
            )?
            .is_some())
    }

    /// Interrupted hand-overs (see the module docs of `crate::outbox`): logged, then back in line
    /// with the uncertain hand-over on record. A non-idempotent provider's uncertainty is kept.
    pub(super) fn recover_interrupted(&self, now: i64) -> Result<()> {
        self.exec(
            "INSERT OR IGNORE INTO attempts (seq, attempt, provider, at_ms, outcome, error) \
             SELECT seq, attempts, provider, ?, ?, 'the run died between the hand-over and its record' \
             FROM queue WHERE status = 'sending'",
            vec![now.into(), AttemptOutcome::Interrupted.as_str().into()],
        )?;
        self.exec(
            "UPDATE queue SET status = 'queued', updated_at_ms = ?, \
               maybe_handed_at_ms = CASE WHEN maybe_handed_to IS NOT NULL AND maybe_handed_to != 'resend' \
                 THEN maybe_handed_at_ms ELSE updated_at_ms END, \
               maybe_handed_to = CASE WHEN maybe_handed_to IS NOT NULL AND maybe_handed_to != 'resend' \
                 THEN maybe_handed_to ELSE provider END \
             WHERE status = 'sending'",
            vec![now.into()],
        )?;
        Ok(())
    }

    /// Backoffs that ended by `now`: back in line, keeping their rank and arrival order.
    pub(super) fn release_waiting(&self, now: i64) -> Result<()> {
        self.exec(
            "UPDATE queue SET status = 'queued', updated_at_ms = ? WHERE status = 'waiting' AND not_before_ms <= ?",
            vec![now.into(), now.into()],
        )?;
        Ok(())
    }

    /// Moves a row to `status` (not before `not_before_ms` for `waiting`) with `error` as its last
    /// error; its outcome will be written to D1. It is no longer set aside on any route (a new
    /// set-aside marks it again after parking: `probe.rs`).
    pub(super) fn park(
        &self,
        seq: i64,
        status: EmailStatus,
        not_before_ms: i64,
        error: &str,
        now: i64,
    ) -> Result<()> {
        self.exec(
            "UPDATE queue SET status = ?, not_before_ms = ?, last_error = ?, updated_at_ms = ?, record_synced = 0, \
             route_wait = 0, set_aside_on = 0 WHERE seq = ?",
            vec![status.as_str().into(), not_before_ms.into(), error.into(), now.into(), seq.into()],
        )?;
        Ok(())
    }

    /// Parks a row `waiting` until `until_ms` because no route can carry it (every provider
    /// paused): marked `route_wait`, so resuming a route puts it back in line at once
    /// ([`Outbox::release_route_waits`]).
    pub(super) fn park_for_route(
        &self,
        seq: i64,
        until_ms: i64,
        error: &str,
        now: i64,
    ) -> Result<()> {
        self.park(seq, EmailStatus::Waiting, until_ms, error, now)?;
        self.exec(
            "UPDATE queue SET route_wait = 1 WHERE seq = ?",
            vec![seq.into()],
        )?;
        Ok(())
    }

    /// A route was resumed: rows waiting only for a route go back in line now (their rank and age
    /// kept). Returns how many.
    pub(super) fn release_route_waits(&self, now: i64) -> Result<usize> {
        let cursor = self.exec(
            "UPDATE queue SET status = 'queued', not_before_ms = 0, route_wait = 0, updated_at_ms = ? \
             WHERE status = 'waiting' AND route_wait = 1",
            vec![now.into()],
        )?;
        Ok(cursor.rows_written())
    }

    /// Records an email handed over twice without a confirmation (`stop_after_uncertain`): ended
    /// `sent_possibly_twice`, never sent again, `why` as its last error.
    pub(super) fn mark_unconfirmed(&self, seq: i64, why: &str, at: i64) -> Result<()> {
        self.exec(
            "UPDATE queue SET status = ?, sent_at_ms = ?, last_error = ?, updated_at_ms = ?, record_synced = 0 \
             WHERE seq = ?",
            vec![EmailStatus::SentPossiblyTwice.as_str().into(), at.into(), why.into(), at.into(), seq.into()],
        )?;
        Ok(())
    }

    /// Marks a row `sending` with `provider`, before the hand-over (the record an interrupted run
    /// leaves behind).
    pub(super) fn mark_sending(
        &self,
        seq: i64,
        attempts: i64,
        provider: Provider,
        now: i64,
    ) -> Result<()> {
        self.exec(
            "UPDATE queue SET status = ?, attempts = ?, provider = ?, updated_at_ms = ? WHERE seq = ?",
            vec![
                EmailStatus::Sending.as_str().into(),
                attempts.into(),
                provider.as_str().into(),
                now.into(),
                seq.into(),
            ],
        )?;
        Ok(())
    }

    /// Records an accepted email: `status` (`sent` or `sent_possibly_twice`) and the provider's id.
    pub(super) fn mark_sent(
        &self,
        seq: i64,
        status: EmailStatus,
        provider_message_id: &str,
        at: i64,
    ) -> Result<()> {
        self.exec(
            "UPDATE queue SET status = ?, provider_message_id = ?, sent_at_ms = ?, last_error = NULL, \
             updated_at_ms = ?, record_synced = 0, set_aside_on = 0 WHERE seq = ?",
            vec![status.as_str().into(), provider_message_id.into(), at.into(), at.into(), seq.into()],
        )?;
        Ok(())
    }

    /// Keeps an uncertain hand-over on the row (provider, ms UTC).
    pub(super) fn note_maybe_handed(&self, seq: i64, handed: (Provider, i64)) -> Result<()> {
        self.exec(
            "UPDATE queue SET maybe_handed_to = ?, maybe_handed_at_ms = ? WHERE seq = ?",
            vec![handed.0.as_str().into(), handed.1.into(), seq.into()],
        )?;
        Ok(())
    }

    /// Attempts before `budget_from` do not count against the row's attempt budget.
    pub(super) fn set_budget_from(&self, seq: i64, budget_from: i64) -> Result<()> {
        self.exec(
            "UPDATE queue SET budget_from = ? WHERE seq = ?",
            vec![budget_from.into(), seq.into()],
        )?;
        Ok(())
    }

    /// The providers (`Provider::bit`) that refused row `seq` for a reason of ours.
    pub(super) fn set_refused_ours(&self, seq: i64, refused_ours: i64) -> Result<()> {
        self.exec(
            "UPDATE queue SET refused_ours = ? WHERE seq = ?",
            vec![refused_ours.into(), seq.into()],
        )?;
        Ok(())
    }

    /// Appends (or replaces) the log entry of attempt number `attempt` of row `seq`.
    pub(super) fn log_attempt(
        &self,
        seq: i64,
        attempt: i64,
        provider: Provider,
        at: i64,
        outcome: AttemptOutcome,
        error: Option<&str>,
    ) -> Result<()> {
        self.exec(
            "INSERT OR REPLACE INTO attempts (seq, attempt, provider, at_ms, outcome, error) VALUES (?, ?, ?, ?, ?, ?)",
            vec![seq.into(), attempt.into(), provider.as_str().into(), at.into(), outcome.as_str().into(), error.into()],
        )?;
        Ok(())
    }

    /// Marketing emails sent since `since_ms` (UTC), all of them or only to `recipient` (lower
    /// case), through the `queue_marketing_*` indexes.
    pub(super) fn marketing_sent_since(
        &self,
        since_ms: i64,
        recipient: Option<&str>,
    ) -> Result<u32> {
        let n = match recipient {
            None => self.first_value(
                "SELECT COUNT(*) AS value FROM queue WHERE rank = 3 AND sent_at_ms IS NOT NULL AND sent_at_ms >= ?",
                vec![since_ms.into()],
            )?,
            Some(to) => self.first_value(
                "SELECT COUNT(*) AS value FROM queue WHERE rank = 3 AND sent_at_ms IS NOT NULL AND recipient = ? AND sent_at_ms >= ?",
                vec![to.into(), since_ms.into()],
            )?,
        };
        Ok(u32::try_from(n.unwrap_or(0)).unwrap_or(u32::MAX))
    }

    /// Puts a dead letter back in line: same row, same dedupe key, a fresh attempt budget. Any other
    /// status is refused (a queued, sending or sent email cannot be redriven, so a redrive can never
    /// send twice).
    pub(super) fn redrive(&self, dedupe_key: &str, now: i64) -> Result<Redrive> {
        let rows: Vec<StatusRow> = self.rows(
            "SELECT seq, status FROM queue WHERE dedupe_key = ?",
            vec![dedupe_key.into()],
        )?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(Redrive::NotFound);
        };
        if row.status != EmailStatus::Dead.as_str() {
            return Ok(Redrive::NotDead(row.status));
        }
        self.exec(
            "UPDATE queue SET status = 'queued', budget_from = attempts, refused_ours = 0, \
             not_before_ms = 0, updated_at_ms = ?, record_synced = 0 WHERE seq = ? AND status = 'dead'",
            vec![now.into(), row.seq.into()],
        )?;
        Ok(Redrive::Queued)
    }
}

#[cfg(test)]
mod tests {
    use super::AttemptOutcome;
    use crate::domain::email::EmailStatus;
    use strum::IntoEnumIterator;

    #[test]
    fn attempt_outcomes_keep_their_stored_names() {
        let names: Vec<&str> = AttemptOutcome::iter().map(AttemptOutcome::as_str).collect();
        assert_eq!(
            names,
            ["sent", "sent_possibly_twice", "failed", "interrupted"]
        );
        // An accepted email's log entry names the row's status.
        for status in [EmailStatus::Sent, EmailStatus::SentPossiblyTwice] {
            assert_eq!(AttemptOutcome::accepted(status).as_str(), status.as_str());
        }
    }
}
