//! Host tests of the Duffel adapter (`sources::duffel`): every fixture becomes the exact canonical
//! event, other types are ignored, and malformed payloads name the JSON path at fault.

use crate::fixtures::{
    assert_invalid, assert_missing, assert_refuses_non_objects, example_harbour_stay, first_error,
    fixture, fixture_bytes, remove, testa, Refused,
    Refused::{Invalid, Missing},
};
use booking_email_engine::domain::event::EmailAddress;
use booking_email_engine::domain::event::{
    Airport, BookingRef, Cancellation, FlightBooking, FlightChange, FlightSegment, Holder,
    HotelBooking, HotelLocation, Interpretation, Money, PersonName, SupplierEvent,
};
use booking_email_engine::sources::duffel::{
    interpret, parse_aic_list, parse_envelope, peek_event_id,
};
use booking_email_engine::sources::ParseError;
use chrono::{NaiveDateTime, TimeZone, Utc};
use serde_json::{json, Value};

fn body(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

fn journey(body: &[u8]) -> SupplierEvent {
    let env = parse_envelope(body).expect("envelope parses");
    match interpret(&env).expect("interprets") {
        Interpretation::Journey(e) => e,
        other => panic!("expected a journey, got {other:?}"),
    }
}

fn failure(body: &[u8]) -> ParseError {
    first_error(parse_envelope(body), interpret)
}

fn at(s: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
}

fn airport(iata_code: &str, name: &str, city_name: &str, time_zone: &str) -> Airport {
    Airport {
        iata_code: iata_code.into(),
        name: name.into(),
        city_name: Some(city_name.into()),
        time_zone: Some(time_zone.into()),
    }
}

fn lhr() -> Airport {
    airport("LHR", "Heathrow Airport", "London", "Europe/London")
}

fn bcn() -> Airport {
    airport(
        "BCN",
        "Barcelona-El Prat Airport",
        "Barcelona",
        "Europe/Madrid",
    )
}

/// The fixtures' Example Air flight `flight_number` from London to Barcelona, at local times.
fn lhr_to_bcn(flight_number: &str, departing_at: &str, arriving_at: &str) -> FlightSegment {
    FlightSegment {
        flight_number: flight_number.into(),
        origin: lhr(),
        destination: bcn(),
        departing_at: at(departing_at),
        arriving_at: at(arriving_at),
        airline: Some("Example Air".into()),
    }
}

fn order_id() -> BookingRef {
    BookingRef::parse("ord_0000FAKEORDER00001").unwrap()
}

/// The `order.created` fixture with `data.object` edited.
fn order_with(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut v = fixture("duffel-order-created.json");
    edit(&mut v["data"]["object"]);
    body(&v)
}

/// The `stays.booking.created` fixture with `data.object` edited.
fn stay_with(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut v = fixture("duffel-stays-booking-created.json");
    edit(&mut v["data"]["object"]);
    body(&v)
}

fn event(kind: &str, object: Value) -> Vec<u8> {
    body(&json!({
        "id": "wev_0000TESTFAKE0000000009",
        "type": kind,
        "api_version": "v2",
        "live_mode": true,
        "created_at": "2026-05-01T10:00:00.000000Z",
        "data": {"object": object}
    }))
}

// ---------------------------------------------------------------- envelope

#[test]
fn envelope_fields_are_read() {
    let env = parse_envelope(&fixture_bytes("duffel-order-created.json")).unwrap();
    assert_eq!(env.id.as_str(), "wev_0000FAKEEVENT0001");
    assert_eq!(env.event_type, "order.created");
    assert!(!env.live_mode);
    assert_eq!(env.object["id"], "ord_0000FAKEORDER00001");
    assert_eq!(
        env.created_at,
        Some(Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 1).unwrap())
    );
    assert_eq!(
        env.idempotency_key.as_deref(),
        Some("ord_0000FAKEORDER00001")
    );
}

#[test]
fn body_that_is_not_json_is_a_json_error() {
    assert_refuses_non_objects(parse_envelope, b"not json", b"[]");
}

/// The envelope error of the `order.created` fixture with its envelope edited.
fn envelope_error(edit: impl FnOnce(&mut Value)) -> ParseError {
    let mut v = fixture("duffel-order-created.json");
    edit(&mut v);
    parse_envelope(&body(&v)).unwrap_err()
}

