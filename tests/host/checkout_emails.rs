//! Host tests of the checkout emails and one-click pages (`domain::render`): keys, ranks,
//! audiences; customer emails carry only the retry link, no action token, no claimed decline;
//! the owner's alert carries its three links; pages POST and escape.

use crate::fixtures::branding;
use booking_email_engine::domain::email::{Audience, EmailKind, Rank};
use booking_email_engine::domain::event::{CheckoutAttempt, EmailAddress, Money, PersonName};
use booking_email_engine::domain::outbox::outgoing::OutgoingEmail;
use booking_email_engine::domain::payment::action_token::{sign, OwnerAction};
use booking_email_engine::domain::payment::checkout::RiskReason;
use booking_email_engine::domain::render::{
    action_confirm_page, action_result_page, checkout_declined, checkout_not_completed,
    owner_checkout_hold, ConfirmForm, OwnerInbox, RenderError,
};
use chrono::NaiveDate;

const RETRY: &str = "https://book.example.com/hotels/lp_fake_1001?checkin=2026-06-12";
const HOLD: &str = "hold-0123456789abcdef0123";
const KEY: &[u8] = b"test-action-signing-key-32-bytes-long!!";
const HOSTILE: &str = "<script>alert(1)</script> O'Brien & \"Co\"";

fn guest() -> EmailAddress {
    EmailAddress::parse("guest@example.com").unwrap()
}

fn owner() -> EmailAddress {
    EmailAddress::parse("owner@example.com").unwrap()
}

fn attempt() -> CheckoutAttempt {
    CheckoutAttempt {
        prebook_id: "PB_fake_9xYz".into(),
        transaction_id: Some("tr_fake_0001".into()),
        client_reference: Some("trip_fake_0001".into()),
        email: Some(guest()),
        guest_name: Some(PersonName {
            first_name: "Testa".into(),
            last_name: "Guestington".into(),
        }),
        hotel_id: Some("lp_fake_1001".into()),
        hotel_name: Some("Example Harbour Hotel".into()),
        checkin: NaiveDate::from_ymd_opt(2026, 6, 12),
        checkout: NaiveDate::from_ymd_opt(2026, 6, 15),
        price: Some(Money {
            amount: "540".into(),
            currency: "EUR".into(),
        }),
    }
}

fn risk() -> RiskReason {
    RiskReason::EmailUnderNames {
        email: "guest@example.com".into(),
        names: vec!["anna smith".into(), "testa guestington".into()],
    }
}

fn links() -> Vec<(OwnerAction, String)> {
    OwnerAction::ALL
        .iter()
        .map(|&a| {
            (
                a,
                format!(
                    "https://engine.example.com/actions/{}",
                    sign(HOLD, a, 1_767_830_400, KEY)
                ),
            )
        })
        .collect()
}

fn both(e: &OutgoingEmail) -> [&str; 3] {
    [e.text.as_str(), e.html.as_str(), e.subject.as_str()]
}

/// Every `http` occurrence in `s` starts the retry URL (HTML may escape its `&`, `=`…).
fn only_retry_links(s: &str) {
    let escaped = RETRY.replace('=', "&#61;");
    for (i, _) in s.match_indices("http") {
        let rest = &s[i..];
        assert!(
            rest.starts_with(RETRY) || rest.starts_with(&escaped),
            "unexpected link at {}: {s}",
            &rest[..rest.len().min(60)]
        );
    }
}

fn no_action_links(s: &str) {
    let lower = s.to_lowercase();
    for needle in ["/actions/", "/admin", "token", "hold-", "dismiss"] {
        assert!(
            !lower.contains(needle),
            "customer email contains {needle}: {s}"
        );
    }
    for (_, url) in links() {
        let token = url.rsplit('/').next().unwrap();
        assert!(!s.contains(token));
        assert!(!s.contains(&token[..16]));
    }
}

// ---------------------------------------------------------------- not completed

