//! The calendar parts (RFC 5545) of guest emails, as clients apply them (RFC 5546 iTIP): a hotel
//! stay as one all-day, transparent event; each flight segment as its own part, timed in UTC from
//! both airports' zones or floating at both ends; an ORGANIZER in every event, no ATTENDEE in a
//! PUBLISH; UIDs from a stable identity (not a position, not the sending domain); a flight that a
//! change removes gets its own CANCEL; folded at 75 octets, escaped, and unbreakable by supplier
//! text. The same parts travel with every provider (MIME for SMTP, the Resend attachments). The
//! SEQUENCE and DTSTAMP stamped per UID at hand-over are D1's (checked end to end in
//! tests/e2e/language-and-calendar.test.mjs); here parts are stamped by hand.

use crate::fixtures::branding_in;
use booking_email_engine::domain::email::calendar::{self, CalendarPart, Method};
use booking_email_engine::domain::event::{EmailAddress, FlightBooking, HotelBooking};
use booking_email_engine::domain::i18n::Locale;
use booking_email_engine::domain::outbox::resend;
use booking_email_engine::domain::render::{self, Branding};
use serde_json::json;

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

/// The object of a part, stamped with `sequence` at `AT_MS`.
fn ics(part: &CalendarPart, sequence: u32) -> String {
    part.clone().stamped(sequence, AT_MS).text().to_string()
}

#[test]
fn a_stay_is_one_all_day_transparent_event_with_its_organizer_address_and_number() {
    let part = render::calendar::hotel_stay(
        &hotel("Example Harbour Hotel"),
        &branding_in(Locale::Es),
        Method::Publish,
    );
    assert_eq!(part.method, Method::Publish);
    assert_eq!(part.file_name, "stay.ics");
    assert_eq!(
        part.content_type(),
        "text/calendar; charset=utf-8; method=PUBLISH"
    );
    let lines = unfold(&ics(&part, 0));
    assert_eq!(lines.first().unwrap(), "BEGIN:VCALENDAR");
    assert_eq!(lines.last().unwrap(), "END:VCALENDAR");
    assert!(lines.contains(&"METHOD:PUBLISH".to_string()));
    assert!(lines.contains(&"VERSION:2.0".to_string()));
    assert_eq!(lines.iter().filter(|l| *l == "BEGIN:VEVENT").count(), 1);
    // A name-based UUID of the booking id: no domain, no position.
    let uid = value(&lines, "UID").unwrap();
    assert_eq!(uid, calendar::stay_uid("BK_1"));
    assert_eq!(uid.len(), 36);
    assert_eq!(&uid[14..15], "8", "UUID version 8: {uid}");
    assert!(!uid.contains('@'));
    assert_eq!(value(&lines, "SEQUENCE").unwrap(), "0");
    assert!(
        lines.contains(
            &"ORGANIZER;CN=\"Example Trips\":mailto:bookings@mail.example.com".to_string()
        ),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("ATTENDEE")),
        "no ATTENDEE in a PUBLISH"
    );
    assert!(lines.contains(&"TRANSP:TRANSPARENT".to_string()));
    assert!(lines.contains(&"DTSTART;VALUE=DATE:20260612".to_string()));
    assert!(lines.contains(&"DTEND;VALUE=DATE:20260615".to_string()));
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
    assert_eq!(value(&lines, "DTSTAMP").unwrap(), "20260528T202640Z");
}

#[test]
fn the_uid_survives_the_sending_domain_and_french_labels_take_their_no_break_space() {
    let b = hotel("Example Harbour Hotel");
    let mut other = branding_in(Locale::Fr);
    other.from = EmailAddress::parse("reservations@another.example.org").unwrap();
    let a = render::calendar::hotel_stay(&b, &branding_in(Locale::Fr), Method::Publish);
    let o = render::calendar::hotel_stay(&b, &other, Method::Publish);
    assert_eq!(a.uid(), o.uid());
    let lines = unfold(&ics(&o, 0));
    assert!(value(&lines, "DESCRIPTION")
        .unwrap()
        .contains("Numéro de réservation\u{a0}: BK_1"));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("ORGANIZER")
            && l.ends_with("mailto:reservations@another.example.org")));
}

