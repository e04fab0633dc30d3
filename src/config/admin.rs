//! The admin's settings (`ADMIN_ACCOUNTS`, `ADMIN_LOGIN_*`, `ADMIN_SESSION_TTL_S`), parsed from
//! their variables (split from `config.rs` by purpose).

use crate::domain::admin::{limiter::LoginLimits, password, AdminConfig};

/// Longest admin session, seconds (30 days); `ADMIN_SESSION_TTL_S` is clamped to 1 s … this.
pub const MAX_ADMIN_SESSION_TTL_S: i64 = 30 * 86_400;

/// The admin's settings. Never fails the whole configuration: a malformed `ADMIN_ACCOUNTS`,
/// `ADMIN_LOGIN_*` or `ADMIN_SESSION_TTL_S` turns sign-in off (`accounts_error` says why, for the
/// log), while webhooks and email keep running.
pub(super) fn settings(get: &impl Fn(&str) -> Option<String>) -> AdminConfig {
    let d = AdminConfig::default();
    let mut errors: Vec<String> = Vec::new();
    let mut num = |name: &'static str, default: i64| match super::number(get, name, default) {
        Ok(v) => v.max(1),
        Err(e) => {
            errors.push(e.to_string());
            default
        }
    };
    let limits = LoginLimits {
        max_per_account: num("ADMIN_LOGIN_MAX_PER_ACCOUNT", d.limits.max_per_account),
        max_per_ip: num("ADMIN_LOGIN_MAX_PER_IP", d.limits.max_per_ip),
        window_s: num("ADMIN_LOGIN_WINDOW_S", d.limits.window_s),
    };
    let session_ttl_s = num("ADMIN_SESSION_TTL_S", d.session_ttl_s).min(MAX_ADMIN_SESSION_TTL_S);
    let raw = get("ADMIN_ACCOUNTS").unwrap_or_default();
    let accounts = match password::parse_accounts(raw.trim()) {
        Ok(a) => a,
        Err(e) => {
            errors.push(format!("ADMIN_ACCOUNTS is invalid: {e}"));
            Vec::new()
        }
    };
    AdminConfig {
        accounts_error: (!errors.is_empty()).then(|| errors.join("; ")),
        accounts: if errors.is_empty() {
            accounts
        } else {
            Vec::new()
        },
        session_ttl_s,
        limits,
    }
}
