//! A rendered email → RFC 5322 bytes for SMTP (mail-builder): multipart/alternative (RFC 2046
//! §5.1.4), RFC 2047 encoded UTF-8 headers, our own deterministic Message-ID.

use super::{Branding, RenderError};
use crate::domain::email::OutgoingEmail;
use crate::domain::text::{header_value, SUBJECT_MAX_CHARS};

/// Builds the RFC 5322 message for SMTP: multipart/alternative (text + HTML), encoded UTF-8
/// headers (the subject through [`header_value`]: one line, bounded), the email's own
/// deterministic Message-ID, `Date` from `date_unix_s` (UTC seconds).
pub fn to_mime(
    email: &OutgoingEmail,
    branding: &Branding,
    date_unix_s: i64,
) -> Result<Vec<u8>, RenderError> {
    let message_id = email
        .message_id
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_string();
    let mut message = mail_builder::MessageBuilder::new()
        .from((branding.brand.as_str(), branding.from.as_str()))
        .to(email.to.as_str())
        .subject(header_value(&email.subject, SUBJECT_MAX_CHARS))
        .message_id(message_id)
        .date(date_unix_s)
        .text_body(email.text.as_str())
        .html_body(email.html.as_str());
    if let Some(calendar) = &email.calendar {
        // multipart/mixed: the alternative (text + HTML), then `invite.ics` as
        // `text/calendar; charset=utf-8; method=PUBLISH|CANCEL` — the same part the other two
        // providers send.
        message = message.attachment(
            calendar.content_type(),
            crate::domain::calendar::CalendarPart::FILE_NAME,
            calendar.ics.as_bytes(),
        );
    }
    Ok(message.write_to_vec()?)
}

#[cfg(test)]
mod tests {
    use super::super::booking_confirmation;
    use super::super::tests::{branding, sample_booking};
    use super::*;

    #[test]
    fn mime_is_multipart_alternative_with_encoded_subject_and_our_message_id() {
        let e = booking_confirmation(&sample_booking(), &branding()).unwrap();
        let raw = String::from_utf8(to_mime(&e, &branding(), 1_767_225_600).unwrap()).unwrap();
        assert!(raw.contains("multipart/alternative"), "{raw}");
        assert!(
            raw.contains(&format!("Message-ID: {}", e.message_id)),
            "{raw}"
        );
        assert!(
            raw.contains("Subject: =?utf-8?"),
            "non-ASCII subject must be RFC 2047 encoded: {raw}"
        );
        assert!(
            raw.contains("Date: Thu, 1 Jan 2026 00:00:00 +0000"),
            "{raw}"
        );
        assert!(raw.contains("text/plain") && raw.contains("text/html"));
    }
}
