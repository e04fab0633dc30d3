//! A stored booking's closed sets (D1 `bookings.kind`, `bookings.status`): what journeys read back
//! and decide on before any scheduled email goes out.

use crate::domain::basics::stored_names;
use serde::{Deserialize, Serialize};

/// What a stored booking is (D1 `bookings.kind`: `hotel`, `flight`); also the kind of its traveller
/// snapshot (`domain::journey::snapshot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum BookingKind {
    Hotel,
    Flight,
}

stored_names!(BookingKind);

/// The status of a stored booking (D1 `bookings.status`): the supplier's status text as the
/// engine stores it, plus the engine's own `CANCELLED` / `CANCELLED_WITH_CHARGES` (a cancellation
/// event) and `REPLACED` (a rebook). Supplier statuses are open-ended (liteAPI `CONFIRMED`,
/// `CANCELLED_WITH_CHARGES`, …; Duffel orders carry none, the adapter says `CONFIRMED` or
/// `AWAITING_PAYMENT`), so any other text is kept as it came in [`BookingStatus::Other`]: stored
/// text reads back byte for byte (`as_str`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, strum::EnumString, strum::AsRefStr, strum::Display)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum BookingStatus {
    Confirmed,
    Cancelled,
    CancelledWithCharges,
    Replaced,
    /// The supplier failed the booking after payment: compensated (`crate::domain::payment::compensation`);
    /// no email of it goes out any more.
    Failed,
    /// A status the engine does not decide on (e.g. `TICKETED`, `AWAITING_PAYMENT`), as given.
    #[strum(default, transparent)]
    Other(String),
}

impl BookingStatus {
    /// The stored text, e.g. `CANCELLED_WITH_CHARGES`.
    pub fn as_str(&self) -> &str {
        self.as_ref()
    }

    /// `true` for a cancelled booking: the engine's two cancellation statuses, `FAILED` (a
    /// compensated booking), and any other
    /// supplier status starting with `CANCELLED` (no email of such a booking goes out any more).
    pub fn is_cancelled(&self) -> bool {
        match self {
            BookingStatus::Cancelled
            | BookingStatus::CancelledWithCharges
            | BookingStatus::Failed => true,
            BookingStatus::Other(text) => text.starts_with("CANCELLED"),
            BookingStatus::Confirmed | BookingStatus::Replaced => false,
        }
    }

    /// The status of any text: a known name becomes its variant, anything else
    /// [`BookingStatus::Other`] (never fails).
    pub fn of(text: &str) -> Self {
        text.parse()
            .unwrap_or_else(|_| BookingStatus::Other(text.to_string()))
    }

    /// The status a cancellation leaves: `CANCELLED_WITH_CHARGES` when it carried charges.
    pub fn cancelled(with_charges: bool) -> Self {
        if with_charges {
            BookingStatus::CancelledWithCharges
        } else {
            BookingStatus::Cancelled
        }
    }
}

impl From<String> for BookingStatus {
    /// Any text: a known name becomes its variant, anything else [`BookingStatus::Other`].
    fn from(text: String) -> Self {
        BookingStatus::of(&text)
    }
}

impl From<BookingStatus> for String {
    fn from(status: BookingStatus) -> String {
        status.as_str().to_string()
    }
}

impl Serialize for BookingStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for BookingStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(BookingStatus::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booking_kinds_keep_their_released_names() {
        assert_eq!(
            [BookingKind::Hotel, BookingKind::Flight].map(BookingKind::as_str),
            ["hotel", "flight"]
        );
        for k in [BookingKind::Hotel, BookingKind::Flight] {
            assert_eq!(BookingKind::parse(k.as_str()), Some(k));
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{k}\""));
        }
    }

    #[test]
    fn booking_statuses_read_back_byte_for_byte() {
        for (text, status) in [
            ("CONFIRMED", BookingStatus::Confirmed),
            ("CANCELLED", BookingStatus::Cancelled),
            (
                "CANCELLED_WITH_CHARGES",
                BookingStatus::CancelledWithCharges,
            ),
            ("REPLACED", BookingStatus::Replaced),
            ("TICKETED", BookingStatus::Other("TICKETED".into())),
            ("confirmed", BookingStatus::Other("confirmed".into())),
        ] {
            assert_eq!(BookingStatus::of(text), status);
            assert_eq!(status.as_str(), text);
            assert_eq!(status.to_string(), text);
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(
                serde_json::from_str::<BookingStatus>(&json).unwrap(),
                status
            );
        }
        assert_eq!(
            BookingStatus::cancelled(true).as_str(),
            "CANCELLED_WITH_CHARGES"
        );
        assert_eq!(BookingStatus::cancelled(false).as_str(), "CANCELLED");
    }

    #[test]
    fn cancelled_is_every_status_starting_with_cancelled() {
        for text in ["CANCELLED", "CANCELLED_WITH_CHARGES", "CANCELLED_BY_HOTEL"] {
            assert!(BookingStatus::of(text).is_cancelled(), "{text}");
        }
        for text in ["CONFIRMED", "REPLACED", "TICKETED", "cancelled", ""] {
            assert!(!BookingStatus::of(text).is_cancelled(), "{text}");
        }
    }
}
