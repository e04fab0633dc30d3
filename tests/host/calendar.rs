//! The calendar part (RFC 5545) of guest emails: a hotel stay as one all-day event, each flight
//! segment as a timed event in UTC converted from its airports' zones, stable UIDs, SEQUENCE from
//! the journey version, METHOD:CANCEL for cancellations; folded at 75 octets, escaped, and
//! unbreakable by supplier text. The same part travels with every provider (MIME for SMTP, the
//! Resend attachment).

use booking_email_engine::domain::calendar::{CalendarPart, Method, Stamp};
use booking_email_engine::domain::event::{EmailAddress, FlightBooking, HotelBooking};
use booking_email_engine::domain::i18n::Locale;
use booking_email_engine::domain::render::{self, Branding};
use booking_email_engine::domain::resend;
use serde_json::json;

fn branding(locale: Locale) -> Branding {
    Branding {
        brand: "Example Trips".into(),
        from: EmailAddress::parse("bookings@mail.example.com").unwrap(),
        locale,
        region: booking_email_engine::domain::i18n::Region::DEFAULT,
    }
}

fn hotel(name: &str) -> HotelBooking {
    serde_json::from_value(json!({
        "booking_id": "BK_1", "client_reference": null, "prebook_id": null,
        "status": "CONFIRMED", "hotel_id": "lp_1", "hotel_name": name,
        "checkin": "2026-06-12", "checkout": "2026-06-15",
        "rooms": [{"room_name": "Double", "board_name": null, "adults": 2, "children": 0}],
        "holder": {"name": {"first_name": "Zoë", "last_name": "Guest"}, "email": "guest@example.com", "phone": null},
        "guests": [], "total": null, "hotel_confirmation_number": "HCN-48213", "sandbox": false,
        "location": {"address": "1 Example Street, 08000, Barcelona, ES"}
    }))
    .unwrap()
}

fn flight(zones: bool) -> FlightBooking {
    let airport = |iata: &str, zone: &str| {
        json!({"iata_code": iata, "name": format!("{iata} Airport"), "city_name": null,
               "time_zone": if zones { json!(zone) } else { json!(null) }})
    };
    serde_json::from_value(json!({
        "booking_id": "ord_1", "booking_reference": "RZPNR7", "status": "confirmed",
        "contact": {"name": {"first_name": "Ana", "last_name": "Traveller"}, "email": "ana@example.com", "phone": null},
        "passengers": [],
        "segments": [
            {"flight_number": "ZZ 0472", "origin": airport("LHR", "Europe/London"), "destination": airport("BCN", "Europe/Madrid"),
             "departing_at": "2026-06-12T07:15:00", "arriving_at": "2026-06-12T10:30:00"},
            {"flight_number": "ZZ 0473", "origin": airport("BCN", "Europe/Madrid"), "destination": airport("JFK", "America/New_York"),
             "departing_at": "2026-12-15T11:00:00", "arriving_at": "2026-12-15T13:45:00"}
        ],
        "total": null, "sandbox": true
    }))
    .unwrap()
}

const AT_MS: i64 = 1_780_000_000_000;

/// The content lines of an iCalendar object: physical lines end in CRLF, are at most 75 octets,
/// and a line starting with a space continues the previous one (RFC 5545 §3.1).
fn unfold(ics: &str) -> Vec<String> {
    assert!(ics.ends_with("\r\n"), "ends with CRLF");
    let body = &ics[..ics.len() - 2];
    let mut lines: Vec<String> = Vec::new();
    for physical in body.split("\r\n") {
        assert!(
            physical.len() <= 75,
            "physical line over 75 octets: {physical:?}"
        );
        assert!(
            !physical.contains('\r') && !physical.contains('\n'),
            "bare CR or LF"
        );
        match physical.strip_prefix(' ') {
            Some(rest) => lines.last_mut().expect("a first line").push_str(rest),
            None => lines.push(physical.to_string()),
        }
    }
    lines
}

