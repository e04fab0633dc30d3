//! The compensation's two emails (`crate::domain::payment::compensation`): the guest's honest notice that a
//! paid booking could not be confirmed (or, when the confirmation already went out, that it is
//! cancelled), with the refund's real state in plain words; and the owner's alert with the facts,
//! every step as recorded and, when the owner must act, one-click refund links.

use super::calendar::Booked;
use super::text::greet;
use super::{compose, Branding, Envelope, OwnerInbox, RenderError};
use crate::domain::email::calendar::Method;
use crate::domain::email::{DedupeKey, EmailKind};
use crate::domain::event::EmailAddress;
use crate::domain::i18n::Tr;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::payment::action_token::OwnerAction;
use crate::domain::payment::compensation::{CompensationRow, RefundState, StepRow};
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
    /// The booking whose confirmation went out, as stored, so the notice can take its events out
    /// of the guest's calendar; `None` when no confirmation was sent or no booking is stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calendar: Option<CalendarCancel>,
}

/// What the calendar parts of a cancellation notice are built from: the booking's stored details
/// (the UIDs of its confirmation's events). Their SEQUENCE and DTSTAMP are stamped at hand-over,
/// above every PUBLISH of the same UIDs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalendarCancel {
    pub booked: Booked,
}

struct NoticeView<'a> {
    tr: Tr,
    brand: &'a str,
    greeting: String,
    trip: Option<&'a str>,
    title: String,
    cancelled: bool,
    refund_sentence: String,
}

