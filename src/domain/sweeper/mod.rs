//! The sweeper's decisions: D1 is the authority on due work, and every few minutes a Cron
//! Trigger finds work nobody is doing. This module is pure: it turns the
//! configuration and `now` into the cut-off instants the shell (`crate::sweeper`) queries with,
//! names each repair with a stable key (so two overlapping ticks record it once), and decides
//! which Workflow instance states leave a due send orphaned.
//!
//! All instants are ms since the Unix epoch, UTC.
//!
//! May use: `basics`, `timezone`, `journey`, `outbox`.

pub mod digest;
pub mod reminders;
pub mod replan;

/// Grace before a `received` raw event or a past-due scheduled send counts as abandoned, ms.
pub const DEFAULT_GRACE_MS: i64 = 15 * 60_000;
/// Raw event bodies are kept this many days (then blanked; the row stays).
pub const DEFAULT_RAW_BODY_DAYS: i64 = 30;
/// Email as sent (the admin's copy of each email) is kept this many days: longer than card
/// dispute windows (Visa: 120 days from the transaction), so the owner can show what a guest
/// received.
pub const DEFAULT_EMAIL_CONTENT_DAYS: i64 = 180;
/// Finished outbox rows are kept this many days (the D1 `emails` record stays).
pub const DEFAULT_OUTBOX_DAYS: i64 = 30;
/// Most rows one tick handles per kind of work: the tick's cost is flat in the table sizes.
pub const DEFAULT_BATCH: u32 = 50;
/// Largest `SWEEP_BATCH` accepted: the outbox answers `/held` for at most 500 keys at a time.
/// The smallest is 2: half of each batch is for work looked at again, half for new work.
pub const MAX_BATCH: u32 = 500;

const DAY_MS: i64 = 86_400_000;

use crate::domain::sweeper::digest::DigestSchedule;
use crate::domain::sweeper::reminders::{HoldUnanswered, OwnerLoops};
use crate::domain::timezone::HotelZone;

/// The sweeper's configuration (Worker vars, all optional).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepConfig {
    /// `SWEEP_GRACE_MS`: how long past its moment work must be before the sweeper takes it, ms.
    pub grace_ms: i64,
    /// `RETENTION_RAW_BODY_DAYS`: age after which a raw event's body is pruned, days.
    pub raw_body_days: i64,
    /// `RETENTION_EMAIL_CONTENT_DAYS`: age after which an email as sent (subject, text, HTML,
    /// headers kept for the admin) is pruned, days (180).
    pub email_content_days: i64,
    /// `RETENTION_OUTBOX_DAYS`: age after which the outbox's finished rows are pruned, days.
    pub outbox_days: i64,
    /// `SWEEP_BATCH`: most rows per kind of work and tick.
    pub batch: u32,
    /// `REFUND_REMINDER_AFTER_MS`, `REFUND_REMINDER_MAX`, `HOLD_RECALL_AFTER_MS`,
    /// `HOLD_UNANSWERED_ACTION`, `HOLD_UNANSWERED_AFTER_MS`.
    pub loops: OwnerLoops,
    /// `DIGEST_HOUR` (0–23, default 7; `off`: no digest), `OWNER_TIME_ZONE` (default UTC).
    pub digest: Option<DigestSchedule>,
}

/// A sweeper variable that cannot be used; the message names it and says what it must be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} must be {expected}, got {value:?}")]
pub struct SweepConfigError {
    pub name: &'static str,
    pub value: String,
    pub expected: &'static str,
}

