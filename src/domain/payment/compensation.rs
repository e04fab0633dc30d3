//! Compensation of the booking saga: what to undo when the supplier fails (or cancels) a booking
//! the guest has paid for, and what to tell the guest and the owner.
//!
//! The forward saga is: payment captured (Stripe) → booking requested (supplier) → confirmation
//! email. When the supplier says no after the payment (liteAPI `booking.book_error`,
//! `flight.book.failed`; Duffel `order.creation_failed`, `stays.booking_creation_failed`) or
//! cancels a booking we had confirmed, the steps are undone in reverse order, each idempotent and
//! recorded (D1 `compensation_steps`, [`StepKind`] in [`StepKind::ALL`] order):
//!
//! 1. `close_booking` — the stored booking (if any) is closed, so no scheduled email goes out;
//! 2. `withdraw_emails` — its queued emails are withdrawn from the outbox (never sent if not yet
//!    handed to a provider);
//! 3. `refund` — the captured payment is refunded through Stripe (`POST /v1/refunds`, one
//!    [`refund_idempotency_key`] per round), at once ([`RefundPolicy::Automatic`]) or when the
//!    owner clicks ([`RefundPolicy::Owner`], the default);
//! 4. `guest_notice` — one honest notice whose wording follows the refund's real state
//!    ([`RefundState`]);
//! 5. `owner_alert` — the facts and the refund state, with one-click links when the owner must act.
//!
//! Everything here is pure: amounts, plans, error classes and wording are decided from data.

use crate::domain::basics::stored_names;
use crate::domain::event::{Money, PaymentOutcome};
use crate::domain::payment::refund_ask::RefundAsk;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Why a compensation was opened (D1 `compensations.cause`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Cause {
    /// The supplier could not make the booking after the guest paid.
    SupplierFailed,
    /// The supplier cancelled a booking we had confirmed (and the guest had paid).
    BookingCancelled,
}

stored_names!(Cause);

/// One step of a compensation (D1 `compensation_steps.step`), in the order they are undone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum StepKind {
    CloseBooking,
    WithdrawEmails,
    Refund,
    GuestNotice,
    OwnerAlert,
}

stored_names!(StepKind);

impl StepKind {
    /// Every step, in the order they run (reverse of the forward saga, then the notices).
    pub const ALL: [StepKind; 5] = [
        StepKind::CloseBooking,
        StepKind::WithdrawEmails,
        StepKind::Refund,
        StepKind::GuestNotice,
        StepKind::OwnerAlert,
    ];

    /// 1-based position (D1 `compensation_steps.position`).
    pub fn position(self) -> i64 {
        StepKind::ALL.iter().position(|s| *s == self).unwrap_or(0) as i64 + 1
    }
}

/// Status of one step (D1 `compensation_steps.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum StepStatus {
    /// Not run yet.
    Pending,
    /// Done (for `refund`: Stripe accepted the refund, or it was already refunded).
    Done,
    /// Nothing to do (no booking stored, nothing charged, no guest address); `detail` says why.
    Skipped,
    /// `refund` only: no payment is known for this checkout yet; a later paid payment resumes it.
    WaitingPayment,
    /// `refund` only: the owner decides ([`RefundPolicy::Owner`], or after a permanent error).
    AwaitingOwner,
    /// Claimed by one actor ([`claimed_by`](crate::store::compensation)) right now.
    Running,
    /// Failed for good; `error` says why and the owner was alerted with links.
    Failed,
}

stored_names!(StepStatus);

/// Who may refund (configuration `COMPENSATION_REFUND_POLICY`: `automatic` or `owner`, default
/// `owner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum RefundPolicy {
    /// The journey refunds at once.
    Automatic,
    /// The owner gets an alert with signed one-click links ("refund now" / "already handled");
    /// nothing is refunded until the owner's POST.
    #[default]
    Owner,
}

stored_names!(RefundPolicy);

