//! Guest-facing words in the guest's language: messages from `locales/<tag>.ftl` (Project Fluent,
//! <https://projectfluent.org/>, through the `fluent-bundle` crate), and dates, times and money
//! written as the guest's region writes them ([`region`]: CLDR data generated from Node's `Intl`).
//!
//! One file per language, compiled into the Worker (`include_str!`) and parsed once per isolate.
//! A message missing from a language falls back to English and is counted ([`take_fallbacks`]); a
//! host test renders every guest email in every shipped language and fails on any fallback. A
//! message missing from English too renders as nothing and is counted ([`take_missing`]);
//! `render::compose` then refuses the email, so a message id never reaches a guest.
//!
//! Owner alerts stay English templates; [`Tr`] is what guest emails and pages use.
//!
//! May use: `basics`, `event`.

#[rustfmt::skip]
mod cldr;
pub mod locale;
pub mod region;

use std::cell::RefCell;

use chrono::{NaiveDate, NaiveDateTime};
use fluent_bundle::{FluentArgs, FluentBundle, FluentResource, FluentValue};
pub use locale::{GuestLocale, Lang, Locale, LocaleSource};
pub use region::Region;

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

/// A translator for one language: what templates and renderers call for every guest-facing word,
/// with the regional formats of its dates, times and money.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tr {
    pub locale: Locale,
    pub region: Region,
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
    /// The language's messages with its own regional formats.
    pub fn new(locale: Locale) -> Self {
        Self {
            locale,
            region: Region::DEFAULT,
        }
    }

    /// The messages and regional formats of `lang`.
    pub fn of(lang: Lang) -> Self {
        Self {
            locale: lang.locale,
            region: lang.region,
        }
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

    /// A label followed by the language's colon, ready for its value: `Hotel:`, `Hôtel :` (French
    /// puts a no-break space before it).
    pub fn colon<S: AsRef<str>>(&self, label: S) -> String {
        self.t1("label-colon", "label", label.as_ref())
    }

    /// A supplier's board type in this language when it is one of the known codes or names
    /// (room only, breakfast, half board, full board, all inclusive); as written otherwise.
    pub fn board(&self, board: &str) -> String {
        match board_kind(board) {
            Some(id) => self.t(id),
            None => board.to_string(),
        }
    }

    /// A date written out in full, as the region writes it in a sentence and a table alike:
    /// `Friday, 12 June 2026`, `viernes, 12 de junio de 2026`, `Friday, June 12, 2026` (en-US).
    pub fn date(&self, d: NaiveDate) -> String {
        self.region.date(self.locale, d)
    }

    /// A date range: both dates in full, joined as the language joins them (`date-range`).
    pub fn date_range(&self, from: NaiveDate, to: NaiveDate) -> String {
        if from == to {
            return self.date(from);
        }
        let (first, last) = (self.date(from), self.date(to));
        self.args(
            "date-range",
            &[("from", Arg::Text(&first)), ("to", Arg::Text(&last))],
        )
    }

    /// A local wall-clock time with its date, e.g. `Friday, 12 June 2026, 07:15 (local time)`, the
    /// time as the region writes it (`7:15 AM` in en-US).
    pub fn local_time(&self, t: NaiveDateTime) -> String {
        let date = self.date(t.date());
        let time = self.region.time(self.locale, t.time());
        self.args(
            "datetime-local",
            &[("date", Arg::Text(&date)), ("time", Arg::Text(&time))],
        )
    }

    /// An amount as the region writes it in that currency (see [`Region::money`]): `€540.00`
    /// (en), `540,00 €` (es), `€ 540,00` (pt), `540,00 €` (pt-PT), `CHF 540.00` (de-CH).
    pub fn money(&self, amount: &str, currency: &str) -> String {
        self.region.money(self.locale, amount, currency)
    }

    /// [`Tr::money`] of an optional amount.
    pub fn money_of(&self, m: &Option<crate::domain::event::Money>) -> Option<String> {
        m.as_ref().map(|m| self.money(&m.amount, &m.currency))
    }

    /// The label of a traveller-visible snapshot field (`checkin`, `room.2.name`,
    /// `segment.1.departure`; see `crate::domain::journey::snapshot`), in this language. An unknown field
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

/// The message id of a supplier's board type, matched without regard to case, spaces, `-` or
/// `_`: the codes of the hotel trade (RO, BB/BI, HB, FB, AI, as liteAPI's `boardType` and most
/// wholesalers send them) and their usual English names (`Room Only`, `Bed and Breakfast`,
/// `Breakfast included`, `Half Board`, `Full Board`, `All Inclusive`).
fn board_kind(board: &str) -> Option<&'static str> {
    let key: String = board
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    Some(match key.as_str() {
        "ro" | "roomonly" | "accommodationonly" | "noboard" => "board-room-only",
        "bb" | "bi" | "bedandbreakfast" | "breakfast" | "breakfastincluded" => "board-breakfast",
        "hb" | "halfboard" => "board-half-board",
        "fb" | "fullboard" => "board-full-board",
        "ai" | "allinclusive" => "board-all-inclusive",
        _ => return None,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A message whose variable the caller did not pass is refused in every language (the render
    /// then refuses), never sent as Fluent's `{$name}`; with its variable it is the language's own.
    #[test]
    fn a_message_missing_its_variable_is_refused_not_rendered_with_the_name() {
        take_fallbacks();
        take_missing();
        let es = Tr::new(Locale::Es);
        let out = es.t1("hi", "first_name", "Ana");
        assert_eq!(out, "");
        assert_eq!(take_missing(), vec!["hi".to_string()]);
        let ok = es.t1("hi", "name", "Ana");
        assert!(ok.starts_with("Hola") && ok.contains("Ana"), "{ok}");
        assert!(take_fallbacks().is_empty());
        assert!(take_missing().is_empty());
    }
}
