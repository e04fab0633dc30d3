//! Supplier read-APIs (shell): the HTTP calls the journeys make to a supplier, as opposed to the
//! webhooks a supplier makes to us. Each client builds the request (base URL from the
//! configuration, credentials, API version header), checks the status and hands the body to the
//! pure parser in [`crate::sources`], so no supplier format is read outside the adapters.
//!
//! - [`liteapi::hotel_location`]: liteAPI `GET /data/hotel` → the hotel's coordinates;
//! - [`duffel::airline_initiated_changes`]: Duffel `GET /air/airline_initiated_changes` → the
//!   order's schedule changes;
//! - [`stripe::create_refund`] / [`stripe::list_refunds`]: Stripe refunds (the compensation's
//!   one write call).

pub mod duffel;
pub mod liteapi;
pub mod stripe;

use crate::sources::ParseError;
use worker::{Fetch, Headers, Method, Request, RequestInit};

/// Why a supplier read-API call gave no usable answer. The journeys log it (and the hotel lookup
/// caches its text), then fall back or retry the step.
#[derive(Debug, thiserror::Error)]
pub enum SupplierError {
    /// The configured base URL does not make a valid request URL.
    #[error("{api} URL is invalid: {reason}")]
    Url { api: &'static str, reason: String },
    /// The request could not be made or its body not read (the runtime's message).
    #[error("{api} could not be reached: {reason}")]
    Runtime { api: &'static str, reason: String },
    /// The API answered with a status other than 200.
    #[error("{api} answered {status}")]
    Status { api: &'static str, status: u16 },
    /// The answer's body is not the documented shape.
    #[error("{api} answer is not usable: {error}")]
    Parse {
        api: &'static str,
        error: ParseError,
    },
}

/// `GET url` with `headers` (name, value); the body of a 200 answer, else the error naming `api`.
async fn get(
    api: &'static str,
    url: &url::Url,
    headers: &[(&str, &str)],
) -> Result<Vec<u8>, SupplierError> {
    let runtime = |e: worker::Error| SupplierError::Runtime {
        api,
        reason: e.to_string(),
    };
    let h = Headers::new();
    for (name, value) in headers {
        h.set(name, value).map_err(runtime)?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(h);
    let req = Request::new_with_init(url.as_str(), &init).map_err(runtime)?;
    let mut resp = Fetch::Request(req).send().await.map_err(runtime)?;
    if resp.status_code() != 200 {
        return Err(SupplierError::Status {
            api,
            status: resp.status_code(),
        });
    }
    resp.bytes().await.map_err(runtime)
}

/// `base` (a configured base URL without a trailing `/`) followed by `path`, with the query pairs
/// form-encoded.
fn endpoint(
    api: &'static str,
    base: &str,
    path: &str,
    query: &[(&str, &str)],
) -> Result<url::Url, SupplierError> {
    let mut url = url::Url::parse(&format!("{base}{path}")).map_err(|e| SupplierError::Url {
        api,
        reason: e.to_string(),
    })?;
    url.query_pairs_mut().extend_pairs(query);
    Ok(url)
}
