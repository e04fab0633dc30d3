//! Path-tracking, tolerant reads of supplier JSON for the adapters.
//!
//! An [`At`] is a (possibly absent) value plus the JSON path that led to it, e.g.
//! `data.object.slices[0].segments[0].departing_at`, so every [`ParseError`] names the field at
//! fault. `null` counts as absent. Optional reads never fail (a wrong type reads as absent);
//! required reads fail with `Missing(path)` when absent and `Invalid { path, … }` when present but
//! unusable.

use super::ParseError;
use crate::domain::event::{BookingRef, EmailAddress, PersonName};
use chrono::{DateTime, NaiveDate, NaiveDateTime};
use serde_json::Value;

/// A value (or its absence) at a JSON path.
#[derive(Debug, Clone)]
pub(crate) struct At<'a> {
    value: Option<&'a Value>,
    path: String,
}

impl<'a> At<'a> {
    /// The document `value` known by `path` (empty for the body's root).
    pub(crate) fn root(value: &'a Value, path: &str) -> Self {
        Self {
            value: Some(value).filter(|v| !v.is_null()),
            path: path.to_string(),
        }
    }

    /// The path of a field below this node (without reading it).
    pub(crate) fn path_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The raw value, if present and not `null`.
    pub(crate) fn value(&self) -> Option<&'a Value> {
        self.value
    }

    pub(crate) fn is_present(&self) -> bool {
        self.value.is_some()
    }

    /// Object member `key` (absent when this is not an object).
    pub(crate) fn get(&self, key: &str) -> At<'a> {
        At {
            value: self.value.and_then(|v| v.get(key)).filter(|v| !v.is_null()),
            path: self.path_of(key),
        }
    }

    /// Array element `i`.
    pub(crate) fn index(&self, i: usize) -> At<'a> {
        At {
            value: self.value.and_then(|v| v.get(i)).filter(|v| !v.is_null()),
            path: format!("{}[{i}]", self.path),
        }
    }

    /// The first present member among `keys` (tolerant aliases); absent reads name the first key.
    pub(crate) fn get_any(&self, keys: &[&str]) -> At<'a> {
        keys.iter()
            .map(|k| self.get(k))
            .find(At::is_present)
            .unwrap_or_else(|| self.get(keys[0]))
    }

    pub(crate) fn invalid(&self, reason: impl Into<String>) -> ParseError {
        ParseError::Invalid {
            field: self.path.clone(),
            reason: reason.into(),
        }
    }

    pub(crate) fn missing(&self) -> ParseError {
        ParseError::Missing(self.path.clone())
    }

    /// Trimmed non-empty text, or `None` (absent, blank or not a string).
    pub(crate) fn str_opt(&self) -> Option<String> {
        self.value
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }

    /// Trimmed non-empty text.
    pub(crate) fn str_req(&self) -> Result<String, ParseError> {
        match self.value {
            None => Err(self.missing()),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Some(Value::String(_)) => Err(self.invalid("is empty")),
            Some(_) => Err(self.invalid("must be a non-empty string")),
        }
    }

    /// The elements of a required array.
    pub(crate) fn array_req(&self) -> Result<Vec<At<'a>>, ParseError> {
        match self.value {
            None => Err(self.missing()),
            Some(Value::Array(items)) => Ok((0..items.len()).map(|i| self.index(i)).collect()),
            Some(_) => Err(self.invalid("must be an array")),
        }
    }

    /// The elements of an optional array (empty when absent or not an array).
    pub(crate) fn array_opt(&self) -> Vec<At<'a>> {
        match self.value {
            Some(Value::Array(items)) => (0..items.len()).map(|i| self.index(i)).collect(),
            _ => Vec::new(),
        }
    }

    /// A boolean when present and boolean.
    pub(crate) fn bool_opt(&self) -> Option<bool> {
        self.value.and_then(Value::as_bool)
    }

    /// A non-negative integer when present and one (also from a digit string).
    pub(crate) fn u64_opt(&self) -> Option<u64> {
        match self.value? {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// A decimal amount as text (number or numeric string); see [`number_text`].
    pub(crate) fn amount_opt(&self) -> Option<String> {
        self.value.and_then(number_text)
    }

    /// A calendar date `YYYY-MM-DD`.
    pub(crate) fn date_req(&self) -> Result<NaiveDate, ParseError> {
        let s = self.str_req()?;
        NaiveDate::parse_from_str(&s, "%Y-%m-%d")
            .map_err(|_| self.invalid(format!("must be a date YYYY-MM-DD, got {s:?}")))
    }

    /// A date when present; present but not `YYYY-MM-DD` is an error.
    pub(crate) fn date_opt(&self) -> Result<Option<NaiveDate>, ParseError> {
        if self.is_present() {
            self.date_req().map(Some)
        } else {
            Ok(None)
        }
    }

    /// A local wall-clock time `YYYY-MM-DDTHH:MM[:SS[.fff]]` (no offset, as Duffel and liteAPI
    /// send them). Should a supplier add an offset, the wall-clock part at that offset is kept.
    pub(crate) fn local_datetime_req(&self) -> Result<NaiveDateTime, ParseError> {
        let s = self.str_req()?;
        parse_local_datetime(&s).ok_or_else(|| {
            self.invalid(format!(
                "must be a local date-time YYYY-MM-DDTHH:MM:SS, got {s:?}"
            ))
        })
    }

    pub(crate) fn booking_ref_req(&self) -> Result<BookingRef, ParseError> {
        BookingRef::parse(&self.str_req()?).map_err(|e| self.invalid(e.to_string()))
    }

    /// An email address; present but not a string is `Invalid`, not `Missing`.
    pub(crate) fn email_req(&self) -> Result<EmailAddress, ParseError> {
        match self.value {
            None => Err(self.missing()),
            Some(Value::String(s)) => {
                EmailAddress::parse(s).map_err(|e| self.invalid(e.to_string()))
            }
            Some(_) => Err(self.invalid("must be a string")),
        }
    }

    /// A person from two name members (missing parts read as empty).
    pub(crate) fn person(&self, first: &str, last: &str) -> PersonName {
        PersonName {
            first_name: self.get(first).str_opt().unwrap_or_default(),
            last_name: self.get(last).str_opt().unwrap_or_default(),
        }
    }
}

/// Parses a local wall-clock date-time; see [`At::local_datetime_req`].
pub(crate) fn parse_local_datetime(s: &str) -> Option<NaiveDateTime> {
    let s = s.trim();
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
        .or_else(|| {
            DateTime::parse_from_rfc3339(s)
                .ok()
                .map(|d| d.naive_local())
        })
}

/// A JSON amount as decimal text: strings are kept as written (trimmed); numbers are printed and a
/// float's redundant zero fraction dropped (`180.0` → `"180"`, `212.4` → `"212.4"`).
pub(crate) fn number_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => {
            let s = n.to_string();
            if s.contains('.') && !s.contains(['e', 'E']) {
                Some(s.trim_end_matches('0').trim_end_matches('.').to_string())
            } else {
                Some(s)
            }
        }
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    }
}

/// `true` when a decimal text has a non-zero digit (`"0.00"` → false, `"12.5"` → true).
pub(crate) fn is_nonzero_amount(amount: &str) -> bool {
    amount.chars().any(|c| ('1'..='9').contains(&c))
}
