//! Host tests of every email of a booking's journey (`domain::render`): dedupe keys, ranks,
//! audiences, recipients, subjects, the facts in both the text and the HTML part, HTML escaping,
//! and that guest emails never leak internals or unrendered template syntax.

use crate::fixtures::{branding, liteapi_hotel};
use booking_email_engine::domain::email::{Audience, EmailKind, Rank};
use booking_email_engine::domain::event::{
    Airport, BookingRef, Cancellation, EmailAddress, FlightBooking, FlightSegment, Holder,
    HotelBooking, Money, PersonName,
};
use booking_email_engine::domain::outbox::outgoing::OutgoingEmail;
use booking_email_engine::domain::render::{
    arrival_guide, booking_cancelled, booking_confirmation, booking_updated, checkin_day,
    flight_changed, flight_confirmation, hotel_confirmation_number, owner_booking_cancelled,
    plain_instructions, thank_you, to_mime, CancelledBooking, OwnerInbox, SegmentView,
};
use chrono::{NaiveDate, NaiveDateTime};

const HOSTILE: &str = "<script>alert(1)</script> Harbour & Spa";

fn owner() -> EmailAddress {
    EmailAddress::parse("owner@example.com").unwrap()
}

/// The fixture booking with its hotel confirmation number and check-in instructions known.
fn hotel_with_extras() -> HotelBooking {
    HotelBooking {
        hotel_confirmation_number: Some("HCN-48213".into()),
        checkin_instructions: Some(
            "<p>Reception is open 24 hours.</p><ul><li>Key box code 4711</li></ul>".into(),
        ),
        ..liteapi_hotel()
    }
}

fn hostile_hotel() -> HotelBooking {
    HotelBooking {
        hotel_name: HOSTILE.into(),
        hotel_confirmation_number: Some("HCN-48213".into()),
        checkin_instructions: Some("Ring the bell <b>twice</b> & wait".into()),
        ..liteapi_hotel()
    }
}

fn airport(iata: &str, name: &str, city: &str) -> Airport {
    Airport {
        iata_code: iata.into(),
        name: name.into(),
        city_name: Some(city.into()),
        time_zone: None,
    }
}

fn at(s: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
}

fn lhr() -> Airport {
    airport("LHR", "London Heathrow", "London")
}

fn bcn() -> Airport {
    airport("BCN", "Barcelona El Prat", "Barcelona")
}

/// A round trip LHR → BCN (Fri 12 June 07:15) and back (Mon 15 June 18:05).
fn flight() -> FlightBooking {
    FlightBooking {
        client_reference: None,
        booking_id: BookingRef::parse("ord_0000AbCdEf").unwrap(),
        booking_reference: Some("RZPNR7".into()),
        status: "confirmed".into(),
        contact: Holder {
            name: PersonName {
                first_name: "Ana".into(),
                last_name: "Traveller".into(),
            },
            email: EmailAddress::parse("ana@example.com").unwrap(),
            phone: None,
        },
        passengers: vec![
            PersonName {
                first_name: "Ana".into(),
                last_name: "Traveller".into(),
            },
            PersonName {
                first_name: "Ben".into(),
                last_name: "Traveller".into(),
            },
        ],
        segments: vec![
            FlightSegment {
                flight_number: "ZZ 0472".into(),
                origin: lhr(),
                destination: bcn(),
                departing_at: at("2026-06-12 07:15"),
                arriving_at: at("2026-06-12 10:30"),
                airline: None,
            },
            FlightSegment {
                flight_number: "ZZ 0473".into(),
                origin: bcn(),
                destination: lhr(),
                departing_at: at("2026-06-15 18:05"),
                arriving_at: at("2026-06-15 19:25"),
                airline: None,
            },
        ],
        total: Some(Money {
            amount: "312.80".into(),
            currency: "GBP".into(),
        }),
        sandbox: true,
        locale: None,
    }
}

/// A cancellation with charges that names both amounts: a €180 fee and a €360 refund.
fn fee_and_refund() -> Cancellation {
    cancellation(true, Some(("180", "EUR")), Some(("360", "EUR")))
}

fn cancellation(
    with_charges: bool,
    fee: Option<(&str, &str)>,
    refund: Option<(&str, &str)>,
) -> Cancellation {
    let m = |(amount, currency): (&str, &str)| Money {
        amount: amount.into(),
        currency: currency.into(),
    };
    Cancellation {
        booking_id: BookingRef::parse("BK_fake_7Q2w").unwrap(),
        with_charges,
        cancellation_fee: fee.map(m),
        refund: refund.map(m),
    }
}

