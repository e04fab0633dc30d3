//! Real servers' replies → whose fault (`domain::outbox::smtp::classify_refusal`), each with where it comes
//! from. The decision reads the command refused, the reply code and the enhanced status code
//! (RFC 3463); the text only where those leave it open: whether it names our envelope sender, a
//! few servers' fixed phrases for a refusal of our sender, relaying or client, our account's quota
//! or suspension, and Exim's `Unrouteable address`. The recipient is blamed (and suppressed) only
//! for an address the server says is unknown, invalid or disabled; a recipient's policy, or an
//! address refused without saying so, drops the email without suppressing anyone; our account,
//! sender, relay, policy and message are ours (the route is paused and the owner told);
//! everything else is retried.

use booking_email_engine::domain::outbox::smtp::{
    classify_refusal, normalize_reply_line, Reply, ReplyLine, SmtpCommand,
};
use booking_email_engine::domain::outbox::ProviderErrorClass::{self, *};
use SmtpCommand::*;

/// The envelope sender (MAIL FROM) of every case.
const SENDER: &str = "bookings@example.com";

/// Where a reply was read.
const POSTFIX: &str = "Postfix 3.x source, src/smtpd/smtpd_check.c, smtpd.c, smtpd_sasl_glue.c (github.com/vdukhovni/postfix); defaults in src/global/mail_params.h";
const POSTFIX_DOCS: &str = "Postfix: postconf(5) smtpd_delay_reject (default yes: client, helo and sender restrictions answer at RCPT TO), reject_non_fqdn_sender, access(5) REJECT (postfix.org/postconf.5.html, postfix.org/access.5.html)";
const EXIM: &str = "Exim source, src/src/smtp_in.c, receive.c, route.c, acl.c, configure.default (github.com/Exim/exim); Exim sends no enhanced status codes";
const M365: &str = "Microsoft: 'Email non-delivery reports in Exchange Online' (learn.microsoft.com/exchange/mail-flow-best-practices/non-delivery-reports-in-exchange-online/non-delivery-reports-in-exchange-online), SMTP AUTH and SmtpResponse.SendAsDenied reference";
const M365_NDR: &str = "Microsoft: 'Fix email delivery issues for error code 550 5.4.1 / 5.7.1 / 5.7.133 / 5.7.129 in Exchange Online', 'Fix … the sender's submission quota was exceeded', 'Use Directory-Based Edge Blocking' (learn.microsoft.com/exchange/mail-flow-best-practices/non-delivery-reports-in-exchange-online/…)";
const M365_SUBMISSION: &str = "Microsoft 365 submission refusals (smtp.office365.com) as administrators report them: STOREDRV.Submission.Exception names SendAsDeniedException, SubmissionQuotaExceededException, OutboundSpamException";
const GMAIL: &str = "Google: 'Gmail SMTP errors and codes' (support.google.com/a/answer/3726730)";
const SES: &str = "Amazon SES: 'SMTP response codes returned by Amazon SES' (docs.aws.amazon.com/ses/latest/dg/troubleshoot-smtp.html) and 'ses-554-400-message-rejected-error' (repost.aws knowledge center)";
const SES_QUOTA: &str = "Amazon SES: 'Errors related to the sending quotas for your Amazon SES account' (docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html)";
const MAILGUN: &str =
    "Mailgun replies as reported in swapmyvote/swapmyvote issues #332 and #891 (github.com)";
const POSTAL: &str = "Postal mail server, spec/lib/smtp_server/client/rcpt_to_spec.rb: an unauthenticated RCPT TO that matches no route (github.com/postalserver/postal)";
const SENDMAIL: &str =
    "Sendmail 8.x source, sendmail/srvrsmtp.c, recipient.c, collect.c, parseaddr.c, cf/m4/proto.m4";
