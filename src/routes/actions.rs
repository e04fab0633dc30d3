//! The owner's one-click actions on a card-testing hold: `GET /actions/{token}` shows a small
//! confirmation page (mail scanners pre-fetch links, so a GET never acts); `POST /actions/{token}`
//! acts. A token is signed for one hold and one action, expires, and is single-use: the first POST
//! inserts its id into `owner_actions` (unique), so a second click, or two at once from two
//! devices, does nothing more. A hold is closed once (`held` → `acted` / `dismissed`): a second,
//! different action on it is refused too. Used, expired, tampered or foreign links get a clear
//! page and change nothing.
//!
//! The same links act on a compensation's refund ([`OwnerAction::RefundNow`],
//! [`OwnerAction::RefundHandled`]; the token's subject is the compensation id): GET shows the
//! facts, POST refunds once through Stripe or records it handled.

use super::{config, Answer, AppError};
use crate::config::DB_BINDING;
use crate::domain::event::{CheckoutAttempt, EmailAddress};
use crate::domain::payment::action_token::{self, OwnerAction, TokenError};
use crate::domain::payment::compensation::{
    next_owner_round, parse_link_subject, CompensationRow, StepKind, StepRow, StepStatus,
};
use crate::domain::render::{self, guard::guarded};
use crate::journey::compensation::{self, OwnerRefund};
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

