//! The outbox: one Durable Object (SQLite-backed) that is the single sender of every email.
//!
//! Queue rows live in the object's SQLite. The policy (`crate::domain::outbox`,
//! `crate::domain::marketing`) decides; this file carries it out:
//! - `POST /enqueue` stores an email once per dedupe key (a second enqueue is a no-op, except a
//!   newer journey version of an email not yet sent: `queue.rs`) and re-arms the alarm;
//! - `alarm()` sends every queued owner alert at once, then at most one client email if the client
//!   slot is open, records outcomes (also in D1), and re-arms for the next thing to do;
//! - `POST /withdraw` (`{"bookingId", "except": [dedupe keys]}`) marks a cancelled booking's
//!   queued emails that carry intent `skipped` ("booking cancelled") at once;
//! - `POST /redrive` puts a dead letter back in line with a fresh attempt budget (same row, same
//!   dedupe key: it cannot be sent twice);
//! - `POST /release` records the operator's one decision on a blocked email (`release.rs`);
//! - `POST /rearm`, `POST /held`, `POST /prune`: the sweeper's checks (a lost or stuck alarm,
//!   emails D1 says were handed over, retention of finished rows; `maintenance.rs`);
//! - `POST /pause`: the operator pauses or resumes a route (`{"provider": "main"|"smtp",
//!   "untilMs"}`); a resume puts email that waited only for a route back in line at once;
//! - `POST /pace`: the owner's bounded catch-up of urgent and booking email (`backlog.rs`).
//!
//! # The gap between "provider accepted" and "we recorded it"
//!
//! A row is marked `sending` (with its provider and time) before the hand-over. An alarm that finds
//! a row in `sending` knows the previous run died in between (a crash, an eviction, a deploy): the
//! row goes back in line with `maybe_handed_to` / `maybe_handed_at_ms` set, and is sent again:
//! - with **Resend**, the retry carries the same `Idempotency-Key` and byte-identical payload, so
//!   Resend answers the first result instead of sending again: the email ends `sent`;
//! - with **Cloudflare Email Service or SMTP**, nobody can tell whether the first hand-over went
//!   through: the email is re-sent with the same deterministic Message-ID (SMTP; Cloudflare sets
//!   its own) and ends `sent_possibly_twice`, visible to the operator. Losing a booking email is
//!   worse than a rare duplicate.
//!
//! A lost answer (a timeout or broken connection after the request or DATA went out) is handled the
//! same way and is never treated as a refusal. The decision is
//! `crate::domain::outbox::status_after_success`.
//!
//! Every pick uses a partial index (`queue_ready`, `queue_waiting`, …), so an alarm reads a
//! handful of rows whatever the queue length.
//!
//! # Layout
//! - this file: the object, its HTTP router and `alarm`;
//! - `schema.rs`: tables, migrations, indexes; `storage.rs`: counted SQL and the `state` table;
//! - `queue.rs`: rows, statuses, enqueue / pick / park / redrive; `scheduler.rs`: the alarm's
//!   work and re-arming; `gate.rs`: the send gate; `intent.rs`: intent at the send turn and withdrawal; `send.rs`: one send, staged (hand-over →
//!   outcome → apply), with failover; `alerts.rs`: owner alerts; `sync.rs`: D1 writes;
//!   `view.rs`: the operator view;
//! - `client.rs`: how the rest of the Worker calls the object; `providers.rs`, `resend.rs`,
//!   `smtp.rs`: the providers.
//!
//! Every error answer is a [`crate::platform::ErrorBody`].

pub mod client;
pub mod providers;
pub mod resend;
pub mod smtp;
pub mod smtp_wire;

mod alerts;
mod backlog;
mod gate;
mod intent;
mod maintenance;
mod probe;
mod queue;
mod release;
mod routes;
mod scheduler;
mod schema;
mod send;
mod storage;
mod sync;
/// The operator view's JSON (`GET /state`), read back by the admin pages.
pub mod view;

pub use intent::WithdrawAnswer;
pub use maintenance::{HeldAnswer, HeldRequest, PruneAnswer, PruneRequest};
pub use send::SendFailure;

