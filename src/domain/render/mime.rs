//! A rendered email → RFC 5322 bytes for SMTP (mail-builder): multipart/alternative (RFC 2046
//! §5.1.4), RFC 2047 encoded UTF-8 headers, our own deterministic Message-ID, and the email's own
//! extra headers (RFC 8058 one-click unsubscribe on marketing email), as on every other route.

use super::{Branding, RenderError};
use crate::domain::basics::text::{header_value, HEADER_MAX_CHARS, SUBJECT_MAX_CHARS};
use crate::domain::outbox::outgoing::OutgoingEmail;

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
    let mut builder = mail_builder::MessageBuilder::new()
        .from((branding.brand.as_str(), branding.from.as_str()))
        .to(email.to.as_str())
        .subject(header_value(&email.subject, SUBJECT_MAX_CHARS))
        .message_id(message_id)
        .date(date_unix_s);
    // The email's own extra headers, exactly as the main providers send them (RFC 8058's
    // `List-Unsubscribe` / `List-Unsubscribe-Post` of marketing email): one line each, bounded
    // when composed, never one the builder writes itself.
    if let Some(reply_to) = &email.reply_to {
        builder = builder.reply_to((branding.brand.as_str(), reply_to.as_str()));
    }
    let extra = email.headers_to_send();
    for (name, value) in &extra {
        if extra_header_allowed(name) {
            builder = builder.header(
                name.as_str(),
                mail_builder::headers::raw::Raw::new(header_value(value, HEADER_MAX_CHARS)),
            );
        }
    }
    let mut message = builder
        .text_body(email.text.as_str())
        .html_body(email.html.as_str());
    for calendar in email.calendar_parts() {
        // multipart/mixed: the alternative (text + HTML), then each calendar part as
        // `text/calendar; charset=utf-8; method=PUBLISH|CANCEL` — the same parts the other two
        // providers send.
        message = message.attachment(
            calendar.content_type(),
            calendar.file_name.as_str(),
            calendar.text().as_bytes(),
        );
    }
    Ok(message.write_to_vec()?)
}

/// A header name an email may add: a token of letters, digits and `-`, and not one the message
/// builder sets (From, To, Subject, Message-ID, Date, MIME and content headers).
fn extra_header_allowed(name: &str) -> bool {
    const OWN: [&str; 9] = [
        "from",
        "reply-to",
        "to",
        "subject",
        "message-id",
        "date",
        "mime-version",
        "content-type",
        "content-transfer-encoding",
    ];
    !name.is_empty()
        && name.len() <= 76
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !OWN.contains(&name.to_ascii_lowercase().as_str())
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
        assert!(raw.contains("Auto-Submitted: auto-generated\r\n"), "{raw}");
        assert!(!raw.contains("Reply-To"), "{raw}");
    }

    #[test]
    fn a_guest_email_names_its_reply_address_and_the_owner_s_answer_is_not_automatic() {
        let mut e = booking_confirmation(&sample_booking(), &branding()).unwrap();
        e.reply_to = Some("reply+abc@reply.example.com".into());
        let raw = String::from_utf8(to_mime(&e, &branding(), 1_767_225_600).unwrap()).unwrap();
        assert!(
            raw.contains("Reply-To: \"Example Trips\" <reply+abc@reply.example.com>\r\n"),
            "{raw}"
        );
        e.kind = crate::domain::email::EmailKind::ConversationAnswer;
        e.headers = vec![("In-Reply-To".into(), "<guest-1@mail.example.org>".into())];
        let raw = String::from_utf8(to_mime(&e, &branding(), 1_767_225_600).unwrap()).unwrap();
        assert!(!raw.contains("Auto-Submitted"), "{raw}");
        assert!(
            raw.contains("In-Reply-To: <guest-1@mail.example.org>\r\n"),
            "{raw}"
        );
    }

    #[test]
    fn extra_headers_go_out_over_smtp_too() {
        let mut e = booking_confirmation(&sample_booking(), &branding()).unwrap();
        e.headers = vec![
            (
                "List-Unsubscribe".into(),
                "<https://engine.example.com/unsubscribe/abc.def>".into(),
            ),
            (
                "List-Unsubscribe-Post".into(),
                "List-Unsubscribe=One-Click".into(),
            ),
            ("Subject".into(), "forged".into()),
            ("Bad Name:".into(), "x".into()),
            ("X-Evil".into(), "a\r\nBcc: victim@example.com".into()),
        ];
        let raw = String::from_utf8(to_mime(&e, &branding(), 1_767_225_600).unwrap()).unwrap();
        assert!(
            raw.contains("List-Unsubscribe: <https://engine.example.com/unsubscribe/abc.def>\r\n"),
            "{raw}"
        );
        assert!(
            raw.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"),
            "{raw}"
        );
        assert_eq!(raw.matches("Subject:").count(), 1, "{raw}");
        assert!(
            !raw.contains("forged") && !raw.contains("Bad Name"),
            "{raw}"
        );
        // A value is one line: no header can be smuggled in.
        assert!(!raw.contains("\r\nBcc:"), "{raw}");
    }
}
