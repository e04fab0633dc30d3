//! `contacts` and `bookings`: one row per booking with its kind, status ([`BookingStatus`]),
//! traveller snapshot hash and journey version (the optimistic-concurrency token of its facts).

use super::{n, opt, s};
use crate::domain::event::ownership::Owner;
use crate::domain::event::{Holder, HotelBooking};
use crate::domain::journey::booking::{BookingKind, BookingStatus};
use worker::{D1Database, D1PreparedStatement, Result};

/// The statement that upserts a booking's contact (name and phone follow the newest event), only
/// while neither booking `booking_id` nor prebook id `prebook_id` (if any) is held by another
/// owner than `owner` ([`super::ownership::owned_by`]): the contact comes first in the batch that
/// records the booking (the booking's `contact_email` references it) under the same condition as
/// the booking's insert, so an event refused because another owner stored its booking or checkout
/// meanwhile never touches a contact.
fn upsert_contact(
    db: &D1Database,
    holder: &Holder,
    booking_id: &str,
    prebook_id: Option<&str>,
    owner: &Owner,
    event_time_ms: i64,
) -> Result<D1PreparedStatement> {
    db.prepare(format!(
        "INSERT INTO contacts (email, first_name, last_name, phone, created_at_ms, updated_at_ms) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?5 \
         WHERE NOT EXISTS (SELECT 1 FROM bookings WHERE booking_id = ?6 AND NOT ({})) AND {} \
         ON CONFLICT(email) DO UPDATE SET first_name = excluded.first_name, last_name = excluded.last_name, \
         phone = COALESCE(excluded.phone, contacts.phone), updated_at_ms = MAX(contacts.updated_at_ms, excluded.updated_at_ms)",
        super::ownership::owned_by(7, 8),
        prebook_free(9, 7, 8)
    ))
    .bind(&[
        s(holder.email.as_str()),
        s(&holder.name.first_name),
        s(&holder.name.last_name),
        opt(holder.phone.as_deref()),
        n(event_time_ms),
        s(booking_id),
        s(owner.source.as_str()),
        opt(owner.partner_column()),
        opt(prebook_id),
    ])
}

/// The condition "no checkout attempt or booking of another owner than the one whose source is
/// bound at `?{source}` (partner at `?{partner}`) holds prebook id `?{prebook}`" (a `NULL` prebook
/// id matches nothing), for an insert that must not take another owner's checkout.
fn prebook_free(prebook: u8, source: u8, partner: u8) -> String {
    let mine = super::ownership::owned_by(source, partner);
    format!(
        "NOT EXISTS (SELECT 1 FROM checkout_attempts WHERE prebook_id = ?{prebook} AND NOT ({mine})) \
         AND NOT EXISTS (SELECT 1 FROM bookings WHERE prebook_id = ?{prebook} AND NOT ({mine}))"
    )
}

/// The statements that record a new hotel booking (journey version 1, with its traveller
/// snapshot hash), for a caller's own batch: its holder's contact, then the booking's insert
/// (its `changes` say whether it was inserted), both only while no other owner's booking has its
/// id and no other owner's checkout or booking holds its prebook id.
pub fn insert_hotel_booking_statements(
    db: &D1Database,
    b: &HotelBooking,
    snapshot_hash: &str,
    owner: &Owner,
    event_time_ms: i64,
) -> Result<Vec<D1PreparedStatement>> {
    let details = serde_json::to_string(b).map_err(crate::platform::rust_err)?;
    let contact = upsert_contact(
        db,
        &b.holder,
        b.booking_id.as_str(),
        b.prebook_id.as_deref(),
        owner,
        event_time_ms,
    )?;
    let booking = db
        .prepare(format!(
            "INSERT INTO bookings (booking_id, source, kind, contact_email, status, hotel_name, checkin, checkout, \
             hotel_confirmation_number, details_json, journey_version, created_at_ms, updated_at_ms, prebook_id, snapshot_hash, \
             partner, client_reference) \
             SELECT ?1, ?2, ?13, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?10, ?11, ?12, ?14, ?15 WHERE {} \
             ON CONFLICT(booking_id) DO NOTHING",
            prebook_free(11, 2, 14)
        ))
        .bind(&[
            s(b.booking_id.as_str()),
            s(owner.source.as_str()),
            s(b.holder.email.as_str()),
            s(&b.status),
            s(&b.hotel_name),
            s(&b.checkin.to_string()),
            s(&b.checkout.to_string()),
            opt(b.hotel_confirmation_number.as_deref()),
            s(&details),
            n(event_time_ms),
            opt(b.prebook_id.as_deref()),
            s(snapshot_hash),
            s(BookingKind::Hotel.as_str()),
            opt(owner.partner_column()),
            opt(b.client_reference.as_deref()),
        ])?;
    Ok(vec![contact, booking])
}

