//! The GitHub Actions writes that close the CI loop: `github_rerun_workflow_run`,
//! `github_cancel_workflow_run` and `github_dispatch_workflow`. Each declares every request it
//! sends (the write, and the reads that tell what it started), so a policy rule matches the REST
//! path of the write itself. A write is sent once: never retried, whatever GitHub answers.

use super::run::{summary, target, RunRef, OWNER_NAME, REPO_NAME, RUN_ID};
use super::spec::{workflow_segment, WorkflowId};
use crate::mcp::CallToolResult;
use crate::time::{iso8601_utc_ms, parse_iso8601_seconds};
use crate::tools::args::{arguments, Fallback, Field};
use crate::tools::ciloop::{get, number, respond, send_write, write_spec};
use crate::tools::github::name_segment;
use crate::tools::logs::int;
use crate::tools::output::json_to_value;
use crate::tools::registry::{
    Planned, Tool, ToolContext, ToolError, ToolSpec, Upstream, UpstreamTool,
};
use crate::upstream::{Method, Target, Targets, UpstreamError, UpstreamSettings};
use crate::value::{Map, Value};
use serde_json::{Map as JsonMap, Value as Json};

/// The tools, for the registry.
pub(crate) fn tools() -> Vec<Box<dyn Tool>> {
    vec![
        Box::new(Upstream(Rerun(write_spec::<RerunArgs>(
            "github_rerun_workflow_run",
            "Re-run a GitHub Actions run",
            "Re-run a run's failed jobs (and dependents), or all; answers the new attempt.",
            (false, false),
        )))),
        Box::new(Upstream(Cancel(write_spec::<CancelArgs>(
            "github_cancel_workflow_run",
            "Cancel a GitHub Actions run",
            "Cancel a GitHub Actions run.",
            (true, true),
        )))),
        Box::new(Upstream(Dispatch(write_spec::<DispatchArgs>(
            "github_dispatch_workflow",
            "Start a GitHub Actions workflow",
            "Start a `workflow_dispatch` workflow; answers its run when known.",
            (false, false),
        )))),
    ]
}

arguments! {
    /// The run a write acts on.
    pub(crate) struct RunIdArgs: closed {
        owner: String = OWNER_NAME,
        repo: String = REPO_NAME,
        run_id: u64 = RUN_ID,
    }
}

impl RunIdArgs {
    /// The run, its names checked as path segments.
    fn run(&self) -> Result<RunRef, ToolError> {
        Ok(RunRef {
            owner: name_segment("owner", &self.owner)?,
            repo: name_segment("repo", &self.repo)?,
            id: self.run_id,
        })
    }
}

arguments! {
    /// `github_rerun_workflow_run`'s arguments.
    pub(crate) struct RerunArgs: closed {
        flatten at: RunIdArgs,
        failed_only: bool = Field::boolean("failedOnly").default(Fallback::Boolean(true))
            .describe("Only failed jobs and dependents."),
        debug_logging: bool = Field::boolean("debugLogging").default(Fallback::Boolean(false))
            .describe("Debug logs."),
    }
}

arguments! {
    /// `github_cancel_workflow_run`'s arguments.
    pub(crate) struct CancelArgs: closed {
        flatten at: RunIdArgs,
        force: bool = Field::boolean("force").default(Fallback::Boolean(false))
            .describe("For a run stuck in cancelling."),
    }
}

arguments! {
    /// `github_dispatch_workflow`'s arguments.
    pub(crate) struct DispatchArgs: closed {
        owner: String = OWNER_NAME,
        repo: String = REPO_NAME,
        workflow: WorkflowId = Field::id_or_name("workflow", 1, 255)
            .describe("Id or file name, e.g. `deploy.yml`."),
        git_ref: String = Field::string("ref").min(1).max(255)
            .describe("Branch or tag."),
        inputs: Option<JsonMap<String, Json>> = Field::object("inputs")
            .describe("Inputs by name."),
    }
}

