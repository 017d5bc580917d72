//! CircleCI's half of the CI loop: `circleci_get_workflow` (a workflow and its failed jobs, for
//! `circleci_get_job_logs`, optionally waiting for it to reach a final state with the polls
//! GitHub's runs are waited with) and `circleci_rerun_workflow` (a write, sent once).

use crate::mcp::CallToolResult;
use crate::tools::args::{arguments, Fallback, Field};
use crate::tools::ciloop::{
    get, number, read_spec, respond, send_write, text_or_null, wait, write_failed_jobs, write_spec,
    WAIT_SECONDS,
};
use crate::tools::logs::int;
use crate::tools::registry::{
    Planned, Tool, ToolContext, ToolError, ToolSpec, Upstream, UpstreamTool,
};
use crate::upstream::{ApiPath, Method, Target, Targets, UpstreamError, UpstreamSettings, Vendor};
use crate::value::{Map, Value};

/// The tools, for the registry.
pub(crate) fn tools() -> Vec<Box<dyn Tool>> {
    vec![
        Box::new(Upstream(GetWorkflow(read_spec::<GetArgs>(
            "circleci_get_workflow",
            "Get a CircleCI workflow",
            "A CircleCI workflow and its failed jobs (jobNumber, name, status) for \
circleci_get_job_logs. `waitSeconds`: wait here for it to finish.",
        )))),
        Box::new(Upstream(Rerun(write_spec::<RerunArgs>(
            "circleci_rerun_workflow",
            "Re-run a CircleCI workflow",
            "Re-run a finished workflow from its failed jobs, or all; answers the new workflowId.",
            (false, false),
        )))),
    ]
}

/// Workflow statuses after which nothing changes without a re-run. `running`, `failing` (a job
/// failed, others still run) and `on_hold` (an approval job waits for a person) are waited on,
/// and so is a status CircleCI adds later: `completed` is never claimed for one not known final.
const FINAL: &[&str] = &[
    "success",
    "failed",
    "error",
    "canceled",
    "unauthorized",
    "not_run",
];
/// Job statuses that mean the job did not succeed.
const FAILED: &[&str] = &[
    "failed",
    "infrastructure_fail",
    "timedout",
    "terminated-unknown",
    "canceled",
];
/// Most pages of a workflow's job list read (CircleCI pages them by `next_page_token`).
const MAX_JOB_PAGES: usize = 5;

/// `workflowId`.
const WORKFLOW_ID: Field = Field::string("workflowId").describe("A workflow's `id` (UUID).");

arguments! {
    /// `circleci_get_workflow`'s arguments.
    pub(crate) struct GetArgs: closed {
        workflow_id: String = WORKFLOW_ID,
        wait_seconds: u64 = WAIT_SECONDS,
    }
}

arguments! {
    /// `circleci_rerun_workflow`'s arguments.
    pub(crate) struct RerunArgs: closed {
        workflow_id: String = WORKFLOW_ID,
        from_failed: bool = Field::boolean("fromFailed").default(Fallback::Boolean(true))
            .describe("Only failed jobs and dependents."),
    }
}

/// A workflow id checked as a UUID (8-4-4-4-12 hex digits) and put in lower case, the one form
/// sent and matched by policy; anything else would bend or hide the path.
fn workflow_id(text: &str) -> Result<String, ToolError> {
    let id = text.trim().to_ascii_lowercase();
    let ok = id.len() == 36
        && id.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    if ok {
        Ok(id)
    } else {
        Err(ToolError::InvalidArguments(format!(
            "workflowId must be a CircleCI workflow id, a UUID such as \
             5034460f-c7c4-4c43-9457-de07e2029e7b, not {text:?}"
        )))
    }
}

/// The CircleCI target of `method` on `/workflow/{id}` and then `tail`.
fn target(method: Method, id: &str, tail: &str) -> Result<Target, ToolError> {
    // The id was checked, so this only fails on a programming error.
    let path = ApiPath::parse(&format!("/workflow/{id}{tail}"))
        .map_err(|e| ToolError::Internal(format!("built path refused: {e}")))?;
    Ok(Target::new(Vendor::CircleCi, method, &path))
}

