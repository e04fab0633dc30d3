//! Deterministic identifiers: Workflow instance ids, dedupe keys, Message-IDs.
//!
//! All are pure functions of their inputs, so a retried step or a duplicate delivery always
//! derives the same id and the platform's uniqueness does the deduplication.

use crate::domain::event::{EventId, Source};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// Longest Workflow instance id the platform accepts (REST `instance_id` maxLength and the
/// workers-sdk validator `MAX_WORKFLOW_INSTANCE_ID_LENGTH`).
pub const MAX_INSTANCE_ID_LEN: usize = 100;

/// A Workflow instance id: matches `^[a-zA-Z0-9_][a-zA-Z0-9-_]*$`, at most
/// [`MAX_INSTANCE_ID_LEN`] characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InstanceId(String);

impl InstanceId {
    /// Derives the id of the journey started by one supplier event.
    ///
    /// Shape: `e-<source>-x-<event id>` when the event id only uses `[A-Za-z0-9_-]` and the whole fits;
    /// otherwise `e-<source>-h-<hex SHA-256 of the event id>` (76 characters at most). The `x`/`h`
    /// marker keeps the two forms from ever colliding.
    pub fn for_event(source: Source, event_id: &EventId) -> Self {
        let raw = event_id.as_str();
        let direct = format!("e-{}-x-{raw}", source.as_str());
        let allowed = raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if allowed && direct.len() <= MAX_INSTANCE_ID_LEN {
            return Self(direct);
        }
        let digest = hex::encode(Sha256::digest(raw.as_bytes()));
        Self(format!("e-{}-h-{digest}", source.as_str()))
    }

    /// `true` when `s` is a valid instance id for the platform.
    pub fn is_valid(s: &str) -> bool {
        let mut chars = s.chars();
        let first_ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        first_ok
            && s.len() <= MAX_INSTANCE_ID_LEN
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    }

    /// A stored instance id (D1 `scheduled_sends.instance_id`, `raw_events.instance_id`) read back;
    /// `None` when it is not a valid id.
    pub fn parse(s: &str) -> Option<Self> {
        Self::is_valid(s).then(|| Self(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InstanceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Derives an RFC 5322 Message-ID from a dedupe key: `<hex(sha256(key))[..32]@domain>`.
///
/// The same email (same dedupe key) always carries the same Message-ID, whichever provider sends
/// it and however often, so a receiving mail system can collapse an accidental second copy.
pub fn message_id_for(dedupe_key: &str, domain: &str) -> String {
    let digest = hex::encode(Sha256::digest(dedupe_key.as_bytes()));
    format!("<{}@{}>", &digest[..32], domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> EventId {
        EventId::parse(s).unwrap()
    }

    #[test]
    fn simple_event_ids_are_kept_readable() {
        let got = InstanceId::for_event(Source::Liteapi, &id("evt_fake_liteapi_0002"));
        assert_eq!(got.as_str(), "e-liteapi-x-evt_fake_liteapi_0002");
        assert!(InstanceId::is_valid(got.as_str()));
    }

    #[test]
    fn ids_with_other_characters_are_hashed_and_valid() {
        for raw in [
            "evt.with.dots",
            "a b",
            "ünïcode",
            "slash/and:colon",
            "{\"json\":1}",
        ] {
            let got = InstanceId::for_event(Source::Duffel, &id(raw));
            assert!(got.as_str().starts_with("e-duffel-h-"), "{got}");
            assert!(InstanceId::is_valid(got.as_str()), "{got}");
            assert_eq!(got.as_str().len(), "e-duffel-h-".len() + 64);
        }
    }

    #[test]
    fn long_ids_are_hashed_to_fit() {
        let raw = "a".repeat(95);
        let got = InstanceId::for_event(Source::Generic, &id(&raw));
        assert!(got.as_str().len() <= MAX_INSTANCE_ID_LEN);
        assert!(InstanceId::is_valid(got.as_str()));
        let edge = "b".repeat(MAX_INSTANCE_ID_LEN - "e-liteapi-x-".len());
        let kept = InstanceId::for_event(Source::Liteapi, &id(&edge));
        assert_eq!(kept.as_str().len(), MAX_INSTANCE_ID_LEN);
        assert!(kept.as_str().contains("-x-"));
    }

    #[test]
    fn derivation_is_deterministic_and_source_scoped() {
        let a = InstanceId::for_event(Source::Liteapi, &id("evt 1"));
        let b = InstanceId::for_event(Source::Liteapi, &id("evt 1"));
        let c = InstanceId::for_event(Source::Duffel, &id("evt 1"));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn raw_and_hashed_forms_never_collide() {
        let digest = hex::encode(Sha256::digest(b"x y"));
        let looks_hashed = format!("h-{digest}");
        let direct = InstanceId::for_event(Source::Liteapi, &id(&looks_hashed));
        let hashed = InstanceId::for_event(Source::Liteapi, &id("x y"));
        assert_ne!(direct, hashed);
    }

    #[test]
    fn validity_check_matches_platform_pattern() {
        assert!(InstanceId::is_valid("_a-b"));
        assert!(!InstanceId::is_valid("-a"));
        assert!(!InstanceId::is_valid(""));
        assert!(!InstanceId::is_valid("a.b"));
        assert!(!InstanceId::is_valid(&"a".repeat(101)));
    }

    #[test]
    fn message_id_is_stable_per_dedupe_key() {
        let a = message_id_for("booking_confirmation:BK1", "mail.example.com");
        assert_eq!(
            a,
            message_id_for("booking_confirmation:BK1", "mail.example.com")
        );
        assert_ne!(
            a,
            message_id_for("booking_confirmation:BK2", "mail.example.com")
        );
        assert!(a.starts_with('<') && a.ends_with("@mail.example.com>"));
    }
}
