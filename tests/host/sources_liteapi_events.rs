//! Host tests of the liteAPI lifecycle names beyond `booking.book` (`sources::liteapi::interpret`):
//! hotel confirmation number, cancellation, check-in instructions, amendments, rebooks and the
//! `flight.book.*` family — exact canonical events and the JSON paths of errors.

use crate::fixtures::{assert_invalid, assert_missing, fixture, fixture_bytes, Refused};
use booking_email_engine::domain::event::{
    Airport, BookedRoom, BookingRef, Cancellation, EmailAddress, FlightBooking, FlightSegment,
    Holder, HotelAmendment, Interpretation, Money, PersonName, SupplierEvent,
};
use booking_email_engine::sources::liteapi::{interpret, parse_envelope};
use booking_email_engine::sources::ParseError;
use chrono::{NaiveDate, NaiveDateTime};
use serde_json::{json, Value};

/// A liteAPI envelope with string-encoded `request` / `response`.
fn envelope(name: &str, request: Value, response: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "event_id": "evt_fake_liteapi_0100",
        "event_name": name,
        "sandbox": false,
        "request": request.to_string(),
        "response": response.to_string(),
    }))
    .unwrap()
}

fn interpreted(body: &[u8]) -> Interpretation {
    interpret(&parse_envelope(body).expect("envelope parses")).expect("interprets")
}

fn journey(body: &[u8]) -> SupplierEvent {
    match interpreted(body) {
        Interpretation::Journey(e) => e,
        other => panic!("expected a journey, got {other:?}"),
    }
}

fn failure(body: &[u8]) -> ParseError {
    interpret(&parse_envelope(body).expect("envelope parses")).expect_err("must fail")
}

fn bk() -> BookingRef {
    BookingRef::parse("BK_fake_7Q2w").unwrap()
}

fn eur(amount: &str) -> Option<Money> {
    Some(Money {
        amount: amount.into(),
        currency: "EUR".into(),
    })
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

fn at(s: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
}

// ---------------------------------------------------------------- hotel confirmation number

#[test]
fn hotel_confirmation_number_fixture_gives_booking_and_code() {
    assert_eq!(
        journey(&fixture_bytes(
            "liteapi-booking-hotel-confirmation-number.json"
        )),
        SupplierEvent::HotelConfirmationNumber {
            booking_id: bk(),
            hotel_confirmation_number: "HCN-FAKE-55821".into(),
        }
    );
}

#[test]
fn hotel_confirmation_number_without_code_names_the_path() {
    let b = envelope(
        "booking.book.hotelConfirmationNumber",
        json!({"bookingId": "BK_fake_7Q2w"}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "hotelConfirmationCode": null}}),
    );
    assert_missing(&failure(&b), "response.data.hotelConfirmationCode");
    let b = envelope(
        "booking.book.hotelConfirmationNumber",
        json!({}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "hotelConfirmationCode": "  "}}),
    );
    assert_invalid(&failure(&b), "response.data.hotelConfirmationCode");
}

#[test]
fn booking_id_falls_back_to_the_request() {
    let b = envelope(
        "booking.book.hotelConfirmationNumber",
        json!({"bookingId": "BK_fake_7Q2w"}),
        json!({"hotelConfirmationCode": "HCN-2"}),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::HotelConfirmationNumber {
            booking_id: bk(),
            hotel_confirmation_number: "HCN-2".into(),
        }
    );
}

// ---------------------------------------------------------------- cancellation

#[test]
fn cancellation_fixture_is_with_charges_fee_180_refund_360_eur() {
    assert_eq!(
        journey(&fixture_bytes("liteapi-booking-cancelled.json")),
        SupplierEvent::BookingCancelled(Cancellation {
            booking_id: bk(),
            with_charges: true,
            cancellation_fee: eur("180"),
            refund: eur("360"),
        })
    );
}

#[test]
fn refundable_cancellation_is_without_charges() {
    let b = envelope(
        "booking.cancel",
        json!({"bookingId": "BK_fake_7Q2w"}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "status": "CANCELLED", "cancellation_fee": 0, "refund_amount": "540.00", "currency": "eur"}}),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::BookingCancelled(Cancellation {
            booking_id: bk(),
            with_charges: false,
            cancellation_fee: eur("0"),
            refund: eur("540.00"),
        })
    );
}

