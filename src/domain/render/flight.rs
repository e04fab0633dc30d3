//! The guest's flight emails: the confirmation and the airline's schedule change, to the order's
//! contact. Times are shown in each airport's local time, as the supplier gives them.

use super::text::{airport_city, airport_label, greet, local_time, non_empty, trip_destination};
use super::{compose, Branding, Envelope, RenderError};
use crate::domain::email::markup::{self, Status};
use crate::domain::email::{DedupeKey, EmailKind};
use crate::domain::event::{FlightBooking, FlightSegment, PersonName};
use crate::domain::i18n::Tr;
use crate::domain::outbox::outgoing::OutgoingEmail;
use chrono::NaiveDateTime;

/// One flight segment as a guest reads it. Times are preformatted in the local time of the airport
/// concerned (departure at the origin, arrival at the destination).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentView {
    /// E.g. `ZZ 0472`.
    pub flight_number: String,
    /// E.g. `London Heathrow (LHR)`.
    pub from: String,
    /// E.g. `Fri 12 June 2026, 07:15 (local time)`.
    pub departs: String,
    /// E.g. `Barcelona El Prat (BCN)`.
    pub to: String,
    /// E.g. `Fri 12 June 2026, 10:30 (local time)`.
    pub arrives: String,
    /// The departure, local time at the origin (what `departs` is written from).
    pub departing_at: NaiveDateTime,
    /// The arrival, local time at the destination.
    pub arriving_at: NaiveDateTime,
}

impl SegmentView {
    /// The view of a canonical segment, whose times are already local at each airport.
    pub fn from_segment(s: &FlightSegment) -> Self {
        Self {
            flight_number: s.flight_number.clone(),
            from: airport_label(&s.origin),
            departs: local_time(s.departing_at),
            to: airport_label(&s.destination),
            arrives: local_time(s.arriving_at),
            departing_at: s.departing_at,
            arriving_at: s.arriving_at,
        }
    }

    /// The same segment with its times written in `tr`'s language.
    pub fn localized(&self, tr: Tr) -> Self {
        Self {
            departs: tr.local_time(self.departing_at),
            arrives: tr.local_time(self.arriving_at),
            ..self.clone()
        }
    }

    /// [`SegmentView::from_segment`] of every segment, in order.
    pub fn list(segments: &[FlightSegment]) -> Vec<Self> {
        segments.iter().map(Self::from_segment).collect()
    }
}

/// A flight order as both flight templates read it.
struct FlightView<'a> {
    tr: Tr,
    brand: &'a str,
    greeting: String,
    booking_id: &'a str,
    pnr: Option<&'a str>,
    passengers: Vec<String>,
    total: Option<String>,
    origin: &'a str,
    destination: &'a str,
    segments: Vec<SegmentView>,
    before: Vec<SegmentView>,
    after: Vec<SegmentView>,
}
email_body!(
    Confirmation(FlightView) = "flight_confirmation.html",
    "flight_confirmation.txt"
);
email_body!(
    Changed(FlightView) = "flight_changed.html",
    "flight_changed.txt"
);

impl<'a> FlightView<'a> {
    fn of(
        f: &'a FlightBooking,
        segments: &'a [SegmentView],
        before: &'a [SegmentView],
        after: &'a [SegmentView],
        branding: &'a Branding,
    ) -> Self {
        let passengers: Vec<String> = f
            .passengers
            .iter()
            .map(PersonName::full)
            .filter(|n| !n.is_empty())
            .collect();
        let passengers = if passengers.is_empty() {
            vec![f.contact.name.full()]
        } else {
            passengers
        };
        let tr = branding.tr();
        let local = |list: &[SegmentView]| list.iter().map(|s| s.localized(tr)).collect();
        Self {
            tr,
            brand: &branding.brand,
            greeting: greet(tr, &f.contact.name.first_name),
            booking_id: f.booking_id.as_str(),
            pnr: non_empty(f.booking_reference.as_deref()),
            passengers,
            total: tr.money_of(&f.total),
            origin: f.segments.first().map_or("", |s| airport_city(&s.origin)),
            destination: trip_destination(&f.segments).map_or("", airport_city),
            segments: local(segments),
            before: local(before),
            after: local(after),
        }
    }
}

/// To the order's contact, about this order.
fn to_contact(
    f: &FlightBooking,
    kind: EmailKind,
    dedupe_key: DedupeKey,
    subject: String,
) -> Envelope<'_> {
    Envelope::new(kind, dedupe_key, &f.contact.email, subject).about(&f.booking_id)
}

/// The flight confirmation (kind `flight_confirmation`, rank booking), key
/// `flight_confirmation:<order id>`. `segments` carry each time in its airport's local time (see
/// [`SegmentView::from_segment`]).
pub fn flight_confirmation(
    f: &FlightBooking,
    segments: &[SegmentView],
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::FlightConfirmation;
    let view = FlightView::of(f, segments, &[], &[], branding);
    let tr = view.tr;
    let subject = if view.origin.is_empty() || view.destination.is_empty() {
        tr.t("flight-heading")
    } else {
        tr.t2(
            "flight-subject",
            "from",
            view.origin,
            "to",
            view.destination,
        )
    };
    compose(
        to_contact(
            f,
            kind,
            DedupeKey::for_booking(kind, &f.booking_id),
            subject,
        )
        .with_markup(markup::flight(f, Status::Confirmed, None)),
        &Confirmation(&view),
        branding,
    )
}

/// The airline's schedule change (kind `flight_changed`, rank urgent), key
/// `flight_changed:<order id>:<change id>`: the segments before and after, and what to do. `f` is
/// the order as it now stands; `at_ms` the change's receipt (the markup's `modifiedTime`).
pub fn flight_changed(
    f: &FlightBooking,
    change_id: &str,
    before: &[SegmentView],
    after: &[SegmentView],
    at_ms: i64,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::FlightChanged;
    compose(
        to_contact(
            f,
            kind,
            DedupeKey::for_booking_part(kind, &f.booking_id, change_id),
            branding.tr().t("flight-changed-subject"),
        )
        .with_markup(markup::flight(f, Status::Confirmed, Some(at_ms))),
        &Changed(&FlightView::of(f, &[], before, after, branding)),
        branding,
    )
}
