//! Building blocks of the core that know nothing of bookings, emails or suppliers: reading typed
//! values from JSON ([`json`]) and the one parse error naming the offending field
//! ([`parse_error`]), supplier text normalised and bounded ([`text`], with Unicode NFC in [`nfc`]),
//! one stable sort compiled once ([`sort`]), and constant-time comparison of shared secrets
//! ([`secret`]).
//!
//! May use: nothing else in `domain` (every other folder may use this one).

pub mod json;
pub mod nfc;
pub mod parse_error;
pub mod secret;
pub mod sort;
pub mod text;

/// `as_str` / `parse` / `Display` of a closed set whose stored names strum derives
/// (`IntoStaticStr` + `EnumString`): the names live in one place, the enum's strum attributes.
/// `parse` answers `None` for a name this build does not know.
macro_rules! stored_names {
    ($name:ident) => {
        impl $name {
            /// The stored name (D1 columns, JSON, dedupe keys, step names); never changes once
            /// released.
            pub fn as_str(self) -> &'static str {
                self.into()
            }

            /// Inverse of `as_str`; `None` for an unknown name.
            pub fn parse(name: &str) -> Option<Self> {
                name.parse().ok()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use stored_names;