#[test]
fn a_hostile_hotel_name_never_breaks_the_file() {
    let mut name = String::new();
    while name.chars().count() < 2000 {
        name.push_str("Hôtel \"Harbour\", Spa; Suites\r\nLINE:2\\n BEGIN:VEVENT ; ,\t€ ");
    }
    let br = Branding {
        brand: "Trips \"R\" Us;\r\nATTENDEE:mailto:x@evil.example".into(),
        ..branding_in(Locale::Fr)
    };
    let part = render::calendar::hotel_stay(&hotel(&name), &br, Method::Publish);
    let lines = unfold(&ics(&part, 5));
    // Still exactly one event: the injected BEGIN:VEVENT stayed inside the summary's text.
    assert_eq!(lines.iter().filter(|l| *l == "BEGIN:VEVENT").count(), 1);
    assert_eq!(lines.iter().filter(|l| *l == "END:VEVENT").count(), 1);
    assert!(!lines.iter().any(|l| l.starts_with("ATTENDEE")));
    let organizer = lines.iter().find(|l| l.starts_with("ORGANIZER")).unwrap();
    assert_eq!(
        organizer,
        "ORGANIZER;CN=\"Trips R Us; ATTENDEE:mailto:x@evil.example\":mailto:bookings@mail.example.com"
    );
    let summary = value(&lines, "SUMMARY").unwrap();
    assert!(
        summary.starts_with("Hôtel \"Harbour\", Spa; Suites LINE:2\\n BEGIN:VEVENT ; , € Hôtel"),
        "{summary}"
    );
    assert!(summary.chars().count() <= 500);
    assert!(!summary.contains('\n') && !summary.contains('\r'));
    assert_eq!(value(&lines, "SEQUENCE").unwrap(), "5");
}

#[test]
fn each_flight_segment_is_its_own_part_in_utc_from_its_airports_zones() {
    let f = flight(true);
    let parts = render::calendar::flight_segments(&f, &branding_in(Locale::En), Method::Publish);
    assert_eq!(parts.len(), 2, "one calendar object per segment");
    assert_eq!(parts[0].file_name, "flight-1-LHR-BCN.ics");
    assert_eq!(parts[1].file_name, "flight-2-BCN-JFK.ics");
    let first = unfold(&ics(&parts[0], 0));
    let second = unfold(&ics(&parts[1], 0));
    for lines in [&first, &second] {
        assert_eq!(lines.iter().filter(|l| *l == "BEGIN:VEVENT").count(), 1);
        assert!(lines
            .iter()
            .any(|l| l.starts_with("ORGANIZER;CN=\"Example Trips\"")));
        assert!(
            !lines.iter().any(|l| l.starts_with("TRANSP")),
            "a flight keeps the guest busy"
        );
    }
    // LHR 07:15 BST (UTC+1) → 06:15Z; BCN 10:30 CEST (UTC+2) → 08:30Z.
    assert_eq!(value(&first, "DTSTART").unwrap(), "20260612T061500Z");
    assert_eq!(value(&first, "DTEND").unwrap(), "20260612T083000Z");
    assert_eq!(
        value(&first, "SUMMARY").unwrap(),
        "Flight ZZ 0472: LHR → BCN"
    );
    // BCN 11:00 CET (UTC+1) → 10:00Z; JFK 13:45 EST (UTC−5) → 18:45Z.
    assert_eq!(value(&second, "DTSTART").unwrap(), "20261215T100000Z");
    assert_eq!(value(&second, "DTEND").unwrap(), "20261215T184500Z");
    assert!(value(&first, "DESCRIPTION")
        .unwrap()
        .contains("Airline booking reference: RZPNR7"));
    assert_ne!(value(&first, "UID"), value(&second, "UID"));
}

