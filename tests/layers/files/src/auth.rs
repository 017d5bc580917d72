//! Sign-in, above the query language.
pub mod a;
pub mod b;
