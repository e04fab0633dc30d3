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
//! | refused with [`ProviderErrorClass::MessageRefused`] too, sharing no content with a set-aside email (or the cycle's [`MAX_PROBES`]th probe) | [`ProbeVerdict::RouteAtFault`] | back in line, its attempt not counted | paused like a refusal of ours, one owner alert |
//! | refused for the route's own cause (quota, credentials, configuration) | [`ProbeVerdict::RoutePaused`] | back in line unjudged, its attempt not counted | paused for that cause |
//! | refused with [`ProviderErrorClass::MessageRefused`], sharing content with a set-aside email, fewer than [`MAX_PROBES`] probes so far | [`ProbeVerdict::SetAsideToo`] | still set aside, and the probe with it; the next hand-over decides | unchanged |
//! | anything else (a retry, the probe's own recipient refused, no answer) | [`ProbeVerdict::Undecided`] | still set aside; the next hand-over on the route decides | unchanged |
//!
//! A set-aside email with nothing behind it to probe with is tried again when its backoff ends,
//! like a transient failure: refused so each time, it becomes a dead letter at the attempt ceiling.
//!
//! A refused probe only says "the route is ours to fix" when it shares no untrusted content with
//! the emails set aside ([`shares_content`]): one partner's two bookings whose text a relay's
//! content filter refuses, or a booking's owner alert quoting the guest's words, would otherwise
//! be each other's probe and pause the route for every guest. A probe that shares content and is
//! refused the same way is set aside too ([`ProbeVerdict::SetAsideToo`]) and the next email
//! probes; at most [`MAX_PROBES`] probes per refusal cycle (counted by booking, see
//! [`probe_number`]), then the route pauses as above.

use super::ProviderErrorClass;
use crate::domain::email::EmailKind;
use crate::domain::event::ownership::Owner;

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
    /// The probe shares content with an email set aside and was refused the same way: it says
    /// nothing about the route; it is set aside too and the next email probes.
    SetAsideToo,
}

/// Most probes in one refusal cycle (from the first email set aside on a route until a verdict
/// clears the route's set-aside emails), counted by booking: emails of a booking already set aside
/// in the cycle (its guest email, the owner's alert quoting it, an alert about that alert) are no
/// new probe. The probe of the cycle's third new booking, refused the same way, pauses the route
/// even when it shares content with an email set aside, so a route that refuses everything is
/// still paused after a few tries however one-sided its queue.
pub const MAX_PROBES: u32 = 3;

/// Where an email's untrusted text (supplier's or guest's) comes from, as far as the probe rule
/// needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentOrigin {
    /// Written by the engine alone (a provider pause, a backlog forecast): no supplier or guest
    /// text.
    Engine,
    /// About booking `booking_id`, whose owner is `owner` (its source, and for the generic source
    /// its partner, as one name such as `generic/acme`; `None` when the booking is not found).
    Booking {
        booking_id: String,
        owner: Option<String>,
    },
    /// Any other email: its text's origin is not known.
    Unknown,
}

/// Whether two emails may carry the same untrusted text: `false` only when one is written by the
/// engine alone, or when they are about different bookings of two known, different owners. The
/// same booking (its guest email and the owner's alert quoting it), the same owner (one partner's
/// two bookings) or an unknown origin may share it.
pub fn shares_content(a: &ContentOrigin, b: &ContentOrigin) -> bool {
    match (a, b) {
        (ContentOrigin::Engine, _) | (_, ContentOrigin::Engine) => false,
        (
            ContentOrigin::Booking {
                booking_id: a_id,
                owner: Some(a_owner),
            },
            ContentOrigin::Booking {
                booking_id: b_id,
                owner: Some(b_owner),
            },
        ) => a_id == b_id || a_owner == b_owner,
        _ => true,
    }
}

/// The origin of an email's text: `kind` and `booking_id` as the email carries them, `owner` the
/// booking's owner as stored (`None` when it is not found or the email is about no booking). Only
/// the provider-pause alert is written by the engine alone; every other email about no booking
/// (checkout mail, a backlog forecast listing booking ids, a guest conversation) is
/// [`ContentOrigin::Unknown`].
pub fn content_origin(
    kind: EmailKind,
    booking_id: Option<&str>,
    owner: Option<&Owner>,
) -> ContentOrigin {
    match (kind, booking_id) {
        (EmailKind::OwnerProviderPaused, _) => ContentOrigin::Engine,
        (_, Some(id)) => ContentOrigin::Booking {
            booking_id: id.to_string(),
            owner: owner.map(ToString::to_string),
        },
        (_, None) => ContentOrigin::Unknown,
    }
}

