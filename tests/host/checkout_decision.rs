//! Host tests of `domain::payment::checkout`: the 20-minute decision table, the card-testing rules at their
//! thresholds, the UTC day rule around midnight, and name/email normalization.

use booking_email_engine::domain::event::{CheckoutAttempt, EmailAddress, PersonName};
use booking_email_engine::domain::payment::action_token::OwnerAction;
use booking_email_engine::domain::payment::checkout::{
    card_testing, classify_decline, day_of, decide, follow_up_at, normalize_email, normalize_name,
    AttemptFacts, CheckoutInput, CheckoutOutcome, DeclineKind, HoldStatus, RiskReason, Thresholds,
    FOLLOW_UP_DELAY_MS,
};
use chrono::{NaiveDate, NaiveDateTime};

/// Milliseconds since the epoch of a UTC time `YYYY-MM-DD HH:MM:SS`.
fn utc_ms(s: &str) -> i64 {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
        .unwrap()
        .and_utc()
        .timestamp_millis()
}

fn noon() -> i64 {
    utc_ms("2026-03-02 12:00:00")
}

fn attempt(id: &str, email: Option<&str>, name: Option<&str>, at_ms: i64) -> AttemptFacts {
    AttemptFacts {
        prebook_id: id.into(),
        email: email.map(str::to_string),
        name: name.map(str::to_string),
        at_ms,
    }
}

/// An attempt `ms_before_noon` ms before noon that gave both an email and a name.
fn tried(id: &str, email: &str, name: &str, ms_before_noon: i64) -> AttemptFacts {
    attempt(id, Some(email), Some(name), noon() - ms_before_noon)
}

fn input() -> CheckoutInput {
    CheckoutInput {
        booked: false,
        newer_attempt: false,
        paid: false,
        has_email: true,
        risk: None,
    }
}

fn risk() -> RiskReason {
    RiskReason::EmailUnderNames {
        email: "a@example.com".into(),
        names: vec!["anna smith".into(), "bob jones".into()],
    }
}

// ---------------------------------------------------------------- timing

#[test]
fn decision_is_due_twenty_minutes_after_that_attempt() {
    assert_eq!(FOLLOW_UP_DELAY_MS, 1_200_000);
    assert_eq!(follow_up_at(noon()), utc_ms("2026-03-02 12:20:00"));
    // Three cards in ten minutes: each attempt has its own due time, the last one 20 minutes
    // after the last try (the earlier two are superseded).
    let last = utc_ms("2026-03-02 12:10:00");
    assert_eq!(follow_up_at(last), utc_ms("2026-03-02 12:30:00"));
}

// ---------------------------------------------------------------- decision table

#[test]
fn decision_table() {
    let cases: Vec<(&str, CheckoutInput, CheckoutOutcome)> = vec![
        ("unpaid → follow up", input(), CheckoutOutcome::FollowUp),
        (
            "booked → nothing",
            CheckoutInput {
                booked: true,
                ..input()
            },
            CheckoutOutcome::Booked,
        ),
        (
            "newer attempt → nothing",
            CheckoutInput {
                newer_attempt: true,
                ..input()
            },
            CheckoutOutcome::Superseded,
        ),
        (
            "paid → nothing",
            CheckoutInput {
                paid: true,
                ..input()
            },
            CheckoutOutcome::Paid,
        ),
        (
            "risky → hold",
            CheckoutInput {
                risk: Some(risk()),
                ..input()
            },
            CheckoutOutcome::Hold(risk()),
        ),
        (
            "no email → no contact",
            CheckoutInput {
                has_email: false,
                ..input()
            },
            CheckoutOutcome::NoContact,
        ),
        // Precedence.
        (
            "booked beats everything",
            CheckoutInput {
                booked: true,
                paid: true,
                newer_attempt: true,
                has_email: false,
                risk: Some(risk()),
            },
            CheckoutOutcome::Booked,
        ),
        (
            "paid beats newer attempt and risk",
            CheckoutInput {
                paid: true,
                newer_attempt: true,
                risk: Some(risk()),
                ..input()
            },
            CheckoutOutcome::Paid,
        ),
        (
            "newer attempt beats risk (the newest attempt decides)",
            CheckoutInput {
                newer_attempt: true,
                risk: Some(risk()),
                ..input()
            },
            CheckoutOutcome::Superseded,
        ),
        (
            "risk without email is still held",
            CheckoutInput {
                has_email: false,
                risk: Some(risk()),
                ..input()
            },
            CheckoutOutcome::Hold(risk()),
        ),
    ];
    for (name, input, expected) in cases {
        assert_eq!(decide(&input), expected, "{name}");
    }
}

