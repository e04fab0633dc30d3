//! The operator view of the outbox (`GET /state`, forwarded by `GET /admin/outbox`): counts by
//! status, the provider pauses and client slot, the last alarm's cost, and the newest queue items
//! with their attempts. Never used by the alarm (a `status` filter scans the queue).

use super::storage::StateKey;
use super::Outbox;
use crate::domain::email::EmailStatus;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use worker::{Result, SqlStorageValue as V};

/// Items listed when the query names no `limit`.
const DEFAULT_LIMIT: u32 = 200;
/// Largest `limit` accepted.
const MAX_LIMIT: u32 = 500;

/// Public view of a queue row (`GET /state` `items[]`), for tests, admin pages and operators.
/// Times are ms since the Unix epoch (UTC).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ItemView {
    pub seq: i64,
    pub dedupe_key: String,
    pub audience: String,
    pub rank: i64,
    pub status: String,
    pub attempts: i64,
    pub budget_from: i64,
    pub not_before_ms: i64,
    pub enqueued_at_ms: i64,
    /// When the row last changed (every writer sets it).
    pub updated_at_ms: i64,
    pub provider: Option<String>,
    pub provider_message_id: Option<String>,
    pub last_error: Option<String>,
    pub sent_at_ms: Option<i64>,
    pub maybe_handed_to: Option<String>,
}

/// The `queue` columns of an [`ItemView`], in order.
pub(super) const ITEM_COLUMNS: &str =
    "seq, dedupe_key, audience, rank, status, attempts, budget_from, not_before_ms, \
     enqueued_at_ms, updated_at_ms, provider, provider_message_id, last_error, sent_at_ms, \
     maybe_handed_to";

/// One attempt log entry (`GET /state` `attempts[]`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AttemptView {
    pub seq: i64,
    pub attempt: i64,
    pub provider: String,
    pub at_ms: i64,
    pub outcome: String,
    pub error: Option<String>,
}

#[derive(Deserialize)]
struct StatusCount {
    status: String,
    n: i64,
}

/// The cost of the last alarm that succeeded.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastAlarm {
    pub rows_read: Option<i64>,
    pub ms: Option<i64>,
}

/// The body of `GET /state`. Times are ms since the Unix epoch (UTC); `null` when never set.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxView {
    pub next_slot_at_ms: Option<i64>,
    pub main_paused_until_ms: Option<i64>,
    pub smtp_paused_until_ms: Option<i64>,
    /// The owner route (the `OWNER_ROUTE` binding) exists.
    #[serde(default)]
    pub owner_route: bool,
    /// The owner route failed and is not tried again before then.
    #[serde(default)]
    pub owner_route_paused_until_ms: Option<i64>,
    pub marketing_held_until_ms: Option<i64>,
    pub last_alarm: LastAlarm,
    /// Rows per status (stored names).
    pub counts: BTreeMap<String, i64>,
    /// More items match than are listed.
    pub truncated: bool,
    /// Newest first.
    pub items: Vec<ItemView>,
    /// The attempts of the listed items, newest first.
    pub attempts: Vec<AttemptView>,
    /// The catch-up the owner allowed, while it runs.
    #[serde(default)]
    pub catch_up: Option<crate::domain::outbox::backlog::CatchUp>,
    /// How long the queue takes to drain per rank, and the time-bound emails forecast to miss
    /// their moment (`crate::domain::outbox::backlog`).
    #[serde(default)]
    pub forecast: Option<crate::domain::outbox::backlog::Forecast>,
    /// The routes' history, newest first (pauses and their causes, resumes, pauses lifted by a
    /// settings change, emails a route refused alone): the last [`ROUTE_HISTORY_SHOWN`] lines.
    #[serde(default)]
    pub route_history: Vec<super::routes::RouteEvent>,
}

/// Lines of the route history the view lists.
pub const ROUTE_HISTORY_SHOWN: i64 = 30;

/// `GET /state` query: `status`, `dedupe_key`, `limit`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct ViewFilter {
    status: Option<String>,
    dedupe_key: Option<String>,
    limit: Option<u32>,
}

impl ViewFilter {
    /// Parses the query of `url`; the error names the offending parameter for the operator.
    pub(super) fn from_url(url: &worker::Url) -> std::result::Result<Self, String> {
        let mut f = ViewFilter::default();
        for (k, v) in url.query_pairs() {
            match k.as_ref() {
                "status" => {
                    if EmailStatus::parse(&v).is_none() {
                        return Err(format!("status {v:?} is not an email status (queued, waiting, sending, sent, sent_possibly_twice, dead, dropped, blocked, skipped)"));
                    }
                    f.status = Some(v.into_owned());
                }
                "dedupe_key" => f.dedupe_key = Some(v.into_owned()),
                "limit" => {
                    f.limit = Some(
                        v.parse::<u32>()
                            .ok()
                            .filter(|n| (1..=MAX_LIMIT).contains(n))
                            .ok_or_else(|| format!("limit {v:?} is not a number from 1 to 500"))?,
                    )
                }
                other => {
                    return Err(format!(
                        "unknown query parameter {other:?} (status, dedupe_key, limit)"
                    ))
                }
            }
        }
        Ok(f)
    }
}

