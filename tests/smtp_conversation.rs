//! Host tests of the SMTP conversation (`outbox::smtp::send_over`): the real async-smtp client
//! talks over an in-memory duplex pipe to a scripted fake server written here.

use base64::Engine as _;
use booking_email_engine::domain::outbox::ProviderErrorClass;
use booking_email_engine::outbox::smtp::{send_over, Outgoing, SmtpFailure};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufStream, DuplexStream};

/// The timer `send_over` races every step against.
fn sleep_ms(ms: u64) -> Pin<Box<dyn Future<Output = ()>>> {
    Box::pin(tokio::time::sleep(Duration::from_millis(ms)))
}

/// Upper bound for any single test conversation, so a deadlock fails instead of hanging.
const TEST_DEADLINE: Duration = Duration::from_secs(10);

const GREETING: &str = "220 fake.example ESMTP ready";

/// The multi-line EHLO reply of a typical submission server (PIPELINING makes async-smtp send
/// MAIL/RCPT/DATA in one go).
const EHLO_PIPELINING: &[&str] = &["localhost", "PIPELINING", "8BITMIME", "SIZE 1000000"];
const EHLO_PLAIN: &[&str] = &["localhost", "8BITMIME", "SIZE 1000000"];
const EHLO_AUTH: &[&str] = &[
    "localhost",
    "PIPELINING",
    "AUTH PLAIN LOGIN",
    "SIZE 1000000",
];
const EHLO_AUTH_LOGIN_ONLY: &[&str] = &["localhost", "AUTH LOGIN", "8BITMIME"];

/// What the fake server answers at each step.
#[derive(Clone)]
struct Script {
    /// Lines of the EHLO reply (sent as `250-…` / final `250 …`).
    ehlo: &'static [&'static str],
    /// Never answer EHLO (the server goes silent after its greeting).
    silent_after_greeting: bool,
    /// Reply to `AUTH` (after the LOGIN exchange, for `AUTH LOGIN`); `None` = never answer.
    auth: Option<&'static str>,
    mail: &'static str,
    rcpt: &'static str,
    data: &'static str,
    /// Reply after the message's final `.`; `None` = close the connection without a reply.
    after_body: Option<&'static str>,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            ehlo: EHLO_PIPELINING,
            silent_after_greeting: false,
            auth: Some("235 2.7.0 Authentication successful"),
            mail: "250 2.1.0 Ok",
            rcpt: "250 2.1.5 Ok",
            data: "354 End data with <CR><LF>.<CR><LF>",
            after_body: Some("250 2.0.0 Ok: queued as ABC"),
        }
    }
}

/// What the fake server saw.
#[derive(Debug, Default)]
struct Transcript {
    /// Every command line, without its CRLF (AUTH LOGIN continuation lines included).
    commands: Vec<String>,
    /// The raw DATA bytes on the wire, including the terminating `\r\n.\r\n`.
    body: Vec<u8>,
    /// The client closed the connection (rather than the server hanging up first).
    client_closed: bool,
}

impl Transcript {
    fn saw(&self, prefix: &str) -> bool {
        self.commands.iter().any(|c| c.starts_with(prefix))
    }
}

async fn reply(io: &mut BufStream<DuplexStream>, line: &str) {
    io.write_all(line.as_bytes()).await.unwrap();
    io.write_all(b"\r\n").await.unwrap();
    io.flush().await.unwrap();
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
async fn fake_server(mut io: BufStream<DuplexStream>, script: Script) -> Transcript {
    let mut seen = Transcript::default();
    reply(&mut io, GREETING).await;
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
                reply(&mut io, script.data).await;
                if !script.data.starts_with("354") {
                    continue;
                }
                // Raw bytes until the end-of-data marker.
                loop {
                    let mut chunk = Vec::new();
                    match io.read_until(b'\n', &mut chunk).await {
                        Ok(0) | Err(_) => {
                            seen.client_closed = true;
                            return seen;
                        }
                        Ok(_) => seen.body.extend_from_slice(&chunk),
                    }
                    if seen.body.ends_with(b"\r\n.\r\n") || seen.body == b".\r\n" {
                        break;
                    }
                }
                match script.after_body {
                    Some(r) => reply(&mut io, r).await,
                    // Hang up without the final reply: the message's fate is unknown.
                    None => return seen,
                }
            }
            "RSET" | "NOOP" => reply(&mut io, "250 2.0.0 Ok").await,
            "QUIT" => {
                reply(&mut io, "221 2.0.0 Bye").await;
                return seen;
            }
            _ => reply(&mut io, "502 5.5.2 Error: command not recognized").await,
        }
    }
}

