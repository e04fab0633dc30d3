//! The values every canonical event is built from: where it came from, the checked text newtypes
//! (event id, booking reference, email address), a person's name, money, the booking's holder.

use crate::domain::basics::stored_names;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Where an event came from. Stored names (`as_str`, the variant in `snake_case`) are stable: they
/// appear in D1 `raw_events.source` and in Workflow instance ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Source {
    /// liteAPI (Nuitee) hotel and flight webhooks.
    Liteapi,
    /// Duffel flights and stays webhooks.
    Duffel,
    /// Stripe payment webhooks.
    Stripe,
    /// Standard Webhooks carrying the engine's canonical event JSON.
    Generic,
    /// Resend's delivery reports (bounces, complaints), signed with Svix: stored in `raw_events`,
    /// recorded as suppressions; never starts a journey.
    Resend,
    /// Cloudflare Email Service delivery events, consumed from a Queue (event subscriptions):
    /// stored in `raw_events`, bounces and complaints recorded as suppressions, statuses onto the
    /// email record; never starts a journey.
    EmailService,
}

stored_names!(Source);

/// Why a value could not become one of the core's newtypes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidValue {
    #[error("is empty")]
    Empty,
    #[error("is longer than {0} characters")]
    TooLong(usize),
    #[error("contains a control character")]
    ControlCharacter,
    #[error("is not an email address")]
    NotAnEmailAddress,
}

fn check_text(raw: &str, max: usize) -> Result<String, InvalidValue> {
    let value = raw.trim();
    if value.is_empty() {
        return Err(InvalidValue::Empty);
    }
    if value.chars().count() > max {
        return Err(InvalidValue::TooLong(max));
    }
    if value.chars().any(char::is_control) {
        return Err(InvalidValue::ControlCharacter);
    }
    Ok(value.to_string())
}

macro_rules! text_newtype {
    ($(#[$doc:meta])* $name:ident, $max:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Maximum length in characters.
            pub const MAX_LEN: usize = $max;

            /// Parses a trimmed, non-empty value of at most [`Self::MAX_LEN`] characters with no
            /// control characters.
            pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
                check_text(raw, $max).map(Self)
            }

            /// The value as given (trimmed).
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = InvalidValue;
            fn try_from(raw: String) -> Result<Self, Self::Error> {
                Self::parse(&raw)
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_newtype!(
    /// A supplier's event id (liteAPI `event_id`, Duffel `wev_…`, Stripe `evt_…`, Standard Webhooks
    /// `webhook-id`): the dedupe key of an inbound delivery.
    EventId,
    256
);
text_newtype!(
    /// A booking's id at its supplier (liteAPI `bookingId`, Duffel `ord_…` / `bok_…`).
    BookingRef,
    128
);

/// An email address, checked for the shape `local@domain`: one `@`, ≤ 254 characters, no spaces,
/// no unquoted specials (`"(),:;<>[]\`), no invisible characters, no leading, trailing or double
/// dot in the local part, a domain of letters (any script), digits, `-` and dots with at least one
/// dot. The domain is lower-cased; the local part is kept as given.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EmailAddress(String);

impl EmailAddress {
    /// Parses `local@domain`; see the type docs for the rules.
    pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
        let value = check_text(raw, 254)?;
        let (local, domain) = value
            .rsplit_once('@')
            .ok_or(InvalidValue::NotAnEmailAddress)?;
        // Unquoted RFC 5322 specials, and characters that render as nothing (zero-width, soft
        // hyphen, bidi controls, BOM): never in an address we send to. Quoted local parts
        // (`"a b"@x`) and IP-literal domains (`a@[127.0.0.1]`) are valid mail syntax but are not
        // accepted: no guest uses them and providers treat them inconsistently.
        let refused = |c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '<' | '>' | ',' | '"' | '(' | ')' | ';' | ':' | '[' | ']' | '\\'
                )
                || matches!(c,
                    '\u{00AD}' | '\u{034F}' | '\u{180E}' | '\u{200B}'..='\u{200F}'
                    | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}'
                    | '\u{FEFF}')
        };
        let ok = !local.is_empty()
            && !domain.is_empty()
            && !local.contains('@')
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains("..")
            && domain
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '.')
            && !value.chars().any(refused);
        if !ok {
            return Err(InvalidValue::NotAnEmailAddress);
        }
        Ok(Self(format!("{local}@{}", domain.to_ascii_lowercase())))
    }

    /// The address, e.g. `guest@example.com`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The part after `@`, lower case.
    pub fn domain(&self) -> &str {
        self.0.rsplit_once('@').map(|(_, d)| d).unwrap_or("")
    }
}

impl TryFrom<String> for EmailAddress {
    type Error = InvalidValue;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl From<EmailAddress> for String {
    fn from(v: EmailAddress) -> String {
        v.0
    }
}

impl fmt::Display for EmailAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A person's name as a supplier gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PersonName {
    pub first_name: String,
    pub last_name: String,
}

impl PersonName {
    /// "First Last", or whichever part is present.
    pub fn full(&self) -> String {
        format!("{} {}", self.first_name.trim(), self.last_name.trim())
            .trim()
            .to_string()
    }
}

/// An amount of money exactly as the supplier wrote it (decimal text, never a float) plus its
/// ISO 4217 currency code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Money {
    /// Decimal text, e.g. `"540"` or `"212.40"`.
    pub amount: String,
    /// ISO 4217 code, upper case, e.g. `"EUR"`.
    pub currency: String,
}

/// The person who booked and receives the guest emails.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub name: PersonName,
    pub email: EmailAddress,
    pub phone: Option<String>,
}

#[cfg(test)]
mod email_address_tests {
    use super::*;

    #[test]
    fn ordinary_addresses_parse_and_keep_their_local_part() {
        for (raw, want) in [
            ("guest@example.com", "guest@example.com"),
            (
                "  Guest.Name+tag@Example.COM ",
                "Guest.Name+tag@example.com",
            ),
            ("o'brien@mail.example.ie", "o'brien@mail.example.ie"),
            ("uni-ü@exämple.com", "uni-ü@exämple.com"),
            ("a@b-c.example", "a@b-c.example"),
        ] {
            assert_eq!(EmailAddress::parse(raw).unwrap().as_str(), want, "{raw}");
        }
    }

    #[test]
    fn specials_invisible_characters_and_odd_dots_are_refused() {
        for raw in [
            "quote\"x@example.com",
            "semi;x@example.com",
            "paren(comment)@example.com",
            "colon:x@example.com",
            "back\\slash@example.com",
            "zwsp\u{200b}@example.com",
            "rtl\u{202e}@example.com",
            "soft\u{00ad}hyphen@example.com",
            "ip@[127.0.0.1]",
            ".dot@example.com",
            "dot.@example.com",
            "two..dots@example.com",
            "x@example..com",
            "x@exa_mple.com",
            "x@localhost",
            "a b@example.com",
            "<x@example.com>",
            "x@example.com,y@example.com",
            "@example.com",
            "x@",
        ] {
            assert!(EmailAddress::parse(raw).is_err(), "{raw:?} was accepted");
        }
    }
}
