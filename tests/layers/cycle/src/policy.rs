//! Decisions.
use crate::value::Value;

/// The policy's settings.
pub struct PolicySettings(pub Value);

/// Reads the whole configuration back: the edge that closes config <-> policy.
pub fn decide(config: &crate::config::Config) -> bool {
    matches!(config.policy, PolicySettings(Value))
}