/// Checks kind, key, rank, audience, recipient, subject, booking id and message id.
fn assert_envelope(
    e: &OutgoingEmail,
    kind: EmailKind,
    key: &str,
    rank: Rank,
    audience: Audience,
    to: &str,
    subject: &str,
) {
    assert_eq!(e.kind, kind);
    assert_eq!(e.dedupe_key.as_str(), key);
    assert_eq!(e.rank, rank, "{key}");
    assert_eq!(e.rank, kind.rank());
    assert_eq!(e.audience, audience, "{key}");
    assert_eq!(e.audience, kind.audience());
    assert_eq!(e.to.as_str(), to, "{key}");
    assert_eq!(e.subject, subject);
    assert!(e.message_id.starts_with('<') && e.message_id.ends_with("@mail.example.com>"));
    assert!(e.booking_id.is_some());
}

/// Every needle must be in both parts (the HTML part after escaping; needles are plain text).
fn assert_facts(e: &OutgoingEmail, needles: &[&str]) {
    for needle in needles {
        assert!(
            e.text.contains(needle),
            "{}: text lacks {needle:?}:\n{}",
            e.kind.as_str(),
            e.text
        );
        assert!(
            e.html.contains(needle),
            "{}: html lacks {needle:?}:\n{}",
            e.kind.as_str(),
            e.html
        );
    }
}

fn assert_absent(e: &OutgoingEmail, needles: &[&str]) {
    for part in [&e.subject, &e.text, &e.html] {
        let lower = part.to_lowercase();
        for needle in needles {
            assert!(
                !lower.contains(&needle.to_lowercase()),
                "{}: contains {needle:?}:\n{part}",
                e.kind.as_str()
            );
        }
    }
}

/// No template syntax left, no internals, no links.
fn assert_guest_clean(e: &OutgoingEmail) {
    assert_eq!(e.audience, Audience::Client);
    assert_absent(
        e,
        &[
            "{{", "}}", "{%", "%}", "liteapi", "duffel", "nuitee", "sandbox", "http", "www.",
            "workflow", "outbox", "evt_", "admin", "webhook",
        ],
    );
    assert!(e.html.starts_with("<!doctype html>"), "{}", e.html);
    assert!(e.html.contains("Example Trips") && e.text.contains("Example Trips"));
}

fn assert_hostile_name_escaped(e: &OutgoingEmail) {
    assert!(
        !e.html.contains("<script>"),
        "{}: raw script in html",
        e.kind.as_str()
    );
    assert!(
        e.html.contains("&#60;script&#62;") || e.html.contains("&lt;script&gt;"),
        "{}: hotel name not escaped:\n{}",
        e.kind.as_str(),
        e.html
    );
    assert!(
        e.html.contains("Harbour &#38; Spa") || e.html.contains("Harbour &amp; Spa"),
        "{}",
        e.html
    );
    assert!(
        e.text.contains(HOSTILE),
        "{}: text is unescaped",
        e.kind.as_str()
    );
}

// ---------------------------------------------------------------- hotel emails

#[test]
fn booking_confirmation_without_extras_promises_the_number_later() {
    let e = booking_confirmation(&liteapi_hotel(), &branding()).unwrap();
    assert_envelope(
        &e,
        EmailKind::BookingConfirmation,
        "booking_confirmation:BK_fake_7Q2w",
        Rank::Booking,
        Audience::Client,
        "guest@example.com",
        "Your stay at Example Harbour Hotel is confirmed",
    );
    assert_facts(
        &e,
        &[
            "Hi Testa,",
            "Example Harbour Hotel",
            "BK_fake_7Q2w",
            "Friday, 12 June 2026",
            "Monday, 15 June 2026",
            "3 nights",
            "Standard Double",
            "Room only",
            "Testa Guestington",
            "€540.00",
            "usually follows in a separate email",
        ],
    );
    assert_absent(&e, &["Check-in instructions", "Hotel confirmation number:"]);
    assert_guest_clean(&e);
}

#[test]
fn booking_confirmation_merges_the_number_and_the_instructions_when_known() {
    let e = booking_confirmation(&hotel_with_extras(), &branding()).unwrap();
    assert_eq!(e.dedupe_key.as_str(), "booking_confirmation:BK_fake_7Q2w");
    assert_facts(
        &e,
        &[
            "HCN-48213",
            "Check-in instructions",
            "Reception is open 24 hours.",
            "• Key box code 4711",
            "front desk",
        ],
    );
    assert_absent(&e, &["usually follows", "<p>Reception", "<li>"]);
    assert_guest_clean(&e);
}

