//! Tests of the outbox policy (pacing, routes, hand-overs, failures).

use super::testing::seeded;
use super::*;
use proptest::prelude::*;

#[test]
fn production_gap_is_always_within_150_to_160_seconds() {
    let mut rng = seeded(7);
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for _ in 0..100_000 {
        let g = Pacing::PRODUCTION.gap_ms(rng());
        assert!((150_000..=160_000).contains(&g), "{g}");
        lo = lo.min(g);
        hi = hi.max(g);
    }
    // Uniform over the whole range: both ends are reached within 1 s.
    assert!(lo < 151_000 && hi > 159_000, "{lo} {hi}");
    assert_eq!(Pacing::PRODUCTION.gap_ms(0), 150_000);
    assert_eq!(Pacing::PRODUCTION.gap_ms(10_000), 160_000);
    assert_eq!(
        Pacing::PRODUCTION.gap_ms(u64::MAX),
        150_000 + (u64::MAX % 10_001) as i64
    );
}

#[test]
fn pacing_rejects_inverted_ranges() {
    assert!(Pacing::new(10, 5).is_err());
    assert!(Pacing::new(-1, 5).is_err());
    assert_eq!(Pacing::new(0, 0).unwrap().gap_ms(12345), 0);
}

#[test]
fn idle_outbox_sends_at_once_and_busy_one_waits_for_the_slot() {
    let facts = QueueFacts {
        client_ready: true,
        ..Default::default()
    };
    // Never sent before: slot at 0 → now.
    assert_eq!(next_wake(1_000, 0, facts), Some(1_000));
    // Sent 10 s ago with a 155 s gap → wake at the slot.
    let slot = Pacing::PRODUCTION.next_slot_after(990_000, 5_000);
    assert_eq!(slot, 1_145_000);
    assert_eq!(next_wake(1_000_000, slot, facts), Some(slot));
    assert!(!client_slot_open(1_000_000, slot));
    assert!(client_slot_open(slot, slot));
}

#[test]
fn owner_alerts_wake_now_even_inside_a_client_gap() {
    let facts = QueueFacts {
        owner_ready: true,
        client_ready: true,
        earliest_waiting_ms: None,
        fast_lane_at_ms: None,
    };
    assert_eq!(next_wake(5_000, 160_000, facts), Some(5_000));
}

#[test]
fn a_catch_up_lane_wakes_before_the_normal_slot() {
    let facts = QueueFacts {
        client_ready: true,
        fast_lane_at_ms: Some(35_000),
        ..Default::default()
    };
    assert_eq!(next_wake(5_000, 160_000, facts), Some(35_000));
    assert_eq!(next_wake(40_000, 160_000, facts), Some(40_000));
}

#[test]
fn waiting_items_wake_at_their_backoff_end() {
    let facts = QueueFacts {
        earliest_waiting_ms: Some(9_000),
        ..Default::default()
    };
    assert_eq!(next_wake(5_000, 0, facts), Some(9_000));
    assert_eq!(next_wake(10_000, 0, facts), Some(10_000));
    assert_eq!(next_wake(10_000, 0, QueueFacts::default()), None);
}

proptest! {
    #[test]
    fn any_configured_gap_stays_in_range(min in 0i64..1_000_000, extra in 0i64..100_000, r in any::<u64>()) {
        let p = Pacing::new(min, min + extra).unwrap();
        let g = p.gap_ms(r);
        prop_assert!(g >= min && g <= min + extra);
    }
}

