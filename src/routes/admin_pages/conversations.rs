//! Guests' replies in the admin: the messages on a booking's timeline and its answer form, the
//! page of conversations waiting for an answer (with unmatched mail), and the two forms:
//! `POST /admin/booking/answer` (`id`, `form_id`, `text`) sends the owner's answer as a guest
//! email through the outbox's send-once path; `POST /admin/booking/done` (`id`) marks a
//! conversation as needing no answer.

use super::*;
use crate::domain::admin::timeline::{Entry, EntryKind};
use crate::domain::inbound::{AuthVerdict, ATTACHMENTS_MAX};
use crate::domain::render::admin::ConversationForm;
use crate::domain::render::admin_conversations::{ConversationsPage, UnmatchedLine, WaitingLine};
use crate::domain::render::conversation::{self as render, auth_summary};
use crate::store::inbound::{self as inbox, MessageRow};

/// Messages and answers of one booking read for its page.
const PER_BOOKING: u32 = 200;
/// Lines of the conversations page.
const PAGE_ROWS: u32 = 100;

/// The timeline entries of a booking's messages and answers, and its answer form.
pub(super) async fn booking_part(
    cfg: &Config,
    d1: &worker::D1Database,
    booking_id: &str,
) -> Result<(Vec<Entry>, ConversationForm), AppError> {
    let messages = inbox::of_booking(d1, booking_id, PER_BOOKING).await?;
    let answers = inbox::answers(d1, booking_id, PER_BOOKING).await?;
    let waiting = inbox::is_waiting(d1, booking_id).await?;
    let facts = inbox::booking_facts(d1, booking_id)
        .await?
        .unwrap_or_default();
    let locale =
        crate::store::guest_locale::of_booking(d1, booking_id, cfg.default_guest_locale).await?;
    let last_guest = messages.iter().rev().find(|m| m.kind == "guest");
    let mut entries: Vec<Entry> = messages.iter().map(message_entry).collect();
    entries.extend(answers.iter().map(|a| {
        Entry::new(
            a.answered_at_ms,
            EntryKind::Answer,
            "your answer to the guest".into(),
            vec![],
            "answered".into(),
        )
        .with_link(super::outbox::email_link(&a.dedupe_key))
        .with_body(a.text_body.clone(), None)
    }));
    let subject = match last_guest
        .map(|m| m.subject.trim())
        .filter(|s| !s.is_empty())
    {
        Some(s) => format!("Re: {s}"),
        None => cfg
            .branding
            .in_locale(locale)
            .tr()
            .t1("answer-subject", "ref", booking_id),
    };
    Ok((
        entries,
        ConversationForm {
            booking_id: booking_id.to_string(),
            form_id: format!("{:016x}", crate::platform::random_u64()),
            messages: messages.len(),
            waiting,
            to: facts.guest_email,
            language: locale.id().to_string(),
            subject,
            replies_off: !cfg.replies.enabled(),
        },
    ))
}

/// One kept message as a timeline entry: who, what, the checks, the attachments, the words.
fn message_entry(m: &MessageRow) -> Entry {
    let who = if m.from_name.is_empty() {
        m.from_addr.clone()
    } else {
        format!("{} <{}>", m.from_name, m.from_addr)
    };
    let mut facts = Vec::new();
    if let Some(kind) = m
        .auto_kind
        .as_deref()
        .and_then(crate::domain::inbound::AutoKind::parse)
    {
        facts.push(format!(
            "{}: kept, nobody alerted, no answer expected",
            kind.describe()
        ));
    } else if m.alerted == 1 {
        facts.push("you were alerted at once".into());
    } else {
        facts.push("not alerted (the day's alerts for this booking were used up)".into());
    }
    let auth: Vec<AuthVerdict> = serde_json::from_str(&m.auth_json).unwrap_or_default();
    facts.push(format!("sender checks: {}", auth_summary(&auth)));
    if let Some(key) = &m.answers_key {
        facts.push(format!(
            "answers {key}{}",
            if m.thread_ours == 1 {
                " (its thread headers agree)"
            } else {
                ""
            }
        ));
    }
    facts.extend(attachment_lines(&m.attachments_json));
    if m.quoted_removed == 1 {
        facts.push("quoted history removed".into());
    }
    if let Some(note) = &m.note {
        facts.push(format!("note: {note}"));
    }
    Entry::new(
        m.received_at_ms,
        EntryKind::GuestMessage,
        format!("{who}: {}", m.subject),
        facts,
        if m.kind == "auto" {
            "automatic".into()
        } else {
            "received".into()
        },
    )
    .with_body(m.text_body.clone(), None)
}

fn attachment_lines(json: &str) -> Vec<String> {
    #[derive(serde::Deserialize, Default)]
    struct Listed {
        #[serde(default)]
        listed: Vec<crate::domain::inbound::Attachment>,
        #[serde(default)]
        more: usize,
    }
    let l: Listed = serde_json::from_str(json).unwrap_or_default();
    let mut out: Vec<String> = l
        .listed
        .iter()
        .take(ATTACHMENTS_MAX)
        .map(|a| {
            format!(
                "attachment (not kept): {} · {} · {} bytes",
                a.name, a.content_type, a.size
            )
        })
        .collect();
    if l.more > 0 {
        out.push(format!("and {} more attachment(s)", l.more));
    }
    out
}

