//! Duffel v2 webhooks (flights and stays): <https://duffel.com/docs/api/v2/webhooks>,
//! <https://duffel.com/docs/api/v2/webhook-events>.
//!
//! Delivery: `POST` signed with `X-Duffel-Signature: t=<unix>,v1=<hex>` (verify with
//! [`super::signature::verify_t_v1`] and [`super::signature::DUFFEL_SIGNATURE_HEADER`] before
//! calling anything here), at-least-once, unordered, retried for 72 h; dedupe on the envelope `id`
//! (`wev_…`).
//!
//! Envelope: `{id, type, api_version, live_mode, idempotency_key, created_at,
//! identity_organisation_id, data: {object}}`. [`parse_envelope`] checks it; [`interpret`] maps the
//! `type` to a canonical event:
//!
//! | `type`                                     | canonical event                  |
//! |--------------------------------------------|----------------------------------|
//! | `order.created`                            | `FlightBooked`                   |
//! | `order.airline_initiated_change_detected`  | `FlightScheduleChanged` (ids only; list the changes with [`parse_aic_list`]) |
//! | `order_cancellation.confirmed`             | `BookingCancelled` (the order)   |
//! | `stays.booking.created`                    | `HotelBooked`                    |
//! | `stays.booking.cancelled`                  | `BookingCancelled` (the booking) |
//! | `order.creation_failed`, `stays.booking_creation_failed` | `BookingFailed` (compensation, see [`booking_failure`]) |
//! | anything else                              | `Ignored(type)`                  |
//!
//! `air.order.changed` is ignored on purpose: v2 sends the order as it is *now*, with no previous
//! state, so the payload alone cannot tell a traveller-visible change from a status move (e.g.
//! ticketing) — and status moves must never trigger mail. Schedule changes arrive separately as
//! `order.airline_initiated_change_detected`.
//!
//! A stays booking's rooms, board and check-in information are read in [`stays`].
//!
//! Times: segment `departing_at` / `arriving_at` are local wall-clock times at the origin /
//! destination airport (no offset; the airport's IANA `time_zone` says which zone).

use super::json::{is_nonzero_amount, At};
use super::signature::DUFFEL_SIGNATURE_HEADER;
use super::{peek_str, ParseError, SignedEnvelope};
use crate::domain::basics::text::{clean, TextKind};
use crate::domain::event::{
    Airport, BookingRef, Cancellation, EventId, FlightBooking, FlightChange, FlightSegment, Holder,
    Interpretation, Money, Source, SupplierEvent,
};
use crate::domain::event::{BookingFailure, EmailAddress, FailedKind};
use crate::domain::timezone::parse_iana;
use crate::domain::timezone::tz_lookup;
use chrono::{DateTime, Utc};
use serde_json::Value;
use stays::stays_booking;

mod stays;

/// The Duffel webhook in [`super::WEBHOOKS`]: `X-Duffel-Signature` against
/// `DUFFEL_WEBHOOK_SECRETS` within `WEBHOOK_TOLERANCE_S`, then the envelope ([`parse_envelope`],
/// [`interpret`]).
pub const WEBHOOK: SignedEnvelope<Envelope> = SignedEnvelope {
    source: Source::Duffel,
    header: DUFFEL_SIGNATURE_HEADER,
    secrets: |cfg| &cfg.duffel_webhook_secrets,
    parse: parse_envelope,
    interpret,
    names: |e| (e.id, e.event_type),
    claimed_id: peek_event_id,
};

/// A checked Duffel webhook envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// `id` (`wev_…`): the dedupe key of the delivery.
    pub id: EventId,
    /// `type`, e.g. `order.created`.
    pub event_type: String,
    /// `live_mode`: `false` for test-mode events (→ `sandbox = true`).
    pub live_mode: bool,
    /// `data.object` (`Value::Null` when the event carries none, e.g. some pings).
    pub object: Value,
    /// `created_at` (UTC) when given.
    pub created_at: Option<DateTime<Utc>>,
    /// `idempotency_key`: the related object's id (`ord_…`, `aic_…`) when given.
    pub idempotency_key: Option<String>,
}

/// Reads the `id` of a body that may be otherwise malformed (to label a rejected raw row).
pub fn peek_event_id(body: &[u8]) -> Option<String> {
    peek_str(body, "id")
}

