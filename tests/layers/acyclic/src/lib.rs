//! A crate whose layers point one way: server -> service -> store. `store` holds every form of
//! `crate::` text that is not an import, each of which would close a cycle if it were counted.
pub mod server;
pub mod service;
pub mod store;
