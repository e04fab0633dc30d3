//! Content lock: client email must never leak internals. The rules below run on a rendered
//! subject, text and HTML. For guest mail they run on the template's own output, every supplier
//! value neutralised (`crate::domain::render::guard`), so a guest's or a hotel's name never trips
//! them; a locked email is refused (`blocked` + owner alert naming the violations and where they
//! came from), never "fixed" silently. Owner alerts are defanged instead (`guard`).
//!
//! Rules for client email:
//! - **Admin URL** ([`LockViolation::AdminUrl`]): any occurrence of a configured admin marker — a
//!   path such as `/admin`, or a host (with optional path) such as the engine's own
//!   `PUBLIC_BASE_URL` — and, always, an `/admin` path segment. The engine's public
//!   [`PUBLIC_ENGINE_PATHS`] (`/unsubscribe/…`) are allowed on the engine host: marketing email must
//!   carry a visible unsubscribe link.
//! - **Owner-action link** ([`LockViolation::ActionLink`]): `/actions/` anywhere (the owner's
//!   one-click action links: a guest must never be able to act as the owner).
//! - **Internal name** ([`LockViolation::InternalName`]): a configured word (e.g. `workflow`,
//!   `durable object`, `liteapi`, `duffel`, `outbox`), case-insensitive, as a **whole word**.
//! - **Placeholder** ([`LockViolation::Placeholder`]): an unrendered template marker `{{`, `}}`,
//!   `{%`, `%}`, `{#`, `#}`, `${`, `[[` or `]]`.
//!
//! A whole email is checked by `ContentLock::check`, defined beside the render guard
//! (`crate::domain::render::guard`) so that this module needs none of the email types; the rules
//! themselves work on loose parts ([`ContentLock::check_parts`]).
//!
//! Owner alerts (audience `Owner`, and a kind whose audience is `Owner`, so a mislabelled client
//! email stays locked) may carry admin URLs, action links and internal names, but **not**
//! placeholders: an unrendered template is a bug whoever reads it.
//!
//! Matching details (documented decisions):
//! - Characters that render as nothing (zero-width, soft hyphen, bidi controls) are removed and
//!   full-width ASCII forms folded before matching; look-alikes of other scripts are not.
//! - A public engine path passes only as `/unsubscribe/<one opaque token>` ending the URL:
//!   `/unsubscribe/../health` or `/unsubscribe/<token>/x` are admin URLs.
//! - Markers and URLs are matched ASCII case-insensitively; HTML is read after decoding the entities
//!   that can hide a `/` or `:` (`&#47;`, `&#x2f;`, `&sol;`, `&#58;`, `&#x3a;`, `&colon;`) and
//!   `&nbsp;`.
//! - A path marker that does not end in `/` must end a path segment: `/admin`, `/admin/x`,
//!   `/admin?x`, `/admin.php` match; `/administration`, `/admins` do not.
//! - A host marker must be the whole host: `engine.example.com` matches
//!   `https://engine.example.com/x`, `engine.example.com:8787` and `noreply@engine.example.com`, but
//!   not `myengine.example.com`, `a.engine.example.com` or `engine.example.com.evil.net`.
//! - Internal names are whole words: a word character is a Unicode letter or digit, so `_`, `-`,
//!   `.`, `/` and punctuation are boundaries. `outbox`, `Outbox:`, `liteapi_key`, `liteapi.travel`
//!   match `outbox` / `liteapi`; **`outboxes` and `workflowy` do not** (derived forms are different
//!   words — configure them explicitly if they matter). In a multi-word name the words may be
//!   separated by any run of spaces, `-` or `_`, or by nothing: `durable object` also matches
//!   `Durable  Object`, `durable-object`, `durable_object` and `DurableObject`.
//! - Placeholders inside `<style>…</style>` are ignored (CSS nests braces: `@media{a{b:c}}`); the
//!   templates use inline styles only, so this never hides a real placeholder.

use crate::domain::basics::text::cut_bytes;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Always an admin path (as a path segment), whatever the configuration.
pub const ADMIN_PATH: &str = "/admin";

/// Always an owner-action link.
pub const ACTION_PATH: &str = "/actions/";

/// Paths of the engine that client email may link to (on the engine's own host).
pub const PUBLIC_ENGINE_PATHS: &[&str] = &["/unsubscribe/"];