/// The value of the first content line named `name` (parameters allowed), unescaped.
fn value(lines: &[String], name: &str) -> Option<String> {
    let line = lines.iter().find(|l| {
        l.strip_prefix(name)
            .is_some_and(|rest| rest.starts_with(':') || rest.starts_with(';'))
    })?;
    let (_, v) = line.split_once(':')?;
    let mut out = String::new();
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') | Some('N') => out.push('\n'),
                Some(other) => out.push(other),
                None => panic!("dangling backslash in {line:?}"),
            }
        } else {
            assert!(c != ',' && c != ';', "unescaped {c:?} in {line:?}");
            out.push(c);
        }
    }
    Some(out)
}

fn params_of<'a>(lines: &'a [String], name: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.starts_with(name))
        .unwrap()
        .split_once(':')
        .unwrap()
        .0
}

#[test]
fn a_stay_is_one_all_day_event_with_its_address_and_number() {
    let part = render::calendar::hotel_stay(
        &hotel("Example Harbour Hotel"),
        &branding(Locale::Es),
        Stamp::at_version(1, AT_MS, Method::Publish),
    );
    assert_eq!(part.method, Method::Publish);
    assert_eq!(
        part.content_type(),
        "text/calendar; charset=utf-8; method=PUBLISH"
    );
    let lines = unfold(&part.ics);
    assert_eq!(lines.first().unwrap(), "BEGIN:VCALENDAR");
    assert_eq!(lines.last().unwrap(), "END:VCALENDAR");
    assert!(lines.contains(&"METHOD:PUBLISH".to_string()));
    assert!(lines.contains(&"VERSION:2.0".to_string()));
    assert_eq!(lines.iter().filter(|l| *l == "BEGIN:VEVENT").count(), 1);
    assert_eq!(value(&lines, "UID").unwrap(), "stay-BK_1@mail.example.com");
    // Journey version 1 with the hotel's number already known: 2 × 0 + 1.
    assert_eq!(value(&lines, "SEQUENCE").unwrap(), "1");
    assert!(
        lines.contains(&"DTSTART;VALUE=DATE:20260612".to_string()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"DTEND;VALUE=DATE:20260615".to_string()),
        "{lines:?}"
    );
    assert_eq!(
        value(&lines, "LOCATION").unwrap(),
        "Example Harbour Hotel, 1 Example Street, 08000, Barcelona, ES"
    );
    let description = value(&lines, "DESCRIPTION").unwrap();
    assert!(description.contains("ID de reserva: BK_1"), "{description}");
    assert!(
        description.contains("Número de confirmación del hotel: HCN-48213"),
        "{description}"
    );
    assert_eq!(value(&lines, "STATUS").unwrap(), "CONFIRMED");
    assert!(value(&lines, "DTSTAMP").unwrap().ends_with('Z'));
}

#[test]
fn a_hostile_hotel_name_never_breaks_the_file() {
    let mut name = String::new();
    while name.chars().count() < 2000 {
        name.push_str("Hôtel \"Harbour\", Spa; Suites\r\nLINE:2\\n BEGIN:VEVENT ; ,\t€ ");
    }
    let part = render::calendar::hotel_stay(
        &hotel(&name),
        &branding(Locale::Fr),
        Stamp::at_version(3, AT_MS, Method::Publish),
    );
    let lines = unfold(&part.ics);
    // Still exactly one event: the injected BEGIN:VEVENT stayed inside the summary's text.
    assert_eq!(lines.iter().filter(|l| *l == "BEGIN:VEVENT").count(), 1);
    assert_eq!(lines.iter().filter(|l| *l == "END:VEVENT").count(), 1);
    let summary = value(&lines, "SUMMARY").unwrap();
    assert!(
        summary.starts_with("Hôtel \"Harbour\", Spa; Suites LINE:2\\n BEGIN:VEVENT ; , € Hôtel"),
        "{summary}"
    );
    assert!(
        summary.chars().count() <= 500,
        "bounded: {}",
        summary.chars().count()
    );
    assert!(!summary.contains('\n') && !summary.contains('\r'));
    // Journey version 3, the hotel's number known: 2 × 2 + 1.
    assert_eq!(value(&lines, "SEQUENCE").unwrap(), "5");
}

