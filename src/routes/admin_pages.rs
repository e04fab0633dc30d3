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
//!   `/admin/suppressions?email=`.
//! - `POST /admin/queue/redrive` (`dedupe_key`), `/admin/queue/provider` (`provider`, `action`),
//!   `/admin/holds/act` (`hold_id`, `action`), `/admin/suppressions/add` (`email`, `reason`,
//!   `note`), `/admin/suppressions/remove` (`email`, `note`): every form carries the session's
//!   `csrf` token and is refused (403) without it or from another origin; each answers `303` back
//!   to its page with `?done=<outcome>`.
//!
//! Without a live session a page answers `303` to the sign-in page; unknown ids answer a 404
//! page. Pages are sent with a Content-Security-Policy that allows no script at all.

use super::webhooks::read_limited;
use super::{config, Answer, AppError};
use crate::config::{Config, MainProvider, DB_BINDING, OUTBOX_BINDING, OUTBOX_NAME};
use crate::domain::action_token::OwnerAction;
use crate::domain::admin::limiter::{limit_key, Scope, Verdict};
use crate::domain::admin::password;
use crate::domain::admin::session::{self as sess, CookieMode};
use crate::domain::admin::timeline::{self, Entry, EntryKind, MAX_PER_KIND};
use crate::domain::email::Rank;
use crate::domain::event::{EmailAddress, Source};
use crate::domain::render::admin::{self as view, Chrome};
use crate::platform::{now_ms, Page};
use crate::store::admin as db;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use worker::{Env, Headers, Method, Request, RequestInit};

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
            | "/admin/suppressions"
            | "/admin/suppressions/add"
            | "/admin/suppressions/remove"
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
    let mut to = format!("{path}?done={}", encode(done));
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
        _ => return None,
    };
    Some(text)
}

// ---------------------------------------------------------------------------------------------
// Sign-in

fn sign_in_off(cfg: &Config) -> Page {
    // The fault itself names accounts: it goes to the log, not to an anonymous page.
    let why = match &cfg.admin.accounts_error {
        Some(e) => {
            worker::console_error!("admin sign-in is off: {e}");
            "The admin settings (ADMIN_ACCOUNTS or ADMIN_LOGIN_*, ADMIN_SESSION_TTL_S) are invalid; the Worker's log names the fault."
        }
        None => "ADMIN_ACCOUNTS is not set on this engine (npm run admin-password makes one).",
    };
    message(cfg, None, 503, "Sign-in is off", why)
}

fn login_page(cfg: &Config, status: u16, next: &str, typed: &str, error: Option<String>) -> Page {
    html(
        status,
        view::render(&view::LoginPage {
            chrome: chrome(cfg, None, None),
            next: next.into(),
            typed: typed.into(),
            error,
        }),
    )
}

/// `GET /admin/login`.
pub async fn login_form(req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    let q = query(&req)?;
    let next = sess::safe_next(q.get("next").map(String::as_str));
    if session_of(&req, env).await?.is_some() {
        return redirect(&next).answer();
    }
    if cfg.admin.accounts.is_empty() || cfg.admin.accounts_error.is_some() {
        return sign_in_off(&cfg).answer();
    }
    if mode_of(&req)?.is_none() {
        return message(&cfg, None, 400, "Use https", "The admin signs in over https only (plain http only on this machine's loopback address).").answer();
    }
    login_page(&cfg, 200, &next, "", None).answer()
}