#[test]
fn not_completed_kind_key_rank_and_audience() {
    let e = checkout_not_completed(&attempt(), &guest(), RETRY, &branding()).unwrap();
    assert_eq!(e.kind, EmailKind::CheckoutNotCompleted);
    assert_eq!(e.dedupe_key.as_str(), "checkout_not_completed:PB_fake_9xYz");
    assert_eq!(e.rank, Rank::Service);
    assert_eq!(e.audience, Audience::Client);
    assert_eq!(e.to, guest());
    assert_eq!(e.booking_id, None);
    assert_eq!(
        e.subject,
        "Your booking wasn\u{2019}t completed \u{2014} nothing was charged"
    );
}

#[test]
fn not_completed_is_honest_and_explains_both_reasons() {
    let e = checkout_not_completed(&attempt(), &guest(), RETRY, &branding()).unwrap();
    for part in both(&e) {
        assert!(
            !part.to_lowercase().contains("decline"),
            "must not claim a decline: {part}"
        );
        only_retry_links(part);
        no_action_links(part);
    }
    for part in [&e.text, &e.html] {
        assert!(part.contains("nothing was charged"), "{part}");
        assert!(part.contains("Not enough funds or available credit"));
        assert!(part.contains("use another card"));
        assert!(part.contains("security check by your card issuer or the payment processor"));
        assert!(part.contains("approve the payment in your banking app"));
        assert!(part.contains("Example Harbour Hotel"));
        assert!(part.contains("Friday, 12 June 2026 – Monday, 15 June 2026"));
        assert!(part.contains("Hi Testa"));
        assert!(!part.contains("{{") && !part.contains("{%"));
    }
    assert!(e.text.contains(RETRY));
    assert!(e
        .html
        .contains("href=\"https://book.example.com/hotels/lp_fake_1001?checkin"));
    // Internal ids stay out of the customer's email.
    assert!(!e.text.contains("lp_fake_1001\n") && !e.text.contains("tr_fake_0001"));
    assert!(!e.text.contains("PB_fake_9xYz"));
}

#[test]
fn not_completed_without_facts_greets_plainly() {
    let bare = CheckoutAttempt {
        prebook_id: "PB_2".into(),
        transaction_id: None,
        client_reference: None,
        email: None,
        guest_name: None,
        hotel_id: None,
        hotel_name: None,
        checkin: None,
        checkout: None,
        price: None,
    };
    let e = checkout_not_completed(&bare, &guest(), RETRY, &branding()).unwrap();
    assert!(e.text.contains("Hello,"));
    assert!(e
        .text
        .contains("You started a booking with Example Trips, but"));
}

#[test]
fn not_completed_escapes_a_hostile_hotel_name() {
    let a = CheckoutAttempt {
        hotel_name: Some(HOSTILE.into()),
        ..attempt()
    };
    let e = checkout_not_completed(&a, &guest(), RETRY, &branding()).unwrap();
    assert!(!e.html.contains("<script>"));
    assert!(e.text.contains(HOSTILE));
}

#[test]
fn retry_url_must_be_a_public_booking_site_link() {
    for bad in [
        "",
        "javascript:alert(1)",
        "ftp://book.example.com/",
        "https://engine.example.com/actions/abc.def",
        "https://engine.example.com/admin/holds",
        "https://book.example.com/\" onmouseover=\"x",
        "https://book.example.com/a b",
    ] {
        assert!(
            matches!(
                checkout_not_completed(&attempt(), &guest(), bad, &branding()),
                Err(RenderError::Refused(_))
            ),
            "{bad}"
        );
        assert!(
            matches!(
                checkout_declined(
                    &attempt(),
                    &guest(),
                    OwnerAction::SendSecurityCheck,
                    bad,
                    &branding()
                ),
                Err(RenderError::Refused(_))
            ),
            "{bad}"
        );
    }
}

// ---------------------------------------------------------------- declined (owner's choice)

/// The two declined emails of the fixture attempt: (insufficient funds, security check).
fn declined_pair() -> (OutgoingEmail, OutgoingEmail) {
    let declined =
        |action| checkout_declined(&attempt(), &guest(), action, RETRY, &branding()).unwrap();
    (
        declined(OwnerAction::SendInsufficientFunds),
        declined(OwnerAction::SendSecurityCheck),
    )
}

