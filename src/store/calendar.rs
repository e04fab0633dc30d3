//! `calendar_stamps`: the SEQUENCE and DTSTAMP of each calendar event of each email, allocated
//! when the email is handed over (`crate::outbox::client::deliver_with`), so they rise strictly
//! per UID across every email of a booking, whatever step or journey sends it (RFC 5546 §2.1.5;
//! the rule is in `crate::domain::email::calendar`'s module docs).
//!
//! One row per (UID, dedupe key): the first hand-over of an email allocates, every retry of it
//! reads the same stamp back (`ON CONFLICT DO NOTHING`), so a re-sent email carries the same
//! bytes. Each allocation is one statement, and the email's statements run in one D1 batch (one
//! transaction): two emails of one UID never get the same SEQUENCE.

use super::{n, opt, s};
use crate::domain::outbox::outgoing::OutgoingEmail;
use worker::{D1Database, Result};

#[derive(serde::Deserialize)]
struct Stamp {
    sequence: i64,
    dtstamp_ms: i64,
}

/// Stamps every calendar part of `email` (dedupe key, booking) received at `at_ms` (ms UTC):
/// the UID's next SEQUENCE (0 for its first email) and a DTSTAMP at `at_ms` to the second, or one
/// second after the UID's last DTSTAMP when that is not earlier. Idempotent per email. An email
/// without parts reads and writes nothing.
pub async fn stamp(db: &D1Database, email: &mut OutgoingEmail, at_ms: i64) -> Result<()> {
    let uids: Vec<(String, &'static str)> = email
        .calendars
        .iter()
        .filter_map(|p| p.uid().map(|u| (u.to_string(), p.method.as_str())))
        .collect();
    if uids.is_empty() {
        return Ok(());
    }
    let key = email.dedupe_key.as_str();
    let second = at_ms - at_ms.rem_euclid(1000);
    let mut batch = Vec::with_capacity(uids.len() * 2);
    for (uid, method) in &uids {
        batch.push(
            db.prepare(
                "INSERT INTO calendar_stamps (uid, dedupe_key, booking_id, sequence, dtstamp_ms, method, created_at_ms) \
                 VALUES (?1, ?2, ?3, \
                   COALESCE((SELECT sequence FROM calendar_stamps WHERE uid = ?1 ORDER BY sequence DESC LIMIT 1) + 1, 0), \
                   MAX(?4, COALESCE((SELECT dtstamp_ms FROM calendar_stamps WHERE uid = ?1 ORDER BY sequence DESC LIMIT 1) + 1000, ?4)), \
                   ?5, ?6) \
                 ON CONFLICT (uid, dedupe_key) DO NOTHING",
            )
            .bind(&[
                s(uid),
                s(key),
                opt(email.booking_id.as_deref()),
                n(second),
                s(method),
                n(at_ms),
            ])?,
        );
        batch.push(
            db.prepare(
                "SELECT sequence, dtstamp_ms FROM calendar_stamps WHERE uid = ?1 AND dedupe_key = ?2",
            )
            .bind(&[s(uid), s(key)])?,
        );
    }
    let results = db.batch(batch).await?;
    let mut stamps = Vec::with_capacity(uids.len());
    for r in results.iter().skip(1).step_by(2) {
        let row = r.results::<Stamp>()?.into_iter().next().ok_or_else(|| {
            worker::Error::RustError(format!("calendar stamp of {key} not found after insert"))
        })?;
        stamps.push(row);
    }
    let mut stamps = stamps.into_iter();
    let parts = std::mem::take(&mut email.calendars);
    email.calendars = parts
        .into_iter()
        .map(|p| match p.uid() {
            Some(_) => match stamps.next() {
                Some(st) => p.stamped(u32::try_from(st.sequence).unwrap_or(0), st.dtstamp_ms),
                None => p,
            },
            None => p,
        })
        .collect();
    Ok(())
}
