//! The guest's language of each booking (`bookings.guest_locale`, `guest_locale_source`) and the
//! language of Stripe Checkout Sessions (`payments.locale`). The rules of who may set it are pure
//! (`crate::domain::i18n::locale::{resolve, update}`); this module reads and writes.

use super::s;
use crate::domain::i18n::{locale, GuestLocale, Lang, LocaleSource};
use worker::{D1Database, D1PreparedStatement, Result};

/// A booking's stored language, and whether a guest email of it was already claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredLocale {
    /// `None` when never set (a booking recorded before languages were stored).
    pub current: Option<GuestLocale>,
    /// `true` once any guest (client) email of the booking has a row in `emails`.
    pub guest_mail_started: bool,
}

#[derive(serde::Deserialize)]
struct Row {
    guest_locale: Option<String>,
    guest_locale_source: Option<String>,
    started: i64,
}

/// Reads the stored language of `booking_id`; `None` when the booking is unknown.
pub async fn get(db: &D1Database, booking_id: &str) -> Result<Option<StoredLocale>> {
    let row: Option<Row> = get_statement(db, booking_id)?.first(None).await?;
    Ok(stored(row))
}

/// The statement of [`get`], for a caller's own batch (read its result with [`stored_of`]).
pub fn get_statement(db: &D1Database, booking_id: &str) -> Result<D1PreparedStatement> {
    db.prepare(
        "SELECT guest_locale, guest_locale_source, \
         EXISTS (SELECT 1 FROM emails e WHERE e.booking_id = b.booking_id AND e.audience = 'client') AS started \
         FROM bookings b WHERE b.booking_id = ?1",
    )
    .bind(&[s(booking_id)])
}

/// The stored language a [`get_statement`] found in a batch.
pub fn stored_of(r: &worker::D1Result) -> Result<Option<StoredLocale>> {
    Ok(stored(r.results::<Row>()?.into_iter().next()))
}

fn stored(row: Option<Row>) -> Option<StoredLocale> {
    row.map(|r| StoredLocale {
        current: match (
            r.guest_locale.as_deref().and_then(Lang::from_tag),
            r.guest_locale_source
                .as_deref()
                .and_then(LocaleSource::parse),
        ) {
            (Some(lang), Some(source)) => Some(GuestLocale { lang, source }),
            _ => None,
        },
        guest_mail_started: r.started != 0,
    })
}

/// The language of a booking as emails use it: the stored one, else `default`.
pub async fn of_booking(db: &D1Database, booking_id: &str, default: Lang) -> Result<Lang> {
    Ok(get(db, booking_id)
        .await?
        .and_then(|s| s.current)
        .map_or(default, |g| g.lang))
}

/// Writes `new` as the booking's language.
pub async fn set(db: &D1Database, booking_id: &str, new: GuestLocale) -> Result<()> {
    set_statement(db, booking_id, new)?.run().await?;
    Ok(())
}

/// The statement of [`set`], for a caller's own batch.
pub fn set_statement(
    db: &D1Database,
    booking_id: &str,
    new: GuestLocale,
) -> Result<D1PreparedStatement> {
    db.prepare(
        "UPDATE bookings SET guest_locale = ?2, guest_locale_source = ?3 WHERE booking_id = ?1",
    )
    .bind(&[s(booking_id), s(new.lang.id()), s(new.source.as_str())])
}

/// [`set_statement`] that writes only while the booking is `owner`'s
/// ([`super::ownership::owned_by`]): in the batch that records a booking, after its insert, so a
/// booking another owner stored meanwhile never takes this event's language.
pub fn set_owned_statement(
    db: &D1Database,
    booking_id: &str,
    new: GuestLocale,
    owner: &crate::domain::event::ownership::Owner,
) -> Result<D1PreparedStatement> {
    db.prepare(format!(
        "UPDATE bookings SET guest_locale = ?2, guest_locale_source = ?3 WHERE booking_id = ?1 AND {}",
        super::ownership::owned_by(4, 5)
    ))
    .bind(&[
        s(booking_id),
        s(new.lang.id()),
        s(new.source.as_str()),
        s(owner.source.as_str()),
        super::opt(owner.partner_column()),
    ])
}

/// What a booking's language becomes when `incoming` is stated and `stored` is on record
/// ([`locale::update`]'s rule): `(its language, whether that must be written)`.
pub fn settled(stored: Option<StoredLocale>, incoming: GuestLocale) -> (GuestLocale, bool) {
    let current = stored.and_then(|s| s.current);
    let next = match stored.and_then(|s| s.current.map(|c| (c, s.guest_mail_started))) {
        None => Some(incoming),
        Some((current, started)) => locale::update(current, incoming, started),
    };
    match next {
        // Unchanged (a redelivery stating the same language): nothing to write.
        Some(new) if current == Some(new) => (new, false),
        Some(new) => (new, true),
        None => (current.unwrap_or(incoming), false),
    }
}

/// Settles a booking's language against a newly stated one (`incoming`): stored when none was,
/// replaced only as `locale::update` allows. Returns the language the booking now has.
pub async fn settle(
    db: &D1Database,
    booking_id: &str,
    incoming: GuestLocale,
) -> Result<GuestLocale> {
    let (next, write) = settled(get(db, booking_id).await?, incoming);
    if write {
        set(db, booking_id, next).await?;
    }
    Ok(next)
}

