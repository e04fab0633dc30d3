//! Checkout journeys: a declined card never reaches a webhook (the payment fails inside the hosted
//! payment form), so the engine infers it. A checkout attempt (`booking.prebook`) is recorded; the journey sleeps until
//! `CHECKOUT_FOLLOW_UP_MS` (20 minutes) after *that* attempt — a target computed from the event's
//! receipt time, never from a clock read after the sleep — then decides once
//! (`domain::payment::checkout::decide`): booked / paid / a newer attempt → nothing; card-testing pattern →
//! a hold for the owner with one-click actions, no customer email; no contact → nothing; else one
//! honest "your booking wasn't completed, nothing was charged" email.

use super::workflow::{Step, StepConfig};
use super::{config, deliver, rust_err, Delivery, JourneyOutput};
use crate::config::{Config, DB_BINDING};
use crate::domain::basics::text::step_part;
use crate::domain::event::{CheckoutAttempt, JourneyParams, PaymentOutcome, PaymentUpdate};
use crate::domain::payment::action_token::{self, OwnerAction};
use crate::domain::payment::checkout::{
    self, AttemptFacts, CheckoutInput, CheckoutOutcome, RiskReason, Thresholds,
};
use crate::domain::render::{self, guard::guarded};
use crate::store;
use crate::store::checkout::AttemptRow;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use worker::{Env, Result};

fn normalized_name(a: &CheckoutAttempt) -> Option<String> {
    a.guest_name
        .as_ref()
        .map(|n| checkout::normalize_name(&n.full()))
        .filter(|n| !n.is_empty())
}

fn facts(row: &AttemptRow) -> AttemptFacts {
    AttemptFacts {
        prebook_id: row.prebook_id.clone(),
        email: row.email.clone(),
        name: row.guest_name.clone(),
        at_ms: row.attempted_at_ms,
    }
}

/// The hold id of a risk group: one hold per group and UTC day, whichever attempt finds it first.
pub fn hold_id_for(risk: &RiskReason, day: &str) -> String {
    let key = match risk {
        RiskReason::EmailUnderNames { email, .. } => format!("email:{email}:{day}"),
        RiskReason::NameWithEmails { name, .. } => format!("name:{name}:{day}"),
    };
    format!(
        "hold-{}",
        &hex::encode(Sha256::digest(key.as_bytes()))[..20]
    )
}

/// The owner's one-click links of a hold, each signed for one action, expiring `ttl` after `now`.
pub fn action_links(cfg: &Config, hold_id: &str, now_s: i64) -> Vec<(OwnerAction, String)> {
    if cfg.action_signing_key.is_empty() {
        return Vec::new();
    }
    [
        OwnerAction::SendInsufficientFunds,
        OwnerAction::SendSecurityCheck,
        OwnerAction::Dismiss,
    ]
    .into_iter()
    .map(|action| {
        let token = action_token::sign(
            hold_id,
            action,
            now_s + cfg.action_link_ttl_s,
            cfg.action_signing_key.as_bytes(),
        );
        (
            action,
            cfg.public_link(&format!("/actions/{token}")).to_string(),
        )
    })
    .collect()
}

/// What the decision step did (the instance's output shows it).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Decided {
    outcome: String,
    hold_id: Option<String>,
    email: Option<(String, Delivery)>,
}

