//! `campaigns`: one row per marketing campaign the operator submitted (migrations/0004_outbox.sql),
//! and the suppression look-up of a campaign's recipients.
//!
//! A campaign id names its content for ever: every recipient's dedupe key is
//! `marketing:<campaign>:<address>`, so a second submission with other content under the same id
//! would reach new recipients with different mail than the first ones got. [`record`] reports that
//! case and the route refuses it.

use super::{n, s};
use crate::domain::marketing::campaign::Campaign;
use crate::domain::marketing::Suppression;
use serde::Deserialize;
use std::collections::HashMap;
use worker::{D1Database, Result};

/// Largest number of addresses bound in one `IN (…)` query (D1 allows 100 bound parameters).
const IN_CHUNK: usize = 90;

/// What [`record`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// First submission of this campaign id: the row was inserted.
    New,
    /// Submitted before with the same subject and text (a retry or an added batch of recipients).
    Same,
    /// Submitted before with another subject or text.
    Different,
}

#[derive(Deserialize)]
struct ContentRow {
    subject: String,
    body_text: String,
}

/// Inserts the campaign row unless its id exists (`INSERT … ON CONFLICT DO NOTHING`), then
/// compares the stored subject and text with `campaign`'s.
pub async fn record(db: &D1Database, campaign: &Campaign, now_ms: i64) -> Result<Recorded> {
    let inserted = db
        .prepare(
            "INSERT INTO campaigns (campaign_id, subject, body_text, created_at_ms) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT(campaign_id) DO NOTHING",
        )
        .bind(&[
            s(campaign.id.as_str()),
            s(&campaign.subject),
            s(&campaign.text),
            n(now_ms),
        ])?
        .run()
        .await?;
    if super::changes(&inserted) == 1 {
        return Ok(Recorded::New);
    }
    let stored = super::row_by::<ContentRow>(
        db,
        "SELECT subject, body_text FROM campaigns WHERE campaign_id = ?1",
        campaign.id.as_str(),
    )
    .await?;
    Ok(match stored {
        Some(r) if r.subject == campaign.subject && r.body_text == campaign.text => Recorded::Same,
        Some(_) => Recorded::Different,
        // Deleted between the two statements: nothing to disagree with.
        None => Recorded::Same,
    })
}

#[derive(Deserialize)]
struct SuppressionRow {
    email: String,
    reason: String,
}

/// The suppressions on record among `emails` (keys lower-cased; addresses with nothing on record
/// are absent). One query per 90 addresses.
pub async fn suppressions_of(
    db: &D1Database,
    emails: &[&str],
) -> Result<HashMap<String, Suppression>> {
    let mut found = HashMap::new();
    for chunk in emails.chunks(IN_CHUNK) {
        let marks = (1..=chunk.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let binds: Vec<_> = chunk
            .iter()
            .map(|e| s(&e.trim().to_ascii_lowercase()))
            .collect();
        let rows = db
            .prepare(format!(
                "SELECT email, reason FROM suppressions WHERE email IN ({marks})"
            ))
            .bind(&binds)?
            .all()
            .await?
            .results::<SuppressionRow>()?;
        for r in rows {
            if let Some(reason) = Suppression::parse(&r.reason) {
                found.insert(r.email, reason);
            }
        }
    }
    Ok(found)
}
