//! The reply to the final dot, the way real servers send it (RFC 5321 §4.2: the text after the code
//! is optional), and the time each step may take (§4.5.3.2). Every accepted case is exactly one
//! DATA transaction at the server; only a connection lost *after* the final dot is uncertain.

use crate::smtp_fake;

use booking_email_engine::domain::outbox::smtp::SmtpTimeouts;
use booking_email_engine::domain::outbox::ProviderErrorClass;
use smtp_fake::*;
use std::time::Duration;

/// For each `(case, reply to the final dot, the reply the engine reports)`: one conversation that
/// hands the message over exactly once.
async fn each_is_one_hand_over(cases: &[(&str, &'static [u8], &str)]) {
    for (name, reply, want) in cases {
        let script = Script {
            after_body: Some(reply),
            ..Script::default()
        };
        let run = converse(script, None, short_message(), 2_000).await;
        run.assert_handed_over_once(want, name);
    }
}

/// Every reply to the final dot that means "handed over", and what the engine reports as the reply.
#[tokio::test]
async fn every_2xx_reply_to_the_final_dot_is_one_hand_over() {
    let cases: &[(&str, &[u8], &str)] = &[
        ("bare 250 with CR LF", b"250\r\n", "250"),
        ("bare 250 with LF", b"250\n", "250"),
        ("250 and a space", b"250 \r\n", "250"),
        ("blank line, then 250 OK", b"\r\n250 OK\r\n", "250 OK"),
        ("two blank LF lines, then 250 OK", b"\n\n250 OK\n", "250 OK"),
        (
            "multi-line 250-",
            b"250-2.0.0 Ok\r\n250 2.0.0 queued as 4F2B1\r\n",
            "250 2.0.0 Ok queued as 4F2B1",
        ),
        (
            "multi-line with an empty first text",
            b"250-\r\n250 queued\r\n",
            "250 queued",
        ),
        ("Mailgun", b"250 Great success\r\n", "250 Great success"),
        (
            "251 (forwarding)",
            b"251 2.1.5 will forward\r\n",
            "251 2.1.5 will forward",
        ),
    ];
    each_is_one_hand_over(cases).await;
}

/// The accepting replies real servers send to the final dot, as their sources write them: lower
/// case, queue ids, two spaces, trailing blanks, multi-line with enhanced codes, bare LF. Each is
/// one DATA transaction and reads as handed over, with the server's text kept (trimmed).
#[tokio::test]
async fn the_2xx_forms_real_servers_send_are_each_one_hand_over() {
    let cases: &[(&str, &[u8], &str)] = &[
        (
            // Postfix src/smtpd/smtpd.c: "250 2.0.0 Ok: queued as %s".
            "Postfix",
            b"250 2.0.0 Ok: queued as 4Y7Kq23xz9z1\r\n",
            "250 2.0.0 Ok: queued as 4Y7Kq23xz9z1",
        ),
        (
            // qmail-smtpd.c (notqmail) acceptmessage(): "250 ok <time> qp <pid>", lower case.
            "qmail",
            b"250 ok 1733390000 qp 12345\r\n",
            "250 ok 1733390000 qp 12345",
        ),
        (
            // Exim src/src/receive.c: "250 OK id=%s".
            "Exim",
            b"250 OK id=1tJ5Xa-000Abc-7Q\r\n",
            "250 OK id=1tJ5Xa-000Abc-7Q",
        ),
        (
            // OpenSMTPD usr.sbin/smtpd/smtp_session.c: "250 2.0.0 %08x Message accepted for
            // delivery".
            "OpenSMTPD",
            b"250 2.0.0 1a2b3c4d Message accepted for delivery\r\n",
            "250 2.0.0 1a2b3c4d Message accepted for delivery",
        ),
        (
            // Haraka connection.js: "Message Queued (<transaction uuid>)".
            "Haraka",
            b"250 Message Queued (4F3A2B1C-5D6E-4F70-8A9B-0C1D2E3F4A5B.1)\r\n",
            "250 Message Queued (4F3A2B1C-5D6E-4F70-8A9B-0C1D2E3F4A5B.1)",
        ),
        (
            // smtp.gmail.com, two spaces after OK, as nodemailer reports it; the text kept for
            // the record is one line with its runs of blanks folded.
            "Gmail",
            b"250 2.0.0 OK  1658043820 q93-56600b001f061359022sm8791552pjk.54 - gsmtp\r\n",
            "250 2.0.0 OK 1658043820 q93-56600b001f061359022sm8791552pjk.54 - gsmtp",
        ),
        (
            "trailing blanks",
            b"250 2.0.0 Ok: queued as ABC  \t \r\n",
            "250 2.0.0 Ok: queued as ABC",
        ),
        ("lower-case bare ok with LF", b"250 ok\n", "250 ok"),
        (
            "multi-line with enhanced codes, bare LF",
            b"250-2.0.0 Ok\n250-2.0.0 queued as 4F2B1\n250 2.0.0 see you\n",
            "250 2.0.0 Ok queued as 4F2B1 see you",
        ),
    ];
    each_is_one_hand_over(cases).await;
}

/// A reply to the final dot that arrives in several TCP reads — cut inside a line, between its
/// CR and LF, or between the lines of a multi-line reply — is read whole, once.
#[tokio::test]
async fn a_final_reply_split_across_reads_is_one_hand_over() {
    let cases: &[(&str, &[&[u8]], &str)] = &[
        (
            "inside the text",
            &[b"250 2.0.0 Ok: que", b"ued as ABC\r\n"],
            "250 2.0.0 Ok: queued as ABC",
        ),
        ("inside the code", &[b"25", b"0 OK\r\n"], "250 OK"),
        ("between CR and LF", &[b"250 OK\r", b"\n"], "250 OK"),
        ("a bare 250 before its CR LF", &[b"250", b"\r\n"], "250"),
        (
            "between the lines of a multi-line reply",
            &[b"250-2.0.0 Ok\r\n", b"250 2.0.0 queued as 4F2B1\r\n"],
            "250 2.0.0 Ok queued as 4F2B1",
        ),
        (
            "a blank line, then the reply in pieces",
            &[b"\r\n", b"250 ", b"OK\r\n"],
            "250 OK",
        ),
    ];
    for (name, parts, want) in cases {
        let script = Script {
            after_body_parts: parts,
            after_body_gap_ms: 50,
            ..Script::default()
        };
        let run = converse(script, None, short_message(), 2_000).await;
        run.assert_handed_over_once(want, name);
    }
}

#[tokio::test]
async fn a_slow_final_reply_within_its_own_limit_is_waited_for() {
    // Each command may take 300 ms, the final reply 3 s: a relay that answers the dot after 1 s is
    // a success (one timeout for the whole conversation used to cut it off).
    let limits = SmtpTimeouts {
        final_reply_ms: 3_000,
        ..timeouts(300)
    };
    let script = Script {
        after_body_delay_ms: 1_000,
        ..Script::default()
    };
    let run = converse_with(script, None, short_message(), limits).await;
    assert_eq!(run.result.as_deref(), Ok("250 2.0.0 Ok: queued as ABC"));
    assert!(
        run.elapsed >= Duration::from_millis(1_000),
        "{:?}",
        run.elapsed
    );
    assert_eq!(run.seen.transactions, 1);
}

#[tokio::test]
async fn a_final_reply_later_than_its_limit_is_an_uncertain_hand_over() {
    let limits = SmtpTimeouts {
        final_reply_ms: 300,
        ..timeouts(2_000)
    };
    let script = Script {
        after_body_delay_ms: 1_500,
        ..Script::default()
    };
    let run = converse_with(script, None, short_message(), limits).await;
    let f = run.assert_no_reply_within("end of data", 300);
    assert!(f.maybe_handed_over, "{f:?}");
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert!(f.message.contains("may have the message"), "{}", f.message);
    run.assert_ended_before(1_400);
    assert_eq!(run.seen.transactions, 1);
}

#[tokio::test]
async fn connection_closed_after_the_dot_may_have_handed_over() {
    let script = Script {
        after_body: None,
        ..Script::default()
    };
    let run = converse(script, None, short_message(), 2_000).await;
    let f = run.failure();
    assert!(f.maybe_handed_over, "{f:?}");
    assert_ne!(f.class, ProviderErrorClass::RecipientRejected);
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert_eq!(f.command, "end of data");
    assert!(
        f.message
            .contains("connection closed while waiting for the reply to end of data"),
        "{}",
        f.message
    );
    assert!(
        run.seen.body.ends_with(b"\r\n.\r\n"),
        "the whole message was sent"
    );
    assert_eq!(run.seen.transactions, 1);
}

#[tokio::test]
async fn an_unreadable_reply_to_the_dot_is_uncertain_not_a_refusal() {
    let script = Script {
        after_body: Some(b"hello there\r\n"),
        ..Script::default()
    };
    let run = converse(script, None, short_message(), 500).await;
    let f = run.failure();
    assert!(f.maybe_handed_over, "{f:?}");
    assert_eq!(f.class, ProviderErrorClass::Transient);
}

#[tokio::test]
async fn a_slow_reply_to_mail_from_beyond_its_limit_hands_nothing_over() {
    let limits = SmtpTimeouts {
        final_reply_ms: 5_000,
        ..timeouts(300)
    };
    let script = Script {
        mail_delay_ms: 1_000,
        ..Script::default()
    };
    let run = converse_with(script, None, short_message(), limits).await;
    let f = run.assert_no_reply_within("MAIL FROM", 300);
    assert!(!f.maybe_handed_over, "{f:?}");
    assert_eq!(run.seen.transactions, 0);
}

/// Every limit but `changed` is long (5 s), so the step that timed out is the one under test.
fn only(changed: impl FnOnce(&mut SmtpTimeouts)) -> SmtpTimeouts {
    let mut limits = timeouts(5_000);
    changed(&mut limits);
    limits
}

#[tokio::test]
async fn a_greeting_later_than_its_limit_hands_nothing_over() {
    let limits = only(|l| l.greeting_ms = 300);
    let script = Script {
        greeting_delay_ms: 1_500,
        ..Script::default()
    };
    let run = converse_with(script, None, short_message(), limits).await;
    let f = run.assert_no_reply_within("greeting", 300);
    assert!(!f.maybe_handed_over, "{f:?}");
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert!(run.seen.commands.is_empty(), "{:?}", run.seen.commands);
    assert_eq!(run.seen.transactions, 0);
    run.assert_ended_before(1_400);
}

#[tokio::test]
async fn a_354_later_than_the_data_limit_hands_nothing_over() {
    let limits = only(|l| l.data_init_ms = 300);
    let script = Script {
        data_delay_ms: 1_500,
        ..Script::default()
    };
    let run = converse_with(script, None, short_message(), limits).await;
    let f = run.assert_no_reply_within("DATA", 300);
    assert!(!f.maybe_handed_over, "{f:?}");
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert!(run.seen.body.is_empty(), "no message data before the 354");
    assert_eq!(run.seen.transactions, 0);
    run.assert_ended_before(1_400);
}

#[tokio::test]
async fn a_message_write_that_stalls_beyond_the_data_block_limit_hands_nothing_over() {
    // A 4 KiB pipe and a server that reads nothing of the message for 1.5 s: the client's writes
    // stall long before the final dot.
    let limits = only(|l| l.data_block_ms = 300);
    let script = Script {
        data_stall_ms: 1_500,
        pipe_bytes: 4_096,
        ..Script::default()
    };
    let mut message = short_message();
    message.extend(
        b"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\r\n".repeat(8_192),
    );
    let run = converse_with(script, None, message, limits).await;
    let f = run.failure();
    assert_eq!(f.command, "DATA");
    assert!(
        f.message
            .contains("no progress writing the message within 300 ms"),
        "{}",
        f.message
    );
    assert!(!f.maybe_handed_over, "the final dot never went out: {f:?}");
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert_eq!(run.seen.transactions, 0);
    run.assert_ended_before(1_400);
}

#[tokio::test]
async fn the_whole_conversation_is_bounded_too() {
    // Every step within its own limit, the sum over the conversation's.
    let limits = SmtpTimeouts {
        greeting_ms: 5_000,
        command_ms: 5_000,
        data_init_ms: 5_000,
        data_block_ms: 5_000,
        final_reply_ms: 5_000,
        conversation_ms: 600,
    };
    let script = Script {
        after_body_delay_ms: 2_000,
        ..Script::default()
    };
    let run = converse_with(script, None, short_message(), limits).await;
    let f = run.failure();
    assert!(f.maybe_handed_over, "{f:?}");
    assert!(
        f.message.contains("took longer than 600 ms"),
        "{}",
        f.message
    );
    run.assert_ended_before(1_900);
}

/// Once the server answered the final dot with a 2xx the message is its (RFC 5321 §4.1.1.4):
/// whatever happens to QUIT afterwards — no answer before the whole conversation's limit, a
/// refusal, a hang-up — the email was handed over exactly once and is reported sent.
#[tokio::test]
async fn whatever_happens_to_quit_after_a_positive_final_reply_the_email_was_handed_over_once() {
    // The conversation's own limit is the first to fire while QUIT waits: every step's limit (and
    // the 5 s QUIT wait) is longer.
    let limits = SmtpTimeouts {
        conversation_ms: 800,
        ..timeouts(5_000)
    };
    for (name, quit) in [
        ("never answered", Quit::Silent),
        (
            "refused",
            Quit::Reply("500 5.5.1 Error: command not recognized"),
        ),
        ("hang-up", Quit::Close),
    ] {
        let script = Script {
            quit,
            ..Script::default()
        };
        let run = converse_with(script, None, short_message(), limits).await;
        run.assert_handed_over_once("250 2.0.0 Ok: queued as ABC", name);
        assert!(
            run.elapsed < Duration::from_millis(4_000),
            "{name}: {:?}",
            run.elapsed
        );
    }
}

/// The configuration allows a final-reply limit as long as the whole conversation. The
/// conversation's limit (started earlier) then fires first while the final reply is awaited: that
/// is still an uncertain hand-over, never "nothing handed over"; and once the dot is answered, a
/// QUIT that outlasts the conversation's limit changes nothing.
#[tokio::test]
async fn a_final_reply_limit_equal_to_the_conversation_limit_is_still_read_by_the_dot() {
    let limits = SmtpTimeouts {
        final_reply_ms: 600,
        conversation_ms: 600,
        ..timeouts(600)
    };
    assert_eq!(limits.validated(), Ok(limits));

    let late = Script {
        after_body_delay_ms: 1_500,
        ..Script::default()
    };
    let run = converse_with(late, None, short_message(), limits).await;
    let f = run.failure();
    assert!(f.maybe_handed_over, "{f:?}");
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert_eq!(f.command, "end of data");
    assert!(f.message.contains("may have the message"), "{}", f.message);
    assert_eq!(run.seen.transactions, 1);

    let answered = Script {
        after_body_delay_ms: 200,
        quit: Quit::Silent,
        ..Script::default()
    };
    let run = converse_with(answered, None, short_message(), limits).await;
    assert_eq!(run.result.as_deref(), Ok("250 2.0.0 Ok: queued as ABC"));
    assert_eq!(run.seen.transactions, 1);
}

#[tokio::test]
async fn a_refusal_of_the_dot_is_no_hand_over_and_no_second_transaction() {
    let script = Script {
        after_body: Some(b"451 4.3.0 Error: queue file write error\r\n"),
        ..Script::default()
    };
    let run = converse(script, None, short_message(), 2_000).await;
    let f = run.failure();
    assert!(!f.maybe_handed_over);
    assert_eq!(f.class, ProviderErrorClass::Transient);
    assert_eq!(run.seen.transactions, 1);
}

/// Why the engine reads replies through its own line reader: async-smtp 0.10's parser alone wants
/// `NNN SP text CRLF` and refuses what RFC 5321 §4.2 allows and servers send.
#[test]
fn the_librarys_parser_alone_refuses_a_bare_250() {
    use async_smtp::response::Response;
    assert!("250\r\n".parse::<Response>().is_err());
    assert!("250\n".parse::<Response>().is_err());
    assert!("\r\n250 OK\r\n".parse::<Response>().is_err());
    // What the reader hands it instead parses.
    assert!("250 \r\n".parse::<Response>().is_ok());
    assert!("250 OK\r\n".parse::<Response>().is_ok());
}
