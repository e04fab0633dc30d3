//! Guest-facing words in the guest's language: messages from `locales/<tag>.ftl` (Project Fluent,
//! <https://projectfluent.org/>, through the `fluent-bundle` crate), and dates, numbers and money
//! written as that language writes them (the CLDR data those files carry: weekday and month names,
//! date patterns, decimal and group symbols, currency symbols and pattern).
//!
//! One file per language, compiled into the Worker (`include_str!`) and parsed once per isolate.
//! A message missing from a language falls back to English and is counted ([`take_fallbacks`]); a
//! host test renders every guest email in every shipped language and fails on any fallback. A
//! message missing from English too renders as nothing and is counted ([`take_missing`]);
//! `render::compose` then refuses the email, so a message id never reaches a guest.
//!
//! Owner alerts stay English templates; [`Tr`] is what guest emails and pages use.

pub mod locale;

use std::cell::RefCell;

use chrono::{Datelike, NaiveDate, NaiveDateTime};
use fluent_bundle::{FluentArgs, FluentBundle, FluentResource, FluentValue};
pub use locale::{GuestLocale, Locale, LocaleSource};

/// The message files, in [`Locale::ALL`] order.
const SOURCES: [(Locale, &str); 6] = [
    (Locale::En, include_str!("../../../locales/en.ftl")),
    (Locale::Es, include_str!("../../../locales/es.ftl")),
    (Locale::Fr, include_str!("../../../locales/fr.ftl")),
    (Locale::De, include_str!("../../../locales/de.ftl")),
    (Locale::Pt, include_str!("../../../locales/pt.ftl")),
    (Locale::It, include_str!("../../../locales/it.ftl")),
];

/// The raw `.ftl` text of a language (for tests that compare message ids across files).
pub fn source_of(locale: Locale) -> &'static str {
    SOURCES
        .iter()
        .find(|(l, _)| *l == locale)
        .map_or("", |(_, s)| s)
}

thread_local! {
    /// One parsed bundle per language, built on first use (a Worker isolate is single-threaded).
    static BUNDLES: Vec<FluentBundle<FluentResource>> = SOURCES.iter().map(|(locale, src)| bundle(*locale, src)).collect();
    /// `(language, message id)` of each message that fell back to English since the last take.
    static FALLBACKS: RefCell<Vec<(Locale, String)>> = const { RefCell::new(Vec::new()) };
    /// Message ids missing from English as well since the last take.
    static MISSING: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

fn bundle(locale: Locale, src: &str) -> FluentBundle<FluentResource> {
    let lang: unic_langid::LanguageIdentifier = locale.as_str().parse().unwrap_or_default();
    let mut bundle = FluentBundle::new(vec![lang]);
    // No Unicode isolation marks around placeables: emails are left-to-right, and the marks would
    // sit invisibly inside names and numbers (and inside the text the content lock reads).
    bundle.set_use_isolating(false);
    // A syntax error in a shipped file keeps the entries that parsed; the test of message ids
    // across languages then names what is missing.
    let resource = FluentResource::try_new(src.to_string()).unwrap_or_else(|(partial, _)| partial);
    // Duplicate ids are a file bug caught by the same test; the first one wins.
    let _ = bundle.add_resource(resource);
    bundle
}

/// The fallbacks counted on this thread since the last call, emptied.
pub fn take_fallbacks() -> Vec<(Locale, String)> {
    FALLBACKS.with(|f| std::mem::take(&mut *f.borrow_mut()))
}

/// The ids missing from English counted on this thread since the last call, emptied.
pub fn take_missing() -> Vec<String> {
    MISSING.with(|m| std::mem::take(&mut *m.borrow_mut()))
}

/// Formats message `id` of `locale` with `args`: the language's own message, else English's
/// (counted as a fallback), else `""` (counted as missing). A message that formats with errors (a
/// variable its text names but the caller did not pass, an unknown term) counts as absent in that
/// language: Fluent would render the variable's name as `{$name}` into the guest's email.
fn format(locale: Locale, id: &str, args: Option<&FluentArgs<'_>>) -> String {
    BUNDLES.with(|bundles| {
        let formatted = |l: Locale| {
            let b = &bundles[Locale::ALL.iter().position(|x| *x == l).unwrap_or(0)];
            let pattern = b.get_message(id).and_then(|m| m.value())?;
            let mut errors = Vec::new();
            let text = b.format_pattern(pattern, args, &mut errors).into_owned();
            errors.is_empty().then_some(text)
        };
        if let Some(text) = formatted(locale) {
            return text;
        }
        if locale != Locale::En {
            if let Some(text) = formatted(Locale::En) {
                FALLBACKS.with(|f| f.borrow_mut().push((locale, id.to_string())));
                return text;
            }
        }
        MISSING.with(|m| m.borrow_mut().push(id.to_string()));
        String::new()
    })
}

/// A translator for one language: what templates and renderers call for every guest-facing word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tr {
    pub locale: Locale,
}

