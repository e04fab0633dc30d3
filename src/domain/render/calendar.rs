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
/// the booking's confirmation. JSON: `{"kind": "hotel" | "flight", "details": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "details", rename_all = "snake_case")]
pub enum Booked {
    Hotel(Box<HotelBooking>),
    Flight(Box<FlightBooking>),
}

/// Read by hand: serde's derive for adjacently tagged enums also compiles a reader of its
/// private `Content` tree for each variant's type (for `details` before `kind`); here `details`
/// is read as a `Value` and its text parsed with the `serde_json::from_str` those types already
/// have ([`crate::domain::json`]). Same JSON, same error messages.
impl<'de> Deserialize<'de> for Booked {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        struct Tagged {
            kind: String,
            details: serde_json::Value,
        }
        let tagged = Tagged::deserialize(deserializer)?;
        let details = tagged.details.to_string();
        let parsed = match tagged.kind.as_str() {
            "hotel" => serde_json::from_str(&details).map(Booked::Hotel),
            "flight" => serde_json::from_str(&details).map(Booked::Flight),
            other => return Err(D::Error::unknown_variant(other, &["hotel", "flight"])),
        };
        parsed.map_err(|e| D::Error::custom(crate::domain::json::message(&e)))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booked_reads_back_what_it_writes_in_either_key_order() {
        let booked = Booked::Hotel(Box::new(super::super::tests::sample_booking()));
        let text = serde_json::to_string(&booked).unwrap();
        assert!(text.starts_with(r#"{"kind":"hotel","details":{"#), "{text}");
        assert_eq!(serde_json::from_str::<Booked>(&text).unwrap(), booked);
        // `details` first, as another writer may order them.
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let swapped = format!(r#"{{"details":{},"kind":"hotel"}}"#, value["details"]);
        assert_eq!(serde_json::from_str::<Booked>(&swapped).unwrap(), booked);
    }

    #[test]
    fn booked_errors_name_the_problem() {
        let error = |text: &str| {
            crate::domain::json::message(&serde_json::from_str::<Booked>(text).unwrap_err())
        };
        assert_eq!(
            error(r#"{"kind":"train","details":{}}"#),
            "unknown variant `train`, expected `hotel` or `flight`"
        );
        assert_eq!(error(r#"{"kind":"hotel"}"#), "missing field `details`");
        assert_eq!(error(r#"{"details":{}}"#), "missing field `kind`");
        assert_eq!(
            error(r#"{"kind":"flight","details":{}}"#),
            "missing field `booking_id`"
        );
    }
}