#[test]
fn hotel_confirmation_number_shows_the_number_and_what_it_is_for() {
    let e = hotel_confirmation_number(
        &liteapi_hotel(),
        " HCN-48213 ",
        1_780_000_000_000,
        &branding(),
    )
    .unwrap();
    assert_envelope(
        &e,
        EmailKind::HotelConfirmationNumber,
        "hotel_confirmation_number:BK_fake_7Q2w:HCN-48213",
        Rank::Booking,
        Audience::Client,
        "guest@example.com",
        "Your confirmation number from Example Harbour Hotel",
    );
    assert_facts(
        &e,
        &[
            "HCN-48213",
            "BK_fake_7Q2w",
            "Friday, 12 June 2026",
            "Monday, 15 June 2026",
            "front desk",
        ],
    );
    assert!(
        e.html.contains("font-size:28px; font-weight:bold;"),
        "the number is prominent"
    );
    assert_guest_clean(&e);

    let corrected = hotel_confirmation_number(
        &liteapi_hotel(),
        "HCN-99999",
        1_780_000_000_000,
        &branding(),
    )
    .unwrap();
    assert_eq!(
        corrected.dedupe_key.as_str(),
        "hotel_confirmation_number:BK_fake_7Q2w:HCN-99999"
    );
    assert_ne!(corrected.message_id, e.message_id);
}

#[test]
fn arrival_guide_has_the_stay_the_checklist_and_known_extras() {
    let e = arrival_guide(&hotel_with_extras(), &branding()).unwrap();
    assert_envelope(
        &e,
        EmailKind::ArrivalGuide,
        "arrival_guide:BK_fake_7Q2w:2026-06-12",
        Rank::Service,
        Audience::Client,
        "guest@example.com",
        "Your stay at Example Harbour Hotel starts in 3 days",
    );
    assert_facts(
        &e,
        &[
            "Friday, 12 June 2026",
            "3 nights",
            "Standard Double",
            "2 adults",
            "Testa Guestington",
            "HCN-48213",
            "Reception is open 24 hours.",
            "photo ID or passport",
            "payment card for incidentals",
        ],
    );
    assert_guest_clean(&e);

    let plain = arrival_guide(&liteapi_hotel(), &branding()).unwrap();
    assert_facts(&plain, &["Friday, 12 June 2026", "photo ID or passport"]);
    assert_absent(
        &plain,
        &["Check-in instructions", "hotel confirmation number"],
    );
    assert_guest_clean(&plain);
}

#[test]
fn checkin_day_is_urgent_with_number_and_instructions() {
    let e = checkin_day(&hotel_with_extras(), &branding()).unwrap();
    assert_envelope(
        &e,
        EmailKind::CheckinDay,
        "checkin_day:BK_fake_7Q2w:2026-06-12",
        Rank::Urgent,
        Audience::Client,
        "guest@example.com",
        "Today: check-in at Example Harbour Hotel",
    );
    assert_facts(
        &e,
        &[
            "HCN-48213",
            "Reception is open 24 hours.",
            "BK_fake_7Q2w",
            "Monday, 15 June 2026",
        ],
    );
    assert_eq!(e.text.matches("HCN-48213").count(), 1, "{}", e.text);
    assert_guest_clean(&e);

    let plain = checkin_day(&liteapi_hotel(), &branding()).unwrap();
    assert_absent(
        &plain,
        &["hotel confirmation number", "Check-in instructions"],
    );
    assert_guest_clean(&plain);
}

#[test]
fn thank_you_is_short_warm_and_has_no_links_or_marketing() {
    let e = thank_you(&liteapi_hotel(), &branding()).unwrap();
    assert_envelope(
        &e,
        EmailKind::ThankYou,
        "thank_you:BK_fake_7Q2w",
        Rank::Service,
        Audience::Client,
        "guest@example.com",
        "Thank you for staying at Example Harbour Hotel",
    );
    assert_facts(&e, &["Hi Testa,", "Thank you for staying at"]);
    assert_absent(
        &e,
        &["<a ", "href", "discount", "offer", "subscribe", "% off"],
    );
    assert!(e.text.len() < 600, "short: {}", e.text.len());
    assert_guest_clean(&e);
}

