//! The admin pages of what waits for the owner (`templates/admin/refunds.html`,
//! `deliveries.html`, `delivery.html`): pure view models, every value escaped by askama. The
//! outbox's backlog as the overview and the outbox page show it is [`super::admin::BacklogView`].

use super::admin::Chrome;
use askama::Template;

/// One refund as listed.
#[derive(Debug, Clone)]
pub struct RefundLine {
    pub id: String,
    pub booking_link: Option<String>,
    pub booking_id: String,
    pub guest: String,
    pub trip: String,
    pub source: String,
    pub cause: String,
    pub status: String,
    pub round: i64,
    pub amount: String,
    /// Since when it is in this state (UTC).
    pub since: String,
    pub reminders: i64,
    pub detail: String,
    /// Whether "refund now" is offered: not when Stripe's record does not tie the payment to the
    /// compensation ("already handled" only).
    pub refund_now: bool,
}

#[derive(Template)]
#[template(path = "admin/refunds.html")]
pub struct RefundsPage {
    pub chrome: Chrome,
    /// (group name, label, count, selected)
    pub groups: Vec<(String, String, u64, bool)>,
    pub group_label: String,
    /// Whether the owner can act on the listed refunds (waiting, failed).
    pub actions: bool,
    pub refunds: Vec<RefundLine>,
}

/// One subscriber's dead and retrying deliveries.
#[derive(Debug, Clone)]
pub struct SubscriberLine {
    pub id: String,
    pub url: String,
    pub enabled: bool,
    pub dead: u64,
    pub retrying: u64,
    /// The age of its oldest dead or retrying delivery, e.g. `3 h 05 min`.
    pub oldest: String,
    pub link: String,
}

/// One delivery as listed.
#[derive(Debug, Clone)]
pub struct DeliveryLine {
    pub id: String,
    pub link: String,
    pub event_type: String,
    pub subscriber: String,
    pub status: String,
    pub attempts: i64,
    pub created: String,
    pub age: String,
    pub last: String,
}

#[derive(Template)]
#[template(path = "admin/deliveries.html")]
pub struct DeliveriesPage {
    pub chrome: Chrome,
    pub subscribers: Vec<SubscriberLine>,
    /// The list's filter: `dead` or `pending`, and a subscriber id or empty.
    pub status: String,
    pub subscriber: String,
    pub deliveries: Vec<DeliveryLine>,
    /// `datetime-local` defaults of the time-range form (UTC): a day ago, now.
    pub range_from: String,
    pub range_to: String,
}

/// One attempt of a delivery.
#[derive(Debug, Clone)]
pub struct DeliveryAttemptLine {
    pub attempt: i64,
    pub at: String,
    pub status_code: String,
    pub outcome: String,
    pub duration_ms: i64,
    pub error: String,
    pub excerpt: String,
}

#[derive(Template)]
#[template(path = "admin/delivery.html")]
pub struct DeliveryPage {
    pub chrome: Chrome,
    pub delivery: DeliveryLine,
    pub event_id: String,
    pub redrives: i64,
    pub dead: bool,
    pub attempts: Vec<DeliveryAttemptLine>,
}
