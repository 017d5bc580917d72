//! The Workers adapter, built for wasm32 only: the fetch entry point and the port implementations
//! backed by Workers' fetch, KV, R2, a Durable Object (the approval ledger), WebCrypto and
//! JavaScript globals. Nothing else in the crate uses `worker`.

mod approvals;
mod crypto;
mod entry;
mod env;
mod fetch;
mod kv;
mod r2;
