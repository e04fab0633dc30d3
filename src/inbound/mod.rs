//! The Worker's `email()` handler: mail Email Routing delivers for `reply+*@REPLY_DOMAIN`
//! (<https://developers.cloudflare.com/email-routing/email-workers/runtime-api/>).
//!
//! One message: read at most `INBOUND_READ_MAX_BYTES` of it, read it
//! ([`crate::domain::inbound::read`]), check the recipient's reply token and find the email it
//! names (the token decides; the `From` header never picks a booking), file it
//! ([`crate::domain::inbound::file`]) and carry that out: keep it in D1 on its booking or apart as
//! unmatched, alert the owner at once for a guest's message within the day's bound, or refuse it
//! back to the sending server with `setReject` and a reason (a permanent SMTP error the sender
//! sees). A redelivery of a kept message (same recipient and Message-ID) changes nothing.
//!
//! A failure to write D1 is returned as an error: the handler throws and the message is not
//! accepted, so the sending server keeps it and tries again instead of it being lost.

use crate::config::DB_BINDING;
use crate::domain::inbound::reply_token;
use crate::domain::inbound::{self, Filing, Unmatched};
use crate::domain::render::conversation::{owner_guest_message, BookingFacts, GuestMessage};
use crate::outbox::client;
use crate::platform;
use crate::store;
use futures::StreamExt;
use sha2::{Digest, Sha256};
use worker::{Env, ForwardableEmailMessage, Result};

/// Receives one message (the `#[event(email)]` entry calls this).
pub async fn receive(message: &ForwardableEmailMessage, env: &Env) -> Result<()> {
    let cfg = platform::config_or_err(env)?;
    let now = platform::now_ms();
    let replies = &cfg.replies;
    let envelope_to = crate::domain::basics::text::header_value(&message.to(), 254);
    let raw_size = message.raw_size().max(0.0) as u64;
    let raw = read_at_most(message, replies.limits.read_max_bytes).await?;
    let read = inbound::read_trusting(
        &raw,
        &message.from(),
        raw_size.max(raw.len() as u64),
        &replies.authserv_id,
    );
    let db = env.d1(DB_BINDING)?;

    let matched = match reply_token::verify(
        replies.signing_key.as_bytes(),
        &replies.domain,
        &envelope_to,
        now,
        replies.token_ttl_ms,
    ) {
        Err(e) => Err(Unmatched::Token(e.to_string())),
        Ok(claims) => match store::inbound::reply_address(&db, &claims.email_ref).await? {
            Some(a) if claims.names_booking(&a.booking_id) => Ok(a),
            _ => Err(Unmatched::UnknownEmail),
        },
    };
    let booking = matched.as_ref().ok().map(|a| a.booking_id.clone());
    let share = inbound::share_of(
        &read,
        matched.as_ref().ok().and_then(|a| a.guest_email.as_deref()),
    );
    let day = day_of(now);
    let counts = store::inbound::counts(&db, booking.as_deref(), share, &day).await?;
    let filing = inbound::file(
        matched.as_ref().map(|_| ()).map_err(Clone::clone),
        &read,
        counts,
        replies.limits,
    );
    let (kind, alert, reason) = match &filing {
        Filing::Refuse(reason) => {
            worker::console_log!("inbound mail to {envelope_to} refused: {reason}");
            message.set_reject(reason);
            return Ok(());
        }
        Filing::Guest { alert } => ("guest", *alert, None),
        Filing::Auto(_) => ("auto", false, None),
        Filing::Unmatched(why) => ("unmatched", false, Some(why.reason())),
    };
    let thread_ours = match &booking {
        Some(b) => {
            let ids: Vec<String> = read
                .in_reply_to
                .iter()
                .chain(&read.references)
                .cloned()
                .collect();
            store::inbound::thread_is_ours(&db, b, &ids).await?
        }
        None => false,
    };
    let dedupe = {
        let mut h = Sha256::new();
        h.update(envelope_to.to_ascii_lowercase().as_bytes());
        h.update(b"\n");
        match &read.message_id {
            Some(id) => h.update(id.as_bytes()),
            None => h.update(&raw),
        }
        hex::encode(h.finalize())
    };
    let answers_key = matched.as_ref().ok().map(|a| a.dedupe_key.as_str());
    let Some(id) = store::inbound::insert(
        &db,
        &store::inbound::NewMessage {
            dedupe: &dedupe,
            kind,
            booking_id: booking.as_deref(),
            answers_key,
            reason: reason.as_deref(),
            envelope_to: &envelope_to,
            message: &read,
            thread_ours,
            raw_size,
            alert,
            at_ms: now,
            day: &day,
            share,
        },
    )
    .await?
    else {
        worker::console_log!("inbound mail to {envelope_to}: a redelivery, already kept");
        return Ok(());
    };
    worker::console_log!(
        "inbound mail {id} to {envelope_to}: {kind}{}",
        if alert { ", owner alerted" } else { "" }
    );
    if let (true, Some(b)) = (alert, booking) {
        if let Err(e) = alert_owner(env, &cfg, &db, id, &b, &read, now).await {
            // Kept on the booking and listed as waiting; the digest counts it. The day's alert
            // count stays true.
            worker::console_error!("owner alert for inbound mail {id} failed: {e}");
            store::inbound::unmark_alerted(&db, id).await?;
        }
    }
    Ok(())
}

/// The raw message, at most `max` bytes of it (the rest of the stream is left unread).
async fn read_at_most(message: &ForwardableEmailMessage, max: u64) -> Result<Vec<u8>> {
    let mut stream = message.raw_byte_stream();
    let mut raw = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        let room = (max as usize).saturating_sub(raw.len());
        raw.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if raw.len() as u64 >= max {
            break;
        }
    }
    Ok(raw)
}

/// The owner's alert about a guest's message `id` on `booking_id`, through the send-once path.
async fn alert_owner(
    env: &Env,
    cfg: &crate::config::Config,
    db: &worker::D1Database,
    id: i64,
    booking_id: &str,
    read: &inbound::Inbound,
    now: i64,
) -> Result<()> {
    let facts = store::inbound::booking_facts(db, booking_id)
        .await?
        .unwrap_or_else(|| BookingFacts {
            booking_id: booking_id.to_string(),
            ..BookingFacts::default()
        });
    let mut link = cfg.public_link("/admin/booking");
    link.query_pairs_mut().append_pair("id", booking_id);
    link.set_fragment(Some("conversation"));
    let message = GuestMessage {
        id,
        from: &read.from,
        from_name: &read.from_name,
        subject: &read.subject,
        text: &read.text,
        attachments: &read.attachments,
        auth: &read.auth,
        note: read.note.as_deref(),
        link: link.to_string(),
    };
    let email =
        owner_guest_message(&message, &facts, cfg.owner_inbox()).map_err(platform::rust_err)?;
    client::deliver(env, &email, now).await?;
    Ok(())
}

/// `YYYY-MM-DD` (UTC) of `ms`.
fn day_of(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}
