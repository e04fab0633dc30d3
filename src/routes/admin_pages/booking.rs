//! Bookings: the search, a booking's timeline, and an email as it was sent.

use super::outbox::{email_link, outbox_state, rank_name};
use super::*;
use crate::domain::admin::timeline::{
    Entry, EntryKind, ID_SHOWN_CHARS, MAX_PER_KIND, MAX_RAW_EVENTS, NAME_SHOWN_CHARS,
    NOTE_SHOWN_CHARS,
};

fn trip(b: &db::BookingHit) -> String {
    let dates = match (&b.checkin, &b.checkout) {
        (Some(i), Some(o)) => format!("{i} → {o}"),
        (Some(i), None) => i.clone(),
        _ => String::new(),
    };
    match &b.hotel_name {
        Some(h) if !h.is_empty() => format!("{h}, {dates}"),
        _ => dates,
    }
}

/// `GET /admin/bookings?q=` (2 D1 calls: the session, the search).
pub async fn bookings(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let text: String = q
        .get("q")
        .map(|v| v.trim().chars().take(254).collect())
        .unwrap_or_default();
    let d1 = env.d1(DB_BINDING)?;
    let hits = db::search_bookings(&d1, &text).await?;
    let page = view::BookingsPage {
        chrome: chrome(&cfg, Some(&s), None),
        q: text,
        hits: hits
            .iter()
            .map(|b| view::BookingLine {
                id: b.booking_id.clone(),
                link: format!("/admin/booking?id={}", encode(&b.booking_id)),
                kind: b.kind.clone(),
                guest: format!("{} {}", b.first_name, b.last_name)
                    .trim()
                    .to_string(),
                email: b.contact_email.clone(),
                trip: trip(b),
                status: b.status.clone(),
                created: when(b.created_at_ms),
            })
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// The timeline entries of a booking's rows (pure: rows in, entries out, in time order).
pub fn timeline_entries(t: &db::TimelineRows) -> Vec<Entry> {
    let mut out = Vec::new();
    let b = &t.booking;
    out.push(Entry::new(
        b.created_at_ms,
        EntryKind::Booking,
        format!(
            "{} booking recorded for {} {}",
            b.kind, b.first_name, b.last_name
        ),
        vec![
            format!(
                "status now {}, journey version {}, last change {}",
                b.status,
                b.journey_version,
                when(b.updated_at_ms)
            ),
            format!("guest language {}", language(b)),
        ],
        b.status.clone(),
    ));
    if let Some(at) = b.guest_locale_changed_at_ms {
        out.push(Entry::new(
            at,
            EntryKind::Booking,
            format!(
                "guest language changed from {} to {}",
                b.guest_locale_before.as_deref().unwrap_or("none"),
                b.guest_locale.as_deref().unwrap_or("none")
            ),
            vec![
                "an event of the booking stated the new language: later guest emails use it".into(),
            ],
            "changed".into(),
        ));
    }
    for e in &t.raw_events {
        let id = shown(e.event_id.as_deref(), ID_SHOWN_CHARS);
        let mut facts = vec![format!(
            "event id {}",
            if id.is_empty() { "-" } else { &id }
        )];
        if let Some(p) = &e.partner {
            facts.push(format!("signed by partner {p}"));
        }
        if let Some(i) = &e.instance_id {
            facts.push(format!("journey instance {i}"));
        }
        if e.error.is_some() {
            let err = shown(e.error.as_deref(), NOTE_SHOWN_CHARS);
            facts.push(format!("error: {err}"));
        }
        if e.refused_reason.is_some() {
            let why = shown(e.refused_reason.as_deref(), NOTE_SHOWN_CHARS);
            facts.push(format!("refused, nothing changed: {why}"));
        }
        out.push(
            Entry::new(
                e.received_at_ms,
                EntryKind::RawEvent,
                format!(
                    "{} {}",
                    e.source,
                    e.event_name
                        .as_deref()
                        .map(|n| shown(Some(n), NAME_SHOWN_CHARS))
                        .unwrap_or_else(|| "(no name)".into())
                ),
                facts,
                e.status.clone(),
            )
            .with_body(
                excerpt(&e.body, e.body_chars),
                Some(format!("/admin/events/body?id={}", e.id)),
            ),
        );
    }
    for p in &t.planned {
        let mut facts = Vec::new();
        match p.due_at_ms {
            Some(due) => {
                let (utc, local) = timeline::times(due, p.zone.as_deref());
                facts.push(format!("due {utc}"));
                if let Some(local) = local {
                    facts.push(format!("due at the hotel {local}"));
                }
            }
            None => facts.push("no due time".into()),
        }
        if let Some(d) = p.decided_at_ms {
            facts.push(format!(
                "decided {}: {}",
                when(d),
                p.reason.as_deref().unwrap_or(&p.status)
            ));
        } else if let Some(r) = &p.reason {
            facts.push(r.clone());
        }
        if let Some(at) = p.replanned_at_ms {
            let from = p.replanned_from.as_deref().unwrap_or("UTC");
            facts.push(format!("moved to hotel time {}: was {from}", when(at)));
            out.push(Entry::new(
                at,
                EntryKind::PlannedSend,
                format!("{} moved to hotel time", p.kind),
                vec![
                    format!(
                        "the hotel's zone became known: {}",
                        p.zone.as_deref().unwrap_or("?")
                    ),
                    format!("was {from}"),
                ],
                "replanned".into(),
            ));
        }
        out.push(Entry::new(
            p.planned_at_ms,
            EntryKind::PlannedSend,
            format!("{} (journey version {})", p.kind, p.journey_version),
            facts,
            p.status.clone(),
        ));
    }
    for e in &t.emails {
        let mut facts = vec![
            format!(
                "to {} · rank {} · {} attempt(s)",
                e.to_addr,
                rank_name(e.rank),
                e.attempts
            ),
            format!(
                "provider {} · provider message id {} · Message-ID {}",
                e.provider.as_deref().unwrap_or("-"),
                e.provider_message_id.as_deref().unwrap_or("-"),
                e.message_id
            ),
        ];
        if let Some(at) = e.sent_at_ms {
            facts.push(format!("sent {}", when(at)));
        }
        if let Some(d) = &e.delivery_status {
            facts.push(format!("delivery: {d}"));
        }
        if let Some(err) = &e.last_error {
            facts.push(format!("last error: {err}"));
        }
        out.push(
            Entry::new(
                e.created_at_ms,
                EntryKind::Email,
                format!("{}: {}", e.kind, e.subject),
                facts,
                e.status.clone(),
            )
            .with_link(email_link(&e.dedupe_key)),
        );
    }
    for h in &t.holds {
        out.push(Entry::new(
            h.created_at_ms,
            EntryKind::Hold,
            format!("hold {}: {}", h.hold_id, h.reason),
            h.action
                .iter()
                .map(|a| format!("action {a} at {}", when(h.acted_at_ms.unwrap_or_default())))
                .collect(),
            h.status.clone(),
        ));
    }
    for c in &t.compensations {
        out.push(Entry::new(
            c.created_at_ms,
            EntryKind::Compensation,
            format!("{} ({}): {}", c.compensation_id, c.cause, c.reason),
            vec![format!(
                "opened by {}, last change {}",
                c.event_name,
                when(c.updated_at_ms)
            )],
            c.state.clone(),
        ));
    }
    for w in &t.webhook_events {
        out.push(Entry::new(
            w.created_at_ms,
            EntryKind::WebhookEvent,
            format!("{} {}", w.event_type, w.event_id),
            vec![],
            "published".into(),
        ));
    }
    timeline::order(out)
}

/// `GET /admin/booking?id=` (2 D1 calls: the session, one batch of 7 statements).
pub async fn booking(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let id = trimmed(&q, "id");
    if id.is_empty() || id.len() > 200 {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such booking",
            "Give a booking id (search on the bookings page).",
        )
        .answer();
    }
    let d1 = env.d1(DB_BINDING)?;
    let Some(rows) = db::timeline(&d1, &id).await? else {
        return no_booking(&cfg, &s, &id);
    };
    let b = &rows.booking;
    let cut = rows.raw_events.len() >= MAX_RAW_EVENTS as usize
        || [
            rows.planned.len(),
            rows.emails.len(),
            rows.holds.len(),
            rows.compensations.len(),
            rows.webhook_events.len(),
        ]
        .iter()
        .any(|n| *n >= MAX_PER_KIND as usize);
    let mut facts = vec![
        (
            "Guest".to_string(),
            format!("{} {}", b.first_name, b.last_name)
                .trim()
                .to_string(),
        ),
        ("Email".into(), b.contact_email.clone()),
        ("Kind".into(), b.kind.clone()),
        ("Status".into(), b.status.clone()),
        ("Stay / trip".into(), trip(b)),
        ("Journey version".into(), b.journey_version.to_string()),
        ("Guest language".into(), language(b)),
    ];
    if let Some(h) = &b.hotel_confirmation_number {
        facts.push(("Hotel confirmation number".into(), h.clone()));
    }
    if let Some(p) = &b.prebook_id {
        facts.push(("Prebook id".into(), p.clone()));
    }
    let (said, conversation) = super::conversations::booking_part(&cfg, &d1, &id).await?;
    let mut entries = timeline_entries(&rows);
    entries.extend(said);
    let entries = timeline::order(entries)
        .into_iter()
        .map(|entry| view::EntryLine {
            utc: when(entry.at_ms),
            entry,
        })
        .collect();
    let page = view::BookingPage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        id: b.booking_id.clone(),
        facts,
        entries,
        cut,
        max_per_kind: MAX_PER_KIND,
        max_raw_events: MAX_RAW_EVENTS,
        conversation,
    };
    html(200, view::render(&page)).answer()
}

