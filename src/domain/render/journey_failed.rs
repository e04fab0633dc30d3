//! The owner's alert that a supplier event's journey ended in a fatal error: the supplier was
//! answered 202 and will not resend, so the owner must hear of it.

use super::{OwnerInbox, RenderError};
use crate::domain::email::EmailKind;
use crate::domain::event::Source;
use crate::domain::outbox::outgoing::OutgoingEmail;

/// Longest error text quoted in the alert, in characters.
pub const ERROR_QUOTE_MAX: usize = 1000;

struct JourneyFailed<'a> {
    brand: &'a str,
    source: &'a str,
    event_id: &'a str,
    event_name: &'a str,
    error: String,
}
email_body!(
    JourneyFailed = "owner_journey_failed.html",
    "owner_journey_failed.txt"
);

/// The alert (kind `owner_journey_failed`, one per `(source, event id)`: dedupe key
/// `owner_journey_failed:<source>:<event id>`). `error` is quoted on one line, cut at
/// [`ERROR_QUOTE_MAX`] characters.
pub fn owner_journey_failed(
    source: Source,
    event_id: &str,
    event_name: &str,
    error: &str,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    owner.alert(
        EmailKind::OwnerJourneyFailed,
        &format!("{source}:{event_id}"),
        format!("Booking event not processed: {source} {event_name}"),
        &JourneyFailed {
            brand: owner.brand(),
            source: source.as_str(),
            event_id,
            event_name,
            error: crate::domain::basics::text::header_value(error, ERROR_QUOTE_MAX),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::branding;
    use super::*;
    use crate::domain::event::EmailAddress;

    #[test]
    fn alert_names_the_event_and_quotes_the_error_on_one_line() {
        let owner = EmailAddress::parse("owner@example.com").unwrap();
        let e = owner_journey_failed(
            Source::Liteapi,
            "evt_1",
            "booking.book",
            "step failed:\r\nboom <b>",
            OwnerInbox::new(&owner, &branding()),
        )
        .unwrap();
        assert_eq!(e.kind, EmailKind::OwnerJourneyFailed);
        assert_eq!(e.dedupe_key.as_str(), "owner_journey_failed:liteapi:evt_1");
        assert_eq!(e.to, owner);
        assert_eq!(
            e.subject,
            "Booking event not processed: liteapi booking.book"
        );
        assert!(
            e.text.contains("Error: step failed: boom <b>"),
            "{}",
            e.text
        );
        assert!(e.html.contains("boom &#60;b&#62;"), "{}", e.html);
    }
}