/// Parses and checks the envelope: `id` and `type` non-empty strings, `live_mode` a boolean,
/// `created_at` RFC 3339 when present, `data` an object when present. `data.object` is only
/// required by [`interpret`] for the types it acts on.
pub fn parse_envelope(body: &[u8]) -> Result<Envelope, ParseError> {
    let (v, id, event_type) = super::envelope_head(body)?;
    let root = At::root(&v, "");
    let live_at = root.get("live_mode");
    let live_mode = match live_at.value() {
        None => return Err(live_at.missing()),
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(live_at.invalid("must be a boolean")),
    };
    let created_at_at = root.get("created_at");
    let created_at = match created_at_at.value() {
        None => None,
        Some(_) => {
            let s = created_at_at.str_req()?;
            Some(
                DateTime::parse_from_rfc3339(&s)
                    .map_err(|_| {
                        created_at_at.invalid(format!("must be an RFC 3339 date-time, got {s:?}"))
                    })?
                    .with_timezone(&Utc),
            )
        }
    };
    let data = root.get("data");
    if data.value().is_some_and(|d| !d.is_object()) {
        return Err(data.invalid("must be an object"));
    }
    Ok(Envelope {
        id,
        event_type,
        live_mode,
        object: data.get("object").value().cloned().unwrap_or(Value::Null),
        created_at,
        idempotency_key: root.get("idempotency_key").str_opt(),
    })
}

/// Maps an envelope to what the engine does with it (see the module table).
pub fn interpret(env: &Envelope) -> Result<Interpretation, ParseError> {
    let event = match env.event_type.as_str() {
        "order.created" => {
            SupplierEvent::FlightBooked(Box::new(flight_booking(&object(env)?, !env.live_mode)?))
        }
        "order.airline_initiated_change_detected" => schedule_changed(env)?,
        "order_cancellation.confirmed" => order_cancelled(&object(env)?)?,
        "stays.booking.created" => {
            SupplierEvent::HotelBooked(Box::new(stays_booking(&object(env)?, !env.live_mode)?))
        }
        "stays.booking.cancelled" => {
            let obj = object(env)?;
            SupplierEvent::BookingCancelled(Cancellation {
                booking_id: obj.get("id").booking_ref_req()?,
                with_charges: false,
                cancellation_fee: None,
                refund: None,
            })
        }
        "order.creation_failed" => {
            SupplierEvent::BookingFailed(Box::new(booking_failure(env, FailedKind::Flight)?))
        }
        "stays.booking_creation_failed" => {
            SupplierEvent::BookingFailed(Box::new(booking_failure(env, FailedKind::Hotel)?))
        }
        // `air.order.changed`: see the module docs (not detectable from the payload alone).
        other => return Ok(Interpretation::Ignored(other.to_string())),
    };
    Ok(Interpretation::Journey(event))
}

/// Parses the response of `GET /air/airline_initiated_changes?order_id=…` (`{data: [AIC…]}`) into
/// one [`FlightChange`] per change of `order_id`, each with its `removed` and `added` slices
/// flattened into segments (same rules as `order.created`). Changes whose `order_id` names another
/// order are skipped. Errors name paths like `data[0].added[0].segments[0].departing_at`.
pub fn parse_aic_list(body: &[u8], order_id: &BookingRef) -> Result<Vec<FlightChange>, ParseError> {
    let v: Value = crate::domain::basics::json::parse_body(body)?;
    if !v.is_object() {
        return Err(ParseError::NotAnObject);
    }
    let root = At::root(&v, "");
    let mut changes = Vec::new();
    for aic in root.get("data").array_req()? {
        if aic
            .get("order_id")
            .str_opt()
            .is_some_and(|o| o != order_id.as_str())
        {
            continue;
        }
        changes.push(FlightChange {
            change_id: aic.get("id").str_req()?,
            order_id: order_id.clone(),
            removed: slices_segments(&aic.get("removed"))?,
            added: slices_segments(&aic.get("added"))?,
        });
    }
    Ok(changes)
}

fn object(env: &Envelope) -> Result<At<'_>, ParseError> {
    let obj = At::root(&env.object, "data.object");
    match obj.value() {
        None => Err(obj.missing()),
        Some(v) if v.is_object() => Ok(obj),
        Some(_) => Err(obj.invalid("must be an object")),
    }
}

fn money(amount: &At<'_>, currency: &At<'_>) -> Option<Money> {
    Some(Money {
        amount: amount.amount_opt()?,
        currency: currency.str_opt()?.to_ascii_uppercase(),
    })
}

