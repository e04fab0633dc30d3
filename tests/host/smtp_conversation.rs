//! Host tests of the SMTP conversation (`outbox::smtp::send_over`): the real async-smtp client,
//! through the engine's `Wire`, talks over an in-memory duplex pipe to the scripted server of
//! `tests/host/smtp_fake`. Replies to the final dot, timeouts and real servers' refusals have their own
//! files (`smtp_final_reply.rs`, `smtp_replies.rs`).

use crate::smtp_fake;

use base64::Engine as _;
use booking_email_engine::domain::outbox::ProviderErrorClass;
use smtp_fake::*;
use std::time::Duration;

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

// ---------------------------------------------------------------- success

#[tokio::test]
async fn one_command_at_a_time_even_when_the_server_offers_pipelining() {
    let run = converse(Script::default(), None, message_with_dot_lines(), 5_000).await;
    let reply = run.result.as_ref().expect("delivered");
    assert_eq!(reply, "250 2.0.0 Ok: queued as ABC");

    let seen = &run.seen;
    assert_eq!(seen.commands[0], "EHLO engine.example.com");
    assert!(
        seen.saw("MAIL FROM:<from@example.com>"),
        "{:?}",
        seen.commands
    );
    assert!(seen.saw("RCPT TO:<to@example.com>"), "{:?}", seen.commands);
    assert_eq!(seen.verbs(), ["EHLO", "MAIL", "RCPT", "DATA", "QUIT"]);
    assert!(!seen.saw("AUTH"), "no credentials, no AUTH");
    assert_eq!(seen.transactions, 1);
}

