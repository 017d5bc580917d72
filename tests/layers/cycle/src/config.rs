//! Settings.
use crate::{policy::PolicySettings, value::Value};

/// All settings.
pub struct Config {
    /// The policy's.
    pub policy: PolicySettings,
    /// A raw value.
    pub raw: Value,
}
