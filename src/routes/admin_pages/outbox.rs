//! The outbox, read and acted on through its Durable Object: the overview, the outbox page,
//! redrive and provider pause.

use super::*;
use crate::config::MainProvider;
use crate::domain::email::Rank;
use std::collections::BTreeMap;
use worker::Method;

// ---------------------------------------------------------------------------------------------
// The outbox, read and acted on through its Durable Object

/// The outbox's `GET /state` answer, read back with the outbox's own types.
pub(super) type OutboxState = crate::outbox::view::OutboxView;
type OutboxItem = crate::outbox::view::ItemView;

/// The outbox's own view (`GET /state?{query}`), parsed; anything but 200 is 503.
pub(super) async fn outbox_state(env: &Env, query: &str) -> Result<OutboxState, AppError> {
    let (status, text) =
        crate::routes::admin::outbox_call(env, Method::Get, &format!("/state?{query}"), None)
            .await?;
    if status != 200 {
        return Err(AppError::Unavailable(format!(
            "the outbox answered {status}"
        )));
    }
    serde_json::from_str(&text).map_err(AppError::unavailable)
}

pub(super) fn rank_name(n: i64) -> String {
    Rank::from_i64(n).map_or_else(|| n.to_string(), |r| format!("{r:?}").to_lowercase())
}

pub(super) fn email_link(key: &str) -> String {
    format!("/admin/email?key={}", encode(key))
}

fn providers(cfg: &Config, st: &OutboxState, now: i64) -> Vec<view::ProviderLine> {
    let state = |until: Option<i64>| match until {
        Some(u) if u > now => (format!("paused until {}", when(u)), true),
        _ => ("active".to_string(), false),
    };
    let main_name = match &cfg.main_provider {
        MainProvider::Cloudflare => "Cloudflare Email Service (main)".to_string(),
        MainProvider::Resend { .. } => "Resend (main)".to_string(),
    };
    let (main_state, main_paused) = state(st.main_paused_until_ms);
    let mut out = vec![view::ProviderLine {
        name: main_name,
        key: "main".into(),
        state: main_state,
        paused: main_paused,
    }];
    let (smtp_state, smtp_paused) = state(st.smtp_paused_until_ms);
    out.push(view::ProviderLine {
        name: match &cfg.smtp {
            Some(s) => format!("SMTP failover ({}:{})", s.host, s.port),
            None => "SMTP failover (not configured)".into(),
        },
        key: "smtp".into(),
        state: smtp_state,
        paused: smtp_paused,
    });
    out
}

/// The routes as the outbox's own view reports them (its pauses and the owner route).
fn availability(cfg: &Config, st: &OutboxState) -> crate::domain::outbox::Availability {
    let mut a = cfg.availability(st.main_paused_until_ms, st.smtp_paused_until_ms);
    a.owner_route = st.owner_route;
    a.owner_route_paused_until_ms = st.owner_route_paused_until_ms;
    a
}

fn queue_line(i: &OutboxItem, at: i64) -> view::QueueLine {
    view::QueueLine {
        key: i.dedupe_key.clone(),
        link: email_link(&i.dedupe_key),
        rank: rank_name(i.rank),
        status: i.status.clone(),
        attempts: i.attempts,
        when: when(at),
        provider: i.provider.clone().unwrap_or_default(),
        error: i.last_error.clone().unwrap_or_default(),
    }
}

const WAITING: [&str; 3] = ["queued", "waiting", "sending"];