#[test]
fn envelope_without_id_or_type_names_the_field() {
    assert_missing(&envelope_error(|v| remove(v, "id")), "id");
    assert_invalid(&envelope_error(|v| v["type"] = json!(7)), "type");
}

#[test]
fn live_mode_is_required_and_boolean() {
    let not_boolean = envelope_error(|v| v["live_mode"] = json!("false"));
    assert_invalid(&not_boolean, "live_mode");
    assert_missing(&envelope_error(|v| remove(v, "live_mode")), "live_mode");
}

#[test]
fn created_at_that_is_not_rfc3339_is_invalid() {
    let err = envelope_error(|v| v["created_at"] = json!("yesterday"));
    assert_invalid(&err, "created_at");
}

#[test]
fn peek_event_id_reads_the_id_of_a_broken_body() {
    let mut v = fixture("duffel-order-created.json");
    v["live_mode"] = json!("nope");
    assert_eq!(
        peek_event_id(&body(&v)).as_deref(),
        Some("wev_0000FAKEEVENT0001")
    );
    assert_eq!(peek_event_id(b"{"), None);
}

// ---------------------------------------------------------------- order.created

#[test]
fn order_created_becomes_the_exact_flight_booking() {
    let expected = FlightBooking {
        client_reference: Some("trip_fake_0001".into()),
        booking_id: order_id(),
        booking_reference: Some("FAKE12".into()),
        status: "CONFIRMED".into(),
        contact: Holder {
            name: testa(),
            email: EmailAddress::parse("guest@example.com").unwrap(),
            phone: Some("+15550100001".into()),
        },
        passengers: vec![testa()],
        segments: vec![lhr_to_bcn(
            "ZZ 0472",
            "2026-06-12 07:15",
            "2026-06-12 10:25",
        )],
        total: Some(Money {
            amount: "212.40".into(),
            currency: "GBP".into(),
        }),
        sandbox: true,
        locale: None,
    };
    assert_eq!(
        journey(&fixture_bytes("duffel-order-created.json")),
        SupplierEvent::FlightBooked(Box::new(expected))
    );
}

#[test]
fn live_mode_order_is_not_sandbox() {
    let mut v = fixture("duffel-order-created.json");
    v["live_mode"] = json!(true);
    match journey(&body(&v)) {
        SupplierEvent::FlightBooked(f) => assert!(!f.sandbox),
        other => panic!("{other:?}"),
    }
}

/// An airport without a usable `time_zone` gets the zone at its coordinates; without
/// coordinates either, it keeps what Duffel gave (nothing, or unusable text).
#[test]
fn airport_without_a_zone_is_located_by_its_coordinates() {
    let zones = |edit: fn(&mut Value, &mut Value)| {
        let b = order_with(|o| {
            let seg = &mut o["slices"][0]["segments"][0];
            let (mut origin, mut destination) = (seg["origin"].take(), seg["destination"].take());
            edit(&mut origin, &mut destination);
            (seg["origin"], seg["destination"]) = (origin, destination);
        });
        let SupplierEvent::FlightBooked(f) = journey(&b) else {
            panic!("expected FlightBooked")
        };
        let s = &f.segments[0];
        (s.origin.time_zone.clone(), s.destination.time_zone.clone())
    };
    let zone = |z: &str| Some(z.to_string());
    // No time_zone at all, and a name that is no zone: both from the coordinates.
    assert_eq!(
        zones(|o, d| {
            remove(o, "time_zone");
            d["time_zone"] = json!("Mars/Olympus_Mons");
        }),
        (zone("Europe/London"), zone("Europe/Madrid"))
    );
    // Neither zone nor coordinates (or the (0, 0) placeholder): nothing to look up.
    assert_eq!(
        zones(|o, d| {
            for k in ["time_zone", "latitude", "longitude"] {
                remove(o, k);
            }
            d["time_zone"] = json!("Mars/Olympus_Mons");
            (d["latitude"], d["longitude"]) = (json!(0.0), json!(0.0));
        }),
        (None, zone("Mars/Olympus_Mons"))
    );
    // A valid zone given by Duffel always wins over the coordinates.
    assert_eq!(
        zones(|o, _| o["time_zone"] = json!("Europe/Dublin")),
        (zone("Europe/Dublin"), zone("Europe/Madrid"))
    );
}

