//! PBKDF2 through the runtime's WebCrypto (`crypto.subtle.deriveBits`), native code in workerd:
//! about ten times cheaper in CPU than the same function compiled to wasm (measured in
//! `npm run bench`, section 8). The pure `crate::domain::admin::password::derive` (RustCrypto) is
//! the same function for host tests; the end-to-end tests sign in with hashes made by Node's
//! `crypto.pbkdf2Sync`, so both agree with a third implementation.
//!
//! Workers accept at most 100,000 PBKDF2 iterations
//! (<https://developers.cloudflare.com/workers/runtime-apis/web-crypto/>).

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

fn set(o: &Object, k: &str, v: &JsValue) -> Result<(), JsValue> {
    Reflect::set(o, &JsValue::from_str(k), v).map(|_| ())
}

async fn derive_js(password: &[u8], salt: &[u8], iterations: u32) -> Result<[u8; 32], JsValue> {
    let crypto = Reflect::get(&js_sys::global(), &JsValue::from_str("crypto"))?;
    let subtle = Reflect::get(&crypto, &JsValue::from_str("subtle"))?;
    let call = |name: &str| -> Result<js_sys::Function, JsValue> {
        Reflect::get(&subtle, &JsValue::from_str(name))?.dyn_into::<js_sys::Function>()
    };
    let usages = Array::of1(&JsValue::from_str("deriveBits"));
    let args = Array::new();
    args.push(&JsValue::from_str("raw"));
    args.push(&Uint8Array::from(password).into());
    args.push(&JsValue::from_str("PBKDF2"));
    args.push(&JsValue::FALSE);
    args.push(&usages.into());
    let key = JsFuture::from(
        call("importKey")?
            .apply(&subtle, &args)?
            .dyn_into::<js_sys::Promise>()?,
    )
    .await?;
    let params = Object::new();
    set(&params, "name", &JsValue::from_str("PBKDF2"))?;
    set(&params, "hash", &JsValue::from_str("SHA-256"))?;
    set(&params, "salt", &Uint8Array::from(salt).into())?;
    set(
        &params,
        "iterations",
        &JsValue::from_f64(f64::from(iterations)),
    )?;
    let bits = JsFuture::from(
        call("deriveBits")?
            .call3(&subtle, &params.into(), &key, &JsValue::from_f64(256.0))?
            .dyn_into::<js_sys::Promise>()?,
    )
    .await?;
    let bytes = Uint8Array::new(&bits).to_vec();
    bytes
        .try_into()
        .map_err(|_| JsValue::from_str("deriveBits returned other than 32 bytes"))
}

/// PBKDF2-HMAC-SHA-256 of `password` with `salt`, 32 bytes, by WebCrypto. Errors carry the
/// runtime's message (e.g. more iterations than the platform allows).
pub async fn pbkdf2_sha256(
    password: &[u8],
    salt: &[u8],
    iterations: u32,
) -> worker::Result<[u8; 32]> {
    derive_js(password, salt, iterations)
        .await
        .map_err(|e| worker::Error::RustError(format!("WebCrypto PBKDF2 failed: {e:?}")))
}