#[test]
fn outcome_names_are_stable() {
    assert_eq!(CheckoutOutcome::FollowUp.as_str(), "follow_up");
    assert_eq!(CheckoutOutcome::Hold(risk()).as_str(), "hold");
    assert_eq!(CheckoutOutcome::NoContact.as_str(), "no_contact");
    assert_eq!(CheckoutOutcome::Superseded.as_str(), "superseded");
    assert_eq!(CheckoutOutcome::Booked.as_str(), "booked");
    assert_eq!(CheckoutOutcome::Paid.as_str(), "paid");
    // The stored name is the JSON tag too.
    let json = serde_json::to_value(CheckoutOutcome::FollowUp).unwrap();
    assert_eq!(json["outcome"], "follow_up");
}

#[test]
fn hold_statuses_are_stored_by_name_and_follow_the_owner_action() {
    for (status, name) in [
        (HoldStatus::Held, "held"),
        (HoldStatus::Acted, "acted"),
        (HoldStatus::Dismissed, "dismissed"),
    ] {
        assert_eq!(status.as_str(), name);
        assert_eq!(HoldStatus::parse(name), Some(status));
        assert_eq!(
            serde_json::to_string(&status).unwrap(),
            format!("\"{name}\"")
        );
    }
    assert_eq!(HoldStatus::parse("HELD"), None);
    assert_eq!(
        HoldStatus::after(OwnerAction::Dismiss),
        HoldStatus::Dismissed
    );
    assert_eq!(
        HoldStatus::after(OwnerAction::SendInsufficientFunds),
        HoldStatus::Acted
    );
    assert_eq!(
        HoldStatus::after(OwnerAction::SendSecurityCheck),
        HoldStatus::Acted
    );
}

// ---------------------------------------------------------------- card testing

/// [`card_testing`] of `me` among `others` with the default thresholds.
fn risk_of(me: &AttemptFacts, others: &[AttemptFacts]) -> Option<RiskReason> {
    card_testing(me, others, &Thresholds::default())
}

#[test]
fn one_email_under_two_names_is_risky_one_name_is_not() {
    let me = tried("pb3", "a@example.com", "Bob Jones", 0);
    let one_name = [
        tried("pb1", "a@example.com", "Bob Jones", 60_000),
        attempt("pb2", Some("a@example.com"), None, noon() - 30_000),
    ];
    assert_eq!(risk_of(&me, &one_name), None);

    let two_names = [tried("pb1", "A@Example.com", "Anna Smith", 60_000)];
    assert_eq!(
        risk_of(&me, &two_names),
        Some(RiskReason::EmailUnderNames {
            email: "a@example.com".into(),
            names: vec!["anna smith".into(), "bob jones".into()],
        })
    );
}

#[test]
fn one_name_with_three_emails_is_risky_two_is_not() {
    let me = tried("pb3", "c@example.com", "Testa Guestington", 0);
    let two = [tried("pb1", "a@example.com", "Testa Guestington", 60_000)];
    assert_eq!(risk_of(&me, &two), None);

    let three = [
        two[0].clone(),
        tried("pb2", "b@example.com", "Testa Guestington", 30_000),
    ];
    assert_eq!(
        risk_of(&me, &three),
        Some(RiskReason::NameWithEmails {
            name: "testa guestington".into(),
            emails: vec![
                "a@example.com".into(),
                "b@example.com".into(),
                "c@example.com".into()
            ],
        })
    );
}

#[test]
fn same_name_with_other_case_and_spacing_counts_once() {
    let me = tried("pb2", "a@example.com", "  testa   GUESTINGTON ", 0);
    let same = [tried("pb1", "a@example.com", "Testa Guestington", 60_000)];
    assert_eq!(risk_of(&me, &same), None);
    assert_eq!(
        normalize_name("  testa \t  GUESTINGTON "),
        "testa guestington"
    );
    assert_eq!(normalize_name("ÉLODIE  Dupont"), "élodie dupont");
    assert_eq!(normalize_email(" Guest@Example.COM "), "guest@example.com");
}

#[test]
fn the_same_email_in_other_case_is_one_email() {
    let me = tried("pb3", "A@EXAMPLE.COM", "Testa Guestington", 0);
    let others = [
        tried("pb1", "a@example.com", "Testa Guestington", 1),
        tried("pb2", "b@example.com", "testa guestington", 2),
    ];
    // Two distinct emails only.
    assert_eq!(risk_of(&me, &others), None);
}

#[test]
fn the_attempt_itself_is_counted_once_even_when_listed() {
    let me = tried("pb2", "a@example.com", "Bob Jones", 0);
    let listed = [me.clone(), me.clone()];
    assert_eq!(risk_of(&me, &listed), None);
}

#[test]
fn thresholds_come_from_configuration() {
    let me = tried("pb3", "c@example.com", "Testa Guestington", 0);
    let others = [
        tried("pb1", "a@example.com", "Testa Guestington", 1),
        tried("pb2", "b@example.com", "Testa Guestington", 2),
    ];
    let strict = Thresholds {
        names_per_email: 2,
        emails_per_name: 4,
    };
    assert_eq!(card_testing(&me, &others, &strict), None);
    let lenient = Thresholds {
        names_per_email: 3,
        emails_per_name: 2,
    };
    assert!(matches!(
        card_testing(&me, &others[..1], &lenient),
        Some(RiskReason::NameWithEmails { .. })
    ));
    // Below 2 is read as 2: a single name or email alone is never a pattern.
    let zero = Thresholds {
        names_per_email: 0,
        emails_per_name: 1,
    };
    assert_eq!(card_testing(&me, &[], &zero), None);
}