#[test]
fn flight_segments_are_utc_instants_from_each_airports_zone() {
    let part = render::calendar::flight_segments(
        &flight(true),
        &branding(Locale::En),
        Stamp::at_version(1, AT_MS, Method::Publish),
    );
    let lines = unfold(&part.ics);
    let events: Vec<&[String]> = lines.split(|l| l == "BEGIN:VEVENT").skip(1).collect();
    assert_eq!(events.len(), 2);
    // LHR 07:15 BST (UTC+1) → 06:15Z; BCN 10:30 CEST (UTC+2) → 08:30Z.
    assert_eq!(value(events[0], "DTSTART").unwrap(), "20260612T061500Z");
    assert_eq!(value(events[0], "DTEND").unwrap(), "20260612T083000Z");
    assert_eq!(
        value(events[0], "UID").unwrap(),
        "flight-ord_1-1@mail.example.com"
    );
    assert_eq!(
        value(events[0], "SUMMARY").unwrap(),
        "Flight ZZ 0472: LHR → BCN"
    );
    // BCN 11:00 CET (UTC+1) → 10:00Z; JFK 13:45 EST (UTC−5) → 18:45Z.
    assert_eq!(value(events[1], "DTSTART").unwrap(), "20261215T100000Z");
    assert_eq!(value(events[1], "DTEND").unwrap(), "20261215T184500Z");
    assert_eq!(
        value(events[1], "UID").unwrap(),
        "flight-ord_1-2@mail.example.com"
    );
    assert!(value(events[0], "DESCRIPTION")
        .unwrap()
        .contains("Airline booking reference: RZPNR7"));
}

#[test]
fn a_segment_without_airport_zones_is_floating_local_time() {
    let part = render::calendar::flight_segments(
        &flight(false),
        &branding(Locale::En),
        Stamp::at_version(1, AT_MS, Method::Publish),
    );
    let lines = unfold(&part.ics);
    assert_eq!(value(&lines, "DTSTART").unwrap(), "20260612T071500");
}

#[test]
fn a_change_raises_the_sequence_and_a_cancellation_cancels_the_same_uid() {
    let b = hotel("Example Harbour Hotel");
    let br = branding(Locale::De);
    let first = render::calendar::hotel_stay(&b, &br, Stamp::at_version(1, AT_MS, Method::Publish));
    let moved =
        render::calendar::hotel_stay(&b, &br, Stamp::at_version(2, AT_MS + 1, Method::Publish));
    let cancel =
        render::calendar::hotel_stay(&b, &br, Stamp::at_version(3, AT_MS + 2, Method::Cancel));
    let (f, m, c) = (unfold(&first.ics), unfold(&moved.ics), unfold(&cancel.ics));
    assert_eq!(value(&f, "UID"), value(&m, "UID"));
    assert_eq!(value(&f, "UID"), value(&c, "UID"));
    let seq = |l: &[String]| value(l, "SEQUENCE").unwrap().parse::<u32>().unwrap();
    assert!(seq(&f) < seq(&m) && seq(&m) < seq(&c));
    assert!(c.contains(&"METHOD:CANCEL".to_string()));
    assert_eq!(value(&c, "STATUS").unwrap(), "CANCELLED");
    assert_eq!(
        cancel.content_type(),
        "text/calendar; charset=utf-8; method=CANCEL"
    );
    // Deterministic: the same facts give the same bytes (every attempt sends the same part).
    assert_eq!(
        first,
        render::calendar::hotel_stay(&b, &br, Stamp::at_version(1, AT_MS, Method::Publish))
    );
    assert_eq!(params_of(&f, "DTSTART"), "DTSTART;VALUE=DATE");
}