/// A probe's number in its refusal cycle ([`Probe::probe_number`]): `set_aside` are the bookings
/// of the emails set aside on the route (`None` for an email about no booking), `probe` the
/// probe's. Each distinct booking beyond the first counts once; each email about no booking
/// counts alone.
pub fn probe_number(set_aside: &[Option<&str>], probe: Option<&str>) -> u32 {
    let mut bookings: Vec<&str> = Vec::new();
    let mut unbooked = 0u32;
    for key in set_aside.iter().copied().chain(std::iter::once(probe)) {
        match key {
            Some(id) if !bookings.contains(&id) => bookings.push(id),
            Some(_) => {}
            None => unbooked += 1,
        }
    }
    (u32::try_from(bookings.len()).unwrap_or(u32::MAX) + unbooked).saturating_sub(1)
}

/// A probe as the verdict needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub outcome: ProbeOutcome,
    /// The probe shares content with an email set aside on the route ([`shares_content`]).
    pub shares_content: bool,
    /// This probe's number in its refusal cycle, counted by booking: how many bookings (each email
    /// about no booking counted alone) the emails set aside on the route and this probe are
    /// about, less the first. 0 for an email of a booking already set aside.
    pub probe_number: u32,
}

/// Judges a probe (see the module's table): a refusal of the message's kind by a probe that
/// shares content with an email set aside sets the probe aside too, unless it is the cycle's
/// [`MAX_PROBES`]th probe.
pub fn judge_probe(probe: Probe) -> ProbeVerdict {
    use ProviderErrorClass::*;
    match probe.outcome {
        ProbeOutcome::Accepted => ProbeVerdict::SuspectAlone,
        ProbeOutcome::Refused(MessageRefused)
            if probe.shares_content && probe.probe_number < MAX_PROBES =>
        {
            ProbeVerdict::SetAsideToo
        }
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

    fn independent(outcome: ProbeOutcome) -> Probe {
        Probe {
            outcome,
            shares_content: false,
            probe_number: 1,
        }
    }

    #[test]
    fn every_outcome_of_an_independent_probe_has_its_verdict() {
        assert_eq!(
            judge_probe(independent(ProbeOutcome::Accepted)),
            ProbeVerdict::SuspectAlone
        );
        assert_eq!(
            judge_probe(independent(ProbeOutcome::Refused(MessageRefused))),
            ProbeVerdict::RouteAtFault
        );
        for class in [DailyLimit, CredentialsRejected, Configuration] {
            assert_eq!(
                judge_probe(independent(ProbeOutcome::Refused(class))),
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
                judge_probe(independent(ProbeOutcome::Refused(class))),
                ProbeVerdict::Undecided,
                "{class:?}"
            );
        }
        assert_eq!(
            judge_probe(independent(ProbeOutcome::Unknown)),
            ProbeVerdict::Undecided
        );
    }

    #[test]
    fn a_probe_sharing_content_is_set_aside_too_until_the_third_probe() {
        let shared = |outcome, probe_number| Probe {
            outcome,
            shares_content: true,
            probe_number,
        };
        let refused = ProbeOutcome::Refused(MessageRefused);
        // Another email of a booking already set aside (the owner's alert quoting the guest's
        // confirmation): never a new probe, never a pause.
        assert_eq!(judge_probe(shared(refused, 0)), ProbeVerdict::SetAsideToo);
        assert_eq!(judge_probe(shared(refused, 1)), ProbeVerdict::SetAsideToo);
        assert_eq!(judge_probe(shared(refused, 2)), ProbeVerdict::SetAsideToo);
        // The cycle's third new booking, refused the same way: the route pauses as before.
        assert_eq!(judge_probe(shared(refused, 3)), ProbeVerdict::RouteAtFault);
        assert_eq!(judge_probe(shared(refused, 7)), ProbeVerdict::RouteAtFault);
        // Shared content changes nothing else: accepted still clears the route, a refusal of ours
        // still pauses, anything else still says nothing.
        assert_eq!(
            judge_probe(shared(ProbeOutcome::Accepted, 1)),
            ProbeVerdict::SuspectAlone
        );
        assert_eq!(
            judge_probe(shared(ProbeOutcome::Refused(CredentialsRejected), 0)),
            ProbeVerdict::RoutePaused
        );
        assert_eq!(
            judge_probe(shared(ProbeOutcome::Refused(Transient), 0)),
            ProbeVerdict::Undecided
        );
        assert_eq!(
            judge_probe(shared(ProbeOutcome::Unknown, 0)),
            ProbeVerdict::Undecided
        );
    }

    fn booking(id: &str, owner: Option<&str>) -> ContentOrigin {
        ContentOrigin::Booking {
            booking_id: id.into(),
            owner: owner.map(Into::into),
        }
    }

    #[test]
    fn probes_are_counted_by_booking() {
        // A partner's two bookings: A1's guest email set aside, its owner alert, then A2's.
        assert_eq!(probe_number(&[Some("A1")], Some("A1")), 0);
        assert_eq!(probe_number(&[Some("A1"), Some("A1")], Some("A2")), 1);
        assert_eq!(probe_number(&[Some("A1"), Some("A2")], Some("A2")), 1);
        assert_eq!(probe_number(&[Some("A1"), Some("A2")], Some("A3")), 2);
        assert_eq!(
            probe_number(&[Some("A1"), Some("A2"), Some("A3")], Some("A4")),
            3
        );
        // Emails about no booking each count alone.
        assert_eq!(probe_number(&[None], None), 1);
        assert_eq!(probe_number(&[None, Some("A1")], None), 2);
        assert_eq!(probe_number(&[], Some("A1")), 0);
    }

    #[test]
    fn the_origin_names_the_booking_and_its_owner() {
        use crate::domain::event::Source;
        let acme = Owner::new(Source::Generic, Some("acme"));
        let a = content_origin(EmailKind::BookingConfirmation, Some("A1"), Some(&acme));
        let alert = content_origin(EmailKind::OwnerNewBooking, Some("A2"), Some(&acme));
        assert_eq!(
            a,
            ContentOrigin::Booking {
                booking_id: "A1".into(),
                owner: Some(acme.to_string())
            }
        );
        assert!(shares_content(&a, &alert), "one partner's two bookings");
        let lite = Owner::new(Source::Liteapi, None);
        let other = content_origin(EmailKind::OwnerNewBooking, Some("L1"), Some(&lite));
        assert!(!shares_content(&a, &other));
        assert_eq!(
            content_origin(EmailKind::OwnerProviderPaused, None, None),
            ContentOrigin::Engine
        );
        assert_eq!(
            content_origin(EmailKind::CheckoutNotCompleted, None, None),
            ContentOrigin::Unknown
        );
        assert_eq!(
            content_origin(EmailKind::BookingConfirmation, Some("Z"), None),
            ContentOrigin::Booking {
                booking_id: "Z".into(),
                owner: None
            }
        );
    }

    #[test]
    fn only_different_bookings_of_different_known_owners_or_engine_text_share_nothing() {
        let acme_a = booking("A1", Some("generic/acme"));
        let acme_b = booking("A2", Some("generic/acme"));
        let lite = booking("L1", Some("liteapi"));
        // One partner's two bookings; a booking's guest email and its owner alert.
        assert!(shares_content(&acme_a, &acme_b));
        assert!(shares_content(&acme_a, &acme_a.clone()));
        // Another source's booking.
        assert!(!shares_content(&acme_a, &lite));
        assert!(!shares_content(&lite, &acme_b));
        // Another partner of the generic source.
        assert!(!shares_content(
            &acme_a,
            &booking("B1", Some("generic/other"))
        ));
        // The same booking id under two owners still shares (it is the same record's text).
        assert!(shares_content(&acme_a, &booking("A1", Some("liteapi"))));
        // An owner not found, or no booking at all: not known to be independent.
        assert!(shares_content(&acme_a, &booking("X", None)));
        assert!(shares_content(&booking("X", None), &lite));
        assert!(shares_content(&acme_a, &ContentOrigin::Unknown));
        assert!(shares_content(
            &ContentOrigin::Unknown,
            &ContentOrigin::Unknown
        ));
        // The engine's own text shares nothing with anything.
        assert!(!shares_content(&ContentOrigin::Engine, &acme_a));
        assert!(!shares_content(
            &ContentOrigin::Unknown,
            &ContentOrigin::Engine
        ));
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
