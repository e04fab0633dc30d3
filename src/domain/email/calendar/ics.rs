//! The iCalendar writer: one VCALENDAR with one VEVENT, content lines folded at 75 octets on a
//! character boundary with CRLF ends (RFC 5545 §3.1), TEXT values escaped (`\`, `;`, `,`, line
//! breaks; §3.3.11), parameter values quoted (§3.2).

use chrono::{DateTime, TimeZone, Utc};

use super::{Event, Method, Party, When};

/// The object of one event under `method`, from `organizer`, for `attendee` (a CANCEL's guest).
pub fn write(
    method: Method,
    organizer: Option<&Party>,
    attendee: Option<&Party>,
    e: &Event,
) -> String {
    let mut w = Writer {
        out: String::with_capacity(1024),
    };
    w.line("BEGIN", "VCALENDAR");
    w.line("VERSION", "2.0");
    w.line("PRODID", "-//Bookings//Calendar//EN");
    w.line("CALSCALE", "GREGORIAN");
    w.line("METHOD", method.as_str());
    w.line("BEGIN", "VEVENT");
    w.line("UID", &e.uid);
    // Written in at hand-over (`CalendarPart::stamped`).
    w.line("DTSTAMP", &utc(0));
    w.line("SEQUENCE", "0");
    if let Some(o) = organizer {
        w.party("ORGANIZER", o, "");
    }
    if let Some(a) = attendee {
        w.party("ATTENDEE", a, ";ROLE=REQ-PARTICIPANT");
    }
    w.when("DTSTART", e.start);
    if let Some(end) = e.end {
        w.when("DTEND", end);
    }
    w.text("SUMMARY", &e.summary);
    w.text("LOCATION", &e.location);
    w.text("DESCRIPTION", &e.description);
    if e.transparent {
        w.line("TRANSP", "TRANSPARENT");
    }
    w.line(
        "STATUS",
        match method {
            Method::Publish => "CONFIRMED",
            Method::Cancel => "CANCELLED",
        },
    );
    w.line("END", "VEVENT");
    w.line("END", "VCALENDAR");
    w.out
}

/// An instant as an iCalendar UTC DATE-TIME (§3.3.5 form 2, `…Z`).
pub fn utc(ms: i64) -> String {
    let t: DateTime<Utc> = Utc.timestamp_millis_opt(ms).single().unwrap_or_default();
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

struct Writer {
    out: String,
}

impl Writer {
    fn when(&mut self, name: &str, w: When) {
        match w {
            When::Date(d) => self.line(
                &format!("{name};VALUE=DATE"),
                &d.format("%Y%m%d").to_string(),
            ),
            When::Utc(ms) => self.line(name, &utc(ms)),
            When::Floating(t) => self.line(name, &t.format("%Y%m%dT%H%M%S").to_string()),
        }
    }

    /// `NAME;CN="…"<params>:mailto:<email>`: the name without `"` or control characters (a
    /// quoted-string cannot hold them), bounded; the address as the engine parsed it.
    fn party(&mut self, name: &str, p: &Party, params: &str) {
        let cn: String = super::clean(&p.name)
            .chars()
            .filter(|c| *c != '"')
            .take(100)
            .collect();
        let email: String = p
            .email
            .chars()
            .filter(|c| !c.is_control() && !c.is_whitespace())
            .collect();
        let cn = if cn.trim().is_empty() {
            String::new()
        } else {
            format!(";CN=\"{}\"", cn.trim())
        };
        self.line(&format!("{name}{cn}{params}"), &format!("mailto:{email}"));
    }

    /// A TEXT property, escaped (§3.3.11).
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
    /// lines start with one space (§3.1), never splitting a character.
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
}
