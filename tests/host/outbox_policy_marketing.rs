//! Marketing rules: daily cap by UTC day, one per person per day, suppression by rank, never ahead
//! of booking mail.

use booking_email_engine::domain::email::Rank;
use booking_email_engine::domain::marketing::{
    count_on_utc_day, may_send, same_utc_day, utc_day, DeferReason, MarketingDecision,
    MarketingPolicy, SkipReason, Suppression, BOOKING_MAIL_RECHECK_MS,
};
use chrono::NaiveDate;
use proptest::prelude::*;

const DAY: i64 = 86_400_000;
/// 2026-06-12T00:00:00Z
const JUNE_12: i64 = 1_781_222_400_000;
const LAST_SECOND: i64 = JUNE_12 + DAY - 1_000; // 23:59:59
const LAST_MS: i64 = JUNE_12 + DAY - 1; // 23:59:59.999
const MIDNIGHT: i64 = JUNE_12 + DAY; // 2026-06-13T00:00:00Z

const POLICY: MarketingPolicy = MarketingPolicy {
    daily_cap: 3,
    per_person_per_day: 1,
};

/// `may_send` for a person nobody suppressed, with no booking mail waiting: `total` marketing
/// emails sent today, `to_person` of them to this person.
fn unsuppressed(
    now_ms: i64,
    total: u32,
    to_person: u32,
    policy: MarketingPolicy,
) -> MarketingDecision {
    may_send(now_ms, total, to_person, Suppression::None, false, policy)
}

/// Deferred to the next UTC midnight (after June 12) for `reason`.
fn until_midnight(reason: DeferReason) -> MarketingDecision {
    MarketingDecision::Defer {
        until_ms: MIDNIGHT,
        reason,
    }
}

const ALL_RANKS: [Rank; 4] = [Rank::Urgent, Rank::Booking, Rank::Service, Rank::Marketing];

#[test]
fn utc_days_change_at_midnight() {
    let d12 = NaiveDate::from_ymd_opt(2026, 6, 12).unwrap();
    let d13 = NaiveDate::from_ymd_opt(2026, 6, 13).unwrap();
    assert_eq!(utc_day(JUNE_12), d12);
    assert_eq!(utc_day(LAST_SECOND), d12);
    assert_eq!(utc_day(LAST_MS), d12);
    assert_eq!(utc_day(MIDNIGHT), d13);
    assert!(same_utc_day(JUNE_12, LAST_MS));
    assert!(!same_utc_day(LAST_SECOND, MIDNIGHT));
    // Before the epoch and at the extremes.
    assert_eq!(utc_day(-1), NaiveDate::from_ymd_opt(1969, 12, 31).unwrap());
    assert!(!same_utc_day(-1, 0));
    assert_eq!(utc_day(i64::MIN), NaiveDate::MIN);
    assert_eq!(utc_day(i64::MAX), NaiveDate::MAX);
}

#[test]
fn sends_are_counted_on_the_utc_day_of_now() {
    let sends = [
        JUNE_12 - 1,
        JUNE_12,
        JUNE_12 + 3_600_000,
        LAST_SECOND,
        MIDNIGHT,
    ];
    assert_eq!(count_on_utc_day(LAST_SECOND, &sends), 3);
    assert_eq!(count_on_utc_day(MIDNIGHT, &sends), 1);
    assert_eq!(count_on_utc_day(JUNE_12 - 1, &sends), 1);
    assert_eq!(count_on_utc_day(MIDNIGHT + DAY, &sends), 0);
}

#[test]
fn the_daily_cap_defers_to_the_next_utc_day() {
    // Three sent today (the cap): at 23:59:59 the fourth waits until midnight.
    let sends = [JUNE_12 + 1_000, JUNE_12 + 7_200_000, JUNE_12 + 43_200_000];
    let total = count_on_utc_day(LAST_SECOND, &sends);
    assert_eq!(total, 3);
    assert_eq!(
        unsuppressed(LAST_SECOND, total, 0, POLICY),
        until_midnight(DeferReason::DailyCap)
    );
    // At 00:00:00 those sends are yesterday's: send.
    let total = count_on_utc_day(MIDNIGHT, &sends);
    assert_eq!(total, 0);
    assert_eq!(
        unsuppressed(MIDNIGHT, total, 0, POLICY),
        MarketingDecision::Send
    );
    // Below the cap: send; above (a race): still deferred.
    assert_eq!(unsuppressed(JUNE_12, 2, 0, POLICY), MarketingDecision::Send);
    assert_eq!(
        unsuppressed(JUNE_12, 9, 0, POLICY),
        until_midnight(DeferReason::DailyCap)
    );
    // A cap of 0 pauses marketing.
    let paused = MarketingPolicy {
        daily_cap: 0,
        ..POLICY
    };
    assert_eq!(
        unsuppressed(JUNE_12, 0, 0, paused),
        until_midnight(DeferReason::DailyCap)
    );
}

