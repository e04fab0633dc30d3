//! Content lock: client email must not carry admin URLs, owner-action links, internal system names
//! or unrendered placeholders; owner alerts are exempt from all but placeholders.

use crate::fixtures::confirmation_email;
use booking_email_engine::domain::email::content_lock::{describe, ContentLock, LockViolation};
use booking_email_engine::domain::email::{Audience, EmailKind};
use booking_email_engine::domain::event::EmailAddress;
use booking_email_engine::domain::marketing::unsubscribe;
use booking_email_engine::domain::outbox::outgoing::OutgoingEmail;

const BASE: &str = "https://booking-email-engine.example.workers.dev";
const NAMES: &str = "workflow, durable object,liteapi , duffel,outbox,,";

fn lock() -> ContentLock {
    ContentLock::from_config(BASE, NAMES)
}

fn client(subject: &str, text: &str, html: &str) -> OutgoingEmail {
    confirmation_email("BK1", subject, text, html)
}

fn owner(subject: &str, text: &str, html: &str) -> OutgoingEmail {
    let mut e = client(subject, text, html);
    e.kind = EmailKind::OwnerNewBooking;
    e.audience = Audience::Owner;
    e.rank = e.kind.rank();
    e.to = EmailAddress::parse("owner@example.com").unwrap();
    e
}

fn text_only(text: &str) -> Result<(), Vec<LockViolation>> {
    lock().check(&client("Your stay is confirmed", text, "<p>ok</p>"))
}

/// An email whose text is `text` is refused for one admin URL, `url`, and nothing else.
fn refused_as_admin_url(text: &str, url: &str) {
    let violations = vec![LockViolation::AdminUrl(url.into())];
    assert_eq!(text_only(text), Err(violations), "{text}");
}

fn clean() -> OutgoingEmail {
    client(
        "Your stay at Example Harbour Hotel is confirmed",
        "Hi Testa,\n\nyour booking BK1 is confirmed: 12–15 June 2026.\nManage it at https://www.example.com/trips/BK1\n",
        "<p>Hi Testa,</p><p>Your booking <b>BK1</b> is confirmed.</p>\
         <p><a href=\"https://www.example.com/trips/BK1\">Manage your trip</a></p>\
         <p style=\"color:#7b8794; font-size:12px\">Example Trips</p>",
    )
}

#[test]
fn configuration_is_normalized() {
    let l = lock();
    assert_eq!(
        l.admin_markers(),
        [
            "/admin",
            "/actions",
            "booking-email-engine.example.workers.dev"
        ]
    );
    assert_eq!(
        l.internal_names(),
        ["workflow", "durable object", "liteapi", "duffel", "outbox"]
    );
    // Empty configuration: the built-in /admin and /actions/ rules and placeholders still apply.
    let bare = ContentLock::from_config("", "");
    assert_eq!(bare.admin_markers(), ["/admin", "/actions"]);
    assert!(bare.internal_names().is_empty());
    assert!(ContentLock::default()
        .check(&client("s", "https://x.example/actions/tok", ""))
        .is_err());
}

#[test]
fn clean_client_mail_passes() {
    assert_eq!(lock().check(&clean()), Ok(()));
    // Everyday words that merely contain a marker pass.
    assert_eq!(
        text_only(
            "Our administration team and the hotel's administrative fees; flow of work; \
             see https://hotel.example/administration and https://hotel.example/transactions/faq"
        ),
        Ok(())
    );
}

#[test]
fn admin_urls_are_refused() {
    refused_as_admin_url(
        "Check https://hotel.example/admin/bookings?id=1 please",
        "https://hotel.example/admin/bookings?id=1",
    );
    // A relative path in HTML, any case, at the end of a path, with an extension.
    for html in [
        "<a href=\"/admin\">x</a>",
        "<a href='/Admin/'>x</a>",
        "<a href=\"https://x.example/ADMIN?tab=1\">x</a>",
        "<a href=\"https://x.example/admin.php\">x</a>",
        "<a href=\"https:&#x2F;&#x2F;x.example&#x2F;admin\">x</a>",
    ] {
        let r = lock().check(&client("s", "t", html));
        assert!(
            matches!(&r, Err(v) if v.iter().any(|v| matches!(v, LockViolation::AdminUrl(_)))),
            "{html}: {r:?}"
        );
    }
}