#[test]
fn segment_uids_follow_the_flight_not_its_position() {
    let f = flight(true);
    let uids = calendar::segment_uids("ord_1", &f.segments);
    // Re-sorted: each flight keeps its UID.
    let mut reversed = f.segments.clone();
    reversed.reverse();
    let again = calendar::segment_uids("ord_1", &reversed);
    assert_eq!(again, vec![uids[1].clone(), uids[0].clone()]);
    // New times for the same flight (a retimed departure): the same UID.
    let mut moved = f.segments.clone();
    moved[0].departing_at += chrono::Duration::hours(2);
    moved[0].arriving_at += chrono::Duration::hours(2);
    assert_eq!(calendar::segment_uids("ord_1", &moved), uids);
    // The flight number written another way is the same flight.
    let mut spelled = f.segments.clone();
    spelled[0].flight_number = "zz472".into();
    assert_eq!(calendar::segment_uids("ord_1", &spelled)[0], uids[0]);
    // Another flight number is another flight; another order another UID.
    let mut other = f.segments.clone();
    other[0].flight_number = "ZZ 0476".into();
    assert_ne!(calendar::segment_uids("ord_1", &other)[0], uids[0]);
    assert_ne!(calendar::segment_uids("ord_2", &f.segments)[0], uids[0]);
    // The same flight twice in one order (out and, weeks later, out again): two UIDs.
    let mut twice = vec![f.segments[0].clone(), f.segments[0].clone()];
    twice[1].departing_at += chrono::Duration::days(14);
    twice[1].arriving_at += chrono::Duration::days(14);
    let two = calendar::segment_uids("ord_1", &twice);
    assert_ne!(two[0], two[1]);
    assert_eq!(two[0], uids[0]);
}

#[test]
fn a_segment_without_both_zones_is_floating_at_both_ends_and_never_ends_before_it_starts() {
    let br = branding_in(Locale::En);
    let parts = render::calendar::flight_segments(&flight(false), &br, Method::Publish);
    let lines = unfold(&ics(&parts[0], 0));
    assert_eq!(value(&lines, "DTSTART").unwrap(), "20260612T071500");
    assert_eq!(value(&lines, "DTEND").unwrap(), "20260612T103000");
    // One zone known, the other not: never a UTC start with a floating end.
    let mut half = flight(true);
    half.segments[0].destination.time_zone = None;
    let lines = unfold(&ics(
        &render::calendar::flight_segments(&half, &br, Method::Publish)[0],
        0,
    ));
    assert_eq!(value(&lines, "DTSTART").unwrap(), "20260612T071500");
    assert_eq!(value(&lines, "DTEND").unwrap(), "20260612T103000");
    // Floating times across the date line (Tokyo 10:00 → Honolulu 22:00 the day before): no
    // end rather than one before the start.
    let mut dateline = flight(false);
    dateline.segments[0].departing_at = chrono::NaiveDate::from_ymd_opt(2026, 6, 12)
        .unwrap()
        .and_hms_opt(10, 0, 0)
        .unwrap();
    dateline.segments[0].arriving_at = chrono::NaiveDate::from_ymd_opt(2026, 6, 11)
        .unwrap()
        .and_hms_opt(22, 0, 0)
        .unwrap();
    let lines = unfold(&ics(
        &render::calendar::flight_segments(&dateline, &br, Method::Publish)[0],
        0,
    ));
    assert_eq!(value(&lines, "DTSTART").unwrap(), "20260612T100000");
    assert!(value(&lines, "DTEND").is_none());
    // The same with both zones (UTC): an arrival before the departure is left out too.
    let mut bad = flight(true);
    bad.segments[0].arriving_at = bad.segments[0].departing_at - chrono::Duration::hours(3);
    let lines = unfold(&ics(
        &render::calendar::flight_segments(&bad, &br, Method::Publish)[0],
        0,
    ));
    assert!(value(&lines, "DTSTART").unwrap().ends_with('Z'));
    assert!(value(&lines, "DTEND").is_none());
}