/// The newest Stripe Checkout Session language recorded for `client_reference`, if any.
pub async fn checkout_locale(
    db: &D1Database,
    client_reference: Option<&str>,
) -> Result<Option<String>> {
    let Some(reference) = client_reference.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let row: Option<CheckoutLocale> = checkout_locale_statement(db, reference)?
        .first(None)
        .await?;
    Ok(row.map(|r| r.locale))
}

#[derive(serde::Deserialize)]
struct CheckoutLocale {
    locale: String,
}

/// The statement of [`checkout_locale`] for a non-empty reference, for a caller's own batch
/// (read its result with [`checkout_locale_of`]).
pub fn checkout_locale_statement(db: &D1Database, reference: &str) -> Result<D1PreparedStatement> {
    db.prepare(
        "SELECT locale FROM payments WHERE client_reference = ?1 AND locale IS NOT NULL \
         ORDER BY updated_at_ms DESC LIMIT 1",
    )
    .bind(&[s(reference)])
}

/// The language a [`checkout_locale_statement`] found in a batch.
pub fn checkout_locale_of(r: &worker::D1Result) -> Result<Option<String>> {
    Ok(r.results::<CheckoutLocale>()?
        .into_iter()
        .next()
        .map(|r| r.locale))
}

/// The bookings paid through `client_reference` (a Stripe session that arrives after them).
pub async fn bookings_of_reference(db: &D1Database, client_reference: &str) -> Result<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct Id {
        booking_id: String,
    }
    let rows = db
        .prepare("SELECT booking_id FROM bookings WHERE client_reference = ?1 LIMIT 20")
        .bind(&[s(client_reference)])?
        .all()
        .await?
        .results::<Id>()?;
    Ok(rows.into_iter().map(|r| r.booking_id).collect())
}

/// The language of a guest email: the booking's stored one when `booking_id` names a booking that
/// has one; else the language of the Stripe Checkout Session of `client_reference` (an unfinished
/// checkout, a failed booking); else `default`.
pub async fn locale_for(
    db: &D1Database,
    booking_id: Option<&str>,
    client_reference: Option<&str>,
    default: Lang,
) -> Result<Lang> {
    if let Some(id) = booking_id {
        if let Some(current) = get(db, id).await?.and_then(|s| s.current) {
            return Ok(current.lang);
        }
    }
    let checkout = checkout_locale(db, client_reference).await?;
    Ok(locale::resolve(None, checkout.as_deref(), default).lang)
}

/// Records the language of a hotel booking being recorded: the event's own, else its Stripe
/// Checkout Session's, else `default`, settled against what is stored ([`settle`]). (The
/// booking's client reference, by which a later session finds it, is written with the booking
/// itself.) Returns the booking's language.
pub async fn record_hotel(
    db: &D1Database,
    b: &crate::domain::event::HotelBooking,
    default: Lang,
) -> Result<Lang> {
    let id = b.booking_id.as_str();
    let checkout = checkout_locale(db, b.client_reference.as_deref()).await?;
    let incoming = locale::resolve(b.locale.as_deref(), checkout.as_deref(), default);
    Ok(settle(db, id, incoming).await?.lang)
}

/// Records the language of a flight order being recorded: the event's own, else the Stripe
/// Checkout Session of its client reference, else `default` (as [`record_hotel`]).
pub async fn record_flight(
    db: &D1Database,
    f: &crate::domain::event::FlightBooking,
    default: Lang,
) -> Result<Lang> {
    let checkout = checkout_locale(db, f.client_reference.as_deref()).await?;
    let incoming = locale::resolve(f.locale.as_deref(), checkout.as_deref(), default);
    Ok(settle(db, f.booking_id.as_str(), incoming).await?.lang)
}

/// A language stated by a later event of the booking itself (an amendment's `locale`): the
/// explicit change ([`locale::update`]). A tag that names no shipped language changes nothing.
/// When the language itself changes, the one it replaced and `at_ms` (the event's receipt, ms
/// UTC) are kept with the booking (`guest_locale_before`, `guest_locale_changed_at_ms`) for the
/// admin timeline.
pub async fn explicit_change(
    db: &D1Database,
    booking_id: &str,
    tag: Option<&str>,
    at_ms: i64,
) -> Result<()> {
    let incoming = locale::resolve(tag, None, Lang::default());
    if incoming.source != LocaleSource::Event {
        return Ok(());
    }
    let (next, write) = settled(get(db, booking_id).await?, incoming);
    if write {
        // SQLite reads every right-hand side from the row before the update, so
        // `guest_locale_before` gets the language being replaced.
        db.prepare(
            "UPDATE bookings SET              guest_locale_changed_at_ms = CASE WHEN guest_locale IS NOT ?2 THEN ?4 ELSE guest_locale_changed_at_ms END,              guest_locale_before = CASE WHEN guest_locale IS NOT ?2 THEN guest_locale ELSE guest_locale_before END,              guest_locale = ?2, guest_locale_source = ?3 WHERE booking_id = ?1",
        )
        .bind(&[
            s(booking_id),
            s(next.lang.id()),
            s(next.source.as_str()),
            super::n(at_ms),
        ])?
        .run()
        .await?;
    }
    Ok(())
}
