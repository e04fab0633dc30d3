//! The owner's daily summary of repairs: at the first tick of a UTC day, the previous day's
//! repairs (if any) go to the owner in one email, dedupe key `owner_sweep_summary:<today>`, so a
//! day has at most one summary whatever the number of ticks or their overlap.

use super::Tick;
use crate::domain::render::{owner_sweep_summary, sweep_summary::LISTED_MAX, RepairLine};
use crate::domain::sweep::{previous_utc_day, summary_key};
use crate::outbox::client;
use crate::platform::config_or_err;
use crate::store::{emails, repairs};
use worker::Result;

fn day_of(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

pub(super) async fn send_daily(t: &mut Tick<'_>) -> Result<()> {
    let (env, db, now_ms) = (t.env, &t.db, t.now_ms);
    // Cheap on every tick but the first of a day: one read by the unique dedupe key.
    if emails::find(db, &summary_key(now_ms)).await?.is_some() {
        return Ok(());
    }
    let (from, to) = previous_utc_day(now_ms);
    let (total, rows, read) =
        repairs::in_window(db, from, to, u32::try_from(LISTED_MAX).unwrap_or(50)).await?;
    t.report.rows_read += read;
    if total == 0 {
        return Ok(());
    }
    let cfg = config_or_err(env)?;
    let lines: Vec<RepairLine> = rows
        .into_iter()
        .map(|r| RepairLine {
            at_ms: r.at_ms,
            kind: r.kind,
            subject: r.subject,
            reason: r.reason,
        })
        .collect();
    let email = owner_sweep_summary(
        &day_of(from),
        &day_of(now_ms),
        usize::try_from(total).unwrap_or(usize::MAX),
        &lines,
        &cfg.owner_email,
        &cfg.branding,
    )
    .map_err(crate::platform::rust_err)?;
    if client::deliver(env, &email, now_ms).await? == client::Delivery::Enqueued {
        t.report.summary_sent = true;
    }
    Ok(())
}