#[test]
fn email_rule_is_checked_first() {
    let t = Thresholds {
        names_per_email: 2,
        emails_per_name: 2,
    };
    let me = tried("pb3", "a@example.com", "Anna Smith", 0);
    let others = [
        tried("pb1", "a@example.com", "Bob Jones", 1),
        tried("pb2", "b@example.com", "Anna Smith", 2),
    ];
    assert!(matches!(
        card_testing(&me, &others, &t),
        Some(RiskReason::EmailUnderNames { .. })
    ));
}

#[test]
fn attempts_without_email_or_name_are_never_risky() {
    let me = attempt("pb1", None, None, noon());
    let others = [
        attempt("pb2", None, Some("Anna Smith"), noon()),
        attempt("pb3", Some("a@example.com"), None, noon()),
    ];
    assert_eq!(risk_of(&me, &others), None);
}

// ---------------------------------------------------------------- the UTC day

#[test]
fn day_is_the_utc_calendar_day() {
    for (at_ms, day) in [
        (utc_ms("2026-03-02 23:59:00"), 2),
        (utc_ms("2026-03-03 00:01:00"), 3),
        (utc_ms("2026-03-02 23:59:59") + 999, 2),
        (utc_ms("2026-03-03 00:00:00"), 3),
    ] {
        assert_eq!(
            day_of(at_ms),
            NaiveDate::from_ymd_opt(2026, 3, day).unwrap(),
            "{at_ms}"
        );
    }
}

#[test]
fn attempts_either_side_of_midnight_utc_are_different_days() {
    let before = attempt(
        "pb1",
        Some("a@example.com"),
        Some("Anna Smith"),
        utc_ms("2026-03-02 23:59:00"),
    );
    let after = attempt(
        "pb2",
        Some("a@example.com"),
        Some("Bob Jones"),
        utc_ms("2026-03-03 00:01:00"),
    );
    // Two minutes apart, but on two UTC days: neither day has two names.
    assert_eq!(risk_of(&after, std::slice::from_ref(&before)), None);
    assert_eq!(risk_of(&before, std::slice::from_ref(&after)), None);
    // The same two attempts inside one day are risky.
    let same_day = attempt(
        "pb2",
        Some("a@example.com"),
        Some("Bob Jones"),
        utc_ms("2026-03-02 00:01:00"),
    );
    assert!(risk_of(&same_day, &[before]).is_some());
}

// ---------------------------------------------------------------- facts and decline codes

#[test]
fn facts_of_a_canonical_attempt_are_normalized() {
    let a = CheckoutAttempt {
        prebook_id: "PB_1".into(),
        transaction_id: None,
        client_reference: None,
        email: Some(EmailAddress::parse("Guest@Example.com").unwrap()),
        guest_name: Some(PersonName {
            first_name: " Testa".into(),
            last_name: "GUESTINGTON ".into(),
        }),
        hotel_id: None,
        hotel_name: None,
        checkin: None,
        checkout: None,
        price: None,
    };
    assert_eq!(
        AttemptFacts::of(&a, 7),
        attempt(
            "PB_1",
            Some("guest@example.com"),
            Some("testa guestington"),
            7
        )
    );
    let nameless = CheckoutAttempt {
        guest_name: Some(PersonName::default()),
        ..a
    };
    assert_eq!(AttemptFacts::of(&nameless, 7).name, None);
}

#[test]
fn decline_codes_point_the_owner_to_an_action() {
    assert_eq!(
        classify_decline("insufficient_funds"),
        DeclineKind::InsufficientFunds
    );
    assert_eq!(
        classify_decline(" Card_Velocity_Exceeded "),
        DeclineKind::InsufficientFunds
    );
    assert_eq!(classify_decline("fraudulent"), DeclineKind::SecurityCheck);
    assert_eq!(classify_decline("do_not_honor"), DeclineKind::SecurityCheck);
    assert_eq!(classify_decline("incorrect_cvc"), DeclineKind::CardDetails);
    assert_eq!(classify_decline("something_new"), DeclineKind::Other);
    assert_eq!(
        DeclineKind::InsufficientFunds.suggested_action(),
        Some(OwnerAction::SendInsufficientFunds)
    );
    assert_eq!(
        DeclineKind::SecurityCheck.suggested_action(),
        Some(OwnerAction::SendSecurityCheck)
    );
    assert_eq!(DeclineKind::Other.suggested_action(), None);
}

#[test]
fn risk_reasons_serialize_with_their_rule() {
    let json = serde_json::to_value(risk()).unwrap();
    assert_eq!(json["rule"], "email_under_names");
    let back: RiskReason = serde_json::from_value(json).unwrap();
    assert_eq!(back, risk());
    assert!(risk().plain_words().contains("a@example.com"));
}