/// The derived id of a compensation: `comp-` + 24 hex of SHA-256 of the first of `prebook:<id>`,
/// `ref:<client reference>`, `booking:<booking id>` that is given (trimmed, non-empty). The same
/// checkout always gets the same id whichever event arrives first. `None` when all are absent.
pub fn compensation_id(
    prebook_id: Option<&str>,
    client_reference: Option<&str>,
    booking_id: Option<&str>,
) -> Option<String> {
    fn given(v: Option<&str>) -> Option<&str> {
        v.map(str::trim).filter(|v| !v.is_empty())
    }
    let subject = given(prebook_id)
        .map(|p| format!("prebook:{p}"))
        .or_else(|| given(client_reference).map(|r| format!("ref:{r}")))
        .or_else(|| given(booking_id).map(|b| format!("booking:{b}")))?;
    let hash = hex::encode(Sha256::digest(subject.as_bytes()));
    Some(format!("comp-{}", &hash[..24]))
}

/// The Stripe `Idempotency-Key` of refund round `round` of a compensation:
/// `<compensation id>-refund-r<round>`. Every retry of a round sends the same key, so Stripe
/// never refunds twice; a new round (the owner retrying after a permanent error, which Stripe
/// would otherwise replay for 24 h) gets a new key and is preceded by a look at the payment's
/// existing refunds.
pub fn refund_idempotency_key(compensation_id: &str, round: i64) -> String {
    format!("{compensation_id}-refund-r{round}")
}

/// The subject a one-click refund link is signed for: `<compensation id>.r<round>`, the refund
/// round the link may start, then `.g<generation>` for links of a reminder (generation `n` is the
/// `n`-th reminder; the first alert's links, generation 0, carry no suffix). Links of an earlier
/// round (a refund that failed since) or an earlier generation (a newer reminder went out) no
/// longer act, and a new alert's links are new tokens even when signed in the same second.
pub fn link_subject(compensation_id: &str, round: i64, generation: i64) -> String {
    if generation > 0 {
        format!("{compensation_id}.r{round}.g{generation}")
    } else {
        format!("{compensation_id}.r{round}")
    }
}

/// Inverse of [`link_subject`]: `(compensation id, round, generation)`; `None` for any other text.
pub fn parse_link_subject(subject: &str) -> Option<(String, i64, i64)> {
    let (rest, generation) = match subject.rsplit_once(".g") {
        Some((rest, g)) if !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()) => {
            (rest, g.parse::<i64>().ok().filter(|g| *g >= 1)?)
        }
        _ => (subject, 0),
    };
    let (id, round) = rest.rsplit_once(".r")?;
    let round: i64 = round.parse().ok().filter(|r| *r >= 1)?;
    (id.starts_with("comp-") && !id.is_empty()).then(|| (id.to_string(), round, generation))
}

/// Which refunds the admin lists together, by their refund step's status.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr, strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum RefundGroup {
    /// `awaiting_owner`: the owner decides (refund now / already handled).
    Waiting,
    /// `failed`: Stripe refused; the owner may refund again (a new round) or mark it handled.
    Failed,
    /// `pending`, `running`, `waiting_payment`: the engine is on it, or waits for the payment.
    Running,
    /// `done`, `skipped`: nothing more to do.
    Done,
}

crate::domain::basics::stored_names!(RefundGroup);

impl RefundGroup {
    /// The refund step statuses of the group (stored names, for `IN (…)`).
    pub fn statuses(self) -> &'static [&'static str] {
        match self {
            RefundGroup::Waiting => &["awaiting_owner"],
            RefundGroup::Failed => &["failed"],
            RefundGroup::Running => &["pending", "running", "waiting_payment"],
            RefundGroup::Done => &["done", "skipped"],
        }
    }

    /// Whether the owner can act on a refund of this group (refund now / already handled).
    pub fn owner_acts(self) -> bool {
        matches!(self, RefundGroup::Waiting | RefundGroup::Failed)
    }
}

/// The round a refund link acts on now: the step's round while it waits for the owner, the next
/// one after a failure (a new round, a new idempotency key).
pub fn next_owner_round(status: StepStatus, round: i64) -> i64 {
    if status == StepStatus::Failed {
        round + 1
    } else {
        round
    }
}

