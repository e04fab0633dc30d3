//! The pure core: decisions from data and time.
//!
//! Nothing in `domain` (or `sources`) may touch `worker`, `js_sys` or `wasm_bindgen`: every function
//! takes its inputs — including `now` and any randomness — as arguments and returns a value, so the
//! whole core runs under plain `cargo test` on the host. `tests/host/core_is_pure.rs` enforces this.

pub mod action_token;
pub mod admin;
pub mod backlog;
pub mod booking;
pub mod calendar;
pub mod checkout;
pub mod compensation;
pub mod content_lock;
pub mod digest;
pub mod email;
pub mod event;
pub mod i18n;
pub mod ids;
pub mod inbound;
pub mod intent;
pub mod json;
pub mod marketing;
pub mod marketing_email;
pub mod markup;
pub mod nfc;
pub mod operator;
pub mod outbox;
pub mod ownership;
pub mod parse_error;
pub mod payment_proof;
pub mod refund_ask;
pub mod release;
pub mod reminders;
pub mod render;
pub mod replan;
pub mod reply_token;
pub mod resend;
pub mod schedule;
pub mod secret;
pub mod smtp;
pub mod snapshot;
pub mod sort;
pub mod sweep;
pub mod text;
pub mod timezone;
pub mod tz_lookup;
pub mod tzdb;
pub mod unsubscribe;
pub mod webhook_events;
pub mod webhooks;

/// At most `max` bytes of `s`, cut on a char boundary (for quotes in messages and stored details).
pub(crate) fn cut_bytes(s: &str, max: usize) -> &str {
    &s[..s.floor_char_boundary(max)]
}

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
