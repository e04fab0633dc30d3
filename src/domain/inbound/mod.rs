//! Mail that comes back: a guest's reply to a booking email, read into what the owner needs and
//! filed by the reply token alone ([`crate::domain::inbound::reply_token`]). Pure: the shell (`src/inbound`)
//! hands over the raw bytes, the envelope and the counts it read from D1, and carries out the
//! [`Filing`].
//!
//! MIME is read by mail-parser (Stalwart's parser, <https://docs.rs/mail-parser/0.11.9>), chosen
//! over postal-mime 4.0.0 in the JavaScript glue, both measured on the same messages: it parses
//! here in the core, so real messages are tested by `cargo test` on the host; it reads a part in
//! a charset it does not know instead of throwing (postal-mime's `TextDecoder` throws
//! `RangeError: "x-unknown-charset" is not a valid encoding`, which is how `wrangler dev`'s own
//! email endpoint refuses `tests/fixtures/inbound/malformed.eml`); and it read a 10 MiB message
//! in well under a second where postal-mime took 16 s under Node on the same machine. Its price:
//! 66.2 KiB of the gzip upload (178.6 KiB raw), against 24.3 KiB gzip for a minified postal-mime.
//!
//! What is kept of a message, each bounded: the guest's words with the quoted history cut off
//! ([`quote`], [`TEXT_MAX_CHARS`]), the sender, subject, date, Message-ID and thread headers, the
//! verdicts of the topmost `Authentication-Results` header whose authserv-id is the receiving
//! system's ([`trusted_verdicts`]; any other is the sender's to write), and the attachments' names,
//! types and sizes ([`ATTACHMENTS_MAX`]). Attachments themselves are not kept (see docs/internals.md: a
//! guest's passport scan is not something this engine should hold).
//!
//! May use: `basics`.

pub mod auto;
pub mod quote;
pub mod reply_token;
pub mod share;

pub use auto::AutoKind;
pub use share::{share_of, SenderShare};

use crate::domain::basics::text::{cut_chars, header_value, is_unsafe_char};
use mail_parser::{HeaderValue, MessageParser, MimeHeaders};
use serde::{Deserialize, Serialize};

/// Longest guest text kept, characters (about four pages).
pub const TEXT_MAX_CHARS: usize = 8_000;
/// Attachments listed per message; more are counted.
pub const ATTACHMENTS_MAX: usize = 20;
/// Thread ids kept from `References` (the newest ones).
pub const REFERENCES_MAX: usize = 10;
/// Longest Message-ID kept, characters (RFC 5322 allows a 998-octet line).
pub const MESSAGE_ID_MAX: usize = 250;
/// What is kept of a message that cannot be read as MIME at all, characters.
pub const UNREADABLE_MAX_CHARS: usize = 2_000;

/// One attachment, as listed (not kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// File name (one line, at most 120 characters), or `(unnamed)`.
    pub name: String,
    /// `type/subtype`, lower case.
    pub content_type: String,
    /// Decoded size, bytes.
    pub size: u64,
}

/// One verdict of the topmost `Authentication-Results` header, e.g. `dkim` = `pass`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthVerdict {
    /// `spf`, `dkim`, `dmarc` or `arc`.
    pub method: String,
    /// RFC 8601 §2.7 result: `pass`, `fail`, `softfail`, `neutral`, `none`, `temperror`, …
    pub result: String,
}

/// What is kept of one inbound message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    /// The envelope sender (`MAIL FROM`), one line, bounded; empty for a null sender.
    pub envelope_from: String,
    /// The `From` header's address (else the envelope sender), one line, bounded.
    pub from: String,
    /// The `From` header's display name, one line, bounded; may be empty.
    pub from_name: String,
    pub subject: String,
    /// The `Date` header, ms UTC, when it parses.
    pub date_ms: Option<i64>,
    pub message_id: Option<String>,
    /// `In-Reply-To` ids, then `References` ids (newest [`REFERENCES_MAX`]), without `<>`.
    pub in_reply_to: Vec<String>,
    pub references: Vec<String>,
    /// The guest's words, quoted history cut, bounded to [`TEXT_MAX_CHARS`].
    pub text: String,
    /// Whether quoted history was cut off.
    pub quoted_removed: bool,
    pub auth: Vec<AuthVerdict>,
    pub attachments: Vec<Attachment>,
    /// Attachments beyond [`ATTACHMENTS_MAX`], counted only.
    pub attachments_more: usize,
    /// A machine wrote it ([`auto::classify`]).
    pub auto: Option<AutoKind>,
    /// What could not be kept, for the owner (one line): a message read only in part, one that is
    /// not MIME at all, text cut at its bound.
    pub note: Option<String>,
}