#[test]
fn booking_updated_lists_changes_and_the_current_details() {
    let mut b = hotel_with_extras();
    b.checkout = NaiveDate::from_ymd_opt(2026, 6, 16).unwrap();
    let changes = vec![(
        "Check-out".to_string(),
        "Monday, 15 June 2026".to_string(),
        "Tuesday, 16 June 2026".to_string(),
    )];
    let hash = "0123456789abcdef0123456789abcdef";
    let e = booking_updated(&b, hash, &changes, 1_780_000_000_000, &branding()).unwrap();
    assert_envelope(
        &e,
        EmailKind::BookingUpdated,
        "booking_updated:BK_fake_7Q2w:0123456789abcdef",
        Rank::Booking,
        Audience::Client,
        "guest@example.com",
        "Your booking at Example Harbour Hotel was updated",
    );
    assert_facts(
        &e,
        &[
            "Check-out",
            "Monday, 15 June 2026",
            "Tuesday, 16 June 2026",
            "4 nights",
            "BK_fake_7Q2w",
            "Standard Double",
            "HCN-48213",
            "€540.00",
        ],
    );
    assert!(e
        .text
        .contains("- Check-out: Monday, 15 June 2026 -> Tuesday, 16 June 2026"));
    assert_guest_clean(&e);

    let other = booking_updated(
        &b,
        "fedcba9876543210ffff",
        &[],
        1_780_000_000_000,
        &branding(),
    )
    .unwrap();
    assert_eq!(
        other.dedupe_key.as_str(),
        "booking_updated:BK_fake_7Q2w:fedcba9876543210"
    );
    assert_guest_clean(&other);
}

#[test]
fn every_hotel_email_escapes_a_hostile_hotel_name() {
    let b = hostile_hotel();
    let c = CancelledBooking::for_hotel(&b);
    let cancel = cancellation(false, None, None);
    let emails = [
        booking_confirmation(&b, &branding()).unwrap(),
        hotel_confirmation_number(&b, "HCN-1", 1_780_000_000_000, &branding()).unwrap(),
        arrival_guide(&b, &branding()).unwrap(),
        checkin_day(&b, &branding()).unwrap(),
        thank_you(&b, &branding()).unwrap(),
        booking_updated(&b, "abc", &[], 1_780_000_000_000, &branding()).unwrap(),
        booking_cancelled(&c, &cancel, &branding()).unwrap(),
        owner_booking_cancelled(&c, &cancel, OwnerInbox::new(&owner(), &branding())).unwrap(),
    ];
    for e in &emails {
        assert_hostile_name_escaped(e);
        if e.audience == Audience::Client {
            assert_guest_clean(e);
        }
    }
    // Subjects are plain text headers: the name as given.
    assert_eq!(
        emails[0].subject,
        format!("Your stay at {HOSTILE} is confirmed")
    );
    // Instructions: supplier markup is stripped, the rest escaped.
    let e = &emails[0];
    assert!(e.text.contains("Ring the bell twice & wait"), "{}", e.text);
    assert!(
        e.html.contains("Ring the bell twice &#38; wait")
            || e.html.contains("Ring the bell twice &amp; wait"),
        "{}",
        e.html
    );
}

// ---------------------------------------------------------------- cancellations

#[test]
fn cancellation_without_money_facts_mentions_no_refund_or_fee() {
    let c = CancelledBooking::for_hotel(&liteapi_hotel());
    assert_eq!(
        c.title,
        "Example Harbour Hotel, Friday, 12 June 2026 – Monday, 15 June 2026"
    );
    let e = booking_cancelled(&c, &cancellation(false, None, None), &branding()).unwrap();
    assert_envelope(
        &e,
        EmailKind::BookingCancelled,
        "booking_cancelled:BK_fake_7Q2w",
        Rank::Booking,
        Audience::Client,
        "guest@example.com",
        "Your booking BK_fake_7Q2w is cancelled",
    );
    assert_facts(
        &e,
        &[
            "Hi Testa,",
            "BK_fake_7Q2w",
            "Example Harbour Hotel, Friday, 12 June 2026 – Monday, 15 June 2026",
            "has been cancelled",
        ],
    );
    assert_absent(&e, &["refund", "fee", "EUR"]);
    assert_guest_clean(&e);
}

#[test]
fn cancellation_with_fee_and_refund_states_both_amounts() {
    let c = CancelledBooking::for_hotel(&liteapi_hotel());
    let e = booking_cancelled(&c, &fee_and_refund(), &branding()).unwrap();
    assert_facts(
        &e,
        &["Cancellation fee", "€180.00", "Refund amount", "€360.00"],
    );
    assert_absent(&e, &["A cancellation fee applies"]);
    assert_guest_clean(&e);
}