impl SweepConfig {
    /// Reads the variables through `get` (name → value when set); unset ones take the defaults.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self, SweepConfigError> {
        let bad = |name: &'static str, value: String, expected: &'static str| SweepConfigError {
            name,
            value,
            expected,
        };
        let num = |name: &'static str, default: i64| -> Result<i64, SweepConfigError> {
            match get(name) {
                None => Ok(default),
                Some(v) => match v.trim().parse::<i64>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(bad(name, v, "a positive integer")),
                },
            }
        };
        let batch = match num("SWEEP_BATCH", i64::from(DEFAULT_BATCH)) {
            Ok(n) if (2..=i64::from(MAX_BATCH)).contains(&n) => {
                u32::try_from(n).unwrap_or(MAX_BATCH)
            }
            _ => {
                return Err(bad(
                    "SWEEP_BATCH",
                    get("SWEEP_BATCH").unwrap_or_default(),
                    "an integer from 2 to 500",
                ))
            }
        };
        let hold_unanswered = match get("HOLD_UNANSWERED_ACTION") {
            None => HoldUnanswered::default(),
            Some(v) => HoldUnanswered::parse(v.trim())
                .ok_or_else(|| bad("HOLD_UNANSWERED_ACTION", v, "keep or dismiss"))?,
        };
        let hour = match get("DIGEST_HOUR") {
            None => Some(crate::domain::sweeper::digest::DEFAULT_HOUR),
            Some(v) if v.trim().eq_ignore_ascii_case("off") => None,
            Some(v) => Some(
                v.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|h| *h <= 23)
                    .ok_or_else(|| bad("DIGEST_HOUR", v, "an hour from 0 to 23, or off"))?,
            ),
        };
        let zone = match get("OWNER_TIME_ZONE").filter(|v| !v.trim().is_empty()) {
            None => DigestSchedule::default().zone,
            Some(v) => HotelZone::parse(v.trim()).ok_or_else(|| {
                bad(
                    "OWNER_TIME_ZONE",
                    v,
                    "UTC, UTC±HH:MM or an IANA time zone name such as Europe/Madrid",
                )
            })?,
        };
        Ok(SweepConfig {
            grace_ms: num("SWEEP_GRACE_MS", DEFAULT_GRACE_MS)?,
            raw_body_days: num("RETENTION_RAW_BODY_DAYS", DEFAULT_RAW_BODY_DAYS)?,
            email_content_days: num("RETENTION_EMAIL_CONTENT_DAYS", DEFAULT_EMAIL_CONTENT_DAYS)?,
            outbox_days: num("RETENTION_OUTBOX_DAYS", DEFAULT_OUTBOX_DAYS)?,
            batch,
            loops: OwnerLoops {
                refund_reminder_after_ms: num(
                    "REFUND_REMINDER_AFTER_MS",
                    reminders::DEFAULT_REFUND_REMINDER_AFTER_MS,
                )?,
                refund_reminder_max: num(
                    "REFUND_REMINDER_MAX",
                    reminders::DEFAULT_REFUND_REMINDER_MAX,
                )?,
                hold_recall_after_ms: num(
                    "HOLD_RECALL_AFTER_MS",
                    reminders::DEFAULT_HOLD_RECALL_AFTER_MS,
                )?,
                hold_unanswered,
                hold_unanswered_after_ms: num(
                    "HOLD_UNANSWERED_AFTER_MS",
                    reminders::DEFAULT_HOLD_UNANSWERED_AFTER_MS,
                )?,
            },
            digest: hour.map(|hour| DigestSchedule { hour, zone }),
        })
    }

    /// The instants one tick at `now_ms` queries with.
    pub fn cutoffs(&self, now_ms: i64) -> Cutoffs {
        let days_ago = |days: i64| now_ms.saturating_sub(days.saturating_mul(DAY_MS));
        Cutoffs {
            abandoned_before_ms: now_ms.saturating_sub(self.grace_ms),
            raw_body_before_ms: days_ago(self.raw_body_days),
            email_content_before_ms: days_ago(self.email_content_days),
            outbox_before_ms: days_ago(self.outbox_days),
        }
    }
}

/// Cut-off instants of one tick (ms, UTC): rows strictly older than these qualify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cutoffs {
    /// A `received` raw event or a due scheduled send older than this is abandoned.
    pub abandoned_before_ms: i64,
    /// Raw event bodies received before this are pruned.
    pub raw_body_before_ms: i64,
    /// Emails as sent claimed before this are pruned.
    pub email_content_before_ms: i64,
    /// Outbox rows finished before this are pruned.
    pub outbox_before_ms: i64,
}

