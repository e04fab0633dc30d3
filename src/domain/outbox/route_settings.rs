//! A pause belongs to the configuration it blamed. When a route is paused because it refused our
//! credentials or our configuration, the outbox records a fingerprint of that route's settings
//! (host, port, TLS mode, user, a hash of the secret, the sender). Once the operator changes any of
//! them (a new secret deployed, another sender), the pause lifts at the next alarm without a click;
//! the lift names the settings that changed. A quota pause keeps its own rule (the next UTC
//! midnight) and an operator's pause stays until the operator resumes it: neither is about
//! settings.
//!
//! Only hashes are stored (52 bits of SHA-256 over all settings, 8 bits per setting to name what
//! changed), never a setting's value. Both fit in 53 bits: the Durable Object's SQLite API hands
//! integers to JavaScript as doubles, which hold integers exactly only up to 2^53.

use super::PauseCause;
use sha2::{Digest, Sha256};

/// At most this many settings per route are told apart by name (8 bits each, 48 bits in all).
pub const MAX_NAMED_SETTINGS: usize = 6;

/// A route's settings as they are now: `(name, value)` pairs, in a fixed order per route (the
/// names are the configuration variables, e.g. `SMTP_HOST`; a secret's value is passed as is and
/// only ever hashed).
pub type RouteSettings = Vec<(&'static str, String)>;

/// The fingerprint of a route's settings, as stored with a pause (two integers of the outbox's
/// `state` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingsFingerprint {
    /// 52 bits of SHA-256 over every setting: any change moves it.
    pub whole: i64,
    /// One byte of SHA-256 per setting, in order (the first setting in the lowest byte): which
    /// settings changed, for the record (a change has a 1 in 256 chance of going unnamed; the
    /// lift itself is decided by `whole`).
    pub per_setting: i64,
}

