//! Change detection: what changes a traveller snapshot's hash, and what its diff says.

use booking_email_engine::domain::event::{
    BookingRef, FlightBooking, HotelBooking, Money, PersonName,
};
use booking_email_engine::domain::journey::snapshot::{
    flight_snapshot, hotel_snapshot, FieldChange, Snapshot, SnapshotKind,
};
use serde_json::json;

fn hotel() -> HotelBooking {
    serde_json::from_value(json!({
        "booking_id": "BK123",
        "client_reference": "cref-1",
        "prebook_id": "pb-9",
        "status": "CONFIRMED",
        "hotel_id": "lp1897",
        "hotel_name": "Hotel Arts Barcelona",
        "checkin": "2026-06-12",
        "checkout": "2026-06-15",
        "rooms": [
            {"room_name": "Deluxe King", "board_name": "Breakfast included", "adults": 2, "children": 1},
            {"room_name": "Twin Room", "board_name": null, "adults": 1, "children": 0}
        ],
        "holder": {
            "name": {"first_name": "Ana", "last_name": "García"},
            "email": "ana@example.com",
            "phone": "+34 600 000 000"
        },
        "guests": [
            {"first_name": "Ana", "last_name": "García"},
            {"first_name": "Luis", "last_name": "Pérez"}
        ],
        "total": {"amount": "540.00", "currency": "EUR"},
        "hotel_confirmation_number": null,
        "sandbox": false,
        "location": {"time_zone": "Europe/Madrid", "latitude": 41.38, "longitude": 2.18},
        "checkin_instructions": "Reception is open 24 hours.",
        "replaces": null
    }))
    .unwrap()
}

fn flight() -> FlightBooking {
    serde_json::from_value(json!({
        "booking_id": "ord_0000A",
        "booking_reference": "RZPNX8",
        "status": "CONFIRMED",
        "contact": {
            "name": {"first_name": "Tony", "last_name": "Stark"},
            "email": "tony@example.com",
            "phone": null
        },
        "passengers": [
            {"first_name": "Tony", "last_name": "Stark"},
            {"first_name": "Pepper", "last_name": "Potts"}
        ],
        "segments": [
            {
                "flight_number": "ZZ 0472",
                "origin": {"iata_code": "LHR", "name": "Heathrow", "city_name": "London", "time_zone": "Europe/London"},
                "destination": {"iata_code": "JFK", "name": "John F. Kennedy", "city_name": "New York", "time_zone": "America/New_York"},
                "departing_at": "2026-06-12T07:15:00",
                "arriving_at": "2026-06-12T10:30:00"
            },
            {
                "flight_number": "ZZ 0815",
                "origin": {"iata_code": "JFK", "name": "John F. Kennedy", "city_name": "New York", "time_zone": "America/New_York"},
                "destination": {"iata_code": "LAX", "name": "Los Angeles", "city_name": "Los Angeles", "time_zone": "America/Los_Angeles"},
                "departing_at": "2026-06-12T13:00:00",
                "arriving_at": "2026-06-12T16:20:00"
            }
        ],
        "total": {"amount": "912.40", "currency": "GBP"},
        "sandbox": true
    }))
    .unwrap()
}

fn change(field: &str, before: &str, after: &str) -> FieldChange {
    FieldChange {
        field: field.into(),
        before: before.into(),
        after: after.into(),
    }
}

/// The snapshots of the example `make` gives, before and after `edit` (`snapshot` takes them).
fn edited<B>(
    make: fn() -> B,
    snapshot: fn(&B) -> Snapshot,
    edit: impl FnOnce(&mut B),
) -> (Snapshot, Snapshot) {
    let mut b = make();
    let before = snapshot(&b);
    edit(&mut b);
    (before, snapshot(&b))
}

// ---------------------------------------------------------------- hotel

