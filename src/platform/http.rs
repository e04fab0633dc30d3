//! The HTTP edge's answers in one place: [`AppError`], the one error every route returns, turned
//! into a response once (at the Worker's `fetch` boundary in `lib.rs`), and [`Page`], the one way
//! an HTML page (owner actions, unsubscribe) is answered, with its security headers.

use super::ErrorBody;
use crate::config::ConfigError;
use crate::domain::basics::parse_error::ParseError;
use worker::Response;

/// An error a route answers with. [`AppError::into_response`] maps it to its status and the
/// [`ErrorBody`] JSON shape (or, for [`AppError::Page`], to the HTML page it carries).
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// 401 `unauthorized`: a missing or wrong credential (webhook signature, operator token).
    #[error("{0}")]
    Unauthorized(String),
    /// 400 `invalid_payload`, naming the field at fault (a JSON path) when there is one.
    #[error("{message}")]
    BadRequest {
        message: String,
        field: Option<String>,
    },
    /// 413 `payload_too_large`; sizes in bytes.
    #[error("body is {size} bytes; the limit is {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    /// 404 `not_found`.
    #[error("not found")]
    NotFound,
    /// 405 `method_not_allowed`: the path exists; the method does not. Carries the allowed methods
    /// for the `Allow` header (RFC 9110 §15.5.6), e.g. `"POST"`.
    #[error("method not allowed; this path accepts {0}")]
    MethodNotAllowed(&'static str),
    /// 409 `conflict`: the request is valid but the thing it names is not in a state that allows
    /// it (e.g. redriving a delivered webhook).
    #[error("{0}")]
    Conflict(String),
    /// 500 `misconfigured`: a configuration variable is missing or malformed (the message names it).
    #[error("engine misconfigured: {0}")]
    Config(#[from] ConfigError),
    /// 503 `unavailable`: storage or platform failure; the sender should retry.
    #[error("temporary failure: {0}")]
    Unavailable(String),
    /// An HTML page answers instead of JSON (a refused or failed owner action or unsubscribe).
    #[error("HTML page with status {}", .0.status)]
    Page(Page),
}

impl From<worker::Error> for AppError {
    fn from(e: worker::Error) -> Self {
        AppError::Unavailable(e.to_string())
    }
}

/// A body that does not parse is a 400 naming the field.
impl From<ParseError> for AppError {
    fn from(e: ParseError) -> Self {
        AppError::BadRequest {
            message: e.to_string(),
            field: e.field().map(str::to_string),
        }
    }
}

impl From<Page> for AppError {
    fn from(page: Page) -> Self {
        AppError::Page(page)
    }
}

impl AppError {
    /// 401 with `e`'s message (for `map_err` on a verifier's error).
    pub fn unauthorized(e: impl std::fmt::Display) -> Self {
        AppError::Unauthorized(e.to_string())
    }

    /// 503 with `e`'s message (for `map_err` on a storage or platform failure).
    pub fn unavailable(e: impl std::fmt::Display) -> Self {
        AppError::Unavailable(e.to_string())
    }

    /// The response for this error: its status with an [`ErrorBody`] (`Allow` on a 405), or the
    /// page it carries. 5xx errors are logged. The only place errors become responses.
    pub fn into_response(self) -> worker::Result<Response> {
        let error = match self {
            AppError::Page(page) => return page.into_response(),
            other => other,
        };
        let (status, code) = error.status_and_code();
        if status >= 500 {
            worker::console_error!("{}: {}", code, error);
        }
        let mut body = ErrorBody::new(code, error.to_string());
        if let AppError::BadRequest { field, .. } = &error {
            body.field = field.clone();
        }
        let response = body.into_response(status)?;
        if let AppError::MethodNotAllowed(allow) = &error {
            response.headers().set("allow", allow)?;
        }
        Ok(response)
    }

    /// The HTTP status and the `error` code of this error (a page's own status, code `page`).
    pub fn status_and_code(&self) -> (u16, &'static str) {
        match self {
            AppError::Page(p) => (p.status, "page"),
            AppError::Unauthorized(_) => (401, "unauthorized"),
            AppError::BadRequest { .. } => (400, "invalid_payload"),
            AppError::TooLarge { .. } => (413, "payload_too_large"),
            AppError::NotFound => (404, "not_found"),
            AppError::MethodNotAllowed(_) => (405, "method_not_allowed"),
            AppError::Conflict(_) => (409, "conflict"),
            AppError::Config(_) => (500, "misconfigured"),
            AppError::Unavailable(_) => (503, "unavailable"),
        }
    }
}

/// The Content-Security-Policy of every page the engine serves unless it sets its own: no script,
/// no remote load, forms only to this site, never framed.
pub const PAGE_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// An HTML page of the engine (owner action and unsubscribe pages): always sent with
/// `cache-control: no-store` (one-time links must not be cached), `referrer-policy: same-origin`
/// (the token in the URL never leaves this site, while the pages' own form posts still carry a
/// real `Origin`: under `no-referrer` Chromium sends `Origin: null`, which the action links
/// refuse), `x-robots-tag: noindex`, `x-content-type-options: nosniff` and the [`PAGE_CSP`]
/// Content-Security-Policy.
#[derive(Debug)]
pub struct Page {
    /// HTTP status.
    pub status: u16,
    /// The rendered HTML document.
    pub html: String,
    /// Further headers (`location` of a redirect, `set-cookie`, `retry-after`, the admin's
    /// `content-security-policy`), set after the security headers.
    pub headers: Vec<(&'static str, String)>,
}

impl Page {
    pub fn new(status: u16, html: String) -> Self {
        Self {
            status,
            html,
            headers: Vec::new(),
        }
    }

    /// The page with one more header.
    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// A `303 See Other` to `location` (a path on this site), with a tiny HTML body for clients
    /// that do not follow it.
    pub fn see_other(location: &str) -> Self {
        let escaped = location
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;");
        Page::new(
            303,
            format!("<!doctype html><title>See other</title><a href=\"{escaped}\">Continue</a>"),
        )
        .with_header("location", location)
    }

    /// The page as a response with its security headers.
    pub fn into_response(self) -> worker::Result<Response> {
        let mut resp = Response::from_html(self.html)?.with_status(self.status);
        let h = resp.headers_mut();
        h.set("cache-control", "no-store")?;
        h.set("referrer-policy", "same-origin")?;
        h.set("x-robots-tag", "noindex")?;
        // Nothing on a page of the engine runs or loads from elsewhere, and no other site may
        // frame it (the owner action and unsubscribe pages; the admin sets stricter ones of its
        // own through `headers`, which replace these).
        h.set("content-security-policy", PAGE_CSP)?;
        h.set("x-content-type-options", "nosniff")?;
        for (name, value) in &self.headers {
            if *name == "set-cookie" {
                h.append(name, value)?;
            } else {
                h.set(name, value)?;
            }
        }
        Ok(resp)
    }

    /// [`Page::into_response`] for a route's `Result`.
    pub fn answer(self) -> Result<Response, AppError> {
        Ok(self.into_response()?)
    }
}
