//! D1 for guests' replies (migrations 0025, 0028): reply addresses, inbound messages (with the
//! sender share each counts in), conversations waiting for an answer, and the owner's answers.

use super::{changes, n, opt, s};
use crate::domain::inbound::{Counts, Inbound, SenderShare};
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement, Result};

/// The row that binds a reply token's reference to its email and booking; written with the
/// email's claim (`INSERT OR IGNORE`: a repeated claim keeps the first).
pub fn reply_address_statement(
    db: &D1Database,
    reply_ref: &str,
    booking_id: &str,
    dedupe_key: &str,
    at_ms: i64,
) -> Result<D1PreparedStatement> {
    db.prepare(
        "INSERT OR IGNORE INTO reply_addresses (reply_ref, booking_id, dedupe_key, created_at_ms) VALUES (?1, ?2, ?3, ?4)",
    )
    .bind(&[s(reply_ref), s(booking_id), s(dedupe_key), n(at_ms)])
}

/// The email a reply token names.
#[derive(Debug, Clone, Deserialize)]
pub struct ReplyAddress {
    pub booking_id: String,
    pub dedupe_key: String,
    /// The address that email was sent to (the guest's), when the email row is there.
    pub guest_email: Option<String>,
}

/// The email of `reply_ref`, if any.
pub async fn reply_address(db: &D1Database, reply_ref: &str) -> Result<Option<ReplyAddress>> {
    super::row_by(
        db,
        "SELECT r.booking_id, r.dedupe_key, e.to_addr AS guest_email FROM reply_addresses r \
         LEFT JOIN emails e ON e.dedupe_key = r.dedupe_key WHERE r.reply_ref = ?1",
        reply_ref,
    )
    .await
}

/// The counts [`crate::domain::inbound::file`] needs, in one batch: messages of `share` on
/// `booking_id`, its guest messages of `share` alerted on `day` (`YYYY-MM-DD` UTC), unmatched
/// messages of `day`.
pub async fn counts(
    db: &D1Database,
    booking_id: Option<&str>,
    share: SenderShare,
    day: &str,
) -> Result<Counts> {
    #[derive(Deserialize)]
    struct C {
        c: u32,
    }
    let b = booking_id.unwrap_or("");
    let results = db
        .batch(vec![
            db.prepare(
                "SELECT COUNT(*) AS c FROM inbound_messages WHERE booking_id = ?1 AND sender_share = ?2",
            )
            .bind(&[s(b), s(share.as_str())])?,
            db.prepare(
                "SELECT COUNT(*) AS c FROM inbound_messages WHERE booking_id = ?1 AND sender_share = ?2 AND received_day = ?3 AND alerted = 1",
            )
            .bind(&[s(b), s(share.as_str()), s(day)])?,
            db.prepare(
                "SELECT COUNT(*) AS c FROM inbound_messages WHERE kind = 'unmatched' AND received_day = ?1",
            )
            .bind(&[s(day)])?,
        ])
        .await?;
    let count = |i: usize| -> Result<u32> {
        Ok(results[i].results::<C>()?.first().map(|c| c.c).unwrap_or(0))
    };
    Ok(Counts {
        share,
        on_booking: count(0)?,
        alerted_today: count(1)?,
        unmatched_today: count(2)?,
    })
}

/// Whether any of `ids` (Message-IDs without `<>`) is the Message-ID of an email of ours about
/// `booking_id`: the thread headers' second signal (never what picks a booking).
pub async fn thread_is_ours(db: &D1Database, booking_id: &str, ids: &[String]) -> Result<bool> {
    if ids.is_empty() {
        return Ok(false);
    }
    let list = serde_json::to_string(&ids.iter().map(|i| format!("<{i}>")).collect::<Vec<_>>())?;
    let found = db
        .prepare(
            "SELECT 1 AS one FROM emails WHERE booking_id = ?1 AND message_id IN (SELECT value FROM json_each(?2)) LIMIT 1",
        )
        .bind(&[s(booking_id), s(&list)])?
        .first::<serde_json::Value>(None)
        .await?;
    Ok(found.is_some())
}