/// `POST /admin/login`.
pub async fn login(mut req: Request, env: &Env) -> Answer {
    let cfg = config(env)?;
    if cfg.admin.accounts.is_empty() || cfg.admin.accounts_error.is_some() {
        return sign_in_off(&cfg).answer();
    }
    let Some(mode) = mode_of(&req)? else {
        return message(&cfg, None, 400, "Use https", "The admin signs in over https only (plain http only on this machine's loopback address).").answer();
    };
    let origin = req.headers().get("origin").ok().flatten();
    if !sess::same_origin(origin.as_deref(), &origin_of(&req)?) {
        return message(
            &cfg,
            None,
            403,
            "Refused",
            "This sign-in was posted from another site.",
        )
        .answer();
    }
    let body = read_limited(&mut req, MAX_FORM_BYTES).await?;
    let fields: HashMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    let typed = fields.get("account").map_or("", String::as_str);
    let password = fields.get("password").map_or("", String::as_str);
    let next = sess::safe_next(fields.get("next").map(String::as_str));
    let typed_shown: String = typed.chars().filter(|c| !c.is_control()).take(64).collect();
    // A name that cannot be an account still counts, under one shared key.
    let name = password::normalise_name(typed);
    let ip = client_ip(&req);
    let ip_key = limit_key(Scope::Ip, &ip);
    let account_key = limit_key(Scope::Account, name.as_deref().unwrap_or("?"));
    let d1 = env.d1(DB_BINDING)?;
    let now = now_ms();
    let limits = cfg.admin.limits;
    let slots =
        db::take_login_slots(&d1, &ip_key, &account_key, now, limits.stale_before_ms(now)).await?;
    if let Verdict::Limited {
        scope,
        retry_after_s,
    } = limits.verdict(&slots, now)
    {
        let whom = match scope {
            Scope::Ip => "from this address",
            Scope::Account => "for this account",
        };
        let minutes = (retry_after_s + 59) / 60;
        return Ok(login_page(
            &cfg,
            429,
            &next,
            &typed_shown,
            Some(format!(
                "Too many sign-in attempts {whom}. Try again in {minutes} minute(s)."
            )),
        )
        .with_header("retry-after", retry_after_s.to_string())
        .into_response()?);
    }
    // One PBKDF2 per attempt that got this far, a decoy for a name that is no account (same
    // cost), never for an over-long password.
    let (known, salt, iterations) =
        password::hash_plan(&cfg.admin.accounts, name.as_deref().unwrap_or(""));
    let signed = if password.len() > password::MAX_PASSWORD_BYTES {
        None
    } else {
        let derived =
            crate::platform::pbkdf2_sha256(password.as_bytes(), &salt, iterations).await?;
        known
            .filter(|a| a.hash.matches(&derived))
            .map(|a| a.name.as_str())
    };
    let Some(account) = signed else {
        return login_page(
            &cfg,
            401,
            &next,
            &typed_shown,
            Some("Wrong account or password.".into()),
        )
        .answer();
    };
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(AppError::unavailable)?;
    let token = sess::token_from_bytes(&bytes);
    let ttl_s = cfg.admin.session_ttl_s;
    let tag = known.map(|a| a.hash.tag()).unwrap_or_default();
    db::sign_in(
        &d1,
        &ip_key,
        &account_key,
        &sess::token_hash(&token),
        account,
        &tag,
        Some(&ip),
        now,
        now + ttl_s * 1_000,
        limits.stale_before_ms(now),
    )
    .await?;
    redirect(&next)
        .with_header("set-cookie", mode.set_cookie(&token, ttl_s))
        .answer()
}

/// `POST /admin/logout`.
pub async fn logout(mut req: Request, env: &Env) -> Answer {
    let (session, _) = form(&mut req, env).await?;
    let d1 = env.d1(DB_BINDING)?;
    db::end_session(&d1, &sess::token_hash(&session.token)).await?;
    redirect("/admin/login")
        .with_header("set-cookie", session.mode.clear_cookie())
        .answer()
}

// ---------------------------------------------------------------------------------------------
// The outbox, read and acted on through its Durable Object

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct OutboxState {
    main_paused_until_ms: Option<i64>,
    smtp_paused_until_ms: Option<i64>,
    #[serde(default)]
    counts: BTreeMap<String, i64>,
    #[serde(default)]
    items: Vec<OutboxItem>,
    #[serde(default)]
    attempts: Vec<OutboxAttempt>,
}

