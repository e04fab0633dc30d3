//! Real servers' replies → whose fault (`domain::smtp::classify_refusal`), each with where it comes
//! from. The text is the server's own; the decision never reads it: only the command refused, the
//! reply code and the enhanced status code (RFC 3463) count. The recipient is blamed only for an
//! address the server says is unknown, invalid or disabled; our account, sender, relay, policy and
//! message are ours (the route is paused and the owner told); everything else is retried.

use booking_email_engine::domain::outbox::ProviderErrorClass::{self, *};
use booking_email_engine::domain::smtp::{
    classify_refusal, normalize_reply_line, Reply, ReplyLine, SmtpCommand,
};
use SmtpCommand::*;

/// Where a reply was read.
const POSTFIX: &str = "Postfix 3.x source, src/smtpd/smtpd_check.c, smtpd.c, smtpd_sasl_glue.c (github.com/vdukhovni/postfix); defaults in src/global/mail_params.h";
const EXIM: &str = "Exim source, src/src/smtp_in.c, receive.c, route.c, configure.default (github.com/Exim/exim); Exim sends no enhanced status codes";
const M365: &str = "Microsoft: 'Email non-delivery reports in Exchange Online' (learn.microsoft.com/exchange/mail-flow-best-practices/non-delivery-reports-in-exchange-online/non-delivery-reports-in-exchange-online), SMTP AUTH and SmtpResponse.SendAsDenied reference";
const GMAIL: &str = "Google: 'Gmail SMTP errors and codes' (support.google.com/a/answer/3726730)";
const SES: &str = "Amazon SES: 'SMTP response codes returned by Amazon SES' (docs.aws.amazon.com/ses/latest/dg/troubleshoot-smtp.html) and 'ses-554-400-message-rejected-error' (repost.aws knowledge center)";
const MAILGUN: &str =
    "Mailgun replies as reported in swapmyvote/swapmyvote issues #332 and #891 (github.com)";
const SENDMAIL: &str =
    "Sendmail 8.x source, sendmail/srvrsmtp.c, recipient.c, collect.c, cf/m4/proto.m4";

/// One real reply, the command it answered, and the class it must get.
struct Case {
    source: &'static str,
    command: SmtpCommand,
    /// The reply as the server sends it (lines separated by CRLF, without the last CRLF).
    reply: &'static str,
    want: ProviderErrorClass,
}

const fn case(
    source: &'static str,
    command: SmtpCommand,
    reply: &'static str,
    want: ProviderErrorClass,
) -> Case {
    Case {
        source,
        command,
        reply,
        want,
    }
}

