//! Reading a server's reply.
//!
//! # Replies (RFC 5321 §4.2)
//!
//! `Reply-line = *( Reply-code "-" [ textstring ] CRLF ) Reply-code [ SP textstring ] CRLF`: the
//! text after the code is optional, so a bare `250` is a complete, positive reply. Servers also send
//! bare LF line ends and stray blank lines (reported against PHPMailer and other clients for
//! years); RFC 5321 §4.5.3.1 and the robustness principle of §2 let a client accept them.
//! [`normalize_reply_line`] turns each received line into the strict `NNN SP text CRLF` /
//! `NNN-text CRLF` form async-smtp's parser expects, and drops blank lines.

/// An RFC 3463 enhanced status code, `class.subject.detail` (e.g. `5.1.1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnhancedCode {
    /// 2, 4 or 5.
    pub class: u8,
    /// 0–999 (RFC 3463 §2: one to three digits).
    pub subject: u16,
    /// 0–999.
    pub detail: u16,
}

impl EnhancedCode {
    /// The enhanced code at the start of a reply's text (RFC 2034 §4), if any. Its class must be
    /// the reply code's first digit (RFC 3463 §2: a `550` never carries `4.x.x`); a mismatch or
    /// malformed code is ignored, never guessed.
    pub fn at_start(text: &str, reply_code: u16) -> Option<EnhancedCode> {
        let word = text.split_ascii_whitespace().next()?;
        let mut parts = word.split('.');
        let (class, subject, detail) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let digits = |s: &str, max: usize| {
            (!s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u16>().ok())
                .flatten()
        };
        let class = digits(class, 1)? as u8;
        let code = EnhancedCode {
            class,
            subject: digits(subject, 3)?,
            detail: digits(detail, 3)?,
        };
        (matches!(class, 2 | 4 | 5) && u16::from(class) == reply_code / 100).then_some(code)
    }

    /// qmail's form: the enhanced code in parentheses after a `#` at the very end of the text,
    /// `553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)` (qmail-smtpd and its
    /// successors netqmail and notqmail never put it first). Read only where no code starts the
    /// text, with the same checks as [`EnhancedCode::at_start`].
    pub fn at_end_in_parentheses(text: &str, reply_code: u16) -> Option<EnhancedCode> {
        let inner = text.trim_end().strip_suffix(')')?;
        let start = inner.rfind("(#")?;
        let code = &inner[start + 2..];
        if code.contains(char::is_whitespace) {
            return None;
        }
        EnhancedCode::at_start(code, reply_code)
    }

    pub(super) fn is(&self, subject: u16, detail: u16) -> bool {
        self.subject == subject && self.detail == detail
    }
}

impl std::fmt::Display for EnhancedCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.class, self.subject, self.detail)
    }
}

/// Longest reply text kept (in `last_error` and the owner's alert), in characters. The text is
/// the server's, untrusted: one line, bounded.
pub const REPLY_TEXT_MAX_CHARS: usize = 300;

/// One complete server reply: its code, the enhanced status code if the text starts with one, and
/// its text as one bounded line (the lines of a multi-line reply joined by spaces, a repeated
/// enhanced code at the start of continuation lines dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub code: u16,
    pub enhanced: Option<EnhancedCode>,
    /// One line, at most [`REPLY_TEXT_MAX_CHARS`] characters; may be empty (a bare `250`).
    pub text: String,
}

impl Reply {
    /// From the code and the text of each line (after `NNN-` / `NNN `).
    pub fn from_lines(code: u16, lines: &[String]) -> Reply {
        let enhanced = lines
            .first()
            .and_then(|first| EnhancedCode::at_start(first, code))
            .or_else(|| {
                lines
                    .last()
                    .and_then(|last| EnhancedCode::at_end_in_parentheses(last, code))
            });
        let prefix = enhanced.map(|e| e.to_string());
        let mut joined = String::new();
        for (i, line) in lines.iter().enumerate() {
            let mut line = line.trim();
            if i > 0 {
                if let Some(p) = prefix.as_deref() {
                    line = line.strip_prefix(p).map_or(line, str::trim_start);
                }
            }
            if line.is_empty() {
                continue;
            }
            if !joined.is_empty() {
                joined.push(' ');
            }
            joined.push_str(line);
        }
        Reply {
            code,
            enhanced,
            text: crate::domain::basics::text::header_value(&joined, REPLY_TEXT_MAX_CHARS),
        }
    }

