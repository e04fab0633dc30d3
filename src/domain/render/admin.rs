//! The owner's admin pages (`templates/admin/*.html`, all extending `admin/layout.html`): pure
//! view models in, HTML out. Every value is escaped by askama's HTML escaper; URLs are built by
//! the shell with percent-encoding. No page carries a script.

use askama::Template;

/// What every admin page shows around its content.
#[derive(Debug, Clone, Default)]
pub struct Chrome {
    /// The signed-in account; `None` on the sign-in and error pages shown without a session
    /// (no navigation then).
    pub account: Option<String>,
    /// `BRAND_NAME`.
    pub brand: String,
    /// The session's CSRF token, put in every form.
    pub csrf: String,
    /// A one-line result of the last action (`?done=…`), shown escaped.
    pub flash: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/login.html")]
pub struct LoginPage {
    pub chrome: Chrome,
    pub next: String,
    pub typed: String,
    pub error: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/message.html")]
pub struct MessagePage {
    pub chrome: Chrome,
    pub title: String,
    pub message: String,
}

/// A provider's line: display name, form key (`main`/`smtp`), state text, paused or not.
#[derive(Debug, Clone)]
pub struct ProviderLine {
    pub name: String,
    pub key: String,
    pub state: String,
    pub paused: bool,
}

/// A linked line of a list (an email, a failure).
#[derive(Debug, Clone)]
pub struct LinkLine {
    pub when: String,
    pub title: String,
    pub link: String,
    pub status: String,
    pub detail: String,
}

#[derive(Template)]
#[template(path = "admin/overview.html")]
pub struct OverviewPage {
    pub chrome: Chrome,
    /// Shown on top when no route can send ([`all_routes_paused_banner`]).
    pub banner: Option<String>,
    pub dead: i64,
    pub open_holds: i64,
    pub rejected_7d: i64,
    pub waiting: i64,
    pub providers: Vec<ProviderLine>,
    /// (rank, status, count) among the newest `listed` outbox rows.
    pub by_rank: Vec<(String, String, i64)>,
    pub listed: usize,
    pub outbox_counts: Vec<(String, i64)>,
    pub email_counts: Vec<(String, i64)>,
    pub failures: Vec<LinkLine>,
    /// (when, kind, subject, reason)
    pub repairs: Vec<(String, String, String, String)>,
    /// Refunds waiting for the owner's decision.
    pub refunds_waiting: i64,
    /// Guest emails skipped as stale this UTC day and the one before.
    pub stale_today: i64,
    pub stale_yesterday: i64,
    pub backlog: BacklogView,
    /// `ENGINE_ENV` as the engine reads it (`production` or `development`).
    pub environment: &'static str,
    /// (variable, why) of every feature the configuration turned off (the production guard).
    pub refused: Vec<(String, String)>,
}

/// The admin's warning when every route of the outbox is paused (the main provider, and SMTP
/// paused or not configured): nothing can be sent until `until_ms` (ms UTC) or a route is resumed.
/// `None` when some route can send at `now_ms`. Decided by the outbox's own rule
/// ([`crate::domain::outbox::choose_provider`]).
pub fn all_routes_paused_banner(
    now_ms: i64,
    availability: crate::domain::outbox::Availability,
) -> Option<String> {
    use crate::domain::outbox::{choose_provider, ProviderChoice};
    let ProviderChoice::WaitUntil(until_ms) = choose_provider(now_ms, availability) else {
        return None;
    };
    let until = chrono::DateTime::from_timestamp_millis(until_ms)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| until_ms.to_string());
    let smtp = if availability.smtp_configured {
        "SMTP failover is paused too"
    } else {
        "no SMTP failover is configured"
    };
    let owner = match crate::domain::outbox::choose_owner_route(now_ms, availability) {
        ProviderChoice::Send(_) => {
            "Owner alerts still reach you by the owner route; guest email waits in the outbox, nothing is lost."
        }
        ProviderChoice::WaitUntil(_) => "Nothing is lost: email and owner alerts wait in the outbox.",
    };
    Some(format!(
        "Every route is paused: the main provider is paused and {smtp}. No guest email goes out until {until}, or until a route is resumed on the outbox page. {owner}"
    ))
}

/// A booking in the search results.
#[derive(Debug, Clone)]
pub struct BookingLine {
    pub id: String,
    pub link: String,
    pub kind: String,
    pub guest: String,
    pub email: String,
    pub trip: String,
    pub status: String,
    pub created: String,
}

#[derive(Template)]
#[template(path = "admin/bookings.html")]
pub struct BookingsPage {
    pub chrome: Chrome,
    pub q: String,
    pub hits: Vec<BookingLine>,
}

/// A timeline entry as shown: the entry, and its time written out in UTC.
#[derive(Debug, Clone)]
pub struct EntryLine {
    pub utc: String,
    pub entry: crate::domain::admin::timeline::Entry,
}

impl EntryLine {
    /// The entry's CSS class and `data-kind` (its kind's stored name).
    pub fn class(&self) -> &'static str {
        self.entry.kind.class()
    }
}

