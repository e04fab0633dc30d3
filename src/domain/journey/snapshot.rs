//! Change detection: a snapshot of only what a traveller cares about, its hash, and a field-by-field
//! diff for the "booking updated" email.
//!
//! **In a hotel snapshot**: hotel id and name, check-in and check-out dates, each room (name, board,
//! adults, children), guest names, the holder's name, the hotel confirmation number.
//! **In a flight snapshot**: per segment (travel order) the flight number, origin and destination
//! IATA codes, local departure and arrival times; passenger names.
//! **Never**: status (CONFIRMED → TICKETED / CANCELLED), price, sandbox flag, supplier or event ids,
//! contact details, instructions. So a status or price move gives the same hash and no email.
//!
//! # Canonical form
//!
//! A snapshot is a list of `(field, value)` text pairs:
//! - text is trimmed and inner whitespace collapsed; IATA codes and flight numbers upper-cased;
//! - a value that is absent or blank is left out (so adding a new optional field to a later
//!   version does not change the hash of bookings that lack it);
//! - rooms and names are sorted (a supplier reordering a list is not a change); segments keep travel
//!   order (local times of different zones cannot be sorted);
//! - dates are `YYYY-MM-DD`, local times `YYYY-MM-DD HH:MM`.
//!
//! [`Snapshot::hash`] is the hex SHA-256 of the pairs **sorted by field name**, each written as
//! `<byte length>:<text>` (no separator can be forged by a value), after the header
//! `booking-snapshot/v<SNAPSHOT_VERSION>/<kind>\n`. It therefore depends only on the content, not on
//! the order fields were added, and is the same on every run and machine. Changing the canonical
//! form changes hashes: bump [`SNAPSHOT_VERSION`] then.
//!
//! # Field names (stable; the renderer may map them to labels)
//!
//! Hotel: `hotel_id`, `hotel_name`, `checkin`, `checkout`, `room.N.name`, `room.N.board`,
//! `room.N.adults`, `room.N.children` (N from 1, rooms sorted), `guests` (sorted, `, `-joined),
//! `holder`, `hotel_confirmation_number`.
//! Flight: `segment.N.flight_number`, `segment.N.origin`, `segment.N.destination`,
//! `segment.N.departure`, `segment.N.arrival` (N from 1, travel order), `passengers`.

use crate::domain::event::{FlightBooking, HotelBooking, PersonName};
use crate::domain::journey::booking::BookingKind;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Version of the canonical form; part of every hash.
pub const SNAPSHOT_VERSION: u32 = 1;

/// What a snapshot describes: the kind of the booking (`hotel`, `flight`; its stored name is in
/// the canonical header).
pub type SnapshotKind = BookingKind;

/// The traveller-visible facts of a booking (see the module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    kind: SnapshotKind,
    /// `(field, value)` in a readable order; unique fields, no blank values.
    fields: Vec<(String, String)>,
}

/// One field that differs between two snapshots. A field missing on one side reads as `""`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldChange {
    /// Field name, e.g. `checkin` or `segment.1.departure`.
    pub field: String,
    pub before: String,
    pub after: String,
}

impl Snapshot {
    /// A snapshot from `(field, value)` pairs: values are normalized (trimmed, whitespace
    /// collapsed), blank ones dropped, and a repeated field keeps its last value (in the position of
    /// its first appearance).
    pub fn new<K, V>(kind: SnapshotKind, fields: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: AsRef<str>,
    {
        let mut out: Vec<(String, String)> = Vec::new();
        for (k, v) in fields {
            let (k, v) = (k.into(), norm(v.as_ref()));
            match out.iter().position(|(f, _)| *f == k) {
                Some(i) if v.is_empty() => {
                    out.remove(i);
                }
                Some(i) => out[i].1 = v,
                None if v.is_empty() => {}
                None => out.push((k, v)),
            }
        }
        Snapshot { kind, fields: out }
    }

    pub fn kind(&self) -> SnapshotKind {
        self.kind
    }

    /// The `(field, value)` pairs, in readable order.
    pub fn fields(&self) -> &[(String, String)] {
        &self.fields
    }

    /// The value of `field`, if present.
    pub fn get(&self, field: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, v)| v.as_str())
    }

    fn sorted(&self) -> Vec<(&str, &str)> {
        let mut pairs: Vec<(&str, &str)> = self
            .fields
            .iter()
            .map(|(f, v)| (f.as_str(), v.as_str()))
            .collect();
        crate::domain::basics::sort::sort(&mut pairs);
        pairs
    }

    /// The canonical bytes that [`Snapshot::hash`] digests.
    pub fn canonical(&self) -> Vec<u8> {
        let mut out = format!(
            "booking-snapshot/v{SNAPSHOT_VERSION}/{}\n",
            self.kind.as_str()
        )
        .into_bytes();
        for (f, v) in self.sorted() {
            out.extend_from_slice(format!("{}:{f}{}:{v}\n", f.len(), v.len()).as_bytes());
        }
        out
    }

    /// Hex SHA-256 (64 lower-case characters) of the canonical form.
    pub fn hash(&self) -> String {
        hex::encode(Sha256::digest(self.canonical()))
    }

    /// The fields that differ from `self` (before) to `after`: first in `self`'s order, then the
    /// fields only `after` has, in its order. Empty when the snapshots are equal.
    pub fn diff(&self, after: &Snapshot) -> Vec<FieldChange> {
        let mut changes = Vec::new();
        for (f, before) in &self.fields {
            let now = after.get(f).unwrap_or("");
            if now != before {
                changes.push(FieldChange {
                    field: f.clone(),
                    before: before.clone(),
                    after: now.to_string(),
                });
            }
        }
        for (f, now) in &after.fields {
            if self.get(f).is_none() {
                changes.push(FieldChange {
                    field: f.clone(),
                    before: String::new(),
                    after: now.clone(),
                });
            }
        }
        changes
    }
}

