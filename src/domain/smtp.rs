//! SMTP, the pure part: settings, the time each step of a conversation may take, how a server's
//! reply line is read, and whose fault a refusal is. The conversation itself is async-smtp's, read
//! through `crate::outbox::smtp_wire` (see `crate::outbox::smtp`).
//!
//! # Replies (RFC 5321 §4.2)
//!
//! `Reply-line = *( Reply-code "-" [ textstring ] CRLF ) Reply-code [ SP textstring ] CRLF`: the
//! text after the code is optional, so a bare `250` is a complete, positive reply. Servers also send
//! bare LF line ends and stray blank lines (reported against PHPMailer and other clients for
//! years); RFC 5321 §4.5.3.1 and the robustness principle of §2 let a client accept them.
//! [`normalize_reply_line`] turns each received line into the strict `NNN SP text CRLF` /
//! `NNN-text CRLF` form async-smtp's parser expects, and drops blank lines.
//!
//! # Whose fault a refusal is
//!
//! [`classify_refusal`] decides by the reply code (RFC 5321 §4.2.2–4.2.3), the enhanced status code
//! (RFC 3463, announced by `ENHANCEDSTATUSCODES`, RFC 2034; at the start of the text, or qmail's
//! `(#5.7.1)` at its end) and *which command* was refused. The server's text is read only where
//! those leave it open, and only for facts that do not depend on a language: whether it names our
//! envelope sender (the MAIL FROM address), a few servers' fixed phrases, and our account's quota
//! or suspension. A phrase can move a refusal onto us (the route pauses, the owner is told), never
//! onto the guest's address. The SMTP failover is a relay the engine submits to (port 587/465), so
//! what it refuses synchronously is about the engine's account, sender, message, or the recipient;
//! a recipient's own mail system answers later, by bounce.
//!
//! The first row that matches decides:
//!
//! | refused | reply | class | what the outbox does |
//! |---|---|---|---|
//! | MAIL FROM, RCPT TO, DATA, end of data | our account's quota or suspension, 4xx or 5xx: 5.1.90, 5.7.501–5.7.503, 5.7.700–5.7.749 (Microsoft 365), or the words "daily message quota" (Amazon SES `454`), "daily limit", "submission quota", "sending quota", "sending limit", "outbound spam" | `DailyLimit` | pause SMTP until the next UTC midnight, tell the owner; the email keeps its place and its attempts |
//! | anything | any other 4xx (421, 450–452, 454 …) | `Transient` | retry with backoff |
//! | AUTH | 5xx | `CredentialsRejected` | pause the route, tell the owner |
//! | greeting, EHLO, STARTTLS | 5xx | `Configuration` | pause the route, tell the owner |
//! | any command | 534, 535, 538 or 5.7.8 / 5.7.9 / 5.7.11 | `CredentialsRejected` | pause the route, tell the owner |
//! | MAIL FROM | any other 5xx (530 authentication or STARTTLS required, 5.1.7 / 5.1.8 / 5.7.1 sender refused, 552 too big …) | `Configuration` (our account or sender) | pause the route, tell the owner |
//! | QUIT, anything else | 5xx | `Transient` (refuses no email) | retry |
//! | RCPT TO, DATA, end of data | the text names our MAIL FROM address (Postfix's `Sender address rejected` at RCPT TO, Exim's `Verification failed for <…>`, SES's unverified identity) | `Configuration` | pause the route, tell the owner |
//! | RCPT TO, DATA, end of data | 5.1.1, 5.1.2, 5.1.3, 5.1.6, 5.1.10, 5.2.1 | `RecipientRejected` | drop, suppress the address (hard bounce), tell the owner |
//! | RCPT TO, DATA, end of data | 5.1.7, 5.1.8 (sender), 5.2.3, 5.3.4 (too big), 5.6.x (content) | `Configuration` | pause the route, tell the owner |
//! | RCPT TO | a 5.7.x that is the recipient's own rule — 5.7.1, 5.7.2, 5.7.12, 5.7.13, 5.7.17, 5.7.18, 5.7.124, 5.7.129, 5.7.133–5.7.136, 5.7.504, 5.7.505, 5.7.507, 5.7.510, 5.7.513 — with no words about us (below) | `RecipientDeclined` | drop, tell the owner; **not** suppressed, the route not paused |
//! | RCPT TO, DATA, end of data | any other 5.7.x (relay denied, DMARC 5.7.26, SPF 5.7.23, our tenant or IP …), and every 5.7.x to DATA or the end of data | `Configuration` | pause the route, tell the owner |
//! | RCPT TO, DATA, end of data | any other code with words about us: "relay", "relaying", "sender address", "sender verify", "send as", "client host", "client was not authenticated", "helo command", "rcpthosts", "envelope sender", "in a black list at", "IP you're using", "your IP", "PTR record", "DMARC" (Postfix, Exim, Sendmail, qmail, Microsoft 365 `SendAsDenied`, Gmail about our IP or domain) | `Configuration` | pause the route, tell the owner |
//! | RCPT TO, DATA, end of data | 5.2.2 (a full mailbox) | `Transient` | retry with backoff |
//! | RCPT TO | 5.4.1, 5.5.0 (Microsoft 365: the address refused without saying it does not exist) | `RecipientDeclined` | drop, tell the owner; not suppressed |
//! | DATA, end of data | 5.0.0, 5.5.x | `Configuration` | pause the route, tell the owner |
//! | RCPT TO | no enhanced code, Exim's `Unrouteable address` | `RecipientDeclined` | drop, tell the owner; not suppressed |
//! | DATA, end of data | 5xx without an enhanced code | `Configuration` (the server refused the whole transaction after seeing it: our message, sender or policy — never one mailbox) | pause the route, tell the owner |
//! | anything else (an undetailed 550/551/553/554 to RCPT TO, 5.1.0, other 5.4.x …) | 5xx | `Transient` (unknown: retried with backoff; after the attempt ceiling a dead letter and an owner alert, never a suppression) | retry |
//!
//! A guest is suppressed only where the server says the address does not exist, is invalid or is
//! disabled. Microsoft 365 documents `550 5.4.1 Recipient address rejected: Access denied` as an
//! address its directory does not know, but gives the same code to its relay refusal, and its
//! `5.5.0 … mailbox unavailable` and Exim's `Unrouteable address` do not say the mailbox is gone:
//! those drop the email without suppressing the guest. Exim sends no enhanced codes, so its
//! `550 relay not permitted` and `550 Sender verify failed` are read from their fixed words, and
//! an undetailed 550 with no such words stays unknown.

