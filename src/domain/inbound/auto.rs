//! Mail no person wrote: out-of-office answers, delivery reports, list and bulk mail. Kept on the
//! booking as such and never alerted; answering them would start a loop between two robots.
//!
//! The cues, from the headers and the envelope only:
//! - RFC 3834 §5 `Auto-Submitted` with any value but `no` (`auto-replied`, `auto-generated`,
//!   `auto-notified`; <https://www.rfc-editor.org/rfc/rfc3834#section-5>);
//! - Microsoft's `X-Auto-Response-Suppress` (Exchange and Outlook set it on their own automatic
//!   mail, out-of-office answers included: <https://learn.microsoft.com/en-us/openspecs/exchange_server_protocols/ms-oxcmail/ced68690-498a-4567-9d14-5c01f974d8b1>),
//!   and the older `X-Autoreply` / `X-Autorespond`;
//! - `Precedence: bulk`, `junk` or `list`, and any `List-Id` (RFC 2919): mailing-list traffic;
//! - a delivery report: `Content-Type: multipart/report` (RFC 6522), a null envelope sender
//!   (`<>`, RFC 5321 §4.5.5) or `MAILER-DAEMON` as the sender.

use serde::{Deserialize, Serialize};

/// What kind of machine wrote a message. Stored names: the variant in `snake_case`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum AutoKind {
    /// A delivery (failure) report: multipart/report, a null or MAILER-DAEMON sender.
    DeliveryReport,
    /// An automatic answer (out of office, vacation) or other automatic mail (RFC 3834).
    AutoReply,
    /// Mailing-list or bulk mail (`Precedence`, `List-Id`).
    Bulk,
}

crate::domain::basics::stored_names!(AutoKind);

impl AutoKind {
    /// A short phrase for the owner's pages.
    pub fn describe(self) -> &'static str {
        match self {
            AutoKind::DeliveryReport => "delivery report (bounce)",
            AutoKind::AutoReply => "automatic reply (e.g. out of office)",
            AutoKind::Bulk => "list or bulk mail",
        }
    }
}

/// Classifies a message by its headers (`header(name)`: the first value of a header, any case of
/// name) and its envelope sender (`MAIL FROM`, possibly empty). `None`: a person wrote it.
pub fn classify(header: impl Fn(&str) -> Option<String>, envelope_from: &str) -> Option<AutoKind> {
    let value = |name: &str| header(name).map(|v| v.trim().to_ascii_lowercase());
    let sender = envelope_from
        .trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_ascii_lowercase();
    let content_type = value("Content-Type").unwrap_or_default();
    if sender.is_empty()
        || sender.starts_with("mailer-daemon@")
        || sender == "mailer-daemon"
        || content_type.starts_with("multipart/report")
    {
        return Some(AutoKind::DeliveryReport);
    }
    let auto_submitted = value("Auto-Submitted")
        .map(|v| v.split(';').next().unwrap_or("").trim().to_string())
        .is_some_and(|v| !v.is_empty() && v != "no");
    if auto_submitted
        || value("X-Auto-Response-Suppress").is_some()
        || value("X-Autoreply").is_some()
        || value("X-Autorespond").is_some()
    {
        return Some(AutoKind::AutoReply);
    }
    let precedence = value("Precedence").unwrap_or_default();
    if matches!(precedence.as_str(), "bulk" | "junk" | "list") || value("List-Id").is_some() {
        return Some(AutoKind::Bulk);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(headers: &[(&str, &str)], from: &str) -> Option<AutoKind> {
        classify(
            |name| {
                headers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.to_string())
            },
            from,
        )
    }

    /// (headers, envelope sender, what it is).
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, Option<AutoKind>);

    #[test]
    fn each_cue_is_recognised_and_a_person_is_not_a_robot() {
        let guest = "guest@example.com";
        let table: &[Case] = &[
            (&[], guest, None),
            (&[("Auto-Submitted", "no")], guest, None),
            (
                &[("Auto-Submitted", "auto-replied")],
                guest,
                Some(AutoKind::AutoReply),
            ),
            (
                &[("auto-submitted", "Auto-Generated; owner-email=x")],
                guest,
                Some(AutoKind::AutoReply),
            ),
            (
                &[("X-Auto-Response-Suppress", "All")],
                guest,
                Some(AutoKind::AutoReply),
            ),
            (&[("X-Autoreply", "yes")], guest, Some(AutoKind::AutoReply)),
            (&[("Precedence", "bulk")], guest, Some(AutoKind::Bulk)),
            (&[("Precedence", "first-class")], guest, None),
            (
                &[("List-Id", "<news.example.com>")],
                guest,
                Some(AutoKind::Bulk),
            ),
            (
                &[(
                    "Content-Type",
                    "multipart/report; report-type=delivery-status; boundary=x",
                )],
                guest,
                Some(AutoKind::DeliveryReport),
            ),
            (&[], "", Some(AutoKind::DeliveryReport)),
            (&[], "<>", Some(AutoKind::DeliveryReport)),
            (
                &[],
                "MAILER-DAEMON@mx.example.com",
                Some(AutoKind::DeliveryReport),
            ),
        ];
        for (headers, from, want) in table {
            assert_eq!(with(headers, from), *want, "{headers:?} from {from:?}");
        }
    }
}
