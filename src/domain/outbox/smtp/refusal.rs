//! Whose fault a refusal is.
//!
//! # Whose fault a refusal is
//!
//! [`classify_refusal`] decides by the reply code (RFC 5321 §4.2.2–4.2.3), the enhanced status code
//! (RFC 3463, announced by `ENHANCEDSTATUSCODES`, RFC 2034; at the start of the text, or qmail's
//! `(#5.7.1)` at its end) and *which command* was refused. The server's text is read only where
//! those leave it open, and only for facts that do not depend on a language: whether it names our
//! envelope sender (the MAIL FROM address), a few servers' fixed phrases, and our account's quota
//! or suspension. A phrase can move a refusal onto us (the route pauses, the owner is told), never
//! onto the guest's address. The SMTP failover is a relay the engine submits to (port 587/465), so
//! what it refuses synchronously is about the engine's account, sender, message, or the recipient;
//! a recipient's own mail system answers later, by bounce.
//!
//! The first row that matches decides:
//!
//! | refused | reply | class | what the outbox does |
//! |---|---|---|---|
//! | MAIL FROM, RCPT TO, DATA, end of data | our account's quota or suspension, 4xx or 5xx: 5.1.90, 5.7.501–5.7.503, 5.7.700–5.7.749 (Microsoft 365), or the words "daily message quota" (Amazon SES `454`), "daily limit", "submission quota", "sending quota", "sending limit", "outbound spam" | `DailyLimit` | pause SMTP until the next UTC midnight, tell the owner; the email keeps its place and its attempts |
//! | anything | any other 4xx (421, 450–452, 454 …) | `Transient` | retry with backoff |
//! | AUTH | 5xx | `CredentialsRejected` | pause the route, tell the owner |
//! | greeting, EHLO, STARTTLS | 5xx | `Configuration` | pause the route, tell the owner |
//! | any command | 534, 535, 538 or 5.7.8 / 5.7.9 / 5.7.11 | `CredentialsRejected` | pause the route, tell the owner |
//! | MAIL FROM | 5.3.4 or 5.2.3 (the size our `SIZE=` declared) | `MessageRefused` | set this email aside; the next email on the route decides (`crate::domain::outbox::judge_probe`) |
//! | MAIL FROM | any other 5xx (530 authentication or STARTTLS required, 5.1.7 / 5.1.8 / 5.7.1 sender refused …) | `Configuration` (our account or sender) | pause the route, tell the owner |
//! | QUIT, anything else | 5xx | `Transient` (refuses no email) | retry |
//! | RCPT TO, DATA, end of data | the text names our MAIL FROM address (Postfix's `Sender address rejected` at RCPT TO, Exim's `Verification failed for <…>`, SES's unverified identity) | `Configuration` | pause the route, tell the owner |
//! | RCPT TO, DATA, end of data | 5.1.1, 5.1.2, 5.1.3, 5.1.6, 5.1.10, 5.2.1 | `RecipientRejected` | drop, suppress the address (hard bounce), tell the owner |
//! | RCPT TO, DATA, end of data | 5.1.7, 5.1.8 (sender) | `Configuration` | pause the route, tell the owner |
//! | end of data | 5.2.3, 5.3.4 (this message too big), 5.6.x (its content) | `MessageRefused` | set it aside; the next email decides |
//! | RCPT TO, DATA | 5.2.3, 5.3.4, 5.6.x | `Configuration` | pause the route, tell the owner |
//! | RCPT TO | a 5.7.x that is the recipient's own rule — 5.7.1, 5.7.2, 5.7.12, 5.7.13, 5.7.17, 5.7.18, 5.7.124, 5.7.129, 5.7.133–5.7.136, 5.7.504, 5.7.505, 5.7.507, 5.7.510, 5.7.513 — with no words about us (below) | `RecipientDeclined` | drop, tell the owner; **not** suppressed, the route not paused |
//! | end of data | 5.7.0, 5.7.1, 5.7.7 with no words about us (a spam score, a content rule such as Postfix's `body_checks`, a policy on this message) | `MessageRefused` | set it aside; the next email decides |
//! | RCPT TO, DATA, end of data | any other 5.7.x (relay denied, DMARC 5.7.26, SPF 5.7.23, our tenant or IP …), and every 5.7.x to DATA | `Configuration` | pause the route, tell the owner |
//! | RCPT TO, DATA, end of data | any other code with words about us: "relay", "relaying", "sender address", "sender verify", "send as", "client host", "client was not authenticated", "helo command", "rcpthosts", "envelope sender", "in a black list at", "IP you're using", "your IP", "PTR record", "DMARC", "sandbox" (Postfix, Exim, Sendmail, qmail, Microsoft 365 `SendAsDenied`, Gmail about our IP or domain, Mailgun's sandbox) | `Configuration` | pause the route, tell the owner |
//! | RCPT TO, DATA, end of data | 5.2.2 (a full mailbox) | `Transient` | retry with backoff |
//! | RCPT TO | 5.4.1, 5.5.0 (Microsoft 365: the address refused without saying it does not exist) | `RecipientDeclined` | drop, tell the owner; not suppressed |
//! | end of data | any other 5xx, with or without an enhanced code (5.0.0, 5.5.x, 5.4.x, Exim's `550 Administrative prohibition`, Haraka's `550 Message denied`) | `MessageRefused` (the server saw this message and said nothing about our sender or account) | set it aside; the next email decides |
//! | DATA | 5.0.0, 5.5.x | `Configuration` | pause the route, tell the owner |
//! | RCPT TO | no enhanced code, Exim's `Unrouteable address` | `RecipientDeclined` | drop, tell the owner; not suppressed |
//! | DATA | 5xx without an enhanced code | `Configuration` (the transaction refused before any content) | pause the route, tell the owner |
//! | anything else (an undetailed 550/551/553/554 to RCPT TO, 5.1.0, other 5.4.x …) | 5xx | `Transient` (unknown: retried with backoff; after the attempt ceiling a dead letter and an owner alert, never a suppression) | retry |
//!
//! A refusal after the data cannot say by itself whether the route refuses this message or every
//! message: `MessageRefused` sets the email aside and hands the next different email to the same
//! route at once; accepted, the first is a dead letter (the route never paused, the guest not
//! suppressed); refused the same way, the route is paused as ours to fix. So one message's
//! content verdict never holds the mail behind it, and a route that refuses everything is still
//! paused after one more try.
//!
//! A guest is suppressed only where the server says the address does not exist, is invalid or is
//! disabled. Microsoft 365 documents `550 5.4.1 Recipient address rejected: Access denied` as an
//! address its directory does not know, but gives the same code to its relay refusal, and its
//! `5.5.0 … mailbox unavailable` and Exim's `Unrouteable address` do not say the mailbox is gone:
//! those drop the email without suppressing the guest. Exim sends no enhanced codes, so its
//! `550 relay not permitted` and `550 Sender verify failed` are read from their fixed words, and
//! an undetailed 550 with no such words stays unknown.

