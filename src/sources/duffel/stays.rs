//! Duffel Stays (hotels, <https://duffel.com/docs/api/v2/webhook-events>): a `stays.booking.created`
//! booking read into the canonical hotel booking, its rooms, board and check-in information.

use super::super::json::At;
use super::{money, ParseError};
use crate::domain::event::{BookedRoom, Holder, HotelBooking, HotelLocation};
use serde_json::Value;

/// `stays.booking.created` → the canonical hotel booking.
///
/// Required: `id` (`bok_…`), `check_in_date` ≤ `check_out_date`, `accommodation.name`, `email`.
/// Rooms: `rooms` (a count, default 1) rooms named after `accommodation.rooms[0].name` (else
/// "Room"), the guests spread over them (adults unless a guest's `type` is `child`).
pub(super) fn stays_booking(b: &At<'_>, sandbox: bool) -> Result<HotelBooking, ParseError> {
    let booking_id = b.get("id").booking_ref_req()?;
    let checkin = b.get("check_in_date").date_req()?;
    let checkout_at = b.get("check_out_date");
    let checkout = checkout_at.date_req()?;
    if checkout < checkin {
        return Err(checkout_at.invalid("is before check_in_date"));
    }
    let acc = b.get("accommodation");
    let hotel_name = acc.get("name").str_req()?;

    let guests_at = b.get("guests").array_opt();
    let guests: Vec<_> = guests_at
        .iter()
        .map(|g| g.person("given_name", "family_name"))
        .filter(|n| !n.full().is_empty())
        .collect();
    let holder = Holder {
        name: guests.first().cloned().unwrap_or_default(),
        email: b.get("email").email_req()?,
        phone: b.get("phone_number").str_opt(),
    };

    let children = guests_at
        .iter()
        .filter(|g| g.get("type").str_opt().as_deref() == Some("child"))
        .count() as u32;
    let adults = guests_at.len() as u32 - children;
    let room_count = b.get("rooms").u64_opt().unwrap_or(1).clamp(1, 50) as u32;
    let first_room = acc.get("rooms").index(0);
    let room_name = first_room
        .get("name")
        .str_opt()
        .unwrap_or_else(|| "Room".into());
    let board_name = first_room
        .get("rates")
        .index(0)
        .get("board_type")
        .str_opt()
        .map(|t| board_name(&t));
    let rooms = (0..room_count)
        .map(|i| BookedRoom {
            room_name: room_name.clone(),
            board_name: board_name.clone(),
            adults: share(adults, room_count, i),
            children: share(children, room_count, i),
        })
        .collect();

    let coords = acc.get("location").get("geographic_coordinates");
    let latitude = coords.get("latitude").value().and_then(Value::as_f64);
    let longitude = coords.get("longitude").value().and_then(Value::as_f64);
    // Duffel Stays `accommodation.location.address`: line_one, postal_code, city_name, region,
    // country_code (https://duffel.com/docs/api/v2/stays-bookings), joined on one line.
    let address_at = acc.get("location").get("address");
    let parts: Vec<String> = [
        "line_one",
        "postal_code",
        "city_name",
        "region",
        "country_code",
    ]
    .iter()
    .filter_map(|k| address_at.get(k).str_opt())
    .map(|p| p.trim().to_string())
    .filter(|p| !p.is_empty())
    .collect();
    let address = (!parts.is_empty()).then(|| {
        crate::domain::basics::text::cut_chars(
            &crate::domain::basics::text::clean(
                &parts.join(", "),
                crate::domain::basics::text::TextKind::Other,
            ),
            300,
        )
    });
    let part = |k: &str| {
        address_at
            .get(k)
            .str_opt()
            .map(|p| crate::domain::basics::text::cut_chars(p.trim(), 200).to_string())
            .filter(|p| !p.is_empty())
    };
    let times = acc.get("check_in_information");
    let location =
        (latitude.is_some() || longitude.is_some() || address.is_some()).then_some(HotelLocation {
            time_zone: None,
            latitude,
            longitude,
            address,
            street_address: part("line_one"),
            locality: part("city_name"),
            region: part("region"),
            postal_code: part("postal_code"),
            country: part("country_code"),
            telephone: acc.get("phone_number").str_opt(),
            checkin_time: times.get("check_in_after_time").str_opt(),
            checkout_time: times.get("check_out_before_time").str_opt(),
        });

    Ok(HotelBooking {
        booking_id,
        client_reference: b.get("reference").str_opt(),
        prebook_id: None,
        status: b
            .get("status")
            .str_opt()
            .map(|s| s.to_ascii_uppercase())
            .unwrap_or_else(|| "CONFIRMED".into()),
        hotel_id: acc.get("id").str_opt(),
        hotel_name,
        checkin,
        checkout,
        rooms,
        holder,
        guests,
        total: money(&b.get("total_amount"), &b.get("total_currency")),
        hotel_confirmation_number: None,
        sandbox,
        location,
        checkin_instructions: checkin_information(&acc.get("check_in_information")),
        replaces: None,
        locale: None,
    })
}

/// `n` items spread over `parts` (the first parts take the remainder): part `i`'s share.
fn share(n: u32, parts: u32, i: u32) -> u32 {
    n / parts + u32::from(i < n % parts)
}

/// Duffel `board_type` (`room_only`, `breakfast`, …) as words.
fn board_name(board_type: &str) -> String {
    match board_type {
        "room_only" => "Room only".into(),
        "breakfast" => "Breakfast included".into(),
        "half_board" => "Half board".into(),
        "full_board" => "Full board".into(),
        "all_inclusive" => "All inclusive".into(),
        other => other.replace('_', " "),
    }
}

/// `check_in_information{check_in_after_time, check_out_before_time}` as one sentence, e.g.
/// "Check-in from 15:00; check-out by 11:00".
fn checkin_information(info: &At<'_>) -> Option<String> {
    let parts: Vec<String> = [
        info.get("check_in_after_time")
            .str_opt()
            .map(|t| format!("Check-in from {t}")),
        info.get("check_out_before_time")
            .str_opt()
            .map(|t| format!("check-out by {t}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if parts.is_empty() {
        return None;
    }
    let mut text = parts.join("; ");
    // Capitalise when only the check-out part is present.
    if let Some(first) = text.get(0..1) {
        text = first.to_ascii_uppercase() + &text[1..];
    }
    Some(text)
}