#[test]
fn main_provider_is_paused_until_next_utc_day() {
    let now = 1_767_225_600_000 + 13 * 3_600_000; // 2026-01-01T13:00Z
    let until = next_utc_midnight(now);
    assert_eq!(until, 1_767_225_600_000 + DAY_MS);
    assert_eq!(next_utc_midnight(until), until + DAY_MS);
    let a = |main_paused, smtp_configured, smtp_paused| Availability {
        main: Provider::Cloudflare,
        main_paused_until_ms: main_paused,
        smtp_configured,
        smtp_paused_until_ms: smtp_paused,
        owner_route: false,
        owner_route_paused_until_ms: None,
    };
    use ProviderChoice::*;
    assert_eq!(
        choose_provider(now, a(Some(until), true, None)),
        Send(Provider::Smtp)
    );
    assert_eq!(
        choose_provider(until, a(Some(until), true, None)),
        Send(Provider::Cloudflare)
    );
    assert_eq!(
        choose_provider(now, a(None, true, None)),
        Send(Provider::Cloudflare)
    );
    // Main paused, no SMTP: wait for the reset.
    assert_eq!(
        choose_provider(now, a(Some(until), false, None)),
        WaitUntil(until)
    );
    // Both paused: wait for whichever comes back first.
    assert_eq!(
        choose_provider(now, a(Some(until), true, Some(now + 5))),
        WaitUntil(now + 5)
    );
    assert_eq!(
        choose_provider(now, a(Some(now + 7), true, Some(until))),
        WaitUntil(now + 7)
    );
    // An SMTP pause that ended no longer counts.
    assert_eq!(
        choose_provider(now, a(Some(until), true, Some(now - 1))),
        Send(Provider::Smtp)
    );
    // SMTP paused but main fine: main.
    assert_eq!(
        choose_provider(now, a(None, true, Some(until))),
        Send(Provider::Cloudflare)
    );
    let resend = Availability {
        main: Provider::Resend,
        ..a(None, false, None)
    };
    assert_eq!(choose_provider(now, resend), Send(Provider::Resend));
}

#[test]
fn owner_alerts_take_the_owner_route_only_while_every_guest_route_is_paused() {
    let now = 1_767_225_600_000;
    let later = now + 3_600_000;
    let a =
        |main_paused: Option<i64>, smtp_paused: Option<i64>, owner_route: bool, owner_paused| {
            Availability {
                main: Provider::Cloudflare,
                main_paused_until_ms: main_paused,
                smtp_configured: true,
                smtp_paused_until_ms: smtp_paused,
                owner_route,
                owner_route_paused_until_ms: owner_paused,
            }
        };
    use ProviderChoice::*;
    // A guest route works: owner alerts take it like guest mail.
    assert_eq!(
        choose_owner_route(now, a(None, None, true, None)),
        Send(Provider::Cloudflare)
    );
    assert_eq!(
        choose_owner_route(now, a(Some(later), None, true, None)),
        Send(Provider::Smtp)
    );
    // Every guest route paused: the owner route carries owner alerts, guest mail waits.
    let all_paused = a(Some(later), Some(later), true, None);
    assert_eq!(
        choose_owner_route(now, all_paused),
        Send(Provider::OwnerRoute)
    );
    assert_eq!(choose_provider(now, all_paused), WaitUntil(later));
    // No owner route, or the owner route failing too: owner alerts wait like guest mail.
    assert_eq!(
        choose_owner_route(now, a(Some(later), Some(later), false, None)),
        WaitUntil(later)
    );
    assert_eq!(
        choose_owner_route(now, a(Some(later), Some(later), true, Some(now + 5))),
        WaitUntil(later)
    );
    assert!(!Provider::OwnerRoute.is_main());
    assert_eq!(Provider::parse("owner_route"), Some(Provider::OwnerRoute));
}

#[test]
fn provider_names_round_trip() {
    for p in [Provider::Cloudflare, Provider::Resend, Provider::Smtp] {
        assert_eq!(Provider::parse(p.as_str()), Some(p));
    }
    assert_eq!(Provider::parse("main"), None);
    assert!(Provider::Resend.is_main() && Provider::Cloudflare.is_main());
    assert!(!Provider::Smtp.is_main());
    assert!(Provider::Resend.is_idempotent() && !Provider::Smtp.is_idempotent());
}

#[test]
fn restart_rule_resend_same_key_vs_possibly_twice() {
    use crate::domain::email::EmailStatus::*;
    let t = 1_000_000_000;
    assert_eq!(status_after_success(None, Provider::Cloudflare, t), Sent);
    // Resend retried with the same key within its window: Resend deduplicated it.
    assert_eq!(
        status_after_success(Some((Provider::Resend, t)), Provider::Resend, t + 60_000),
        Sent
    );
    // Window (24 h − 1 h margin) over: the key may have expired.
    assert_eq!(
        status_after_success(
            Some((Provider::Resend, t)),
            Provider::Resend,
            t + 23 * 3_600_000
        ),
        SentPossiblyTwice
    );
    // Cloudflare or SMTP cannot confirm; neither can a switch of provider.
    assert_eq!(
        status_after_success(Some((Provider::Cloudflare, t)), Provider::Cloudflare, t + 1),
        SentPossiblyTwice
    );
    assert_eq!(
        status_after_success(Some((Provider::Smtp, t)), Provider::Smtp, t + 1),
        SentPossiblyTwice
    );
    assert_eq!(
        status_after_success(Some((Provider::Resend, t)), Provider::Smtp, t + 1),
        SentPossiblyTwice
    );
    // A non-idempotent uncertainty is never replaced by a later Resend one.
    assert_eq!(
        merge_maybe_handed_over(Some((Provider::Smtp, t)), (Provider::Resend, t + 9)),
        (Provider::Smtp, t)
    );
    assert_eq!(
        merge_maybe_handed_over(Some((Provider::Resend, t)), (Provider::Smtp, t + 9)),
        (Provider::Smtp, t + 9)
    );
    assert_eq!(
        merge_maybe_handed_over(None, (Provider::Resend, t)),
        (Provider::Resend, t)
    );
}