use super::reply::{EnhancedCode, Reply};
use super::SmtpCommand;
use crate::domain::outbox::ProviderErrorClass;

/// Whose fault a refusal is, decided by the command it answered, its reply code, its enhanced
/// status code, and — only where those leave it open — whether the reply is about us: it names
/// `our_sender` (the MAIL FROM address), or says in one of a few servers' fixed phrases that it
/// refuses our sender, our relaying or our client (see the module's table). 2xx/3xx are not
/// refusals; a caller that gets one where a refusal was expected gets `Transient`.
pub fn classify_refusal(
    command: SmtpCommand,
    reply: &Reply,
    our_sender: &str,
) -> ProviderErrorClass {
    use ProviderErrorClass::*;
    use SmtpCommand::*;
    let code = reply.code;
    let enhanced = reply.enhanced;
    let words = words(&reply.text);
    let in_transaction = matches!(command, MailFrom | RcptTo | Data | EndOfData);
    // Our account may not send for now, whatever the reply's class: Amazon SES answers its daily
    // quota with a 454, Microsoft 365 with 5xx codes.
    if in_transaction && (400..600).contains(&code) && account_may_not_send(enhanced, &words) {
        return DailyLimit;
    }
    if !(500..600).contains(&code) {
        // 4xx and anything unexpected: try again later (RFC 5321 §4.2.1, "4yz").
        return Transient;
    }
    // RFC 4954 §6: 535 5.7.8 credentials invalid, 534 5.7.9 mechanism too weak, 538 5.7.11
    // encryption required for the mechanism. (530 5.7.0 "authentication required" is ours too, but
    // servers also send it for "STARTTLS first": `Configuration`.)
    let credentials_code = matches!(code, 534 | 535 | 538)
        || enhanced.is_some_and(|e| e.subject == 7 && matches!(e.detail, 8 | 9 | 11));
    match command {
        Auth => return CredentialsRejected,
        Greeting | Ehlo | StartTls => return Configuration,
        _ if credentials_code => return CredentialsRejected,
        // 530 is "authentication required" (RFC 4954 §6) or "must issue a STARTTLS command
        // first" (RFC 3207 §4), whichever command it answers and with or without an enhanced
        // code: our client's set-up, never the recipient's.
        _ if code == 530 => return Configuration,
        // A MAIL FROM that declared the message's size (`SIZE=`, RFC 1870) refused for it: the
        // size of this message, not our sender.
        MailFrom if enhanced.is_some_and(|e| e.is(3, 4) || e.is(2, 3)) => return MessageRefused,
        MailFrom => return Configuration,
        // QUIT and anything else refuse no email.
        Quit | Other => return Transient,
        RcptTo | Data | EndOfData => {}
    }
    // The reply names the address we gave in MAIL FROM: it is about our sender, whichever command
    // it answers (Postfix evaluates its sender restrictions at RCPT TO by default,
    // `smtpd_delay_reject = yes`; Exim verifies the sender at RCPT TO; Amazon SES and Microsoft
    // 365 refuse an unverified or foreign sender after the data).
    if names_address(&reply.text, our_sender) {
        return Configuration;
    }
    let about_us = ABOUT_US.iter().any(|p| has_phrase(&words, p));
    let rcpt = command == RcptTo;
    let after_data = command == EndOfData;
    let Some(e) = enhanced else {
        return if about_us {
            // Exim's `550 relay not permitted` and `550 Sender verify failed`.
            Configuration
        } else if rcpt && has_phrase(&words, &["unrouteable", "address"]) {
            // Exim: no router could route the recipient address. The server does not say it does
            // not exist, so the address is not suppressed.
            RecipientDeclined
        } else if after_data {
            // The server saw this message and refused it without a word about us (Exim's
            // `550 Administrative prohibition`, Haraka's `550 Message denied`): maybe this
            // message alone. The next email on the route decides.
            MessageRefused
        } else if command == Data {
            // The DATA command refused before any content: the transaction, never one message.
            Configuration
        } else {
            // An undetailed refusal of the recipient: nobody's fault yet.
            Transient
        };
    };
    if e.is(1, 1) || e.is(1, 2) || e.is(1, 3) || e.is(1, 6) || e.is(1, 10) || e.is(2, 1) {
        // The mailbox does not exist, the address is invalid or disabled: the guest's, for good.
        return RecipientRejected;
    }
    if e.is(1, 7) || e.is(1, 8) {
        // Our sender (5.1.7, 5.1.8).
        return Configuration;
    }
    if e.is(2, 3) || e.is(3, 4) || e.subject == 6 {
        // The message's size (5.2.3, 5.3.4) or content (5.6.x): after the data, about this
        // message until the next email says otherwise; before it, about our client.
        return if after_data {
            MessageRefused
        } else {
            Configuration
        };
    }
    if e.subject == 7 {
        // A policy. At RCPT TO it is usually the recipient's own rule about us (one recipient,
        // never the route), unless it says it refuses our relaying, sender or client, or its
        // code is one about us (authentication, DMARC/SPF/DKIM, our tenant or IP). After the data,
        // a verdict on the message (5.7.0, 5.7.1, 5.7.7: a spam score, a content rule such as
        // Postfix's `body_checks`) without words about us may concern this message alone.
        return if rcpt && !about_us && recipients_policy(e) {
            RecipientDeclined
        } else if after_data && !about_us && matches!(e.detail, 0 | 1 | 7) {
            MessageRefused
        } else {
            Configuration
        };
    }
    if about_us {
        // A sender, relay or client refusal under another code: Postfix's
        // `550 5.1.0 <…>: Sender address rejected`, `504 5.5.2 <…>: Sender address rejected: need
        // fully-qualified address`, Microsoft 365's `554 5.2.0 …SendAsDeniedException`,
        // `550 5.4.1 Relay Access Denied`.
        return Configuration;
    }
    if e.is(2, 2) {
        // A full mailbox: it may empty.
        return Transient;
    }
    if rcpt && (e.is(4, 1) || e.is(5, 0)) {
        // Microsoft 365: `550 5.4.1 Recipient address rejected: Access denied` (directory-based
        // edge blocking) and `550 5.5.0 Requested action not taken: mailbox unavailable` refuse
        // the address without saying it does not exist (5.4.1 is also its relay refusal): drop,
        // never suppress.
        return RecipientDeclined;
    }
    if after_data {
        // Any other refusal after the data without words about us (5.0.0, 5.5.x, 5.4.x …).
        return MessageRefused;
    }
    if command == Data && (e.is(0, 0) || e.subject == 5) {
        return Configuration;
    }
    Transient
}