#[test]
fn the_engine_host_is_an_admin_marker_except_for_unsubscribe_links() {
    refused_as_admin_url(
        "Status: https://booking-email-engine.example.workers.dev/health",
        "https://booking-email-engine.example.workers.dev/health",
    );
    // Host only, in an address, with a port, upper case: still the engine.
    for t in [
        "noreply@booking-email-engine.example.workers.dev",
        "BOOKING-EMAIL-ENGINE.example.workers.dev:8787/x",
        "(booking-email-engine.example.workers.dev).",
    ] {
        assert!(text_only(t).is_err(), "{t}");
    }
    // Other hosts that merely contain it are not the engine.
    for t in [
        "https://my-booking-email-engine.example.workers.dev/",
        "https://a.booking-email-engine.example.workers.dev/",
        "https://booking-email-engine.example.workers.dev.evil.example/",
    ] {
        assert_eq!(text_only(t), Ok(()), "{t}");
    }
    // The visible unsubscribe link on the engine host is allowed.
    let token = unsubscribe::sign("guest@example.com", "marketing", b"k");
    let link = unsubscribe::url(BASE, &token);
    let html = format!("<p><a href=\"{link}\">Unsubscribe</a></p>");
    assert_eq!(lock().check(&client("News", &link, &html)), Ok(()));
}

#[test]
fn an_engine_under_a_path_only_locks_that_path() {
    let l = ContentLock::from_config("https://www.example.com/engine/", "");
    assert_eq!(l.admin_markers()[2], "www.example.com/engine");
    assert_eq!(
        l.check(&client("s", "https://www.example.com/trips/1", "")),
        Ok(())
    );
    assert!(l
        .check(&client("s", "https://www.example.com/engine/status", ""))
        .is_err());
    assert_eq!(
        l.check(&client("s", "https://www.example.com/engines", "")),
        Ok(())
    );
}

#[test]
fn action_links_are_refused() {
    let token = "eyJhIjoxfQ.sig";
    let url = format!("{BASE}/actions/{token}");
    let r = lock().check(&client("s", &format!("Release: {url}"), ""));
    let v = r.unwrap_err();
    assert!(v.contains(&LockViolation::ActionLink(url.clone())), "{v:?}");
    // The engine host is reported as well.
    assert!(v.contains(&LockViolation::AdminUrl(url.clone())), "{v:?}");
    // Any host, relative, HTML.
    let r = lock().check(&client(
        "s",
        "t",
        "<a href=\"https://other.example/actions/abc\">Confirm</a><a href=\"/actions/x\">x</a>",
    ));
    assert_eq!(
        r,
        Err(vec![
            LockViolation::ActionLink("https://other.example/actions/abc".into()),
            LockViolation::ActionLink("/actions/x".into()),
        ])
    );
}

#[test]
fn internal_names_are_whole_words_case_insensitive() {
    for (text, name) in [
        ("Queued in the Outbox.", "outbox"),
        ("OUTBOX", "outbox"),
        ("error in workflow step 3", "workflow"),
        ("Workflow: retry", "workflow"),
        ("a Durable Object failed", "durable object"),
        ("durable-object", "durable object"),
        ("durable_object", "durable object"),
        ("DurableObject", "durable object"),
        ("durable\n  object", "durable object"),
        ("via LiteAPI", "liteapi"),
        ("liteapi_booking_id", "liteapi"),
        ("https://api.liteapi.travel/v3", "liteapi"),
        ("Duffel order ord_123", "duffel"),
    ] {
        assert_eq!(
            text_only(text),
            Err(vec![LockViolation::InternalName(name.into())]),
            "{text}"
        );
    }
    // Decided: derived words are different words.
    for text in [
        "outboxes",
        "workflowy",
        "workflows",
        "satelliteapi",
        "duffels",
        "durable objects",
        "indurable object",
    ] {
        assert_eq!(text_only(text), Ok(()), "{text}");
    }
    // In the subject and the HTML too (an attribute is still in what the client receives).
    assert!(lock().check(&client("Outbox test", "t", "")).is_err());
    assert!(lock()
        .check(&client("s", "t", "<div class=\"outbox\">x</div>"))
        .is_err());
    // Reported once per name, however often it occurs.
    assert_eq!(
        lock().check(&client("outbox", "outbox outbox", "<p>outbox</p>")),
        Err(vec![LockViolation::InternalName("outbox".into())])
    );
}