#[tokio::test]
async fn conversation_without_pipelining_delivers_too() {
    let script = Script {
        ehlo: EHLO_PLAIN,
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    assert!(run.result.as_ref().unwrap().contains("queued as ABC"));
    assert_eq!(run.seen.verbs(), ["EHLO", "MAIL", "RCPT", "DATA", "QUIT"]);
}

#[tokio::test]
async fn a_multi_line_or_bare_greeting_is_read() {
    for greeting in [
        &b"220-fake.example ESMTP\r\n220 welcome\r\n"[..],
        b"220\r\n",
        b"\r\n220 fake.example\n",
    ] {
        let script = Script {
            greeting,
            ..Script::default()
        };
        let run = converse(script, None, short_message(), 5_000).await;
        assert!(run.result.is_ok(), "{greeting:?}: {:?}", run.result);
    }
}

#[tokio::test]
async fn starttls_upgrades_then_says_ehlo_again() {
    let script = Script {
        ehlo: EHLO_STARTTLS,
        ..Script::default()
    };
    let run = converse_starttls(script, 5_000).await;
    assert!(run.result.is_ok(), "{:?}", run.result);
    assert_eq!(
        run.seen.verbs(),
        ["EHLO", "STARTTLS", "EHLO", "MAIL", "RCPT", "DATA", "QUIT"]
    );
}

#[tokio::test]
async fn starttls_asked_of_a_server_that_does_not_offer_it_is_our_configuration() {
    let run = converse_starttls(Script::default(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::Configuration, "{f:?}");
    assert_eq!(f.command, "STARTTLS");
    assert!(f.message.contains("SMTP_TLS"), "{}", f.message);
    assert!(!run.seen.saw("MAIL"));
}

#[tokio::test]
async fn a_tls_handshake_the_runtime_refuses_after_starttls_is_our_configuration() {
    // workerd's words for a certificate it does not trust (kj/compat/tls.c++), and what it gives
    // JavaScript instead (the reason only in its own log): the socket's read fails right after
    // the server's 220 to STARTTLS, before the second EHLO is answered.
    for error in [
        "Error: internal error; reference = 4b014ldgapjdcn7rblcidhnc",
        "Error: TLS peer's certificate is not trusted; reason = self signed certificate",
        "TLS peer's certificate is not trusted; reason = certificate has expired",
        "TLS peer's certificate is not trusted; reason = Hostname mismatch",
        "Network connection lost.",
    ] {
        let script = Script {
            ehlo: EHLO_STARTTLS,
            ..Script::default()
        };
        let run = converse_starttls_refused(script, error).await;
        let f = run.failure();
        assert_eq!(f.class, ProviderErrorClass::Configuration, "{error}: {f:?}");
        assert_eq!(f.fault, "TLS handshake");
        assert!(!f.maybe_handed_over);
        assert!(f.message.contains("TLS handshake"), "{}", f.message);
        assert!(
            f.message.contains(error.trim_start_matches("Error: ")),
            "{}",
            f.message
        );
        assert!(!run.seen.saw("MAIL"), "{error}");
    }
}

#[tokio::test]
async fn a_tls_handshake_refused_on_implicit_tls_is_our_configuration() {
    let f = converse_implicit_refused("Error: internal error; reference = x")
        .await
        .unwrap_err();
    assert_eq!(f.class, ProviderErrorClass::Configuration, "{f:?}");
    assert_eq!(f.command, "greeting");
    assert_eq!(f.fault, "TLS handshake");
}

#[tokio::test]
async fn a_connection_lost_after_the_handshake_is_retried() {
    // The second EHLO was answered: the TLS session stands; a later loss is transient.
    let script = Script {
        ehlo: EHLO_STARTTLS,
        close_on_data: true,
        ..Script::default()
    };
    let run = converse_starttls(script, 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::Transient, "{f:?}");
    assert_ne!(f.fault, "TLS handshake");
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
        region: booking_email_engine::domain::i18n::Region::DEFAULT,
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

/// One conversation that must fail: what the server answers, and how the engine files it. Every
/// case sends [`message_with_dot_lines`] and every step may take 5 s.
struct Failing {
    /// What the case shows; named in a failing assertion.
    name: &'static str,
    script: Script,
    /// Our login (user, password), when the case signs in.
    login: Option<(&'static str, &'static str)>,
    class: ProviderErrorClass,
    /// The step the failure names.
    command: &'static str,
    /// The case's own checks besides class, step and "nothing was handed over".
    then: fn(&Run),
}

impl Failing {
    /// A case that does not sign in and has no checks of its own.
    fn new(
        name: &'static str,
        script: Script,
        class: ProviderErrorClass,
        command: &'static str,
    ) -> Self {
        let then = |_: &Run| {};
        Failing {
            name,
            script,
            login: None,
            class,
            command,
            then,
        }
    }

    fn signed_in_as(self, user: &'static str, password: &'static str) -> Self {
        let login = Some((user, password));
        Failing { login, ..self }
    }

    fn then(self, then: fn(&Run)) -> Self {
        Failing { then, ..self }
    }
}

/// Postfix's answer to a recipient it has no mailbox for.
const UNKNOWN_USER: &str =
    "550 5.1.1 <to@example.com>: Recipient address rejected: User unknown in local recipient table";
/// Postfix's sender restriction, answered at RCPT TO (`smtpd_delay_reject = yes`): the reply names
/// our MAIL FROM address.
const OUR_SENDER_AT_RCPT: &str =
    "550 5.1.0 <from@example.com>: Sender address rejected: User unknown in local recipient table";
/// A sender the relay's login may not use.
const SENDER_NOT_OWNED: &str =
    "553 5.7.1 <from@example.com>: Sender address rejected: not owned by user engine";
/// Gmail's DMARC refusal of the message, a multi-line reply to the final dot.
const DMARC_REFUSAL: &[u8] = b"550-5.7.26 Unauthenticated email from example.com is not accepted due to\r\n550 5.7.26 domain's DMARC policy.\r\n";
/// Gmail's refused login: its wording names neither "auth" nor the code in its text.
const GMAIL_BAD_CREDENTIALS: &str = "535 5.7.8 Username and Password not accepted. Learn more at https://support.google.com/mail/?p=BadCredentials";

/// The failing conversations: refused at each step, a refused login, a connection lost.
fn failing() -> Vec<Failing> {
    use ProviderErrorClass::*;
    let mut cases = Vec::from([
        Failing::new(
            "an unknown recipient is the recipient's",
            Script {
                rcpt: UNKNOWN_USER,
                ..Script::default()
            },
            RecipientRejected,
            "RCPT TO",
        )
        .then(|run| {
            let f = run.failure();
            assert!(f.message.contains("User unknown"), "{}", f.message);
            assert!(f.message.starts_with("550 5.1.1"), "{}", f.message);
            assert!(!run.seen.saw("DATA"), "DATA is not sent after a refused RCPT");
            assert_eq!(run.seen.transactions, 0);
            // The session ends with QUIT, not by leaving the relay's connection open.
            assert_eq!(run.seen.verbs(), ["EHLO", "MAIL", "RCPT", "QUIT"]);
        }),
        Failing::new(
            "a refused sender is our configuration, not the recipient's fault",
            Script {
                mail: SENDER_NOT_OWNED,
                ..Script::default()
            },
            Configuration,
            "MAIL FROM",
        )
        .signed_in_as("engine", "pass")
        .then(|run| {
            assert_eq!(run.failure().message, SENDER_NOT_OWNED);
            assert!(!run.seen.saw("RCPT"), "nothing after a refused sender");
            let verbs = run.seen.verbs();
            assert_eq!(verbs.last(), Some(&"QUIT"), "{verbs:?}");
        }),
        // The same code as a relay refusal, for one recipient's access rule: dropped (not
        // suppressed), the route goes on.
        Failing::new(
            "a recipient's own rule at RCPT is the recipient's",
            Script {
                rcpt: "554 5.7.1 <to@example.com>: Recipient address rejected: Access denied",
                ..Script::default()
            },
            RecipientDeclined,
            "RCPT TO",
        )
        .then(|run| assert!(!run.seen.saw("DATA"))),
        Failing::new(
            "a temporary failure on MAIL is transient",
            Script {
                mail: "451 4.3.0 Temporary lookup failure",
                ..Script::default()
            },
            Transient,
            "MAIL FROM",
        )
        .then(nothing_sent),
        Failing::new(
            "a temporary failure on DATA is transient",
            Script {
                data: "451 4.3.0 Local error in processing",
                ..Script::default()
            },
            Transient,
            "DATA",
        )
        .then(nothing_sent),
        // The server answered the final dot: it refused, nothing was handed over.
        Failing::new(
            "a policy refusal of the message is ours",
            Script {
                after_body: Some(DMARC_REFUSAL),
                ..Script::default()
            },
            Configuration,
            "end of data",
        )
        .then(|run| {
            assert_eq!(
                run.failure().message,
                "550 5.7.26 Unauthenticated email from example.com is not accepted due to domain's DMARC policy."
            );
            assert_eq!(
                run.seen.transactions, 1,
                "the body was sent before the refusal"
            );
        }),
        // Postfix's `body_checks` REJECT, as a private Postfix answered it (tests/e2e-postfix).
        Failing::new(
            "a content verdict after the data may be this message alone, and the session still quits",
            Script {
                after_body: Some(b"550 5.7.1 message content rejected by policy\r\n"),
                ..Script::default()
            },
            MessageRefused,
            "end of data",
        )
        .then(|run| {
            let f = run.failure();
            assert_eq!(f.message, "550 5.7.1 message content rejected by policy");
            assert_eq!(f.fault, "end of data 550 5.7.1");
            // QUIT follows, and its 221 does not replace the refusal.
            assert_eq!(run.seen.verbs(), ["EHLO", "MAIL", "RCPT", "DATA", "QUIT"]);
        }),
        Failing::new(
            "a greeting refusal is our configuration at the greeting",
            Script {
                greeting: b"554 5.7.1 fake.example: no SMTP service here\r\n",
                ..Script::default()
            },
            Configuration,
            "greeting",
        ),
        Failing::new(
            "a refused login exchange after a challenge is still AUTH",
            Script {
                ehlo: EHLO_AUTH_LOGIN_ONLY,
                auth: Some("535 5.7.8 Error: authentication failed: authentication failure"),
                ..Script::default()
            },
            CredentialsRejected,
            "AUTH",
        )
        .signed_in_as("user", "wrong"),
        // RFC 4954 §6: 454 4.7.0 "Temporary authentication failure".
        Failing::new(
            "a temporary authentication failure is transient",
            Script {
                ehlo: EHLO_AUTH,
                auth: Some("454 4.7.0 Temporary authentication failure"),
                ..Script::default()
            },
            Transient,
            "AUTH",
        )
        .signed_in_as("user", "pass"),
        Failing::new(
            "a connection lost before the final dot handed nothing over",
            Script {
                close_on_data: true,
                ..Script::default()
            },
            Transient,
            "DATA",
        )
        .then(|run| {
            let f = run.failure();
            assert!(
                f.message
                    .contains("connection closed while waiting for the reply to DATA"),
                "{}",
                f.message
            );
            assert_eq!(run.seen.transactions, 0);
        }),
    ]);
    // Relay denied at RCPT is ours whichever server says it: Postfix's enhanced code is the one it
    // also gives a recipient's own rule (5.7.1), Exim gives none; the relay refusal is read from
    // their fixed words. Our own sender refused at RCPT is ours too.
    let ours_at_rcpt = [
        "554 5.7.1 <to@example.com>: Relay access denied",
        "550 relay not permitted",
        OUR_SENDER_AT_RCPT,
    ];
    cases.extend(ours_at_rcpt.map(|rcpt| {
        let script = Script {
            rcpt,
            ..Script::default()
        };
        Failing::new(rcpt, script, Configuration, "RCPT TO")
    }));
    // Rejected credentials are credentials rejected, whatever the wording.
    let refusals = [
        "535 5.7.8 Authentication credentials invalid",
        GMAIL_BAD_CREDENTIALS,
        "535 Incorrect authentication data",
    ];
    cases.extend(refusals.map(|refusal| {
        let script = Script {
            ehlo: EHLO_AUTH,
            auth: Some(refusal),
            ..Script::default()
        };
        Failing::new(refusal, script, CredentialsRejected, "AUTH")
            .signed_in_as("user", "wrong")
            .then(|run| {
                assert!(
                    !run.seen.saw("MAIL"),
                    "nothing is sent after a refused login"
                )
            })
    }));
    cases
}

/// Nothing of the message reached the server.
fn nothing_sent(run: &Run) {
    assert!(run.seen.body.is_empty());
}

#[tokio::test]
async fn each_failing_conversation_is_filed_by_class_and_step_and_hands_nothing_over() {
    for case in failing() {
        let run = converse(case.script, case.login, message_with_dot_lines(), 5_000).await;
        let f = run.failure();
        let name = case.name;
        assert_eq!(f.class, case.class, "{name}: {f:?}");
        assert_eq!(f.command, case.command, "{name}: {f:?}");
        assert!(
            !f.maybe_handed_over,
            "{name}: a refusal is never a hand-over"
        );
        (case.then)(&run);
    }
}

// ---------------------------------------------------------------- AUTH

/// A delivery signed in as `user` / `pass` to a server whose EHLO reply is `ehlo`: it was queued.
async fn signed_in(ehlo: &'static [&'static str]) -> Run {
    let script = Script {
        ehlo,
        ..Script::default()
    };
    let login = Some(("user", "pass"));
    let run = converse(script, login, message_with_dot_lines(), 5_000).await;
    assert!(run.result.as_ref().unwrap().contains("queued as ABC"));
    run
}

#[tokio::test]
async fn auth_plain_sends_base64_credentials_and_then_delivers() {
    let run = signed_in(EHLO_AUTH).await;
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
    let run = signed_in(EHLO_AUTH_LOGIN_ONLY).await;
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
    let f = run.assert_no_reply_within("AUTH", 200);
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert!(!f.maybe_handed_over);
    run.assert_ended_before(3_000);
}

// ---------------------------------------------------------------- lost connections

#[tokio::test]
async fn silent_server_after_greeting_times_out_quickly() {
    let script = Script {
        silent_after_greeting: true,
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 200).await;
    let f = run.assert_no_reply_within("EHLO", 200);
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert!(!f.maybe_handed_over);
    assert!(
        run.elapsed >= Duration::from_millis(200),
        "{:?}",
        run.elapsed
    );
    run.assert_ended_before(2_000);
    assert!(
        run.seen.client_closed,
        "the client hangs up after the timeout"
    );
}
