//! The owner's admin: server-rendered HTML pages under `/admin/…`, usable on a phone and without
//! JavaScript, behind a password sign-in with an exact failed-login limit (see
//! [`crate::domain::admin`]).
//!
//! - `GET /admin/login`, `POST /admin/login` (form `account`, `password`, `next`): sign-in. Each
//!   attempt takes a slot per client IP and per account in one D1 statement before the password is
//!   hashed; over the limit → 429 page with `Retry-After`. Success stores a session (hash only)
//!   and sets the `__Host-admin_session` cookie, then `303` to `next`.
//! - `POST /admin/logout`: ends the session.
//! - `GET /admin` (overview), `/admin/bookings?q=`, `/admin/booking?id=` (timeline),
//!   `/admin/email?key=` (an email as sent) and `/admin/email/html?key=` (its HTML, sandboxed),
//!   `/admin/queue` (outbox), `/admin/holds`, `/admin/events?source=&status=&date=&before=`,
//!   `/admin/suppressions?email=`, `/admin/refunds?group=`, `/admin/deliveries?status=&subscriber=`,
//!   `/admin/delivery?id=`, `/admin/conversations` (guests waiting for an answer, unmatched mail).
//! - `POST /admin/queue/redrive` (`dedupe_key`), `/admin/queue/provider` (`provider`, `action`),
//!   `/admin/holds/act` (`hold_id`, `action`), `/admin/suppressions/add` (`email`, `reason`,
//!   `note`), `/admin/suppressions/remove` (`email`, `note`), `/admin/queue/pace` (`gap_s`,
//!   `hours`, or `stop`), `/admin/refunds/act` (`compensation_id`, `action`),
//!   `/admin/deliveries/redrive` (`delivery_id` | `subscriber_id` | `from`+`to`),
//!   `/admin/booking/answer` (`id`, `form_id`, `text`), `/admin/booking/done` (`id`): every form carries the session's
//!   `csrf` token and is refused (403) without it or from another origin; each answers `303` back
//!   to its page with `?done=<outcome>`.
//!
//! Without a live session a page answers `303` to the sign-in page; unknown ids answer a 404
//! page. Pages are sent with a Content-Security-Policy that allows no script at all.

use super::webhooks::read_limited;
use super::{config, Answer, AppError};
use crate::config::{Config, DB_BINDING};
use crate::domain::admin::limiter::{limit_key, Scope, Verdict};
use crate::domain::admin::password;
use crate::domain::admin::session::{self as sess, CookieMode};
use crate::domain::admin::timeline;
use crate::domain::event::{EmailAddress, Source};
use crate::domain::payment::action_token::OwnerAction;
use crate::domain::render::admin::{self as view, Chrome};
use crate::platform::{now_ms, Page};
use crate::store::admin as db;
use std::collections::HashMap;
use worker::{Env, Request};

/// Largest accepted form body, bytes.
pub const MAX_FORM_BYTES: usize = 16_384;
/// Longest operator note kept with a suppression change, characters.
pub const MAX_NOTE_CHARS: usize = 200;

/// The CSP of every admin page: nothing runs, nothing loads from elsewhere; frames only from this
/// site (the email's HTML) and the page itself is never framed.
const PAGE_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; \
     frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/// The CSP of an email's HTML in its frame: a sandbox (no scripts, forms, popups, same-origin
/// access), inline styles and data: images only (no remote loads, so no tracking pixels fire).
const EMAIL_CSP: &str = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
     frame-ancestors 'self'";

/// A signed-in admin.
#[derive(Debug, Clone)]
pub struct Session {
    pub account: String,
    /// The cookie's token (never stored; D1 keeps its hash).
    pub token: String,
    pub mode: CookieMode,
}

fn mode_of(req: &Request) -> Result<Option<CookieMode>, AppError> {
    let url = req.url()?;
    Ok(CookieMode::for_request(
        url.scheme(),
        url.host_str().unwrap_or_default(),
    ))
}

fn origin_of(req: &Request) -> Result<String, AppError> {
    let url = req.url()?;
    Ok(url.origin().ascii_serialization())
}

fn client_ip(req: &Request) -> String {
    req.headers()
        .get("cf-connecting-ip")
        .ok()
        .flatten()
        .unwrap_or_else(|| "unknown".into())
}

/// The live session of a request's cookie, if any (one D1 read). An unknown, expired or malformed
/// token is no session.
pub async fn session_of(req: &Request, env: &Env) -> Result<Option<Session>, AppError> {
    let Some(mode) = mode_of(req)? else {
        return Ok(None);
    };
    let Some(cookies) = req.headers().get("cookie").ok().flatten() else {
        return Ok(None);
    };
    let Some(token) = sess::token_from_cookies(&cookies, mode.name()) else {
        return Ok(None);
    };
    let d1 = env.d1(DB_BINDING)?;
    let Some(row) = db::session(&d1, &sess::token_hash(&token), now_ms()).await? else {
        return Ok(None);
    };
    // The account must still exist with the password hash that signed this session in: removing
    // an account or giving it a new password ends its sessions at once.
    let cfg = config(env)?;
    let current = cfg
        .admin
        .accounts
        .iter()
        .any(|a| a.name == row.account && a.hash.tag() == row.credential_tag);
    Ok(current.then_some(Session {
        account: row.account,
        token,
        mode,
    }))
}

