//! The sweeper: a Cron Trigger (`[triggers] crons` in wrangler.toml) that
//! treats D1 as the authority on due work and does what nobody is doing. Its decisions are pure
//! ([`crate::domain::sweeper`], [`crate::domain::outbox::intent`]); this module carries them out, each kind
//! of work bounded by `SWEEP_BATCH` rows read through an index, so a tick costs the same with 0 or
//! 100,000 bookings.
//!
//! Per tick, each part on its own (one failing is logged and counted; the others still run):
//! - `journeys.rs`: raw events still `received` after `SWEEP_GRACE_MS` → their journey is started
//!   with the same instance id (an instance that already exists means someone else started it);
//! - `sends.rs`: scheduled sends still `planned` more than `SWEEP_GRACE_MS` past due whose Workflow
//!   instance will never make them (errored, terminated, complete, unknown) → decided here with
//!   the journey's own rules (cancelled / replaced / superseded / stale → `skipped`) and sent;
//! - `emails.rs`: emails D1 says are `claimed` or `queued` but the outbox does not hold → handed
//!   over again from the copy D1 kept (idempotent on the dedupe key);
//! - `webhooks.rs`: outbound webhook deliveries pending well past their due time with no attempt
//!   in progress (their queue message was lost) → sent to the queue again;
//! - the outbox is asked to re-arm: due work and no alarm (a lost alarm) or an alarm stuck in the
//!   past → armed again, recorded as a repair;
//! - `zones.rs`: a hotel whose location lookup failed (or could not run) is looked up again with
//!   back-off; once its zone is known, its bookings' planned sends move to hotel time (the
//!   sweeper then makes them at their new time, `sends.rs`), recorded as a repair;
//! - `reminders.rs`: refunds waiting for the owner are reminded with fresh links, open
//!   card-testing holds recalled, unanswered holds handled as configured;
//! - retention: bodies of finished raw events older than `RETENTION_RAW_BODY_DAYS` are blanked
//!   (the row stays); the kept contents of emails (`email_contents`, the admin's "email as sent")
//!   older than `RETENTION_EMAIL_CONTENT_DAYS` (180: card dispute windows) are deleted; the
//!   outbox's finished rows older than `RETENTION_OUTBOX_DAYS` are deleted (the D1 `emails`
//!   record stays); the sign-in limiter's counters whose window is over, and expired admin
//!   sessions, are deleted;
//! - every repair is recorded once in D1 `repairs` (unique on its key); `digest.rs` sends the
//!   owner one digest a day at the owner's hour (the day's bookings, emails and repairs, and
//!   what waits).
//!
//! Exactly once: starting a journey is idempotent on its instance id; a send claims its dedupe key
//! in D1 before the outbox sees it; marking is a conditional `UPDATE … WHERE status = …`; repairs
//! are `INSERT … ON CONFLICT DO NOTHING`. Two overlapping ticks therefore send nothing twice.

mod digest;
mod emails;
mod journeys;
mod reminders;
mod sends;
mod webhooks;
mod zones;

use crate::config::{DB_BINDING, OUTBOX_BINDING, OUTBOX_NAME};
use crate::domain::sweeper::{repair_key, Cutoffs, RepairKind, SweepConfig};
use crate::store::raw_events;
use crate::store::repairs;
use serde::Deserialize;
use worker::{D1Database, Env, Error, Method, Request, RequestInit, Result};

