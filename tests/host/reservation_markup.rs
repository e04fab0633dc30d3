//! Reservation markup (schema.org JSON-LD in the HTML part, `domain::email::markup`): a
//! `LodgingReservation` or `FlightReservation` in every booking email kind when every property
//! Gmail's reference pages require is known, with `modifiedTime` on changes and
//! `reservationStatus` Cancelled on cancellations; none at all when a required property is
//! unknown; never a way out of the script element; nothing the content lock forbids. (The
//! end-to-end runs check every block of every email against tests/e2e/reservation-markup.schema.json.)

use crate::fixtures::branding;
use booking_email_engine::domain::email::content_lock::ContentLock;
use booking_email_engine::domain::email::markup::{self, Status};
use booking_email_engine::domain::event::{Cancellation, FlightBooking, HotelBooking};
use booking_email_engine::domain::render::{self, guard::guarded, SegmentView};
use serde_json::{json, Value};

const AT: i64 = 1_780_000_000_000;

/// A stay whose supplier gave everything Gmail requires: address parts, telephone, zone, times.
fn hotel() -> HotelBooking {
    serde_json::from_value(json!({
        "booking_id": "BK_1", "client_reference": null, "prebook_id": null,
        "status": "CONFIRMED", "hotel_id": "lp_1", "hotel_name": "Example Harbour Hotel",
        "checkin": "2026-06-12", "checkout": "2026-06-15",
        "rooms": [{"room_name": "Double", "board_name": "BB", "adults": 2, "children": 0}],
        "holder": {"name": {"first_name": "Zoë", "last_name": "Guest"}, "email": "guest@example.com", "phone": null},
        "guests": [], "total": {"amount": "540", "currency": "EUR"}, "hotel_confirmation_number": "HCN-1", "sandbox": false,
        "location": {
            "time_zone": "Europe/Madrid",
            "address": "1 Example Street, 08000 Barcelona",
            "street_address": "1 Example Street", "locality": "Barcelona",
            "region": "Catalonia", "postal_code": "08000", "country": "ES",
            "telephone": "+34 930 000 000",
            "checkin_time": "15:00", "checkout_time": "11:00"
        }
    }))
    .unwrap()
}

fn flight(zones: bool, airline: bool) -> FlightBooking {
    let airport = |iata: &str, zone: &str| {
        json!({"iata_code": iata, "name": format!("{iata} Airport"), "city_name": null,
               "time_zone": if zones { json!(zone) } else { json!(null) }})
    };
    let name = if airline {
        json!("Example Air")
    } else {
        json!(null)
    };
    serde_json::from_value(json!({
        "booking_id": "ord_1", "booking_reference": "RZPNR7", "status": "confirmed",
        "contact": {"name": {"first_name": "Ana", "last_name": "Traveller"}, "email": "ana@example.com", "phone": null},
        "passengers": [{"first_name": "Ana", "last_name": "Traveller"}, {"first_name": "Ben", "last_name": "Traveller"}],
        "segments": [
            {"flight_number": "ZZ 0472", "origin": airport("LHR", "Europe/London"), "destination": airport("BCN", "Europe/Madrid"),
             "departing_at": "2026-06-12T07:15:00", "arriving_at": "2026-06-12T10:30:00", "airline": name},
            {"flight_number": "ZZ 0473", "origin": airport("BCN", "Europe/Madrid"), "destination": airport("LHR", "Europe/London"),
             "departing_at": "2026-06-15T18:05:00", "arriving_at": "2026-06-15T19:25:00", "airline": name}
        ],
        "total": null, "sandbox": true
    }))
    .unwrap()
}

/// The JSON-LD blocks of an HTML part, parsed; each must sit right after `<body …>`.
fn blocks(html: &str) -> Vec<Value> {
    let open = "<script type=\"application/ld+json\">";
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(open) {
        let after = &rest[start + open.len()..];
        let end = after.find("</script>").expect("closed");
        out.push(serde_json::from_str(&after[..end]).expect("valid JSON"));
        rest = &after[end..];
    }
    out
}