/// A short, stable name for the fault a refusal is: the command, the reply code and the enhanced
/// code (`MAIL FROM 553 5.7.1`, `end of data 550 5.7.26`). Two refusals with the same name are the
/// same fault; the server's text (queue ids, session ids) is left out so it stays the same.
pub fn fault_name(command: SmtpCommand, reply: &Reply) -> String {
    match reply.enhanced {
        Some(e) => format!("{} {} {e}", command.as_str(), reply.code),
        None => format!("{} {}", command.as_str(), reply.code),
    }
}

/// Phrases with which servers say a refusal is about us — our sender, our relaying, our client
/// host or its name — whatever its code. Read only where the codes leave it open, so a phrase can
/// move a refusal onto us (the route pauses, the owner is told), never onto the guest.
const ABOUT_US: &[&[&str]] = &[
    // Postfix `Relay access denied`, Sendmail `Relaying denied`, Microsoft 365 `Unable to relay`
    // and `Relay Access Denied`, Exim `relay not permitted`.
    &["relay"],
    &["relaying"],
    // Postfix `Sender address rejected`, Sendmail `Domain name required for sender address`.
    &["sender", "address"],
    // Exim `Sender verify failed`.
    &["sender", "verify"],
    // Microsoft 365 `SendAsDenied`, `SendAsDeniedException`, `not allowed to send as`.
    &["send", "as"],
    // Postfix `Client host rejected`, Microsoft 365 `Client host [1.2.3.4] blocked using …`.
    &["client", "host"],
    // Microsoft 365 `Client was not authenticated`.
    &["client", "was", "not", "authenticated"],
    // Postfix `Helo command rejected`.
    &["helo", "command"],
    // qmail `sorry, that domain isn't in my list of allowed rcpthosts` (it does not relay for us)
    // and `sorry, your envelope sender is in my badmailfrom list` (answered at RCPT TO).
    &["rcpthosts"],
    &["envelope", "sender"],
    // Our sending IP on a DNS blocklist: Exim's `rejected because 192.0.2.7 is in a black list at
    // zen.spamhaus.org` (Postfix and Microsoft 365 say `Client host … blocked using …`, above).
    &["in", "a", "black", "list", "at"],
    // Gmail about our IP: `The IP you're using to send mail is not authorized to send email
    // directly to our servers`, `unusual rate of unsolicited mail originating from your IP
    // address`, `The IP address sending this message does not have a PTR record setup`.
    &["ip", "you", "re", "using"],
    &["your", "ip"],
    &["ptr", "record"],
    // Our domain's authentication: Gmail `Unauthenticated email from example.com is not accepted
    // due to domain's DMARC policy` (also sent as 5.7.1).
    &["dmarc"],
    // Our account is a sandbox: Mailgun `554 Sandbox subdomains are for test purposes only`.
    &["sandbox"],
    // Our sender's identity: SendGrid `550 The from address does not match a verified Sender
    // Identity`, Amazon SES `554 Message rejected: Email address is not verified. The following
    // identities failed the check in region …` (its sandbox, naming the recipient).
    &["from", "address"],
    &["sender", "identity"],
    &["identities", "failed"],
];

