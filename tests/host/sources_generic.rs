//! Host tests of the generic source (`sources::generic`): the documented example body parses to the
//! exact canonical event, every canonical kind round-trips, and bad bodies name the field.

use crate::fixtures::{assert_refuses_non_objects, example_harbour_stay, testa};
use booking_email_engine::domain::event::{
    Airport, BookedRoom, BookingRef, Cancellation, EmailAddress, FlightBooking, FlightSegment,
    Holder, HotelAmendment, HotelBooking, HotelLocation, Interpretation, Money, PersonName,
    SupplierEvent,
};
use booking_email_engine::sources::generic::{interpret, kinds};
use booking_email_engine::sources::ParseError;
use chrono::NaiveDate;
use serde_json::{json, Value};

/// The ```json block of the module docs of `src/sources/generic.rs`, with the `//! ` prefixes
/// removed: docs/suppliers.md copies this example, so the test parses exactly that text.
fn documented_example() -> String {
    let path = format!("{}/src/sources/generic.rs", env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(path).unwrap();
    let mut lines = source
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| l.trim_start_matches("//!").strip_prefix(' ').unwrap_or(""))
        .skip_while(|l| *l != "```json")
        .skip(1);
    let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
    assert!(!block.is_empty(), "module docs must hold a ```json example");
    block.join("\n")
}

fn journey(body: &[u8]) -> SupplierEvent {
    match interpret(body).expect("interprets") {
        Interpretation::Journey(e) => e,
        other => panic!("expected a journey, got {other:?}"),
    }
}

fn example() -> Value {
    serde_json::from_str(&documented_example()).unwrap()
}