#[test]
fn hotel_snapshot_holds_only_traveller_facts() {
    let s = hotel_snapshot(&hotel());
    let fields: Vec<(&str, &str)> = s
        .fields()
        .iter()
        .map(|(f, v)| (f.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        fields,
        vec![
            ("hotel_id", "lp1897"),
            ("hotel_name", "Hotel Arts Barcelona"),
            ("checkin", "2026-06-12"),
            ("checkout", "2026-06-15"),
            ("room.1.name", "Deluxe King"),
            ("room.1.board", "Breakfast included"),
            ("room.1.adults", "2"),
            ("room.1.children", "1"),
            ("room.2.name", "Twin Room"),
            ("room.2.adults", "1"),
            ("room.2.children", "0"),
            ("guests", "Ana García, Luis Pérez"),
            ("holder", "Ana García"),
        ]
    );
    assert_eq!(s.kind(), SnapshotKind::Hotel);
    // Pinned: computed independently (Python hashlib) from the canonical form in the module docs.
    assert_eq!(
        s.hash(),
        "3181bd23b111b1c45e27020408dadc883fb5eb755d7e9cb2cc4dcd38b1a64fca"
    );
    let text = String::from_utf8(s.canonical()).unwrap();
    for secret in [
        "CONFIRMED",
        "540",
        "EUR",
        "BK123",
        "cref-1",
        "pb-9",
        "example.com",
        "sandbox",
    ] {
        assert!(!text.contains(secret), "{secret} leaked into {text}");
    }
}

#[test]
fn hotel_status_change_keeps_the_hash() {
    let before = hotel_snapshot(&hotel());
    for status in ["TICKETED", "CANCELLED", "CANCELLED_WITH_CHARGES", "PENDING"] {
        let mut b = hotel();
        b.status = status.into();
        assert_eq!(hotel_snapshot(&b).hash(), before.hash(), "{status}");
        assert_eq!(before.diff(&hotel_snapshot(&b)), vec![]);
    }
}

#[test]
fn hotel_price_sandbox_ids_and_contact_changes_keep_the_hash() {
    let h = hotel_snapshot(&hotel()).hash();
    let mut b = hotel();
    b.total = Some(Money {
        amount: "999.99".into(),
        currency: "USD".into(),
    });
    assert_eq!(hotel_snapshot(&b).hash(), h, "price");
    b.total = None;
    assert_eq!(hotel_snapshot(&b).hash(), h, "no price");
    b.sandbox = true;
    b.booking_id = BookingRef::parse("BK999").unwrap();
    b.client_reference = None;
    b.prebook_id = Some("other".into());
    b.holder.phone = None;
    b.location = None;
    b.checkin_instructions = None;
    assert_eq!(
        hotel_snapshot(&b).hash(),
        h,
        "ids, sandbox, contact, location"
    );
}

#[test]
fn hotel_date_change_changes_the_hash_and_the_diff_names_it() {
    let (before, after) = edited(hotel, hotel_snapshot, |b| {
        b.checkin = "2026-06-13".parse().unwrap();
    });
    assert_ne!(after.hash(), before.hash());
    assert_eq!(
        before.diff(&after),
        vec![change("checkin", "2026-06-12", "2026-06-13")]
    );
}

#[test]
fn hotel_confirmation_number_added_changes_the_hash() {
    let before = hotel_snapshot(&hotel());
    let mut b = hotel();
    b.hotel_confirmation_number = Some("HCN-55821".into());
    let after = hotel_snapshot(&b);
    assert_ne!(after.hash(), before.hash());
    assert_eq!(
        before.diff(&after),
        vec![change("hotel_confirmation_number", "", "HCN-55821")]
    );
    // And a blank number is no number.
    b.hotel_confirmation_number = Some("   ".into());
    assert_eq!(hotel_snapshot(&b).hash(), before.hash());
}

#[test]
fn hotel_room_guest_and_hotel_changes_are_named() {
    let (before, after) = edited(hotel, hotel_snapshot, |b| {
        b.rooms[0].board_name = Some("Half board".into());
        b.rooms[1].children = 1;
        b.guests[1] = PersonName {
            first_name: "Lucía".into(),
            last_name: "Pérez".into(),
        };
        b.hotel_name = "Hotel Arts".into();
        b.checkout = "2026-06-16".parse().unwrap();
    });
    assert_eq!(
        before.diff(&after),
        vec![
            change("hotel_name", "Hotel Arts Barcelona", "Hotel Arts"),
            change("checkout", "2026-06-15", "2026-06-16"),
            change("room.1.board", "Breakfast included", "Half board"),
            change("room.2.children", "0", "1"),
            change(
                "guests",
                "Ana García, Luis Pérez",
                "Ana García, Lucía Pérez"
            ),
        ]
    );
    // Reverse diff swaps before and after.
    assert_eq!(
        after.diff(&before)[0],
        change("hotel_name", "Hotel Arts", "Hotel Arts Barcelona")
    );
}

#[test]
fn hotel_room_removed_and_board_added_show_as_blank_sides() {
    let (before, after) = edited(hotel, hotel_snapshot, |b| b.rooms.truncate(1));
    assert_eq!(
        before.diff(&after),
        vec![
            change("room.2.name", "Twin Room", ""),
            change("room.2.adults", "1", ""),
            change("room.2.children", "0", ""),
        ]
    );
    let (before, after) = edited(hotel, hotel_snapshot, |c| {
        c.rooms[1].board_name = Some("Room only".into());
    });
    assert_eq!(
        before.diff(&after),
        vec![change("room.2.board", "", "Room only")]
    );
}

#[test]
fn equal_content_from_two_constructions_has_one_hash() {
    // The same booking written with keys in another order, rooms and guests reordered, and
    // untidy whitespace.
    let other: HotelBooking = serde_json::from_value(json!({
        "sandbox": true,
        "replaces": null,
        "hotel_confirmation_number": null,
        "guests": [
            {"last_name": "Pérez", "first_name": "Luis"},
            {"last_name": "García", "first_name": "Ana"}
        ],
        "rooms": [
            {"children": 0, "adults": 1, "board_name": null, "room_name": "Twin  Room"},
            {"children": 1, "adults": 2, "board_name": " Breakfast included ", "room_name": "Deluxe King"}
        ],
        "holder": {
            "phone": null,
            "email": "someone-else@example.org",
            "name": {"last_name": "García ", "first_name": " Ana"}
        },
        "checkout": "2026-06-15",
        "checkin": "2026-06-12",
        "hotel_name": "Hotel Arts  Barcelona",
        "hotel_id": "lp1897",
        "status": "TICKETED",
        "booking_id": "BK123-other",
        "client_reference": null,
        "prebook_id": null,
        "total": null
    }))
    .unwrap();
    let (a, b) = (hotel_snapshot(&hotel()), hotel_snapshot(&other));
    assert_eq!(a, b);
    assert_eq!(a.hash(), b.hash());
    assert_eq!(a.diff(&b), vec![]);
}

#[test]
fn hash_is_independent_of_field_insertion_order_and_stable() {
    let a = Snapshot::new(
        SnapshotKind::Hotel,
        [
            ("checkin", "2026-06-12"),
            ("hotel_name", "X"),
            ("guests", "A B"),
        ],
    );
    let b = Snapshot::new(
        SnapshotKind::Hotel,
        [
            ("guests", "A B"),
            ("checkin", "2026-06-12"),
            ("hotel_name", "X"),
        ],
    );
    assert_eq!(a, b);
    assert_eq!(a.hash(), b.hash());
    // Pinned value: the same on every run and machine.
    assert_eq!(a.hash(), hotel_snapshot_hash_literal());
    // Two calls, same hash; hex, 64 characters.
    assert_eq!(a.hash(), a.clone().hash());
    assert!(a
        .hash()
        .chars()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
}

/// SHA-256 of "booking-snapshot/v1/hotel\n7:checkin10:2026-06-12\n6:guests3:A B\n10:hotel_name1:X\n".
fn hotel_snapshot_hash_literal() -> &'static str {
    "682ce8706bd8c5acbf743de06bfbbcd989a222d14c67c471f1f40f630715d9bb"
}

#[test]
fn snapshot_round_trips_through_json() {
    let s = hotel_snapshot(&hotel());
    let back: Snapshot = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.hash(), s.hash());
    assert_eq!(back.fields(), s.fields());
}

