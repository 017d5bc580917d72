//! Harnesses shared by the integration tests: servers over the in-memory ports, request
//! builders and `tools/call` helpers.

pub mod artifacts;
pub mod ci;
pub mod oauth;
pub mod policy;
pub mod protocol;
pub mod server;
pub mod structured;