/// Our account may not send for now: a daily or submission quota, or a suspension for outbound
/// spam. Read by the vendor's enhanced code where it has its own (Microsoft 365), else by the
/// vendor's fixed words (Amazon SES, Microsoft 365, Gmail).
fn account_may_not_send(enhanced: Option<EnhancedCode>, words: &[String]) -> bool {
    const PHRASES: &[&[&str]] = &[
        // Amazon SES `454 Throttling failure: Daily message quota exceeded`.
        &["daily", "message", "quota"],
        // Microsoft 365 `5.1.90 … you've reached your daily limit for message recipients`.
        &["daily", "limit"],
        // Microsoft 365 `5.2.2 Submission quota exceeded`, `SubmissionQuotaExceededException`.
        &["submission", "quota"],
        // Gmail `5.4.5 Daily sending quota exceeded`, `Daily user sending limit exceeded`.
        &["sending", "quota"],
        &["sending", "limit"],
        // Microsoft 365 `STOREDRV.Submission.Exception:OutboundSpamException` (the account is
        // restricted from sending).
        &["outbound", "spam"],
    ];
    let vendor_code = enhanced.is_some_and(|e| {
        // Microsoft 365: 5.1.90 daily recipient limit; 5.7.501–5.7.503 the sending account
        // banned for spam; 5.7.700–5.7.749 the tenant's sending banned. (Its 4.7.500–4.7.699 is
        // a temporary restriction "lifted shortly": retried like any 4xx.)
        e.class == 5
            && (e.is(1, 90) || (e.subject == 7 && matches!(e.detail, 501..=503 | 700..=749)))
    });
    vendor_code || PHRASES.iter().any(|p| has_phrase(words, p))
}

