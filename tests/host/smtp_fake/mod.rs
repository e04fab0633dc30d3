//! A scripted SMTP server for host tests: the real async-smtp client (through the engine's `Wire`)
//! talks over an in-memory duplex pipe to this server, which answers each step with exact bytes
//! (bare `250`, bare LF, blank lines, multi-line replies, silence, a hang-up) and counts the
//! DATA transactions it completed.

#![allow(dead_code)]

use booking_email_engine::domain::outbox::smtp::SmtpTimeouts;
use booking_email_engine::outbox::smtp::{
    send_over, send_over_starttls, Outgoing, Session, SmtpFailure,
};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufStream, DuplexStream};

/// The timer `send_over` races every step against.
pub fn sleep_ms(ms: u64) -> Pin<Box<dyn Future<Output = ()>>> {
    Box::pin(tokio::time::sleep(Duration::from_millis(ms)))
}

/// Upper bound for any single test conversation, so a deadlock fails instead of hanging.
pub const TEST_DEADLINE: Duration = Duration::from_secs(20);

/// The multi-line EHLO reply of a typical submission server.
pub const EHLO_PIPELINING: &[&str] = &["localhost", "PIPELINING", "8BITMIME", "SIZE 1000000"];
pub const EHLO_PLAIN: &[&str] = &["localhost", "8BITMIME", "SIZE 1000000"];
pub const EHLO_AUTH: &[&str] = &[
    "localhost",
    "PIPELINING",
    "AUTH PLAIN LOGIN",
    "SIZE 1000000",
];
pub const EHLO_AUTH_LOGIN_ONLY: &[&str] = &["localhost", "AUTH LOGIN", "8BITMIME"];
pub const EHLO_STARTTLS: &[&str] = &["localhost", "STARTTLS", "8BITMIME"];

/// What the fake server answers at each step. Replies given as `&str` get CRLF appended; raw
/// replies (`&[u8]`) are written exactly.
#[derive(Clone)]
pub struct Script {
    /// The greeting, raw.
    pub greeting: &'static [u8],
    /// Wait before sending the greeting, ms.
    pub greeting_delay_ms: u64,
    /// Lines of the EHLO reply (sent as `250-…` / final `250 …`).
    pub ehlo: &'static [&'static str],
    /// Never answer EHLO (the server goes silent after its greeting).
    pub silent_after_greeting: bool,
    /// Reply to `AUTH` (after the LOGIN exchange, for `AUTH LOGIN`); `None` = never answer.
    pub auth: Option<&'static str>,
    pub mail: &'static str,
    /// Wait before answering MAIL, ms.
    pub mail_delay_ms: u64,
    pub rcpt: &'static str,
    pub data: &'static str,
    /// Wait before answering DATA, ms.
    pub data_delay_ms: u64,
    /// After the `354`, read nothing of the message for this long, ms: once the pipe is full the
    /// client's writes stall.
    pub data_stall_ms: u64,
    /// Bytes the in-memory pipe holds in each direction before a write waits.
    pub pipe_bytes: usize,
    /// Hang up when DATA arrives, without a reply (before any of the message is sent).
    pub close_on_data: bool,
    /// Raw reply after the message's final `.`; `None` = close the connection without a reply.
    pub after_body: Option<&'static [u8]>,
    /// Wait before answering the final `.`, ms.
    pub after_body_delay_ms: u64,
    /// When not empty, the reply to the final `.` instead of `after_body`, written in these
    /// pieces with [`Script::after_body_gap_ms`] between them, so the client receives it across
    /// several reads (a reply split inside a line, between CR and LF, or between lines).
    pub after_body_parts: &'static [&'static [u8]],
    /// Wait between the pieces of `after_body_parts`, ms.
    pub after_body_gap_ms: u64,
    /// Reply to STARTTLS.
    pub starttls: &'static str,
    /// What the server does when QUIT arrives.
    pub quit: Quit,
}

/// The server's answer to QUIT.
#[derive(Clone, Copy, Debug)]
pub enum Quit {
    /// This reply, then the server hangs up.
    Reply(&'static str),
    /// No reply: the server waits until the client hangs up.
    Silent,
    /// The server hangs up without a reply.
    Close,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            greeting: b"220 fake.example ESMTP ready\r\n",
            greeting_delay_ms: 0,
            ehlo: EHLO_PIPELINING,
            silent_after_greeting: false,
            auth: Some("235 2.7.0 Authentication successful"),
            mail: "250 2.1.0 Ok",
            mail_delay_ms: 0,
            rcpt: "250 2.1.5 Ok",
            data: "354 End data with <CR><LF>.<CR><LF>",
            data_delay_ms: 0,
            data_stall_ms: 0,
            pipe_bytes: 1 << 20,
            close_on_data: false,
            after_body: Some(b"250 2.0.0 Ok: queued as ABC\r\n"),
            after_body_delay_ms: 0,
            after_body_parts: &[],
            after_body_gap_ms: 0,
            starttls: "220 2.0.0 Ready to start TLS",
            quit: Quit::Reply("221 2.0.0 Bye"),
        }
    }
}

