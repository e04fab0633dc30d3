//! Holds, raw events and suppressions: lists and their forms.

use super::*;
use crate::domain::admin::timeline::{ID_SHOWN_CHARS, NAME_SHOWN_CHARS, NOTE_SHOWN_CHARS};

/// `GET /admin/holds` (2 D1 calls).
pub async fn holds(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let d1 = env.d1(DB_BINDING)?;
    let rows = db::open_holds(&d1).await?;
    let page = view::HoldsPage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        holds: rows
            .into_iter()
            .map(|h| {
                let mut facts = Vec::new();
                if let Some(n) = &h.guest_name {
                    facts.push(format!("guest {n}"));
                }
                if let Some(e) = &h.email {
                    facts.push(format!("email {e}"));
                }
                if let Some(hotel) = &h.hotel_id {
                    facts.push(format!(
                        "hotel {hotel}, {} → {}",
                        h.checkin.as_deref().unwrap_or("?"),
                        h.checkout.as_deref().unwrap_or("?")
                    ));
                }
                if let Some(d) = &h.decline_code {
                    facts.push(format!("decline code {d}"));
                }
                facts.push(format!("prebook {}", h.prebook_id));
                view::HoldLine {
                    id: h.hold_id,
                    created: when(h.created_at_ms),
                    reason: h.reason,
                    facts,
                }
            })
            .collect(),
        actions: OwnerAction::ALL
            .iter()
            .map(|a| (a.as_str(), a.label()))
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// `POST /admin/holds/act` (`hold_id`, `action`): what the owner's one-click link does, once per
/// hold (token id `admin:<hold id>`).
pub async fn holds_act(mut req: Request, env: &Env) -> Answer {
    let (s, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let hold_id = trimmed(&f, "hold_id");
    let Some(action) = f
        .get("action")
        .and_then(|a| OwnerAction::parse(a))
        .filter(|a| OwnerAction::ALL.contains(a))
    else {
        return message(
            &cfg,
            Some(&s),
            400,
            "Unknown action",
            "action must be send_insufficient_funds, send_security_check or dismiss.",
        )
        .answer();
    };
    let d1 = env.d1(DB_BINDING)?;
    let Some(hold) = crate::store::checkout::get_hold(&d1, &hold_id).await? else {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such hold",
            &format!("No hold {hold_id} on record."),
        )
        .answer();
    };
    if hold.status != crate::store::checkout::HoldStatus::Held {
        return back("/admin/holds", "hold_handled", Some(&hold_id));
    }
    let ip = client_ip(&req);
    let from = format!("admin:{} {}", s.account, ip);
    let outcome = crate::routes::actions::act_on_hold(
        env,
        &hold,
        action,
        &format!("admin:{hold_id}"),
        Some(&from),
    )
    .await?;
    let done = match (outcome.status, outcome.title) {
        (200, "Sent") => "hold_sent",
        (200, "Dismissed") => "hold_dismissed",
        (200, _) => "hold_nothing",
        _ => "hold_handled",
    };
    back("/admin/holds", done, Some(&hold_id))
}

const EVENT_STATUSES: [&str; 5] = ["received", "started", "ignored", "rejected", "errored"];

/// `GET /admin/events?source=&status=&date=YYYY-MM-DD&before=<ms>.<id>` (2 D1 calls).
pub async fn events(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let sources: Vec<&'static str> = <Source as strum::VariantArray>::VARIANTS
        .iter()
        .map(|s| s.as_str())
        .collect();
    let pick = |name: &str| {
        q.get(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let source = pick("source");
    let status = pick("status");
    let date = pick("date");
    if let Some(v) = &source {
        if !sources.contains(&v.as_str()) {
            return message(
                &cfg,
                Some(&s),
                400,
                "Unknown source",
                &format!("source must be one of {}.", sources.join(", ")),
            )
            .answer();
        }
    }
    if let Some(v) = &status {
        if !EVENT_STATUSES.contains(&v.as_str()) {
            return message(
                &cfg,
                Some(&s),
                400,
                "Unknown status",
                &format!("status must be one of {}.", EVENT_STATUSES.join(", ")),
            )
            .answer();
        }
    }
    let day = match &date {
        None => None,
        Some(d) => match chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d") {
            Ok(day) => {
                let from = day
                    .and_hms_opt(0, 0, 0)
                    .unwrap_or_default()
                    .and_utc()
                    .timestamp_millis();
                Some((from, from + 86_400_000))
            }
            Err(_) => {
                return message(
                    &cfg,
                    Some(&s),
                    400,
                    "Bad date",
                    "date must be YYYY-MM-DD (a UTC day).",
                )
                .answer()
            }
        },
    };
    // `before=<ms>.<id>`: the last row shown (keyset paging).
    let before = match pick("before") {
        None => None,
        Some(b) => match b
            .split_once('.')
            .map(|(m, i)| (m.parse::<i64>(), i.parse::<i64>()))
        {
            Some((Ok(ms), Ok(id))) => Some((ms, id)),
            _ => {
                return message(
                    &cfg,
                    Some(&s),
                    400,
                    "Bad paging",
                    "before must be <ms>.<id> (the Older link makes it).",
                )
                .answer()
            }
        },
    };
    let d1 = env.d1(DB_BINDING)?;
    let filter = db::EventFilter {
        source: source.clone(),
        status: status.clone(),
        day,
        before_ms: before.map(|b| b.0),
        before_id: before.map(|b| b.1),
    };
    let mut rows = db::raw_events(&d1, &filter).await?;
    let page_rows = crate::domain::admin::timeline::EVENTS_PAGE_ROWS as usize;
    let older = (rows.len() > page_rows).then(|| {
        rows.truncate(page_rows);
        let last = rows.last().map_or("0.0".to_string(), |r| {
            format!("{}.{}", r.received_at_ms, r.id)
        });
        format!(
            "/admin/events?source={}&status={}&date={}&before={last}",
            encode(source.as_deref().unwrap_or_default()),
            encode(status.as_deref().unwrap_or_default()),
            encode(date.as_deref().unwrap_or_default())
        )
    });
    let page = view::EventsPage {
        chrome: chrome(&cfg, Some(&s), None),
        sources,
        statuses: EVENT_STATUSES.to_vec(),
        source: source.unwrap_or_default(),
        status: status.unwrap_or_default(),
        date: date.unwrap_or_default(),
        events: rows
            .into_iter()
            .map(|e| view::EventLine {
                when: when(e.received_at_ms),
                source: e.source,
                name: shown(e.event_name.as_deref(), NAME_SHOWN_CHARS),
                event_id: shown(e.event_id.as_deref(), ID_SHOWN_CHARS),
                status: e.status,
                error: shown(e.error.as_deref(), NOTE_SHOWN_CHARS),
                body: excerpt(&e.body, e.body_chars),
                body_link: format!("/admin/events/body?id={}", e.id),
                refused: shown(e.refused_reason.as_deref(), NOTE_SHOWN_CHARS),
                booking: e.booking_id,
            })
            .collect(),
        older,
    };
    html(200, view::render(&page)).answer()
}

const SUPPRESSION_REASONS: [(&str, &str); 3] = [
    (
        "marketing_unsubscribed",
        "no marketing (booking mail still goes)",
    ),
    ("hard_bounce", "address does not exist (nothing goes)"),
    ("complaint", "complained (nothing goes)"),
];

/// `GET /admin/suppressions?email=` (2 D1 calls).
pub async fn suppressions(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let email: String = q
        .get("email")
        .map(|v| v.trim().chars().take(254).collect())
        .unwrap_or_default();
    let d1 = env.d1(DB_BINDING)?;
    let (rows, log) = db::suppressions(&d1, (!email.is_empty()).then_some(email.as_str())).await?;
    let page = view::SuppressionsPage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        q: email,
        reasons: SUPPRESSION_REASONS.to_vec(),
        rows: rows
            .into_iter()
            .map(|r| view::SuppressionLine {
                email: r.email,
                reason: r.reason,
                detail: r.detail.unwrap_or_default(),
                source: r.source,
                since: when(r.created_at_ms),
            })
            .collect(),
        log: log
            .into_iter()
            .map(|l| view::SuppressionLogLine {
                when: when(l.at_ms),
                email: l.email,
                change: l.change,
                reason: l.reason,
                note: l.note.unwrap_or_default(),
                by: l.by_account,
            })
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// An operator's note: one line, bounded, required.
fn note(cfg: &Config, s: &Session, f: &HashMap<String, String>) -> Result<String, AppError> {
    let n: String = f
        .get("note")
        .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
        .chars()
        .take(MAX_NOTE_CHARS)
        .collect();
    if n.is_empty() {
        return Err(message(
            cfg,
            Some(s),
            400,
            "A reason is required",
            "Say why (the note is kept with the change).",
        )
        .into());
    }
    Ok(n)
}

fn address(cfg: &Config, s: &Session, f: &HashMap<String, String>) -> Result<String, AppError> {
    let raw = f.get("email").map(|v| v.trim()).unwrap_or_default();
    EmailAddress::parse(raw)
        .map(|a| a.as_str().to_ascii_lowercase())
        .map_err(|e| {
            message(
                cfg,
                Some(s),
                400,
                "Not an email address",
                &format!("email: {e}"),
            )
            .into()
        })
}

/// `POST /admin/suppressions/add` (`email`, `reason`, `note`).
pub async fn suppressions_add(mut req: Request, env: &Env) -> Answer {
    let (s, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let email = address(&cfg, &s, &f)?;
    let reason = f.get("reason").map(String::as_str).unwrap_or_default();
    if !SUPPRESSION_REASONS.iter().any(|(r, _)| *r == reason) {
        return message(
            &cfg,
            Some(&s),
            400,
            "Unknown reason",
            "reason must be marketing_unsubscribed, hard_bounce or complaint.",
        )
        .answer();
    }
    let note = note(&cfg, &s, &f)?;
    let d1 = env.d1(DB_BINDING)?;
    let added = db::add_suppression(&d1, &email, reason, &note, &s.account, now_ms()).await?;
    back(
        "/admin/suppressions",
        if added { "added" } else { "already" },
        Some(&email),
    )
}

/// `POST /admin/suppressions/remove` (`email`, `note`).
pub async fn suppressions_remove(mut req: Request, env: &Env) -> Answer {
    let (s, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let email = address(&cfg, &s, &f)?;
    let note = note(&cfg, &s, &f)?;
    let d1 = env.d1(DB_BINDING)?;
    let removed = db::remove_suppression(&d1, &email, &note, &s.account, now_ms()).await?;
    back(
        "/admin/suppressions",
        if removed { "removed" } else { "none" },
        Some(&email),
    )
}

/// Characters read from D1 per chunk of a whole raw body (a body is at most
/// `MAX_WEBHOOK_BODY_BYTES`, stored as text, base64 for bytes that are not UTF-8).
const BODY_CHUNK_CHARS: i64 = 65_536;

/// `GET /admin/events/body?id=<raw event id>`: the whole stored body of one raw event, on its own
/// (pages show only an excerpt), streamed in chunks of [`BODY_CHUNK_CHARS`] read with `substr` so
/// the Worker never holds more than one chunk. `application/json` when it starts like JSON, else
/// `text/plain` (a body that was not UTF-8 is stored, and served, as `base64:<data>`); always a
/// download (`Content-Disposition: attachment`), `nosniff` and a sandbox CSP, so nothing a
/// supplier sent can run in the admin's origin. 1 D1 read per chunk.
pub async fn event_body(req: Request, env: &Env) -> Answer {
    use futures::StreamExt;
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let Some(id) = q.get("id").and_then(|v| v.trim().parse::<i64>().ok()) else {
        return message(
            &cfg,
            Some(&s),
            400,
            "Bad id",
            "id must be a raw event's number.",
        )
        .answer();
    };
    let d1 = env.d1(DB_BINDING)?;
    let Some(first) = db::raw_body_part(&d1, id, 1, BODY_CHUNK_CHARS).await? else {
        return message(
            &cfg,
            Some(&s),
            404,
            "Not found",
            &format!("No raw event {id} on record."),
        )
        .answer();
    };
    let json = first.trim_start().starts_with(['{', '[']);
    let (content_type, ext) = if json {
        ("application/json; charset=utf-8", "json")
    } else {
        ("text/plain; charset=utf-8", "txt")
    };
    let more = first.chars().count() as i64 == BODY_CHUNK_CHARS;
    let env2 = env.clone();
    // State: the next character to read (1-based), or `None` when the body is done.
    let rest = futures::stream::unfold(more.then_some(1 + BODY_CHUNK_CHARS), move |next| {
        let env = env2.clone();
        async move {
            let from = next?;
            let part = match env.d1(DB_BINDING) {
                Ok(d1) => db::raw_body_part(&d1, id, from, BODY_CHUNK_CHARS).await,
                Err(e) => Err(e),
            };
            match part {
                Ok(Some(p)) if !p.is_empty() => {
                    let full = p.chars().count() as i64 == BODY_CHUNK_CHARS;
                    Some((Ok(p.into_bytes()), full.then_some(from + BODY_CHUNK_CHARS)))
                }
                Ok(_) => None,
                Err(e) => Some((Err(e), None)),
            }
        }
    });
    let body =
        futures::stream::once(async move { Ok::<Vec<u8>, worker::Error>(first.into_bytes()) })
            .chain(rest);
    let mut resp = worker::Response::from_stream(body)?;
    let h = resp.headers_mut();
    h.set("content-type", content_type)?;
    h.set(
        "content-disposition",
        &format!("attachment; filename=\"raw-event-{id}.{ext}\""),
    )?;
    h.set("x-content-type-options", "nosniff")?;
    h.set("content-security-policy", "sandbox; default-src 'none'")?;
    h.set("cache-control", "no-store")?;
    h.set("referrer-policy", "no-referrer")?;
    Ok(resp)
}