#[test]
fn a_stay_with_every_required_property_is_one_lodging_reservation() {
    let m: Value =
        serde_json::from_str(&markup::lodging(&hotel(), Status::Confirmed, None).unwrap()).unwrap();
    assert_eq!(
        m,
        json!({
            "@context": "http://schema.org",
            "@type": "LodgingReservation",
            "reservationNumber": "BK_1",
            "reservationId": "BK_1",
            "reservationStatus": "http://schema.org/Confirmed",
            "underName": {"@type": "Person", "name": "Zoë Guest"},
            "reservationFor": {
                "@type": "LodgingBusiness",
                "name": "Example Harbour Hotel",
                "address": {"@type": "PostalAddress", "streetAddress": "1 Example Street",
                            "addressLocality": "Barcelona", "addressRegion": "Catalonia",
                            "postalCode": "08000", "addressCountry": "ES"},
                "telephone": "+34 930 000 000"
            },
            // The hotel's times with its offset (CEST in June).
            "checkinDate": "2026-06-12T15:00:00+02:00",
            "checkoutDate": "2026-06-15T11:00:00+02:00"
        })
    );
    // Without the hotel's zone or times: the calendar dates.
    let mut b = hotel();
    b.location.as_mut().unwrap().time_zone = None;
    let m: Value =
        serde_json::from_str(&markup::lodging(&b, Status::Confirmed, None).unwrap()).unwrap();
    assert_eq!(m["checkinDate"], "2026-06-12");
    assert_eq!(m["checkoutDate"], "2026-06-15");
}

#[test]
fn no_lodging_markup_when_a_required_property_is_unknown() {
    let without = |f: &dyn Fn(&mut HotelBooking)| {
        let mut b = hotel();
        f(&mut b);
        markup::lodging(&b, Status::Confirmed, None)
    };
    assert!(without(&|b| b.location.as_mut().unwrap().telephone = None).is_none());
    assert!(without(&|b| b.location.as_mut().unwrap().telephone = Some("  ".into())).is_none());
    assert!(without(&|b| b.location.as_mut().unwrap().street_address = None).is_none());
    assert!(without(&|b| b.location.as_mut().unwrap().region = None).is_none());
    assert!(without(&|b| b.location.as_mut().unwrap().postal_code = Some("".into())).is_none());
    assert!(without(&|b| b.location = None).is_none());
    assert!(without(&|b| b.holder.name.first_name = String::new()).is_some());
    assert!(without(&|b| {
        b.holder.name.first_name = String::new();
        b.holder.name.last_name = String::new();
    })
    .is_none());
}

#[test]
fn flights_are_one_reservation_per_segment_and_passenger_with_each_airports_offset() {
    let m: Value = serde_json::from_str(
        &markup::flight(&flight(true, true), Status::Confirmed, Some(AT)).unwrap(),
    )
    .unwrap();
    let items = m.as_array().unwrap();
    assert_eq!(items.len(), 4, "2 segments × 2 passengers");
    let first = &items[0];
    assert_eq!(first["@type"], "FlightReservation");
    assert_eq!(first["reservationNumber"], "RZPNR7");
    assert_eq!(first["underName"]["name"], "Ana Traveller");
    assert_eq!(items[1]["underName"]["name"], "Ben Traveller");
    assert_eq!(first["modifiedTime"], "2026-05-28T20:26:40Z");
    let f = &first["reservationFor"];
    assert_eq!(f["flightNumber"], "472");
    assert_eq!(
        f["airline"],
        json!({"@type": "Airline", "name": "Example Air", "iataCode": "ZZ"})
    );
    assert_eq!(
        f["departureAirport"],
        json!({"@type": "Airport", "name": "LHR Airport", "iataCode": "LHR"})
    );
    assert_eq!(f["departureTime"], "2026-06-12T07:15:00+01:00");
    assert_eq!(f["arrivalTime"], "2026-06-12T10:30:00+02:00");
    // Unknown airline name or airport zone: no markup at all.
    assert!(markup::flight(&flight(true, false), Status::Confirmed, None).is_none());
    assert!(markup::flight(&flight(false, true), Status::Confirmed, None).is_none());
    let mut one_unknown = flight(true, true);
    one_unknown.segments[1].destination.time_zone = Some("Not/AZone".into());
    assert!(markup::flight(&one_unknown, Status::Confirmed, None).is_none());
    // Cancelled.
    let c: Value = serde_json::from_str(
        &markup::flight(&flight(true, true), Status::Cancelled, None).unwrap(),
    )
    .unwrap();
    assert_eq!(c[0]["reservationStatus"], "http://schema.org/Cancelled");
    assert!(c[0].get("modifiedTime").is_none());
}

