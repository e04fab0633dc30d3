//! The owner's overviews: the daily digest (`crate::domain::sweeper::digest`: the day before, and what
//! waits now, each line linking to its admin page) and the backlog alert
//! (`crate::domain::outbox::backlog`: how long the outbox takes to drain per rank, and the time-bound
//! emails forecast to miss their moment). Both are owner email, so they may link the admin; every
//! value from a supplier or a guest is put on one line and cut.

use super::{OwnerInbox, RenderError};
use crate::domain::basics::text::header_value;
use crate::domain::email::{EmailKind, Rank};
use crate::domain::outbox::backlog::Forecast;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::sweeper::digest::{DigestDay, DigestFacts, WaitingLine};
use crate::domain::timezone::HotelZone;

/// `YYYY-MM-DD HH:MM` of `ms` (UTC) on the clock of `zone`.
fn at(ms: i64, zone: &HotelZone) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| zone.to_local(t).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

/// `2 h 05 min`, `45 min`, `0 min` of a duration in ms.
fn span(ms: i64) -> String {
    let min = ms.max(0) / 60_000;
    match (min / 60, min % 60) {
        (0, m) => format!("{m} min"),
        (h, m) => format!("{h} h {m:02} min"),
    }
}

struct Line {
    text: String,
    link: Option<String>,
}

struct Section {
    title: String,
    link: String,
    lines: Vec<Line>,
    more: u64,
}

/// One kind of thing waiting for the owner, listed in the digest when any waits.
struct Waiting<'a> {
    /// The section's title, before `: <count>`.
    title: &'static str,
    /// Its admin page.
    path: &'static str,
    /// The oldest ones, listed.
    lines: &'a [WaitingLine],
    /// How many wait in all.
    total: u64,
    /// The link of one listed line, from its id.
    item: &'a dyn Fn(&str) -> String,
}

struct Digest<'a> {
    brand: &'a str,
    covers: &'a str,
    zone: String,
    sections: Vec<Section>,
}
super::email_body!(Digest = "owner_digest.html", "owner_digest.txt");