const POSTFIX_RBL: &str = "Postfix src/global/mail_params.h DEF_DEF_RBL_REPLY ('$rbl_code Service unavailable; $rbl_class [$rbl_what] blocked using $rbl_domain${rbl_reason?; $rbl_reason}', 554 5.7.1), src/smtpd/smtpd_check.c reject_unknown_client (450 4.7.25) (github.com/vdukhovni/postfix)";
const POSTGREY: &str = "postgrey (github.com/schweikert/postgrey, postgrey): DEFER_IF_PERMIT with the default text 'Greylisted, see http://postgrey.schweikert.ch/help/%r.html', which Postfix answers with a 450 at RCPT TO";
const EXIM_DNSBL: &str = "Exim src/src/configure.default, the DNS black list ACL: 'rejected because $sender_host_address is in a black list at $dnslist_domain\\n$dnslist_text' (github.com/Exim/exim)";
const QMAIL: &str = "notqmail qmail-smtpd.c: err_nogateway, err_bmf (checked at RCPT TO), the databytes limit and qmail-queue's temporary errors; the enhanced code is written last, as (#x.y.z) (github.com/notqmail/notqmail)";
const OPENSMTPD: &str = "OpenSMTPD usr.sbin/smtpd/smtp_session.c, lka_session.c, esc.c (github.com/OpenSMTPD/OpenSMTPD)";
const HARAKA: &str = "Haraka connection.js: connect_respond, rcpt_to_respond when no plugin allowed the recipient, max_bytes and queue refusals (github.com/haraka/Haraka)";
const GMAIL_BOUNCES: &str = "Gmail's replies in reply to end of DATA, as logged by Postfix and quoted in mailcow/mailcow-dockerized issue #1662 (5.7.1 DMARC), iredmail/iRedMail issue #264 and Mailu/Mailu issue #2599 (IP not authorized), pastebin.com/6UPQYvjk and pastebin.com/Rj7iXShc (unusual rate, PTR)";
const GMAIL_RELAY_LIMITS: &str = "Google: 'SMTP relay service error messages' (support.google.com/a/answer/6140680) and 'Sending limits for the SMTP relay service' (support.google.com/a/answer/2956491): 550 5.7.1 Daily SMTP relay limit exceeded for customer";
const GMAIL_RELAY: &str = "Google: 'Gmail SMTP errors and codes' (knowledge.workspace.google.com/admin/support/troubleshooting/gmail-smtp-errors-and-codes): 450 4.2.1 Peak SMTP relay limit exceeded for this customer";
const SENDGRID: &str = "SendGrid (smtp.sendgrid.net) reply to the message, as reported in LandOfTheRair/LandOfTheRair issue #308 (nodemailer 'Message failed' after DATA) and chatwoot/chatwoot issue #2541";
const M365_REPORTED: &str = "Microsoft 365 (smtp.office365.com) replies as reported in timeoff-management/timeoff-management-application issue #308 (432 4.3.2 after the data; Microsoft's wording in MicrosoftDocs/OfficeDocs-Support pull request #1991), PHPMailer/PHPMailer issue #992 and jstedfast/MailKit issue #700 (535 5.7.3 to AUTH)";
const SES_SANDBOX: &str = "Amazon SES SMTP in the sandbox, where recipients must be verified too: RocketChat/Rocket.Chat issue #6195 and arithmetric/aws-lambda-ses-forwarder issue #142 (554 after the data, naming the recipient)";
const POSTFIX_RUN: &str = "Debian's Postfix 3.7.11, run by tests/e2e-postfix with virtual_mailbox_maps, check_recipient_access DEFER, check_sender_access REJECT, body_checks REJECT and message_size_limit (its replies as read on the wire)";
const ZOHO: &str = "Zoho Mail (smtp.zoho.com) replies as reported in mybb/mybb issue #2644 and frappe/erpnext issue #19057 (553 to the final dot), nodemailer/nodemailer issues #456 (535 at RCPT TO) and #1082 (530 5.5.1 at MAIL FROM)";

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
    // Postfix, as run by the end-to-end test against a real relay
    case(POSTFIX_RUN, RcptTo, "550 5.1.1 <unknown-x@example.com>: Recipient address rejected: User unknown in virtual mailbox table", RecipientRejected),
    case(POSTFIX_RUN, RcptTo, "450 4.7.1 <defer-x@example.com>: Recipient address rejected: try again later", Transient),
    case(POSTFIX_RUN, RcptTo, "554 5.7.1 <bookings@example.com>: Sender address rejected: not owned by user engine", Configuration),
    case(POSTFIX_RUN, EndOfData, "550 5.7.1 message content rejected by policy", MessageRefused),
    case(POSTFIX_RUN, EndOfData, "552 5.3.4 Error: message file too big", MessageRefused),
    case(POSTFIX_RUN, MailFrom, "552 5.3.4 Message size exceeds fixed limit", MessageRefused),
    // Postfix
    case(POSTFIX, RcptTo, "550 5.1.1 <guest@example.com>: Recipient address rejected: User unknown in local recipient table", RecipientRejected),
    case(POSTFIX, RcptTo, "550 5.1.1 <guest@example.com>: Recipient address rejected: User unknown in relay recipient table", RecipientRejected),
    case(POSTFIX, RcptTo, "554 5.7.1 <guest@example.net>: Relay access denied", Configuration),
    case(POSTFIX, MailFrom, "553 5.7.1 <bookings@example.com>: Sender address rejected: not owned by user engine", Configuration),
    case(POSTFIX, MailFrom, "553 5.7.1 <bookings@example.com>: Sender address rejected: not logged in", Configuration),
    case(POSTFIX, MailFrom, "501 5.1.7 Bad sender address syntax", Configuration),
    case(POSTFIX, MailFrom, "552 5.3.4 Message size exceeds fixed limit", MessageRefused),
    case(POSTFIX, MailFrom, "530 5.7.0 Must issue a STARTTLS command first", Configuration),
    case(POSTFIX, Auth, "535 5.7.8 Error: authentication failed: authentication failure", CredentialsRejected),
    case(POSTFIX, Auth, "504 5.5.4 Encryption required for requested authentication mechanism", CredentialsRejected),
    case(POSTFIX, Data, "554 5.5.1 Error: no valid recipients", Configuration),
    case(POSTFIX, RcptTo, "450 4.1.8 <bookings@example.com>: Sender address rejected: Domain not found", RateLimited),
    case(POSTFIX, RcptTo, "452 4.5.3 Error: too many recipients", Transient),
    // Postfix's sender and client restrictions, answered at RCPT TO (smtpd_delay_reject = yes).
    case(POSTFIX_DOCS, RcptTo, "550 5.1.0 <bookings@example.com>: Sender address rejected: User unknown in local recipient table", Configuration),
    case(POSTFIX_DOCS, RcptTo, "504 5.5.2 <bookings@engine>: Sender address rejected: need fully-qualified address", Configuration),
    case(POSTFIX_DOCS, RcptTo, "554 5.7.1 <bookings@example.com>: Sender address rejected: Access denied", Configuration),
    case(POSTFIX_DOCS, RcptTo, "554 5.7.1 <unknown[192.0.2.7]>: Client host rejected: Access denied", Configuration),
    // One recipient's own rule (check_recipient_access … REJECT): drop, not suppressed.
    case(POSTFIX_DOCS, RcptTo, "554 5.7.1 <guest@example.com>: Recipient address rejected: Access denied", RecipientDeclined),
    // Exim: no enhanced codes, so the words decide, and only its fixed ones.
    case(EXIM, RcptTo, "550 relay not permitted", Configuration),
    case(EXIM, RcptTo, "550 Sender verify failed", Configuration),
    case(EXIM, RcptTo, "550-Verification failed for <bookings@example.com>\r\n550-Unrouteable address\r\n550 Sender verify failed", Configuration),
    case(EXIM, RcptTo, "550 Unrouteable address", RecipientDeclined),
    case(EXIM, RcptTo, "550 Administrative prohibition", Transient),
    case(EXIM, Auth, "535 Incorrect authentication data", CredentialsRejected),
    case(EXIM, EndOfData, "552 Message size exceeds maximum permitted", MessageRefused),
    case(EXIM, EndOfData, "550 Administrative prohibition", MessageRefused),
    case(EXIM, Greeting, "421 Temporary local problem - please try later", Transient),
    // Microsoft 365 / Exchange Online
    case(M365, RcptTo, "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup", RecipientRejected),
    case(M365, EndOfData, "550 5.7.1 Client does not have permission to send as this sender", Configuration),
    case(M365, EndOfData, "550 5.7.60 SMTP; Client does not have permissions to send as this sender", Configuration),
    case(M365, MailFrom, "530 5.7.57 Client was not authenticated to send anonymous mail during MAIL FROM", Configuration),
    case(M365, Auth, "535 5.7.139 Authentication unsuccessful, SmtpClientAuthentication is disabled for the Tenant.", CredentialsRejected),
    case(M365, RcptTo, "550 5.1.8 Access denied, bad outbound sender", Configuration),
    case(M365, RcptTo, "550 5.7.1 Unable to relay", Configuration),
    case(M365, RcptTo, "550 5.7.1 Client was not authenticated", Configuration),
    case(M365, RcptTo, "550 5.4.1 Relay Access Denied", Configuration),
    case(M365, RcptTo, "550 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using Blocklist 1; To request removal from this list please forward this message to delist@messaging.microsoft.com", Configuration),
    case(M365, MailFrom, "451 4.7.500 Access denied, please try again later", Transient),
    case(M365, MailFrom, "451 4.7.501 Access denied, please try again later", Transient),
    // Our account's quota or suspension: the route pauses until the day turns.
    case(M365, RcptTo, "550 5.1.90 Your message can't be sent because you've reached your daily limit for message recipients", DailyLimit),
    case(M365, EndOfData, "550 5.2.2 Submission quota exceeded", DailyLimit),
    case(M365, EndOfData, "550 5.7.501 Access denied, spam abuse detected", DailyLimit),
    case(M365, MailFrom, "550 5.7.705 Access denied, tenant has exceeded threshold", DailyLimit),
    case(M365, EndOfData, "550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP", DailyLimit),
    case(M365_NDR, EndOfData, "554 5.2.0 STOREDRV.Submission.Exception:SubmissionQuotaExceededException; Failed to process message due to a permanent exception with message Cannot submit message.", DailyLimit),
    case(M365_SUBMISSION, EndOfData, "554 5.2.0 STOREDRV.Submission.Exception:OutboundSpamException; Failed to process message due to a permanent exception with message WASCL UserAction verdict is not None. Actual verdict is Suspend, ShowTierUpgrade.", DailyLimit),
    // Our sender refused after the data.
    case(M365_SUBMISSION, EndOfData, "554 5.2.252 SendAsDenied; engine@example.com not allowed to send as bookings@example.com; STOREDRV.Submission.Exception:SendAsDeniedException; Failed to process message due to a permanent exception with message Cannot submit message.", Configuration),
    case(M365_SUBMISSION, EndOfData, "554 5.2.0 STOREDRV.Submission.Exception:SendAsDeniedException.MapiExceptionSendAsDenied; Failed to process message due to a permanent exception with message Cannot submit message.", Configuration),
    // The recipient's rules: drop, not suppressed, the route not paused.
    case(M365_NDR, RcptTo, "550 5.7.1 RESOLVER.RST.NotAuthorized; not authorized", RecipientDeclined),
    case(M365_NDR, RcptTo, "550 5.7.1 RESOLVER.RST.AuthRequired; authentication required", RecipientDeclined),
    case(M365_NDR, RcptTo, "550 5.7.133 RESOLVER.RST.SenderNotAuthenticatedForGroup; authentication required; Delivery restriction check failed as sender is not authenticated", RecipientDeclined),
    case(M365_NDR, RcptTo, "550 5.7.129 RESOLVER.RST.RestrictedToRecipientsPermission", RecipientDeclined),
    // Addresses refused without saying they do not exist: drop, not suppressed.
    case(M365_NDR, RcptTo, "550 5.4.1 Recipient address rejected: Access denied. AS(201806281)", RecipientDeclined),
    case(M365_NDR, RcptTo, "550 5.5.0 Requested action not taken: mailbox unavailable", RecipientDeclined),
    // Gmail
    case(GMAIL, RcptTo, "550-5.1.1 The email account that you tried to reach does not exist. Please try\r\n550 5.1.1 double-checking the recipient's email address for typos or unnecessary spaces.", RecipientRejected),
    case(GMAIL, RcptTo, "550 5.2.1 The email account that you tried to reach is disabled.", RecipientRejected),
    case(GMAIL, RcptTo, "553 5.1.3 The recipient address <guest@@example.com> is not a valid RFC 5321 address.", RecipientRejected),
    case(GMAIL, RcptTo, "550-5.7.1 The user or domain that you are sending to (or from) has a policy that\r\n550 5.7.1 prohibits the mail that you sent. Please contact your domain administrator for further details.", RecipientDeclined),
    case(GMAIL, EndOfData, "550-5.7.26 Unauthenticated email from example.com is not accepted due to\r\n550 5.7.26 domain's DMARC policy.", Configuration),
    case(GMAIL, EndOfData, "550 5.7.1 Our system has detected that this message is likely unsolicited mail.", MessageRefused),
    case(GMAIL, EndOfData, "552 5.2.3 Your message exceeded Google's message size limits.", MessageRefused),
    case(GMAIL, Auth, "535-5.7.8 Username and Password not accepted. Learn more at\r\n535 5.7.8 https://support.google.com/mail/?p=BadCredentials", CredentialsRejected),
    case(GMAIL, MailFrom, "530 5.7.0 Authentication Required.", Configuration),
    case(GMAIL, MailFrom, "550 5.4.5 Daily sending quota exceeded.", DailyLimit),
    case(GMAIL, RcptTo, "550 5.4.5 Daily user sending limit exceeded.", DailyLimit),
    // Google Workspace's SMTP relay (smtp-relay.gmail.com): the day's relay limit is our
    // account's quota, never our relaying refused ("relay" is a word about us) nor this message.
    case(GMAIL, MailFrom, "550 5.4.5 Daily SMTP relay limit exceeded for customer.", DailyLimit),
    case(GMAIL, RcptTo, "550 5.4.5 Daily SMTP relay limit exceeded for customer.", DailyLimit),
    case(GMAIL, EndOfData, "550 5.4.5 Daily SMTP relay limit exceeded for customer.", DailyLimit),
    case(GMAIL, EndOfData, "550 5.4.5 Daily SMTP relay limit exceeded for user.", DailyLimit),
    case(GMAIL_RELAY_LIMITS, EndOfData, "550 5.7.1 Daily SMTP relay limit exceeded for customer", DailyLimit),
    case(GMAIL, EndOfData, "550 5.4.5 Daily user sending limit exceeded.", DailyLimit),
    // A temporary refusal naming our IP, or our rate: the route pauses briefly, not per email.
    case(GMAIL, RcptTo, "421 4.7.0 Our system has detected an unusual rate of unsolicited mail originating from your IP address. To protect our users from spam, mail sent from your IP address has been temporarily rate limited.", RateLimited),
    // The recipient domain's own list of allowed IPs: one domain's rule, not the route's.
    case(GMAIL, RcptTo, "421 4.7.0 IP not in whitelist for RCPT domain, closing connection.", Transient),
    case(POSTFIX, RcptTo, "451 4.7.1 <bookings@example.com>: Sender address rejected: try again later", RateLimited),
    case(GMAIL, RcptTo, "452 4.2.2 The recipient's inbox is out of storage space.", Transient),
    case(GMAIL, RcptTo, "450 4.2.1 The user you are trying to contact is receiving mail too quickly.", Transient),
    case(GMAIL, Greeting, "421 4.7.0 Try again later, closing connection.", Transient),
    // Amazon SES SMTP interface
    case(SES, Auth, "535 Authentication Credentials Invalid", CredentialsRejected),
    case(SES_QUOTA, MailFrom, "454 Throttling failure: Maximum sending rate exceeded.", Transient),
    case(SES_QUOTA, MailFrom, "454 Throttling failure: Daily message quota exceeded.", DailyLimit),
    case(SES_QUOTA, EndOfData, "454 Throttling failure: Daily message quota exceeded.", DailyLimit),
    case(SES, EndOfData, "554 Message rejected: Email address is not verified. The following identities failed the check in region US-EAST-1: bookings@example.com", Configuration),
    case(SES, MailFrom, "451 4.4.2 Timeout waiting for data from client.", Transient),
    // Mailgun
    case(MAILGUN, EndOfData, "554 Sandbox subdomains are for test purposes only. Please add your own domain or add the address to authorized recipients in Account Settings.", Configuration),
    case(MAILGUN, Data, "421 Domain sandbox0123.mailgun.org is not allowed to send: Sandbox subdomains are for test purposes only.", RateLimited),
    // Postal: authentication asked for at RCPT TO, with no enhanced code: our client's set-up.
    case(POSTAL, RcptTo, "530 Authentication required", Configuration),
    // Sendmail
    case(SENDMAIL, RcptTo, "550 5.1.1 <guest@example.com>... User unknown", RecipientRejected),
    case(SENDMAIL, RcptTo, "550 5.7.1 <guest@example.net>... Relaying denied. Proper authentication required.", Configuration),
    case(SENDMAIL, RcptTo, "550 5.7.1 <guest@example.com>... Access denied", RecipientDeclined),
    case(SENDMAIL, MailFrom, "553 5.1.8 <bookings@example.com>... Domain of sender address bookings@example.com does not exist", Configuration),
    case(SENDMAIL, MailFrom, "553 5.5.4 <bookings>... Domain name required for sender address bookings", Configuration),
    case(SENDMAIL, MailFrom, "530 5.7.0 Authentication required", Configuration),
    case(SENDMAIL, Auth, "535 5.7.0 authentication failed", CredentialsRejected),
    case(SENDMAIL, MailFrom, "552 5.2.3 Message size exceeds fixed maximum message size (10000000)", MessageRefused),
    case(SENDMAIL, RcptTo, "451 4.1.8 Domain of sender address bookings@example.com does not resolve", RateLimited),
    // Our sending IP on a blocklist is ours, never the guest's.
    case(POSTFIX_RBL, RcptTo, "554 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.7", Configuration),
    case(POSTFIX_RBL, RcptTo, "450 4.7.25 Client host rejected: cannot find your hostname, [192.0.2.7]", RateLimited),
    case(EXIM_DNSBL, RcptTo, "550-rejected because 192.0.2.7 is in a black list at zen.spamhaus.org\r\n550 https://www.spamhaus.org/query/ip/192.0.2.7", Configuration),
    // Greylisting: try again later.
    case(POSTGREY, RcptTo, "450 4.2.0 <guest@example.com>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.com.html", Transient),
    case(POSTGREY, RcptTo, "450 4.7.1 <guest@example.com>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.com.html", Transient),
    // qmail: the enhanced code comes last.
    case(QMAIL, RcptTo, "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)", Configuration),
    case(QMAIL, RcptTo, "553 sorry, your envelope sender is in my badmailfrom list (#5.7.1)", Configuration),
    case(QMAIL, EndOfData, "552 sorry, that message size exceeds my databytes limit (#5.3.4)", MessageRefused),
    case(QMAIL, EndOfData, "451 qq write error or disk full (#4.3.0)", Transient),
    case(QMAIL, Greeting, "421 unable to read controls (#4.3.0)", Transient),
    // OpenSMTPD
    case(OPENSMTPD, MailFrom, "530 5.5.1 Invalid command: Must issue an AUTH command first", Configuration),
    case(OPENSMTPD, MailFrom, "530 5.5.1 Invalid command: Must issue a STARTTLS command first", Configuration),
    case(OPENSMTPD, Auth, "535 Authentication failed", CredentialsRejected),
    // The same words for a user it does not know and for a destination no rule of its
    // configuration accepts (relaying): nobody's fault until it says more.
    case(OPENSMTPD, RcptTo, "550 Invalid recipient: <guest@example.com>", Transient),
    case(OPENSMTPD, MailFrom, "452 4.5.3 Too many recipients: Too many messages sent", Transient),
    case(OPENSMTPD, EndOfData, "554 5.3.4 Message too big for system: Transaction failed, message too big", MessageRefused),
    case(OPENSMTPD, EndOfData, "550 5.7.1 Delivery not authorized, message refused: Message is not RFC 2822 compliant", MessageRefused),
    case(OPENSMTPD, EndOfData, "421 4.3.0 Temporary failure", Transient),
    // Haraka
    case(HARAKA, Greeting, "554 Your mail is not welcome here", Configuration),
    case(HARAKA, RcptTo, "550 I cannot deliver mail for <guest@example.com>", Transient),
    case(HARAKA, EndOfData, "550 Message too big!", MessageRefused),
    case(HARAKA, EndOfData, "550 Message denied (4F3A2B1C-5D6E-4F70-8A9B-0C1D2E3F4A5B.1)", MessageRefused),
    case(HARAKA, EndOfData, "451 Message denied temporarily (4F3A2B1C-5D6E-4F70-8A9B-0C1D2E3F4A5B.1)", Transient),
    // Gmail about our IP and our domain's authentication, after the data.
    case(GMAIL_BOUNCES, EndOfData, "550-5.7.1 Unauthenticated email from example.com is not accepted due to\r\n550-5.7.1 domain's DMARC policy. Please contact the administrator of\r\n550-5.7.1 example.com domain if this was a legitimate mail. Please visit\r\n550-5.7.1 https://support.google.com/mail/answer/2451690 to learn about the\r\n550 5.7.1 DMARC initiative. b7-v6si3511933ywl.391 - gsmtp", Configuration),
    case(GMAIL_BOUNCES, EndOfData, "550-5.7.1 [192.0.2.7] The IP you're using to send mail is not authorized to\r\n550-5.7.1 send email directly to our servers. Please use the SMTP relay at your\r\n550-5.7.1 service provider instead. Learn more at\r\n550 5.7.1  https://support.google.com/mail/?p=NotAuthorizedError d2e1a72fcca58-715e57a0f50si1104d2710b3a.328 - gsmtp", Configuration),
    case(GMAIL_BOUNCES, EndOfData, "550-5.7.1 [192.0.2.7 1] Our system has detected an unusual rate of\r\n550-5.7.1 unsolicited mail originating from your IP address. To protect our\r\n550-5.7.1 users from spam, mail sent from your IP address has been blocked.\r\n550-5.7.1 Please visit\r\n550-5.7.1 https://support.google.com/mail/?p=UnsolicitedIPError to review our\r\n550 5.7.1 Bulk Email Senders Guidelines. k33si11162128pld.22 - gsmtp", Configuration),
    case(GMAIL_BOUNCES, EndOfData, "550-5.7.1 [192.0.2.7] The IP address sending this message does not have a PTR\r\n550-5.7.1 record setup. As a policy, Gmail does not accept messages from IPs\r\n550-5.7.1 with missing PTR records. Please visit\r\n550-5.7.1 https://support.google.com/mail/answer/81126#authentication for more\r\n550 5.7.1 information. u6si3554756pld.336 - gsmtp", Configuration),
    case(GMAIL_BOUNCES, EndOfData, "421-4.7.0 [192.0.2.7 15] Our system has detected an unusual rate of\r\n421-4.7.0 unsolicited mail originating from your IP address. To protect our\r\n421-4.7.0 users from spam, mail sent from your IP address has been temporarily\r\n421-4.7.0 rate limited. Please visit\r\n421-4.7.0 https://support.google.com/mail/?p=UnsolicitedRateLimitError to\r\n421 4.7.0 review our Bulk Email Senders Guidelines. p4si3522070uam.9 - gsmtp", RateLimited),
    // A short-term peak of the Workspace relay is not the daily limit.
    case(GMAIL_RELAY, RcptTo, "450 4.2.1 Peak SMTP relay limit exceeded for this customer.", RateLimited),
    // SendGrid: our From address is not a verified sender.
    case(SENDGRID, EndOfData, "550 The from address does not match a verified Sender Identity. Mail cannot be sent until this error is resolved. Visit https://sendgrid.com/docs/for-developers/sending-email/sender-identity/ to see the Sender Identity requirements", Configuration),
    // Zoho Mail: our sender is not one the account may send as; authentication asked for late.
    case(ZOHO, EndOfData, "553 Relaying disallowed as bookings@example.com", Configuration),
    case(ZOHO, RcptTo, "535 Authentication Failed", CredentialsRejected),
    case(ZOHO, MailFrom, "530 5.5.1 Authentication Required.", Configuration),
    // Microsoft 365: a per-sender concurrency limit is temporary; a refused login is ours.
    case(M365_REPORTED, EndOfData, "432 4.3.2 STOREDRV.ClientSubmit; sender thread limit exceeded [Hostname=DM5SPR00MB2471.namprd08.prod.outlook.com]", Transient),
    case(M365_REPORTED, Auth, "535 5.7.3 Authentication unsuccessful [BN3PR03CA0067.namprd03.prod.outlook.com]", CredentialsRejected),
    // Amazon SES in its sandbox names the *recipient* as an unverified identity: our account's
    // state, never the guest's address.
    case(SES_SANDBOX, EndOfData, "554 Message rejected: Email address is not verified. The following identities failed the check in region EU-WEST-1: guest@example.com", Configuration),
];

