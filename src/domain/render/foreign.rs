//! The owner's alert that a supplier event named a booking (or checkout, or compensation) of
//! another source or partner and was refused: nothing changed, no guest was written to. One alert
//! per named record and UTC day, however many such events arrive (dedupe key
//! `owner_foreign_event:<record>:<day>`).

use super::{OwnerInbox, RenderError};
use crate::domain::email::EmailKind;
use crate::domain::event::ownership::{alert_ref, Owner};
use crate::domain::outbox::outgoing::OutgoingEmail;

/// Longest reason quoted in the alert, in characters.
pub const REASON_MAX: usize = 500;

struct ForeignEvent<'a> {
    brand: &'a str,
    actor: String,
    record: &'a str,
    event_id: &'a str,
    event_name: &'a str,
    reason: String,
    day: &'a str,
}
email_body!(
    ForeignEvent = "owner_foreign_event.html",
    "owner_foreign_event.txt"
);

/// The alert about events of `actor` naming `record` (a booking id, a prebook id or a
/// compensation id) on `day` (UTC `YYYY-MM-DD`): the first such event's id, name and the reason
/// it was refused, each one line and bounded.
#[allow(clippy::too_many_arguments)]
pub fn owner_foreign_event(
    actor: &Owner,
    record: &str,
    event_id: &str,
    event_name: &str,
    reason: &str,
    day: &str,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let one_line = |v: &str, max: usize| crate::domain::basics::text::header_value(v, max);
    let record = one_line(record, 200);
    owner.alert(
        EmailKind::OwnerForeignEvent,
        &alert_ref(&record, day),
        format!("Refused: an event from {actor} named {record}, which is not its own"),
        &ForeignEvent {
            brand: owner.brand(),
            actor: actor.to_string(),
            record: &record,
            event_id: &one_line(event_id, 300),
            event_name: &one_line(event_name, 100),
            reason: one_line(reason, REASON_MAX),
            day,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::branding;
    use super::*;
    use crate::domain::event::EmailAddress;
    use crate::domain::event::Source;

    #[test]
    fn one_alert_per_record_and_day_naming_both_owners() {
        let owner = EmailAddress::parse("owner@example.com").unwrap();
        let actor = Owner::new(Source::Generic, Some("acme"));
        let e = owner_foreign_event(
            &actor,
            "BK_1",
            "acme/msg_1",
            "booking_cancelled",
            "booking BK_1 belongs to liteapi; this event came from generic partner \"acme\"\r\n<b>",
            "2026-12-03",
            OwnerInbox::new(&owner, &branding()),
        )
        .unwrap();
        assert_eq!(e.kind, EmailKind::OwnerForeignEvent);
        assert_eq!(e.dedupe_key.as_str(), "owner_foreign_event:BK_1:2026-12-03");
        assert_eq!(e.booking_id, None);
        assert!(
            e.subject.contains("generic partner \"acme\""),
            "{}",
            e.subject
        );
        assert!(e.text.contains("Nothing was changed"), "{}", e.text);
        assert!(e.text.contains("belongs to liteapi"), "{}", e.text);
        assert!(!e.text.contains('\r'));
        assert!(e.html.contains("&#60;b&#62;"), "{}", e.html);
    }
}
