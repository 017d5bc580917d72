//! `github_get_workflow_run`: one GitHub Actions run with its failed jobs (id, name, the failed
//! step's name), so the next call can go straight to `github_get_job_logs`. With `waitSeconds`
//! the call polls the run until it completes or the time passes ([`crate::tools::ciloop::wait`]).

use crate::mcp::CallToolResult;
use crate::tools::args::{arguments, Field};
use crate::tools::ciloop::{
    get, number, read_spec, respond, text_or_null, wait, write_failed_jobs, WAIT_SECONDS,
};
use crate::tools::github::name_segment;
use crate::tools::logs::github::{parse_url, What};
use crate::tools::logs::int;
use crate::tools::registry::{
    Planned, Tool, ToolContext, ToolError, ToolSpec, Upstream, UpstreamTool,
};
use crate::upstream::{ApiPath, Method, Target, Targets, UpstreamSettings, Vendor};
use crate::value::{Map, Value};

/// The tool's name.
pub(crate) const NAME: &str = "github_get_workflow_run";
/// Job conclusions that mean the job did not succeed.
const FAILED: &[&str] = &["failure", "timed_out", "cancelled", "startup_failure"];

/// The tool, for the registry.
pub(crate) fn tool() -> Box<dyn Tool> {
    Box::new(Upstream(GetRun(read_spec::<RunArgs>(
        NAME,
        "Get a GitHub Actions run",
        "A GitHub Actions run and its failed jobs (id, name, failedStep) for \
github_get_job_logs. `waitSeconds`: wait here for it to complete (cheap polls).",
    ))))
}

arguments! {
    /// `github_get_workflow_run`'s arguments.
    pub(crate) struct RunArgs: closed {
        flatten at: RunArgsAt,
        attempt: Option<u64> = Field::integer("attempt").min(1)
            .describe("An earlier attempt."),
        wait_seconds: u64 = WAIT_SECONDS,
    }
}

arguments! {
    /// The run a tool acts on: `owner`, `repo` and `runId`, or a run `url`.
    pub(crate) struct RunArgsAt: closed {
        owner: Option<String> = OWNER_NAME,
        repo: Option<String> = REPO_NAME,
        run_id: Option<u64> = RUN_ID,
        url: Option<String> = Field::string("url").min(1).max(500)
            .describe("Or the run's web URL."),
    }
}

/// `owner`, without the description and bounds a model does not need (the name is checked as
/// a path segment before anything is sent): the GitHub toolset's list stays small with the
/// writes in it.
pub(crate) const OWNER_NAME: Field = Field::string("owner");
/// `repo`, likewise.
pub(crate) const REPO_NAME: Field = Field::string("repo");
/// `runId`.
pub(crate) const RUN_ID: Field = Field::integer("runId").min(1).describe("A run's `id`.");

/// One run of one repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunRef {
    /// The owner, checked as a path segment.
    pub(crate) owner: String,
    /// The repository, checked as a path segment.
    pub(crate) repo: String,
    /// The run's id.
    pub(crate) id: u64,
}

impl RunArgsAt {
    /// The run the arguments name: `runId` with `owner` and `repo`, or a run `url` (on
    /// github.com or the configured GitHub Enterprise host), whose owner and repository any
    /// given ones must match.
    pub(crate) fn run(&self, api_base: &str) -> Result<RunRef, ToolError> {
        let invalid = |m: String| ToolError::InvalidArguments(m);
        let from_url = match (&self.url, self.run_id) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(invalid("give exactly one of runId and url".into()))
            }
            (Some(url), None) => match parse_url(url, api_base)? {
                s if matches!(s.what, What::Run(_)) => Some(s),
                _ => {
                    return Err(invalid(format!(
                        "url must be a run URL, not a job's: {url:?}"
                    )))
                }
            },
            (None, Some(_)) => None,
        };
        let pick = |field: &str, arg: &Option<String>, url: Option<&String>| match (arg, url) {
            (Some(a), Some(u)) if !a.trim().eq_ignore_ascii_case(u) => Err(invalid(format!(
                "{field} {a:?} does not match the url's {u:?}"
            ))),
            (_, Some(u)) => name_segment(field, u),
            (Some(a), None) => name_segment(field, a),
            (None, None) => Err(invalid(format!("{field} is required with runId"))),
        };
        let owner = pick("owner", &self.owner, from_url.as_ref().map(|s| &s.owner))?;
        let repo = pick("repo", &self.repo, from_url.as_ref().map(|s| &s.repo))?;
        let id = match (self.run_id, from_url.map(|s| s.what)) {
            (Some(id), _) | (None, Some(What::Run(id))) => id,
            _ => return Err(invalid("give exactly one of runId and url".into())),
        };
        Ok(RunRef { owner, repo, id })
    }
}