/// The refusal `r` of case `c`, given to MAIL FROM instead, is our sender's problem, never the
/// guest's.
fn assert_ours_at_mail_from(r: &Reply, c: &Case) {
    assert_eq!(
        classify_refusal(MailFrom, r, SENDER),
        Configuration,
        "{}",
        c.reply
    );
}

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
        let got = classify_refusal(c.command, &read(c.reply), SENDER);
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
    for source in [
        POSTFIX,
        POSTFIX_DOCS,
        EXIM,
        M365,
        M365_NDR,
        M365_SUBMISSION,
        GMAIL,
        SES,
        SES_QUOTA,
        MAILGUN,
        POSTAL,
        SENDMAIL,
        POSTFIX_RBL,
        POSTGREY,
        EXIM_DNSBL,
        QMAIL,
        OPENSMTPD,
        HARAKA,
        GMAIL_BOUNCES,
        GMAIL_RELAY,
        GMAIL_RELAY_LIMITS,
        SENDGRID,
        ZOHO,
        M365_REPORTED,
        SES_SANDBOX,
    ] {
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
        assert_ours_at_mail_from(&r, c);
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
        assert_eq!(
            classify_refusal(command, &read(raw), SENDER),
            Transient,
            "{raw}"
        );
    }
}

/// A guest chooses their own address, and servers echo it: its parts never read as words about
/// us. Each reply below would pause SMTP for every guest if `dmarc`, `your ip`, `relay` or
/// `envelope sender` inside the address counted.
#[test]
fn an_echoed_recipient_address_never_reads_as_words_about_us() {
    for (command, reply, want) in [
        (
            RcptTo,
            "554 5.7.1 <dmarc@guest.example>: Recipient address rejected: Access denied",
            RecipientDeclined,
        ),
        (
            RcptTo,
            "552 5.2.2 <your.ip@guest.example>: Mailbox full",
            Transient,
        ),
        (
            RcptTo,
            "550 <relay.sender@guest.example>: no such user here",
            Transient,
        ),
        (
            RcptTo,
            "550 envelope.sender@guest.example: mailbox unavailable",
            Transient,
        ),
        (
            RcptTo,
            "550 5.1.1 <ptr.record@guest.example>: Recipient address rejected: User unknown",
            RecipientRejected,
        ),
        // Nor do they pause the route for five minutes through a temporary refusal.
        (
            RcptTo,
            "450 4.2.0 <your.ip.rate.limited@guest.example>: Recipient address rejected: Greylisted",
            Transient,
        ),
        (
            RcptTo,
            "451 4.7.1 <sender.address@guest.example>: Recipient address rejected: try again later",
            Transient,
        ),
    ] {
        assert_eq!(
            classify_refusal(command, &read(reply), SENDER),
            want,
            "{reply}"
        );
    }
    // The same words outside an address still count.
    assert_eq!(
        classify_refusal(RcptTo, &read("550 Relay access denied"), SENDER),
        Configuration
    );
}

