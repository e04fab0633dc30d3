//! The owner's alerts, sent at once to the owner's address: a new booking, a cancellation, a
//! client email that failed, a paused provider, and a checkout held as possible card testing.
//! Owner alerts may name internals (event ids, dedupe keys, provider replies); guest emails never.

use super::cancellation::{Cancelled, CancelledBooking};
use super::checkout::{checkout_dates, checkout_hotel, checkout_name};
use super::text::{long_date, money, non_empty};
use super::{Envelope, OwnerInbox, RenderError};
use crate::domain::basics::text::header_value;
use crate::domain::email::EmailKind;
use crate::domain::event::{Cancellation, CheckoutAttempt, EmailAddress, HotelBooking, Source};
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::outbox::PauseCause;
use crate::domain::payment::action_token::OwnerAction;
use crate::domain::payment::checkout::{classify_decline, decline_meaning, RiskReason};

struct NewBooking<'a> {
    brand: &'a str,
    sandbox: bool,
    booking_id: &'a str,
    guest_name: String,
    guest_email: &'a str,
    guest_phone: Option<&'a str>,
    hotel_name: &'a str,
    checkin: String,
    checkout: String,
    nights: i64,
    total: Option<String>,
    source: &'a str,
    event_id: &'a str,
    /// The hotel's zone as planned (`Europe/Madrid`), or `None` when it is not known yet.
    hotel_time: Option<&'a str>,
    /// The stay was over when the booking event arrived: no guest email, nothing planned.
    stay_over: bool,
}
email_body!(
    NewBooking = "owner_new_booking.html",
    "owner_new_booking.txt"
);

/// The owner's "new booking" alert (kind `owner_new_booking`, sent at once). `hotel_time` is the
/// zone the booking's emails are planned in (e.g. `Europe/Madrid (coordinates)`), `None` when the
/// hotel's time is not known yet: the alert then says so (planned in UTC until the engine finds
/// the hotel's location).
pub fn owner_new_booking(
    b: &HotelBooking,
    source: Source,
    event_id: &str,
    hotel_time: Option<&str>,
    stay_over: bool,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerNewBooking;
    let sandbox = if b.sandbox { " [sandbox]" } else { "" };
    let subject = format!(
        "New booking{sandbox}: {} · {} · {}",
        b.hotel_name,
        b.holder.name.full(),
        b.checkin
    );
    owner.send(
        owner
            .envelope(kind, b.booking_id.as_str(), subject)
            .about(&b.booking_id),
        &NewBooking {
            brand: owner.brand(),
            sandbox: b.sandbox,
            booking_id: b.booking_id.as_str(),
            guest_name: b.holder.name.full(),
            guest_email: b.holder.email.as_str(),
            guest_phone: b.holder.phone.as_deref(),
            hotel_name: &b.hotel_name,
            checkin: long_date(b.checkin),
            checkout: long_date(b.checkout),
            nights: b.nights(),
            total: money(&b.total),
            source: source.as_str(),
            event_id,
            hotel_time,
            stay_over,
        },
    )
}

email_body!(
    OwnerCancelled(Cancelled) = "owner_booking_cancelled.html",
    "owner_booking_cancelled.txt"
);

/// The owner's "booking cancelled" alert (kind `owner_booking_cancelled`, sent at once), key
/// `owner_booking_cancelled:<booking id>`.
pub fn owner_booking_cancelled(
    c: &CancelledBooking,
    cancellation: &Cancellation,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let subject = format!("Booking cancelled: {} · {}", c.booking_id, c.title);
    owner.send(
        owner
            .envelope(
                EmailKind::OwnerBookingCancelled,
                c.booking_id.as_str(),
                subject,
            )
            .about(&c.booking_id),
        &OwnerCancelled(&Cancelled::of(c, cancellation, owner.branding)),
    )
}

struct EmailFailed<'a> {
    brand: &'a str,
    outcome: &'a str,
    kind: &'a str,
    dedupe_key: &'a str,
    to: &'a str,
    subject: &'a str,
    attempts: i64,
    reason: &'a str,
}
email_body!(
    EmailFailed = "owner_email_failed.html",
    "owner_email_failed.txt"
);

/// The owner's alert that a client email was dropped (`outcome = "dropped"`) or became a dead
/// letter (`"dead"`). Its dedupe key is derived from the failed email's key, so one alert per email.
pub fn owner_email_failed(
    failed: &OutgoingEmail,
    outcome: &str,
    attempts: i64,
    reason: &str,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let subject = format!("Email {outcome}: {}", failed.subject);
    owner.send(
        Envelope {
            booking_id: failed.booking_id.clone(),
            ..owner.envelope(
                EmailKind::OwnerEmailFailed,
                failed.dedupe_key.as_str(),
                subject,
            )
        },
        &EmailFailed {
            brand: owner.brand(),
            outcome,
            kind: failed.kind.as_str(),
            dedupe_key: failed.dedupe_key.as_str(),
            to: failed.to.as_str(),
            subject: &failed.subject,
            attempts,
            reason,
        },
    )
}

