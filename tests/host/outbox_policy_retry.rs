//! `after_failure_with_hint`: Retry-After within [1 s, cap], the 60 s rate-limit floor, seeded
//! jitter bounds, and agreement with `after_failure` when there is no hint.

use booking_email_engine::domain::outbox::testing::seeded;
use booking_email_engine::domain::outbox::{
    after_failure, after_failure_with_hint, clamp_retry_after_ms, next_utc_midnight, AfterFailure,
    Backoff, FailurePolicy, PauseCause, Provider, ProviderErrorClass, RATE_LIMIT_FLOOR_MS,
    RETRY_AFTER_MIN_MS, SMTP_DEFERRAL_PAUSE_MS,
};
use proptest::prelude::*;

/// The refusal classes these tests go through: every class but those that blame our own
/// credentials or configuration and `MessageRefused` (`outbox_policy_failover` adds the first two).
pub(crate) const ALL_CLASSES: [ProviderErrorClass; 6] = [
    ProviderErrorClass::DailyLimit,
    ProviderErrorClass::RateLimited,
    ProviderErrorClass::RecipientRejected,
    ProviderErrorClass::RecipientDeclined,
    ProviderErrorClass::Transient,
    ProviderErrorClass::Permanent,
];

const NOW: i64 = 1_767_225_600_000 + 13 * 3_600_000; // 2026-01-01T13:00Z

fn delay(d: AfterFailure) -> i64 {
    match d {
        AfterFailure::RetryAt { at_ms } => at_ms - NOW,
        other => panic!("expected a retry, got {other:?}"),
    }
}

/// The un-jittered exponential delay for `attempts`.
fn full(b: Backoff, attempts: u32) -> i64 {
    b.base_ms
        .saturating_mul(1 << attempts.saturating_sub(1).min(30))
        .min(b.cap_ms)
}

/// `after_failure_with_hint` at `NOW` with the default backoff: a failure of `class` on
/// `provider` at attempt `attempts`, the jitter draw `random` and the provider's Retry-After hint
/// (ms).
pub(crate) fn with_hint(
    class: ProviderErrorClass,
    provider: Provider,
    attempts: u32,
    random: u64,
    hint: Option<i64>,
) -> AfterFailure {
    after_failure_with_hint(
        class,
        provider,
        attempts,
        NOW,
        Backoff::DEFAULT,
        random,
        hint,
    )
}

#[test]
fn clamping_bounds() {
    let b = Backoff::DEFAULT;
    assert_eq!(RETRY_AFTER_MIN_MS, 1_000);
    assert_eq!(RATE_LIMIT_FLOOR_MS, 60_000);
    assert_eq!(clamp_retry_after_ms(-5, b), 1_000);
    assert_eq!(clamp_retry_after_ms(0, b), 1_000);
    assert_eq!(clamp_retry_after_ms(999, b), 1_000);
    assert_eq!(clamp_retry_after_ms(1_000, b), 1_000);
    assert_eq!(clamp_retry_after_ms(45_000, b), 45_000);
    assert_eq!(clamp_retry_after_ms(b.cap_ms, b), b.cap_ms);
    assert_eq!(clamp_retry_after_ms(b.cap_ms + 1, b), b.cap_ms);
    assert_eq!(clamp_retry_after_ms(i64::MAX, b), b.cap_ms);
    // A cap below 1 s wins over the 1 s minimum (tests with tiny backoffs).
    let tiny = Backoff {
        base_ms: 10,
        cap_ms: 500,
        max_attempts: 3,
    };
    assert_eq!(clamp_retry_after_ms(5_000, tiny), 500);
}

#[test]
fn without_a_hint_it_is_after_failure() {
    let b = Backoff::DEFAULT;
    let mut rng = seeded(11);
    for class in ALL_CLASSES {
        for provider in [Provider::Cloudflare, Provider::Smtp] {
            for attempts in 1..=8 {
                let r = rng();
                assert_eq!(
                    after_failure_with_hint(class, provider, attempts, NOW, b, r, None),
                    after_failure(class, provider, attempts, NOW, b, r),
                    "{class:?} {provider:?} {attempts}"
                );
            }
        }
    }
}

