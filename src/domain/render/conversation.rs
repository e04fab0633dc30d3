//! A guest's message and the owner's answer: the owner's alert about a new guest message (English,
//! sent at once, dedupe key `owner_guest_message:<message id>`), and the answer, a guest email in
//! the guest's language (`conversation_answer:<booking>:<form id>`, rank booking) whose frame —
//! greeting, the booking it is about, how to write again — is translated around the owner's own
//! words, which go out as written.

use super::{compose, Branding, Envelope, OwnerInbox, RenderError};
use crate::domain::basics::text::header_value;
use crate::domain::email::{DedupeKey, EmailKind};
use crate::domain::event::{BookingRef, EmailAddress};
use crate::domain::i18n::Tr;
use crate::domain::inbound::{Attachment, AuthVerdict};
use crate::domain::outbox::outgoing::OutgoingEmail;

/// Longest answer the owner may send, characters.
pub const ANSWER_MAX_CHARS: usize = 8_000;

/// A booking's facts as the alert and the answer show them (from D1 `bookings`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BookingFacts {
    pub booking_id: String,
    pub guest_name: String,
    pub guest_first_name: String,
    pub guest_email: String,
    pub hotel_name: String,
    /// `YYYY-MM-DD`, as stored.
    pub checkin: String,
    pub checkout: String,
    pub status: String,
}

impl BookingFacts {
    /// The booking id as a [`BookingRef`]; refused when the stored id is not one.
    fn booking_ref(&self) -> Result<BookingRef, RenderError> {
        BookingRef::parse(&self.booking_id)
            .map_err(|e| RenderError::Refused(format!("booking id: {e}")))
    }
}

/// One guest message as the owner's alert shows it.
#[derive(Debug, Clone)]
pub struct GuestMessage<'a> {
    /// D1 `inbound_messages.id`: the alert's dedupe key.
    pub id: i64,
    pub from: &'a str,
    pub from_name: &'a str,
    pub subject: &'a str,
    pub text: &'a str,
    pub attachments: &'a [Attachment],
    pub auth: &'a [AuthVerdict],
    /// What could not be kept (one line), if anything.
    pub note: Option<&'a str>,
    /// The admin link to the booking's conversation.
    pub link: String,
}

struct Alert<'a> {
    brand: &'a str,
    m: &'a GuestMessage<'a>,
    b: &'a BookingFacts,
    attachments: Vec<String>,
    auth: String,
}
email_body!(
    Alert = "owner_guest_message.html",
    "owner_guest_message.txt"
);

/// The owner's alert: the guest's words, who wrote, the booking's facts and a link to answer.
pub fn owner_guest_message(
    m: &GuestMessage<'_>,
    b: &BookingFacts,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerGuestMessage;
    let who = if m.from_name.is_empty() {
        m.from
    } else {
        m.from_name
    };
    let booking = b.booking_ref()?;
    let subject = format!(
        "Guest message from {who} about {} ({})",
        b.booking_id, b.hotel_name
    );
    owner.send(
        owner
            .envelope(kind, &m.id.to_string(), subject)
            .about(&booking),
        &Alert {
            brand: owner.brand(),
            m,
            b,
            attachments: m
                .attachments
                .iter()
                .map(|a| format!("{} ({}, {} bytes)", a.name, a.content_type, a.size))
                .collect(),
            auth: auth_summary(m.auth),
        },
    )
}

/// `dkim pass, spf pass, dmarc pass`, or `unverified` when the receiving server reported no
/// checks (`crate::domain::inbound::trusted_verdicts`).
pub fn auth_summary(auth: &[AuthVerdict]) -> String {
    if auth.is_empty() {
        return "unverified (no checks reported by the receiving server)".into();
    }
    auth.iter()
        .map(|v| format!("{} {}", v.method, v.result))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The owner's answer, as the admin form submitted it.
#[derive(Debug, Clone)]
pub struct Answer<'a> {
    /// The form's one-time id: the answer's dedupe key part (a second submit is a duplicate).
    pub form_id: &'a str,
    /// The owner's words, as written (line breaks kept), at most [`ANSWER_MAX_CHARS`].
    pub text: &'a str,
    /// The guest's subject being answered, if any (the answer's subject is `Re: <it>`).
    pub guest_subject: Option<&'a str>,
    /// The Message-ID of the guest's message (without `<>`) and its `References`, for
    /// `In-Reply-To` / `References` (RFC 5322 §3.6.4).
    pub in_reply_to: Option<&'a str>,
    pub references: &'a [String],
}

