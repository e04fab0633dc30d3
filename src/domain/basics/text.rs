//! Supplier text, normalised once (pure): what every adapter's output goes through before anything
//! else sees it, the one builder of header values, and the one builder of Workflow step-name parts.
//!
//! Supplier data is data: a hotel name may hold a CR/LF, a confirmation number may be 300
//! characters long, a status may be a paragraph. The rules, per field kind ([`LIMITS`]):
//! - Unicode is put in NFC ([`crate::domain::basics::nfc`], Unicode Standard Annex #15,
//!   <https://unicode.org/reports/tr15/>), so one name has one spelling in D1, in change hashes
//!   and in emails;
//! - control characters (Unicode category Cc, plus the line/paragraph separators U+2028/U+2029
//!   and the bidi controls U+202A–U+202E, U+2066–U+2069) are folded: where one line is meant every
//!   run of them and of whitespace becomes one space; in a multi-line field (check-in
//!   instructions) line breaks are kept as `\n` (at most two in a row) and other controls become a
//!   space;
//! - every field is cut at its kind's maximum (in characters, on a character boundary), with `…`
//!   as the last character of a cut value;
//! - what was changed is reported as [`Cut`]s, which the shell stores with the raw event.
//!
//! Header values ([`header_value`]) and step names ([`step_part`]) have their own bounds: a header
//! is one line of at most [`SUBJECT_MAX_CHARS`] characters; a step name part is at most
//! [`STEP_PART_MAX`] safe ASCII characters, with a hash suffix when anything was dropped (the
//! platform refuses step names over 256 characters or with control characters:
//! <https://developers.cloudflare.com/workflows/reference/limits/>).

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The kinds of supplier text, each with its own bound ([`LIMITS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TextKind {
    /// A person's first or last name.
    PersonName,
    /// A hotel's (or an airport's, a city's) name.
    PlaceName,
    /// A room or board description.
    Room,
    /// A hotel confirmation number or an airline booking reference.
    Code,
    /// A supplier id: hotel id, prebook id, payment intent, change id, client reference, …
    Id,
    /// A supplier status (`CONFIRMED`, `cancelled`, …) or event name.
    Status,
    /// A short code: IATA code, currency, flight number, amount, time zone, phone, decline code.
    Short,
    /// Check-in instructions: the one multi-line field.
    Instructions,
    /// Any other text field (a field this table does not name yet).
    Other,
}

/// One row of [`LIMITS`]: a kind's maximum length and whether line breaks are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub kind: TextKind,
    /// Maximum length in Unicode scalar values (characters), after normalisation.
    pub max_chars: usize,
    /// `true` only for [`TextKind::Instructions`]: line breaks are kept.
    pub multi_line: bool,
}

/// The documented maximum of every kind of supplier text (docs/suppliers.md "Text limits").
pub const LIMITS: [Limit; 9] = [
    limit(TextKind::PersonName, 100, false),
    limit(TextKind::PlaceName, 200, false),
    limit(TextKind::Room, 200, false),
    limit(TextKind::Code, 64, false),
    limit(TextKind::Id, 128, false),
    limit(TextKind::Status, 64, false),
    limit(TextKind::Short, 64, false),
    limit(TextKind::Instructions, 4000, true),
    limit(TextKind::Other, 500, false),
];

const fn limit(kind: TextKind, max_chars: usize, multi_line: bool) -> Limit {
    Limit {
        kind,
        max_chars,
        multi_line,
    }
}

impl TextKind {
    /// This kind's row of [`LIMITS`].
    pub fn limit(self) -> Limit {
        LIMITS
            .into_iter()
            .find(|l| l.kind == self)
            .unwrap_or(LIMITS[LIMITS.len() - 1])
    }

    /// The kind of a canonical event's field, by its (serialized) name. Fields not named here are
    /// [`TextKind::Other`]; the newtypes (`EventId`, `BookingRef`, `EmailAddress`) were already
    /// refused by their parsers when over their own bounds or holding a control character.
    /// `None` for the fields that hold such a newtype: they are kept verbatim (an id is an id).
    pub fn of_field(name: &str) -> Option<TextKind> {
        Some(match name {
            "booking_id" | "order_id" | "replaces" | "email" | "event_id" => return None,
            "first_name" | "last_name" => TextKind::PersonName,
            "hotel_name" | "name" | "city_name" => TextKind::PlaceName,
            "room_name" | "board_name" => TextKind::Room,
            "hotel_confirmation_number" | "booking_reference" => TextKind::Code,
            "hotel_id" | "prebook_id" | "transaction_id" | "client_reference" | "change_id"
            | "payment_intent" | "session_id" | "email_id" => TextKind::Id,
            "status" | "event_name" | "event_type" | "outcome" => TextKind::Status,
            "iata_code" | "currency" | "amount" | "flight_number" | "time_zone" | "phone"
            | "decline_code" => TextKind::Short,
            "instructions" | "checkin_instructions" => TextKind::Instructions,
            _ => TextKind::Other,
        })
    }
}

/// Characters that never stay in supplier text: C0/C1 controls, DEL, the Unicode line and
/// paragraph separators and the bidi embedding/override/isolate controls (which can make a
/// subject read backwards).
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// What normalising one field changed, recorded with the raw event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cut {
    /// The JSON path of the field in the canonical event (`event.hotel_booking.hotel_name`).
    pub field: String,
    pub kind: TextKind,
    /// Length before and after, in characters.
    pub chars_before: usize,
    pub chars_after: usize,
    /// Control characters folded or removed.
    pub controls: usize,
    /// `true` when the value was cut at its maximum.
    pub truncated: bool,
}

/// Normalises one value of `kind`: NFC, controls folded, whitespace runs collapsed (line breaks
/// kept only in a multi-line kind), trimmed, cut at the maximum with a trailing `…`. Returns the
/// value and the number of control characters folded.
pub fn normalise(raw: &str, kind: TextKind) -> (String, usize, bool) {
    let Limit {
        max_chars,
        multi_line,
        ..
    } = kind.limit();
    let mut out = String::with_capacity(raw.len().min(max_chars * 4 + 4));
    let mut controls = 0usize;
    let mut pending_space = false;
    let mut newlines = 0usize;
    let mut prev_cr = false;
    let mut len = 0usize;
    let mut truncated = false;
    // Reading stops a little past the maximum: what comes after is cut anyway.
    for c in crate::domain::basics::nfc::nfc(raw) {
        let is_break = matches!(
            c,
            '\n' | '\r' | '\u{2028}' | '\u{2029}' | '\u{0B}' | '\u{0C}'
        );
        if is_unsafe_char(c) {
            controls += 1;
        }
        if multi_line && is_break {
            // `\r\n` is one break.
            if !(c == '\n' && prev_cr) {
                newlines += 1;
            }
            prev_cr = c == '\r';
            pending_space = false;
            continue;
        }
        prev_cr = false;
        // A no-break space (U+00A0, U+202F) is not a line break and is kept: French puts one
        // before `:` in a subject ("Important : …"), and RFC 2047 encodes it like any letter.
        if is_unsafe_char(c) || (c.is_whitespace() && c != '\u{a0}' && c != '\u{202f}') {
            pending_space = true;
            continue;
        }
        if len > 0 {
            if newlines > 0 {
                for _ in 0..newlines.min(2) {
                    out.push('\n');
                    len += 1;
                }
            } else if pending_space {
                out.push(' ');
                len += 1;
            }
        }
        newlines = 0;
        pending_space = false;
        out.push(c);
        len += 1;
        if len > max_chars {
            truncated = true;
            break;
        }
    }
    if truncated {
        out = cut_chars(&out, max_chars);
    }
    (out, controls, truncated)
}

/// [`normalise`]d value of `kind` alone (for adapters that build their own shapes).
pub fn clean(raw: &str, kind: TextKind) -> String {
    normalise(raw, kind).0
}

/// At most `max` bytes of `s`, cut on a char boundary (for quotes in messages and stored details).
pub(crate) fn cut_bytes(s: &str, max: usize) -> &str {
    &s[..s.floor_char_boundary(max)]
}

/// `s` cut to at most `max` characters on a character boundary, ending in `…` when cut.
pub fn cut_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let keep: String = s.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", keep.trim_end())
}

/// Normalises every string in a canonical event's JSON in place, each by the kind of the field
/// holding it ([`TextKind::of_field`]; array elements take their array's kind), and returns what
/// changed. Numbers, booleans and `null` are left alone.
pub fn normalise_json(value: &mut Value, path: &str) -> Vec<Cut> {
    let mut cuts = Vec::new();
    walk(value, path, TextKind::Other, &mut cuts);
    cuts
}

fn walk(value: &mut Value, path: &str, kind: TextKind, cuts: &mut Vec<Cut>) {
    match value {
        Value::String(s) => {
            let (clean, controls, truncated) = normalise(s, kind);
            if clean != *s {
                cuts.push(Cut {
                    field: path.to_string(),
                    kind,
                    chars_before: s.chars().count(),
                    chars_after: clean.chars().count(),
                    controls,
                    truncated,
                });
                *s = clean;
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                walk(item, &format!("{path}[{i}]"), kind, cuts);
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                if let Some(kind) = TextKind::of_field(key) {
                    walk(item, &child, kind, cuts);
                }
            }
        }
        _ => {}
    }
}

/// Maximum length of a subject, in characters ([`header_value`]): longer ones are cut with `…`.
/// RFC 5322 §2.1.1 asks for lines of at most 78 characters and allows 998; mail-builder folds an
/// encoded subject, and 200 characters is far past what any mail client shows.
pub const SUBJECT_MAX_CHARS: usize = 200;

/// Maximum length of any other header value the engine builds (`List-Unsubscribe`, …), in
/// characters: RFC 5322 §2.1.1's 998-character line limit, less room for the name.
pub const HEADER_MAX_CHARS: usize = 900;

/// The one builder of header values (subjects, extra headers) for every provider: one line (every
/// control character and line separator folded into a space, whitespace collapsed), trimmed, at
/// most `max_chars` characters, cut on a character boundary with `…`.
pub fn header_value(raw: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(raw.len().min(max_chars * 4 + 4));
    let mut len = 0usize;
    let mut pending_space = false;
    for c in raw.chars() {
        // A no-break space (U+00A0, U+202F) is not a line break and is kept: French puts one
        // before `:` in a subject ("Important : …"), and RFC 2047 encodes it like any letter.
        if is_unsafe_char(c) || (c.is_whitespace() && c != '\u{a0}' && c != '\u{202f}') {
            pending_space = true;
            continue;
        }
        if pending_space && len > 0 {
            out.push(' ');
            len += 1;
        }
        pending_space = false;
        out.push(c);
        len += 1;
        if len > max_chars {
            return cut_chars(&out, max_chars);
        }
    }
    out
}

/// Longest piece of untrusted text (a claimed event id, …) quoted inside a message, in
/// characters before quoting ([`quoted`]).
pub const QUOTED_MAX_CHARS: usize = 200;

/// Untrusted text as a message quotes it: one line ([`header_value`]), at most
/// [`QUOTED_MAX_CHARS`] characters (cut with `…`), in Rust's debug quotes (`"…"`, inner `"` and
/// `\` escaped, a character that does not print as `\u{…}`, at most 10 characters). So a message
/// that names what a delivery claimed stays bounded whatever was sent: at most 10 × 200 + 2 bytes
/// of quote (about 200 for a real id).
pub fn quoted(raw: &str) -> String {
    format!("{:?}", header_value(raw, QUOTED_MAX_CHARS))
}

/// Maximum length of one step-name part ([`step_part`]), in ASCII characters. A step name is a
/// few words plus at most two parts, far below the platform's 256.
pub const STEP_PART_MAX: usize = 64;

/// The one way supplier data (ids, codes, statuses) becomes part of a Workflow step name or
/// instance id: deterministic (a replay finds its cached steps), at most [`STEP_PART_MAX`]
/// characters from `[A-Za-z0-9._:-]`. A value that is already short and safe is kept as is
/// (existing step names do not change); anything else keeps its safe characters (at most 48) and
/// gets `~` and the first 12 hex digits of the SHA-256 of the raw value, so two different values
/// never share a part in practice.
pub fn step_part(raw: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-');
    if !raw.is_empty() && raw.len() <= STEP_PART_MAX && raw.chars().all(safe) {
        return raw.to_string();
    }
    let kept: String = raw.chars().filter(|&c| safe(c)).take(48).collect();
    let digest = hex::encode(Sha256::digest(raw.as_bytes()));
    format!("{kept}~{}", &digest[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_text_is_one_bounded_line() {
        assert_eq!(quoted("evt_1"), "\"evt_1\"");
        let huge = "\"".repeat(262_144);
        let q = quoted(&huge);
        assert_eq!(q.chars().count(), 2 * (QUOTED_MAX_CHARS - 1) + 1 + 2);
        assert!(q.ends_with("…\""), "{q}");
        assert!(q.len() <= 10 * QUOTED_MAX_CHARS + 2);
        assert!(quoted(&"\u{301}".repeat(100_000)).len() <= 10 * QUOTED_MAX_CHARS + 2);
        let lines = quoted("a\r\nb\u{2028}c");
        assert_eq!(lines, "\"a b c\"");
    }

    #[test]
    fn one_line_fields_fold_controls_and_collapse_space() {
        let (v, controls, cut) = normalise("  Hotel\r\nBad\u{0}Name\t ", TextKind::PlaceName);
        assert_eq!(v, "Hotel Bad Name");
        assert_eq!(controls, 4);
        assert!(!cut);
    }

    #[test]
    fn instructions_keep_line_breaks_but_not_more_than_two() {
        let (v, _, _) = normalise(
            "Door code 1234\r\n\r\n\r\n\r\nKeys\u{7}at desk",
            TextKind::Instructions,
        );
        assert_eq!(v, "Door code 1234\n\nKeys at desk");
    }

    #[test]
    fn long_values_are_cut_with_an_ellipsis() {
        let (v, _, cut) = normalise(&"x".repeat(300), TextKind::Code);
        assert!(cut);
        assert_eq!(v.chars().count(), 64);
        assert!(v.ends_with('…'));
    }

    #[test]
    fn nfc_makes_one_spelling() {
        let (v, _, _) = normalise("Cafe\u{301}", TextKind::PlaceName);
        assert_eq!(v, "Caf\u{e9}");
    }

    #[test]
    fn header_value_is_one_bounded_line() {
        assert_eq!(
            header_value("Your stay\r\nBcc: x@evil", 200),
            "Your stay Bcc: x@evil"
        );
        let long = header_value(&"é".repeat(1000), SUBJECT_MAX_CHARS);
        assert_eq!(long.chars().count(), SUBJECT_MAX_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(header_value("plain", 200), "plain");
    }

    #[test]
    fn step_part_keeps_plain_ids_and_hashes_odd_ones() {
        assert_eq!(step_part("LA-12345"), "LA-12345");
        let odd = step_part("ABC\n123");
        assert!(odd.starts_with("ABC123~") && odd.len() == 7 + 12, "{odd}");
        let long = step_part(&"A".repeat(300));
        assert!(long.len() <= STEP_PART_MAX);
        assert_ne!(step_part(&"A".repeat(300)), step_part(&"A".repeat(301)));
        assert_eq!(step_part("x y"), step_part("x y"));
        assert!(step_part("").starts_with('~'));
    }
}
