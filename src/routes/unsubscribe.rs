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
use crate::domain::i18n::{Lang, Tr};
use crate::domain::marketing::campaign;
use crate::domain::marketing::unsubscribe::{self, UnsubscribeClaims};
use crate::domain::marketing::Suppression;
use crate::domain::render::{unsubscribe_confirm_page_in, unsubscribe_result_page_in};
use crate::platform::{now_ms, Page};
use crate::store::suppressions;
use worker::{Env, Request};

/// Largest accepted POST body, bytes (the one-click body is 26 bytes; multipart a few hundred).
pub const MAX_BODY_BYTES: usize = 16_384;

/// `source` recorded with the suppression.
pub const SOURCE: &str = "unsubscribe_link";

/// Brand shown when the configuration cannot be read.
const FALLBACK_BRAND: &str = "";

/// The language of the unsubscribe pages: the visitor's browser's (`Accept-Language`), else
/// `DEFAULT_GUEST_LOCALE` (`fallback`).
fn page_language(req: &Request, fallback: Lang) -> Tr {
    let asked = req
        .headers()
        .get("accept-language")
        .ok()
        .flatten()
        .and_then(|h| Lang::from_accept_language(&h));
    Tr::of(asked.unwrap_or(fallback))
}

/// A result page (the messages `title_id`, `message_id`) under `brand`, in `tr`'s language.
fn page(status: u16, tr: Tr, title_id: &str, message: &str, brand: &str) -> Page {
    Page::new(
        status,
        unsubscribe_result_page_in(&tr.t(title_id), message, brand, tr.lang()),
    )
}

/// The 503 page for a failure on our side (logged with `why`); nothing was changed.
fn unavailable(tr: Tr, brand: &str, why: &str) -> AppError {
    worker::console_error!("unsubscribe: {why}");
    page(
        503,
        tr,
        "unsubscribe-retry-title",
        &tr.t("unsubscribe-retry"),
        brand,
    )
    .into()
}

/// Checks the token; an [`AppError::Page`] is the page to answer instead. Returns the claims, the
/// brand and the pages' language.
fn check(
    req: &Request,
    env: &Env,
    token: &str,
) -> Result<(UnsubscribeClaims, String, Tr), AppError> {
    let cfg = config(env).map_err(|e| {
        unavailable(
            page_language(req, Lang::default()),
            FALLBACK_BRAND,
            &e.to_string(),
        )
    })?;
    let tr = page_language(req, cfg.default_guest_locale);
    let brand = cfg.branding.brand.clone();
    if cfg.unsubscribe_signing_key.is_empty() {
        return Err(unavailable(
            tr,
            &brand,
            "UNSUBSCRIBE_SIGNING_KEY is not set: unsubscribe links cannot be checked",
        ));
    }
    let Ok(claims) = unsubscribe::verify(token, cfg.unsubscribe_signing_key.as_bytes()) else {
        return Err(page(
            400,
            tr,
            "unsubscribe-invalid-title",
            &tr.t("unsubscribe-invalid-cut"),
            &brand,
        )
        .into());
    };
    if claims.list != campaign::LIST {
        return Err(page(
            400,
            tr,
            "unsubscribe-invalid-title",
            &tr.t("unsubscribe-invalid-list"),
            &brand,
        )
        .into());
    }
    Ok((claims, brand, tr))
}

/// `GET /unsubscribe/<token>`: the confirmation page; changes nothing.
pub async fn confirm(req: Request, env: &Env, token: &str) -> Answer {
    let (claims, brand, tr) = check(&req, env, token)?;
    // A relative action (the path only): the page never trusts the request's Host header.
    let post_url = req.path();
    Page::new(
        200,
        unsubscribe_confirm_page_in(&claims.email, &post_url, &brand, tr),
    )
    .answer()
}

/// `POST /unsubscribe/<token>`: the one-click unsubscribe.
pub async fn unsubscribe(mut req: Request, env: &Env, token: &str) -> Answer {
    let (claims, brand, tr) = check(&req, env, token)?;
    let body = match read_limited(&mut req, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(AppError::TooLarge { .. }) => Vec::new(),
        Err(e) => return Err(unavailable(tr, &brand, &e.to_string())),
    };
    let one_click = std::str::from_utf8(&body).is_ok_and(unsubscribe::is_one_click_body);
    if !one_click {
        return page(
            400,
            tr,
            "unsubscribe-post-title",
            &tr.t("unsubscribe-post-only"),
            &brand,
        )
        .answer();
    }
    let db = env
        .d1(DB_BINDING)
        .map_err(|e| unavailable(tr, &brand, &e.to_string()))?;
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
            tr,
            &brand,
            &format!("recording the suppression failed: {e}"),
        ));
    }
    let done = if brand.is_empty() {
        tr.t1("unsubscribe-done", "email", claims.email.as_str())
    } else {
        tr.t2(
            "unsubscribe-done-brand",
            "email",
            claims.email.as_str(),
            "brand",
            brand.as_str(),
        )
    };
    page(200, tr, "unsubscribe-done-title", &done, &brand).answer()
}
