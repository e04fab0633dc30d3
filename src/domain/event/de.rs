//! Reading a [`SupplierEvent`] from JSON: `{"kind": "<kind>", …the kind's fields}`, the form its
//! derived `Serialize` writes, through [`crate::domain::basics::json::internally_tagged`] rather than
//! serde's derive for internally tagged enums (which compiles a second deserializer for every
//! event type; see there). Same JSON in, same errors out.

use super::{
    BookingFailure, BookingRef, Cancellation, CheckoutAttempt, FlightBooking, HotelAmendment,
    HotelBooking, PaymentUpdate, RefundUpdate, SupplierEvent,
};
use serde::{Deserialize, Deserializer};
use serde_json::from_str;

/// The fields of [`SupplierEvent::HotelConfirmationNumber`].
#[derive(Deserialize)]
struct HotelConfirmationNumber {
    booking_id: BookingRef,
    hotel_confirmation_number: String,
}

/// The fields of [`SupplierEvent::CheckinInstructions`].
#[derive(Deserialize)]
struct CheckinInstructions {
    booking_id: BookingRef,
    instructions: String,
}

/// The fields of [`SupplierEvent::FlightScheduleChanged`].
#[derive(Deserialize)]
struct FlightScheduleChanged {
    order_id: BookingRef,
    change_id: Option<String>,
}

/// The fields of [`SupplierEvent::StatusChanged`].
#[derive(Deserialize)]
struct StatusChanged {
    booking_id: BookingRef,
    status: String,
}

impl<'de> Deserialize<'de> for SupplierEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use SupplierEvent as E;
        crate::domain::basics::json::internally_tagged(
            deserializer,
            "kind",
            &SupplierEvent::KINDS,
            |kind, text| {
                Some(match kind {
                    "hotel_booked" => from_str::<Box<HotelBooking>>(text).map(E::HotelBooked),
                    "hotel_confirmation_number" => {
                        from_str(text).map(|f: HotelConfirmationNumber| {
                            E::HotelConfirmationNumber {
                                booking_id: f.booking_id,
                                hotel_confirmation_number: f.hotel_confirmation_number,
                            }
                        })
                    }
                    "checkin_instructions" => {
                        from_str(text).map(|f: CheckinInstructions| E::CheckinInstructions {
                            booking_id: f.booking_id,
                            instructions: f.instructions,
                        })
                    }
                    "hotel_amended" => from_str::<Box<HotelAmendment>>(text).map(E::HotelAmended),
                    "booking_cancelled" => from_str::<Cancellation>(text).map(E::BookingCancelled),
                    "flight_booked" => from_str::<Box<FlightBooking>>(text).map(E::FlightBooked),
                    "flight_schedule_changed" => {
                        from_str(text).map(|f: FlightScheduleChanged| E::FlightScheduleChanged {
                            order_id: f.order_id,
                            change_id: f.change_id,
                        })
                    }
                    "status_changed" => from_str(text).map(|f: StatusChanged| E::StatusChanged {
                        booking_id: f.booking_id,
                        status: f.status,
                    }),
                    "checkout_started" => {
                        from_str::<Box<CheckoutAttempt>>(text).map(E::CheckoutStarted)
                    }
                    "payment_updated" => {
                        from_str::<Box<PaymentUpdate>>(text).map(E::PaymentUpdated)
                    }
                    "booking_failed" => from_str::<Box<BookingFailure>>(text).map(E::BookingFailed),
                    "refund_updated" => from_str::<Box<RefundUpdate>>(text).map(E::RefundUpdated),
                    _ => return None,
                })
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<SupplierEvent, String> {
        serde_json::from_str(text).map_err(|e| crate::domain::basics::json::message(&e))
    }

    #[test]
    fn every_kind_is_read_back_from_what_serialize_writes() {
        let events = [
            r#"{"kind":"hotel_confirmation_number","booking_id":"BK1","hotel_confirmation_number":"H-9"}"#,
            r#"{"kind":"checkin_instructions","booking_id":"BK1","instructions":"Key at desk"}"#,
            r#"{"kind":"booking_cancelled","booking_id":"BK1","with_charges":true,"cancellation_fee":{"amount":"10.00","currency":"EUR"},"refund":null}"#,
            r#"{"kind":"flight_schedule_changed","order_id":"ord_1","change_id":null}"#,
            r#"{"order_id":"ord_1","kind":"flight_schedule_changed","change_id":"oac_2"}"#,
            r#"{"kind":"status_changed","booking_id":"BK1","status":"TICKETED"}"#,
        ];
        for text in events {
            let event = read(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let again = read(&serde_json::to_string(&event).unwrap()).unwrap();
            assert_eq!(again, event);
            let kind = serde_json::from_str::<serde_json::Value>(text).unwrap()["kind"].clone();
            assert_eq!(kind, event.kind());
        }
        // A missing optional field is None, as with the derive.
        assert_eq!(
            read(r#"{"kind":"flight_schedule_changed","order_id":"ord_1"}"#).unwrap(),
            SupplierEvent::FlightScheduleChanged {
                order_id: BookingRef::parse("ord_1").unwrap(),
                change_id: None
            }
        );
    }

    #[test]
    fn every_kind_is_known_and_asks_for_its_own_fields() {
        for kind in &SupplierEvent::KINDS {
            // Known: read, or refused for a field of its own (an amendment's are all optional).
            match read(&format!(r#"{{"kind":"{kind}"}}"#)) {
                Ok(event) => assert_eq!(event.kind(), *kind),
                Err(error) => assert!(error.starts_with("missing field `"), "{kind}: {error}"),
            }
        }
        assert_eq!(
            read(r#"{"kind":"hotel_exploded","booking_id":"BK1"}"#).unwrap_err(),
            format!(
                "unknown variant `hotel_exploded`, expected one of {}",
                SupplierEvent::KINDS
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
        assert_eq!(
            read(r#"{"booking_id":"BK1"}"#).unwrap_err(),
            "missing field `kind`"
        );
        assert_eq!(
            read(r#"{"kind":"status_changed","booking_id":"BK1","status":7}"#).unwrap_err(),
            "invalid type: integer `7`, expected a string"
        );
    }
}
