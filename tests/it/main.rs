//! The host integration tests: one binary, one module per topic, each driving the crate's public
//! API (mostly `Server::handle`) over the in-memory ports. `common` holds the shared harnesses.

mod common;

mod artifacts;
mod artifacts_truncation;
mod atlassian_parity;
mod auth;
mod batch_budget;
mod circleci_tools;
mod circleci_workflows;
mod config;
mod github_actions;
mod github_runs;
mod github_tools;
mod http_cache;
mod job_logs;
mod job_logs_circleci;
mod memory_budget;
mod oauth_atlassian;
mod oauth_discovery;
mod oauth_flow;
mod oauth_identity;
mod policy_cases;
mod policy_ci_loop;
mod policy_flow;
mod protocol_lifecycle;
mod protocol_stateless;
mod protocol_tools;
mod protocol_toolsets;
mod protocol_transport;
mod security;
mod storage_faults;
mod structured_bound;
mod structured_output;
mod upstream_client;