/// The body `{enable_debug_logging}`.
fn debug_body(debug: bool) -> Value {
    let mut map = Map::new();
    map.insert("enable_debug_logging".into(), Value::Bool(debug));
    Value::Object(map)
}

/// What a re-run sends and reads back.
struct RerunPlan {
    id: u64,
    write: Target,
    run: Target,
}

struct Rerun(ToolSpec);

impl UpstreamTool for Rerun {
    type Args = RerunArgs;
    type Plan = RerunPlan;

    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    /// The re-run's POST, then a GET of the run for the attempt it started.
    fn plan(&self, args: &RerunArgs, _: &UpstreamSettings) -> Planned<RerunPlan> {
        let run = args.at.run()?;
        let tail = if args.failed_only {
            "/rerun-failed-jobs"
        } else {
            "/rerun"
        };
        let plan = RerunPlan {
            id: run.id,
            write: run.target(Method::Post, tail)?,
            run: run.target(Method::Get, "")?,
        };
        Ok((Targets::one(plan.write.clone()).and(plan.run.clone()), plan))
    }

    async fn run(
        &self,
        args: RerunArgs,
        plan: RerunPlan,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let body = debug_body(args.debug_logging);
        let what = format!("re-run run {}", plan.id);
        send_write(&call, &plan.write, Some(&body), &what).await?;
        let mut map = Map::new();
        map.insert("rerun".into(), Value::Bool(true));
        map.insert("failedOnly".into(), Value::Bool(args.failed_only));
        match get(&call, &plan.run, &[]).await {
            Ok(run) => {
                map.insert(
                    "attempt".into(),
                    number(&run.body, "run_attempt").map_or(Value::Null, int),
                );
                map.insert("run".into(), summary(&run.body));
            }
            Err(error) => {
                map.insert("attempt".into(), Value::Null);
                map.insert(
                    "note".into(),
                    Value::String(format!(
                        "The re-run was requested; reading the run back failed: {}",
                        error.text()
                    )),
                );
            }
        }
        Ok(respond(&call, map, false).await)
    }
}

/// What a cancellation sends.
struct CancelPlan {
    id: u64,
    write: Target,
}

struct Cancel(ToolSpec);

impl UpstreamTool for Cancel {
    type Args = CancelArgs;
    type Plan = CancelPlan;

    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn plan(&self, args: &CancelArgs, _: &UpstreamSettings) -> Planned<CancelPlan> {
        let run = args.at.run()?;
        let tail = if args.force {
            "/force-cancel"
        } else {
            "/cancel"
        };
        let plan = CancelPlan {
            id: run.id,
            write: run.target(Method::Post, tail)?,
        };
        Ok((Targets::one(plan.write.clone()), plan))
    }

    async fn run(
        &self,
        args: CancelArgs,
        plan: CancelPlan,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let what = format!("cancel run {}", plan.id);
        send_write(&call, &plan.write, None, &what).await?;
        let mut map = Map::new();
        map.insert("runId".into(), int(plan.id));
        map.insert("cancelRequested".into(), Value::Bool(true));
        map.insert("force".into(), Value::Bool(args.force));
        Ok(respond(&call, map, false).await)
    }
}

/// What a dispatch sends and reads back.
struct DispatchPlan {
    workflow: String,
    write: Target,
    runs: Target,
}

/// Pauses before each look for the run a dispatch started, when GitHub's answer did not name it:
/// GitHub creates the run a few seconds after it accepts the dispatch.
const LOOKS_MS: [u64; 3] = [0, 2_000, 3_000];

struct Dispatch(ToolSpec);

