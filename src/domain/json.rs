//! Typed values from a `serde_json::Value` by way of its text.
//!
//! `serde_json::from_value` and `T::deserialize(&value)` compile a second deserializer (the one
//! that walks a `Value`) into the Worker for every type reachable from `T`, next to the one for
//! JSON text (`serde_json::from_str`) that the same types already have, because they also arrive
//! as text (webhook bodies, Workflow parameters, outbox requests). Going through the text keeps
//! one instantiation per type: measured on this crate, the wasm upload is ~12 KiB smaller gzipped
//! (`npm run bench`, section "wasm size"). The cost is one serialisation per call, on values of a
//! few KB at most (a normalised supplier event, a template's data), well under a millisecond.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::domain::parse_error::ParseError;

/// A request or answer body as JSON: UTF-8 text, then `serde_json::from_str`. Every body is read
/// as text for the same reason as above: `serde_json::from_slice` would compile a second reader
/// of every `Value`.
///
/// # Errors
/// [`ParseError::Json`] naming the problem: the bytes are not UTF-8 (with the offset of the first
/// bad byte), or the text is not JSON (serde_json's message, with its line and column).
pub fn parse_body(body: &[u8]) -> Result<Value, ParseError> {
    from_body(body).map_err(ParseError::Json)
}

/// A `T` from a body's bytes by way of its text (see [`parse_body`]).
///
/// # Errors
/// The message of what is wrong: `not UTF-8 text (…)` with the offset of the first bad byte, or
/// serde_json's message (syntax or shape) with its line and column.
pub fn from_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, String> {
    let text = std::str::from_utf8(body).map_err(|e| format!("not UTF-8 text ({e})"))?;
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// `T` from `value`, as `serde_json::from_value(value.clone())` would give it.
///
/// # Errors
/// The value is not a `T` (a missing field, a wrong type, an unknown enum variant); the error's
/// text names the problem without a position ([`message`]).
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, serde_json::Error> {
    serde_json::from_str(&value.to_string())
}

/// The text of a serde_json error without its ` at line L column C` suffix: the position is one in
/// the engine's own re-serialisation of a value, not in anything the sender wrote.
pub fn message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) if e.line() > 0 => text[..at].to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Shape {
        name: String,
        count: u32,
        #[serde(default)]
        tags: Vec<String>,
    }

    #[test]
    fn bodies_parse_or_name_the_problem() {
        assert_eq!(
            parse_body(br#"{"a": [1, "\u00e9"]}"#).unwrap(),
            serde_json::json!({"a": [1, "é"]})
        );
        let e = parse_body(b"{\"a\": \"\xff\"}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "body is not valid JSON: not UTF-8 text (invalid utf-8 sequence of 1 bytes from index 7)"
        );
        let e = parse_body(b"{\"a\": ").unwrap_err();
        assert_eq!(
            e.to_string(),
            "body is not valid JSON: EOF while parsing a value at line 1 column 6"
        );
    }

    #[test]
    fn same_value_as_from_value() {
        let v = serde_json::json!({"name": "a \"quoted\" é", "count": 3, "tags": ["x"]});
        let direct: Shape = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(from_value::<Shape>(&v).unwrap(), direct);
    }

    #[test]
    fn errors_name_the_problem_without_a_position() {
        let v = serde_json::json!({"name": "a"});
        let e = from_value::<Shape>(&v).unwrap_err();
        assert_eq!(message(&e), "missing field `count`");
        let direct = serde_json::from_value::<Shape>(v).unwrap_err();
        assert_eq!(message(&e), direct.to_string());

        let e = from_value::<Shape>(&serde_json::json!({"name": 1, "count": 1})).unwrap_err();
        assert_eq!(message(&e), "invalid type: integer `1`, expected a string");
    }
}