#[test]
fn every_provider_carries_the_calendar_part() {
    let br = branding(Locale::It);
    let mut email = render::booking_confirmation(&hotel("Example Harbour Hotel"), &br).unwrap();
    let part = render::calendar::hotel_stay(
        &hotel("Example Harbour Hotel"),
        &br,
        Stamp::at_version(1, AT_MS, Method::Publish),
    );
    email.calendar = Some(part.clone());
    // SMTP: multipart/mixed with the alternative and the text/calendar attachment.
    let raw = String::from_utf8(render::to_mime(&email, &br, 1_767_225_600).unwrap()).unwrap();
    assert!(raw.contains("multipart/mixed"), "{raw}");
    assert!(raw.contains("multipart/alternative"));
    let calendar_header = raw
        .lines()
        .find(|l| l.starts_with("Content-Type: text/calendar"))
        .unwrap_or_else(|| panic!("no text/calendar part: {raw}"));
    assert!(
        calendar_header.contains("method=PUBLISH"),
        "{calendar_header}"
    );
    assert!(raw.contains("invite.ics"), "{raw}");
    // Resend: one attachment, the .ics in base64 with its content type.
    let body = resend::request_body(&email, "Example Trips <bookings@mail.example.com>", &[]);
    let a = &body["attachments"][0];
    assert_eq!(a["filename"], CalendarPart::FILE_NAME);
    assert_eq!(
        a["content_type"],
        "text/calendar; charset=utf-8; method=PUBLISH"
    );
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(a["content"].as_str().unwrap())
        .unwrap();
    assert_eq!(decoded, part.ics.as_bytes());
    // An email without a calendar part has no attachment.
    email.calendar = None;
    let body = resend::request_body(&email, "x <b@mail.example.com>", &[]);
    assert!(body.get("attachments").is_none());
}

#[test]
fn a_link_to_the_engine_in_a_supplier_value_never_reaches_the_calendar() {
    use booking_email_engine::domain::content_lock::ContentLock;
    use booking_email_engine::domain::render::guard::{guarded, judge};
    let lock = ContentLock::from_config("https://engine.example.com", "outbox");
    let br = branding(Locale::En);
    let b = hotel("Harbour https://engine.example.com/admin/bookings Hotel");
    let e = guarded(&lock, &b, |b| {
        let part =
            render::calendar::hotel_stay(b, &br, Stamp::at_version(1, AT_MS, Method::Publish));
        render::calendar::attach(render::booking_confirmation(b, &br), part)
    })
    .unwrap();
    let lines = unfold(&e.calendar.as_ref().expect("the part is attached").ics);
    assert_eq!(
        value(&lines, "SUMMARY").unwrap(),
        "Harbour [link removed] Hotel"
    );
    assert!(!lines.iter().any(|l| l.contains("/admin")));
    // The verdict covered the calendar of the neutral render too, and the gate lets it go.
    assert!(e.lock.as_ref().unwrap().template.is_empty());
    assert!(judge(&lock, &e).is_ok());
}

