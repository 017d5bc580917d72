//! `github_get_workflow_run`: one GitHub Actions run with its failed jobs (id, name, the failed
//! step's name), so the next call can go straight to `github_get_job_logs`. With `waitSeconds`
//! the call polls the run until it completes or the time passes, backing off from 5 s to 30 s
//! and pausing for GitHub's rate limits, on the clock port (host tests wait no real time).

use super::fetch::get;
use crate::mcp::{CallToolResult, ToolAnnotations, ToolDescriptor};
use crate::ports::Gone;
use crate::render::OutputFormat;
use crate::structured::{Contract, Envelope};
use crate::tools::args::{arguments, input_schema, Fallback, Field};
use crate::tools::github::name_segment;
use crate::tools::logs::github::{parse_url, What};
use crate::tools::logs::int;
use crate::tools::output::Rendered;
use crate::tools::registry::{
    Access, Planned, Tool, ToolContext, ToolError, ToolSpec, Upstream, UpstreamTool,
};
use crate::upstream::{ApiPath, Method, Target, Targets, UpstreamError, UpstreamSettings, Vendor};
use crate::value::{Map, Value};

/// The tool's name.
pub(crate) const NAME: &str = "github_get_workflow_run";
/// The longest wait a call may ask for, in seconds.
pub(crate) const MAX_WAIT_SECONDS: u64 = 600;
/// The first pause between polls; each next one doubles, up to [`MAX_DELAY_MS`].
const FIRST_DELAY_MS: u64 = 5_000;
/// The longest pause between polls.
const MAX_DELAY_MS: u64 = 30_000;
/// The shortest pause a rate limit makes, so a `Retry-After: 0` cannot make a busy loop.
const MIN_PAUSE_MS: u64 = 1_000;
/// Job conclusions that mean the job did not succeed.
const FAILED: &[&str] = &["failure", "timed_out", "cancelled", "startup_failure"];

/// The tool, for the registry.
pub(crate) fn tool() -> Box<dyn Tool> {
    let title = "Get a GitHub Actions run";
    Box::new(Upstream(GetRun(ToolSpec {
        descriptor: ToolDescriptor {
            name: NAME.into(),
            title: Some(title.into()),
            description: "A GitHub Actions run and its failed jobs (id, name, failedStep) for \
github_get_job_logs. `waitSeconds`: wait here for it to complete (cheap polls)."
                .into(),
            input_schema: input_schema::<RunArgs>(),
            output_schema: Some(Contract::Actions.output_schema()),
            annotations: Some(ToolAnnotations {
                title: None,
                ..ToolAnnotations::reads_upstream(title)
            }),
        },
        access: Access::Rules,
    })))
}

arguments! {
    /// `github_get_workflow_run`'s arguments.
    pub(crate) struct RunArgs: closed {
        flatten at: RunArgsAt,
        attempt: Option<u64> = Field::integer("attempt").min(1)
            .describe("An earlier attempt."),
        wait_seconds: u64 = Field::integer("waitSeconds").max(MAX_WAIT_SECONDS)
            .default(Fallback::Integer(0))
            .describe("Wait up to this long for it to complete."),
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
        let wait_ms = args.wait_seconds.min(MAX_WAIT_SECONDS) * 1000;
        let (run, waited) = wait(&call, &plan.run, wait_ms).await?;
        let mut query = vec![("per_page".to_owned(), "100".to_owned())];
        if plan.latest {
            query.insert(0, ("filter".to_owned(), "latest".to_owned()));
        }
        let mut map = Map::new();
        map.insert("run".into(), summary(&run));
        match get(&call, &plan.jobs, &query).await {
            Ok(jobs) => {
                map.insert("failedJobs".into(), failed_jobs(&jobs.body));
            }
            Err(error) => {
                map.insert("failedJobs".into(), Value::Null);
                map.insert("failedJobsError".into(), Value::String(error.text()));
            }
        }
        waited.write(&mut map);
        Ok(respond(&call, map, true).await)
    }
}

/// The answer: `value` rendered as TOON (the default format; the tools that change or wait
/// for a run take no `outputFormat` or `jq`, their answers being small), with the data-only
/// envelope when the tool has an output schema (`structured`).
pub(crate) async fn respond(
    call: &ToolContext<'_>,
    value: Map,
    structured: bool,
) -> CallToolResult {
    let rendered = Rendered::new(Value::Object(value), OutputFormat::Toon, call.settings);
    let rendered = if structured {
        rendered.with_envelope(Envelope::DataOnly)
    } else {
        rendered
    };
    rendered.finish(call).await
}

/// How a wait went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Waited {
    /// Whether the run had completed at the last poll.
    pub(crate) completed: bool,
    /// Milliseconds from the first poll to the answer.
    pub(crate) waited_ms: u64,
    /// Requests for the run made.
    pub(crate) polls: u64,
    /// Of those, the ones GitHub answered 304 Not Modified.
    pub(crate) revalidated: u64,
    /// Why the wait stopped before the run completed or the time passed, if it did.
    pub(crate) note: Option<String>,
}