/// [`RefundState::guest_sentence`] in the guest's language; `amount` is display text
/// `"<ISO code> <decimal>"` (`EUR 540.00`), written the language's way.
fn refund_sentence(tr: Tr, state: RefundState, amount: Option<&str>) -> String {
    let amount = amount.map(|a| match a.trim().split_once(' ') {
        Some((code, number)) => tr.money(number, code),
        None => a.trim().to_string(),
    });
    let with_amount = |id: &str, plain: &str| match &amount {
        Some(a) => tr.t1(id, "amount", a),
        None => tr.t(plain),
    };
    match state {
        RefundState::NotCharged => tr.t("refund-not-charged"),
        RefundState::PaymentUnknown | RefundState::Open => tr.t("refund-unknown"),
        RefundState::Refunding => with_amount("refund-refunding-amount", "refund-refunding"),
        RefundState::Refunded => with_amount("refund-refunded-amount", "refund-refunded"),
        RefundState::Arranging | RefundState::Handled | RefundState::RefundFailed => {
            tr.t("refund-arranging")
        }
    }
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
///
/// A cancellation (the confirmation had gone out) with [`CompensationNotice::calendar`] carries a
/// `METHOD:CANCEL` part with the confirmation's UIDs, so the guest's calendar drops the stay or the
/// flights that will not happen; the not-confirmed wording carries none (no event was ever sent).
pub fn booking_not_confirmed(
    n: &CompensationNotice,
    to: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::BookingNotConfirmed;
    let tr = branding.tr();
    let title = if n.confirmation_sent {
        tr.t("notice-title-cancelled")
    } else {
        tr.t("notice-title-not-confirmed")
    };
    let first = n
        .guest_name
        .as_deref()
        .and_then(|f| f.split_whitespace().next())
        .unwrap_or("");
    let mut envelope = Envelope::new(
        kind,
        DedupeKey::new(kind, n.compensation_id.trim()),
        to,
        title.clone(),
    );
    envelope.booking_id = n.booking_id.clone();
    let (parts, markup) = match n.calendar.as_ref().filter(|_| n.confirmation_sent) {
        Some(cal) => {
            use crate::domain::email::markup::{flight, lodging, Status};
            let markup = match &cal.booked {
                Booked::Hotel(b) => lodging(b, Status::Cancelled, None),
                Booked::Flight(f) => flight(f, Status::Cancelled, None),
            };
            (
                super::calendar::of_booked(&cal.booked, branding, Method::Cancel),
                markup,
            )
        }
        None => (Vec::new(), None),
    };
    let envelope = envelope.with_markup(markup);
    let email = compose(
        envelope,
        &NoticeView {
            tr,
            brand: &branding.brand,
            greeting: greet(tr, first),
            trip: n.trip.as_deref().filter(|t| !t.trim().is_empty()),
            title,
            cancelled: n.confirmation_sent,
            refund_sentence: refund_sentence(tr, n.state, n.amount.as_deref()),
        },
        branding,
    );
    super::calendar::attach(email, parts, tr)
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
    owner: OwnerInbox<'_>,
) -> Result<OutgoingEmail, RenderError> {
    let c = o.compensation;
    let reference = if o.stage == "opened" {
        c.compensation_id.clone()
    } else {
        format!("{}:{}", c.compensation_id, o.stage)
    };
    let who = c
        .guest_email
        .as_deref()
        .or(c.guest_name.as_deref())
        .unwrap_or("unknown guest");
    let headline = match (c.cause, o.stage) {
        (_, s) if s.starts_with("reminder_") => format!(
            "Reminder {}: a refund waits for your decision",
            &s["reminder_".len()..]
        ),
        (_, s) if s.starts_with("refund_failed") => "Refund failed at Stripe".to_string(),
        (_, "payment") => "Payment found for a failed booking".to_string(),
        (crate::domain::payment::compensation::Cause::SupplierFailed, _) => {
            "Paid booking failed at the supplier".to_string()
        }
        (crate::domain::payment::compensation::Cause::BookingCancelled, _) => {
            "Paid booking cancelled by the supplier".to_string()
        }
    };
    owner.alert(
        EmailKind::OwnerCompensation,
        &reference,
        format!("{headline}: {who}"),
        &OwnerView {
            brand: owner.brand(),
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
                    detail: [s.detail.as_deref(), s.proof.as_deref(), s.error.as_deref()]
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
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::branding;
    use super::*;
    use crate::domain::payment::compensation::{Cause, StepKind, StepStatus};

    fn notice(state: RefundState, sent: bool) -> CompensationNotice {
        CompensationNotice {
            compensation_id: "comp-0123456789abcdef01234567".into(),
            booking_id: None,
            guest_name: Some("Zoë <script>alert(1)</script> Guest".into()),
            trip: Some("Hôtel <Harbour> & Spa, 12 to 15 June 2026".into()),
            confirmation_sent: sent,
            state,
            amount: Some("EUR 540.00".into()),
            calendar: None,
        }
    }

    pub(crate) fn row() -> CompensationRow {
        CompensationRow {
            compensation_id: "comp-0123456789abcdef01234567".into(),
            cause: Cause::SupplierFailed,
            booking_id: None,
            prebook_id: Some("PB_fake_9xYz".into()),
            client_reference: Some("trip_fake_0001".into()),
            payment_intent: Some("pi_3FAKEpaymentintent0002".into()),
            guest_email: Some("guest@example.com".into()),
            guest_name: Some("Testa Guestington".into()),
            trip: Some("Example Harbour Hotel, 2026-06-12 to 2026-06-15".into()),
            source: "liteapi".into(),
            partner: None,
            event_id: "evt_fake_liteapi_book_error_0001".into(),
            event_name: "booking.book_error".into(),
            reason: "Room is no longer available at the hotel".into(),
            fee_amount: None,
            fee_currency: None,
            supplier_refund: None,
            state: RefundState::Arranging,
            created_at_ms: 0,
            reminders_sent: 0,
        }
    }

    pub(crate) fn steps() -> Vec<StepRow> {
        let step = |step, status, detail: &str| StepRow {
            step,
            status,
            claimed_by: None,
            idempotency_key: None,
            round: 1,
            provider_id: None,
            provider_status: None,
            amount_minor: None,
            currency: None,
            attempts: 0,
            error: None,
            detail: Some(detail.into()),
            updated_at_ms: 0,
            payment_intent: None,
            proof: None,
        };
        vec![
            step(
                StepKind::CloseBooking,
                StepStatus::Skipped,
                "no booking is recorded for this checkout",
            ),
            step(
                StepKind::WithdrawEmails,
                StepStatus::Skipped,
                "no booking is recorded for this checkout",
            ),
            step(
                StepKind::Refund,
                StepStatus::AwaitingOwner,
                "COMPENSATION_REFUND_POLICY is owner: the refund waits for your click",
            ),
            step(
                StepKind::GuestNotice,
                StepStatus::Done,
                "not confirmed notice, refund wording: arranging",
            ),
            step(StepKind::OwnerAlert, StepStatus::Pending, ""),
        ]
    }

    fn guest() -> EmailAddress {
        EmailAddress::parse("guest@example.com").unwrap()
    }

    #[test]
    fn the_notice_is_keyed_per_compensation_and_escapes_supplier_text() {
        let e = booking_not_confirmed(
            &notice(RefundState::Arranging, false),
            &guest(),
            &branding(),
        )
        .unwrap();
        assert_eq!(
            e.dedupe_key.as_str(),
            "booking_not_confirmed:comp-0123456789abcdef01234567"
        );
        assert_eq!(e.kind, EmailKind::BookingNotConfirmed);
        assert_eq!(e.subject, "We could not confirm your booking");
        assert!(
            e.html.contains("Hôtel &#60;Harbour&#62; &#38; Spa"),
            "{}",
            e.html
        );
        assert!(!e.html.contains("<script>") && !e.html.contains("<Harbour>"));
        assert!(e.text.contains("Hi Zoë,"));
        assert!(e.text.contains("We are arranging your refund"));
        assert!(!e.text.contains("comp-") && !e.html.contains("comp-"));
    }

    #[test]
    fn the_wording_follows_the_refund_and_the_confirmation() {
        let text = |state, sent| {
            booking_not_confirmed(&notice(state, sent), &guest(), &branding())
                .unwrap()
                .text
        };
        assert!(text(RefundState::NotCharged, false).contains("You have not been charged."));
        assert!(text(RefundState::Refunded, false)
            .contains("Your payment of €540.00 has been refunded"));
        assert!(text(RefundState::Refunding, false)
            .contains("Your payment of €540.00 is being refunded"));
        let cancelled =
            booking_not_confirmed(&notice(RefundState::Refunded, true), &guest(), &branding())
                .unwrap();
        assert_eq!(cancelled.subject, "Your booking has been cancelled");
        assert!(cancelled.text.contains("has been cancelled"));
        assert!(!cancelled.text.contains("could not confirm"));
    }

    /// The owner's first alert about [`row`] with [`steps`]: arranging, no amount yet, a
    /// "refund now" link at `refund_now` and a "handled" link at `handled`.
    fn opened_alert(refund_now: &str, handled: &str) -> OutgoingEmail {
        let owner = EmailAddress::parse("owner@example.com").unwrap();
        let links = [
            (OwnerAction::RefundNow, refund_now.to_string()),
            (OwnerAction::RefundHandled, handled.to_string()),
        ];
        let (c, steps) = (row(), steps());
        owner_compensation(
            &OwnerCompensation {
                compensation: &c,
                steps: &steps,
                state: RefundState::Arranging,
                amount: None,
                links: &links,
                stage: "opened",
            },
            OwnerInbox::new(&owner, &branding()),
        )
        .unwrap()
    }

    #[test]
    fn the_owner_alert_shows_the_steps_and_the_links() {
        let owner = EmailAddress::parse("owner@example.com").unwrap();
        let e = opened_alert(
            "https://engine.example/actions/aaa",
            "https://engine.example/actions/bbb",
        );
        let (c, steps) = (row(), steps());
        assert_eq!(
            e.dedupe_key.as_str(),
            "owner_compensation:comp-0123456789abcdef01234567"
        );
        assert_eq!(
            e.subject,
            "Paid booking failed at the supplier: guest@example.com"
        );
        assert!(e.text.contains("Refund: waiting for you"));
        assert!(e.text.contains("3. refund: awaiting_owner"));
        assert!(e
            .text
            .contains("- Refund now (through Stripe): https://engine.example/actions/aaa"));
        let later = owner_compensation(
            &OwnerCompensation {
                compensation: &c,
                steps: &steps,
                state: RefundState::RefundFailed,
                amount: Some("EUR 540.00"),
                links: &[],
                stage: "refund_failed_1",
            },
            OwnerInbox::new(&owner, &branding()),
        )
        .unwrap();
        assert!(later.dedupe_key.as_str().ends_with(":refund_failed_1"));
        assert!(later.subject.starts_with("Refund failed at Stripe"));
        assert!(later.text.contains("Nothing is waiting for you"));
    }

    /// Writes the sample renders in docs/ (`cargo test -- --ignored write_docs_renders`).
    #[test]
    #[ignore]
    fn write_docs_renders() {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut n = notice(RefundState::Refunding, false);
        n.guest_name = Some("Testa Guestington".into());
        n.trip = Some("Example Harbour Hotel, Fri 12 – Mon 15 June 2026".into());
        let e = booking_not_confirmed(&n, &guest(), &branding()).unwrap();
        std::fs::write(format!("{root}/docs/booking-not-confirmed.txt"), &e.text).unwrap();
        std::fs::write(format!("{root}/docs/booking-not-confirmed.html"), &e.html).unwrap();
        let signed = "https://booking-email-engine.example.workers.dev/actions/<signed-token>";
        let a = opened_alert(signed, signed);
        std::fs::write(format!("{root}/docs/owner-compensation.txt"), &a.text).unwrap();
        std::fs::write(format!("{root}/docs/owner-compensation.html"), &a.html).unwrap();
    }
}