/// A stored booking as journeys read it back before deciding anything.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct BookingRow {
    pub booking_id: String,
    /// Its owner: the source whose event created it, and the generic partner (`None` for other
    /// sources; `default` for generic bookings stored before partners).
    pub source: String,
    #[serde(default)]
    pub partner: Option<String>,
    pub kind: BookingKind,
    pub status: BookingStatus,
    pub journey_version: i64,
    pub snapshot_hash: Option<String>,
    pub details_json: String,
    pub replaced_by: Option<String>,
}

impl BookingRow {
    /// The verdict on `actor` acting on this booking.
    pub fn verdict(&self, actor: &Owner) -> crate::domain::event::ownership::Verdict {
        crate::domain::event::ownership::judge(
            actor,
            &format!("booking {}", self.booking_id),
            &self.source,
            self.partner.as_deref(),
        )
    }

    /// `true` when no email of this booking may go out any more.
    pub fn is_closed(&self) -> bool {
        self.status.is_cancelled() || self.replaced_by.is_some()
    }

    /// The booking as the send-turn decision sees it (`crate::domain::outbox::intent::decide`).
    pub fn intent_view(&self) -> crate::domain::outbox::intent::BookingNow {
        crate::domain::outbox::intent::BookingNow {
            cancelled: self.status.is_cancelled(),
            replaced: self.replaced_by.is_some(),
            journey_version: self.journey_version,
        }
    }
}

/// Reads one booking.
pub async fn get(db: &D1Database, booking_id: &str) -> Result<Option<BookingRow>> {
    get_statement(db, booking_id)?
        .first::<BookingRow>(None)
        .await
}

/// The statement of [`get`], for a caller's own batch (read its result with [`row_of`]).
pub fn get_statement(db: &D1Database, booking_id: &str) -> Result<D1PreparedStatement> {
    db.prepare(
        "SELECT booking_id, source, partner, kind, status, journey_version, snapshot_hash, details_json, replaced_by \
         FROM bookings WHERE booking_id = ?1",
    )
    .bind(&[s(booking_id)])
}

/// The booking a [`get_statement`] found in a batch.
pub fn row_of(r: &worker::D1Result) -> Result<Option<BookingRow>> {
    Ok(r.results::<BookingRow>()?.into_iter().next())
}

/// New facts for a stored booking (see [`update_facts`]). `None` fields keep the stored value.
///
/// Built from [`FactsUpdate::keep`] plus the fields that change (struct update syntax), e.g.
/// `FactsUpdate { bump: true, ..FactsUpdate::keep(&row, at) }`.
pub struct FactsUpdate<'a> {
    pub booking_id: &'a str,
    /// The journey version the caller read; the write only happens if it is still current.
    pub expected_version: i64,
    /// Move the journey version on (a re-plan: older scheduled sends stop).
    pub bump: bool,
    pub status: &'a BookingStatus,
    pub details_json: &'a str,
    pub snapshot_hash: Option<&'a str>,
    pub checkin: Option<&'a str>,
    pub checkout: Option<&'a str>,
    pub hotel_confirmation_number: Option<&'a str>,
    /// The event's time, ms since the epoch (UTC).
    pub event_time_ms: i64,
    /// When set, the write also happens only if the booking is this owner's (checked in the
    /// statement itself, [`OWNED_BY`]): a step that found no booking when the event's owner was
    /// checked never writes to one another owner stored meanwhile.
    pub owner: Option<&'a Owner>,
}