#[test]
fn placeholders_are_refused() {
    for (text, quoted) in [
        ("Hi {{ guest_name }},", "{{ guest_name }}"),
        ("Hi {{guest}}!", "{{guest}}"),
        ("{% if vip %}Welcome back{% endif %}", "{% if vip %}"),
        ("{# note #}", "{# note #}"),
        ("Total: ${amount}", "${amount}"),
        ("Dear [[FirstName]],", "[[FirstName]]"),
        ("stray }} here", "stray }}"),
        ("100 %}", "100 %}"),
    ] {
        let r = text_only(text);
        let v = r.expect_err(text);
        assert!(
            v.contains(&LockViolation::Placeholder(quoted.into())),
            "{text}: {v:?}"
        );
        assert!(
            v.iter().all(|v| matches!(v, LockViolation::Placeholder(_))),
            "{text}: {v:?}"
        );
    }
    assert!(lock()
        .check(&client("Your {{ hotel }} stay", "t", ""))
        .is_err());
    assert!(lock()
        .check(&client("s", "t", "<p>{% block content %}</p>"))
        .is_err());
    // Prices and single braces are fine.
    assert_eq!(text_only("Total: $120 {approx.} [1] 50% off"), Ok(()));
    // CSS in a <style> block nests braces: not a placeholder.
    assert_eq!(
        lock().check(&client(
            "s",
            "t",
            "<style>@media (max-width:600px){.a{width:100%}}</style><p>x</p>"
        )),
        Ok(())
    );
}

#[test]
fn owner_alerts_may_carry_action_links_and_internal_names() {
    let alert = owner(
        "Card-testing hold on BK1 (workflow paused)",
        &format!("Release: {BASE}/actions/tok1\nAdmin: {BASE}/admin/outbox\nliteAPI id 123, Duffel ord_1, outbox seq 5"),
        &format!("<a href=\"{BASE}/actions/tok1\">Release</a> <a href=\"/admin\">Admin</a>"),
    );
    assert_eq!(lock().check(&alert), Ok(()));
}

#[test]
fn owner_alerts_may_not_carry_placeholders() {
    let alert = owner("New booking", "Guest: {{x}}", "<p>ok</p>");
    assert_eq!(
        lock().check(&alert),
        Err(vec![LockViolation::Placeholder("{{x}}".into())])
    );
}

#[test]
fn a_mislabelled_client_email_stays_locked() {
    let mut e = client("s", &format!("{BASE}/actions/t"), "");
    e.audience = Audience::Owner; // kind is still a client kind
    assert!(lock().check(&e).is_err());
}

#[test]
fn every_violation_is_listed_once_in_order() {
    let e = client(
        "{{subject}}",
        "See https://x.example/admin and https://x.example/admin, via the outbox",
        "<a href=\"/actions/t\">{% x %}</a>",
    );
    let v = lock().check(&e).unwrap_err();
    assert_eq!(
        v,
        vec![
            LockViolation::Placeholder("{{subject}}".into()),
            LockViolation::AdminUrl("https://x.example/admin".into()),
            LockViolation::AdminUrl("https://x.example/admin,".into()),
            LockViolation::InternalName("outbox".into()),
            LockViolation::ActionLink("/actions/t".into()),
            LockViolation::Placeholder("{% x %}".into()),
        ]
    );
    assert_eq!(
        describe(&v[..2]),
        "unrendered placeholder: {{subject}}; admin URL: https://x.example/admin"
    );
}