/// What the sweeper repaired (D1 `repairs.kind`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString, strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum RepairKind {
    /// A raw event stayed `received`: its journey was started.
    JourneyStarted,
    /// A raw event stayed `received` and its stored delivery cannot start a journey (it no longer
    /// parses, its event id changed): marked `errored` with the reason.
    EventErrored,
    /// A scheduled send was past due with no live instance: decided and sent (or skipped) here.
    ScheduledSend,
    /// An email was claimed or queued in D1 but not in the outbox: enqueued.
    Enqueued,
    /// The outbox had due work and no alarm, or an alarm stuck in the past: re-armed.
    OutboxRearmed,
    /// A past-due scheduled send of a stopped journey could not be made by the sweeper either
    /// (rendering, content lock, storage): recorded once with the error; tried again each grace.
    SendFailed,
    /// An email was claimed or queued in D1, not in the outbox, and could not be handed over
    /// safely (no kept copy, or older than the outbox's retention): reported, not sent.
    Unrestorable,
    /// An outbound webhook delivery was pending past its due time with no queue message: sent to
    /// the queue again.
    WebhookReenqueued,
    /// A hotel's zone became known after its location lookup had failed: its bookings' planned
    /// sends moved to hotel time.
    ZoneReplanned,
    /// An open card-testing hold nobody answered was closed as configured
    /// (`HOLD_UNANSWERED_ACTION = dismiss`); nothing was sent to the customer.
    HoldUnanswered,
    /// A route paused for our credentials or configuration was resumed by the outbox because the
    /// settings that pause blamed changed (recorded by the outbox, not the sweeper).
    RouteLifted,
}

impl RepairKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// How far in the past an outbox alarm may be before it counts as stuck, ms: 5 minutes (one sweeper
/// period). A due alarm normally runs within milliseconds; one whose handler failed is retried by
/// the platform with backoff from 2 s for up to 6 retries
/// (<https://developers.cloudflare.com/durable-objects/api/alarms/>), about two minutes in all.
pub const ALARM_STUCK_AFTER_MS: i64 = 300_000;

/// What is wrong with the outbox's alarm, as the sweeper sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlarmFault {
    /// No alarm is set.
    Missing,
    /// An alarm is set in the past, longer ago than [`ALARM_STUCK_AFTER_MS`]: it never ran.
    Stuck { since_ms: i64 },
}

impl AlarmFault {
    /// `missing` or `stuck` (the `/rearm` answer, the repair's reason).
    pub fn as_str(self) -> &'static str {
        match self {
            AlarmFault::Missing => "missing",
            AlarmFault::Stuck { .. } => "stuck",
        }
    }
}

/// The fault of the outbox's alarm, from its scheduled time (`alarm_at_ms`, `None` when unset),
/// `now_ms`, and whether an alarm handler is running right now (`getAlarm` answers null while one
/// runs, so that is no fault). `None` when the alarm is fine. Whether a repair is recorded also
/// needs due work: an outbox with nothing to do rightly has no alarm.
pub fn alarm_fault(alarm_at_ms: Option<i64>, now_ms: i64, running: bool) -> Option<AlarmFault> {
    if running {
        return None;
    }
    match alarm_at_ms {
        None => Some(AlarmFault::Missing),
        Some(at) if at < now_ms - ALARM_STUCK_AFTER_MS => Some(AlarmFault::Stuck { since_ms: at }),
        Some(_) => None,
    }
}

/// The repair's unique key: one kind, one subject (an instance id, a dedupe key, …). Two ticks
/// repairing the same thing produce the same key, so D1 records it once.
pub fn repair_key(kind: RepairKind, subject: &str) -> String {
    format!("{}:{subject}", kind.as_str())
}

/// Whether a Workflow instance in `status` (the platform's `InstanceStatus.status`:
/// `queued`, `running`, `paused`, `errored`, `terminated`, `complete`, `waiting`,
/// `waitingForPause`, `unknown`; see
/// <https://developers.cloudflare.com/workflows/build/workers-api/#instancestatus>) will never
/// make its due sends, so the sweeper must. `None` = no such instance.
pub fn instance_is_dead(status: Option<&str>) -> bool {
    !matches!(
        status,
        Some("queued" | "running" | "paused" | "waiting" | "waitingForPause")
    )
}

/// What the sweeper does with an email D1 says is unsettled (`claimed` or `queued`) and that
/// nobody touched for a grace period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsettledAction {
    /// The outbox holds it and D1 already says `queued`: its outcome will come from the outbox.
    Leave,
    /// The outbox holds it but D1 still says `claimed` (the mark after the enqueue was lost).
    MarkQueued,
    /// The outbox does not hold it: hand the kept email over again (idempotent on its key).
    Enqueue,
    /// The outbox does not hold it and it cannot be handed over safely; the reason is recorded.
    CannotRestore(&'static str),
}

