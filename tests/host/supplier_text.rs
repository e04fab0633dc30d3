//! Supplier data is data: every adapter, fed arbitrary text in every text field
//! (control characters, huge lengths, every Unicode plane, template syntax, URLs to our own
//! admin), never panics, and what comes out is bounded by `domain::basics::text::LIMITS` and one line
//! wherever one line is meant. Also: the step-name part and the header-value builder.

use crate::fixtures::fixture;
use booking_email_engine::domain::basics::text::{
    header_value, is_unsafe_char, step_part, TextKind, LIMITS, STEP_PART_MAX, SUBJECT_MAX_CHARS,
};
use booking_email_engine::domain::event::{Interpretation, SupplierEvent};
use booking_email_engine::sources::{self, resend, webhook, Inbound};
use proptest::prelude::*;
use serde_json::Value;

/// Keys whose values are structure, not text: mutating them only makes the delivery malformed.
const STRUCTURAL: [&str; 22] = [
    "event_id",
    "event",
    "type",
    "object",
    "email",
    "checkin",
    "checkout",
    "departing_at",
    "arriving_at",
    "created_at",
    "createdAt",
    "updatedAt",
    "timestamp",
    "bookingId",
    "booking_id",
    "prebookId",
    "prebook_id",
    "order_id",
    "id",
    "currency",
    "amount",
    "live_mode",
];
fn generic_hotel() -> Value {
    serde_json::json!({
        "type": "hotel_booked",
        "data": {
            "booking_id": "gen_bk_0001", "status": "CONFIRMED", "hotel_id": "gen_hotel_42",
            "hotel_name": "Example Harbour Hotel", "checkin": "2026-06-12", "checkout": "2026-06-15",
            "rooms": [{"room_name": "Standard Double", "board_name": "Breakfast", "adults": 2, "children": 0}],
            "holder": {"name": {"first_name": "Testa", "last_name": "Guestington"}, "email": "guest@example.com", "phone": "+1 555"},
            "guests": [{"first_name": "Testa", "last_name": "Guestington"}],
            "total": {"amount": "540.00", "currency": "EUR"},
            "hotel_confirmation_number": "HCN-1", "sandbox": false,
            "location": {"time_zone": "Europe/Madrid"},
            "checkin_instructions": "Check-in from 15:00"
        }
    })
}

fn generic_instructions() -> Value {
    serde_json::json!({"type": "checkin_instructions",
        "data": {"booking_id": "gen_bk_0001", "instructions": "Door code 1234"}})
}

/// Replaces every non-structural string leaf with the next of `texts` (cycled). liteAPI's
/// string-encoded `response` is opened, mutated and encoded again.
fn mutate(v: &mut Value, texts: &[String], next: &mut usize) {
    match v {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if key == "response" {
                    if let Value::String(s) = item {
                        if let Ok(mut inner) = serde_json::from_str::<Value>(s) {
                            mutate(&mut inner, texts, next);
                            *s = inner.to_string();
                        }
                    }
                } else if STRUCTURAL.contains(&key.as_str()) {
                    continue;
                } else if item.is_string() {
                    *item = Value::String(texts[*next % texts.len()].clone());
                    *next += 1;
                } else {
                    mutate(item, texts, next);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| mutate(i, texts, next)),
        _ => {}
    }
}

/// Every string of the event is within its kind's maximum and one line unless multi-line.
fn assert_bounded(v: &Value, key: Option<&str>) {
    match v {
        Value::String(s) => {
            let kind = key.and_then(TextKind::of_field).unwrap_or(TextKind::Other);
            let limit = kind.limit();
            // Newtype fields (ids, emails) carry their own bounds; 256 is the largest of them.
            let max = if key.and_then(TextKind::of_field).is_some() {
                limit.max_chars
            } else {
                320
            };
            assert!(
                s.chars().count() <= max,
                "{key:?} is {} chars",
                s.chars().count()
            );
            for c in s.chars() {
                assert!(
                    !is_unsafe_char(c) || (limit.multi_line && c == '\n'),
                    "{key:?} holds {c:?}: {s:?}"
                );
            }
        }
        Value::Array(items) => items.iter().for_each(|i| assert_bounded(i, key)),
        Value::Object(map) => map.iter().for_each(|(k, i)| assert_bounded(i, Some(k))),
        _ => {}
    }
}