/// A value for a message argument: text, or a number (plural selection).
pub enum Arg<'a> {
    Text(&'a str),
    Number(i64),
}

/// A value a template or renderer passes as a message argument, however many references deep
/// (askama passes fields by reference).
pub trait ArgValue {
    fn arg(&self) -> Arg<'_>;
}

impl ArgValue for str {
    fn arg(&self) -> Arg<'_> {
        Arg::Text(self)
    }
}
impl ArgValue for String {
    fn arg(&self) -> Arg<'_> {
        Arg::Text(self)
    }
}
impl<T: ArgValue + ?Sized> ArgValue for &T {
    fn arg(&self) -> Arg<'_> {
        (**self).arg()
    }
}
macro_rules! number_arg {
    ($($t:ty),*) => {$(
        impl ArgValue for $t {
            fn arg(&self) -> Arg<'_> {
                Arg::Number(i64::try_from(*self).unwrap_or(i64::MAX))
            }
        }
        impl From<$t> for Arg<'_> {
            fn from(n: $t) -> Self {
                Arg::Number(i64::try_from(n).unwrap_or(i64::MAX))
            }
        }
    )*};
}
number_arg!(i64, u32, usize);

impl<'a, T: ArgValue + ?Sized> From<&'a T> for Arg<'a> {
    fn from(v: &'a T) -> Self {
        v.arg()
    }
}

impl Tr {
    pub fn new(locale: Locale) -> Self {
        Self { locale }
    }