#[test]
fn a_schedule_change_publishes_every_flight_and_cancels_the_one_that_is_gone() {
    let br = branding_in(Locale::En);
    let before = flight(true);
    // The change: the BCN → JFK flight is replaced by ZZ 0999 BCN → EWR, the LHR flight moves
    // two hours, and the list comes back in another order.
    let mut after = before.clone();
    after.segments[0].departing_at += chrono::Duration::hours(2);
    after.segments[0].arriving_at += chrono::Duration::hours(2);
    after.segments[1].flight_number = "ZZ 0999".into();
    after.segments[1].destination.iata_code = "EWR".into();
    after.segments.reverse();
    let parts = render::calendar::flight_change(&before, &after, &br);
    let old = calendar::segment_uids("ord_1", &before.segments);
    let methods: Vec<(Method, Option<&str>)> = parts.iter().map(|p| (p.method, p.uid())).collect();
    assert_eq!(parts.len(), 3);
    // The moved flight keeps its UID (PUBLISH), the new flight has its own, the gone one is
    // cancelled with its old UID.
    assert!(methods.contains(&(Method::Publish, Some(old[0].as_str()))));
    assert!(methods.contains(&(Method::Cancel, Some(old[1].as_str()))));
    assert_eq!(
        methods
            .iter()
            .filter(|(m, _)| *m == Method::Publish)
            .count(),
        2
    );
    let cancel = parts.iter().find(|p| p.method == Method::Cancel).unwrap();
    assert_eq!(cancel.file_name, "cancelled-flight-2-BCN-JFK.ics");
    let lines = unfold(&ics(cancel, 3));
    assert!(lines.contains(&"METHOD:CANCEL".to_string()));
    assert_eq!(value(&lines, "STATUS").unwrap(), "CANCELLED");
    // A CANCEL names the guest it removes the event for, never asking for an answer.
    let attendee = lines.iter().find(|l| l.starts_with("ATTENDEE")).unwrap();
    assert_eq!(
        attendee,
        "ATTENDEE;CN=\"Ana Traveller\";ROLE=REQ-PARTICIPANT:mailto:ana@example.com"
    );
    assert!(!attendee.contains("RSVP"));
    // Nothing removed: no CANCEL.
    let same = render::calendar::flight_change(&before, &before, &br);
    assert!(same.iter().all(|p| p.method == Method::Publish));
}

#[test]
fn a_cancellation_cancels_the_same_uid_and_is_deterministic() {
    let b = hotel("Example Harbour Hotel");
    let br = branding_in(Locale::De);
    let first = render::calendar::hotel_stay(&b, &br, Method::Publish);
    let cancel = render::calendar::hotel_stay(&b, &br, Method::Cancel);
    assert_eq!(first.uid(), cancel.uid());
    let c = unfold(&ics(&cancel, 3));
    assert!(c.contains(&"METHOD:CANCEL".to_string()));
    assert_eq!(value(&c, "STATUS").unwrap(), "CANCELLED");
    assert!(c.iter().any(|l| l.starts_with("ATTENDEE;CN=\"Zoë Guest\"")));
    assert_eq!(
        cancel.content_type(),
        "text/calendar; charset=utf-8; method=CANCEL"
    );
    assert_eq!(
        first,
        render::calendar::hotel_stay(&b, &br, Method::Publish)
    );
    // A stay whose supplier dates are out of order ends the day after check-in.
    let mut backwards = b.clone();
    backwards.checkout = backwards.checkin;
    let lines = unfold(&ics(
        &render::calendar::hotel_stay(&backwards, &br, Method::Publish),
        0,
    ));
    assert!(lines.contains(&"DTEND;VALUE=DATE:20260613".to_string()));
    assert_eq!(params_of(&lines, "DTSTART"), "DTSTART;VALUE=DATE");
}

