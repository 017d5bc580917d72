//! The GitHub list tools, each declared once: its arguments (which give its input schema), its
//! name, title and description (which teach a model to use it), and the request it makes. A new
//! read-only list tool is one more declaration here and one more line in [`tools`].

use super::{List, ListTool, RepoPage};
use crate::tools::args::{arguments, ArgError, ArgValue, Fallback, Field};
use crate::tools::registry::{Tool, ToolError};
use serde_json::Value as Json;

/// The GitHub list tools, for the registry.
pub(crate) fn tools() -> Vec<Box<dyn Tool>> {
    vec![List::<RunsArgs>::boxed(), List::<JobsArgs>::boxed()]
}

/// What GitHub accepts in the runs `status` filter: statuses and conclusions.
const RUN_STATUSES: &[&str] = &[
    "completed",
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "skipped",
    "stale",
    "success",
    "timed_out",
    "in_progress",
    "queued",
    "requested",
    "waiting",
    "pending",
];

/// `workflowId`: a number or a workflow file name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WorkflowId {
    /// A numeric workflow id.
    Id(u64),
    /// A workflow file name.
    Name(String),
}

impl ArgValue for WorkflowId {
    fn read(value: Option<Json>, field: &Field) -> Result<WorkflowId, ArgError> {
        match value {
            Some(Json::String(name)) => Ok(WorkflowId::Name(name)),
            other => u64::read(other, field).map(WorkflowId::Id),
        }
    }
}

/// `workflowId` as a path segment: digits as they are, a file name percent-encoded.
pub(crate) fn workflow_segment(id: &WorkflowId) -> Result<String, ToolError> {
    let name = match id {
        WorkflowId::Id(n) => return Ok(n.to_string()),
        WorkflowId::Name(name) => name.trim(),
    };
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control());
    if bad {
        return Err(ToolError::InvalidArguments(format!(
            "workflowId must be a numeric id or a workflow file name such as ci.yml (no '/'), not {name:?}"
        )));
    }
    let mut out = String::with_capacity(name.len());
    for &b in name.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(out)
}

arguments! {
    /// `github_list_workflow_runs`' arguments.
    pub(crate) struct RunsArgs: closed {
        flatten at: RepoPage,
        workflow_id: Option<WorkflowId> = Field::id_or_name("workflowId", 1, 255)
            .describe("Only runs of this workflow: its id or file name, e.g. `ci.yml`."),
        branch: Option<String> = Field::string("branch").min(1)
            .describe("Only runs whose head branch is this, e.g. `main`."),
        status: Option<String> = Field::one_of("status", RUN_STATUSES)
            .describe("Only runs with this status or conclusion."),
        event: Option<String> = Field::string("event").min(1)
            .describe("Only runs triggered by this event, e.g. `push`, `pull_request`."),
        actor: Option<String> = Field::string("actor").min(1)
            .describe("Only runs started by this user login."),
    }
}

impl ListTool for RunsArgs {
    const NAME: &'static str = "github_list_workflow_runs";
    const TITLE: &'static str = "List GitHub Actions workflow runs";
    const DESCRIPTION: &'static str = "List a repository's GitHub Actions workflow runs, newest \
first. Result: `{data, nextPage}`, `data` being GitHub's response (`total_count`, `workflow_runs` \
with id, name, head_branch, head_sha, event, status, conclusion, created_at, html_url...) after \
`jq`, `nextPage` null on the last page. Runs are about 3 KB each: keep what you need with `jq`, \
e.g. `workflow_runs[*].{id: id, name: name, conclusion: conclusion}`. Why a run failed: \
github_get_job_logs with its id. Live data, never cached.";

    fn page(&self) -> &RepoPage {
        &self.at
    }

    fn path(&self) -> Result<String, ToolError> {
        Ok(match &self.workflow_id {
            Some(id) => format!("/actions/workflows/{}/runs", workflow_segment(id)?),
            None => "/actions/runs".to_owned(),
        })
    }

    fn params(&self) -> Vec<(String, String)> {
        let mut params = Vec::new();
        for (name, value) in [
            ("branch", &self.branch),
            ("status", &self.status),
            ("event", &self.event),
            ("actor", &self.actor),
        ] {
            if let Some(v) = value.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
                params.push((name.to_owned(), v.to_owned()));
            }
        }
        params
    }
}

arguments! {
    /// `github_list_workflow_jobs`' arguments.
    pub(crate) struct JobsArgs: closed {
        flatten at: RepoPage,
        run_id: u64 = Field::integer("runId").min(1)
            .describe("A run's `id` from github_list_workflow_runs."),
        filter: Option<String> = Field::one_of("filter", &["latest", "all"])
            .default(Fallback::Text("latest"))
            .describe("Jobs of the latest attempt, or of `all` attempts."),
    }
}

impl ListTool for JobsArgs {
    const NAME: &'static str = "github_list_workflow_jobs";
    const TITLE: &'static str = "List the jobs of a GitHub Actions run";
    const DESCRIPTION: &'static str = "List the jobs of one GitHub Actions workflow run: status, \
conclusion, runner, timing and steps. Result: `{data, nextPage}`, `data` being GitHub's response \
(`total_count`, `jobs`) after `jq`, `nextPage` null on the last page. Failed steps, e.g.: \
`jobs[?conclusion=='failure'].{job: name, failed: steps[?conclusion=='failure'].name}`. Live \
data, never cached.";

    fn page(&self) -> &RepoPage {
        &self.at
    }

    fn path(&self) -> Result<String, ToolError> {
        Ok(format!("/actions/runs/{}/jobs", self.run_id))
    }

    fn params(&self) -> Vec<(String, String)> {
        self.filter
            .iter()
            .map(|filter| ("filter".to_owned(), filter.clone()))
            .collect()
    }
}
