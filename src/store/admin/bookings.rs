//! The admin's reads of bookings: the search, a booking's timeline (one batch), an email as sent.

use super::*;

// ---------------------------------------------------------------------------------------------
// Bookings

/// A booking as the search lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct BookingHit {
    pub booking_id: String,
    pub kind: String,
    pub status: String,
    pub hotel_name: Option<String>,
    pub checkin: Option<String>,
    pub checkout: Option<String>,
    pub contact_email: String,
    pub first_name: String,
    pub last_name: String,
    pub journey_version: i64,
    pub hotel_confirmation_number: Option<String>,
    pub prebook_id: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// The guest's language (BCP 47 tag) and who stated it (`event`, `stripe_checkout`,
    /// `default`); `None` for bookings recorded before languages were stored.
    #[serde(default)]
    pub guest_locale: Option<String>,
    #[serde(default)]
    pub guest_locale_source: Option<String>,
    /// The last explicit change of the guest's language: when (ms UTC) and the language it
    /// replaced; `None` while it never changed.
    #[serde(default)]
    pub guest_locale_changed_at_ms: Option<i64>,
    #[serde(default)]
    pub guest_locale_before: Option<String>,
}

const BOOKING_COLUMNS: &str = "b.booking_id, b.kind, b.status, b.hotel_name, b.checkin, b.checkout, b.contact_email, \
     c.first_name, c.last_name, b.journey_version, b.hotel_confirmation_number, b.prebook_id, b.created_at_ms, b.updated_at_ms, \
     b.guest_locale, b.guest_locale_source, b.guest_locale_changed_at_ms, b.guest_locale_before";

/// Bookings matching `q` (at most 50, newest first): its booking id exactly, a guest email
/// (case-insensitive), a last name or a full name "first last" (case-insensitive). An empty `q`
/// lists the newest 50.
pub async fn search_bookings(db: &D1Database, q: &str) -> Result<Vec<BookingHit>> {
    let q = q.trim();
    let sql = if q.is_empty() {
        format!(
            "SELECT {BOOKING_COLUMNS} FROM bookings b JOIN contacts c ON c.email = b.contact_email \
             ORDER BY b.created_at_ms DESC LIMIT 50"
        )
    } else {
        format!(
            // Each way of finding a booking through its own index (the primary key,
            // bookings_by_contact, contacts_by_last_name_nocase, contacts_by_full_name_nocase),
            // so a search reads the rows it finds, not the whole table.
            "SELECT {BOOKING_COLUMNS} FROM bookings b JOIN contacts c ON c.email = b.contact_email \
             WHERE b.booking_id IN ( \
               SELECT booking_id FROM bookings WHERE booking_id = ?1 \
               UNION SELECT booking_id FROM bookings WHERE contact_email = lower(?1) \
               UNION SELECT b2.booking_id FROM contacts c2 JOIN bookings b2 ON b2.contact_email = c2.email \
                 WHERE c2.last_name = ?1 COLLATE NOCASE \
               UNION SELECT b3.booking_id FROM contacts c3 JOIN bookings b3 ON b3.contact_email = c3.email \
                 WHERE (c3.first_name || ' ' || c3.last_name) = ?1 COLLATE NOCASE) \
             ORDER BY b.created_at_ms DESC LIMIT 50"
        )
    };
    let binds = if q.is_empty() { vec![] } else { vec![s(q)] };
    db.prepare(&sql).bind(&binds)?.all().await?.results()
}

/// A raw event as the timeline and the events page show it.
#[derive(Debug, Clone, Deserialize)]
pub struct RawEventRow {
    pub id: i64,
    pub source: String,
    pub event_id: Option<String>,
    pub event_name: Option<String>,
    pub status: String,
    pub error: Option<String>,
    /// The first [`BODY_EXCERPT_CHARS`] characters of the stored body (cut in SQL: a page never
    /// loads a whole body); the whole one is `GET /admin/events/body?id=<id>`.
    pub body: String,
    /// The stored body's length, characters.
    pub body_chars: i64,
    pub received_at_ms: i64,
    pub instance_id: Option<String>,
    pub booking_id: Option<String>,
    /// The generic partner that signed it, if any.
    #[serde(default)]
    pub partner: Option<String>,
    /// Why the event was refused (it named another owner's booking), if it was.
    #[serde(default)]
    pub refused_reason: Option<String>,
}

