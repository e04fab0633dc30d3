//! Sign-in (`GET`/`POST /admin/login`, the exact failed-login limit) and sign-out.

use super::*;

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
    let slots = db::take_login_slots(
        &d1,
        &ip_key,
        &account_key,
        now,
        limits.stale_before_ms(now),
        limits.max_per_ip,
    )
    .await?;
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
            .filter(|a| a.signs_in(password, &derived))
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