#[test]
fn cancellation_with_charges_but_no_amounts_says_a_fee_applies_and_promises_nothing() {
    let c = CancelledBooking::for_hotel(&liteapi_hotel());
    let e = booking_cancelled(&c, &cancellation(true, None, None), &branding()).unwrap();
    assert_facts(&e, &["A cancellation fee applies to this booking."]);
    assert_absent(&e, &["refund", "EUR"]);
    assert_guest_clean(&e);

    let refund_only = booking_cancelled(
        &c,
        &cancellation(false, None, Some(("540", "EUR"))),
        &branding(),
    )
    .unwrap();
    assert_facts(&refund_only, &["Refund amount", "€540.00"]);
    assert_absent(&refund_only, &["fee"]);
}

#[test]
fn flight_cancellation_titles_the_route() {
    let c = CancelledBooking::for_flight(&flight());
    assert_eq!(
        c.title,
        "London (LHR) → Barcelona (BCN), Friday, 12 June 2026 – Monday, 15 June 2026"
    );
    assert_eq!(c.to.as_str(), "ana@example.com");
    let e = booking_cancelled(&c, &cancellation(false, None, None), &branding()).unwrap();
    assert_eq!(e.dedupe_key.as_str(), "booking_cancelled:ord_0000AbCdEf");
    assert_eq!(e.subject, "Your booking ord_0000AbCdEf is cancelled");
    assert_facts(&e, &["Hi Ana,", "London (LHR) → Barcelona (BCN)"]);
    assert_guest_clean(&e);

    let mut one_way = flight();
    one_way.segments.truncate(1);
    assert_eq!(
        CancelledBooking::for_flight(&one_way).title,
        "London (LHR) → Barcelona (BCN), Friday, 12 June 2026"
    );
}

#[test]
fn owner_cancellation_alert_is_urgent_and_carries_the_money_facts() {
    let c = CancelledBooking::for_hotel(&liteapi_hotel());
    let e = owner_booking_cancelled(
        &c,
        &fee_and_refund(),
        OwnerInbox::new(&owner(), &branding()),
    )
    .unwrap();
    assert_envelope(
        &e,
        EmailKind::OwnerBookingCancelled,
        "owner_booking_cancelled:BK_fake_7Q2w",
        Rank::Urgent,
        Audience::Owner,
        "owner@example.com",
        "Booking cancelled: BK_fake_7Q2w · Example Harbour Hotel, Friday, 12 June 2026 – Monday, 15 June 2026",
    );
    assert_facts(
        &e,
        &[
            "BK_fake_7Q2w",
            "Example Harbour Hotel, Friday, 12 June 2026 – Monday, 15 June 2026",
            "€180.00",
            "€360.00",
            "guest@example.com",
        ],
    );
    assert_absent(&e, &["{{", "{%"]);

    let bare = owner_booking_cancelled(
        &c,
        &cancellation(false, None, None),
        OwnerInbox::new(&owner(), &branding()),
    )
    .unwrap();
    assert_facts(&bare, &["not given"]);
    assert_eq!(bare.dedupe_key, e.dedupe_key);
    assert_eq!(bare.message_id, e.message_id);
}

// ---------------------------------------------------------------- flights

#[test]
fn segment_views_use_each_airports_local_time() {
    let f = flight();
    let v = SegmentView::list(&f.segments);
    assert_eq!(
        v[0],
        SegmentView {
            flight_number: "ZZ 0472".into(),
            from: "London Heathrow (LHR)".into(),
            departs: "Fri 12 June 2026, 07:15 (local time)".into(),
            to: "Barcelona El Prat (BCN)".into(),
            arrives: "Fri 12 June 2026, 10:30 (local time)".into(),
            departing_at: f.segments[0].departing_at,
            arriving_at: f.segments[0].arriving_at,
        }
    );
    assert_eq!(v[1].departs, "Mon 15 June 2026, 18:05 (local time)");
}