/// Checks a token's signature and expiry; an [`AppError::Page`] is the page to show instead.
fn verified(env: &Env, token: &str) -> Result<action_token::ActionClaims, AppError> {
    let cfg = config(env)?;
    if cfg.action_signing_key.is_empty() {
        return Err(page(
            503,
            "Actions are off",
            "Owner action links are off on this engine. Nothing was changed; its operator sees why on the admin overview.",
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
    Ok(claims)
}

/// Checks a hold action's token and its hold; an [`AppError::Page`] is the page to show instead.
async fn check(
    env: &Env,
    claims: action_token::ActionClaims,
) -> Result<(action_token::ActionClaims, store::checkout::HoldRow), AppError> {
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

/// The confirmation page's form for `claims` at this request: its URL and a fresh nonce.
fn form_parts(
    req: &Request,
    env: &Env,
    claims: &action_token::ActionClaims,
) -> Result<(String, String), AppError> {
    let cfg = config(env)?;
    let nonce = action_token::form_nonce(
        &claims.token_id,
        now_ms() / 1000,
        cfg.action_signing_key.as_bytes(),
    );
    Ok((req.url()?.to_string(), nonce))
}

/// `GET /actions/{token}`: the confirmation page; changes nothing.
pub async fn confirm(req: Request, env: &Env, token: &str) -> Answer {
    let claims = verified(env, token)?;
    show(&req, env, claims, 200, None).await
}

/// The confirmation page of a verified link with `status`, and `notice` when a post was refused.
async fn show(
    req: &Request,
    env: &Env,
    claims: action_token::ActionClaims,
    status: u16,
    notice: Option<&str>,
) -> Answer {
    let (post_url, nonce) = form_parts(req, env, &claims)?;
    let form = render::ConfirmForm {
        post_url: &post_url,
        nonce: &nonce,
        notice,
    };
    if claims.action.is_refund() {
        let (c, refund) = refund_check(env, &claims).await?;
        let html = render::refund_confirm_page(&c, &refund, claims.action, &form);
        return Page::new(status, html).answer();
    }
    let (claims, hold) = check(env, claims).await?;
    let (attempt, email) = attempt_of(env, &hold).await?;
    let html = render::action_confirm_page(
        &hold.hold_id,
        &hold.reason,
        &attempt,
        email.as_deref(),
        claims.action,
        &form,
    );
    Page::new(status, html).answer()
}

/// Largest form body read from an action post, bytes (the form has one short field).
const MAX_ACTION_FORM_BYTES: usize = 2_048;

/// Whether a post is the engine's own confirmation page's form: sent from this site (`Origin`,
/// `Sec-Fetch-Site`, [`action_token::same_site_post`]) with the nonce that page carried, for this
/// link, within [`action_token::FORM_NONCE_TTL_S`]. `Err(notice)` says why not, for the page
/// shown again; nothing has been read or written then but the form body.
async fn from_our_page(
    req: &mut Request,
    env: &Env,
    claims: &action_token::ActionClaims,
) -> Result<Result<(), &'static str>, AppError> {
    let origin = req.headers().get("origin").ok().flatten();
    let fetch_site = req.headers().get("sec-fetch-site").ok().flatten();
    let own = req.url()?.origin().ascii_serialization();
    if !action_token::same_site_post(origin.as_deref(), fetch_site.as_deref(), &own) {
        return Ok(Err(
            "The request came from another site. Use the button below to confirm.",
        ));
    }
    let body = super::webhooks::read_limited(req, MAX_ACTION_FORM_BYTES).await?;
    let nonce = form_urlencoded::parse(&body)
        .find(|(k, _)| k == "nonce")
        .map(|(_, v)| v.into_owned());
    let cfg = config(env)?;
    match action_token::check_form_nonce(
        nonce.as_deref(),
        &claims.token_id,
        cfg.action_signing_key.as_bytes(),
        now_ms() / 1000,
    ) {
        Ok(()) => Ok(Ok(())),
        Err(action_token::NonceError::Expired) => Ok(Err(
            "This page was open too long. Use the button below to confirm.",
        )),
        Err(_) => Ok(Err(
            "Links act only through this page's own button (mail scanners post links too). Use the button below to confirm.",
        )),
    }
}

/// `POST /actions/{token}`: acts once, and only as the confirmation page's own form
/// ([`from_our_page`]); any other post changes nothing and shows the page again (403).
pub async fn act(mut req: Request, env: &Env, token: &str) -> Answer {
    let claims = verified(env, token)?;
    if let Err(notice) = from_our_page(&mut req, env, &claims).await? {
        return show(&req, env, claims, 403, Some(notice)).await;
    }
    if claims.action.is_refund() {
        return refund_act(req, env, claims).await;
    }
    let (claims, hold) = check(env, claims).await?;
    let from = client_ip(&req);
    let outcome = act_on_hold(env, &hold, claims.action, &claims.token_id, from.as_deref()).await?;
    page(outcome.status, outcome.title, &outcome.message).answer()
}

/// The result of [`act_on_hold`]: the status, title and message of the page (or flash) to show.
#[derive(Debug, Clone)]
pub struct HoldOutcome {
    pub status: u16,
    pub title: &'static str,
    pub message: String,
}

/// Carries out `action` on an open `hold` once: records `token_id` as used (unique in
/// `owner_actions`), closes the hold (`held` → `acted`/`dismissed`, refused when another action
/// was first), then queues the customer's email for the two sending actions. The owner's signed
/// links and the admin's holds page (token id `admin:<hold id>`) both act through here, so both
/// follow the same rules. Returns the outcome to show.
pub async fn act_on_hold(
    env: &Env,
    hold: &store::checkout::HoldRow,
    action: OwnerAction,
    token_id: &str,
    from: Option<&str>,
) -> Result<HoldOutcome, AppError> {
    let db = env.d1(DB_BINDING)?;
    let act = store::checkout::Act {
        action: action.as_str(),
        at_ms: now_ms(),
        from,
    };
    if !store::checkout::use_token(&db, token_id, &hold.hold_id, &act).await? {
        return Ok(HoldOutcome {
            status: 410,
            title: "This link was already used",
            message: "Each action link works once. Nothing more was sent.".to_string(),
        });
    }
    let status = store::checkout::HoldStatus::after(action);
    if !store::checkout::close_hold(&db, &hold.hold_id, status, &act).await? {
        return Ok(HoldOutcome {
            status: 409,
            title: "Already handled",
            message: "Another action on this hold was taken first. Nothing more was sent."
                .to_string(),
        });
    }
    if action == OwnerAction::Dismiss {
        return Ok(HoldOutcome {
            status: 200,
            title: "Dismissed",
            message: "The hold is closed. No email was sent to the customer.".to_string(),
        });
    }
    let (attempt, email) = attempt_of(env, hold).await?;
    let Some(to) = email.as_deref().and_then(|e| EmailAddress::parse(e).ok()) else {
        return Ok(HoldOutcome {
            status: 200,
            title: "Nothing to send",
            message: "This checkout has no usable customer email address. The hold is closed."
                .to_string(),
        });
    };
    let cfg = config(env)?;
    let reference = attempt.client_reference.as_deref();
    let branding = crate::journey::branding_for(&db, &cfg, None, reference).await?;
    let mail = guarded(
        &cfg.content_lock(),
        &(attempt.clone(), to.clone()),
        |(attempt, to)| {
            render::checkout_declined(attempt, to, action, &cfg.booking_site_url, &branding)
        },
    )
    .map_err(AppError::unavailable)?;
    if let Err(e) = deliver(env, &mail, act.at_ms).await {
        // Nothing was queued: give the link back so the owner can simply try again.
        store::checkout::reopen(&db, &hold.hold_id, token_id).await?;
        return Err(AppError::Unavailable(format!(
            "the email could not be queued ({e}); the link works again"
        )));
    }
    Ok(HoldOutcome {
        status: 200,
        title: "Sent",
        message: format!("The email to {to} is queued in the outbox. The hold is closed."),
    })
}

/// A compensation's refund link, checked: the compensation exists, the token is unused, and the
/// refund still waits for the owner (`awaiting_owner` or `failed`).
async fn refund_check(
    env: &Env,
    claims: &action_token::ActionClaims,
) -> Result<(CompensationRow, StepRow), AppError> {
    let db = env.d1(DB_BINDING)?;
    let Some((id, round, generation)) = parse_link_subject(&claims.hold_id) else {
        return Err(page(
            404,
            "Unknown compensation",
            "This link does not match any compensation on this engine. Nothing was changed.",
        )
        .into());
    };
    let id = &id;
    let Some(c) = store::compensation::get(&db, id).await? else {
        return Err(page(
            404,
            "Unknown compensation",
            "This link does not match any compensation on this engine. Nothing was changed.",
        )
        .into());
    };
    if store::checkout::token_used(&db, &claims.token_id).await? {
        return Err(page(
            410,
            "This link was already used",
            "Each action link works once. Nothing more was refunded.",
        )
        .into());
    }
    let refund = store::compensation::step(&db, id, StepKind::Refund)
        .await?
        .ok_or_else(|| AppError::Unavailable(format!("compensation {id} has no refund step")))?;
    // A `running` claim older than the lease belongs to an actor that died mid-way (a request
    // cut off, a journey that failed): the owner may take it over.
    let abandoned = refund.status == StepStatus::Running
        && refund.updated_at_ms < now_ms() - store::compensation::CLAIM_LEASE_MS;
    if !abandoned
        && !matches!(
            refund.status,
            StepStatus::AwaitingOwner | StepStatus::Failed
        )
    {
        let msg = format!(
            "The refund of this compensation is already {} ({}). Nothing more was refunded.",
            refund.status,
            refund.detail.as_deref().unwrap_or("no detail")
        );
        return Err(page(409, "Already handled", &msg).into());
    }
    if next_owner_round(refund.status, refund.round) != round {
        return Err(page(
            409,
            "This link is out of date",
            "It was sent for an earlier refund attempt. Use the links of the newest alert. Nothing was changed.",
        )
        .into());
    }
    if !crate::domain::sweeper::reminders::refund_link_current(generation, c.reminders_sent) {
        return Err(page(
            409,
            "This link is out of date",
            "A newer reminder about this refund replaced it. Use the links of the newest reminder, or the admin's refunds page. Nothing was changed.",
        )
        .into());
    }
    Ok((c, refund))
}

/// `POST /actions/{token}` of a refund link (its form checked by [`act`]): refunds once (or records it handled). The token is
/// spent first (unique in `owner_actions`), so a second POST, or two at once, refunds nothing
/// more; the refund step's own claim in D1 keeps the owner and a journey from both acting. When
/// Stripe could not be reached (or rate-limited), the token is given back.
async fn refund_act(req: Request, env: &Env, claims: action_token::ActionClaims) -> Answer {
    let (c, _) = refund_check(env, &claims).await?;
    let db = env.d1(DB_BINDING)?;
    let from = client_ip(&req);
    let act = store::checkout::Act {
        action: claims.action.as_str(),
        at_ms: now_ms(),
        from: from.as_deref(),
    };
    if !store::checkout::use_token(&db, &claims.token_id, &c.compensation_id, &act).await? {
        return page(
            410,
            "This link was already used",
            "Each action link works once. Nothing more was refunded.",
        )
        .answer();
    }
    let claimant = format!("owner:{}", claims.token_id);
    let result = if claims.action == OwnerAction::RefundNow {
        compensation::owner_refund(env, &c.compensation_id, &claimant).await?
    } else {
        compensation::owner_handled(env, &c.compensation_id, &claimant).await?
    };
    match result {
        OwnerRefund::Refunded(o) => page(
            200,
            "Refund requested",
            &format!(
                "Stripe accepted the refund ({}). {}",
                o.state.as_str(),
                o.detail
            ),
        )
        .answer(),
        OwnerRefund::Handled => page(
            200,
            "Recorded as handled",
            "Nothing was sent to Stripe. The compensation is closed.",
        )
        .answer(),
        OwnerRefund::Refused(why) => page(
            502,
            "Stripe refused the refund",
            &format!("{why}. Nothing was refunded; refund it from the Stripe dashboard, then use \u{201c}already handled\u{201d} from a new alert."),
        )
        .answer(),
        OwnerRefund::NotProven(why) => page(
            409,
            "Not refunded: the payment is not proven",
            &format!("Stripe's record does not tie this payment to this compensation, so the engine refunds nothing. Stripe: {why}. Settle it yourself, then use \u{201c}already handled\u{201d}."),
        )
        .answer(),
        OwnerRefund::TryAgain(why) => {
            store::checkout::release_token(&db, &claims.token_id).await?;
            page(
                503,
                "Stripe could not be reached",
                &format!("{why}. Stripe did not confirm a refund. The link works again: it looks at the payment's refunds at Stripe before asking again, so do not refund from the dashboard meanwhile."),
            )
            .answer()
        }
        OwnerRefund::AlreadyDecided(why) => page(
            409,
            "Already handled",
            &format!("{why}. Nothing more was refunded."),
        )
        .answer(),
    }
}