const TABLE: &[Case] = &[
    // Postfix
    case(POSTFIX, RcptTo, "550 5.1.1 <guest@example.com>: Recipient address rejected: User unknown in local recipient table", RecipientRejected),
    case(POSTFIX, RcptTo, "554 5.7.1 <guest@example.net>: Relay access denied", Configuration),
    case(POSTFIX, MailFrom, "553 5.7.1 <bookings@example.com>: Sender address rejected: not owned by user engine", Configuration),
    case(POSTFIX, MailFrom, "553 5.7.1 <bookings@example.com>: Sender address rejected: not logged in", Configuration),
    case(POSTFIX, MailFrom, "501 5.1.7 Bad sender address syntax", Configuration),
    case(POSTFIX, MailFrom, "552 5.3.4 Message size exceeds fixed limit", Configuration),
    case(POSTFIX, MailFrom, "530 5.7.0 Must issue a STARTTLS command first", Configuration),
    case(POSTFIX, Auth, "535 5.7.8 Error: authentication failed: authentication failure", CredentialsRejected),
    case(POSTFIX, Auth, "504 5.5.4 Encryption required for requested authentication mechanism", CredentialsRejected),
    case(POSTFIX, Data, "554 5.5.1 Error: no valid recipients", Configuration),
    case(POSTFIX, RcptTo, "450 4.1.8 <bookings@example.com>: Sender address rejected: Domain not found", Transient),
    case(POSTFIX, RcptTo, "452 4.5.3 Error: too many recipients", Transient),
    // Exim: no enhanced codes, so an undetailed 550 to RCPT is nobody's fault yet.
    case(EXIM, RcptTo, "550 relay not permitted", Transient),
    case(EXIM, RcptTo, "550 Unrouteable address", Transient),
    case(EXIM, Auth, "535 Incorrect authentication data", CredentialsRejected),
    case(EXIM, EndOfData, "552 Message size exceeds maximum permitted", Configuration),
    case(EXIM, EndOfData, "550 Administrative prohibition", Configuration),
    case(EXIM, Greeting, "421 Temporary local problem - please try later", Transient),
    // Microsoft 365 / Exchange Online
    case(M365, RcptTo, "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup", RecipientRejected),
    case(M365, EndOfData, "550 5.7.1 Client does not have permission to send as this sender", Configuration),
    case(M365, EndOfData, "550 5.7.60 SMTP; Client does not have permissions to send as this sender", Configuration),
    case(M365, MailFrom, "530 5.7.57 Client was not authenticated to send anonymous mail during MAIL FROM", Configuration),
    case(M365, Auth, "535 5.7.139 Authentication unsuccessful, SmtpClientAuthentication is disabled for the Tenant.", CredentialsRejected),
    case(M365, RcptTo, "550 5.1.8 Access denied, bad outbound sender", Configuration),
    case(M365, EndOfData, "550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP", Configuration),
    // 5.4.1 is both "Relay Access Denied" and "Recipient address rejected: Access denied" there.
    case(M365, RcptTo, "550 5.4.1 Recipient address rejected: Access denied", Transient),
    case(M365, EndOfData, "550 5.2.2 Submission quota exceeded", Transient),
    case(M365, RcptTo, "550 5.1.90 Your message can't be sent because you've reached your daily limit for message recipients", Transient),
    case(M365, MailFrom, "451 4.7.500 Access denied, please try again later", Transient),
    // Gmail
    case(GMAIL, RcptTo, "550-5.1.1 The email account that you tried to reach does not exist. Please try\r\n550 5.1.1 double-checking the recipient's email address for typos or unnecessary spaces.", RecipientRejected),
    case(GMAIL, RcptTo, "550 5.2.1 The email account that you tried to reach is disabled.", RecipientRejected),
    case(GMAIL, RcptTo, "553 5.1.3 The recipient address <guest@@example.com> is not a valid RFC 5321 address.", RecipientRejected),
    case(GMAIL, EndOfData, "550-5.7.26 Unauthenticated email from example.com is not accepted due to\r\n550 5.7.26 domain's DMARC policy.", Configuration),
    case(GMAIL, EndOfData, "550 5.7.1 Our system has detected that this message is likely unsolicited mail.", Configuration),
    case(GMAIL, EndOfData, "552 5.2.3 Your message exceeded Google's message size limits.", Configuration),
    case(GMAIL, Auth, "535-5.7.8 Username and Password not accepted. Learn more at\r\n535 5.7.8 https://support.google.com/mail/?p=BadCredentials", CredentialsRejected),
    case(GMAIL, MailFrom, "530 5.7.0 Authentication Required.", Configuration),
    case(GMAIL, RcptTo, "452 4.2.2 The recipient's inbox is out of storage space.", Transient),
    case(GMAIL, RcptTo, "450 4.2.1 The user you are trying to contact is receiving mail too quickly.", Transient),
    case(GMAIL, Greeting, "421 4.7.0 Try again later, closing connection.", Transient),
    // Amazon SES SMTP interface
    case(SES, Auth, "535 Authentication Credentials Invalid", CredentialsRejected),
    case(SES, MailFrom, "454 Throttling failure: Maximum sending rate exceeded.", Transient),
    case(SES, MailFrom, "454 Throttling failure: Daily message quota exceeded.", Transient),
    case(SES, EndOfData, "554 Message rejected: Email address is not verified. The following identities failed the check in region US-EAST-1: bookings@example.com", Configuration),
    case(SES, MailFrom, "451 4.4.2 Timeout waiting for data from client.", Transient),
    // Mailgun
    case(MAILGUN, EndOfData, "554 Sandbox subdomains are for test purposes only. Please add your own domain or add the address to authorized recipients in Account Settings.", Configuration),
    case(MAILGUN, Data, "421 Domain sandbox0123.mailgun.org is not allowed to send: Sandbox subdomains are for test purposes only.", Transient),
    // Sendmail
    case(SENDMAIL, RcptTo, "550 5.1.1 <guest@example.com>... User unknown", RecipientRejected),
    case(SENDMAIL, RcptTo, "550 5.7.1 <guest@example.net>... Relaying denied. Proper authentication required.", Configuration),
    case(SENDMAIL, MailFrom, "553 5.1.8 <bookings@example.com>... Domain of sender address bookings@example.com does not exist", Configuration),
    case(SENDMAIL, MailFrom, "530 5.7.0 Authentication required", Configuration),
    case(SENDMAIL, Auth, "535 5.7.0 authentication failed", CredentialsRejected),
    case(SENDMAIL, MailFrom, "552 5.2.3 Message size exceeds fixed maximum message size (10000000)", Configuration),
    case(SENDMAIL, RcptTo, "451 4.1.8 Domain of sender address bookings@example.com does not resolve", Transient),
];

