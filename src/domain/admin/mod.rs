//! The owner's admin (pages under `/admin/…` and the operator API's session sign-in): the pure
//! decisions, host-tested. The shell is `crate::routes::admin_pages` (HTTP) and
//! `crate::store::admin` (D1).
//!
//! - [`password`]: admin accounts (`ADMIN_ACCOUNTS`) and PBKDF2-HMAC-SHA-256 password hashes;
//! - [`limiter`]: the failed-login limit per client IP and per account (counted in D1);
//! - [`session`]: session tokens, the `__Host-` cookie, CSRF tokens, safe `next` paths;
//! - [`timeline`]: a booking's timeline, every entry in time order.
//!
//! May use: `basics`, `event`, `timezone`, `email`.

pub mod limiter;
pub mod operator;
pub mod password;
pub mod release;
pub mod session;
pub mod timeline;

/// Admin settings from the environment (parsed in [`crate::config::Config::parse`]).
#[derive(Debug, Clone)]
pub struct AdminConfig {
    /// `ADMIN_ACCOUNTS` (secret): the accounts that may sign in; empty = sign-in is off.
    pub accounts: Vec<password::Account>,
    /// Why `ADMIN_ACCOUNTS` was refused, if it was (sign-in is then off; nothing else is).
    pub accounts_error: Option<String>,
    /// `ADMIN_SESSION_TTL_S`: a session's life from sign-in, seconds (default 43,200 = 12 h).
    pub session_ttl_s: i64,
    /// `ADMIN_LOGIN_MAX_PER_ACCOUNT` (5), `ADMIN_LOGIN_MAX_PER_IP` (20), `ADMIN_LOGIN_WINDOW_S`
    /// (900): sign-in attempts allowed per window.
    pub limits: limiter::LoginLimits,
}

impl Default for AdminConfig {
    fn default() -> Self {
        Self {
            accounts: Vec::new(),
            accounts_error: None,
            session_ttl_s: 43_200,
            limits: limiter::LoginLimits::default(),
        }
    }
}
