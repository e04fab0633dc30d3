//! The calendar parts of guest emails in the guest's language: [`crate::domain::calendar`] with
//! its labels translated and the sender's domain in every UID.

use super::{Branding, RenderError};
use crate::domain::calendar::{self, CalendarPart, Labels, Stamp};
use crate::domain::email::OutgoingEmail;
use crate::domain::event::{FlightBooking, HotelBooking};
use crate::domain::i18n::Tr;
use serde::{Deserialize, Serialize};

fn labels(tr: Tr) -> Labels {
    Labels {
        booking_id: tr.t("label-booking-id"),
        hcn: tr.t("label-hcn"),
        pnr: tr.t("label-pnr"),
        flight: tr.t1("flight-number", "number", "").trim().to_string(),
    }
}

/// The all-day event of a hotel stay (see [`calendar::hotel_stay`]).
pub fn hotel_stay(b: &HotelBooking, branding: &Branding, stamp: Stamp) -> CalendarPart {
    calendar::hotel_stay(
        b,
        &branding.brand,
        &labels(branding.tr()),
        branding.from.domain(),
        stamp,
    )
}

/// One timed event per flight segment (see [`calendar::flight_segments`]).
pub fn flight_segments(f: &FlightBooking, branding: &Branding, stamp: Stamp) -> CalendarPart {
    calendar::flight_segments(
        f,
        &branding.brand,
        &labels(branding.tr()),
        branding.from.domain(),
        stamp,
    )
}

/// A stored booking's details, whichever its kind: what an email that is not the booking's own
/// (the compensation's notice) builds the booking's calendar events from, with the same UIDs as
/// the booking's confirmation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "details", rename_all = "snake_case")]
pub enum Booked {
    Hotel(Box<HotelBooking>),
    Flight(Box<FlightBooking>),
}

/// The events of `booked` (a stay, or one per flight segment) under `stamp`.
pub fn of_booked(booked: &Booked, branding: &Branding, stamp: Stamp) -> CalendarPart {
    match booked {
        Booked::Hotel(b) => hotel_stay(b, branding, stamp),
        Booked::Flight(f) => flight_segments(f, branding, stamp),
    }
}

/// `email` with `part` as its calendar part. Call it inside the render closure of
/// `guard::guarded`, so the part is built from the same defanged (and, for the verdict, the same
/// neutral) inputs as the email: a supplier value never reaches the calendar raw.
pub fn attach(
    email: Result<OutgoingEmail, RenderError>,
    part: CalendarPart,
) -> Result<OutgoingEmail, RenderError> {
    email.map(|mut e| {
        e.calendar = Some(part);
        e
    })
}