/// `order.created` → the canonical flight booking.
///
/// Required: `id`, a passenger with an `email` (the contact), and at least one segment, each with
/// marketing carrier code + flight number, origin/destination `iata_code` and local times.
fn flight_booking(order: &At<'_>, sandbox: bool) -> Result<FlightBooking, ParseError> {
    let booking_id = order.get("id").booking_ref_req()?;

    let passengers_at = order.get("passengers");
    let passengers = passengers_at.array_req()?;
    let contact_at = passengers
        .iter()
        .find(|p| p.get("email").is_present())
        .cloned()
        .unwrap_or_else(|| passengers_at.index(0));
    let contact = Holder {
        name: contact_at.person("given_name", "family_name"),
        email: contact_at.get("email").email_req()?,
        phone: contact_at.get("phone_number").str_opt(),
    };

    let slices = order.get("slices");
    let segments = slices_segments(&slices)?;
    if segments.is_empty() {
        return Err(slices.invalid("has no segments"));
    }

    Ok(FlightBooking {
        booking_id,
        booking_reference: order.get("booking_reference").str_opt(),
        status: order_status(order),
        contact,
        passengers: passengers
            .iter()
            .map(|p| p.person("given_name", "family_name"))
            .filter(|n| !n.full().is_empty())
            .collect(),
        segments,
        total: money(&order.get("total_amount"), &order.get("total_currency")),
        sandbox,
        locale: None,
        // The booking site's checkout reference, as its failures carry it (see `failure`).
        client_reference: order
            .get("metadata")
            .get("client_reference")
            .str_opt()
            .or_else(|| order.get("metadata").get("trip_id").str_opt()),
    })
}

/// Duffel orders carry no status field: `CONFIRMED` unless the object says otherwise (an explicit
/// `status`, `cancelled_at`, or a hold order still awaiting payment).
fn order_status(order: &At<'_>) -> String {
    if let Some(s) = order.get("status").str_opt() {
        s.to_ascii_uppercase()
    } else if order.get("cancelled_at").is_present() {
        "CANCELLED".into()
    } else if order
        .get("payment_status")
        .get("awaiting_payment")
        .bool_opt()
        == Some(true)
    {
        "AWAITING_PAYMENT".into()
    } else {
        "CONFIRMED".into()
    }
}

/// All segments of a required list of slices, in order.
fn slices_segments(slices: &At<'_>) -> Result<Vec<FlightSegment>, ParseError> {
    let mut out = Vec::new();
    for slice in slices.array_req()? {
        for segment in slice.get("segments").array_req()? {
            out.push(flight_segment(&segment)?);
        }
    }
    Ok(out)
}

fn flight_segment(seg: &At<'_>) -> Result<FlightSegment, ParseError> {
    let carrier = seg.get("marketing_carrier").get("iata_code").str_req()?;
    let number = seg.get("marketing_carrier_flight_number").str_req()?;
    Ok(FlightSegment {
        flight_number: format!("{carrier} {number}"),
        origin: airport(&seg.get("origin"))?,
        destination: airport(&seg.get("destination"))?,
        departing_at: seg.get("departing_at").local_datetime_req()?,
        arriving_at: seg.get("arriving_at").local_datetime_req()?,
        airline: seg.get("marketing_carrier").get("name").str_opt(),
    })
}

/// A Duffel Place of type airport. `name` falls back to the IATA code. The zone is Duffel's
/// `time_zone` when it is a tz-database name (Duffel documents it for every airport); else the zone
/// the coordinate lookup (`domain::timezone::tz_lookup`) finds at the airport's `latitude`/`longitude`, when
/// the payload has them; else the supplier's text as given (unusable: times stay without offset).
fn airport(place: &At<'_>) -> Result<Airport, ParseError> {
    let iata_code = place.get("iata_code").str_req()?.to_ascii_uppercase();
    let given = place.get("time_zone").str_opt();
    let degrees = |k: &str| place.get(k).value().and_then(Value::as_f64);
    let located = || match (degrees("latitude"), degrees("longitude")) {
        (Some(lat), Some(lon)) if (lat, lon) != (0.0, 0.0) => tz_lookup::zone_name_at(lat, lon),
        _ => None,
    };
    let time_zone = match given {
        Some(name) if parse_iana(&name).is_some() => Some(name),
        given => located().map(str::to_string).or(given),
    };
    Ok(Airport {
        name: place
            .get("name")
            .str_opt()
            .unwrap_or_else(|| iata_code.clone()),
        city_name: place.get("city_name").str_opt(),
        time_zone,
        iata_code,
    })
}