impl UpstreamTool for Dispatch {
    type Args = DispatchArgs;
    type Plan = DispatchPlan;

    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    /// The dispatch's POST, then the workflow's runs, for the run it started.
    fn plan(&self, args: &DispatchArgs, _: &UpstreamSettings) -> Planned<DispatchPlan> {
        let owner = name_segment("owner", &args.owner)?;
        let repo = name_segment("repo", &args.repo)?;
        let workflow = workflow_segment(&args.workflow)?;
        let base = format!("/repos/{owner}/{repo}/actions/workflows/{workflow}");
        let plan = DispatchPlan {
            workflow: match &args.workflow {
                WorkflowId::Id(id) => id.to_string(),
                WorkflowId::Name(name) => name.trim().to_owned(),
            },
            write: target(Method::Post, &format!("{base}/dispatches"))?,
            runs: target(Method::Get, &format!("{base}/runs"))?,
        };
        Ok((
            Targets::one(plan.write.clone()).and(plan.runs.clone()),
            plan,
        ))
    }

    async fn run(
        &self,
        args: DispatchArgs,
        plan: DispatchPlan,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let mut body = Map::new();
        body.insert("ref".into(), Value::String(args.git_ref.clone()));
        if let Some(inputs) = &args.inputs {
            body.insert(
                "inputs".into(),
                json_to_value(&Json::Object(inputs.clone())),
            );
        }
        body.insert("return_run_details".into(), Value::Bool(true));
        let clock = call.ports.clock;
        let sent_at = clock.now_ms();
        let what = format!("dispatch workflow {}", plan.workflow);
        let reply = send_write(&call, &plan.write, Some(&Value::Object(body)), &what).await?;
        let mut map = Map::new();
        map.insert("dispatched".into(), Value::Bool(true));
        map.insert("workflow".into(), Value::String(plan.workflow.clone()));
        map.insert("ref".into(), Value::String(args.git_ref));
        if let Some(id) = number(&reply.body, "workflow_run_id") {
            map.insert("runId".into(), int(id));
            let url = reply.body.get("html_url").cloned().unwrap_or(Value::Null);
            map.insert("url".into(), url);
            return Ok(respond(&call, map, false).await);
        }
        match started_run(&call, &plan.runs, sent_at).await {
            Ok(Some(run)) => {
                map.insert("runId".into(), number(&run, "id").map_or(Value::Null, int));
                map.insert("run".into(), summary(&run));
            }
            Ok(None) => {
                map.insert("runId".into(), Value::Null);
                map.insert("note".into(), Value::String(format!(
                    "GitHub accepted the dispatch but lists no run of {} created since yet; find it \
                     soon with github_list_workflow_runs (workflowId {}, event workflow_dispatch).",
                    plan.workflow, plan.workflow
                )));
            }
            Err(error) => {
                map.insert("runId".into(), Value::Null);
                map.insert(
                    "note".into(),
                    Value::String(format!(
                        "GitHub accepted the dispatch; looking for its run failed: {}",
                        error.text()
                    )),
                );
            }
        }
        Ok(respond(&call, map, false).await)
    }
}

/// The newest `workflow_dispatch` run of the workflow created since `sent_at_ms` (a few
/// seconds' leeway for clocks), looked for a few times while GitHub creates it.
async fn started_run(
    call: &ToolContext<'_>,
    runs: &Target,
    sent_at_ms: u64,
) -> Result<Option<Value>, UpstreamError> {
    let since_s = (sent_at_ms / 1000).saturating_sub(5);
    let stamp = iso8601_utc_ms(since_s * 1000);
    // GitHub's `created` filter takes whole seconds.
    let stamp = format!("{}Z", stamp.get(..19).unwrap_or(&stamp));
    let query = [
        ("event".to_owned(), "workflow_dispatch".to_owned()),
        ("created".to_owned(), format!(">={stamp}")),
        ("per_page".to_owned(), "5".to_owned()),
    ];
    for pause in LOOKS_MS {
        if pause > 0 {
            call.ports.clock.sleep(pause).await;
        }
        let list = get(call, runs, &query).await?.body;
        let Some(Value::Array(found)) = list.get("workflow_runs") else {
            continue;
        };
        let newest = found.iter().find(|run| {
            run.get("created_at")
                .and_then(Value::as_str)
                .and_then(parse_iso8601_seconds)
                .is_some_and(|at| at >= since_s)
        });
        if let Some(run) = newest {
            return Ok(Some(run.clone()));
        }
    }
    Ok(None)
}