/// `GET /admin/conversations`: conversations waiting for an answer, and unmatched mail.
pub async fn conversations(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let d1 = env.d1(DB_BINDING)?;
    let waiting = inbox::waiting(&d1, PAGE_ROWS).await?;
    let unmatched = inbox::unmatched(&d1, PAGE_ROWS).await?;
    let page = ConversationsPage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        waiting: waiting
            .into_iter()
            .map(|w| WaitingLine {
                link: format!("/admin/booking?id={}#conversation", encode(&w.booking_id)),
                guest: if w.from_name.is_empty() {
                    w.from_addr.clone()
                } else {
                    format!("{} <{}>", w.from_name, w.from_addr)
                },
                trip: [
                    w.hotel_name.unwrap_or_default(),
                    w.checkin.unwrap_or_default(),
                ]
                .iter()
                .filter(|t| !t.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
                since: when(w.last_guest_at_ms),
                subject: w.subject,
                excerpt: w.text_body,
                booking_id: w.booking_id,
            })
            .collect(),
        unmatched: unmatched
            .into_iter()
            .map(|u| UnmatchedLine {
                when: when(u.received_at_ms),
                from: u.from_addr,
                to: u.envelope_to,
                subject: u.subject,
                reason: u.reason.unwrap_or_default(),
                kind: u
                    .auto_kind
                    .as_deref()
                    .and_then(crate::domain::inbound::AutoKind::parse)
                    .map_or("person", |k| k.describe())
                    .to_string(),
                text: u.text_body.chars().take(600).collect(),
            })
            .collect(),
        replies_off: !cfg.replies.enabled(),
    };
    html(200, view::render(&page)).answer()
}

fn booking_path(id: &str) -> String {
    format!("/admin/booking?id={}", encode(id))
}

/// `POST /admin/booking/answer`: the owner's answer, sent as a guest email (booking rank, content
/// lock, the guest's language around the owner's words, a reply address of its own) through the
/// send-once path, recorded on the timeline in the same D1 batch as its claim.
pub async fn booking_answer(mut req: Request, env: &Env) -> Answer {
    let (s, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let field = |name: &str| {
        f.get(name)
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    let (id, form_id) = (field("id"), field("form_id"));
    // As the guest reads it: a form's CRLF line breaks as LF.
    let text = field("text").replace("\r\n", "\n");
    let bad = |title: &str, text: &str| message(&cfg, Some(&s), 400, title, text).answer();
    if form_id.len() < 8
        || form_id.len() > 64
        || !form_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return bad(
            "Not sent",
            "The form is out of date (reload the booking's page).",
        );
    }
    let d1 = env.d1(DB_BINDING)?;
    let Some(facts) = inbox::booking_facts(&d1, &id).await? else {
        return no_booking(&cfg, &s, &id);
    };
    let Ok(to) = EmailAddress::parse(&facts.guest_email) else {
        return bad("Not sent", "The booking has no usable guest address.");
    };
    let messages = inbox::of_booking(&d1, &id, PER_BOOKING).await?;
    let last_guest = messages.iter().rev().find(|m| m.kind == "guest");
    let references: Vec<String> = last_guest
        .and_then(|m| serde_json::from_str(&m.thread_ids_json).ok())
        .unwrap_or_default();
    let locale = crate::store::guest_locale::of_booking(&d1, &id, cfg.default_guest_locale).await?;
    let answer = render::Answer {
        form_id: &form_id,
        text: &text,
        guest_subject: last_guest.map(|m| m.subject.as_str()),
        in_reply_to: last_guest.and_then(|m| m.message_id.as_deref()),
        references: &references,
    };
    let email =
        match render::conversation_answer(&answer, &facts, &to, &cfg.branding.in_locale(locale)) {
            Ok(e) => e,
            Err(e) => return bad("Not sent", &e.to_string()),
        };
    let now = now_ms();
    let key = email.dedupe_key.as_str().to_string();
    let answers_id = last_guest.map(|m| m.id);
    let words = text.clone();
    let booking = id.clone();
    crate::outbox::client::deliver_with(env, &email, now, |db| {
        inbox::answer_statements(db, &key, &booking, answers_id, &words, now)
    })
    .await?;
    redirect(&format!(
        "{}&done=answered&key={}#conversation",
        booking_path(&id),
        encode(&id)
    ))
    .answer()
}

/// `POST /admin/booking/done`: the conversation needs no answer (it leaves the waiting list until
/// the guest writes again).
pub async fn booking_done(mut req: Request, env: &Env) -> Answer {
    let (_s, f) = form(&mut req, env).await?;
    let id = trimmed(&f, "id");
    let d1 = env.d1(DB_BINDING)?;
    inbox::mark_done(&d1, &id, now_ms()).await?;
    back(&booking_path(&id), "conversation_done", Some(&id))
}
