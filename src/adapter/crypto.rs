//! The cipher port on WebCrypto: AES-256-GCM through `crypto.subtle`, with a random 96-bit nonce
//! per seal (stored in front of the ciphertext) and the caller's context as additional data.

use crate::ports::{Cipher, Ciphered, CryptoError};
use worker::js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;

/// AES-GCM's recommended nonce length, in bytes.
const NONCE_BYTES: usize = 12;

/// AES-256-GCM from `crypto.subtle`.
pub(crate) struct SubtleCipher;

fn error(what: &str) -> impl Fn(JsValue) -> CryptoError + '_ {
    move |e| {
        CryptoError(format!(
            "{what}: {}",
            e.as_string().unwrap_or_else(|| format!("{e:?}"))
        ))
    }
}

/// `crypto.subtle`.
fn subtle() -> Result<Object, CryptoError> {
    let global = worker::js_sys::global();
    let crypto = Reflect::get(&global, &"crypto".into()).map_err(error("no crypto"))?;
    Reflect::get(&crypto, &"subtle".into())
        .map_err(error("no crypto.subtle"))?
        .dyn_into::<Object>()
        .map_err(error("crypto.subtle is not an object"))
}

/// Calls `subtle[method](...args)` and awaits the promise it returns.
async fn call(subtle: &Object, method: &str, args: &Array) -> Result<JsValue, CryptoError> {
    let function = Reflect::get(subtle, &method.into())
        .map_err(error(method))?
        .dyn_into::<Function>()
        .map_err(error(method))?;
    let promise = function
        .apply(subtle, args)
        .map_err(error(method))?
        .dyn_into::<Promise>()
        .map_err(error(method))?;
    JsFuture::from(promise).await.map_err(error(method))
}

/// `{ name: "AES-GCM", iv, additionalData }`.
fn params(nonce: &[u8], context: &[u8]) -> Result<Object, CryptoError> {
    let params = Object::new();
    let set = |k: &str, v: &JsValue| Reflect::set(&params, &k.into(), v).map_err(error("params"));
    set("name", &"AES-GCM".into())?;
    set("iv", &Uint8Array::from(nonce).into())?;
    set("additionalData", &Uint8Array::from(context).into())?;
    Ok(params)
}

/// Imports the raw 256-bit key for `usage` ("encrypt" or "decrypt").
async fn import(subtle: &Object, key: &[u8; 32], usage: &str) -> Result<JsValue, CryptoError> {
    let args = Array::new();
    args.push(&"raw".into());
    args.push(&Uint8Array::from(&key[..]).into());
    args.push(&"AES-GCM".into());
    args.push(&false.into());
    args.push(&Array::of1(&usage.into()).into());
    call(subtle, "importKey", &args).await
}

async fn seal(key: &[u8; 32], context: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let subtle = subtle()?;
    let mut nonce = [0u8; NONCE_BYTES];
    getrandom::fill(&mut nonce).map_err(|e| CryptoError(format!("no randomness: {e}")))?;
    let key = import(&subtle, key, "encrypt").await?;
    let args = Array::new();
    args.push(&params(&nonce, context)?.into());
    args.push(&key);
    args.push(&Uint8Array::from(plaintext).into());
    let sealed = call(&subtle, "encrypt", &args).await?;
    let mut out = nonce.to_vec();
    out.extend(Uint8Array::new(&sealed).to_vec());
    Ok(out)
}

async fn open(key: &[u8; 32], context: &[u8], sealed: &[u8]) -> Result<Vec<u8>, CryptoError> {
    if sealed.len() < NONCE_BYTES {
        return Err(CryptoError("sealed value too short".into()));
    }
    let (nonce, body) = sealed.split_at(NONCE_BYTES);
    let subtle = subtle()?;
    let key = import(&subtle, key, "decrypt").await?;
    let args = Array::new();
    args.push(&params(nonce, context)?.into());
    args.push(&key);
    args.push(&Uint8Array::from(body).into());
    let plain = call(&subtle, "decrypt", &args).await?;
    Ok(Uint8Array::new(&plain).to_vec())
}

impl Cipher for SubtleCipher {
    fn seal<'a>(&'a self, key: &'a [u8; 32], context: &'a [u8], plain: &'a [u8]) -> Ciphered<'a> {
        Box::pin(seal(key, context, plain))
    }

    fn open<'a>(&'a self, key: &'a [u8; 32], context: &'a [u8], sealed: &'a [u8]) -> Ciphered<'a> {
        Box::pin(open(key, context, sealed))
    }
}
