//! Unfinished checkouts ([`crate::domain::payment::checkout`]), the customer's side: the follow-up after
//! an unpaid checkout and the decline emails the owner sends with one click. Customer emails
//! carry a retry link (the booking site) and never an action link; no booking exists yet, so
//! they carry no booking id.

use super::text::{date_range, greet, long_date, non_empty};
use super::{compose, Branding, Envelope, RenderError};
use crate::domain::email::{DedupeKey, EmailKind};
use crate::domain::event::{CheckoutAttempt, EmailAddress, PersonName};
use crate::domain::i18n::Tr;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::payment::action_token::OwnerAction;

/// What a checkout email calls the trip: `<hotel>, <dates>`, or whichever part is known.
fn checkout_trip(a: &CheckoutAttempt, tr: Tr) -> Option<String> {
    let hotel = non_empty(a.hotel_name.as_deref());
    let dates = match (a.checkin, a.checkout) {
        (Some(i), Some(o)) => Some(tr.date_range(i, o)),
        (Some(i), None) => Some(tr.t1("date-from", "date", &tr.date(i))),
        _ => None,
    };
    match (hotel, dates) {
        (Some(h), Some(d)) => Some(format!("{h}, {d}")),
        (Some(h), None) => Some(h.to_string()),
        (None, Some(d)) => Some(tr.t1("checkout-trip-stay", "dates", &d)),
        (None, None) => None,
    }
}

/// The stay dates of a checkout: a range, `from <check-in>`, or `None` without a check-in.
pub(super) fn checkout_dates(a: &CheckoutAttempt) -> Option<String> {
    match (a.checkin, a.checkout) {
        (Some(i), Some(o)) => Some(date_range(i, o)),
        (Some(i), None) => Some(format!("from {}", long_date(i))),
        _ => None,
    }
}

/// The hotel of a checkout: its name, else its supplier id.
pub(super) fn checkout_hotel(a: &CheckoutAttempt) -> Option<String> {
    non_empty(a.hotel_name.as_deref())
        .or(non_empty(a.hotel_id.as_deref()))
        .map(str::to_string)
}

/// The customer's full name on a checkout, when given.
pub(super) fn checkout_name(a: &CheckoutAttempt) -> Option<String> {
    a.guest_name
        .as_ref()
        .map(PersonName::full)
        .filter(|n| !n.is_empty())
}

/// The customer's first name on a checkout, or "there".
fn checkout_first_name(a: &CheckoutAttempt, tr: Tr) -> String {
    greet(
        tr,
        a.guest_name.as_ref().map_or("", |n| n.first_name.as_str()),
    )
}

/// A retry link must be a public booking-site URL: `http(s)://`, no whitespace or quotes, and
/// never an admin or one-click action path (an internal link must never reach a customer).
fn check_retry_url(url: &str) -> Result<&str, RenderError> {
    let url = url.trim();
    let lower = url.to_ascii_lowercase();
    let scheme_ok = lower.starts_with("https://") || lower.starts_with("http://");
    let clean = !url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '<' | '>'));
    let internal = ["/admin", "/actions/", "/action/"]
        .iter()
        .any(|p| lower.contains(p));
    if scheme_ok && clean && !internal {
        Ok(url)
    } else {
        Err(RenderError::Refused(format!(
            "retry URL {url:?} is not a public booking-site link"
        )))
    }
}

/// A checkout as the customer's two templates read it.
struct CheckoutFollowUp<'a> {
    tr: Tr,
    brand: &'a str,
    greeting: String,
    trip: Option<String>,
    retry_url: &'a str,
    title: &'a str,
    /// `checkout_declined` only: the reason is insufficient funds (else a security check).
    funds: bool,
}
email_body!(
    NotCompleted(CheckoutFollowUp) = "checkout_not_completed.html",
    "checkout_not_completed.txt"
);
email_body!(
    Declined(CheckoutFollowUp) = "checkout_declined.html",
    "checkout_declined.txt"
);

impl<'a> CheckoutFollowUp<'a> {
    /// Refused when `retry_url` is not a public booking-site link ([`check_retry_url`]).
    fn of(
        a: &'a CheckoutAttempt,
        retry_url: &'a str,
        title: &'a str,
        funds: bool,
        branding: &'a Branding,
    ) -> Result<Self, RenderError> {
        let tr = branding.tr();
        Ok(Self {
            tr,
            brand: &branding.brand,
            greeting: checkout_first_name(a, tr),
            trip: checkout_trip(a, tr),
            retry_url: check_retry_url(retry_url)?,
            title,
            funds,
        })
    }
}

/// The customer's follow-up 20 minutes after an unpaid checkout (kind `checkout_not_completed`,
/// rank service), key `checkout_not_completed:<prebook id>`.
///
/// "Your booking wasn't completed — nothing was charged": it never claims a decline (we cannot see
/// one), explains the two common reasons a card payment fails — not enough funds or credit, and
/// the card issuer's or payment processor's security check — with how to fix each, and links to
/// `retry_url` (the booking site; refused when it is not a public `http(s)` URL or points at an
/// admin/action path). Hotel and dates appear when the attempt carries them.
pub fn checkout_not_completed(
    a: &CheckoutAttempt,
    to: &EmailAddress,
    retry_url: &str,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::CheckoutNotCompleted;
    let title = branding.tr().t("checkout-subject");
    let view = CheckoutFollowUp::of(a, retry_url, &title, false, branding)?;
    compose(
        Envelope::new(
            kind,
            DedupeKey::new(kind, a.prebook_id.trim()),
            to,
            title.clone(),
        ),
        &NotCompleted(&view),
        branding,
    )
}

/// The customer's email the owner sends with one click on a card-testing hold, naming one reason:
/// `reason` = [`OwnerAction::SendInsufficientFunds`] → kind `checkout_declined_funds`,
/// [`OwnerAction::SendSecurityCheck`] → kind `checkout_declined_security` (both rank service);
/// [`OwnerAction::Dismiss`] is refused. Both kinds share the key
/// `checkout_declined:<prebook id>` ([`DedupeKey::for_checkout_decline`]; a hold is about one
/// attempt), so the customer gets one decline email per hold whichever the owner picks.
pub fn checkout_declined(
    a: &CheckoutAttempt,
    to: &EmailAddress,
    reason: OwnerAction,
    retry_url: &str,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let (kind, funds, title) = match reason {
        OwnerAction::SendInsufficientFunds => (
            EmailKind::CheckoutDeclinedFunds,
            true,
            "declined-funds-subject",
        ),
        OwnerAction::SendSecurityCheck => (
            EmailKind::CheckoutDeclinedSecurity,
            false,
            "declined-security-subject",
        ),
        OwnerAction::Dismiss | OwnerAction::RefundNow | OwnerAction::RefundHandled => {
            return Err(RenderError::Refused(format!(
                "the {reason} action sends no decline email"
            )))
        }
    };
    let title = branding.tr().t(title);
    let view = CheckoutFollowUp::of(a, retry_url, &title, funds, branding)?;
    compose(
        Envelope::new(
            kind,
            DedupeKey::for_checkout_decline(&a.prebook_id),
            to,
            title.clone(),
        ),
        &Declined(&view),
        branding,
    )
}
