//! The marketing email (pure): one campaign ([`crate::domain::marketing::campaign`]) rendered for
//! one recipient, with its RFC 8058 one-click unsubscribe (<https://www.rfc-editor.org/rfc/rfc8058>).
//!
//! Kind [`EmailKind::Marketing`] (rank marketing, audience client), no booking. Every marketing
//! email carries, besides the operator's text:
//! - a visible unsubscribe link (Gmail requires one in the body as well as the headers), the URL
//!   [`unsubscribe::url`] of a token [`unsubscribe::sign`]`(address, "marketing", key)`;
//! - the two RFC 8058 headers [`unsubscribe::headers`] (`List-Unsubscribe: <https://…>` and
//!   `List-Unsubscribe-Post: List-Unsubscribe=One-Click`).
//!
//! Tokens are deterministic, so every attempt of one dedupe key renders byte-identical mail.

use super::{compose, Branding, Envelope, RenderError};
use crate::domain::email::{DedupeKey, EmailKind};
use crate::domain::event::EmailAddress;
use crate::domain::marketing::campaign::{Campaign, LIST};
use crate::domain::marketing::unsubscribe;
use crate::domain::outbox::outgoing::OutgoingEmail;

/// What the marketing templates show: the campaign's subject and paragraphs (HTML) or its text
/// (plain), and the visible unsubscribe link.
struct MarketingView<'a> {
    tr: crate::domain::i18n::Tr,
    brand: &'a str,
    subject: &'a str,
    paragraphs: Vec<Vec<&'a str>>,
    body: String,
    unsubscribe_url: &'a str,
}

crate::domain::render::email_body!(MarketingView = "marketing.html", "marketing.txt");

/// The unsubscribe URL of `to` for the marketing list: `https://<PUBLIC_BASE_URL host>/unsubscribe/
/// <token>`.
pub fn unsubscribe_url(to: &EmailAddress, public_base_url: &str, key: &[u8]) -> String {
    unsubscribe::url(public_base_url, &unsubscribe::sign(to.as_str(), LIST, key))
}

/// Renders one campaign's email to `to`: subject as given, the text's paragraphs, a visible
/// unsubscribe link (its words in `branding`'s language: the campaign's), and the two RFC 8058
/// headers. `key` is `UNSUBSCRIBE_SIGNING_KEY`; it must not
/// be empty ([`RenderError::Refused`]: no marketing email may go out without a working link).
pub fn render(
    campaign: &Campaign,
    to: &EmailAddress,
    public_base_url: &str,
    key: &[u8],
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    if key.is_empty() {
        return Err(RenderError::Refused(
            "UNSUBSCRIBE_SIGNING_KEY is empty: a marketing email needs an unsubscribe link".into(),
        ));
    }
    let token = unsubscribe::sign(to.as_str(), LIST, key);
    let url = unsubscribe::url(public_base_url, &token);
    let paragraphs = campaign.paragraphs();
    let body = paragraphs
        .iter()
        .map(|p| p.join("\n"))
        .collect::<Vec<_>>()
        .join("\n\n");
    let kind = EmailKind::Marketing;
    let mut envelope = Envelope::new(
        kind,
        DedupeKey::for_marketing(campaign.id.as_str(), to),
        to,
        campaign.subject.clone(),
    );
    envelope.headers = unsubscribe::headers(public_base_url, &token).to_vec();
    compose(
        envelope,
        &MarketingView {
            tr: branding.tr(),
            brand: &branding.brand,
            subject: &campaign.subject,
            paragraphs,
            body,
            unsubscribe_url: &url,
        },
        branding,
    )
}