#[test]
fn flight_confirmation_has_reference_passengers_and_every_segment() {
    let f = flight();
    let e = flight_confirmation(&f, &SegmentView::list(&f.segments), &branding()).unwrap();
    assert_envelope(
        &e,
        EmailKind::FlightConfirmation,
        "flight_confirmation:ord_0000AbCdEf",
        Rank::Booking,
        Audience::Client,
        "ana@example.com",
        "Your flight London → Barcelona is confirmed",
    );
    assert_facts(
        &e,
        &[
            "Hi Ana,",
            "RZPNR7",
            "Ana Traveller, Ben Traveller",
            "ZZ 0472",
            "London Heathrow (LHR)",
            "Friday, 12 June 2026, 07:15 (local time)",
            "Barcelona El Prat (BCN)",
            "Friday, 12 June 2026, 10:30 (local time)",
            "ZZ 0473",
            "Monday, 15 June 2026, 18:05 (local time)",
            "Monday, 15 June 2026, 19:25 (local time)",
            "£312.80",
        ],
    );
    assert_guest_clean(&e);

    let mut no_pnr = flight();
    no_pnr.booking_reference = None;
    let e = flight_confirmation(&no_pnr, &SegmentView::list(&f.segments), &branding()).unwrap();
    assert_absent(&e, &["Airline booking reference"]);
    assert_guest_clean(&e);
}

#[test]
fn flight_changed_shows_old_and_new_times_and_what_to_do() {
    let f = flight();
    let before = vec![SegmentView::from_segment(&f.segments[0])];
    let mut moved = f.segments[0].clone();
    moved.departing_at = at("2026-06-12 09:40");
    moved.arriving_at = at("2026-06-12 12:55");
    let after = vec![SegmentView::from_segment(&moved)];
    let e = flight_changed(
        &f,
        "aic_0000XyZ",
        &before,
        &after,
        1_780_000_000_000,
        &branding(),
    )
    .unwrap();
    assert_envelope(
        &e,
        EmailKind::FlightChanged,
        "flight_changed:ord_0000AbCdEf:aic_0000XyZ",
        Rank::Urgent,
        Audience::Client,
        "ana@example.com",
        "Important: your flight schedule changed",
    );
    assert_facts(
        &e,
        &[
            "RZPNR7",
            "ZZ 0472",
            "Friday, 12 June 2026, 07:15 (local time)",
            "Friday, 12 June 2026, 09:40 (local time)",
            "Friday, 12 June 2026, 12:55 (local time)",
            "Previous schedule",
            "reply to this email to accept",
            "alternatives",
        ],
    );
    // The new schedule comes first.
    let new_at = e.text.find("09:40").unwrap();
    let old_at = e.text.find("07:15").unwrap();
    assert!(new_at < old_at, "{}", e.text);
    assert_absent(&e, &["refund"]);
    assert_guest_clean(&e);
}

// ---------------------------------------------------------------- all kinds

fn every_email() -> Vec<OutgoingEmail> {
    let b = hotel_with_extras();
    let f = flight();
    let segs = SegmentView::list(&f.segments);
    let c = CancelledBooking::for_hotel(&b);
    let cancel = fee_and_refund();
    vec![
        booking_confirmation(&b, &branding()).unwrap(),
        hotel_confirmation_number(&b, "HCN-48213", 1_780_000_000_000, &branding()).unwrap(),
        arrival_guide(&b, &branding()).unwrap(),
        checkin_day(&b, &branding()).unwrap(),
        thank_you(&b, &branding()).unwrap(),
        booking_cancelled(&c, &cancel, &branding()).unwrap(),
        booking_updated(
            &b,
            "0123456789abcdef99",
            &[],
            1_780_000_000_000,
            &branding(),
        )
        .unwrap(),
        flight_confirmation(&f, &segs, &branding()).unwrap(),
        flight_changed(&f, "aic_1", &segs, &segs, 1_780_000_000_000, &branding()).unwrap(),
        owner_booking_cancelled(&c, &cancel, OwnerInbox::new(&owner(), &branding())).unwrap(),
    ]
}

#[test]
fn every_kind_is_deterministic_distinct_and_mime_ready() {
    let first = every_email();
    let again = every_email();
    assert_eq!(first, again, "rendering is deterministic");
    let mut ids: Vec<&str> = first.iter().map(|e| e.message_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), first.len(), "message ids are distinct");
    for e in &first {
        assert_eq!(
            e.kind.as_str(),
            e.dedupe_key.as_str().split(':').next().unwrap()
        );
        let limit = match e.audience {
            Audience::Client => 60,
            Audience::Owner => 100,
        };
        assert!(
            e.subject.chars().count() <= limit,
            "short subject: {}",
            e.subject
        );
        assert!(
            !e.text.contains("\n\n\n\n"),
            "{}:\n{}",
            e.kind.as_str(),
            e.text
        );
        if e.audience == Audience::Client {
            assert_guest_clean(e);
        }
        let raw = String::from_utf8(to_mime(e, &branding(), 1_767_225_600).unwrap()).unwrap();
        assert!(raw.contains("multipart/alternative"), "{raw}");
    }
}

