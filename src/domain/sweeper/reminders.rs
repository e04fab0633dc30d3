//! What waits for the owner is brought back to the owner: a refund waiting for the owner's
//! decision is reminded with fresh links, an open card-testing hold is recalled, and a hold
//! nobody answers does what the business configured. Pure: the sweeper queries with the cut-offs
//! these rules give and carries the decisions out.
//!
//! # Refund reminders
//!
//! A refund step that waits for the owner (`awaiting_owner`, or `failed` and so offered again) is
//! reminded when the owner was last told at least `REFUND_REMINDER_AFTER_MS` ago (default 24 h;
//! "last told" is the newest reminder, else the moment the step began to wait, when the alert
//! went out), at most `REFUND_REMINDER_MAX` times (default 7). Reminder `n` carries links of
//! generation `n`: every link of an older generation is out of date from then on, so only the
//! newest reminder's links work — and they keep working until someone acts (they are signed for
//! [`REFUND_LINK_TTL_S`]), single use as before. The admin's refunds page always works.
//!
//! # Hold recalls
//!
//! An open hold is recalled once, `HOLD_RECALL_AFTER_MS` after it was made (default 24 h), with
//! fresh links; every daily digest lists it while it is open. `HOLD_UNANSWERED_ACTION` says what an
//! unanswered hold becomes `HOLD_UNANSWERED_AFTER_MS` after it was made (default 72 h): `keep`
//! (the default: it stays held, and the recall says so) or `dismiss` (closed, nothing sent to the
//! customer; the digest says so). The engine never emails a suspected card tester on its own.

/// Default `REFUND_REMINDER_AFTER_MS`: 24 h.
pub const DEFAULT_REFUND_REMINDER_AFTER_MS: i64 = 86_400_000;
/// Default `REFUND_REMINDER_MAX`.
pub const DEFAULT_REFUND_REMINDER_MAX: i64 = 7;
/// Default `HOLD_RECALL_AFTER_MS`: 24 h.
pub const DEFAULT_HOLD_RECALL_AFTER_MS: i64 = 86_400_000;
/// Default `HOLD_UNANSWERED_AFTER_MS`: 72 h.
pub const DEFAULT_HOLD_UNANSWERED_AFTER_MS: i64 = 3 * 86_400_000;
/// How long a refund link stays valid, seconds (180 days): longer than the reminders run, so the
/// newest reminder's links work until someone acts; a newer generation or a use ends them sooner.
pub const REFUND_LINK_TTL_S: i64 = 180 * 86_400;

/// What an unanswered card-testing hold becomes (`HOLD_UNANSWERED_ACTION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum HoldUnanswered {
    /// It stays held until the owner acts (default).
    #[default]
    Keep,
    /// It is dismissed: closed, nothing sent to the customer.
    Dismiss,
}

crate::domain::basics::stored_names!(HoldUnanswered);

impl HoldUnanswered {
    /// What the owner reads about it, e.g. in the recall.
    pub fn words(self) -> &'static str {
        match self {
            HoldUnanswered::Keep => "it stays held until you act; nothing is sent to the customer",
            HoldUnanswered::Dismiss => {
                "the engine dismisses it (closed, nothing sent to the customer)"
            }
        }
    }
}

/// The rules' settings (Worker vars, all optional; read with the sweeper's configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerLoops {
    pub refund_reminder_after_ms: i64,
    pub refund_reminder_max: i64,
    pub hold_recall_after_ms: i64,
    pub hold_unanswered: HoldUnanswered,
    pub hold_unanswered_after_ms: i64,
}

impl Default for OwnerLoops {
    fn default() -> Self {
        OwnerLoops {
            refund_reminder_after_ms: DEFAULT_REFUND_REMINDER_AFTER_MS,
            refund_reminder_max: DEFAULT_REFUND_REMINDER_MAX,
            hold_recall_after_ms: DEFAULT_HOLD_RECALL_AFTER_MS,
            hold_unanswered: HoldUnanswered::Keep,
            hold_unanswered_after_ms: DEFAULT_HOLD_UNANSWERED_AFTER_MS,
        }
    }
}

