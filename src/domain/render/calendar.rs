//! The calendar parts of guest emails in the guest's language: [`crate::domain::calendar`] with
//! its labels translated and the sender's domain in every UID.

use super::{Branding, RenderError};
use crate::domain::calendar::{self, CalendarPart, Labels, Stamp};
use crate::domain::email::OutgoingEmail;
use crate::domain::event::{FlightBooking, HotelBooking};
use crate::domain::i18n::Tr;

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