#[test]
fn non_zero_fee_means_charges_even_without_the_status() {
    let b = envelope(
        "booking.cancel",
        json!({}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "cancellation_fee": 12.5, "currency": "EUR"}}),
    );
    let SupplierEvent::BookingCancelled(c) = journey(&b) else {
        panic!("expected BookingCancelled")
    };
    assert!(c.with_charges);
    assert_eq!(c.cancellation_fee, eur("12.5"));
    assert_eq!(c.refund, None);
}

#[test]
fn cancellation_amounts_without_currency_are_left_out() {
    let b = envelope(
        "booking.cancel",
        json!({}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "status": "CANCELLED", "refund_amount": 360}}),
    );
    let SupplierEvent::BookingCancelled(c) = journey(&b) else {
        panic!("expected BookingCancelled")
    };
    assert_eq!((c.cancellation_fee, c.refund), (None, None));
}

#[test]
fn cancellation_without_booking_id_is_rejected() {
    let mut v = fixture("liteapi-booking-cancelled.json");
    v["request"] = json!("{}");
    v["response"] = json!(r#"{"data":{"status":"CANCELLED"}}"#);
    assert_missing(
        &failure(&serde_json::to_vec(&v).unwrap()),
        "response.data.bookingId",
    );
}

// ---------------------------------------------------------------- check-in instructions

#[test]
fn checkin_instructions_are_read_from_the_nested_object() {
    let b = envelope(
        "booking.checkinInstruction",
        json!({"bookingId": "BK_fake_7Q2w"}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "checkinInstructions": {
            "instructions": " Reception opens at 15:00. Ring the bell after 22:00. ",
            "propertyContact": {"email": "desk@example.com"}
        }}}),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::CheckinInstructions {
            booking_id: bk(),
            instructions: "Reception opens at 15:00. Ring the bell after 22:00.".into(),
        }
    );
}

#[test]
fn checkin_instructions_are_also_accepted_at_data_level() {
    let b = envelope(
        "booking.checkinInstruction",
        json!({}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "instructions": "Keys in the lockbox"}}),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::CheckinInstructions {
            booking_id: bk(),
            instructions: "Keys in the lockbox".into(),
        }
    );
}

#[test]
fn checkin_instructions_without_text_name_the_nested_path() {
    let b = envelope(
        "booking.checkinInstruction",
        json!({}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "checkinInstructions": {}}}),
    );
    assert_missing(
        &failure(&b),
        "response.data.checkinInstructions.instructions",
    );
    let b = envelope(
        "booking.checkinInstruction",
        json!({}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "checkinInstructions": {"instructions": 42}}}),
    );
    assert_invalid(
        &failure(&b),
        "response.data.checkinInstructions.instructions",
    );
}

// ---------------------------------------------------------------- amendments

#[test]
fn name_change_amendment_carries_only_what_is_present() {
    let b = envelope(
        "booking.amendment",
        json!({"bookingId": "BK_fake_7Q2w"}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "holder": {"firstName": "Testa", "lastName": "Renamed"}}}),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::HotelAmended(Box::new(HotelAmendment {
            booking_id: Some(bk()),
            holder_name: Some(PersonName {
                first_name: "Testa".into(),
                last_name: "Renamed".into(),
            }),
            ..HotelAmendment::default()
        }))
    );
}

#[test]
fn relocation_amendment_carries_the_new_hotel_dates_and_rooms() {
    let b = envelope(
        "booking.amendment.relocation",
        json!({}),
        json!({"data": {
            "bookingId": "BK_fake_7Q2w",
            "hotel": {"hotelId": "lp_fake_2002", "name": "Example Hilltop Hotel"},
            "checkin": "2026-06-13",
            "checkout": "2026-06-15",
            "bookedRooms": [{
                "roomType": {"name": "Superior Twin"},
                "boardName": "Breakfast",
                "adults": 2,
                "children": 0,
                "guests": [{"firstName": "Testa", "lastName": "Guestington"}]
            }]
        }}),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::HotelAmended(Box::new(HotelAmendment {
            booking_id: Some(bk()),
            hotel_name: Some("Example Hilltop Hotel".into()),
            checkin: Some(date(2026, 6, 13)),
            checkout: Some(date(2026, 6, 15)),
            rooms: Some(vec![BookedRoom {
                room_name: "Superior Twin".into(),
                board_name: Some("Breakfast".into()),
                adults: 2,
                children: 0,
            }]),
            guests: Some(vec![PersonName {
                first_name: "Testa".into(),
                last_name: "Guestington".into(),
            }]),
            holder_name: None,
            relocation: true,
            locale: None,
        }))
    );
}

