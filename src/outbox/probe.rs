//! The outbox's side of a refusal that may concern one message alone
//! (`crate::domain::outbox::judge_probe`): the email is set aside on its route (`set_aside_on`,
//! status `waiting` until its backoff ends) and the client slot opens at once, so the next
//! different email is handed to the same route ahead of pacing. Every later hand-over on that route
//! judges the set-aside email: accepted → it alone was refused (a dead letter with an owner alert
//! that quotes the route's words and links the email as sent; the guest is not suppressed and the
//! route never paused); refused the same way by an email sharing no untrusted text with them →
//! the route is at fault (paused by the caller, the set-aside emails back in line with their
//! attempts not counted); refused so by one that may share it (the same booking or owner, read
//! from D1) → set aside too, within `MAX_PROBES`; a pause for another cause → back in line
//! unjudged.

use super::storage::StateKey;
use super::Outbox;
use crate::config::{Config, DB_BINDING};
use crate::domain::email::{Audience, EmailKind, EmailStatus};
use crate::domain::event::ownership::Owner;
use crate::domain::outbox::outgoing::OutgoingEmail;
use crate::domain::outbox::{
    content_origin, judge_probe, probe_number, refused_alone_reason, shares_content, ContentOrigin,
    Probe, ProbeOutcome, ProbeVerdict, Provider, ProviderErrorClass,
};
use crate::domain::render;
use crate::platform::rust_err;
use serde::Deserialize;
use worker::Result;

/// A probe's verdict on the emails set aside on its route.
pub(super) struct Judged {
    pub(super) suspects: Vec<SetAside>,
    pub(super) verdict: ProbeVerdict,
}

/// An email set aside on a route, as the probe's verdict needs it.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct SetAside {
    pub(super) seq: i64,
    pub(super) email_json: String,
    pub(super) attempts: i64,
    pub(super) budget_from: i64,
    pub(super) last_error: Option<String>,
}

impl Outbox {
    /// The emails set aside on `provider`'s route other than row `except_seq`, oldest first
    /// (through `queue_set_aside`; in one refusal cycle at most
    /// [`crate::domain::outbox::MAX_PROBES`] bookings' emails, read up to 64).
    pub(super) fn set_aside_on(
        &self,
        provider: Provider,
        except_seq: i64,
    ) -> Result<Vec<SetAside>> {
        self.rows(
            "SELECT seq, email_json, attempts, budget_from, last_error FROM queue \
             WHERE set_aside_on != 0 AND (set_aside_on & ?) != 0 AND seq != ? \
               AND status IN ('queued', 'waiting') ORDER BY seq LIMIT ?",
            vec![provider.bit().into(), except_seq.into(), 64.into()],
        )
    }

    /// What the hand-over of `email` on `provider` (its outcome `outcome`) says about the emails
    /// set aside on that route before it: `None` when there are none. Whether the probe shares
    /// content with them is read from the bookings' owners in D1 (only while an email is set
    /// aside); an owner that cannot be read counts as unknown (shared), which sets the probe
    /// aside rather than pausing the route, within [`crate::domain::outbox::MAX_PROBES`].
    pub(super) async fn judge_set_aside(
        &self,
        provider: Provider,
        seq: i64,
        email: &OutgoingEmail,
        outcome: ProbeOutcome,
    ) -> Result<Option<Judged>> {
        let suspects = self.set_aside_on(provider, seq)?;
        if suspects.is_empty() {
            return Ok(None);
        }
        let mut shared = false;
        let mut bookings = Vec::with_capacity(suspects.len());
        if let ProbeOutcome::Refused(ProviderErrorClass::MessageRefused) = outcome {
            let probe = self.origin(email.kind, email.booking_id.as_deref()).await;
            for suspect in &suspects {
                let theirs: OutgoingEmail = serde_json::from_str(&suspect.email_json)?;
                let origin = self.origin(theirs.kind, theirs.booking_id.as_deref()).await;
                shared |= shares_content(&probe, &origin);
                bookings.push(theirs.booking_id);
            }
        }
        let set_aside: Vec<Option<&str>> = bookings.iter().map(Option::as_deref).collect();
        let verdict = judge_probe(Probe {
            outcome,
            shares_content: shared,
            probe_number: probe_number(&set_aside, email.booking_id.as_deref()),
        });
        Ok(Some(Judged { suspects, verdict }))
    }

    /// The origin of an email's text, its booking's owner read from D1 (unknown on any error).
    async fn origin(&self, kind: EmailKind, booking_id: Option<&str>) -> ContentOrigin {
        let owner = match (booking_id, self.env.d1(DB_BINDING)) {
            (Some(id), Ok(db)) => crate::store::ownership::booking(&db, id)
                .await
                .ok()
                .flatten()
                .and_then(|row| Owner::stored(&row.source, row.partner.as_deref())),
            _ => None,
        };
        content_origin(kind, booking_id, owner.as_ref())
    }

