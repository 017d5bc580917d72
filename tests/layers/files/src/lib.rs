//! A crate without a module cycle (auth -> query) but with one circle between files of `query`:
//! `eval.rs` <-> `funcs.rs`. The parent `query.rs` and its child `lexer.rs` name each other, which
//! is the parent's facade and no circle; in `auth`, `b.rs` names `a.rs` only in a test.
pub mod auth;
pub mod query;