#[test]
fn a_hint_never_changes_the_kind_of_decision() {
    let b = Backoff::DEFAULT;
    for class in ALL_CLASSES {
        for provider in [Provider::Cloudflare, Provider::Smtp] {
            for attempts in 1..=8 {
                for hint in [-1, 0, 500, 30_000, 10_000_000] {
                    let with =
                        after_failure_with_hint(class, provider, attempts, NOW, b, 3, Some(hint));
                    let without = after_failure(class, provider, attempts, NOW, b, 3);
                    assert_eq!(
                        std::mem::discriminant(&with),
                        std::mem::discriminant(&without),
                        "{class:?} {provider:?} {attempts} {hint}"
                    );
                    if !matches!(without, AfterFailure::RetryAt { .. }) {
                        assert_eq!(with, without);
                    }
                }
            }
        }
    }
    // In particular: no retry after the last attempt, whatever the hint.
    assert_eq!(
        with_hint(
            ProviderErrorClass::Transient,
            Provider::Cloudflare,
            b.max_attempts,
            0,
            Some(1_000)
        ),
        AfterFailure::DeadLetter
    );
    assert_eq!(
        with_hint(
            ProviderErrorClass::DailyLimit,
            Provider::Cloudflare,
            1,
            0,
            Some(5_000)
        ),
        AfterFailure::FailOver {
            pause_main_until_ms: next_utc_midnight(NOW)
        }
    );
}

/// For every attempt before the last, every hint of `hints` and `draws` jitter draws (seeded by
/// `seed`) each: `check(attempts, hint, got, d, h)` with `got` the delay (ms) a `class` failure on
/// the main provider is retried after, `d` the un-jittered backoff and `h` the hint as honoured
/// (clamped to [1 s, cap]; 0 without one).
fn each_hinted_retry(
    class: ProviderErrorClass,
    seed: u64,
    hints: &[Option<i64>],
    draws: usize,
    mut check: impl FnMut(u32, Option<i64>, i64, i64, i64),
) {
    let b = Backoff::DEFAULT;
    let mut rng = seeded(seed);
    for attempts in 1..b.max_attempts {
        let d = full(b, attempts);
        for &hint in hints {
            for _ in 0..draws {
                let got = delay(with_hint(
                    class,
                    Provider::Cloudflare,
                    attempts,
                    rng(),
                    hint,
                ));
                let h = hint.map_or(0, |h| h.clamp(1_000, b.cap_ms));
                check(attempts, hint, got, d, h);
            }
        }
    }
}

#[test]
fn transient_with_seeded_jitter_and_hints_stays_in_bounds() {
    let b = Backoff::DEFAULT;
    let hints = [
        None,
        Some(-10),
        Some(0),
        Some(1),
        Some(1_000),
        Some(20_000),
        Some(90_000),
        Some(1_800_000),
        Some(b.cap_ms * 10),
    ];
    each_hinted_retry(
        ProviderErrorClass::Transient,
        42,
        &hints,
        500,
        |attempts, hint, got, d, h| {
            assert!(
                got >= (d / 2).max(h) && got <= d.max(h),
                "attempt {attempts} hint {hint:?}: {got} vs d={d} h={h}"
            );
            assert!(got <= b.cap_ms, "never beyond the cap: {got}");
            assert!(got >= RETRY_AFTER_MIN_MS.min(b.cap_ms));
        },
    );
}

#[test]
fn a_long_hint_is_honoured_up_to_the_cap() {
    let b = Backoff::DEFAULT;
    for (case, provider, attempts, hint, expected) in [
        (
            "attempt 1: backoff 15–30 s; the provider asks for 20 min → 20 min",
            Provider::Cloudflare,
            1,
            1_200_000,
            1_200_000,
        ),
        (
            "a day is clamped to the cap (1 h)",
            Provider::Smtp,
            1,
            86_400_000,
            b.cap_ms,
        ),
        (
            "a short hint never makes us retry sooner than our own backoff",
            Provider::Cloudflare,
            4,
            1_000,
            full(b, 4) / 2,
        ),
    ] {
        let got = delay(with_hint(
            ProviderErrorClass::Transient,
            provider,
            attempts,
            0,
            Some(hint),
        ));
        assert_eq!(got, expected, "{case}");
    }
}

