//! The calendar parts of guest emails (RFC 5545 iCalendar, <https://www.rfc-editor.org/rfc/rfc5545>),
//! kept in step with the booking as calendar clients apply iTIP (RFC 5546,
//! <https://www.rfc-editor.org/rfc/rfc5546>):
//!
//! - **one calendar object per part, one event per object**: a hotel stay is one part; a flight
//!   journey is one part per segment. RFC 5546 ties an iTIP object to one calendar component (one
//!   `UID`, §1.4 and §3.1), Outlook imports each VEVENT as its own item and applies a message's
//!   METHOD to the object it opened ([MS-OXCICAL] §2.1.3.1.1.20), and the CalConnect iMIP guide
//!   advises one event per iMIP object; several UIDs in one object left every segment but the
//!   first to chance. Every part is its own `text/calendar; method=…` attachment;
//! - every event names its **`ORGANIZER`** (the brand, `mailto:` the sender address): RFC 5546
//!   requires it in PUBLISH and CANCEL (§3.2.1, §3.2.5), and without it Outlook shows an attached
//!   PUBLISH as a plain file. No `ATTENDEE` in PUBLISH (§3.2.1 forbids it: nobody is asked to
//!   answer); a CANCEL names the guest as the attendee it removes the event for (§3.2.5), never
//!   with `RSVP`;
//! - **UIDs from a stable identity**, never from a position or the sending domain: a stay is its
//!   booking id; a flight segment is its order id with the flight (carrier and number, leading
//!   zeros dropped), its route and its occurrence among equal flights of the order. A schedule
//!   change that re-sorts the segments or moves a flight's times keeps each flight's UID; a flight
//!   that is gone gets its own CANCEL ([`flight_change`]). The UID is a name-based UUID (version 8,
//!   SHA-256 of that identity, RFC 9562 §5.8 and Appendix B.2) without a domain, as RFC 7986 §5.3
//!   recommends, so changing the sender's domain changes no UID;
//! - `SEQUENCE` and `DTSTAMP` rise strictly per UID across every email: they are written in
//!   when the email is handed over (`crate::store::calendar`, one allocation per UID and
//!   dedupe key, [`CalendarPart::stamped`]): the next SEQUENCE of the UID, and a DTSTAMP at the
//!   event's time or one second after the UID's last one, whichever is later (§2.1.5 orders two
//!   versions by SEQUENCE, then DTSTAMP);
//! - a stay is an all-day event from check-in to check-out (`VALUE=DATE`, the hotel's calendar
//!   dates) that leaves the guest free (`TRANSP:TRANSPARENT`: a stay is not a meeting);
//! - a flight segment is timed in UTC from each airport's IANA zone (§3.3.5 form 2) when both
//!   zones are known, else both ends are the airports' local "floating" times (form 1): never a
//!   UTC start with a floating end. An end that is not after its start (a bad time, or a date
//!   line crossed in floating time) is left out: the event is its departure alone (§3.6.1);
//! - `METHOD:PUBLISH` and `STATUS:CONFIRMED` for the confirmation and every change;
//!   `METHOD:CANCEL` and `STATUS:CANCELLED` with the same UID for a cancellation.
//!
//! [MS-OXCICAL]: https://learn.microsoft.com/en-us/openspecs/exchange_server_protocols/ms-oxcical/
//! CalConnect iMIP best practices: <https://devguide.calconnect.org/iMIP/iMIP-Best-Practices/>.
//!
//! Written by the small writer of [`ics`] rather than the `icalendar` crate (75 KiB raw / 32 KiB
//! gzip of wasm for some eighty lines here, and its TEXT escaping keeps CR). Supplier text is
//! cleaned before it goes in: control characters become spaces, blank runs collapse, each value is
//! bounded.

pub mod ics;