#[test]
fn a_recipients_policy_drops_the_email_but_never_blames_the_address_or_the_route() {
    // Every policy or unconfirmed-address refusal of the table is one recipient's: dropped, not
    // suppressed, and only at RCPT TO; the same reply to MAIL FROM is about our sender.
    let declined: Vec<&Case> = TABLE
        .iter()
        .filter(|c| c.want == RecipientDeclined)
        .collect();
    assert!(declined.len() >= 8);
    for c in declined {
        assert_eq!(c.command, RcptTo, "{}", c.reply);
        let r = read(c.reply);
        assert_ours_at_mail_from(&r, c);
    }
}

#[test]
fn a_reply_naming_our_sender_is_about_us_whatever_its_code() {
    // The same words and codes blame the guest or us by the address they name.
    for (raw, want) in [
        (
            "550 5.7.1 <guest@example.com>: Access denied",
            RecipientDeclined,
        ),
        (
            "550 5.7.1 <bookings@example.com>: Access denied",
            Configuration,
        ),
        (
            "550 5.4.1 <guest@example.com>: Access denied",
            RecipientDeclined,
        ),
        (
            "550 5.4.1 <bookings@example.com>: Access denied",
            Configuration,
        ),
        ("550 <guest@example.com>: not accepted", Transient),
        ("550 <Bookings@Example.com>: not accepted", Configuration),
        (
            "550 5.1.0 <mybookings@example.com>: not accepted",
            Transient,
        ),
    ] {
        assert_eq!(classify_refusal(RcptTo, &read(raw), SENDER), want, "{raw}");
    }
}