#[test]
fn segments_of_all_slices_are_kept_in_travel_order() {
    let b = order_with(|o| {
        let mut back = o["slices"][0].clone();
        let seg = &mut back["segments"][0];
        seg["origin"] = o["slices"][0]["segments"][0]["destination"].clone();
        seg["destination"] = o["slices"][0]["segments"][0]["origin"].clone();
        seg["departing_at"] = json!("2026-06-15T18:05:00");
        seg["arriving_at"] = json!("2026-06-15T19:20:00");
        seg["marketing_carrier_flight_number"] = json!("0473");
        o["slices"].as_array_mut().unwrap().push(back);
    });
    let SupplierEvent::FlightBooked(f) = journey(&b) else {
        panic!("expected FlightBooked")
    };
    let summary: Vec<_> = f
        .segments
        .iter()
        .map(|s| {
            (
                s.flight_number.as_str(),
                s.origin.iata_code.as_str(),
                s.destination.iata_code.as_str(),
                s.departing_at,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("ZZ 0472", "LHR", "BCN", at("2026-06-12 07:15")),
            ("ZZ 0473", "BCN", "LHR", at("2026-06-15 18:05")),
        ]
    );
}

#[test]
fn contact_is_the_first_passenger_with_an_email() {
    let b = order_with(|o| {
        let mut child = o["passengers"][0].clone();
        child["given_name"] = json!("Kiddo");
        child["email"] = Value::Null;
        child["phone_number"] = Value::Null;
        o["passengers"].as_array_mut().unwrap().insert(0, child);
    });
    let SupplierEvent::FlightBooked(f) = journey(&b) else {
        panic!("expected FlightBooked")
    };
    assert_eq!(f.contact.name, testa());
    assert_eq!(f.contact.email.as_str(), "guest@example.com");
    assert_eq!(
        f.passengers,
        vec![
            PersonName {
                first_name: "Kiddo".into(),
                last_name: "Guestington".into()
            },
            testa()
        ]
    );
}

#[test]
fn hold_order_awaiting_payment_keeps_that_status() {
    let b = order_with(|o| o["payment_status"]["awaiting_payment"] = json!(true));
    let SupplierEvent::FlightBooked(f) = journey(&b) else {
        panic!("expected FlightBooked")
    };
    assert_eq!(f.status, "AWAITING_PAYMENT");
}

/// An edit of a fixture's `data.object`.
type Edit = fn(&mut Value);

#[test]
fn malformed_orders_are_refused_naming_the_field() {
    let cases: [(&str, Edit, Refused, &str); 7] = [
        (
            "an order without a departure time names the segment field",
            |o| remove(&mut o["slices"][0]["segments"][0], "departing_at"),
            Missing,
            "data.object.slices[0].segments[0].departing_at",
        ),
        (
            "an order without a marketing carrier code is rejected",
            |o| o["slices"][0]["segments"][0]["marketing_carrier"]["iata_code"] = Value::Null,
            Missing,
            "data.object.slices[0].segments[0].marketing_carrier.iata_code",
        ),
        (
            "an order without an origin airport code is rejected",
            |o| o["slices"][0]["segments"][0]["origin"] = json!({"name": "Somewhere"}),
            Missing,
            "data.object.slices[0].segments[0].origin.iata_code",
        ),
        (
            "an order with no segments is invalid",
            |o| o["slices"] = json!([]),
            Invalid,
            "data.object.slices",
        ),
        (
            "an order without any passenger email is rejected",
            |o| remove(&mut o["passengers"][0], "email"),
            Missing,
            "data.object.passengers[0].email",
        ),
        (
            "an order with an invalid passenger email is invalid",
            |o| o["passengers"][0]["email"] = json!("guest"),
            Invalid,
            "data.object.passengers[0].email",
        ),
        (
            "an order without an id is rejected",
            |o| remove(o, "id"),
            Missing,
            "data.object.id",
        ),
    ];
    for (case, edit, refused, field) in cases {
        refused.assert(&failure(&order_with(edit)), field, case);
    }
}

#[test]
fn order_with_unreadable_arrival_time_is_invalid() {
    let err = failure(&order_with(|o| {
        o["slices"][0]["segments"][0]["arriving_at"] = json!("12/06/2026 10:25");
    }));
    assert_invalid(&err, "data.object.slices[0].segments[0].arriving_at");
    assert!(err.to_string().contains("12/06/2026 10:25"), "{err}");
}

#[test]
fn acted_on_event_without_data_object_is_rejected() {
    let mut v = fixture("duffel-order-created.json");
    v["data"] = json!({});
    assert_missing(&failure(&body(&v)), "data.object");
}

// ---------------------------------------------------------------- airline-initiated changes

#[test]
fn airline_change_event_carries_the_order_and_change_ids() {
    assert_eq!(
        journey(&fixture_bytes("duffel-order-airline-initiated-change.json")),
        SupplierEvent::FlightScheduleChanged {
            order_id: order_id(),
            change_id: Some("aic_0000FAKEAIC00001".into()),
        }
    );
}

#[test]
fn airline_change_event_with_an_aic_object_reads_its_order_id() {
    let b = event(
        "order.airline_initiated_change_detected",
        json!({"id": "aic_0000FAKEAIC00009", "order_id": "ord_0000FAKEORDER00009"}),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::FlightScheduleChanged {
            order_id: BookingRef::parse("ord_0000FAKEORDER00009").unwrap(),
            change_id: Some("aic_0000FAKEAIC00009".into()),
        }
    );
}

#[test]
fn airline_change_id_falls_back_to_the_idempotency_key() {
    let mut v = fixture("duffel-order-airline-initiated-change.json");
    remove(&mut v["data"]["object"], "aic_id");
    assert_eq!(
        journey(&body(&v)),
        SupplierEvent::FlightScheduleChanged {
            order_id: order_id(),
            change_id: Some("aic_0000FAKEAIC00001".into()),
        }
    );
}

#[test]
fn airline_change_event_without_order_id_is_rejected() {
    let mut v = fixture("duffel-order-airline-initiated-change.json");
    v["data"]["object"] = json!({"aic_id": "aic_0000FAKEAIC00001"});
    assert_missing(&failure(&body(&v)), "data.object.id");
}

#[test]
fn aic_list_gives_removed_and_added_segments_with_local_times() {
    let changes = parse_aic_list(
        &fixture_bytes("duffel-airline-initiated-change-object.json"),
        &order_id(),
    )
    .unwrap();
    assert_eq!(
        changes,
        vec![FlightChange {
            change_id: "aic_0000FAKEAIC00001".into(),
            order_id: order_id(),
            removed: vec![lhr_to_bcn(
                "ZZ 0472",
                "2026-06-12 07:15",
                "2026-06-12 10:25"
            )],
            added: vec![lhr_to_bcn(
                "ZZ 0476",
                "2026-06-12 09:40",
                "2026-06-12 12:50"
            )],
        }]
    );
}

#[test]
fn aic_list_skips_changes_of_other_orders() {
    let mut v = fixture("duffel-airline-initiated-change-object.json");
    let mut other = v["data"][0].clone();
    other["id"] = json!("aic_0000FAKEAIC00002");
    other["order_id"] = json!("ord_0000SOMEOTHER0001");
    v["data"].as_array_mut().unwrap().push(other);
    let changes = parse_aic_list(&body(&v), &order_id()).unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].change_id, "aic_0000FAKEAIC00001");
}

