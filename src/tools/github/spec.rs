//! The GitHub tools' metadata: names, descriptions that teach a model to use them, argument
//! schemas and annotations, and the argument bounds the handlers enforce.

use super::{LIST_JOBS, LIST_RUNS};
use crate::mcp::{ToolAnnotations, ToolDescriptor};
use crate::structured::Contract;
use crate::tools::args::{self, JQ, OUTPUT_FORMAT};
use crate::tools::registry::{Access, ToolSpec};
use serde_json::{json, Value as Json};

/// Page size when none is given (GitHub's own default).
pub(super) const DEFAULT_PER_PAGE: u64 = 30;
/// GitHub's largest page.
pub(super) const MAX_PER_PAGE: u64 = 100;

/// What GitHub accepts in the runs `status` filter: statuses and conclusions.
pub(super) const RUN_STATUSES: &[&str] = &[
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

/// Schema properties every GitHub tool shares: repository, paging, projection, format.
fn common_properties() -> serde_json::Map<String, Json> {
    let mut props = serde_json::Map::new();
    props.insert(
        "owner".into(),
        json!({"type": "string", "minLength": 1, "maxLength": 100,
               "description": "User or organization login, e.g. `octo-org`."}),
    );
    props.insert(
        "repo".into(),
        json!({"type": "string", "minLength": 1, "maxLength": 100,
               "description": "Repository name, e.g. `hello-world`."}),
    );
    props.insert(
        "perPage".into(),
        json!({"type": "integer", "minimum": 1, "maximum": MAX_PER_PAGE, "default": DEFAULT_PER_PAGE,
               "description": "Items per page."}),
    );
    props.insert(
        "page".into(),
        json!({"type": "integer", "minimum": 1,
               "description": "Page to read: 1, or a result's `nextPage`."}),
    );
    args::add_fragments(&mut props, &[JQ, OUTPUT_FORMAT]);
    props
}

pub(super) fn list_runs_spec() -> ToolSpec {
    let mut props = common_properties();
    props.insert(
        "workflowId".into(),
        json!({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "minLength": 1, "maxLength": 255}],
               "description": "Only runs of this workflow: its id or file name, e.g. `ci.yml`."}),
    );
    props.insert(
        "branch".into(),
        json!({"type": "string", "minLength": 1, "description": "Only runs whose head branch is this, e.g. `main`."}),
    );
    props.insert(
        "status".into(),
        json!({"type": "string", "enum": RUN_STATUSES,
               "description": "Only runs with this status or conclusion."}),
    );
    props.insert(
        "event".into(),
        json!({"type": "string", "minLength": 1, "description": "Only runs triggered by this event, e.g. `push`, `pull_request`."}),
    );
    props.insert(
        "actor".into(),
        json!({"type": "string", "minLength": 1, "description": "Only runs started by this user login."}),
    );
    ToolSpec {
        descriptor: ToolDescriptor {
        name: LIST_RUNS.into(),
        title: Some("List GitHub Actions workflow runs".into()),
        description: "List a repository's GitHub Actions workflow runs, newest first. Result: `{data, \
nextPage}`, `data` being GitHub's response (`total_count`, `workflow_runs` with id, name, head_branch, \
head_sha, event, status, conclusion, created_at, html_url...) after `jq`, `nextPage` null on the last page. \
Runs are about 3 KB each: keep what you need with `jq`, e.g. `workflow_runs[*].{id: id, name: name, \
conclusion: conclusion}`. Why a run failed: github_get_job_logs with its id. Live data, never cached."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": props,
            "required": ["owner", "repo"],
            "additionalProperties": false
        }),
        output_schema: Some(Contract::Paged.output_schema()),
        annotations: Some(ToolAnnotations::reads_upstream("List GitHub Actions workflow runs")),
        },
        access: Access::Rules,
    }
}

pub(super) fn list_jobs_spec() -> ToolSpec {
    let mut props = common_properties();
    props.insert(
        "runId".into(),
        json!({"type": "integer", "minimum": 1, "description": "A run's `id` from github_list_workflow_runs."}),
    );
    props.insert(
        "filter".into(),
        json!({"type": "string", "enum": ["latest", "all"], "default": "latest",
               "description": "Jobs of the latest attempt, or of `all` attempts."}),
    );
    ToolSpec {
        descriptor: ToolDescriptor {
        name: LIST_JOBS.into(),
        title: Some("List the jobs of a GitHub Actions run".into()),
        description: "List the jobs of one GitHub Actions workflow run: status, conclusion, runner, timing \
and steps. Result: `{data, nextPage}`, `data` being GitHub's response (`total_count`, `jobs`) after `jq`, \
`nextPage` null on the last page. Failed steps, e.g.: `jobs[?conclusion=='failure'].{job: name, failed: \
steps[?conclusion=='failure'].name}`. Live data, never cached."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": props,
            "required": ["owner", "repo", "runId"],
            "additionalProperties": false
        }),
        output_schema: Some(Contract::Paged.output_schema()),
        annotations: Some(ToolAnnotations::reads_upstream(
            "List the jobs of a GitHub Actions run",
        )),
        },
        access: Access::Rules,
    }
}