/// Unrendered-template openers; each is reported with the text up to its closer.
const OPENERS: [&str; 5] = ["{{", "{%", "{#", "${", "[["];
/// Unrendered-template closers (reported when seen without an opener).
const CLOSERS: [&str; 4] = ["}}", "%}", "#}", "]]"];

/// Longest text quoted in a violation.
const QUOTE_MAX: usize = 120;

/// One reason a client email was refused. The string is the offending URL or text (cut to 120
/// bytes), or the configured internal name. Stored with an email's [`LockVerdict`]
/// as `{"<snake_case variant>": "<text>"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockViolation {
    AdminUrl(String),
    ActionLink(String),
    InternalName(String),
    Placeholder(String),
}

impl fmt::Display for LockViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockViolation::AdminUrl(s) => write!(f, "admin URL: {s}"),
            LockViolation::ActionLink(s) => write!(f, "owner-action link: {s}"),
            LockViolation::InternalName(s) => write!(f, "internal name: {s}"),
            LockViolation::Placeholder(s) => write!(f, "unrendered placeholder: {s}"),
        }
    }
}

/// The content lock's verdict on an email, made when it was rendered
/// (`crate::domain::render::guard::guarded`); stored with it
/// (`OutgoingEmail::lock`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockVerdict {
    /// Violations in the template's own output (every input string neutralised). Non-empty →
    /// blocked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub template: Vec<LockViolation>,
    /// How many input strings carried a link to the engine that was replaced by
    /// `crate::domain::render::guard::LINK_REMOVED`.
    #[serde(default)]
    pub links_removed: u32,
}

