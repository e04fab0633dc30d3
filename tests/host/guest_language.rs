//! The guest's language, resolved once per booking (`domain::i18n::locale`): which source fields
//! carry a language, how a tag becomes a shipped language (BCP 47, fallbacks, bad tags), which
//! source wins, and when a later statement may change a booking's language.

use crate::fixtures::fixture;
use booking_email_engine::domain::event::{
    HotelBooking, Interpretation, PaymentOutcome, SupplierEvent,
};
use booking_email_engine::domain::i18n::locale::{resolve, update};
use booking_email_engine::domain::i18n::{GuestLocale, Lang, Locale, LocaleSource};
use booking_email_engine::sources::{generic, stripe};
use serde_json::{json, Value};

#[test]
fn tags_normalise_to_a_shipped_language_or_none() {
    let table: [(&str, Option<Locale>); 22] = [
        ("es", Some(Locale::Es)),
        ("ES", Some(Locale::Es)),
        ("es-419", Some(Locale::Es)),
        ("pt-BR", Some(Locale::Pt)),
        ("pt_br", Some(Locale::Pt)),
        ("pt-PT", Some(Locale::Pt)),
        ("fr-CA", Some(Locale::Fr)),
        ("de-CH", Some(Locale::De)),
        ("it", Some(Locale::It)),
        ("en-GB", Some(Locale::En)),
        ("  en-US  ", Some(Locale::En)),
        ("zh-Hant-TW", None), // well formed, not shipped: the next source decides
        ("ja", None),
        ("auto", None), // Stripe: the browser chose; says nothing about the guest
        ("", None),
        ("e", None),
        ("español", None),
        ("es--ES", None),
        ("es-ES-thisiswaytoolong", None),
        ("<script>", None),
        ("12", None),
        ("es;q=1", None),
    ];
    for (tag, want) in table {
        assert_eq!(Locale::from_tag(tag), want, "{tag:?}");
    }
    assert_eq!(Locale::from_tag(&"es-".repeat(40)), None, "over-long tag");
}

#[test]
fn the_first_source_that_names_a_shipped_language_wins() {
    let g = |locale: Locale, source| GuestLocale {
        lang: locale.into(),
        source,
    };
    let table = [
        // (event field, Stripe session locale, default) → result
        (
            (Some("fr"), Some("es"), Locale::En),
            g(Locale::Fr, LocaleSource::Event),
        ),
        (
            (None, Some("es"), Locale::En),
            g(Locale::Es, LocaleSource::StripeCheckout),
        ),
        (
            (Some("pt-BR"), None, Locale::De),
            g(Locale::Pt, LocaleSource::Event),
        ),
        (
            (Some("ja"), Some("it"), Locale::En),
            g(Locale::It, LocaleSource::StripeCheckout),
        ),
        (
            (Some("ja"), Some("auto"), Locale::De),
            g(Locale::De, LocaleSource::Default),
        ),
        (
            (None, None, Locale::Es),
            g(Locale::Es, LocaleSource::Default),
        ),
        (
            (Some(""), Some("bogus!"), Locale::En),
            g(Locale::En, LocaleSource::Default),
        ),
    ];
    for ((event, checkout, default), want) in table {
        assert_eq!(
            resolve(event, checkout, default.into()),
            want,
            "{event:?} {checkout:?}"
        );
    }
}

#[test]
fn a_journey_keeps_its_language_unless_the_change_is_explicit() {
    let g = |locale: Locale, source| GuestLocale {
        lang: locale.into(),
        source,
    };
    let default_en = g(Locale::En, LocaleSource::Default);
    let stripe_es = g(Locale::Es, LocaleSource::StripeCheckout);
    let event_fr = g(Locale::Fr, LocaleSource::Event);
    // A Stripe session arriving after the booking fills in an unstated language...
    assert_eq!(update(default_en, stripe_es, false), Some(stripe_es));
    // ... but not once the guest has had an email in the default language,
    assert_eq!(update(default_en, stripe_es, true), None);
    // ... and never over a language a source stated.
    assert_eq!(update(event_fr, stripe_es, false), None);
    assert_eq!(
        update(
            g(Locale::It, LocaleSource::StripeCheckout),
            stripe_es,
            false
        ),
        None
    );
    // The default never replaces anything.
    assert_eq!(update(stripe_es, default_en, false), None);
    // An event of the booking that states a language is explicit: it applies mid-journey.
    assert_eq!(update(stripe_es, event_fr, true), Some(event_fr));
    // Restating the same language changes nothing.
    assert_eq!(update(event_fr, event_fr, true), None);
}

#[test]
fn accept_language_picks_the_best_shipped_language() {
    let table = [
        ("es-ES,es;q=0.9,en;q=0.8", Some(Locale::Es)),
        ("ja, pt-BR;q=0.7, en;q=0.5", Some(Locale::Pt)),
        ("en;q=0.2, de;q=0.9", Some(Locale::De)),
        ("fr;q=0, it", Some(Locale::It)),
        ("ja, zh", None),
        ("", None),
        (";;;,", None),
    ];
    for (header, want) in table {
        assert_eq!(Locale::from_accept_language(header), want, "{header:?}");
    }
}
#[test]
fn a_stripe_checkout_session_carries_its_locale() {
    let mut v = fixture("stripe-checkout-session-completed.json");
    v["data"]["object"]["locale"] = json!("pt-BR");
    let body = serde_json::to_vec(&v).unwrap();
    let env = stripe::parse_envelope(&body).unwrap();
    let Interpretation::Journey(SupplierEvent::PaymentUpdated(p)) =
        stripe::interpret(&env).unwrap()
    else {
        panic!("expected a payment update");
    };
    assert_eq!(p.outcome, PaymentOutcome::Paid);
    assert_eq!(p.locale.as_deref(), Some("pt-BR"));
    // A value that is not a tag is read as absent, never stored.
    v["data"]["object"]["locale"] = json!("es\r\nX-Injected: 1");
    let env = stripe::parse_envelope(&serde_json::to_vec(&v).unwrap()).unwrap();
    let Interpretation::Journey(SupplierEvent::PaymentUpdated(p)) =
        stripe::interpret(&env).unwrap()
    else {
        panic!("expected a payment update");
    };
    assert_eq!(p.locale, None);
}

