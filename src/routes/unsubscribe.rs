//! One-click unsubscribe (RFC 8058; research/formats.md §6) at `/unsubscribe/<token>`, the URL in
//! every marketing email's `List-Unsubscribe` header and visible link.
//!
//! - `GET`: a confirmation page naming the address, saying that only marketing email stops
//!   (booking emails still come), with a form that POSTs `List-Unsubscribe=One-Click` to the same
//!   URL. It changes nothing: mail scanners pre-fetch links.
//! - `POST`: checks the token ([`unsubscribe::verify`], list `marketing`) and the one-click body
//!   ([`unsubscribe::is_one_click_body`]), records `marketing_unsubscribed` in D1 `suppressions`
//!   (source `unsubscribe_link`; a stronger reason on record is never downgraded), and answers 200
//!   with a short confirmation. Idempotent: a second POST is 200 too.
//!
//! Every answer is an HTML page (also the failures: 400 for an invalid or foreign token or a body
//! that is not the one-click request, 503 when the signing key is missing or storage fails), sent
//! with `cache-control: no-store`, `referrer-policy: no-referrer` and `x-robots-tag: noindex`. Never
//! a redirect (RFC 8058 forbids one), never a cookie.

use super::config;
use super::webhooks::read_limited;
use super::ApiError;
use crate::config::DB_BINDING;
use crate::domain::marketing::Suppression;
use crate::domain::marketing_email::{self, unsubscribe_confirm_page, unsubscribe_result_page};
use crate::domain::unsubscribe::{self, UnsubscribeClaims};
use crate::platform::now_ms;
use crate::store::suppressions;
use worker::{Env, Request, Response};

/// Largest accepted POST body, bytes (the one-click body is 26 bytes; multipart a few hundred).
pub const MAX_BODY_BYTES: usize = 16_384;

/// `source` recorded with the suppression.
pub const SOURCE: &str = "unsubscribe_link";

/// Brand shown when the configuration cannot be read.
const FALLBACK_BRAND: &str = "";

fn html(status: u16, body: String) -> Result<Response, ApiError> {
    let mut resp = Response::from_html(body)?.with_status(status);
    let h = resp.headers_mut();
    h.set("cache-control", "no-store")?;
    h.set("referrer-policy", "no-referrer")?;
    h.set("x-robots-tag", "noindex")?;
    Ok(resp)
}

fn page(status: u16, title: &str, message: &str, brand: &str) -> Result<Response, ApiError> {
    html(status, unsubscribe_result_page(title, message, brand))
}

fn unavailable(brand: &str, why: &str) -> Result<Response, ApiError> {
    worker::console_error!("unsubscribe: {why}");
    page(
        503,
        "Please try again later",
        "Your request could not be handled right now. Nothing was changed.",
        brand,
    )
}

/// Checks the token; `Err` is the page to answer instead. Returns the claims and the brand.
fn check(
    env: &Env,
    token: &str,
) -> Result<(UnsubscribeClaims, String), Result<Response, ApiError>> {
    let cfg = match config(env) {
        Ok(c) => c,
        Err(e) => return Err(unavailable(FALLBACK_BRAND, &e.to_string())),
    };
    let brand = cfg.branding.brand.clone();
    if cfg.unsubscribe_signing_key.is_empty() {
        return Err(unavailable(
            &brand,
            "UNSUBSCRIBE_SIGNING_KEY is not set: unsubscribe links cannot be checked",
        ));
    }
    let claims = match unsubscribe::verify(token, cfg.unsubscribe_signing_key.as_bytes()) {
        Ok(c) => c,
        Err(_) => {
            return Err(page(
                400,
                "This unsubscribe link is not valid",
                "It may have been cut short or altered. Open the link from the email again, or copy all of it. Nothing was changed.",
                &brand,
            ))
        }
    };
    if claims.list != marketing_email::LIST {
        return Err(page(
            400,
            "This unsubscribe link is not valid",
            "It is not a link to unsubscribe from marketing emails. Nothing was changed.",
            &brand,
        ));
    }
    Ok((claims, brand))
}

/// `GET /unsubscribe/<token>`: the confirmation page; changes nothing.
pub async fn confirm(req: Request, env: &Env, token: &str) -> Result<Response, ApiError> {
    let (claims, brand) = match check(env, token) {
        Ok(ok) => ok,
        Err(resp) => return resp,
    };
    // A relative action (the path only): the page never trusts the request's Host header.
    let post_url = req.path();
    html(
        200,
        unsubscribe_confirm_page(&claims.email, &post_url, &brand),
    )
}

/// `POST /unsubscribe/<token>`: the one-click unsubscribe.
pub async fn unsubscribe(mut req: Request, env: &Env, token: &str) -> Result<Response, ApiError> {
    let (claims, brand) = match check(env, token) {
        Ok(ok) => ok,
        Err(resp) => return resp,
    };
    let body = match read_limited(&mut req, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(ApiError::TooLarge { .. }) => Vec::new(),
        Err(e) => return unavailable(&brand, &e.to_string()),
    };
    let one_click = std::str::from_utf8(&body).is_ok_and(unsubscribe::is_one_click_body);
    if !one_click {
        return page(
            400,
            "Nothing was changed",
            "An unsubscribe request must be a POST with the form body List-Unsubscribe=One-Click (RFC 8058). Use the button on the unsubscribe page.",
            &brand,
        );
    }
    let db = match env.d1(DB_BINDING) {
        Ok(db) => db,
        Err(e) => return unavailable(&brand, &e.to_string()),
    };
    if let Err(e) = suppressions::record(
        &db,
        &claims.email,
        Suppression::MarketingUnsubscribed,
        SOURCE,
        Some("one-click POST"),
        now_ms(),
    )
    .await
    {
        return unavailable(&brand, &format!("recording the suppression failed: {e}"));
    }
    let from = if brand.is_empty() {
        String::new()
    } else {
        format!(" from {brand}")
    };
    page(
        200,
        "You are unsubscribed",
        &format!(
            "{} will no longer receive marketing emails{from}. Emails about your bookings will still reach you.",
            claims.email
        ),
        &brand,
    )
}