/// Whether `path` is one of the admin's HTML pages or forms (not the JSON operator API).
pub fn is_page_path(path: &str) -> bool {
    matches!(
        path,
        "/admin"
            | "/admin/"
            | "/admin/login"
            | "/admin/logout"
            | "/admin/bookings"
            | "/admin/booking"
            | "/admin/email"
            | "/admin/email/html"
            | "/admin/queue"
            | "/admin/queue/redrive"
            | "/admin/queue/provider"
            | "/admin/holds"
            | "/admin/holds/act"
            | "/admin/events"
            | "/admin/events/body"
            | "/admin/suppressions"
            | "/admin/suppressions/add"
            | "/admin/suppressions/remove"
            | "/admin/queue/pace"
            | "/admin/refunds"
            | "/admin/refunds/act"
            | "/admin/deliveries"
            | "/admin/delivery"
            | "/admin/deliveries/redrive"
            | "/admin/conversations"
            | "/admin/booking/answer"
            | "/admin/booking/done"
    )
}

/// An admin page's error as an admin page: the same status and message as the JSON error shape
/// (a body too large, the outbox or D1 unavailable…), in HTML, so a browser user reads it.
pub fn as_page(answer: Answer) -> Answer {
    match answer {
        Err(AppError::Page(page)) => Err(AppError::Page(page)),
        Err(e) => {
            let (status, _) = e.status_and_code();
            if status >= 500 {
                worker::console_error!("admin page: {e}");
            }
            let title = match status {
                400 => "Not understood",
                401 | 403 => "Refused",
                404 => "Not found",
                413 => "Too large",
                500 => "Misconfigured",
                _ => "Temporarily unavailable",
            };
            let message = if status >= 500 {
                format!("{e}. Nothing was lost; try again in a moment.")
            } else {
                e.to_string()
            };
            let page = view::MessagePage {
                chrome: Chrome::default(),
                title: title.into(),
                message,
            };
            Ok(html(status, view::render(&page)).into_response()?)
        }
        ok => ok,
    }
}

/// A `303` to `to` (a path here), with the admin's referrer policy.
fn redirect(to: &str) -> Page {
    Page::see_other(to).with_header("referrer-policy", "same-origin")
}

/// An admin page: the CSP above, and `Referrer-Policy: same-origin` (not the engine's usual
/// `no-referrer`: under that, Chromium sends `Origin: null` on the page's own form posts).
fn html(status: u16, body: String) -> Page {
    Page::new(status, body)
        .with_header("content-security-policy", PAGE_CSP)
        .with_header("referrer-policy", "same-origin")
}

fn chrome(cfg: &Config, s: Option<&Session>, flash: Option<String>) -> Chrome {
    Chrome {
        account: s.map(|s| s.account.clone()),
        brand: cfg.branding.brand.clone(),
        csrf: s.map(|s| sess::csrf_token(&s.token)).unwrap_or_default(),
        flash,
    }
}

fn message(cfg: &Config, s: Option<&Session>, status: u16, title: &str, text: &str) -> Page {
    html(
        status,
        view::render(&view::MessagePage {
            chrome: chrome(cfg, s, None),
            title: title.into(),
            message: text.into(),
        }),
    )
}

/// The 400 page for a form or query the page cannot use, saying why (`text`).
fn not_understood(cfg: &Config, s: &Session, text: &str) -> Answer {
    message(cfg, Some(s), 400, "Not understood", text).answer()
}

/// The 404 page for a booking id with no booking on record.
fn no_booking(cfg: &Config, s: &Session, id: &str) -> Answer {
    message(
        cfg,
        Some(s),
        404,
        "No such booking",
        &format!("No booking {id} on record."),
    )
    .answer()
}

