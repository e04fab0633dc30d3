//! Host tests of `domain::payment::action_token`: signed, expiring one-click owner action links. Every
//! alteration is a bad signature, expiry is inclusive, garbage is malformed, tokens are URL-safe.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use base64::Engine as _;
use booking_email_engine::domain::payment::action_token::{
    sign, verify, ActionClaims, OwnerAction, TokenError, DEFAULT_TTL_S,
};
use sha2::{Digest, Sha256};

const KEY: &[u8] = b"test-action-signing-key-32-bytes-long!!";
const NOW: i64 = 1_767_225_600;
const HOLD: &str = "hold-0123456789abcdef0123";

fn expires() -> i64 {
    NOW + DEFAULT_TTL_S
}

/// Replaces the payload of `token` with `payload`, keeping its signature.
fn with_payload(token: &str, payload: &str) -> String {
    let (_, tag) = token.split_once('.').unwrap();
    format!("{}.{tag}", B64URL.encode(payload))
}

fn payload_of(token: &str) -> String {
    let (p, _) = token.split_once('.').unwrap();
    String::from_utf8(B64URL.decode(p).unwrap()).unwrap()
}

#[test]
fn round_trip_for_every_action() {
    for action in OwnerAction::ALL {
        let token = sign(HOLD, action, expires(), KEY);
        assert_eq!(
            verify(&token, KEY, NOW),
            Ok(ActionClaims {
                hold_id: HOLD.into(),
                action,
                expires_at_s: expires(),
                token_id: hex::encode(Sha256::digest(token.as_bytes())),
            })
        );
    }
}

#[test]
fn action_names_are_stable() {
    let names: Vec<&str> = OwnerAction::ALL.iter().map(|a| a.as_str()).collect();
    assert_eq!(
        names,
        ["send_insufficient_funds", "send_security_check", "dismiss"]
    );
    for a in OwnerAction::ALL {
        assert_eq!(OwnerAction::parse(a.as_str()), Some(a));
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            format!("\"{}\"", a.as_str())
        );
    }
    assert_eq!(OwnerAction::parse("delete_everything"), None);
}

#[test]
fn tokens_differ_per_hold_and_action_and_have_distinct_ids() {
    let a = sign(HOLD, OwnerAction::SendInsufficientFunds, expires(), KEY);
    let b = sign(HOLD, OwnerAction::SendSecurityCheck, expires(), KEY);
    let c = sign(
        "hold-other",
        OwnerAction::SendInsufficientFunds,
        expires(),
        KEY,
    );
    assert!(a != b && a != c && b != c);
    let ids: Vec<String> = [&a, &b, &c]
        .iter()
        .map(|t| verify(t, KEY, NOW).unwrap().token_id)
        .collect();
    assert!(ids[0] != ids[1] && ids[0] != ids[2] && ids[1] != ids[2]);
    // The id is stable: verifying again gives the same id (single-use bookkeeping).
    assert_eq!(verify(&a, KEY, NOW + 5).unwrap().token_id, ids[0]);
    assert_eq!(ids[0].len(), 64);
}

#[test]
fn tampered_hold_action_or_expiry_is_a_bad_signature() {
    let token = sign(HOLD, OwnerAction::Dismiss, expires(), KEY);
    let payload = payload_of(&token);
    assert_eq!(payload, format!("v1.{HOLD}.dismiss.{}", expires()));
    for forged in [
        payload.replace(HOLD, "hold-someone-else"),
        payload.replace("dismiss", "send_security_check"),
        payload.replace("dismiss", "delete_everything"),
        payload.replace(&expires().to_string(), &(expires() + 86_400).to_string()),
        payload.replace("v1.", "v2."),
    ] {
        assert_eq!(
            verify(&with_payload(&token, &forged), KEY, NOW),
            Err(TokenError::BadSignature),
            "{forged}"
        );
    }
    // A changed signature byte.
    let (p, tag) = token.split_once('.').unwrap();
    let mut raw = B64URL.decode(tag).unwrap();
    raw[0] ^= 1;
    assert_eq!(
        verify(&format!("{p}.{}", B64URL.encode(raw)), KEY, NOW),
        Err(TokenError::BadSignature)
    );
    // A truncated signature.
    assert_eq!(
        verify(&format!("{p}.{}", &tag[..20]), KEY, NOW),
        Err(TokenError::BadSignature)
    );
}

#[test]
fn another_key_is_a_bad_signature() {
    let token = sign(HOLD, OwnerAction::SendSecurityCheck, expires(), KEY);
    assert_eq!(
        verify(&token, b"another-engine-key-000000000000000", NOW),
        Err(TokenError::BadSignature)
    );
    // An empty key verifies nothing, not even a token signed with an empty key.
    let unkeyed = sign(HOLD, OwnerAction::SendSecurityCheck, expires(), b"");
    assert_eq!(verify(&unkeyed, b"", NOW), Err(TokenError::BadSignature));
}

#[test]
fn expiry_is_inclusive() {
    let token = sign(HOLD, OwnerAction::SendInsufficientFunds, expires(), KEY);
    assert!(verify(&token, KEY, expires()).is_ok());
    assert_eq!(
        verify(&token, KEY, expires() + 1),
        Err(TokenError::Expired {
            expired_at_s: expires()
        })
    );
}

#[test]
fn garbage_is_malformed() {
    for garbage in [
        "",
        "   ",
        "nodot",
        ".",
        "abc.",
        ".abc",
        "a.b.c",
        "!!!.???",
        "dGVzdA.%%%",
        "dGVzdA==.dGVzdA",
    ] {
        assert_eq!(
            verify(garbage, KEY, NOW),
            Err(TokenError::Malformed),
            "{garbage:?}"
        );
    }
}

#[test]
fn hold_ids_with_dots_survive_the_round_trip() {
    let token = sign("hold.with.dots", OwnerAction::Dismiss, expires(), KEY);
    assert_eq!(verify(&token, KEY, NOW).unwrap().hold_id, "hold.with.dots");
}

#[test]
fn surrounding_whitespace_is_ignored() {
    let token = sign(HOLD, OwnerAction::Dismiss, expires(), KEY);
    let claims = verify(&format!(" {token}\n"), KEY, NOW).unwrap();
    assert_eq!(claims, verify(&token, KEY, NOW).unwrap());
}

#[test]
fn tokens_are_url_safe() {
    for action in OwnerAction::ALL {
        for hold in [HOLD, "hold/with?odd&chars=+", "höld ünïcode"] {
            let token = sign(hold, action, expires(), KEY);
            assert!(
                token
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')),
                "{token}"
            );
            assert_eq!(verify(&token, KEY, NOW).unwrap().hold_id, hold);
        }
    }
}
