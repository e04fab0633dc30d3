//! `POST /release`: the operator's one decision on an email the content lock blocked
//! (`crate::domain::admin::release`). `release` → back in line (`queued`), and the gate skips the lock
//! for it; `reject` → `skipped` for good. Recorded on the queue row (`operator_*` columns, and
//! `last_error` naming who and why) and in D1 `emails`. A second decision, or one on an email that
//! is not `blocked`, is answered 409 with the email's status and earlier decision.

use super::{invalid, no_such_email, Outbox};
use crate::config::DB_BINDING;
use crate::domain::admin::release::{parse_release_request, OperatorDecision, ReleaseRequest};
use crate::domain::email::EmailStatus;
use crate::platform::{now_ms, ErrorBody};
use crate::store;
use serde::{Deserialize, Serialize};
use worker::{Request, Response, Result};

#[derive(Deserialize)]
struct DecisionRow {
    seq: i64,
    status: String,
    operator_decision: Option<String>,
}

/// 200 answer.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Decided<'a> {
    dedupe_key: &'a str,
    decision: &'static str,
    /// The email's status now (`queued` after a release, `skipped` after a reject).
    status: &'static str,
    by: &'a str,
    at_ms: i64,
}

/// 409 answer: the error body plus the email's status and any earlier decision.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NotDecidable {
    #[serde(flatten)]
    body: ErrorBody,
    status: String,
    decision: Option<String>,
}

impl Outbox {
    /// The `/release` route (see the module docs).
    pub(super) async fn release_route(&self, mut req: Request) -> Result<Response> {
        let body = req.bytes().await?;
        let request = match parse_release_request(&body) {
            Ok(r) => r,
            Err(e) => return invalid(e.to_string(), e.field()),
        };
        let key = request.dedupe_key.as_str();
        let rows: Vec<DecisionRow> = self.rows(
            "SELECT seq, status, operator_decision FROM queue WHERE dedupe_key = ?",
            vec![key.into()],
        )?;
        let Some(row) = rows.into_iter().next() else {
            return no_such_email(key);
        };
        if row.operator_decision.is_some() || row.status != EmailStatus::Blocked.as_str() {
            let message = match &row.operator_decision {
                Some(d) => {
                    format!("{key} was already decided ({d}); a blocked email is decided once")
                }
                None => format!("{key} is {}, not blocked by the content lock", row.status),
            };
            return Ok(Response::from_json(&NotDecidable {
                body: ErrorBody::new("conflict", message),
                status: row.status,
                decision: row.operator_decision,
            })?
            .with_status(409));
        }
        let at = now_ms();
        let status = self.decide(row.seq, &request, at)?;
        // The D1 record: the decision now, the status with the next sync (as every outcome).
        let recorded = match self.env.d1(DB_BINDING) {
            Ok(db) => {
                store::emails::record_operator_decision(
                    &db,
                    key,
                    request.decision.as_str(),
                    &request.by,
                    at,
                    &request.reason,
                )
                .await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = recorded {
            worker::console_error!("outbox: recording the decision on {key} in D1 failed: {e}");
        }
        self.sync_records().await;
        self.rearm(at).await?;
        Response::from_json(&Decided {
            dedupe_key: key,
            decision: request.decision.as_str(),
            status: status.as_str(),
            by: &request.by,
            at_ms: at,
        })
    }

    /// Applies the decision to the (blocked, undecided) row `seq`; returns its new status.
    fn decide(&self, seq: i64, r: &ReleaseRequest, at: i64) -> Result<EmailStatus> {
        let (status, note) = match r.decision {
            OperatorDecision::Release => (EmailStatus::Queued, "released"),
            OperatorDecision::Reject => (EmailStatus::Skipped, "rejected"),
        };
        let last_error = format!("{note} by {} after the content lock: {}", r.by, r.reason);
        self.exec(
            "UPDATE queue SET status = ?, not_before_ms = 0, last_error = ?, operator_decision = ?, \
             operator_by = ?, operator_at_ms = ?, operator_reason = ?, updated_at_ms = ?, record_synced = 0 \
             WHERE seq = ? AND status = 'blocked' AND operator_decision IS NULL",
            vec![
                status.as_str().into(),
                last_error.into(),
                r.decision.as_str().into(),
                r.by.as_str().into(),
                at.into(),
                r.reason.as_str().into(),
                at.into(),
                seq.into(),
            ],
        )?;
        Ok(status)
    }
}
