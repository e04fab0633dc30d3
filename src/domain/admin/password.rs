//! Admin accounts and their password hashes.
//!
//! `ADMIN_ACCOUNTS` holds one or more accounts, separated by commas or whitespace, each
//! `<name>:pbkdf2-sha256:<iterations>:<salt>:<hash>` with salt and hash in unpadded base64url
//! (RFC 4648 §5) and the hash 32 bytes: PBKDF2 (RFC 8018 §5.2) with HMAC-SHA-256. Colons, not the
//! PHC string's `$`, so the value survives `.dev.vars` and shells unquoted. `npm run
//! admin-password` prints one (Node's `crypto.pbkdf2Sync`, the same function).
//!
//! Iterations: 100,000 by default and at most, the most Cloudflare's WebCrypto PBKDF2 accepts
//! (the Worker hashes with WebCrypto, native code; see `crate::platform::pbkdf2_sha256`); at least
//! 1,000.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// The one algorithm name accepted.
pub const ALGORITHM: &str = "pbkdf2-sha256";
/// Iterations `npm run admin-password` uses.
pub const DEFAULT_ITERATIONS: u32 = 100_000;
/// Accepted iteration range.
pub const MIN_ITERATIONS: u32 = 1_000;
pub const MAX_ITERATIONS: u32 = 100_000;
/// Longest account name, characters (`[a-z0-9._@-]`).
pub const MAX_NAME_CHARS: usize = 64;
/// Longest password checked, bytes (longer ones are refused before hashing).
pub const MAX_PASSWORD_BYTES: usize = 1_024;

/// One admin account: its name (lower case) and password hash.
#[derive(Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub hash: PasswordHash,
    /// Passwords this account never signs in with even when its hash matches: the published
    /// example passwords outside development (set by the production guard,
    /// `crate::config::guard`); empty as parsed.
    pub refused_passwords: &'static [&'static str],
}

impl Account {
    /// Whether `password`, whose PBKDF2 with this account's salt and iterations is `derived`,
    /// signs this account in: the hash matches (constant time) and the password is not one of
    /// [`Account::refused_passwords`].
    pub fn signs_in(&self, password: &str, derived: &[u8; 32]) -> bool {
        self.hash.matches(derived) && !self.refused_passwords.contains(&password)
    }
}

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Account({})", self.name)
    }
}

/// A stored PBKDF2-HMAC-SHA-256 hash with its parameters.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHash {
    pub iterations: u32,
    pub salt: Vec<u8>,
    pub hash: [u8; 32],
}

/// Why an `ADMIN_ACCOUNTS` entry was refused (the message names the entry by position and name,
/// never its hash).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    #[error("entry {0} is not <name>:pbkdf2-sha256:<iterations>:<salt>:<hash>")]
    Shape(usize),
    #[error("entry {0}: the account name {1:?} must be 1–64 of a-z 0-9 . _ @ -")]
    Name(usize, String),
    #[error("entry {0} ({1}): algorithm {2:?} is not pbkdf2-sha256")]
    Algorithm(usize, String, String),
    #[error("entry {0} ({1}): iterations must be a number from 1000 to 100000")]
    Iterations(usize, String),
    #[error("entry {0} ({1}): salt must be 8–64 bytes of unpadded base64url")]
    Salt(usize, String),
    #[error("entry {0} ({1}): hash must be 32 bytes of unpadded base64url")]
    Hash(usize, String),
    #[error("account {0} is listed twice")]
    Duplicate(String),
}

/// An account name as typed at sign-in, normalised: trimmed, lower case. `None` when it cannot be
/// an account name (empty, too long, other characters), so it is never stored raw.
pub fn normalise_name(typed: &str) -> Option<String> {
    let name = typed.trim().to_ascii_lowercase();
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '@' | '-'));
    ok.then_some(name)
}