/// One message to keep.
pub struct NewMessage<'a> {
    pub dedupe: &'a str,
    /// `guest`, `auto` or `unmatched`.
    pub kind: &'a str,
    pub booking_id: Option<&'a str>,
    pub answers_key: Option<&'a str>,
    pub reason: Option<&'a str>,
    pub envelope_to: &'a str,
    pub message: &'a Inbound,
    pub thread_ours: bool,
    pub raw_size: u64,
    pub alert: bool,
    pub at_ms: i64,
    pub day: &'a str,
    /// The share it counts in (`sender_share`).
    pub share: SenderShare,
}

/// Keeps one message (a redelivery of the same `dedupe` is ignored) and, for a guest's message,
/// marks its conversation waiting for an answer, in one batch. Returns the new row's id, `None`
/// for a redelivery.
pub async fn insert(db: &D1Database, m: &NewMessage<'_>) -> Result<Option<i64>> {
    #[derive(Deserialize)]
    struct Id {
        id: i64,
    }
    let msg = m.message;
    let thread: Vec<&String> = msg.in_reply_to.iter().chain(&msg.references).collect();
    let insert = db
        .prepare(
            "INSERT INTO inbound_messages (dedupe, kind, booking_id, answers_key, auto_kind, reason, envelope_from, envelope_to, \
             from_addr, from_name, subject, date_ms, message_id, thread_ids_json, thread_ours, text_body, quoted_removed, note, \
             auth_json, attachments_json, raw_size, alerted, received_at_ms, received_day, sender_share) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25) \
             ON CONFLICT(dedupe) DO NOTHING RETURNING id",
        )
        .bind(&[
            s(m.dedupe),
            s(m.kind),
            opt(m.booking_id),
            opt(m.answers_key),
            opt(msg.auto.map(|a| a.as_str())),
            opt(m.reason),
            s(&msg.envelope_from),
            s(m.envelope_to),
            s(&msg.from),
            s(&msg.from_name),
            s(&msg.subject),
            msg.date_ms.map_or(wasm_bindgen::JsValue::NULL, n),
            opt(msg.message_id.as_deref()),
            s(&serde_json::to_string(&thread)?),
            n(i64::from(m.thread_ours)),
            s(&msg.text),
            n(i64::from(msg.quoted_removed)),
            opt(msg.note.as_deref()),
            s(&serde_json::to_string(&msg.auth)?),
            s(&serde_json::to_string(&serde_json::json!({
                "listed": msg.attachments,
                "more": msg.attachments_more,
            }))?),
            n(m.raw_size as i64),
            n(i64::from(m.alert)),
            n(m.at_ms),
            s(m.day),
            s(m.share.as_str()),
        ])?;
    let mut batch = vec![insert];
    if m.kind == "guest" {
        if let Some(booking) = m.booking_id {
            // Only when the insert above was new (a redelivery leaves the conversation as it is).
            batch.push(
                db.prepare(
                    "INSERT INTO conversations (booking_id, last_guest_at_ms, last_message_id, waiting) \
                     SELECT ?1, ?2, id, 1 FROM inbound_messages WHERE dedupe = ?3 AND received_at_ms = ?2 \
                     ON CONFLICT(booking_id) DO UPDATE SET last_guest_at_ms = excluded.last_guest_at_ms, \
                     last_message_id = excluded.last_message_id, waiting = 1 \
                     WHERE excluded.last_message_id > conversations.last_message_id",
                )
                .bind(&[s(booking), n(m.at_ms), s(m.dedupe)])?,
            );
        }
    }
    let results = db.batch(batch).await?;
    Ok(results[0].results::<Id>()?.first().map(|r| r.id))
}

