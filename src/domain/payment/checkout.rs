//! Unfinished checkouts: what to do 20 minutes after a checkout attempt that did not become a
//! booking.
//!
//! A declined card never reaches a webhook: the payment fails inside the hosted payment form, no
//! booking request is made, and from the backend it looks exactly like a closed tab. What does
//! arrive is the prebook (`booking.prebook`, a [`CheckoutAttempt`]) and, when Stripe is wired, the
//! processor's own word ([`crate::domain::event::PaymentUpdate`]). The journey records the attempt,
//! waits until [`follow_up_at`] (a fixed time after *that* attempt, never "now" after a sleep), then
//! gathers the facts into a [`CheckoutInput`] and asks [`decide`] once.
//!
//! Rules (pure; every input is an argument):
//! - Booked (a booking exists for this prebook, or this guest and stay) → nothing.
//! - Paid (the processor says so) → nothing.
//! - A newer attempt for the same guest and stay → nothing: only the newest attempt follows up, so
//!   three cards in ten minutes get one email, 20 minutes after the last try.
//! - Card testing ([`card_testing`]) → a hold for a human, no automatic customer email.
//! - No email address → nothing to send.
//! - Otherwise one honest "your booking wasn't completed and nothing was charged" email. It never
//!   claims a decline: Stripe decline codes ([`classify_decline`]) only make the *owner's* view
//!   precise.
//!
//! **Day rule.** "The same day" of the card-testing rules is the **UTC calendar day** of the
//! attempt's time ([`day_of`]): 23:59:59 UTC and 00:00:00 UTC the next second are different days,
//! whatever the guest's or the hotel's time zone. One fixed, zone-free day keeps the rule
//! reproducible from stored data (D1 `checkout_attempts.attempt_day`) and identical for every
//! guest; a burst of card testing around midnight UTC is split across two days, an accepted cost.
//!
//! **Normalization.** Emails are compared trimmed and lower-cased ([`normalize_email`]); names
//! trimmed, case-folded and with whitespace runs collapsed ([`normalize_name`]), so `"Testa
//! GUESTINGTON"` and `" testa   guestington "` are one name.

use crate::domain::basics::stored_names;
use crate::domain::event::CheckoutAttempt;
use crate::domain::payment::action_token::OwnerAction;
use chrono::{DateTime, NaiveDate};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// How long after a checkout attempt the journey decides, in milliseconds (20 minutes).
pub const FOLLOW_UP_DELAY_MS: i64 = 20 * 60_000;

/// When the decision for an attempt made at `attempt_at_ms` is due (ms since the Unix epoch, UTC):
/// [`FOLLOW_UP_DELAY_MS`] after it.
pub fn follow_up_at(attempt_at_ms: i64) -> i64 {
    attempt_at_ms.saturating_add(FOLLOW_UP_DELAY_MS)
}

/// The card-testing day of a time (ms since the Unix epoch): its **UTC** calendar date. See the
/// module docs for why UTC. Times outside chrono's range read as 1970-01-01.
pub fn day_of(at_ms: i64) -> NaiveDate {
    DateTime::from_timestamp_millis(at_ms)
        .map(|t| t.date_naive())
        .unwrap_or_default()
}

/// An email as the rules compare it: trimmed, lower case (local part included: providers treat
/// it case-insensitively in practice, and a tester varying case must not escape the rule).
pub fn normalize_email(raw: &str) -> String {
    raw.trim().to_lowercase()
}

/// A name as the rules compare it: words separated by single spaces, case-folded (Unicode lower
/// case), trimmed. `""` when there is no name.
pub fn normalize_name(raw: &str) -> String {
    raw.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Card-testing thresholds (configuration: `CARD_TESTING_NAMES_PER_EMAIL`,
/// `CARD_TESTING_EMAILS_PER_NAME`). A value below 2 is read as 2: one name or one email alone is
/// never a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Distinct names on one email, in one UTC day, from which the email is risky (default 2).
    pub names_per_email: usize,
    /// Distinct emails on one name, in one UTC day, from which the name is risky (default 3).
    pub emails_per_name: usize,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            names_per_email: 2,
            emails_per_name: 3,
        }
    }
}