fn key_param(q: &HashMap<String, String>) -> Option<String> {
    q.get("key")
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty() && k.len() <= 500)
}

/// `GET /admin/email?key=` (2 D1 calls: the session, one batch of 2 statements; 1 outbox read
/// for its attempts).
pub async fn email(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let Some(key) = key_param(&q) else {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such email",
            "Give an email's dedupe key.",
        )
        .answer();
    };
    let d1 = env.d1(DB_BINDING)?;
    let Some((row, content)) = db::email(&d1, &key).await? else {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such email",
            &format!("No email {key} on record."),
        )
        .answer();
    };
    // The attempts live in the outbox (none once retention pruned the row); if it cannot answer,
    // the page still shows D1's record and says so.
    let (st, outbox_error) = match outbox_state(env, &format!("dedupe_key={}", encode(&key))).await
    {
        Ok(st) => (st, None),
        Err(e) => {
            worker::console_error!("admin email page: outbox state for {key}: {e}");
            (Default::default(), Some(e.to_string()))
        }
    };
    let seqs: Vec<i64> = st.items.iter().map(|i| i.seq).collect();
    let mut attempts: Vec<_> = st
        .attempts
        .iter()
        .filter(|a| seqs.contains(&a.seq))
        .map(|a| {
            (
                a.attempt,
                when(a.at_ms),
                a.provider.clone(),
                a.outcome.clone(),
                a.error.clone().unwrap_or_default(),
            )
        })
        .collect();
    crate::domain::basics::sort::sort_by_key(&mut attempts, |a| a.0);
    let mut facts = vec![
        ("Dedupe key".to_string(), row.dedupe_key.clone()),
        ("Kind".into(), row.kind.clone()),
        ("Audience".into(), row.audience.clone()),
        ("Rank".into(), rank_name(row.rank)),
        ("Status".into(), row.status.clone()),
        ("Attempts".into(), row.attempts.to_string()),
        (
            "Provider".into(),
            row.provider.clone().unwrap_or_else(|| "-".into()),
        ),
        (
            "Provider message id".into(),
            row.provider_message_id
                .clone()
                .unwrap_or_else(|| "-".into()),
        ),
        ("Claimed (UTC)".into(), when(row.created_at_ms)),
    ];
    if let Some(b) = &row.booking_id {
        facts.push(("Booking".into(), b.clone()));
    }
    if let Some(at) = row.sent_at_ms {
        facts.push(("Sent (UTC)".into(), when(at)));
    }
    if let Some(d) = &row.delivery_status {
        facts.push(("Delivery".into(), d.clone()));
    }
    if let Some(e) = &outbox_error {
        facts.push(("Outbox attempts".into(), format!("unavailable: {e}")));
    }
    if let Some(e) = &row.last_error {
        facts.push(("Last error".into(), e.clone()));
    }
    let mut headers = vec![
        (
            "From".to_string(),
            format!("{} <{}>", cfg.branding.brand, cfg.branding.from),
        ),
        ("To".into(), row.to_addr.clone()),
        (
            "Subject".into(),
            content
                .as_ref()
                .map_or(row.subject.clone(), |c| c.subject.clone()),
        ),
        (
            "Message-ID".into(),
            format!(
                "<{}>",
                row.message_id.trim_matches(|c| c == '<' || c == '>')
            ),
        ),
    ];
    if let Some(c) = &content {
        // Written by `store::emails::claim` from the email's own header list.
        match serde_json::from_str::<Vec<(String, String)>>(&c.headers_json) {
            Ok(extra) => headers.extend(extra),
            Err(e) => headers.push(("(extra headers)".into(), format!("unreadable: {e}"))),
        }
    }
    let page = view::EmailPage {
        chrome: chrome(&cfg, Some(&s), None),
        subject: content
            .as_ref()
            .map_or(row.subject.clone(), |c| c.subject.clone()),
        facts,
        headers,
        attempts,
        has_content: content.is_some(),
        text: content
            .as_ref()
            .map(|c| c.text_body.clone())
            .unwrap_or_default(),
        html_src: format!("/admin/email/html?key={}", encode(&key)),
    };
    html(200, view::render(&page)).answer()
}

