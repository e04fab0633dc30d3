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

#[tokio::test]
async fn unknown_recipient_is_recipient_rejected() {
    let script = Script {
        rcpt: "550 5.1.1 <to@example.com>: Recipient address rejected: User unknown in local recipient table",
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::RecipientRejected, "{f:?}");
    assert_eq!(f.command, "RCPT TO");
    assert!(!f.maybe_handed_over, "a refusal is never a hand-over");
    assert!(f.message.contains("User unknown"), "{}", f.message);
    assert!(f.message.starts_with("550 5.1.1"), "{}", f.message);
    assert!(
        !run.seen.saw("DATA"),
        "DATA is not sent after a refused RCPT"
    );
    assert_eq!(run.seen.transactions, 0);
    // The session ends with QUIT, not by leaving the relay's connection open.
    assert_eq!(run.seen.verbs(), ["EHLO", "MAIL", "RCPT", "QUIT"]);
}

#[tokio::test]
async fn a_refused_sender_is_our_configuration_not_the_recipients_fault() {
    let script = Script {
        mail: "553 5.7.1 <from@example.com>: Sender address rejected: not owned by user engine",
        ..Script::default()
    };
    let run = converse(script, Some(("engine", "pass")), short_message(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::Configuration, "{f:?}");
    assert_eq!(f.command, "MAIL FROM");
    assert_eq!(
        f.message,
        "553 5.7.1 <from@example.com>: Sender address rejected: not owned by user engine"
    );
    assert!(!run.seen.saw("RCPT"), "nothing after a refused sender");
    assert_eq!(
        run.seen.verbs().last(),
        Some(&"QUIT"),
        "{:?}",
        run.seen.verbs()
    );
}

#[tokio::test]
async fn relay_denied_at_rcpt_is_ours_whichever_server_says_it() {
    // Postfix's enhanced code is the one it also gives a recipient's own rule (5.7.1); Exim gives
    // none: the relay refusal is read from their fixed words.
    for rcpt in [
        "554 5.7.1 <to@example.com>: Relay access denied",
        "550 relay not permitted",
    ] {
        let script = Script {
            rcpt,
            ..Script::default()
        };
        let run = converse(script, None, short_message(), 5_000).await;
        let f = run.failure();
        assert_eq!(f.class, ProviderErrorClass::Configuration, "{rcpt}: {f:?}");
        assert_eq!(f.command, "RCPT TO");
    }
}

#[tokio::test]
async fn our_sender_refused_at_rcpt_is_ours_and_a_recipients_rule_is_the_recipients() {
    // Postfix answers its sender restrictions at RCPT TO (smtpd_delay_reject = yes): the reply
    // names our MAIL FROM address.
    let sender = Script {
        rcpt: "550 5.1.0 <from@example.com>: Sender address rejected: User unknown in local recipient table",
        ..Script::default()
    };
    let run = converse(sender, None, short_message(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::Configuration, "{f:?}");
    assert_eq!(f.command, "RCPT TO");
    // The same code for one recipient's access rule: dropped (not suppressed), the route goes on.
    let policy = Script {
        rcpt: "554 5.7.1 <to@example.com>: Recipient address rejected: Access denied",
        ..Script::default()
    };
    let run = converse(policy, None, short_message(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::RecipientDeclined, "{f:?}");
    assert!(!f.maybe_handed_over);
    assert!(!run.seen.saw("DATA"));
}

#[tokio::test]
async fn temporary_failure_on_mail_is_transient() {
    let script = Script {
        mail: "451 4.3.0 Temporary lookup failure",
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::Transient, "{f:?}");
    assert_eq!(f.command, "MAIL FROM");
    assert!(!f.maybe_handed_over);
    assert!(run.seen.body.is_empty());
}

#[tokio::test]
async fn temporary_failure_on_data_is_transient() {
    let script = Script {
        data: "451 4.3.0 Local error in processing",
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::Transient, "{f:?}");
    assert_eq!(f.command, "DATA");
    assert!(!f.maybe_handed_over);
    assert!(run.seen.body.is_empty());
}

#[tokio::test]
async fn a_policy_refusal_of_the_message_is_ours_and_nothing_was_handed_over() {
    let script = Script {
        after_body: Some(b"550-5.7.26 Unauthenticated email from example.com is not accepted due to\r\n550 5.7.26 domain's DMARC policy.\r\n"),
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::Configuration, "{f:?}");
    assert_eq!(f.command, "end of data");
    assert!(
        !f.maybe_handed_over,
        "the server answered: it refused, nothing handed over"
    );
    assert_eq!(
        f.message,
        "550 5.7.26 Unauthenticated email from example.com is not accepted due to domain's DMARC policy."
    );
    assert_eq!(
        run.seen.transactions, 1,
        "the body was sent before the refusal"
    );
}

#[tokio::test]
async fn a_content_verdict_after_the_data_may_be_this_message_alone_and_the_session_still_quits() {
    // Postfix's `body_checks` REJECT, as a private Postfix answered it (tests/e2e-postfix).
    let script = Script {
        after_body: Some(b"550 5.7.1 message content rejected by policy\r\n"),
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::MessageRefused, "{f:?}");
    assert_eq!(f.command, "end of data");
    assert_eq!(f.message, "550 5.7.1 message content rejected by policy");
    assert_eq!(f.fault, "end of data 550 5.7.1");
    assert!(!f.maybe_handed_over);
    // QUIT follows, and its 221 does not replace the refusal.
    assert_eq!(run.seen.verbs(), ["EHLO", "MAIL", "RCPT", "DATA", "QUIT"]);
}

#[tokio::test]
async fn greeting_refusal_is_our_configuration_at_the_greeting() {
    let script = Script {
        greeting: b"554 5.7.1 fake.example: no SMTP service here\r\n",
        ..Script::default()
    };
    let run = converse(script, None, short_message(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.command, "greeting");
    assert_eq!(f.class, ProviderErrorClass::Configuration, "{f:?}");
    assert!(!f.maybe_handed_over);
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
async fn rejected_credentials_are_credentials_rejected_whatever_the_wording() {
    for refusal in [
        "535 5.7.8 Authentication credentials invalid",
        // Gmail's wording names neither "auth" nor the code in its text.
        "535 5.7.8 Username and Password not accepted. Learn more at https://support.google.com/mail/?p=BadCredentials",
        "535 Incorrect authentication data",
    ] {
        let script = Script {
            ehlo: EHLO_AUTH,
            auth: Some(refusal),
            ..Script::default()
        };
        let run = converse(script, Some(("user", "wrong")), message_with_dot_lines(), 5_000).await;
        let f = run.failure();
        assert_eq!(f.class, ProviderErrorClass::CredentialsRejected, "{refusal}");
        assert_eq!(f.command, "AUTH");
        assert!(!f.maybe_handed_over);
        assert!(!run.seen.saw("MAIL"), "nothing is sent after a refused login");
    }
}

#[tokio::test]
async fn a_refused_login_exchange_after_a_challenge_is_still_auth() {
    let script = Script {
        ehlo: EHLO_AUTH_LOGIN_ONLY,
        auth: Some("535 5.7.8 Error: authentication failed: authentication failure"),
        ..Script::default()
    };
    let run = converse(script, Some(("user", "wrong")), short_message(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::CredentialsRejected, "{f:?}");
    assert_eq!(f.command, "AUTH");
}

#[tokio::test]
async fn a_temporary_authentication_failure_is_transient() {
    // RFC 4954 §6: 454 4.7.0 "Temporary authentication failure".
    let script = Script {
        ehlo: EHLO_AUTH,
        auth: Some("454 4.7.0 Temporary authentication failure"),
        ..Script::default()
    };
    let run = converse(script, Some(("user", "pass")), short_message(), 5_000).await;
    let f = run.failure();
    assert_eq!(f.class, ProviderErrorClass::Transient, "{f:?}");
    assert_eq!(f.command, "AUTH");
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

#[tokio::test]
async fn connection_lost_before_the_final_dot_handed_nothing_over() {
    let script = Script {
        close_on_data: true,
        ..Script::default()
    };
    let run = converse(script, None, message_with_dot_lines(), 5_000).await;
    let f = run.failure();
    assert!(!f.maybe_handed_over, "{f:?}");
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert_eq!(f.command, "DATA");
    assert!(
        f.message
            .contains("connection closed while waiting for the reply to DATA"),
        "{}",
        f.message
    );
    assert_eq!(run.seen.transactions, 0);
}