#[test]
fn declined_emails_share_one_key_per_hold() {
    let (funds, security) = declined_pair();
    assert_eq!(funds.kind, EmailKind::CheckoutDeclinedFunds);
    assert_eq!(security.kind, EmailKind::CheckoutDeclinedSecurity);
    assert_eq!(funds.dedupe_key, security.dedupe_key);
    assert_eq!(funds.dedupe_key.as_str(), "checkout_declined:PB_fake_9xYz");
    assert_eq!(funds.message_id, security.message_id);
    for e in [&funds, &security] {
        assert_eq!(e.rank, Rank::Service);
        assert_eq!(e.audience, Audience::Client);
        assert_eq!(e.to, guest());
        assert_eq!(e.booking_id, None);
        for part in both(e) {
            only_retry_links(part);
            no_action_links(part);
        }
        assert!(e.text.contains(RETRY) && e.text.contains("nothing was charged"));
    }
}

#[test]
fn each_declined_email_explains_its_own_reason_only() {
    let (funds, security) = declined_pair();
    for part in [&funds.text, &funds.html] {
        assert!(part.contains("Not enough funds or available credit"));
        assert!(part.contains("use another card"));
        assert!(!part.contains("security check"));
    }
    for part in [&security.text, &security.html] {
        assert!(part.contains("security check by your card issuer or the payment processor"));
        assert!(part.contains("approve the payment in your banking app"));
        assert!(!part.contains("Not enough funds"));
    }
    assert!(funds.subject.contains("not enough funds"));
    assert!(security.subject.contains("security check"));
}

#[test]
fn dismiss_sends_no_customer_email() {
    assert!(matches!(
        checkout_declined(
            &attempt(),
            &guest(),
            OwnerAction::Dismiss,
            RETRY,
            &branding()
        ),
        Err(RenderError::Refused(_))
    ));
}

// ---------------------------------------------------------------- owner alert

#[test]
fn owner_hold_alert_goes_to_the_owner_at_once_with_three_links() {
    let codes = vec![
        "insufficient_funds".to_string(),
        "fraudulent".to_string(),
        "insufficient_funds".to_string(),
    ];
    let e = owner_checkout_hold(
        HOLD,
        &attempt(),
        &risk(),
        &codes,
        &links(),
        OwnerInbox::new(&owner(), &branding()),
    )
    .unwrap();
    assert_eq!(e.kind, EmailKind::OwnerCheckoutHold);
    assert_eq!(e.dedupe_key.as_str(), format!("owner_checkout_hold:{HOLD}"));
    assert_eq!(e.audience, Audience::Owner);
    assert_eq!(e.rank, Rank::Urgent);
    assert_eq!(e.to, owner());
    assert_eq!(e.booking_id, None);
    for (action, url) in links() {
        assert!(e.text.contains(&url), "text lacks {action}");
        assert!(
            e.html.contains(&format!("href=\"{url}\"")),
            "html lacks {action}"
        );
        assert!(e.text.contains(action.label()));
    }
    for part in [&e.text, &e.html] {
        for fact in [
            HOLD,
            "guest@example.com",
            "Testa Guestington",
            "anna smith",
            "testa guestington",
            "used under 2 different names today",
            "Example Harbour Hotel",
            "Fri 12 June – Mon 15 June 2026",
            "540 EUR",
            "PB_fake_9xYz",
            "tr_fake_0001",
            "insufficient_funds",
            "not enough balance or credit on the card",
            "fraudulent",
            "the payment processor suspected fraud",
            "No email was sent to the customer",
        ] {
            assert!(part.contains(fact), "owner alert lacks {fact}: {part}");
        }
        assert_eq!(
            part.matches("insufficient_funds").count(),
            1,
            "codes are distinct"
        );
    }
    assert!(e.subject.contains("guest@example.com"));
}

