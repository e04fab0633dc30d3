//! The owner's daily summary of the sweeper's repairs (issue #11): at most one a UTC day, covering
//! the previous UTC day, so the owner knows what the engine had to finish by itself.

use super::{compose, Branding, Envelope, RenderError};
use crate::domain::email::{DedupeKey, EmailKind, OutgoingEmail};
use crate::domain::event::EmailAddress;
use crate::domain::text::header_value;

/// Most repairs listed one by one; the rest are counted.
pub const LISTED_MAX: usize = 50;

/// One repair as D1 `repairs` holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairLine {
    /// ms since the epoch, UTC.
    pub at_ms: i64,
    /// Stored name of a `crate::domain::sweep::RepairKind`.
    pub kind: String,
    pub subject: String,
    pub reason: String,
}

struct Line {
    at: String,
    kind: String,
    subject: String,
    reason: String,
}

struct SweepSummary<'a> {
    brand: &'a str,
    day: &'a str,
    total: usize,
    lines: Vec<Line>,
    more: usize,
}
email_body!(
    SweepSummary = "owner_sweep_summary.html",
    "owner_sweep_summary.txt"
);

/// The summary of `repairs` made on UTC day `day` (`YYYY-MM-DD`), sent on `sent_on` (the day after,
/// `YYYY-MM-DD`): dedupe key `owner_sweep_summary:<sent_on>`, so one a day whatever the number of
/// ticks. `total` counts every repair of the day; `repairs` holds at most [`LISTED_MAX`] of them,
/// oldest first. Every value is put on one line and cut.
pub fn owner_sweep_summary(
    day: &str,
    sent_on: &str,
    total: usize,
    repairs: &[RepairLine],
    owner: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerSweepSummary;
    let lines: Vec<Line> = repairs
        .iter()
        .take(LISTED_MAX)
        .map(|r| Line {
            at: chrono::DateTime::from_timestamp_millis(r.at_ms)
                .map(|t| t.format("%H:%M UTC").to_string())
                .unwrap_or_default(),
            kind: header_value(&r.kind.replace('_', " "), 40),
            subject: header_value(&r.subject, 200),
            reason: header_value(&r.reason, 300),
        })
        .collect();
    let more = total.saturating_sub(lines.len());
    compose(
        Envelope::unbooked(
            kind,
            DedupeKey::new(kind, sent_on),
            owner,
            format!("Engine repairs on {day}: {total}"),
        ),
        &SweepSummary {
            brand: &branding.brand,
            day,
            total,
            lines,
            more,
        },
        branding,
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::branding;
    use super::*;

    #[test]
    fn summary_lists_repairs_once_a_day_and_escapes_them() {
        let owner = EmailAddress::parse("owner@example.com").unwrap();
        let repairs = vec![
            RepairLine {
                at_ms: 1_780_016_400_000, // 2026-05-29T01:00:00Z
                kind: "scheduled_send".into(),
                subject: "BK_1:arrival_guide:v1".into(),
                reason: "instance terminated\r\n<b>x</b>".into(),
            },
            RepairLine {
                at_ms: 1_780_020_000_000,
                kind: "outbox_rearmed".into(),
                subject: "outbox".into(),
                reason: "the outbox had due work and no alarm".into(),
            },
        ];
        let e = owner_sweep_summary("2026-05-29", "2026-05-30", 3, &repairs, &owner, &branding())
            .unwrap();
        assert_eq!(e.kind, EmailKind::OwnerSweepSummary);
        assert_eq!(e.dedupe_key.as_str(), "owner_sweep_summary:2026-05-30");
        assert_eq!(e.subject, "Engine repairs on 2026-05-29: 3");
        assert!(e.text.contains("01:00 UTC"), "{}", e.text);
        assert!(e.text.contains("scheduled send"), "{}", e.text);
        assert!(
            e.text.contains("instance terminated <b>x</b>"),
            "{}",
            e.text
        );
        assert!(e.text.contains("1 more"), "{}", e.text);
        assert!(e.html.contains("&#60;b&#62;x"), "{}", e.html);
        assert!(!e.html.contains("<b>x"), "{}", e.html);
    }
}