/// `GET /admin/email/html?key=`: the email's HTML alone, for the sandboxed frame.
pub async fn email_html(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let d1 = env.d1(DB_BINDING)?;
    let found = match key_param(&q) {
        Some(key) => db::email_html(&d1, &key).await?,
        None => None,
    };
    let Some(body) = found else {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such email",
            "No content kept for this email.",
        )
        .answer();
    };
    Ok(Page::new(200, body)
        .with_header("content-security-policy", EMAIL_CSP)
        .with_header("x-content-type-options", "nosniff")
        .into_response()?)
}

/// The booking's guest language as the admin reads it: `es (from stripe_checkout)`, or
/// `not recorded` for bookings older than stored languages.
fn language(b: &crate::store::admin::BookingHit) -> String {
    match (&b.guest_locale, &b.guest_locale_source) {
        (Some(l), Some(s)) => format!("{l} (from {s})"),
        (Some(l), None) => l.clone(),
        _ => "not recorded (DEFAULT_GUEST_LOCALE)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(changed: Option<(i64, &str)>) -> db::TimelineRows {
        let mut booking = serde_json::json!({
            "booking_id": "BK_1", "kind": "hotel", "status": "confirmed",
            "hotel_name": "Example Harbour Hotel", "checkin": "2026-06-12", "checkout": "2026-06-15",
            "contact_email": "guest@example.com", "first_name": "Ana", "last_name": "Guest",
            "journey_version": 1, "hotel_confirmation_number": null, "prebook_id": null,
            "created_at_ms": 1_000, "updated_at_ms": 5_000,
            "guest_locale": "de", "guest_locale_source": "event"
        });
        if let Some((at, before)) = changed {
            booking["guest_locale_changed_at_ms"] = at.into();
            booking["guest_locale_before"] = before.into();
        }
        db::TimelineRows {
            booking: serde_json::from_value(booking).unwrap(),
            raw_events: vec![],
            planned: vec![],
            emails: vec![],
            holds: vec![],
            compensations: vec![],
            webhook_events: vec![],
        }
    }

    /// An explicit change of the guest's language is its own entry, at the time of the change,
    /// naming both languages; a booking whose language never changed has none.
    #[test]
    fn a_language_change_is_on_the_timeline() {
        let entries = timeline_entries(&rows(Some((4_000, "pt"))));
        let change: Vec<&Entry> = entries
            .iter()
            .filter(|e| e.title.starts_with("guest language changed"))
            .collect();
        assert_eq!(change.len(), 1);
        assert_eq!(change[0].title, "guest language changed from pt to de");
        assert_eq!(change[0].at_ms, 4_000);
        assert_eq!(change[0].kind, EntryKind::Booking);
        let none = timeline_entries(&rows(None));
        assert!(!none
            .iter()
            .any(|e| e.title.starts_with("guest language changed")));
    }
}