/// A parameter's value with the white space around it cut (empty when absent).
fn trimmed(params: &HashMap<String, String>, name: &str) -> String {
    params
        .get(name)
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

/// The query parameters of a request (first value of each name).
fn query(req: &Request) -> Result<HashMap<String, String>, AppError> {
    let url = req.url()?;
    let mut out = HashMap::new();
    for (k, v) in url.query_pairs() {
        out.entry(k.into_owned()).or_insert_with(|| v.into_owned());
    }
    Ok(out)
}

fn encode(v: &str) -> String {
    form_urlencoded::byte_serialize(v.as_bytes()).collect()
}

fn when(ms: i64) -> String {
    timeline::times(ms, None).0
}

/// The session of a page request, or the redirect to sign in.
async fn signed_in(req: &Request, env: &Env) -> Result<Session, AppError> {
    if let Some(s) = session_of(req, env).await? {
        return Ok(s);
    }
    let url = req.url()?;
    let here = match url.query() {
        Some(q) if req.inner().method() == "GET" => format!("{}?{q}", url.path()),
        _ => url.path().to_string(),
    };
    let next = sess::safe_next(Some(&here));
    Err(redirect(&format!("/admin/login?next={}", encode(&next))).into())
}

/// A form post: the session, its CSRF token and origin checked, the fields read (bounded).
async fn form(
    req: &mut Request,
    env: &Env,
) -> Result<(Session, HashMap<String, String>), AppError> {
    let session = signed_in(req, env).await?;
    let cfg = config(env)?;
    let origin = req.headers().get("origin").ok().flatten();
    if !sess::same_origin(origin.as_deref(), &origin_of(req)?) {
        return Err(message(
            &cfg,
            Some(&session),
            403,
            "Refused",
            "This form was posted from another site. Nothing was changed.",
        )
        .into());
    }
    let body = read_limited(req, MAX_FORM_BYTES).await?;
    let fields: HashMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    if !sess::csrf_ok(
        &session.token,
        fields.get("csrf").map_or("", String::as_str),
    ) {
        return Err(message(&cfg, Some(&session), 403, "Refused", "The form's security token is missing or belongs to another session (reload the page and try again). Nothing was changed.").into());
    }
    Ok((session, fields))
}

fn back(path: &str, done: &str, key: Option<&str>) -> Answer {
    let sep = if path.contains('?') { '&' } else { '?' };
    let mut to = format!("{path}{sep}done={}", encode(done));
    if let Some(k) = key {
        to.push_str(&format!("&key={}", encode(k)));
    }
    redirect(&to).answer()
}

/// The flash line of `?done=<code>&key=<id>`: fixed texts, so a crafted link cannot put words on
/// the page; the key is shown escaped.
fn flash(q: &HashMap<String, String>) -> Option<String> {
    let key = q
        .get("key")
        .map(|k| k.chars().take(200).collect::<String>())
        .unwrap_or_default();
    let text = match q.get("done")?.as_str() {
        "redriven" => format!("Redriven: {key} is queued again."),
        "not_found" => format!("Nothing done: no email {key} in the outbox."),
        "not_dead" => format!("Nothing done: {key} is not a dead letter."),
        "paused" => format!("Paused the {key} provider for one hour."),
        "resumed" => format!("Resumed the {key} provider."),
        "hold_sent" => format!("Hold {key}: the customer's email is queued; the hold is closed."),
        "hold_dismissed" => format!("Hold {key}: dismissed, nothing sent."),
        "hold_nothing" => format!("Hold {key}: closed; the checkout has no usable email address."),
        "hold_handled" => format!("Hold {key} was already handled; nothing more was done."),
        "added" => format!("Suppressed {key}."),
        "already" => format!("{key} was already suppressed; nothing changed."),
        "removed" => format!("Removed the suppression of {key}; its reason is kept in the log."),
        "none" => format!("{key} was not suppressed; nothing changed."),
        "refunded" => format!("Compensation {key}: Stripe accepted the refund."),
        "refund_handled" => format!("Compensation {key}: recorded as handled; nothing refunded."),
        "refund_refused" => format!("Compensation {key}: Stripe refused the refund; nothing was refunded (see its detail)."),
        "refund_not_proven" => format!("Compensation {key}: Stripe's record does not tie this payment to it; nothing was refunded (see its detail)."),
        "refund_retry" => format!("Compensation {key}: Stripe did not confirm the refund; nothing changed, try again in a moment."),
        "refund_decided" => format!("Compensation {key} was already decided; nothing more was refunded."),
        "deliveries_redriven" => format!("Redriven: {key} deliveries are queued again."),
        "catch_up" => "Catch-up started: urgent and booking email go faster until it ends.".to_string(),
        "catch_up_stopped" => "Catch-up stopped: the normal pace applies.".to_string(),
        "answered" => format!("Booking {key}: your answer is queued in the outbox and on the timeline."),
        "conversation_done" => format!("Booking {key}: marked as needing no answer."),
        _ => return None,
    };
    Some(text)
}

mod booking;
mod conversations;
mod lists;
mod outbox;
mod signin;
mod waiting;

pub use booking::{booking, bookings, email, email_html, timeline_entries};
pub use conversations::{booking_answer, booking_done, conversations};
pub use lists::{
    event_body, events, holds, holds_act, suppressions, suppressions_add, suppressions_remove,
};
pub use outbox::{overview, queue, queue_pace, queue_provider, queue_redrive};
pub use signin::{login, login_form, logout};
pub use waiting::{deliveries, deliveries_redrive, delivery, refunds, refunds_act};

/// A raw event's stored text as a page shows it: one line, at most `max` characters (the bounds
/// the page's byte budget is worked out from, `crate::domain::admin::timeline`); empty if none.
fn shown(text: Option<&str>, max: usize) -> String {
    text.map(|t| crate::domain::basics::text::header_value(t, max))
        .unwrap_or_default()
}

/// A raw body's excerpt as a page shows it: the characters SQL cut, and a note of how many more
/// the whole body (its own link) has.
fn excerpt(body: &str, total_chars: i64) -> String {
    let shown = body.chars().count() as i64;
    if total_chars > shown {
        format!(
            "{body}… ({} more characters: open the whole body)",
            total_chars - shown
        )
    } else {
        body.to_string()
    }
}
