//! What each outbound webhook event says (`data`, schema version
//! [`crate::domain::webhooks::SCHEMA_VERSION`]) and what it is caused by (its stable id). Pure:
//! the journey, the outbox and the queue consumers call these and publish the result.
//!
//! | type | cause (→ event id) | data |
//! |---|---|---|
//! | `booking.confirmed` | booking id | `bookingId, kind ("hotel"/"flight"), source, supplierEventId, status, guest{name,email}, hotelName?, checkin?, checkout?, bookingReference?, total?{amount,currency}, sandbox` |
//! | `booking.updated` | source + supplier event id | `bookingId, source, supplierEventId, eventName, change` |
//! | `booking.cancelled` | booking id | `bookingId, source, supplierEventId, withCharges, cancellationFee?, refund?` |
//! | `booking.compensated` | compensation id + final state | `compensationId, bookingId?, state` |
//! | `email.sent` / `email.dead` / `email.skipped` | dedupe key + status + attempts | `dedupeKey, kind, reference, status, provider?, providerMessageId?, attempts, reason?` |
//! | `email.bounced` | provider + provider event id | `email, reason ("hard_bounce"/"complaint"), provider, providerEventId, detail?` |
//! | `checkout.held` | dedupe key of the owner's hold alert | `dedupeKey, reference` |
//! | `checkout.follow_up_sent` | dedupe key of the follow-up | `dedupeKey, reference` |

use crate::domain::event::{Cancellation, FlightBooking, Holder, HotelBooking, Money, Source};
use crate::domain::webhooks::{publication, EventType, Publication};
use serde_json::{json, Value};

fn money(m: &Option<Money>) -> Value {
    match m {
        Some(m) => json!({"amount": m.amount, "currency": m.currency}),
        None => Value::Null,
    }
}

/// `booking.confirmed`: the fields every booking has, then `extra` (the kind's own).
#[allow(clippy::too_many_arguments)]
fn confirmed(
    kind: &str,
    id: &str,
    status: &str,
    holder: &Holder,
    total: &Option<Money>,
    sandbox: bool,
    source: Source,
    supplier_event_id: &str,
    extra: Value,
    at_ms: i64,
) -> Publication {
    let mut data = json!({
        "bookingId": id,
        "kind": kind,
        "source": source.as_str(),
        "supplierEventId": supplier_event_id,
        "status": status,
        "guest": {"name": holder.name.full(), "email": holder.email.as_str()},
        "total": money(total),
        "sandbox": sandbox,
    });
    if let (Some(data), Value::Object(extra)) = (data.as_object_mut(), extra) {
        data.extend(extra);
    }
    publication(EventType::BookingConfirmed, id, Some(id), data, at_ms)
}

/// `booking.confirmed` of a hotel booking (adds `hotelName`, `checkin`, `checkout`).
pub fn hotel_confirmed(
    b: &HotelBooking,
    source: Source,
    supplier_event_id: &str,
    at_ms: i64,
) -> Publication {
    let extra = json!({
        "hotelName": b.hotel_name,
        "checkin": b.checkin.to_string(),
        "checkout": b.checkout.to_string(),
    });
    let id = b.booking_id.as_str();
    confirmed(
        "hotel",
        id,
        &b.status,
        &b.holder,
        &b.total,
        b.sandbox,
        source,
        supplier_event_id,
        extra,
        at_ms,
    )
}

/// `booking.confirmed` of a flight order (adds `bookingReference`).
pub fn flight_confirmed(
    f: &FlightBooking,
    source: Source,
    supplier_event_id: &str,
    at_ms: i64,
) -> Publication {
    let extra = json!({ "bookingReference": f.booking_reference });
    let id = f.booking_id.as_str();
    confirmed(
        "flight",
        id,
        &f.status,
        &f.contact,
        &f.total,
        f.sandbox,
        source,
        supplier_event_id,
        extra,
        at_ms,
    )
}

/// `booking.updated`: one supplier event changed a booking (`change` is the canonical event kind,
/// e.g. `hotel_confirmation_number`, `hotel_amended`, `flight_schedule_changed`).
pub fn booking_updated(
    booking_id: &str,
    source: Source,
    supplier_event_id: &str,
    event_name: &str,
    change: &str,
    at_ms: i64,
) -> Publication {
    publication(
        EventType::BookingUpdated,
        &format!("{}:{supplier_event_id}", source.as_str()),
        Some(booking_id),
        json!({
            "bookingId": booking_id,
            "source": source.as_str(),
            "supplierEventId": supplier_event_id,
            "eventName": event_name,
            "change": change,
        }),
        at_ms,
    )
}