/// Parses `ADMIN_ACCOUNTS` (empty → no accounts).
pub fn parse_accounts(raw: &str) -> Result<Vec<Account>, AccountError> {
    let mut out: Vec<Account> = Vec::new();
    for (i, entry) in raw
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|e| !e.is_empty())
        .enumerate()
    {
        let n = i + 1;
        let parts: Vec<&str> = entry.split(':').collect();
        let [name, algorithm, iterations, salt, hash] = parts[..] else {
            return Err(AccountError::Shape(n));
        };
        let name = normalise_name(name)
            .ok_or_else(|| AccountError::Name(n, name.chars().take(64).collect()))?;
        if algorithm != ALGORITHM {
            return Err(AccountError::Algorithm(
                n,
                name,
                algorithm.chars().take(32).collect(),
            ));
        }
        let iterations = iterations
            .parse::<u32>()
            .ok()
            .filter(|i| (MIN_ITERATIONS..=MAX_ITERATIONS).contains(i))
            .ok_or_else(|| AccountError::Iterations(n, name.clone()))?;
        let salt = URL_SAFE_NO_PAD
            .decode(salt)
            .ok()
            .filter(|s| (8..=64).contains(&s.len()))
            .ok_or_else(|| AccountError::Salt(n, name.clone()))?;
        let hash: [u8; 32] = URL_SAFE_NO_PAD
            .decode(hash)
            .ok()
            .and_then(|h| h.try_into().ok())
            .ok_or_else(|| AccountError::Hash(n, name.clone()))?;
        if out.iter().any(|a| a.name == name) {
            return Err(AccountError::Duplicate(name));
        }
        out.push(Account {
            name,
            hash: PasswordHash {
                iterations,
                salt,
                hash,
            },
            refused_passwords: &[],
        });
    }
    Ok(out)
}

/// PBKDF2-HMAC-SHA-256 of `password` with `salt`, 32 bytes (RFC 8018 §5.2).
pub fn derive(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut out = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, iterations, &mut out);
    out
}

impl PasswordHash {
    /// The hash of `password` under `salt` and `iterations` (PBKDF2-HMAC-SHA-256, [`derive`]): what
    /// `npm run admin-password` writes, here for tests and docs.
    pub fn of(password: &str, salt: Vec<u8>, iterations: u32) -> PasswordHash {
        let hash = derive(password.as_bytes(), &salt, iterations);
        PasswordHash {
            iterations,
            salt,
            hash,
        }
    }

    /// Whether `derived` (PBKDF2 of the typed password with this hash's salt and iterations) is
    /// this hash, compared in constant time.
    pub fn matches(&self, derived: &[u8; 32]) -> bool {
        derived.ct_eq(&self.hash).into()
    }

    /// Whether `password` matches, hashing here (RustCrypto). The Worker hashes with WebCrypto
    /// instead (`crate::platform::pbkdf2_sha256`) and calls [`PasswordHash::matches`]. A password
    /// longer than [`MAX_PASSWORD_BYTES`] never matches and is not hashed.
    pub fn verify(&self, password: &str) -> bool {
        if password.len() > MAX_PASSWORD_BYTES {
            return false;
        }
        self.matches(&derive(password.as_bytes(), &self.salt, self.iterations))
    }

    /// A short tag of this hash (hex of SHA-256 over salt and hash, 16 characters), stored with
    /// each session it signs in: when the account's entry changes (a new password) or goes, its
    /// sessions no longer match and end.
    pub fn tag(&self) -> String {
        use sha2::Digest;
        let mut h = Sha256::new();
        h.update(&self.salt);
        h.update(self.hash);
        hex::encode(&h.finalize()[..8])
    }

    /// The entry text for `name` (what `npm run admin-password` prints), for tests and docs.
    pub fn entry(&self, name: &str) -> String {
        format!(
            "{name}:{ALGORITHM}:{}:{}:{}",
            self.iterations,
            URL_SAFE_NO_PAD.encode(&self.salt),
            URL_SAFE_NO_PAD.encode(self.hash)
        )
    }
}

/// What to hash for a sign-in: the account's own salt and iterations, or, for a name that is no
/// account, a decoy at the highest configured iteration count (same cost, so the answer's time
/// does not tell which names exist). Returns the account (if any), the salt and the iterations.
pub fn hash_plan<'a>(accounts: &'a [Account], name: &str) -> (Option<&'a Account>, Vec<u8>, u32) {
    match accounts.iter().find(|a| a.name == name) {
        Some(a) => (Some(a), a.hash.salt.clone(), a.hash.iterations),
        None => {
            let iterations = accounts
                .iter()
                .map(|a| a.hash.iterations)
                .max()
                .unwrap_or(DEFAULT_ITERATIONS);
            (None, b"decoy-salt-16byt".to_vec(), iterations)
        }
    }
}