    /// The BCP 47 tag (`<html lang>`).
    pub fn lang(&self) -> &'static str {
        self.locale.as_str()
    }

    /// Message `id` without arguments.
    pub fn t(&self, id: &str) -> String {
        format(self.locale, id, None)
    }

    /// Message `id` with `args` (`(name, value)` pairs).
    pub fn args(&self, id: &str, args: &[(&str, Arg<'_>)]) -> String {
        let mut fa = FluentArgs::new();
        for (name, value) in args {
            match value {
                Arg::Text(s) => fa.set(*name, FluentValue::from(*s)),
                Arg::Number(n) => fa.set(*name, FluentValue::from(*n)),
            }
        }
        format(self.locale, id, Some(&fa))
    }

    /// Message `id` with one argument (templates call this).
    pub fn t1<'v>(&self, id: &str, name: &str, value: impl Into<Arg<'v>>) -> String {
        self.args(id, &[(name, value.into())])
    }

    /// Message `id` with two arguments (templates call this).
    pub fn t2<'v, 'w>(
        &self,
        id: &str,
        n1: &str,
        v1: impl Into<Arg<'v>>,
        n2: &str,
        v2: impl Into<Arg<'w>>,
    ) -> String {
        self.args(id, &[(n1, v1.into()), (n2, v2.into())])
    }

    /// Message `id` with three arguments (templates call this).
    #[allow(clippy::too_many_arguments)]
    pub fn t3<'u, 'v, 'w>(
        &self,
        id: &str,
        n1: &str,
        v1: impl Into<Arg<'u>>,
        n2: &str,
        v2: impl Into<Arg<'v>>,
        n3: &str,
        v3: impl Into<Arg<'w>>,
    ) -> String {
        self.args(id, &[(n1, v1.into()), (n2, v2.into()), (n3, v3.into())])
    }

    /// A date as the language writes it with weekday, e.g. `Fri 12 June 2026`,
    /// `vie, 12 de junio de 2026`, `Fr., 12. Juni 2026`.
    pub fn date(&self, d: NaiveDate) -> String {
        self.date_with(d, "date-long")
    }

    fn date_with(&self, d: NaiveDate, pattern: &str) -> String {
        let weekday = self.t(&format!("weekday-{}", d.weekday().number_from_monday()));
        let month = self.t(&format!("month-{}", d.month()));
        let (day, year) = (d.day().to_string(), d.year().to_string());
        self.args(
            pattern,
            &[
                ("weekday", Arg::Text(&weekday)),
                ("day", Arg::Text(&day)),
                ("month", Arg::Text(&month)),
                ("year", Arg::Text(&year)),
            ],
        )
    }

    /// A compact date range: the year once when both dates share it.
    pub fn date_range(&self, from: NaiveDate, to: NaiveDate) -> String {
        if from == to {
            return self.date(from);
        }
        let first = if from.year() == to.year() {
            self.date_with(from, "date-no-year")
        } else {
            self.date(from)
        };
        let last = self.date(to);
        self.args(
            "date-range",
            &[("from", Arg::Text(&first)), ("to", Arg::Text(&last))],
        )
    }

    /// A local wall-clock time with its date, e.g. `Fri 12 June 2026, 07:15 (local time)`
    /// (24-hour clock, the CLDR `Hm` skeleton of every shipped language).
    pub fn local_time(&self, t: NaiveDateTime) -> String {
        let date = self.date(t.date());
        let time = t.format("%H:%M").to_string();
        self.args(
            "datetime-local",
            &[("date", Arg::Text(&date)), ("time", Arg::Text(&time))],
        )
    }

    /// An amount as the language writes it in that currency: `€540.00` (en), `540,00 €` (es, fr,
    /// de, it), `€ 540,00` (pt). `amount` is the supplier's decimal string (`540`, `312.8`); one
    /// that is not a plain decimal, or has more fraction digits than the currency uses, is shown
    /// as given with the ISO code (`540.123 EUR`) rather than rounded.
    pub fn money(&self, amount: &str, currency: &str) -> String {
        let currency = currency.trim().to_ascii_uppercase();
        let digits = currency_digits(&currency);
        let Some(number) = self.decimal(amount.trim(), digits) else {
            return format!("{} {}", amount.trim(), currency);
        };
        let symbol_id = format!("currency-{currency}");
        let symbol = if currency.len() == 3
            && currency.chars().all(|c| c.is_ascii_uppercase())
            && has_message(self.locale, &symbol_id)
        {
            self.t(&symbol_id)
        } else {
            currency.clone()
        };
        self.args(
            "money",
            &[
                ("symbol", Arg::Text(&symbol)),
                ("amount", Arg::Text(&number)),
            ],
        )
    }

    /// [`Tr::money`] of an optional amount.
    pub fn money_of(&self, m: &Option<crate::domain::event::Money>) -> Option<String> {
        m.as_ref().map(|m| self.money(&m.amount, &m.currency))
    }

    /// A plain decimal string with `digits` fraction digits in the language's symbols, or `None`.
    fn decimal(&self, s: &str, digits: usize) -> Option<String> {
        let (negative, s) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if int.is_empty()
            || int.len() > 15
            || !int.chars().all(|c| c.is_ascii_digit())
            || !frac.chars().all(|c| c.is_ascii_digit())
            || frac.len() > digits
        {
            return None;
        }
        let int = int.trim_start_matches('0');
        let int = if int.is_empty() { "0" } else { int };
        let min_grouping: usize = self.t("number-min-grouping").trim().parse().unwrap_or(1);
        let group = self.t("number-group");
        let mut grouped = String::new();
        // CLDR minimumGroupingDigits: with 2 (es, it), 1234 stays unseparated, 12345 is grouped.
        if int.len() >= 4 + (min_grouping - 1).min(3) {
            for (i, c) in int.chars().enumerate() {
                if i > 0 && (int.len() - i) % 3 == 0 {
                    grouped.push_str(&group);
                }
                grouped.push(c);
            }
        } else {
            grouped.push_str(int);
        }
        if digits > 0 {
            grouped.push_str(&self.t("number-decimal"));
            grouped.push_str(frac);
            grouped.extend(std::iter::repeat_n('0', digits - frac.len()));
        }
        Some(if negative {
            format!("-{grouped}")
        } else {
            grouped
        })
    }

    /// The label of a traveller-visible snapshot field (`checkin`, `room.2.name`,
    /// `segment.1.departure`; see `crate::domain::snapshot`), in this language. An unknown field
    /// shows its own name.
    pub fn field_label(&self, field: &str) -> String {
        let mut n = None;
        let words: Vec<&str> = field
            .split('.')
            .filter(|p| match p.parse::<i64>() {
                Ok(v) => {
                    n = Some(v);
                    false
                }
                Err(_) => true,
            })
            .collect();
        let id = format!("field-{}", words.join("-").replace('_', "-"));
        if !has_message(Locale::En, &id) {
            return field.to_string();
        }
        match n {
            Some(n) => self.args(&id, &[("n", Arg::Number(n))]),
            None => self.t(&id),
        }
    }

    /// A snapshot value as the guest reads it: an ISO date (`2026-06-12`) or local date-time
    /// (`2026-06-12T07:15:00`) in this language, anything else as given.
    pub fn field_value(&self, value: &str) -> String {
        if let Ok(d) = NaiveDate::parse_from_str(value, "%Y-%m-%d") {
            return self.date(d);
        }
        for f in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"] {
            if let Ok(t) = NaiveDateTime::parse_from_str(value, f) {
                return self.local_time(t);
            }
        }
        value.to_string()
    }
}

