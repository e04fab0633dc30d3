//! Admin sessions: the cookie, the token's stored hash, CSRF tokens and safe redirects.
//!
//! A session token is 32 random bytes (hex) made at sign-in; D1 keeps only its SHA-256
//! ([`token_hash`]), so a leaked table signs nobody in. The cookie is
//! `__Host-admin_session=<token>; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=<ttl>` on
//! https (the `__Host-` prefix pins it to this host and path, RFC 6265bis §4.1.3.2). Plain http is
//! allowed only on a loopback host (`wrangler dev`), where the cookie is `admin_session` without
//! `Secure` (browsers drop `Secure` cookies set over http outside localhost).
//!
//! Every state-changing form carries `csrf` = HMAC-SHA-256(token, "admin csrf v1") in hex
//! ([`csrf_token`]): another site can make the browser post, but cannot read the token. The sign-in
//! form, which has no session yet, relies on `SameSite=Strict` and [`same_origin`].

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Cookie name on https.
pub const SECURE_COOKIE: &str = "__Host-admin_session";
/// Cookie name on plain http to a loopback host (local development only).
pub const LOCAL_COOKIE: &str = "admin_session";
/// Hex characters of a session token (32 bytes).
pub const TOKEN_HEX_CHARS: usize = 64;

/// How the cookie is set for a request's URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieMode {
    /// https: `__Host-` prefix, `Secure`.
    Secure,
    /// http to 127.0.0.1 / localhost / [::1]: no prefix, no `Secure`.
    LocalHttp,
}

impl CookieMode {
    /// The mode for a request to `scheme://host`; `None` (sign-in refused) for http to any other
    /// host.
    pub fn for_request(scheme: &str, host: &str) -> Option<Self> {
        match scheme {
            "https" => Some(CookieMode::Secure),
            "http" if matches!(host, "127.0.0.1" | "localhost" | "[::1]" | "::1") => {
                Some(CookieMode::LocalHttp)
            }
            _ => None,
        }
    }

    /// The cookie's name.
    pub fn name(self) -> &'static str {
        match self {
            CookieMode::Secure => SECURE_COOKIE,
            CookieMode::LocalHttp => LOCAL_COOKIE,
        }
    }

    /// The `Set-Cookie` value that stores `token` for `max_age_s` seconds.
    pub fn set_cookie(self, token: &str, max_age_s: i64) -> String {
        let secure = match self {
            CookieMode::Secure => "; Secure",
            CookieMode::LocalHttp => "",
        };
        format!(
            "{}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age_s}{secure}",
            self.name()
        )
    }

    /// The `Set-Cookie` value that removes the cookie (sign-out, expired session).
    pub fn clear_cookie(self) -> String {
        self.set_cookie("", 0)
    }
}

/// The session token in a `Cookie` header under `name`, if it has the shape of one (64 lower-case
/// hex characters); anything else is ignored.
pub fn token_from_cookies(header: &str, name: &str) -> Option<String> {
    header
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| {
            v.len() == TOKEN_HEX_CHARS
                && v.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

/// Hex SHA-256 of a session token: the only form D1 keeps.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A session token from 32 random bytes (the shell draws them from `crypto.getRandomValues`).
pub fn token_from_bytes(bytes: &[u8; 32]) -> String {
    hex::encode(bytes)
}

/// The CSRF token of a session: hex HMAC-SHA-256 keyed by the session token.
pub fn csrf_token(session_token: &str) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(session_token.as_bytes()).expect("HMAC takes any key");
    mac.update(b"admin csrf v1");
    hex::encode(mac.finalize().into_bytes())
}

/// Whether a form's `csrf` value is the session's (constant time).
pub fn csrf_ok(session_token: &str, submitted: &str) -> bool {
    let want = csrf_token(session_token);
    want.len() == submitted.len() && bool::from(want.as_bytes().ct_eq(submitted.as_bytes()))
}

/// Whether a POST's `Origin` (when the browser sent one) is this site's own origin
/// (`scheme://host[:port]`). A missing `Origin` passes: old browsers and non-browser clients omit
/// it, and the CSRF token still guards forms; a `null` or foreign one does not.
pub fn same_origin(origin_header: Option<&str>, own_origin: &str) -> bool {
    match origin_header {
        None => true,
        Some(o) => o.trim().eq_ignore_ascii_case(own_origin),
    }
}

/// Where to go after sign-in: `next` when it is a path of the admin on this site (`/admin…`, no
/// `//`, no backslash, no control characters, ≤ 512 bytes), else `/admin`. Stops open redirects.
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n)
            if (n == "/admin" || n.starts_with("/admin/") || n.starts_with("/admin?"))
                && n.len() <= 512
                && !n.contains("//")
                && !n.contains('\\')
                && !n.chars().any(char::is_control) =>
        {
            n.to_string()
        }
        _ => "/admin".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_modes() {
        assert_eq!(
            CookieMode::for_request("https", "engine.example.com"),
            Some(CookieMode::Secure)
        );
        assert_eq!(
            CookieMode::for_request("http", "127.0.0.1"),
            Some(CookieMode::LocalHttp)
        );
        assert_eq!(CookieMode::for_request("http", "engine.example.com"), None);
        let c = CookieMode::Secure.set_cookie("ab", 60);
        assert_eq!(
            c,
            "__Host-admin_session=ab; Path=/; HttpOnly; SameSite=Strict; Max-Age=60; Secure"
        );
        assert!(CookieMode::LocalHttp.clear_cookie().contains("Max-Age=0"));
        assert!(!CookieMode::LocalHttp.set_cookie("x", 1).contains("Secure"));
    }

    #[test]
    fn reads_only_well_formed_tokens() {
        let t = "a".repeat(64);
        let h = format!("x=1; {SECURE_COOKIE}={t}; y=2");
        assert_eq!(token_from_cookies(&h, SECURE_COOKIE), Some(t.clone()));
        assert_eq!(token_from_cookies(&h, LOCAL_COOKIE), None);
        assert_eq!(
            token_from_cookies(&format!("{SECURE_COOKIE}=zz"), SECURE_COOKIE),
            None
        );
        assert_eq!(
            token_from_cookies(
                &format!("{SECURE_COOKIE}={}", "A".repeat(64)),
                SECURE_COOKIE
            ),
            None
        );
        assert_eq!(token_hash(&t).len(), 64);
        assert_ne!(token_hash(&t), t);
    }

    #[test]
    fn csrf_tokens_belong_to_their_session() {
        let a = token_from_bytes(&[1; 32]);
        let b = token_from_bytes(&[2; 32]);
        assert!(csrf_ok(&a, &csrf_token(&a)));
        assert!(!csrf_ok(&a, &csrf_token(&b)));
        assert!(!csrf_ok(&a, ""));
    }

    #[test]
    fn origins_and_redirects() {
        assert!(same_origin(None, "https://e.test"));
        assert!(same_origin(Some("https://e.test"), "https://e.test"));
        assert!(!same_origin(Some("https://evil.test"), "https://e.test"));
        assert!(!same_origin(Some("null"), "https://e.test"));
        assert_eq!(
            safe_next(Some("/admin/bookings?q=x")),
            "/admin/bookings?q=x"
        );
        assert_eq!(safe_next(Some("//evil.test/admin")), "/admin");
        assert_eq!(safe_next(Some("/admin//evil.test")), "/admin");
        assert_eq!(safe_next(Some("https://evil.test")), "/admin");
        assert_eq!(safe_next(Some("/adminx")), "/admin");
        assert_eq!(safe_next(None), "/admin");
    }
}
