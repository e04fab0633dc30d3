//! Every guest email and guest page in each shipped language (`locales/<tag>.ftl` through
//! `domain::i18n`): no message falls back to English, none is missing, no message id or Fluent
//! syntax reaches a guest, the content lock's template verdict holds in every language, and
//! dates and money are written as CLDR writes them.

use crate::fixtures::branding_in;
use booking_email_engine::domain::email::content_lock::ContentLock;
use booking_email_engine::domain::event::{
    Cancellation, CheckoutAttempt, EmailAddress, FlightBooking, HotelBooking, Money,
};
use booking_email_engine::domain::i18n::{self, message_ids, source_of, Locale, Tr};
use booking_email_engine::domain::marketing::campaign::parse_send_request;
use booking_email_engine::domain::outbox::outgoing::OutgoingEmail;
use booking_email_engine::domain::payment::action_token::OwnerAction;
use booking_email_engine::domain::payment::compensation::RefundState;
use booking_email_engine::domain::render::{self, guard::guarded, SegmentView};
use chrono::NaiveDate;
use serde_json::json;

fn hotel() -> HotelBooking {
    serde_json::from_value(json!({
        "booking_id": "BK_1", "client_reference": "trip_1", "prebook_id": "PB_1",
        "status": "CONFIRMED", "hotel_id": "lp_1", "hotel_name": "Example Harbour Hotel",
        "checkin": "2026-06-12", "checkout": "2026-06-15",
        "rooms": [{"room_name": "Standard Double", "board_name": "Room Only", "adults": 2, "children": 1},
                  {"room_name": "Single", "board_name": null, "adults": 1, "children": 0}],
        "holder": {"name": {"first_name": "Zoë", "last_name": "Guest"}, "email": "guest@example.com", "phone": null},
        "guests": [], "total": {"amount": "1234.5", "currency": "EUR"},
        "hotel_confirmation_number": "HCN-48213", "sandbox": false,
        "checkin_instructions": "Reception is open 24 hours.",
        "location": {"time_zone": "Europe/Madrid", "address": "Passeig de l'Exemple 1, 08003 Barcelona, ES"}
    }))
    .unwrap()
}

fn flight() -> FlightBooking {
    let airport = |iata: &str, zone: &str| json!({"iata_code": iata, "name": format!("{iata} Airport"), "city_name": iata, "time_zone": zone});
    serde_json::from_value(json!({
        "booking_id": "ord_1", "booking_reference": "RZPNR7", "status": "confirmed",
        "contact": {"name": {"first_name": "", "last_name": "Traveller"}, "email": "ana@example.com", "phone": null},
        "passengers": [{"first_name": "Ana", "last_name": "Traveller"}],
        "segments": [{"flight_number": "ZZ 0472", "origin": airport("LHR", "Europe/London"),
                      "destination": airport("BCN", "Europe/Madrid"),
                      "departing_at": "2026-06-12T07:15:00", "arriving_at": "2026-06-12T10:30:00"}],
        "total": {"amount": "312.8", "currency": "GBP"}, "sandbox": true
    }))
    .unwrap()
}

fn attempt() -> CheckoutAttempt {
    serde_json::from_value(json!({
        "prebook_id": "PB_1", "transaction_id": "pi_1", "client_reference": "trip_1",
        "email": "guest@example.com", "guest_name": {"first_name": "Zoë", "last_name": "Guest"},
        "hotel_id": "lp_1", "hotel_name": "Example Harbour Hotel",
        "checkin": "2026-06-12", "checkout": "2026-06-15",
        "price": {"amount": "540", "currency": "EUR"}
    }))
    .unwrap()
}

fn cancellation() -> Cancellation {
    let m = |a: &str| Money {
        amount: a.into(),
        currency: "EUR".into(),
    };
    Cancellation {
        booking_id: hotel().booking_id,
        with_charges: true,
        cancellation_fee: Some(m("180")),
        refund: Some(m("360")),
    }
}

fn notice(sent: bool) -> render::CompensationNotice {
    render::CompensationNotice {
        compensation_id: "comp-0123456789abcdef01234567".into(),
        booking_id: None,
        guest_name: Some("Zoë Guest".into()),
        trip: Some("Example Harbour Hotel".into()),
        confirmation_sent: sent,
        state: RefundState::Refunded,
        amount: Some("EUR 540.00".into()),
        calendar: None,
    }
}

