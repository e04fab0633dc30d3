//! The compensation's two emails (`crate::domain::compensation`): the guest's honest notice that a
//! paid booking could not be confirmed (or, when the confirmation already went out, that it is
//! cancelled), with the refund's real state in plain words; and the owner's alert with the facts,
//! every step as recorded and, when the owner must act, one-click refund links.

use super::text::greeting_name;
use super::{compose, Branding, Envelope, RenderError};
use crate::domain::action_token::OwnerAction;
use crate::domain::compensation::{CompensationRow, RefundState, StepRow};
use crate::domain::email::{DedupeKey, EmailKind, OutgoingEmail};
use crate::domain::event::EmailAddress;
use serde::{Deserialize, Serialize};

/// What the guest's notice is rendered from (all owned: the content lock rewrites it, see
/// `guard::guarded`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompensationNotice {
    /// Seeds the send-once key `booking_not_confirmed:<compensation id>`.
    pub compensation_id: String,
    pub booking_id: Option<String>,
    /// The guest's full name as the supplier gave it (the greeting uses its first word).
    pub guest_name: Option<String>,
    /// What was booked, one line, when known.
    pub trip: Option<String>,
    /// `true` when the booking's confirmation had already reached a provider: the notice is then
    /// a cancellation.
    pub confirmation_sent: bool,
    pub state: RefundState,
    /// The refund's amount as display text (`EUR 540.00`), when known.
    pub amount: Option<String>,
}

struct NoticeView<'a> {
    brand: &'a str,
    first_name: &'a str,
    trip: Option<&'a str>,
    title: &'a str,
    cancelled: bool,
    refund_sentence: String,
}
email_body!(
    NoticeView = "booking_not_confirmed.html",
    "booking_not_confirmed.txt"
);

/// The guest's notice (kind `booking_not_confirmed`, rank booking, key
/// `booking_not_confirmed:<compensation id>`: one per compensation whatever the number of
/// failure events). Wording: "we could not confirm your booking" (or "your booking has been
/// cancelled" when the confirmation had gone out), then [`RefundState::guest_sentence`], which
/// never claims a refund Stripe has not accepted. Carries no booking intent: it is never
/// withdrawn by the booking's own closing.
pub fn booking_not_confirmed(
    n: &CompensationNotice,
    to: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::BookingNotConfirmed;
    let title = if n.confirmation_sent {
        "Your booking has been cancelled"
    } else {
        "We could not confirm your booking"
    };
    let first = n
        .guest_name
        .as_deref()
        .and_then(|f| f.split_whitespace().next())
        .unwrap_or("");
    let mut envelope = Envelope::unbooked(
        kind,
        DedupeKey::new(kind, n.compensation_id.trim()),
        to,
        title.to_string(),
    );
    envelope.booking_id = n.booking_id.clone();
    compose(
        envelope,
        &NoticeView {
            brand: &branding.brand,
            first_name: greeting_name(first),
            trip: n.trip.as_deref().filter(|t| !t.trim().is_empty()),
            title,
            cancelled: n.confirmation_sent,
            refund_sentence: n.state.guest_sentence(n.amount.as_deref()),
        },
        branding,
    )
}

/// What the owner's compensation alert shows.
pub struct OwnerCompensation<'a> {
    pub compensation: &'a CompensationRow,
    /// Every step as recorded, in order.
    pub steps: &'a [StepRow],
    pub state: RefundState,
    pub amount: Option<&'a str>,
    /// Signed one-click links (empty when nothing is the owner's to do).
    pub links: &'a [(OwnerAction, String)],
    /// Which alert of this compensation: `opened`, `payment` (its payment arrived later),
    /// `refund_failed_<round>` (Stripe reported the refund failed). One alert per stage.
    pub stage: &'a str,
}

struct StepLine {
    step: &'static str,
    status: &'static str,
    detail: String,
}

struct LinkView<'a> {
    label: &'static str,
    url: &'a str,
    quiet: bool,
}

struct OwnerView<'a> {
    brand: &'a str,
    headline: String,
    c: &'a CompensationRow,
    state_words: &'static str,
    amount: Option<&'a str>,
    steps: Vec<StepLine>,
    links: Vec<LinkView<'a>>,
}
email_body!(
    OwnerView = "owner_compensation.html",
    "owner_compensation.txt"
);

/// The refund state in the owner's words.
fn state_words(state: RefundState) -> &'static str {
    match state {
        RefundState::Open => "being worked out",
        RefundState::NotCharged => "not charged: nothing to refund",
        RefundState::PaymentUnknown => {
            "no payment known yet: nothing refunded (a paid payment arriving later resumes the refund)"
        }
        RefundState::Arranging => "waiting for you: nothing has been refunded yet",
        RefundState::Refunding => "refund accepted by Stripe, on its way",
        RefundState::Refunded => "refunded",
        RefundState::Handled => "marked handled by you",
        RefundState::RefundFailed => "Stripe reports the refund FAILED: nothing reached the guest",
    }
}

/// The owner's alert (kind `owner_compensation`, urgent, key `owner_compensation:<id>` for the
/// first, `owner_compensation:<id>:<stage>` after): the guest, the booking or checkout, the
/// supplier's reason, the refund state and amount, each step as recorded, and — when the refund
/// waits for the owner or failed — the signed links "refund now" / "already handled".
pub fn owner_compensation(
    o: &OwnerCompensation<'_>,
    owner: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerCompensation;
    let c = o.compensation;
    let key = if o.stage == "opened" {
        DedupeKey::new(kind, &c.compensation_id)
    } else {
        DedupeKey::new(kind, &format!("{}:{}", c.compensation_id, o.stage))
    };
    let who = c
        .guest_email
        .as_deref()
        .or(c.guest_name.as_deref())
        .unwrap_or("unknown guest");
    let headline = match (c.cause, o.stage) {
        (_, s) if s.starts_with("refund_failed") => "Refund failed at Stripe".to_string(),
        (_, "payment") => "Payment found for a failed booking".to_string(),
        (crate::domain::compensation::Cause::SupplierFailed, _) => {
            "Paid booking failed at the supplier".to_string()
        }
        (crate::domain::compensation::Cause::BookingCancelled, _) => {
            "Paid booking cancelled by the supplier".to_string()
        }
    };
    let mut envelope = Envelope::unbooked(kind, key, owner, format!("{headline}: {who}"));
    envelope.booking_id = None;
    compose(
        envelope,
        &OwnerView {
            brand: &branding.brand,
            headline,
            c,
            state_words: state_words(o.state),
            amount: o.amount,
            steps: o
                .steps
                .iter()
                .map(|s| StepLine {
                    step: s.step.as_str(),
                    status: s.status.as_str(),
                    detail: [s.detail.as_deref(), s.error.as_deref()]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(" — "),
                })
                .collect(),
            links: o
                .links
                .iter()
                .map(|(action, url)| LinkView {
                    label: action.label(),
                    url,
                    quiet: *action == OwnerAction::RefundHandled,
                })
                .collect(),
        },
        branding,
    )
}