#[test]
fn empty_aic_list_is_no_change() {
    assert_eq!(parse_aic_list(br#"{"data": []}"#, &order_id()), Ok(vec![]));
}

#[test]
fn aic_list_with_bad_time_names_the_path() {
    let mut v = fixture("duffel-airline-initiated-change-object.json");
    v["data"][0]["added"][0]["segments"][0]["departing_at"] = json!("soon");
    let err = parse_aic_list(&body(&v), &order_id()).unwrap_err();
    assert_invalid(&err, "data[0].added[0].segments[0].departing_at");
}

#[test]
fn aic_list_without_data_or_removed_is_rejected() {
    assert_missing(&parse_aic_list(b"{}", &order_id()).unwrap_err(), "data");
    let mut v = fixture("duffel-airline-initiated-change-object.json");
    remove(&mut v["data"][0], "removed");
    assert_missing(
        &parse_aic_list(&body(&v), &order_id()).unwrap_err(),
        "data[0].removed",
    );
    assert!(matches!(
        parse_aic_list(b"nope", &order_id()),
        Err(ParseError::Json(_))
    ));
}

// ---------------------------------------------------------------- cancellations

#[test]
fn order_cancellation_confirmed_cancels_the_order_with_its_refund() {
    let b = event(
        "order_cancellation.confirmed",
        json!({
            "id": "ore_0000FAKECANCEL001",
            "order_id": "ord_0000FAKEORDER00001",
            "refund_amount": "90.80",
            "refund_currency": "GBP",
            "refund_to": "original_form_of_payment",
            "confirmed_at": "2026-05-01T10:00:00Z"
        }),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::BookingCancelled(Cancellation {
            booking_id: order_id(),
            with_charges: false,
            cancellation_fee: None,
            refund: Some(Money {
                amount: "90.80".into(),
                currency: "GBP".into()
            }),
        })
    );
}

#[test]
fn order_cancellation_with_a_penalty_is_with_charges() {
    let b = event(
        "order_cancellation.confirmed",
        json!({
            "id": "ore_0000FAKECANCEL001",
            "order_id": "ord_0000FAKEORDER00001",
            "penalty_amount": "50.00",
            "penalty_currency": "gbp"
        }),
    );
    let SupplierEvent::BookingCancelled(c) = journey(&b) else {
        panic!("expected BookingCancelled")
    };
    assert!(c.with_charges);
    assert_eq!(
        c.cancellation_fee,
        Some(Money {
            amount: "50.00".into(),
            currency: "GBP".into()
        })
    );
    assert_eq!(c.refund, None);
}

#[test]
fn order_cancellation_without_order_id_is_rejected() {
    let b = event(
        "order_cancellation.confirmed",
        json!({"id": "ore_0000FAKECANCEL001"}),
    );
    assert_missing(&failure(&b), "data.object.order_id");
}

#[test]
fn stays_booking_cancelled_cancels_the_booking() {
    let b = event(
        "stays.booking.cancelled",
        json!({"id": "bok_0000FAKEBOOKING01", "status": "cancelled"}),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::BookingCancelled(Cancellation {
            booking_id: BookingRef::parse("bok_0000FAKEBOOKING01").unwrap(),
            with_charges: false,
            cancellation_fee: None,
            refund: None,
        })
    );
}

// ---------------------------------------------------------------- stays.booking.created

#[test]
fn stays_booking_becomes_the_exact_hotel_booking() {
    let expected = HotelBooking {
        guests: vec![testa()],
        sandbox: true,
        location: Some(HotelLocation {
            street_address: Some("1 Example Street".into()),
            locality: Some("Barcelona".into()),
            region: Some("Catalonia".into()),
            postal_code: Some("08000".into()),
            country: Some("ES".into()),
            telephone: None,
            checkin_time: Some("15:00".into()),
            checkout_time: Some("11:00".into()),
            address: Some("1 Example Street, 08000, Barcelona, Catalonia, ES".into()),
            time_zone: None,
            latitude: Some(41.38),
            longitude: Some(2.18),
        }),
        ..example_harbour_stay(
            "bok_0000FAKEBOOKING01",
            "FAKEREF991",
            "acc_0000FAKEACC00001",
        )
    };
    let SupplierEvent::HotelBooked(b) =
        journey(&fixture_bytes("duffel-stays-booking-created.json"))
    else {
        panic!("expected HotelBooked")
    };
    assert_eq!(*b, expected);
    assert_eq!(b.nights(), 3);
}

#[test]
fn stays_booking_with_several_rooms_spreads_the_guests() {
    let b = stay_with(|o| {
        o["rooms"] = json!(2);
        let mut second = o["guests"][0].clone();
        second["given_name"] = json!("Otto");
        o["guests"].as_array_mut().unwrap().push(second.clone());
        second["given_name"] = json!("Ida");
        o["guests"].as_array_mut().unwrap().push(second);
        o["accommodation"]["rooms"] =
            json!([{"name": "Sea View Double", "rates": [{"board_type": "breakfast"}]}]);
    });
    let SupplierEvent::HotelBooked(h) = journey(&b) else {
        panic!("expected HotelBooked")
    };
    let rooms: Vec<_> = h
        .rooms
        .iter()
        .map(|r| (r.room_name.as_str(), r.board_name.as_deref(), r.adults))
        .collect();
    assert_eq!(
        rooms,
        vec![
            ("Sea View Double", Some("Breakfast included"), 2),
            ("Sea View Double", Some("Breakfast included"), 1),
        ]
    );
    assert_eq!(h.guests.len(), 3);
    assert_eq!(h.holder.name, testa());
}

#[test]
fn stays_booking_without_coordinates_or_check_in_times_has_neither() {
    // Only the address is left: the location carries it, and no coordinates.
    let b = stay_with(|o| {
        o["accommodation"]["location"] = json!({"address": {"city_name": "Barcelona"}});
        o["accommodation"]["check_in_information"] = Value::Null;
    });
    let SupplierEvent::HotelBooked(h) = journey(&b) else {
        panic!("expected HotelBooked")
    };
    assert_eq!(
        h.location,
        Some(HotelLocation {
            address: Some("Barcelona".into()),
            locality: Some("Barcelona".into()),
            ..HotelLocation::default()
        })
    );
    assert_eq!(h.checkin_instructions, None);
}

#[test]
fn stays_booking_with_only_a_check_out_time_says_so() {
    let b = stay_with(|o| {
        o["accommodation"]["check_in_information"] = json!({"check_out_before_time": "10:00"});
    });
    let SupplierEvent::HotelBooked(h) = journey(&b) else {
        panic!("expected HotelBooked")
    };
    assert_eq!(
        h.checkin_instructions.as_deref(),
        Some("Check-out by 10:00")
    );
}

#[test]
fn malformed_stays_bookings_are_refused_naming_the_field() {
    let cases: [(&str, Edit, Refused, &str); 6] = [
        (
            "a stays booking without a check-in date is rejected",
            |o| remove(o, "check_in_date"),
            Missing,
            "data.object.check_in_date",
        ),
        (
            "a stays booking checking out before checking in is invalid",
            |o| o["check_out_date"] = json!("2026-06-10"),
            Invalid,
            "data.object.check_out_date",
        ),
        (
            "a stays booking with an unreadable date is invalid",
            |o| o["check_in_date"] = json!("12 June 2026"),
            Invalid,
            "data.object.check_in_date",
        ),
        (
            "a stays booking without a hotel name is rejected",
            |o| remove(&mut o["accommodation"], "name"),
            Missing,
            "data.object.accommodation.name",
        ),
        (
            "a stays booking without an email is rejected",
            |o| o["email"] = Value::Null,
            Missing,
            "data.object.email",
        ),
        (
            "a stays booking with an email that is no address is invalid",
            |o| o["email"] = json!("not-an-email"),
            Invalid,
            "data.object.email",
        ),
    ];
    for (case, edit, refused, field) in cases {
        refused.assert(&failure(&stay_with(edit)), field, case);
    }
}

// ---------------------------------------------------------------- ignored types

#[test]
fn other_types_are_ignored_with_their_name() {
    for kind in [
        "air.order.changed",
        "air.payment.succeeded",
        "air.payment.failed",
        "order_cancellation.created",
        "something.new",
    ] {
        let env = parse_envelope(&event(kind, json!({"id": "x"}))).unwrap();
        assert_eq!(
            interpret(&env).unwrap(),
            Interpretation::Ignored(kind.to_string()),
            "{kind}"
        );
    }
}

#[test]
fn ping_from_the_signature_vector_is_ignored() {
    let v = fixture("signature-vectors.json");
    let raw = v["duffel"]["raw_body"].as_str().unwrap();
    let env = parse_envelope(raw.as_bytes()).unwrap();
    assert_eq!(env.id.as_str(), "wev_0000TESTFAKE0000000001");
    assert_eq!(
        interpret(&env).unwrap(),
        Interpretation::Ignored("ping.triggered".into())
    );
}

#[test]
fn air_order_changed_is_ignored_even_with_a_full_order() {
    // The payload is the order as it is now; a status-only move cannot be told apart from a
    // traveller-visible change without the previous state, so nothing is started.
    let mut v = fixture("duffel-order-created.json");
    v["type"] = json!("air.order.changed");
    let env = parse_envelope(&body(&v)).unwrap();
    assert_eq!(
        interpret(&env).unwrap(),
        Interpretation::Ignored("air.order.changed".into())
    );
}