/// Every guest email kind, rendered in `locale`.
fn every_guest_email(locale: Locale) -> Vec<OutgoingEmail> {
    let br = branding_in(locale);
    let (b, f) = (hotel(), flight());
    let to = EmailAddress::parse("guest@example.com").unwrap();
    let retry = "https://book.example.com/retry";
    let segs = SegmentView::list(&f.segments);
    let changes = vec![
        (
            "checkin".to_string(),
            "2026-06-12".to_string(),
            "2026-06-13".to_string(),
        ),
        (
            "room.1.name".to_string(),
            "Standard Double".to_string(),
            "Suite".to_string(),
        ),
        (
            "segment.1.departure".to_string(),
            "2026-06-12T07:15".to_string(),
            "2026-06-12T09:00".to_string(),
        ),
    ];
    let campaign = parse_send_request(
        json!({"campaign": "spring", "subject": "Spring", "text": "Hello", "recipients": ["guest@example.com"]})
            .to_string()
            .as_bytes(),
    )
    .unwrap()
    .campaign;
    vec![
        render::booking_confirmation(&b, &br).unwrap(),
        render::booking_confirmation(
            &HotelBooking {
                hotel_confirmation_number: None,
                ..hotel()
            },
            &br,
        )
        .unwrap(),
        render::hotel_confirmation_number(&b, "HCN-48213", 1_780_000_000_000, &br).unwrap(),
        render::arrival_guide(&b, &br).unwrap(),
        render::checkin_day(&b, &br).unwrap(),
        render::thank_you(&b, &br).unwrap(),
        render::booking_updated(&b, "0123456789abcdef", &changes, 1_780_000_000_000, &br).unwrap(),
        render::booking_cancelled(
            &render::CancelledBooking::for_hotel_in(&b, br.tr()),
            &cancellation(),
            &br,
        )
        .unwrap(),
        render::booking_cancelled(
            &render::CancelledBooking::for_flight_in(&f, br.tr()),
            &Cancellation {
                with_charges: true,
                cancellation_fee: None,
                refund: None,
                ..cancellation()
            },
            &br,
        )
        .unwrap(),
        render::flight_confirmation(&f, &segs, &br).unwrap(),
        render::flight_changed(&f, "aic_1", &segs, &segs, 1_780_000_000_000, &br).unwrap(),
        render::flight_changed(
            &FlightBooking {
                booking_reference: None,
                ..flight()
            },
            "aic_2",
            &segs,
            &segs,
            1_780_000_000_000,
            &br,
        )
        .unwrap(),
        render::booking_not_confirmed(&notice(false), &to, &br).unwrap(),
        render::booking_not_confirmed(&notice(true), &to, &br).unwrap(),
        render::checkout_not_completed(&attempt(), &to, retry, &br).unwrap(),
        render::checkout_not_completed(
            &CheckoutAttempt {
                hotel_name: None,
                checkout: None,
                ..attempt()
            },
            &to,
            retry,
            &br,
        )
        .unwrap(),
        render::checkout_declined(
            &attempt(),
            &to,
            OwnerAction::SendInsufficientFunds,
            retry,
            &br,
        )
        .unwrap(),
        render::checkout_declined(&attempt(), &to, OwnerAction::SendSecurityCheck, retry, &br)
            .unwrap(),
        render::marketing::render(
            &campaign,
            &to,
            "https://engine.example.com",
            b"0123456789abcdef0123456789abcdef",
            &br,
        )
        .unwrap(),
    ]
}

/// Text a guest must never see: Fluent syntax, or a message id of the English file.
fn assert_no_raw_messages(where_: &str, text: &str) {
    assert!(
        !text.contains("{ $") && !text.contains("{$"),
        "{where_}: Fluent syntax in {text}"
    );
    for id in message_ids(source_of(Locale::En)) {
        // Ids are lower-case words joined by `-`; only multi-word ids can be told from prose.
        if id.contains('-') && !id.starts_with("month-") && !id.starts_with("weekday-") {
            assert!(
                !text.contains(id),
                "{where_}: message id {id:?} rendered as text"
            );
        }
    }
}