impl PartialEq for Snapshot {
    /// Equal content, whatever the field order.
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.sorted() == other.sorted()
    }
}

impl Eq for Snapshot {}

/// Trimmed, inner whitespace collapsed to one space.
fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Sorted, non-blank full names joined with `, `.
fn names(people: &[PersonName]) -> String {
    let mut names: Vec<String> = people
        .iter()
        .map(|p| norm(&p.full()))
        .filter(|n| !n.is_empty())
        .collect();
    crate::domain::basics::sort::sort(&mut names);
    names.join(", ")
}

/// The traveller snapshot of a hotel booking (see the module docs).
pub fn hotel_snapshot(b: &HotelBooking) -> Snapshot {
    let mut fields: Vec<(String, String)> = vec![
        ("hotel_id".into(), b.hotel_id.clone().unwrap_or_default()),
        ("hotel_name".into(), b.hotel_name.clone()),
        ("checkin".into(), b.checkin.format("%Y-%m-%d").to_string()),
        ("checkout".into(), b.checkout.format("%Y-%m-%d").to_string()),
    ];
    let mut rooms: Vec<(String, String, u32, u32)> = b
        .rooms
        .iter()
        .map(|r| {
            (
                norm(&r.room_name),
                norm(r.board_name.as_deref().unwrap_or("")),
                r.adults,
                r.children,
            )
        })
        .collect();
    crate::domain::basics::sort::sort(&mut rooms);
    for (i, (name, board, adults, children)) in rooms.into_iter().enumerate() {
        let n = i + 1;
        fields.push((format!("room.{n}.name"), name));
        fields.push((format!("room.{n}.board"), board));
        fields.push((format!("room.{n}.adults"), adults.to_string()));
        fields.push((format!("room.{n}.children"), children.to_string()));
    }
    fields.push(("guests".into(), names(&b.guests)));
    fields.push(("holder".into(), b.holder.name.full()));
    fields.push((
        "hotel_confirmation_number".into(),
        b.hotel_confirmation_number.clone().unwrap_or_default(),
    ));
    Snapshot::new(SnapshotKind::Hotel, fields)
}

/// The traveller snapshot of a flight order (see the module docs).
pub fn flight_snapshot(f: &FlightBooking) -> Snapshot {
    let mut fields: Vec<(String, String)> = Vec::new();
    for (i, s) in f.segments.iter().enumerate() {
        let n = i + 1;
        fields.push((
            format!("segment.{n}.flight_number"),
            s.flight_number.to_uppercase(),
        ));
        fields.push((
            format!("segment.{n}.origin"),
            s.origin.iata_code.to_uppercase(),
        ));
        fields.push((
            format!("segment.{n}.destination"),
            s.destination.iata_code.to_uppercase(),
        ));
        fields.push((
            format!("segment.{n}.departure"),
            s.departing_at.format("%Y-%m-%d %H:%M").to_string(),
        ));
        fields.push((
            format!("segment.{n}.arrival"),
            s.arriving_at.format("%Y-%m-%d %H:%M").to_string(),
        ));
    }
    fields.push(("passengers".into(), names(&f.passengers)));
    Snapshot::new(SnapshotKind::Flight, fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_is_pinned() {
        let s = Snapshot::new(SnapshotKind::Hotel, [("b", "2"), ("a", " x  y ")]);
        assert_eq!(
            String::from_utf8(s.canonical()).unwrap(),
            "booking-snapshot/v1/hotel\n1:a3:x y\n1:b1:2\n"
        );
        // Pinned so an accidental change of the canonical form fails here.
        assert_eq!(
            s.hash(),
            hex::encode(Sha256::digest(
                b"booking-snapshot/v1/hotel\n1:a3:x y\n1:b1:2\n"
            ))
        );
        assert_eq!(s.hash().len(), 64);
    }

    #[test]
    fn new_drops_blanks_and_keeps_last_duplicate() {
        let s = Snapshot::new(
            SnapshotKind::Flight,
            [("a", "1"), ("b", "  "), ("a", "2"), ("c", "3"), ("c", "")],
        );
        assert_eq!(s.fields(), &[("a".to_string(), "2".to_string())]);
    }

    #[test]
    fn kinds_never_collide() {
        let h = Snapshot::new(SnapshotKind::Hotel, [("a", "1")]);
        let f = Snapshot::new(SnapshotKind::Flight, [("a", "1")]);
        assert_ne!(h.hash(), f.hash());
        assert_ne!(h, f);
    }
}
