//! A marketing campaign (pure): the operator's send request, read and checked against the content
//! lock before anything is enqueued. The email each recipient gets is
//! `crate::domain::render::marketing`.
//!
//! # The send request (`POST /admin/marketing/send`)
//!
//! ```json
//! {
//!   "campaign": "spring-2026",
//!   "subject": "Spring offers",
//!   "text": "First paragraph.\n\nSecond paragraph,\nwith a line break.",
//!   "recipients": ["a@example.com", "b@example.com"]
//! }
//! ```
//!
//! - `campaign` (required): 1–[`CAMPAIGN_ID_MAX`] characters of `A–Z a–z 0–9 _ -`. It names the
//!   campaign for ever: every recipient's dedupe key is `marketing:<campaign>:<address>`
//!   ([`DedupeKey::for_marketing`]), so submitting the same campaign again reaches nobody twice.
//! - `subject` (required): 1–[`SUBJECT_MAX`] characters after trimming, no control characters (a
//!   CR or LF would be a header injection).
//! - `text` (required): plain text, at most [`TEXT_MAX`] characters; paragraphs are separated by
//!   blank lines, a single line break stays a line break. Control characters other than line
//!   breaks and tabs are refused. It is HTML-escaped in the HTML part (no markup: what the
//!   operator types is what the guest reads).
//! - `recipients` (required): 1–[`RECIPIENTS_MAX`] strings. An entry that is not an email address
//!   (or that would make a dedupe key over [`DEDUPE_KEY_MAX`] bytes) is *rejected* — reported in
//!   the reply, not fatal. Repeats (compared case-insensitively) are collapsed and counted.
//!
//! Anything else that is wrong is a [`ParseError`] naming the field (HTTP 400). Unknown fields are
//! ignored.
//!
use crate::domain::basics::parse_error::ParseError;
use crate::domain::email::content_lock::{self, ContentLock};
use crate::domain::email::DedupeKey;
use crate::domain::event::EmailAddress;
use crate::domain::marketing::unsubscribe;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashSet;
use std::fmt;

/// The list name signed into marketing unsubscribe tokens. A token for another list is refused by
/// the unsubscribe route.
pub const LIST: &str = "marketing";
/// Longest campaign id, characters.
pub const CAMPAIGN_ID_MAX: usize = 64;
/// Longest subject, characters (providers accept 998; inboxes show far fewer).
pub const SUBJECT_MAX: usize = 200;
/// Longest text body, characters.
pub const TEXT_MAX: usize = 20_000;
/// Most recipients in one request. Each recipient costs up to four binding calls (suppression read,
/// D1 claim, outbox enqueue, D1 mark) and a Worker invocation has a subrequest budget (1,000 on the
/// paid plan when this was written), so 200 recipients (≤ 800 calls) stay inside it; larger lists
/// are sent as several requests (the dedupe key makes overlaps harmless).
pub const RECIPIENTS_MAX: usize = 200;
/// Longest dedupe key the outbox re-reads ([`DedupeKey::from_stored`]), bytes.
pub const DEDUPE_KEY_MAX: usize = 256;

/// A campaign id: 1–64 characters of `A–Z a–z 0–9 _ -`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CampaignId(String);

