//! The failover step of a send: which failures pause the provider (and for how long, from the one
//! configured value), and where the email goes once its provider is paused.

use crate::outbox_policy_retry::{with_hint, ALL_CLASSES};
use booking_email_engine::domain::outbox::{
    after_pause, AfterFailure, AfterPause, Backoff, FailurePolicy, PauseCause, Provider,
    ProviderChoice, ProviderErrorClass, ProviderPause, Verdict, CREDENTIALS_PAUSE_MS,
};

const NOW: i64 = 1_767_225_600_000 + 13 * 3_600_000; // 2026-01-01T13:00Z

#[test]
fn refused_credentials_pause_the_provider_for_the_configured_time() {
    let policy = FailurePolicy {
        backoff: Backoff::DEFAULT,
        credentials_pause_ms: 90_000,
    };
    for provider in [Provider::Cloudflare, Provider::Resend, Provider::Smtp] {
        let decision = policy.after_failure(
            ProviderErrorClass::CredentialsRejected,
            provider,
            1,
            NOW,
            7,
            None,
        );
        assert_eq!(
            decision,
            AfterFailure::PauseProvider {
                until_ms: NOW + 90_000,
                cause: PauseCause::Credentials,
            }
        );
        assert_eq!(
            decision.provider_pause(),
            Some(ProviderPause {
                until_ms: NOW + 90_000,
                cause: PauseCause::Credentials,
            })
        );
        // Our configuration refused (sender, relay, policy): the same pause, its own cause.
        let config =
            policy.after_failure(ProviderErrorClass::Configuration, provider, 1, NOW, 7, None);
        assert_eq!(
            config.provider_pause(),
            Some(ProviderPause {
                until_ms: NOW + 90_000,
                cause: PauseCause::Configuration,
            })
        );
    }
}

