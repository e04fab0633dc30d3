//! One outbound HTTP call with a time bound, shared by every client of an outside API (Stripe
//! refunds, outbound webhook deliveries): `fetch` raced against a timer, the request aborted when
//! the timer wins.

use futures::future::{select, Either};
use worker::{
    AbortController, Delay, Fetch, Headers, Method, Request, RequestInit, RequestRedirect,
};

/// Why a call got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoAnswer {
    /// Nothing within the bound (the request was aborted).
    #[error("no answer within {0} ms")]
    Timeout(u64),
    /// The request could not be made or the connection failed (message from the runtime).
    #[error("{0}")]
    Network(String),
}

/// An answer: status, the `Retry-After` header if any, and the body as text (at most the bytes
/// asked for, lossily decoded: the rest is never read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: String,
}

/// Sends `method url` with `headers` and `body`, waiting at most `timeout_ms` for the answer and
/// the first `max_body_bytes` of its body (the rest is not read: a receiver cannot make us hold a
/// huge answer). Redirects are followed only when `follow_redirects` (a webhook delivery never
/// follows one: a 3xx is the answer).
pub async fn fetch_within(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
    timeout_ms: u64,
    follow_redirects: bool,
    max_body_bytes: usize,
) -> Result<Answer, NoAnswer> {
    let h = Headers::new();
    for (name, value) in headers {
        h.set(name, value)
            .map_err(|e| NoAnswer::Network(format!("request header {name}: {e}")))?;
    }
    let mut init = RequestInit::new();
    init.with_method(method).with_headers(h);
    if !follow_redirects {
        init.with_redirect(RequestRedirect::Manual);
    }
    if let Some(b) = body {
        init.with_body(Some(b.into()));
    }
    let request =
        Request::new_with_init(url, &init).map_err(|e| NoAnswer::Network(format!("{url}: {e}")))?;
    let controller = AbortController::default();
    let signal = controller.signal();
    let fetcher = Fetch::Request(request);
    let call = Box::pin(async move {
        let mut response = fetcher.send_with_signal(&signal).await?;
        let retry_after = response.headers().get("retry-after").ok().flatten();
        let text = match read_at_most(&mut response, max_body_bytes).await {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => format!("(body unreadable: {e})"),
        };
        Ok::<_, worker::Error>((response.status_code(), retry_after, text))
    });
    let timer = Box::pin(Delay::from(std::time::Duration::from_millis(timeout_ms)));
    match select(call, timer).await {
        Either::Left((Ok((status, retry_after, body)), _)) => Ok(Answer {
            status,
            retry_after,
            body,
        }),
        Either::Left((Err(e), _)) => Err(NoAnswer::Network(e.to_string())),
        Either::Right(_) => {
            controller.abort();
            Err(NoAnswer::Timeout(timeout_ms))
        }
    }
}

/// The first `max` bytes of a response body (fewer when it is shorter); the stream is dropped
/// after that, unread.
async fn read_at_most(response: &mut worker::Response, max: usize) -> worker::Result<Vec<u8>> {
    use futures::StreamExt;
    let mut out = Vec::new();
    let mut stream = match response.stream() {
        Ok(s) => s,
        // No body (e.g. 204).
        Err(_) => return Ok(out),
    };
    while out.len() < max {
        match stream.next().await {
            Some(chunk) => out.extend_from_slice(&chunk?),
            None => break,
        }
    }
    out.truncate(max);
    Ok(out)
}
