//! The regional formats of guest emails against what Node's `Intl` writes (CLDR through ICU):
//! `tests/fixtures/cldr-intl.json` holds `Intl`'s own strings, written by
//! `scripts/gen-cldr-formats.mjs` together with the Rust table, for every format locale: every
//! currency `Intl` knows at 1234.5 (12345 for currencies without decimals), a grid of amounts
//! from 0.5 to a million, a week of full dates and the 15th of every month, and five times of
//! day. The Rust formatter must write every one exactly as `Intl` did. The end-to-end run checks
//! the emails' own amounts and dates against the `Intl` of the Node that runs it.

use booking_email_engine::domain::i18n::{Lang, Region, Tr};
use chrono::{NaiveDate, NaiveTime};
use serde_json::Value;

fn fixture() -> Value {
    let path = format!(
        "{}/tests/fixtures/cldr-intl.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_format_locale_writes_money_dates_and_times_as_intl_does() {
    let f = fixture();
    let formats = f["formats"].as_object().unwrap();
    assert!(formats.len() >= 20, "the fixture covers the format locales");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (id, row) in formats {
        let lang = Lang::from_tag(id).unwrap_or_else(|| panic!("{id} is not a shipped language"));
        assert_eq!(lang.id(), id, "{id} resolves to its own row");
        let tr = Tr::of(lang);
        let mut check = |what: String, got: String, want: &str| {
            checked += 1;
            if got != want {
                wrong.push(format!("{id} {what}: Rust {got:?}, Intl {want:?}"));
            }
        };
        for (currency, cell) in row["money"].as_object().unwrap() {
            let (amount, want) = (cell[0].as_str().unwrap(), cell[1].as_str().unwrap());
            check(
                format!("money {amount} {currency}"),
                tr.money(amount, currency),
                want,
            );
        }
        for cell in row["grid"].as_array().unwrap() {
            let (currency, amount, want) = (
                cell[0].as_str().unwrap(),
                cell[1].as_str().unwrap(),
                cell[2].as_str().unwrap(),
            );
            check(
                format!("money {amount} {currency}"),
                tr.money(amount, currency),
                want,
            );
        }
        for (date, want) in row["dates"].as_object().unwrap() {
            let d = NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap();
            check(format!("date {date}"), tr.date(d), want.as_str().unwrap());
        }
        for (time, want) in row["times"].as_object().unwrap() {
            let t = NaiveTime::parse_from_str(time, "%H:%M").unwrap();
            check(
                format!("time {time}"),
                tr.region.time(tr.locale, t),
                want.as_str().unwrap(),
            );
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {checked} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(checked > 5_000, "{checked} strings checked");
}

/// A tag's region picks its row; regions without a row of their own take the row CLDR's
/// inheritance gives them; a bare language is its default row.
#[test]
fn a_tags_region_picks_the_regional_formats() {
    let id = |tag: &str| Lang::from_tag(tag).map(Lang::id);
    let table = [
        ("pt", Some("pt")),
        ("pt-BR", Some("pt")),
        ("pt-PT", Some("pt-PT")),
        ("pt-AO", Some("pt-PT")),
        ("es", Some("es")),
        ("es-ES", Some("es")),
        ("es-MX", Some("es-MX")),
        ("es-419", Some("es-419")),
        ("es-PE", Some("es-419")),
        ("es-AR", Some("es-AR")),
        ("de-CH", Some("de-CH")),
        ("de-LI", Some("de-CH")),
        ("de-AT", Some("de-AT")),
        ("de-LU", Some("de")),
        ("fr-CA", Some("fr-CA")),
        ("FR_ch", Some("fr-CH")),
        ("it-CH", Some("it-CH")),
        ("it-SM", Some("it")),
        ("en", Some("en")),
        ("en-GB", Some("en")),
        ("en-US", Some("en-US")),
        ("en-PR", Some("en-US")),
        ("en-IN", Some("en")),
        ("zh-Hant-TW", None),
        ("sr-Latn-RS", None),
        ("pt-Latn-PT", Some("pt-PT")),
    ];
    for (tag, want) in table {
        assert_eq!(id(tag), want, "{tag}");
    }
    // A region of another language is never used for a language: the language's own row.
    assert_eq!(
        Region::of_id("pt-PT")
            .unwrap()
            .id(booking_email_engine::domain::i18n::Locale::De),
        "de"
    );
}

#[test]
fn the_cases_the_issue_names_read_as_their_region_writes_them() {
    let tr = |tag: &str| Tr::of(Lang::from_tag(tag).unwrap());
    assert_eq!(tr("pt-PT").money("1234.5", "EUR"), "1234,50\u{a0}€");
    assert_eq!(tr("pt-BR").money("1234.5", "EUR"), "€\u{a0}1.234,50");
    assert_eq!(tr("pt-BR").money("1234.5", "BRL"), "R$\u{a0}1.234,50");
    assert_eq!(tr("es-MX").money("1234.5", "MXN"), "$1,234.50");
    assert_eq!(tr("es").money("1234.5", "MXN"), "1234,50\u{a0}MXN");
    assert_eq!(tr("de-CH").money("1234.5", "CHF"), "CHF\u{a0}1'234.50");
    assert_eq!(tr("en").money("1234.5", "CHF"), "CHF\u{a0}1,234.50");
    assert_eq!(tr("en").money("1234.5", "BRL"), "R$1,234.50");
    assert_eq!(tr("en").money("5", "BHD"), "BHD\u{a0}5.000");
    assert_eq!(
        tr("fr-CA").money("1234.5", "USD"),
        "1\u{a0}234,50\u{a0}$\u{a0}US"
    );
    // Never rounded: more digits than the currency has, or not a number at all.
    assert_eq!(tr("fr").money("540.123", "EUR"), "540.123 EUR");
    assert_eq!(tr("fr").money("about 5", "EUR"), "about 5 EUR");
    assert_eq!(tr("de").money("1234.5", "JPY"), "1234.5 JPY");
    let d = NaiveDate::from_ymd_opt(2027, 3, 5).unwrap();
    assert_eq!(tr("en-US").date(d), "Friday, March 5, 2027");
    assert_eq!(tr("fr-CH").date(d), "vendredi, 5 mars 2027");
    assert_eq!(tr("fr").date(d), "vendredi 5 mars 2027");
    assert_eq!(
        tr("de-AT").date(NaiveDate::from_ymd_opt(2027, 1, 5).unwrap()),
        "Dienstag, 5. Jänner 2027"
    );
    let t = NaiveDate::from_ymd_opt(2027, 3, 5)
        .unwrap()
        .and_hms_opt(19, 5, 0)
        .unwrap();
    assert_eq!(
        tr("en-US").local_time(t),
        "Friday, March 5, 2027, 7:05 PM (local time)"
    );
    assert_eq!(
        tr("en").local_time(t),
        "Friday, 5 March 2027, 19:05 (local time)"
    );
}