#[test]
fn our_quota_pauses_the_route_at_any_step_of_the_transaction() {
    for command in [MailFrom, RcptTo, Data, EndOfData] {
        for raw in [
            "454 Throttling failure: Daily message quota exceeded.",
            "550 5.1.90 Your message can't be sent because you've reached your daily limit for message recipients",
            "554 5.2.0 STOREDRV.Submission.Exception:SubmissionQuotaExceededException; Failed to process message",
        ] {
            assert_eq!(classify_refusal(command, &read(raw), SENDER), DailyLimit, "{raw} to {}", command.as_str());
        }
    }
    // A full mailbox is not our quota: it may empty.
    assert_eq!(
        classify_refusal(
            EndOfData,
            &read("554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException.MapiExceptionShutoffQuotaExceeded"),
            SENDER
        ),
        Transient
    );
}

#[test]
fn a_policy_refusal_about_our_ip_or_domain_is_ours_at_rcpt_to_too() {
    // A 5.7.1 at RCPT TO is usually one recipient's own rule (dropped, nobody suppressed, the route
    // kept). The same code about our sending IP, our domain's DMARC or a relay that will not carry
    // our mail would drop every guest's email one by one: it pauses the route instead. Each text is
    // a real one of the table (Gmail sends them after the data; Postfix evaluates client and sender
    // restrictions at RCPT TO).
    for raw in [
        "550-5.7.1 [192.0.2.7] The IP you're using to send mail is not authorized to\r\n550 5.7.1 send email directly to our servers.",
        "550-5.7.1 [192.0.2.7 1] Our system has detected an unusual rate of\r\n550 5.7.1 unsolicited mail originating from your IP address.",
        "550-5.7.1 [192.0.2.7] The IP address sending this message does not have a PTR\r\n550 5.7.1 record setup.",
        "550-5.7.1 Unauthenticated email from example.com is not accepted due to\r\n550 5.7.1 domain's DMARC policy.",
        "554 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using zen.spamhaus.org",
        "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)",
    ] {
        let r = read(raw);
        assert_eq!(r.enhanced.map(|e| e.to_string()).as_deref(), Some("5.7.1"), "{raw}");
        assert_eq!(classify_refusal(RcptTo, &r, SENDER), Configuration, "{raw}");
    }
    // Without those words the same code stays the recipient's own rule.
    assert_eq!(
        classify_refusal(
            RcptTo,
            &read("550 5.7.1 Delivery not authorized, message refused"),
            SENDER
        ),
        RecipientDeclined
    );
    // "black list" only as Exim's DNS-list sentence, not a recipient's own list of senders.
    assert_eq!(
        classify_refusal(
            RcptTo,
            &read("550 5.7.1 Sender is on the recipient's black list"),
            SENDER
        ),
        RecipientDeclined
    );
}