/// A generic `hotel_booked` (the canonical booking JSON, see `src/sources/generic.rs`) with more
/// fields in `data`: the booking as parsed (a hint never refuses it).
fn generic_booking_with(extra: Value) -> HotelBooking {
    let mut v = json!({
        "type": "hotel_booked",
        "data": {
            "booking_id": "gen_bk_0001", "client_reference": null, "prebook_id": null,
            "status": "CONFIRMED", "hotel_id": "gen_hotel_42", "hotel_name": "Example Harbour Hotel",
            "checkin": "2026-06-12", "checkout": "2026-06-15",
            "rooms": [{"room_name": "Standard Double", "board_name": null, "adults": 2, "children": 0}],
            "holder": {"name": {"first_name": "Testa", "last_name": "Guestington"},
                       "email": "guest@example.com", "phone": null},
            "guests": [], "total": null, "hotel_confirmation_number": null, "sandbox": true
        }
    });
    for (k, value) in extra.as_object().unwrap() {
        v["data"][k] = value.clone();
    }
    let Interpretation::Journey(SupplierEvent::HotelBooked(b)) =
        generic::interpret(&serde_json::to_vec(&v).unwrap()).unwrap()
    else {
        panic!("expected a hotel booking");
    };
    *b
}

fn generic_booking(extra: (&str, &str)) -> Option<String> {
    generic_booking_with(json!({ extra.0: extra.1 }))
        .locale
        .as_deref()
        .map(str::to_string)
}

#[test]
fn the_generic_source_carries_locale_or_language() {
    assert_eq!(
        generic_booking(("locale", "pt-BR")).as_deref(),
        Some("pt-BR")
    );
    assert_eq!(generic_booking(("language", "es")).as_deref(), Some("es"));
    assert_eq!(generic_booking(("note", "x")), None);
}

/// Every shape a partner sends its language hint in is read, never refused: both fields (the
/// one that names a shipped language wins), a non-string (ignored), an `Accept-Language`-style
/// list with q-weights in any case, a JSON array of tags; the region picks the formats.
#[test]
fn a_language_hint_never_refuses_a_booking_and_is_read_leniently() {
    let lang = |extra: Value| {
        let b = generic_booking_with(extra);
        b.locale.as_deref().and_then(Lang::from_hint).map(Lang::id)
    };
    let table: [(Value, Option<&str>); 12] = [
        (json!({"locale": "pt-PT", "language": "es"}), Some("pt-PT")),
        (json!({"locale": "tlh", "language": "de-CH"}), Some("de-CH")),
        (json!({"locale": 42}), None),
        (
            json!({"locale": {"tag": "fr"}, "language": "it-CH"}),
            Some("it-CH"),
        ),
        (json!({"language": true}), None),
        (
            json!({"locale": "ja, es-MX;q=0.9, en;q=0.8"}),
            Some("es-MX"),
        ),
        (json!({"locale": "en;Q=0.2, fr-CA;Q=0.9"}), Some("fr-CA")),
        (json!({"language": "de-AT;q=0.5, xx"}), Some("de-AT")),
        (json!({"locale": ["ja", "pt-BR", "en"]}), Some("pt")),
        (json!({"locale": "es-AR"}), Some("es-AR")),
        (json!({"locale": "es-PE"}), Some("es-419")),
        (json!({"locale": null, "language": null}), None),
    ];
    for (extra, want) in table {
        assert_eq!(lang(extra.clone()), want, "{extra}");
    }
    // An over-long hint is bounded, and a hint is never a reason to refuse.
    let long = "x".repeat(10_000);
    assert_eq!(lang(json!({ "locale": long })), None);
}

#[test]
fn a_liteapi_booking_carries_the_book_requests_metadata_language() {
    use booking_email_engine::sources::liteapi::{hotel_booking, parse_envelope};
    let with = |language: Value| {
        let mut v = fixture("liteapi-booking-confirmed.json");
        let mut request: Value = serde_json::from_str(v["request"].as_str().unwrap()).unwrap();
        request["metadata"] = json!({ "language": language });
        v["request"] = json!(request.to_string());
        hotel_booking(&parse_envelope(&serde_json::to_vec(&v).unwrap()).unwrap())
            .unwrap()
            .locale
    };
    assert_eq!(with(json!("fr-FR")).as_deref(), Some("fr-FR"));
    assert_eq!(with(json!("fr\r\nX: y")), None);
    assert_eq!(with(json!(42)), None);
    // The fixture's request has no metadata: no language stated.
    let plain = fixture("liteapi-booking-confirmed.json");
    let b = hotel_booking(&parse_envelope(&serde_json::to_vec(&plain).unwrap()).unwrap()).unwrap();
    assert_eq!(b.locale, None);
}