#[derive(Debug, Deserialize)]
struct OutboxItem {
    seq: i64,
    dedupe_key: String,
    rank: i64,
    status: String,
    attempts: i64,
    not_before_ms: i64,
    updated_at_ms: i64,
    provider: Option<String>,
    last_error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct OutboxAttempt {
    seq: i64,
    attempt: i64,
    provider: String,
    at_ms: i64,
    outcome: String,
    error: Option<String>,
}

async fn outbox(
    env: &Env,
    method: Method,
    path: &str,
    body: Option<String>,
) -> Result<(u16, String), AppError> {
    let stub = env
        .durable_object(OUTBOX_BINDING)?
        .get_by_name(OUTBOX_NAME)?;
    let mut init = RequestInit::new();
    init.with_method(method);
    if let Some(body) = body {
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        init.with_headers(headers).with_body(Some(body.into()));
    }
    let req = Request::new_with_init(&format!("https://outbox{path}"), &init)?;
    let mut resp = stub.fetch_with_request(req).await?;
    Ok((resp.status_code(), resp.text().await?))
}

async fn outbox_state(env: &Env, query: &str) -> Result<OutboxState, AppError> {
    let (status, text) = outbox(env, Method::Get, &format!("/state?{query}"), None).await?;
    if status != 200 {
        return Err(AppError::Unavailable(format!(
            "the outbox answered {status}"
        )));
    }
    serde_json::from_str(&text).map_err(AppError::unavailable)
}

fn rank_name(n: i64) -> String {
    Rank::from_i64(n).map_or_else(|| n.to_string(), |r| format!("{r:?}").to_lowercase())
}

fn email_link(key: &str) -> String {
    format!("/admin/email?key={}", encode(key))
}

fn providers(cfg: &Config, st: &OutboxState, now: i64) -> Vec<view::ProviderLine> {
    let state = |until: Option<i64>| match until {
        Some(u) if u > now => (format!("paused until {}", when(u)), true),
        _ => ("active".to_string(), false),
    };
    let main_name = match &cfg.main_provider {
        MainProvider::Cloudflare => "Cloudflare Email Service (main)".to_string(),
        MainProvider::Resend { .. } => "Resend (main)".to_string(),
    };
    let (main_state, main_paused) = state(st.main_paused_until_ms);
    let mut out = vec![view::ProviderLine {
        name: main_name,
        key: "main".into(),
        state: main_state,
        paused: main_paused,
    }];
    let (smtp_state, smtp_paused) = state(st.smtp_paused_until_ms);
    out.push(view::ProviderLine {
        name: match &cfg.smtp {
            Some(s) => format!("SMTP failover ({}:{})", s.host, s.port),
            None => "SMTP failover (not configured)".into(),
        },
        key: "smtp".into(),
        state: smtp_state,
        paused: smtp_paused,
    });
    out
}

fn queue_line(i: &OutboxItem, at: i64) -> view::QueueLine {
    view::QueueLine {
        key: i.dedupe_key.clone(),
        link: email_link(&i.dedupe_key),
        rank: rank_name(i.rank),
        status: i.status.clone(),
        attempts: i.attempts,
        when: when(at),
        provider: i.provider.clone().unwrap_or_default(),
        error: i.last_error.clone().unwrap_or_default(),
    }
}

const WAITING: [&str; 3] = ["queued", "waiting", "sending"];

// ---------------------------------------------------------------------------------------------
// Pages

/// `GET /admin`: overview (2 D1 calls: the session, one batch of 5 statements; 1 outbox read).
pub async fn overview(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let d1 = env.d1(DB_BINDING)?;
    let now = now_ms();
    let o = db::overview(&d1, now).await?;
    let st = outbox_state(env, "limit=500").await?;
    let mut by_rank: BTreeMap<(i64, String), i64> = BTreeMap::new();
    for i in &st.items {
        *by_rank.entry((i.rank, i.status.clone())).or_default() += 1;
    }
    let page = view::OverviewPage {
        chrome: chrome(&cfg, Some(&s), None),
        dead: st.counts.get("dead").copied().unwrap_or(0),
        open_holds: o.open_holds,
        rejected_7d: o.rejected_events_7d,
        waiting: WAITING
            .iter()
            .map(|w| st.counts.get(*w).copied().unwrap_or(0))
            .sum(),
        providers: providers(&cfg, &st, now),
        by_rank: by_rank
            .into_iter()
            .map(|((r, s), n)| (rank_name(r), s, n))
            .collect(),
        listed: st.items.len(),
        outbox_counts: st.counts.clone().into_iter().collect(),
        email_counts: o
            .email_counts
            .into_iter()
            .map(|c| (c.status, c.n))
            .collect(),
        failures: o
            .recent_failures
            .into_iter()
            .map(|e| view::LinkLine {
                when: when(e.updated_at_ms),
                link: email_link(&e.dedupe_key),
                title: format!("{} to {}", e.kind, e.to_addr),
                status: e.status,
                detail: e.last_error.unwrap_or_default(),
            })
            .collect(),
        repairs: o
            .repairs
            .into_iter()
            .map(|r| (when(r.at_ms), r.kind, r.subject, r.reason))
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

fn trip(b: &db::BookingHit) -> String {
    let dates = match (&b.checkin, &b.checkout) {
        (Some(i), Some(o)) => format!("{i} → {o}"),
        (Some(i), None) => i.clone(),
        _ => String::new(),
    };
    match &b.hotel_name {
        Some(h) if !h.is_empty() => format!("{h}, {dates}"),
        _ => dates,
    }
}

/// `GET /admin/bookings?q=` (2 D1 calls: the session, the search).
pub async fn bookings(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let text: String = q
        .get("q")
        .map(|v| v.trim().chars().take(254).collect())
        .unwrap_or_default();
    let d1 = env.d1(DB_BINDING)?;
    let hits = db::search_bookings(&d1, &text).await?;
    let page = view::BookingsPage {
        chrome: chrome(&cfg, Some(&s), None),
        q: text,
        hits: hits
            .iter()
            .map(|b| view::BookingLine {
                id: b.booking_id.clone(),
                link: format!("/admin/booking?id={}", encode(&b.booking_id)),
                kind: b.kind.clone(),
                guest: format!("{} {}", b.first_name, b.last_name)
                    .trim()
                    .to_string(),
                email: b.contact_email.clone(),
                trip: trip(b),
                status: b.status.clone(),
                created: when(b.created_at_ms),
            })
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// The timeline entries of a booking's rows (pure: rows in, entries out, in time order).
pub fn timeline_entries(t: &db::TimelineRows) -> Vec<Entry> {
    let mut out = Vec::new();
    let b = &t.booking;
    out.push(Entry {
        at_ms: b.created_at_ms,
        kind: EntryKind::Booking,
        title: format!(
            "{} booking recorded for {} {}",
            b.kind, b.first_name, b.last_name
        ),
        facts: vec![format!(
            "status now {}, journey version {}, last change {}",
            b.status,
            b.journey_version,
            when(b.updated_at_ms)
        )],
        link: None,
        body: None,
        status: b.status.clone(),
    });
    for e in &t.raw_events {
        let mut facts = vec![format!("event id {}", e.event_id.as_deref().unwrap_or("-"))];
        if let Some(i) = &e.instance_id {
            facts.push(format!("journey instance {i}"));
        }
        if let Some(err) = &e.error {
            facts.push(format!("error: {err}"));
        }
        out.push(Entry {
            at_ms: e.received_at_ms,
            kind: EntryKind::RawEvent,
            title: format!(
                "{} {}",
                e.source,
                e.event_name.as_deref().unwrap_or("(no name)")
            ),
            facts,
            link: None,
            body: Some(e.body.clone()),
            status: e.status.clone(),
        });
    }
    for p in &t.planned {
        let mut facts = Vec::new();
        match p.due_at_ms {
            Some(due) => {
                let (utc, local) = timeline::times(due, p.zone.as_deref());
                facts.push(format!("due {utc}"));
                if let Some(local) = local {
                    facts.push(format!("due at the hotel {local}"));
                }
            }
            None => facts.push("no due time".into()),
        }
        if let Some(d) = p.decided_at_ms {
            facts.push(format!(
                "decided {}: {}",
                when(d),
                p.reason.as_deref().unwrap_or(&p.status)
            ));
        } else if let Some(r) = &p.reason {
            facts.push(r.clone());
        }
        out.push(Entry {
            at_ms: p.planned_at_ms,
            kind: EntryKind::PlannedSend,
            title: format!("{} (journey version {})", p.kind, p.journey_version),
            facts,
            link: None,
            body: None,
            status: p.status.clone(),
        });
    }
    for e in &t.emails {
        let mut facts = vec![
            format!(
                "to {} · rank {} · {} attempt(s)",
                e.to_addr,
                rank_name(e.rank),
                e.attempts
            ),
            format!(
                "provider {} · provider message id {} · Message-ID {}",
                e.provider.as_deref().unwrap_or("-"),
                e.provider_message_id.as_deref().unwrap_or("-"),
                e.message_id
            ),
        ];
        if let Some(at) = e.sent_at_ms {
            facts.push(format!("sent {}", when(at)));
        }
        if let Some(d) = &e.delivery_status {
            facts.push(format!("delivery: {d}"));
        }
        if let Some(err) = &e.last_error {
            facts.push(format!("last error: {err}"));
        }
        out.push(Entry {
            at_ms: e.created_at_ms,
            kind: EntryKind::Email,
            title: format!("{}: {}", e.kind, e.subject),
            facts,
            link: Some(email_link(&e.dedupe_key)),
            body: None,
            status: e.status.clone(),
        });
    }
    for h in &t.holds {
        out.push(Entry {
            at_ms: h.created_at_ms,
            kind: EntryKind::Hold,
            title: format!("hold {}: {}", h.hold_id, h.reason),
            facts: h
                .action
                .iter()
                .map(|a| format!("action {a} at {}", when(h.acted_at_ms.unwrap_or_default())))
                .collect(),
            link: None,
            body: None,
            status: h.status.clone(),
        });
    }
    for c in &t.compensations {
        out.push(Entry {
            at_ms: c.created_at_ms,
            kind: EntryKind::Compensation,
            title: format!("{} ({}): {}", c.compensation_id, c.cause, c.reason),
            facts: vec![format!(
                "opened by {}, last change {}",
                c.event_name,
                when(c.updated_at_ms)
            )],
            link: None,
            body: None,
            status: c.state.clone(),
        });
    }
    for w in &t.webhook_events {
        out.push(Entry {
            at_ms: w.created_at_ms,
            kind: EntryKind::WebhookEvent,
            title: format!("{} {}", w.event_type, w.event_id),
            facts: vec![],
            link: None,
            body: None,
            status: "published".into(),
        });
    }
    timeline::order(out)
}

/// `GET /admin/booking?id=` (2 D1 calls: the session, one batch of 7 statements).
pub async fn booking(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let id = q
        .get("id")
        .map(|v| v.trim().to_string())
        .unwrap_or_default();
    if id.is_empty() || id.len() > 200 {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such booking",
            "Give a booking id (search on the bookings page).",
        )
        .answer();
    }
    let d1 = env.d1(DB_BINDING)?;
    let Some(rows) = db::timeline(&d1, &id).await? else {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such booking",
            &format!("No booking {id} on record."),
        )
        .answer();
    };
    let b = &rows.booking;
    let cut = [
        rows.raw_events.len(),
        rows.planned.len(),
        rows.emails.len(),
        rows.holds.len(),
        rows.compensations.len(),
        rows.webhook_events.len(),
    ]
    .iter()
    .any(|n| *n >= MAX_PER_KIND as usize);
    let mut facts = vec![
        (
            "Guest".to_string(),
            format!("{} {}", b.first_name, b.last_name)
                .trim()
                .to_string(),
        ),
        ("Email".into(), b.contact_email.clone()),
        ("Kind".into(), b.kind.clone()),
        ("Status".into(), b.status.clone()),
        ("Stay / trip".into(), trip(b)),
        ("Journey version".into(), b.journey_version.to_string()),
    ];
    if let Some(h) = &b.hotel_confirmation_number {
        facts.push(("Hotel confirmation number".into(), h.clone()));
    }
    if let Some(p) = &b.prebook_id {
        facts.push(("Prebook id".into(), p.clone()));
    }
    let entries = timeline_entries(&rows)
        .into_iter()
        .map(|e| view::EntryLine {
            class: e.kind.class(),
            label: e.kind.label(),
            utc: when(e.at_ms),
            title: e.title,
            facts: e.facts,
            link: e.link,
            body: e.body,
            status: e.status,
        })
        .collect();
    let page = view::BookingPage {
        chrome: chrome(&cfg, Some(&s), None),
        id: b.booking_id.clone(),
        facts,
        entries,
        cut,
        max_per_kind: MAX_PER_KIND,
    };
    html(200, view::render(&page)).answer()
}

fn key_param(q: &HashMap<String, String>) -> Option<String> {
    q.get("key")
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty() && k.len() <= 500)
}

/// `GET /admin/email?key=` (2 D1 calls: the session, one batch of 2 statements; 1 outbox read
/// for its attempts).
pub async fn email(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let Some(key) = key_param(&q) else {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such email",
            "Give an email's dedupe key.",
        )
        .answer();
    };
    let d1 = env.d1(DB_BINDING)?;
    let Some((row, content)) = db::email(&d1, &key).await? else {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such email",
            &format!("No email {key} on record."),
        )
        .answer();
    };
    let st = outbox_state(env, &format!("dedupe_key={}", encode(&key)))
        .await
        .unwrap_or_default();
    let seqs: Vec<i64> = st.items.iter().map(|i| i.seq).collect();
    let mut attempts: Vec<_> = st
        .attempts
        .iter()
        .filter(|a| seqs.contains(&a.seq))
        .map(|a| {
            (
                a.attempt,
                when(a.at_ms),
                a.provider.clone(),
                a.outcome.clone(),
                a.error.clone().unwrap_or_default(),
            )
        })
        .collect();
    attempts.sort_by_key(|a| a.0);
    let mut facts = vec![
        ("Dedupe key".to_string(), row.dedupe_key.clone()),
        ("Kind".into(), row.kind.clone()),
        ("Audience".into(), row.audience.clone()),
        ("Rank".into(), rank_name(row.rank)),
        ("Status".into(), row.status.clone()),
        ("Attempts".into(), row.attempts.to_string()),
        (
            "Provider".into(),
            row.provider.clone().unwrap_or_else(|| "-".into()),
        ),
        (
            "Provider message id".into(),
            row.provider_message_id
                .clone()
                .unwrap_or_else(|| "-".into()),
        ),
        ("Claimed (UTC)".into(), when(row.created_at_ms)),
    ];
    if let Some(b) = &row.booking_id {
        facts.push(("Booking".into(), b.clone()));
    }
    if let Some(at) = row.sent_at_ms {
        facts.push(("Sent (UTC)".into(), when(at)));
    }
    if let Some(d) = &row.delivery_status {
        facts.push(("Delivery".into(), d.clone()));
    }
    if let Some(e) = &row.last_error {
        facts.push(("Last error".into(), e.clone()));
    }
    let mut headers = vec![
        (
            "From".to_string(),
            format!("{} <{}>", cfg.branding.brand, cfg.branding.from),
        ),
        ("To".into(), row.to_addr.clone()),
        (
            "Subject".into(),
            content
                .as_ref()
                .map_or(row.subject.clone(), |c| c.subject.clone()),
        ),
        (
            "Message-ID".into(),
            format!(
                "<{}>",
                row.message_id.trim_matches(|c| c == '<' || c == '>')
            ),
        ),
    ];
    if let Some(c) = &content {
        let extra: Vec<(String, String)> =
            serde_json::from_str(&c.headers_json).unwrap_or_default();
        headers.extend(extra);
    }
    let page = view::EmailPage {
        chrome: chrome(&cfg, Some(&s), None),
        subject: content
            .as_ref()
            .map_or(row.subject.clone(), |c| c.subject.clone()),
        facts,
        headers,
        attempts,
        has_content: content.is_some(),
        text: content
            .as_ref()
            .map(|c| c.text_body.clone())
            .unwrap_or_default(),
        html_src: format!("/admin/email/html?key={}", encode(&key)),
    };
    html(200, view::render(&page)).answer()
}

