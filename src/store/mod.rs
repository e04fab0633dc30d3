//! D1: the engine's own record of contacts, bookings, raw events and every email.
//! One file per table group; every query here is covered by an index in `migrations/`.

pub mod bookings;
pub mod campaigns;
pub mod checkout;
pub mod emails;
pub mod hotel_zones;
pub mod raw_events;
pub mod repairs;
pub mod schedule;
pub mod suppressions;

use wasm_bindgen::JsValue;

/// A bind value for a D1 statement.
pub(crate) fn s(v: &str) -> JsValue {
    JsValue::from_str(v)
}

/// An optional text bind value (`NULL` when absent).
pub(crate) fn opt(v: Option<&str>) -> JsValue {
    v.map(JsValue::from_str).unwrap_or(JsValue::NULL)
}

/// An integer bind value (D1 numbers are f64; our integers stay below 2^53).
pub(crate) fn n(v: i64) -> JsValue {
    JsValue::from_f64(v as f64)
}

/// Rows changed by a write, from D1's result metadata.
pub(crate) fn changes(r: &worker::D1Result) -> usize {
    r.meta().ok().flatten().and_then(|m| m.changes).unwrap_or(0)
}

/// D1 rows a statement read (`meta.rows_read`, 0 when absent).
pub(crate) fn rows_read(r: &worker::D1Result) -> u64 {
    r.meta()
        .ok()
        .flatten()
        .and_then(|m| m.rows_read)
        .map_or(0, |n| n as u64)
}
