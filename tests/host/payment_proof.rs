//! Proof before any refund (`booking_email_engine::domain::payment::payment_proof`): which records link a
//! Checkout Session to a compensation, and every way a payment intent fails to be proven, with
//! the amount fixed by Stripe's figures (never by a payment webhook's body).

use booking_email_engine::domain::payment::payment_proof::{
    intent_to_prove, is_intent_id, judge, links, Expected, Link, LinkKind, Lookup, Record,
    StripeIntent, StripeSession, Verdict,
};
use booking_email_engine::domain::payment::refund_ask::RefundAsk;

const FAILURE_AT: i64 = 1_000_000;

fn intent(id: &str) -> StripeIntent {
    StripeIntent {
        id: id.into(),
        status: "succeeded".into(),
        currency: Some("EUR".into()),
        amount_received: 54_000,
        refundable_minor: Some(54_000),
    }
}

fn session(pi: &str, reference: Option<&str>, metadata: &[(&str, &str)]) -> StripeSession {
    StripeSession {
        id: format!("cs_{pi}"),
        payment_intent: Some(pi.into()),
        client_reference_id: reference.map(str::to_string),
        metadata: metadata
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn lookup(intent: Option<StripeIntent>, sessions: Vec<StripeSession>) -> Result<Lookup, String> {
    Ok(Lookup {
        hint: "pi_1".into(),
        intent,
        sessions,
    })
}

const LINKS: [Link; 1] = [Link {
    id: "trip_1",
    kind: LinkKind::Checkout,
}];

fn eur(minor: i64) -> RefundAsk {
    RefundAsk::UpTo {
        minor,
        currency: "EUR".into(),
    }
}

fn fee(minor: i64) -> RefundAsk {
    RefundAsk::LessFee {
        minor,
        currency: "EUR".into(),
    }
}

fn verdict(ask: &RefundAsk, l: Result<Lookup, String>) -> Verdict {
    judge(&Expected { links: &LINKS, ask }, Some(&l))
}

fn proven(v: Verdict) -> (String, i64, String, String) {
    match v {
        Verdict::Proven(p) => (p.payment_intent, p.amount_minor, p.currency, p.evidence),
        other => panic!("not proven: {other:?}"),
    }
}

fn not_proven(v: Verdict) -> String {
    match v {
        Verdict::NotProven { why } => why,
        other => panic!("expected not proven: {other:?}"),
    }
}

fn paid() -> Result<Lookup, String> {
    lookup(
        Some(intent("pi_1")),
        vec![session("pi_1", Some("trip_1"), &[])],
    )
}

fn record(reference: &str) -> Record<'_> {
    Record {
        kind: LinkKind::Checkout,
        client_reference: Some(reference),
        same_owner: true,
        created_at_ms: FAILURE_AT - 1,
        reference_shared: false,
    }
}

#[test]
fn a_reference_links_only_when_its_owners_record_predates_the_failure_and_nobody_else_records_it() {
    let own = record("trip_own");
    let booking = Record {
        kind: LinkKind::Booking,
        ..record("trip_booked")
    };
    let other_owner = Record {
        same_owner: false,
        ..record("trip_victim")
    };
    let shared = Record {
        reference_shared: true,
        ..record("trip_shared")
    };
    let same_time = Record {
        created_at_ms: FAILURE_AT,
        ..record("trip_same_breath")
    };
    let later = Record {
        created_at_ms: FAILURE_AT + 5,
        ..record("trip_later")
    };
    let blank = Record {
        client_reference: Some("  "),
        ..record("")
    };
    let none = Record {
        client_reference: None,
        ..record("")
    };
    let twice = record(" trip_own ");
    let got = links(
        &[
            own,
            other_owner,
            shared,
            same_time,
            later,
            blank,
            none,
            booking,
            twice,
        ],
        FAILURE_AT,
    );
    assert_eq!(
        got,
        [
            Link {
                id: "trip_own",
                kind: LinkKind::Checkout
            },
            Link {
                id: "trip_booked",
                kind: LinkKind::Booking
            }
        ]
    );
    assert!(links(&[], FAILURE_AT).is_empty());
}

#[test]
fn linked_by_client_reference_id_everything_remaining_is_named_never_left_to_stripes_default() {
    let (pi, amount, currency, evidence) = proven(verdict(&RefundAsk::All, paid()));
    assert_eq!(
        (pi.as_str(), amount, currency.as_str()),
        ("pi_1", 54_000, "EUR")
    );
    assert!(
        evidence.contains(
            "Checkout Session cs_pi_1 client_reference_id is this compensation's client reference trip_1 (its checkout attempt, recorded for the same owner before the failure)"
        ),
        "{evidence}"
    );
    assert!(evidence.contains("EUR 540.00 captured"), "{evidence}");
}

#[test]
fn linked_by_a_reference_metadata_key_but_never_by_a_booking_or_prebook_id_key() {
    let l = lookup(
        Some(intent("pi_1")),
        vec![session("pi_1", Some("cart-9"), &[("trip_id", "trip_1")])],
    );
    assert!(proven(verdict(&RefundAsk::All, l))
        .3
        .contains("metadata.trip_id is this compensation's client reference trip_1"));
    // A supplier's booking id may equal another booking's client reference: it never links.
    for key in ["booking_id", "prebook_id"] {
        let l = lookup(
            Some(intent("pi_1")),
            vec![session("pi_1", None, &[(key, "trip_1")])],
        );
        let why = not_proven(verdict(&RefundAsk::All, l));
        assert!(why.contains(&format!("metadata.{key} trip_1")), "{why}");
    }
}

#[test]
fn a_session_of_another_reference_proves_nothing_and_says_what_stripe_returned() {
    let l = lookup(
        Some(intent("pi_1")),
        vec![session(
            "pi_1",
            Some("trip_victim"),
            &[("trip_id", "trip_victim")],
        )],
    );
    let why = not_proven(verdict(&RefundAsk::All, l));
    assert_eq!(
        why,
        "Checkout Session cs_pi_1 names client_reference_id trip_victim, metadata.trip_id trip_victim of payment intent pi_1: none of this compensation's client references (trip_1)"
    );
    // No record of the owner before the failure: no reference links at all.
    let why = not_proven(judge(
        &Expected {
            links: &[],
            ask: &RefundAsk::All,
        },
        Some(&paid()),
    ));
    assert!(
        why.ends_with("none of this compensation's client references (none recorded for its owner before the failure)"),
        "{why}"
    );
}

#[test]
fn no_intent_no_session_another_intent_or_an_unfinished_payment_proves_nothing() {
    assert_eq!(
        not_proven(judge(
            &Expected {
                links: &LINKS,
                ask: &RefundAsk::All
            },
            None
        )),
        "no Stripe payment intent is known for it (nothing recorded or named is one)"
    );
    assert_eq!(
        not_proven(verdict(&RefundAsk::All, lookup(None, vec![]))),
        "Stripe has no payment intent pi_1"
    );
    assert!(not_proven(verdict(
        &RefundAsk::All,
        lookup(Some(intent("pi_1")), vec![])
    ))
    .starts_with("no Checkout Session created payment intent pi_1"));
    // A session listed for another intent (Stripe filters by intent; checked again) is none.
    let l = lookup(
        Some(intent("pi_1")),
        vec![session("pi_2", Some("trip_1"), &[])],
    );
    assert!(not_proven(verdict(&RefundAsk::All, l)).starts_with("no Checkout Session"));
    // Stripe answering about another intent than the one asked proves nothing.
    let l = lookup(
        Some(intent("pi_2")),
        vec![session("pi_2", Some("trip_1"), &[])],
    );
    assert_eq!(
        not_proven(verdict(&RefundAsk::All, l)),
        "Stripe answered payment intent pi_2 for pi_1"
    );
    let mut processing = intent("pi_1");
    processing.status = "processing".into();
    let l = lookup(Some(processing), vec![session("pi_1", Some("trip_1"), &[])]);
    assert!(not_proven(verdict(&RefundAsk::All, l)).contains("is processing, not succeeded"));
}

#[test]
fn a_supplier_figure_in_another_currency_proves_nothing() {
    let mut usd = intent("pi_1");
    usd.currency = Some("usd".into());
    let l = lookup(Some(usd), vec![session("pi_1", Some("trip_1"), &[])]);
    assert_eq!(
        not_proven(verdict(&eur(100), l.clone())),
        "payment intent pi_1 is in USD, the supplier's figure in EUR"
    );
    // Everything remaining is in Stripe's currency, whatever a webhook said.
    assert_eq!(proven(verdict(&RefundAsk::All, l)).2, "USD");
}

#[test]
fn the_amount_is_fixed_by_what_stripe_says_was_captured_never_by_a_webhook() {
    // The supplier's refund, capped at what Stripe captured.
    assert_eq!(proven(verdict(&eur(49_950), paid())).1, 49_950);
    assert_eq!(proven(verdict(&eur(60_000), paid())).1, 54_000);
    // The fee subtracted from Stripe's captured amount.
    assert_eq!(proven(verdict(&fee(4_050), paid())).1, 49_950);
    // Fee covering the capture, or a supplier refunding nothing: covered, nothing to refund.
    for ask in [fee(54_000), fee(60_000), eur(0)] {
        match verdict(&ask, paid()) {
            Verdict::Covered { why, currency } => {
                assert!(
                    why.contains("EUR 540.00 Stripe says payment intent pi_1 captured"),
                    "{why}"
                );
                assert_eq!(currency, "EUR");
            }
            other => panic!("{ask:?}: {other:?}"),
        }
    }
}

#[test]
fn refunds_made_already_bound_the_amount() {
    let mut partly = intent("pi_1");
    partly.refundable_minor = Some(20_000);
    let l = lookup(Some(partly), vec![session("pi_1", Some("trip_1"), &[])]);
    let why = not_proven(verdict(&eur(49_950), l.clone()));
    assert!(
        why.contains("the refund of EUR 499.50 is above what remains refundable on payment intent pi_1 (EUR 200.00)"),
        "{why}"
    );
    assert!(not_proven(verdict(&fee(100), l.clone())).contains("EUR 539.00 is above"));
    assert_eq!(proven(verdict(&RefundAsk::All, l)).1, 20_000);
    let mut spent = intent("pi_1");
    spent.refundable_minor = Some(0);
    let l = lookup(Some(spent), vec![session("pi_1", Some("trip_1"), &[])]);
    assert!(not_proven(verdict(&RefundAsk::All, l)).contains("nothing remains refundable"));
    // A charge reporting more than the intent received is bounded by the intent.
    let mut odd = intent("pi_1");
    odd.refundable_minor = Some(99_000);
    let l = lookup(Some(odd), vec![session("pi_1", Some("trip_1"), &[])]);
    assert_eq!(proven(verdict(&RefundAsk::All, l)).1, 54_000);
    // No charge returned: what the intent received is the bound.
    let mut bare = intent("pi_1");
    bare.refundable_minor = None;
    let l = lookup(Some(bare), vec![session("pi_1", Some("trip_1"), &[])]);
    assert_eq!(proven(verdict(&RefundAsk::All, l)).1, 54_000);
}

#[test]
fn stripe_unreachable_is_a_retry_never_a_verdict() {
    assert_eq!(
        verdict(&RefundAsk::All, Err("Stripe did not answer".into())),
        Verdict::Retry {
            why: "Stripe did not answer".into()
        }
    );
}

#[test]
fn the_intent_proven_is_the_one_the_plan_judged() {
    // The plan judged an intent: that one, never the failure's named one instead.
    assert_eq!(
        intent_to_prove(Some("pi_own"), Some("pi_victim")).as_deref(),
        Some("pi_own")
    );
    // A plan intent that is no Stripe id: nothing to look up (never the named one either).
    assert_eq!(
        intent_to_prove(Some("pi_1/../refunds"), Some("pi_victim")),
        None
    );
    // The plan judged none (a payment recorded without an intent): the failure's, if it is one.
    assert_eq!(
        intent_to_prove(None, Some(" pi_named ")).as_deref(),
        Some("pi_named")
    );
    assert_eq!(intent_to_prove(None, Some("ch_3")), None);
    assert_eq!(intent_to_prove(None, None), None);
    for bad in ["pi_", "pi_2/../../v1/refunds", "ch_3", "", "pi_\u{e9}"] {
        assert!(!is_intent_id(bad), "{bad}");
    }
    assert!(is_intent_id("pi_3Abc_9"));
}
