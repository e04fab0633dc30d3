//! The SMTP failover's time limits, parsed from their variables (split from `config.rs` by
//! purpose).

use super::ConfigError;
use crate::domain::outbox::smtp::SmtpTimeouts;

/// The SMTP timeouts, ms, each defaulting to RFC 5321 §4.5.3.2 ([`SmtpTimeouts::DEFAULT`]) and
/// checked against a Durable Object alarm's wall-clock limit.
pub(super) fn timeouts(get: &impl Fn(&str) -> Option<String>) -> Result<SmtpTimeouts, ConfigError> {
    let d = SmtpTimeouts::DEFAULT;
    SmtpTimeouts {
        greeting_ms: super::number(get, "SMTP_GREETING_TIMEOUT_MS", d.greeting_ms)?,
        command_ms: super::number(get, "SMTP_TIMEOUT_MS", d.command_ms)?,
        data_init_ms: super::number(get, "SMTP_DATA_TIMEOUT_MS", d.data_init_ms)?,
        data_block_ms: super::number(get, "SMTP_DATA_BLOCK_TIMEOUT_MS", d.data_block_ms)?,
        final_reply_ms: super::number(get, "SMTP_FINAL_REPLY_TIMEOUT_MS", d.final_reply_ms)?,
        conversation_ms: super::number(get, "SMTP_CONVERSATION_MAX_MS", d.conversation_ms)?,
    }
    .validated()
    .map_err(|e| ConfigError::Invalid {
        name: match &e {
            crate::domain::outbox::smtp::SmtpTimeoutError::Zero { name }
            | crate::domain::outbox::smtp::SmtpTimeoutError::LongerThanConversation {
                name, ..
            } => name,
            crate::domain::outbox::smtp::SmtpTimeoutError::LongerThanAlarm { .. } => {
                "SMTP_CONVERSATION_MAX_MS"
            }
        },
        reason: e.to_string(),
    })
}
