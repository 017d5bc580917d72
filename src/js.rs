//! The JavaScript semantics the reference servers' texts depend on, in one place: the order of an
//! object's keys.
//!
//! Nothing here knows the JSON value type: [`crate::value`] and the projections build on these
//! pieces, so the module sits below them.

pub mod map;

pub use map::{array_index_key, JsMap};