/// The facts of one attempt the card-testing rules look at. `email` and `name` may be given raw:
/// [`card_testing`] normalizes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptFacts {
    pub prebook_id: String,
    pub email: Option<String>,
    /// The full name ("First Last").
    pub name: Option<String>,
    /// When the attempt was received, ms since the Unix epoch (UTC).
    pub at_ms: i64,
}

impl AttemptFacts {
    /// The facts of a canonical attempt received at `at_ms`, normalized (see the module docs);
    /// a blank name reads as `None`.
    pub fn of(a: &CheckoutAttempt, at_ms: i64) -> Self {
        Self {
            prebook_id: a.prebook_id.clone(),
            email: a.email.as_ref().map(|e| normalize_email(e.as_str())),
            name: a
                .guest_name
                .as_ref()
                .map(|n| normalize_name(&n.full()))
                .filter(|n| !n.is_empty()),
            at_ms,
        }
    }

    fn email_key(&self) -> Option<String> {
        self.email
            .as_deref()
            .map(normalize_email)
            .filter(|e| !e.is_empty())
    }

    fn name_key(&self) -> Option<String> {
        self.name
            .as_deref()
            .map(normalize_name)
            .filter(|n| !n.is_empty())
    }
}

/// Why a checkout looks like card testing. Lists are normalized, distinct and sorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum RiskReason {
    /// One email address used under several names on one UTC day.
    EmailUnderNames { email: String, names: Vec<String> },
    /// One name used with several email addresses on one UTC day.
    NameWithEmails { name: String, emails: Vec<String> },
}

impl RiskReason {
    /// The reason in plain words, for the owner (e.g. `The email a@example.com was used under 2
    /// different names today (UTC): anna smith, bob jones.`).
    pub fn plain_words(&self) -> String {
        match self {
            RiskReason::EmailUnderNames { email, names } => format!(
                "The email {email} was used under {} different names today (UTC): {}.",
                names.len(),
                names.join(", ")
            ),
            RiskReason::NameWithEmails { name, emails } => format!(
                "The name {name} was used with {} different email addresses today (UTC): {}.",
                emails.len(),
                emails.join(", ")
            ),
        }
    }
}

/// The card-testing check of one attempt.
///
/// `same_day` holds the attempts that share this attempt's email or name (it may include this
/// attempt itself; the attempt is always counted). Only those on the same UTC day as `attempt`
/// ([`day_of`]) count; others are ignored. Rules, in this order:
/// 1. the attempt's email carries ≥ `names_per_email` distinct names → `EmailUnderNames`;
/// 2. the attempt's name carries ≥ `emails_per_name` distinct emails → `NameWithEmails`.
///
/// Attempts without a name (or without an email) add nothing to the distinct count of rule 1 (2).
pub fn card_testing(
    attempt: &AttemptFacts,
    same_day: &[AttemptFacts],
    t: &Thresholds,
) -> Option<RiskReason> {
    let day = day_of(attempt.at_ms);
    let all: Vec<&AttemptFacts> = std::iter::once(attempt)
        .chain(same_day.iter().filter(|a| day_of(a.at_ms) == day))
        .collect();

    if let Some(email) = attempt.email_key() {
        let names: BTreeSet<String> = all
            .iter()
            .filter(|a| a.email_key().as_deref() == Some(email.as_str()))
            .filter_map(|a| a.name_key())
            .collect();
        if names.len() >= t.names_per_email.max(2) {
            return Some(RiskReason::EmailUnderNames {
                email,
                names: names.into_iter().collect(),
            });
        }
    }
    if let Some(name) = attempt.name_key() {
        let emails: BTreeSet<String> = all
            .iter()
            .filter(|a| a.name_key().as_deref() == Some(name.as_str()))
            .filter_map(|a| a.email_key())
            .collect();
        if emails.len() >= t.emails_per_name.max(2) {
            return Some(RiskReason::NameWithEmails {
                name,
                emails: emails.into_iter().collect(),
            });
        }
    }
    None
}

