//! The calendar part of guest emails (RFC 5545 iCalendar, <https://www.rfc-editor.org/rfc/rfc5545>),
//! kept in step with the booking by iTIP (RFC 5546, <https://www.rfc-editor.org/rfc/rfc5546>):
//! - a hotel stay is one all-day event, `DTSTART;VALUE=DATE` = check-in, `DTEND;VALUE=DATE` =
//!   check-out (the hotel's own calendar dates: an all-day event is read in the zone it happens
//!   in), with the hotel's name and address as `LOCATION` and its confirmation number;
//! - a flight is one timed event per segment, departure and arrival as UTC instants converted
//!   from each airport's local time in that airport's IANA zone (RFC 5545 §3.3.5 form 2: every
//!   client shows them right wherever the reader is); a segment whose airport zone is unknown
//!   (liteAPI gives none) is written as local "floating" time (form 1);
//! - `UID` is stable per booking (`stay-<booking id>@<sender domain>`) or per segment
//!   (`flight-<order id>-<n>@<sender domain>`), so a later email updates the same event; the
//!   supplier's id is written through [`uid_safe`] (every byte outside `A-Z a-z 0-9 . _ - @`
//!   percent-encoded), so an id with `,` `;` `\` or a line break cannot break the line and the
//!   same id always gives the same UID;
//! - a flight segment's `SEQUENCE` is the booking's journey version less one: 0 for the
//!   confirmation, higher after every schedule change and cancellation (the journey version is
//!   stored in D1 and only ever moves on, and each email is rendered in a step whose result a
//!   replay reuses);
//! - a hotel stay's `SEQUENCE` is twice that, plus one once the hotel's confirmation number is
//!   known: the stay event also changes when the number arrives after the confirmation (same
//!   journey version), so the number's email carries a higher `SEQUENCE` than the confirmation
//!   without it, and the next amendment (one version on) a higher one still. The number is only
//!   ever set, never taken back, so the order holds; a second, different number keeps the same
//!   `SEQUENCE` with a later `DTSTAMP`, which RFC 5546 §2.1.5 orders after the first;
//! - `METHOD:PUBLISH` for the confirmation and every change; `METHOD:CANCEL` with
//!   `STATUS:CANCELLED` and the same UIDs for a cancellation.
//!
//! Written by the small writer below ([`Ics`]), not the `icalendar` crate: that crate builds for
//! wasm32 and folds correctly, but costs 75 KiB raw / 32 KiB gzip of wasm (`bench/i18n.mjs`) for
//! what is some eighty lines here, and its TEXT escaping keeps CR and other control characters
//! (a bare CR ends a content line in strict parsers). The writer escapes `\`, `;`, `,` and
//! newlines (RFC 5545 §3.3.11) and folds every content line at 75 octets on a character boundary
//! (§3.1). Supplier text is cleaned before it goes in: control characters become spaces, runs of
//! blank space collapse, and each value is bounded.
//!
//! Rendering is deterministic (`DTSTAMP` is the booking event's time, never "now"), so every
//! attempt of one email carries the same bytes.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::event::{FlightBooking, FlightSegment, HotelBooking};

/// Longest supplier value written into one property, in characters.
const VALUE_MAX_CHARS: usize = 500;

/// The iTIP method of a calendar part (the `METHOD` property and the `method=` parameter of the
/// `text/calendar` MIME type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// The event as it now stands (confirmation, amendment, schedule change).
    Publish,
    /// The event is off (cancellation).
    Cancel,
}

impl Method {
    /// `PUBLISH` or `CANCEL`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Publish => "PUBLISH",
            Method::Cancel => "CANCEL",
        }
    }
}

/// A calendar part ready to attach: `text/calendar; charset=utf-8; method=<method>`, file name
/// [`CalendarPart::FILE_NAME`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalendarPart {
    pub method: Method,
    /// The whole `VCALENDAR` object, CRLF line ends, folded at 75 octets.
    pub ics: String,
}

impl CalendarPart {
    /// The attachment's file name.
    pub const FILE_NAME: &'static str = "invite.ics";

    /// The MIME content type with the iTIP method, as Gmail and Outlook read it
    /// (`text/calendar; charset=utf-8; method=PUBLISH`).
    pub fn content_type(&self) -> String {
        format!(
            "text/calendar; charset=utf-8; method={}",
            self.method.as_str()
        )
    }
}

/// What every event of one email shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The booking's journey version less one: a flight segment's `SEQUENCE`; a hotel stay writes
    /// twice this plus one once its confirmation number is known (see the module docs).
    pub sequence: u32,
    /// `DTSTAMP`, ms since the epoch (UTC): the booking event's time.
    pub stamp_ms: i64,
    pub method: Method,
}

