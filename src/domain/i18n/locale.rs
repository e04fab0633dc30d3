//! The guest's language: which of the shipped languages an email is written in, how a language
//! tag from a source becomes one, and when a booking's language may change.
//!
//! Tags are BCP 47 (<https://www.rfc-editor.org/rfc/rfc5646>): a source's tag is trimmed, `_`
//! becomes `-`, and it is matched by its primary language subtag, case-insensitively
//! (`pt-BR` → `pt`, `es-419` → `es`, `FR_ca` → `fr`); its region subtag picks the regional
//! formats ([`Region::of_tag`]: `pt-PT` writes Portuguese with Portugal's dates and money). A tag
//! that is not well formed, or whose language is not shipped, gives no language (the caller then
//! falls back to the next source, and at last to `DEFAULT_GUEST_LOCALE`). Stripe's `auto` (the
//! browser decides) also gives none.
//!
//! A partner's language field is a hint, never a reason to refuse a booking ([`Lang::from_hint`]):
//! a tag, or a list in the form of HTTP `Accept-Language` (`pt-PT, pt;q=0.9, en;Q=0.5`, q-weights
//! read case-insensitively, RFC 9110 §12.5.4), of which the best shipped language counts; anything
//! else is ignored. The generic source reads such a field from any JSON value.

use serde::{Deserialize, Serialize};

pub use super::region::Region;

/// One of the shipped languages (`locales/<tag>.ftl`). Stored name = the BCP 47 tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum Locale {
    /// English: also the fallback of every missing message.
    #[default]
    En,
    Es,
    Fr,
    De,
    Pt,
    It,
}
crate::domain::basics::stored_names!(Locale);

/// Longest tag read from a source (RFC 5646 §4.4.1 asks for at least 35 characters).
const TAG_MAX_CHARS: usize = 64;

impl Locale {
    /// Every shipped language, English first.
    pub const ALL: [Locale; 6] = [
        Locale::En,
        Locale::Es,
        Locale::Fr,
        Locale::De,
        Locale::Pt,
        Locale::It,
    ];

    /// The shipped language a BCP 47 tag asks for, or `None` (malformed, `auto`, or a language
    /// not shipped). See the module docs for the normalisation.
    pub fn from_tag(tag: &str) -> Option<Locale> {
        Lang::from_tag(tag).map(|l| l.locale)
    }

    /// The first shipped language an HTTP `Accept-Language` header asks for, by descending
    /// `q` (RFC 9110 §12.5.4); `None` when none is shipped. Malformed entries are skipped.
    pub fn from_accept_language(header: &str) -> Option<Locale> {
        Lang::from_accept_language(header).map(|l| l.locale)
    }
}

/// A guest's language and the regional formats it is written with: `pt-PT` is Portuguese
/// messages with Portugal's dates and money. Stored (and serialised) as [`Lang::id`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Lang {
    pub locale: Locale,
    pub region: Region,
}

impl From<Locale> for Lang {
    fn from(locale: Locale) -> Self {
        Lang {
            locale,
            region: Region::DEFAULT,
        }
    }
}