// ---------------------------------------------------------------- flight

#[test]
fn flight_snapshot_holds_only_traveller_facts() {
    let s = flight_snapshot(&flight());
    assert_eq!(s.kind(), SnapshotKind::Flight);
    assert_eq!(s.get("segment.1.flight_number"), Some("ZZ 0472"));
    assert_eq!(s.get("segment.1.origin"), Some("LHR"));
    assert_eq!(s.get("segment.1.destination"), Some("JFK"));
    assert_eq!(s.get("segment.1.departure"), Some("2026-06-12 07:15"));
    assert_eq!(s.get("segment.1.arrival"), Some("2026-06-12 10:30"));
    assert_eq!(s.get("segment.2.flight_number"), Some("ZZ 0815"));
    assert_eq!(s.get("passengers"), Some("Pepper Potts, Tony Stark"));
    assert_eq!(s.fields().len(), 11);
    let text = String::from_utf8(s.canonical()).unwrap();
    for secret in ["CONFIRMED", "912", "GBP", "ord_0000A", "example.com"] {
        assert!(!text.contains(secret), "{secret} leaked into {text}");
    }
}

#[test]
fn flight_status_moves_keep_the_hash() {
    let h = flight_snapshot(&flight()).hash();
    for status in ["TICKETED", "CANCELLED"] {
        let mut f = flight();
        f.status = status.into();
        assert_eq!(flight_snapshot(&f).hash(), h, "{status}");
    }
    let mut f = flight();
    f.total = Some(Money {
        amount: "1.00".into(),
        currency: "EUR".into(),
    });
    f.sandbox = false;
    f.contact.phone = Some("+1 555".into());
    assert_eq!(flight_snapshot(&f).hash(), h, "price, sandbox, contact");
}