impl Stamp {
    /// The stamp of an email rendered under journey `version` (1 = the first; `SEQUENCE` =
    /// `version - 1`) for the event received at `at_ms` (UTC).
    pub fn at_version(version: i64, at_ms: i64, method: Method) -> Self {
        Self {
            sequence: u32::try_from(version.saturating_sub(1)).unwrap_or(0),
            stamp_ms: at_ms,
            method,
        }
    }
}

/// Labels of the event texts, in the guest's language (from the translator).
#[derive(Debug, Clone, Default)]
pub struct Labels {
    /// E.g. `Booking ID`.
    pub booking_id: String,
    /// E.g. `Hotel confirmation number`.
    pub hcn: String,
    /// E.g. `Airline booking reference`.
    pub pnr: String,
    /// The word before a flight number, e.g. `Flight` (the summary reads `Flight ZZ 0472: LHR →
    /// BCN`).
    pub flight: String,
}

/// The calendar of a hotel stay: one all-day event from check-in to check-out.
/// `domain` is the sender's domain (the right-hand side of every UID, e.g. `mail.example.com`).
pub fn hotel_stay(
    b: &HotelBooking,
    brand: &str,
    labels: &Labels,
    domain: &str,
    s: Stamp,
) -> CalendarPart {
    let hcn = b
        .hotel_confirmation_number
        .as_deref()
        .map(clean)
        .filter(|h| !h.is_empty());
    let s = Stamp {
        sequence: s
            .sequence
            .saturating_mul(2)
            .saturating_add(u32::from(hcn.is_some())),
        ..s
    };
    let mut ics = Ics::begin(s.method);
    ics.event_head(
        &format!("stay-{}", uid_safe(b.booking_id.as_str())),
        domain,
        s,
    );
    ics.line(
        "DTSTART;VALUE=DATE",
        &b.checkin.format("%Y%m%d").to_string(),
    );
    let end = all_day_end(b.checkin, b.checkout);
    ics.line("DTEND;VALUE=DATE", &end.format("%Y%m%d").to_string());
    ics.text("SUMMARY", &clean(&b.hotel_name));
    let address = b
        .location
        .as_ref()
        .and_then(|l| l.address.as_deref())
        .map(clean)
        .filter(|a| !a.is_empty());
    let location = match &address {
        Some(a) => format!("{}, {a}", clean(&b.hotel_name)),
        None => clean(&b.hotel_name),
    };
    ics.text("LOCATION", &location);
    let mut lines = vec![format!("{}: {}", labels.booking_id, b.booking_id.as_str())];
    if let Some(hcn) = hcn {
        lines.push(format!("{}: {hcn}", labels.hcn));
    }
    lines.push(clean(brand));
    ics.text("DESCRIPTION", &lines.join("\n"));
    ics.line("END", "VEVENT");
    ics.finish(s.method)
}

/// The calendar of a flight order: one timed event per segment, in travel order.
/// `domain` as in [`hotel_stay`].
pub fn flight_segments(
    f: &FlightBooking,
    brand: &str,
    labels: &Labels,
    domain: &str,
    s: Stamp,
) -> CalendarPart {
    let mut ics = Ics::begin(s.method);
    for (i, seg) in f.segments.iter().enumerate() {
        segment_event(&mut ics, f, i + 1, seg, brand, labels, domain, s);
    }
    ics.finish(s.method)
}

#[allow(clippy::too_many_arguments)]
fn segment_event(
    ics: &mut Ics,
    f: &FlightBooking,
    n: usize,
    seg: &FlightSegment,
    brand: &str,
    labels: &Labels,
    domain: &str,
    s: Stamp,
) {
    ics.event_head(
        &format!("flight-{}-{n}", uid_safe(f.booking_id.as_str())),
        domain,
        s,
    );
    ics.line(
        "DTSTART",
        &instant(seg.departing_at, seg.origin.time_zone.as_deref()),
    );
    ics.line(
        "DTEND",
        &instant(seg.arriving_at, seg.destination.time_zone.as_deref()),
    );
    let flight = clean(&seg.flight_number);
    ics.text(
        "SUMMARY",
        &format!(
            "{} {flight}: {} → {}",
            labels.flight,
            clean(&seg.origin.iata_code),
            clean(&seg.destination.iata_code)
        ),
    );
    ics.text(
        "LOCATION",
        &clean(&format!("{} ({})", seg.origin.name, seg.origin.iata_code)),
    );
    let mut lines = Vec::new();
    if let Some(pnr) = f
        .booking_reference
        .as_deref()
        .map(clean)
        .filter(|p| !p.is_empty())
    {
        lines.push(format!("{}: {pnr}", labels.pnr));
    }
    lines.push(format!("{}: {}", labels.booking_id, f.booking_id.as_str()));
    lines.push(clean(brand));
    ics.text("DESCRIPTION", &lines.join("\n"));
    ics.line("END", "VEVENT");
}

/// A VCALENDAR object being written: content lines with CRLF ends, each folded at 75 octets.
struct Ics {
    out: String,
}