impl Outbox {
    /// `GET /state`: counts by status, provider and lane state, and the newest items (default 200,
    /// at most 500) with their attempts, optionally only those of one `status` or one
    /// `dedupe_key`. `truncated` is true when more items match than are listed.
    pub(super) fn view(&self, filter: &ViewFilter) -> Result<OutboxView> {
        let limit = filter.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let mut query = format!("SELECT {ITEM_COLUMNS} FROM queue");
        let mut binds: Vec<V> = Vec::new();
        let mut conditions = Vec::new();
        if let Some(status) = &filter.status {
            conditions.push("status = ?");
            binds.push(status.as_str().into());
        }
        if let Some(key) = &filter.dedupe_key {
            conditions.push("dedupe_key = ?");
            binds.push(key.as_str().into());
        }
        if !conditions.is_empty() {
            query.push_str(&format!(" WHERE {}", conditions.join(" AND ")));
        }
        query.push_str(&format!(" ORDER BY seq DESC LIMIT {}", limit + 1));
        let mut items: Vec<ItemView> = self.rows(&query, binds)?;
        let truncated = items.len() > limit as usize;
        items.truncate(limit as usize);
        let (low, high) = match (items.last(), items.first()) {
            (Some(l), Some(h)) => (l.seq, h.seq),
            _ => (0, -1),
        };
        let attempts: Vec<AttemptView> = self.rows(
            "SELECT seq, attempt, provider, at_ms, outcome, error FROM attempts WHERE seq BETWEEN ? AND ? \
             ORDER BY seq DESC, attempt DESC LIMIT 2000",
            vec![low.into(), high.into()],
        )?;
        let listed: HashSet<i64> = items.iter().map(|i| i.seq).collect();
        let attempts: Vec<AttemptView> = attempts
            .into_iter()
            .filter(|a| listed.contains(&a.seq))
            .collect();
        let counts: Vec<StatusCount> = self.rows(
            "SELECT status, COUNT(*) AS n FROM queue GROUP BY status",
            vec![],
        )?;
        let now = crate::platform::now_ms();
        let cfg = self.config()?;
        let availability = self.availability(&cfg)?;
        Ok(OutboxView {
            owner_route: availability.owner_route,
            owner_route_paused_until_ms: availability.owner_route_paused_until_ms,
            catch_up: self.catch_up(now)?,
            forecast: Some(self.forecast(&cfg, now)?),
            next_slot_at_ms: self.get_state(StateKey::NextSlotAtMs)?,
            main_paused_until_ms: self.get_state(StateKey::MainPausedUntilMs)?,
            smtp_paused_until_ms: self.get_state(StateKey::SmtpPausedUntilMs)?,
            marketing_held_until_ms: self.get_state(StateKey::MarketingHeldUntilMs)?,
            last_alarm: LastAlarm {
                rows_read: self.get_state(StateKey::LastAlarmRowsRead)?,
                ms: self.get_state(StateKey::LastAlarmMs)?,
            },
            counts: counts.into_iter().map(|c| (c.status, c.n)).collect(),
            truncated,
            items,
            attempts,
            route_history: self.route_history(ROUTE_HISTORY_SHOWN)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(query: &str) -> std::result::Result<ViewFilter, String> {
        ViewFilter::from_url(&worker::Url::parse(&format!("https://outbox/state{query}")).unwrap())
    }

    #[test]
    fn view_filter_reads_status_key_and_limit_and_names_what_is_wrong() {
        assert_eq!(filter(""), Ok(ViewFilter::default()));
        assert_eq!(
            filter("?status=dead&dedupe_key=a%3Ab&limit=5"),
            Ok(ViewFilter {
                status: Some("dead".into()),
                dedupe_key: Some("a:b".into()),
                limit: Some(5),
            })
        );
        assert!(filter("?status=lost").unwrap_err().contains("\"lost\""));
        assert!(filter("?limit=0").unwrap_err().contains("1 to 500"));
        assert!(filter("?limit=501").unwrap_err().contains("1 to 500"));
        assert!(filter("?order=asc").unwrap_err().contains("\"order\""));
    }

    #[test]
    fn the_view_keeps_its_json_names() {
        let view = OutboxView {
            next_slot_at_ms: Some(1),
            main_paused_until_ms: None,
            smtp_paused_until_ms: None,
            owner_route: true,
            owner_route_paused_until_ms: None,
            marketing_held_until_ms: Some(2),
            last_alarm: LastAlarm {
                rows_read: Some(3),
                ms: Some(4),
            },
            counts: BTreeMap::from([("sent".to_string(), 5)]),
            truncated: false,
            items: vec![],
            attempts: vec![],
            catch_up: None,
            forecast: None,
            route_history: vec![super::super::routes::RouteEvent {
                at_ms: 6,
                route: "smtp".into(),
                event: "paused".into(),
                detail: "d".into(),
            }],
        };
        assert_eq!(
            serde_json::to_value(&view).unwrap(),
            serde_json::json!({
                "nextSlotAtMs": 1,
                "mainPausedUntilMs": null,
                "smtpPausedUntilMs": null,
                "ownerRoute": true,
                "ownerRoutePausedUntilMs": null,
                "marketingHeldUntilMs": 2,
                "lastAlarm": {"rowsRead": 3, "ms": 4},
                "counts": {"sent": 5},
                "truncated": false,
                "items": [],
                "attempts": [],
                "catchUp": null,
                "forecast": null,
                "routeHistory": [{"atMs": 6, "route": "smtp", "event": "paused", "detail": "d"}],
            })
        );
    }
}