/// Checks a sign-in by hashing here (host tests, tools): `Some(account name)` when `name` is an
/// account and `password` its password. Same plan as the Worker ([`hash_plan`]).
pub fn check<'a>(accounts: &'a [Account], name: &str, password: &str) -> Option<&'a str> {
    if password.len() > MAX_PASSWORD_BYTES {
        return None;
    }
    let (account, salt, iterations) = hash_plan(accounts, name);
    let derived = derive(password.as_bytes(), &salt, iterations);
    account
        .filter(|a| a.signs_in(password, &derived))
        .map(|a| a.name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_7914_pbkdf2_sha256_vector() {
        // RFC 7914 §11: PBKDF2-HMAC-SHA256 (P="passwd", S="salt", c=1, dkLen=64), first 32 bytes.
        let got = derive(b"passwd", b"salt", 1);
        assert_eq!(
            hex::encode(got),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
        );
    }

    #[test]
    fn parses_and_checks_an_account() {
        let salt = b"0123456789abcdef".to_vec();
        let entry = PasswordHash::of("correct horse", salt, 1_000).entry("Owner");
        let accounts = parse_accounts(&format!(" {entry} , ")).unwrap();
        assert_eq!(accounts[0].name, "owner");
        assert_eq!(check(&accounts, "owner", "correct horse"), Some("owner"));
        assert_eq!(check(&accounts, "owner", "wrong"), None);
        assert_eq!(check(&accounts, "nobody", "correct horse"), None);
        assert!(!accounts[0].hash.verify(&"x".repeat(MAX_PASSWORD_BYTES + 1)));
        assert_eq!(format!("{:?}", accounts[0]), "Account(owner)");
        let tag = accounts[0].hash.tag();
        assert_eq!(tag.len(), 16);
        let other = PasswordHash {
            iterations: 1_000,
            salt: b"0123456789abcdeg".to_vec(),
            hash: accounts[0].hash.hash,
        };
        assert_ne!(other.tag(), tag, "a new salt or hash is a new tag");
    }

    #[test]
    fn refuses_malformed_entries_naming_the_fault() {
        let ok = "a:pbkdf2-sha256:1000:MDEyMzQ1Njc4OWFiY2RlZg:VaxEbmTjCJ_sFpHCJUS2BflBhSFt3gRl5oudV8INrLw";
        assert!(parse_accounts(ok).is_ok());
        assert_eq!(parse_accounts("a:b"), Err(AccountError::Shape(1)));
        assert!(matches!(
            parse_accounts(&ok.replace("a:", "<x>:")),
            Err(AccountError::Name(1, _))
        ));
        assert!(matches!(
            parse_accounts(&ok.replace("sha256", "sha1")),
            Err(AccountError::Algorithm(..))
        ));
        assert!(matches!(
            parse_accounts(&ok.replace(":1000:", ":10:")),
            Err(AccountError::Iterations(..))
        ));
        assert!(matches!(
            parse_accounts(&ok.replace("MDEyMzQ1Njc4OWFiY2RlZg", "!!")),
            Err(AccountError::Salt(..))
        ));
        assert!(matches!(
            parse_accounts(&format!("{ok}AA")),
            Err(AccountError::Hash(..))
        ));
        assert_eq!(
            parse_accounts(&format!("{ok} {ok}")),
            Err(AccountError::Duplicate("a".into()))
        );
        assert_eq!(parse_accounts("  ").unwrap(), vec![]);
    }

    #[test]
    fn names_are_normalised_or_refused() {
        assert_eq!(
            normalise_name(" Owner@Example.com "),
            Some("owner@example.com".into())
        );
        assert_eq!(normalise_name(""), None);
        assert_eq!(normalise_name("<script>"), None);
        assert_eq!(normalise_name(&"a".repeat(65)), None);
    }
}