#[test]
fn flight_time_change_changes_the_hash_and_names_the_field() {
    let (before, after) = edited(flight, flight_snapshot, |f| {
        f.segments[1].departing_at = "2026-06-12T14:05:00".parse().unwrap();
        f.segments[1].arriving_at = "2026-06-12T17:25:00".parse().unwrap();
    });
    assert_ne!(after.hash(), before.hash());
    assert_eq!(
        before.diff(&after),
        vec![
            change(
                "segment.2.departure",
                "2026-06-12 13:00",
                "2026-06-12 14:05"
            ),
            change("segment.2.arrival", "2026-06-12 16:20", "2026-06-12 17:25"),
        ]
    );
}

#[test]
fn flight_number_and_airport_changes_are_named() {
    let (before, after) = edited(flight, flight_snapshot, |f| {
        f.segments[0].flight_number = "ZZ 0474".into();
        f.segments[0].destination.iata_code = "EWR".into();
        f.segments[1].origin.iata_code = "EWR".into();
    });
    let diff = before.diff(&after);
    assert_eq!(
        diff,
        vec![
            change("segment.1.flight_number", "ZZ 0472", "ZZ 0474"),
            change("segment.1.destination", "JFK", "EWR"),
            change("segment.2.origin", "JFK", "EWR"),
        ]
    );
}

#[test]
fn flight_segment_dropped_or_passenger_renamed() {
    let (before, after) = edited(flight, flight_snapshot, |f| {
        f.segments.pop();
        f.passengers[1].first_name = "Virginia".into();
    });
    let diff = before.diff(&after);
    assert_eq!(diff.len(), 6);
    assert_eq!(diff[0], change("segment.2.flight_number", "ZZ 0815", ""));
    assert_eq!(
        diff[5],
        change(
            "passengers",
            "Pepper Potts, Tony Stark",
            "Tony Stark, Virginia Potts"
        )
    );
}

#[test]
fn flight_code_case_and_spacing_do_not_matter() {
    let h = flight_snapshot(&flight()).hash();
    let mut f = flight();
    f.segments[0].flight_number = " zz   0472 ".into();
    f.segments[0].origin.iata_code = "lhr".into();
    f.passengers.reverse();
    assert_eq!(flight_snapshot(&f).hash(), h);
}

#[test]
fn hotel_and_flight_snapshots_never_share_a_hash() {
    let empty_hotel = Snapshot::new(SnapshotKind::Hotel, Vec::<(String, String)>::new());
    let empty_flight = Snapshot::new(SnapshotKind::Flight, Vec::<(String, String)>::new());
    assert_ne!(empty_hotel.hash(), empty_flight.hash());
}