use crate::config::Config;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::platform::{now_ms, ErrorBody};
use queue::Redrive;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use storage::StateKey;
use view::ViewFilter;
use worker::{durable_object, DurableObject, Env, Method, Request, Response, Result, State};

/// `POST /redrive` body.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RedriveRequest {
    dedupe_key: String,
}

/// `POST /enqueue` answer: `queued` (new) or `duplicate` (the dedupe key was already there).
#[derive(Serialize)]
struct EnqueueAnswer {
    status: &'static str,
}

/// `POST /redrive` answer when the email is back in line.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RedriveAnswer<'a> {
    status: &'static str,
    dedupe_key: &'a str,
}

/// `POST /redrive` 409 answer: the error body plus the email's current status.
#[derive(Serialize)]
struct RedriveConflict {
    #[serde(flatten)]
    body: ErrorBody,
    status: String,
}

/// `POST /pace` body: a catch-up of `gap_ms` for `duration_ms`, or `stop`.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct PaceRequest {
    #[serde(default)]
    gap_ms: Option<i64>,
    #[serde(default)]
    duration_ms: Option<i64>,
    #[serde(default)]
    stop: bool,
}

/// The outbox Durable Object (`OUTBOX`, one instance named `outbox`).
#[durable_object]
pub struct Outbox {
    state: State,
    env: Env,
    schema_ready: Cell<bool>,
    rows_read: Cell<usize>,
    /// An alarm of this very instance is running. Rows in `sending` are only in flight while this
    /// is set; after a crash or eviction the new instance starts with `false`, which is how
    /// interrupted hand-overs are told apart from live ones.
    busy: Cell<bool>,
    /// A `sync_records` run is in flight (it awaits D1): a second call meanwhile (from the alarm
    /// or a fetch) sets `sync_again` and returns, and the running one makes one more pass, so
    /// outcomes reach D1 in order and an older status can never land after a newer one.
    syncing: Cell<bool>,
    sync_again: Cell<bool>,
}

impl Outbox {
    fn config(&self) -> Result<Config> {
        crate::platform::config_or_err(&self.env)
    }
}

/// `400 invalid_payload`, naming the offending `field` (a JSON path or `query`) when known.
fn invalid(message: String, field: Option<&str>) -> Result<Response> {
    ErrorBody {
        field: field.map(str::to_string),
        ..ErrorBody::new("invalid_payload", message)
    }
    .into_response(400)
}

/// `404 not_found` for a dedupe key the outbox does not hold.
fn no_such_email(dedupe_key: &str) -> Result<Response> {
    ErrorBody::new(
        "not_found",
        format!("no email with dedupe key {dedupe_key:?} in the outbox"),
    )
    .into_response(404)
}

/// `POST /pause` body: which provider, paused until when (ms UTC; 0 or past = resume).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct PauseRequest {
    provider: String,
    until_ms: i64,
}

