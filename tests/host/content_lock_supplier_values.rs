//! The content lock checks what we wrote, not what the guest or the hotel is called
//! (`domain::render::guard`): guest and hotel names that are also internal words or look like
//! template syntax pass; links to the engine's admin inside supplier values are removed from guest
//! mail; the same words and placeholders produced by a template are still caught; owner alerts are
//! defanged, never blocked.

use crate::fixtures::{branding, liteapi_hotel};
use booking_email_engine::domain::email::content_lock::{ContentLock, LockViolation};
use booking_email_engine::domain::event::{
    EmailAddress, FlightBooking, HotelBooking, Interpretation, Source, SupplierEvent,
};
use booking_email_engine::domain::outbox::outgoing::OutgoingEmail;
use booking_email_engine::domain::render::guard::{
    defang_placeholders, guarded, judge, TextSource, LINK_REMOVED,
};
use booking_email_engine::domain::render::{
    arrival_guide, booking_confirmation, checkin_day, flight_confirmation,
    hotel_confirmation_number, owner_new_booking, thank_you, OwnerInbox, RenderError, SegmentView,
};
use booking_email_engine::sources::duffel;

const ENGINE: &str = "https://engine.example.com";
const INTERNAL: &str =
    "liteapi,nuitee,duffel,workflow,durable object,outbox,wrangler,miniflare,workerd";

fn lock() -> ContentLock {
    ContentLock::from_config(ENGINE, INTERNAL)
}

/// Names that are internal words or look like template syntax or admin links.
const ODD_VALUES: &[&str] = &[
    "Wrangler",
    "Outbox Hotel",
    "Workflow Inn",
    "Duffel",
    "Durable Object Suites",
    "{{name}}",
    "${x}",
    "[[y]]",
    "{% if %}",
    "Miniflare }} Lodge",
];

/// One of the guest hotel emails.
type HotelRender<'a> = &'a dyn Fn(&HotelBooking) -> Result<OutgoingEmail, RenderError>;
/// A leak a template writes, and how to recognise its violation.
type Leak<'a> = (&'a str, fn(&str) -> bool);

/// Every guest hotel email of a booking, through the lock.
fn hotel_emails(b: &HotelBooking) -> Vec<OutgoingEmail> {
    let lock = lock();
    let br = branding();
    let renders: [HotelRender<'_>; 4] = [
        &|b| booking_confirmation(b, &br),
        &|b| arrival_guide(b, &br),
        &|b| checkin_day(b, &br),
        &|b| thank_you(b, &br),
    ];
    let mut out: Vec<OutgoingEmail> = renders
        .iter()
        .map(|r| guarded(&lock, b, r).expect("renders"))
        .collect();
    out.push(
        guarded(&lock, &(b.clone(), "HCN-{{1}}".to_string()), |(b, n)| {
            hotel_confirmation_number(b, n, 1_780_000_000_000, &br)
        })
        .unwrap(),
    );
    out
}

#[test]
fn guest_and_hotel_names_that_are_internal_words_or_placeholders_pass() {
    for value in ODD_VALUES {
        let mut b = liteapi_hotel();
        b.hotel_name = format!("{value} Harbour");
        b.holder.name.last_name = (*value).to_string();
        b.holder.name.first_name = (*value).to_string();
        b.checkin_instructions = Some(format!("Ask for {value} at the desk"));
        for email in hotel_emails(&b) {
            assert_eq!(
                judge(&lock(), &email),
                Ok(()),
                "{value}: {} was blocked",
                email.kind.as_str()
            );
            // The whole email as written would have tripped the old lock: the values are in it.
            assert!(
                lock().check(&email).is_err(),
                "{value} not in {}",
                email.kind.as_str()
            );
        }
    }
}

