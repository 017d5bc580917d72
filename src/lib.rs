//! devtools-mcp-edge: a remote MCP server for CI and project data, compiled to WebAssembly for
//! Cloudflare Workers.
//!
//! The crate is a pure core (protocol, tools, rendering, projection, policy, configuration) that
//! reaches the outside world only through the traits in [`ports`]; the `adapter` module, built for
//! wasm32 only, implements those traits with Workers' fetch, KV and R2.
#![warn(missing_docs)]
#![warn(unreachable_pub)]

#[cfg(target_arch = "wasm32")]
mod adapter;
pub mod approvals;
pub mod artifacts;
pub mod auth;
pub(crate) mod cache;
pub mod config;
pub(crate) mod hex;
pub mod http;
pub mod js;
pub mod jsonrpc;
pub(crate) mod ledger;
pub(crate) mod logs;
pub mod mcp;
pub mod memory;
pub mod oauth;
pub mod outbound;
pub mod policy;
pub mod ports;
pub mod projection;
pub mod render;
pub mod server;
pub mod structured;
pub(crate) mod time;
pub mod tools;
pub mod upstream;
pub mod value;

/// Counts what the heap holds, which bounds what a projection may build (`memory::heap`).
#[cfg(any(target_arch = "wasm32", test))]
#[global_allocator]
static HEAP: memory::heap::Tracked<std::alloc::System> = memory::heap::Tracked(std::alloc::System);