impl DurableObject for Outbox {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            env,
            schema_ready: Cell::new(false),
            rows_read: Cell::new(0),
            busy: Cell::new(false),
            syncing: Cell::new(false),
            sync_again: Cell::new(false),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        self.ensure_schema()?;
        match (req.method(), req.path().as_str()) {
            (Method::Post, "/enqueue") => {
                // Parsed from the text, not `req.json()`: OutgoingEmail and everything in it is
                // already deserialised from JSON text elsewhere, and a second (JS-value) parser
                // for the same types is wasm bytes for nothing (`crate::domain::basics::json`).
                let email: OutgoingEmail = match serde_json::from_str(&req.text().await?) {
                    Ok(e) => e,
                    Err(e) => return invalid(format!("invalid email: {e}"), None),
                };
                let now = now_ms();
                let fresh = self.enqueue(&email, now)?;
                self.rearm(now).await?;
                Response::from_json(&EnqueueAnswer {
                    status: if fresh { "queued" } else { "duplicate" },
                })
            }
            (Method::Post, "/redrive") => {
                let body: RedriveRequest = match req.json().await {
                    Ok(b) => b,
                    Err(e) => {
                        return invalid(
                            format!("expected {{\"dedupeKey\": \"…\"}}: {e}"),
                            Some("dedupeKey"),
                        )
                    }
                };
                let key = body.dedupe_key.trim();
                let now = now_ms();
                let resp = match self.redrive(key, now)? {
                    Redrive::Queued => Response::from_json(&RedriveAnswer {
                        status: "queued",
                        dedupe_key: key,
                    }),
                    Redrive::NotFound => no_such_email(key),
                    Redrive::NotDead(status) => Ok(Response::from_json(&RedriveConflict {
                        body: ErrorBody::new(
                            "conflict",
                            format!("{key} is {status}, not a dead letter; only dead letters can be redriven"),
                        ),
                        status,
                    })?
                    .with_status(409)),
                }?;
                self.sync_records().await;
                self.rearm(now).await?;
                Ok(resp)
            }
            (Method::Post, "/withdraw") => {
                let body: intent::WithdrawRequest = match req.json().await {
                    Ok(b) => b,
                    Err(e) => {
                        return invalid(
                            format!("expected {{\"bookingId\": \"…\", \"except\": [\"…\"]}}: {e}"),
                            Some("bookingId"),
                        )
                    }
                };
                let now = now_ms();
                let withdrawn = self.withdraw(&body, now)?;
                self.sync_records().await;
                self.rearm(now).await?;
                Response::from_json(&WithdrawAnswer { withdrawn })
            }
            (Method::Post, "/release") => self.release_route(req).await,
            // The sweeper's check: due work and no alarm, or an alarm stuck in the past → armed
            // again. Answers `{"rearmed": bool, "alarmAtMs": ms UTC | null, "fault": "missing" |
            // "stuck" | null, "stuckSinceMs": ms UTC | null}`.
            (Method::Post, "/rearm") => {
                let now = now_ms();
                let alarm = self.state.storage().get_alarm().await?;
                let fault = crate::domain::sweeper::alarm_fault(alarm, now, self.busy.get());
                let at = self.rearm(now).await?;
                let repaired = fault.filter(|_| at.is_some());
                Response::from_json(&serde_json::json!({
                    "rearmed": repaired.is_some(),
                    "alarmAtMs": at,
                    "fault": repaired.map(|f| f.as_str()),
                    "stuckSinceMs": match repaired {
                        Some(crate::domain::sweeper::AlarmFault::Stuck { since_ms }) => Some(since_ms),
                        _ => None,
                    },
                }))
            }
            // The sweeper: which of these dedupe keys does the outbox hold (any status)?
            (Method::Post, "/held") => {
                let body: HeldRequest = match req.json().await {
                    Ok(b) => b,
                    Err(e) => {
                        return invalid(
                            format!("expected {{\"dedupeKeys\": [\"…\"]}}: {e}"),
                            Some("dedupeKeys"),
                        )
                    }
                };
                if body.dedupe_keys.len() > maintenance::MAX_HELD_KEYS {
                    return invalid(
                        format!(
                            "at most {} dedupe keys per call, got {}",
                            maintenance::MAX_HELD_KEYS,
                            body.dedupe_keys.len()
                        ),
                        Some("dedupeKeys"),
                    );
                }
                Response::from_json(&HeldAnswer {
                    held: self.held(&body.dedupe_keys)?,
                })
            }
            // The sweeper's retention of finished rows.
            (Method::Post, "/prune") => {
                let body: PruneRequest = match req.json().await {
                    Ok(b) => b,
                    Err(e) => {
                        return invalid(
                            format!("expected {{\"beforeMs\": ms, \"limit\": n}}: {e}"),
                            None,
                        )
                    }
                };
                Response::from_json(&PruneAnswer {
                    pruned: self.prune(body.before_ms, body.limit)?,
                })
            }
            // The operator pauses or resumes a provider by hand (admin outbox page):
            // `{"provider": "main"|"smtp", "untilMs": <ms UTC, 0 = resume now>}`.
            (Method::Post, "/pause") => {
                let body: PauseRequest = match req.json().await {
                    Ok(b) => b,
                    Err(e) => {
                        return invalid(
                            format!(
                            "expected {{\"provider\": \"main\"|\"smtp\", \"untilMs\": ms}}: {e}"
                        ),
                            Some("provider"),
                        )
                    }
                };
                let now = now_ms();
                let route = match body.provider.as_str() {
                    "main" => self.availability(&self.config()?)?.main,
                    "smtp" => crate::domain::outbox::Provider::Smtp,
                    other => {
                        return invalid(
                            format!("provider {other:?} is neither \"main\" nor \"smtp\""),
                            Some("provider"),
                        )
                    }
                };
                self.record_operator_pause(route, body.until_ms, now)?;
                // A route back: email that waited only for a route goes back in line at once
                // (owner alerts queued meanwhile go out with the next alarm).
                let released = if body.until_ms <= now {
                    self.release_route_waits(now)?
                } else {
                    0
                };
                self.rearm(now).await?;
                Response::from_json(&serde_json::json!({
                    "provider": body.provider,
                    "pausedUntilMs": (body.until_ms > now).then_some(body.until_ms),
                    "released": released,
                }))
            }
            // The owner's catch-up (admin outbox page, operator API): `{"gapMs": ms,
            // "durationMs": ms}` within the configured bounds, or `{"stop": true}`. Answers
            // `{"catchUp": {gapMs, untilMs} | null, "forecast": …}`.
            (Method::Post, "/pace") => {
                let body: PaceRequest = match req.json().await {
                    Ok(b) => b,
                    Err(e) => {
                        return invalid(
                            format!("expected {{\"gapMs\": ms, \"durationMs\": ms}} or {{\"stop\": true}}: {e}"),
                            None,
                        )
                    }
                };
                let cfg = self.config()?;
                let now = now_ms();
                let catch_up = if body.stop {
                    None
                } else {
                    match crate::domain::outbox::backlog::CatchUp::new(
                        body.gap_ms.unwrap_or(0),
                        body.duration_ms.unwrap_or(0),
                        now,
                        cfg.pacing,
                        cfg.catch_up,
                    ) {
                        Ok(c) => Some(c),
                        Err(e) => {
                            let field = match e {
                                crate::domain::outbox::backlog::CatchUpError::Gap { .. } => "gapMs",
                                crate::domain::outbox::backlog::CatchUpError::Duration {
                                    ..
                                } => "durationMs",
                            };
                            return invalid(e.to_string(), Some(field));
                        }
                    }
                };
                self.set_catch_up(catch_up)?;
                self.rearm(now).await?;
                Response::from_json(&serde_json::json!({
                    "catchUp": catch_up,
                    "forecast": self.forecast(&cfg, now)?,
                }))
            }
            (Method::Get, "/state") => match ViewFilter::from_url(&req.url()?) {
                Ok(filter) => Response::from_json(&self.view(&filter)?),
                Err(message) => invalid(message, Some("query")),
            },
            (Method::Get, "/email") => {
                // The rendered email as queued, for inspection (owner pages, tests).
                let url = req.url()?;
                let key = url
                    .query_pairs()
                    .find(|(k, _)| k == "dedupe_key")
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                match self.email_json(&key)? {
                    Some(json) => {
                        Response::from_json(&serde_json::from_str::<serde_json::Value>(&json)?)
                    }
                    None => no_such_email(&key),
                }
            }
            (method, path) => ErrorBody::new(
                "not_found",
                format!("the outbox has no route {method:?} {path}"),
            )
            .into_response(404),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        self.ensure_schema()?;
        if self.busy.get() {
            // Alarms are at-least-once and may overlap with a run of this instance that is still
            // awaiting a provider; that run re-arms when it ends.
            return Response::ok("busy");
        }
        self.busy.set(true);
        self.rows_read.set(0);
        let started = now_ms();
        let result = self.process().await;
        self.busy.set(false);
        if result.is_ok() {
            let _ = self.set_state(StateKey::LastAlarmRowsRead, self.rows_read.get() as i64);
            let _ = self.set_state(StateKey::LastAlarmMs, now_ms() - started);
        }
        if let Err(e) = result {
            worker::console_error!("outbox alarm failed: {e}");
            // Re-arm before failing so the queue never stalls if the platform stops retrying.
            let _ = self.rearm(now_ms() + 1_000).await;
            return Err(e);
        }
        Response::ok(format!("rows_read={}", self.rows_read.get()))
    }
}