/// Everything [`decide`] needs, gathered by the journey at the decision time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckoutInput {
    /// A booking exists for this prebook, or for this guest and stay.
    pub booked: bool,
    /// A newer attempt exists for the same guest and stay.
    pub newer_attempt: bool,
    /// The payment processor reported this checkout paid.
    pub paid: bool,
    /// The attempt has a usable customer email address.
    pub has_email: bool,
    /// The card-testing verdict ([`card_testing`]).
    pub risk: Option<RiskReason>,
}

/// What to do about one checkout attempt, once. Stored names (D1 `checkout_attempts.outcome`, the
/// `outcome` tag in JSON): the variant in `snake_case`, e.g. `follow_up`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum CheckoutOutcome {
    /// A booking exists: nothing to send.
    Booked,
    /// A newer attempt will follow up instead: nothing to send.
    Superseded,
    /// The processor says paid (the booking webhook may still be on its way): nothing to send.
    Paid,
    /// Unpaid, but no email address to write to.
    NoContact,
    /// Looks like card testing: hold for the owner (alert with one-click actions), no customer
    /// email.
    Hold(RiskReason),
    /// Unpaid: send the one "your booking wasn't completed" email.
    FollowUp,
}

impl CheckoutOutcome {
    /// Stable stored name (D1 `checkout_attempts.outcome`), e.g. `follow_up`.
    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

/// Where a card-testing hold stands (D1 `holds.status`): `held` until the owner acts on it once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum HoldStatus {
    /// Waiting for the owner.
    Held,
    /// The owner sent a decline email through a one-click action.
    Acted,
    /// The owner dismissed it: no customer email.
    Dismissed,
}

stored_names!(HoldStatus);

impl HoldStatus {
    /// The status a hold takes when the owner picks `action`.
    pub fn after(action: OwnerAction) -> Self {
        if action == OwnerAction::Dismiss {
            HoldStatus::Dismissed
        } else {
            HoldStatus::Acted
        }
    }
}

/// The decision, first match wins: booked → `Booked`; paid → `Paid`; a newer attempt →
/// `Superseded`; a risk → `Hold`; no email → `NoContact`; else `FollowUp`.
///
/// Booked and paid come before the risk on purpose: a guest who completed a purchase is never held.
pub fn decide(input: &CheckoutInput) -> CheckoutOutcome {
    if input.booked {
        CheckoutOutcome::Booked
    } else if input.paid {
        CheckoutOutcome::Paid
    } else if input.newer_attempt {
        CheckoutOutcome::Superseded
    } else if let Some(risk) = &input.risk {
        CheckoutOutcome::Hold(risk.clone())
    } else if !input.has_email {
        CheckoutOutcome::NoContact
    } else {
        CheckoutOutcome::FollowUp
    }
}

/// What a Stripe decline code says, for the owner's view only (customer emails never claim a
/// decline). Codes from <https://docs.stripe.com/declines/codes>.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeclineKind {
    /// Not enough balance or credit (`insufficient_funds`, `card_velocity_exceeded`, …).
    InsufficientFunds,
    /// The issuer's or the processor's security / authorisation check refused it
    /// (`fraudulent`, `do_not_honor`, `generic_decline`, `authentication_required`, …).
    SecurityCheck,
    /// Wrong or expired card details (`incorrect_cvc`, `expired_card`, …).
    CardDetails,
    /// Anything else, including codes this build does not know.
    Other,
}