use crate::domain::outbox::ProviderErrorClass;
use serde::{Deserialize, Serialize};

/// How the SMTP connection is secured (`SMTP_TLS` var).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TlsMode {
    /// Plain TCP (local development only: production refuses private addresses anyway).
    Off,
    /// Plain connect, then `STARTTLS` (port 587).
    Starttls,
    /// TLS from the first byte (port 465).
    Implicit,
}

impl TlsMode {
    /// Parses `off` | `starttls` | `implicit` (case-insensitive).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" | "plain" => Some(TlsMode::Off),
            "starttls" => Some(TlsMode::Starttls),
            "implicit" | "tls" | "on" => Some(TlsMode::Implicit),
            _ => None,
        }
    }
}

/// Wall-clock limit of one Durable Object alarm invocation: 15 minutes
/// (<https://developers.cloudflare.com/workers/platform/limits/#duration>, "Duration: 15 min Durable
/// Object Alarm"). The outbox sends from its alarm, so no SMTP conversation may outlast it.
pub const ALARM_WALL_LIMIT_MS: u64 = 900_000;

/// What one alarm allows itself for hand-overs: the wall limit less one minute for the rest of its
/// work (recording outcomes, D1 sync, re-arming).
pub const ALARM_BUDGET_MS: u64 = ALARM_WALL_LIMIT_MS - 60_000;