/// What the payment processor said about the checkout's payment (D1 `payments`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentFacts {
    /// Stripe payment intent (`pi_…`): what a refund names. `None` when only a session is known.
    pub payment_intent: Option<String>,
    pub outcome: PaymentOutcome,
    /// What was captured, in the currency's minor unit (Stripe `amount_total` / `amount_received`).
    pub amount_minor: Option<i64>,
    /// ISO 4217, upper case.
    pub currency: Option<String>,
    /// `true` when no checkout attempt or booking of the compensation's own source (and partner)
    /// records this payment — only the failure's ids name it (`crate::domain::event::ownership`): it
    /// is never refunded automatically, the owner decides.
    #[serde(default)]
    pub claim_only: bool,
}

/// What the refund step does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "plan", rename_all = "snake_case")]
pub enum RefundPlan {
    /// The processor says the payment failed or expired: nothing was taken, nothing to refund.
    NotCharged,
    /// No payment is known for this checkout (yet): nothing can be refunded now.
    PaymentUnknown,
    /// Refund now: the payment intent the plan judged (the proof looks up exactly this one) and
    /// what to ask of it.
    Refund {
        payment_intent: String,
        ask: RefundAsk,
    },
    /// The owner decides; `why` names what the engine could not settle by itself (or the policy).
    AwaitOwner {
        payment_intent: Option<String>,
        ask: RefundAsk,
        why: String,
    },
}

/// Decides the refund of a compensation.
///
/// - no payment, or only a failed card attempt (a customer may retry another card on the same
///   payment intent, and a late failure event says nothing about the capture) →
///   [`RefundPlan::PaymentUnknown`]; an expired checkout → [`RefundPlan::NotCharged`];
/// - paid or processing: the [`RefundAsk`] is `supplier_refund` when the supplier reported one
///   ([`RefundAsk::UpTo`]), else what was captured minus `fee` when the supplier reported a non-zero
///   fee ([`RefundAsk::LessFee`]), else [`RefundAsk::All`]. The figures are the supplier's only:
///   what was captured is read from Stripe's API by the proof (`crate::domain::payment_proof`),
///   never from `payment.amount_minor`, which a payment webhook's body wrote. An amount that does
///   not parse, or a payment without a payment intent → [`RefundPlan::AwaitOwner`] whatever the
///   policy (a human must look);
/// - a cancellation ([`Cause::BookingCancelled`]) → [`RefundPlan::AwaitOwner`] whatever the
///   policy: the event does not say who cancelled, and the booking site may have refunded already;
/// - otherwise [`RefundPolicy::Automatic`] → [`RefundPlan::Refund`], [`RefundPolicy::Owner`] →
///   [`RefundPlan::AwaitOwner`].
pub fn plan_refund(
    policy: RefundPolicy,
    cause: Cause,
    payment: Option<&PaymentFacts>,
    fee: Option<&Money>,
    supplier_refund: Option<&Money>,
) -> RefundPlan {
    let Some(p) = payment else {
        return RefundPlan::PaymentUnknown;
    };
    match p.outcome {
        PaymentOutcome::Expired => return RefundPlan::NotCharged,
        PaymentOutcome::Failed => return RefundPlan::PaymentUnknown,
        PaymentOutcome::Paid | PaymentOutcome::Processing => {}
    }
    let owner = |ask: RefundAsk, why: String| RefundPlan::AwaitOwner {
        payment_intent: p.payment_intent.clone(),
        ask,
        why,
    };
    let Some(pi) = p.payment_intent.clone() else {
        return owner(
            RefundAsk::All,
            "the payment has no Stripe payment intent to refund".into(),
        );
    };
    let ask = match refund_ask(fee, supplier_refund) {
        Ok(a) => a,
        Err(why) => return owner(RefundAsk::All, why),
    };
    if cause == Cause::BookingCancelled {
        return owner(
            ask,
            "a cancellation: the event does not say who cancelled (the booking site may have \
             refunded already), so the refund waits for your click"
                .into(),
        );
    }
    match policy {
        RefundPolicy::Automatic if p.claim_only => owner(
            ask,
            "no checkout or booking of this supplier records this payment (only the failure's \
             ids name it), so the refund waits for your click"
                .into(),
        ),
        RefundPolicy::Automatic => RefundPlan::Refund {
            payment_intent: pi,
            ask,
        },
        RefundPolicy::Owner => owner(
            ask,
            "COMPENSATION_REFUND_POLICY is owner: the refund waits for your click".into(),
        ),
    }
}