struct AnswerBody<'a> {
    tr: Tr,
    brand: &'a str,
    /// The whole greeting line (`Bonjour Ana,`, or a greeting without a name).
    greeting: String,
    words: &'a str,
    about: String,
    stay: String,
}
email_body!(
    AnswerBody = "conversation_answer.html",
    "conversation_answer.txt"
);

/// The answer email to the guest (`to`), in `branding`'s language (the booking's guest
/// language). Errors: [`RenderError::Refused`] for empty words or words over
/// [`ANSWER_MAX_CHARS`].
pub fn conversation_answer(
    a: &Answer<'_>,
    b: &BookingFacts,
    to: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    // A browser's form sends line breaks as CRLF; control characters never reach the guest.
    let words: String = a
        .text
        .replace("\r\n", "\n")
        .chars()
        .filter(|&c| c == '\n' || !crate::domain::basics::text::is_unsafe_char(c))
        .collect();
    let words = words.trim();
    if words.is_empty() {
        return Err(RenderError::Refused("the answer is empty".into()));
    }
    if words.chars().count() > ANSWER_MAX_CHARS {
        return Err(RenderError::Refused(format!(
            "the answer is longer than {ANSWER_MAX_CHARS} characters"
        )));
    }
    let kind = EmailKind::ConversationAnswer;
    let tr = branding.tr();
    let booking = b.booking_ref()?;
    let subject = match a.guest_subject.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => format!("Re: {}", strip_reply_prefixes(s)),
        None => tr.t1("answer-subject", "ref", b.booking_id.as_str()),
    };
    let mut envelope = Envelope::new(
        kind,
        DedupeKey::for_booking_part(kind, &booking, a.form_id),
        to,
        subject,
    )
    .about(&booking);
    if let Some(id) = a.in_reply_to {
        let id = format!("<{}>", header_value(id, 250));
        let mut refs: Vec<String> = a
            .references
            .iter()
            .map(|r| format!("<{}>", header_value(r, 250)))
            .collect();
        let mut seen = std::collections::HashSet::new();
        refs.retain(|r| r != &id && seen.insert(r.clone()));
        refs.push(id.clone());
        envelope.headers = vec![
            ("In-Reply-To".into(), id),
            ("References".into(), refs.join(" ")),
        ];
    }
    let dates = match (
        chrono::NaiveDate::parse_from_str(&b.checkin, "%Y-%m-%d"),
        chrono::NaiveDate::parse_from_str(&b.checkout, "%Y-%m-%d"),
    ) {
        (Ok(i), Ok(o)) => tr.date_range(i, o),
        _ => String::new(),
    };
    let stay = [b.hotel_name.as_str(), dates.as_str()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    compose(
        envelope,
        &AnswerBody {
            tr,
            brand: &branding.brand,
            greeting: super::text::greet(tr, &b.guest_first_name),
            words,
            about: tr.t1("answer-about", "ref", b.booking_id.as_str()),
            stay,
        },
        branding,
    )
}