/// What one tick did (logged; returned for tests and the bench).
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct TickReport {
    /// Journeys the sweeper started for stuck raw events.
    pub journeys_started: u32,
    /// Stuck raw events that could not be started (logged with the reason).
    pub raw_events_failed: u32,
    /// Past-due scheduled sends of dead instances decided here: sent.
    pub scheduled_sent: u32,
    /// Past-due scheduled sends of dead instances decided here: skipped (cancelled, stale, …).
    pub scheduled_skipped: u32,
    /// Past-due scheduled sends left alone because their instance is alive (or could not be asked).
    pub scheduled_left: u32,
    /// Past-due scheduled sends of dead instances the sweeper could not make either (recorded,
    /// tried again a grace period later).
    pub scheduled_failed: u32,
    /// Emails handed to the outbox again (D1 said claimed/queued, the outbox did not hold them).
    pub emails_enqueued: u32,
    /// Unsettled emails that could not be handed over again (reported to the owner).
    pub emails_unrestorable: u32,
    /// Unsettled emails whose hand-over failed this tick (recorded once; tried again a grace
    /// period later).
    pub emails_failed: u32,
    /// Raw bodies pruned.
    pub raw_bodies_pruned: u32,
    /// Kept email contents (the admin's "email as sent") deleted after `RETENTION_EMAIL_CONTENT_DAYS`.
    pub email_contents_pruned: u32,
    /// Finished outbox rows pruned.
    pub outbox_rows_pruned: u32,
    /// Sign-in limiter counters whose window is over, deleted (expired admin sessions go with
    /// them).
    pub login_limits_pruned: u32,
    /// Outbound webhook deliveries sent to the queue again (past due, their message lost).
    pub webhooks_reenqueued: u32,
    /// Whether the outbox had due work and no alarm (or a stuck one), and was re-armed.
    pub outbox_rearmed: bool,
    /// Whether this tick sent the owner the daily digest.
    pub digest_sent: bool,
    /// Refund reminders sent (with fresh links).
    pub refund_reminders: u32,
    /// Open card-testing holds recalled to the owner.
    pub holds_recalled: u32,
    /// Unanswered holds dismissed (`HOLD_UNANSWERED_ACTION = dismiss`).
    pub holds_dismissed: u32,
    /// Hotel location lookups retried, and how many found the hotel's zone.
    pub zone_lookups: u32,
    pub zones_found: u32,
    /// Planned sends moved to hotel time once their hotel's zone became known.
    pub sends_replanned: u32,
    /// Repairs newly recorded in D1 (not counting ones another tick recorded first).
    pub repairs_recorded: u32,
    /// Parts of the tick that failed (each logged; the rest of the tick still ran).
    pub parts_failed: u32,
    /// D1 rows read by the sweeper's own queries (D1 `meta.rows_read`; the journey starts, the
    /// sends and the outbox's work are not included).
    pub rows_read: u64,
}

/// The sweeper's variables, read through the Worker's env.
fn sweep_config(env: &Env) -> Result<SweepConfig> {
    SweepConfig::from_vars(|name| env.var(name).ok().map(|v| v.to_string()))
        .map_err(|e| Error::RustError(e.to_string()))
}

/// One tick's context: the bindings, the configuration and its cut-offs at `now_ms`, and the
/// report every part adds to.
pub(super) struct Tick<'a> {
    env: &'a Env,
    db: D1Database,
    cfg: SweepConfig,
    /// The cut-off instants at `now_ms` (ms UTC).
    cut: Cutoffs,
    /// ms since the Unix epoch, UTC.
    now_ms: i64,
    report: TickReport,
}

impl Tick<'_> {
    /// Logs a failed part of the tick and counts it; the tick goes on.
    fn part(&mut self, name: &str, result: Result<()>) {
        if let Err(e) = result {
            self.report.parts_failed += 1;
            worker::console_error!("sweeper: {name} failed: {e}");
        }
    }

    /// Records a repair once (its key is `<kind>:<subject>`) and counts it when this tick
    /// recorded it.
    async fn note_repair(&mut self, kind: RepairKind, subject: &str, why: &str) -> Result<()> {
        let key = repair_key(kind, subject);
        if repairs::record(&self.db, &key, kind, subject, why, self.now_ms).await? {
            self.report.repairs_recorded += 1;
        }
        Ok(())
    }
}

/// One sweep at `now_ms` (ms since the Unix epoch, UTC). `Err` only when the sweeper cannot run
/// at all (bad configuration, no D1 binding); each part's own failure is in
/// [`TickReport::parts_failed`].
pub async fn tick(env: &Env, now_ms: i64) -> Result<TickReport> {
    let cfg = sweep_config(env)?;
    let mut t = Tick {
        env,
        db: env.d1(DB_BINDING)?,
        cfg,
        cut: cfg.cutoffs(now_ms),
        now_ms,
        report: TickReport::default(),
    };
    let result = journeys::start_stuck_journeys(&mut t).await;
    t.part("starting stuck journeys", result);
    let result = sends::take_over(&mut t).await;
    t.part("past-due scheduled sends", result);
    let result = emails::restore(&mut t).await;
    t.part("unsettled emails", result);
    let result = webhooks::reenqueue(&mut t).await;
    t.part("overdue webhook deliveries", result);
    let result = rearm(&mut t).await;
    t.part("outbox re-arm", result);
    let result = zones::repair(&mut t).await;
    t.part("hotel time", result);
    let result = reminders::refunds(&mut t).await;
    t.part("refund reminders", result);
    let result = reminders::holds(&mut t).await;
    t.part("hold recalls", result);
    let result = retention(&mut t).await;
    t.part("retention", result);
    let result = digest::send_daily(&mut t).await;
    t.part("daily digest", result);
    Ok(t.report)
}