#[test]
fn emails_and_pages_share_one_document_shell() {
    use booking_email_engine::domain::render::{
        action_result_page, unsubscribe_confirm_page, unsubscribe_result_page,
    };
    let head = "<!doctype html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">\
                <meta name=\"viewport\" content=\"width=device-width\">";
    let not_indexed =
        "<meta name=\"robots\" content=\"noindex, nofollow\"><meta name=\"referrer\" content=\"same-origin\"><title>";
    for e in every_email() {
        let kind = e.kind.as_str();
        assert!(e.html.starts_with(head), "{kind}: {}", e.html);
        assert!(
            e.html.ends_with(
                "<p style=\"color:#7b8794; font-size:12px; margin-top:32px;\">Example Trips</p>\n</body>\n</html>"
            ),
            "{kind}: the brand closes every email: {}",
            e.html
        );
        assert!(!e.html.contains("noindex"), "{kind}");
    }
    let action = action_result_page("Done", "The hold is closed.");
    let unsubscribed = unsubscribe_result_page("Done", "You are unsubscribed.", "Example Trips");
    let confirm = unsubscribe_confirm_page("guest@example.com", "https://e.example.com/u/t", "Ex");
    for page in [&action, &unsubscribed, &confirm] {
        assert!(page.starts_with(head), "{page}");
        assert!(
            page.contains(not_indexed),
            "pages are kept out of indexes: {page}"
        );
        assert!(page.ends_with("</body>\n</html>"), "{page}");
    }
    assert!(!action.contains("Example Trips"));
    assert!(unsubscribed.ends_with(
        "<p>You are unsubscribed.</p>\n<p style=\"color:#7b8794; font-size:12px;\">Example Trips</p>\n\n</body>\n</html>"
    ), "{unsubscribed}");
}

#[test]
fn a_guest_without_a_first_name_is_greeted_warmly() {
    let mut b = liteapi_hotel();
    b.holder.name.first_name = "  ".into();
    for e in [
        booking_confirmation(&b, &branding()).unwrap(),
        arrival_guide(&b, &branding()).unwrap(),
        thank_you(&b, &branding()).unwrap(),
    ] {
        assert_facts(&e, &["Hello,"]);
    }
}

#[test]
fn supplier_markup_in_instructions_becomes_plain_text() {
    // (supplier's instructions, the plain text the email shows)
    let cases = [
        (
            "<p>Check-in from 15:00.</p><p>Late arrival?&nbsp;Call us.</p>",
            "Check-in from 15:00.\n\nLate arrival? Call us.",
        ),
        (
            "<ul><li>Photo ID</li><li>Card</li></ul>",
            "• Photo ID\n• Card",
        ),
        ("Line one<br/>Line two", "Line one\nLine two"),
        (
            "Quiet hours 22 < 7 & pets > 5kg not allowed",
            "Quiet hours 22 < 7 & pets > 5kg not allowed",
        ),
        ("A &amp;lt; B", "A &lt; B"),
        ("  \n\n  ", ""),
    ];
    for (supplied, plain) in cases {
        assert_eq!(plain_instructions(supplied), plain, "{supplied:?}");
    }
}

