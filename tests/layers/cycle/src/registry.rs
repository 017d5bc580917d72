//! The tool registry.

/// Every tool, from the tools module: `super::` from a top-level file is the crate root.
pub fn all() -> Vec<super::tools::Named> {
    super::tools::list()
}

/// What a tool is.
pub trait Tool {}