/// A lost (missing) or stuck (set in the past, never run) outbox alarm with due work: armed
/// again, recorded once per new alarm time.
async fn rearm(t: &mut Tick<'_>) -> Result<()> {
    if let Some(repair) = rearm_outbox(t.env).await? {
        t.report.outbox_rearmed = true;
        let why = match repair.stuck_since_ms {
            Some(since) => format!(
                "the outbox had due work and its alarm was stuck in the past (set for {since}, never run)"
            ),
            None => "the outbox had due work and no alarm".to_string(),
        };
        t.note_repair(RepairKind::OutboxRearmed, &repair.at_ms.to_string(), &why)
            .await?;
    }
    Ok(())
}

/// An outbox alarm the sweeper set again.
struct Rearmed {
    /// The new alarm, ms UTC.
    at_ms: i64,
    /// The stuck alarm's time, ms UTC (`None`: there was none).
    stuck_since_ms: Option<i64>,
}

/// Retention of raw bodies (D1) and finished outbox rows, each at most one batch a tick.
async fn retention(t: &mut Tick<'_>) -> Result<()> {
    let (pruned, read) =
        raw_events::prune_bodies(&t.db, t.cut.raw_body_before_ms, t.cfg.batch).await?;
    t.report.raw_bodies_pruned = pruned;
    t.report.rows_read += read;
    // The admin's copy of what each email said is kept longer than the raw bodies, for card
    // disputes; it holds links with tokens (owner actions, unsubscribe) and guest data, so it is
    // deleted after that, not kept for ever.
    let (pruned, read) = crate::store::admin::prune_email_contents(
        &t.db,
        t.cut.email_content_before_ms,
        t.cfg.batch,
    )
    .await?;
    t.report.email_contents_pruned = pruned;
    t.report.rows_read += read;
    t.report.outbox_rows_pruned =
        crate::outbox::client::prune(t.env, t.cut.outbox_before_ms, t.cfg.batch).await?;
    // Limiter counters whose window is over count nothing: the table holds live windows only.
    let limits = crate::platform::config(t.env)
        .map(|c| c.admin.limits)
        .unwrap_or_default();
    t.report.login_limits_pruned = crate::store::admin::prune_login_limits(
        &t.db,
        limits.stale_before_ms(t.now_ms),
        t.now_ms,
        t.cfg.batch,
    )
    .await?;
    Ok(())
}

/// Asks the outbox to re-arm (`POST /rearm`). `Some` when it had due work and no alarm (or one
/// stuck in the past), `None` when its alarm was in place or it has nothing to do.
async fn rearm_outbox(env: &Env) -> Result<Option<Rearmed>> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Answer {
        rearmed: bool,
        alarm_at_ms: Option<i64>,
        #[serde(default)]
        stuck_since_ms: Option<i64>,
    }
    let stub = env
        .durable_object(OUTBOX_BINDING)?
        .get_by_name(OUTBOX_NAME)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post);
    let req = Request::new_with_init("https://outbox/rearm", &init)?;
    let mut resp = stub.fetch_with_request(req).await?;
    if resp.status_code() != 200 {
        return Err(Error::RustError(format!(
            "outbox /rearm answered {}",
            resp.status_code()
        )));
    }
    let a: Answer = resp.json().await?;
    Ok(match (a.rearmed, a.alarm_at_ms) {
        (true, Some(at_ms)) => Some(Rearmed {
            at_ms,
            stuck_since_ms: a.stuck_since_ms,
        }),
        _ => None,
    })
}
