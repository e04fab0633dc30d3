//! The guest's cancellation email, hotel or flight, and the view of a cancellation that the
//! owner's alert ([`super::owner::owner_booking_cancelled`]) shares.

use super::text::{airport_city, greet, trip_destination};
use super::{compose, Branding, Envelope, RenderError};
use crate::domain::email::{DedupeKey, EmailKind};
use crate::domain::event::{BookingRef, Cancellation, EmailAddress, FlightBooking, HotelBooking};
use crate::domain::i18n::{Locale, Tr};
use crate::domain::outbox::outgoing::OutgoingEmail;

/// What a cancellation email says about the cancelled booking, hotel or flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelledBooking {
    /// The hotel booking id or the flight order id.
    pub booking_id: BookingRef,
    /// The booking holder (hotel) or the order's contact (flight).
    pub to: EmailAddress,
    /// Trimmed; may be empty (the email then greets without a name).
    pub first_name: String,
    /// E.g. `Example Harbour Hotel, Friday, 12 June 2026 – Monday, 15 June 2026` or
    /// `London (LHR) → Barcelona (BCN), Friday, 12 June 2026` (in the guest's language).
    pub title: String,
    /// The reservation markup of the guest's email (`Cancelled`, [`crate::domain::email::markup`]);
    /// `None` until [`CancelledBooking::marked_up`], and when a required property is unknown.
    pub markup: Option<String>,
}

impl CancelledBooking {
    /// A hotel booking: title `<hotel>, <check-in> – <check-out>`.
    pub fn for_hotel(b: &HotelBooking) -> Self {
        Self::for_hotel_in(b, Tr::new(Locale::En))
    }

    /// [`CancelledBooking::for_hotel`] with the dates written in `tr`'s language.
    pub fn for_hotel_in(b: &HotelBooking, tr: Tr) -> Self {
        Self {
            booking_id: b.booking_id.clone(),
            to: b.holder.email.clone(),
            first_name: b.holder.name.first_name.trim().to_string(),
            title: format!("{}, {}", b.hotel_name, tr.date_range(b.checkin, b.checkout)),
            markup: None,
        }
    }

    /// The same with the guest email's reservation markup.
    pub fn marked_up(self, markup: Option<String>) -> Self {
        Self { markup, ..self }
    }

    /// A flight order: title `<city> (<IATA>) → <city> (<IATA>), <first departure date>` (a date
    /// range when the trip's last flight leaves on another day).
    pub fn for_flight(f: &FlightBooking) -> Self {
        Self::for_flight_in(f, Tr::new(Locale::En))
    }

    /// [`CancelledBooking::for_flight`] with the dates written in `tr`'s language.
    pub fn for_flight_in(f: &FlightBooking, tr: Tr) -> Self {
        let title = match (
            f.segments.first(),
            f.segments.last(),
            trip_destination(&f.segments),
        ) {
            (Some(first), Some(last), Some(dest)) => {
                let from = &first.origin;
                let start = first.departing_at.date();
                let end = last.departing_at.date();
                format!(
                    "{} ({}) → {} ({}), {}",
                    airport_city(from),
                    from.iata_code,
                    airport_city(dest),
                    dest.iata_code,
                    tr.date_range(start, end)
                )
            }
            _ => tr.t1("flight-booking-title", "id", f.booking_id.as_str()),
        };
        Self {
            booking_id: f.booking_id.clone(),
            to: f.contact.email.clone(),
            first_name: f.contact.name.first_name.trim().to_string(),
            title,
            markup: None,
        }
    }
}

/// A cancellation as the guest's and the owner's templates read it.
pub(super) struct Cancelled<'a> {
    pub(super) tr: Tr,
    pub(super) brand: &'a str,
    pub(super) greeting: String,
    /// The guest's first name as given (the owner's alert shows it).
    pub(super) first_name: &'a str,
    pub(super) to: &'a str,
    pub(super) booking_id: &'a str,
    pub(super) title: &'a str,
    pub(super) with_charges: bool,
    /// `with_charges` without a fee amount: say a fee applies, name no number.
    pub(super) charges_apply: bool,
    pub(super) fee: Option<String>,
    pub(super) refund: Option<String>,
}
email_body!(
    Cancelled = "booking_cancelled.html",
    "booking_cancelled.txt"
);

impl<'a> Cancelled<'a> {
    pub(super) fn of(
        c: &'a CancelledBooking,
        cancellation: &Cancellation,
        branding: &'a Branding,
    ) -> Self {
        let tr = branding.tr();
        let fee = tr.money_of(&cancellation.cancellation_fee);
        Self {
            tr,
            brand: &branding.brand,
            greeting: greet(tr, &c.first_name),
            first_name: &c.first_name,
            to: c.to.as_str(),
            booking_id: c.booking_id.as_str(),
            title: &c.title,
            with_charges: cancellation.with_charges,
            charges_apply: cancellation.with_charges && fee.is_none(),
            fee,
            refund: tr.money_of(&cancellation.refund),
        }
    }
}

/// The guest's cancellation (kind `booking_cancelled`, rank booking), key
/// `booking_cancelled:<booking id>`. Money facts appear only when the cancellation carries them:
/// no refund is ever mentioned unless `cancellation.refund` is given.
pub fn booking_cancelled(
    c: &CancelledBooking,
    cancellation: &Cancellation,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::BookingCancelled;
    compose(
        Envelope::new(
            kind,
            DedupeKey::for_booking(kind, &c.booking_id),
            &c.to,
            branding
                .tr()
                .t1("cancelled-subject", "id", c.booking_id.as_str()),
        )
        .about(&c.booking_id)
        .with_markup(c.markup.clone()),
        &Cancelled::of(c, cancellation, branding),
        branding,
    )
}