/// Clears the alert mark of a message whose alert could not be handed over (so the day's count
/// stays true).
pub async fn unmark_alerted(db: &D1Database, id: i64) -> Result<()> {
    db.prepare("UPDATE inbound_messages SET alerted = 0 WHERE id = ?1")
        .bind(&[n(id)])?
        .run()
        .await?;
    Ok(())
}

/// One kept message as the admin pages read it.
#[derive(Debug, Clone, Deserialize)]
pub struct MessageRow {
    pub id: i64,
    pub kind: String,
    pub booking_id: Option<String>,
    pub answers_key: Option<String>,
    pub auto_kind: Option<String>,
    pub reason: Option<String>,
    pub envelope_to: String,
    pub from_addr: String,
    pub from_name: String,
    pub subject: String,
    pub message_id: Option<String>,
    pub thread_ids_json: String,
    pub thread_ours: i64,
    pub text_body: String,
    pub quoted_removed: i64,
    pub note: Option<String>,
    pub auth_json: String,
    pub attachments_json: String,
    pub raw_size: i64,
    pub alerted: i64,
    pub received_at_ms: i64,
}

const MESSAGE_COLUMNS: &str = "id, kind, booking_id, answers_key, auto_kind, reason, envelope_to, from_addr, from_name, subject, \
     message_id, thread_ids_json, thread_ours, text_body, quoted_removed, note, auth_json, attachments_json, raw_size, alerted, received_at_ms";

/// A booking's messages, oldest first (at most `limit`, the newest ones).
pub async fn of_booking(db: &D1Database, booking_id: &str, limit: u32) -> Result<Vec<MessageRow>> {
    let sql = format!(
        "SELECT * FROM (SELECT {MESSAGE_COLUMNS} FROM inbound_messages WHERE booking_id = ?1 \
         ORDER BY received_at_ms DESC LIMIT ?2) ORDER BY received_at_ms, id"
    );
    db.prepare(&sql)
        .bind(&[s(booking_id), n(i64::from(limit))])?
        .all()
        .await?
        .results()
}

/// One message by id.
pub async fn message(db: &D1Database, id: i64) -> Result<Option<MessageRow>> {
    let sql = format!("SELECT {MESSAGE_COLUMNS} FROM inbound_messages WHERE id = ?1");
    db.prepare(&sql).bind(&[n(id)])?.first(None).await
}

/// Unmatched messages, newest first (at most `limit`).
pub async fn unmatched(db: &D1Database, limit: u32) -> Result<Vec<MessageRow>> {
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS} FROM inbound_messages INDEXED BY inbound_by_kind WHERE kind = 'unmatched' \
         ORDER BY received_day DESC, id DESC LIMIT ?1"
    );
    db.prepare(&sql)
        .bind(&[n(i64::from(limit))])?
        .all()
        .await?
        .results()
}

/// One conversation waiting for the owner, with its newest guest message.
#[derive(Debug, Clone, Deserialize)]
pub struct WaitingRow {
    pub booking_id: String,
    pub last_guest_at_ms: i64,
    pub from_addr: String,
    pub from_name: String,
    pub subject: String,
    pub text_body: String,
    pub hotel_name: Option<String>,
    pub checkin: Option<String>,
}

/// Conversations waiting for an answer, oldest first (at most `limit`).
pub async fn waiting(db: &D1Database, limit: u32) -> Result<Vec<WaitingRow>> {
    db.prepare(
        "SELECT c.booking_id, c.last_guest_at_ms, m.from_addr, m.from_name, m.subject, substr(m.text_body, 1, 300) AS text_body, \
         b.hotel_name, b.checkin \
         FROM conversations c JOIN inbound_messages m ON m.id = c.last_message_id \
         LEFT JOIN bookings b ON b.booking_id = c.booking_id \
         WHERE c.waiting = 1 ORDER BY c.last_guest_at_ms LIMIT ?1",
    )
    .bind(&[n(i64::from(limit))])?
    .all()
    .await?
    .results()
}