/// A checkout started: record it, wait 20 minutes after it, decide once. A prebook id that another
/// owner's checkout attempt or booking already holds is refused (`super::foreign::refuse`):
/// nothing is recorded and nothing is decided about that owner's checkout.
pub async fn started(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    a: &CheckoutAttempt,
) -> Result<JourneyOutput> {
    let mut out = JourneyOutput::new("checkout_started");
    let at = params.received_at_ms;
    let prebook = a.prebook_id.clone();
    // `Some(reason)`: the prebook id is another owner's (its checkout or a booking of it), so
    // nothing was recorded and no follow-up is decided.
    let foreign: Option<String> = {
        let (env, a, owner) = (env.clone(), a.clone(), params.owner());
        // (Named "record checkout attempt": its result grew the ownership verdict.)
        step.run(
            &format!("record checkout attempt {}", step_part(&prebook)),
            StepConfig::STORAGE,
            async move || {
                let db = env.d1(DB_BINDING)?;
                let judge = |rows: &[store::ownership::OwnerRow]| {
                    store::ownership::foreign_prebook(rows, &owner, &a.prebook_id)
                };
                if let Some(reason) = judge(&store::ownership::prebook(&db, &a.prebook_id).await?) {
                    return Ok(Some(reason));
                }
                let email = a.email.as_ref().map(|e| e.as_str().to_ascii_lowercase());
                let name = normalized_name(&a);
                let details = serde_json::to_string(&a)?;
                let day = checkout::day_of(at).to_string();
                store::checkout::record(
                    &db,
                    &store::checkout::NewAttempt {
                        prebook_id: &a.prebook_id,
                        transaction_id: a.transaction_id.as_deref(),
                        client_reference: a.client_reference.as_deref(),
                        email: email.as_deref(),
                        guest_name: name.as_deref(),
                        hotel_id: a.hotel_id.as_deref(),
                        checkin: a.checkin.map(|d| d.to_string()).as_deref(),
                        checkout: a.checkout.map(|d| d.to_string()).as_deref(),
                        attempt_day: &day,
                        attempted_at_ms: at,
                        details_json: &details,
                        owner: &owner,
                    },
                )
                .await?;
                // Judged again as stored: a checkout or booking another owner recorded between
                // the look and the insert keeps the prebook id, and this event is refused.
                Ok(judge(&store::ownership::prebook(&db, &a.prebook_id).await?))
            },
        )
        .await?
    };
    if let Some(reason) = foreign {
        super::foreign::refuse(step, env, params, &prebook, &reason, &mut out).await?;
        return Ok(out);
    }

    let cfg = config(env)?;
    // The wait ends a fixed time after this attempt, never "now" after the sleep: a Workflow replays
    // its body after every sleep, so a clock read here would move the target on each replay.
    step.sleep_until(
        &format!("wait for payment {}", step_part(&prebook)),
        at + cfg.checkout_follow_up_ms,
    )
    .await?;

    let decide_at = at + cfg.checkout_follow_up_ms;
    let decided: Decided = {
        let (env, prebook) = (env.clone(), prebook.clone());
        step.run(
            &format!("decide checkout {}", step_part(&prebook)),
            StepConfig::STORAGE,
            async move || decide_and_act(&env, &prebook, decide_at).await,
        )
        .await?
    };
    if let Some(e) = decided.email {
        out.emails.push(e);
    } else {
        out.skipped
            .push(("checkout_follow_up".into(), decided.outcome));
    }
    Ok(out)
}

async fn decide_and_act(env: &Env, prebook: &str, decide_at: i64) -> Result<Decided> {
    let db = env.d1(DB_BINDING)?;
    let cfg = config(env)?;
    let row = store::checkout::get(&db, prebook)
        .await?
        .ok_or_else(|| rust_err("checkout attempt vanished"))?;
    let same_day = store::checkout::same_day(
        &db,
        &row.attempt_day,
        row.email.as_deref(),
        row.guest_name.as_deref(),
    )
    .await?;
    let thresholds = Thresholds {
        names_per_email: cfg.card_testing_names_per_email,
        emails_per_name: cfg.card_testing_emails_per_name,
    };
    let risk = checkout::card_testing(
        &facts(&row),
        &same_day.iter().map(facts).collect::<Vec<_>>(),
        &thresholds,
    );
    let input = CheckoutInput {
        booked: store::checkout::booked(&db, &row).await?,
        paid: row.payment_status.is_some_and(PaymentOutcome::is_paid),
        newer_attempt: store::checkout::newer_attempt_exists(&db, &row).await?,
        has_email: row.email.is_some(),
        risk: risk.clone(),
    };
    let outcome = checkout::decide(&input);
    let attempt: CheckoutAttempt = serde_json::from_str(&row.details_json)?;
    let mut decided = Decided {
        outcome: outcome.as_str().to_string(),
        hold_id: None,
        email: None,
    };
    match &outcome {
        CheckoutOutcome::FollowUp => {
            let to =
                crate::domain::event::EmailAddress::parse(row.email.as_deref().unwrap_or_default())
                    .map_err(rust_err)?;
            let reference = attempt.client_reference.as_deref();
            let branding = super::branding_for(&db, &cfg, None, reference).await?;
            let email = guarded(
                &cfg.content_lock(),
                &(attempt.clone(), to.clone()),
                |(attempt, to)| {
                    render::checkout_not_completed(attempt, to, &cfg.booking_site_url, &branding)
                },
            )
            .map_err(rust_err)?;
            let key = email.dedupe_key.to_string();
            decided.email = Some((key, deliver(env, &email, decide_at).await?));
        }
        CheckoutOutcome::Hold(risk) => {
            let hold_id = hold_id_for(risk, &row.attempt_day);
            store::checkout::open_hold(&db, &hold_id, &risk.plain_words(), prebook, decide_at)
                .await?;
            let decline_codes: Vec<String> = same_day
                .iter()
                .filter_map(|r| r.decline_code.clone())
                .collect();
            let links = action_links(&cfg, &hold_id, decide_at / 1000);
            let alert = render::owner_checkout_hold(
                &hold_id,
                &attempt,
                risk,
                &decline_codes,
                &links,
                cfg.owner_inbox(),
            )
            .map_err(rust_err)?;
            let key = alert.dedupe_key.to_string();
            decided.email = Some((key, deliver(env, &alert, decide_at).await?));
            decided.hold_id = Some(hold_id);
        }
        _ => {}
    }
    store::checkout::set_outcome(
        &db,
        prebook,
        &outcome,
        decided.hold_id.as_deref(),
        decide_at,
    )
    .await?;
    Ok(decided)
}