use chrono::{NaiveDate, NaiveDateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

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
    /// The event is off (cancellation, a flight the airline removed).
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

/// A calendar user: the organizer (the brand and its sender address) or the guest a CANCEL is
/// for. `email` is an address the engine parsed (no line breaks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Party {
    /// The display name (`CN`), supplier or brand text: cleaned when written.
    pub name: String,
    pub email: String,
}

/// When an event starts or ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// An all-day date (`VALUE=DATE`).
    Date(NaiveDate),
    /// An instant, ms since the epoch (written in UTC, `…Z`).
    Utc(i64),
    /// A local wall-clock time with no zone ("floating").
    Floating(NaiveDateTime),
}

/// One event: what a calendar shows and the identity that keeps it one item across emails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// See the module docs ([`stay_uid`], [`segment_uids`]).
    pub uid: String,
    pub start: When,
    /// `None`: the event is its start alone.
    pub end: Option<When>,
    pub summary: String,
    pub location: String,
    /// Lines joined with `\n`.
    pub description: String,
    /// `TRANSP:TRANSPARENT` (the guest stays free: a hotel stay).
    pub transparent: bool,
}

/// One calendar attachment: `text/calendar; charset=utf-8; method=<method>` named `file_name`,
/// one VCALENDAR with one VEVENT. The object is written when the part is built, with `SEQUENCE:0`
/// and a `DTSTAMP` at the epoch; [`CalendarPart::stamped`] writes the allocated ones in (those
/// two lines are short and never folded, and supplier text cannot start a line: TEXT values
/// carry line breaks escaped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalendarPart {
    pub method: Method,
    /// `stay.ics`, `flight-1-LHR-BCN.ics`, … (ASCII letters, digits, `-`, `.`).
    #[serde(default = "default_file_name")]
    pub file_name: String,
    /// The event's UID; empty for a part queued before parts were stamped at hand-over (sent as
    /// it is).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The whole `VCALENDAR` object: CRLF line ends, folded at 75 octets.
    pub ics: String,
}

/// The `SEQUENCE` and `DTSTAMP` lines of a part not stamped yet.
const UNSTAMPED: (&str, &str) = ("\r\nSEQUENCE:0\r\n", "\r\nDTSTAMP:19700101T000000Z\r\n");

fn default_file_name() -> String {
    "invite.ics".into()
}

impl CalendarPart {
    /// The MIME content type with the iTIP method, as Gmail and Outlook read it
    /// (`text/calendar; charset=utf-8; method=PUBLISH`).
    pub fn content_type(&self) -> String {
        format!(
            "text/calendar; charset=utf-8; method={}",
            self.method.as_str()
        )
    }

    /// The whole `VCALENDAR` object: CRLF line ends, folded at 75 octets.
    pub fn text(&self) -> &str {
        &self.ics
    }

    /// The event's UID (`None` for a part queued whole before stamping).
    pub fn uid(&self) -> Option<&str> {
        (!self.uid.is_empty()).then_some(self.uid.as_str())
    }

    /// The part with its `SEQUENCE` and `DTSTAMP` (ms, UTC) as allocated for its UID (a part
    /// stamped before keeps its stamp).
    pub fn stamped(mut self, sequence: u32, stamp_ms: i64) -> Self {
        let (seq, stamp) = UNSTAMPED;
        if self.ics.contains(seq) && self.ics.contains(stamp) {
            self.ics = self
                .ics
                .replacen(seq, &format!("\r\nSEQUENCE:{sequence}\r\n"), 1)
                .replacen(stamp, &format!("\r\nDTSTAMP:{}\r\n", ics::utc(stamp_ms)), 1);
        }
        self
    }
}

/// Labels of the event texts, in the guest's language, each with its colon (`Booking ID:`,
/// `Numéro de réservation :`).
#[derive(Debug, Clone, Default)]
pub struct Labels {
    pub booking_id: String,
    pub hcn: String,
    pub pnr: String,
    /// A flight's summary before its route, e.g. `Flight ZZ 0472:` (`{}` is the flight number).
    pub flight: String,
}

