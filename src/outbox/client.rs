//! How the rest of the Worker talks to the single outbox instance (Durable Object `OUTBOX`, name
//! `outbox`): JSON over the stub's `fetch`.

use crate::config::{OUTBOX_BINDING, OUTBOX_NAME};
use crate::domain::email::OutgoingEmail;
use serde::Deserialize;
use worker::{Env, Error, Method, Request, RequestInit, Result};

/// The outbox's answer to an enqueue.
#[derive(Debug, Clone, Deserialize)]
pub struct EnqueueReply {
    /// `queued` (new) or `duplicate` (the dedupe key was already in the outbox).
    pub status: String,
}

/// Hands one rendered email to the outbox. Idempotent on `email.dedupe_key`.
pub async fn enqueue(env: &Env, email: &OutgoingEmail) -> Result<EnqueueReply> {
    let stub = env
        .durable_object(OUTBOX_BINDING)?
        .get_by_name(OUTBOX_NAME)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(serde_json::to_string(email)?.into()));
    let req = Request::new_with_init("https://outbox/enqueue", &init)?;
    let mut resp = stub.fetch_with_request(req).await?;
    if resp.status_code() != 200 {
        let text = resp.text().await.unwrap_or_default();
        return Err(Error::RustError(format!(
            "outbox refused the email: {} {text}",
            resp.status_code()
        )));
    }
    resp.json().await
}