#[test]
fn a_flight_passenger_called_duffel_gets_the_confirmation() {
    let path = format!(
        "{}/tests/fixtures/duffel-order-created.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let body = std::fs::read(&path).unwrap();
    let env = duffel::parse_envelope(&body).unwrap();
    let Ok(Interpretation::Journey(SupplierEvent::FlightBooked(f))) = duffel::interpret(&env)
    else {
        panic!("the fixture is an order.created");
    };
    let mut f: FlightBooking = *f;
    f.contact.name.first_name = "Workflow".into();
    f.contact.name.last_name = "Duffel".into();
    let e = guarded(&lock(), &f, |f| {
        flight_confirmation(f, &SegmentView::list(&f.segments), &branding())
    })
    .unwrap();
    assert!(e.text.contains("Workflow"), "{}", e.text);
    assert_eq!(judge(&lock(), &e), Ok(()));
}

#[test]
fn admin_and_action_links_in_supplier_values_never_reach_the_guest() {
    for link in [
        "https://engine.example.com/admin/outbox",
        "see /admin/outbox/email now",
        "https://evil.example/actions/abc",
        "engine.example.com/unsubscribe/../health",
        "https://engine.example.com/x",
    ] {
        let mut b = liteapi_hotel();
        b.hotel_name = format!("Harbour {link}");
        b.checkin_instructions = Some(format!("Keys: {link}"));
        for email in hotel_emails(&b) {
            assert_eq!(judge(&lock(), &email), Ok(()), "{link}");
            let all = format!("{} {} {}", email.subject, email.text, email.html);
            assert!(!all.contains("/admin"), "{link} leaked: {all}");
            assert!(!all.contains("/actions/"), "{link} leaked");
            assert!(!all.contains("engine.example.com"), "{link} leaked");
            assert!(
                all.contains(LINK_REMOVED),
                "{link}: no trace of the removal"
            );
            assert!(email.lock.as_ref().unwrap().links_removed >= 1);
        }
    }
}

#[test]
fn the_same_words_and_placeholders_from_a_template_are_caught() {
    let b = liteapi_hotel();
    let leaks: &[Leak<'_>] = &[
        ("Sent by our outbox", |v| matches!(v, "outbox")),
        ("via wrangler", |v| v == "wrangler"),
        ("Dear {{ name }}", |v| v.contains("{{")),
        ("Total ${price}", |v| v.contains("${")),
        ("[[footer]]", |v| v.contains("[[")),
        ("manage: https://engine.example.com/admin/outbox", |v| {
            v.contains("/admin")
        }),
        ("act: /actions/tok", |v| v.contains("/actions/")),
    ];
    for (leak, is_it) in leaks {
        // A "template" that writes the leak itself, whatever the values are.
        let email = guarded(&lock(), &b, |b| {
            let mut e = booking_confirmation(b, &branding())?;
            e.text.push_str(leak);
            Ok(e)
        })
        .unwrap();
        let tripped = judge(&lock(), &email).expect_err(leak);
        assert_eq!(tripped.source, TextSource::Template, "{leak}");
        assert!(
            tripped.violations.iter().any(|v| match v {
                LockViolation::InternalName(s)
                | LockViolation::Placeholder(s)
                | LockViolation::AdminUrl(s)
                | LockViolation::ActionLink(s) => is_it(s),
            }),
            "{leak}: {:?}",
            tripped.violations
        );
        assert!(tripped.describe().contains("template's own output"));
    }
    // A template that interpolates a value inside its own placeholder-looking text is caught even
    // when the value itself is harmless.
    let email = guarded(&lock(), &b, |b| {
        let mut e = booking_confirmation(b, &branding())?;
        e.html.push_str(&format!("{{{{{}}}}}", b.hotel_name));
        Ok(e)
    })
    .unwrap();
    assert!(judge(&lock(), &email).is_err());
}

#[test]
fn a_template_word_is_caught_even_when_a_value_says_the_same() {
    let mut b = liteapi_hotel();
    b.hotel_name = "Outbox".into();
    let email = guarded(&lock(), &b, |b| {
        let mut e = booking_confirmation(b, &branding())?;
        e.text.push_str(" outbox ");
        Ok(e)
    })
    .unwrap();
    assert_eq!(
        judge(&lock(), &email).unwrap_err().source,
        TextSource::Template
    );
}

#[test]
fn an_email_without_a_verdict_is_checked_whole() {
    let mut b = liteapi_hotel();
    b.hotel_name = "Outbox Hotel".into();
    let email = booking_confirmation(&b, &branding()).unwrap();
    assert!(email.lock.is_none());
    let tripped = judge(&lock(), &email).unwrap_err();
    assert_eq!(tripped.source, TextSource::Unattributed);
}

#[test]
fn owner_alerts_with_placeholders_are_defanged_not_blocked() {
    let mut b = liteapi_hotel();
    b.hotel_name = "{{Outbox}} ${x} [[y]] {%z%} {#c#}\u{200b}{{".into();
    let owner = EmailAddress::parse("owner@example.com").unwrap();
    let mut alert = guarded(&lock(), &b, |b| {
        owner_new_booking(
            b,
            Source::Liteapi,
            "ev1",
            None,
            false,
            OwnerInbox::new(&owner, &branding()),
        )
    })
    .unwrap();
    assert!(alert.lock.is_none(), "owner alerts carry no verdict");
    assert!(
        judge(&lock(), &alert).is_err(),
        "the alert as rendered trips the lock"
    );
    defang_placeholders(&mut alert);
    assert_eq!(judge(&lock(), &alert), Ok(()));
    assert!(
        alert.text.contains("{ {Outbox} } $ {x} [ [y] ]"),
        "{}",
        alert.text
    );
}
