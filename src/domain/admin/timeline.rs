//! A booking's timeline: what the engine received, planned, decided and sent for one booking, in
//! time order. The shell reads the rows (one D1 batch, `crate::store::admin::timeline`) and turns
//! each into an [`Entry`]; [`order`] sorts them and [`times`] formats a moment for the page.

use crate::domain::timezone::HotelZone;
use chrono::{DateTime, Utc};

/// Most entries of each kind read for one timeline (the page says when a kind was cut), except
/// raw events ([`MAX_RAW_EVENTS`]).
pub const MAX_PER_KIND: u32 = 500;

/// The most HTML the admin pages that list raw events (the events page, a timeline's received
/// events) may carry, bytes, whatever suppliers sent: raw events are the rows whose text anyone
/// holding a webhook credential (or none: rejected deliveries are stored too) chooses.
pub const PAGE_BUDGET_BYTES: usize = 512 * 1024;

/// Raw events on one page of the events list (older ones are one link away).
pub const EVENTS_PAGE_ROWS: u32 = 40;

/// Most raw events one timeline shows (the oldest; the page says when there were more).
pub const MAX_RAW_EVENTS: u32 = 40;

/// Characters of a raw body a page shows (`substr` in SQL: a page never loads a whole body).
pub const BODY_EXCERPT_CHARS: usize = 500;

/// Characters of a raw event's error or refusal reason a page shows, one line.
pub const NOTE_SHOWN_CHARS: usize = 120;

/// Characters of a raw event's event name a page shows, one line.
pub const NAME_SHOWN_CHARS: usize = 64;
/// Characters of a raw event's id a page shows (a parsed id is at most 256 characters).
pub const ID_SHOWN_CHARS: usize = 256;

/// The most bytes one character of shown text becomes in HTML: `"` escaped as `&quot;`.
const ESCAPED_CHAR_MAX_BYTES: usize = 6;

/// The most bytes one raw event adds to the events page or a timeline: every text it shows at
/// its bound, each character at its most expensive escape — the body excerpt (and its "… (N more
/// characters" note), id, name, error and refusal reason, the booking id (a link too,
/// percent-encoded: 3 bytes a character), journey instance id (the platform's 100 characters),
/// partner, source and status — plus the row's own markup.
pub const RAW_EVENT_ROW_MAX_BYTES: usize = ESCAPED_CHAR_MAX_BYTES
    * (BODY_EXCERPT_CHARS
        + ID_SHOWN_CHARS
        + NAME_SHOWN_CHARS
        + 2 * NOTE_SHOWN_CHARS
        + 128
        + 100
        + crate::domain::event::ownership::MAX_PARTNER_LEN
        + 2 * 16)
    + 3 * 128
    + 64
    + 1_000;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum EntryKind {
    /// A supplier or payment webhook as received (raw event, with its body).
    RawEvent,
    /// The booking row: created, its journey version now.
    Booking,
    /// A planned send of the journey and its decision.
    PlannedSend,
    /// An email the engine claimed for this booking, with its outcome.
    Email,
    /// A card-testing hold on this booking's checkout.
    Hold,
    /// A compensation (paid, then the supplier failed, or cancelled).
    Compensation,
    /// An outbound webhook event published about this booking.
    WebhookEvent,
    /// Mail from the guest's side about this booking: the guest's message, or an automatic reply
    /// or bounce (`crate::domain::inbound`).
    GuestMessage,
    /// The owner's answer to the guest, as written.
    Answer,
}

impl EntryKind {
    /// The label shown on the page.
    pub fn label(self) -> &'static str {
        match self {
            EntryKind::RawEvent => "event received",
            EntryKind::Booking => "booking",
            EntryKind::PlannedSend => "planned send",
            EntryKind::Email => "email",
            EntryKind::Hold => "hold",
            EntryKind::Compensation => "compensation",
            EntryKind::WebhookEvent => "webhook event",
            EntryKind::GuestMessage => "from the guest",
            EntryKind::Answer => "your answer",
        }
    }

    /// The CSS class name of the entry (stable, snake case).
    pub fn class(self) -> &'static str {
        self.into()
    }
}