/// The compensation's notice of a paid booking the supplier failed after its confirmation went
/// out ("Your booking has been cancelled"): with the booking as stored it carries a METHOD:CANCEL
/// part with the confirmation's UIDs and a SEQUENCE above the confirmation's, so the guest's
/// calendar drops the stay or the flights; the not-confirmed wording (no confirmation, so no
/// event in the guest's calendar) and a notice without a stored booking carry none.
#[test]
fn a_cancellation_notice_after_the_confirmation_cancels_its_events() {
    use booking_email_engine::domain::compensation::RefundState;
    use booking_email_engine::domain::content_lock::ContentLock;
    use booking_email_engine::domain::render::calendar::Booked;
    use booking_email_engine::domain::render::guard::{guarded, judge};
    let lock = ContentLock::from_config("https://engine.example.com", "outbox");
    let br = branding(Locale::En);
    let to = EmailAddress::parse("guest@example.com").unwrap();
    let notice = |sent: bool, booked: Option<Booked>| render::CompensationNotice {
        compensation_id: "comp-0123456789abcdef01234567".into(),
        booking_id: Some("BK_1".into()),
        guest_name: Some("Zoë Guest".into()),
        trip: Some("Example Harbour Hotel".into()),
        confirmation_sent: sent,
        state: RefundState::Refunding,
        amount: Some("EUR 540.00".into()),
        calendar: booked.map(|booked| render::CalendarCancel {
            booked,
            // Confirmed at version 1, closed by the compensation at version 2.
            journey_version: 2,
            at_ms: AT_MS + 5,
        }),
    };
    let render_notice = |n: &render::CompensationNotice| {
        guarded(&lock, n, |n| render::booking_not_confirmed(n, &to, &br)).unwrap()
    };

    let b = hotel("Harbour https://engine.example.com/admin/bookings Hotel");
    let confirmation =
        render::calendar::hotel_stay(&b, &br, Stamp::at_version(1, AT_MS, Method::Publish));
    let e = render_notice(&notice(true, Some(Booked::Hotel(Box::new(b.clone())))));
    assert_eq!(e.subject, "Your booking has been cancelled");
    let part = e.calendar.as_ref().expect("a calendar part");
    assert_eq!(part.method, Method::Cancel);
    assert_eq!(
        part.content_type(),
        "text/calendar; charset=utf-8; method=CANCEL"
    );
    let (sent, cancel) = (unfold(&confirmation.ics), unfold(&part.ics));
    assert!(cancel.contains(&"METHOD:CANCEL".to_string()));
    assert_eq!(value(&cancel, "UID").unwrap(), "stay-BK_1@mail.example.com");
    assert_eq!(value(&cancel, "UID"), value(&sent, "UID"));
    assert_eq!(value(&cancel, "STATUS").unwrap(), "CANCELLED");
    let seq = |l: &[String]| value(l, "SEQUENCE").unwrap().parse::<u32>().unwrap();
    assert!(seq(&cancel) > seq(&sent));
    assert_eq!(value(&cancel, "DTSTART").unwrap(), "20260612");
    // Built from the defanged inputs like the email, and the lock's verdict lets it go.
    assert!(!cancel.iter().any(|l| l.contains("/admin")));
    assert!(e.lock.as_ref().unwrap().template.is_empty());
    assert!(judge(&lock, &e).is_ok());
    // SMTP carries it as the text/calendar part with method=CANCEL.
    let raw = String::from_utf8(render::to_mime(&e, &br, 1_767_225_600).unwrap()).unwrap();
    assert!(raw
        .lines()
        .any(|l| l.starts_with("Content-Type: text/calendar") && l.contains("method=CANCEL")));

    // A flight: one cancelled event per segment, with the confirmation's segment UIDs.
    let f = flight(true);
    let confirmed =
        render::calendar::flight_segments(&f, &br, Stamp::at_version(1, AT_MS, Method::Publish));
    let e = render_notice(&notice(true, Some(Booked::Flight(Box::new(f)))));
    let ics = &e.calendar.as_ref().expect("a calendar part").ics;
    let uids = |ics: &str| -> Vec<String> {
        unfold(ics)
            .into_iter()
            .filter(|l| l.starts_with("UID:"))
            .collect()
    };
    assert_eq!(uids(ics), uids(&confirmed.ics));
    assert_eq!(uids(ics).len(), 2);
    assert_eq!(ics.matches("STATUS:CANCELLED").count(), 2);

    // No confirmation went out: the not-confirmed wording, and no event to take away.
    let e = render_notice(&notice(false, Some(Booked::Hotel(Box::new(hotel("H"))))));
    assert_eq!(e.subject, "We could not confirm your booking");
    assert!(e.calendar.is_none());
    // The booking is not stored: the notice still goes, without a part.
    let e = render_notice(&notice(true, None));
    assert_eq!(e.subject, "Your booking has been cancelled");
    assert!(e.calendar.is_none());
}

