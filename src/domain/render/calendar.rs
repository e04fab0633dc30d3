//! The calendar parts of guest emails in the guest's language: [`crate::domain::email::calendar`] with
//! its labels translated and the brand as organizer, and the line under the email that says what
//! the attached files do ([`attach`]).

use super::{Branding, RenderError};
use crate::domain::email::calendar::{self, CalendarPart, Labels, Method, Party};
use crate::domain::event::{FlightBooking, HotelBooking};
use crate::domain::i18n::Tr;
use crate::domain::outbox::outgoing::OutgoingEmail;
use serde::{Deserialize, Serialize};

fn labels(tr: Tr) -> Labels {
    Labels {
        booking_id: tr.colon(tr.t("label-booking-id")),
        hcn: tr.colon(tr.t("label-hcn")),
        pnr: tr.colon(tr.t("label-pnr")),
        flight: tr.colon(tr.t1("flight-number", "number", "{}")),
    }
}

/// The brand as the events' organizer, `mailto:` the sender address.
fn organizer(branding: &Branding) -> Party {
    Party {
        name: branding.brand.clone(),
        email: branding.from.as_str().to_string(),
    }
}

/// The all-day event of a hotel stay (see [`calendar::hotel_stay`]).
pub fn hotel_stay(b: &HotelBooking, branding: &Branding, method: Method) -> CalendarPart {
    calendar::hotel_stay(b, &labels(branding.tr()), &organizer(branding), method)
}

/// One part per flight segment (see [`calendar::flight_segments`]).
pub fn flight_segments(
    f: &FlightBooking,
    branding: &Branding,
    method: Method,
) -> Vec<CalendarPart> {
    calendar::flight_segments(f, &labels(branding.tr()), &organizer(branding), method)
}

/// A schedule change: every flight of `after`, and a CANCEL of each flight of `before` that is
/// gone (see [`calendar::flight_change`]).
pub fn flight_change(
    before: &FlightBooking,
    after: &FlightBooking,
    branding: &Branding,
) -> Vec<CalendarPart> {
    calendar::flight_change(before, after, &labels(branding.tr()), &organizer(branding))
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
/// have ([`crate::domain::basics::json`]). Same JSON, same error messages.
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
        parsed.map_err(|e| D::Error::custom(crate::domain::basics::json::message(&e)))
    }
}

/// The events of `booked` (a stay, or one per flight segment) under `method`.
pub fn of_booked(booked: &Booked, branding: &Branding, method: Method) -> Vec<CalendarPart> {
    match booked {
        Booked::Hotel(b) => vec![hotel_stay(b, branding, method)],
        Booked::Flight(f) => flight_segments(f, branding, method),
    }
}

/// What the attached calendar files do, in the guest's language: add (or update) the booking,
/// remove it, or both (a schedule change that drops a flight). `None` without parts.
pub fn note(parts: &[CalendarPart], tr: Tr) -> Option<String> {
    let publish = parts.iter().filter(|p| p.method == Method::Publish).count();
    let cancel = parts.len() - publish;
    match (publish, cancel) {
        (0, 0) => None,
        (n, 0) => Some(tr.t1("calendar-note-add", "count", n)),
        (0, n) => Some(tr.t1("calendar-note-cancel", "count", n)),
        _ => Some(tr.t("calendar-note-update-remove")),
    }
}

/// Text escaped for HTML as the templates escape it (askama's own escaper).
fn html_text(s: &str) -> String {
    askama::filters::escape(s, askama::filters::Html)
        .map(|safe| safe.to_string())
        .unwrap_or_default()
}

/// `email` with `parts` as its calendar attachments and, under its body, the line that says what
/// they do ([`note`]). Call it inside the render closure of `guard::guarded`, so the parts are
/// built from the same defanged (and, for the verdict, the same neutral) inputs as the email: a
/// supplier value never reaches the calendar raw.
pub fn attach(
    email: Result<OutgoingEmail, RenderError>,
    parts: Vec<CalendarPart>,
    tr: Tr,
) -> Result<OutgoingEmail, RenderError> {
    email.map(|mut e| {
        if let Some(line) = note(&parts, tr) {
            e.text = format!("{}\n\n{line}\n", e.text.trim_end());
            let paragraph = format!(
                "<p style=\"color:#52606d; font-size:13px; margin-top:24px;\">{}</p>\n",
                html_text(&line)
            );
            match e.html.rfind("</body>") {
                Some(at) => e.html.insert_str(at, &paragraph),
                None => e.html.push_str(&paragraph),
            }
        }
        e.calendars = parts;
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
            crate::domain::basics::json::message(&serde_json::from_str::<Booked>(text).unwrap_err())
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
