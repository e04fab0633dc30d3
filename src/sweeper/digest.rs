//! The owner's daily digest (`crate::domain::sweeper::digest`): from `DIGEST_HOUR` on the owner's clock,
//! the first tick of the day reads the day before and what waits now, and sends one email
//! (`owner_digest:<day>`, claimed in D1 like every email, so overlapping ticks send one), or none
//! when there is nothing to report. Before the hour a tick asks D1 nothing; after it, one read
//! of D1 `owner_digests` until the day's digest is done.

use super::Tick;
use crate::domain::render::owner_digest;
use crate::domain::sweeper::digest;
use crate::outbox::client;
use crate::platform::config_or_err;
use crate::store::digest as store;
use worker::Result;

pub(super) async fn send_daily(t: &mut Tick<'_>) -> Result<()> {
    let Some(schedule) = t.cfg.digest else {
        return Ok(());
    };
    let Some(day) = digest::due(t.now_ms, &schedule) else {
        return Ok(());
    };
    if store::done(&t.db, &day.sent_on).await? {
        return Ok(());
    }
    let (mut facts, read) = store::facts(&t.db, &day).await?;
    t.report.rows_read += read;
    facts.routes_paused = routes_paused(t).await;
    if facts.is_empty() {
        return store::mark(&t.db, &day.sent_on, false, t.now_ms).await;
    }
    let cfg = config_or_err(t.env)?;
    let base = cfg.public_base_url.trim_end_matches('/');
    let email = owner_digest(&day, &facts, &schedule.zone, base, cfg.owner_inbox())
        .map_err(crate::platform::rust_err)?;
    if client::deliver(t.env, &email, t.now_ms).await? == client::Delivery::Enqueued {
        t.report.digest_sent = true;
    }
    store::mark(&t.db, &day.sent_on, true, t.now_ms).await
}

/// The routes the outbox has paused now, one line each ("… paused until … UTC"); none when the
/// outbox cannot be asked (the digest still goes out with the rest).
async fn routes_paused(t: &Tick<'_>) -> Vec<String> {
    let state = match client::state(t.env).await {
        Ok(s) => s,
        Err(e) => {
            worker::console_warn!("digest: outbox state unavailable: {e}");
            return Vec::new();
        }
    };
    let until = |name: &str, u: Option<i64>| {
        u.filter(|u| *u > t.now_ms).map(|u| {
            let at = chrono::DateTime::from_timestamp_millis(u)
                .map(|d| d.format("%Y-%m-%d %H:%M UTC").to_string())
                .unwrap_or_default();
            format!("{name} paused until {at}")
        })
    };
    [
        until("The main provider", state.main_paused_until_ms),
        until("SMTP failover", state.smtp_paused_until_ms),
    ]
    .into_iter()
    .flatten()
    .collect()
}
