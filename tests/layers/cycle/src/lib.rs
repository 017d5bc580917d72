//! A crate with two cycles, each closed by a form of path other than a plain `use crate::x`:
//! config <-> policy (a grouped use, an inline path) and registry <-> tools (`super::` from a
//! top-level file and from a `mod.rs` file).
pub mod config;
pub mod policy;
pub mod registry;
pub mod tools;
pub mod value;
