//! SMTP failover over `cloudflare:sockets`, spoken by async-smtp (greeting, EHLO with multi-line
//! replies, STARTTLS, AUTH PLAIN/LOGIN, MAIL/RCPT/DATA with dot-stuffing, QUIT) through
//! [`Wire`](super::smtp_wire::Wire), which reads replies the way real servers send them, knows
//! which command each reply answers and bounds every step (RFC 5321 §4.5.3.2).
//!
//! One email is one SMTP transaction. What a failure means is decided from the transcript:
//! - the server answered the final `.` with a 2xx → the message is the server's, whatever
//!   happens afterwards (QUIT unanswered, refused, cut off by the conversation's limit, the
//!   connection dropped): sent, once;
//! - the server refused a command → [`classify_refusal`] on that command, its reply code, its
//!   enhanced status code and whether it is about our envelope sender;
//! - no reply came (a deadline, a closed connection, an unreadable reply) *before* the final `.`
//!   → nothing was handed over (RFC 5321 §4.1.1.4: a message is the server's only once the final
//!   `.` is answered), transient;
//! - no reply came *after* the final `.` → the server may have the message: `maybe_handed_over`,
//!   the outbox's rule for an uncertain hand-over applies (one more attempt at most).
//!
//! [`send_over`] / [`send_over_starttls`] are generic over the byte stream so host tests drive the
//! real library against a scripted server; [`send`] connects a `worker::Socket` (wasm only).

pub use super::smtp_wire::Timer;
use super::smtp_wire::{SharedTranscript, Wire};
#[cfg(target_arch = "wasm32")]
use crate::config::SmtpConfig;
use crate::domain::basics::text::header_value;
#[cfg(target_arch = "wasm32")]
use crate::domain::outbox::smtp::TlsMode;
use crate::domain::outbox::smtp::{
    classify_refusal, fault_name, is_certificate_failure, HandOver, Reply, SmtpCommand,
    SmtpTimeouts,
};
use crate::domain::outbox::ProviderErrorClass;

/// Longest runtime error (a socket's read or write failure) quoted in a failure, characters.
const RUNTIME_ERROR_MAX_CHARS: usize = 200;
use async_smtp::authentication::{Credentials, Mechanism};
use async_smtp::extension::ClientId;
use async_smtp::{EmailAddress as SmtpAddress, Envelope, SendableEmail, SmtpClient, SmtpTransport};
use std::future::Future;
#[cfg(target_arch = "wasm32")]
use tokio::io::BufStream;
use tokio::io::{AsyncBufRead, AsyncWrite};

/// A failed SMTP attempt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SMTP {command}: {message}")]
pub struct SmtpFailure {
    pub class: ProviderErrorClass,
    /// What failed: `connect`, `envelope`, or the step whose reply refused or never came
    /// (`greeting`, `EHLO`, `STARTTLS`, `AUTH`, `MAIL FROM`, `RCPT TO`, `DATA`, `end of data`).
    pub command: &'static str,
    /// One line, bounded: the server's exact reply (`553 5.7.1 <bookings@…>: Sender address
    /// rejected …`), or what happened instead (`no reply to end of data within 600000 ms`).
    pub message: String,
    /// The final `.` went out and no reply to it came: the server may have the message. The
    /// outcome is unknown, never a refusal.
    pub maybe_handed_over: bool,
    /// A short name for the fault, the same each time it recurs (`MAIL FROM 553 5.7.1`, the step
    /// that timed out): what the owner is told about once a day.
    pub fault: String,
}

/// Longest wait for the reply to QUIT after the message was accepted, ms: the email is the
/// server's already, so a slow goodbye must not hold the outbox.
pub const QUIT_WAIT_MS: u64 = 5_000;

/// Who we are to the server and how long each step may take.
#[derive(Debug, Clone, Copy)]
pub struct Session<'a> {
    /// Sent in EHLO.
    pub hello_name: &'a str,
    /// AUTH PLAIN or LOGIN with these, when the server offers them; `None` for a server that
    /// needs none (local maildev).
    pub credentials: Option<&'a (String, String)>,
    pub timeouts: SmtpTimeouts,
    /// The stream is TLS from its first byte (`SMTP_TLS=implicit`): a read or write failing
    /// before the greeting is the TLS handshake refused.
    pub implicit_tls: bool,
}

/// One message to deliver.
pub struct Outgoing<'a> {
    pub from: &'a str,
    pub to: &'a str,
    /// RFC 5322 bytes (CRLF line ends), e.g. from `domain::render::to_mime`. Dot-stuffing is the
    /// transport's job.
    pub message: Vec<u8>,
}