impl Waited {
    fn write(self, map: &mut Map) {
        map.insert("completed".into(), Value::Bool(self.completed));
        map.insert("waitedMs".into(), int(self.waited_ms));
        map.insert("polls".into(), int(self.polls));
        map.insert("revalidated".into(), int(self.revalidated));
        if let Some(note) = self.note {
            map.insert("note".into(), Value::String(note));
        }
    }
}

/// Polls `target` (a run) until it is completed or `wait_ms` have passed, and answers the run as
/// it stands. Pauses double from [`FIRST_DELAY_MS`] to [`MAX_DELAY_MS`], never past the
/// deadline. A rate limit (Retry-After, or no requests remaining until the reset) pauses the
/// wait until it lifts when that is within the time left, and stops it with a note otherwise;
/// any other failure ends the call (the first poll's) or the wait (a later one's, with a note).
pub(crate) async fn wait(
    call: &ToolContext<'_>,
    target: &Target,
    wait_ms: u64,
) -> Result<(Value, Waited), ToolError> {
    let clock = call.ports.clock;
    let start = clock.now_ms();
    let deadline = start.saturating_add(wait_ms);
    let mut delay = FIRST_DELAY_MS;
    let mut waited = Waited::default();
    let mut last: Option<Value> = None;
    loop {
        waited.polls += 1;
        let pause = match get(call, target, &[]).await {
            Ok(reply) => {
                waited.revalidated += u64::from(reply.revalidated);
                waited.completed = is_completed(&reply.body);
                last = Some(reply.body);
                let now = clock.now_ms();
                if waited.completed || now >= deadline {
                    break;
                }
                if told(call, last.as_ref(), &waited, now - start, wait_ms).is_err() {
                    // Nobody is left to read the answer: the polls stop here.
                    waited.note = Some("Stopped waiting: the client went away.".to_owned());
                    break;
                }
                let limited = crate::upstream::error::retry_after_ms(200, &reply.headers, now);
                match limited {
                    Some(ms) if now.saturating_add(ms) > deadline => {
                        waited.note = Some(rate_note(ms));
                        break;
                    }
                    Some(ms) => ms.max(delay.min(deadline - now)),
                    None => delay.min(deadline - now),
                }
            }
            Err(error) => {
                let now = clock.now_ms();
                match (error.retry_after_ms(), &last) {
                    (Some(ms), _) if now.saturating_add(ms) <= deadline => ms.max(MIN_PAUSE_MS),
                    (None, None) | (Some(_), None) => return Err(error.into()),
                    (Some(ms), Some(_)) => {
                        waited.note = Some(rate_note(ms));
                        break;
                    }
                    (None, Some(_)) => {
                        waited.note = Some(failed_note(&error));
                        break;
                    }
                }
            }
        };
        clock.sleep(pause).await;
        delay = delay.saturating_mul(2).min(MAX_DELAY_MS);
    }
    waited.waited_ms = clock.now_ms().saturating_sub(start);
    // The loop leaves only with a run read, or returns the first poll's error.
    let run = last.ok_or_else(|| ToolError::Internal("wait ended without a run".into()))?;
    Ok((run, waited))
}

/// Tells the client, when it asked for progress, how the wait stands: seconds waited of those
/// asked for, and the run's status.
fn told(
    call: &ToolContext<'_>,
    run: Option<&Value>,
    waited: &Waited,
    elapsed_ms: u64,
    wait_ms: u64,
) -> Result<(), Gone> {
    let Some(progress) = call.progress else {
        return Ok(());
    };
    let status = run
        .and_then(|r| r.get("status"))
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let message = format!(
        "run {status}; {} polls, {} s of {} s",
        waited.polls,
        elapsed_ms / 1000,
        wait_ms / 1000
    );
    progress.report(elapsed_ms / 1000, Some(wait_ms / 1000), &message)
}

fn rate_note(ms: u64) -> String {
    format!(
        "Stopped waiting: GitHub's rate limit lifts in {} s, after the time asked for; call again then.",
        ms.div_ceil(1000)
    )
}

fn failed_note(error: &UpstreamError) -> String {
    format!("Stopped waiting: a poll failed. {}", error.text())
}

/// Whether GitHub says the run is completed.
pub(crate) fn is_completed(run: &Value) -> bool {
    run.get("status").and_then(Value::as_str) == Some("completed")
}

/// The number at `key` of an upstream object.
pub(crate) fn number(value: &Value, key: &str) -> Option<u64> {
    match value.get(key) {
        Some(Value::Number(n)) => n.as_i64().and_then(|n| u64::try_from(n).ok()),
        _ => None,
    }
}

fn text_or_null(value: &Value, key: &str) -> Value {
    value
        .get(key)
        .and_then(Value::as_str)
        .map_or(Value::Null, |t| Value::String(t.to_owned()))
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
