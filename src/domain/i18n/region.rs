//! Regional formats: how a guest's region writes dates, times and money. The messages stay per
//! language (`locales/<language>.ftl`); the formats follow the region the guest gave (`pt-PT`
//! writes `1234,50 €` and `sexta-feira, 5 de março de 2027`, `pt-BR` writes `€ 1.234,50`).
//!
//! The data is CLDR (<https://cldr.unicode.org/>) as Node's `Intl` writes it, generated into
//! [`super::cldr`] by `scripts/gen-cldr-formats.mjs`; `tests/host/regional_formats.rs` renders a
//! grid of dates, times and amounts (every currency `Intl` knows) and compares each string with
//! what `Intl` wrote.
//!
//! A tag's region picks its row ([`Region::of_tag`]): the exact `language-REGION` row when there
//! is one, else the row CLDR's own inheritance gives that region (every Latin American Spanish
//! region without a row of its own → `es-419`, every Portuguese region but Brazil → `pt-PT`,
//! Liechtenstein German → `de-CH`, the United States' territories → `en-US`), else the language's
//! own row. A bare language is its default row: English `en` is written as CLDR `en-GB` (the
//! day-month order the engine has always used), Portuguese `pt` as CLDR's `pt` (Brazil).

use chrono::{Datelike, NaiveDate, NaiveTime, Timelike};

use super::cldr::{Formats, DIGITS, FORMATS, NAMES};
use super::Locale;

/// The regional formats of a guest's language: a row of the CLDR table. [`Region::DEFAULT`]
/// (also `Default`) is "the language's own row", whichever the language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Region(Option<u8>);

/// Latin American Spanish regions (and `419` itself): CLDR's `es-419` children.
const LATIN_AMERICA: [&str; 23] = [
    "419", "AR", "BO", "BR", "BZ", "CL", "CO", "CR", "CU", "DO", "EC", "GT", "HN", "MX", "NI",
    "PA", "PE", "PR", "PY", "SV", "US", "UY", "VE",
];

/// Regions written as `en-US` (CLDR's `en` and the territories that inherit it).
const US_ENGLISH: [&str; 7] = ["US", "AS", "GU", "MP", "PR", "UM", "VI"];

impl Region {
    /// The language's own row.
    pub const DEFAULT: Region = Region(None);

    /// The row of `language` for a BCP 47 tag's region subtag (`MX`, `419`; case-insensitive);
    /// [`Region::DEFAULT`] when the tag has none or the language has no row for it.
    pub fn of_tag(language: Locale, region: Option<&str>) -> Region {
        let Some(region) = region.map(str::to_ascii_uppercase) else {
            return Region::DEFAULT;
        };
        let lang = language.as_str();
        let exact = format!("{lang}-{region}");
        if let Some(r) = Region::of_id(&exact) {
            return r;
        }
        let parent = match (language, region.as_str()) {
            (Locale::Es, r) if LATIN_AMERICA.contains(&r) => "es-419",
            (Locale::Pt, r) if r != "BR" => "pt-PT",
            (Locale::De, "LI") => "de-CH",
            (Locale::En, r) if US_ENGLISH.contains(&r) => "en-US",
            _ => return Region::DEFAULT,
        };
        Region::of_id(parent).unwrap_or_default()
    }