/// Why the conversation stopped, before it is read against the transcript.
enum Stop {
    Smtp(async_smtp::error::Error),
    Address(String),
}

impl From<async_smtp::error::Error> for Stop {
    fn from(e: async_smtp::error::Error) -> Self {
        Stop::Smtp(e)
    }
}

/// Runs `fut` against the timer: `None` when the timer fired first.
async fn race<T>(timer: &Timer, ms: u64, fut: impl Future<Output = T>) -> Option<T> {
    use futures::future::{select, Either};
    let fut = std::pin::pin!(fut);
    match select(fut, timer(ms)).await {
        Either::Left((r, _)) => Some(r),
        Either::Right(_) => None,
    }
}

fn client(session: &Session<'_>, expect_greeting: bool) -> SmtpClient {
    // No PIPELINING: each reply answers the command just before it, so a refusal names its
    // command exactly (one email every 150 s does not need the saved round trips).
    let c = SmtpClient::new()
        .hello_name(ClientId::Domain(session.hello_name.to_string()))
        .pipelining(false);
    if expect_greeting {
        c
    } else {
        c.without_greeting()
    }
}

/// EHLO (after the greeting, if one is expected), AUTH, one transaction, QUIT.
async fn transact<S>(
    wire: Wire<'_, S>,
    session: &Session<'_>,
    mail: Outgoing<'_>,
    timer: &Timer,
    expect_greeting: bool,
) -> Result<(), Stop>
where
    S: AsyncBufRead + AsyncWrite + Unpin,
{
    let mut transport = SmtpTransport::new(client(session, expect_greeting), wire).await?;
    let sent = async {
        if let Some((user, pass)) = session.credentials {
            let creds = Credentials::new(user.clone(), pass.clone());
            transport
                .try_login(&creds, &[Mechanism::Plain, Mechanism::Login])
                .await?;
        }
        let address =
            |a: &str| SmtpAddress::new(a.to_string()).map_err(|e| Stop::Address(e.to_string()));
        let envelope = Envelope::new(Some(address(mail.from)?), vec![address(mail.to)?])
            .map_err(|e| Stop::Address(e.to_string()))?;
        let mut message = mail.message;
        // RFC 5321 §4.5.2: a line starting with "." gets one more. async-smtp 0.10's codec only
        // stuffs dots that follow a CRLF, so a message whose very first byte is "." would lose
        // it.
        if message.first() == Some(&b'.') {
            message.insert(0, b'.');
        }
        transport
            .send(SendableEmail::new(envelope, message))
            .await?;
        Ok::<(), Stop>(())
    }
    .await;
    // The session ends with QUIT after an accepted message and after a refusal alike (RFC 5321
    // §4.1.1.10): a relay holds a session the client leaves open until its own timeout (Postfix:
    // 300 s), counted against its per-client connection limit. A failed or slow QUIT changes
    // nothing: the server has the message once it answered the final dot (nor does the
    // conversation's own limit firing meanwhile: see `read_outcome`), and a refusal stays the
    // refusal (the transcript keeps the reply that refused, not QUIT's). No QUIT after a lost
    // connection, a deadline or an unreadable reply: that session is over.
    if matches!(
        sent,
        Ok(())
            | Err(Stop::Smtp(
                async_smtp::error::Error::Transient(_) | async_smtp::error::Error::Permanent(_)
            ))
    ) {
        let _ = race(timer, QUIT_WAIT_MS, transport.quit()).await;
    }
    sent
}

/// Opens an SMTP session on `stream` (greeting pending unless `expect_greeting` is false),
/// authenticates if credentials are given, sends one message and quits, all within
/// `session.timeouts.conversation_ms`. Returns the server's reply to the final `.` (e.g.
/// `250 2.0.0 Ok: queued as ABC`, or just `250`).
///
/// `stream` must be plain text; [`send_over_starttls`] upgrades the stream in between.
pub async fn send_over<S>(
    stream: S,
    session: &Session<'_>,
    mail: Outgoing<'_>,
    timer: &Timer,
    expect_greeting: bool,
) -> Result<String, SmtpFailure>
where
    S: AsyncBufRead + AsyncWrite + Unpin,
{
    let log = SharedTranscript::default();
    let wire = Wire::new(
        stream,
        log.clone(),
        timer,
        session.timeouts,
        expect_greeting,
    );
    let sender = mail.from;
    let conversation = transact(wire, session, mail, timer, expect_greeting);
    let outcome = race(timer, session.timeouts.conversation_ms, conversation).await;
    read_outcome(outcome, &log, session, sender)
}