impl OwnerLoops {
    /// The reminder a waiting refund is due at `now_ms` (its number, 1-based), or `None`.
    /// `waiting_since_ms`: when the refund step began to wait (its alert went out then);
    /// `owner_told_at_ms`: the newest reminder's time; `reminders_sent`: how many went out.
    pub fn refund_reminder_due(
        &self,
        waiting_since_ms: i64,
        owner_told_at_ms: Option<i64>,
        reminders_sent: i64,
        now_ms: i64,
    ) -> Option<i64> {
        let told = owner_told_at_ms
            .unwrap_or(waiting_since_ms)
            .max(waiting_since_ms);
        (reminders_sent < self.refund_reminder_max
            && now_ms.saturating_sub(told) >= self.refund_reminder_after_ms)
            .then_some(reminders_sent + 1)
    }

    /// Holds made before this instant and not recalled yet are recalled (ms UTC).
    pub fn recall_made_before_ms(&self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(self.hold_recall_after_ms)
    }

    /// Holds made before this instant and still open are unanswered (ms UTC); `None` when the
    /// business keeps them held.
    pub fn unanswered_made_before_ms(&self, now_ms: i64) -> Option<i64> {
        (self.hold_unanswered != HoldUnanswered::Keep)
            .then(|| now_ms.saturating_sub(self.hold_unanswered_after_ms))
    }
}

/// Whether a refund link of generation `link_generation` is still the newest: a link is out of
/// date once a reminder of a later generation went out (`reminders_sent` is the newest
/// generation). A link of a later generation than recorded is the newest too: the reminder is
/// claimed in D1 before its generation is recorded.
pub fn refund_link_current(link_generation: i64, reminders_sent: i64) -> bool {
    link_generation >= reminders_sent
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;

    #[test]
    fn a_waiting_refund_is_reminded_daily_a_bounded_number_of_times() {
        let l = OwnerLoops::default();
        let since = 1_000 * H;
        assert_eq!(l.refund_reminder_due(since, None, 0, since + 23 * H), None);
        assert_eq!(
            l.refund_reminder_due(since, None, 0, since + 24 * H),
            Some(1)
        );
        // The newest reminder restarts the wait.
        assert_eq!(
            l.refund_reminder_due(since, Some(since + 24 * H), 1, since + 47 * H),
            None
        );
        assert_eq!(
            l.refund_reminder_due(since, Some(since + 24 * H), 1, since + 48 * H),
            Some(2)
        );
        // A step that began to wait again (a failed refund offered anew) restarts it too.
        assert_eq!(
            l.refund_reminder_due(since + 40 * H, Some(since + 24 * H), 1, since + 48 * H),
            None
        );
        // Bounded.
        assert_eq!(
            l.refund_reminder_due(since, Some(since), 7, since + 1_000 * H),
            None
        );
    }

    #[test]
    fn only_the_newest_generation_of_links_is_current() {
        assert!(refund_link_current(0, 0));
        assert!(!refund_link_current(0, 1));
        assert!(refund_link_current(2, 2));
        assert!(refund_link_current(3, 2), "claimed before recorded");
    }

    #[test]
    fn holds_are_recalled_once_and_kept_unless_configured() {
        let mut l = OwnerLoops::default();
        assert_eq!(l.recall_made_before_ms(100 * H), 76 * H);
        assert_eq!(l.unanswered_made_before_ms(100 * H), None);
        l.hold_unanswered = HoldUnanswered::Dismiss;
        assert_eq!(l.unanswered_made_before_ms(100 * H), Some(28 * H));
        assert_eq!(
            HoldUnanswered::parse("dismiss"),
            Some(HoldUnanswered::Dismiss)
        );
        assert_eq!(HoldUnanswered::parse("send"), None);
    }
}
