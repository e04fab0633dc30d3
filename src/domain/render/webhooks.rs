//! The owner's alerts about outbound webhooks: a subscriber disabled by a 410 Gone,
//! deliveries that reached the dead letter queue (at most one alert a subscriber and UTC day,
//! enforced by the dedupe key `owner_webhook_alert:<subscriber>-<what>-<day>`), and an event that
//! could not be published at all (`owner_webhook_alert:<event id>-unpublished-<day>`).

use super::{OwnerInbox, RenderError};
use crate::domain::basics::text::header_value;
use crate::domain::email::EmailKind;
use crate::domain::outbox::outgoing::OutgoingEmail;

/// What the alert is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookAlert {
    /// The receiver answered 410 Gone: the subscriber is disabled; nothing more is sent to it.
    Disabled,
    /// A delivery was given up after its retries and is in the dead letters (redrive to retry).
    Dead,
    /// An event could not be published at all (its journey step failed past its retries): no
    /// subscriber got it. `subscriber_id` and `url` are not used; the key is the event id.
    NotPublished,
}

struct Alert<'a> {
    brand: &'a str,
    disabled: bool,
    unpublished: bool,
    subscriber_id: String,
    url: String,
    event_type: String,
    event_id: String,
    reason: String,
    day: String,
}
email_body!(
    Alert = "owner_webhook_alert.html",
    "owner_webhook_alert.txt"
);

/// The owner's alert about subscriber `subscriber_id` (at `url`) on UTC day `day`
/// (`YYYY-MM-DD`), caused by the delivery of `event_id` (`event_type`) for `reason`. Every value
/// is put on one line and cut; the URL is shown as text, never as a link.
#[allow(clippy::too_many_arguments)]
pub fn owner_webhook_alert(
    what: WebhookAlert,
    subscriber_id: &str,
    url: &str,
    event_type: &str,
    event_id: &str,
    reason: &str,
    day: &str,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let tag = match what {
        WebhookAlert::Disabled => "disabled",
        WebhookAlert::Dead => "dead",
        WebhookAlert::NotPublished => "unpublished",
    };
    let subscriber_id = header_value(subscriber_id, 64);
    let event_type = header_value(event_type, 40);
    let event_id = header_value(event_id, 64);
    let about = match what {
        WebhookAlert::NotPublished => event_id.clone(),
        _ => subscriber_id.clone(),
    };
    let subject = match what {
        WebhookAlert::Disabled => format!("Webhook subscriber {subscriber_id} disabled (410 Gone)"),
        WebhookAlert::Dead => {
            format!("Webhook deliveries to {subscriber_id} are in the dead letters")
        }
        WebhookAlert::NotPublished => format!("Webhook event {event_type} could not be published"),
    };
    owner.alert(
        EmailKind::OwnerWebhookAlert,
        &format!("{about}-{tag}-{day}"),
        subject,
        &Alert {
            brand: owner.brand(),
            disabled: what == WebhookAlert::Disabled,
            unpublished: what == WebhookAlert::NotPublished,
            subscriber_id,
            url: header_value(url, 300),
            event_type,
            event_id,
            reason: header_value(reason, 300),
            day: header_value(day, 10),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::branding;
    use super::*;
    use crate::domain::email::{Audience, EmailKind};
    use crate::domain::event::EmailAddress;

    fn alert(what: WebhookAlert, url: &str, reason: &str) -> OutgoingEmail {
        let owner = EmailAddress::parse("owner@example.com").unwrap();
        owner_webhook_alert(
            what,
            "sub_0123456789abcdef",
            url,
            "booking.confirmed",
            "evt_3f1c2a9b8e7d6c5b4a39281706f5e4d3",
            reason,
            "2026-12-02",
            OwnerInbox::new(&owner, &branding()),
        )
        .unwrap()
    }

    #[test]
    fn one_alert_per_subscriber_what_and_day_to_the_owner_with_values_escaped() {
        let dead = alert(
            WebhookAlert::Dead,
            "https://cms.example.com/hooks?x=<script>alert(1)</script>",
            "HTTP 500 on attempt 8 of 8\r\nBcc: someone@example.net",
        );
        assert_eq!(dead.kind, EmailKind::OwnerWebhookAlert);
        assert_eq!(dead.audience, Audience::Owner);
        assert_eq!(
            dead.dedupe_key.as_str(),
            "owner_webhook_alert:sub_0123456789abcdef-dead-2026-12-02"
        );
        assert!(!dead.subject.contains('\n') && dead.subject.contains("dead letters"));
        assert!(!dead.html.contains("<script>alert(1)"));
        assert!(
            dead.html.contains("&lt;script&gt;") || dead.html.contains("&#60;script&#62;"),
            "{}",
            dead.html
        );
        assert!(dead
            .text
            .contains("Last answer: HTTP 500 on attempt 8 of 8 Bcc: someone@example.net"));
        let gone = alert(
            WebhookAlert::Disabled,
            "https://cms.example.com/hooks",
            "410 Gone",
        );
        assert_eq!(
            gone.dedupe_key.as_str(),
            "owner_webhook_alert:sub_0123456789abcdef-disabled-2026-12-02"
        );
        assert!(gone.subject.contains("disabled (410 Gone)"));
        assert!(gone
            .text
            .contains("/admin/webhooks/subscribers/sub_0123456789abcdef/enable"));
    }

    /// Writes the sample renders in docs/ (`cargo test -- --ignored write_webhook_docs_renders`).
    #[test]
    #[ignore]
    fn write_webhook_docs_renders() {
        let root = env!("CARGO_MANIFEST_DIR");
        let a = alert(
            WebhookAlert::Dead,
            "https://cms.example.com/hooks/engine",
            "HTTP 503 on attempt 8 of 8",
        );
        std::fs::write(format!("{root}/docs/owner-webhook-alert.txt"), &a.text).unwrap();
        std::fs::write(format!("{root}/docs/owner-webhook-alert.html"), &a.html).unwrap();
    }
}