/// A message whose body has lines starting with a dot, one of them a lone `.`.
fn message_with_dot_lines() -> Vec<u8> {
    b"From: Bookings <from@example.com>\r\n\
      To: to@example.com\r\n\
      Subject: Your booking\r\n\
      \r\n\
      First line\r\n\
      .hidden line\r\n\
      .\r\n\
      last line\r\n"
        .to_vec()
}

struct Run {
    result: Result<String, SmtpFailure>,
    seen: Transcript,
    elapsed: Duration,
}

/// Runs one `send_over` conversation against the scripted server.
async fn converse(
    script: Script,
    credentials: Option<(&str, &str)>,
    message: Vec<u8>,
    timeout_ms: u64,
) -> Run {
    let (client, server) = tokio::io::duplex(1 << 20);
    let server = tokio::spawn(fake_server(BufStream::new(server), script));
    let creds = credentials.map(|(u, p)| (u.to_string(), p.to_string()));
    let started = Instant::now();
    let result = tokio::time::timeout(
        TEST_DEADLINE,
        send_over(
            BufStream::new(client),
            "engine.example.com",
            creds.as_ref(),
            Outgoing {
                from: "from@example.com",
                to: "to@example.com",
                message,
            },
            &sleep_ms,
            timeout_ms,
            true,
        ),
    )
    .await
    .expect("send_over must finish within the test deadline");
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

fn failure_of(run: &Run) -> &SmtpFailure {
    match &run.result {
        Err(f) => f,
        Ok(reply) => panic!("expected a failure, got Ok({reply:?}); saw {:?}", run.seen),
    }
}

// ---------------------------------------------------------------- success

#[tokio::test]
async fn pipelined_conversation_delivers_and_returns_the_queue_reply() {
    let run = converse(Script::default(), None, message_with_dot_lines(), 5_000).await;
    let reply = run.result.as_ref().expect("delivered");
    assert!(reply.starts_with("250"), "{reply}");
    assert!(reply.contains("queued as ABC"), "{reply}");

    let seen = &run.seen;
    assert_eq!(seen.commands[0], "EHLO engine.example.com");
    assert!(
        seen.saw("MAIL FROM:<from@example.com>"),
        "{:?}",
        seen.commands
    );
    assert!(seen.saw("RCPT TO:<to@example.com>"), "{:?}", seen.commands);
    assert!(seen.saw("DATA"), "{:?}", seen.commands);
    assert_eq!(seen.commands.last().map(String::as_str), Some("QUIT"));
    assert!(!seen.saw("AUTH"), "no credentials, no AUTH");
}

#[tokio::test]
async fn conversation_without_pipelining_delivers_too() {
    let script = Script {
        ehlo: EHLO_PLAIN,
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    assert!(run.result.as_ref().unwrap().contains("queued as ABC"));
    let verbs: Vec<&str> = run
        .seen
        .commands
        .iter()
        .map(|c| c.split([' ', ':']).next().unwrap())
        .collect();
    assert_eq!(verbs, ["EHLO", "MAIL", "RCPT", "DATA", "QUIT"]);
}

#[tokio::test]
async fn dot_lines_are_stuffed_on_the_wire() {
    let run = converse(Script::default(), None, message_with_dot_lines(), 5_000).await;
    run.result.as_ref().expect("delivered");
    let wire = String::from_utf8(run.seen.body.clone()).unwrap();
    assert!(wire.contains("\r\n..hidden line\r\n"), "{wire:?}");
    // A lone "." line must not end the data early: it arrives as "..".
    assert!(wire.contains("\r\n..\r\nlast line\r\n"), "{wire:?}");
    assert!(!wire.contains("\r\n.hidden"), "{wire:?}");
    assert!(wire.ends_with("last line\r\n\r\n.\r\n") || wire.ends_with("last line\r\n.\r\n"));
    assert!(
        wire.starts_with("From: Bookings <from@example.com>\r\n"),
        "{wire:?}"
    );
}

#[tokio::test]
async fn dot_on_the_very_first_line_is_stuffed_too() {
    let run = converse(
        Script::default(),
        None,
        b".first\r\nsecond\r\n".to_vec(),
        5_000,
    )
    .await;
    run.result.as_ref().expect("delivered");
    let wire = String::from_utf8(run.seen.body.clone()).unwrap();
    assert!(wire.starts_with("..first\r\nsecond\r\n"), "{wire:?}");
}

/// Undoes the transport's framing: drops the end-of-data marker and un-stuffs leading dots.
fn unstuff(wire: &[u8]) -> Vec<u8> {
    let body = wire
        .strip_suffix(b"\r\n.\r\n")
        .expect("data ends with the end-of-data marker");
    let mut out = Vec::with_capacity(body.len());
    let mut at_line_start = true;
    let mut i = 0;
    while i < body.len() {
        if at_line_start && body[i] == b'.' {
            assert_eq!(
                body.get(i + 1),
                Some(&b'.'),
                "unstuffed dot line on the wire"
            );
            i += 1; // drop the stuffing dot
        }
        at_line_start = body[i] == b'\n' && i > 0 && body[i - 1] == b'\r';
        out.push(body[i]);
        i += 1;
    }
    out
}

#[tokio::test]
async fn rendered_confirmation_arrives_byte_identical() {
    use booking_email_engine::domain::event::{EmailAddress, Interpretation, SupplierEvent};
    use booking_email_engine::domain::render::{booking_confirmation, to_mime, Branding};
    use booking_email_engine::sources::liteapi::{interpret, parse_envelope};

    let raw = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/liteapi-booking-confirmed.json"
    ))
    .unwrap();
    let Interpretation::Journey(SupplierEvent::HotelBooked(booking)) =
        interpret(&parse_envelope(&raw).unwrap()).unwrap()
    else {
        panic!("fixture is a booking.book");
    };
    let branding = Branding {
        brand: "Example Trips".into(),
        from: EmailAddress::parse("from@example.com").unwrap(),
        locale: booking_email_engine::domain::i18n::Locale::En,
    };
    let email = booking_confirmation(&booking, &branding).unwrap();
    let mime = to_mime(&email, &branding, 1_767_225_600).unwrap();

    let run = converse(Script::default(), None, mime.clone(), 5_000).await;
    run.result.as_ref().expect("delivered");
    assert_eq!(
        String::from_utf8_lossy(&unstuff(&run.seen.body)),
        String::from_utf8_lossy(&mime)
    );
}

