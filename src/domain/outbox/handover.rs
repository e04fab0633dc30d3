//! What a hand-over to a provider means once it is accepted, or its answer was lost: sent,
//! possibly sent twice, or stop retrying.

use super::*;

/// How long Resend keeps an `Idempotency-Key`: 24 hours
/// (<https://resend.com/docs/dashboard/emails/idempotency-keys>).
pub const RESEND_IDEMPOTENCY_WINDOW_MS: i64 = DAY_MS;

/// Margin kept inside [`RESEND_IDEMPOTENCY_WINDOW_MS`] before a retry with the same key is no longer
/// trusted to be deduplicated (clock skew, queueing): 1 hour.
pub const RESEND_IDEMPOTENCY_MARGIN_MS: i64 = 3_600_000;

/// The status of an email a provider just accepted.
///
/// `maybe_handed_over` is the earlier hand-over whose outcome we never learned (the process was
/// killed between "provider accepted" and "we recorded it", or the response was lost): which
/// provider, and when (ms UTC). The rule, for the gap between a provider's acceptance and our
/// record of it:
/// - no such hand-over → `Sent`;
/// - the earlier hand-over and this one both went to Resend, less than 23 h apart → `Sent`: the
///   retry carried the same `Idempotency-Key` and the same payload, so Resend answered the first
///   result again instead of sending a second copy;
/// - anything else (Cloudflare Email Service or SMTP involved, a switch of provider, or the Resend
///   key window over) → `SentPossiblyTwice`: the email was re-sent with the same deterministic
///   Message-ID (SMTP; Cloudflare sets its own) and nobody can confirm the first copy did not
///   arrive. Losing a booking email is worse than a rare duplicate the operator can see.
pub fn status_after_success(
    maybe_handed_over: Option<(Provider, i64)>,
    sent_by: Provider,
    now_ms: i64,
) -> crate::domain::email::EmailStatus {
    use crate::domain::email::EmailStatus;
    match maybe_handed_over {
        None => EmailStatus::Sent,
        Some((earlier, at_ms))
            if earlier.is_idempotent()
                && sent_by == earlier
                && now_ms.saturating_sub(at_ms)
                    < RESEND_IDEMPOTENCY_WINDOW_MS - RESEND_IDEMPOTENCY_MARGIN_MS =>
        {
            EmailStatus::Sent
        }
        Some(_) => EmailStatus::SentPossiblyTwice,
    }
}

/// Merges a new uncertain hand-over into the one already on record: a non-idempotent provider's
/// uncertainty is never forgotten (a later Resend retry cannot vouch for a Cloudflare or SMTP copy).
pub fn merge_maybe_handed_over(
    earlier: Option<(Provider, i64)>,
    new: (Provider, i64),
) -> (Provider, i64) {
    match earlier {
        Some(e) if !e.0.is_idempotent() => e,
        _ => new,
    }
}

/// `true` when a hand-over whose outcome is unknown (`this_maybe_handed_over`: the connection was
/// lost after SMTP's final dot, Cloudflare Email Service answered without a code) must be the last
/// one: an earlier hand-over to a provider that cannot deduplicate (SMTP, Cloudflare) is already
/// on record, so the email may have reached the guest twice. Sending a third copy would only make
/// it worse; the email is recorded `sent_possibly_twice` (never confirmed) and the owner is told.
///
/// So an uncertain hand-over is tried at most once more, never in a loop. Resend's retries carry
/// the same `Idempotency-Key` and are deduplicated by Resend: they never end the retries.
pub fn stop_after_uncertain(
    earlier: Option<(Provider, i64)>,
    this_provider: Provider,
    this_maybe_handed_over: bool,
) -> bool {
    this_maybe_handed_over
        && !this_provider.is_idempotent()
        && earlier.is_some_and(|(p, _)| !p.is_idempotent())
}