impl DeclineKind {
    /// The owner action this kind of decline points to, when one fits.
    pub fn suggested_action(self) -> Option<OwnerAction> {
        match self {
            DeclineKind::InsufficientFunds => Some(OwnerAction::SendInsufficientFunds),
            DeclineKind::SecurityCheck => Some(OwnerAction::SendSecurityCheck),
            DeclineKind::CardDetails | DeclineKind::Other => None,
        }
    }
}

/// Classifies a Stripe `decline_code` (or error `code`); case and surrounding space are ignored.
pub fn classify_decline(code: &str) -> DeclineKind {
    match code.trim().to_ascii_lowercase().as_str() {
        "insufficient_funds" | "card_velocity_exceeded" | "withdrawal_count_limit_exceeded" => {
            DeclineKind::InsufficientFunds
        }
        "fraudulent"
        | "do_not_honor"
        | "generic_decline"
        | "authentication_required"
        | "approve_with_id"
        | "call_issuer"
        | "card_not_supported"
        | "do_not_try_again"
        | "issuer_not_available"
        | "lost_card"
        | "merchant_blacklist"
        | "no_action_taken"
        | "not_permitted"
        | "pickup_card"
        | "restricted_card"
        | "revocation_of_all_authorizations"
        | "revocation_of_authorization"
        | "security_violation"
        | "service_not_allowed"
        | "stolen_card"
        | "stop_payment_order"
        | "transaction_not_allowed"
        | "try_again_later" => DeclineKind::SecurityCheck,
        "incorrect_cvc"
        | "invalid_cvc"
        | "incorrect_number"
        | "invalid_number"
        | "expired_card"
        | "invalid_expiry_month"
        | "invalid_expiry_year"
        | "incorrect_zip"
        | "incorrect_pin"
        | "invalid_pin"
        | "offline_pin_required"
        | "online_or_offline_pin_required"
        | "pin_try_exceeded" => DeclineKind::CardDetails,
        _ => DeclineKind::Other,
    }
}

/// A Stripe decline code in plain words for the owner, e.g. `insufficient_funds` → "not enough
/// balance or credit on the card".
pub fn decline_meaning(code: &str) -> &'static str {
    match code.trim().to_ascii_lowercase().as_str() {
        "insufficient_funds" => "not enough balance or credit on the card",
        "card_velocity_exceeded" => {
            "the card's balance, credit limit or transaction limit was exceeded"
        }
        "withdrawal_count_limit_exceeded" => "the card's transaction count limit was exceeded",
        "fraudulent" => "the payment processor suspected fraud",
        "lost_card" => "the card was reported lost",
        "stolen_card" => "the card was reported stolen",
        "pickup_card" => "the issuer asked to retain the card (possibly lost or stolen)",
        "generic_decline" | "do_not_honor" | "call_issuer" | "no_action_taken" => {
            "the card issuer refused without giving a reason (often its security check)"
        }
        "authentication_required" => {
            "the issuer required authentication (3-D Secure) that did not happen"
        }
        "transaction_not_allowed" | "not_permitted" | "service_not_allowed" | "restricted_card" => {
            "the issuer does not allow this kind of payment on this card"
        }
        "security_violation" => "the issuer flagged a security violation",
        "card_not_supported" => "the card does not support this kind of payment",
        "incorrect_cvc" | "invalid_cvc" => "wrong security code (CVC)",
        "incorrect_number" | "invalid_number" => "wrong card number",
        "expired_card" => "the card has expired",
        "processing_error" => "an error at the payment processor",
        "card_declined" => "the card was refused (no more detail given)",
        _ => match classify_decline(code) {
            DeclineKind::InsufficientFunds => "not enough balance or credit on the card",
            DeclineKind::SecurityCheck => "the issuer's or processor's security check refused it",
            DeclineKind::CardDetails => "wrong or unusable card details",
            DeclineKind::Other => "a decline code this engine does not know",
        },
    }
}