impl CampaignId {
    /// Parses a campaign id (surrounding whitespace is an error, not trimmed: ids are keys).
    pub fn parse(raw: &str) -> Result<Self, ParseError> {
        let invalid = |reason: String| ParseError::Invalid {
            field: "campaign".into(),
            reason,
        };
        if raw.is_empty() {
            return Err(invalid("must not be empty".into()));
        }
        if raw.chars().count() > CAMPAIGN_ID_MAX {
            return Err(invalid(format!(
                "must be at most {CAMPAIGN_ID_MAX} characters"
            )));
        }
        if !raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(invalid(
                "may only contain letters A–Z a–z, digits, `_` and `-`".into(),
            ));
        }
        Ok(Self(raw.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CampaignId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What one campaign says: the same for every recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Campaign {
    pub id: CampaignId,
    /// Trimmed, one line.
    pub subject: String,
    /// Line breaks normalized to `\n`, trailing whitespace of the whole text removed.
    pub text: String,
    /// The language the operator wrote the campaign in (request field `locale`, a shipped BCP 47
    /// tag): the footer and its unsubscribe words follow it. `None` = `DEFAULT_GUEST_LOCALE`.
    pub locale: Option<crate::domain::i18n::Locale>,
}

impl Campaign {
    /// The text's paragraphs (separated by blank lines), each a list of its lines (trailing
    /// whitespace removed). Never contains an empty paragraph.
    pub fn paragraphs(&self) -> Vec<Vec<&str>> {
        let mut out: Vec<Vec<&str>> = Vec::new();
        let mut current: Vec<&str> = Vec::new();
        for line in self.text.lines().map(str::trim_end) {
            if line.trim().is_empty() {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            } else {
                current.push(line);
            }
        }
        if !current.is_empty() {
            out.push(current);
        }
        out
    }
}

/// A recipient that was not accepted (reply field `rejected[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejected {
    /// The entry as given.
    pub email: String,
    /// Why, e.g. `is not an email address`.
    pub message: String,
}

/// A recipient that was not enqueued on purpose (reply field `skipped[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub email: String,
    /// E.g. `suppressed: marketing_unsubscribed`.
    pub reason: String,
}

/// A parsed, validated send request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendRequest {
    pub campaign: Campaign,
    /// Valid, distinct (case-insensitively) addresses, in request order.
    pub recipients: Vec<EmailAddress>,
    /// Entries that are not usable addresses, in request order.
    pub rejected: Vec<Rejected>,
    /// Entries dropped because the same address came earlier in the request.
    pub repeated: usize,
}

/// The reply to a send request (HTTP 202), e.g.
/// `{"campaign":"spring-2026","queued":2,"duplicates":1,"skipped":[{"email":"x@example.com",
/// "reason":"suppressed: marketing_unsubscribed"}],"rejected":[{"email":"nope","message":"is not an
/// email address"}]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct SendReport {
    pub campaign: String,
    /// Emails claimed and enqueued by this request.
    pub queued: usize,
    /// Recipients already claimed for this campaign (an earlier submission) or repeated in this
    /// request: nothing new was enqueued for them.
    pub duplicates: usize,
    /// Suppressed addresses (unsubscribed, hard bounce, complaint): not enqueued.
    pub skipped: Vec<Skipped>,
    /// Entries that are not usable addresses.
    pub rejected: Vec<Rejected>,
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> ParseError {
    ParseError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

fn required_string<'a>(
    obj: &'a serde_json::Map<String, Value>,
    field: &'static str,
) -> Result<&'a str, ParseError> {
    match obj.get(field) {
        None | Some(Value::Null) => Err(ParseError::Missing(field.into())),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(invalid(field, "must be a string")),
    }
}

fn parse_subject(raw: &str) -> Result<String, ParseError> {
    let subject = raw.trim();
    if subject.is_empty() {
        return Err(invalid("subject", "must not be empty"));
    }
    if subject.chars().count() > SUBJECT_MAX {
        return Err(invalid(
            "subject",
            format!("must be at most {SUBJECT_MAX} characters"),
        ));
    }
    if subject.chars().any(char::is_control) {
        return Err(invalid(
            "subject",
            "must be one line without control characters",
        ));
    }
    Ok(subject.to_string())
}

fn parse_text(raw: &str) -> Result<String, ParseError> {
    let text = raw.replace("\r\n", "\n").replace('\r', "\n");
    let text = text.trim_end();
    if text.trim().is_empty() {
        return Err(invalid("text", "must not be empty"));
    }
    if text.chars().count() > TEXT_MAX {
        return Err(invalid(
            "text",
            format!("must be at most {TEXT_MAX} characters"),
        ));
    }
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(invalid(
            "text",
            "must not contain control characters other than line breaks and tabs",
        ));
    }
    Ok(text.to_string())
}