/// The owner's digest of `day` with `facts`, times on the owner's clock `zone`, links under
/// `base_url` (`PUBLIC_BASE_URL`, no trailing `/`). Dedupe key `owner_digest:<sent on>`: one a
/// day. The caller sends none when [`DigestFacts::is_empty`].
pub fn owner_digest(
    day: &DigestDay,
    facts: &DigestFacts,
    zone: &HotelZone,
    base_url: &str,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let link = |path: &str| format!("{base_url}{path}");
    let enc = |v: &str| -> String { form_urlencoded::byte_serialize(v.as_bytes()).collect() };
    let more = |total: u64, listed: usize| total.saturating_sub(listed as u64);
    // A count of `total` with a link and the listed `lines` under it (`more`: those not listed).
    let listed = |title: String, path: &str, lines: Vec<Line>, total: u64| Section {
        title,
        link: link(path),
        more: more(total, lines.len()),
        lines,
    };
    // A count with a link and no lines under it.
    let bare = |title: String, path: &str| listed(title, path, Vec::new(), 0);
    let f = facts;
    let mut sections = Vec::new();
    sections.push(listed(
        format!("Bookings: {}", f.bookings),
        "/admin/bookings",
        f.booking_lines
            .iter()
            .map(|b| Line {
                text: header_value(
                    &format!(
                        "{} — {} ({}){}",
                        b.booking_id,
                        b.kind,
                        b.source,
                        b.what
                            .as_deref()
                            .map(|w| format!(": {w}"))
                            .unwrap_or_default()
                    ),
                    200,
                ),
                link: Some(link(&format!("/admin/booking?id={}", enc(&b.booking_id)))),
            })
            .collect(),
        f.bookings,
    ));
    sections.push(bare(
        format!(
            "Guest emails: {} sent, {} failed (dead, dropped or blocked), {} skipped as stale",
            f.emails_sent, f.emails_failed, f.emails_stale
        ),
        "/admin",
    ));
    let waiting = [
        Waiting {
            title: "Guests waiting for your answer",
            path: "/admin/conversations",
            lines: &f.conversation_lines,
            total: f.conversations_waiting,
            item: &|id| link(&format!("/admin/booking?id={}#conversation", enc(id))),
        },
        Waiting {
            title: "Refunds waiting for your decision",
            path: "/admin/refunds",
            lines: &f.refund_lines,
            total: f.refunds_waiting,
            item: &|_| link("/admin/refunds"),
        },
        Waiting {
            title: "Card-testing holds open",
            path: "/admin/holds",
            lines: &f.hold_lines,
            total: f.holds_open,
            item: &|_| link("/admin/holds"),
        },
    ];
    for Waiting {
        title,
        path,
        lines,
        total,
        item,
    } in waiting.into_iter().filter(|w| w.total > 0)
    {
        sections.push(listed(
            format!("{title}: {total}"),
            path,
            lines
                .iter()
                .map(|w| Line {
                    text: header_value(
                        &format!(
                            "{} — waiting since {} — {}",
                            w.id,
                            at(w.since_ms, zone),
                            w.words
                        ),
                        300,
                    ),
                    link: Some(item(&w.id)),
                })
                .collect(),
            total,
        ));
    }
    if f.dead_letters > 0 {
        sections.push(bare(
            format!(
                "Dead letters in the outbox: {} (redrive from the outbox page)",
                f.dead_letters
            ),
            "/admin/queue",
        ));
    }
    if f.webhooks_dead > 0 {
        sections.push(bare(
            format!("Outbound webhook deliveries dead: {}", f.webhooks_dead),
            "/admin/deliveries",
        ));
    }
    if !f.routes_paused.is_empty() {
        let paused = f.routes_paused.len() as u64;
        sections.push(listed(
            format!("Routes paused: {paused}"),
            "/admin/queue",
            f.routes_paused
                .iter()
                .map(|r| Line {
                    text: header_value(r, 200),
                    link: None,
                })
                .collect(),
            paused,
        ));
    }
    sections.push(listed(
        format!("Repairs the engine made by itself: {}", f.repairs),
        "/admin",
        f.repair_lines
            .iter()
            .map(|r| Line {
                text: header_value(
                    &format!(
                        "{} — {}: {} — {}",
                        at(r.at_ms, zone),
                        r.kind.replace('_', " "),
                        r.subject,
                        r.reason
                    ),
                    300,
                ),
                link: None,
            })
            .collect(),
        f.repairs,
    ));
    let waits = f.refunds_waiting + f.holds_open + f.conversations_waiting;
    let subject = if waits > 0 {
        format!(
            "Daily digest {}: {} bookings, {} waiting for you",
            day.covers, f.bookings, waits
        )
    } else {
        format!("Daily digest {}: {} bookings", day.covers, f.bookings)
    };
    owner.alert(
        EmailKind::OwnerDigest,
        &day.sent_on,
        subject,
        &Digest {
            brand: owner.brand(),
            covers: &day.covers,
            zone: zone.to_string(),
            sections,
        },
    )
}

struct DrainLine {
    rank: &'static str,
    queued: u64,
    drained: String,
    within: String,
}

struct MissLine {
    key: String,
    booking: String,
    moment: String,
    forecast: String,
    late: String,
    position: u64,
}

struct Backlog<'a> {
    brand: &'a str,
    gap_s: i64,
    catch_up: Option<String>,
    drains: Vec<DrainLine>,
    misses: Vec<MissLine>,
    more: usize,
    queue_link: &'a str,
}
super::email_body!(Backlog = "owner_backlog.html", "owner_backlog.txt");

/// Most missed emails listed in the backlog alert.
pub const BACKLOG_LISTED_MAX: usize = 20;