/// [`send_over`] with STARTTLS (RFC 3207): greeting, EHLO and STARTTLS on `stream`, then
/// `upgrade` turns it into the TLS stream and the session goes on there with a fresh EHLO (no
/// greeting). One time budget and one transcript for both halves.
pub async fn send_over_starttls<S, T, U>(
    stream: S,
    upgrade: U,
    session: &Session<'_>,
    mail: Outgoing<'_>,
    timer: &Timer,
) -> Result<String, SmtpFailure>
where
    S: AsyncBufRead + AsyncWrite + Unpin,
    T: AsyncBufRead + AsyncWrite + Unpin,
    U: FnOnce(S) -> T,
{
    let log = SharedTranscript::default();
    let sender = mail.from;
    let conversation = async {
        let wire = Wire::new(stream, log.clone(), timer, session.timeouts, true);
        let transport = SmtpTransport::new(client(session, true), wire).await?;
        let plain = transport.starttls().await?.into_inner();
        let tls = Wire::new(upgrade(plain), log.clone(), timer, session.timeouts, false);
        transact(tls, session, mail, timer, false).await
    };
    let outcome = race(timer, session.timeouts.conversation_ms, conversation).await;
    read_outcome(outcome, &log, session, sender)
}

/// What the conversation came to, read against its transcript (module docs).
/// `sender` is the MAIL FROM address: a refusal that names it is about us.
fn read_outcome(
    outcome: Option<Result<(), Stop>>,
    log: &SharedTranscript,
    session: &Session<'_>,
    sender: &str,
) -> Result<String, SmtpFailure> {
    use async_smtp::error::Error as E;
    let budget_ms = session.timeouts.conversation_ms;
    let log = log.borrow();
    // The TLS handshake is the first thing on a TLS stream: right after the server's `220` to
    // STARTTLS, or before the greeting on implicit TLS. A read or write failing there (not by a
    // deadline) is the handshake refused — workerd gives JavaScript only `internal error;
    // reference = …` for a certificate it does not trust, logging the reason itself.
    let at_handshake = match &log.last_reply {
        Some((SmtpCommand::StartTls, reply)) => reply.code == 220,
        None => session.implicit_tls,
        Some(_) => false,
    } && log.timed_out.is_none();
    // A positive reply to the final dot is a hand-over, whatever ended the conversation after it:
    // reporting anything else would send the email a second time.
    if let (HandOver::Accepted, Some(reply)) = (log.hand_over(), &log.final_reply) {
        return Ok(reply.describe());
    }
    let awaited = log.awaited().unwrap_or(SmtpCommand::Other);
    let uncertain = |command: SmtpCommand, message: String| SmtpFailure {
        class: ProviderErrorClass::Transient,
        command: command.as_str(),
        message: if log.lost_after_dot() {
            format!("{message}; the final dot was sent, so the server may have the message")
        } else {
            message
        },
        maybe_handed_over: log.lost_after_dot(),
        fault: command.as_str().to_string(),
    };
    match outcome {
        Some(Ok(())) => match &log.final_reply {
            Some(reply) => Err(uncertain(
                SmtpCommand::EndOfData,
                format!("unexpected reply to end of data: {}", reply.describe()),
            )),
            None => Err(uncertain(
                SmtpCommand::EndOfData,
                "no reply to end of data".into(),
            )),
        },
        Some(Err(Stop::Address(e))) => Err(SmtpFailure {
            class: ProviderErrorClass::Permanent,
            command: "envelope",
            message: format!("invalid envelope address: {e}"),
            maybe_handed_over: false,
            fault: "envelope".into(),
        }),
        Some(Err(Stop::Smtp(E::Transient(_) | E::Permanent(_)))) => {
            let (command, reply) = log
                .last_reply
                .clone()
                .unwrap_or((awaited, Reply::from_lines(554, &[])));
            Err(SmtpFailure {
                class: classify_refusal(command, &reply, sender),
                command: command.as_str(),
                message: reply.describe(),
                maybe_handed_over: false,
                fault: fault_name(command, &reply),
            })
        }
        // The only refusal of the library itself in this conversation: STARTTLS asked of a
        // server whose EHLO does not offer it (`SMTP_TLS` is wrong for this server).
        Some(Err(Stop::Smtp(E::Client(why)))) => Err(SmtpFailure {
            class: ProviderErrorClass::Configuration,
            command: SmtpCommand::StartTls.as_str(),
            message: format!("{why} (check SMTP_TLS)"),
            maybe_handed_over: false,
            fault: "STARTTLS not offered".into(),
        }),
        Some(Err(Stop::Smtp(E::Io(io))))
            if !log.lost_after_dot()
                && io.kind() != std::io::ErrorKind::TimedOut
                && (at_handshake || is_certificate_failure(&io.to_string())) =>
        {
            Err(SmtpFailure {
                class: ProviderErrorClass::Configuration,
                command: awaited.as_str(),
                message: format!(
                    "the TLS handshake with the server failed (waiting for the reply to {}): {} — most often its certificate is self-signed, expired or issued for another name than SMTP_HOST, or SMTP_TLS is wrong for this port",
                    awaited.as_str(),
                    header_value(&io.to_string(), RUNTIME_ERROR_MAX_CHARS)
                ),
                maybe_handed_over: false,
                fault: "TLS handshake".into(),
            })
        }
        Some(Err(Stop::Smtp(e))) => {
            let command = log.timed_out.map_or(awaited, |(c, _)| c);
            let message = match &e {
                E::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => io.to_string(),
                E::Io(io) => format!(
                    "connection closed while waiting for the reply to {}: {}",
                    command.as_str(),
                    header_value(&io.to_string(), RUNTIME_ERROR_MAX_CHARS)
                ),
                other => format!("unreadable reply to {}: {other}", command.as_str()),
            };
            Err(uncertain(command, message))
        }
        None => Err(uncertain(
            awaited,
            format!(
                "the conversation took longer than {budget_ms} ms (waiting for the reply to {})",
                awaited.as_str()
            ),
        )),
    }
}