/// Parses and validates a send request body (see the module docs). Errors name the field:
/// `Json` (not JSON), `NotAnObject`, `Missing("campaign" | "subject" | "text" | "recipients")`,
/// `Invalid { field: "campaign" | "subject" | "text" | "recipients" | "recipients[<i>]" }`.
pub fn parse_send_request(body: &[u8]) -> Result<SendRequest, ParseError> {
    let v: Value = crate::domain::basics::json::parse_body(body)?;
    let obj = v.as_object().ok_or(ParseError::NotAnObject)?;
    let id = CampaignId::parse(required_string(obj, "campaign")?)?;
    let subject = parse_subject(required_string(obj, "subject")?)?;
    let text = parse_text(required_string(obj, "text")?)?;
    let locale = match obj.get("locale") {
        None | Some(Value::Null) => None,
        Some(Value::String(tag)) => {
            Some(crate::domain::i18n::Locale::from_tag(tag).ok_or_else(|| {
                invalid(
                    "locale",
                    "must be a shipped language tag: en, es, fr, de, pt or it",
                )
            })?)
        }
        Some(_) => return Err(invalid("locale", "must be a string")),
    };
    let list = match obj.get("recipients") {
        None | Some(Value::Null) => return Err(ParseError::Missing("recipients".into())),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(invalid("recipients", "must be an array of email addresses")),
    };
    if list.is_empty() {
        return Err(invalid("recipients", "must list at least one address"));
    }
    if list.len() > RECIPIENTS_MAX {
        return Err(invalid(
            "recipients",
            format!(
                "lists {} addresses; at most {RECIPIENTS_MAX} per request",
                list.len()
            ),
        ));
    }
    let mut recipients = Vec::with_capacity(list.len());
    let mut rejected = Vec::new();
    let mut seen = HashSet::with_capacity(list.len());
    let mut repeated = 0;
    for (i, entry) in list.iter().enumerate() {
        let Value::String(raw) = entry else {
            return Err(invalid(format!("recipients[{i}]"), "must be a string"));
        };
        match EmailAddress::parse(raw) {
            Err(e) => rejected.push(Rejected {
                email: raw.clone(),
                message: e.to_string(),
            }),
            Ok(to) => {
                if DedupeKey::for_marketing(id.as_str(), &to).as_str().len() > DEDUPE_KEY_MAX {
                    rejected.push(Rejected {
                        email: raw.clone(),
                        message: format!(
                            "is too long for a dedupe key with campaign {id} (at most {DEDUPE_KEY_MAX} bytes together)"
                        ),
                    });
                } else if seen.insert(to.as_str().to_ascii_lowercase()) {
                    recipients.push(to);
                } else {
                    repeated += 1;
                }
            }
        }
    }
    Ok(SendRequest {
        campaign: Campaign {
            id,
            subject,
            text,
            locale,
        },
        recipients,
        rejected,
        repeated,
    })
}

/// Checks the operator's subject and text against the content lock before anything is enqueued
/// (the outbox checks every email again at send time). `Err` is `Invalid { field: "subject" |
/// "text" }` listing the violations, e.g. `field \`text\` is invalid: the content lock refuses it
/// (admin URL: https://x.example/admin)`.
pub fn check_content(lock: &ContentLock, campaign: &Campaign) -> Result<(), ParseError> {
    let refused = |field: &str, v: Vec<content_lock::LockViolation>| {
        invalid(
            field,
            format!(
                "the content lock refuses it ({})",
                content_lock::describe(&v)
            ),
        )
    };
    lock.check_parts(false, &campaign.subject, "", "")
        .map_err(|v| refused("subject", v))?;
    lock.check_parts(false, "", &campaign.text, "")
        .map_err(|v| refused("text", v))?;
    Ok(())
}

/// `true` when `base_url` may carry unsubscribe links: `https://…` ([`unsubscribe::is_https`]),
/// or, for local development only, `http://` on a loopback host (`127.0.0.1`, `localhost`,
/// `[::1]`, any port). Links are always emitted as `https://` ([`unsubscribe::url`]); on a
/// loopback base they only serve to exercise the flow locally, where no real inbox receives them.
pub fn base_url_allows_marketing(base_url: &str) -> bool {
    if unsubscribe::is_https(base_url) {
        return true;
    }
    let b = base_url.trim();
    let Some(rest) = b
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .and_then(|_| b.get(7..))
    else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or("");
    let host = if authority.starts_with('[') {
        authority.split_inclusive(']').next().unwrap_or("")
    } else {
        authority.split(':').next().unwrap_or("")
    };
    matches!(
        host.to_ascii_lowercase().as_str(),
        "127.0.0.1" | "localhost" | "[::1]"
    )
}