#[test]
fn an_uncertain_hand_over_is_tried_once_more_never_in_a_loop() {
    use Provider::{Cloudflare, Resend, Smtp};
    let t = 1_000;
    // (case, the earlier uncertain hand-over, this attempt's provider, uncertain now, stop). The
    // second uncertain hand-over stops: the first may already have arrived. Resend deduplicates by
    // its key: its uncertainty never stops the retries, and an earlier Resend uncertainty leaves
    // SMTP one more try. A refusal or a sure failure is not uncertain.
    for (case, earlier, provider, uncertain, stop) in [
        ("first uncertain SMTP: once more", None, Smtp, true, false),
        (
            "second uncertain SMTP: stop",
            Some((Smtp, t)),
            Smtp,
            true,
            true,
        ),
        (
            "SMTP after main: stop",
            Some((Cloudflare, t)),
            Smtp,
            true,
            true,
        ),
        ("a sure failure", Some((Smtp, t)), Smtp, false, false),
        ("Resend after SMTP", Some((Smtp, t)), Resend, true, false),
        ("SMTP after Resend", Some((Resend, t)), Smtp, true, false),
    ] {
        let stopped = stop_after_uncertain(earlier, provider, uncertain);
        assert_eq!(stopped, stop, "{case}");
    }
}

#[test]
fn configuration_faults_pause_the_route_like_refused_credentials() {
    let b = Backoff::DEFAULT;
    for provider in [Provider::Cloudflare, Provider::Resend, Provider::Smtp] {
        let d = after_failure(ProviderErrorClass::Configuration, provider, 9, 10, b, 1);
        assert_eq!(
            d,
            AfterFailure::PauseProvider {
                until_ms: 10 + CREDENTIALS_PAUSE_MS,
                cause: PauseCause::Configuration,
            }
        );
        assert_eq!(
            d.provider_pause().map(|p| p.cause),
            Some(PauseCause::Configuration)
        );
    }
    assert!(ProviderErrorClass::Configuration.owner_must_fix());
    assert!(ProviderErrorClass::CredentialsRejected.owner_must_fix());
    assert!(!ProviderErrorClass::Transient.owner_must_fix());
}

#[test]
fn refused_credentials_pause_the_provider_whatever_the_attempt_count() {
    let b = Backoff::DEFAULT;
    for provider in [Provider::Cloudflare, Provider::Resend, Provider::Smtp] {
        for attempts in [1, b.max_attempts, b.max_attempts + 3] {
            assert_eq!(
                after_failure(
                    ProviderErrorClass::CredentialsRejected,
                    provider,
                    attempts,
                    10,
                    b,
                    7
                ),
                AfterFailure::PauseProvider {
                    until_ms: 10 + CREDENTIALS_PAUSE_MS,
                    cause: PauseCause::Credentials,
                }
            );
        }
    }
    // A daily limit on either main provider fails over.
    assert!(matches!(
        after_failure(
            ProviderErrorClass::DailyLimit,
            Provider::Resend,
            1,
            10,
            b,
            0
        ),
        AfterFailure::FailOver { .. }
    ));
}

