//! Test support, not used by the Worker: a configuration read from a few name/value pairs.

use super::Config;
use std::collections::HashMap;

/// What a production configuration must set (owner, sender, public base URL), as name/value pairs.
const PRODUCTION_BASE: [(&str, &str); 3] = [
    ("OWNER_EMAIL", "owner@example.com"),
    ("SENDER_EMAIL", "bookings@mail.example.com"),
    ("PUBLIC_BASE_URL", "https://engine.example.com"),
];

/// The configuration of a production Worker whose variables are [`PRODUCTION_BASE`] and then
/// `pairs` (name, value; a pair overrides a base variable of the same name). Panics when it does
/// not parse.
#[doc(hidden)]
pub fn production(pairs: &[(&str, &str)]) -> Config {
    let map: HashMap<&str, &str> = PRODUCTION_BASE.iter().chain(pairs).copied().collect();
    Config::parse(|k| map.get(k).map(|v| v.to_string())).unwrap()
}