#[test]
fn the_project_hotel_emails_pass_and_raw_templates_do_not() {
    use booking_email_engine::domain::render::{
        arrival_guide, booking_confirmation, checkin_day, hotel_confirmation_number, thank_you,
        Branding,
    };
    use booking_email_engine::sources::liteapi::{hotel_booking, parse_envelope};
    let path = format!(
        "{}/tests/fixtures/liteapi-booking-confirmed.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let env = parse_envelope(&std::fs::read(path).unwrap()).unwrap();
    let b = hotel_booking(&env).unwrap();
    let branding = Branding {
        brand: "Example Trips".into(),
        from: EmailAddress::parse("bookings@mail.example.com").unwrap(),
        locale: booking_email_engine::domain::i18n::Locale::En,
        region: booking_email_engine::domain::i18n::Region::DEFAULT,
    };
    let emails = [
        booking_confirmation(&b, &branding).unwrap(),
        hotel_confirmation_number(&b, "HCN-48213", 1_780_000_000_000, &branding).unwrap(),
        arrival_guide(&b, &branding).unwrap(),
        checkin_day(&b, &branding).unwrap(),
        thank_you(&b, &branding).unwrap(),
    ];
    for e in &emails {
        assert_eq!(e.audience, Audience::Client);
        assert_eq!(lock().check(e), Ok(()), "{:?}", e.kind);
    }
    // The raw template source trips the placeholder rule: the rule sees askama syntax.
    let raw = std::fs::read_to_string(format!(
        "{}/templates/booking_confirmation.txt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let r = lock().check(&client("s", &raw, ""));
    assert!(
        matches!(&r, Err(v) if v.iter().any(|v| matches!(v, LockViolation::Placeholder(_)))),
        "{r:?}"
    );
}

#[test]
fn an_unsubscribe_path_cannot_carry_another_engine_path() {
    let token = unsubscribe::sign("guest@example.com", "marketing", b"k");
    // Allowed: the token alone, also at a sentence end or inside quotes/brackets.
    for ok in [
        format!("{BASE}/unsubscribe/{token}"),
        format!("Unsubscribe: {BASE}/unsubscribe/{token}, any time."),
        format!("<a href=\"{BASE}/unsubscribe/{token}\">unsubscribe</a>"),
        format!("({BASE}/unsubscribe/{token})"),
    ] {
        assert!(lock().check(&client("x", &ok, "")).is_ok(), "{ok}");
    }
    // Refused: traversal, encoded traversal, more path, a query, an empty token.
    for bad in [
        format!("{BASE}/unsubscribe/../webhooks/generic"),
        format!("{BASE}/unsubscribe/%2e%2e/health"),
        format!("{BASE}/unsubscribe/{token}/../../health"),
        format!("{BASE}/unsubscribe/a..b"),
        format!("{BASE}/unsubscribe/.hidden"),
        format!("{BASE}/unsubscribe/{token}?next=/health"),
        format!("{BASE}/unsubscribe/ and more"),
    ] {
        let v = lock().check(&client("x", &bad, "")).unwrap_err();
        assert!(
            v.iter().any(|v| matches!(v, LockViolation::AdminUrl(_))),
            "{bad}: {v:?}"
        );
    }
}

#[test]
fn invisible_and_full_width_characters_do_not_hide_a_violation() {
    for (text, want) in [
        ("Our work\u{200b}flow is live", "internal"),
        ("out\u{00ad}box", "internal"),
        ("Dur\u{200d}able\u{2060} Object", "internal"),
        ("Dear {\u{200b}{ first_name }\u{200b}},", "placeholder"),
        ("Dear \u{ff5b}\u{ff5b} name \u{ff5d}\u{ff5d}", "placeholder"),
        ("see /\u{202e}admin", "admin"),
        ("\u{ff0f}actions\u{ff0f}abc", "action"),
    ] {
        let v = lock().check(&client("x", text, "")).unwrap_err();
        let found = describe(&v).to_lowercase();
        assert!(found.contains(want), "{text:?}: {found}");
    }
    // The same characters in ordinary text change nothing.
    assert!(lock()
        .check(&client("x", "Caf\u{00e9}\u{200b} \u{ff21}BC", ""))
        .is_ok());
}
