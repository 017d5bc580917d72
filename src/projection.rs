//! Projection of upstream values by the `jq` argument.
pub mod jmespath;