#[derive(Template)]
#[template(path = "admin/booking.html")]
pub struct BookingPage {
    pub chrome: Chrome,
    pub id: String,
    pub facts: Vec<(String, String)>,
    pub entries: Vec<EntryLine>,
    /// Some kind had more rows than the page reads.
    pub cut: bool,
    /// Rows read of each kind but raw events.
    pub max_per_kind: u32,
    /// Raw events read.
    pub max_raw_events: u32,
    /// Guests' replies: the answer form (`#conversation`).
    pub conversation: ConversationForm,
}

#[derive(Template)]
#[template(path = "admin/email.html")]
pub struct EmailPage {
    pub chrome: Chrome,
    pub subject: String,
    pub facts: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    /// (attempt, when, provider, outcome, error)
    pub attempts: Vec<(i64, String, String, String, String)>,
    pub has_content: bool,
    pub text: String,
    pub html_src: String,
}

/// An outbox row as listed.
#[derive(Debug, Clone)]
pub struct QueueLine {
    pub key: String,
    pub link: String,
    pub rank: String,
    pub status: String,
    pub attempts: i64,
    pub when: String,
    pub provider: String,
    pub error: String,
}

#[derive(Template)]
#[template(path = "admin/queue.html")]
pub struct QueuePage {
    pub chrome: Chrome,
    /// Shown on top when no route can send ([`all_routes_paused_banner`]).
    pub banner: Option<String>,
    pub providers: Vec<ProviderLine>,
    pub counts: Vec<(String, i64)>,
    pub dead: Vec<QueueLine>,
    pub queued: Vec<QueueLine>,
    pub recent: Vec<QueueLine>,
    pub backlog: BacklogView,
    /// The catch-up form's choices: gaps (s) and durations (h) within the configured bounds.
    pub catch_up_gaps: Vec<i64>,
    pub catch_up_hours: Vec<i64>,
    /// The routes' history, newest first: (when, route, event, detail).
    pub route_history: Vec<(String, String, String, String)>,
}

/// An open hold as listed.
#[derive(Debug, Clone)]
pub struct HoldLine {
    pub id: String,
    pub created: String,
    pub reason: String,
    pub facts: Vec<String>,
}

#[derive(Template)]
#[template(path = "admin/holds.html")]
pub struct HoldsPage {
    pub chrome: Chrome,
    pub holds: Vec<HoldLine>,
    /// (action's stored name, button label)
    pub actions: Vec<(&'static str, &'static str)>,
}