/// How long each step of an SMTP conversation may take, in milliseconds. Defaults are RFC 5321
/// §4.5.3.2's recommended minimums, the whole capped by [`SmtpTimeouts::conversation_ms`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmtpTimeouts {
    /// `SMTP_GREETING_TIMEOUT_MS`: the server's `220` greeting (§4.5.3.2.1 "Initial 220 Message":
    /// 5 minutes).
    pub greeting_ms: u64,
    /// `SMTP_TIMEOUT_MS`: connecting, and the reply to each command — EHLO, STARTTLS, AUTH,
    /// MAIL (§4.5.3.2.2: 5 minutes), RCPT (§4.5.3.2.3: 5 minutes), QUIT.
    pub command_ms: u64,
    /// `SMTP_DATA_TIMEOUT_MS`: the `354` reply to DATA (§4.5.3.2.4 "DATA Initiation": 2 minutes).
    pub data_init_ms: u64,
    /// `SMTP_DATA_BLOCK_TIMEOUT_MS`: each write of the message that does not complete
    /// (§4.5.3.2.5 "Data Block": 3 minutes).
    pub data_block_ms: u64,
    /// `SMTP_FINAL_REPLY_TIMEOUT_MS`: the reply to the final `.` (§4.5.3.2.6 "DATA Termination":
    /// 10 minutes; the server is delivering, and a spurious timeout here sends the message twice,
    /// §6.1).
    pub final_reply_ms: u64,
    /// `SMTP_CONVERSATION_MAX_MS`: the whole conversation, connect to QUIT (12 minutes: the
    /// 10-minute final reply plus 2 for the rest). At most [`ALARM_BUDGET_MS`]; the outbox also
    /// never starts a conversation its alarm has no time left for.
    pub conversation_ms: u64,
}

/// Why SMTP timeouts were refused (the variable is named).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SmtpTimeoutError {
    #[error("{name} must be more than 0 ms")]
    Zero { name: &'static str },
    #[error("SMTP_CONVERSATION_MAX_MS is {got} ms, more than a Durable Object alarm may take ({max} ms: 15 minutes less 1 for the rest of the alarm)")]
    LongerThanAlarm { got: u64, max: u64 },
    #[error("{name} is {got} ms, longer than the whole conversation (SMTP_CONVERSATION_MAX_MS = {conversation} ms)")]
    LongerThanConversation {
        name: &'static str,
        got: u64,
        conversation: u64,
    },
}

impl SmtpTimeouts {
    /// RFC 5321 §4.5.3.2's values, capped at 12 minutes in all.
    pub const DEFAULT: SmtpTimeouts = SmtpTimeouts {
        greeting_ms: 300_000,
        command_ms: 300_000,
        data_init_ms: 120_000,
        data_block_ms: 180_000,
        final_reply_ms: 600_000,
        conversation_ms: 720_000,
    };

    /// Checks a configuration: every value above 0, none longer than the conversation, the
    /// conversation within [`ALARM_BUDGET_MS`].
    pub fn validated(self) -> Result<Self, SmtpTimeoutError> {
        let named = [
            ("SMTP_GREETING_TIMEOUT_MS", self.greeting_ms),
            ("SMTP_TIMEOUT_MS", self.command_ms),
            ("SMTP_DATA_TIMEOUT_MS", self.data_init_ms),
            ("SMTP_DATA_BLOCK_TIMEOUT_MS", self.data_block_ms),
            ("SMTP_FINAL_REPLY_TIMEOUT_MS", self.final_reply_ms),
            ("SMTP_CONVERSATION_MAX_MS", self.conversation_ms),
        ];
        if let Some((name, _)) = named.iter().find(|(_, v)| *v == 0) {
            return Err(SmtpTimeoutError::Zero { name });
        }
        if self.conversation_ms > ALARM_BUDGET_MS {
            return Err(SmtpTimeoutError::LongerThanAlarm {
                got: self.conversation_ms,
                max: ALARM_BUDGET_MS,
            });
        }
        if let Some((name, got)) = named[..5].iter().find(|(_, v)| *v > self.conversation_ms) {
            return Err(SmtpTimeoutError::LongerThanConversation {
                name,
                got: *got,
                conversation: self.conversation_ms,
            });
        }
        Ok(self)
    }

