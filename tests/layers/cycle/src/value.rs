//! A leaf.

/// A value.
pub struct Value;
