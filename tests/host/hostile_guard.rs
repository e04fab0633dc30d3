//! Hostile review of the production guard (`src/config/guard.rs`): published secrets written in
//! another form than the one `.dev.vars.example` shows must be recognised by what they grant.

use booking_email_engine::config::testing::production;
use booking_email_engine::domain::admin::password::{check, PasswordHash};

/// `.dev.vars.example` publishes account `admin` with password `dev-admin-password` (its comment
/// says so). An operator who makes "their own" entry with `npm run admin-password` and that
/// password gets a new random salt: the guard compares entries (salt + hash), not the password,
/// so the published password signs in to production.
#[test]
fn the_published_admin_password_under_a_new_salt_cannot_sign_in_in_production() {
    let salt = b"another-salt-16b";
    let entry = PasswordHash::of("dev-admin-password", salt.to_vec(), 100_000).entry("admin");
    let c = production(&[("ADMIN_ACCOUNTS", &entry)]);
    assert_eq!(
        check(&c.admin.accounts, "admin", "dev-admin-password"),
        None,
        "the published password still signs in (refused: {:?})",
        c.refused
    );
}

/// docs/suppliers.md: liteAPI's `authorization` header is accepted with or without `Bearer `. A
/// `LITEAPI_WEBHOOK_TOKEN` stored the way the dashboard shows the header (`Bearer <token>`) with
/// the published token is not recognised, and the header `Bearer Bearer dev-liteapi-token`
/// (the published token, which anyone can send) passes.
#[test]
fn the_published_liteapi_token_stored_with_its_bearer_prefix_is_refused_in_production() {
    use booking_email_engine::sources::liteapi::verify_token;
    let c = production(&[("LITEAPI_WEBHOOK_TOKEN", "Bearer dev-liteapi-token")]);
    let accepted = verify_token(
        Some("Bearer Bearer dev-liteapi-token"),
        &c.liteapi_webhook_token,
    )
    .is_ok();
    assert!(
        !accepted,
        "the published token is accepted (refused: {:?})",
        c.refused
    );
}

/// "Links are never written to a loopback address outside development": the loopback host in
/// IPv4-mapped IPv6 form and the unspecified address (which reaches this host) are not seen as
/// loopback, so owner action links and marketing stay on with them.
#[test]
fn a_loopback_public_base_url_in_another_form_is_refused_in_production() {
    let accepted: Vec<&str> = [
        "https://[::ffff:127.0.0.1]:8787",
        "https://0.0.0.0:8787",
        "https://[::]:8787",
    ]
    .into_iter()
    .filter(|base| {
        !production(&[("PUBLIC_BASE_URL", base)])
            .refused
            .iter()
            .any(|r| r.variable == "PUBLIC_BASE_URL")
    })
    .collect();
    assert_eq!(accepted, Vec::<&str>::new(), "accepted as public base URLs");
}