/// `Re: Re: AW: x` → `x` (the prefixes mail clients add, in the engine's languages).
fn strip_reply_prefixes(subject: &str) -> &str {
    let mut s = subject.trim();
    loop {
        let lower = s.to_ascii_lowercase();
        let Some(p) = [
            "re:", "aw:", "sv:", "rif:", "ref:", "res:", "fw:", "fwd:", "tr:", "wg:",
        ]
        .iter()
        .find(|p| lower.starts_with(*p)) else {
            return s;
        };
        s = s[p.len()..].trim_start();
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::branding;
    use super::*;
    use crate::domain::i18n::Locale;

    fn facts() -> BookingFacts {
        BookingFacts {
            booking_id: "BK_1".into(),
            guest_name: "Ana García".into(),
            guest_first_name: "Ana".into(),
            guest_email: "ana@example.com".into(),
            hotel_name: "Hôtel <Harbour>".into(),
            checkin: "2026-06-12".into(),
            checkout: "2026-06-15".into(),
            status: "CONFIRMED".into(),
        }
    }

    #[test]
    fn the_alert_quotes_the_guest_and_links_the_conversation() {
        let attachments = [Attachment {
            name: "flight.pdf".into(),
            content_type: "application/pdf".into(),
            size: 1234,
        }];
        let auth = [AuthVerdict {
            method: "dkim".into(),
            result: "pass".into(),
        }];
        let m = GuestMessage {
            id: 7,
            from: "ana@example.com",
            from_name: "Ana <García>",
            subject: "Re: Your stay",
            text: "Can we check in early?\n<script>x</script>",
            attachments: &attachments,
            auth: &auth,
            note: None,
            link: "https://engine.test/admin/booking?id=BK_1#conversation".into(),
        };
        let owner = EmailAddress::parse("owner@example.com").unwrap();
        let e = owner_guest_message(&m, &facts(), OwnerInbox::new(&owner, &branding())).unwrap();
        assert_eq!(e.dedupe_key.as_str(), "owner_guest_message:7");
        assert_eq!(e.kind.audience(), crate::domain::email::Audience::Owner);
        assert!(
            e.subject.contains("Ana <García> about BK_1"),
            "{}",
            e.subject
        );
        assert!(e.text.contains("Can we check in early?"), "{}", e.text);
        assert!(e.text.contains("flight.pdf (application/pdf, 1234 bytes)"));
        assert!(e.text.contains("dkim pass"));
        assert!(e.text.contains("2026-06-12"));
        assert!(e
            .text
            .contains("https://engine.test/admin/booking?id=BK_1#conversation"));
        assert!(e.html.contains("&#60;script&#62;"), "{}", e.html);
        assert!(!e.html.contains("<script>"));
    }

    #[test]
    fn the_answer_is_framed_in_the_guest_s_language_and_threads_on_the_guest_s_message() {
        let refs = vec![
            "ours-1@mail.example.com".to_string(),
            "ours-1@mail.example.com".to_string(),
            "guest-1@icloud.com".to_string(),
        ];
        let a = Answer {
            form_id: "f1",
            text: "  Of course: early check-in from 11:00.\r\nSee you!\u{1b}  ",
            guest_subject: Some("RE: Re: Votre séjour"),
            in_reply_to: Some("guest-1@icloud.com"),
            references: &refs,
        };
        let to = EmailAddress::parse("ana@example.com").unwrap();
        let fr = branding().in_locale(Locale::Fr);
        let e = conversation_answer(&a, &facts(), &to, &fr).unwrap();
        assert_eq!(e.dedupe_key.as_str(), "conversation_answer:BK_1:f1");
        assert_eq!(e.subject, "Re: Votre séjour");
        assert!(e.text.starts_with("Bonjour Ana,"), "{}", e.text);
        assert!(e
            .text
            .contains("Of course: early check-in from 11:00.\nSee you!"));
        assert!(e.text.contains("Votre réservation BK_1"), "{}", e.text);
        assert_eq!(
            e.headers,
            [
                (
                    "In-Reply-To".to_string(),
                    "<guest-1@icloud.com>".to_string()
                ),
                (
                    "References".to_string(),
                    "<ours-1@mail.example.com> <guest-1@icloud.com>".to_string()
                )
            ]
        );
        assert!(e
            .headers_to_send()
            .iter()
            .all(|(n, _)| n != "Auto-Submitted"));
        assert!(matches!(
            conversation_answer(
                &Answer {
                    text: " \n",
                    ..a.clone()
                },
                &facts(),
                &to,
                &fr
            ),
            Err(RenderError::Refused(_))
        ));
        let long = "x".repeat(ANSWER_MAX_CHARS + 1);
        assert!(conversation_answer(&Answer { text: &long, ..a }, &facts(), &to, &fr).is_err());
    }
}
