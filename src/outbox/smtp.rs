//! SMTP failover over `cloudflare:sockets`, spoken by async-smtp (greeting, EHLO with multi-line
//! replies, STARTTLS, AUTH PLAIN/LOGIN, MAIL/RCPT/DATA with dot-stuffing, QUIT).
//!
//! [`send_over`] is generic over the byte stream so host tests drive the real library against a
//! scripted server; [`send`] connects a `worker::Socket` (wasm only) and applies the timeouts.

use crate::config::SmtpConfig;
use crate::domain::outbox::ProviderErrorClass;
use crate::domain::smtp::classify_reply;
#[cfg(target_arch = "wasm32")]
use crate::domain::smtp::TlsMode;
use async_smtp::authentication::{Credentials, Mechanism};
use async_smtp::extension::ClientId;
use async_smtp::{EmailAddress as SmtpAddress, Envelope, SendableEmail, SmtpClient, SmtpTransport};
use std::future::Future;
use std::pin::Pin;
#[cfg(target_arch = "wasm32")]
use tokio::io::BufStream;
use tokio::io::{AsyncBufRead, AsyncWrite};

/// A failed SMTP attempt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SMTP {stage}: {message}")]
pub struct SmtpFailure {
    pub class: ProviderErrorClass,
    /// Which part of the conversation failed: `connect`, `greeting/ehlo`, `starttls`, `auth`,
    /// `send`, `quit`.
    pub stage: &'static str,
    pub message: String,
    /// The message may have reached the server (the connection died or timed out after DATA
    /// began): the outcome is unknown, never a refusal.
    pub maybe_handed_over: bool,
    /// The server refused our credentials: the owner must act, SMTP is paused.
    pub auth_failed: bool,
}

/// A timer: resolves after the given number of milliseconds.
pub type Timer = dyn Fn(u64) -> Pin<Box<dyn Future<Output = ()>>>;

fn reply_code(r: &async_smtp::response::Response) -> u16 {
    r.code.to_string().parse().unwrap_or(554)
}

fn failure(
    stage: &'static str,
    e: async_smtp::error::Error,
    maybe_handed_over: bool,
) -> SmtpFailure {
    use async_smtp::error::Error as E;
    match &e {
        // The server answered: whatever it said, it did not take the message silently.
        E::Transient(r) | E::Permanent(r) => {
            let code = reply_code(r);
            let text = r.message.join(" ");
            SmtpFailure {
                class: classify_reply(code, &text),
                stage,
                // The reply code itself, e.g. `550 5.1.1 user unknown` (async-smtp's own text
                // leaves it out).
                message: format!("{code} {text}"),
                maybe_handed_over: false,
                auth_failed: false,
            }
        }
        _ => SmtpFailure {
            class: ProviderErrorClass::Transient,
            stage,
            message: e.to_string(),
            maybe_handed_over,
            auth_failed: false,
        },
    }
}

/// A failed AUTH exchange. Any 5xx reply to AUTH (535 bad credentials, 534/538 mechanism or
/// encryption required, 504 mechanism refused, 530) and 454 (temporary authentication failure, see
/// `classify_reply`) mean the owner must act: `auth_failed`, class permanent. Timeouts and broken
/// connections stay transient. Decided on the reply code, never on the server's wording.
fn auth_failure(e: async_smtp::error::Error) -> SmtpFailure {
    use async_smtp::error::Error as E;
    let refused = match &e {
        E::Permanent(_) => true,
        E::Transient(r) => reply_code(r) == 454,
        _ => false,
    };
    let mut f = failure("auth", e, false);
    if refused {
        f.auth_failed = true;
        f.class = ProviderErrorClass::CredentialsRejected;
    }
    f
}

fn address_failure(e: impl std::fmt::Display) -> SmtpFailure {
    SmtpFailure {
        class: ProviderErrorClass::Permanent,
        stage: "send",
        message: format!("invalid envelope address: {e}"),
        maybe_handed_over: false,
        auth_failed: false,
    }
}

fn timed_out(stage: &'static str, ms: u64, maybe_handed_over: bool) -> SmtpFailure {
    SmtpFailure {
        class: ProviderErrorClass::Transient,
        stage,
        message: format!("no reply within {ms} ms"),
        maybe_handed_over,
        auth_failed: false,
    }
}

/// Runs `fut` against the timer: `None` when the timer fired first.
async fn race<T>(
    timer: &Timer,
    ms: u64,
    fut: impl Future<Output = Result<T, async_smtp::error::Error>>,
) -> Option<Result<T, async_smtp::error::Error>> {
    use futures::future::{select, Either};
    let fut = std::pin::pin!(fut);
    match select(fut, timer(ms)).await {
        Either::Left((r, _)) => Some(r),
        Either::Right(_) => None,
    }
}

async fn within<T>(
    timer: &Timer,
    ms: u64,
    stage: &'static str,
    maybe_handed_over: bool,
    fut: impl Future<Output = Result<T, async_smtp::error::Error>>,
) -> Result<T, SmtpFailure> {
    match race(timer, ms, fut).await {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => Err(failure(stage, e, maybe_handed_over)),
        None => Err(timed_out(stage, ms, maybe_handed_over)),
    }
}

/// One message to deliver.
pub struct Outgoing<'a> {
    pub from: &'a str,
    pub to: &'a str,
    /// RFC 5322 bytes (CRLF line ends), e.g. from `domain::render::to_mime`. Dot-stuffing is the
    /// transport's job.
    pub message: Vec<u8>,
}