/// What the fake server saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every command line, without its CRLF (AUTH LOGIN continuation lines included).
    pub commands: Vec<String>,
    /// The raw DATA bytes on the wire, including the terminating `\r\n.\r\n`.
    pub body: Vec<u8>,
    /// DATA transactions completed (the final `.` received).
    pub transactions: usize,
    /// The client closed the connection (rather than the server hanging up first).
    pub client_closed: bool,
}

impl Seen {
    pub fn saw(&self, prefix: &str) -> bool {
        self.commands.iter().any(|c| c.starts_with(prefix))
    }

    /// The verb of each command, in order.
    pub fn verbs(&self) -> Vec<&str> {
        self.commands
            .iter()
            .map(|c| c.split([' ', ':']).next().unwrap())
            .collect()
    }
}

async fn reply(io: &mut BufStream<DuplexStream>, line: &str) {
    raw(io, format!("{line}\r\n").as_bytes()).await;
}

async fn raw(io: &mut BufStream<DuplexStream>, bytes: &[u8]) {
    // A client that already hung up makes the write fail: nothing to do about it.
    let _ = io.write_all(bytes).await;
    let _ = io.flush().await;
}

/// Reads one CRLF line; `None` when the client has closed the connection.
async fn read_line(io: &mut BufStream<DuplexStream>) -> Option<String> {
    let mut buf = Vec::new();
    match io.read_until(b'\n', &mut buf).await {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(
            String::from_utf8_lossy(&buf)
                .trim_end_matches(['\r', '\n'])
                .to_string(),
        ),
    }
}

/// A scripted SMTP server: one session, then returns what it saw.
pub async fn fake_server(mut io: BufStream<DuplexStream>, script: Script) -> Seen {
    let mut seen = Seen::default();
    tokio::time::sleep(Duration::from_millis(script.greeting_delay_ms)).await;
    raw(&mut io, script.greeting).await;
    let mut mail_ok = false;
    let mut rcpt_ok = false;
    loop {
        let Some(line) = read_line(&mut io).await else {
            seen.client_closed = true;
            return seen;
        };
        seen.commands.push(line.clone());
        let verb = line
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        match verb.as_str() {
            "EHLO" => {
                if script.silent_after_greeting {
                    continue;
                }
                let (last, first) = script.ehlo.split_last().unwrap();
                for l in first {
                    reply(&mut io, &format!("250-{l}")).await;
                }
                reply(&mut io, &format!("250 {last}")).await;
            }
            "STARTTLS" => reply(&mut io, script.starttls).await,
            "AUTH" => {
                if line.to_ascii_uppercase().starts_with("AUTH LOGIN") {
                    reply(&mut io, "334 VXNlcm5hbWU6").await; // "Username:"
                    let Some(user) = read_line(&mut io).await else {
                        seen.client_closed = true;
                        return seen;
                    };
                    seen.commands.push(user);
                    reply(&mut io, "334 UGFzc3dvcmQ6").await; // "Password:"
                    let Some(pass) = read_line(&mut io).await else {
                        seen.client_closed = true;
                        return seen;
                    };
                    seen.commands.push(pass);
                }
                if let Some(r) = script.auth {
                    reply(&mut io, r).await;
                }
            }
            "MAIL" => {
                mail_ok = script.mail.starts_with('2');
                tokio::time::sleep(Duration::from_millis(script.mail_delay_ms)).await;
                reply(&mut io, script.mail).await;
            }
            "RCPT" => {
                if mail_ok {
                    rcpt_ok = script.rcpt.starts_with('2');
                    reply(&mut io, script.rcpt).await;
                } else {
                    reply(&mut io, "503 5.5.1 Error: need MAIL command").await;
                }
            }
            "DATA" => {
                if !(mail_ok && rcpt_ok) {
                    reply(&mut io, "554 5.5.1 Error: no valid recipients").await;
                    continue;
                }
                if script.close_on_data {
                    return seen;
                }
                tokio::time::sleep(Duration::from_millis(script.data_delay_ms)).await;
                reply(&mut io, script.data).await;
                if !script.data.starts_with("354") {
                    continue;
                }
                tokio::time::sleep(Duration::from_millis(script.data_stall_ms)).await;
                // Raw bytes until the end-of-data marker.
                let start = seen.body.len();
                loop {
                    let mut chunk = Vec::new();
                    match io.read_until(b'\n', &mut chunk).await {
                        Ok(0) | Err(_) => {
                            seen.client_closed = true;
                            return seen;
                        }
                        Ok(_) => seen.body.extend_from_slice(&chunk),
                    }
                    let this = &seen.body[start..];
                    if this.ends_with(b"\r\n.\r\n") || this == b".\r\n" {
                        break;
                    }
                }
                seen.transactions += 1;
                tokio::time::sleep(Duration::from_millis(script.after_body_delay_ms)).await;
                if !script.after_body_parts.is_empty() {
                    for (i, part) in script.after_body_parts.iter().enumerate() {
                        if i > 0 {
                            tokio::time::sleep(Duration::from_millis(script.after_body_gap_ms))
                                .await;
                        }
                        raw(&mut io, part).await;
                    }
                    continue;
                }
                match script.after_body {
                    Some(r) => raw(&mut io, r).await,
                    // Hang up without the final reply: the message's fate is unknown.
                    None => return seen,
                }
            }
            "RSET" | "NOOP" => reply(&mut io, "250 2.0.0 Ok").await,
            "QUIT" => match script.quit {
                Quit::Reply(r) => {
                    reply(&mut io, r).await;
                    return seen;
                }
                Quit::Silent => continue,
                Quit::Close => return seen,
            },
            _ => reply(&mut io, "502 5.5.2 Error: command not recognized").await,
        }
    }
}