fn check(source: &str, body: &Value) -> Option<SupplierEvent> {
    let bytes = serde_json::to_vec(body).unwrap();
    let header = |name: &str| match name {
        "webhook-id" => Some("msg_prop".to_string()),
        _ => None,
    };
    let inbound = Inbound {
        body: &bytes,
        header: &header,
        now_s: 1_900_000_000,
    };
    let (delivery, _cuts) =
        sources::read(webhook(source).unwrap(), &inbound, &Default::default()).ok()?;
    assert!(delivery.event_name.chars().count() <= TextKind::Status.limit().max_chars);
    assert!(!delivery.event_name.chars().any(is_unsafe_char));
    match delivery.interpretation {
        Interpretation::Journey(e) => {
            assert_bounded(&serde_json::to_value(&e).unwrap(), None);
            Some(e)
        }
        Interpretation::Ignored(name) => {
            assert!(!name.chars().any(is_unsafe_char));
            None
        }
    }
}

fn deliveries() -> Vec<(&'static str, Value)> {
    vec![
        ("liteapi", fixture("liteapi-booking-confirmed.json")),
        (
            "liteapi",
            fixture("liteapi-booking-hotel-confirmation-number.json"),
        ),
        ("liteapi", fixture("liteapi-booking-cancelled.json")),
        ("liteapi", fixture("liteapi-booking-prebook.json")),
        ("duffel", fixture("duffel-order-created.json")),
        ("duffel", fixture("duffel-stays-booking-created.json")),
        (
            "duffel",
            fixture("duffel-order-airline-initiated-change.json"),
        ),
        ("stripe", fixture("stripe-checkout-session-completed.json")),
        ("stripe", fixture("stripe-checkout-session-expired.json")),
        ("stripe", fixture("stripe-payment-intent-failed.json")),
        ("generic", generic_hotel()),
        ("generic", generic_instructions()),
    ]
}

/// Hostile text: any string (every plane), control-character soup, huge repeats, template
/// syntax, links to our own admin and action URLs.
fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{2028}\\u{2029}\\u{202e}\\u{feff} ]{0,40}",
        (".{1,8}", 100usize..20_000).prop_map(|(s, n)| s.repeat(n)),
        "(\\$\\{[a-z]{1,8}\\}|\\{\\{ ?[a-z]{1,8} ?\\}\\}|\\[\\[[a-z]{1,8}\\]\\]){1,4}",
        "https://engine\\.test/(admin|actions)/[a-zA-Z0-9_]{0,30}",
        "[A-Z]{2,6}\r\nBcc: [a-z]{1,8}@evil\\.example",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_adapter_bounds_every_text_field(texts in prop::collection::vec(hostile(), 1..6)) {
        for (source, original) in deliveries() {
            let mut body = original.clone();
            mutate(&mut body, &texts, &mut 0);
            check(source, &body);
        }
    }

    #[test]
    fn resend_reports_are_one_line_and_bounded(t in hostile(), id in hostile(), msg in hostile()) {
        let body = serde_json::json!({"type": t, "data": {"email_id": id, "to": ["a@example.com"],
            "bounce": {"type": "Permanent", "subType": msg, "message": msg}}});
        if let Ok(e) = resend::parse_event(&serde_json::to_vec(&body).unwrap()) {
            prop_assert!(e.event_type.chars().count() <= TextKind::Status.limit().max_chars);
            prop_assert!(!e.event_type.chars().any(is_unsafe_char));
            if let Some(id) = &e.email_id {
                prop_assert!(id.chars().count() <= TextKind::Id.limit().max_chars);
                prop_assert!(!id.chars().any(is_unsafe_char));
            }
            if let resend::Report::Suppress { detail: Some(d), .. } = &e.report {
                prop_assert!(!d.chars().any(is_unsafe_char), "{d:?}");
            }
        }
    }

    #[test]
    fn step_parts_are_short_safe_and_deterministic(raw in hostile()) {
        let part = step_part(&raw);
        prop_assert!(part.len() <= STEP_PART_MAX);
        prop_assert!(part.chars().all(|c| c.is_ascii_alphanumeric() || "._:-~".contains(c)));
        prop_assert_eq!(&part, &step_part(&raw));
        // A step name of fixed words and two parts stays far below the platform's 256.
        let name = format!("store hcn {part} {part}");
        prop_assert!(name.len() <= 256);
    }

    #[test]
    fn header_values_are_one_bounded_line(raw in hostile()) {
        let v = header_value(&raw, SUBJECT_MAX_CHARS);
        prop_assert!(v.chars().count() <= SUBJECT_MAX_CHARS);
        prop_assert!(!v.chars().any(is_unsafe_char));
        prop_assert!(!v.contains('\r') && !v.contains('\n'));
        prop_assert_eq!(header_value(&v, SUBJECT_MAX_CHARS), v.clone());
    }
}