/// The authserv-id Cloudflare Email Routing stamps on the `Authentication-Results` header it adds
/// (`Authentication-Results: mx.cloudflare.net; dkim=pass …`, with `Received-SPF: … receiver=
/// mx.cloudflare.net`, as delivered messages show; Cloudflare's documentation names no id, so
/// `INBOUND_AUTHSERV_ID` can change it).
pub const CLOUDFLARE_AUTHSERV_ID: &str = "mx.cloudflare.net";

/// [`read_trusting`] with Email Routing's authserv-id, [`CLOUDFLARE_AUTHSERV_ID`].
pub fn read(raw: &[u8], envelope_from: &str, raw_size: u64) -> Inbound {
    read_trusting(raw, envelope_from, raw_size, CLOUDFLARE_AUTHSERV_ID)
}

/// Reads `raw` (the whole message, or its first bytes when `raw_size`, the size Email Routing
/// reported, is larger) into what is kept; sender checks are read only from an
/// `Authentication-Results` header of `authserv_id` ([`trusted_verdicts`]).
pub fn read_trusting(raw: &[u8], envelope_from: &str, raw_size: u64, authserv_id: &str) -> Inbound {
    let envelope_from = header_value(envelope_from, 254)
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_string();
    let mut notes = Vec::new();
    if raw_size > raw.len() as u64 {
        notes.push(format!(
            "only the first {} of {} bytes were read: attachments after that point are not listed",
            raw.len(),
            raw_size
        ));
    }
    let parsed = MessageParser::default()
        .parse(raw)
        // At least one well-formed field name (RFC 5322 §2.2: printable ASCII but `:`); anything
        // mail-parser takes for a header without one is not a message.
        .filter(|m| {
            m.headers().iter().any(|h| {
                !h.name().is_empty()
                    && h.name()
                        .bytes()
                        .all(|b| (33..=126).contains(&b) && b != b':')
            })
        });
    let Some(message) = parsed else {
        notes.push(
            "the message is not readable as MIME: its first characters are kept as text".into(),
        );
        let (text, _) = clean_text(&String::from_utf8_lossy(raw), UNREADABLE_MAX_CHARS);
        return Inbound {
            from: envelope_from.clone(),
            auto: auto::classify(|_| None, &envelope_from),
            envelope_from,
            from_name: String::new(),
            subject: String::new(),
            date_ms: None,
            message_id: None,
            in_reply_to: Vec::new(),
            references: Vec::new(),
            text,
            quoted_removed: false,
            auth: Vec::new(),
            attachments: Vec::new(),
            attachments_more: 0,
            note: Some(notes.join("; ")),
        };
    };
    let header = |name: &str| message.header_raw(name).map(str::to_string);
    let auto = auto::classify(header, &envelope_from).or_else(|| {
        message
            .subject()
            .filter(|s| auto::is_auto_reply_subject(s))
            .map(|_| AutoKind::AutoReply)
    });
    let sender = message.from().and_then(|a| a.first());
    let from = sender
        .and_then(|a| a.address.as_deref())
        .map(|a| header_value(a, 254))
        .filter(|a| a.contains('@'))
        .unwrap_or_else(|| envelope_from.clone());
    let from_name = sender
        .and_then(|a| a.name.as_deref())
        .map(|n| header_value(n, 120))
        .unwrap_or_default();
    // HTML-only mail: the history is cut where its client's quote element starts, before the
    // HTML becomes text (the element's attribution and quoted lines carry no `>` marks then).
    let html_only = message
        .text_part(0)
        .and_then(|p| match &p.body {
            mail_parser::PartType::Html(html) => Some(html.as_ref()),
            _ => None,
        })
        .and_then(quote::cut_html)
        .map(mail_parser::decoders::html::html_to_text);
    let html_cut = html_only.is_some();
    let body = html_only
        .or_else(|| message.body_text(0).map(|t| t.into_owned()))
        .filter(|t| !t.trim().is_empty())
        .or_else(|| {
            // A text part mail-parser could not decode (broken base64, say) is filed as an
            // attachment holding what came: the guest's words are shown as they came.
            message
                .attachments()
                .find(|p| p.is_content_type("text", "plain") && p.attachment_name().is_none())
                .map(|p| String::from_utf8_lossy(p.contents()).into_owned())
        })
        .unwrap_or_default();
    let stripped = quote::strip(&body);
    let (text, cut) = clean_text(&stripped.text, TEXT_MAX_CHARS);
    if cut {
        notes.push(format!("the text was cut at {TEXT_MAX_CHARS} characters"));
    }
    if body.trim().is_empty() && message.attachment_count() == 0 && !message.parts.is_empty() {
        notes.push("the message has no readable text".into());
    }
    let mut attachments = Vec::new();
    let mut attachments_more = 0;
    for part in message.attachments() {
        if attachments.len() == ATTACHMENTS_MAX {
            attachments_more += 1;
            continue;
        }
        let content_type = part
            .content_type()
            .map(|ct| match ct.subtype() {
                Some(sub) => format!("{}/{}", ct.ctype(), sub),
                None => ct.ctype().to_string(),
            })
            .map(|t| header_value(&t.to_ascii_lowercase(), 100))
            .unwrap_or_else(|| "application/octet-stream".into());
        attachments.push(Attachment {
            name: part
                .attachment_name()
                .map(|n| header_value(n, 120))
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "(unnamed)".into()),
            content_type,
            size: part.len() as u64,
        });
    }
    Inbound {
        from,
        from_name,
        subject: message
            .subject()
            .map(|s| header_value(s, 200))
            .unwrap_or_default(),
        date_ms: message.date().map(|d| d.to_timestamp() * 1000),
        message_id: message.message_id().map(message_id),
        in_reply_to: ids(message.in_reply_to(), usize::MAX),
        references: ids(message.references(), REFERENCES_MAX),
        text,
        quoted_removed: html_cut || stripped.removed,
        auth: trusted_verdicts(
            message
                .headers_raw()
                .filter(|(name, _)| name.eq_ignore_ascii_case("Authentication-Results"))
                .map(|(_, value)| value),
            authserv_id,
        ),
        attachments,
        attachments_more,
        auto,
        envelope_from,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// A Message-ID as kept: one line, without `<>`, bounded.
fn message_id(raw: &str) -> String {
    header_value(
        raw.trim().trim_start_matches('<').trim_end_matches('>'),
        MESSAGE_ID_MAX,
    )
}

/// The ids of an `In-Reply-To` or `References` header, the newest `max`.
fn ids(value: &HeaderValue<'_>, max: usize) -> Vec<String> {
    let all: Vec<String> = match value {
        HeaderValue::Text(t) => vec![message_id(t)],
        HeaderValue::TextList(list) => list.iter().map(|t| message_id(t)).collect(),
        _ => Vec::new(),
    };
    let skip = all.len().saturating_sub(max);
    all.into_iter()
        .skip(skip)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The verdicts of the topmost `Authentication-Results` header (`values`, top first) whose
/// authserv-id is `authserv_id` (compared without case), empty when none is: "unverified".
///
/// RFC 8601 §5: a receiving system adds its header above those already present, and §7.1: a
/// consumer ignores results from an authserv-id it does not trust, since anyone can write one
/// (a sender who writes `Authentication-Results: mx.cloudflare.net.evil.example; dkim=pass`
/// under a forged `From:` gets nothing shown). Only the topmost header of the trusted id is
/// read: one further down was there before the receiving system added its own. A message on
/// which Email Routing stamped nothing while the sender wrote one with its id cannot be told
/// apart here; RFC 8601 §5 asks the receiving system to remove such forgeries.
pub fn trusted_verdicts<'a>(
    values: impl IntoIterator<Item = &'a str>,
    authserv_id: &str,
) -> Vec<AuthVerdict> {
    values
        .into_iter()
        .map(without_comments)
        .find(|clean| {
            // `authserv-id [version]` before the first `;` (RFC 8601 §2.2).
            let head = clean.split(';').next().unwrap_or("");
            head.split_whitespace()
                .next()
                .is_some_and(|id| id.eq_ignore_ascii_case(authserv_id.trim()))
        })
        .map(|clean| auth_verdicts(&clean))
        .unwrap_or_default()
}

/// A header value without its RFC 5322 comments (parenthesised, nested).
fn without_comments(raw: &str) -> String {
    let mut depth = 0usize;
    raw.chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    return false;
                }
                _ => {}
            }
            depth == 0
        })
        .collect()
}