/// The hotel's confirmation number arriving after the confirmation changes the stay event under
/// the same journey version: the number's email carries the same UID with a higher SEQUENCE and
/// the number in DESCRIPTION; the next amendment (one version on) is higher still, and a
/// cancellation after that higher again.
#[test]
fn the_hotel_number_arriving_later_raises_the_stay_sequence() {
    let br = branding(Locale::En);
    let mut without = hotel("Example Harbour Hotel");
    without.hotel_confirmation_number = None;
    let with = hotel("Example Harbour Hotel");
    let seq = |l: &[String]| value(l, "SEQUENCE").unwrap().parse::<u32>().unwrap();
    let confirmation = unfold(
        &render::calendar::hotel_stay(&without, &br, Stamp::at_version(1, AT_MS, Method::Publish))
            .ics,
    );
    let number = unfold(
        &render::calendar::hotel_stay(&with, &br, Stamp::at_version(1, AT_MS + 1, Method::Publish))
            .ics,
    );
    let amended = unfold(
        &render::calendar::hotel_stay(&with, &br, Stamp::at_version(2, AT_MS + 2, Method::Publish))
            .ics,
    );
    let cancelled = unfold(
        &render::calendar::hotel_stay(&with, &br, Stamp::at_version(3, AT_MS + 3, Method::Cancel))
            .ics,
    );
    assert_eq!(seq(&confirmation), 0);
    assert_eq!(seq(&number), 1);
    assert!(seq(&number) < seq(&amended) && seq(&amended) < seq(&cancelled));
    assert_eq!(value(&confirmation, "UID"), value(&number, "UID"));
    assert!(!value(&confirmation, "DESCRIPTION")
        .unwrap()
        .contains("HCN-48213"));
    assert!(value(&number, "DESCRIPTION")
        .unwrap()
        .contains("Hotel confirmation number: HCN-48213"));
    // A number of blank space only is no number: the SEQUENCE stays the confirmation's.
    let mut blank = without.clone();
    blank.hotel_confirmation_number = Some(" \t ".into());
    let blank = unfold(
        &render::calendar::hotel_stay(&blank, &br, Stamp::at_version(1, AT_MS, Method::Publish))
            .ics,
    );
    assert_eq!(seq(&blank), 0);
}

/// A booking id (checked on arrival: no control characters, at most 128 characters) with `,` `;`
/// `\`, a colon, a space, `%`, `@` and non-ASCII letters gives a UID of safe characters only
/// (the others percent-encoded byte by byte), the same every time; ids of the usual shape are
/// unchanged; a flight order's segments get the same treatment.
#[test]
fn a_hostile_booking_id_gives_a_safe_stable_uid() {
    let br = branding(Locale::En);
    let mut b = hotel("Example Harbour Hotel");
    b.booking_id = serde_json::from_value(json!("BK,1;2\\3:BEGIN VEVENT é%@x")).unwrap();
    let part = render::calendar::hotel_stay(&b, &br, Stamp::at_version(1, AT_MS, Method::Publish));
    let lines = unfold(&part.ics);
    assert_eq!(lines.iter().filter(|l| *l == "BEGIN:VEVENT").count(), 1);
    let uid = value(&lines, "UID").unwrap();
    assert_eq!(
        uid,
        "stay-BK%2C1%3B2%5C3%3ABEGIN%20VEVENT%20%C3%A9%25@x@mail.example.com"
    );
    let again = render::calendar::hotel_stay(&b, &br, Stamp::at_version(2, AT_MS, Method::Publish));
    assert_eq!(value(&unfold(&again.ics), "UID").unwrap(), uid);
    // The raw UID line has nothing a parser reads as a separator or an escape.
    let raw = lines.iter().find(|l| l.starts_with("UID:")).unwrap();
    assert!(!raw.contains('\\') && !raw.contains(',') && !raw.contains(';'));

    let mut f = flight(true);
    f.booking_id = serde_json::from_value(json!("ord;1,x")).unwrap();
    let part =
        render::calendar::flight_segments(&f, &br, Stamp::at_version(1, AT_MS, Method::Publish));
    let uids: Vec<String> = unfold(&part.ics)
        .into_iter()
        .filter(|l| l.starts_with("UID:"))
        .collect();
    assert_eq!(
        uids,
        vec![
            "UID:flight-ord%3B1%2Cx-1@mail.example.com",
            "UID:flight-ord%3B1%2Cx-2@mail.example.com"
        ]
    );
    assert_eq!(
        booking_email_engine::domain::calendar::uid_safe("ord_0000A1b2.c-3"),
        "ord_0000A1b2.c-3"
    );
}