#[test]
fn every_provider_carries_every_calendar_part_and_the_body_says_what_they_do() {
    let br = branding_in(Locale::It);
    let f = flight(true);
    let email = render::flight_confirmation(&f, &render::SegmentView::list(&f.segments), &br);
    let parts = render::calendar::flight_segments(&f, &br, Method::Publish);
    let email = render::calendar::attach(email, parts.clone(), br.tr()).unwrap();
    assert_eq!(email.calendars.len(), 2);
    assert!(email
        .text
        .trim_end()
        .ends_with("I file di calendario allegati aggiungono ogni volo al tuo calendario. Le nostre prossime e-mail li aggiorneranno e, in caso di cancellazione, li rimuoveranno."));
    assert!(email.html.contains("I file di calendario allegati"));
    // SMTP: multipart/mixed with the alternative and one text/calendar part per segment.
    let raw = String::from_utf8(render::to_mime(&email, &br, 1_767_225_600).unwrap()).unwrap();
    assert!(raw.contains("multipart/mixed"), "{raw}");
    assert!(raw.contains("multipart/alternative"));
    let calendars = raw
        .lines()
        .filter(|l| l.starts_with("Content-Type: text/calendar"))
        .count();
    assert_eq!(calendars, 2, "{raw}");
    assert!(raw.contains("flight-1-LHR-BCN.ics") && raw.contains("flight-2-BCN-JFK.ics"));
    // Resend: two attachments, each .ics in base64 with its content type.
    let body = resend::request_body(&email, "Example Trips <bookings@mail.example.com>", &[]);
    let a = body["attachments"].as_array().unwrap();
    assert_eq!(a.len(), 2);
    assert_eq!(a[0]["filename"], "flight-1-LHR-BCN.ics");
    assert_eq!(
        a[0]["content_type"],
        "text/calendar; charset=utf-8; method=PUBLISH"
    );
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(a[1]["content"].as_str().unwrap())
        .unwrap();
    assert_eq!(decoded, parts[1].text().as_bytes());
    // An email queued before parts were stamped (`calendar`: one finished part) still goes.
    let mut legacy: serde_json::Value = serde_json::to_value(&email).unwrap();
    legacy.as_object_mut().unwrap().remove("calendars");
    legacy["calendar"] =
        json!({"method": "PUBLISH", "ics": "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"});
    let legacy: booking_email_engine::domain::outbox::outgoing::OutgoingEmail =
        serde_json::from_value(legacy).unwrap();
    let body = resend::request_body(&legacy, "x <b@mail.example.com>", &[]);
    assert_eq!(body["attachments"][0]["filename"], "invite.ics");
    // An email without parts has no attachment and no note.
    let plain = render::booking_confirmation(&hotel("H"), &br).unwrap();
    let body = resend::request_body(&plain, "x <b@mail.example.com>", &[]);
    assert!(body.get("attachments").is_none());
    assert!(!plain.text.contains("calendario allegat"));
}