/// `method=result` pairs of one `Authentication-Results` value (RFC 8601 §2.2), for the methods
/// an owner can read: SPF, DKIM, DMARC, ARC. Comments in parentheses are ignored; the
/// authserv-id is not checked here ([`trusted_verdicts`] does).
pub fn auth_verdicts(raw: &str) -> Vec<AuthVerdict> {
    let mut out = Vec::new();
    let clean = without_comments(raw);
    for clause in clean.split(';').skip(1) {
        let Some((method, rest)) = clause.trim().split_once('=') else {
            continue;
        };
        let method = method.trim().to_ascii_lowercase();
        if !["spf", "dkim", "dmarc", "arc"].contains(&method.as_str()) || out.len() >= 8 {
            continue;
        }
        let result: String = rest
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .take(16)
            .collect::<String>()
            .to_ascii_lowercase();
        if !result.is_empty() {
            out.push(AuthVerdict { method, result });
        }
    }
    out
}

/// Guest text as kept: `\n` line breaks, control characters removed (a tab is a space), at most
/// two blank lines in a row, cut at `max` characters. Returns the text and whether it was cut.
pub fn clean_text(raw: &str, max: usize) -> (String, bool) {
    let mut out = String::with_capacity(raw.len().min(max * 4));
    let mut blank = 0;
    for line in raw.replace("\r\n", "\n").split(['\n', '\r']) {
        let line: String = line
            .chars()
            .map(|c| if c == '\t' { ' ' } else { c })
            .filter(|&c| !is_unsafe_char(c))
            .collect();
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 2 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
        if out.len() > max * 4 {
            break;
        }
    }
    let text = out.trim().to_string();
    let cut = text.chars().count() > max;
    (if cut { cut_chars(&text, max) } else { text }, cut)
}