/// `booking.cancelled`.
pub fn booking_cancelled(
    c: &Cancellation,
    source: Source,
    supplier_event_id: &str,
    at_ms: i64,
) -> Publication {
    let id = c.booking_id.as_str();
    publication(
        EventType::BookingCancelled,
        id,
        Some(id),
        json!({
            "bookingId": id,
            "source": source.as_str(),
            "supplierEventId": supplier_event_id,
            "withCharges": c.with_charges,
            "cancellationFee": money(&c.cancellation_fee),
            "refund": money(&c.refund),
        }),
        at_ms,
    )
}

/// `booking.compensated`: compensation `compensation_id` reached the final state `state`
/// (`refunded`, `not_charged` or `handled`).
pub fn booking_compensated(
    compensation_id: &str,
    booking_id: Option<&str>,
    state: &str,
    at_ms: i64,
) -> Publication {
    publication(
        EventType::BookingCompensated,
        &format!("{compensation_id}:{state}"),
        booking_id,
        json!({"compensationId": compensation_id, "bookingId": booking_id, "state": state}),
        at_ms,
    )
}

/// What the outbox recorded about one client email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailFact<'a> {
    pub dedupe_key: &'a str,
    /// The stored email status (`sent`, `dead`, `skipped`, `dropped`, `blocked`, …).
    pub status: &'a str,
    pub provider: Option<&'a str>,
    pub provider_message_id: Option<&'a str>,
    pub attempts: i64,
    pub reason: Option<&'a str>,
}

/// `email.sent`, `email.dead` or `email.skipped` for a settled client email (`dropped` and
/// `blocked` are reported as `email.skipped` with their status); `None` for any other status.
pub fn email_outcome(e: &EmailFact<'_>, at_ms: i64) -> Option<Publication> {
    let ty = match e.status {
        "sent" => EventType::EmailSent,
        "dead" => EventType::EmailDead,
        "skipped" | "dropped" | "blocked" => EventType::EmailSkipped,
        _ => return None,
    };
    let (kind, reference) = e.dedupe_key.split_once(':').unwrap_or((e.dedupe_key, ""));
    let reason = e
        .reason
        .map(|r| crate::domain::basics::text::cut_bytes(r, 300));
    Some(publication(
        ty,
        &format!("{}:{}:{}", e.dedupe_key, e.status, e.attempts),
        None,
        json!({
            "dedupeKey": e.dedupe_key,
            "kind": kind,
            "reference": reference,
            "status": e.status,
            "provider": e.provider,
            "providerMessageId": e.provider_message_id,
            "attempts": e.attempts,
            "reason": if ty == EventType::EmailSent { None } else { reason },
        }),
        at_ms,
    ))
}

/// `email.bounced`: `provider` (`resend`, `email_service`) reported a hard bounce or complaint
/// (`reason`) for `email` in its event `provider_event_id`.
pub fn email_bounced(
    email: &str,
    reason: &str,
    provider: &str,
    provider_event_id: &str,
    detail: Option<&str>,
    at_ms: i64,
) -> Publication {
    publication(
        EventType::EmailBounced,
        &format!("{provider}:{provider_event_id}:{email}"),
        None,
        json!({
            "email": email,
            "reason": reason,
            "provider": provider,
            "providerEventId": provider_event_id,
            "detail": detail,
        }),
        at_ms,
    )
}

/// `checkout.held` (`owner_checkout_hold:…` handed to the outbox) or `checkout.follow_up_sent`
/// (`checkout_not_completed:…`), from the dedupe key of the email a checkout journey handed over;
/// `None` for any other key.
pub fn checkout_fact(dedupe_key: &str, at_ms: i64) -> Option<Publication> {
    let (kind, reference) = dedupe_key.split_once(':')?;
    let ty = match kind {
        "owner_checkout_hold" => EventType::CheckoutHeld,
        "checkout_not_completed" => EventType::CheckoutFollowUpSent,
        _ => return None,
    };
    Some(publication(
        ty,
        dedupe_key,
        None,
        json!({"dedupeKey": dedupe_key, "reference": reference}),
        at_ms,
    ))
}