#[test]
fn amendment_with_unreadable_or_reversed_dates_is_invalid() {
    let b = envelope(
        "booking.amendment",
        json!({}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "checkin": "13/06/2026"}}),
    );
    assert_invalid(&failure(&b), "response.data.checkin");
    let b = envelope(
        "booking.amendment",
        json!({}),
        json!({"data": {"bookingId": "BK_fake_7Q2w", "checkin": "2026-06-13", "checkout": "2026-06-12"}}),
    );
    assert_invalid(&failure(&b), "response.data.checkout");
}

// ---------------------------------------------------------------- rebooks

#[test]
fn rebook_is_a_new_hotel_booking_that_replaces_the_old_one() {
    for name in ["booking.rebook.rfn", "booking.rebook.nrfn"] {
        let mut v = fixture("liteapi-booking-confirmed.json");
        let mut response: Value = serde_json::from_str(v["response"].as_str().unwrap()).unwrap();
        response["data"]["bookingId"] = json!("BK_fake_NEW1");
        response["data"]["rebookFrom"] = json!("BK_fake_7Q2w");
        v["response"] = json!(response.to_string());
        v["event_name"] = json!(name);
        let SupplierEvent::HotelBooked(h) = journey(&serde_json::to_vec(&v).unwrap()) else {
            panic!("{name}: expected HotelBooked")
        };
        assert_eq!(h.booking_id.as_str(), "BK_fake_NEW1", "{name}");
        assert_eq!(h.replaces, Some(bk()), "{name}");
        assert_eq!(h.hotel_name, "Example Harbour Hotel", "{name}");
        assert_eq!(h.nights(), 3, "{name}");
    }
}

// ---------------------------------------------------------------- flights

/// The `GET /flights/bookings/{id}` example of liteAPI's OpenAPI (`data[0].booking`), trimmed.
fn flight_response() -> Value {
    json!({"data": [{"booking": {
        "bookingId": "1297abe4-57c5-4605-b8e7-5caad983c4a7",
        "bookingRef": "FH-265-FAKE0001",
        "status": "CONFIRMED",
        "providerEnvironment": "sandbox",
        "journey": {
            "segments": [{
                "arrivalTime": "2026-04-10T18:40:00",
                "carrier": {"marketingCode": "B6", "marketingName": "JetBlue Airways"},
                "departureTime": "2026-04-10T15:30:00",
                "direction": "OUTBOUND",
                "flight": {"marketingNumber": "723", "operatingNumber": "723"},
                "originCode": "JFK",
                "originName": "John F. Kennedy International Airport",
                "destinationCode": "LAX"
            }],
            "price": {"base": 238.32, "currency": "USD", "fees": 0, "taxes": 48.7, "total": 287.02}
        },
        "passengers": [{"type": "ADT", "firstName": "TEST", "lastName": "COLUMNS"}],
        "order": {"reference": {"orderId": "019c42c6", "airlineBookings": [{"airlineCode": "B6", "pnr": ""}], "provider": {"code": "SABRE", "pnr": "FAKPNR"}}},
        "contact": {"firstName": "TEST", "lastName": "COLUMNS", "email": "test.json@example.com", "phoneCountryCode": "1", "phoneNumber": "5550100001"}
    }}]})
}

#[test]
fn flight_confirmed_becomes_a_flight_booking_without_time_zones() {
    let b = envelope("flight.book.confirmed", json!({}), flight_response());
    let traveller = PersonName {
        first_name: "TEST".into(),
        last_name: "COLUMNS".into(),
    };
    assert_eq!(
        journey(&b),
        SupplierEvent::FlightBooked(Box::new(FlightBooking {
            client_reference: None,
            booking_id: BookingRef::parse("1297abe4-57c5-4605-b8e7-5caad983c4a7").unwrap(),
            booking_reference: Some("FAKPNR".into()),
            status: "CONFIRMED".into(),
            contact: Holder {
                name: traveller.clone(),
                email: EmailAddress::parse("test.json@example.com").unwrap(),
                phone: Some("+15550100001".into()),
            },
            passengers: vec![traveller],
            segments: vec![FlightSegment {
                flight_number: "B6 723".into(),
                origin: Airport {
                    iata_code: "JFK".into(),
                    name: "John F. Kennedy International Airport".into(),
                    city_name: None,
                    time_zone: None,
                },
                destination: Airport {
                    iata_code: "LAX".into(),
                    name: "LAX".into(),
                    city_name: None,
                    time_zone: None,
                },
                departing_at: at("2026-04-10 15:30"),
                arriving_at: at("2026-04-10 18:40"),
                airline: Some("JetBlue Airways".into()),
            }],
            total: Some(Money {
                amount: "287.02".into(),
                currency: "USD".into(),
            }),
            // The envelope says production, the booking says sandbox: sandbox wins.
            sandbox: true,
            locale: None,
        }))
    );
}

