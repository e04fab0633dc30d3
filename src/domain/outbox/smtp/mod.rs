//! SMTP, the pure part: settings and the time each step of a conversation may take (here), how a
//! server's reply line is read ([`reply`]), and whose fault a refusal is ([`refusal`]). The
//! conversation itself is async-smtp's, read through `crate::outbox::smtp_wire` (see
//! `crate::outbox::smtp`).

mod refusal;
mod reply;

pub use refusal::{classify_refusal, fault_name};
pub use reply::{
    hand_over, normalize_reply_line, EnhancedCode, HandOver, Reply, ReplyLine, REPLY_TEXT_MAX_CHARS,
};

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

/// The runtime refused the TLS session with the server over its certificate (self-signed, expired,
/// issued for another host name, an unknown issuer): `runtime_error` is the error the socket's
/// read or write failed with. workerd's words come from its TLS layer (`kj/compat/tls.c++`,
/// <https://github.com/capnproto/capnproto/blob/v2/c%2B%2B/src/kj/compat/tls.c%2B%2B>):
/// `TLS peer's certificate is not trusted; reason = self signed certificate` (or `certificate has
/// expired`, `Hostname mismatch`, `unable to get local issuer certificate`). A runtime's message,
/// never the server's or a guest's text. Such a refusal is our configuration (`SMTP_HOST` not the
/// name the certificate is for, or a server whose certificate is not publicly trusted), so the
/// route pauses like refused credentials instead of retrying every email.
pub fn is_certificate_failure(runtime_error: &str) -> bool {
    let text = runtime_error.to_ascii_lowercase();
    text.contains("certificate") || text.contains("hostname mismatch")
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
        // The defaults with one setting changed.
        let with = |change: fn(&mut SmtpTimeouts)| {
            let mut t = d;
            change(&mut t);
            t
        };
        // Each refused setting, named by its variable.
        let refused = [
            (
                "SMTP_CONVERSATION_MAX_MS",
                with(|t| t.conversation_ms = 900_000),
            ),
            ("SMTP_DATA_TIMEOUT_MS", with(|t| t.data_init_ms = 0)),
            (
                "SMTP_FINAL_REPLY_TIMEOUT_MS",
                with(|t| t.final_reply_ms = 800_000),
            ),
        ];
        for (variable, bad) in refused {
            let error = bad.validated().unwrap_err().to_string();
            assert!(error.contains(variable), "{variable}: {error}");
        }
    }
}