/// The name-based UUID (version 8, RFC 9562 §5.8, SHA-256 as its Appendix B.2) of `name`.
fn uuid_of(name: &str) -> String {
    let mut b: [u8; 16] = Sha256::digest(name.as_bytes())[..16]
        .try_into()
        .unwrap_or([0; 16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// The UID of a hotel stay: from its booking id only.
pub fn stay_uid(booking_id: &str) -> String {
    uuid_of(&format!("booking-email-engine/stay/{booking_id}"))
}

/// A flight as an identity: carrier and number without spaces or leading zeros of the number
/// (`ZZ 0472` → `ZZ472`), and its route (`LHR-BCN`).
fn flight_key(s: &FlightSegment) -> String {
    let compact: String = s
        .flight_number
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let (carrier, number) = compact.split_at(compact.len().min(2));
    let number = number.trim_start_matches('0');
    format!(
        "{carrier}{number}/{}-{}",
        s.origin.iata_code.trim().to_ascii_uppercase(),
        s.destination.iata_code.trim().to_ascii_uppercase()
    )
}

/// The UID of each segment of an order, in the segments' order: its [`flight_key`] and its
/// occurrence among equal keys by departure (a flight flown twice in one order), so the same
/// flight keeps its UID whatever the list's order.
pub fn segment_uids(order_id: &str, segments: &[FlightSegment]) -> Vec<String> {
    segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let key = flight_key(s);
            let occurrence = segments
                .iter()
                .enumerate()
                .filter(|(j, o)| flight_key(o) == key && (o.departing_at, *j) < (s.departing_at, i))
                .count();
            uuid_of(&format!(
                "booking-email-engine/flight/{order_id}/{key}#{occurrence}"
            ))
        })
        .collect()
}

/// The calendar part of a hotel stay under `method`: one all-day event from check-in to
/// check-out. `guest` is named in a CANCEL.
pub fn hotel_stay(
    b: &HotelBooking,
    labels: &Labels,
    organizer: &Party,
    method: Method,
) -> CalendarPart {
    let hcn = b
        .hotel_confirmation_number
        .as_deref()
        .map(clean)
        .filter(|h| !h.is_empty());
    let address = b
        .location
        .as_ref()
        .and_then(|l| l.address.as_deref())
        .map(clean)
        .filter(|a| !a.is_empty());
    let name = clean(&b.hotel_name);
    let location = match &address {
        Some(a) => format!("{name}, {a}"),
        None => name.clone(),
    };
    let mut lines = vec![format!(
        "{} {}",
        labels.booking_id,
        clean(b.booking_id.as_str())
    )];
    if let Some(hcn) = hcn {
        lines.push(format!("{} {hcn}", labels.hcn));
    }
    lines.push(clean(&organizer.name));
    let guest = Party {
        name: b.holder.name.full(),
        email: b.holder.email.as_str().to_string(),
    };
    part(
        method,
        "stay.ics".into(),
        organizer,
        guest,
        Event {
            uid: stay_uid(b.booking_id.as_str()),
            start: When::Date(b.checkin),
            end: Some(When::Date(all_day_end(b.checkin, b.checkout))),
            summary: name,
            location,
            description: lines.join("\n"),
            transparent: true,
        },
    )
}

/// One calendar part per flight segment of `f` under `method`, in the segments' order.
pub fn flight_segments(
    f: &FlightBooking,
    labels: &Labels,
    organizer: &Party,
    method: Method,
) -> Vec<CalendarPart> {
    let uids = segment_uids(f.booking_id.as_str(), &f.segments);
    f.segments
        .iter()
        .zip(uids)
        .enumerate()
        .map(|(i, (seg, uid))| segment_part(f, i + 1, seg, uid, labels, organizer, method))
        .collect()
}

/// The parts of a schedule change from `before` to `after` (the same order): a PUBLISH of every
/// segment of `after`, then a CANCEL of every flight of `before` whose UID `after` no longer has.
pub fn flight_change(
    before: &FlightBooking,
    after: &FlightBooking,
    labels: &Labels,
    organizer: &Party,
) -> Vec<CalendarPart> {
    let mut parts = flight_segments(after, labels, organizer, Method::Publish);
    let kept = segment_uids(after.booking_id.as_str(), &after.segments);
    let old = segment_uids(before.booking_id.as_str(), &before.segments);
    for (i, (seg, uid)) in before.segments.iter().zip(old).enumerate() {
        if !kept.contains(&uid) {
            parts.push(segment_part(
                before,
                i + 1,
                seg,
                uid,
                labels,
                organizer,
                Method::Cancel,
            ));
        }
    }
    parts
}

fn segment_part(
    f: &FlightBooking,
    n: usize,
    seg: &FlightSegment,
    uid: String,
    labels: &Labels,
    organizer: &Party,
    method: Method,
) -> CalendarPart {
    let (start, end) = segment_times(seg);
    let flight = clean(&seg.flight_number);
    let route = format!(
        "{} → {}",
        clean(&seg.origin.iata_code),
        clean(&seg.destination.iata_code)
    );
    let mut lines = Vec::new();
    if let Some(pnr) = f
        .booking_reference
        .as_deref()
        .map(clean)
        .filter(|p| !p.is_empty())
    {
        lines.push(format!("{} {pnr}", labels.pnr));
    }
    lines.push(format!(
        "{} {}",
        labels.booking_id,
        clean(f.booking_id.as_str())
    ));
    lines.push(clean(&organizer.name));
    let code = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .take(8)
            .collect()
    };
    let file = format!(
        "{}-{n}-{}-{}.ics",
        match method {
            Method::Publish => "flight",
            Method::Cancel => "cancelled-flight",
        },
        code(&seg.origin.iata_code),
        code(&seg.destination.iata_code)
    );
    let guest = Party {
        name: f.contact.name.full(),
        email: f.contact.email.as_str().to_string(),
    };
    part(
        method,
        file,
        organizer,
        guest,
        Event {
            uid,
            start,
            end,
            summary: format!("{} {route}", labels.flight.replace("{}", &flight)),
            location: clean(&format!("{} ({})", seg.origin.name, seg.origin.iata_code)),
            description: lines.join("\n"),
            transparent: false,
        },
    )
}