/// Whether `booking_id`'s conversation waits for an answer.
pub async fn is_waiting(db: &D1Database, booking_id: &str) -> Result<bool> {
    Ok(db
        .prepare("SELECT 1 AS one FROM conversations WHERE booking_id = ?1 AND waiting = 1")
        .bind(&[s(booking_id)])?
        .first::<serde_json::Value>(None)
        .await?
        .is_some())
}

/// The owner's answers on a booking, oldest first.
#[derive(Debug, Clone, Deserialize)]
pub struct AnswerRow {
    pub dedupe_key: String,
    pub text_body: String,
    pub answered_at_ms: i64,
}

pub async fn answers(db: &D1Database, booking_id: &str, limit: u32) -> Result<Vec<AnswerRow>> {
    db.prepare(
        "SELECT * FROM (SELECT dedupe_key, text_body, answered_at_ms FROM conversation_answers WHERE booking_id = ?1 \
         ORDER BY answered_at_ms DESC LIMIT ?2) ORDER BY answered_at_ms",
    )
    .bind(&[s(booking_id), n(i64::from(limit))])?
    .all()
    .await?
    .results()
}

/// The statements that record the owner's answer (run in the answer email's claim batch): the
/// words as written, and the conversation no longer waiting.
pub fn answer_statements(
    db: &D1Database,
    dedupe_key: &str,
    booking_id: &str,
    answers_message_id: Option<i64>,
    text: &str,
    at_ms: i64,
) -> Result<Vec<D1PreparedStatement>> {
    Ok(vec![
        db.prepare(
            "INSERT OR IGNORE INTO conversation_answers (dedupe_key, booking_id, answers_message_id, text_body, answered_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(&[
            s(dedupe_key),
            s(booking_id),
            answers_message_id.map_or(wasm_bindgen::JsValue::NULL, n),
            s(text),
            n(at_ms),
        ])?,
        done_statement(db, booking_id, at_ms)?,
    ])
}

/// The conversation of `booking_id` no longer waits (answered, or the owner said no answer is
/// needed).
pub fn done_statement(
    db: &D1Database,
    booking_id: &str,
    at_ms: i64,
) -> Result<D1PreparedStatement> {
    db.prepare("UPDATE conversations SET waiting = 0, last_answer_at_ms = ?2 WHERE booking_id = ?1")
        .bind(&[s(booking_id), n(at_ms)])
}

/// Marks a conversation done without an answer; `true` when it was waiting.
pub async fn mark_done(db: &D1Database, booking_id: &str, at_ms: i64) -> Result<bool> {
    let r = done_statement(db, booking_id, at_ms)?.run().await?;
    Ok(changes(&r) > 0)
}

/// A booking's facts for the owner's alert and the answer; `None` when the booking is unknown.
/// The guest's name comes from the stored details (`holder.name`, as the hotel and flight
/// journeys store it), the address from the contact.
pub async fn booking_facts(
    db: &D1Database,
    booking_id: &str,
) -> Result<Option<crate::domain::render::conversation::BookingFacts>> {
    let Some(r) = super::bookings::summary(db, booking_id).await? else {
        return Ok(None);
    };
    let details: serde_json::Value = serde_json::from_str(&r.details_json).unwrap_or_default();
    let name = |part: &str| {
        details
            .pointer(&format!("/holder/name/{part}"))
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let first = name("first_name");
    Ok(Some(crate::domain::render::conversation::BookingFacts {
        booking_id: booking_id.to_string(),
        guest_name: format!("{first} {}", name("last_name")).trim().to_string(),
        guest_first_name: first,
        guest_email: r.contact_email,
        hotel_name: r.hotel_name.unwrap_or_default(),
        checkin: r.checkin.unwrap_or_default(),
        checkout: r.checkout.unwrap_or_default(),
        status: r.status,
    }))
}