/// The payment processor's word on a checkout: stored against the matching attempts. It never sends
/// anything by itself; the 20-minute decision reads it.
pub async fn payment_updated(
    step: &Step,
    env: &Env,
    params: &JourneyParams,
    p: &PaymentUpdate,
) -> Result<JourneyOutput> {
    let mut out = JourneyOutput::new("payment_updated");
    let name = format!(
        "payment {} {}",
        step_part(
            p.payment_intent
                .as_deref()
                .or(p.session_id.as_deref())
                .unwrap_or("-")
        ),
        p.outcome
    );
    let matched: usize = {
        let (env, p, at) = (env.clone(), p.clone(), params.received_at_ms);
        step.run(&name, StepConfig::STORAGE, async move || {
            let db = env.d1(DB_BINDING)?;
            let email = p.email.as_ref().map(|e| e.as_str().to_ascii_lowercase());
            let name = p
                .name
                .as_ref()
                .map(|n| checkout::normalize_name(&n.full()))
                .filter(|n| !n.is_empty());
            // Kept whether or not its attempt is known yet: a compensation may need it later.
            store::compensation::record_payment(&db, &p, at).await?;
            // A session that arrives after its booking gives the booking its language, if no
            // source stated one and no guest email has gone yet (`domain::i18n::locale::update`).
            if let (Some(tag), Some(reference)) =
                (p.locale.as_deref(), p.client_reference.as_deref())
            {
                let incoming = crate::domain::i18n::locale::resolve(
                    None,
                    Some(tag),
                    crate::domain::i18n::Lang::default(),
                );
                if incoming.source == crate::domain::i18n::LocaleSource::StripeCheckout {
                    for id in store::guest_locale::bookings_of_reference(&db, reference).await? {
                        store::guest_locale::settle(&db, &id, incoming).await?;
                    }
                }
            }
            store::checkout::record_payment(
                &db,
                p.payment_intent.as_deref(),
                p.client_reference.as_deref(),
                p.outcome,
                p.decline_code.as_deref(),
                email.as_deref(),
                name.as_deref(),
            )
            .await
        })
        .await?
    };
    if matched == 0 {
        out.skipped.push((
            "payment_updated".into(),
            "no matching checkout attempt".into(),
        ));
    }
    // A compensation that opened before this payment was known resumes its refund now.
    if p.outcome.is_paid() {
        let emails: Vec<crate::domain::outbox::outgoing::OutgoingEmail> = {
            let (env, p, claimant) = (env.clone(), p.clone(), params.event_id.to_string());
            step.run(
                &format!(
                    "compensation resume {}",
                    step_part(
                        p.payment_intent
                            .as_deref()
                            .or(p.session_id.as_deref())
                            .unwrap_or("-")
                    )
                ),
                StepConfig::STORAGE,
                async move || {
                    let intents: Vec<&str> = p.payment_intent.as_deref().into_iter().collect();
                    let references: Vec<&str> = p.client_reference.as_deref().into_iter().collect();
                    super::compensation::resume_waiting(&env, &intents, &references, &claimant)
                        .await
                },
            )
            .await?
        };
        for email in emails {
            super::deliver_once(step, env, email, params.received_at_ms, &mut out).await;
        }
    }
    Ok(out)
}
