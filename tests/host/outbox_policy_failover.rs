//! The failover step of a send: which failures pause the provider (and for how long, from the one
//! configured value), and where the email goes once its provider is paused.

use booking_email_engine::domain::outbox::{
    after_failure_with_hint, after_pause, AfterFailure, AfterPause, Backoff, FailurePolicy,
    PauseCause, Provider, ProviderChoice, ProviderErrorClass, ProviderPause, CREDENTIALS_PAUSE_MS,
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
    let classes = [
        ProviderErrorClass::DailyLimit,
        ProviderErrorClass::RateLimited,
        ProviderErrorClass::RecipientRejected,
        ProviderErrorClass::RecipientDeclined,
        ProviderErrorClass::Transient,
        ProviderErrorClass::Permanent,
        ProviderErrorClass::CredentialsRejected,
        ProviderErrorClass::Configuration,
    ];
    for class in classes {
        for provider in [Provider::Cloudflare, Provider::Resend, Provider::Smtp] {
            for attempts in [1, 3, 6, 9] {
                for hint in [None, Some(5_000)] {
                    assert_eq!(
                        FailurePolicy::DEFAULT
                            .after_failure(class, provider, attempts, NOW, 11, hint),
                        after_failure_with_hint(
                            class,
                            provider,
                            attempts,
                            NOW,
                            Backoff::DEFAULT,
                            11,
                            hint
                        ),
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
    // Main paused, SMTP available: the same email goes by SMTP now.
    assert_eq!(
        after_pause(
            Provider::Cloudflare,
            until,
            ProviderChoice::Send(Provider::Smtp)
        ),
        AfterPause::FailOverTo(Provider::Smtp)
    );
    // SMTP paused on the way, main back: main again.
    assert_eq!(
        after_pause(
            Provider::Smtp,
            until,
            ProviderChoice::Send(Provider::Resend)
        ),
        AfterPause::FailOverTo(Provider::Resend)
    );
    // The choice is still the failed provider (its pause already over): wait for the pause.
    assert_eq!(
        after_pause(Provider::Smtp, until, ProviderChoice::Send(Provider::Smtp)),
        AfterPause::WaitUntil(until)
    );
    // No provider before t: wait until t.
    assert_eq!(
        after_pause(
            Provider::Cloudflare,
            until,
            ProviderChoice::WaitUntil(NOW + 5)
        ),
        AfterPause::WaitUntil(NOW + 5)
    );
}