/// Characters of a raw body shown on an admin page
/// ([`crate::domain::admin::timeline::BODY_EXCERPT_CHARS`], the figure the pages' byte budget is
/// worked out from; `RAW_EVENT_COLUMNS` spells it in its `substr`).
pub const BODY_EXCERPT_CHARS: i64 = crate::domain::admin::timeline::BODY_EXCERPT_CHARS as i64;

pub(super) const RAW_EVENT_COLUMNS: &str =
    "id, source, event_id, event_name, status, error, substr(body, 1, 500) AS body, length(body) AS body_chars, \
     received_at_ms, instance_id, booking_id, partner, refused_reason";

/// A planned send and its decision.
#[derive(Debug, Clone, Deserialize)]
pub struct PlannedRow {
    pub kind: String,
    pub journey_version: i64,
    pub due_at_ms: Option<i64>,
    pub status: String,
    pub reason: Option<String>,
    pub zone: Option<String>,
    pub planned_at_ms: i64,
    pub decided_at_ms: Option<i64>,
    /// When it was moved to hotel time (its hotel's zone became known after it was planned in
    /// UTC), ms UTC, and its local time before.
    #[serde(default)]
    pub replanned_at_ms: Option<i64>,
    #[serde(default)]
    pub replanned_from: Option<String>,
}

/// A card-testing hold with its checkout's facts.
#[derive(Debug, Clone, Deserialize)]
pub struct HoldRow {
    pub hold_id: String,
    pub status: String,
    pub reason: String,
    pub prebook_id: String,
    pub created_at_ms: i64,
    pub action: Option<String>,
    pub acted_at_ms: Option<i64>,
    pub email: Option<String>,
    pub guest_name: Option<String>,
    pub hotel_id: Option<String>,
    pub checkin: Option<String>,
    pub checkout: Option<String>,
    pub decline_code: Option<String>,
}

pub(super) const HOLD_COLUMNS: &str =
    "h.hold_id, h.status, h.reason, h.prebook_id, h.created_at_ms, h.action, h.acted_at_ms, \
     a.email, a.guest_name, a.hotel_id, a.checkin, a.checkout, a.decline_code";