#[test]
fn every_language_file_has_exactly_the_english_message_ids() {
    let english = message_ids(source_of(Locale::En));
    assert!(
        english.len() > 150,
        "English has {} messages",
        english.len()
    );
    let mut sorted = english.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), english.len(), "duplicate ids in en.ftl");
    for locale in Locale::ALL {
        let mut ids = message_ids(source_of(locale));
        ids.sort_unstable();
        assert_eq!(ids, sorted, "{locale} ids differ from en");
    }
}

#[test]
fn every_guest_email_renders_in_every_language_without_falling_back() {
    for locale in Locale::ALL {
        i18n::take_fallbacks();
        let emails = every_guest_email(locale);
        let fallbacks = i18n::take_fallbacks();
        assert!(
            fallbacks.is_empty(),
            "{locale}: fell back to English for {fallbacks:?}"
        );
        assert!(
            i18n::take_missing().is_empty(),
            "{locale}: messages missing"
        );
        for e in &emails {
            let what = format!("{locale} {}", e.kind);
            for part in [&e.subject, &e.text, &e.html] {
                assert_no_raw_messages(&what, part);
            }
            assert!(
                e.html
                    .contains(&format!("<html lang=\"{}\">", locale.as_str())),
                "{what}: html lang"
            );
            assert!(
                !e.subject.trim().is_empty() && !e.text.trim().is_empty(),
                "{what}"
            );
        }
    }
}

