//! A submodule of `store` named like the top-level `server`.

/// Something local.
pub struct Local;