/// 5.7.x details that, at RCPT TO, are the recipient's own rule rather than one about us: RFC 3463
/// 5.7.1 (delivery not authorized: per-host or per-recipient filtering) and 5.7.2 (list expansion
/// prohibited), RFC 7293 5.7.17 / 5.7.18 (the mailbox or domain has a new owner), and Microsoft
/// 365's recipient restrictions: 5.7.12, 5.7.13, 5.7.124, 5.7.129, 5.7.133–5.7.136 (only
/// authenticated or allowed senders), 5.7.504 / 5.7.505 (the recipient refused), 5.7.507,
/// 5.7.510, 5.7.513 (the recipient's organization blocks us).
fn recipients_policy(e: EnhancedCode) -> bool {
    matches!(
        e.detail,
        1 | 2 | 12 | 13 | 17 | 18 | 124 | 129 | 133..=136 | 504 | 505 | 507 | 510 | 513
    )
}

/// The words of a reply's text in lower case: split at anything not a letter or a digit, and at
/// the humps of names (`SendAsDeniedException` → `send as denied exception`). Addresses the
/// server echoes (any whitespace-separated token with an `@`, e.g. `<dmarc@guest.example>:`) are
/// left out first: a guest chooses their own address, and its parts must never read as a phrase
/// about us (`dmarc`, `your ip`) that would pause the route for every guest. Whether a reply
/// names our own sender is read from the whole text ([`names_address`]).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let without_addresses: Vec<&str> = text
        .split_whitespace()
        .filter(|t| !t.contains('@'))
        .collect();
    for token in without_addresses
        .iter()
        .flat_map(|t| t.split(|c: char| !c.is_alphanumeric()))
    {
        let chars: Vec<char> = token.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let hump = i > 0
                && c.is_uppercase()
                && (chars[i - 1].is_lowercase()
                    || (chars[i - 1].is_uppercase()
                        && chars.get(i + 1).is_some_and(|n| n.is_lowercase())));
            if hump && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            word.extend(c.to_lowercase());
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

fn has_phrase(words: &[String], phrase: &[&str]) -> bool {
    words
        .windows(phrase.len())
        .any(|w| w.iter().zip(phrase).all(|(a, b)| a == b))
}

/// `text` names `address` (case-insensitive), as a whole address: `bookings@example.com` is not
/// named by `mybookings@example.com` or `bookings@example.com.au`.
fn names_address(text: &str, address: &str) -> bool {
    let address = address.trim().to_ascii_lowercase();
    if address.is_empty() || !address.contains('@') {
        return false;
    }
    let text = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let local_char = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~.-".contains(&b);
    let domain_char = |b: u8| b.is_ascii_alphanumeric() || b == b'-';
    text.match_indices(&address).any(|(at, _)| {
        let end = at + address.len();
        let before_ok = at == 0 || !local_char(bytes[at - 1]);
        let after_ok = match bytes.get(end) {
            None => true,
            Some(&b) if domain_char(b) => false,
            // A dot ends a sentence unless a domain label follows it.
            Some(b'.') => !bytes.get(end + 1).copied().is_some_and(domain_char),
            Some(_) => true,
        };
        before_ok && after_ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_words_split_names_and_ignore_case() {
        assert_eq!(
            words("STOREDRV.Submission.Exception:SendAsDeniedException.MapiExceptionSendAsDenied;"),
            [
                "storedrv",
                "submission",
                "exception",
                "send",
                "as",
                "denied",
                "exception",
                "mapi",
                "exception",
                "send",
                "as",
                "denied"
            ]
        );
        assert_eq!(
            words("RESOLVER.RST.NotAuthorized"),
            ["resolver", "rst", "not", "authorized"]
        );
        assert_eq!(words("SMTPClient"), ["smtp", "client"]);
        assert!(has_phrase(&words("Relay access denied"), &["relay"]));
        // Whole words only: "sender" is not "send", "relays" is not "relay".
        assert!(!has_phrase(
            &words("sender is not authenticated"),
            &["send", "as"]
        ));
        assert!(!has_phrase(&words("two relays"), &["relay"]));
    }

    #[test]
    fn our_sender_is_named_only_as_a_whole_address() {
        let ours = "bookings@example.com";
        assert!(names_address(
            "<bookings@example.com>: Sender address rejected",
            ours
        ));
        assert!(names_address(
            "identities failed: BOOKINGS@Example.COM",
            ours
        ));
        assert!(names_address(
            "not allowed to send as bookings@example.com.",
            ours
        ));
        assert!(!names_address(
            "<mybookings@example.com>: User unknown",
            ours
        ));
        assert!(!names_address(
            "<bookings@example.com.au>: User unknown",
            ours
        ));
        assert!(!names_address("<bookings@example.community>", ours));
        assert!(!names_address("anything", ""));
    }

    #[test]
    fn a_fault_is_named_by_its_command_and_codes_never_its_text() {
        let dmarc = Reply::from_lines(550, &["5.7.26 Unauthenticated email from x".into()]);
        assert_eq!(
            fault_name(SmtpCommand::EndOfData, &dmarc),
            "end of data 550 5.7.26"
        );
        let exim = Reply::from_lines(550, &["relay not permitted".into()]);
        assert_eq!(fault_name(SmtpCommand::RcptTo, &exim), "RCPT TO 550");
        let a = Reply::from_lines(553, &["5.7.1 <a@b>: Sender address rejected, id 1".into()]);
        let b = Reply::from_lines(553, &["5.7.1 <a@b>: Sender address rejected, id 2".into()]);
        assert_eq!(
            fault_name(SmtpCommand::MailFrom, &a),
            fault_name(SmtpCommand::MailFrom, &b)
        );
    }
}