/// What the sweeper knows of one unsettled email when it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnsettledFacts {
    /// The outbox holds its dedupe key (in any status).
    pub held: bool,
    /// D1 says `claimed` (not yet `queued`).
    pub claimed_only: bool,
    /// D1 kept the email's content (`payload_json`).
    pub has_payload: bool,
    /// An earlier tick, at least a grace period ago, already found it unsettled. A row's own
    /// times are the journey's logical times (the event's receipt, the send's due time), not when
    /// it was claimed, so only a second look proves that nobody is still between claim and
    /// enqueue.
    pub seen_before: bool,
    /// When it was claimed (logical time, ms UTC).
    pub created_at_ms: i64,
}

/// Decides an unsettled email. `outbox_before_ms` is the outbox's retention cut-off (ms UTC): an
/// email claimed before it may have been sent and then pruned from the outbox, so handing it over
/// again could send it twice — it is reported instead. Nothing is handed over or reported on a
/// first look ([`UnsettledFacts::seen_before`]).
pub fn unsettled_action(f: UnsettledFacts, outbox_before_ms: i64) -> UnsettledAction {
    match (f.held, f.claimed_only) {
        (true, true) => UnsettledAction::MarkQueued,
        (true, false) => UnsettledAction::Leave,
        (false, _) if !f.seen_before => UnsettledAction::Leave,
        (false, _) if !f.has_payload => {
            UnsettledAction::CannotRestore("the email was claimed before D1 kept its content")
        }
        (false, _) if f.created_at_ms < outbox_before_ms => UnsettledAction::CannotRestore(
            "older than the outbox's retention: it may have been sent and pruned",
        ),
        (false, _) => UnsettledAction::Enqueue,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RFC 3339 instant as ms since the Unix epoch (shared with the tests of `digest` and
    /// `replan`).
    pub(super) fn ms(s: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn a_missing_or_stuck_alarm_is_a_fault_a_running_or_future_one_is_not() {
        let now = 1_800_000_000_000;
        assert_eq!(alarm_fault(None, now, false), Some(AlarmFault::Missing));
        let stuck = now - ALARM_STUCK_AFTER_MS - 1;
        assert_eq!(
            alarm_fault(Some(stuck), now, false),
            Some(AlarmFault::Stuck { since_ms: stuck })
        );
        // Just due, or due a little while ago (being retried): fine.
        assert_eq!(alarm_fault(Some(now - 1_000), now, false), None);
        assert_eq!(alarm_fault(Some(now + 60_000), now, false), None);
        // A handler is running: getAlarm answers null meanwhile.
        assert_eq!(alarm_fault(None, now, true), None);
        assert_eq!(AlarmFault::Missing.as_str(), "missing");
        assert_eq!(AlarmFault::Stuck { since_ms: 1 }.as_str(), "stuck");
    }

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |n| {
            pairs
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn defaults_and_overrides() {
        let d = SweepConfig::from_vars(vars(&[])).unwrap();
        assert_eq!(d.grace_ms, DEFAULT_GRACE_MS);
        assert_eq!(d.batch, DEFAULT_BATCH);
        let c = SweepConfig::from_vars(vars(&[("RETENTION_RAW_BODY_DAYS", " 7 ")])).unwrap();
        assert_eq!(c.raw_body_days, 7);
    }

    #[test]
    fn bad_values_name_the_variable() {
        for bad in ["0", "-3", "ten", ""] {
            let e = SweepConfig::from_vars(vars(&[("SWEEP_GRACE_MS", bad)])).unwrap_err();
            assert_eq!(e.name, "SWEEP_GRACE_MS");
            assert!(e.to_string().contains("SWEEP_GRACE_MS"));
        }
        let ok = SweepConfig::from_vars(vars(&[("SWEEP_BATCH", "500")])).unwrap();
        assert_eq!(ok.batch, MAX_BATCH);
        for bad in ["501", "1"] {
            let e = SweepConfig::from_vars(vars(&[("SWEEP_BATCH", bad)])).unwrap_err();
            assert_eq!((e.name, e.value.as_str()), ("SWEEP_BATCH", bad));
        }
    }

    #[test]
    fn cutoffs_are_now_minus_each_age() {
        let c = SweepConfig {
            grace_ms: 60_000,
            raw_body_days: 2,
            email_content_days: 180,
            outbox_days: 1,
            batch: 10,
            ..SweepConfig::from_vars(|_| None).unwrap()
        };
        let now = 1_780_000_000_000;
        let k = c.cutoffs(now);
        assert_eq!(k.abandoned_before_ms, now - 60_000);
        assert_eq!(k.raw_body_before_ms, now - 2 * DAY_MS);
        assert_eq!(k.outbox_before_ms, now - DAY_MS);
        assert_eq!(k.email_content_before_ms, now - 180 * DAY_MS);
    }

    #[test]
    fn owner_loop_and_digest_settings_parse_or_name_the_variable() {
        let d = SweepConfig::from_vars(vars(&[])).unwrap();
        assert_eq!(d.loops, OwnerLoops::default());
        assert_eq!(d.digest, Some(DigestSchedule::default()));
        assert_eq!(
            SweepConfig::from_vars(vars(&[("DIGEST_HOUR", "off")]))
                .unwrap()
                .digest,
            None
        );
        let utc = SweepConfig::from_vars(vars(&[("OWNER_TIME_ZONE", "UTC")])).unwrap();
        assert_eq!(utc.digest.unwrap().zone, HotelZone::UTC);
        assert_eq!(d.email_content_days, 180);
        let c = SweepConfig::from_vars(vars(&[
            ("HOLD_UNANSWERED_ACTION", "dismiss"),
            ("DIGEST_HOUR", "0"),
            ("OWNER_TIME_ZONE", "America/New_York"),
            ("REFUND_REMINDER_MAX", "3"),
        ]))
        .unwrap();
        assert_eq!(c.loops.hold_unanswered, HoldUnanswered::Dismiss);
        assert_eq!(c.loops.refund_reminder_max, 3);
        let digest = c.digest.unwrap();
        assert_eq!(digest.hour, 0);
        assert_eq!(digest.zone, HotelZone::iana("America/New_York").unwrap());
        for (name, value) in [
            ("HOLD_UNANSWERED_ACTION", "send"),
            ("DIGEST_HOUR", "24"),
            ("OWNER_TIME_ZONE", "Mars/Olympus"),
            ("REFUND_REMINDER_AFTER_MS", "0"),
        ] {
            let e = SweepConfig::from_vars(vars(&[(name, value)])).unwrap_err();
            assert_eq!(e.name, name);
            assert!(e.to_string().contains(name), "{e}");
        }
    }

    #[test]
    fn repair_keys_are_stable_per_subject() {
        let a = repair_key(RepairKind::JourneyStarted, "e-liteapi-x-1");
        assert_eq!(a, "journey_started:e-liteapi-x-1");
        assert_eq!(a, repair_key(RepairKind::JourneyStarted, "e-liteapi-x-1"));
        assert_ne!(a, repair_key(RepairKind::Enqueued, "e-liteapi-x-1"));
    }

    #[test]
    fn only_live_instances_keep_their_sends() {
        for live in ["queued", "running", "paused", "waiting", "waitingForPause"] {
            assert!(!instance_is_dead(Some(live)), "{live}");
        }
        for dead in ["errored", "terminated", "complete", "unknown"] {
            assert!(instance_is_dead(Some(dead)), "{dead}");
        }
        assert!(instance_is_dead(None));
    }
    #[test]
    fn unsettled_emails_are_restored_only_when_safe() {
        use UnsettledAction::*;
        let cut = 1_000;
        let f = |held, claimed_only, has_payload, seen_before, created_at_ms| UnsettledFacts {
            held,
            claimed_only,
            has_payload,
            seen_before,
            created_at_ms,
        };
        // (the facts: held, claimed only, content kept, seen before, claimed at; the action).
        let cases = [
            (f(true, false, true, true, 5_000), Leave), // held, queued in D1
            (f(true, true, false, false, 5_000), MarkQueued), // held, claimed in D1
            (f(false, true, true, true, 5_000), Enqueue), // not held, claimed
            (f(false, false, true, true, 5_000), Enqueue), // not held, queued
        ];
        for (facts, want) in cases {
            assert_eq!(unsettled_action(facts, cut), want, "{facts:?}");
        }
        // A first look never hands over or reports: the step may still be between claim and
        // enqueue.
        for payload in [true, false] {
            assert_eq!(
                unsettled_action(f(false, true, payload, false, 5_000), cut),
                Leave
            );
        }
        assert!(matches!(
            unsettled_action(f(false, false, false, true, 5_000), cut),
            CannotRestore(r) if r.contains("content")
        ));
        assert!(matches!(
            unsettled_action(f(false, false, true, true, 999), cut),
            CannotRestore(r) if r.contains("retention")
        ));
    }
}