/// Every step limited to `ms`, the whole conversation to ten times that.
pub fn timeouts(ms: u64) -> SmtpTimeouts {
    SmtpTimeouts {
        greeting_ms: ms,
        command_ms: ms,
        data_init_ms: ms,
        data_block_ms: ms,
        final_reply_ms: ms,
        conversation_ms: ms * 10,
    }
}

/// A short message, CRLF line ends.
pub fn short_message() -> Vec<u8> {
    b"From: Bookings <from@example.com>\r\nTo: to@example.com\r\nSubject: x\r\n\r\nHello\r\n"
        .to_vec()
}

pub struct Run {
    pub result: Result<String, SmtpFailure>,
    pub seen: Seen,
    pub elapsed: Duration,
}

impl Run {
    pub fn failure(&self) -> &SmtpFailure {
        match &self.result {
            Err(f) => f,
            Ok(reply) => panic!("expected a failure, got Ok({reply:?}); saw {:?}", self.seen),
        }
    }

    /// The message was handed over with `reply` as the server's answer, in exactly one DATA
    /// transaction, and the session still said QUIT (`case` names the case in a failure).
    pub fn assert_handed_over_once(&self, reply: &str, case: &str) {
        assert_eq!(self.result.as_deref(), Ok(reply), "{case}");
        assert_eq!(self.seen.transactions, 1, "{case}: one DATA transaction");
        assert_eq!(self.seen.verbs().last(), Some(&"QUIT"), "{case}");
    }

    /// The step `command` got no reply within `limit_ms`, and the failure names it.
    pub fn assert_no_reply_within(&self, command: &str, limit_ms: u64) -> &SmtpFailure {
        let f = self.failure();
        assert_eq!(f.command, command);
        assert!(
            f.message
                .contains(&format!("no reply to {command} within {limit_ms} ms")),
            "{}",
            f.message
        );
        f
    }

    /// The conversation took less than `ms`.
    pub fn assert_ended_before(&self, ms: u64) {
        assert!(
            self.elapsed < Duration::from_millis(ms),
            "{:?}",
            self.elapsed
        );
    }
}

/// Runs one `send_over` conversation against the scripted server.
pub async fn converse_with(
    script: Script,
    credentials: Option<(&str, &str)>,
    message: Vec<u8>,
    limits: SmtpTimeouts,
) -> Run {
    converse_inner(script, credentials, message, limits, false).await
}

/// [`converse_with`] where every step may take `timeout_ms`.
pub async fn converse(
    script: Script,
    credentials: Option<(&str, &str)>,
    message: Vec<u8>,
    timeout_ms: u64,
) -> Run {
    converse_with(script, credentials, message, timeouts(timeout_ms)).await
}