/// Sends by SMTP through a `cloudflare:sockets` connection to the configured server, within
/// `budget_ms` (the time the outbox's alarm has left; the configured conversation limit applies
/// if it is shorter).
#[cfg(target_arch = "wasm32")]
pub async fn send(
    cfg: &SmtpConfig,
    mail: Outgoing<'_>,
    budget_ms: u64,
) -> Result<String, SmtpFailure> {
    use worker::{Delay, SecureTransport, Socket};
    let timer: Box<Timer> =
        Box::new(|ms| Box::pin(Delay::from(std::time::Duration::from_millis(ms))));
    let timeouts = SmtpTimeouts {
        conversation_ms: cfg.timeouts.conversation_ms.min(budget_ms),
        ..cfg.timeouts
    };
    let session = Session {
        hello_name: &cfg.hello_name,
        credentials: cfg.credentials.as_ref(),
        timeouts,
        implicit_tls: cfg.tls == TlsMode::Implicit,
    };
    let secure = match cfg.tls {
        TlsMode::Off => SecureTransport::Off,
        TlsMode::Starttls => SecureTransport::StartTls,
        TlsMode::Implicit => SecureTransport::On,
    };
    let connect_failure = |e: String| SmtpFailure {
        class: ProviderErrorClass::Transient,
        command: "connect",
        message: format!("{}:{}: {e}", cfg.host, cfg.port),
        maybe_handed_over: false,
        fault: "connect".into(),
    };
    let socket = Socket::builder()
        .secure_transport(secure)
        .connect(cfg.host.clone(), cfg.port)
        .map_err(|e| connect_failure(e.to_string()))?;
    let connect_ms = timeouts.command_ms.min(timeouts.conversation_ms);
    match race(&*timer, connect_ms, socket.opened()).await {
        Some(Ok(_)) => {}
        Some(Err(e)) => return Err(connect_failure(e.to_string())),
        None => {
            return Err(connect_failure(format!(
                "not connected within {connect_ms} ms"
            )))
        }
    }
    if cfg.tls == TlsMode::Starttls {
        let upgrade = |plain: BufStream<Socket>| BufStream::new(plain.into_inner().start_tls());
        send_over_starttls(BufStream::new(socket), upgrade, &session, mail, &*timer).await
    } else {
        send_over(BufStream::new(socket), &session, mail, &*timer, true).await
    }
}

/// Host builds have no sockets; the outbox only calls this on wasm.
#[cfg(not(target_arch = "wasm32"))]
pub async fn send(
    _cfg: &crate::config::SmtpConfig,
    _mail: Outgoing<'_>,
    _budget_ms: u64,
) -> Result<String, SmtpFailure> {
    Err(SmtpFailure {
        class: ProviderErrorClass::Permanent,
        command: "connect",
        message: "sockets exist only inside workerd".into(),
        maybe_handed_over: false,
        fault: "connect".into(),
    })
}
