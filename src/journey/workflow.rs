//! Cloudflare Workflows from Rust. workers-rs 0.8 has no Workflows API (workers-rs#663), so this
//! module talks to the JS objects directly: the `JOURNEY` binding (`create`) and the `step` object
//! the JS glue class (`src/entry.mjs`) hands to [`crate::journey::run_journey`].
//!
//! Step results cross the boundary as JSON strings, so they are cached by the engine exactly as
//! Rust serialized them and replay deserializes the same values. The `step` API (`do` with its
//! retry config, `sleepUntil`): <https://developers.cloudflare.com/workflows/build/workers-api/>.

use crate::config::JOURNEY_BINDING;
use crate::domain::event::ids::InstanceId;
use crate::domain::event::ownership::Owner;
use crate::domain::event::{EventId, JourneyParams, SupplierEvent, PARAMS_VERSION};
use crate::store::raw_events::{self, RawEventStatus};
use js_sys::{Function, Object, Promise, Reflect};
use serde::{de::DeserializeOwned, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use worker::{D1Database, Env, Error, Result};

fn js_err(context: &str, e: JsValue) -> Error {
    let message = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"));
    Error::RustError(format!("{context}: {message}"))
}

fn method(target: &JsValue, name: &str) -> Result<Function> {
    Reflect::get(target, &JsValue::from_str(name))
        .map_err(|e| js_err(name, e))?
        .dyn_into::<Function>()
        .map_err(|_| Error::RustError(format!("{name} is not a function")))
}

/// Calls `target[name](...args)` through `Reflect.apply`: the binding and `step` are RPC stubs,
/// on which `fn.call(...)` would be looked up as a remote method named "call".
fn call(target: &JsValue, name: &str, args: &[JsValue]) -> std::result::Result<JsValue, JsValue> {
    let f = method(target, name).map_err(|e| JsValue::from_str(&e.to_string()))?;
    let list = js_sys::Array::new();
    for a in args {
        list.push(a);
    }
    Reflect::apply(&f, target, &list)
}

/// Creates the Journey instance `id` with `params`. Returns `Ok(false)` when an instance with that id
/// already exists (a duplicate delivery), `Ok(true)` when this call created it.
pub async fn create(env: &Env, id: &InstanceId, params: &JourneyParams) -> Result<bool> {
    let binding = Reflect::get(env.as_ref(), &JsValue::from_str(JOURNEY_BINDING))
        .map_err(|e| js_err("JOURNEY binding", e))?;
    if binding.is_undefined() {
        return Err(Error::RustError(
            "the JOURNEY Workflow binding is missing".into(),
        ));
    }
    let options = Object::new();
    Reflect::set(&options, &"id".into(), &JsValue::from_str(id.as_str()))
        .map_err(|e| js_err("options", e))?;
    let json = serde_json::to_string(params)?;
    let params_js = js_sys::JSON::parse(&json).map_err(|e| js_err("params", e))?;
    Reflect::set(&options, &"params".into(), &params_js).map_err(|e| js_err("options", e))?;
    // The binding returns a thenable from another realm; `Promise.resolve` adopts it.
    let promise = Promise::resolve(
        &method(&binding, "create")?
            .call1(&binding, &options)
            .map_err(|e| js_err("JOURNEY.create", e))?,
    );
    match JsFuture::from(promise).await {
        Ok(_) => Ok(true),
        Err(e) => {
            let err = js_err("JOURNEY.create", e);
            let text = err.to_string();
            // Observed text: "(instance.already_exists) Instance already exists".
            if text.contains("already_exists") || text.contains("already exists") {
                Ok(false)
            } else {
                Err(err)
            }
        }
    }
}

/// Starts the journey of a stored supplier event and marks its raw event `started` with the
/// instance id ([`InstanceId::for_event`]: the same id for every delivery of one event id, so
/// a redelivery, the sweeper and the first delivery start one instance between them).
/// `received_at_ms` is when the delivery first arrived (ms UTC); `owner` is who the journey acts
/// for (the source, and the generic partner that signed the event). Returns `(instance id, whether
/// this call created it)`; `false` = it existed already (the row is still marked).
pub async fn start_for_event(
    env: &Env,
    db: &D1Database,
    owner: &Owner,
    event_id: &EventId,
    event_name: &str,
    received_at_ms: i64,
    event: SupplierEvent,
) -> Result<(InstanceId, bool)> {
    let source = owner.source;
    let instance_id = InstanceId::for_event(source, event_id);
    let params = JourneyParams {
        params_version: PARAMS_VERSION,
        source,
        event_id: event_id.clone(),
        event_name: event_name.to_string(),
        received_at_ms,
        event,
        partner: owner.partner.clone(),
    };
    let created = create(env, &instance_id, &params).await?;
    raw_events::mark(
        db,
        source,
        event_id.as_str(),
        RawEventStatus::Started,
        Some(instance_id.as_str()),
    )
    .await?;
    Ok((instance_id, created))
}

/// The status of Journey instance `id` (`InstanceStatus.status`: `queued`, `running`, `paused`,
/// `errored`, `terminated`, `complete`, `waiting`, `waitingForPause`, `unknown`;
/// <https://developers.cloudflare.com/workflows/build/workers-api/#instancestatus>). `Ok(None)` when
/// no instance has that id; `Err` when the binding could not be asked (the caller must not treat
/// that as a dead instance).
pub async fn status(env: &Env, id: &InstanceId) -> Result<Option<String>> {
    let binding = Reflect::get(env.as_ref(), &JsValue::from_str(JOURNEY_BINDING))
        .map_err(|e| js_err("JOURNEY binding", e))?;
    if binding.is_undefined() {
        return Err(Error::RustError(
            "the JOURNEY Workflow binding is missing".into(),
        ));
    }
    let got = Promise::resolve(
        &call(&binding, "get", &[JsValue::from_str(id.as_str())])
            .map_err(|e| js_err("JOURNEY.get", e))?,
    );
    let instance = match JsFuture::from(got).await {
        Ok(instance) => instance,
        Err(e) => {
            let err = js_err("JOURNEY.get", e);
            let text = err.to_string();
            // Observed text: "(instance.not_found) Instance not found".
            if text.contains("not_found") || text.contains("not found") {
                return Ok(None);
            }
            return Err(err);
        }
    };
    let asked = Promise::resolve(&call(&instance, "status", &[]).map_err(|e| js_err("status", e))?);
    let answer = JsFuture::from(asked)
        .await
        .map_err(|e| js_err("instance.status", e))?;
    let status = Reflect::get(&answer, &JsValue::from_str("status"))
        .map_err(|e| js_err("status", e))?
        .as_string();
    Ok(Some(status.unwrap_or_else(|| "unknown".into())))
}

/// Retry settings of one step (the engine's `WorkflowStepConfig`).
#[derive(Debug, Clone, Copy)]
pub struct StepConfig {
    pub retries: u32,
    /// First retry delay, ms (exponential backoff).
    pub delay_ms: u64,
    /// Per-attempt timeout, ms.
    pub timeout_ms: u64,
}

impl StepConfig {
    /// Default for steps that only touch storage (D1, the outbox): 13 retries from 2 s,
    /// exponential (2 s, 4 s, … 8192 s: about 4.5 hours in all), 60 s per attempt — long enough
    /// to ride out an outage. Every such step is idempotent (claims, upserts, keyed enqueues), so
    /// each retry is safe. Retries and backoff:
    /// <https://developers.cloudflare.com/workflows/build/sleeping-and-retrying/>.
    pub const STORAGE: StepConfig = StepConfig {
        retries: 13,
        delay_ms: 2_000,
        timeout_ms: 60_000,
    };

    /// For events that may arrive before the booking they refer to (webhooks are unordered): 10
    /// retries from 30 s, exponential — about 8.5 hours in all.
    pub const AWAIT_BOOKING: StepConfig = StepConfig {
        retries: 10,
        delay_ms: 30_000,
        timeout_ms: 60_000,
    };

    fn to_js(self) -> Result<JsValue> {
        let v = serde_json::json!({
            "retries": {"limit": self.retries, "delay": self.delay_ms, "backoff": "exponential"},
            "timeout": self.timeout_ms,
        });
        js_sys::JSON::parse(&v.to_string()).map_err(|e| js_err("step config", e))
    }
}

/// One attempt of a step's body: its result as JSON text, or the error's message (what the
/// engine records for a failed attempt).
type Attempt = Box<dyn Fn() -> Pin<Box<dyn Future<Output = std::result::Result<String, String>>>>>;

/// The `step` object of one run.
pub struct Step {
    inner: JsValue,
}

impl Step {
    pub fn new(inner: JsValue) -> Self {
        Self { inner }
    }

    /// `step.do(name, config, body)`: runs `body` at most once successfully per instance; on replay
    /// the engine returns the cached result without running it. `name` must be deterministic.
    ///
    /// `body` is an async closure (`async move || { … }`): it owns what it captured and each call
    /// borrows it, because the engine calls it again when an attempt fails or times out. So the
    /// body must be idempotent, and its inputs are moved (or cloned) into it once.
    pub async fn run<T, F>(&self, name: &str, config: StepConfig, body: F) -> Result<T>
    where
        T: Serialize + DeserializeOwned + 'static,
        F: AsyncFn() -> Result<T> + 'static,
    {
        let body = Rc::new(body);
        let attempt: Attempt = Box::new(move || {
            let body = Rc::clone(&body);
            Box::pin(async move {
                let value = (*body)().await.map_err(|e| e.to_string())?;
                serde_json::to_string(&value).map_err(|e| e.to_string())
            })
        });
        let text = self.run_attempts(name, config, attempt).await?;
        Ok(serde_json::from_str(&text)?)
    }

    /// [`Step::run`] past its types: hands `attempt` to `step.do` and answers the JSON text of the
    /// step's result. Behind a `dyn` on purpose: the promise, task and closure machinery of
    /// `wasm-bindgen-futures` is compiled once for all steps instead of once per step type
    /// (about 150 KB of the Worker's wasm when it was generic).
    async fn run_attempts(
        &self,
        name: &str,
        config: StepConfig,
        attempt: Attempt,
    ) -> Result<String> {
        let callback = Closure::<dyn FnMut() -> Promise>::new(move || {
            let attempt = attempt();
            future_to_promise(async move {
                attempt
                    .await
                    .map(|text| JsValue::from_str(&text))
                    .map_err(|message| js_sys::Error::new(&message).into())
            })
        });
        // `step.do` returns a thenable (an RPC promise), adopted by `Promise.resolve`.
        let promise = Promise::resolve(
            &call(
                &self.inner,
                "do",
                &[
                    JsValue::from_str(name),
                    config.to_js()?,
                    callback.as_ref().clone(),
                ],
            )
            .map_err(|e| js_err(name, e))?,
        );
        let value = JsFuture::from(promise).await.map_err(|e| js_err(name, e))?;
        drop(callback);
        value
            .as_string()
            .ok_or_else(|| Error::RustError(format!("step {name:?} returned a non-string result")))
    }

    /// `step.sleepUntil(name, date)`: suspends the instance until `at_ms` (UTC ms since epoch).
    /// The platform caps one sleep at 365 days; callers chunk longer waits
    /// (`domain::journey::schedule::sleep_chunks`). A target in the past returns at once.
    pub async fn sleep_until(&self, name: &str, at_ms: i64) -> Result<()> {
        let date = js_sys::Date::new(&JsValue::from_f64(at_ms as f64));
        let promise = Promise::resolve(
            &call(
                &self.inner,
                "sleepUntil",
                &[JsValue::from_str(name), date.into()],
            )
            .map_err(|e| js_err(name, e))?,
        );
        JsFuture::from(promise).await.map_err(|e| js_err(name, e))?;
        Ok(())
    }
}