/// What to ask of the payment from the supplier's figures alone, or why they cannot be read.
fn refund_ask(fee: Option<&Money>, supplier_refund: Option<&Money>) -> Result<RefundAsk, String> {
    let currency = |m: &Money| m.currency.trim().to_ascii_uppercase();
    if let Some(r) = supplier_refund {
        let minor = to_minor(&r.amount, &r.currency)?;
        return Ok(RefundAsk::UpTo {
            minor,
            currency: currency(r),
        });
    }
    match fee {
        Some(f) => match to_minor(&f.amount, &f.currency)? {
            0 => Ok(RefundAsk::All),
            minor => Ok(RefundAsk::LessFee {
                minor,
                currency: currency(f),
            }),
        },
        None => Ok(RefundAsk::All),
    }
}

/// Digits after the decimal point of a currency's minor unit in Stripe's API: 0 for Stripe's
/// zero-decimal currencies, 3 for the three-decimal ones, else 2
/// (<https://docs.stripe.com/currencies#zero-decimal>).
pub fn minor_digits(currency: &str) -> u32 {
    const ZERO: [&str; 16] = [
        "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV",
        "XAF", "XOF", "XPF",
    ];
    const THREE: [&str; 5] = ["BHD", "JOD", "KWD", "OMR", "TND"];
    let c = currency.trim().to_ascii_uppercase();
    if ZERO.contains(&c.as_str()) {
        0
    } else if THREE.contains(&c.as_str()) {
        3
    } else {
        2
    }
}

/// Decimal text (`"212.40"`, `"540"`) as an integer amount of `currency`'s minor unit, exactly
/// (no floats). Refused: signs, exponents, more fraction digits than the currency has (other than
/// trailing zeros), more than 15 integer digits.
pub fn to_minor(amount: &str, currency: &str) -> Result<i64, String> {
    let digits = minor_digits(currency);
    let t = amount.trim();
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let frac = frac.trim_end_matches('0');
    let ok = !int.is_empty()
        && int.len() <= 15
        && int.chars().all(|c| c.is_ascii_digit())
        && frac.chars().all(|c| c.is_ascii_digit())
        && frac.len() as u32 <= digits;
    if !ok {
        return Err(format!(
            "{amount:?} is not an amount in {currency} ({digits} decimals)"
        ));
    }
    let mut frac = frac.to_string();
    while (frac.len() as u32) < digits {
        frac.push('0');
    }
    format!("{int}{frac}")
        .parse::<i64>()
        .map_err(|e| format!("{amount:?}: {e}"))
}

/// Minor units as display text: `"EUR 540.00"`, `"JPY 12000"`.
pub fn format_minor(amount_minor: i64, currency: &str) -> String {
    let digits = minor_digits(currency);
    let c = currency.trim().to_ascii_uppercase();
    if digits == 0 {
        return format!("{c} {amount_minor}");
    }
    let scale = 10i64.pow(digits);
    let sign = if amount_minor < 0 { "-" } else { "" };
    let a = amount_minor.unsigned_abs() as i64;
    format!(
        "{c} {sign}{}.{:0width$}",
        a / scale,
        a % scale,
        width = digits as usize
    )
}

/// How a failed refund request is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundErrorClass {
    /// Network error, timeout, 409 (a concurrent request with the same key), 429 (rate limit),
    /// 5xx, or Stripe's `lock_timeout`: retried with the same key and backoff.
    Retry,
    /// Stripe's `charge_already_refunded`: the money is back; recorded as done, not as an error.
    AlreadyRefunded,
    /// Anything else (card expired, invalid request, authentication): the owner is alerted with
    /// links; never retried automatically.
    Permanent,
}

