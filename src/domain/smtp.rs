//! SMTP settings and reply classification (RFC 5321 §4.2, enhanced status codes RFC 3463).
//! The conversation itself is async-smtp's (see `crate::outbox::smtp`).

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

/// Classifies a negative SMTP reply.
///
/// - 4xx → transient (retry with backoff), except 454 on AUTH which is handled as an auth failure by
///   the caller;
/// - 5xx whose enhanced status is `5.1.x` (bad mailbox/address) or plain 550/551/553 naming the
///   mailbox/recipient/user → recipient rejected (drop + owner alert);
/// - 535 / 530 (authentication) and every other 5xx → permanent.
pub fn classify_reply(code: u16, text: &str) -> ProviderErrorClass {
    let lower = text.to_ascii_lowercase();
    match code {
        400..=499 => ProviderErrorClass::Transient,
        500..=599 => {
            let enhanced_address = lower.trim_start().starts_with("5.1.");
            let names_recipient = matches!(code, 550 | 551 | 553)
                && [
                    "mailbox",
                    "recipient",
                    "user unknown",
                    "no such user",
                    "address rejected",
                ]
                .iter()
                .any(|w| lower.contains(w));
            if enhanced_address || names_recipient {
                ProviderErrorClass::RecipientRejected
            } else {
                ProviderErrorClass::Permanent
            }
        }
        _ => ProviderErrorClass::Permanent,
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
    fn reply_classes() {
        use ProviderErrorClass::*;
        let table = [
            (421, "4.7.0 Try again later", Transient),
            (450, "4.2.1 Mailbox busy", Transient),
            (451, "Local error", Transient),
            (452, "Insufficient storage", Transient),
            (
                550,
                "5.1.1 The email account that you tried to reach does not exist",
                RecipientRejected,
            ),
            (550, "Mailbox unavailable", RecipientRejected),
            (553, "5.1.3 Bad recipient address syntax", RecipientRejected),
            (550, "5.7.1 Message rejected as spam", Permanent),
            (535, "5.7.8 Authentication credentials invalid", Permanent),
            (554, "Transaction failed", Permanent),
            (552, "5.3.4 Message size exceeds fixed limit", Permanent),
        ];
        for (code, text, want) in table {
            assert_eq!(classify_reply(code, text), want, "{code} {text}");
        }
    }
}