impl RunRef {
    /// `/repos/{owner}/{repo}/actions/runs/{id}` and then `tail`.
    pub(crate) fn path(&self, tail: &str) -> String {
        format!(
            "/repos/{}/{}/actions/runs/{}{tail}",
            self.owner, self.repo, self.id
        )
    }

    /// The target of `method` on [`RunRef::path`] with `tail`.
    pub(crate) fn target(&self, method: Method, tail: &str) -> Result<Target, ToolError> {
        target(method, &self.path(tail))
    }
}

/// The GitHub target of `method` on `path`, a path built from checked segments.
pub(crate) fn target(method: Method, path: &str) -> Result<Target, ToolError> {
    // Segments were checked, so this only fails on a programming error.
    let path = ApiPath::parse(path)
        .map_err(|e| ToolError::Internal(format!("built path refused: {e}")))?;
    Ok(Target::new(Vendor::GitHub, method, &path))
}

/// What the run of a call uses: the run's request and its job list's.
pub(crate) struct Plan {
    run: Target,
    jobs: Target,
    latest: bool,
}

struct GetRun(ToolSpec);

impl UpstreamTool for GetRun {
    type Args = RunArgs;
    type Plan = Plan;

    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    /// The run (or one attempt of it), and its job list once, for the failed jobs.
    fn plan(&self, args: &Self::Args, upstream: &UpstreamSettings) -> Planned<Plan> {
        let run = args.at.run(&upstream.github_api_url)?;
        let attempt = args
            .attempt
            .map(|n| format!("/attempts/{n}"))
            .unwrap_or_default();
        let plan = Plan {
            run: run.target(Method::Get, &attempt)?,
            jobs: run.target(Method::Get, &format!("{attempt}/jobs"))?,
            latest: args.attempt.is_none(),
        };
        Ok((Targets::one(plan.run.clone()).and(plan.jobs.clone()), plan))
    }

    async fn run(
        &self,
        args: Self::Args,
        plan: Plan,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let (run, waited) = wait(&call, &plan.run, args.wait_seconds, is_completed).await?;
        let mut query = vec![("per_page".to_owned(), "100".to_owned())];
        if plan.latest {
            query.insert(0, ("filter".to_owned(), "latest".to_owned()));
        }
        let mut map = Map::new();
        map.insert("run".into(), summary(&run));
        let jobs = get(&call, &plan.jobs, &query).await;
        write_failed_jobs(&mut map, jobs.map(|jobs| failed_jobs(&jobs.body)));
        waited.write(&mut map);
        Ok(respond(&call, map, true).await)
    }
}

/// Whether GitHub says the run is completed.
pub(crate) fn is_completed(run: &Value) -> bool {
    run.get("status").and_then(Value::as_str) == Some("completed")
}

/// The fields of a run worth a model's tokens.
pub(crate) fn summary(run: &Value) -> Value {
    let mut map = Map::new();
    for (name, key) in [
        ("id", "id"),
        ("attempt", "run_attempt"),
        ("workflowId", "workflow_id"),
    ] {
        map.insert(name.into(), number(run, key).map_or(Value::Null, int));
    }
    for (name, key) in [
        ("name", "name"),
        ("status", "status"),
        ("conclusion", "conclusion"),
        ("event", "event"),
        ("branch", "head_branch"),
        ("sha", "head_sha"),
        ("url", "html_url"),
        ("createdAt", "created_at"),
        ("updatedAt", "updated_at"),
    ] {
        map.insert(name.into(), text_or_null(run, key));
    }
    Value::Object(map)
}

/// The jobs of a job list that did not succeed: `{id, name, conclusion, failedStep}`.
fn failed_jobs(list: &Value) -> Value {
    let Some(Value::Array(jobs)) = list.get("jobs") else {
        return Value::Array(Vec::new());
    };
    let failed = jobs
        .iter()
        .filter(|job| {
            job.get("conclusion")
                .and_then(Value::as_str)
                .is_some_and(|c| FAILED.contains(&c))
        })
        .map(|job| {
            let mut map = Map::new();
            map.insert("id".into(), number(job, "id").map_or(Value::Null, int));
            map.insert("name".into(), text_or_null(job, "name"));
            map.insert("conclusion".into(), text_or_null(job, "conclusion"));
            let step = match job.get("steps") {
                Some(Value::Array(steps)) => steps.iter().find(|s| {
                    s.get("conclusion")
                        .and_then(Value::as_str)
                        .is_some_and(|c| FAILED.contains(&c))
                }),
                _ => None,
            };
            map.insert(
                "failedStep".into(),
                step.map_or(Value::Null, |s| text_or_null(s, "name")),
            );
            Value::Object(map)
        })
        .collect();
    Value::Array(failed)
}
