//! `super::server` here is `store::server`, not the top-level `server`.
pub use super::server::Local;