/// `order.airline_initiated_change_detected`. v2 `data.object` is pared down to ids: usually the
/// order (`id: ord_…`, `aic_id`), but a full AIC object (`id: aic_…`, `order_id`) is read too. The
/// change id falls back to the envelope's `idempotency_key` when that is an `aic_…`.
fn schedule_changed(env: &Envelope) -> Result<SupplierEvent, ParseError> {
    let obj = object(env)?;
    let id = obj.get("id").str_opt();
    let is_aic = |s: &String| s.starts_with("aic_");
    let (order_at, change_id) = if id.as_ref().is_some_and(is_aic) {
        (obj.get("order_id"), id)
    } else {
        let order_at = obj.get("order_id");
        (
            // Absent everywhere: name `data.object.id`, the field v2 documents.
            if order_at.is_present() {
                order_at
            } else {
                obj.get("id")
            },
            obj.get("aic_id")
                .str_opt()
                .or_else(|| env.idempotency_key.clone().filter(is_aic)),
        )
    };
    Ok(SupplierEvent::FlightScheduleChanged {
        order_id: order_at.booking_ref_req()?,
        change_id,
    })
}

/// `order_cancellation.confirmed`: the object is an OrderCancellation (`ore_…`) naming its
/// `order_id`, with `refund_amount` / `refund_currency`. Charges only when a non-zero penalty is
/// given (`penalty_amount` / `penalty_currency`).
fn order_cancelled(obj: &At<'_>) -> Result<SupplierEvent, ParseError> {
    let fee = money(&obj.get("penalty_amount"), &obj.get("penalty_currency"))
        .filter(|m| is_nonzero_amount(&m.amount));
    Ok(SupplierEvent::BookingCancelled(Cancellation {
        booking_id: obj.get("order_id").booking_ref_req()?,
        with_charges: fee.is_some(),
        cancellation_fee: fee,
        refund: money(&obj.get("refund_amount"), &obj.get("refund_currency")),
    }))
}

/// `order.creation_failed` (an order accepted with `202` that could not be created) and
/// `stays.booking_creation_failed` → [`BookingFailure`]. Duffel documents the event names, not the
/// object's fields; read tolerantly from `data.object`: `metadata.client_reference` (else
/// `metadata.trip_id`; the booking site puts it on the order or booking request, as Duffel
/// metadata allows), `metadata.payment_intent` (the Stripe payment), `id` when it is an order or
/// booking id (`ord_…`, `bok_…`), the guest from `email` / `passengers[0]` / `guests[0]`, the
/// accommodation name, and the reason from `errors[0].message` (else `.title`).
///
/// Required: a client reference or an order/booking id (the error names
/// `data.object.metadata.client_reference`): without one the failure matches no checkout.
pub fn booking_failure(env: &Envelope, kind: FailedKind) -> Result<BookingFailure, ParseError> {
    let obj = At::root(&env.object, "data.object");
    let metadata = obj.get("metadata");
    let client_reference = metadata
        .get("client_reference")
        .str_opt()
        .or_else(|| metadata.get("trip_id").str_opt());
    let booking_id = obj
        .get("id")
        .str_opt()
        .filter(|id| id.starts_with("ord_") || id.starts_with("bok_"))
        .map(|id| BookingRef::parse(&id).map_err(|e| obj.get("id").invalid(e.to_string())))
        .transpose()?;
    if client_reference.is_none() && booking_id.is_none() {
        return Err(metadata.get("client_reference").invalid(
            "is missing, and data.object.id is no order or booking id: the failure matches no checkout",
        ));
    }
    let passenger = obj.get("passengers").index(0);
    let guest = obj.get("guests").index(0);
    let email = [obj.get("email"), passenger.get("email")]
        .iter()
        .filter_map(At::str_opt)
        .find_map(|e| EmailAddress::parse(&e).ok());
    let guest_name = [passenger, guest]
        .iter()
        .map(|p| p.person("given_name", "family_name"))
        .find(|n| !n.full().is_empty());
    let error = obj.get("errors").index(0);
    let reason = error
        .get("message")
        .str_opt()
        .or_else(|| error.get("title").str_opt());
    Ok(BookingFailure {
        booking_kind: kind,
        booking_id,
        prebook_id: None,
        client_reference,
        transaction_id: metadata.get("payment_intent").str_opt(),
        email,
        guest_name,
        description: obj
            .get("accommodation")
            .get("name")
            .str_opt()
            .map(|d| clean(&d, TextKind::PlaceName)),
        reason: super::liteapi::reason_text(reason),
        fee: None,
    })
}