/// Opens an SMTP session on `stream` (greeting already pending), optionally authenticates, sends
/// one message and quits. Returns the server's final reply to DATA (e.g. `250 Message queued`).
///
/// `stream` must be plain text; for STARTTLS use [`send`], which upgrades the socket in between.
pub async fn send_over<S>(
    stream: S,
    hello_name: &str,
    credentials: Option<&(String, String)>,
    mail: Outgoing<'_>,
    timer: &Timer,
    timeout_ms: u64,
    expect_greeting: bool,
) -> Result<String, SmtpFailure>
where
    S: AsyncBufRead + AsyncWrite + Unpin,
{
    let mut client = SmtpClient::new().hello_name(ClientId::Domain(hello_name.to_string()));
    if !expect_greeting {
        client = client.without_greeting();
    }
    let mut transport = within(
        timer,
        timeout_ms,
        "greeting/ehlo",
        false,
        SmtpTransport::new(client, stream),
    )
    .await?;
    if let Some((user, pass)) = credentials {
        let creds = Credentials::new(user.clone(), pass.clone());
        match race(
            timer,
            timeout_ms,
            transport.try_login(&creds, &[Mechanism::Plain, Mechanism::Login]),
        )
        .await
        {
            Some(Ok(())) => {}
            Some(Err(e)) => return Err(auth_failure(e)),
            None => return Err(timed_out("auth", timeout_ms, false)),
        }
    }
    let envelope = Envelope::new(
        Some(SmtpAddress::new(mail.from.to_string()).map_err(address_failure)?),
        vec![SmtpAddress::new(mail.to.to_string()).map_err(address_failure)?],
    )
    .map_err(address_failure)?;
    let mut message = mail.message;
    // RFC 5321 §4.5.2: a line starting with "." gets one more. async-smtp 0.10's codec only
    // stuffs dots that follow a CRLF, so a message whose very first byte is "." would lose it.
    if message.first() == Some(&b'.') {
        message.insert(0, b'.');
    }
    let reply = within(
        timer,
        timeout_ms,
        "send",
        true,
        transport.send(SendableEmail::new(envelope, message)),
    )
    .await?;
    // The message is accepted once DATA got its 2xx; a failed QUIT changes nothing.
    let _ = within(timer, timeout_ms, "quit", false, transport.quit()).await;
    Ok(format!("{} {}", reply.code, reply.message.join(" ")))
}

/// Sends by SMTP through a `cloudflare:sockets` connection to the configured server.
#[cfg(target_arch = "wasm32")]
pub async fn send(cfg: &SmtpConfig, mail: Outgoing<'_>) -> Result<String, SmtpFailure> {
    use worker::{Delay, SecureTransport, Socket};
    let timer: Box<Timer> =
        Box::new(|ms| Box::pin(Delay::from(std::time::Duration::from_millis(ms))));
    let secure = match cfg.tls {
        TlsMode::Off => SecureTransport::Off,
        TlsMode::Starttls => SecureTransport::StartTls,
        TlsMode::Implicit => SecureTransport::On,
    };
    let connect_failure = |e: String| SmtpFailure {
        class: ProviderErrorClass::Transient,
        stage: "connect",
        message: format!("{}:{}: {e}", cfg.host, cfg.port),
        maybe_handed_over: false,
        auth_failed: false,
    };
    let socket = Socket::builder()
        .secure_transport(secure)
        .connect(cfg.host.clone(), cfg.port)
        .map_err(|e| connect_failure(e.to_string()))?;
    {
        use futures::future::{select, Either};
        let opened = std::pin::pin!(socket.opened());
        match select(opened, timer(cfg.timeout_ms)).await {
            Either::Left((Ok(_), _)) => {}
            Either::Left((Err(e), _)) => return Err(connect_failure(e.to_string())),
            Either::Right(_) => {
                return Err(connect_failure(format!(
                    "not connected within {} ms",
                    cfg.timeout_ms
                )))
            }
        }
    }
    if cfg.tls != TlsMode::Starttls {
        return send_over(
            BufStream::new(socket),
            &cfg.hello_name,
            cfg.credentials.as_ref(),
            mail,
            &timer,
            cfg.timeout_ms,
            true,
        )
        .await;
    }
    // STARTTLS: EHLO in plain text, STARTTLS, upgrade the socket, then a fresh EHLO (no greeting).
    let client = SmtpClient::new().hello_name(ClientId::Domain(cfg.hello_name.clone()));
    let transport = within(
        &timer,
        cfg.timeout_ms,
        "greeting/ehlo",
        false,
        SmtpTransport::new(client, BufStream::new(socket)),
    )
    .await?;
    let plain = within(
        &timer,
        cfg.timeout_ms,
        "starttls",
        false,
        transport.starttls(),
    )
    .await?;
    let tls = plain.into_inner().start_tls();
    send_over(
        BufStream::new(tls),
        &cfg.hello_name,
        cfg.credentials.as_ref(),
        mail,
        &timer,
        cfg.timeout_ms,
        false,
    )
    .await
}

/// Host builds have no sockets; the outbox only calls this on wasm.
#[cfg(not(target_arch = "wasm32"))]
pub async fn send(_cfg: &SmtpConfig, _mail: Outgoing<'_>) -> Result<String, SmtpFailure> {
    Err(SmtpFailure {
        class: ProviderErrorClass::Permanent,
        stage: "connect",
        message: "sockets exist only inside workerd".into(),
        maybe_handed_over: false,
        auth_failed: false,
    })
}
