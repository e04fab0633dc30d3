//! A failed send never ends a journey. When a step that hands an email to the outbox still fails
//! after every retry ([`StepConfig::STORAGE`]: hours of exponential backoff), the journey records
//! the failure in its own step — D1 `scheduled_sends` / `emails` say `failed` with the error — and
//! alerts the owner once per booking and UTC day, then goes on to its next send. The run ends
//! `complete` with every failure in [`JourneyOutput::failed`].

use super::workflow::{Step, StepConfig};
use super::{config, deliver, rust_err, Delivery, JourneyOutput};
use crate::config::DB_BINDING;
use crate::domain::basics::text::cut_bytes;
use crate::domain::basics::text::step_part;
use crate::domain::journey::schedule::ScheduledKind;
use crate::domain::outbox::intent::utc_day;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::render::{self, JourneyFailure};
use crate::platform::now_ms;
use crate::store;
use crate::store::schedule::SendStatus;
use worker::{Env, Error, Result};

/// Longest error text kept in D1 and the alert, bytes.
const MAX_ERROR_BYTES: usize = 500;

/// What failed.
#[derive(Debug, Clone)]
pub enum Failed {
    /// An email handed over at once (its dedupe key is known).
    Email(Box<OutgoingEmail>),
    /// A scheduled send of `booking` planned under `version` (never rendered, or rendered inside
    /// the failed step).
    Scheduled {
        booking: String,
        kind: ScheduledKind,
        version: i64,
    },
}

impl Failed {
    /// The booking this is about, or the email's dedupe key for email about no booking.
    fn about(&self) -> String {
        match self {
            Failed::Email(e) => e
                .booking_id
                .clone()
                .unwrap_or_else(|| e.dedupe_key.to_string()),
            Failed::Scheduled { booking, .. } => booking.clone(),
        }
    }

    /// What failed, as listed in the journey's output: the dedupe key, or `<kind> v<version>`.
    fn what(&self) -> String {
        match self {
            Failed::Email(e) => e.dedupe_key.to_string(),
            Failed::Scheduled { kind, version, .. } => format!("{} v{version}", kind.as_str()),
        }
    }
}

/// Send-once as its own step, named after the dedupe key: a replay returns the cached result and a
/// retry can neither lose nor double the email. A step that fails past its retries is recorded
/// ([`record`]) and does not end the journey.
pub async fn deliver_once(
    step: &Step,
    env: &Env,
    email: OutgoingEmail,
    at_ms: i64,
    out: &mut JourneyOutput,
) {
    let name = format!("email {}", step_part(email.dedupe_key.as_str()));
    let key = email.dedupe_key.to_string();
    let result: Result<Delivery> = {
        let (env, email) = (env.clone(), email.clone());
        step.run(&name, StepConfig::STORAGE, async move || {
            deliver(&env, &email, at_ms).await
        })
        .await
    };
    match result {
        Ok(d) => out.emails.push((key, d)),
        Err(e) => record(step, env, Failed::Email(Box::new(email)), &e, out).await,
    }
}

/// Records a send that failed past its retries (see the module docs) in a step of its own, with
/// the same long retries; if even that fails, the failure is still listed in the output.
pub async fn record(
    step: &Step,
    env: &Env,
    failed: Failed,
    error: &Error,
    out: &mut JourneyOutput,
) {
    let what = failed.what();
    let error = cut_bytes(&error.to_string(), MAX_ERROR_BYTES).to_string();
    out.failed.push((what.clone(), error.clone()));
    let name = format!("failed {} {}", step_part(&what), step_part(&failed.about()));
    let recorded: Result<bool> = {
        let (env, error) = (env.clone(), error.clone());
        step.run(&name, StepConfig::STORAGE, async move || {
            record_in_d1(&env, &failed, &error).await
        })
        .await
    };
    if let Err(e) = recorded {
        worker::console_error!("journey: recording the failure of {what} failed too: {e}");
    }
}

/// The body of the record step: D1 rows say `failed`, then the owner's alert (claimed once per
/// booking and UTC day in D1, so a second failure that day adds nothing). Idempotent.
async fn record_in_d1(env: &Env, failed: &Failed, error: &str) -> Result<bool> {
    let db = env.d1(DB_BINDING)?;
    let now = now_ms();
    let about = failed.about();
    match failed {
        Failed::Email(e) => {
            let booking = e.booking_id.as_deref().unwrap_or_default();
            let key = Some(e.dedupe_key.as_str());
            store::emails::mark_failed(&db, key, booking, e.kind.as_str(), error, now).await?;
        }
        Failed::Scheduled {
            booking,
            kind,
            version,
            ..
        } => {
            store::schedule::decide(
                &db,
                booking,
                *kind,
                *version,
                SendStatus::Failed,
                Some(error),
                now,
            )?
            .run()
            .await?;
            let email_kind = crate::domain::outbox::intent::email_kind(*kind);
            store::emails::mark_failed(&db, None, booking, email_kind.as_str(), error, now).await?;
        }
    }
    let cfg = config(env)?;
    let (what, day) = (failed.what(), utc_day(now));
    let alert = render::owner_sends_failed(
        &JourneyFailure {
            about: &about,
            what: &what,
            error,
            day: &day,
        },
        cfg.owner_inbox(),
    )
    .map_err(rust_err)?;
    deliver(env, &alert, now).await?;
    Ok(true)
}