/// Why a message is kept apart from every booking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unmatched {
    /// The recipient is not a valid reply address (the token's own error, one line).
    Token(String),
    /// The token verified, but no email of ours carries its reference (or its booking differs).
    UnknownEmail,
}

impl Unmatched {
    /// One line for the owner's pages.
    pub fn reason(&self) -> String {
        match self {
            Unmatched::Token(e) => e.clone(),
            Unmatched::UnknownEmail => "the reply token names no email of ours".into(),
        }
    }
}

/// The bounds on what inbound mail may cost (configuration `INBOUND_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InboundLimits {
    /// Bytes of a message read (Email Routing delivers up to 25 MiB); the rest is not read.
    pub read_max_bytes: u64,
    /// Guest messages alerted per booking per UTC day, in each sender share ([`SenderShare`]);
    /// more are kept but alert nobody.
    pub alerts_per_booking_per_day: u32,
    /// Messages kept per booking from the guest's own address ([`SenderShare::Guest`]); more
    /// are refused back to the sender.
    pub max_per_booking: u32,
    /// Messages kept per booking from any other sender ([`SenderShare::Other`]), all of them
    /// together; more are refused back to the sender. The guest's share stays free.
    pub max_per_booking_others: u32,
    /// Unmatched messages kept per UTC day; more are refused back to the sender.
    pub unmatched_per_day: u32,
}

impl InboundLimits {
    pub const DEFAULT: InboundLimits = InboundLimits {
        read_max_bytes: 4 * 1024 * 1024,
        alerts_per_booking_per_day: 5,
        max_per_booking: 200,
        max_per_booking_others: 50,
        unmatched_per_day: 200,
    };
}

/// What the counts in D1 say about one message, read by the shell before [`file`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// The share the message counts in ([`share_of`]); the next two count that share only.
    pub share: SenderShare,
    /// Messages of this share already kept on the matched booking (all days).
    pub on_booking: u32,
    /// Guest messages of this share on the matched booking alerted this UTC day.
    pub alerted_today: u32,
    /// Unmatched messages kept this UTC day.
    pub unmatched_today: u32,
}

/// Where a message goes. Stored `kind`: `guest`, `auto`, `unmatched`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filing {
    /// A person's message on its booking; `alert` when the owner is to be told at once.
    Guest { alert: bool },
    /// A machine's message on its booking: kept, never alerted.
    Auto(AutoKind),
    /// Kept apart from every booking, for the owner's list; never alerted.
    Unmatched(Unmatched),
    /// Not kept: refused back to the sending server with this reason (`setReject`, a permanent
    /// SMTP error, so the sender learns it was not delivered; nothing is lost silently).
    Refuse(String),
}

/// Files one message: `matched` is the booking the token named (after the shell found its
/// email), else why not.
pub fn file(
    matched: Result<(), Unmatched>,
    message: &Inbound,
    counts: Counts,
    limits: InboundLimits,
) -> Filing {
    match matched {
        Err(why) if counts.unmatched_today >= limits.unmatched_per_day => Filing::Refuse(format!(
            "not delivered: {} and this address takes no more unmatched mail today",
            why.reason()
        )),
        Err(why) => Filing::Unmatched(why),
        Ok(()) if counts.share == SenderShare::Guest
            && counts.on_booking >= limits.max_per_booking =>
        {
            Filing::Refuse(format!(
                "not delivered: this booking's conversation holds its maximum of {} messages; please write to us from the booking site",
                limits.max_per_booking
            ))
        }
        Ok(()) if counts.share == SenderShare::Other
            && counts.on_booking >= limits.max_per_booking_others =>
        {
            Filing::Refuse(format!(
                "not delivered: this booking's conversation holds its maximum of {} messages from senders other than the guest; please write from the address the booking email was sent to",
                limits.max_per_booking_others
            ))
        }
        Ok(()) => match message.auto {
            Some(kind) => Filing::Auto(kind),
            None => Filing::Guest {
                alert: counts.alerted_today < limits.alerts_per_booking_per_day,
            },
        },
    }
}

#[cfg(test)]
mod tests;