/// Whether CircleCI says the workflow is in a final state.
fn is_final(workflow: &Value) -> bool {
    workflow
        .get("status")
        .and_then(Value::as_str)
        .is_some_and(|s| FINAL.contains(&s))
}

/// The fields of a workflow worth a model's tokens; `projectSlug` is what
/// `circleci_get_job_logs` takes with a job number.
fn summary(workflow: &Value) -> Value {
    let mut map = Map::new();
    for (name, key) in [
        ("id", "id"),
        ("name", "name"),
        ("status", "status"),
        ("projectSlug", "project_slug"),
        ("pipelineId", "pipeline_id"),
    ] {
        map.insert(name.into(), text_or_null(workflow, key));
    }
    map.insert(
        "pipelineNumber".into(),
        number(workflow, "pipeline_number").map_or(Value::Null, int),
    );
    for (name, key) in [("createdAt", "created_at"), ("stoppedAt", "stopped_at")] {
        map.insert(name.into(), text_or_null(workflow, key));
    }
    Value::Object(map)
}

/// The jobs of one page of a workflow's job list that did not succeed:
/// `{jobNumber, name, status}`.
fn failed_on_page(page: &Value, out: &mut Vec<Value>) {
    let Some(Value::Array(jobs)) = page.get("items") else {
        return;
    };
    for job in jobs {
        let status = job.get("status").and_then(Value::as_str);
        if !status.is_some_and(|s| FAILED.contains(&s)) {
            continue;
        }
        let mut map = Map::new();
        map.insert(
            "jobNumber".into(),
            number(job, "job_number").map_or(Value::Null, int),
        );
        map.insert("name".into(), text_or_null(job, "name"));
        map.insert("status".into(), text_or_null(job, "status"));
        out.push(Value::Object(map));
    }
}

/// The failed jobs of a workflow, over up to [`MAX_JOB_PAGES`] pages of its job list.
async fn failed_jobs(call: &ToolContext<'_>, jobs: &Target) -> Result<Value, UpstreamError> {
    let mut failed = Vec::new();
    let mut query = Vec::new();
    for _ in 0..MAX_JOB_PAGES {
        let page = get(call, jobs, &query).await?.body;
        failed_on_page(&page, &mut failed);
        match page.get("next_page_token").and_then(Value::as_str) {
            Some(token) if !token.is_empty() => {
                query = vec![("page-token".to_owned(), token.to_owned())];
            }
            _ => break,
        }
    }
    Ok(Value::Array(failed))
}

/// What a read of a workflow uses: the workflow's request and its job list's.
struct GetPlan {
    workflow: Target,
    jobs: Target,
}

struct GetWorkflow(ToolSpec);

impl UpstreamTool for GetWorkflow {
    type Args = GetArgs;
    type Plan = GetPlan;

    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn plan(&self, args: &GetArgs, _: &UpstreamSettings) -> Planned<GetPlan> {
        let id = workflow_id(&args.workflow_id)?;
        let plan = GetPlan {
            workflow: target(Method::Get, &id, "")?,
            jobs: target(Method::Get, &id, "/job")?,
        };
        Ok((
            Targets::one(plan.workflow.clone()).and(plan.jobs.clone()),
            plan,
        ))
    }

    async fn run(
        &self,
        args: GetArgs,
        plan: GetPlan,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let (workflow, waited) = wait(&call, &plan.workflow, args.wait_seconds, is_final).await?;
        let mut map = Map::new();
        map.insert("workflow".into(), summary(&workflow));
        write_failed_jobs(&mut map, failed_jobs(&call, &plan.jobs).await);
        waited.write(&mut map);
        Ok(respond(&call, map, true).await)
    }
}

/// What a re-run sends.
struct RerunPlan {
    id: String,
    write: Target,
}

struct Rerun(ToolSpec);

impl UpstreamTool for Rerun {
    type Args = RerunArgs;
    type Plan = RerunPlan;

    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn plan(&self, args: &RerunArgs, _: &UpstreamSettings) -> Planned<RerunPlan> {
        let id = workflow_id(&args.workflow_id)?;
        let write = target(Method::Post, &id, "/rerun")?;
        Ok((Targets::one(write.clone()), RerunPlan { id, write }))
    }