#[test]
fn owner_hold_alert_without_codes_or_links_says_so() {
    let e = owner_checkout_hold(
        HOLD,
        &attempt(),
        &RiskReason::NameWithEmails {
            name: "testa guestington".into(),
            emails: vec![
                "a@example.com".into(),
                "b@example.com".into(),
                "c@example.com".into(),
            ],
        },
        &[],
        &[],
        OwnerInbox::new(&owner(), &branding()),
    )
    .unwrap();
    assert!(e.text.contains("None seen for this checkout"));
    assert!(e.text.contains("No action links"));
    assert!(e
        .text
        .contains("Emails used with this name today: a@example.com, b@example.com, c@example.com"));
    assert!(!e.text.contains("http"));
}

// ---------------------------------------------------------------- pages

#[test]
fn confirm_page_shows_the_facts_and_one_post_form() {
    let post = format!(
        "https://engine.example.com/actions/{}",
        sign(HOLD, OwnerAction::SendInsufficientFunds, 1_767_830_400, KEY)
    );
    let html = action_confirm_page(
        HOLD,
        &risk().plain_words(),
        &attempt(),
        Some("guest@example.com"),
        OwnerAction::SendInsufficientFunds,
        &ConfirmForm {
            post_url: &post,
            nonce: "1767830000.bm9uY2U",
            notice: None,
        },
    );
    assert_eq!(html.matches("<form").count(), 1);
    assert!(
        html.contains("<input type=\"hidden\" name=\"nonce\" value=\"1767830000.bm9uY2U\">"),
        "{html}"
    );
    assert!(!html.contains("Nothing was done"));
    assert!(
        html.contains(&format!("<form method=\"post\" action=\"{post}\"")),
        "{html}"
    );
    assert!(html.contains("<button type=\"submit\""));
    assert!(html.contains(OwnerAction::SendInsufficientFunds.label()));
    for fact in [
        HOLD,
        "guest@example.com",
        "Testa Guestington",
        "Example Harbour Hotel",
        "PB_fake_9xYz",
    ] {
        assert!(html.contains(fact), "page lacks {fact}");
    }
    assert!(html.contains("Opening this page changed nothing"));
    assert!(html.contains("noindex"));
}

#[test]
fn confirm_page_escapes_a_hostile_name() {
    let a = CheckoutAttempt {
        guest_name: Some(PersonName {
            first_name: HOSTILE.into(),
            last_name: "Smith".into(),
        }),
        hotel_name: Some(HOSTILE.into()),
        ..attempt()
    };
    let html = action_confirm_page(
        HOLD,
        HOSTILE,
        &a,
        None,
        OwnerAction::Dismiss,
        &ConfirmForm {
            post_url: "https://engine.example.com/actions/x?a=\"><script>",
            nonce: "1.\"><script>",
            notice: Some("<b>refused</b>"),
        },
    );
    assert!(html.contains("Nothing was done"));
    assert!(!html.contains("<b>refused"));
    assert!(!html.contains("<script>"), "{html}");
    assert!(!html.contains("\"><script"), "{html}");
    assert!(html.contains("&lt;script&gt;") || html.contains("&#60;script&#62;"));
    assert_eq!(html.matches("<form").count(), 1);
    assert!(html.contains("nothing is sent"));
}

#[test]
fn result_pages_escape_and_carry_no_form() {
    let html = action_result_page("Already used <b>", HOSTILE);
    assert!(!html.contains("<script>") && !html.contains("<b>"));
    assert!(!html.contains("<form"));
    assert!(html.contains("Already used"));
    for (title, msg) in [
        ("Sent", "The email is queued."),
        ("This link was already used", "Nothing more was sent."),
        ("This link has expired", "Nothing was changed."),
        ("This link is not valid", "Nothing was changed."),
        ("Already handled", "Nothing more was sent."),
    ] {
        let html = action_result_page(title, msg);
        assert!(html.contains(&format!("<h1 style=\"font-size:20px;\">{title}</h1>")));
        assert!(html.contains(msg));
    }
}
