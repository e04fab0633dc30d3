//! The shell's one door to the Workers runtime for cross-cutting needs: the configuration read from
//! the Worker's vars and secrets, the clock, randomness, the conversion of shell errors into
//! `worker::Error`, and the HTTP edge's answers ([`AppError`], [`Page`], [`ErrorBody`]). Routes,
//! journeys, the outbox and the store all take these from here, so no shell folder has to reach
//! into another (no `crate::routes` outside `routes/`).
//!
//! The core never calls this module: it takes `now` (ms since the Unix epoch, UTC) and random
//! numbers as arguments.

mod crypto;
mod fetch;
mod http;

pub use crypto::pbkdf2_sha256;
pub use fetch::{fetch_within, Answer, NoAnswer};
pub use http::{AppError, Page};

use crate::config::{Config, ConfigError};
use worker::Env;

/// Reads and parses the configuration from the Worker's secrets and vars (a secret wins over a
/// var of the same name). Errors name the variable ([`ConfigError`]).
pub fn config(env: &Env) -> Result<Config, ConfigError> {
    let cfg = Config::parse(|name| {
        env.secret(name)
            .ok()
            .map(|v| v.to_string())
            .or_else(|| env.var(name).ok().map(|v| v.to_string()))
    })?;
    log_refusals(&cfg);
    Ok(cfg)
}

/// Logs every feature the configuration refused (the production guard, `Config::refused`): one
/// line each, naming its variable, once per isolate and set of refusals (the configuration is
/// parsed on every request; its log is not repeated). `/health` lists them too.
fn log_refusals(cfg: &Config) {
    static LOGGED: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    let now: String = cfg
        .refused
        .iter()
        .map(|r| format!("{}: {}\n", r.variable, r.reason))
        .collect();
    let Ok(mut last) = LOGGED.lock() else {
        return;
    };
    if *last == now {
        return;
    }
    for r in &cfg.refused {
        worker::console_error!("configuration refused: {}: {}", r.variable, r.reason);
    }
    *last = now;
}

/// [`config`] for shell code that answers in `worker::Result` (Workflow steps, the Durable
/// Object): a configuration error becomes `worker::Error::RustError` with the same message.
pub fn config_or_err(env: &Env) -> worker::Result<Config> {
    config(env).map_err(rust_err)
}

/// Now, in ms since the Unix epoch (UTC), from the runtime's clock (`Date.now()`; inside a Worker
/// it advances only across I/O).
pub fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}

/// 64 random bits from `crypto.getRandomValues` (via getrandom). Falls back to the clock if the
/// platform ever refuses (it cannot for 8 bytes); used for jitter, never for secrets.
pub fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        return now_ms() as u64;
    }
    u64::from_le_bytes(b)
}

/// Any displayable error as a `worker::Error` (the runtime's error type holds a JS value, so shell
/// code converts its own errors once, here).
pub fn rust_err(e: impl std::fmt::Display) -> worker::Error {
    worker::Error::RustError(e.to_string())
}

/// The one JSON error body every HTTP answer of the engine uses, from routes and from the outbox
/// Durable Object alike: `{"error": <code>, "message": <text>, "field"?: <JSON path>}`.
/// `code` is a stable snake_case word (`invalid_payload`, `not_found`, …); `message` names the
/// problem for a person.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct ErrorBody {
    pub error: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub field: Option<String>,
}

impl ErrorBody {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            error: code.to_string(),
            message: message.into(),
            field: None,
        }
    }

    /// This body as a JSON response with `status`.
    pub fn into_response(self, status: u16) -> worker::Result<worker::Response> {
        Ok(worker::Response::from_json(&self)?.with_status(status))
    }
}