#[test]
fn rate_limited_waits_at_least_a_minute() {
    let b = Backoff::DEFAULT;
    let hints = [
        None,
        Some(0),
        Some(1_000),
        Some(59_999),
        Some(61_000),
        Some(b.cap_ms * 2),
    ];
    each_hinted_retry(
        ProviderErrorClass::RateLimited,
        7,
        &hints,
        200,
        |_, _, got, d, h| {
            assert!(got >= RATE_LIMIT_FLOOR_MS, "{got}");
            assert!(got >= h);
            assert!(got <= d.max(h).max(RATE_LIMIT_FLOOR_MS));
        },
    );
    // Exact: attempt 1, random 0 → backoff 15 s, hint 61 s → 61 s; hint 2 s → floor 60 s.
    for (hint, expected) in [(61_000, 61_000), (2_000, 60_000)] {
        let got = with_hint(
            ProviderErrorClass::RateLimited,
            Provider::Cloudflare,
            1,
            0,
            Some(hint),
        );
        assert_eq!(delay(got), expected, "{hint}");
    }
}

#[test]
fn daily_limit_on_smtp_pauses_it_until_the_day_turns_whatever_the_hint() {
    // Our SMTP account's quota or suspension: every email would fail on it, so the route waits
    // (a hint of 10 minutes does not bring the quota back).
    assert_eq!(
        with_hint(
            ProviderErrorClass::DailyLimit,
            Provider::Smtp,
            1,
            0,
            Some(600_000)
        ),
        AfterFailure::PauseProvider {
            until_ms: next_utc_midnight(NOW),
            cause: PauseCause::DailyLimit,
        }
    );
}

#[test]
fn a_deferral_of_our_sender_or_rate_pauses_smtp_briefly_and_costs_no_attempt() {
    // SMTP's `RateLimited` is a 4xx about our sender, client or IP, or our rate: every email
    // would meet it, so the route pauses for five minutes, even at the last attempt.
    let b = Backoff::DEFAULT;
    let policy = FailurePolicy::DEFAULT;
    for attempts in [1, b.max_attempts] {
        let verdict = policy.verdict(
            ProviderErrorClass::RateLimited,
            Provider::Smtp,
            attempts,
            false,
            NOW,
            0,
            Some(1_000),
        );
        assert_eq!(
            verdict.decision,
            AfterFailure::PauseProvider {
                until_ms: NOW + SMTP_DEFERRAL_PAUSE_MS,
                cause: PauseCause::Configuration,
            },
            "{attempts}"
        );
        assert!(
            !verdict.counts,
            "the route's deferral is not the email's fault"
        );
    }
    assert_eq!(SMTP_DEFERRAL_PAUSE_MS, 300_000);
    // A main provider's rate limit (HTTP 429) still retries that one email.
    assert!(matches!(
        after_failure(
            ProviderErrorClass::RateLimited,
            Provider::Resend,
            1,
            NOW,
            b,
            0
        ),
        AfterFailure::RetryAt { .. }
    ));
}

proptest! {
    #[test]
    fn any_hint_any_attempt_stays_within_bounds(
        attempts in 1u32..6,
        random in any::<u64>(),
        hint in proptest::option::of(any::<i64>()),
        base in 1i64..100_000,
        cap_extra in 0i64..10_000_000,
        rate_limited in any::<bool>(),
    ) {
        let b = Backoff { base_ms: base, cap_ms: base + cap_extra, max_attempts: 6 };
        let class = if rate_limited { ProviderErrorClass::RateLimited } else { ProviderErrorClass::Transient };
        let got = delay(after_failure_with_hint(class, Provider::Cloudflare, attempts, NOW, b, random, hint));
        let floor = if rate_limited { RATE_LIMIT_FLOOR_MS } else { 0 };
        let h = hint.map_or(0, |h| h.max(1_000).min(b.cap_ms));
        prop_assert!(got >= h.max(floor));
        prop_assert!(got <= b.cap_ms.max(floor));
        prop_assert!(got >= (full(b, attempts) / 2).max(floor));
    }
}