/// The liteAPI booking with `hotel name` and `hcn` put in (inside its string-encoded response).
fn liteapi_with(hotel_name: &str, hcn: &str) -> Value {
    let mut v = fixture("liteapi-booking-confirmed.json");
    let mut inner: Value = serde_json::from_str(v["response"].as_str().unwrap()).unwrap();
    inner["data"]["hotel"]["name"] = Value::String(hotel_name.into());
    inner["data"]["hotelConfirmationCode"] = Value::String(hcn.into());
    v["response"] = Value::String(inner.to_string());
    v
}

#[test]
fn crlf_hotel_name_and_long_multiline_hcn_parse_to_one_bounded_line_each() {
    let long = "H".repeat(300);
    let Some(SupplierEvent::HotelBooked(b)) = check(
        "liteapi",
        &liteapi_with("Grand\r\nBcc: x@evil.example", &long),
    ) else {
        panic!("a hotel booking")
    };
    assert_eq!(b.hotel_name, "Grand Bcc: x@evil.example");
    let hcn = b.hotel_confirmation_number.unwrap();
    assert_eq!(hcn.chars().count(), TextKind::Code.limit().max_chars);
    assert!(hcn.ends_with('…'));
    let Some(SupplierEvent::HotelBooked(b)) = check("liteapi", &liteapi_with("Inn", "AB12\nCD34"))
    else {
        panic!("a hotel booking")
    };
    assert_eq!(b.hotel_confirmation_number.as_deref(), Some("AB12 CD34"));
}

#[test]
fn what_was_cut_is_reported_by_field() {
    let body = serde_json::to_vec(&liteapi_with("Grand\r\nHotel", &"9".repeat(100))).unwrap();
    let header = |_: &str| None;
    let inbound = Inbound {
        body: &body,
        header: &header,
        now_s: 0,
    };
    let (_, cuts) =
        sources::read(webhook("liteapi").unwrap(), &inbound, &Default::default()).unwrap();
    let fields: Vec<(&str, bool, usize)> = cuts
        .iter()
        .map(|c| (c.field.as_str(), c.truncated, c.controls))
        .collect();
    assert!(
        fields.contains(&("event.hotel_name", false, 2)),
        "{fields:?}"
    );
    assert!(
        fields.contains(&("event.hotel_confirmation_number", true, 0)),
        "{fields:?}"
    );
}

#[test]
fn the_limits_table_names_every_kind_once_with_a_sane_maximum() {
    for (i, l) in LIMITS.iter().enumerate() {
        assert!(l.max_chars >= 32 && l.max_chars <= 4000, "{l:?}");
        assert_eq!(l.multi_line, l.kind == TextKind::Instructions);
        assert!(LIMITS[i + 1..].iter().all(|o| o.kind != l.kind));
    }
}