impl<'a> FactsUpdate<'a> {
    /// An update that changes nothing of `row` yet; set the fields that change on top of it.
    pub fn keep(row: &'a BookingRow, event_time_ms: i64) -> Self {
        Self {
            booking_id: &row.booking_id,
            expected_version: row.journey_version,
            bump: false,
            status: &row.status,
            details_json: &row.details_json,
            snapshot_hash: None,
            checkin: None,
            checkout: None,
            hotel_confirmation_number: None,
            event_time_ms,
            owner: None,
        }
    }
}

/// Writes new facts of a booking if, and only if, it is still at `u.expected_version` (optimistic
/// concurrency: two journeys of one booking never overwrite each other silently). Returns `false`
/// on a lost race.
pub async fn update_facts(db: &D1Database, u: &FactsUpdate<'_>) -> Result<bool> {
    let r = facts_statement(db, u)?.run().await?;
    Ok(super::changes(&r) == 1)
}

/// The statement of [`update_facts`], for a caller's own batch (its `changes` are 0 on a lost
/// race).
pub fn facts_statement(db: &D1Database, u: &FactsUpdate<'_>) -> Result<D1PreparedStatement> {
    db
        .prepare(format!(
            "UPDATE bookings SET status = ?3, details_json = ?4, snapshot_hash = COALESCE(?5, snapshot_hash), \
             checkin = COALESCE(?6, checkin), checkout = COALESCE(?7, checkout), \
             hotel_confirmation_number = COALESCE(?8, hotel_confirmation_number), \
             journey_version = journey_version + ?9, updated_at_ms = MAX(updated_at_ms, ?10) \
             WHERE booking_id = ?1 AND journey_version = ?2 \
             AND (?11 IS NULL OR ({}))",
            super::ownership::owned_by(11, 12)
        ))
        .bind(&[
            s(u.booking_id),
            n(u.expected_version),
            s(u.status.as_str()),
            s(u.details_json),
            opt(u.snapshot_hash),
            opt(u.checkin),
            opt(u.checkout),
            opt(u.hotel_confirmation_number),
            n(if u.bump { 1 } else { 0 }),
            n(u.event_time_ms),
            opt(u.owner.map(|o| o.source.as_str())),
            opt(u.owner.and_then(Owner::partner_column)),
        ])
}

/// [`update_facts`] for steps: a lost race is an error, so the engine retries the step, which
/// re-reads the booking and decides again.
pub async fn write_facts(db: &D1Database, u: &FactsUpdate<'_>) -> Result<()> {
    if update_facts(db, u).await? {
        Ok(())
    } else {
        Err(worker::Error::RustError(format!(
            "booking {} changed concurrently; retrying",
            u.booking_id
        )))
    }
}

/// Marks `old` as replaced by `new` (a rebook) and moves its version on, so its plan stops: the
/// statement, for the caller's own batch after `new`'s insert. Only a booking of `owner` is
/// marked, and only while `new` is `owner`'s too (both checked in the statement,
/// [`super::ownership::owned_by`]): a booking another owner stored after the event's owner was
/// checked is left as it is, and a rebook refused because its own booking id turned out to be
/// another owner's marks nothing.
pub fn mark_replaced_statement(
    db: &D1Database,
    old: &str,
    new: &str,
    owner: &Owner,
    event_time_ms: i64,
) -> Result<D1PreparedStatement> {
    let mine = super::ownership::owned_by(5, 6);
    db.prepare(format!(
        "UPDATE bookings SET replaced_by = ?2, status = ?4, journey_version = journey_version + 1, \
         updated_at_ms = MAX(updated_at_ms, ?3) WHERE booking_id = ?1 AND replaced_by IS NULL \
         AND {mine} AND EXISTS (SELECT 1 FROM bookings WHERE booking_id = ?2 AND {mine})"
    ))
    .bind(&[
        s(old),
        s(new),
        n(event_time_ms),
        s(BookingStatus::Replaced.as_str()),
        s(owner.source.as_str()),
        opt(owner.partner_column()),
    ])
}