/// The owner's backlog alert of `forecast` (times in UTC), sent at most once a UTC day (`day`,
/// `YYYY-MM-DD`: dedupe key `owner_backlog:<day>`), linking the outbox page `queue_link` where a
/// catch-up is allowed.
pub fn owner_backlog(
    forecast: &Forecast,
    day: &str,
    queue_link: &str,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let utc = HotelZone::UTC;
    let rank = |r: i64| match Rank::from_i64(r) {
        Some(Rank::Urgent) => "urgent",
        Some(Rank::Booking) => "booking",
        Some(Rank::Service) => "service",
        _ => "marketing",
    };
    let drains = forecast
        .drains
        .iter()
        .map(|d| DrainLine {
            rank: rank(d.rank),
            queued: d.queued,
            drained: at(d.drained_at_ms, &utc),
            within: span(d.drained_at_ms - forecast.at_ms),
        })
        .collect();
    let misses = forecast
        .misses
        .iter()
        .take(BACKLOG_LISTED_MAX)
        .map(|m| MissLine {
            key: header_value(&m.dedupe_key, 200),
            booking: header_value(m.booking_id.as_deref().unwrap_or("none"), 120),
            moment: at(m.moment_ms, &utc),
            forecast: at(m.forecast_ms, &utc),
            late: span(m.forecast_ms - m.moment_ms),
            position: m.position + 1,
        })
        .collect();
    let n = forecast.misses.len();
    owner.alert(
        EmailKind::OwnerBacklog,
        day,
        format!("Outbox backlog: {n} time-bound guest emails forecast to miss their moment"),
        &Backlog {
            brand: owner.brand(),
            gap_s: forecast.gap_ms / 1000,
            catch_up: forecast.catch_up.map(|c| {
                format!(
                    "A catch-up runs: urgent and booking email every {} s until {} UTC.",
                    c.gap_ms / 1000,
                    at(c.until_ms, &utc)
                )
            }),
            drains,
            misses,
            more: n.saturating_sub(BACKLOG_LISTED_MAX),
            queue_link,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::branding;
    use super::*;
    use crate::domain::event::EmailAddress;
    use crate::domain::outbox::backlog::{Miss, RankDrain};
    use crate::domain::sweeper::digest::{BookingLine, RepairLine, WaitingLine};

    fn owner() -> EmailAddress {
        EmailAddress::parse("owner@example.com").unwrap()
    }

    fn day() -> DigestDay {
        DigestDay {
            sent_on: "2027-01-15".into(),
            covers: "2027-01-14".into(),
            from_ms: 1_799_884_800_000,
            to_ms: 1_799_971_200_000,
        }
    }

    pub(crate) fn sample_facts() -> DigestFacts {
        DigestFacts {
            bookings: 3,
            booking_lines: vec![BookingLine {
                booking_id: "BK_1 & <x>".into(),
                kind: "hotel".into(),
                source: "liteapi".into(),
                what: Some("Hotel <b>Sol</b>\r\nBcc: x@evil.example".into()),
            }],
            emails_sent: 12,
            emails_failed: 1,
            emails_stale: 2,
            dead_letters: 1,
            refunds_waiting: 1,
            refund_lines: vec![WaitingLine {
                id: "comp-1".into(),
                since_ms: 1_799_900_000_000,
                words: "Ana Ruiz, Hotel Sol 2027-02-01 – 2027-02-03".into(),
            }],
            holds_open: 2,
            hold_lines: vec![],
            webhooks_dead: 0,
            repairs: 1,
            repair_lines: vec![RepairLine {
                at_ms: 1_799_900_000_000,
                kind: "scheduled_send".into(),
                subject: "BK_1:arrival_guide:v1".into(),
                reason: "sent by the sweeper".into(),
            }],
            routes_paused: vec!["SMTP failover paused until 2027-01-15 10:00 UTC".into()],
            conversations_waiting: 1,
            conversation_lines: vec![WaitingLine {
                id: "BK_2".into(),
                since_ms: 1_799_900_000_000,
                words: "ana@example.com: Re: Your stay".into(),
            }],
        }
    }

    #[test]
    fn the_digest_links_each_line_to_its_page_and_escapes_supplier_text() {
        let zone = HotelZone::parse("Europe/Madrid").unwrap();
        let e = owner_digest(
            &day(),
            &sample_facts(),
            &zone,
            "https://engine.example.com",
            OwnerInbox::new(&owner(), &branding()),
        )
        .unwrap();
        assert_eq!(e.kind, EmailKind::OwnerDigest);
        assert_eq!(e.dedupe_key.as_str(), "owner_digest:2027-01-15");
        assert_eq!(
            e.subject,
            "Daily digest 2027-01-14: 3 bookings, 4 waiting for you"
        );
        for needle in [
            "Guests waiting for your answer: 1",
            "https://engine.example.com/admin/conversations",
            "https://engine.example.com/admin/booking?id=BK_2#conversation",
            "https://engine.example.com/admin/refunds",
            "https://engine.example.com/admin/holds",
            "https://engine.example.com/admin/queue",
            "https://engine.example.com/admin/booking?id=BK_1+%26+%3Cx%3E",
            "12 sent, 1 failed",
            "2 skipped as stale",
            "2 more",
            "Europe/Madrid",
        ] {
            assert!(e.text.contains(needle), "{needle} in {}", e.text);
        }
        assert!(!e.html.contains("<b>Sol</b>"), "escaped in HTML");
        assert!(!e.text.contains("\r\nBcc"), "one line in text");
        // Webhooks: nothing dead → no section.
        assert!(!e.text.contains("/admin/deliveries"));
    }

    /// Writes the digest as rendered for docs/
    /// (`cargo test --lib -- --ignored write_digest_docs`): `docs/owner-digest.{txt,html}`.
    #[test]
    #[ignore]
    fn write_digest_docs() {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut facts = sample_facts();
        facts.booking_lines[0] = BookingLine {
            booking_id: "BK_20270114_0042".into(),
            kind: "hotel".into(),
            source: "liteapi".into(),
            what: Some("Example Harbour Hotel".into()),
        };
        facts.hold_lines = vec![WaitingLine {
            id: "hold-email-tester@example.com-2027-01-14".into(),
            since_ms: 1_799_920_000_000,
            words: "The email tester@example.com was used under 3 different names today (UTC)"
                .into(),
        }];
        let e = owner_digest(
            &day(),
            &facts,
            &HotelZone::parse("Europe/Madrid").unwrap(),
            "https://booking-email-engine.example.workers.dev",
            OwnerInbox::new(&owner(), &branding()),
        )
        .unwrap();
        std::fs::write(
            format!("{root}/docs/owner-digest.txt"),
            format!("Subject: {}\n\n{}", e.subject, e.text),
        )
        .unwrap();
        std::fs::write(format!("{root}/docs/owner-digest.html"), &e.html).unwrap();
    }

    #[test]
    fn the_backlog_alert_gives_the_figures() {
        let f = Forecast {
            at_ms: 1_799_884_800_000,
            gap_ms: 155_000,
            catch_up: None,
            drains: vec![
                RankDrain {
                    rank: 0,
                    queued: 21,
                    drained_at_ms: 1_799_884_800_000 + 21 * 155_000,
                },
                RankDrain {
                    rank: 3,
                    queued: 0,
                    drained_at_ms: 1_799_884_800_000 + 21 * 155_000,
                },
            ],
            misses: vec![Miss {
                dedupe_key: "checkin_day:BK_1".into(),
                booking_id: Some("BK_1".into()),
                position: 20,
                moment_ms: 1_799_884_800_000 + 30 * 60_000,
                forecast_ms: 1_799_884_800_000 + 20 * 155_000,
            }],
        };
        let e = owner_backlog(
            &f,
            "2027-01-14",
            "https://e.example/admin/queue",
            OwnerInbox::new(&owner(), &branding()),
        )
        .unwrap();
        assert_eq!(e.dedupe_key.as_str(), "owner_backlog:2027-01-14");
        assert_eq!(e.rank, Rank::Urgent);
        for needle in [
            "urgent: 21 queued, drained by 2027-01-14 00:54 UTC (in 54 min)",
            "checkin_day:BK_1",
            "#21 in line",
            "21 min late",
            "every 155 s",
            "https://e.example/admin/queue",
        ] {
            assert!(e.text.contains(needle), "{needle} in {}", e.text);
        }
    }
}
