//! The one parse error of the core: why a body (a supplier webhook, an operator request, a
//! supplier read-API answer) could not be read. Every variant that can names the offending field
//! with its JSON path, so an HTTP 400 tells the sender exactly what to fix.
//!
//! It lives in the core (not in `sources`) because both the supplier adapters and the domain's own
//! request parsers (`operator`, `marketing_email`) use it; `crate::sources` re-exports it.

/// Why a body could not be parsed (→ HTTP 400; a webhook's raw body is still stored, marked
/// rejected). Every variant but `Json` and `NotAnObject` names the field with its JSON path
/// (e.g. `data.object.slices[0].segments[0].departing_at`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The body is not JSON at all (serde_json's message).
    #[error("body is not valid JSON: {0}")]
    Json(String),
    /// The body is JSON but not an object.
    #[error("body must be a JSON object")]
    NotAnObject,
    /// A required field is absent or `null`; carries its JSON path.
    #[error("missing required field `{0}`")]
    Missing(String),
    /// A field is present but unusable; carries its JSON path and why.
    #[error("field `{field}` is invalid: {reason}")]
    Invalid { field: String, reason: String },
}

impl ParseError {
    /// The JSON path of the field at fault, when there is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            ParseError::Missing(f) | ParseError::Invalid { field: f, .. } => Some(f),
            _ => None,
        }
    }
}
