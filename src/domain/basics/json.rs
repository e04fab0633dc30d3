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

use crate::domain::basics::parse_error::ParseError;

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

/// Reads an internally tagged enum, `{"<tag>": "<variant>", …the variant's fields}`, as serde's
/// `#[serde(tag = "…")]` would, but without serde's buffering of such enums: that derive reads the
/// object into its private `Content` tree first and then compiles a third deserializer (one that
/// walks `Content`) for every type reachable from every variant. Here the object is read as a
/// `Value`, its tag looked up, and `variant(tag, text)` parses the object's JSON text as that
/// variant's type with the `serde_json::from_str` every one of those types already has (see the
/// module docs; the tag field is one more field the variant ignores). `variant` answers `None`
/// for a tag it does not know.
///
/// # Errors
/// As serde's derive words them: not an object (`invalid type: …, expected internally tagged
/// enum`), ``missing field `<tag>` ``, a tag that is not a string (`expected variant
/// identifier`), ``unknown variant `x`,
/// expected one of …`` (`variants`), or the variant's own error without a position (a missing
/// field, a wrong type).
pub fn internally_tagged<'de, D, T>(
    deserializer: D,
    tag: &'static str,
    variants: &'static [&'static str],
    variant: impl FnOnce(&str, &str) -> Option<Result<T, serde_json::Error>>,
) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::de::{Deserialize, Error, Unexpected};
    fn unexpected(value: &Value) -> Unexpected<'_> {
        match value {
            Value::Null => Unexpected::Unit,
            Value::Bool(b) => Unexpected::Bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Unexpected::Unsigned(u),
                (_, Some(i), _) => Unexpected::Signed(i),
                (_, _, f) => Unexpected::Float(f.unwrap_or(f64::NAN)),
            },
            Value::String(s) => Unexpected::Str(s),
            Value::Array(_) => Unexpected::Seq,
            Value::Object(_) => Unexpected::Map,
        }
    }
    let value = Value::deserialize(deserializer)?;
    let Value::Object(object) = &value else {
        return Err(D::Error::invalid_type(
            unexpected(&value),
            &"internally tagged enum",
        ));
    };
    let name = match object.get(tag) {
        None => return Err(D::Error::missing_field(tag)),
        Some(Value::String(name)) => name,
        Some(other) => {
            return Err(D::Error::invalid_type(
                unexpected(other),
                &"variant identifier",
            ))
        }
    };
    match variant(name, &value.to_string()) {
        None => Err(D::Error::unknown_variant(name, variants)),
        Some(parsed) => parsed.map_err(|e| D::Error::custom(message(&e))),
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

    /// The derive's internally tagged enum, the reference for [`internally_tagged`].
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Derived {
        Shape(Shape),
        Point { x: i32, y: i32 },
        Empty,
    }

    /// The same enum read by [`internally_tagged`].
    #[derive(Debug, PartialEq)]
    struct Ours(Derived);

    impl<'de> serde::Deserialize<'de> for Ours {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            #[derive(Deserialize)]
            struct Point {
                x: i32,
                y: i32,
            }
            internally_tagged(d, "kind", &["shape", "point", "empty"], |kind, text| {
                Some(match kind {
                    "shape" => serde_json::from_str(text).map(Derived::Shape),
                    "point" => {
                        serde_json::from_str(text).map(|p: Point| Derived::Point { x: p.x, y: p.y })
                    }
                    "empty" => Ok(Derived::Empty),
                    _ => return None,
                })
            })
            .map(Ours)
        }
    }

    #[test]
    fn internally_tagged_reads_what_the_derive_reads() {
        for text in [
            r#"{"kind":"shape","name":"a","count":2,"tags":["t"]}"#,
            r#"{"name":"a","count":2,"kind":"shape"}"#,
            r#"{"y":2,"kind":"point","x":1}"#,
            r#"{"kind":"empty"}"#,
            r#"{"kind":"empty","extra":[1,{"a":null}]}"#,
        ] {
            let derived: Derived = serde_json::from_str(text).unwrap();
            let ours: Ours = serde_json::from_str(text).unwrap();
            assert_eq!(ours.0, derived, "{text}");
        }
    }

    #[test]
    fn internally_tagged_errors_read_like_the_derive() {
        let error = |text: &str| message(&serde_json::from_str::<Ours>(text).unwrap_err());
        let derived = |text: &str| message(&serde_json::from_str::<Derived>(text).unwrap_err());
        for text in [
            r#"{"name":"a","count":2}"#,
            r#"{"kind":"circle"}"#,
            r#"{"kind":"shape","name":"a"}"#,
            r#"{"kind":"point","x":"1","y":2}"#,
            r#"{"kind":7}"#,
            r#"{"kind":null}"#,
        ] {
            assert_eq!(error(text), derived(text), "{text}");
        }
        assert_eq!(
            error(r#"{"kind":"circle"}"#),
            "unknown variant `circle`, expected one of `shape`, `point`, `empty`"
        );
        assert_eq!(
            error(r#"{"kind":"shape","name":"a"}"#),
            "missing field `count`"
        );
        assert_eq!(
            error(r#""shape""#),
            "invalid type: string \"shape\", expected internally tagged enum"
        );
        assert_eq!(
            error("[1]"),
            "invalid type: sequence, expected internally tagged enum"
        );
        assert_eq!(
            error(r#"{"kind":7}"#),
            "invalid type: integer `7`, expected variant identifier"
        );
    }
}