/// Whether `locale`'s own file has message `id` (no fallback).
fn has_message(locale: Locale, id: &str) -> bool {
    BUNDLES.with(|b| {
        let i = Locale::ALL.iter().position(|x| *x == locale).unwrap_or(0);
        b[i].has_message(id)
    })
}

/// The message ids of a `.ftl` text, in file order (every `id =` at the start of a line; terms
/// `-x` and comments excluded).
pub fn message_ids(src: &str) -> Vec<&str> {
    src.lines()
        .filter_map(|l| {
            let (id, _) = l.split_once('=')?;
            let id = id.trim_end();
            (!id.is_empty()
                && id.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .then_some(id)
        })
        .collect()
}

/// ISO 4217 minor units: the currencies written without decimals; two otherwise
/// (<https://www.six-group.com/en/products-services/financial-information/data-standards.html>).
fn currency_digits(code: &str) -> usize {
    const ZERO: [&str; 16] = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
        "VUV", "XAF", "XOF",
    ];
    const THREE: [&str; 7] = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];
    if ZERO.contains(&code) {
        0
    } else if THREE.contains(&code) {
        3
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message whose variable the caller did not pass is refused in every language (the render
    /// then refuses), never sent as Fluent's `{$name}`; with its variable it is the language's own.
    #[test]
    fn a_message_missing_its_variable_is_refused_not_rendered_with_the_name() {
        take_fallbacks();
        take_missing();
        let es = Tr { locale: Locale::Es };
        let out = es.t1("hi", "first_name", "Ana");
        assert_eq!(out, "");
        assert_eq!(take_missing(), vec!["hi".to_string()]);
        let ok = es.t1("hi", "name", "Ana");
        assert!(ok.starts_with("Hola") && ok.contains("Ana"), "{ok}");
        assert!(take_fallbacks().is_empty());
        assert!(take_missing().is_empty());
    }
}
