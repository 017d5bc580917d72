//! The vendor tools (one module per family), `artifact_read`, and [`output`], the path every tool's
//! result takes (common arguments, projection, rendering, truncation, the call's artifact).

pub mod approvals;
pub mod artifact_read;
pub mod atlassian;
pub mod circleci;
pub mod github;
pub mod output;