/// Fingerprints `settings` (at most [`MAX_NAMED_SETTINGS`] are named; more still count in
/// [`SettingsFingerprint::whole`]).
pub fn fingerprint(settings: &[(&'static str, String)]) -> SettingsFingerprint {
    let mut whole = Sha256::new();
    let mut per_setting: u64 = 0;
    for (i, (name, value)) in settings.iter().enumerate() {
        // Length-prefixed, so no two different lists hash the same.
        for part in [name.as_bytes(), value.as_bytes()] {
            whole.update((part.len() as u64).to_be_bytes());
            whole.update(part);
        }
        if i < MAX_NAMED_SETTINGS {
            let byte = Sha256::new()
                .chain_update(name.as_bytes())
                .chain_update([0u8])
                .chain_update(value.as_bytes())
                .finalize()[0];
            per_setting |= u64::from(byte) << (8 * i);
        }
    }
    let digest = whole.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    SettingsFingerprint {
        whole: (u64::from_be_bytes(first) >> 12) as i64,
        per_setting: per_setting as i64,
    }
}

/// What a stored pause becomes at an alarm, given the route's settings now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PauseCheck {
    /// The pause stands (not a settings pause, no fingerprint on record, or nothing changed).
    Stands,
    /// The settings the pause blamed changed: lift it now. The names of the settings that
    /// changed, in their order (empty when the change could not be attributed).
    Lift { changed: Vec<&'static str> },
}

/// Decides whether a pause recorded with `cause` and the fingerprint `recorded` still stands now
/// that the route's settings are `now`. Only credentials and configuration pauses belong to
/// settings; a pause recorded without a fingerprint (before this rule, or by the operator) stands.
pub fn check_pause(
    cause: Option<PauseCause>,
    recorded: Option<SettingsFingerprint>,
    now: &[(&'static str, String)],
) -> PauseCheck {
    let (Some(PauseCause::Credentials | PauseCause::Configuration), Some(recorded)) =
        (cause, recorded)
    else {
        return PauseCheck::Stands;
    };
    let current = fingerprint(now);
    if current.whole == recorded.whole {
        return PauseCheck::Stands;
    }
    let changed = now
        .iter()
        .take(MAX_NAMED_SETTINGS)
        .enumerate()
        .filter(|(i, _)| {
            let byte = |f: i64| (f as u64 >> (8 * i)) & 0xff;
            byte(current.per_setting) != byte(recorded.per_setting)
        })
        .map(|(_, (name, _))| *name)
        .collect();
    PauseCheck::Lift { changed }
}

impl PauseCause {
    /// The integer stored in the outbox's `state` table (`…_pause_cause`); 0 is "no cause on
    /// record" (an operator's pause, or one recorded before causes were kept).
    pub fn stored(self) -> i64 {
        match self {
            PauseCause::DailyLimit => 1,
            PauseCause::Credentials => 2,
            PauseCause::Configuration => 3,
        }
    }

    /// The cause a stored integer stands for (`None` for 0 or an unknown value).
    pub fn from_stored(value: i64) -> Option<PauseCause> {
        match value {
            1 => Some(PauseCause::DailyLimit),
            2 => Some(PauseCause::Credentials),
            3 => Some(PauseCause::Configuration),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn smtp(host: &str, password: &str, sender: &str) -> RouteSettings {
        vec![
            ("SMTP_HOST", host.into()),
            ("SMTP_PORT", "587".into()),
            ("SMTP_TLS", "starttls".into()),
            ("SMTP_USERNAME", "engine".into()),
            ("SMTP_PASSWORD", password.into()),
            ("SENDER_EMAIL", sender.into()),
        ]
    }

    #[test]
    fn a_changed_setting_lifts_a_settings_pause_and_is_named() {
        let before = smtp("smtp.example.com", "old-secret", "bookings@example.com");
        let recorded = Some(fingerprint(&before));
        for cause in [PauseCause::Credentials, PauseCause::Configuration] {
            assert_eq!(
                check_pause(Some(cause), recorded, &before),
                PauseCheck::Stands
            );
            let after = smtp("smtp.example.com", "new-secret", "bookings@example.com");
            assert_eq!(
                check_pause(Some(cause), recorded, &after),
                PauseCheck::Lift {
                    changed: vec!["SMTP_PASSWORD"]
                }
            );
            let after = smtp("relay.example.net", "old-secret", "hello@example.com");
            assert_eq!(
                check_pause(Some(cause), recorded, &after),
                PauseCheck::Lift {
                    changed: vec!["SMTP_HOST", "SENDER_EMAIL"]
                }
            );
        }
    }

    #[test]
    fn quota_operator_and_unrecorded_pauses_stand_whatever_changes() {
        let before = smtp("smtp.example.com", "a", "bookings@example.com");
        let after = smtp("smtp.example.com", "b", "bookings@example.com");
        let recorded = Some(fingerprint(&before));
        assert_eq!(
            check_pause(Some(PauseCause::DailyLimit), recorded, &after),
            PauseCheck::Stands
        );
        assert_eq!(check_pause(None, recorded, &after), PauseCheck::Stands);
        assert_eq!(
            check_pause(Some(PauseCause::Configuration), None, &after),
            PauseCheck::Stands
        );
    }

    #[test]
    fn the_fingerprint_keeps_no_value_and_separates_fields() {
        let f = fingerprint(&[("A", "ab".into()), ("B", "c".into())]);
        let g = fingerprint(&[("A", "a".into()), ("B", "bc".into())]);
        assert_ne!(f.whole, g.whole);
        assert!(f.whole >= 0 && f.whole < 1 << 52);
        let many: RouteSettings = (0..9).map(|i| ("S", "x".repeat(i))).collect();
        assert!(fingerprint(&many).per_setting < 1 << 48);
        assert!(!format!("{f:?}").contains("ab"));
    }

    #[test]
    fn causes_keep_their_stored_numbers() {
        for cause in [
            PauseCause::DailyLimit,
            PauseCause::Credentials,
            PauseCause::Configuration,
        ] {
            assert_eq!(PauseCause::from_stored(cause.stored()), Some(cause));
        }
        assert_eq!(PauseCause::from_stored(0), None);
    }
}