#[test]
fn each_language_reads_as_that_language() {
    let greeting = [
        (
            Locale::En,
            "Hi Zoë,",
            "Your stay at Example Harbour Hotel is confirmed",
        ),
        (
            Locale::Es,
            "Hola, Zoë:",
            "Tu estancia en Example Harbour Hotel está confirmada",
        ),
        (
            Locale::Fr,
            "Bonjour Zoë,",
            "Votre séjour à Example Harbour Hotel est confirmé",
        ),
        (
            Locale::De,
            "Hallo Zoë,",
            "Ihr Aufenthalt im Example Harbour Hotel ist bestätigt",
        ),
        (
            Locale::Pt,
            "Olá, Zoë,",
            "Sua estadia no Example Harbour Hotel está confirmada",
        ),
        (
            Locale::It,
            "Ciao Zoë,",
            "Il tuo soggiorno presso Example Harbour Hotel è confermato",
        ),
    ];
    for (locale, hi, subject) in greeting {
        let e = render::booking_confirmation(&hotel(), &branding_in(locale)).unwrap();
        assert!(e.text.starts_with(hi), "{locale}: {}", e.text);
        assert_eq!(e.subject, subject);
    }
    // The words of the same email differ between every two languages.
    let texts: Vec<String> = Locale::ALL
        .iter()
        .map(|l| render::thank_you(&hotel(), &branding_in(*l)).unwrap().text)
        .collect();
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn the_content_lock_verdict_holds_in_every_language() {
    let lock = ContentLock::from_config("https://engine.example.com", "outbox,wrangler,liteapi");
    for locale in Locale::ALL {
        let br = branding_in(locale);
        let checks: Vec<OutgoingEmail> = vec![
            guarded(&lock, &hotel(), |b| render::booking_confirmation(b, &br)).unwrap(),
            guarded(&lock, &hotel(), |b| render::arrival_guide(b, &br)).unwrap(),
            guarded(&lock, &hotel(), |b| render::checkin_day(b, &br)).unwrap(),
            guarded(&lock, &hotel(), |b| render::thank_you(b, &br)).unwrap(),
            guarded(&lock, &flight(), |f| {
                render::flight_confirmation(f, &SegmentView::list(&f.segments), &br)
            })
            .unwrap(),
            guarded(&lock, &(hotel(), cancellation()), |(b, c)| {
                render::booking_cancelled(
                    &render::CancelledBooking::for_hotel_in(b, br.tr()),
                    c,
                    &br,
                )
            })
            .unwrap(),
            guarded(&lock, &notice(false), |n| {
                render::booking_not_confirmed(
                    n,
                    &EmailAddress::parse("g@example.com").unwrap(),
                    &br,
                )
            })
            .unwrap(),
        ];
        for e in checks {
            let verdict = e.lock.clone().expect("guest emails carry a verdict");
            assert!(
                verdict.template.is_empty(),
                "{locale} {}: {:?}",
                e.kind,
                verdict.template
            );
            assert!(
                render::guard::judge(&lock, &e).is_ok(),
                "{locale} {}",
                e.kind
            );
        }
    }
}

/// Each shipped language without a region writes dates and money as its default CLDR locale
/// (English as en-GB): the strings `new Intl.DateTimeFormat(tag, {dateStyle: "full"})` and
/// `new Intl.NumberFormat(tag, {style: "currency", currency})` write; every region and currency
/// is checked against `Intl` in `regional_formats`. `\u{a0}` is a no-break space, `\u{202f}` a
/// narrow one.
#[test]
fn dates_and_money_follow_cldr() {
    let d = NaiveDate::from_ymd_opt(2026, 6, 12).unwrap();
    let table = [
        (
            Locale::En,
            "Friday, 12 June 2026",
            "€1,234.50",
            "£99.99",
            "JP¥12,000",
        ),
        (
            Locale::Es,
            "viernes, 12 de junio de 2026",
            "1234,50\u{a0}€",
            "99,99\u{a0}GBP",
            "12.000\u{a0}JPY",
        ),
        (
            Locale::Fr,
            "vendredi 12 juin 2026",
            "1\u{202f}234,50\u{a0}€",
            "99,99\u{a0}£GB",
            "12\u{202f}000\u{a0}JPY",
        ),
        (
            Locale::De,
            "Freitag, 12. Juni 2026",
            "1.234,50\u{a0}€",
            "99,99\u{a0}£",
            "12.000\u{a0}¥",
        ),
        (
            Locale::Pt,
            "sexta-feira, 12 de junho de 2026",
            "€\u{a0}1.234,50",
            "£\u{a0}99,99",
            "JP¥\u{a0}12.000",
        ),
        (
            Locale::It,
            "venerdì 12 giugno 2026",
            "1234,50\u{a0}€",
            "99,99\u{a0}£",
            "12.000\u{a0}JPY",
        ),
    ];
    for (locale, june, eur, gbp, jpy) in table {
        let tr = Tr::new(locale);
        assert_eq!(tr.date(d), june, "{locale}");
        assert_eq!(tr.money("1234.5", "EUR"), eur, "{locale}");
        assert_eq!(tr.money("99.99", "gbp"), gbp, "{locale}");
        assert_eq!(tr.money("12000", "JPY"), jpy, "{locale}");
    }
    // A currency beyond the few the files once listed has its CLDR symbol and spacing.
    assert_eq!(Tr::new(Locale::De).money("10", "CHF"), "10,00\u{a0}CHF");
    assert_eq!(Tr::new(Locale::Pt).money("10", "BRL"), "R$\u{a0}10,00");
}

#[test]
fn times_are_the_regions_with_the_local_time_words() {
    let t = NaiveDate::from_ymd_opt(2026, 6, 12)
        .unwrap()
        .and_hms_opt(7, 5, 0)
        .unwrap();
    assert_eq!(
        Tr::new(Locale::En).local_time(t),
        "Friday, 12 June 2026, 07:05 (local time)"
    );
    assert_eq!(
        Tr::new(Locale::Es).local_time(t),
        "viernes, 12 de junio de 2026, 7:05 (hora local)"
    );
    assert_eq!(
        Tr::new(Locale::De).local_time(t),
        "Freitag, 12. Juni 2026, 07:05 Uhr (Ortszeit)"
    );
}

#[test]
fn unsubscribe_pages_speak_the_visitors_language() {
    let page = render::unsubscribe_confirm_page_in(
        "guest@example.com",
        "/unsubscribe/t",
        "Example Trips",
        Tr::new(Locale::Fr),
    );
    assert!(page.contains("<html lang=\"fr\">"), "{page}");
    assert!(page.contains("Se désabonner"), "{page}");
    assert_no_raw_messages("unsubscribe fr", &page);
}

/// Render time per email per language, for `node bench/i18n.mjs` (not a pass/fail test: it only
/// prints `I18NBENCH {json}` lines). Each of the guest emails of [`every_guest_email`] is rendered
/// `I18N_BENCH_ROUNDS` times (default 200) per language, after one warm-up round.
#[test]
#[ignore = "a measurement: run by bench/i18n.mjs"]
fn bench_render_time_per_language() {
    let rounds: u32 = std::env::var("I18N_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(200);
    for locale in Locale::ALL {
        let emails = every_guest_email(locale).len() as u32;
        let started = std::time::Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(every_guest_email(locale));
        }
        let ns = started.elapsed().as_nanos() / u128::from(rounds * emails);
        let calendar = {
            let started = std::time::Instant::now();
            for _ in 0..rounds {
                std::hint::black_box(
                    render::calendar::hotel_stay(
                        &hotel(),
                        &branding_in(locale),
                        booking_email_engine::domain::email::calendar::Method::Publish,
                    )
                    .text()
                    .len(),
                );
            }
            started.elapsed().as_nanos() / u128::from(rounds)
        };
        println!(
            "I18NBENCH {{\"locale\":\"{}\",\"emails\":{emails},\"rounds\":{rounds},\"ns_per_email\":{ns},\"ns_per_calendar\":{calendar}}}",
            locale.as_str()
        );
    }
}

/// Writes the sample renders in docs/: the booking confirmation in each shipped language
/// (`docs/i18n/booking-confirmation.<tag>.txt|html`), its text in every regional form of the
/// CLDR table (`docs/i18n/regions/booking-confirmation.<form>.txt`: dates, times and money as
/// that region writes them) and sample calendar parts (`docs/i18n/*.ics`, stamped as the first
/// hand-overs would be). Run with `cargo test --test host -- --ignored write_docs_renders`.
#[test]
#[ignore = "writes docs/"]
fn write_docs_renders() {
    use booking_email_engine::domain::email::calendar::Method;
    use booking_email_engine::domain::i18n::{Lang, Region};
    let dir = format!("{}/docs/i18n", env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(format!("{dir}/regions")).unwrap();
    let at = 1_780_000_000_000;
    for locale in Locale::ALL {
        let br = branding_in(locale);
        let e = render::booking_confirmation(&hotel(), &br).unwrap();
        let tag = locale.as_str();
        std::fs::write(
            format!("{dir}/booking-confirmation.{tag}.txt"),
            format!("Subject: {}\n\n{}", e.subject, e.text),
        )
        .unwrap();
        std::fs::write(format!("{dir}/booking-confirmation.{tag}.html"), &e.html).unwrap();
    }
    for id in Region::ids() {
        let lang = Lang::from_tag(id).unwrap();
        let br = branding_in(lang.locale).in_locale(lang);
        let e = render::booking_confirmation(&hotel(), &br).unwrap();
        let t = NaiveDate::from_ymd_opt(2026, 6, 12)
            .unwrap()
            .and_hms_opt(19, 5, 0)
            .unwrap();
        let tr = br.tr();
        std::fs::write(
            format!("{dir}/regions/booking-confirmation.{id}.txt"),
            format!(
                "Regional form {id}: {} · {} · {} · {}\nSubject: {}\n\n{}",
                tr.local_time(t),
                tr.money("1234.5", "USD"),
                tr.money("1234.5", "CHF"),
                tr.money("12345", "JPY"),
                e.subject,
                e.text
            ),
        )
        .unwrap();
    }
    let br = branding_in(Locale::Es);
    let stay = |method, sequence| {
        render::calendar::hotel_stay(&hotel(), &br, method)
            .stamped(sequence, at)
            .text()
            .to_string()
    };
    std::fs::write(format!("{dir}/stay.es.ics"), stay(Method::Publish, 0)).unwrap();
    std::fs::write(
        format!("{dir}/stay-cancelled.es.ics"),
        stay(Method::Cancel, 3),
    )
    .unwrap();
    let _ = std::fs::remove_file(format!("{dir}/flight.en.ics"));
    for (i, part) in
        render::calendar::flight_segments(&flight(), &branding_in(Locale::En), Method::Publish)
            .into_iter()
            .enumerate()
    {
        std::fs::write(
            format!("{dir}/flight-{}.en.ics", i + 1),
            part.stamped(0, at).text(),
        )
        .unwrap();
    }
}

/// French typography in every French guest email: a no-break space (U+00A0, or the narrow
/// U+202F) before `:`, `;`, `!` and `?`, never a plain space or none — except inside a URL, a
/// time (`07:15`) or an ISO date-time, which are not prose.
#[test]
fn french_puts_a_no_break_space_before_colons_semicolons_exclamation_and_question_marks() {
    let mut bad = Vec::new();
    for e in every_guest_email(Locale::Fr) {
        for (part, text) in [("subject", &e.subject), ("text", &e.text)] {
            for line in text.lines() {
                let chars: Vec<char> = line.chars().collect();
                for (i, c) in chars.iter().enumerate() {
                    if !matches!(c, ':' | ';' | '!' | '?') {
                        continue;
                    }
                    let before = if i == 0 { ' ' } else { chars[i - 1] };
                    let after = chars.get(i + 1).copied().unwrap_or(' ');
                    let digits = before.is_ascii_digit() && after.is_ascii_digit();
                    let url = line[..line.char_indices().nth(i).unwrap().0]
                        .rsplit(' ')
                        .next()
                        .is_some_and(|w| w.starts_with("http"));
                    let query = *c == '?' && url;
                    if digits || url || query || before == '\u{a0}' || before == '\u{202f}' {
                        continue;
                    }
                    bad.push(format!("{} {part}: {line}", e.kind));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A guest without a first name: a greeting that reads right on its own in each language, once,
/// assuming no gender (never "Hi there" glued into a sentence, never "liebe Reisende, lieber
/// Reisender").
#[test]
fn a_guest_without_a_first_name_is_greeted_once_and_without_a_gender() {
    let want = [
        (Locale::En, "Hello,"),
        (Locale::Es, "Hola:"),
        (Locale::Fr, "Bonjour,"),
        (Locale::De, "Guten Tag,"),
        (Locale::Pt, "Olá,"),
        (Locale::It, "Buongiorno,"),
    ];
    let mut b = hotel();
    b.holder.name.first_name = "  ".into();
    for (locale, hello) in want {
        let e = render::booking_confirmation(&b, &branding_in(locale)).unwrap();
        let first = e.text.lines().next().unwrap();
        assert_eq!(first, hello, "{locale}");
        for gendered in [
            "Reisender",
            "cher voyageur",
            "viajero",
            "viajante",
            "viaggiatore",
        ] {
            assert!(!e.text.contains(gendered), "{locale}: {gendered}");
        }
    }
}

/// Known board types read in the guest's language; an unknown one as the supplier wrote it.
#[test]
fn board_types_with_known_codes_are_translated() {
    let table = [
        (Locale::De, "BB", "Frühstück inklusive"),
        (Locale::Es, "Half Board", "Media pensión"),
        (Locale::Fr, "room_only", "Logement seul"),
        (Locale::It, "AI", "All inclusive"),
        (Locale::Pt, "Full board", "Pensão completa"),
        (Locale::En, "bed-and-breakfast", "Breakfast included"),
    ];
    for (locale, code, want) in table {
        assert_eq!(Tr::new(locale).board(code), want, "{locale} {code}");
    }
    assert_eq!(
        Tr::new(Locale::De).board("Dinner and show"),
        "Dinner and show"
    );
    let mut b = hotel();
    b.rooms[0].board_name = Some("HB".into());
    let e = render::booking_confirmation(&b, &branding_in(Locale::It)).unwrap();
    assert!(e.text.contains("Mezza pensione"), "{}", e.text);
}

/// No subject names the hotel twice ("hotel … Example Harbour Hotel"); German keeps "Abreise"
/// for check-out only; sentences carry the full date (no weekday abbreviation in prose).
#[test]
fn subjects_name_the_hotel_once_and_sentences_carry_full_dates() {
    for locale in Locale::ALL {
        for e in every_guest_email(locale) {
            let lower = e.subject.to_lowercase();
            let hotel_words = ["hotel", "hôtel"]
                .iter()
                .map(|w| lower.matches(w).count())
                .sum::<usize>();
            assert!(hotel_words <= 1, "{locale} {}: {}", e.kind, e.subject);
        }
    }
    let de = source_of(Locale::De);
    let abreise = de
        .lines()
        .filter(|l| l.contains("Abreise") && !l.starts_with('#'))
        .map(|l| l.split('=').next().unwrap().trim())
        .collect::<Vec<_>>();
    assert_eq!(abreise, ["label-checkout", "field-checkout"]);
    let e = render::arrival_guide(&hotel(), &branding_in(Locale::Es)).unwrap();
    assert!(
        e.text.contains("empieza el viernes, 12 de junio de 2026."),
        "{}",
        e.text
    );
}