/// A journey step that could not hand an email to the outbox, past every retry.
#[derive(Debug, Clone)]
pub struct JourneyFailure<'a> {
    /// The booking (or, for email about no booking, the failed email's dedupe key).
    pub about: &'a str,
    /// What failed: an email kind (`arrival_guide`) or dedupe key.
    pub what: &'a str,
    /// The last error, already bounded by the caller.
    pub error: &'a str,
    /// The UTC day of the failure, `YYYY-MM-DD`: one alert per `about` and day.
    pub day: &'a str,
}

/// The owner's alert that a journey could not send an email (outcome `failed`): key
/// `owner_email_failed:journey:<about>:<day>`, so one alert per booking and UTC day however many of
/// its steps fail (the first failure's details; every failure is in D1 and the journey's output).
pub fn owner_sends_failed(
    f: &JourneyFailure<'_>,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    owner.alert(
        EmailKind::OwnerEmailFailed,
        &format!("journey:{}:{}", f.about, f.day),
        format!("Email failed: {} for {}", f.what, f.about),
        &EmailFailed {
            brand: owner.brand(),
            outcome: "failed",
            kind: f.what,
            dedupe_key: f.about,
            to: "the guest of this booking",
            subject: "(not sent)",
            attempts: 0,
            reason: f.error,
        },
    )
}

/// What an owner alert about a paused provider says.
#[derive(Debug, Clone)]
pub struct ProviderPaused<'a> {
    /// Stored provider name, e.g. `smtp`, `resend`, `cloudflare_email`.
    pub provider: &'a str,
    /// Paused until then, ms UTC.
    pub until_ms: i64,
    /// The provider's own words, e.g. `SMTP MAIL FROM: 553 5.7.1 <…>: Sender address rejected`:
    /// untrusted text, shown as one line of at most [`PAUSE_REASON_MAX_CHARS`] characters.
    pub reason: &'a str,
    /// A short name for the fault, the same each time it recurs (`MAIL FROM 553 5.7.1`,
    /// `E_SENDER_NOT_VERIFIED`, `daily_quota_exceeded`); empty when unknown. Each distinct fault is
    /// told once a day.
    pub fault: &'a str,
    /// The provider that carries email meanwhile, if any.
    pub fallback: Option<&'a str>,
    /// With no fallback: when some route can carry email again (ms UTC).
    pub wait_until_ms: Option<i64>,
    /// Why the provider is paused.
    pub cause: PauseCause,
    /// Sent at, ms UTC: one alert per provider, fault and UTC day (dedupe key
    /// `owner_provider_paused:<provider>:<YYYY-MM-DD>:<fault>`, see [`fault_key`]).
    pub now_ms: i64,
}

/// Longest fault name kept in a pause alert's dedupe key, characters.
pub const FAULT_KEY_MAX_CHARS: usize = 48;

/// A fault name as it goes into a dedupe key: lower case, letters, digits and dots kept, every
/// other run of characters one `-`, at most [`FAULT_KEY_MAX_CHARS`] characters
/// (`MAIL FROM 553 5.7.1` → `mail-from-553-5.7.1`).
pub fn fault_key(fault: &str) -> String {
    let mut key = String::new();
    for c in fault.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            key.push(c.to_ascii_lowercase());
        } else if !key.is_empty() && !key.ends_with('-') {
            key.push('-');
        }
    }
    let mut key: String = key.chars().take(FAULT_KEY_MAX_CHARS).collect();
    while key.ends_with('-') {
        key.pop();
    }
    key
}

/// Longest provider reply quoted in a pause alert, characters.
pub const PAUSE_REASON_MAX_CHARS: usize = 400;

struct PausedView<'a> {
    brand: &'a str,
    provider: &'a str,
    /// `YYYY-MM-DD HH:MM` UTC (the raw ms when out of range).
    until: String,
    reason: String,
    smtp_or_main_left: bool,
    other: &'a str,
    /// When mail can go again with no other route (`YYYY-MM-DD HH:MM` UTC), empty otherwise.
    waits_until: String,
    /// `daily_limit`, `credentials` or `configuration`.
    cause: &'static str,
}
email_body!(
    PausedView = "owner_provider_paused.html",
    "owner_provider_paused.txt"
);

/// `ms` (UTC) as `YYYY-MM-DD HH:MM`, to the minute (owner alerts, the route history).
pub fn utc_minute(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| ms.to_string())
}