fn body(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

fn booking_ref(s: &str) -> BookingRef {
    BookingRef::parse(s).unwrap()
}

#[test]
fn documented_hotel_booked_example_parses_to_the_exact_booking() {
    let expected = HotelBooking {
        rooms: vec![BookedRoom {
            room_name: "Standard Double".into(),
            board_name: Some("Breakfast included".into()),
            adults: 2,
            children: 0,
        }],
        guests: vec![
            testa(),
            PersonName {
                first_name: "Otto".into(),
                last_name: "Guestington".into(),
            },
        ],
        total: Some(Money {
            amount: "540.00".into(),
            currency: "EUR".into(),
        }),
        location: Some(HotelLocation {
            time_zone: Some("Europe/Madrid".into()),
            latitude: Some(41.38),
            longitude: Some(2.18),
            ..Default::default()
        }),
        ..example_harbour_stay("gen_bk_0001", "trip_fake_0001", "gen_hotel_42")
    };
    assert_eq!(
        journey(documented_example().as_bytes()),
        SupplierEvent::HotelBooked(Box::new(expected))
    );
}

#[test]
fn data_may_repeat_the_kind_when_it_matches_the_type() {
    let mut v = example();
    v["data"]["kind"] = json!("hotel_booked");
    assert!(matches!(journey(&body(&v)), SupplierEvent::HotelBooked(_)));
}

#[test]
fn data_kind_that_contradicts_the_type_is_invalid() {
    let mut v = example();
    v["data"]["kind"] = json!("booking_cancelled");
    let err = interpret(&body(&v)).unwrap_err();
    assert_eq!(err.field(), Some("data.kind"));
}

#[test]
fn every_canonical_kind_round_trips() {
    let samples = vec![
        SupplierEvent::HotelConfirmationNumber {
            booking_id: booking_ref("gen_bk_0001"),
            hotel_confirmation_number: "HCN-1".into(),
        },
        SupplierEvent::CheckinInstructions {
            booking_id: booking_ref("gen_bk_0001"),
            instructions: "Keys at the desk".into(),
        },
        SupplierEvent::HotelAmended(Box::new(HotelAmendment {
            booking_id: Some(booking_ref("gen_bk_0001")),
            hotel_name: Some("Other Hotel".into()),
            relocation: true,
            ..HotelAmendment::default()
        })),
        SupplierEvent::BookingCancelled(Cancellation {
            booking_id: booking_ref("gen_bk_0001"),
            with_charges: true,
            cancellation_fee: Some(Money {
                amount: "180".into(),
                currency: "EUR".into(),
            }),
            refund: None,
        }),
        SupplierEvent::FlightBooked(Box::new(FlightBooking {
            client_reference: None,
            booking_id: booking_ref("ord_1"),
            booking_reference: Some("PNR1".into()),
            status: "CONFIRMED".into(),
            contact: Holder {
                name: testa(),
                email: EmailAddress::parse("guest@example.com").unwrap(),
                phone: None,
            },
            passengers: vec![testa()],
            segments: vec![FlightSegment {
                airline: None,
                flight_number: "ZZ 0472".into(),
                origin: Airport {
                    iata_code: "LHR".into(),
                    name: "Heathrow Airport".into(),
                    city_name: Some("London".into()),
                    time_zone: Some("Europe/London".into()),
                },
                destination: Airport {
                    iata_code: "BCN".into(),
                    name: "Barcelona-El Prat Airport".into(),
                    city_name: None,
                    time_zone: Some("Europe/Madrid".into()),
                },
                departing_at: NaiveDate::from_ymd_opt(2026, 6, 12)
                    .unwrap()
                    .and_hms_opt(7, 15, 0)
                    .unwrap(),
                arriving_at: NaiveDate::from_ymd_opt(2026, 6, 12)
                    .unwrap()
                    .and_hms_opt(10, 25, 0)
                    .unwrap(),
            }],
            total: None,
            sandbox: false,
            locale: None,
        })),
        SupplierEvent::FlightScheduleChanged {
            order_id: booking_ref("ord_1"),
            change_id: Some("aic_1".into()),
        },
        SupplierEvent::StatusChanged {
            booking_id: booking_ref("ord_1"),
            status: "TICKETED".into(),
        },
    ];
    for event in samples {
        let mut data = serde_json::to_value(&event).unwrap();
        data.as_object_mut().unwrap().remove("kind");
        let b = body(
            &json!({"type": event.kind(), "timestamp": "2026-05-01T10:00:00+02:00", "data": data}),
        );
        assert_eq!(journey(&b), event, "{}", event.kind());
    }
}

#[test]
fn kinds_list_matches_the_canonical_names() {
    let mut v = example();
    v["data"]["kind"] = json!("hotel_booked");
    let e: SupplierEvent = serde_json::from_value(v["data"].clone()).unwrap();
    let kinds: Vec<&str> = kinds().collect();
    assert!(kinds.contains(&e.kind()));
    assert_eq!(kinds.len(), 9);
    for kind in kinds {
        // Every listed kind is acted on (never Ignored), even when its data is wrong.
        let r = interpret(&body(&json!({"type": kind, "data": {}})));
        assert!(
            !matches!(r, Ok(Interpretation::Ignored(_))),
            "{kind} must be a canonical kind"
        );
    }
}

#[test]
fn unknown_type_is_ignored_without_reading_data() {
    assert_eq!(
        interpret(br#"{"type": "booking.confirmed", "timestamp": "2026-01-01T00:00:00Z", "data": {"booking_id": "bk_fake_0001"}}"#)
            .unwrap(),
        Interpretation::Ignored("booking.confirmed".into())
    );
    assert_eq!(
        interpret(br#"{"type": "something_new"}"#).unwrap(),
        Interpretation::Ignored("something_new".into())
    );
}

#[test]
fn timestamp_is_optional() {
    let mut v = example();
    v.as_object_mut().unwrap().remove("timestamp");
    assert!(matches!(journey(&body(&v)), SupplierEvent::HotelBooked(_)));
}

#[test]
fn timestamp_that_is_not_rfc3339_is_invalid() {
    let mut v = example();
    v["timestamp"] = json!("last tuesday");
    assert_eq!(interpret(&body(&v)).unwrap_err().field(), Some("timestamp"));
}

#[test]
fn missing_type_or_data_is_reported() {
    let mut v = example();
    v.as_object_mut().unwrap().remove("type");
    assert_eq!(
        interpret(&body(&v)).unwrap_err(),
        ParseError::Missing("type".into())
    );
    let mut v = example();
    v.as_object_mut().unwrap().remove("data");
    assert_eq!(
        interpret(&body(&v)).unwrap_err(),
        ParseError::Missing("data".into())
    );
    let mut v = example();
    v["data"] = json!([1, 2]);
    assert_eq!(interpret(&body(&v)).unwrap_err().field(), Some("data"));
}

#[test]
fn serde_errors_name_data_and_carry_serdes_message() {
    let mut v = example();
    v["data"].as_object_mut().unwrap().remove("hotel_name");
    let err = interpret(&body(&v)).unwrap_err();
    assert_eq!(err.field(), Some("data"));
    assert!(err.to_string().contains("hotel_name"), "{err}");

    let mut v = example();
    v["data"]["holder"]["email"] = json!("not-an-email");
    let err = interpret(&body(&v)).unwrap_err();
    assert_eq!(err.field(), Some("data"));
    assert!(err.to_string().contains("not an email address"), "{err}");

    let mut v = example();
    v["data"]["checkin"] = json!("12/06/2026");
    assert_eq!(interpret(&body(&v)).unwrap_err().field(), Some("data"));
}

#[test]
fn checkout_before_checkin_is_invalid() {
    let mut v = example();
    v["data"]["checkout"] = json!("2026-06-11");
    assert_eq!(
        interpret(&body(&v)).unwrap_err().field(),
        Some("data.checkout")
    );
}

#[test]
fn flight_booking_without_segments_is_invalid() {
    let b = json!({
        "type": "flight_booked",
        "data": {
            "booking_id": "ord_1",
            "booking_reference": "PNR1",
            "status": "CONFIRMED",
            "contact": {"name": {"first_name": "Testa", "last_name": "Guestington"}, "email": "guest@example.com", "phone": null},
            "passengers": [],
            "segments": [],
            "total": null,
            "sandbox": true
        }
    });
    assert_eq!(
        interpret(&body(&b)).unwrap_err().field(),
        Some("data.segments")
    );
}

#[test]
fn non_json_or_non_object_bodies_are_rejected() {
    assert_refuses_non_objects(interpret, b"hello", b"[]");
    assert_eq!(
        interpret(br#"{"type": 5, "data": {}}"#)
            .unwrap_err()
            .field(),
        Some("type")
    );
}