#[test]
fn owner_provider_paused_alert_names_the_provider_the_time_and_what_to_do() {
    use booking_email_engine::domain::email::content_lock::ContentLock;
    use booking_email_engine::domain::outbox::PauseCause;
    use booking_email_engine::domain::render::{fault_key, owner_provider_paused, ProviderPaused};
    let now = 1_795_961_635_000; // 2026-11-29T…Z
    let p = ProviderPaused {
        provider: "smtp",
        until_ms: now + 3_600_000,
        reason: "SMTP AUTH: 535 <bad> credentials",
        fault: "AUTH 535",
        fallback: None,
        wait_until_ms: Some(now + 3_600_000),
        cause: PauseCause::Credentials,
        now_ms: now,
    };
    // The alert to the owner, with the example brand.
    let alert = |p: &ProviderPaused| {
        owner_provider_paused(p, OwnerInbox::new(&owner(), &branding())).unwrap()
    };
    let e = alert(&p);
    assert_eq!(e.kind, EmailKind::OwnerProviderPaused);
    assert_eq!(e.audience, Audience::Owner);
    assert_eq!(e.rank, Rank::Urgent);
    assert_eq!(e.to, owner());
    // One alert per provider, fault and UTC day.
    assert_eq!(
        e.dedupe_key.as_str(),
        "owner_provider_paused:smtp:2026-11-29:auth-535"
    );
    // The same fault again that day: the same alert (deduplicated). Another fault on the same
    // route the same day (a DMARC refusal after refused credentials): told too.
    let again = alert(&ProviderPaused {
        now_ms: now + 3_600_000,
        reason: "SMTP AUTH: 535 other words, id 77",
        ..p.clone()
    });
    assert_eq!(again.dedupe_key, e.dedupe_key);
    let dmarc = alert(&ProviderPaused {
        fault: "end of data 550 5.7.26",
        cause: PauseCause::Configuration,
        ..p.clone()
    });
    assert_eq!(
        dmarc.dedupe_key.as_str(),
        "owner_provider_paused:smtp:2026-11-29:end-of-data-550-5.7.26"
    );
    // A provider's own code names the fault as well; an unknown fault keeps the per-day key.
    assert_eq!(fault_key("E_SENDER_NOT_VERIFIED"), "e-sender-not-verified");
    assert_eq!(fault_key("  MAIL FROM 553 5.7.1 "), "mail-from-553-5.7.1");
    assert!(fault_key(&"x y ".repeat(100)).len() <= 48);
    let unnamed = alert(&ProviderPaused {
        fault: "",
        ..p.clone()
    });
    assert_eq!(
        unnamed.dedupe_key.as_str(),
        "owner_provider_paused:smtp:2026-11-29"
    );
    let next_day = alert(&ProviderPaused {
        now_ms: now + 86_400_000,
        ..p.clone()
    });
    assert_eq!(
        next_day.dedupe_key.as_str(),
        "owner_provider_paused:smtp:2026-11-30:auth-535"
    );
    assert!(e.text.contains("2026-11-29 "), "{}", e.text);
    assert!(e.text.contains("refused the engine's credentials"));
    assert!(e.text.contains("No other route can send"), "{}", e.text);
    assert!(e.text.contains("resume"), "{}", e.text);
    assert!(
        e.html.contains("535 &#60;bad&#62; credentials"),
        "{}",
        e.html
    );
    assert!(!e.html.contains("<bad>"));
    let with_fallback = alert(&ProviderPaused {
        provider: "resend",
        fallback: Some("smtp"),
        wait_until_ms: None,
        cause: PauseCause::DailyLimit,
        ..p.clone()
    });
    assert!(with_fallback
        .text
        .contains("Email goes out through smtp meanwhile: the mail is carried"));
    assert!(with_fallback.text.contains("daily sending limit"));
    // A daily limit quotes the provider's reply too (for SMTP it may be a suspension).
    assert!(
        with_fallback
            .text
            .contains("Its exact reply: SMTP AUTH: 535 <bad> credentials"),
        "{}",
        with_fallback.text
    );
    assert_eq!(
        with_fallback.subject,
        "resend hit its daily limit: smtp carries the mail"
    );
    let nowhere = alert(&ProviderPaused {
        provider: "cloudflare_email",
        fallback: None,
        cause: PauseCause::DailyLimit,
        ..p.clone()
    });
    assert_eq!(
        nowhere.subject,
        "cloudflare_email hit its daily limit: no route is sending"
    );
    // A refusal of our configuration quotes the server's exact reply, one bounded line, and says
    // no guest was suppressed.
    let hostile = format!(
        "SMTP MAIL FROM: 553 5.7.1 <bookings@example.com>: Sender address rejected\r\nBcc: x@evil.test {}",
        "y".repeat(2_000)
    );
    let config = alert(&ProviderPaused {
        reason: &hostile,
        cause: PauseCause::Configuration,
        ..p
    });
    assert!(
        config
            .text
            .contains("Its exact reply: SMTP MAIL FROM: 553 5.7.1"),
        "{}",
        config.text
    );
    assert!(
        config.text.contains("No guest was suppressed"),
        "{}",
        config.text
    );
    let quoted = config
        .text
        .lines()
        .find(|l| l.starts_with("Its exact reply:"))
        .unwrap();
    assert!(quoted.contains("Bcc: x@evil.test"), "one line: {quoted}");
    assert!(quoted.chars().count() < 450, "bounded: {}", quoted.len());
    // An owner alert may name internals, never carry placeholders.
    let lock = ContentLock::from_config("https://engine.example.com", "outbox,workflow");
    assert!(lock.check(&e).is_ok());
    assert!(lock.check(&with_fallback).is_ok());
    assert!(lock.check(&config).is_ok());
}