/// Runs one `send_over_starttls` conversation (the "TLS" stream is the same pipe).
pub async fn converse_starttls(script: Script, timeout_ms: u64) -> Run {
    converse_inner(script, None, short_message(), timeouts(timeout_ms), true).await
}

/// A TLS stream whose every read and write fails with `error`, as a `cloudflare:sockets` socket
/// does after `startTls()` when the runtime refuses the handshake (worker's `Socket` turns the
/// rejected read into `io::Error::other` with the JavaScript error's text).
pub struct RefusedTls {
    pub error: &'static str,
}

impl tokio::io::AsyncRead for RefusedTls {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        _buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Err(std::io::Error::other(self.error)))
    }
}

impl tokio::io::AsyncWrite for RefusedTls {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        _buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(Err(std::io::Error::other(self.error)))
    }
    fn poll_flush(
        self: Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Err(std::io::Error::other(self.error)))
    }
    fn poll_shutdown(
        self: Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// Runs one `send_over_starttls` conversation whose TLS upgrade fails with `error` (the server
/// answered STARTTLS with `220`; the handshake is refused by the client's runtime).
pub async fn converse_starttls_refused(script: Script, error: &'static str) -> Run {
    let (client, server) = tokio::io::duplex(script.pipe_bytes);
    let server = tokio::spawn(fake_server(BufStream::new(server), script));
    let session = session(None, timeouts(2_000), false);
    let started = Instant::now();
    let result = tokio::time::timeout(
        TEST_DEADLINE,
        send_over_starttls(
            BufStream::new(client),
            |_plain| BufStream::new(RefusedTls { error }),
            &session,
            mail(short_message()),
            &sleep_ms,
        ),
    )
    .await
    .expect("the conversation must finish within the test deadline");
    finished(result, started, server).await
}

/// Runs one `send_over` conversation on implicit TLS (`SMTP_TLS=implicit`) whose handshake the
/// client's runtime refuses: every read and write fails with `error` before any greeting.
pub async fn converse_implicit_refused(error: &'static str) -> Result<String, SmtpFailure> {
    let session = session(None, timeouts(2_000), true);
    tokio::time::timeout(
        TEST_DEADLINE,
        send_over(
            BufStream::new(RefusedTls { error }),
            &session,
            mail(short_message()),
            &sleep_ms,
            true,
        ),
    )
    .await
    .expect("the conversation must finish within the test deadline")
}

async fn converse_inner(
    script: Script,
    credentials: Option<(&str, &str)>,
    message: Vec<u8>,
    limits: SmtpTimeouts,
    starttls: bool,
) -> Run {
    let (client, server) = tokio::io::duplex(script.pipe_bytes);
    let server = tokio::spawn(fake_server(BufStream::new(server), script));
    let creds = credentials.map(|(u, p)| (u.to_string(), p.to_string()));
    let session = session(creds.as_ref(), limits, false);
    let mail = mail(message);
    let started = Instant::now();
    let result = if starttls {
        tokio::time::timeout(
            TEST_DEADLINE,
            send_over_starttls(BufStream::new(client), |s| s, &session, mail, &sleep_ms),
        )
        .await
    } else {
        tokio::time::timeout(
            TEST_DEADLINE,
            send_over(BufStream::new(client), &session, mail, &sleep_ms, true),
        )
        .await
    }
    .expect("the conversation must finish within the test deadline");
    finished(result, started, server).await
}

/// The engine's session with the fake server, as `engine.example.com`.
fn session(
    credentials: Option<&(String, String)>,
    timeouts: SmtpTimeouts,
    implicit_tls: bool,
) -> Session<'_> {
    Session {
        hello_name: "engine.example.com",
        credentials,
        timeouts,
        implicit_tls,
    }
}

/// `message` from `from@example.com` to `to@example.com`.
fn mail(message: Vec<u8>) -> Outgoing<'static> {
    Outgoing {
        from: "from@example.com",
        to: "to@example.com",
        message,
    }
}

/// The run of a conversation that began at `started` and ended with `result`, once the fake
/// server has finished too.
async fn finished(
    result: Result<String, SmtpFailure>,
    started: Instant,
    server: tokio::task::JoinHandle<Seen>,
) -> Run {
    let elapsed = started.elapsed();
    let seen = tokio::time::timeout(TEST_DEADLINE, server)
        .await
        .expect("fake server must finish")
        .expect("fake server must not panic");
    Run {
        result,
        seen,
        elapsed,
    }
}