impl Lang {
    /// The language and formats a BCP 47 tag asks for, or `None` (see the module docs).
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let tag = tag.trim();
        if tag.is_empty() || tag.chars().count() > TAG_MAX_CHARS {
            return None;
        }
        let normal = tag.replace('_', "-").to_ascii_lowercase();
        let subtags: Vec<&str> = normal.split('-').collect();
        let well_formed = subtags
            .iter()
            .all(|s| (1..=8).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric()));
        let primary = subtags[0];
        if !well_formed
            || !(2..=3).contains(&primary.len())
            || !primary.chars().all(|c| c.is_ascii_alphabetic())
        {
            return None;
        }
        let locale = Locale::parse(primary)?;
        // RFC 5646 §2.1: an optional 4-letter script, then the region (2 letters or 3 digits).
        let region = subtags
            .iter()
            .skip(1)
            .find(|s| !(s.len() == 4 && s.chars().all(|c| c.is_ascii_alphabetic())))
            .filter(|s| {
                (s.len() == 2 && s.chars().all(|c| c.is_ascii_alphabetic()))
                    || (s.len() == 3 && s.chars().all(|c| c.is_ascii_digit()))
            });
        Some(Lang {
            locale,
            region: Region::of_tag(locale, region.copied()),
        })
    }

    /// The best shipped language of an `Accept-Language`-style list, by descending `q` (`q=` or
    /// `Q=`), first listed on a tie; entries with `q=0`, malformed or not shipped are skipped.
    pub fn from_accept_language(header: &str) -> Option<Lang> {
        let mut ranked: Vec<(u16, usize, Lang)> = header
            .split(',')
            .take(32)
            .enumerate()
            .filter_map(|(i, item)| {
                let mut parts = item.split(';');
                let tag = parts.next()?.trim();
                let q = parts
                    .find_map(|p| {
                        let p = p.trim();
                        (p.len() >= 2 && p[..2].eq_ignore_ascii_case("q=")).then(|| p[2..].trim())
                    })
                    .map_or(Some(1000), |q| {
                        q.parse::<f32>()
                            .ok()
                            .filter(|q| q.is_finite())
                            .map(|q| (q.clamp(0.0, 1.0) * 1000.0) as u16)
                    })?;
                (q > 0).then_some(())?;
                Some((q, i, Lang::from_tag(tag)?))
            })
            .collect();
        crate::domain::basics::sort::sort_by(&mut ranked, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked.first().map(|r| r.2)
    }

    /// A partner's language hint: a tag, or an `Accept-Language`-style list (any `,` or `;`).
    pub fn from_hint(hint: &str) -> Option<Lang> {
        if hint.contains([',', ';']) {
            Lang::from_accept_language(hint)
        } else {
            Lang::from_tag(hint)
        }
    }

    /// The stored form: the id of the regional formats' row (`pt-PT`, `es-419`, a bare `pt`).
    pub fn id(self) -> &'static str {
        self.region.id(self.locale)
    }
}

impl Serialize for Lang {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for Lang {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let tag = String::deserialize(d)?;
        Lang::from_tag(&tag)
            .ok_or_else(|| serde::de::Error::custom(format!("{tag:?} is not a shipped language")))
    }
}

/// Where a booking's language came from. Stored name in D1 `bookings.guest_locale_source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum LocaleSource {
    /// The booking event itself stated it (the generic source's `locale` / `language` field).
    /// The business's own system speaks for the guest: this is the explicit statement.
    Event,
    /// The Stripe Checkout Session paid for this booking (its `locale`, linked by the client
    /// reference): the language the guest saw at checkout.
    StripeCheckout,
    /// Nobody stated one: `DEFAULT_GUEST_LOCALE`.
    Default,
}
crate::domain::basics::stored_names!(LocaleSource);

/// A booking's language (with its regional formats) and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestLocale {
    pub lang: Lang,
    pub source: LocaleSource,
}

/// The language of a new booking, from the first source that names a shipped language:
/// the event's own hint (`event_hint`, [`Lang::from_hint`]), else the Stripe Checkout Session's
/// `locale` (`checkout_tag`), else `default`. A hint that names no shipped language counts as
/// absent (`pt-BR` counts: it is Portuguese).
pub fn resolve(event_hint: Option<&str>, checkout_tag: Option<&str>, default: Lang) -> GuestLocale {
    if let Some(lang) = event_hint.and_then(Lang::from_hint) {
        return GuestLocale {
            lang,
            source: LocaleSource::Event,
        };
    }
    if let Some(lang) = checkout_tag.and_then(Lang::from_tag) {
        return GuestLocale {
            lang,
            source: LocaleSource::StripeCheckout,
        };
    }
    GuestLocale {
        lang: default,
        source: LocaleSource::Default,
    }
}

/// Whether a later statement `incoming` replaces a booking's stored language `stored`
/// (`Some(new)`) or not (`None`). The rule that keeps a journey in one language:
/// - an **explicit** change — a later event of the booking that itself carries a language
///   ([`LocaleSource::Event`]) — always applies (the business's own system said so);
/// - a Stripe Checkout Session that arrives after the booking fills in the language only while
///   the booking has none stated ([`LocaleSource::Default`]) **and** no guest email of it has been
///   rendered yet (`guest_mail_started == false`); once the guest has read one email, the journey
///   stays in that language;
/// - the default never replaces anything.
pub fn update(
    stored: GuestLocale,
    incoming: GuestLocale,
    guest_mail_started: bool,
) -> Option<GuestLocale> {
    let replace = match incoming.source {
        LocaleSource::Event => true,
        LocaleSource::StripeCheckout => {
            stored.source == LocaleSource::Default && !guest_mail_started
        }
        LocaleSource::Default => false,
    };
    (replace && incoming != stored).then_some(incoming)
}