#[test]
fn the_default_policy_is_the_hint_function_with_a_one_hour_pause() {
    assert_eq!(
        FailurePolicy::DEFAULT.credentials_pause_ms,
        CREDENTIALS_PAUSE_MS
    );
    let classes = ALL_CLASSES.into_iter().chain([
        ProviderErrorClass::CredentialsRejected,
        ProviderErrorClass::Configuration,
    ]);
    for class in classes {
        for provider in [Provider::Cloudflare, Provider::Resend, Provider::Smtp] {
            for attempts in [1, 3, 6, 9] {
                for hint in [None, Some(5_000)] {
                    assert_eq!(
                        FailurePolicy::DEFAULT
                            .after_failure(class, provider, attempts, NOW, 11, hint),
                        with_hint(class, provider, attempts, 11, hint),
                        "{class:?} {provider:?} {attempts} {hint:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn only_a_daily_limit_refused_credentials_or_configuration_pause_a_provider() {
    let until = NOW + 1_000;
    assert_eq!(
        AfterFailure::FailOver {
            pause_main_until_ms: until
        }
        .provider_pause(),
        Some(ProviderPause {
            until_ms: until,
            cause: PauseCause::DailyLimit,
        })
    );
    for other in [
        AfterFailure::RetryAt { at_ms: until },
        AfterFailure::DeadLetter,
        AfterFailure::Drop,
    ] {
        assert_eq!(other.provider_pause(), None, "{other:?}");
    }
}

#[test]
fn a_paused_provider_hands_the_email_to_the_other_one_or_it_waits() {
    let until = NOW + 60_000;
    for (case, failed, choice, expected) in [
        (
            "main paused, SMTP available: the same email goes by SMTP now",
            Provider::Cloudflare,
            ProviderChoice::Send(Provider::Smtp),
            AfterPause::FailOverTo(Provider::Smtp),
        ),
        (
            "SMTP paused on the way, main back: main again",
            Provider::Smtp,
            ProviderChoice::Send(Provider::Resend),
            AfterPause::FailOverTo(Provider::Resend),
        ),
        (
            "the choice is still the failed provider (its pause already over): wait for the pause",
            Provider::Smtp,
            ProviderChoice::Send(Provider::Smtp),
            AfterPause::WaitUntil(until),
        ),
        (
            "no provider before t: wait until t",
            Provider::Cloudflare,
            ProviderChoice::WaitUntil(NOW + 5),
            AfterPause::WaitUntil(NOW + 5),
        ),
    ] {
        assert_eq!(after_pause(failed, until, choice), expected, "{case}");
    }
}

#[test]
fn a_refusal_of_ours_met_again_by_the_same_email_counts_so_it_cannot_stall_the_route() {
    let policy = FailurePolicy::DEFAULT;
    let pause = |cause| AfterFailure::PauseProvider {
        until_ms: NOW + CREDENTIALS_PAUSE_MS,
        cause,
    };
    let config = ProviderErrorClass::Configuration;
    // The first refusal of ours on a route pauses it and costs the email nothing.
    assert_eq!(
        policy.verdict(config, Provider::Smtp, 1, false, NOW, 0, None),
        Verdict {
            decision: pause(PauseCause::Configuration),
            counts: false
        }
    );
    // The same email refused again after the route came back: paused again, and counted.
    assert_eq!(
        policy.verdict(config, Provider::Smtp, 2, true, NOW, 0, None),
        Verdict {
            decision: pause(PauseCause::Configuration),
            counts: true
        }
    );
    // At the ceiling it is a dead letter (the owner is told) and the route is not paused for it.
    let last = policy.backoff.max_attempts;
    let v = policy.verdict(config, Provider::Smtp, last, true, NOW, 0, None);
    assert_eq!(
        v,
        Verdict {
            decision: AfterFailure::DeadLetter,
            counts: true
        }
    );
    assert_eq!(v.decision.provider_pause(), None);
    // Credentials and quotas are never the email's, however often they come back.
    for (class, provider) in [
        (ProviderErrorClass::CredentialsRejected, Provider::Smtp),
        (ProviderErrorClass::DailyLimit, Provider::Smtp),
        (ProviderErrorClass::DailyLimit, Provider::Resend),
    ] {
        let v = policy.verdict(class, provider, last + 5, true, NOW, 0, None);
        assert!(!v.counts, "{class:?} {provider:?}");
        assert!(
            v.decision.provider_pause().is_some(),
            "{class:?} {provider:?}"
        );
    }
    // Failures that do not pause a route count as before.
    assert!(
        policy
            .verdict(
                ProviderErrorClass::Transient,
                Provider::Smtp,
                1,
                false,
                NOW,
                0,
                None
            )
            .counts
    );
    assert_eq!(
        policy
            .verdict(
                ProviderErrorClass::RecipientDeclined,
                Provider::Smtp,
                1,
                true,
                NOW,
                0,
                None
            )
            .decision,
        AfterFailure::Drop
    );
    let bits = [Provider::Cloudflare, Provider::Resend, Provider::Smtp].map(Provider::bit);
    assert_eq!(bits.iter().fold(0, |a, b| a | b), 7, "one bit each");
}

/// The queue's bookkeeping around `verdict`, as `outbox::send` keeps it, for one email that the
/// route refuses every time (a message only it carries) while the owner keeps resuming the route.
#[test]
fn a_message_refused_every_time_ends_as_a_dead_letter_after_the_attempt_ceiling() {
    let policy = FailurePolicy::DEFAULT;
    let (mut attempts, mut budget_from, mut refused_ours) = (0i64, 0i64, 0i64);
    let mut pauses = 0;
    let end = loop {
        attempts += 1;
        let counted = u32::try_from(attempts - budget_from).unwrap();
        let v = policy.verdict(
            ProviderErrorClass::Configuration,
            Provider::Smtp,
            counted,
            refused_ours & Provider::Smtp.bit() != 0,
            NOW,
            0,
            None,
        );
        refused_ours |= Provider::Smtp.bit();
        if !v.counts {
            budget_from += 1;
        }
        match v.decision {
            AfterFailure::PauseProvider { .. } => pauses += 1,
            other => break other,
        }
        assert!(attempts < 50, "never ends");
    };
    assert_eq!(end, AfterFailure::DeadLetter);
    // One free refusal, then the email's whole budget.
    assert_eq!(attempts, i64::from(policy.backoff.max_attempts) + 1);
    assert_eq!(pauses, policy.backoff.max_attempts);
}