fn part(
    method: Method,
    file_name: String,
    organizer: &Party,
    guest: Party,
    event: Event,
) -> CalendarPart {
    let attendee = (method == Method::Cancel).then_some(guest);
    CalendarPart {
        method,
        file_name,
        uid: event.uid.clone(),
        ics: ics::write(method, Some(organizer), attendee.as_ref(), &event),
    }
}

/// A segment's start and end: both in UTC when both airports' zones are known, else both the
/// airports' local (floating) times; no end when it would not come after the start.
fn segment_times(seg: &FlightSegment) -> (When, Option<When>) {
    let instant = |local: NaiveDateTime, zone: Option<&str>| -> Option<i64> {
        let tz: crate::domain::timezone::tzdb::Tz = zone?.parse().ok()?;
        Some(
            tz.from_local_datetime(&local)
                .earliest()?
                .with_timezone(&Utc)
                .timestamp_millis(),
        )
    };
    match (
        instant(seg.departing_at, seg.origin.time_zone.as_deref()),
        instant(seg.arriving_at, seg.destination.time_zone.as_deref()),
    ) {
        (Some(start), Some(end)) => (When::Utc(start), (end > start).then_some(When::Utc(end))),
        _ => (
            When::Floating(seg.departing_at),
            (seg.arriving_at > seg.departing_at).then_some(When::Floating(seg.arriving_at)),
        ),
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
/// spaces, blank runs collapse, at most [`VALUE_MAX_CHARS`] characters. The writer escapes the
/// rest (`\`, `,`, `;`).
pub fn clean(s: &str) -> String {
    let spaced: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let one: Vec<&str> = spaced.split_whitespace().collect();
    one.join(" ").chars().take(VALUE_MAX_CHARS).collect()
}