#[test]
fn classification_table() {
    use ProviderErrorClass::*;
    let table = [
        (Some("E_DAILY_LIMIT_EXCEEDED"), DailyLimit),
        (Some("E_RATE_LIMIT_EXCEEDED"), RateLimited),
        (Some("E_RECIPIENT_SUPPRESSED"), RecipientRejected),
        (Some("E_INTERNAL_SERVER_ERROR"), Transient),
        (Some("E_DELIVERY_FAILED"), Transient),
        (None, Transient),
        (Some("E_SENDER_NOT_VERIFIED"), Configuration),
        (Some("E_RECIPIENT_NOT_ALLOWED"), Configuration),
        (Some("E_SENDER_DOMAIN_NOT_AVAILABLE"), Configuration),
        // About this message's size, fields or headers: set aside, the next email decides.
        (Some("E_VALIDATION_ERROR"), MessageRefused),
        (Some("E_FIELD_MISSING"), MessageRefused),
        (Some("E_CONTENT_TOO_LARGE"), MessageRefused),
        (Some("E_TOO_MANY_RECIPIENTS"), MessageRefused),
        (Some("E_HEADER_VALUE_TOO_LONG"), MessageRefused),
        (Some("E_HEADERS_TOO_MANY"), MessageRefused),
        (Some("E_SOMETHING_NEW"), Transient),
    ];
    for (code, want) in table {
        assert_eq!(classify_cloudflare_code(code), want, "{code:?}");
    }
}

#[test]
fn a_message_refusal_sets_the_email_aside_and_counts_until_the_ceiling() {
    let policy = FailurePolicy::DEFAULT;
    let now = 1_000_000;
    let v = policy.verdict(
        ProviderErrorClass::MessageRefused,
        Provider::Smtp,
        1,
        false,
        now,
        0,
        None,
    );
    // Set aside (never a pause, never a drop): retried after the backoff if nothing probes it.
    let AfterFailure::SetAside { retry_at_ms } = v.decision else {
        panic!("{v:?}");
    };
    assert!(retry_at_ms >= now + 15_000 && retry_at_ms <= now + 30_000);
    assert!(v.counts);
    assert_eq!(v.decision.provider_pause(), None);
    // At the ceiling: a dead letter, like any failure of its own.
    let v = policy.verdict(
        ProviderErrorClass::MessageRefused,
        Provider::Cloudflare,
        6,
        false,
        now,
        0,
        None,
    );
    assert_eq!(v.decision, AfterFailure::DeadLetter);
}

#[test]
fn failure_decisions() {
    let b = Backoff::DEFAULT;
    let now = 1_000_000;
    assert_eq!(
        after_failure(
            ProviderErrorClass::DailyLimit,
            Provider::Cloudflare,
            1,
            now,
            b,
            0
        ),
        AfterFailure::FailOver {
            pause_main_until_ms: next_utc_midnight(now)
        }
    );
    // SMTP's own quota or suspension pauses SMTP until the day turns, whatever the count.
    for attempts in [1, b.max_attempts] {
        assert_eq!(
            after_failure(
                ProviderErrorClass::DailyLimit,
                Provider::Smtp,
                attempts,
                now,
                b,
                0
            ),
            AfterFailure::PauseProvider {
                until_ms: next_utc_midnight(now),
                cause: PauseCause::DailyLimit,
            }
        );
    }
    // A recipient's policy drops the email; the route is not paused.
    assert_eq!(
        after_failure(
            ProviderErrorClass::RecipientDeclined,
            Provider::Smtp,
            1,
            now,
            b,
            0
        ),
        AfterFailure::Drop
    );
    assert_eq!(
        after_failure(
            ProviderErrorClass::RecipientRejected,
            Provider::Cloudflare,
            1,
            now,
            b,
            0
        ),
        AfterFailure::Drop
    );
    assert_eq!(
        after_failure(
            ProviderErrorClass::Transient,
            Provider::Cloudflare,
            b.max_attempts,
            now,
            b,
            0
        ),
        AfterFailure::DeadLetter
    );
    match after_failure(
        ProviderErrorClass::RateLimited,
        Provider::Cloudflare,
        1,
        now,
        b,
        0,
    ) {
        AfterFailure::RetryAt { at_ms } => assert!(at_ms >= now + 60_000),
        other => panic!("{other:?}"),
    }
}

#[test]
fn backoff_grows_and_stays_within_bounds() {
    let b = Backoff::DEFAULT;
    let mut rng = seeded(42);
    for attempts in 1..=20u32 {
        let d = b
            .base_ms
            .saturating_mul(1 << (attempts - 1).min(30))
            .min(b.cap_ms);
        for _ in 0..1_000 {
            let got = b.delay_ms(attempts, rng());
            assert!(got >= d / 2 && got <= d, "attempt {attempts}: {got} vs {d}");
        }
    }
}