#[test]
fn flight_booking_is_also_read_directly_under_data() {
    let booking = flight_response()["data"][0]["booking"].clone();
    let b = envelope(
        "flight.book.confirmed",
        json!({}),
        json!({ "data": booking }),
    );
    let SupplierEvent::FlightBooked(f) = journey(&b) else {
        panic!("expected FlightBooked")
    };
    assert_eq!(f.segments.len(), 1);
    assert_eq!(f.segments[0].flight_number, "B6 723");
}

#[test]
fn flight_segment_without_departure_time_names_the_path() {
    let mut r = flight_response();
    r["data"][0]["booking"]["journey"]["segments"][0]
        .as_object_mut()
        .unwrap()
        .remove("departureTime");
    let b = envelope("flight.book.confirmed", json!({}), r);
    assert_missing(
        &failure(&b),
        "response.data[0].booking.journey.segments[0].departureTime",
    );
}

#[test]
fn flight_without_contact_email_is_rejected() {
    let mut r = flight_response();
    r["data"][0]["booking"]["contact"]
        .as_object_mut()
        .unwrap()
        .remove("email");
    let b = envelope("flight.book.confirmed", json!({}), r);
    assert_missing(&failure(&b), "response.data[0].booking.contact.email");
}

#[test]
fn flight_without_segments_is_rejected() {
    let mut r = flight_response();
    r["data"][0]["booking"]["journey"]["segments"] = json!([]);
    let b = envelope("flight.book.confirmed", json!({}), r);
    assert_invalid(&failure(&b), "response.data[0].booking.journey.segments");
}

#[test]
fn flight_cancelled_cancels_the_booking() {
    let b = envelope(
        "flight.book.cancelled",
        json!({}),
        json!({"data": {"bookingId": "fl_fake_1", "status": "CANCELLED"}}),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::BookingCancelled(Cancellation {
            booking_id: BookingRef::parse("fl_fake_1").unwrap(),
            with_charges: false,
            cancellation_fee: None,
            refund: None,
        })
    );
}

#[test]
fn other_flight_statuses_are_status_changes() {
    for (name, expected) in [
        ("flight.book.created", "CREATED"),
        ("flight.book.pending.confirmation", "PENDING_CONFIRMATION"),
        ("flight.book.expired", "EXPIRED"),
    ] {
        let b = envelope(name, json!({"bookingId": "fl_fake_1"}), json!({"data": {}}));
        assert_eq!(
            journey(&b),
            SupplierEvent::StatusChanged {
                booking_id: BookingRef::parse("fl_fake_1").unwrap(),
                status: expected.into(),
            },
            "{name}"
        );
    }
    // The supplier's own status text wins when given.
    let b = envelope(
        "flight.book.pending.confirmation",
        json!({}),
        json!({"data": {"bookingId": "fl_fake_1", "status": "PENDING"}}),
    );
    assert_eq!(
        journey(&b),
        SupplierEvent::StatusChanged {
            booking_id: BookingRef::parse("fl_fake_1").unwrap(),
            status: "PENDING".into(),
        }
    );
}

// ---------------------------------------------------------------- the booking id

#[test]
fn events_without_a_booking_id_anywhere_name_the_response_path() {
    // (event name, its response: everything but a booking id; the request is empty)
    let cases = [
        (
            "booking.book.hotelConfirmationNumber",
            json!({"data": {"hotelConfirmationCode": "HCN-1"}}),
        ),
        (
            "booking.amendment",
            json!({"data": {"checkin": "2026-06-13"}}),
        ),
        ("flight.book.expired", json!({"data": {}})),
    ];
    for (name, response) in cases {
        let b = envelope(name, json!({}), response);
        Refused::Missing.assert(&failure(&b), "response.data.bookingId", name);
    }
}

// ---------------------------------------------------------------- still ignored

#[test]
fn prebook_errors_refunds_and_unknown_names_stay_ignored() {
    // `booking.prebook` itself now starts a checkout attempt (tests/host/checkout_liteapi.rs).
    for name in [
        "booking.prebook_error",
        "booking.cancel_error",
        "booking.refund",
        "booking.compensation",
        "flight.prebook",
        "flight.attachServices",
    ] {
        let b = envelope(name, json!({}), json!({}));
        assert_eq!(
            interpreted(&b),
            Interpretation::Ignored(name.into()),
            "{name}"
        );
    }
}