/// A raw event as listed.
#[derive(Debug, Clone)]
pub struct EventLine {
    pub when: String,
    pub source: String,
    pub name: String,
    pub event_id: String,
    pub status: String,
    pub error: String,
    /// An excerpt of the stored body (`admin::bookings::BODY_EXCERPT_CHARS`).
    pub body: String,
    /// The whole body's own link.
    pub body_link: String,
    /// Why the event was refused (it named another owner's booking), empty when it was not.
    pub refused: String,
    pub booking: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/events.html")]
pub struct EventsPage {
    pub chrome: Chrome,
    pub sources: Vec<&'static str>,
    pub statuses: Vec<&'static str>,
    pub source: String,
    pub status: String,
    pub date: String,
    pub events: Vec<EventLine>,
    pub older: Option<String>,
}

/// A suppression as listed.
#[derive(Debug, Clone)]
pub struct SuppressionLine {
    pub email: String,
    pub reason: String,
    pub detail: String,
    pub source: String,
    pub since: String,
}

/// An operator's change to suppressions.
#[derive(Debug, Clone)]
pub struct SuppressionLogLine {
    pub when: String,
    pub email: String,
    pub change: String,
    pub reason: String,
    pub note: String,
    pub by: String,
}

#[derive(Template)]
#[template(path = "admin/suppressions.html")]
pub struct SuppressionsPage {
    pub chrome: Chrome,
    pub q: String,
    pub reasons: Vec<(&'static str, &'static str)>,
    pub rows: Vec<SuppressionLine>,
    pub log: Vec<SuppressionLogLine>,
}

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

/// The backlog forecast as the overview and the outbox page show it.
#[derive(Debug, Clone, Default)]
pub struct BacklogView {
    /// (rank, queued, drained by (UTC), in)
    pub drains: Vec<(String, u64, String, String)>,
    /// (email, booking, moment (UTC), forecast (UTC))
    pub misses: Vec<(String, String, String, String)>,
    pub gap_s: i64,
    /// The catch-up in force, in words.
    pub catch_up: Option<String>,
}

/// Renders a page; a template error (which askama reports only for a broken template) becomes a
/// plain escaped message page.
pub fn render(page: &impl Template) -> String {
    page.render().unwrap_or_else(|e| {
        super::pages::fallback_page("Admin page failed", &format!("rendering failed: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chrome() -> Chrome {
        Chrome {
            account: Some("owner".into()),
            brand: "Bookings".into(),
            csrf: "c5rf".into(),
            flash: Some("<b>done</b>".into()),
        }
    }

    #[test]
    fn every_value_is_escaped() {
        let evil = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>";
        let html = render(&BookingsPage {
            chrome: chrome(),
            q: evil.into(),
            hits: vec![BookingLine {
                id: evil.into(),
                link: format!("/admin/booking?id={}", "x"),
                kind: "hotel".into(),
                guest: evil.into(),
                email: "a@b.c".into(),
                trip: evil.into(),
                status: "confirmed".into(),
                created: "2026-12-01".into(),
            }],
        });
        assert!(!html.contains("<script>alert"));
        assert!(!html.contains("<img src=x"));
        assert!(html.contains("&#60;script&#62;alert(1)&#60;/script&#62;"));
        assert!(html.contains("&#60;b&#62;done&#60;/b&#62;"));
        assert!(html.contains("name=\"csrf\" value=\"c5rf\""));
        assert!(!html.contains("<script"), "no page carries a script");
    }

    #[test]
    fn the_sign_in_page_has_no_navigation() {
        let html = render(&LoginPage {
            chrome: Chrome::default(),
            next: "/admin/queue".into(),
            typed: "\"><x".into(),
            error: Some("Wrong account or password.".into()),
        });
        assert!(html.contains("id=\"signin\""));
        assert!(!html.contains("id=\"signout\""));
        assert!(html.contains("value=\"&#34;&#62;&#60;x\""));
    }

    #[test]
    fn the_banner_shows_only_when_every_route_is_paused() {
        use crate::domain::outbox::{Availability, Provider};
        let now = 1_800_000_000_000;
        let a = |main: Option<i64>, smtp_configured: bool, smtp: Option<i64>| Availability {
            main: Provider::Cloudflare,
            main_paused_until_ms: main,
            smtp_configured,
            smtp_paused_until_ms: smtp,
            owner_route: false,
            owner_route_paused_until_ms: None,
        };
        // Main paused, SMTP carries: no banner.
        assert_eq!(
            all_routes_paused_banner(now, a(Some(now + 1), true, None)),
            None
        );
        // Main fine: no banner.
        assert_eq!(all_routes_paused_banner(now, a(None, false, None)), None);
        // Main paused and no SMTP configured.
        let b = all_routes_paused_banner(now, a(Some(now + 3_600_000), false, None)).unwrap();
        assert!(b.contains("no SMTP failover is configured"), "{b}");
        assert!(b.contains("2027-01-15 09:00 UTC"), "{b}");
        // Both paused.
        let b = all_routes_paused_banner(now, a(Some(now + 9), true, Some(now + 5))).unwrap();
        assert!(b.contains("SMTP failover is paused too"), "{b}");
        assert!(b.contains("owner alerts wait in the outbox"), "{b}");
        // With the owner route: owner alerts still go, and the banner says so.
        let with_owner_route = crate::domain::outbox::Availability {
            owner_route: true,
            ..a(Some(now + 9), true, Some(now + 5))
        };
        let o = all_routes_paused_banner(now, with_owner_route).unwrap();
        assert!(
            o.contains("Owner alerts still reach you by the owner route"),
            "{o}"
        );
        let page = render(&OverviewPage {
            chrome: chrome(),
            banner: Some(b),
            dead: 0,
            open_holds: 0,
            rejected_7d: 0,
            refunds_waiting: 2,
            stale_today: 0,
            stale_yesterday: 0,
            backlog: Default::default(),
            waiting: 1,
            providers: vec![],
            by_rank: vec![],
            listed: 0,
            outbox_counts: vec![],
            email_counts: vec![],
            failures: vec![],
            repairs: vec![],
            environment: "production",
            refused: vec![("PUBLIC_BASE_URL".into(), "is not https://: …".into())],
        });
        assert!(page.contains("id=\"all-routes-paused\""), "{page}");
        assert!(
            page.contains("<code>PUBLIC_BASE_URL</code> is not https://"),
            "{page}"
        );
        assert!(!page.contains("id=\"engine-env\""), "{page}");
    }
}