#[test]
fn a_link_to_the_engine_in_a_supplier_value_never_reaches_the_calendar() {
    use booking_email_engine::domain::email::content_lock::ContentLock;
    use booking_email_engine::domain::render::guard::{guarded, judge};
    let lock = ContentLock::from_config("https://engine.example.com", "outbox");
    let br = branding_in(Locale::En);
    let b = hotel("Harbour https://engine.example.com/admin/bookings Hotel");
    let e = guarded(&lock, &b, |b| {
        let part = render::calendar::hotel_stay(b, &br, Method::Publish);
        render::calendar::attach(render::booking_confirmation(b, &br), vec![part], br.tr())
    })
    .unwrap();
    let lines = unfold(e.calendars[0].text());
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
/// out ("Your booking has been cancelled"): with the booking as stored it carries METHOD:CANCEL
/// parts with the confirmation's UIDs, so the guest's calendar drops the stay or the flights; the
/// not-confirmed wording (no confirmation, so no event in the guest's calendar) and a notice
/// without a stored booking carry none.
#[test]
fn a_cancellation_notice_after_the_confirmation_cancels_its_events() {
    use booking_email_engine::domain::email::content_lock::ContentLock;
    use booking_email_engine::domain::payment::compensation::RefundState;
    use booking_email_engine::domain::render::calendar::Booked;
    use booking_email_engine::domain::render::guard::{guarded, judge};
    let lock = ContentLock::from_config("https://engine.example.com", "outbox");
    let br = branding_in(Locale::En);
    let to = EmailAddress::parse("guest@example.com").unwrap();
    let notice = |sent: bool, booked: Option<Booked>| render::CompensationNotice {
        compensation_id: "comp-0123456789abcdef01234567".into(),
        booking_id: Some("BK_1".into()),
        guest_name: Some("Zoë Guest".into()),
        trip: Some("Example Harbour Hotel".into()),
        confirmation_sent: sent,
        state: RefundState::Refunding,
        amount: Some("EUR 540.00".into()),
        calendar: booked.map(|booked| render::CalendarCancel { booked }),
    };
    let render_notice = |n: &render::CompensationNotice| {
        guarded(&lock, n, |n| render::booking_not_confirmed(n, &to, &br)).unwrap()
    };

    let b = hotel("Harbour https://engine.example.com/admin/bookings Hotel");
    let confirmation = render::calendar::hotel_stay(&b, &br, Method::Publish);
    let e = render_notice(&notice(true, Some(Booked::Hotel(Box::new(b.clone())))));
    assert_eq!(e.subject, "Your booking has been cancelled");
    assert_eq!(e.calendars.len(), 1);
    let part = &e.calendars[0];
    assert_eq!(part.method, Method::Cancel);
    assert_eq!(part.uid(), confirmation.uid());
    let cancel = unfold(part.text());
    assert!(cancel.contains(&"METHOD:CANCEL".to_string()));
    assert_eq!(value(&cancel, "STATUS").unwrap(), "CANCELLED");
    assert_eq!(value(&cancel, "DTSTART").unwrap(), "20260612");
    assert!(e
        .text
        .contains("The attached calendar file removes the cancelled booking from your calendar."));
    // Built from the defanged inputs like the email, and the lock's verdict lets it go.
    assert!(!cancel.iter().any(|l| l.contains("/admin")));
    assert!(e.lock.as_ref().unwrap().template.is_empty());
    assert!(judge(&lock, &e).is_ok());
    let raw = String::from_utf8(render::to_mime(&e, &br, 1_767_225_600).unwrap()).unwrap();
    assert!(raw
        .lines()
        .any(|l| l.starts_with("Content-Type: text/calendar") && l.contains("method=CANCEL")));

    // A flight: one cancelled part per segment, with the confirmation's segment UIDs.
    let f = flight(true);
    let confirmed = render::calendar::flight_segments(&f, &br, Method::Publish);
    let e = render_notice(&notice(true, Some(Booked::Flight(Box::new(f)))));
    let uids = |parts: &[CalendarPart]| -> Vec<String> {
        parts
            .iter()
            .filter_map(|p| p.uid().map(str::to_string))
            .collect()
    };
    assert_eq!(uids(&e.calendars), uids(&confirmed));
    assert!(e.calendars.iter().all(|p| p.method == Method::Cancel));

    // No confirmation went out: the not-confirmed wording, and no event to take away.
    let e = render_notice(&notice(false, Some(Booked::Hotel(Box::new(hotel("H"))))));
    assert_eq!(e.subject, "We could not confirm your booking");
    assert!(e.calendars.is_empty());
    // The booking is not stored: the notice still goes, without a part.
    let e = render_notice(&notice(true, None));
    assert_eq!(e.subject, "Your booking has been cancelled");
    assert!(e.calendars.is_empty());
}

/// A booking id with `,` `;` `\`, a colon, a space and non-ASCII letters still gives a UID of
/// safe characters (a UUID), the same every time, and the id reads as given in DESCRIPTION.
#[test]
fn a_hostile_booking_id_gives_a_safe_stable_uid() {
    let br = branding_in(Locale::En);
    let mut b = hotel("Example Harbour Hotel");
    b.booking_id = serde_json::from_value(json!("BK,1;2\\3:BEGIN VEVENT é%@x")).unwrap();
    let part = render::calendar::hotel_stay(&b, &br, Method::Publish);
    let lines = unfold(&ics(&part, 0));
    assert_eq!(lines.iter().filter(|l| *l == "BEGIN:VEVENT").count(), 1);
    let uid = value(&lines, "UID").unwrap();
    assert!(
        uid.chars().all(|c| c.is_ascii_hexdigit() || c == '-'),
        "{uid}"
    );
    assert_eq!(
        render::calendar::hotel_stay(&b, &br, Method::Cancel).uid(),
        Some(uid.as_str())
    );
    assert!(value(&lines, "DESCRIPTION")
        .unwrap()
        .contains("Booking ID: BK,1;2\\3:BEGIN VEVENT é%@x"));
}
