//! One email's refusal judged on the next email: a route that refuses a message in a way that may
//! concern that message alone (a content or spam verdict, its size, a refusal after the data
//! without words about our sender or account) says nothing yet about the route. The email is set
//! aside and the next different email is handed to the same route at once, ahead of pacing (the
//! probe). What that hand-over comes to decides, so one bad email never stops the next and a broken
//! route is still paused after one more try.
//!
//! | the probe on the same route | verdict | the set-aside email | the route |
//! |---|---|---|---|
//! | accepted (also accepted after an uncertain earlier hand-over) | [`ProbeVerdict::SuspectAlone`] | a dead letter, the owner told with the route's words; the guest not suppressed; the owner may redrive it | never paused |
//! | refused with [`ProviderErrorClass::MessageRefused`] too | [`ProbeVerdict::RouteAtFault`] | back in line, its attempt not counted | paused like a refusal of ours, one owner alert |
//! | refused for the route's own cause (quota, credentials, configuration) | [`ProbeVerdict::RoutePaused`] | back in line unjudged, its attempt not counted | paused for that cause |
//! | anything else (a retry, the probe's own recipient refused, no answer) | [`ProbeVerdict::Undecided`] | still set aside; the next hand-over on the route decides | unchanged |
//!
//! A set-aside email with nothing behind it to probe with is tried again when its backoff ends,
//! like a transient failure: refused so each time, it becomes a dead letter at the attempt ceiling.

use super::ProviderErrorClass;

/// What the probe — the next hand-over of a different email on the route a set-aside email is
/// waiting on — came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The route accepted the probe (sent, or sent after an uncertain earlier hand-over).
    Accepted,
    /// The route refused the probe; its class.
    Refused(ProviderErrorClass),
    /// The probe's hand-over has no known outcome (its answer was lost): it says nothing.
    Unknown,
}

/// What a probe says about the email set aside before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeVerdict {
    /// The route took the next email: the set-aside email alone is refused. It becomes a dead
    /// letter with an owner alert quoting the refusal; its guest is not suppressed and the route
    /// was never paused.
    SuspectAlone,
    /// The route refused the next email the same way: the route (ours to fix) is at fault, not
    /// the message. The route is paused and the owner told once; both emails keep their places
    /// and their attempt budgets.
    RouteAtFault,
    /// The route was paused for a cause of its own (quota, credentials, configuration): the
    /// set-aside email goes back in line unjudged, its attempt not counted.
    RoutePaused,
    /// The probe says nothing about the set-aside email: it stays set aside.
    Undecided,
}

/// Judges a probe's outcome (see the module's table).
pub fn judge_probe(outcome: ProbeOutcome) -> ProbeVerdict {
    use ProviderErrorClass::*;
    match outcome {
        ProbeOutcome::Accepted => ProbeVerdict::SuspectAlone,
        ProbeOutcome::Refused(MessageRefused) => ProbeVerdict::RouteAtFault,
        ProbeOutcome::Refused(DailyLimit | CredentialsRejected | Configuration) => {
            ProbeVerdict::RoutePaused
        }
        ProbeOutcome::Refused(
            Transient | RateLimited | RecipientRejected | RecipientDeclined | Permanent,
        )
        | ProbeOutcome::Unknown => ProbeVerdict::Undecided,
    }
}

/// The dead letter's reason for an email the probe showed to be refused alone: the route
/// (`route`, its stored name), the route's exact words (`refusal`, one bounded line) and what the
/// owner can do. Stored in the queue's `last_error`, shown on the outbox and booking pages, and
/// quoted by the owner's alert.
pub fn refused_alone_reason(route: &str, refusal: &str) -> String {
    format!(
        "{route} refused this email alone: {refusal} — the next email on the same route was \
         accepted, so the route is fine and was not paused, and the guest was not suppressed. \
         Change what the refusal names (or ask the relay's operator), then redrive it"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProviderErrorClass::*;

    #[test]
    fn every_outcome_has_its_verdict() {
        assert_eq!(
            judge_probe(ProbeOutcome::Accepted),
            ProbeVerdict::SuspectAlone
        );
        assert_eq!(
            judge_probe(ProbeOutcome::Refused(MessageRefused)),
            ProbeVerdict::RouteAtFault
        );
        for class in [DailyLimit, CredentialsRejected, Configuration] {
            assert_eq!(
                judge_probe(ProbeOutcome::Refused(class)),
                ProbeVerdict::RoutePaused,
                "{class:?}"
            );
        }
        for class in [
            Transient,
            RateLimited,
            RecipientRejected,
            RecipientDeclined,
            Permanent,
        ] {
            assert_eq!(
                judge_probe(ProbeOutcome::Refused(class)),
                ProbeVerdict::Undecided,
                "{class:?}"
            );
        }
        assert_eq!(judge_probe(ProbeOutcome::Unknown), ProbeVerdict::Undecided);
    }

    #[test]
    fn the_reason_quotes_the_route_and_its_words() {
        let r = refused_alone_reason(
            "smtp",
            "SMTP end of data: 550 5.7.1 message content rejected",
        );
        assert!(r.starts_with("smtp refused this email alone: SMTP end of data: 550 5.7.1"));
        assert!(r.contains("not paused") && r.contains("not suppressed") && r.contains("redrive"));
    }
}
