//! Formatting shared by every email and page: dates, money, names, airports, and supplier
//! check-in instructions as plain text. Pure string functions; the HTML templates escape their
//! results.

use crate::domain::event::{Airport, FlightSegment, HotelBooking, Money};
use chrono::{Datelike, NaiveDate, NaiveDateTime};

/// A date as guests read it: `Fri 12 June 2026`.
pub(super) fn long_date(d: NaiveDate) -> String {
    d.format("%a %-d %B %Y").to_string()
}

/// An amount as guests read it: `540 EUR` (the supplier's amount string, untouched).
pub(super) fn money(m: &Option<Money>) -> Option<String> {
    m.as_ref().map(|m| format!("{} {}", m.amount, m.currency))
}

/// The guests of a stay, comma-separated; the holder when the supplier listed none.
pub(super) fn guest_list(b: &HotelBooking) -> String {
    let names: Vec<String> = if b.guests.is_empty() {
        vec![b.holder.name.full()]
    } else {
        b.guests.iter().map(|g| g.full()).collect()
    };
    names.join(", ")
}

/// The greeting line of a guest email: `hi` with the first name, or `hi-no-name` (a greeting
/// that reads right on its own and assumes no gender, `Hello,` / `Guten Tag,`) when the supplier
/// gave none.
pub(super) fn greet(tr: crate::domain::i18n::Tr, first_name: &str) -> String {
    let first = first_name.trim();
    if first.is_empty() {
        tr.t("hi-no-name")
    } else {
        tr.t1("hi", "name", first)
    }
}

/// A compact date range, e.g. `Fri 12 June – Mon 15 June 2026` (the year once when shared).
pub(super) fn date_range(from: NaiveDate, to: NaiveDate) -> String {
    if from == to {
        long_date(from)
    } else if from.year() == to.year() {
        format!("{} – {}", from.format("%a %-d %B"), long_date(to))
    } else {
        format!("{} – {}", long_date(from), long_date(to))
    }
}

/// A local wall-clock time as guests read it: `Fri 12 June 2026, 07:15 (local time)`.
pub(super) fn local_time(t: NaiveDateTime) -> String {
    t.format("%a %-d %B %Y, %H:%M (local time)").to_string()
}

/// An airport as a guest reads it: `London Heathrow (LHR)`.
pub(super) fn airport_label(a: &Airport) -> String {
    let name = a.name.trim();
    if name.is_empty() {
        a.iata_code.clone()
    } else {
        format!("{name} ({})", a.iata_code)
    }
}

/// The city of an airport, else its name, else its IATA code.
pub(super) fn airport_city(a: &Airport) -> &str {
    [a.city_name.as_deref(), Some(a.name.as_str())]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or(a.iata_code.as_str())
}

/// Where a trip goes: the last arrival, or, for a round trip (back where it started), the airport
/// of the longest stop between two segments.
pub(super) fn trip_destination(segments: &[FlightSegment]) -> Option<&Airport> {
    let first = segments.first()?;
    let last = segments.last()?;
    if segments.len() < 2 || last.destination.iata_code != first.origin.iata_code {
        return Some(&last.destination);
    }
    segments
        .windows(2)
        .max_by_key(|w| w[1].departing_at - w[0].arriving_at)
        .map(|w| &w[0].destination)
}

/// Check-in instructions as plain text: suppliers often send HTML fragments (`<p>`, `<ul><li>`,
/// `<br>`, entities). Tags become line breaks or bullets, other tags go, a few entities are
/// decoded, blank runs collapse. The result is escaped again by the HTML templates.
pub fn plain_instructions(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(lt) = rest.find('<') {
        out.push_str(&rest[..lt]);
        let after = &rest[lt + 1..];
        let is_tag = after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '!');
        match after
            .find('>')
            .filter(|&gt| is_tag && !after[..gt].contains('<'))
        {
            Some(gt) => {
                let tag = after[..gt].trim_start_matches('/').to_ascii_lowercase();
                let name: String = tag
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                let closing = after.starts_with('/');
                match name.as_str() {
                    "li" if !closing => out.push_str("\n• "),
                    "li" => {}
                    "br" | "p" | "div" | "ul" | "ol" | "tr" | "h1" | "h2" | "h3" | "h4" | "h5"
                    | "h6" => out.push('\n'),
                    _ => {}
                }
                rest = &after[gt + 1..];
            }
            None => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    let decoded = out
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
    let mut lines: Vec<&str> = Vec::new();
    for line in decoded.lines().map(str::trim) {
        if line.is_empty() && lines.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        lines.push(line);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

/// The trimmed value, or `None` when absent or blank.
pub(super) fn non_empty(s: Option<&str>) -> Option<&str> {
    s.map(str::trim).filter(|s| !s.is_empty())
}