impl Ics {
    fn begin(method: Method) -> Self {
        let mut ics = Ics {
            out: String::with_capacity(1024),
        };
        ics.line("BEGIN", "VCALENDAR");
        ics.line("VERSION", "2.0");
        ics.line("PRODID", "-//Bookings//Calendar//EN");
        ics.line("CALSCALE", "GREGORIAN");
        ics.line("METHOD", method.as_str());
        ics
    }

    /// `BEGIN:VEVENT` and what every event carries: UID, DTSTAMP, SEQUENCE, STATUS by method.
    fn event_head(&mut self, uid_local: &str, domain: &str, s: Stamp) {
        self.line("BEGIN", "VEVENT");
        self.line("UID", &format!("{uid_local}@{}", clean_domain(domain)));
        let stamp = Utc
            .timestamp_millis_opt(s.stamp_ms)
            .single()
            .unwrap_or_default();
        self.line("DTSTAMP", &utc(stamp));
        self.line("SEQUENCE", &s.sequence.to_string());
        self.line(
            "STATUS",
            match s.method {
                Method::Publish => "CONFIRMED",
                Method::Cancel => "CANCELLED",
            },
        );
    }

    /// A TEXT property, escaped (RFC 5545 §3.3.11).
    fn text(&mut self, name: &str, value: &str) {
        let mut escaped = String::with_capacity(value.len() + 8);
        for c in value.chars() {
            match c {
                '\\' => escaped.push_str("\\\\"),
                ';' => escaped.push_str("\\;"),
                ',' => escaped.push_str("\\,"),
                '\n' => escaped.push_str("\\n"),
                c if c.is_control() => escaped.push(' '),
                c => escaped.push(c),
            }
        }
        self.line(name, &escaped);
    }

    /// One content line `name:value`, folded: at most 75 octets a physical line, continuation
    /// lines start with one space (RFC 5545 §3.1), never splitting a character.
    fn line(&mut self, name: &str, value: &str) {
        let line = format!("{name}:{value}");
        let mut room = 75;
        let mut used = 0;
        for c in line.chars() {
            if used + c.len_utf8() > room {
                self.out.push_str("\r\n ");
                room = 74;
                used = 0;
            }
            self.out.push(c);
            used += c.len_utf8();
        }
        self.out.push_str("\r\n");
    }

    fn finish(mut self, method: Method) -> CalendarPart {
        self.line("END", "VCALENDAR");
        CalendarPart {
            method,
            ics: self.out,
        }
    }
}

/// A UTC instant as an iCalendar DATE-TIME (form 2, `…Z`).
fn utc(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

/// A local wall-clock time in `zone` as a UTC instant; floating local time when the zone is
/// unknown or the wall-clock time does not exist there (a DST gap: keep what the airline wrote).
fn instant(local: NaiveDateTime, zone: Option<&str>) -> String {
    let tz: Option<crate::domain::tzdb::Tz> = zone.and_then(|z| z.parse().ok());
    match tz.and_then(|tz| tz.from_local_datetime(&local).earliest()) {
        Some(t) => utc(t.with_timezone(&Utc)),
        None => local.format("%Y%m%dT%H%M%S").to_string(),
    }
}

/// The exclusive end date of an all-day stay: check-out, or the day after check-in for a stay
/// whose supplier dates are not in order (RFC 5545 §3.6.1: DTEND must be later than DTSTART).
fn all_day_end(checkin: NaiveDate, checkout: NaiveDate) -> NaiveDate {
    if checkout > checkin {
        checkout
    } else {
        checkin.succ_opt().unwrap_or(checkin)
    }
}

/// Supplier text fit for an iCalendar TEXT value: control characters (CR, LF, tabs, …) become
/// spaces, blank runs collapse, at most [`VALUE_MAX_CHARS`] characters. [`Ics::text`] escapes the
/// rest (`\`, `,`, `;`).
pub fn clean(s: &str) -> String {
    let spaced: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let one: Vec<&str> = spaced.split_whitespace().collect();
    one.join(" ").chars().take(VALUE_MAX_CHARS).collect()
}

/// A supplier's id as the local part of a UID: ASCII letters, digits, `.`, `_`, `-` and `@` as
/// they are, every other byte of its UTF-8 as `%XX` (upper-case hex; `%` itself too, so two ids
/// never share a UID). Deterministic: the same id always gives the same text, which is what keeps
/// every later email on the same calendar event. Ids of the usual shapes (`BK_1`, `ord_0000…`)
/// are unchanged.
pub fn uid_safe(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-' | b'@') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
    }
    out
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// The UID's domain: letters, digits, `.` and `-` only (it is ours, from configuration).
fn clean_domain(d: &str) -> String {
    let out: String = d
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
        .take(253)
        .collect();
    if out.is_empty() {
        "booking-email-engine.invalid".into()
    } else {
        out
    }
}
