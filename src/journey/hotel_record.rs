//! Recording a hotel booking event (the first step of `super::hotel::booked`): insert the booking,
//! or refresh its facts under a new journey version, mark the booking a rebook replaces, settle
//! its language — and none of it when the booking, the one it replaces or its checkout belongs to
//! another source or partner (`crate::domain::event::ownership`). One D1 read and one D1 write on the
//! common path.

use super::rust_err;
use crate::config::DB_BINDING;
use crate::domain::event::ownership::{Owner, Verdict};
use crate::domain::event::HotelBooking;
use crate::domain::i18n::{locale, Lang};
use crate::domain::journey::booking::BookingStatus;
use crate::domain::journey::snapshot::hotel_snapshot;
use crate::store;
use crate::store::bookings::FactsUpdate;
use serde::{Deserialize, Serialize};
use worker::{Env, Result};

/// What the record step found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Recorded {
    /// Journey version this run owns from now on (moved on when a redelivery carried new facts).
    pub(super) version: i64,
    /// The compensation that closed this booking (the supplier failed it after payment, and said
    /// so before this event arrived): nothing is confirmed or planned.
    #[serde(default)]
    pub(super) compensated: Option<String>,
    /// Why the event was refused: the booking id, the booking it replaces or its checkout
    /// belongs to another source or partner. Nothing was written.
    #[serde(default)]
    pub(super) foreign: Option<String>,
    /// The booking's language and regional formats after this event (English in results cached
    /// before it existed; a bare language in those cached before regions).
    #[serde(default)]
    pub(super) locale: Lang,
    /// The hotel's stored zone (display name, source), when the hotel has one on record; the plan
    /// step then needs no read of its own.
    #[serde(default)]
    pub(super) zone: Option<(String, String)>,
    /// Whether an enabled outbound webhook subscriber wants `booking.confirmed` (results cached
    /// before this field: taken as yes).
    #[serde(default = "yes")]
    pub(super) confirmed_wanted: bool,
}

fn yes() -> bool {
    true
}

impl Recorded {
    fn foreign(reason: String) -> Self {
        Recorded {
            version: 0,
            compensated: None,
            foreign: Some(reason),
            locale: Lang::default(),
            zone: None,
            confirmed_wanted: false,
        }
    }
}

