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

fn annotations(title: &str) -> ToolAnnotations {
    ToolAnnotations {
        title: Some(title.to_owned()),
        read_only_hint: Some(true),
        destructive_hint: Some(false),
        idempotent_hint: Some(true),
        open_world_hint: Some(true),
    }
}

/// Schema properties every GitHub tool shares: repository, paging, projection, format.
fn common_properties() -> serde_json::Map<String, Json> {
    let mut props = serde_json::Map::new();
    props.insert(
        "owner".into(),
        json!({"type": "string", "minLength": 1, "maxLength": 100,
               "description": "Repository owner: a user or organization login, e.g. `octo-org`."}),
    );
    props.insert(
        "repo".into(),
        json!({"type": "string", "minLength": 1, "maxLength": 100,
               "description": "Repository name without the owner, e.g. `hello-world`."}),
    );
    props.insert(
        "perPage".into(),
        json!({"type": "integer", "minimum": 1, "maximum": MAX_PER_PAGE, "default": DEFAULT_PER_PAGE,
               "description": "Items per page, 1 to 100 (default 30). Prefer small pages plus `jq` over large pages."}),
    );
    props.insert(
        "page".into(),
        json!({"type": "integer", "minimum": 1,
               "description": "Page number, from 1 (default 1). Pass the previous result's `nextPage` to continue."}),
    );
    args::add_fragments(&mut props, &[JQ, OUTPUT_FORMAT]);
    props
}

pub(super) fn list_runs_spec() -> ToolSpec {
    let mut props = common_properties();
    props.insert(
        "workflowId".into(),
        json!({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "minLength": 1, "maxLength": 255}],
               "description": "Only runs of this workflow: its numeric id or its file name under .github/workflows, e.g. `ci.yml`. Omit for every workflow of the repository."}),
    );
    props.insert(
        "branch".into(),
        json!({"type": "string", "minLength": 1, "description": "Only runs whose head branch is this, e.g. `main`."}),
    );
    props.insert(
        "status".into(),
        json!({"type": "string", "enum": RUN_STATUSES,
               "description": "Only runs with this status (`queued`, `in_progress`, `completed`...) or conclusion (`success`, `failure`, `cancelled`...)."}),
    );
    props.insert(
        "event".into(),
        json!({"type": "string", "minLength": 1, "description": "Only runs triggered by this event, e.g. `push`, `pull_request`, `schedule`, `workflow_dispatch`."}),
    );
    props.insert(
        "actor".into(),
        json!({"type": "string", "minLength": 1, "description": "Only runs started by this user login."}),
    );
    ToolSpec {
        descriptor: ToolDescriptor {
        name: LIST_RUNS.into(),
        title: Some("List GitHub Actions workflow runs".into()),
        description: "List GitHub Actions workflow runs of a repository, newest first, optionally for one \
workflow (`workflowId`) and filtered by branch, status or conclusion, event and actor. The result is \
`{data, nextPage}`: `data` is GitHub's response (`total_count` and `workflow_runs`, each run with id, name, \
head_branch, head_sha, event, status, conclusion, run_number, run_attempt, created_at, html_url...) after the \
optional `jq` filter, and `nextPage` is the page to ask for next, or null on the last page. Runs are large \
(about 3 KB each): use `jq` to keep the fields you need, e.g. `workflow_runs[*].{id: id, name: name, \
branch: head_branch, status: status, conclusion: conclusion, url: html_url}`. To find why a run failed, take \
its id and call github_list_workflow_jobs. Always live data, never cached."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": props,
            "required": ["owner", "repo"],
            "additionalProperties": false
        }),
        output_schema: Some(Contract::Paged.output_schema()),
        annotations: Some(annotations("List GitHub Actions workflow runs")),
        },
        access: Access::Rules,
    }
}

pub(super) fn list_jobs_spec() -> ToolSpec {
    let mut props = common_properties();
    props.insert(
        "runId".into(),
        json!({"type": "integer", "minimum": 1, "description": "The workflow run id (`id` of a run from github_list_workflow_runs)."}),
    );
    props.insert(
        "filter".into(),
        json!({"type": "string", "enum": ["latest", "all"], "default": "latest",
               "description": "`latest` (default): jobs of the run's latest attempt; `all`: jobs of every attempt."}),
    );
    ToolSpec {
        descriptor: ToolDescriptor {
        name: LIST_JOBS.into(),
        title: Some("List the jobs of a GitHub Actions run".into()),
        description: "List the jobs of one GitHub Actions workflow run, with each job's status, conclusion, \
runner, timing and steps (each step with name, status, conclusion and number). The result is `{data, \
nextPage}`: `data` is GitHub's response (`total_count` and `jobs`) after the optional `jq` filter, and \
`nextPage` is the page to ask for next, or null on the last page. To see what failed, filter the steps, e.g. \
`jobs[?conclusion=='failure'].{job: name, url: html_url, failed: steps[?conclusion=='failure'].name}`. \
Always live data, never cached."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": props,
            "required": ["owner", "repo", "runId"],
            "additionalProperties": false
        }),
        output_schema: Some(Contract::Paged.output_schema()),
        annotations: Some(annotations("List the jobs of a GitHub Actions run")),
        },
        access: Access::Rules,
    }
}
