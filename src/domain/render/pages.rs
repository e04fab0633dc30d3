//! The HTML pages the engine serves: the one-click action pages (confirm, result), the
//! unsubscribe pages (confirm, result; RFC 8058 one-click, <https://www.rfc-editor.org/rfc/rfc8058>)
//! and the bare fallback page. Every page template extends `templates/action_page.html` (not
//! indexed, no referrer), which shares its document shell with the emails' `base.html` through
//! `templates/layout.html`; both result pages share `templates/result_page.html`.

use super::checkout::{checkout_dates, checkout_hotel, checkout_name};
use super::text::{money, non_empty};
use crate::domain::event::{CheckoutAttempt, EmailAddress};
use crate::domain::marketing::unsubscribe;
use crate::domain::payment::action_token::OwnerAction;
use crate::domain::payment::compensation::{CompensationRow, StepRow};
use askama::filters::{escape, Html};
use askama::Template;

#[derive(Template)]
#[template(path = "action_confirm.html")]
struct ActionConfirmPage<'a> {
    label: &'static str,
    effect: String,
    hold_id: &'a str,
    reason: &'a str,
    email: Option<&'a str>,
    name: Option<String>,
    hotel: Option<String>,
    dates: Option<String>,
    price: Option<String>,
    prebook_id: &'a str,
    form: &'a ConfirmForm<'a>,
}

/// An outcome page: a title, one message, and the brand when the page shows one.
#[derive(Template)]
#[template(path = "result_page.html")]
struct ResultPage<'a> {
    title: &'a str,
    message: &'a str,
    brand: Option<&'a str>,
    /// The page's language (`<html lang>`).
    lang: &'a str,
}

#[derive(Template)]
#[template(path = "unsubscribe_confirm.html")]
struct UnsubscribeConfirmPage<'a> {
    tr: crate::domain::i18n::Tr,
    brand: &'a str,
    email: &'a str,
    post_url: &'a str,
    /// The one-click form field, `List-Unsubscribe`, and its value, `One-Click`.
    field: &'a str,
    value: &'a str,
}

/// A bare page for the (unreachable in practice) case that a page template fails to render:
/// `title` as title and heading, `message` as its one paragraph, both HTML-escaped by askama's
/// escaper (the same numeric entities as the templates). Uses no template, so it cannot fail.
pub(crate) fn fallback_page(title: &str, message: &str) -> String {
    let Ok(t) = escape(title, Html);
    let Ok(m) = escape(message, Html);
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title></head>\
         <body><h1>{t}</h1><p>{m}</p></body></html>"
    )
}

/// What confirming `action` does, in the owner's words; `email` is the customer's address.
fn effect(action: OwnerAction, email: Option<&str>) -> String {
    match (action, email) {
        (OwnerAction::SendInsufficientFunds, Some(to)) => format!(
            "The customer at {to} gets one email saying the payment didn\u{2019}t go through for lack of funds or credit, with how to fix it and a link to try again. The hold closes."
        ),
        (OwnerAction::SendSecurityCheck, Some(to)) => format!(
            "The customer at {to} gets one email saying the payment was stopped by a security check, with how to fix it and a link to try again. The hold closes."
        ),
        (OwnerAction::SendInsufficientFunds | OwnerAction::SendSecurityCheck, None) => {
            "This checkout has no customer email address: nothing can be sent. The hold closes."
                .to_string()
        }
        (OwnerAction::Dismiss, _) => {
            "The hold closes and nothing is sent to the customer.".to_string()
        }
        (OwnerAction::RefundNow, _) => "Stripe is asked once to refund the guest's payment (the amount below, else everything captured). The guest is not emailed again.".to_string(),
        (OwnerAction::RefundHandled, _) => "The refund is recorded as handled by you outside the engine. Nothing is sent to Stripe or to the guest.".to_string(),
    }
}

/// The form of a link's confirmation page: where it posts, the nonce of this render
/// ([`crate::domain::payment::action_token::form_nonce`]), and a notice when the page is shown again
/// because a post was refused (it did not come from this page, or its form had expired).
#[derive(Debug, Clone, Copy)]
pub struct ConfirmForm<'a> {
    pub post_url: &'a str,
    pub nonce: &'a str,
    pub notice: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "refund_confirm.html")]
struct RefundConfirmPage<'a> {
    label: &'static str,
    effect: String,
    c: &'a CompensationRow,
    refund_status: &'static str,
    amount: Option<String>,
    error: Option<&'a str>,
    form: &'a ConfirmForm<'a>,
}

