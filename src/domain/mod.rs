//! The pure core: decisions from data and time.
//!
//! Nothing in `domain` (or `sources`) may touch `worker`, `js_sys` or `wasm_bindgen`: every function
//! takes its inputs — including `now` and any randomness — as arguments and returns a value, so the
//! whole core runs under plain `cargo test` on the host. `tests/core_is_pure.rs` enforces this.

pub mod action_token;
pub mod checkout;
pub mod content_lock;
pub mod email;
pub mod event;
pub mod ids;
pub mod marketing;
pub mod marketing_email;
pub mod operator;
pub mod outbox;
pub mod parse_error;
pub mod render;
pub mod resend;
pub mod schedule;
pub mod secret;
pub mod smtp;
pub mod snapshot;
pub mod timezone;
pub mod unsubscribe;

/// At most `max` bytes of `s`, cut on a char boundary (for quotes in messages and stored details).
pub(crate) fn cut_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}
