//! The failed-login limit: per client IP and per account, in fixed windows, counted in D1.
//!
//! Every sign-in attempt first takes a slot in both counters with one atomic D1 statement (an
//! upsert with `RETURNING`, see `crate::store::admin::take_login_slots`); only an attempt whose
//! slots are both within the limit is checked against the password. D1 runs statements one at a
//! time, so 50 concurrent wrong attempts get exactly `max` checks and the rest a 429: nothing is
//! read first and written later (the race that let a KV limiter allow five fast attempts that each
//! read "0"). A correct password then clears its account's counter and gives back the slot it took
//! in its IP's counter: success forgives nobody else.

/// Limits of the sign-in attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimits {
    /// Attempts per account per window (`ADMIN_LOGIN_MAX_PER_ACCOUNT`, 5).
    pub max_per_account: i64,
    /// Attempts per client IP per window (`ADMIN_LOGIN_MAX_PER_IP`, 20).
    pub max_per_ip: i64,
    /// Window length, seconds (`ADMIN_LOGIN_WINDOW_S`, 900 = 15 min).
    pub window_s: i64,
}

impl Default for LoginLimits {
    fn default() -> Self {
        Self {
            max_per_account: 5,
            max_per_ip: 20,
            window_s: 900,
        }
    }
}

/// Which counter a slot belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Ip,
    Account,
}

/// The D1 key of a counter: `ip:<address>` (an IPv6 address by its /64 prefix) or
/// `account:<name>`. The IP is the platform's `CF-Connecting-IP` (bounded to 64 characters, one
/// line); the name is already normalised.
pub fn limit_key(scope: Scope, value: &str) -> String {
    // One IPv6 client usually holds a whole /64: count the prefix, not the address.
    if let (Scope::Ip, Ok(v6)) = (scope, value.trim().parse::<std::net::Ipv6Addr>()) {
        if v6.to_ipv4_mapped().is_none() {
            let s = v6.segments();
            return format!("ip:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3]);
        }
    }
    let bounded: String = value.chars().filter(|c| !c.is_control()).take(64).collect();
    match scope {
        Scope::Ip => format!("ip:{bounded}"),
        Scope::Account => format!("account:{bounded}"),
    }
}

/// A counter after this attempt took its slot: attempts in the window so far (this one included)
/// and when the window started, ms UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub scope: Scope,
    pub attempts: i64,
    pub window_start_ms: i64,
}

/// What to do with an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Check the password.
    Check,
    /// 429: too many attempts; `retry_after_s` until the later of the full windows ends (≥ 1).
    Limited { scope: Scope, retry_after_s: i64 },
}

impl LoginLimits {
    /// The verdict on an attempt from the slots it took (one per scope), at `now_ms` (UTC).
    pub fn verdict(&self, slots: &[Slot], now_ms: i64) -> Verdict {
        let mut limited: Option<(Scope, i64)> = None;
        for slot in slots {
            let max = match slot.scope {
                Scope::Ip => self.max_per_ip,
                Scope::Account => self.max_per_account,
            };
            if slot.attempts > max {
                let ends_ms = slot.window_start_ms + self.window_s * 1_000;
                let wait_s = ((ends_ms - now_ms).max(0) + 999) / 1_000;
                let wait_s = wait_s.max(1);
                if limited.is_none_or(|(_, w)| wait_s > w) {
                    limited = Some((slot.scope, wait_s));
                }
            }
        }
        match limited {
            Some((scope, retry_after_s)) => Verdict::Limited {
                scope,
                retry_after_s,
            },
            None => Verdict::Check,
        }
    }

    /// The time before which a window has ended: a counter whose window started at or before
    /// this is started afresh by the next attempt, ms UTC.
    pub fn stale_before_ms(&self, now_ms: i64) -> i64 {
        now_ms - self.window_s * 1_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(scope: Scope, attempts: i64, start: i64) -> Slot {
        Slot {
            scope,
            attempts,
            window_start_ms: start,
        }
    }

    #[test]
    fn within_both_limits_checks_the_password() {
        let l = LoginLimits::default();
        let v = l.verdict(&[slot(Scope::Ip, 20, 0), slot(Scope::Account, 5, 0)], 1_000);
        assert_eq!(v, Verdict::Check);
    }

    #[test]
    fn past_a_limit_waits_for_the_later_window_end() {
        let l = LoginLimits::default();
        let v = l.verdict(&[slot(Scope::Ip, 3, 0), slot(Scope::Account, 6, 0)], 60_000);
        assert_eq!(
            v,
            Verdict::Limited {
                scope: Scope::Account,
                retry_after_s: 840
            }
        );
        let v = l.verdict(
            &[slot(Scope::Ip, 21, 100_000), slot(Scope::Account, 6, 0)],
            60_000,
        );
        assert_eq!(
            v,
            Verdict::Limited {
                scope: Scope::Ip,
                retry_after_s: 940
            }
        );
        // At the very end of a window the wait is still at least one second.
        let v = l.verdict(&[slot(Scope::Account, 6, 0)], 900_000);
        assert_eq!(
            v,
            Verdict::Limited {
                scope: Scope::Account,
                retry_after_s: 1
            }
        );
    }

    #[test]
    fn keys_are_bounded_one_line() {
        assert_eq!(limit_key(Scope::Ip, "203.0.113.9"), "ip:203.0.113.9");
        let k = limit_key(Scope::Account, &format!("a\r\nb{}", "x".repeat(100)));
        assert!(!k.contains('\n') && k.chars().count() == "account:".len() + 64);
        assert_eq!(LoginLimits::default().stale_before_ms(1_000_000), 100_000);
        // Every address of one IPv6 /64 shares a counter.
        assert_eq!(
            limit_key(Scope::Ip, "2001:db8:1:2::1"),
            "ip:2001:db8:1:2::/64"
        );
        assert_eq!(
            limit_key(Scope::Ip, "2001:db8:1:2:ffff:1:2:3"),
            limit_key(Scope::Ip, "2001:db8:1:2::1")
        );
    }
}