    /// `553 5.7.1 <bookings@…>: Sender address rejected` (the code and the text, one line).
    pub fn describe(&self) -> String {
        if self.text.is_empty() {
            self.code.to_string()
        } else {
            format!("{} {}", self.code, self.text)
        }
    }

    /// A 2xx reply.
    pub fn is_positive_completion(&self) -> bool {
        (200..300).contains(&self.code)
    }
}

/// What the transcript says about the message itself, whatever ended the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandOver {
    /// The server answered the final `.` with a 2xx: the message is the server's (RFC 5321
    /// §4.1.1.4, §4.2.5), handed over exactly once. Nothing that happens afterwards — QUIT
    /// unanswered, refused or cut off by the conversation's own limit, the connection dropped —
    /// can take that back.
    Accepted,
    /// The final `.` went out and no reply to it came: the server may have the message.
    Unknown,
    /// The final `.` was never written, or the server refused it: nothing was handed over.
    NotHandedOver,
}

/// Reads [`HandOver`] from whether the final `.` was written and the reply to it, if any.
pub fn hand_over(dot_written: bool, final_reply: Option<&Reply>) -> HandOver {
    match final_reply {
        Some(r) if r.is_positive_completion() => HandOver::Accepted,
        Some(_) => HandOver::NotHandedOver,
        None if dot_written => HandOver::Unknown,
        None => HandOver::NotHandedOver,
    }
}

/// A line received from the server, made ready for async-smtp's reply parser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyLine {
    /// An empty (or all-whitespace) line: skipped.
    Blank,
    /// A reply line `NNN-text` or `NNN text` (a bare `NNN` gets its optional space), ending in
    /// CRLF whatever the server sent; `last` is false for a `NNN-` continuation.
    Reply {
        bytes: Vec<u8>,
        code: u16,
        text: String,
        last: bool,
    },
    /// Not a reply line (no three-digit code): passed on as it came (with CRLF), so the parser
    /// refuses it.
    Garbage { bytes: Vec<u8> },
}

