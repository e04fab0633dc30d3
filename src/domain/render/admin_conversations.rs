//! The admin's view of guests' replies: the answer form under a booking's timeline, and the page
//! of conversations waiting for an answer with the unmatched mail (`templates/admin/`). Pure view
//! models; askama escapes every value.

use super::admin::Chrome;
use askama::Template;

/// The answer form of one booking (`#conversation` on its page).
#[derive(Debug, Clone, Default)]
pub struct ConversationForm {
    pub booking_id: String,
    /// The form's one-time id (the answer's dedupe key part: a second submit sends nothing).
    pub form_id: String,
    /// Guest and automatic messages kept on the booking.
    pub messages: usize,
    /// The newest guest message has no answer yet.
    pub waiting: bool,
    /// Who the answer goes to (the booking's guest address) and in which language.
    pub to: String,
    pub language: String,
    /// The subject the answer will carry.
    pub subject: String,
    /// Replies are off (`REPLY_DOMAIN` / `REPLY_SIGNING_KEY`): the answer still goes, without a
    /// reply address, and the page says so.
    pub replies_off: bool,
}

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