#[test]
fn every_booking_email_kind_carries_its_markup() {
    let br = branding();
    let b = hotel();
    let f = flight(true, true);
    let segs = SegmentView::list(&f.segments);
    let cancellation = Cancellation {
        booking_id: b.booking_id.clone(),
        with_charges: false,
        cancellation_fee: None,
        refund: None,
    };
    let one = |e: &booking_email_engine::domain::outbox::outgoing::OutgoingEmail| {
        let found = blocks(&e.html);
        assert_eq!(found.len(), 1, "{}: {}", e.kind.as_str(), e.html);
        assert!(
            e.html.contains("<body")
                && e.html.find("<script").unwrap() > e.html.find("<body").unwrap()
        );
        found.into_iter().next().unwrap()
    };
    let confirmation = one(&render::booking_confirmation(&b, &br).unwrap());
    assert_eq!(
        confirmation["reservationStatus"],
        "http://schema.org/Confirmed"
    );
    assert!(confirmation.get("modifiedTime").is_none());
    let number = one(&render::hotel_confirmation_number(&b, "HCN-1", AT, &br).unwrap());
    assert_eq!(number["modifiedTime"], "2026-05-28T20:26:40Z");
    let updated = one(&render::booking_updated(&b, "0123456789abcdef", &[], AT, &br).unwrap());
    assert_eq!(updated["modifiedTime"], "2026-05-28T20:26:40Z");
    one(&render::arrival_guide(&b, &br).unwrap());
    one(&render::checkin_day(&b, &br).unwrap());
    let cancelled = render::CancelledBooking::for_hotel(&b).marked_up(markup::lodging(
        &b,
        Status::Cancelled,
        Some(AT),
    ));
    let off = one(&render::booking_cancelled(&cancelled, &cancellation, &br).unwrap());
    assert_eq!(off["reservationStatus"], "http://schema.org/Cancelled");
    assert_eq!(off["reservationNumber"], confirmation["reservationNumber"]);
    let flights = one(&render::flight_confirmation(&f, &segs, &br).unwrap());
    assert_eq!(flights.as_array().unwrap().len(), 4);
    let changed = one(&render::flight_changed(&f, "aic_1", &segs, &segs, AT, &br).unwrap());
    assert_eq!(changed[0]["modifiedTime"], "2026-05-28T20:26:40Z");
    // The thank-you (the stay is over) and every email of a stay without the required facts
    // carry none.
    assert!(blocks(&render::thank_you(&b, &br).unwrap().html).is_empty());
    let mut bare = b.clone();
    bare.location = None;
    assert!(blocks(&render::booking_confirmation(&bare, &br).unwrap().html).is_empty());
    assert!(blocks(
        &render::flight_confirmation(&flight(false, true), &segs, &br)
            .unwrap()
            .html
    )
    .is_empty());
}

/// The JSON's own structure never reads as an unrendered template to the content lock (no `}}`,
/// `{{`, `[[`, `]]`), so a booking email with markup passes the whole check, not only the gate.
#[test]
fn the_markup_passes_the_content_lock_whole() {
    let lock = ContentLock::from_config("https://engine.example.com", "outbox,wrangler");
    let br = branding();
    let f = flight(true, true);
    let segs = SegmentView::list(&f.segments);
    for e in [
        render::flight_confirmation(&f, &segs, &br).unwrap(),
        render::flight_changed(&f, "aic_1", &segs, &segs, AT, &br).unwrap(),
        render::booking_confirmation(&hotel(), &br).unwrap(),
        render::booking_updated(&hotel(), "0123456789abcdef", &[], AT, &br).unwrap(),
    ] {
        assert_eq!(blocks(&e.html).len(), 1);
        for marker in ["}}", "{{", "[[", "]]"] {
            assert!(!e.html.contains(marker), "{}: {marker}", e.kind.as_str());
        }
        assert_eq!(lock.check(&e), Ok(()), "{}", e.kind.as_str());
    }
}

#[test]
fn supplier_text_never_leaves_the_script_element_nor_carries_an_engine_link() {
    let lock = ContentLock::from_config("https://engine.example.com", "outbox");
    let br = branding();
    let mut b = hotel();
    b.hotel_name =
        "Harbour</script><script>alert(1)</script> https://engine.example.com/admin/x & Spa".into();
    let e = guarded(&lock, &b, |b| render::booking_confirmation(b, &br)).unwrap();
    let script_start = e.html.find("<script").unwrap();
    let script_end = e.html[script_start..].find("</script>").unwrap() + script_start;
    let inside = &e.html[script_start..script_end];
    assert!(!inside[1..].contains('<'), "{inside}");
    assert_eq!(e.html.matches("<script").count(), 1, "{}", e.html);
    let m = &blocks(&e.html)[0];
    let name = m["reservationFor"]["name"].as_str().unwrap();
    assert!(
        name.starts_with("Harbour</script><script>alert(1)</script>"),
        "{name}"
    );
    assert!(
        name.contains("[link removed]") && !name.contains("engine.example.com"),
        "{name}"
    );
    assert!(booking_email_engine::domain::render::guard::judge(&lock, &e).is_ok());
}
