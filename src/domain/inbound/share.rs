//! Whose share of a booking's conversation a message counts in. A reply address travels with
//! every copy of its email (a forwarded confirmation, a travel agent's copy, a shared inbox) and
//! works for a year, so anyone holding one can write to the booking. The bound on messages kept
//! per booking is therefore split: the guest's own messages have their share
//! (`INBOUND_MAX_PER_BOOKING`), everyone else's theirs (`INBOUND_MAX_PER_BOOKING_OTHERS`, smaller),
//! and the owner's alerts per day likewise, so no other sender can use up the room and the
//! attention the guest's own replies need.
//!
//! "The guest's own" is decided from the message and the address the answered email went to,
//! never from the `From` header alone: a `From` forged as the guest's address (a domain whose
//! DMARC policy is `p=none` passes Email Routing) is someone else's when the receiving system's
//! checks ([`super::trusted_verdicts`]) say so.

use super::{AuthVerdict, Inbound};
use serde::{Deserialize, Serialize};

/// The share a message counts in. Stored names (`inbound_messages.sender_share`): `guest`,
/// `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SenderShare {
    /// From the address the answered email was sent to, not contradicted by the checks.
    #[default]
    Guest,
    /// Anyone else, robots included (a delivery report comes from the receiving server).
    Other,
}

impl SenderShare {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SenderShare::Guest => "guest",
            SenderShare::Other => "other",
        }
    }
}

/// The share of `message`, answering an email sent to `guest_email` (`None`: unknown, so
/// nobody's message is the guest's own). The guest's own: `From` is that address (any case) and
/// the receiving system's checks do not say it was forged — no `dmarc=fail`, and not an SPF
/// failure without a passing DKIM signature. With no checks reported (local delivery) the
/// address decides.
pub fn share_of(message: &Inbound, guest_email: Option<&str>) -> SenderShare {
    let same_address = guest_email
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .is_some_and(|g| g.eq_ignore_ascii_case(message.from.trim()));
    if same_address && !forged(&message.auth) {
        SenderShare::Guest
    } else {
        SenderShare::Other
    }
}

/// Whether the checks say the `From` domain did not send the message (RFC 7489 `dmarc=fail`, or
/// SPF failing while no DKIM signature passes).
fn forged(auth: &[AuthVerdict]) -> bool {
    let has = |method: &str, results: &[&str]| {
        auth.iter()
            .any(|v| v.method == method && results.contains(&v.result.as_str()))
    };
    has("dmarc", &["fail"]) || has("spf", &["fail", "softfail"]) && !has("dkim", &["pass"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(from: &str, auth: &[(&str, &str)]) -> Inbound {
        let raw = format!("From: <{from}>\r\nSubject: x\r\n\r\nhello\r\n");
        let mut m = super::super::read(raw.as_bytes(), from, raw.len() as u64);
        m.auth = auth
            .iter()
            .map(|(method, result)| AuthVerdict {
                method: method.to_string(),
                result: result.to_string(),
            })
            .collect();
        m
    }

    /// (From, verdicts, the answered email's address, the share).
    type Case<'a> = (
        &'a str,
        &'a [(&'a str, &'a str)],
        Option<&'a str>,
        SenderShare,
    );

    #[test]
    fn the_guest_s_own_is_their_address_unless_the_checks_say_forged() {
        let guest = Some("Ana.Garcia@gmail.com");
        let cases: &[Case] = &[
            ("ana.garcia@gmail.com", &[], guest, SenderShare::Guest),
            (
                "ana.garcia@gmail.com",
                &[("dkim", "pass"), ("spf", "pass"), ("dmarc", "pass")],
                guest,
                SenderShare::Guest,
            ),
            // Forwarded: SPF fails at the forwarder, the signature still passes.
            (
                "ana.garcia@gmail.com",
                &[("spf", "softfail"), ("dkim", "pass")],
                guest,
                SenderShare::Guest,
            ),
            (
                "ana.garcia@gmail.com",
                &[("dkim", "none"), ("dmarc", "fail")],
                guest,
                SenderShare::Other,
            ),
            (
                "ana.garcia@gmail.com",
                &[("spf", "fail")],
                guest,
                SenderShare::Other,
            ),
            ("someone@evil.example", &[], guest, SenderShare::Other),
            ("ana.garcia@gmail.com", &[], None, SenderShare::Other),
            ("ana.garcia@gmail.com", &[], Some(" "), SenderShare::Other),
        ];
        for (from, auth, guest, want) in cases {
            assert_eq!(
                share_of(&message(from, auth), *guest),
                *want,
                "{from} {auth:?} {guest:?}"
            );
        }
    }
}