/// A compensation, as the timeline shows it.
#[derive(Debug, Clone, Deserialize)]
pub struct CompensationRow {
    pub compensation_id: String,
    pub cause: String,
    pub state: String,
    pub reason: String,
    pub event_name: String,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// An outbound webhook event about the booking.
#[derive(Debug, Clone, Deserialize)]
pub struct WebhookEventRow {
    pub event_id: String,
    pub event_type: String,
    pub created_at_ms: i64,
}

/// Everything a booking's timeline shows, read with one D1 batch of 7 statements (one round
/// trip), each bounded by [`MAX_PER_KIND`] rows (raw events by [`MAX_RAW_EVENTS`]).
#[derive(Debug)]
pub struct TimelineRows {
    pub booking: BookingHit,
    pub raw_events: Vec<RawEventRow>,
    pub planned: Vec<PlannedRow>,
    pub emails: Vec<EmailRow>,
    pub holds: Vec<HoldRow>,
    pub compensations: Vec<CompensationRow>,
    pub webhook_events: Vec<WebhookEventRow>,
}

/// The timeline's rows for `booking_id`, `None` when there is no such booking.
pub async fn timeline(db: &D1Database, booking_id: &str) -> Result<Option<TimelineRows>> {
    let id = s(booking_id);
    let lim = n(i64::from(MAX_PER_KIND));
    let r = db
        .batch(vec![
            stmt(
                db,
                &format!(
                    "SELECT {BOOKING_COLUMNS} FROM bookings b JOIN contacts c ON c.email = b.contact_email WHERE b.booking_id = ?1"
                ),
                std::slice::from_ref(&id),
            )?,
            stmt(
                db,
                &format!(
                    "SELECT {RAW_EVENT_COLUMNS} FROM raw_events WHERE booking_id = ?1 ORDER BY received_at_ms LIMIT ?2"
                ),
                &[id.clone(), n(i64::from(MAX_RAW_EVENTS))],
            )?,
            stmt(
                db,
                "SELECT kind, journey_version, due_at_ms, status, reason, zone, planned_at_ms, decided_at_ms, \
                 replanned_at_ms, replanned_from FROM scheduled_sends WHERE booking_id = ?1 ORDER BY planned_at_ms LIMIT ?2",
                &[id.clone(), lim.clone()],
            )?,
            stmt(
                db,
                &format!(
                    "SELECT {EMAIL_COLUMNS} FROM emails WHERE booking_id = ?1 ORDER BY created_at_ms LIMIT ?2"
                ),
                &[id.clone(), lim.clone()],
            )?,
            stmt(
                db,
                &format!(
                    "SELECT {HOLD_COLUMNS} FROM holds h LEFT JOIN checkout_attempts a ON a.prebook_id = h.prebook_id \
                     WHERE h.hold_id IN (SELECT a2.hold_id FROM checkout_attempts a2 \
                       WHERE a2.prebook_id = (SELECT prebook_id FROM bookings WHERE booking_id = ?1)) \
                     OR h.prebook_id = (SELECT prebook_id FROM bookings WHERE booking_id = ?1) LIMIT ?2"
                ),
                &[id.clone(), lim.clone()],
            )?,
            stmt(
                db,
                "SELECT compensation_id, cause, state, reason, event_name, created_at_ms, updated_at_ms \
                 FROM compensations WHERE booking_id = ?1 ORDER BY created_at_ms LIMIT ?2",
                &[id.clone(), lim.clone()],
            )?,
            stmt(
                db,
                "SELECT event_id, event_type, created_at_ms FROM webhook_events WHERE booking_id = ?1 \
                 ORDER BY created_at_ms LIMIT ?2",
                &[id, lim],
            )?,
        ])
        .await?;
    let Some(booking) = rows::<BookingHit>(r.first())?.into_iter().next() else {
        return Ok(None);
    };
    Ok(Some(TimelineRows {
        booking,
        raw_events: rows(r.get(1))?,
        planned: rows(r.get(2))?,
        emails: rows(r.get(3))?,
        holds: rows(r.get(4))?,
        compensations: rows(r.get(5))?,
        webhook_events: rows(r.get(6))?,
    }))
}

// ---------------------------------------------------------------------------------------------
// Email

/// What an email said, as kept at claim time.
#[derive(Debug, Clone, Deserialize)]
pub struct ContentRow {
    pub subject: String,
    pub text_body: String,
    pub html_body: String,
    pub headers_json: String,
}

/// One email's record and content (one batch of 2 statements); `None` for an unknown key.
pub async fn email(
    db: &D1Database,
    dedupe_key: &str,
) -> Result<Option<(EmailRow, Option<ContentRow>)>> {
    let key = s(dedupe_key);
    let r = db
        .batch(vec![
            stmt(
                db,
                &format!("SELECT {EMAIL_COLUMNS} FROM emails WHERE dedupe_key = ?1"),
                std::slice::from_ref(&key),
            )?,
            stmt(
                db,
                "SELECT subject, text_body, html_body, headers_json FROM email_contents WHERE dedupe_key = ?1",
                &[key],
            )?,
        ])
        .await?;
    let Some(row) = rows::<EmailRow>(r.first())?.into_iter().next() else {
        return Ok(None);
    };
    Ok(Some((
        row,
        rows::<ContentRow>(r.get(1))?.into_iter().next(),
    )))
}

/// An email's dedupe key's content only (the HTML frame).
pub async fn email_html(db: &D1Database, dedupe_key: &str) -> Result<Option<String>> {
    db.prepare("SELECT html_body FROM email_contents WHERE dedupe_key = ?1")
        .bind(&[s(dedupe_key)])?
        .first(Some("html_body"))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sql_excerpt_is_the_budgeted_one() {
        assert!(RAW_EVENT_COLUMNS.contains(&format!("substr(body, 1, {BODY_EXCERPT_CHARS})")));
    }
}