/// Inserts a flight booking (a redelivery changes nothing) with its contact, in one batch, the
/// contact only while no other owner's booking has the order's id: an order another owner stored
/// first is never written to and its contact never touched. Returns whether this call inserted
/// the order.
pub async fn upsert_flight_booking(
    db: &D1Database,
    f: &crate::domain::event::FlightBooking,
    snapshot_hash: &str,
    owner: &Owner,
    event_time_ms: i64,
) -> Result<bool> {
    let details = serde_json::to_string(f).map_err(crate::platform::rust_err)?;
    let first_departure = f
        .segments
        .first()
        .map(|s| s.departing_at.date().to_string());
    let last_arrival = f.segments.last().map(|s| s.arriving_at.date().to_string());
    let booking = db
        .prepare(
            "INSERT INTO bookings (booking_id, source, kind, contact_email, status, hotel_name, checkin, checkout, \
             details_json, snapshot_hash, journey_version, created_at_ms, updated_at_ms, partner) \
             VALUES (?1, ?2, ?10, ?3, ?4, NULL, ?5, ?6, ?7, ?8, 1, ?9, ?9, ?11) \
             ON CONFLICT(booking_id) DO NOTHING",
        )
        .bind(&[
            s(f.booking_id.as_str()),
            s(owner.source.as_str()),
            s(f.contact.email.as_str()),
            s(&f.status),
            opt(first_departure.as_deref()),
            opt(last_arrival.as_deref()),
            s(&details),
            s(snapshot_hash),
            n(event_time_ms),
            s(BookingKind::Flight.as_str()),
            opt(owner.partner_column()),
        ])?;
    let contact = upsert_contact(
        db,
        &f.contact,
        f.booking_id.as_str(),
        None,
        owner,
        event_time_ms,
    )?;
    let done = db.batch(vec![contact, booking]).await?;
    Ok(done.get(1).map(super::changes) == Some(1))
}

/// The booking id recorded for a checkout's prebook id (a hotel booking), if any.
pub async fn by_prebook(db: &D1Database, prebook_id: &str) -> Result<Option<String>> {
    db.prepare("SELECT booking_id FROM bookings WHERE prebook_id = ?1 LIMIT 1")
        .bind(&[s(prebook_id)])?
        .first(Some("booking_id"))
        .await
}

/// What a cancelled booking's compensation needs to find its payment and write to the guest.
#[derive(Debug, Clone)]
pub struct PaymentKeys {
    pub prebook_id: Option<String>,
    /// The booking's client reference (from its stored details), when it has one.
    pub client_reference: Option<String>,
    pub contact_email: String,
    /// Hotel and dates, one line (hotels only).
    pub trip: Option<String>,
}

/// What a booking says about its guest and stay, as stored (D1 `bookings`): the contact's address,
/// status, hotel and dates (hotels only), and the details as JSON text.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct BookingSummary {
    pub prebook_id: Option<String>,
    pub contact_email: String,
    pub status: String,
    pub hotel_name: Option<String>,
    pub checkin: Option<String>,
    pub checkout: Option<String>,
    pub details_json: String,
}

/// The [`BookingSummary`] of one booking; `None` when the booking is unknown.
pub async fn summary(db: &D1Database, booking_id: &str) -> Result<Option<BookingSummary>> {
    super::row_by(
        db,
        "SELECT prebook_id, contact_email, status, hotel_name, checkin, checkout, details_json \
         FROM bookings WHERE booking_id = ?1",
        booking_id,
    )
    .await
}

/// [`PaymentKeys`] of one booking; `None` when the booking is unknown.
pub async fn payment_keys(db: &D1Database, booking_id: &str) -> Result<Option<PaymentKeys>> {
    let Some(r) = summary(db, booking_id).await? else {
        return Ok(None);
    };
    let details: serde_json::Value = serde_json::from_str(&r.details_json).unwrap_or_default();
    let trip = r.hotel_name.map(|h| match (r.checkin, r.checkout) {
        (Some(i), Some(o)) => format!("{h}, {i} to {o}"),
        _ => h,
    });
    Ok(Some(PaymentKeys {
        prebook_id: r.prebook_id,
        client_reference: details
            .get("client_reference")
            .and_then(|v| v.as_str())
            .map(str::to_string),
        contact_email: r.contact_email,
        trip,
    }))
}