/// `GET /admin/email/html?key=`: the email's HTML alone, for the sandboxed frame.
pub async fn email_html(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let d1 = env.d1(DB_BINDING)?;
    let found = match key_param(&q) {
        Some(key) => db::email_html(&d1, &key).await?,
        None => None,
    };
    let Some(body) = found else {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such email",
            "No content kept for this email.",
        )
        .answer();
    };
    Ok(Page::new(200, body)
        .with_header("content-security-policy", EMAIL_CSP)
        .with_header("x-content-type-options", "nosniff")
        .into_response()?)
}

/// `GET /admin/queue`: the outbox (2 outbox reads).
pub async fn queue(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let now = now_ms();
    let st = outbox_state(env, "limit=200").await?;
    let dead = outbox_state(env, "status=dead&limit=100").await?;
    let mut queued: Vec<&OutboxItem> = st
        .items
        .iter()
        .filter(|i| WAITING.contains(&i.status.as_str()))
        .collect();
    queued.sort_by_key(|i| (i.rank, i.not_before_ms, i.seq));
    let page = view::QueuePage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        providers: providers(&cfg, &st, now),
        counts: st.counts.clone().into_iter().collect(),
        dead: dead
            .items
            .iter()
            .map(|i| queue_line(i, i.updated_at_ms))
            .collect(),
        queued: queued
            .into_iter()
            .map(|i| queue_line(i, i.not_before_ms))
            .collect(),
        recent: st
            .items
            .iter()
            .take(50)
            .map(|i| queue_line(i, i.updated_at_ms))
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// `POST /admin/queue/redrive` (`dedupe_key`): the same outbox route as the API's redrive.
pub async fn queue_redrive(mut req: Request, env: &Env) -> Answer {
    let (_, f) = form(&mut req, env).await?;
    let key = f
        .get("dedupe_key")
        .map(|k| k.trim().to_string())
        .unwrap_or_default();
    if key.is_empty() || key.len() > 500 {
        return back("/admin/queue", "not_found", Some(&key));
    }
    let body = serde_json::json!({ "dedupeKey": key }).to_string();
    let (status, text) = outbox(env, Method::Post, "/redrive", Some(body)).await?;
    match status {
        200 => back("/admin/queue", "redriven", Some(&key)),
        404 => back("/admin/queue", "not_found", Some(&key)),
        409 => back("/admin/queue", "not_dead", Some(&key)),
        _ => Err(AppError::Unavailable(format!(
            "the outbox answered {status}: {}",
            &text[..text.floor_char_boundary(200)]
        ))),
    }
}

/// `POST /admin/queue/provider` (`provider` = main|smtp, `action` = pause|resume): pauses a
/// provider for one hour (its email goes to the other) or resumes it now.
pub async fn queue_provider(mut req: Request, env: &Env) -> Answer {
    let (_, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let provider = f.get("provider").map(String::as_str).unwrap_or_default();
    if !matches!(provider, "main" | "smtp") {
        return message(
            &cfg,
            None,
            400,
            "Unknown provider",
            "provider must be main or smtp.",
        )
        .answer();
    }
    let (until, done) = match f.get("action").map(String::as_str) {
        Some("pause") => (now_ms() + 3_600_000, "paused"),
        Some("resume") => (0, "resumed"),
        _ => {
            return message(
                &cfg,
                None,
                400,
                "Unknown action",
                "action must be pause or resume.",
            )
            .answer()
        }
    };
    let body = serde_json::json!({ "provider": provider, "untilMs": until }).to_string();
    let (status, text) = outbox(env, Method::Post, "/pause", Some(body)).await?;
    if status != 200 {
        return Err(AppError::Unavailable(format!(
            "the outbox answered {status}: {}",
            &text[..text.floor_char_boundary(200)]
        )));
    }
    back("/admin/queue", done, Some(provider))
}

/// `GET /admin/holds` (2 D1 calls).
pub async fn holds(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let d1 = env.d1(DB_BINDING)?;
    let rows = db::open_holds(&d1).await?;
    let page = view::HoldsPage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        holds: rows
            .into_iter()
            .map(|h| {
                let mut facts = Vec::new();
                if let Some(n) = &h.guest_name {
                    facts.push(format!("guest {n}"));
                }
                if let Some(e) = &h.email {
                    facts.push(format!("email {e}"));
                }
                if let Some(hotel) = &h.hotel_id {
                    facts.push(format!(
                        "hotel {hotel}, {} → {}",
                        h.checkin.as_deref().unwrap_or("?"),
                        h.checkout.as_deref().unwrap_or("?")
                    ));
                }
                if let Some(d) = &h.decline_code {
                    facts.push(format!("decline code {d}"));
                }
                facts.push(format!("prebook {}", h.prebook_id));
                view::HoldLine {
                    id: h.hold_id,
                    created: when(h.created_at_ms),
                    reason: h.reason,
                    facts,
                }
            })
            .collect(),
        actions: OwnerAction::ALL
            .iter()
            .map(|a| (a.as_str(), a.label()))
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// `POST /admin/holds/act` (`hold_id`, `action`): what the owner's one-click link does, once per
/// hold (token id `admin:<hold id>`).
pub async fn holds_act(mut req: Request, env: &Env) -> Answer {
    let (s, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let hold_id = f
        .get("hold_id")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let Some(action) = f
        .get("action")
        .and_then(|a| OwnerAction::parse(a))
        .filter(|a| OwnerAction::ALL.contains(a))
    else {
        return message(
            &cfg,
            Some(&s),
            400,
            "Unknown action",
            "action must be send_insufficient_funds, send_security_check or dismiss.",
        )
        .answer();
    };
    let d1 = env.d1(DB_BINDING)?;
    let Some(hold) = crate::store::checkout::get_hold(&d1, &hold_id).await? else {
        return message(
            &cfg,
            Some(&s),
            404,
            "No such hold",
            &format!("No hold {hold_id} on record."),
        )
        .answer();
    };
    if hold.status != crate::store::checkout::HoldStatus::Held {
        return back("/admin/holds", "hold_handled", Some(&hold_id));
    }
    let ip = client_ip(&req);
    let from = format!("admin:{} {}", s.account, ip);
    let outcome =
        super::actions::act_on_hold(env, &hold, action, &format!("admin:{hold_id}"), Some(&from))
            .await?;
    let done = match (outcome.status, outcome.title) {
        (200, "Sent") => "hold_sent",
        (200, "Dismissed") => "hold_dismissed",
        (200, _) => "hold_nothing",
        _ => "hold_handled",
    };
    back("/admin/holds", done, Some(&hold_id))
}

const EVENT_STATUSES: [&str; 5] = ["received", "started", "ignored", "rejected", "errored"];

/// `GET /admin/events?source=&status=&date=YYYY-MM-DD&before=<ms>.<id>` (2 D1 calls).
pub async fn events(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let sources: Vec<&'static str> = <Source as strum::VariantArray>::VARIANTS
        .iter()
        .map(|s| s.as_str())
        .collect();
    let pick = |name: &str| {
        q.get(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let source = pick("source");
    let status = pick("status");
    let date = pick("date");
    if let Some(v) = &source {
        if !sources.contains(&v.as_str()) {
            return message(
                &cfg,
                Some(&s),
                400,
                "Unknown source",
                &format!("source must be one of {}.", sources.join(", ")),
            )
            .answer();
        }
    }
    if let Some(v) = &status {
        if !EVENT_STATUSES.contains(&v.as_str()) {
            return message(
                &cfg,
                Some(&s),
                400,
                "Unknown status",
                &format!("status must be one of {}.", EVENT_STATUSES.join(", ")),
            )
            .answer();
        }
    }
    let day = match &date {
        None => None,
        Some(d) => match chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d") {
            Ok(day) => {
                let from = day
                    .and_hms_opt(0, 0, 0)
                    .unwrap_or_default()
                    .and_utc()
                    .timestamp_millis();
                Some((from, from + 86_400_000))
            }
            Err(_) => {
                return message(
                    &cfg,
                    Some(&s),
                    400,
                    "Bad date",
                    "date must be YYYY-MM-DD (a UTC day).",
                )
                .answer()
            }
        },
    };
    // `before=<ms>.<id>`: the last row shown (keyset paging).
    let before = match pick("before") {
        None => None,
        Some(b) => match b
            .split_once('.')
            .map(|(m, i)| (m.parse::<i64>(), i.parse::<i64>()))
        {
            Some((Ok(ms), Ok(id))) => Some((ms, id)),
            _ => {
                return message(
                    &cfg,
                    Some(&s),
                    400,
                    "Bad paging",
                    "before must be <ms>.<id> (the Older link makes it).",
                )
                .answer()
            }
        },
    };
    let d1 = env.d1(DB_BINDING)?;
    let filter = db::EventFilter {
        source: source.clone(),
        status: status.clone(),
        day,
        before_ms: before.map(|b| b.0),
        before_id: before.map(|b| b.1),
    };
    let mut rows = db::raw_events(&d1, &filter).await?;
    let older = (rows.len() > db::PAGE_ROWS as usize).then(|| {
        rows.truncate(db::PAGE_ROWS as usize);
        let last = rows.last().map_or("0.0".to_string(), |r| {
            format!("{}.{}", r.received_at_ms, r.id)
        });
        format!(
            "/admin/events?source={}&status={}&date={}&before={last}",
            encode(source.as_deref().unwrap_or_default()),
            encode(status.as_deref().unwrap_or_default()),
            encode(date.as_deref().unwrap_or_default())
        )
    });
    let page = view::EventsPage {
        chrome: chrome(&cfg, Some(&s), None),
        sources,
        statuses: EVENT_STATUSES.to_vec(),
        source: source.unwrap_or_default(),
        status: status.unwrap_or_default(),
        date: date.unwrap_or_default(),
        events: rows
            .into_iter()
            .map(|e| view::EventLine {
                when: when(e.received_at_ms),
                source: e.source,
                name: e.event_name.unwrap_or_default(),
                event_id: e.event_id.unwrap_or_default(),
                status: e.status,
                error: e.error.unwrap_or_default(),
                body: e.body,
                booking: e.booking_id,
            })
            .collect(),
        older,
    };
    html(200, view::render(&page)).answer()
}

const SUPPRESSION_REASONS: [(&str, &str); 3] = [
    (
        "marketing_unsubscribed",
        "no marketing (booking mail still goes)",
    ),
    ("hard_bounce", "address does not exist (nothing goes)"),
    ("complaint", "complained (nothing goes)"),
];

/// `GET /admin/suppressions?email=` (2 D1 calls).
pub async fn suppressions(req: Request, env: &Env) -> Answer {
    let s = signed_in(&req, env).await?;
    let cfg = config(env)?;
    let q = query(&req)?;
    let email: String = q
        .get("email")
        .map(|v| v.trim().chars().take(254).collect())
        .unwrap_or_default();
    let d1 = env.d1(DB_BINDING)?;
    let (rows, log) = db::suppressions(&d1, (!email.is_empty()).then_some(email.as_str())).await?;
    let page = view::SuppressionsPage {
        chrome: chrome(&cfg, Some(&s), flash(&q)),
        q: email,
        reasons: SUPPRESSION_REASONS.to_vec(),
        rows: rows
            .into_iter()
            .map(|r| view::SuppressionLine {
                email: r.email,
                reason: r.reason,
                detail: r.detail.unwrap_or_default(),
                source: r.source,
                since: when(r.created_at_ms),
            })
            .collect(),
        log: log
            .into_iter()
            .map(|l| view::SuppressionLogLine {
                when: when(l.at_ms),
                email: l.email,
                change: l.change,
                reason: l.reason,
                note: l.note.unwrap_or_default(),
                by: l.by_account,
            })
            .collect(),
    };
    html(200, view::render(&page)).answer()
}

/// An operator's note: one line, bounded, required.
fn note(cfg: &Config, s: &Session, f: &HashMap<String, String>) -> Result<String, AppError> {
    let n: String = f
        .get("note")
        .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
        .chars()
        .take(MAX_NOTE_CHARS)
        .collect();
    if n.is_empty() {
        return Err(message(
            cfg,
            Some(s),
            400,
            "A reason is required",
            "Say why (the note is kept with the change).",
        )
        .into());
    }
    Ok(n)
}

fn address(cfg: &Config, s: &Session, f: &HashMap<String, String>) -> Result<String, AppError> {
    let raw = f.get("email").map(|v| v.trim()).unwrap_or_default();
    EmailAddress::parse(raw)
        .map(|a| a.as_str().to_ascii_lowercase())
        .map_err(|e| {
            message(
                cfg,
                Some(s),
                400,
                "Not an email address",
                &format!("email: {e}"),
            )
            .into()
        })
}

/// `POST /admin/suppressions/add` (`email`, `reason`, `note`).
pub async fn suppressions_add(mut req: Request, env: &Env) -> Answer {
    let (s, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let email = address(&cfg, &s, &f)?;
    let reason = f.get("reason").map(String::as_str).unwrap_or_default();
    if !SUPPRESSION_REASONS.iter().any(|(r, _)| *r == reason) {
        return message(
            &cfg,
            Some(&s),
            400,
            "Unknown reason",
            "reason must be marketing_unsubscribed, hard_bounce or complaint.",
        )
        .answer();
    }
    let note = note(&cfg, &s, &f)?;
    let d1 = env.d1(DB_BINDING)?;
    let added = db::add_suppression(&d1, &email, reason, &note, &s.account, now_ms()).await?;
    back(
        "/admin/suppressions",
        if added { "added" } else { "already" },
        Some(&email),
    )
}

/// `POST /admin/suppressions/remove` (`email`, `note`).
pub async fn suppressions_remove(mut req: Request, env: &Env) -> Answer {
    let (s, f) = form(&mut req, env).await?;
    let cfg = config(env)?;
    let email = address(&cfg, &s, &f)?;
    let note = note(&cfg, &s, &f)?;
    let d1 = env.d1(DB_BINDING)?;
    let removed = db::remove_suppression(&d1, &email, &note, &s.account, now_ms()).await?;
    back(
        "/admin/suppressions",
        if removed { "removed" } else { "none" },
        Some(&email),
    )
}