#[test]
fn replies_known_only_from_secondary_reports_are_blamed_by_their_codes() {
    // Replies often quoted in deliverability guides and forum threads whose server could not be
    // pinned to its own source or documentation: read by their codes, as the rules say.
    for (command, raw, want) in [
        // A local policy: ours before the data; after it, maybe about this message alone (the
        // next email on the route decides).
        (RcptTo, "550 5.7.0 Local Policy Violation", Configuration),
        (
            EndOfData,
            "550 5.7.0 Local Policy Violation",
            MessageRefused,
        ),
        // A full mailbox may empty: retried, never suppressed, whatever its class.
        (RcptTo, "552 5.2.2 mailbox full", Transient),
        (EndOfData, "552 5.2.2 mailbox full", Transient),
        (RcptTo, "452 4.2.2 mailbox full", Transient),
        // RFC 5321's own texts.
        (EndOfData, "554 Transaction failed", MessageRefused),
        (RcptTo, "554 Transaction failed", Transient),
        (EndOfData, "451 4.3.0 Temporary system problem", Transient),
        (RcptTo, "451 4.7.1 Please try again later", Transient),
        (Greeting, "421 4.3.2 Service shutting down", Transient),
        (MailFrom, "421 4.3.2 Service shutting down", Transient),
        // Microsoft 365's directory refusal: dropped, the guest not suppressed.
        (
            RcptTo,
            "550 5.4.1 Recipient address rejected: Access denied",
            RecipientDeclined,
        ),
    ] {
        assert_eq!(
            classify_refusal(command, &read(raw), SENDER),
            want,
            "{raw} to {}",
            command.as_str()
        );
    }
}