/// Reads one received line (its bytes up to and including the LF, or what there is of it):
/// CR LF or bare LF (and stray CRs before it) are accepted as the line end, a blank line is
/// [`ReplyLine::Blank`], a bare code `250` gets its optional space, and text that is not UTF-8
/// is decoded lossily (the parser takes text only). RFC 5321 §4.2.
pub fn normalize_reply_line(raw: &[u8]) -> ReplyLine {
    let mut end = raw.len();
    while end > 0 && matches!(raw[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    let content = String::from_utf8_lossy(&raw[..end]);
    if content.trim().is_empty() {
        return ReplyLine::Blank;
    }
    let bytes = content.as_bytes();
    let code = (bytes.len() >= 3 && bytes[..3].iter().all(u8::is_ascii_digit))
        .then(|| content[..3].parse::<u16>().ok())
        .flatten()
        .filter(|c| (100..600).contains(c));
    let Some(code) = code else {
        let mut bytes = content.into_owned().into_bytes();
        bytes.extend_from_slice(b"\r\n");
        return ReplyLine::Garbage { bytes };
    };
    let (last, text) = match bytes.get(3) {
        None => (true, ""),
        Some(b'-') => (false, &content[4..]),
        Some(b' ') => (true, &content[4..]),
        // `250OK`: read as `250 OK`.
        Some(_) => (true, &content[3..]),
    };
    let text = text.to_string();
    let bytes = format!("{code}{}{text}\r\n", if last { ' ' } else { '-' }).into_bytes();
    ReplyLine::Reply {
        bytes,
        code,
        text,
        last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enhanced_codes_are_read_only_when_well_formed_and_of_the_reply_class() {
        let e = EnhancedCode::at_start("5.1.10 RESOLVER.ADR.RecipientNotFound", 550).unwrap();
        assert_eq!((e.class, e.subject, e.detail), (5, 1, 10));
        assert_eq!(e.to_string(), "5.1.10");
        assert_eq!(EnhancedCode::at_start("4.1.1 x", 550), None);
        assert_eq!(EnhancedCode::at_start("5.1 x", 550), None);
        assert_eq!(EnhancedCode::at_start("5.1.1.1 x", 550), None);
        assert_eq!(EnhancedCode::at_start("5.1.1000 x", 550), None);
        assert_eq!(EnhancedCode::at_start("Mailbox unavailable", 550), None);
        assert_eq!(EnhancedCode::at_start("", 550), None);
        assert_eq!(EnhancedCode::at_start("<a@b>: 5.1.1", 550), None);
    }

    #[test]
    fn qmails_enhanced_code_at_the_end_is_read_only_where_none_starts_the_text() {
        let qmail = |text: &str, code| Reply::from_lines(code, &[text.into()]).enhanced;
        let e = qmail(
            "sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)",
            553,
        )
        .unwrap();
        assert_eq!(e.to_string(), "5.7.1");
        assert_eq!(
            qmail("qq write error or disk full (#4.3.0)", 451).map(|e| e.to_string()),
            Some("4.3.0".into())
        );
        // A code at the start wins; a wrong class, extra words or no `#` are not codes.
        assert_eq!(
            qmail("5.1.1 no such user (#5.7.1)", 550).map(|e| e.to_string()),
            Some("5.1.1".into())
        );
        assert_eq!(qmail("disk full (#4.3.0)", 550), None);
        assert_eq!(qmail("no mailbox (#5.1.1 - chkuser)", 550), None);
        assert_eq!(qmail("see RFC (5.7.1)", 550), None);
        assert_eq!(qmail("(#5.7.1) at the start", 550), None);
    }

    #[test]
    fn reply_lines_are_normalized_for_the_parser() {
        let line = |raw: &[u8]| match normalize_reply_line(raw) {
            ReplyLine::Reply {
                bytes, code, last, ..
            } => (String::from_utf8(bytes).unwrap(), code, last),
            other => panic!("{other:?}"),
        };
        assert_eq!(line(b"250\r\n"), ("250 \r\n".into(), 250, true));
        assert_eq!(line(b"250\n"), ("250 \r\n".into(), 250, true));
        assert_eq!(line(b"250 OK\r\r\n"), ("250 OK\r\n".into(), 250, true));
        assert_eq!(line(b"250-first\n"), ("250-first\r\n".into(), 250, false));
        assert_eq!(line(b"250-\r\n"), ("250-\r\n".into(), 250, false));
        assert_eq!(line(b"250OK\r\n"), ("250 OK\r\n".into(), 250, true));
        assert_eq!(normalize_reply_line(b"\r\n"), ReplyLine::Blank);
        assert_eq!(normalize_reply_line(b"\n"), ReplyLine::Blank);
        assert_eq!(normalize_reply_line(b"  \t\r\n"), ReplyLine::Blank);
        assert!(matches!(
            normalize_reply_line(b"hello\r\n"),
            ReplyLine::Garbage { .. }
        ));
        assert!(matches!(
            normalize_reply_line(b"999 no\r\n"),
            ReplyLine::Garbage { .. }
        ));
        // Not UTF-8: decoded lossily, still a reply.
        assert!(matches!(
            normalize_reply_line(b"250 ok \xff\r\n"),
            ReplyLine::Reply { code: 250, .. }
        ));
    }

    #[test]
    fn replies_join_lines_and_drop_repeated_enhanced_codes() {
        let r = Reply::from_lines(
            550,
            &[
                "5.7.26 Unauthenticated email from example.com is not accepted due to".into(),
                "5.7.26 domain's DMARC policy.".into(),
            ],
        );
        assert_eq!(
            r.text,
            "5.7.26 Unauthenticated email from example.com is not accepted due to domain's DMARC policy."
        );
        assert_eq!(r.enhanced.map(|e| e.to_string()).as_deref(), Some("5.7.26"));
        assert_eq!(Reply::from_lines(250, &["".into()]).describe(), "250");
        let long = Reply::from_lines(554, &["x\r\ny".repeat(400)]);
        assert!(long.text.chars().count() <= REPLY_TEXT_MAX_CHARS + 1);
        assert!(!long.text.contains('\n') && !long.text.contains('\r'));
    }

    #[test]
    fn only_the_reply_to_the_final_dot_decides_the_hand_over() {
        let ok = Reply::from_lines(250, &["2.0.0 Ok: queued as ABC".into()]);
        let refused = Reply::from_lines(554, &["5.7.1 rejected".into()]);
        assert_eq!(hand_over(true, Some(&ok)), HandOver::Accepted);
        assert_eq!(hand_over(true, Some(&refused)), HandOver::NotHandedOver);
        assert_eq!(hand_over(true, None), HandOver::Unknown);
        assert_eq!(hand_over(false, None), HandOver::NotHandedOver);
    }
}