/// All violations on one line (`; `-separated), for `last_error` and the owner alert.
pub fn describe(violations: &[LockViolation]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The configured lock. Build once per request from configuration ([`ContentLock::from_config`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContentLock {
    /// Lower-case; scheme and trailing `/` removed. Starting with `/` = path marker, else host
    /// (with optional path).
    admin_markers: Vec<String>,
    /// Lower-case words, single-space separated.
    internal_names: Vec<String>,
}

impl ContentLock {
    /// A lock with these admin markers (e.g. `/admin`, `https://engine.example.com`) and internal
    /// names (e.g. `durable object`). Blank entries are ignored; duplicates removed.
    pub fn new<M, N>(admin_markers: M, internal_names: N) -> Self
    where
        M: IntoIterator,
        M::Item: AsRef<str>,
        N: IntoIterator,
        N::Item: AsRef<str>,
    {
        let mut markers: Vec<String> = Vec::new();
        for m in admin_markers {
            if let Some(m) = normalize_marker(m.as_ref()) {
                if !markers.contains(&m) {
                    markers.push(m);
                }
            }
        }
        let mut names: Vec<String> = Vec::new();
        for n in internal_names {
            let n = normalize_name(n.as_ref());
            if !n.is_empty() && !names.contains(&n) {
                names.push(n);
            }
        }
        Self {
            admin_markers: markers,
            internal_names: names,
        }
    }

    /// From configuration: admin markers `/admin`, `/actions/` and the engine's `PUBLIC_BASE_URL`
    /// (host and any path; the engine must not be named in client mail except for its
    /// [`PUBLIC_ENGINE_PATHS`]); internal names from a comma-separated list (blank entries
    /// ignored).
    ///
    /// `PUBLIC_BASE_URL` must be the engine's own origin (e.g. its `workers.dev` host), not the
    /// booking site's: if both shared a host without a path, every link to the site would be
    /// refused. An engine mounted under a path of a shared host (`https://example.com/engine`)
    /// is fine: the marker is then `example.com/engine`.
    pub fn from_config(public_base_url: &str, internal_names_csv: &str) -> Self {
        Self::new(
            [ADMIN_PATH, ACTION_PATH, public_base_url],
            internal_names_csv.split(','),
        )
    }

    /// The normalized admin markers.
    pub fn admin_markers(&self) -> &[String] {
        &self.admin_markers
    }

    /// The normalized internal names.
    pub fn internal_names(&self) -> &[String] {
        &self.internal_names
    }

    /// [`ContentLock::check`] on loose parts (previews, tests). `owner_alert` exempts from every
    /// rule but placeholders.
    pub fn check_parts(
        &self,
        owner_alert: bool,
        subject: &str,
        text: &str,
        html: &str,
    ) -> Result<(), Vec<LockViolation>> {
        let mut found: Vec<LockViolation> = Vec::new();
        let html = fold_hiding_characters(&decode_hiding_entities(html));
        let (subject, text) = (
            fold_hiding_characters(subject),
            fold_hiding_characters(text),
        );
        for (part, is_html) in [
            (subject.as_str(), false),
            (text.as_str(), false),
            (html.as_str(), true),
        ] {
            if !owner_alert {
                self.scan_links(part, &mut found);
                self.scan_names(part, &mut found);
            }
            if is_html {
                scan_placeholders(&blank_style_blocks(part), &mut found);
            } else {
                scan_placeholders(part, &mut found);
            }
        }
        let mut unique: Vec<LockViolation> = Vec::with_capacity(found.len());
        for v in found {
            if !unique.contains(&v) {
                unique.push(v);
            }
        }
        if unique.is_empty() {
            Ok(())
        } else {
            Err(unique)
        }
    }

    /// Byte ranges of `s` (folded with [`fold_hiding_characters`] first by the caller) holding a
    /// whole URL-ish token that the client rules refuse: an action link, an admin path or one of the
    /// admin markers. Used to defang supplier values before a client email is rendered.
    pub fn link_spans(&self, s: &str) -> Vec<(usize, usize)> {
        let lower = s.to_ascii_lowercase();
        let mut hits = path_matches(&lower, ACTION_PATH);
        hits.extend(path_matches(&lower, ADMIN_PATH));
        for marker in &self.admin_markers {
            if marker.starts_with('/') {
                hits.extend(path_matches(&lower, marker));
            } else {
                hits.extend(host_matches(&lower, marker));
            }
        }
        hits.into_iter()
            .map(|(start, end)| token_span(s, start, end))
            .collect()
    }

    fn scan_links(&self, part: &str, out: &mut Vec<LockViolation>) {
        let lower = part.to_ascii_lowercase();
        for (start, end) in path_matches(&lower, ACTION_PATH) {
            out.push(LockViolation::ActionLink(token_around(part, start, end)));
        }
        for (start, end) in path_matches(&lower, ADMIN_PATH) {
            out.push(LockViolation::AdminUrl(token_around(part, start, end)));
        }
        for marker in &self.admin_markers {
            let hits = if marker.starts_with('/') {
                path_matches(&lower, marker)
            } else {
                host_matches(&lower, marker)
            };
            // `/actions` hits are already reported as action links above.
            if marker == ACTION_PATH.trim_end_matches('/') {
                continue;
            }
            for (start, end) in hits {
                out.push(LockViolation::AdminUrl(token_around(part, start, end)));
            }
        }
    }

    fn scan_names(&self, part: &str, out: &mut Vec<LockViolation>) {
        let lower = part.to_lowercase();
        for name in &self.internal_names {
            if contains_word_sequence(&lower, name) {
                out.push(LockViolation::InternalName(name.clone()));
            }
        }
    }
}

/// `https://Engine.Example.com/` → `engine.example.com`; `/Admin` → `/admin`; `/actions/` →
/// `/actions`. `None` when blank.
fn normalize_marker(raw: &str) -> Option<String> {
    let mut m = raw.trim().to_ascii_lowercase();
    for scheme in ["https://", "http://", "//"] {
        if let Some(rest) = m.strip_prefix(scheme) {
            m = rest.to_string();
            break;
        }
    }
    let m = m.trim_end_matches('/');
    (!m.is_empty()).then(|| m.to_string())
}

/// Lower-case words joined by single spaces (`-`, `_` and whitespace separate words).
fn normalize_name(raw: &str) -> String {
    raw.to_lowercase()
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_ascii_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// Occurrences of a path marker (lower-case, trailing `/` ignored) in `lower` that end a path
/// segment: the next byte is not a letter, digit, `-` or `_` (so `/actions/` also catches a bare
/// `/actions` or `/actions?x`, and `/admin` does not catch `/administration`).
fn path_matches(lower: &str, marker: &str) -> Vec<(usize, usize)> {
    let marker = marker.trim_end_matches('/');
    if marker.is_empty() {
        return Vec::new();
    }
    let bytes = lower.as_bytes();
    lower
        .match_indices(marker)
        .map(|(s, m)| (s, s + m.len()))
        .filter(|&(_, e)| bytes.get(e).is_none_or(|&b| !is_ascii_word(b)))
        .collect()
}

/// Occurrences of a host marker (`host` or `host/path`, lower-case) that are the whole host and not
/// followed by one of the [`PUBLIC_ENGINE_PATHS`].
fn host_matches(lower: &str, marker: &str) -> Vec<(usize, usize)> {
    let bytes = lower.as_bytes();
    lower
        .match_indices(marker)
        .map(|(s, m)| (s, s + m.len()))
        .filter(|&(s, e)| {
            let before_ok = s == 0 || {
                let b = bytes[s - 1];
                !(is_ascii_word(b) || b == b'.')
            };
            let after_ok = match bytes.get(e) {
                None => true,
                Some(&b) if is_ascii_word(b) => false,
                Some(b'.') => !bytes.get(e + 1).is_some_and(|b| b.is_ascii_alphanumeric()),
                Some(_) => true,
            };
            let public = PUBLIC_ENGINE_PATHS.iter().any(|p| {
                lower[e..]
                    .strip_prefix(p)
                    .is_some_and(is_public_engine_token)
            });
            before_ok && after_ok && !public
        })
        .collect()
}

/// `true` when `rest` (what follows a public engine path such as `/unsubscribe/`) starts with one
/// opaque token (`A–Z a–z 0–9 - _ .`, not starting with `.`, no `..`) that ends the URL: nothing
/// may follow it but a delimiter or sentence punctuation. So `…/unsubscribe/<token>` passes, while
/// `…/unsubscribe/../health`, `…/unsubscribe/%2e%2e/x` or `…/unsubscribe/x/y` stay admin URLs.
fn is_public_engine_token(rest: &str) -> bool {
    let len = rest
        .bytes()
        .take_while(|&b| is_ascii_word(b) || b == b'.')
        .count();
    let token = &rest[..len];
    if token.is_empty() || token.starts_with('.') || token.contains("..") {
        return false;
    }
    match rest[len..].chars().next() {
        None => true,
        Some(c) => is_delimiter(c) || matches!(c, ',' | ';' | ':' | '!'),
    }
}

/// Characters that render as nothing (zero-width spaces and joiners, soft hyphen, word joiner,
/// BOM, bidirectional controls) are removed, and full-width ASCII forms (`｛`, `ｗ`, …) are mapped to
/// ASCII, so `work\u{200b}flow` or `｛｛ name ｝｝` cannot slip past the rules. Look-alike letters
/// of other scripts (Cyrillic `о` for `o`) are not folded: that needs Unicode confusables data, and
/// the text is the engine's own templates or the operator's.
pub fn fold_hiding_characters(s: &str) -> String {
    s.chars()
        .filter(|&c| {
            !matches!(c,
                '\u{00AD}' | '\u{034F}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
        })
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            _ => c,
        })
        .collect()
}

fn is_delimiter(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '<' | '>' | '`' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '\\' | '^'
        )
}

/// The URL-ish token of `text` around the byte range `start..end`, cut to [`QUOTE_MAX`] bytes.
fn token_around(text: &str, start: usize, end: usize) -> String {
    let (from, to) = token_span(text, start, end);
    cut_bytes(&text[from..to], QUOTE_MAX).to_string()
}

/// The byte range of the URL-ish token of `text` around `start..end` (up to the delimiters).
fn token_span(text: &str, start: usize, end: usize) -> (usize, usize) {
    let from = text[..start]
        .char_indices()
        .rev()
        .find(|&(_, c)| is_delimiter(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let to = text[end..]
        .char_indices()
        .find(|&(_, c)| is_delimiter(c))
        .map_or(text.len(), |(i, _)| end + i);
    (from, to)
}

/// `true` when the words of `name` (single-space separated, lower-case) occur in `lower` as whole
/// words, consecutive, separated by any run of whitespace, `-` or `_` (or nothing).
fn contains_word_sequence(lower: &str, name: &str) -> bool {
    let words: Vec<&str> = name.split(' ').collect();
    let Some(first) = words.first() else {
        return false;
    };
    let is_word = |c: char| c.is_alphanumeric();
    lower.match_indices(first).any(|(start, w)| {
        if lower[..start].chars().next_back().is_some_and(is_word) {
            return false;
        }
        let mut pos = start + w.len();
        for next in &words[1..] {
            let rest = &lower[pos..];
            let skipped = rest.len()
                - rest
                    .trim_start_matches(|c: char| c.is_whitespace() || c == '-' || c == '_')
                    .len();
            pos += skipped;
            if !lower[pos..].starts_with(next) {
                return false;
            }
            pos += next.len();
        }
        !lower[pos..].chars().next().is_some_and(is_word)
    })
}

/// Decodes the HTML entities that could hide a `/` or `:` from the URL rules, and `&nbsp;`.
fn decode_hiding_entities(html: &str) -> String {
    const ENTITIES: [(&str, &str); 8] = [
        ("&#47;", "/"),
        ("&#x2f;", "/"),
        ("&sol;", "/"),
        ("&#58;", ":"),
        ("&#x3a;", ":"),
        ("&colon;", ":"),
        ("&nbsp;", " "),
        ("&#160;", " "),
    ];
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        match ENTITIES.iter().find(|(e, _)| {
            tail.get(..e.len())
                .is_some_and(|t| t.eq_ignore_ascii_case(e))
        }) {
            Some((e, ch)) => {
                out.push_str(ch);
                rest = &tail[e.len()..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `html` with the contents of every `<style>…</style>` replaced by nothing.
fn blank_style_blocks(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len());
    let mut pos = 0;
    while let Some(open) = lower[pos..].find("<style").map(|i| pos + i) {
        let Some(body) = lower[open..].find('>').map(|i| open + i + 1) else {
            break;
        };
        let close = lower[body..]
            .find("</style")
            .map_or(html.len(), |i| body + i);
        out.push_str(&html[pos..body]);
        pos = close;
    }
    out.push_str(&html[pos..]);
    out
}

/// Reports every unrendered-template marker in `s`.
fn scan_placeholders(s: &str, out: &mut Vec<LockViolation>) {
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if OPENERS.iter().any(|o| rest.starts_with(o)) {
            // Quote up to the first closer (or `}` for `${…}`) if it is near, else a short stretch.
            let window = cut_bytes(rest, QUOTE_MAX);
            let close = CLOSERS
                .iter()
                .filter_map(|c| window[2..].find(c).map(|j| 2 + j + c.len()))
                .chain(
                    rest.starts_with("${")
                        .then(|| window.find('}').map(|j| j + 1))
                        .flatten(),
                )
                .min();
            let end = close.unwrap_or_else(|| cut_bytes(rest, 40).len());
            out.push(LockViolation::Placeholder(rest[..end].trim().to_string()));
            i += end.max(2);
        } else if CLOSERS.iter().any(|c| rest.starts_with(c)) {
            let before = &s[..i];
            let mut from = i.saturating_sub(30);
            while !before.is_char_boundary(from) {
                from += 1;
            }
            out.push(LockViolation::Placeholder(
                s[from..i + 2].trim().to_string(),
            ));
            i += 2;
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_normalize() {
        assert_eq!(
            normalize_marker(" https://Engine.Example.com/ ").as_deref(),
            Some("engine.example.com")
        );
        assert_eq!(normalize_marker("/actions/").as_deref(), Some("/actions"));
        assert_eq!(normalize_marker("  "), None);
        assert_eq!(normalize_name(" Durable_Object "), "durable object");
    }

    #[test]
    fn tokens_are_cut_at_delimiters() {
        let t = "see <https://x.example/admin/y> now";
        let s = t.find("/admin").unwrap();
        assert_eq!(token_around(t, s, s + 6), "https://x.example/admin/y");
    }

    #[test]
    fn entity_decoding_and_style_blanking() {
        assert_eq!(
            decode_hiding_entities("a&#X2F;b&amp;c&nbsp;d"),
            "a/b&amp;c d"
        );
        assert_eq!(
            blank_style_blocks("<style>a{b:c}}</style><p>x</p>"),
            "<style></style><p>x</p>"
        );
    }

    #[test]
    fn word_sequences() {
        assert!(contains_word_sequence(
            "a durable-object here",
            "durable object"
        ));
        assert!(contains_word_sequence("durableobject", "durable object"));
        assert!(!contains_word_sequence(
            "indurable object",
            "durable object"
        ));
        assert!(!contains_word_sequence("durable objects", "durable object"));
    }
}