/// Records the booking, in one D1 read and one D1 write on the common path: inserts it (version
/// 1), or — if it was stored before with different traveller facts — writes the new facts and
/// moves the version on; a rebook marks the booking it replaces, whose plan then stops. With it:
/// the booking's language (the event's, else its Stripe session's, else `default_locale`, settled
/// against what is stored), the compensation that already closed it, and — for the steps after
/// it — the hotel's stored zone and whether an outbound subscriber wants `booking.confirmed`.
pub(super) async fn record(
    env: &Env,
    b: &HotelBooking,
    owner: &Owner,
    at: i64,
    default_locale: Lang,
) -> Result<Recorded> {
    let db = env.d1(DB_BINDING)?;
    let hash = hotel_snapshot(b).hash();
    let id = b.booking_id.as_str();
    // A rebook also names the booking it replaces: its owner is checked on its own (rare).
    if let Some(old) = &b.replaces {
        if let Some(reason) =
            store::ownership::foreign_named(&db, owner, &[old.as_str()], None).await?
        {
            return Ok(Recorded::foreign(reason));
        }
    }
    let prebook = b.prebook_id.as_deref().filter(|p| !p.trim().is_empty());
    let reference = b
        .client_reference
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    let zone_hotel = b.hotel_id.as_deref().filter(|_| !has_own_location(b));
    let reads = Reads::new()
        .with(Read::Booking, store::bookings::get_statement(&db, id)?)
        .with(Read::Locale, store::guest_locale::get_statement(&db, id)?)
        .maybe(
            Read::Prebook,
            prebook
                .map(|p| store::ownership::prebook_statement(&db, p))
                .transpose()?,
        )
        .maybe(
            Read::CheckoutLocale,
            reference
                .map(|r| store::guest_locale::checkout_locale_statement(&db, r))
                .transpose()?,
        )
        .maybe(
            Read::Compensation,
            store::compensation::find_for_booking_statement(
                &db,
                owner,
                Some(id),
                prebook,
                reference,
            )?,
        )
        .maybe(
            Read::Zone,
            zone_hotel
                .map(|h| store::hotel_zones::stored_statement(&db, h))
                .transpose()?,
        )
        .with(
            Read::Subscribers,
            store::webhooks::enabled_subscribers_statement(&db)?,
        );
    let (order, statements) = reads.into_parts();
    let results = db.batch(statements).await?;
    let at_read = |which: Read| {
        order
            .iter()
            .position(|r| *r == which)
            .and_then(|i| results.get(i))
    };

    let row = match at_read(Read::Booking) {
        Some(r) => store::bookings::row_of(r)?,
        None => None,
    };
    // The booking itself and its checkout must be this owner's (or not stored yet): otherwise
    // nothing is written. A booking another source inserts meanwhile makes the insert below
    // conflict, and the retried step finds it here.
    if let Some(Verdict::Foreign { reason }) = row.as_ref().map(|r| r.verdict(owner)) {
        return Ok(Recorded::foreign(reason));
    }
    if let (Some(p), Some(r)) = (prebook, at_read(Read::Prebook)) {
        if let Some(reason) = store::ownership::foreign_prebook(&r.results()?, owner, p) {
            return Ok(Recorded::foreign(reason));
        }
    }
    let checkout_locale = match at_read(Read::CheckoutLocale) {
        Some(r) => store::guest_locale::checkout_locale_of(r)?,
        None => None,
    };
    let stored_locale = match (&row, at_read(Read::Locale)) {
        (Some(_), Some(r)) => store::guest_locale::stored_of(r)?,
        _ => None,
    };
    let incoming = locale::resolve(
        b.locale.as_deref(),
        checkout_locale.as_deref(),
        default_locale,
    );
    let (language, locale_changed) = store::guest_locale::settled(stored_locale, incoming);
    let zone = match at_read(Read::Zone) {
        Some(r) => {
            store::hotel_zones::stored_of(r)?.map(|(z, s)| (z.to_string(), s.as_str().to_string()))
        }
        None => None,
    };
    let confirmed_wanted = match at_read(Read::Subscribers) {
        Some(r) => store::webhooks::subscribers_of(r)?
            .iter()
            .any(|(_, types)| {
                crate::domain::webhooks::wants(
                    types,
                    crate::domain::webhooks::EventType::BookingConfirmed,
                )
            }),
        None => true,
    };

    // One batch whose every write carries the owner in SQL: the contact and the booking's insert
    // only while no other owner holds the booking id or its prebook id; the facts, the replaced
    // booking's mark and the language only while the booking is this owner's. An event that turns
    // out to be refused (another owner stored the booking or its checkout between the reads above
    // and this batch) writes nothing at all; its retried step then refuses it.
    let mut writes = Vec::new();
    let (version, inserting, updating) = match &row {
        None => (1, true, false),
        Some(r) if r.snapshot_hash.as_deref() == Some(hash.as_str()) => {
            (r.journey_version, false, false)
        }
        Some(r) => (r.journey_version + 1, false, true),
    };
    // The contact comes first (the booking references it), then the booking's insert.
    let insert_at = writes.len() + 1;
    let details = serde_json::to_string(b)?;
    let (status, checkin, checkout) = (
        BookingStatus::of(&b.status),
        b.checkin.to_string(),
        b.checkout.to_string(),
    );
    if inserting {
        writes.extend(store::bookings::insert_hotel_booking_statements(
            &db, b, &hash, owner, at,
        )?);
    }
    let update_at = writes.len();
    if let (true, Some(r)) = (updating, &row) {
        let update = FactsUpdate {
            bump: true,
            status: &status,
            details_json: &details,
            snapshot_hash: Some(&hash),
            checkin: Some(&checkin),
            checkout: Some(&checkout),
            hotel_confirmation_number: b.hotel_confirmation_number.as_deref(),
            owner: Some(owner),
            ..FactsUpdate::keep(r, at)
        };
        writes.push(store::bookings::facts_statement(&db, &update)?);
    }
    if let Some(old) = &b.replaces {
        writes.push(store::bookings::mark_replaced_statement(
            &db,
            old.as_str(),
            id,
            owner,
            at,
        )?);
    }
    if locale_changed {
        writes.push(store::guest_locale::set_owned_statement(
            &db, id, language, owner,
        )?);
    }
    if !writes.is_empty() {
        let done = db.batch(writes).await?;
        if inserting && done.get(insert_at).map(store::changes) != Some(1) {
            // Inserted by a concurrent journey: the retried step takes the branches above.
            return Err(rust_err("booking inserted concurrently; retrying"));
        }
        if updating && done.get(update_at).map(store::changes) != Some(1) {
            return Err(rust_err(format!(
                "booking {id} changed concurrently; retrying"
            )));
        }
    }
    let found = match at_read(Read::Compensation) {
        Some(r) => store::compensation::row_of(r)?,
        None => None,
    };
    let compensated = if found.is_some() {
        super::compensation::closed_by_found_compensation(&db, owner, id, found, at).await?
    } else {
        None
    };
    Ok(Recorded {
        version,
        compensated,
        foreign: None,
        locale: language.lang,
        zone,
        confirmed_wanted,
    })
}

/// The reads of the record step, in one batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    Booking,
    Locale,
    Prebook,
    CheckoutLocale,
    Compensation,
    Zone,
    Subscribers,
}

/// Statements of one batch, each tagged with what it reads.
struct Reads {
    order: Vec<Read>,
    statements: Vec<worker::D1PreparedStatement>,
}

impl Reads {
    fn new() -> Self {
        Reads {
            order: Vec::new(),
            statements: Vec::new(),
        }
    }

    fn with(mut self, what: Read, statement: worker::D1PreparedStatement) -> Self {
        self.order.push(what);
        self.statements.push(statement);
        self
    }

    fn maybe(self, what: Read, statement: Option<worker::D1PreparedStatement>) -> Self {
        match statement {
            Some(st) => self.with(what, st),
            None => self,
        }
    }

    fn into_parts(self) -> (Vec<Read>, Vec<worker::D1PreparedStatement>) {
        (self.order, self.statements)
    }
}

/// The booking says where the hotel is itself (a zone name or both coordinates).
fn has_own_location(b: &HotelBooking) -> bool {
    b.location
        .as_ref()
        .is_some_and(|l| l.time_zone.is_some() || (l.latitude.is_some() && l.longitude.is_some()))
}