/// The reply read as the engine reads it: each line through the normalizer, then joined.
fn read(raw: &str) -> Reply {
    let mut code = 0;
    let mut texts = Vec::new();
    for line in raw.split("\r\n") {
        match normalize_reply_line(format!("{line}\r\n").as_bytes()) {
            ReplyLine::Reply { code: c, text, .. } => {
                code = c;
                texts.push(text);
            }
            other => panic!("{raw:?}: {other:?}"),
        }
    }
    Reply::from_lines(code, &texts)
}

#[test]
fn real_server_replies_are_blamed_on_the_right_party() {
    let mut wrong = Vec::new();
    for c in TABLE {
        let got = classify_refusal(c.command, &read(c.reply));
        if got != c.want {
            wrong.push(format!(
                "{:?} to {}: got {got:?}, want {:?} ({})",
                c.reply,
                c.command.as_str(),
                c.want,
                c.source
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Every server of the list is in the table.
    for source in [POSTFIX, EXIM, M365, GMAIL, SES, MAILGUN, SENDMAIL] {
        assert!(TABLE.iter().any(|c| c.source == source), "{source}");
    }
}

#[test]
fn only_a_refused_address_is_the_recipients_fault() {
    // Whatever a reply says, the recipient is blamed only by an enhanced code of an address that
    // does not exist, is invalid or disabled, and only on RCPT TO or the message itself.
    for c in TABLE.iter().filter(|c| c.want == RecipientRejected) {
        let r = read(c.reply);
        let e = r
            .enhanced
            .expect("a recipient refusal carries an enhanced code");
        assert!(
            matches!((e.subject, e.detail), (1, 1 | 2 | 3 | 6 | 10) | (2, 1)),
            "{}",
            c.reply
        );
        // The same refusal to MAIL FROM is our sender's problem, never the guest's.
        assert_eq!(classify_refusal(MailFrom, &r), Configuration, "{}", c.reply);
    }
}

#[test]
fn the_reply_kept_for_the_owner_is_the_servers_own_one_line() {
    let r = read(
        TABLE
            .iter()
            .find(|c| c.source == GMAIL && c.want == Configuration)
            .unwrap()
            .reply,
    );
    assert_eq!(
        r.describe(),
        "550 5.7.26 Unauthenticated email from example.com is not accepted due to domain's DMARC policy."
    );
}

#[test]
fn replies_of_every_class_outside_5xx_are_never_refusals_of_anyone() {
    for (command, raw) in [
        (RcptTo, "421 4.7.0 closing"),
        (EndOfData, "451 4.3.0 try later"),
        (Auth, "454 4.7.0 Temporary authentication failure"),
        (EndOfData, "250 ok"),
    ] {
        assert_eq!(classify_refusal(command, &read(raw)), Transient, "{raw}");
    }
}