#[test]
fn one_per_person_per_day() {
    let person_sends = [LAST_SECOND];
    assert_eq!(
        unsuppressed(
            LAST_SECOND,
            1,
            count_on_utc_day(LAST_SECOND, &person_sends),
            POLICY
        ),
        until_midnight(DeferReason::PersonAlreadyServed)
    );
    // The second one waits for the next UTC day (not lost); that day they may get one again.
    assert_eq!(
        unsuppressed(
            MIDNIGHT,
            0,
            count_on_utc_day(MIDNIGHT, &person_sends),
            POLICY
        ),
        MarketingDecision::Send
    );
    let two = MarketingPolicy {
        per_person_per_day: 2,
        ..POLICY
    };
    assert_eq!(unsuppressed(JUNE_12, 1, 1, two), MarketingDecision::Send);
    assert_eq!(
        unsuppressed(JUNE_12, 2, 2, two),
        until_midnight(DeferReason::PersonAlreadyServed)
    );
    assert_eq!(MarketingPolicy::default().per_person_per_day, 1);
}

#[test]
fn suppression_kinds_against_ranks() {
    for rank in ALL_RANKS {
        assert!(!Suppression::None.suppresses(rank));
        assert_eq!(
            Suppression::MarketingUnsubscribed.suppresses(rank),
            rank == Rank::Marketing,
            "{rank:?}"
        );
        assert!(Suppression::HardBounce.suppresses(rank), "{rank:?}");
        assert!(Suppression::Complaint.suppresses(rank), "{rank:?}");
    }
    for s in [
        Suppression::MarketingUnsubscribed,
        Suppression::HardBounce,
        Suppression::Complaint,
    ] {
        assert_eq!(
            may_send(JUNE_12, 0, 0, s, false, POLICY),
            MarketingDecision::Skip(SkipReason::Suppressed(s))
        );
        // Suppression wins over every other reason.
        assert_eq!(
            may_send(JUNE_12, 99, 99, s, true, POLICY),
            MarketingDecision::Skip(SkipReason::Suppressed(s))
        );
    }
    for s in [
        Suppression::None,
        Suppression::MarketingUnsubscribed,
        Suppression::HardBounce,
        Suppression::Complaint,
    ] {
        assert_eq!(Suppression::parse(s.as_str()), Some(s));
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            format!("\"{}\"", s.as_str())
        );
    }
    assert_eq!(Suppression::parse("bounce"), None);
    assert_eq!(
        Suppression::MarketingUnsubscribed.max(Suppression::HardBounce),
        Suppression::HardBounce
    );
    assert_eq!(
        Suppression::Complaint.max(Suppression::None),
        Suppression::Complaint
    );
}

#[test]
fn marketing_never_goes_ahead_of_booking_mail() {
    assert_eq!(
        may_send(JUNE_12, 0, 0, Suppression::None, true, POLICY),
        MarketingDecision::Defer {
            until_ms: JUNE_12 + BOOKING_MAIL_RECHECK_MS,
            reason: DeferReason::BookingMailWaiting
        }
    );
    // Cap reached and booking mail waiting: the longer wait (next day) wins.
    assert_eq!(
        may_send(JUNE_12, 3, 0, Suppression::None, true, POLICY),
        until_midnight(DeferReason::DailyCap)
    );
    // The person already got one today: theirs waits for the next UTC day, booking mail or not.
    assert_eq!(
        may_send(JUNE_12, 0, 1, Suppression::None, true, POLICY),
        until_midnight(DeferReason::PersonAlreadyServed)
    );
}

proptest! {
    #[test]
    fn send_only_when_every_rule_allows(
        now in 0i64..4_000_000_000_000,
        total in 0u32..10,
        person in 0u32..3,
        s in 0usize..4,
        waiting in any::<bool>(),
        cap in 0u32..10,
        per in 0u32..3,
    ) {
        let sup = [Suppression::None, Suppression::MarketingUnsubscribed, Suppression::HardBounce, Suppression::Complaint][s];
        let policy = MarketingPolicy { daily_cap: cap, per_person_per_day: per };
        let d = may_send(now, total, person, sup, waiting, policy);
        let allowed = sup == Suppression::None && person < per && total < cap && !waiting;
        prop_assert_eq!(d == MarketingDecision::Send, allowed);
        if let MarketingDecision::Defer { until_ms, reason } = d {
            prop_assert!(until_ms > now);
            // Deferred for the cap or the person → exactly the next UTC midnight.
            if reason != DeferReason::BookingMailWaiting {
                prop_assert_eq!(until_ms % DAY, 0);
                prop_assert!(until_ms - now <= DAY);
                prop_assert!(!same_utc_day(now, until_ms));
            }
        }
    }
}