/// Classifies a refund request's failure from its HTTP status (`None` = no answer: network or
/// timeout) and Stripe's `error.code` (<https://docs.stripe.com/error-codes>,
/// <https://docs.stripe.com/error-low-level>).
pub fn classify_refund_error(status: Option<u16>, code: Option<&str>) -> RefundErrorClass {
    if code == Some("charge_already_refunded") {
        return RefundErrorClass::AlreadyRefunded;
    }
    match status {
        None => RefundErrorClass::Retry,
        Some(_) if code == Some("lock_timeout") => RefundErrorClass::Retry,
        Some(409 | 429) => RefundErrorClass::Retry,
        Some(s) if s >= 500 => RefundErrorClass::Retry,
        Some(_) => RefundErrorClass::Permanent,
    }
}

/// Where the money stands, as the guest notice and the owner alert say it (D1
/// `compensations.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum RefundState {
    /// The compensation is being worked out.
    Open,
    /// The processor says nothing was taken.
    NotCharged,
    /// No payment is known: the notice says a payment, if any was taken, will be refunded in full.
    PaymentUnknown,
    /// The refund is with the owner (policy, or a permanent error): "we are arranging your refund".
    Arranging,
    /// Stripe accepted the refund and it is on its way (`pending`).
    Refunding,
    /// Stripe says the refund succeeded (or the charge was already refunded).
    Refunded,
    /// The owner marked it handled outside the engine.
    Handled,
    /// Stripe reports the refund failed or was canceled after it was accepted; with the owner.
    RefundFailed,
}

stored_names!(RefundState);

impl RefundState {
    /// The state after Stripe answered a refund request with refund status `status`
    /// (`succeeded`, `pending`, `requires_action`, `failed`, `canceled`).
    pub fn of_provider_status(status: &str) -> Self {
        match status {
            "succeeded" => RefundState::Refunded,
            "failed" | "canceled" => RefundState::RefundFailed,
            _ => RefundState::Refunding,
        }
    }

    /// The sentence the guest reads about their money: never claims a refund that has not been
    /// accepted by the processor, never "not charged" unless the processor said so.
    pub fn guest_sentence(self, amount: Option<&str>) -> String {
        let payment = amount
            .map(|a| format!("your payment of {a}"))
            .unwrap_or_else(|| "your payment".to_string());
        match self {
            RefundState::NotCharged => "You have not been charged.".into(),
            RefundState::PaymentUnknown | RefundState::Open => {
                "If any payment was taken for this booking, it will be refunded in full; we will \
                 write to you if we need anything from you."
                    .into()
            }
            RefundState::Refunding => format!(
                "{} is being refunded to the card you paid with. Refunds usually take 5\u{2013}10 \
                 business days to appear on your statement.",
                capitalize(&payment)
            ),
            RefundState::Refunded => format!(
                "{} has been refunded to the card you paid with. It usually takes 5\u{2013}10 \
                 business days to appear on your statement.",
                capitalize(&payment)
            ),
            RefundState::Arranging | RefundState::Handled | RefundState::RefundFailed => {
                "We are arranging your refund and will confirm by email once it has been made."
                    .into()
            }
        }
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// One compensation as stored (D1 `compensations`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompensationRow {
    pub compensation_id: String,
    pub cause: Cause,
    pub booking_id: Option<String>,
    pub prebook_id: Option<String>,
    pub client_reference: Option<String>,
    pub payment_intent: Option<String>,
    pub guest_email: Option<String>,
    pub guest_name: Option<String>,
    pub trip: Option<String>,
    pub source: String,
    /// The generic partner that opened it (`None` for other sources; `default` for generic
    /// compensations opened before partners existed).
    #[serde(default)]
    pub partner: Option<String>,
    pub event_id: String,
    pub event_name: String,
    pub reason: String,
    pub fee_amount: Option<String>,
    pub fee_currency: Option<String>,
    pub supplier_refund: Option<String>,
    pub state: RefundState,
    pub created_at_ms: i64,
    /// Reminders the owner got about its refund; also the generation of its newest refund links
    /// (`crate::domain::sweeper::reminders::refund_link_current`).
    #[serde(default)]
    pub reminders_sent: i64,
}

/// One step of a compensation as stored (D1 `compensation_steps`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRow {
    pub step: StepKind,
    pub status: StepStatus,
    pub claimed_by: Option<String>,
    pub idempotency_key: Option<String>,
    pub round: i64,
    pub provider_id: Option<String>,
    pub provider_status: Option<String>,
    pub amount_minor: Option<i64>,
    pub currency: Option<String>,
    pub attempts: i64,
    pub error: Option<String>,
    pub detail: Option<String>,
    /// Last write, ms UTC: a `running` claim older than the store's lease was abandoned.
    #[serde(default)]
    pub updated_at_ms: i64,
    /// `refund`: the intent Stripe's record proved (`crate::domain::payment::payment_proof`), set once;
    /// every request names it with `amount_minor` and `currency`. `None` while not proven.
    #[serde(default)]
    pub payment_intent: Option<String>,
    /// `refund`: what Stripe said when the payment was looked up (one line); `None` before.
    #[serde(default)]
    pub proof: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paid(amount: i64) -> PaymentFacts {
        PaymentFacts {
            payment_intent: Some("pi_1".into()),
            outcome: PaymentOutcome::Paid,
            amount_minor: Some(amount),
            currency: Some("EUR".into()),
            claim_only: false,
        }
    }