/// The owner's alert that a provider is paused: its daily limit (saying whether the SMTP failover
/// — or the main provider — is carrying the mail meanwhile), or a refusal only the owner can fix
/// (credentials, our sender, relay, policy), quoting the provider's exact reply.
pub fn owner_provider_paused(
    p: &ProviderPaused<'_>,
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let day = crate::domain::marketing::utc_day(p.now_ms);
    let subject = match (p.cause, p.fallback) {
        (PauseCause::DailyLimit, Some(other)) => {
            format!(
                "{} hit its daily limit: {other} carries the mail",
                p.provider
            )
        }
        (PauseCause::DailyLimit, None) => {
            format!("{} hit its daily limit: no route is sending", p.provider)
        }
        _ => format!("Email provider paused: {}", p.provider),
    };
    // Per fault: a second, different fault on the same route the same day (a DMARC refusal after
    // a sender refusal) is told too; the same fault again is not.
    let reference = match fault_key(p.fault) {
        fault if fault.is_empty() => format!("{}:{day}", p.provider),
        fault => format!("{}:{day}:{fault}", p.provider),
    };
    owner.alert(
        EmailKind::OwnerProviderPaused,
        &reference,
        subject,
        &PausedView {
            brand: owner.brand(),
            provider: p.provider,
            until: utc_minute(p.until_ms),
            reason: crate::domain::basics::text::header_value(p.reason, PAUSE_REASON_MAX_CHARS),
            smtp_or_main_left: p.fallback.is_some(),
            other: p.fallback.unwrap_or(""),
            waits_until: p.wait_until_ms.map(utc_minute).unwrap_or_default(),
            cause: match p.cause {
                PauseCause::DailyLimit => "daily_limit",
                PauseCause::Credentials => "credentials",
                PauseCause::Configuration => "configuration",
            },
        },
    )
}

/// One Stripe decline code as the owner reads it.
struct DeclineView {
    code: String,
    meaning: &'static str,
    suggestion: Option<&'static str>,
}

/// One one-click action link in the owner's alert.
struct LinkView<'a> {
    label: &'static str,
    url: &'a str,
    dismiss: bool,
}

/// The owner's one-click links as the templates show them: an action that sends no email only
/// dismisses the alert.
fn link_views(links: &[(OwnerAction, String)]) -> Vec<LinkView<'_>> {
    links
        .iter()
        .map(|(action, url)| LinkView {
            label: action.label(),
            url: url.as_str(),
            dismiss: !action.sends_email(),
        })
        .collect()
}

struct OwnerHold<'a> {
    brand: &'a str,
    hold_id: &'a str,
    risk_words: String,
    email: Option<&'a str>,
    name: Option<String>,
    /// `Names used with this email today` or `Emails used with this name today`.
    seen_label: &'static str,
    seen: &'a [String],
    hotel: Option<String>,
    dates: Option<String>,
    price: Option<String>,
    prebook_id: &'a str,
    transaction_id: Option<&'a str>,
    client_reference: Option<&'a str>,
    declines: Vec<DeclineView>,
    links: Vec<LinkView<'a>>,
}
email_body!(
    OwnerHold = "owner_checkout_hold.html",
    "owner_checkout_hold.txt"
);

/// The distinct non-blank decline codes, trimmed, in first-seen order, each with its meaning
/// and the action it points to.
fn decline_views(decline_codes: &[String]) -> Vec<DeclineView> {
    let mut codes: Vec<String> = Vec::new();
    for code in decline_codes
        .iter()
        .map(|c| c.trim())
        .filter(|c| !c.is_empty())
    {
        if !codes.iter().any(|c| c == code) {
            codes.push(code.to_string());
        }
    }
    codes
        .into_iter()
        .map(|code| DeclineView {
            meaning: decline_meaning(&code),
            suggestion: classify_decline(&code)
                .suggested_action()
                .map(OwnerAction::label),
            code,
        })
        .collect()
}

