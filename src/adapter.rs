//! The Workers adapter, built for wasm32 only: the fetch entry point and the port implementations
//! backed by Workers' fetch, KV, R2, Durable Objects (the approval ledger, the claims that spend
//! one-time sign-in credentials), WebCrypto and JavaScript globals. Nothing else in the crate
//! uses `worker`.

mod approvals;
mod claims;
mod crypto;
mod entry;
mod env;
mod fetch;
mod kv;
mod objects;
mod r2;