    /// Carries out `judged` on every email it judged (see [`Outbox::carry_out_verdict`]).
    pub(super) fn carry_out(
        &self,
        judged: &Option<Judged>,
        provider: Provider,
        until_ms: i64,
        cfg: &Config,
        at: i64,
    ) -> Result<()> {
        if let Some(j) = judged {
            for suspect in &j.suspects {
                self.carry_out_verdict(suspect, j.verdict, provider, until_ms, cfg, at)?;
            }
        }
        Ok(())
    }

    /// Sets row `seq` aside on `provider`'s route: `waiting` until `retry_at_ms` (ms UTC) with
    /// `error` as its last error, and opens the client slot now, so the next different email goes
    /// to the same route at once, ahead of pacing.
    pub(super) fn set_aside(
        &self,
        seq: i64,
        provider: Provider,
        retry_at_ms: i64,
        error: &str,
        now: i64,
    ) -> Result<()> {
        self.park(seq, EmailStatus::Waiting, retry_at_ms, error, now)?;
        self.exec(
            "UPDATE queue SET set_aside_on = set_aside_on | ? WHERE seq = ?",
            vec![provider.bit().into(), seq.into()],
        )?;
        let slot = self.get_state(StateKey::NextSlotAtMs)?.unwrap_or(0);
        if slot > now {
            self.set_state(StateKey::NextSlotAtMs, now)?;
        }
        Ok(())
    }

    /// Carries out a probe's verdict on the email `suspect` set aside on `provider`'s route. For
    /// [`ProbeVerdict::RouteAtFault`] and [`ProbeVerdict::RoutePaused`] the caller has recorded
    /// the route's pause; the suspect waits for a route (`until_ms`, ms UTC) like the probe, its
    /// set-aside attempt not counted.
    pub(super) fn carry_out_verdict(
        &self,
        suspect: &SetAside,
        verdict: ProbeVerdict,
        provider: Provider,
        until_ms: i64,
        cfg: &Config,
        at: i64,
    ) -> Result<()> {
        let refusal = suspect.last_error.clone().unwrap_or_default();
        match verdict {
            ProbeVerdict::Undecided | ProbeVerdict::SetAsideToo => Ok(()),
            ProbeVerdict::RouteAtFault | ProbeVerdict::RoutePaused => {
                self.set_budget_from(suspect.seq, suspect.budget_from + 1)?;
                self.park_for_route(suspect.seq, until_ms.max(at), &refusal, at)?;
                if verdict == ProbeVerdict::RouteAtFault {
                    let email: OutgoingEmail = serde_json::from_str(&suspect.email_json)?;
                    self.log_route(
                        provider,
                        super::routes::RouteEventKind::RefusedTwice,
                        &format!(
                            "{} and the next email were refused the same way: the route is paused, both wait",
                            email.dedupe_key.as_str()
                        ),
                        at,
                    )?;
                }
                Ok(())
            }
            ProbeVerdict::SuspectAlone => {
                let email: OutgoingEmail = serde_json::from_str(&suspect.email_json)?;
                let reason = refused_alone_reason(provider.as_str(), &refusal);
                self.park(suspect.seq, EmailStatus::Dead, 0, &reason, at)?;
                self.log_route(
                    provider,
                    super::routes::RouteEventKind::RefusedAlone,
                    &format!("{}: {refusal}", email.dedupe_key.as_str()),
                    at,
                )?;
                self.alert_refused_alone(&email, suspect, &reason, cfg, at)
            }
        }
    }

    /// The owner's alert about an email the route refused alone: the route's words and a link to
    /// the email as sent. Also for an owner alert the route refused alone (its content quoted a
    /// guest, say) — but never for an alert about a failed email, so alerts cannot loop.
    fn alert_refused_alone(
        &self,
        email: &OutgoingEmail,
        suspect: &SetAside,
        reason: &str,
        cfg: &Config,
        at: i64,
    ) -> Result<()> {
        if email.audience == Audience::Owner && email.kind == EmailKind::OwnerEmailFailed {
            return Ok(());
        }
        let mut link = cfg.public_link("/admin/email");
        link.query_pairs_mut()
            .append_pair("key", email.dedupe_key.as_str());
        let with_link = format!("{reason} — the email as sent: {link}");
        let row = super::queue::Row {
            seq: suspect.seq,
            email_json: suspect.email_json.clone(),
            attempts: suspect.attempts,
            budget_from: suspect.budget_from,
            maybe_handed_to: None,
            maybe_handed_at_ms: None,
            intent_booking_id: None,
            journey_version: None,
            expires_at_ms: None,
            operator_decision: None,
            refused_ours: 0,
        };
        if email.audience == Audience::Owner {
            let alert = render::owner_email_failed(
                email,
                EmailStatus::Dead.as_str(),
                suspect.attempts,
                &with_link,
                cfg.owner_inbox(),
            )
            .map_err(rust_err)?;
            self.enqueue(&alert, at)?;
            return Ok(());
        }
        self.alert_owner(email, &row, EmailStatus::Dead, &with_link, cfg, at)
    }
}