    /// The id of every row of the table (`en`, `en-US`, …, `it-CH`), in table order.
    pub fn ids() -> impl Iterator<Item = &'static str> {
        FORMATS.iter().map(|f| f.id)
    }

    /// The row whose id is `id` exactly (`pt-PT`, `es-419`, `en-US`, a bare `de`).
    pub fn of_id(id: &str) -> Option<Region> {
        FORMATS
            .iter()
            .position(|f| f.id.eq_ignore_ascii_case(id))
            .and_then(|i| u8::try_from(i).ok())
            .map(|i| Region(Some(i)))
    }

    /// The row used for `language`: this one when it is a row of that language, else the
    /// language's own.
    fn formats(self, language: Locale) -> &'static Formats {
        let lang = language.as_str();
        let own = |f: &&Formats| f.id.split('-').next() == Some(lang);
        self.0
            .and_then(|i| FORMATS.get(usize::from(i)))
            .filter(own)
            .or_else(|| FORMATS.iter().find(|f| f.id == lang))
            .unwrap_or(&FORMATS[0])
    }

    /// The id of the row used for `language` (`pt-PT`, or the bare `pt` of the default): what
    /// `bookings.guest_locale` stores.
    pub fn id(self, language: Locale) -> &'static str {
        self.formats(language).id
    }

    /// The full date, weekday and month written out (CLDR `dateStyle: full`): `Friday 12 June
    /// 2026`, `viernes, 12 de junio de 2026`, `Friday, June 12, 2026` (en-US).
    pub fn date(self, language: Locale, d: NaiveDate) -> String {
        let f = self.formats(language);
        let name = |set: usize, i: u32| {
            NAMES
                .get(set)
                .and_then(|names| names.split('|').nth(i as usize))
                .unwrap_or_default()
        };
        f.date
            .replace("{W}", name(f.weekdays, d.weekday().num_days_from_monday()))
            .replace("{d}", &d.day().to_string())
            .replace("{M}", name(f.months, d.month0()))
            .replace("{y}", &d.year().to_string())
    }

    /// A wall-clock time as the region writes it (CLDR `timeStyle: short`): `07:15`, `7:15`,
    /// `7:15 AM` (en-US, U+202F before the day period), `07 h 15` (fr-CA).
    pub fn time(self, language: Locale, t: NaiveTime) -> String {
        let f = self.formats(language);
        let (pm, h12) = t.hour12();
        f.time
            .replace("{H}", &format!("{:02}", t.hour()))
            .replace("{G}", &t.hour().to_string())
            .replace("{h}", &h12.to_string())
            .replace("{m}", &format!("{:02}", t.minute()))
            .replace("{a}", f.periods[usize::from(pm)])
    }

    /// An amount of `currency` (ISO 4217 code, any case) as the region writes it: its symbol on
    /// its side with its literal (`€1,234.50`, `1234,50 €`, `CHF 1'234.50`, `R$ 1.234,50`), the
    /// currency's own fraction digits (JPY none, BHD three). `amount` is the supplier's decimal
    /// text (`540`, `312.8`); text that is not a plain decimal, or has more fraction digits than
    /// the currency, is shown as given with the code (`540.123 EUR`), never rounded. A code that
    /// is not three letters is shown as given, at most 8 characters.
    pub fn money(self, language: Locale, amount: &str, currency: &str) -> String {
        let f = self.formats(language);
        let code: String = currency.trim().chars().take(8).collect::<String>();
        let code = code.to_ascii_uppercase();
        let amount = amount.trim();
        let is_code = code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase());
        let Some(number) = is_code
            .then(|| decimal(f, amount, digits_of(&code)))
            .flatten()
        else {
            let amount: String = amount.chars().take(32).collect();
            return format!("{amount} {code}");
        };
        let (symbol, sep) = symbol_of(f, &code).unwrap_or((code.as_str(), f.sep));
        if f.prefix {
            format!("{symbol}{sep}{number}")
        } else {
            format!("{number}{sep}{symbol}")
        }
    }
}

/// `(symbol, literal)` of `code` in a row's exceptions, when it has one.
fn symbol_of<'a>(f: &'a Formats, code: &str) -> Option<(&'a str, &'a str)> {
    f.symbols.lines().find_map(|line| {
        let mut cells = line.split('\t');
        (cells.next()? == code).then_some(())?;
        Some((cells.next()?, cells.next().unwrap_or("")))
    })
}

/// The fraction digits of a currency (CLDR supplemental data): two unless listed.
fn digits_of(code: &str) -> usize {
    DIGITS
        .split(' ')
        .find(|e| e.len() == 4 && e.starts_with(code))
        .and_then(|e| e[3..].parse().ok())
        .unwrap_or(2)
}

/// A plain decimal text with `digits` fraction digits in the row's symbols and grouping, or
/// `None` when it is not one (or has more fraction digits).
fn decimal(f: &Formats, s: &str, digits: usize) -> Option<String> {
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty()
        || int.len() > 15
        || !int.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
        || frac.len() > digits
    {
        return None;
    }
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    // CLDR minimumGroupingDigits: with 2 (es, it, pt-PT), 1234 is written without a group symbol.
    if int.len() >= 3 + f.min_grouping {
        for (i, c) in int.chars().enumerate() {
            if i > 0 && (int.len() - i) % 3 == 0 {
                out.push_str(f.group);
            }
            out.push(c);
        }
    } else {
        out.push_str(int);
    }
    if digits > 0 {
        out.push_str(f.decimal);
        out.push_str(frac);
        out.extend(std::iter::repeat_n('0', digits - frac.len()));
    }
    Some(out)
}
