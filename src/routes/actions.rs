//! The owner's one-click actions on a card-testing hold: `GET /actions/{token}` shows a small
//! confirmation page (mail scanners pre-fetch links, so a GET never acts); `POST /actions/{token}`
//! acts. A token is signed for one hold and one action, expires, and is single-use: the first POST
//! inserts its id into `owner_actions` (unique), so a second click, or two at once from two
//! devices, does nothing more. A hold is closed once (`held` → `acted` / `dismissed`): a second,
//! different action on it is refused too. Used, expired, tampered or foreign links get a clear
//! page and change nothing.

use super::{config, Answer, AppError};
use crate::config::DB_BINDING;
use crate::domain::action_token::{self, OwnerAction, TokenError};
use crate::domain::event::{CheckoutAttempt, EmailAddress};
use crate::domain::render::{self, guard::guarded};
use crate::outbox::client::deliver;
use crate::platform::{now_ms, Page};
use crate::store;
use worker::{Env, Request};

/// A result page (`title`, `message`) with `status`.
fn page(status: u16, title: &str, message: &str) -> Page {
    Page::new(status, render::action_result_page(title, message))
}

fn client_ip(req: &Request) -> Option<String> {
    req.headers().get("cf-connecting-ip").ok().flatten()
}

/// Checks a token and its hold; an [`AppError::Page`] is the page to show instead.
async fn check(
    env: &Env,
    token: &str,
) -> Result<(action_token::ActionClaims, store::checkout::HoldRow), AppError> {
    let cfg = config(env)?;
    if cfg.action_signing_key.is_empty() {
        return Err(page(
            503,
            "Actions are not configured",
            "ACTION_SIGNING_KEY is not set on this engine.",
        )
        .into());
    }
    let claims = match action_token::verify(token, cfg.action_signing_key.as_bytes(), now_ms() / 1000) {
        Ok(c) => c,
        Err(TokenError::Expired { .. }) => {
            return Err(page(410, "This link has expired", "Action links are valid for a limited time. Nothing was changed; use the owner pages to act on this hold.").into())
        }
        Err(_) => return Err(page(403, "This link is not valid", "It may have been altered or belong to another engine. Nothing was changed.").into()),
    };
    let db = env.d1(DB_BINDING)?;
    let Some(hold) = store::checkout::get_hold(&db, &claims.hold_id).await? else {
        return Err(page(
            404,
            "Unknown hold",
            "This link does not match any hold on this engine. Nothing was changed.",
        )
        .into());
    };
    if store::checkout::token_used(&db, &claims.token_id).await? {
        return Err(page(
            410,
            "This link was already used",
            "Each action link works once. Nothing more was sent.",
        )
        .into());
    }
    if hold.status != store::checkout::HoldStatus::Held {
        let msg = format!(
            "This hold was already handled ({}). Nothing more was sent.",
            hold.action.as_deref().unwrap_or(hold.status.as_str())
        );
        return Err(page(409, "Already handled", &msg).into());
    }
    Ok((claims, hold))
}

async fn attempt_of(
    env: &Env,
    hold: &store::checkout::HoldRow,
) -> Result<(CheckoutAttempt, Option<String>), AppError> {
    let db = env.d1(DB_BINDING)?;
    let row = store::checkout::get(&db, &hold.prebook_id)
        .await?
        .ok_or_else(|| {
            AppError::Unavailable(format!(
                "attempt {} of hold {} is missing",
                hold.prebook_id, hold.hold_id
            ))
        })?;
    Ok((
        serde_json::from_str(&row.details_json).map_err(AppError::unavailable)?,
        row.email,
    ))
}

/// `GET /actions/{token}`: the confirmation page; changes nothing.
pub async fn confirm(req: Request, env: &Env, token: &str) -> Answer {
    let (claims, hold) = check(env, token).await?;
    let (attempt, email) = attempt_of(env, &hold).await?;
    let post_url = req.url()?.to_string();
    let html = render::action_confirm_page(
        &hold.hold_id,
        &hold.reason,
        &attempt,
        email.as_deref(),
        claims.action,
        &post_url,
    );
    Page::new(200, html).answer()
}

/// `POST /actions/{token}`: acts once.
pub async fn act(req: Request, env: &Env, token: &str) -> Answer {
    let (claims, hold) = check(env, token).await?;
    let db = env.d1(DB_BINDING)?;
    let at = now_ms();
    let from = client_ip(&req);
    if !store::checkout::use_token(
        &db,
        &claims.token_id,
        &hold.hold_id,
        claims.action.as_str(),
        at,
        from.as_deref(),
    )
    .await?
    {
        return page(
            410,
            "This link was already used",
            "Each action link works once. Nothing more was sent.",
        )
        .answer();
    }
    let status = store::checkout::HoldStatus::after(claims.action);
    if !store::checkout::close_hold(
        &db,
        &hold.hold_id,
        status,
        claims.action.as_str(),
        at,
        from.as_deref(),
    )
    .await?
    {
        return page(
            409,
            "Already handled",
            "Another action on this hold was taken first. Nothing more was sent.",
        )
        .answer();
    }
    if claims.action == OwnerAction::Dismiss {
        return page(
            200,
            "Dismissed",
            "The hold is closed. No email was sent to the customer.",
        )
        .answer();
    }
    let (attempt, email) = attempt_of(env, &hold).await?;
    let Some(to) = email.as_deref().and_then(|e| EmailAddress::parse(e).ok()) else {
        return page(
            200,
            "Nothing to send",
            "This checkout has no usable customer email address. The hold is closed.",
        )
        .answer();
    };
    let cfg = config(env)?;
    let mail = guarded(
        &cfg.content_lock(),
        &(attempt.clone(), to.clone()),
        |(attempt, to)| {
            render::checkout_declined(
                attempt,
                to,
                claims.action,
                &cfg.booking_site_url,
                &cfg.branding,
            )
        },
    )
    .map_err(AppError::unavailable)?;
    if let Err(e) = deliver(env, &mail, at).await {
        // Nothing was queued: give the link back so the owner can simply try again.
        store::checkout::reopen(&db, &hold.hold_id, &claims.token_id).await?;
        return Err(AppError::Unavailable(format!(
            "the email could not be queued ({e}); the link works again"
        )));
    }
    page(
        200,
        "Sent",
        &format!("The email to {to} is queued in the outbox. The hold is closed."),
    )
    .answer()
}