    /// How long the reply to `command` may take, ms.
    pub fn reply_ms(&self, command: SmtpCommand) -> u64 {
        match command {
            SmtpCommand::Greeting => self.greeting_ms,
            SmtpCommand::Data => self.data_init_ms,
            SmtpCommand::EndOfData => self.final_reply_ms,
            _ => self.command_ms,
        }
    }
}

/// What a server reply answers: the greeting, or the command the client wrote before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpCommand {
    /// The `220` greeting after connecting.
    Greeting,
    Ehlo,
    StartTls,
    /// `AUTH` and its continuation lines.
    Auth,
    MailFrom,
    RcptTo,
    /// The `DATA` command (its reply is `354`).
    Data,
    /// The message's final `.` line: its reply says whether the server took the message.
    EndOfData,
    Quit,
    /// `RSET`, `NOOP` or anything else.
    Other,
}

impl SmtpCommand {
    /// How messages name it: `MAIL FROM`, `end of data`, …
    pub fn as_str(self) -> &'static str {
        match self {
            SmtpCommand::Greeting => "greeting",
            SmtpCommand::Ehlo => "EHLO",
            SmtpCommand::StartTls => "STARTTLS",
            SmtpCommand::Auth => "AUTH",
            SmtpCommand::MailFrom => "MAIL FROM",
            SmtpCommand::RcptTo => "RCPT TO",
            SmtpCommand::Data => "DATA",
            SmtpCommand::EndOfData => "end of data",
            SmtpCommand::Quit => "QUIT",
            SmtpCommand::Other => "command",
        }
    }

    /// The command of one line the client wrote (without its CRLF). `in_auth` is true when the
    /// server's last reply was a `334` challenge: the line is then an AUTH continuation (base64),
    /// whatever it spells.
    pub fn of_line(line: &[u8], in_auth: bool) -> SmtpCommand {
        if in_auth {
            return SmtpCommand::Auth;
        }
        let verb: Vec<u8> = line
            .iter()
            .take_while(|b| !b.is_ascii_whitespace() && **b != b':')
            .map(u8::to_ascii_uppercase)
            .collect();
        match verb.as_slice() {
            b"EHLO" | b"HELO" => SmtpCommand::Ehlo,
            b"STARTTLS" => SmtpCommand::StartTls,
            b"AUTH" => SmtpCommand::Auth,
            b"MAIL" => SmtpCommand::MailFrom,
            b"RCPT" => SmtpCommand::RcptTo,
            b"DATA" => SmtpCommand::Data,
            b"QUIT" => SmtpCommand::Quit,
            _ => SmtpCommand::Other,
        }
    }
}

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

    fn is(&self, subject: u16, detail: u16) -> bool {
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
            text: crate::domain::text::header_value(&joined, REPLY_TEXT_MAX_CHARS),
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

/// Whose fault a refusal is, decided by the command it answered, its reply code, its enhanced
/// status code, and — only where those leave it open — whether the reply is about us: it names
/// `our_sender` (the MAIL FROM address), or says in one of a few servers' fixed phrases that it
/// refuses our sender, our relaying or our client (see the module's table). 2xx/3xx are not
/// refusals; a caller that gets one where a refusal was expected gets `Transient`.
pub fn classify_refusal(
    command: SmtpCommand,
    reply: &Reply,
    our_sender: &str,
) -> ProviderErrorClass {
    use ProviderErrorClass::*;
    use SmtpCommand::*;
    let code = reply.code;
    let enhanced = reply.enhanced;
    let words = words(&reply.text);
    let in_transaction = matches!(command, MailFrom | RcptTo | Data | EndOfData);
    // Our account may not send for now, whatever the reply's class: Amazon SES answers its daily
    // quota with a 454, Microsoft 365 with 5xx codes.
    if in_transaction && (400..600).contains(&code) && account_may_not_send(enhanced, &words) {
        return DailyLimit;
    }
    if !(500..600).contains(&code) {
        // 4xx and anything unexpected: try again later (RFC 5321 §4.2.1, "4yz").
        return Transient;
    }
    // RFC 4954 §6: 535 5.7.8 credentials invalid, 534 5.7.9 mechanism too weak, 538 5.7.11
    // encryption required for the mechanism. (530 5.7.0 "authentication required" is ours too, but
    // servers also send it for "STARTTLS first": `Configuration`.)
    let credentials_code = matches!(code, 534 | 535 | 538)
        || enhanced.is_some_and(|e| e.subject == 7 && matches!(e.detail, 8 | 9 | 11));
    match command {
        Auth => return CredentialsRejected,
        Greeting | Ehlo | StartTls => return Configuration,
        _ if credentials_code => return CredentialsRejected,
        // 530 is "authentication required" (RFC 4954 §6) or "must issue a STARTTLS command
        // first" (RFC 3207 §4), whichever command it answers and with or without an enhanced
        // code: our client's set-up, never the recipient's.
        _ if code == 530 => return Configuration,
        MailFrom => return Configuration,
        // QUIT and anything else refuse no email.
        Quit | Other => return Transient,
        RcptTo | Data | EndOfData => {}
    }
    // The reply names the address we gave in MAIL FROM: it is about our sender, whichever command
    // it answers (Postfix evaluates its sender restrictions at RCPT TO by default,
    // `smtpd_delay_reject = yes`; Exim verifies the sender at RCPT TO; Amazon SES and Microsoft
    // 365 refuse an unverified or foreign sender after the data).
    if names_address(&reply.text, our_sender) {
        return Configuration;
    }
    let about_us = ABOUT_US.iter().any(|p| has_phrase(&words, p));
    let rcpt = command == RcptTo;
    let transaction = matches!(command, Data | EndOfData);
    let Some(e) = enhanced else {
        return if about_us {
            // Exim's `550 relay not permitted` and `550 Sender verify failed`.
            Configuration
        } else if rcpt && has_phrase(&words, &["unrouteable", "address"]) {
            // Exim: no router could route the recipient address. The server does not say it does
            // not exist, so the address is not suppressed.
            RecipientDeclined
        } else if transaction {
            // The server refused the whole transaction after seeing it: our message, sender or
            // policy, never one mailbox.
            Configuration
        } else {
            // An undetailed refusal of the recipient: nobody's fault yet.
            Transient
        };
    };
    if e.is(1, 1) || e.is(1, 2) || e.is(1, 3) || e.is(1, 6) || e.is(1, 10) || e.is(2, 1) {
        // The mailbox does not exist, the address is invalid or disabled: the guest's, for good.
        return RecipientRejected;
    }
    if e.is(1, 7) || e.is(1, 8) || e.is(2, 3) || e.is(3, 4) || e.subject == 6 {
        // Our sender (5.1.7, 5.1.8), the message's size (5.2.3, 5.3.4) or content (5.6.x).
        return Configuration;
    }
    if e.subject == 7 {
        // A policy. At RCPT TO it is usually the recipient's own rule about us (one recipient,
        // never the route), unless it says it refuses our relaying, sender or client, or its
        // code is one about us (authentication, DMARC/SPF/DKIM, our tenant or IP).
        return if rcpt && !about_us && recipients_policy(e) {
            RecipientDeclined
        } else {
            Configuration
        };
    }
    if about_us {
        // A sender, relay or client refusal under another code: Postfix's
        // `550 5.1.0 <…>: Sender address rejected`, `504 5.5.2 <…>: Sender address rejected: need
        // fully-qualified address`, Microsoft 365's `554 5.2.0 …SendAsDeniedException`,
        // `550 5.4.1 Relay Access Denied`.
        return Configuration;
    }
    if e.is(2, 2) {
        // A full mailbox: it may empty.
        return Transient;
    }
    if rcpt && (e.is(4, 1) || e.is(5, 0)) {
        // Microsoft 365: `550 5.4.1 Recipient address rejected: Access denied` (directory-based
        // edge blocking) and `550 5.5.0 Requested action not taken: mailbox unavailable` refuse
        // the address without saying it does not exist (5.4.1 is also its relay refusal): drop,
        // never suppress.
        return RecipientDeclined;
    }
    if transaction && (e.is(0, 0) || e.subject == 5) {
        return Configuration;
    }
    Transient
}

/// A short, stable name for the fault a refusal is: the command, the reply code and the enhanced
/// code (`MAIL FROM 553 5.7.1`, `end of data 550 5.7.26`). Two refusals with the same name are the
/// same fault; the server's text (queue ids, session ids) is left out so it stays the same.
pub fn fault_name(command: SmtpCommand, reply: &Reply) -> String {
    match reply.enhanced {
        Some(e) => format!("{} {} {e}", command.as_str(), reply.code),
        None => format!("{} {}", command.as_str(), reply.code),
    }
}

/// Phrases with which servers say a refusal is about us — our sender, our relaying, our client
/// host or its name — whatever its code. Read only where the codes leave it open, so a phrase can
/// move a refusal onto us (the route pauses, the owner is told), never onto the guest.
const ABOUT_US: &[&[&str]] = &[
    // Postfix `Relay access denied`, Sendmail `Relaying denied`, Microsoft 365 `Unable to relay`
    // and `Relay Access Denied`, Exim `relay not permitted`.
    &["relay"],
    &["relaying"],
    // Postfix `Sender address rejected`, Sendmail `Domain name required for sender address`.
    &["sender", "address"],
    // Exim `Sender verify failed`.
    &["sender", "verify"],
    // Microsoft 365 `SendAsDenied`, `SendAsDeniedException`, `not allowed to send as`.
    &["send", "as"],
    // Postfix `Client host rejected`, Microsoft 365 `Client host [1.2.3.4] blocked using …`.
    &["client", "host"],
    // Microsoft 365 `Client was not authenticated`.
    &["client", "was", "not", "authenticated"],
    // Postfix `Helo command rejected`.
    &["helo", "command"],
    // qmail `sorry, that domain isn't in my list of allowed rcpthosts` (it does not relay for us)
    // and `sorry, your envelope sender is in my badmailfrom list` (answered at RCPT TO).
    &["rcpthosts"],
    &["envelope", "sender"],
    // Our sending IP on a DNS blocklist: Exim's `rejected because 192.0.2.7 is in a black list at
    // zen.spamhaus.org` (Postfix and Microsoft 365 say `Client host … blocked using …`, above).
    &["in", "a", "black", "list", "at"],
    // Gmail about our IP: `The IP you're using to send mail is not authorized to send email
    // directly to our servers`, `unusual rate of unsolicited mail originating from your IP
    // address`, `The IP address sending this message does not have a PTR record setup`.
    &["ip", "you", "re", "using"],
    &["your", "ip"],
    &["ptr", "record"],
    // Our domain's authentication: Gmail `Unauthenticated email from example.com is not accepted
    // due to domain's DMARC policy` (also sent as 5.7.1).
    &["dmarc"],
];

/// Our account may not send for now: a daily or submission quota, or a suspension for outbound
/// spam. Read by the vendor's enhanced code where it has its own (Microsoft 365), else by the
/// vendor's fixed words (Amazon SES, Microsoft 365, Gmail).
fn account_may_not_send(enhanced: Option<EnhancedCode>, words: &[String]) -> bool {
    const PHRASES: &[&[&str]] = &[
        // Amazon SES `454 Throttling failure: Daily message quota exceeded`.
        &["daily", "message", "quota"],
        // Microsoft 365 `5.1.90 … you've reached your daily limit for message recipients`.
        &["daily", "limit"],
        // Microsoft 365 `5.2.2 Submission quota exceeded`, `SubmissionQuotaExceededException`.
        &["submission", "quota"],
        // Gmail `5.4.5 Daily sending quota exceeded`, `Daily user sending limit exceeded`.
        &["sending", "quota"],
        &["sending", "limit"],
        // Microsoft 365 `STOREDRV.Submission.Exception:OutboundSpamException` (the account is
        // restricted from sending).
        &["outbound", "spam"],
    ];
    let vendor_code = enhanced.is_some_and(|e| {
        // Microsoft 365: 5.1.90 daily recipient limit; 5.7.501–5.7.503 the sending account
        // banned for spam; 5.7.700–5.7.749 the tenant's sending banned. (Its 4.7.500–4.7.699 is
        // a temporary restriction "lifted shortly": retried like any 4xx.)
        e.class == 5
            && (e.is(1, 90) || (e.subject == 7 && matches!(e.detail, 501..=503 | 700..=749)))
    });
    vendor_code || PHRASES.iter().any(|p| has_phrase(words, p))
}

/// 5.7.x details that, at RCPT TO, are the recipient's own rule rather than one about us: RFC 3463
/// 5.7.1 (delivery not authorized: per-host or per-recipient filtering) and 5.7.2 (list expansion
/// prohibited), RFC 7293 5.7.17 / 5.7.18 (the mailbox or domain has a new owner), and Microsoft
/// 365's recipient restrictions: 5.7.12, 5.7.13, 5.7.124, 5.7.129, 5.7.133–5.7.136 (only
/// authenticated or allowed senders), 5.7.504 / 5.7.505 (the recipient refused), 5.7.507,
/// 5.7.510, 5.7.513 (the recipient's organization blocks us).
fn recipients_policy(e: EnhancedCode) -> bool {
    matches!(
        e.detail,
        1 | 2 | 12 | 13 | 17 | 18 | 124 | 129 | 133..=136 | 504 | 505 | 507 | 510 | 513
    )
}

/// The words of a reply's text in lower case: split at anything not a letter or a digit, and at
/// the humps of names (`SendAsDeniedException` → `send as denied exception`).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = token.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let hump = i > 0
                && c.is_uppercase()
                && (chars[i - 1].is_lowercase()
                    || (chars[i - 1].is_uppercase()
                        && chars.get(i + 1).is_some_and(|n| n.is_lowercase())));
            if hump && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            word.extend(c.to_lowercase());
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

fn has_phrase(words: &[String], phrase: &[&str]) -> bool {
    words
        .windows(phrase.len())
        .any(|w| w.iter().zip(phrase).all(|(a, b)| a == b))
}

/// `text` names `address` (case-insensitive), as a whole address: `bookings@example.com` is not
/// named by `mybookings@example.com` or `bookings@example.com.au`.
fn names_address(text: &str, address: &str) -> bool {
    let address = address.trim().to_ascii_lowercase();
    if address.is_empty() || !address.contains('@') {
        return false;
    }
    let text = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let local_char = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~.-".contains(&b);
    let domain_char = |b: u8| b.is_ascii_alphanumeric() || b == b'-';
    text.match_indices(&address).any(|(at, _)| {
        let end = at + address.len();
        let before_ok = at == 0 || !local_char(bytes[at - 1]);
        let after_ok = match bytes.get(end) {
            None => true,
            Some(&b) if domain_char(b) => false,
            // A dot ends a sentence unless a domain label follows it.
            Some(b'.') => !bytes.get(end + 1).copied().is_some_and(domain_char),
            Some(_) => true,
        };
        before_ok && after_ok
    })
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
    fn tls_modes_parse() {
        assert_eq!(TlsMode::parse("STARTTLS"), Some(TlsMode::Starttls));
        assert_eq!(TlsMode::parse("implicit"), Some(TlsMode::Implicit));
        assert_eq!(TlsMode::parse("off"), Some(TlsMode::Off));
        assert_eq!(TlsMode::parse("ssl3"), None);
    }

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

    #[test]
    fn reply_words_split_names_and_ignore_case() {
        assert_eq!(
            words("STOREDRV.Submission.Exception:SendAsDeniedException.MapiExceptionSendAsDenied;"),
            [
                "storedrv",
                "submission",
                "exception",
                "send",
                "as",
                "denied",
                "exception",
                "mapi",
                "exception",
                "send",
                "as",
                "denied"
            ]
        );
        assert_eq!(
            words("RESOLVER.RST.NotAuthorized"),
            ["resolver", "rst", "not", "authorized"]
        );
        assert_eq!(words("SMTPClient"), ["smtp", "client"]);
        assert!(has_phrase(&words("Relay access denied"), &["relay"]));
        // Whole words only: "sender" is not "send", "relays" is not "relay".
        assert!(!has_phrase(
            &words("sender is not authenticated"),
            &["send", "as"]
        ));
        assert!(!has_phrase(&words("two relays"), &["relay"]));
    }

    #[test]
    fn our_sender_is_named_only_as_a_whole_address() {
        let ours = "bookings@example.com";
        assert!(names_address(
            "<bookings@example.com>: Sender address rejected",
            ours
        ));
        assert!(names_address(
            "identities failed: BOOKINGS@Example.COM",
            ours
        ));
        assert!(names_address(
            "not allowed to send as bookings@example.com.",
            ours
        ));
        assert!(!names_address(
            "<mybookings@example.com>: User unknown",
            ours
        ));
        assert!(!names_address(
            "<bookings@example.com.au>: User unknown",
            ours
        ));
        assert!(!names_address("<bookings@example.community>", ours));
        assert!(!names_address("anything", ""));
    }

    #[test]
    fn a_fault_is_named_by_its_command_and_codes_never_its_text() {
        let dmarc = Reply::from_lines(550, &["5.7.26 Unauthenticated email from x".into()]);
        assert_eq!(
            fault_name(SmtpCommand::EndOfData, &dmarc),
            "end of data 550 5.7.26"
        );
        let exim = Reply::from_lines(550, &["relay not permitted".into()]);
        assert_eq!(fault_name(SmtpCommand::RcptTo, &exim), "RCPT TO 550");
        let a = Reply::from_lines(553, &["5.7.1 <a@b>: Sender address rejected, id 1".into()]);
        let b = Reply::from_lines(553, &["5.7.1 <a@b>: Sender address rejected, id 2".into()]);
        assert_eq!(
            fault_name(SmtpCommand::MailFrom, &a),
            fault_name(SmtpCommand::MailFrom, &b)
        );
    }

    #[test]
    fn command_lines_name_their_command() {
        use SmtpCommand::*;
        assert_eq!(SmtpCommand::of_line(b"MAIL FROM:<a@b>", false), MailFrom);
        assert_eq!(SmtpCommand::of_line(b"rcpt to:<a@b>", false), RcptTo);
        assert_eq!(SmtpCommand::of_line(b"DATA", false), Data);
        assert_eq!(SmtpCommand::of_line(b"EHLO x", false), Ehlo);
        assert_eq!(SmtpCommand::of_line(b"AUTH PLAIN AAA=", false), Auth);
        assert_eq!(SmtpCommand::of_line(b"REFUQQ==", true), Auth);
        assert_eq!(SmtpCommand::of_line(b"DATA", true), Auth);
        assert_eq!(SmtpCommand::of_line(b"QUIT", false), Quit);
        assert_eq!(SmtpCommand::of_line(b"NOOP", false), Other);
    }

    #[test]
    fn timeouts_default_to_rfc_5321_and_fit_in_an_alarm() {
        let d = SmtpTimeouts::DEFAULT.validated().unwrap();
        assert_eq!(d.reply_ms(SmtpCommand::Greeting), 300_000);
        assert_eq!(d.reply_ms(SmtpCommand::MailFrom), 300_000);
        assert_eq!(d.reply_ms(SmtpCommand::Data), 120_000);
        assert_eq!(d.reply_ms(SmtpCommand::EndOfData), 600_000);
        assert!(d.conversation_ms <= ALARM_BUDGET_MS);
        let too_long = SmtpTimeouts {
            conversation_ms: 900_000,
            ..d
        };
        assert!(too_long
            .validated()
            .unwrap_err()
            .to_string()
            .contains("SMTP_CONVERSATION_MAX_MS"));
        let zero = SmtpTimeouts {
            data_init_ms: 0,
            ..d
        };
        assert!(zero
            .validated()
            .unwrap_err()
            .to_string()
            .contains("SMTP_DATA_TIMEOUT_MS"));
        let final_too_long = SmtpTimeouts {
            final_reply_ms: 800_000,
            ..d
        };
        assert!(final_too_long
            .validated()
            .unwrap_err()
            .to_string()
            .contains("SMTP_FINAL_REPLY_TIMEOUT_MS"));
    }
}
