//! The admin's view of guests' replies: the page of conversations waiting for an answer with the
//! unmatched mail (`templates/admin/`). The answer form under a booking's timeline is part of the
//! booking page ([`super::admin::ConversationForm`]). Pure view models; askama escapes every value.

use super::admin::Chrome;
use askama::Template;

/// One conversation waiting for the owner.
#[derive(Debug, Clone)]
pub struct WaitingLine {
    pub booking_id: String,
    pub link: String,
    pub guest: String,
    pub trip: String,
    pub since: String,
    pub subject: String,
    pub excerpt: String,
}

/// One message kept apart from every booking.
#[derive(Debug, Clone)]
pub struct UnmatchedLine {
    pub when: String,
    pub from: String,
    pub to: String,
    pub subject: String,
    pub reason: String,
    pub kind: String,
    pub text: String,
}

#[derive(Template)]
#[template(path = "admin/conversations.html")]
pub struct ConversationsPage {
    pub chrome: Chrome,
    pub waiting: Vec<WaitingLine>,
    pub unmatched: Vec<UnmatchedLine>,
    pub replies_off: bool,
}
