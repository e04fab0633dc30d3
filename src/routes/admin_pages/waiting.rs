//! What waits for the owner, as pages: refunds by state with the alert's two decisions, and the
//! outbound webhook deliveries that died or are being retried, with their attempts and redrive
//! (one, by subscriber, by time range). Each action goes through the code path its one-click
//! link or JSON operator route uses.

use super::*;
use crate::domain::payment::compensation::RefundGroup;
use crate::domain::render::admin_waiting::{
    DeliveriesPage, DeliveryAttemptLine, DeliveryLine, DeliveryPage, RefundLine, RefundsPage,
    SubscriberLine,
};
use crate::journey::compensation::{self, OwnerRefund};
use crate::store::webhooks::Selection;

/// Most rows a refunds or deliveries list shows.
const LISTED: u32 = 200;

/// `2 h 05 min`, `3 d 4 h`, `12 min` of a duration in ms.
fn age(ms: i64) -> String {
    let min = ms.max(0) / 60_000;
    match (min / 1440, (min % 1440) / 60, min % 60) {
        (0, 0, m) => format!("{m} min"),
        (0, h, m) => format!("{h} h {m:02} min"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

fn group_label(g: RefundGroup) -> &'static str {
    match g {
        RefundGroup::Waiting => "Waiting for you",
        RefundGroup::Failed => "Failed at Stripe",
        RefundGroup::Running => "Running",
        RefundGroup::Done => "Done",
    }
}

/// `GET /admin/refunds?group=waiting|failed|running|done` (3 D1 calls: the session, the counts,
/// the list).
pub async fn refunds(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let group = match q.get("group").map(String::as_str) {
        None | Some("") => RefundGroup::Waiting,
        Some(g) => RefundGroup::parse(g).ok_or_else(|| AppError::BadRequest {
            message: format!("group {g:?} is not one of waiting, failed, running, done"),
            field: Some("group".into()),
        })?,
    };
    let d1 = env.d1(DB_BINDING)?;
    let counts = crate::store::refunds::counts(&d1).await?;
    let rows = crate::store::refunds::in_group(&d1, group, LISTED).await?;
    let page = RefundsPage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        groups: counts
            .iter()
            .map(|(g, n)| {
                (
                    g.as_str().to_string(),
                    group_label(*g).to_string(),
                    *n,
                    *g == group,
                )
            })
            .collect(),
        group_label: group_label(group).to_string(),
        actions: group.owner_acts(),
        refunds: rows
            .into_iter()
            .map(|r| RefundLine {
                booking_link: r
                    .booking_id
                    .as_deref()
                    .map(|b| format!("/admin/booking?id={}", encode(b))),
                booking_id: r.booking_id.clone().unwrap_or_default(),
                guest: [r.guest_name.as_deref(), r.guest_email.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" · "),
                trip: r.trip.unwrap_or_default(),
                source: r.source,
                cause: r.cause.replace('_', " "),
                status: r.status,
                round: r.round,
                amount: match (r.amount_minor, r.currency.as_deref()) {
                    (Some(a), Some(c)) => crate::domain::payment::compensation::format_minor(a, c),
                    _ => "the whole payment".into(),
                },
                since: when(r.updated_at_ms),
                reminders: r.reminders_sent,
                detail: [
                    r.detail.as_deref(),
                    r.proof.as_deref(),
                    r.error.as_deref(),
                    r.provider_id.as_deref(),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" — "),
                refund_now: !(r.proof.is_some() && r.payment_intent.is_none()),
                id: r.compensation_id,
            })
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// `POST /admin/refunds/act` (`compensation_id`, `action` = `refund_now` | `refund_handled`): the
/// owner's decision on a refund, through the alert's own code path (the refund step's claim in
/// D1: a refund is made at most once however many clicks, links and journeys race).
pub async fn refunds_act(mut req: Request, env: &Env) -> Answer {
    let (s, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let id = trimmed(&f, "compensation_id");
    let action = match f.get("action").and_then(|a| OwnerAction::parse(a)) {
        Some(a) if a.is_refund() => a,
        _ => {
            return message(
                &cfg,
                Some(&s),
                400,
                "Unknown action",
                "action must be refund_now or refund_handled.",
            )
            .answer()
        }
    };
    let d1 = env.d1(DB_BINDING)?;
    if id.is_empty() || crate::store::compensation::get(&d1, &id).await?.is_none() {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such compensation",
            &format!(
                "No compensation {} on record.",
                id.chars().take(120).collect::<String>()
            ),
        )
        .answer();
    }
    // One claimant per click: the refund step's claim lets the same claimant in again while it
    // runs (a retried step), so two clicks must not share one.
    let claimant = format!("admin:{}:{}", s.account, crate::platform::random_u64());
    let outcome = if action == OwnerAction::RefundNow {
        compensation::owner_refund(env, &id, &claimant).await?
    } else {
        compensation::owner_handled(env, &id, &claimant).await?
    };
    let done = match outcome {
        OwnerRefund::Refunded(_) => "refunded",
        OwnerRefund::Handled => "refund_handled",
        OwnerRefund::Refused(_) => "refund_refused",
        OwnerRefund::NotProven(_) => "refund_not_proven",
        OwnerRefund::TryAgain(_) => "refund_retry",
        OwnerRefund::AlreadyDecided(_) => "refund_decided",
    };
    back("/admin/refunds", done, Some(&id))
}

fn delivery_line(d: &crate::store::webhooks::DeliveryRow, now: i64) -> DeliveryLine {
    DeliveryLine {
        link: format!("/admin/delivery?id={}", encode(&d.delivery_id)),
        id: d.delivery_id.clone(),
        event_type: d.event_type.clone(),
        subscriber: d.subscriber_id.clone(),
        status: d.status.clone(),
        attempts: d.attempts,
        created: when(d.created_at_ms),
        age: age(now - d.created_at_ms),
        last: [
            d.last_status_code.map(|c| c.to_string()),
            d.last_error.clone(),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" "),
    }
}

/// `YYYY-MM-DDTHH:MM` of `ms` (UTC): a `datetime-local` value.
fn local_input(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M").to_string())
        .unwrap_or_default()
}

/// `GET /admin/deliveries?status=dead|pending&subscriber=<id>` (3 D1 calls: the session, the
/// summary, the list).
pub async fn deliveries(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let status = match q.get("status").map(String::as_str) {
        None | Some("") | Some("dead") => "dead",
        Some("pending") => "pending",
        Some(other) => {
            return Err(AppError::BadRequest {
                message: format!("status {other:?} is not dead or pending"),
                field: Some("status".into()),
            })
        }
    };
    let subscriber = q
        .get("subscriber")
        .map(|v| v.trim().chars().take(100).collect::<String>())
        .unwrap_or_default();
    let d1 = env.d1(DB_BINDING)?;
    let now = now_ms();
    let summary = db::delivery_summary(&d1).await?;
    let mut subscribers: Vec<SubscriberLine> = Vec::new();
    for row in summary {
        let line = match subscribers.iter_mut().find(|l| l.id == row.subscriber_id) {
            Some(l) => l,
            None => {
                subscribers.push(SubscriberLine {
                    link: format!(
                        "/admin/deliveries?status=dead&subscriber={}",
                        encode(&row.subscriber_id)
                    ),
                    id: row.subscriber_id.clone(),
                    url: row.url.clone().unwrap_or_default(),
                    enabled: row.enabled == Some(1),
                    dead: 0,
                    retrying: 0,
                    oldest: String::new(),
                });
                subscribers.last_mut().expect("just pushed")
            }
        };
        if row.state == "dead" {
            line.dead += row.n;
        } else {
            line.retrying += row.n;
        }
        let oldest = age(now - row.oldest_ms);
        if line.oldest.is_empty() || row.state == "dead" {
            line.oldest = oldest;
        }
    }
    let list = crate::store::webhooks::deliveries(
        &d1,
        Some(status),
        Some(subscriber.as_str()).filter(|s| !s.is_empty()),
        None,
        None,
        LISTED,
    )
    .await?;
    let page = DeliveriesPage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        subscribers,
        status: status.to_string(),
        deliveries: list
            .iter()
            .filter(|d| status == "dead" || d.attempts > 0)
            .map(|d| delivery_line(d, now))
            .collect(),
        subscriber,
        range_from: local_input(now - 86_400_000),
        range_to: local_input(now + 60_000),
    };
    html(200, view::render(&page)).answer()
}

/// `GET /admin/delivery?id=<delivery id>`: one delivery and its attempts (3 D1 calls).
pub async fn delivery(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let id = trimmed(&q, "id");
    let d1 = env.d1(DB_BINDING)?;
    let Some(row) = crate::store::webhooks::delivery(&d1, &id).await? else {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such delivery",
            &format!(
                "No delivery {} on record.",
                id.chars().take(120).collect::<String>()
            ),
        )
        .answer();
    };
    let attempts = crate::store::webhooks::attempts(&d1, &id).await?;
    let now = now_ms();
    let page = DeliveryPage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        event_id: row.event_id.clone(),
        redrives: row.redrives,
        dead: row.status == "dead" || row.status == "cancelled",
        delivery: delivery_line(&row, now),
        attempts: attempts
            .into_iter()
            .map(|a| DeliveryAttemptLine {
                attempt: a.attempt,
                at: when(a.at_ms),
                status_code: a.status_code.map_or("no answer".into(), |c| c.to_string()),
                outcome: a.outcome,
                duration_ms: a.duration_ms,
                error: a.error.unwrap_or_default(),
                excerpt: a.response_excerpt.unwrap_or_default(),
            })
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// `YYYY-MM-DDTHH:MM` (a `datetime-local` value, read as UTC) → ms UTC.
fn parse_input(v: &str) -> Option<i64> {
    chrono::NaiveDateTime::parse_from_str(v.trim(), "%Y-%m-%dT%H:%M")
        .ok()
        .map(|t| t.and_utc().timestamp_millis())
}

/// `POST /admin/deliveries/redrive` with one of `delivery_id`, `subscriber_id`, or `from` and
/// `to` (`datetime-local`, UTC): the JSON operator API's redrive (`crate::publisher::redrive`).
pub async fn deliveries_redrive(mut req: Request, env: &Env) -> Answer {
    let (s, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let field = |k: &str| {
        f.get(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let sel = match (
        field("delivery_id"),
        field("subscriber_id"),
        field("from"),
        field("to"),
    ) {
        (Some(d), None, None, None) => Selection::Delivery(d),
        (None, Some(sub), None, None) => Selection::Subscriber(sub),
        (None, None, Some(from), Some(to)) => match (parse_input(&from), parse_input(&to)) {
            (Some(from_ms), Some(to_ms)) if from_ms < to_ms => Selection::Range { from_ms, to_ms },
            _ => {
                return not_understood(
                    &cfg,
                    &s,
                    "from and to must be date-times (UTC) with from before to.",
                )
            }
        },
        _ => {
            return not_understood(
                &cfg,
                &s,
                "Give one delivery, one subscriber, or a time range.",
            )
        }
    };
    let redriven = crate::publisher::redrive(env, &sel).await?;
    let back_to = match &sel {
        Selection::Delivery(id) => format!("/admin/delivery?id={}", encode(id)),
        _ => "/admin/deliveries".to_string(),
    };
    back(
        &back_to,
        "deliveries_redriven",
        Some(&redriven.len().to_string()),
    )
}
