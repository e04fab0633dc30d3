//! One-click unsubscribe (RFC 8058, <https://www.rfc-editor.org/rfc/rfc8058>) at `/unsubscribe/<token>`, the URL in
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
//! with `cache-control: no-store`, `referrer-policy: same-origin`, a Content-Security-Policy
//! (`crate::platform::http::PAGE_CSP`) and `x-robots-tag: noindex`. Never a redirect (RFC 8058
//! forbids one), never a cookie.

use super::config;
use super::webhooks::read_limited;
use super::{Answer, AppError};
use crate::config::DB_BINDING;
use crate::domain::marketing::Suppression;
use crate::domain::marketing_email;
use crate::domain::render::{unsubscribe_confirm_page, unsubscribe_result_page};
use crate::domain::unsubscribe::{self, UnsubscribeClaims};
use crate::platform::{now_ms, Page};
use crate::store::suppressions;
use worker::{Env, Request};

/// Largest accepted POST body, bytes (the one-click body is 26 bytes; multipart a few hundred).
pub const MAX_BODY_BYTES: usize = 16_384;

/// `source` recorded with the suppression.
pub const SOURCE: &str = "unsubscribe_link";

/// Brand shown when the configuration cannot be read.
const FALLBACK_BRAND: &str = "";

/// A result page (`title`, `message`) under `brand`.
fn page(status: u16, title: &str, message: &str, brand: &str) -> Page {
    Page::new(status, unsubscribe_result_page(title, message, brand))
}

/// The 503 page for a failure on our side (logged with `why`); nothing was changed.
fn unavailable(brand: &str, why: &str) -> AppError {
    worker::console_error!("unsubscribe: {why}");
    page(
        503,
        "Please try again later",
        "Your request could not be handled right now. Nothing was changed.",
        brand,
    )
    .into()
}

/// Checks the token; an [`AppError::Page`] is the page to answer instead. Returns the claims and
/// the brand.
fn check(env: &Env, token: &str) -> Result<(UnsubscribeClaims, String), AppError> {
    let cfg = config(env).map_err(|e| unavailable(FALLBACK_BRAND, &e.to_string()))?;
    let brand = cfg.branding.brand.clone();
    if cfg.unsubscribe_signing_key.is_empty() {
        return Err(unavailable(
            &brand,
            "UNSUBSCRIBE_SIGNING_KEY is not set: unsubscribe links cannot be checked",
        ));
    }
    let Ok(claims) = unsubscribe::verify(token, cfg.unsubscribe_signing_key.as_bytes()) else {
        return Err(page(
            400,
            "This unsubscribe link is not valid",
            "It may have been cut short or altered. Open the link from the email again, or copy all of it. Nothing was changed.",
            &brand,
        )
        .into());
    };
    if claims.list != marketing_email::LIST {
        return Err(page(
            400,
            "This unsubscribe link is not valid",
            "It is not a link to unsubscribe from marketing emails. Nothing was changed.",
            &brand,
        )
        .into());
    }
    Ok((claims, brand))
}

/// `GET /unsubscribe/<token>`: the confirmation page; changes nothing.
pub async fn confirm(req: Request, env: &Env, token: &str) -> Answer {
    let (claims, brand) = check(env, token)?;
    // A relative action (the path only): the page never trusts the request's Host header.
    let post_url = req.path();
    Page::new(
        200,
        unsubscribe_confirm_page(&claims.email, &post_url, &brand),
    )
    .answer()
}

/// `POST /unsubscribe/<token>`: the one-click unsubscribe.
pub async fn unsubscribe(mut req: Request, env: &Env, token: &str) -> Answer {
    let (claims, brand) = check(env, token)?;
    let body = match read_limited(&mut req, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(AppError::TooLarge { .. }) => Vec::new(),
        Err(e) => return Err(unavailable(&brand, &e.to_string())),
    };
    let one_click = std::str::from_utf8(&body).is_ok_and(unsubscribe::is_one_click_body);
    if !one_click {
        return page(
            400,
            "Nothing was changed",
            "An unsubscribe request must be a POST with the form body List-Unsubscribe=One-Click (RFC 8058). Use the button on the unsubscribe page.",
            &brand,
        )
        .answer();
    }
    let db = env
        .d1(DB_BINDING)
        .map_err(|e| unavailable(&brand, &e.to_string()))?;
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
        return Err(unavailable(
            &brand,
            &format!("recording the suppression failed: {e}"),
        ));
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
    .answer()
}