    fn eur(a: &str) -> Money {
        Money {
            amount: a.into(),
            currency: "EUR".into(),
        }
    }

    #[test]
    fn the_id_is_the_same_whichever_event_names_the_checkout_first() {
        let a = compensation_id(Some("PB1"), Some("trip_1"), None).unwrap();
        let b = compensation_id(Some(" PB1 "), None, Some("BK1")).unwrap();
        assert_eq!(a, b);
        assert!(a.starts_with("comp-") && a.len() == 29);
        assert_ne!(a, compensation_id(None, Some("PB1"), None).unwrap());
        assert_eq!(compensation_id(None, Some(""), Some(" ")), None);
        assert_eq!(
            refund_idempotency_key(&a, 2),
            format!("{a}-refund-r2"),
            "one key per round"
        );
    }

    #[test]
    fn refund_links_name_their_round() {
        let s = link_subject("comp-abc", 2, 0);
        assert_eq!(s, "comp-abc.r2");
        assert_eq!(parse_link_subject(&s), Some(("comp-abc".into(), 2, 0)));
        let g = link_subject("comp-abc", 2, 3);
        assert_eq!(g, "comp-abc.r2.g3");
        assert_eq!(parse_link_subject(&g), Some(("comp-abc".into(), 2, 3)));
        // An id that itself holds ".g" or ".r" still reads back.
        let odd = link_subject("comp-a.g7.r9", 1, 2);
        assert_eq!(
            parse_link_subject(&odd),
            Some(("comp-a.g7.r9".into(), 1, 2))
        );
        assert_eq!(
            parse_link_subject(&link_subject("comp-a.g7", 1, 0)),
            Some(("comp-a.g7".into(), 1, 0))
        );
        for bad in [
            "comp-abc",
            "hold-1.r2",
            "comp-abc.r0",
            "comp-abc.rx",
            ".r1",
            "comp-abc.r1.g0",
        ] {
            assert_eq!(parse_link_subject(bad), None, "{bad}");
        }
        assert_eq!(next_owner_round(StepStatus::AwaitingOwner, 1), 1);
        assert_eq!(next_owner_round(StepStatus::Failed, 1), 2);
    }