/// The outbox's forecast (`GET /state`), as the overview and the outbox page show it.
fn backlog_view(st: &OutboxState) -> crate::domain::render::admin::BacklogView {
    let Some(f) = &st.forecast else {
        return Default::default();
    };
    let span = |ms: i64| {
        let min = ms.max(0) / 60_000;
        match (min / 60, min % 60) {
            (0, m) => format!("{m} min"),
            (h, m) => format!("{h} h {m:02} min"),
        }
    };
    crate::domain::render::admin::BacklogView {
        drains: f
            .drains
            .iter()
            .map(|d| {
                (
                    rank_name(d.rank),
                    d.queued,
                    when(d.drained_at_ms),
                    span(d.drained_at_ms - f.at_ms),
                )
            })
            .collect(),
        misses: f
            .misses
            .iter()
            .take(50)
            .map(|m| {
                (
                    m.dedupe_key.clone(),
                    m.booking_id.clone().unwrap_or_default(),
                    when(m.moment_ms),
                    when(m.forecast_ms),
                )
            })
            .collect(),
        gap_s: f.gap_ms / 1000,
        catch_up: st.catch_up.map(|c| {
            format!(
                "Catch-up: urgent and booking email every {} s until {} (UTC).",
                c.gap_ms / 1000,
                when(c.until_ms)
            )
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Pages

/// `GET /admin`: overview (2 D1 calls: the session, one batch of 5 statements; 1 outbox read).
pub async fn overview(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let d1 = env.d1(DB_BINDING)?;
    let now = now_ms();
    let o = db::overview(&d1, now).await?;
    let st = outbox_state(env, "limit=500").await?;
    let mut by_rank: BTreeMap<(i64, String), i64> = BTreeMap::new();
    for i in &st.items {
        *by_rank.entry((i.rank, i.status.clone())).or_default() += 1;
    }
    let page = view::OverviewPage {
        chrome: chrome(&cfg, Some(&s), None),
        environment: cfg.engine_env.as_str(),
        refused: cfg
            .refused
            .iter()
            .map(|r| (r.variable.to_string(), r.reason.clone()))
            .collect(),
        refunds_waiting: o.refunds_waiting,
        stale_today: o.stale_today,
        stale_yesterday: o.stale_yesterday,
        backlog: backlog_view(&st),
        banner: view::all_routes_paused_banner(now, availability(&cfg, &st)),
        dead: st.counts.get("dead").copied().unwrap_or(0),
        open_holds: o.open_holds,
        rejected_7d: o.rejected_events_7d,
        waiting: WAITING
            .iter()
            .map(|w| st.counts.get(*w).copied().unwrap_or(0))
            .sum(),
        providers: providers(&cfg, &st, now),
        by_rank: by_rank
            .into_iter()
            .map(|((r, s), n)| (rank_name(r), s, n))
            .collect(),
        listed: st.items.len(),
        outbox_counts: st.counts.clone().into_iter().collect(),
        email_counts: o
            .email_counts
            .into_iter()
            .map(|c| (c.status, c.n))
            .collect(),
        failures: o
            .recent_failures
            .into_iter()
            .map(|e| view::LinkLine {
                when: when(e.updated_at_ms),
                link: email_link(&e.dedupe_key),
                title: format!("{} to {}", e.kind, e.to_addr),
                status: e.status,
                detail: e.last_error.unwrap_or_default(),
            })
            .collect(),
        repairs: o
            .repairs
            .into_iter()
            .map(|r| (when(r.at_ms), r.kind, r.subject, r.reason))
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// `GET /admin/queue`: the outbox (2 outbox reads).
pub async fn queue(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let now = now_ms();
    let st = outbox_state(env, "limit=200").await?;
    let dead = outbox_state(env, "status=dead&limit=100").await?;
    let mut queued: Vec<&OutboxItem> = st
        .items
        .iter()
        .filter(|i| WAITING.contains(&i.status.as_str()))
        .collect();
    crate::domain::basics::sort::sort_by_key(&mut queued, |i| (i.rank, i.not_before_ms, i.seq));
    let page = view::QueuePage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        backlog: backlog_view(&st),
        catch_up_gaps: [30, 60, 90]
            .into_iter()
            .filter(|g| g * 1000 >= cfg.catch_up.min_gap_ms && g * 1000 < cfg.pacing.min_ms())
            .collect(),
        catch_up_hours: (1..=6)
            .filter(|h| h * 3_600_000 <= cfg.catch_up.max_duration_ms)
            .collect(),
        banner: view::all_routes_paused_banner(now, availability(&cfg, &st)),
        providers: providers(&cfg, &st, now),
        counts: st.counts.clone().into_iter().collect(),
        dead: dead
            .items
            .iter()
            .map(|i| queue_line(i, i.updated_at_ms))
            .collect(),
        queued: queued
            .into_iter()
            .map(|i| queue_line(i, i.not_before_ms))
            .collect(),
        recent: st
            .items
            .iter()
            .take(50)
            .map(|i| queue_line(i, i.updated_at_ms))
            .collect(),
        route_history: st
            .route_history
            .iter()
            .map(|e| {
                (
                    when(e.at_ms),
                    e.route.clone(),
                    e.event.replace('_', " "),
                    e.detail.clone(),
                )
            })
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// `POST /admin/queue/redrive` (`dedupe_key`): the same outbox route as the API's redrive.
pub async fn queue_redrive(mut req: Request, env: &Env) -> Answer {
    let (_, f) = form(&mut req, env).await?;
    let key = trimmed(&f, "dedupe_key");
    if key.is_empty() || key.len() > 500 {
        return back("/admin/queue", "not_found", Some(&key));
    }
    let body = serde_json::json!({ "dedupeKey": key }).to_string();
    let (status, text) =
        crate::routes::admin::outbox_call(env, Method::Post, "/redrive", Some(body)).await?;
    match status {
        200 => back("/admin/queue", "redriven", Some(&key)),
        404 => back("/admin/queue", "not_found", Some(&key)),
        409 => back("/admin/queue", "not_dead", Some(&key)),
        _ => Err(AppError::Unavailable(format!(
            "the outbox answered {status}: {}",
            &text[..text.floor_char_boundary(200)]
        ))),
    }
}

/// `POST /admin/queue/provider` (`provider` = main|smtp, `action` = pause|resume): pauses a
/// provider for one hour (its email goes to the other) or resumes it now.
pub async fn queue_provider(mut req: Request, env: &Env) -> Answer {
    let (_, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let provider = f.get("provider").map(String::as_str).unwrap_or_default();
    if !matches!(provider, "main" | "smtp") {
        return message(
            &cfg,
            None,
            400,
            "Unknown provider",
            "provider must be main or smtp.",
        )
        .answer();
    }
    let (until, done) = match f.get("action").map(String::as_str) {
        Some("pause") => (now_ms() + 3_600_000, "paused"),
        Some("resume") => (0, "resumed"),
        _ => {
            return message(
                &cfg,
                None,
                400,
                "Unknown action",
                "action must be pause or resume.",
            )
            .answer()
        }
    };
    let body = serde_json::json!({ "provider": provider, "untilMs": until }).to_string();
    let (status, text) =
        crate::routes::admin::outbox_call(env, Method::Post, "/pause", Some(body)).await?;
    if status != 200 {
        return Err(AppError::Unavailable(format!(
            "the outbox answered {status}: {}",
            &text[..text.floor_char_boundary(200)]
        )));
    }
    back("/admin/queue", done, Some(provider))
}

/// `POST /admin/queue/pace` (`gap_s` and `hours`, or `stop`): the owner's bounded catch-up of
/// urgent and booking email (`crate::domain::outbox::backlog`), through the outbox's `POST /pace` as the
/// operator API does. Marketing never speeds up.
pub async fn queue_pace(mut req: Request, env: &Env) -> Answer {
    let (s, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let body = if f.contains_key("stop") {
        serde_json::json!({ "stop": true })
    } else {
        let num = |k: &str| f.get(k).and_then(|v| v.trim().parse::<i64>().ok());
        match (num("gap_s"), num("hours")) {
            (Some(gap_s), Some(hours)) => serde_json::json!({
                "gapMs": gap_s.saturating_mul(1000),
                "durationMs": hours.saturating_mul(3_600_000),
            }),
            _ => return not_understood(&cfg, &s, "gap_s and hours must be numbers."),
        }
    };
    let stop = f.contains_key("stop");
    let (status, text) =
        crate::routes::admin::outbox_call(env, Method::Post, "/pace", Some(body.to_string()))
            .await?;
    match status {
        200 => back(
            "/admin/queue",
            if stop { "catch_up_stopped" } else { "catch_up" },
            None,
        ),
        400 => {
            let why = serde_json::from_str::<crate::platform::ErrorBody>(&text)
                .map(|b| b.message)
                .unwrap_or(text);
            message(&cfg, Some(&s), 400, "Catch-up refused", &why).answer()
        }
        _ => Err(AppError::Unavailable(format!(
            "the outbox answered {status}: {}",
            &text[..text.floor_char_boundary(200)]
        ))),
    }
}