/// One entry of the timeline. Every text is shown escaped by the template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// When it happened (received, planned, claimed…), ms UTC.
    pub at_ms: i64,
    pub kind: EntryKind,
    /// One line, e.g. `liteapi booking.book — started`.
    pub title: String,
    /// Further facts, one per line (status, attempts, provider, message id, due times…).
    pub facts: Vec<String>,
    /// A link to the entry's own admin page (an email), if any.
    pub link: Option<String>,
    /// A body shown folded (a raw event's JSON, an excerpt), if any.
    pub body: Option<String>,
    /// Where the whole body is (a raw event's own download), if any.
    pub body_link: Option<String>,
    /// A status word for the badge (`sent`, `dead`, `rejected`, `planned`…).
    pub status: String,
}

impl Entry {
    /// An entry at `at_ms` (ms UTC) with its title, facts and status word, no link and no body.
    pub fn new(
        at_ms: i64,
        kind: EntryKind,
        title: String,
        facts: Vec<String>,
        status: String,
    ) -> Entry {
        Entry {
            at_ms,
            kind,
            title,
            facts,
            link: None,
            body: None,
            body_link: None,
            status,
        }
    }

    /// The same entry, linked to its own admin page (`link`: a path such as `/admin/email?key=…`).
    pub fn with_link(mut self, link: String) -> Entry {
        self.link = Some(link);
        self
    }

    /// The same entry with a body shown folded, and where the whole body is, if anywhere.
    pub fn with_body(mut self, body: String, body_link: Option<String>) -> Entry {
        self.body = Some(body);
        self.body_link = body_link;
        self
    }
}

/// Sorts entries by time, then kind (a raw event before the booking it created, before its
/// plans and emails), then title: a stable order for entries of the same millisecond.
pub fn order(mut entries: Vec<Entry>) -> Vec<Entry> {
    crate::domain::basics::sort::sort_by(&mut entries, |a, b| {
        (a.at_ms, a.kind, &a.title).cmp(&(b.at_ms, b.kind, &b.title))
    });
    entries
}

/// A moment as the page shows it: UTC (`2026-12-01 07:00 UTC`) and, when the hotel's zone is
/// known, its local time with offset (`2026-12-01 08:00 +01:00 Europe/Madrid`).
pub fn times(at_ms: i64, zone: Option<&str>) -> (String, Option<String>) {
    let utc = DateTime::<Utc>::from_timestamp_millis(at_ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| format!("{at_ms} ms"));
    let local = zone.and_then(HotelZone::parse).map(|z| {
        let t = DateTime::<Utc>::from_timestamp_millis(at_ms).unwrap_or_default();
        format!(
            "{} {}",
            z.to_local(t).format("%Y-%m-%d %H:%M %:z"),
            zone.unwrap_or_default()
        )
    });
    (utc, local)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_events_fit_the_page_budget_by_arithmetic() {
        // What a page around the rows adds (layout, navigation, filters, the timeline's other
        // kinds of a booking with a normal life): measured well under 64 KiB.
        let around = 64 * 1024;
        let events = EVENTS_PAGE_ROWS as usize * RAW_EVENT_ROW_MAX_BYTES;
        let timeline = MAX_RAW_EVENTS as usize * RAW_EVENT_ROW_MAX_BYTES;
        assert!(events + around <= PAGE_BUDGET_BYTES, "{events}");
        assert!(timeline + around <= PAGE_BUDGET_BYTES, "{timeline}");
    }

    fn e(at: i64, kind: EntryKind, title: &str) -> Entry {
        Entry::new(at, kind, title.into(), vec![], String::new())
    }

    #[test]
    fn orders_by_time_then_kind() {
        let got = order(vec![
            e(5, EntryKind::Email, "b"),
            e(1, EntryKind::Email, "a"),
            e(5, EntryKind::RawEvent, "z"),
        ]);
        let titles: Vec<&str> = got.iter().map(|e| e.title.as_str()).collect();
        assert_eq!(titles, ["a", "z", "b"]);
        assert_eq!(EntryKind::PlannedSend.class(), "planned_send");
    }

    #[test]
    fn shows_utc_and_hotel_local_time() {
        // 2026-12-01T07:00:00Z is 08:00 in Madrid (CET, +01:00).
        let (utc, local) = times(1_796_108_400_000, Some("Europe/Madrid"));
        assert_eq!(utc, "2026-12-01 07:00:00 UTC");
        assert_eq!(
            local.as_deref(),
            Some("2026-12-01 08:00 +01:00 Europe/Madrid")
        );
        assert_eq!(times(0, Some("Not/AZone")).1, None);
        assert_eq!(times(0, None).1, None);
    }
}