    /// Sends `{from_failed}` once and answers the workflow CircleCI started.
    async fn run(
        &self,
        args: RerunArgs,
        plan: RerunPlan,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let mut body = Map::new();
        body.insert("from_failed".into(), Value::Bool(args.from_failed));
        let what = format!("re-run workflow {}", plan.id);
        let reply = send_write(&call, &plan.write, Some(&Value::Object(body)), &what).await?;
        let mut map = Map::new();
        map.insert("rerunOf".into(), Value::String(plan.id));
        map.insert("fromFailed".into(), Value::Bool(args.from_failed));
        map.insert(
            "workflowId".into(),
            text_or_null(&reply.body, "workflow_id"),
        );
        Ok(respond(&call, map, false).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn workflow_ids_are_uuids_in_lower_case() {
        assert_eq!(
            workflow_id(" 5034460F-C7C4-4C43-9457-DE07E2029E7B ").unwrap(),
            "5034460f-c7c4-4c43-9457-de07e2029e7b"
        );
        for bad in [
            "",
            "5034460f",
            "5034460f-c7c4-4c43-9457-de07e2029e7",
            "5034460f-c7c4-4c43-9457-de07e2029e7bb",
            "5034460fxc7c4-4c43-9457-de07e2029e7b",
            "5034460g-c7c4-4c43-9457-de07e2029e7b",
            "../../me/c7c4-4c43-9457-de07e2029e7b",
            "5034460f-c7c4-4c43-9457-de07e2029e/b",
        ] {
            match workflow_id(bad) {
                Err(ToolError::InvalidArguments(m)) => assert!(m.contains("UUID"), "{m}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn targets_are_the_workflow_its_jobs_and_the_rerun() {
        let id = "5034460f-c7c4-4c43-9457-de07e2029e7b";
        let get = GetWorkflow(read_spec::<GetArgs>("t", "t", "t"));
        let args = GetArgs {
            workflow_id: id.to_uppercase(),
            wait_seconds: 0,
        };
        let settings = UpstreamSettings::default();
        let (_, plan) = get.plan(&args, &settings).unwrap();
        assert_eq!(plan.workflow.path(), format!("/workflow/{id}"));
        assert_eq!(plan.jobs.path(), format!("/workflow/{id}/job"));
        assert_eq!(plan.jobs.vendor, Vendor::CircleCi);
        let rerun = Rerun(write_spec::<RerunArgs>("t", "t", "t", (false, false)));
        let args = RerunArgs {
            workflow_id: id.into(),
            from_failed: true,
        };
        let (_, plan) = rerun.plan(&args, &settings).unwrap();
        assert_eq!(
            (plan.write.method, plan.write.path()),
            (Method::Post, format!("/workflow/{id}/rerun").as_str())
        );
    }

    #[test]
    fn final_states_end_a_wait_and_others_do_not() {
        let status = |s: &str| crate::tools::output::json_to_value(&json!({ "status": s }));
        for s in FINAL {
            assert!(is_final(&status(s)), "{s}");
        }
        for s in ["running", "failing", "on_hold", "something_new"] {
            assert!(!is_final(&status(s)), "{s}");
        }
        assert!(!is_final(&Value::Null));
    }

    #[test]
    fn failed_jobs_keep_number_name_and_status() {
        let page = crate::tools::output::json_to_value(&json!({"items": [
            {"job_number": 7, "name": "build", "status": "success"},
            {"job_number": 8, "name": "test", "status": "failed"},
            {"job_number": 9, "name": "lint", "status": "infrastructure_fail"},
            {"name": "hold", "status": "on_hold", "type": "approval"},
        ]}));
        let mut out = Vec::new();
        failed_on_page(&page, &mut out);
        assert_eq!(
            Value::Array(out).to_compact_json(),
            r#"[{"jobNumber":8,"name":"test","status":"failed"},{"jobNumber":9,"name":"lint","status":"infrastructure_fail"}]"#
        );
    }
}