    #[test]
    fn steps_run_in_reverse_of_the_forward_saga_then_the_notices() {
        let names: Vec<&str> = StepKind::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            names,
            [
                "close_booking",
                "withdraw_emails",
                "refund",
                "guest_notice",
                "owner_alert"
            ]
        );
        assert_eq!(StepKind::CloseBooking.position(), 1);
        assert_eq!(StepKind::OwnerAlert.position(), 5);
    }

    #[test]
    fn the_plan_follows_the_payment_and_the_policy() {
        use RefundPolicy::*;
        assert_eq!(
            plan_refund(Automatic, Cause::SupplierFailed, None, None, None),
            RefundPlan::PaymentUnknown
        );
        for (outcome, plan) in [
            (PaymentOutcome::Failed, RefundPlan::PaymentUnknown),
            (PaymentOutcome::Expired, RefundPlan::NotCharged),
        ] {
            let p = PaymentFacts {
                outcome,
                ..paid(100)
            };
            assert_eq!(
                plan_refund(Automatic, Cause::SupplierFailed, Some(&p), None, None),
                plan
            );
        }
        assert!(matches!(
            plan_refund(
                Automatic,
                Cause::BookingCancelled,
                Some(&paid(100)),
                None,
                None
            ),
            RefundPlan::AwaitOwner { .. }
        ));
        assert_eq!(
            plan_refund(
                Automatic,
                Cause::SupplierFailed,
                Some(&paid(54_000)),
                None,
                None
            ),
            RefundPlan::Refund {
                payment_intent: "pi_1".into(),
                ask: RefundAsk::All
            }
        );
        assert!(matches!(
            plan_refund(
                Owner,
                Cause::SupplierFailed,
                Some(&paid(54_000)),
                None,
                None
            ),
            RefundPlan::AwaitOwner {
                ask: RefundAsk::All,
                ..
            }
        ));
    }

    #[test]
    fn the_plan_asks_from_the_suppliers_figures_never_from_the_webhooks_captured_amount() {
        // `amount_minor` is what a payment webhook's body wrote: the ask never reads it (Stripe's
        // API fixes the figure, `crate::domain::payment_proof`).
        for p in [
            paid(54_000),
            paid(100),
            PaymentFacts {
                amount_minor: None,
                ..paid(1)
            },
        ] {
            let plan = |fee: Option<&Money>, refund: Option<&Money>| {
                plan_refund(
                    RefundPolicy::Automatic,
                    Cause::SupplierFailed,
                    Some(&p),
                    fee,
                    refund,
                )
            };
            let refund = |ask: RefundAsk| RefundPlan::Refund {
                payment_intent: "pi_1".into(),
                ask,
            };
            assert_eq!(
                plan(Some(&eur("40.50")), None),
                refund(RefundAsk::LessFee {
                    minor: 4_050,
                    currency: "EUR".into()
                })
            );
            assert_eq!(
                plan(None, Some(&eur("499.50"))),
                refund(RefundAsk::UpTo {
                    minor: 49_950,
                    currency: "EUR".into()
                })
            );
            assert_eq!(plan(Some(&eur("0.00")), None), refund(RefundAsk::All));
            assert_eq!(plan(None, None), refund(RefundAsk::All));
        }
        // A fee in another currency than the payment is the proof's to refuse (Stripe's currency).
        let usd = Money {
            amount: "10".into(),
            currency: "usd".into(),
        };
        assert_eq!(
            plan_refund(
                RefundPolicy::Automatic,
                Cause::SupplierFailed,
                Some(&paid(100)),
                Some(&usd),
                None
            ),
            RefundPlan::Refund {
                payment_intent: "pi_1".into(),
                ask: RefundAsk::LessFee {
                    minor: 1_000,
                    currency: "USD".into()
                }
            }
        );
    }

    #[test]
    fn what_a_human_must_settle_goes_to_the_owner_whatever_the_policy() {
        let no_pi = PaymentFacts {
            payment_intent: None,
            ..paid(100)
        };
        for (p, fee) in [(no_pi, None), (paid(100), Some(&eur("ten")))] {
            let plan = plan_refund(
                RefundPolicy::Automatic,
                Cause::SupplierFailed,
                Some(&p),
                fee,
                None,
            );
            assert!(
                matches!(plan, RefundPlan::AwaitOwner { .. }),
                "{p:?} {fee:?} → {plan:?}"
            );
        }
    }

    #[test]
    fn amounts_are_exact_in_each_currencys_minor_unit() {
        assert_eq!(to_minor("212.40", "EUR"), Ok(21_240));
        assert_eq!(to_minor("540", "eur"), Ok(54_000));
        assert_eq!(to_minor("12000", "JPY"), Ok(12_000));
        assert_eq!(to_minor("1.250", "KWD"), Ok(1_250));
        assert_eq!(to_minor("1.5000", "EUR"), Ok(150));
        for bad in ["-1", "1e3", "1.234", "", "abc", " . "] {
            assert!(to_minor(bad, "EUR").is_err(), "{bad}");
        }
        assert!(to_minor("1.5", "JPY").is_err());
        assert_eq!(format_minor(54_000, "eur"), "EUR 540.00");
        assert_eq!(format_minor(5, "EUR"), "EUR 0.05");
        assert_eq!(format_minor(12_000, "JPY"), "JPY 12000");
    }

    #[test]
    fn refund_errors_are_classified_as_stripe_documents_them() {
        use RefundErrorClass::*;
        assert_eq!(classify_refund_error(None, None), Retry);
        assert_eq!(classify_refund_error(Some(429), Some("rate_limit")), Retry);
        assert_eq!(classify_refund_error(Some(500), None), Retry);
        assert_eq!(classify_refund_error(Some(503), None), Retry);
        assert_eq!(classify_refund_error(Some(409), None), Retry);
        assert_eq!(
            classify_refund_error(Some(400), Some("lock_timeout")),
            Retry
        );
        assert_eq!(
            classify_refund_error(Some(400), Some("charge_already_refunded")),
            AlreadyRefunded
        );
        assert_eq!(
            classify_refund_error(Some(402), Some("expired_card")),
            Permanent
        );
        assert_eq!(
            classify_refund_error(Some(401), Some("api_key_expired")),
            Permanent
        );
        assert_eq!(
            classify_refund_error(Some(400), Some("parameter_invalid_integer")),
            Permanent
        );
    }

    #[test]
    fn the_guest_never_reads_a_refund_that_has_not_happened() {
        let arranging = RefundState::Arranging.guest_sentence(Some("EUR 540.00"));
        assert!(!arranging.contains("refunded") && arranging.contains("arranging"));
        let unknown = RefundState::PaymentUnknown.guest_sentence(None);
        assert!(unknown.starts_with("If any payment"));
        assert_eq!(
            RefundState::NotCharged.guest_sentence(Some("EUR 1.00")),
            "You have not been charged."
        );
        assert!(RefundState::Refunding
            .guest_sentence(Some("EUR 540.00"))
            .starts_with("Your payment of EUR 540.00 is being refunded"));
        assert!(RefundState::Refunded
            .guest_sentence(None)
            .starts_with("Your payment has been refunded"));
        assert_eq!(
            RefundState::of_provider_status("succeeded"),
            RefundState::Refunded
        );
        assert_eq!(
            RefundState::of_provider_status("pending"),
            RefundState::Refunding
        );
        assert_eq!(
            RefundState::of_provider_status("canceled"),
            RefundState::RefundFailed
        );
    }

    #[test]
    fn a_payment_only_the_failure_names_waits_for_the_owner_even_under_automatic() {
        let p = PaymentFacts {
            claim_only: true,
            ..paid(100)
        };
        let RefundPlan::AwaitOwner { why, .. } = plan_refund(
            RefundPolicy::Automatic,
            Cause::SupplierFailed,
            Some(&p),
            None,
            None,
        ) else {
            panic!("refunded on the failure's word alone");
        };
        assert!(
            why.contains("no checkout or booking of this supplier"),
            "{why}"
        );
        assert!(matches!(
            plan_refund(
                RefundPolicy::Automatic,
                Cause::SupplierFailed,
                Some(&paid(100)),
                None,
                None
            ),
            RefundPlan::Refund { .. }
        ));
    }
}