// ---------------------------------------------------------------- refusals

#[tokio::test]
async fn unknown_recipient_is_recipient_rejected() {
    let script = Script {
        rcpt: "550 5.1.1 <to@example.com>: Recipient address rejected: user unknown",
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = failure_of(&run);
    assert_eq!(f.class, ProviderErrorClass::RecipientRejected, "{f:?}");
    assert_eq!(f.stage, "send");
    assert!(!f.maybe_handed_over, "a refusal is never a hand-over");
    assert!(!f.auth_failed);
    assert!(f.message.contains("user unknown"), "{}", f.message);
    assert!(
        run.seen.body.is_empty(),
        "no message data after a refused RCPT"
    );
}

#[tokio::test]
async fn unknown_recipient_without_pipelining_is_recipient_rejected() {
    let script = Script {
        ehlo: EHLO_PLAIN,
        rcpt: "550 5.1.1 user unknown",
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = failure_of(&run);
    assert_eq!(f.class, ProviderErrorClass::RecipientRejected, "{f:?}");
    assert!(!f.maybe_handed_over);
    assert!(
        !run.seen.saw("DATA"),
        "DATA is not sent after a refused RCPT"
    );
}

#[tokio::test]
async fn temporary_failure_on_mail_is_transient() {
    let script = Script {
        mail: "451 4.3.0 Temporary lookup failure",
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = failure_of(&run);
    assert_eq!(f.class, ProviderErrorClass::Transient, "{f:?}");
    assert!(!f.maybe_handed_over);
    assert!(!f.auth_failed);
    assert!(run.seen.body.is_empty());
}

#[tokio::test]
async fn temporary_failure_on_data_is_transient() {
    let script = Script {
        data: "451 4.3.0 Local error in processing",
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = failure_of(&run);
    assert_eq!(f.class, ProviderErrorClass::Transient, "{f:?}");
    assert!(!f.maybe_handed_over);
    assert!(run.seen.body.is_empty());
}

#[tokio::test]
async fn refusal_after_the_body_is_permanent() {
    let script = Script {
        after_body: Some("554 5.7.1 Message rejected: content policy"),
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = failure_of(&run);
    assert_eq!(f.class, ProviderErrorClass::Permanent, "{f:?}");
    assert!(
        !f.maybe_handed_over,
        "the server answered: it refused, nothing handed over"
    );
    assert!(!f.auth_failed);
    assert!(
        f.message.contains("554"),
        "reply code in message: {}",
        f.message
    );
    assert!(
        !run.seen.body.is_empty(),
        "the body was sent before the refusal"
    );
}

#[tokio::test]
async fn greeting_refusal_is_permanent_at_greeting_stage() {
    // The server refuses the session in its greeting.
    let (client, server) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(async move {
        let mut io = BufStream::new(server);
        reply(&mut io, "554 5.7.1 fake.example: no SMTP service here").await;
        read_line(&mut io).await
    });
    let result = tokio::time::timeout(
        TEST_DEADLINE,
        send_over(
            BufStream::new(client),
            "engine.example.com",
            None,
            Outgoing {
                from: "from@example.com",
                to: "to@example.com",
                message: b"Subject: x\r\n\r\nx\r\n".to_vec(),
            },
            &sleep_ms,
            5_000,
            true,
        ),
    )
    .await
    .unwrap();
    let f = result.unwrap_err();
    assert_eq!(f.stage, "greeting/ehlo");
    assert_eq!(f.class, ProviderErrorClass::Permanent, "{f:?}");
    assert!(!f.maybe_handed_over);
    server.await.unwrap();
}

// ---------------------------------------------------------------- AUTH

#[tokio::test]
async fn auth_plain_sends_base64_credentials_and_then_delivers() {
    let script = Script {
        ehlo: EHLO_AUTH,
        ..Script::default()
    };
    let run = converse(
        script,
        Some(("user", "pass")),
        message_with_dot_lines(),
        5_000,
    )
    .await;
    assert!(run.result.as_ref().unwrap().contains("queued as ABC"));
    let expected = format!(
        "AUTH PLAIN {}",
        base64::engine::general_purpose::STANDARD.encode(b"\0user\0pass")
    );
    assert_eq!(expected, "AUTH PLAIN AHVzZXIAcGFzcw==");
    let auth_at = run.seen.commands.iter().position(|c| *c == expected);
    let mail_at = run.seen.commands.iter().position(|c| c.starts_with("MAIL"));
    assert!(auth_at.is_some(), "{:?}", run.seen.commands);
    assert!(auth_at < mail_at, "AUTH happens before MAIL");
}

#[tokio::test]
async fn auth_login_is_used_when_plain_is_not_offered() {
    let script = Script {
        ehlo: EHLO_AUTH_LOGIN_ONLY,
        ..Script::default()
    };
    let run = converse(
        script,
        Some(("user", "pass")),
        message_with_dot_lines(),
        5_000,
    )
    .await;
    assert!(run.result.as_ref().unwrap().contains("queued as ABC"));
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let i = run
        .seen
        .commands
        .iter()
        .position(|c| c == "AUTH LOGIN")
        .expect("AUTH LOGIN sent");
    assert_eq!(run.seen.commands[i + 1], b64("user"));
    assert_eq!(run.seen.commands[i + 2], b64("pass"));
}

#[tokio::test]
async fn rejected_credentials_are_an_auth_failure() {
    let script = Script {
        ehlo: EHLO_AUTH,
        auth: Some("535 5.7.8 Authentication credentials invalid"),
        ..Script::default()
    };
    let run = converse(
        script,
        Some(("user", "wrong")),
        message_with_dot_lines(),
        5_000,
    )
    .await;
    let f = failure_of(&run);
    assert!(f.auth_failed, "{f:?}");
    assert_eq!(f.class, ProviderErrorClass::CredentialsRejected);
    assert_eq!(f.stage, "auth");
    assert!(!f.maybe_handed_over);
    assert!(
        !run.seen.saw("MAIL"),
        "nothing is sent after a refused login"
    );
}

#[tokio::test]
async fn rejected_credentials_are_an_auth_failure_whatever_the_wording() {
    // Gmail's wording names neither "auth" nor the code in its text.
    let script = Script {
        ehlo: EHLO_AUTH,
        auth: Some("535 5.7.8 Username and Password not accepted. Learn more at https://support.google.com/mail/?p=BadCredentials"),
        ..Script::default()
    };
    let run = converse(
        script,
        Some(("user", "wrong")),
        message_with_dot_lines(),
        5_000,
    )
    .await;
    let f = failure_of(&run);
    assert!(f.auth_failed, "{f:?}");
    assert_eq!(f.class, ProviderErrorClass::CredentialsRejected);
    assert_eq!(f.stage, "auth");
}

#[tokio::test]
async fn silent_server_during_auth_is_transient_not_an_auth_failure() {
    let script = Script {
        ehlo: EHLO_AUTH,
        auth: None,
        ..Script::default()
    };
    let run = converse(
        script,
        Some(("user", "pass")),
        message_with_dot_lines(),
        200,
    )
    .await;
    let f = failure_of(&run);
    assert_eq!(f.stage, "auth");
    assert!(!f.auth_failed, "{f:?}");
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert!(!f.maybe_handed_over);
    assert!(run.elapsed < Duration::from_secs(3), "{:?}", run.elapsed);
}

// ---------------------------------------------------------------- lost connections

#[tokio::test]
async fn silent_server_after_greeting_times_out_quickly() {
    let script = Script {
        silent_after_greeting: true,
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 200).await;
    let f = failure_of(&run);
    assert_eq!(f.stage, "greeting/ehlo");
    assert!(f.message.contains("200 ms"), "{}", f.message);
    assert!(f.message.contains("no reply"), "{}", f.message);
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert!(!f.maybe_handed_over);
    assert!(!f.auth_failed);
    assert!(
        run.elapsed >= Duration::from_millis(200),
        "{:?}",
        run.elapsed
    );
    assert!(run.elapsed < Duration::from_secs(2), "{:?}", run.elapsed);
    assert!(
        run.seen.client_closed,
        "the client hangs up after the timeout"
    );
}

#[tokio::test]
async fn connection_lost_after_the_body_may_have_handed_over() {
    let script = Script {
        after_body: None,
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = failure_of(&run);
    assert!(f.maybe_handed_over, "{f:?}");
    assert_ne!(f.class, ProviderErrorClass::RecipientRejected);
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert_eq!(f.stage, "send");
    assert!(!f.auth_failed);
    assert!(
        run.seen.body.ends_with(b"\r\n.\r\n"),
        "the whole message was sent"
    );
}
