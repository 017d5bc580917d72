//! devtools-mcp-edge: a remote MCP server for CI and project data, compiled to WebAssembly for
//! Cloudflare Workers.
//!
//! The crate is a pure core (protocol, tools, rendering, projection, policy, configuration) that
//! reaches the outside world only through the traits in [`ports`]; the `adapter` module, built for
//! wasm32 only, implements those traits with Workers' fetch, KV and R2.
#![warn(missing_docs)]

pub mod time;
pub mod value;
pub mod http;
pub mod ports;
pub mod projection;
pub mod upstream;
pub mod cache;
pub mod artifacts;
pub mod render;
pub mod auth;
pub mod policy;
pub mod approvals;
pub mod config;
pub mod jsonrpc;
pub mod mcp;
pub mod registry;
pub mod server;
pub mod structured;
pub mod tools;
#[cfg(target_arch = "wasm32")]
mod adapter;
