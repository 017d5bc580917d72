//! The Workers adapter, built for wasm32 only: the fetch entry point and the port implementations
//! backed by Workers' fetch, KV, R2, WebCrypto and JavaScript globals. Nothing else in the crate uses `worker`.

mod crypto;
mod entry;
mod env;
mod fetch;
mod kv;
mod r2;