/// The page a compensation's one-click link opens (`GET`): the compensation's facts, the refund
/// step as recorded, and **one** `POST` form (`form`: its URL and nonce) performing `action`
/// ([`OwnerAction::RefundNow`] or [`OwnerAction::RefundHandled`]). Changes nothing. Every value
/// is HTML-escaped.
pub fn refund_confirm_page(
    c: &CompensationRow,
    refund: &StepRow,
    action: OwnerAction,
    form: &ConfirmForm<'_>,
) -> String {
    let page = RefundConfirmPage {
        label: action.label(),
        effect: effect(action, None),
        c,
        refund_status: refund.status.as_str(),
        amount: match (refund.amount_minor, refund.currency.as_deref()) {
            (Some(a), Some(cur)) => {
                Some(crate::domain::payment::compensation::format_minor(a, cur))
            }
            _ => None,
        },
        error: refund.error.as_deref(),
        form,
    };
    page.render()
        .unwrap_or_else(|e| fallback_page("Confirm this action", &e.to_string()))
}

/// The page a one-click link opens (`GET`): the hold's facts and **one** `POST` form (to
/// `form.post_url`, carrying `form.nonce`) whose button performs `action`. Opening it changes nothing (mail scanners pre-fetch
/// links). `reason` is the hold's risk in plain words; `email` the customer's address as stored.
/// Every value is HTML-escaped.
pub fn action_confirm_page(
    hold_id: &str,
    reason: &str,
    a: &CheckoutAttempt,
    email: Option<&str>,
    action: OwnerAction,
    form: &ConfirmForm<'_>,
) -> String {
    let email = non_empty(email).or(a.email.as_ref().map(EmailAddress::as_str));
    let page = ActionConfirmPage {
        label: action.label(),
        effect: effect(action, email),
        hold_id,
        reason,
        email,
        name: checkout_name(a),
        hotel: checkout_hotel(a),
        dates: checkout_dates(a),
        price: money(&a.price),
        prebook_id: &a.prebook_id,
        form,
    };
    page.render()
        .unwrap_or_else(|e| fallback_page("Confirm this action", &e.to_string()))
}

/// A one-click outcome page: done, already used, expired, invalid, already handled. `title` and
/// `message` are HTML-escaped.
pub fn action_result_page(title: &str, message: &str) -> String {
    result_page(title, message, None, "en")
}

fn result_page(title: &str, message: &str, brand: Option<&str>, lang: &str) -> String {
    ResultPage {
        title,
        message,
        brand,
        lang,
    }
    .render()
    .unwrap_or_else(|_| fallback_page(title, message))
}

/// The page `GET /unsubscribe/<token>` shows: names the address, says that only marketing email
/// stops (booking emails still come), and offers a form that POSTs `List-Unsubscribe=One-Click`
/// to `post_url` (the same URL). Showing it changes nothing: mail scanners pre-fetch links.
pub fn unsubscribe_confirm_page(email: &str, post_url: &str, brand: &str) -> String {
    unsubscribe_confirm_page_in(
        email,
        post_url,
        brand,
        crate::domain::i18n::Tr::new(crate::domain::i18n::Locale::En),
    )
}

/// [`unsubscribe_confirm_page`] in `tr`'s language (the visitor's `Accept-Language`).
pub fn unsubscribe_confirm_page_in(
    email: &str,
    post_url: &str,
    brand: &str,
    tr: crate::domain::i18n::Tr,
) -> String {
    let (field, value) = unsubscribe::ONE_CLICK
        .split_once('=')
        .expect("ONE_CLICK is key=value");
    UnsubscribeConfirmPage {
        tr,
        brand,
        email,
        post_url,
        field,
        value,
    }
    .render()
    .unwrap_or_else(|e| fallback_page("Unsubscribe", &e.to_string()))
}

/// An outcome page of the unsubscribe route (done, invalid link, …), with the brand. Title and
/// message are HTML-escaped.
pub fn unsubscribe_result_page(title: &str, message: &str, brand: &str) -> String {
    result_page(title, message, Some(brand), "en")
}

/// [`unsubscribe_result_page`] of a page written in `lang` (a shipped BCP 47 tag).
pub fn unsubscribe_result_page_in(title: &str, message: &str, brand: &str, lang: &str) -> String {
    result_page(title, message, Some(brand), lang)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallback_page_escapes_title_and_message() {
        assert_eq!(
            fallback_page("<b>T</b>", "a & 'b' \"c\""),
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>&#60;b&#62;T&#60;/b&#62;</title></head><body><h1>&#60;b&#62;T&#60;/b&#62;</h1>\
             <p>a &#38; &#39;b&#39; &#34;c&#34;</p></body></html>"
        );
    }
}