/// The owner's alert that a checkout is held as possible card testing (kind
/// `owner_checkout_hold`, owner, rank urgent), key `owner_checkout_hold:<hold id>`.
///
/// Shows the facts — the attempt's email and name, the names (or emails) seen with it today, the
/// risk in plain words, the distinct Stripe decline codes seen with what each means and which
/// action it points to, hotel and dates — and one button per `links` entry (the signed one-click
/// URLs, in the order given). Owner only: the links act on the hold.
pub fn owner_checkout_hold(
    hold_id: &str,
    a: &CheckoutAttempt,
    risk: &RiskReason,
    decline_codes: &[String],
    links: &[(OwnerAction, String)],
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let (seen_label, seen, subject_who) = match risk {
        RiskReason::EmailUnderNames { email, names } => {
            ("Names used with this email today", names, email.as_str())
        }
        RiskReason::NameWithEmails { name, emails } => {
            ("Emails used with this name today", emails, name.as_str())
        }
    };
    owner.alert(
        EmailKind::OwnerCheckoutHold,
        hold_id.trim(),
        format!("Checkout held (possible card testing): {subject_who}"),
        &OwnerHold {
            brand: owner.brand(),
            hold_id,
            risk_words: risk.plain_words(),
            email: a.email.as_ref().map(EmailAddress::as_str),
            name: checkout_name(a),
            seen_label,
            seen,
            hotel: checkout_hotel(a),
            dates: checkout_dates(a),
            price: money(&a.price),
            prebook_id: &a.prebook_id,
            transaction_id: non_empty(a.transaction_id.as_deref()),
            client_reference: non_empty(a.client_reference.as_deref()),
            declines: decline_views(decline_codes),
            links: link_views(links),
        },
    )
}

struct HoldRecall<'a> {
    brand: &'a str,
    hold_id: &'a str,
    reason: &'a str,
    held_for: String,
    unanswered: &'a str,
    email: Option<&'a str>,
    name: Option<String>,
    hotel: Option<String>,
    dates: Option<String>,
    links: Vec<LinkView<'a>>,
}
email_body!(
    HoldRecall = "owner_hold_recall.html",
    "owner_hold_recall.txt"
);

/// The owner's recall of a card-testing hold still open after `held_for_ms` (kind
/// `owner_checkout_hold`, key `owner_checkout_hold:<hold id>:recall`: once per hold), with the
/// hold's stored `reason`, fresh one-click `links`, and what the engine does if nobody answers
/// (`unanswered`, e.g. "it stays held until you act").
#[allow(clippy::too_many_arguments)]
pub fn owner_hold_recall(
    hold_id: &str,
    reason: &str,
    held_for_ms: i64,
    unanswered: &str,
    a: &CheckoutAttempt,
    links: &[(OwnerAction, String)],
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let hours = held_for_ms.max(0) / 3_600_000;
    owner.alert(
        EmailKind::OwnerCheckoutHold,
        &format!("{}:recall", hold_id.trim()),
        format!(
            "Still held after {hours} h (possible card testing): {}",
            header_value(hold_id, 80)
        ),
        &HoldRecall {
            brand: owner.brand(),
            hold_id,
            reason,
            held_for: format!("{hours} hours"),
            unanswered,
            email: a.email.as_ref().map(EmailAddress::as_str),
            name: checkout_name(a),
            hotel: checkout_hotel(a),
            dates: checkout_dates(a),
            links: link_views(links),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{branding, sample_booking};
    use super::*;

    fn owner() -> EmailAddress {
        EmailAddress::parse("owner@example.com").unwrap()
    }

    /// The owner's alert of liteAPI event `evt_1` for [`sample_booking`], with `hotel_time` and
    /// `stay_over` as given.
    fn new_booking(hotel_time: Option<&str>, stay_over: bool) -> OutgoingEmail {
        let owner = owner();
        owner_new_booking(
            &sample_booking(),
            Source::Liteapi,
            "evt_1",
            hotel_time,
            stay_over,
            OwnerInbox::new(&owner, &branding()),
        )
        .unwrap()
    }

    #[test]
    fn owner_alert_goes_to_the_owner_and_names_the_guest() {
        let e = new_booking(Some("Europe/Madrid (coordinates)"), false);
        assert_eq!(e.to, owner());
        assert_eq!(e.dedupe_key.as_str(), "owner_new_booking:BK_1");
        assert!(e.text.contains("guest@example.com") && e.text.contains("evt_1"));
        assert!(
            e.text.contains("Hotel time: Europe/Madrid (coordinates)"),
            "{}",
            e.text
        );
        let unknown = new_booking(None, false);
        assert!(
            unknown.text.contains("Hotel time: unknown"),
            "{}",
            unknown.text
        );
        assert!(unknown.html.contains("Hotel time: unknown"));
        assert!(unknown
            .text
            .contains("The guest's confirmation is queued in the outbox."));
    }

    /// A booking event for a stay already over: the owner is told the guest is not written to,
    /// never that a confirmation is queued or that sends are planned.
    #[test]
    fn owner_alert_of_a_stay_already_over_says_no_guest_email() {
        let e = new_booking(None, true);
        for body in [&e.text, &e.html] {
            assert!(body.contains("the guest is not written to"), "{body}");
            assert!(!body.contains("queued in the outbox"), "{body}");
            assert!(!body.contains("Hotel time: unknown"), "{body}");
        }
    }
}
