//! `github_get_job_logs`: why a GitHub Actions job failed. For one job (`jobId`), the failed
//! jobs of a run (`runId`), or either named by a web URL: the job, its check-run annotations and
//! the excerpt of its log, which GitHub serves as a redirect to a signed URL on another host.

use super::cache::LogCache;
use super::{log_writer, respond, text, JobReport, LogArgs, MAX_JOBS};
use crate::logs::excerpt::{Options, Step};
use crate::logs::Excerpter;
use crate::mcp::CallToolResult;
use crate::time::parse_iso8601_seconds;
use crate::tools::args::{arguments, Fallback, Field, WithCommon, OWNER, REPO};
use crate::tools::github::name_segment;
use crate::tools::logs::download::{self, LogError, Sink};
use crate::tools::registry::{
    Planned, Tool, ToolContext, ToolError, ToolSpec, Upstream, UpstreamTool,
};
use crate::upstream::{
    ApiPath, Family, Method, Target, Targets, UpstreamError, UpstreamSettings, Vendor,
};
use crate::value::{Map, Value};

/// The tool's name.
pub(crate) const NAME: &str = "github_get_job_logs";
/// Annotations read per job (GitHub's page size for check-run annotations is at most 50).
const MAX_ANNOTATIONS: u64 = 50;
/// GitHub's job conclusions that mean the job did not succeed.
const FAILED: &[&str] = &["failure", "timed_out", "cancelled", "startup_failure"];

/// The tool, for the registry.
pub(crate) fn tool() -> Box<dyn Tool> {
    Box::new(Upstream(GetJobLogs(spec())))
}

fn spec() -> ToolSpec {
    super::spec::<Args>(
        NAME,
        "Why a GitHub Actions job failed",
        "Why a GitHub Actions job failed: give `owner`, `repo` and `jobId` or `runId`, or a \
run or job `url`. Per job: name, conclusion, url, GitHub's annotations (file, line, message: often the whole \
answer) and a log excerpt: cleaned, numbered lines split into steps, with the `##[error]` lines and the last \
`tailLines` lines of each failed step, plus `grep` matches. `logArtifactId` names the complete log (read it \
with artifact_read). A completed job's log is cached: asking again with another `grep` or `tailLines` costs \
no GitHub call. E.g. `jq`: `jobs[*].{name: name, tail: log.steps[*].tail}`.",
    )
}

arguments! {
    /// The tool's arguments: the job or run, then the excerpt's.
    pub(crate) struct Args: closed {
        owner: Option<String> = OWNER.describe("Repository owner (not needed with `url`)."),
        repo: Option<String> = REPO.describe("Repository name (not needed with `url`)."),
        job_id: Option<u64> = Field::integer("jobId")
            .min(1)
            .describe("A job's `id` from github_list_workflow_jobs."),
        run_id: Option<u64> = Field::integer("runId")
            .min(1)
            .describe("A run's `id`: its failed jobs (all with `failedOnly: false`)."),
        url: Option<String> = Field::string("url").min(1).max(500).describe(
            "A run or job URL: https://github.com/{owner}/{repo}/actions/runs/{runId}[/job/{jobId}].",
        ),
        failed_only: bool = Field::boolean("failedOnly")
            .default(Fallback::Boolean(true))
            .describe("With a run: only the jobs that did not succeed."),
        flatten log: LogArgs,
    }
}

/// What a call reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Subject {
    pub(crate) owner: String,
    pub(crate) repo: String,
    pub(crate) what: What,
}

/// A job or a run, by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum What {
    Job(u64),
    Run(u64),
}

impl Subject {
    /// The path of the call's first request: the job's logs (what a refusal names), or the
    /// run's job list.
    fn policy_path(&self) -> String {
        let Subject { owner, repo, what } = self;
        match what {
            What::Job(id) => format!("/repos/{owner}/{repo}/actions/jobs/{id}/logs"),
            What::Run(id) => format!("/repos/{owner}/{repo}/actions/runs/{id}/jobs"),
        }
    }

    /// The requests made per job, whose ids a run's job list gives.
    fn per_job(&self) -> PerJob {
        let repo = format!("/repos/{}/{}", self.owner, self.repo);
        PerJob {
            job: Family::get(Vendor::GitHub, &format!("{repo}/actions/jobs"), ""),
            annotations: Family::get(
                Vendor::GitHub,
                &format!("{repo}/check-runs"),
                "/annotations",
            ),
            logs: Family::get(Vendor::GitHub, &format!("{repo}/actions/jobs"), "/logs"),
        }
    }
}

/// The GitHub requests about one job.
struct PerJob {
    /// The job itself.
    job: Family,
    /// Its check-run annotations.
    annotations: Family,
    /// Its log (answered with a redirect to the document).
    logs: Family,
}

/// The member of `family` for job `id`.
fn member(family: &Family, id: u64) -> Result<Target, ToolError> {
    family
        .member(id)
        .ok_or_else(|| ToolError::Internal(format!("built path refused for job {id}")))
}

/// What the run of a call uses: its subject, and its requests as the plan declared them.
struct Plan {
    subject: Subject,
    first: Target,
    per_job: PerJob,
}

impl Args {
    /// The job or run the arguments name. A `url`'s host is checked against `api_base`, the
    /// configured API (github.com, or a GitHub Enterprise host).
    fn subject(&self, api_base: &str) -> Result<Subject, ToolError> {
        let invalid = |m: &str| ToolError::InvalidArguments(m.to_owned());
        let given = [
            self.job_id.is_some(),
            self.run_id.is_some(),
            self.url.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(invalid("give exactly one of jobId, runId and url"));
        }
        let from_url = match &self.url {
            Some(url) => Some(parse_url(url, api_base)?),
            None => None,
        };
        let pick = |field: &str, arg: &Option<String>, url: Option<&String>| match (arg, url) {
            (Some(a), Some(u)) if !a.trim().eq_ignore_ascii_case(u) => {
                Err(ToolError::InvalidArguments(format!(
                    "{field} {a:?} does not match the url's {u:?}"
                )))
            }
            (_, Some(u)) => name_segment(field, u),
            (Some(a), None) => name_segment(field, a),
            (None, None) => Err(ToolError::InvalidArguments(format!(
                "{field} is required with jobId or runId"
            ))),
        };
        let owner = pick("owner", &self.owner, from_url.as_ref().map(|s| &s.owner))?;
        let repo = pick("repo", &self.repo, from_url.as_ref().map(|s| &s.repo))?;
        let what = match (self.job_id, self.run_id, from_url) {
            (Some(0), _, _) | (_, Some(0), _) => {
                return Err(invalid("jobId and runId must be positive ids"))
            }
            (Some(id), _, _) => What::Job(id),
            (_, Some(id), _) => What::Run(id),
            (_, _, Some(subject)) => subject.what,
            (None, None, None) => return Err(invalid("give exactly one of jobId, runId and url")),
        };
        Ok(Subject { owner, repo, what })
    }
}

/// `https://github.com/{owner}/{repo}/actions/runs/{runId}[/job/{jobId}][/attempts/{n}]`, on
/// github.com or the web host of the configured API (GitHub Enterprise).
pub(crate) fn parse_url(url: &str, api_base: &str) -> Result<Subject, ToolError> {
    let bad = || {
        ToolError::InvalidArguments(format!(
            "url must be a GitHub Actions run or job URL, \
             https://github.com/{{owner}}/{{repo}}/actions/runs/{{runId}}[/job/{{jobId}}], not {url:?}"
        ))
    };
    let rest = url.trim().strip_prefix("https://").ok_or_else(bad)?;
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (host, path) = rest.split_once('/').ok_or_else(bad)?;
    let host = host.to_ascii_lowercase();
    let api_host = api_base
        .split_once("://")
        .map(|(_, r)| r.split('/').next().unwrap_or_default().to_ascii_lowercase())
        .unwrap_or_default();
    let host_ok = matches!(host.as_str(), "github.com" | "www.github.com")
        || (api_host != "api.github.com" && host == api_host);
    if host.is_empty() || !host_ok {
        return Err(ToolError::InvalidArguments(format!(
            "url must be on github.com (or this server's GitHub Enterprise host), not {host:?}"
        )));
    }
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let number = |s: &str| s.parse::<u64>().ok().filter(|n| *n > 0);
    let (owner, repo, run) = match segments.as_slice() {
        [owner, repo, "actions", "runs", run, ..] => (owner, repo, number(run).ok_or_else(bad)?),
        _ => return Err(bad()),
    };
    let what = match &segments[5..] {
        [] | ["attempts", _] => What::Run(run),
        ["job", job] | ["job", job, ..] => What::Job(number(job).ok_or_else(bad)?),
        _ => return Err(bad()),
    };
    Ok(Subject {
        owner: (*owner).to_owned(),
        repo: (*repo).to_owned(),
        what,
    })
}

struct GetJobLogs(ToolSpec);

impl UpstreamTool for GetJobLogs {
    type Args = WithCommon<Args>;
    type Plan = Plan;

    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    /// A job's call makes its requests about that job; a run's lists the run's jobs, then makes
    /// the same requests about each failed one, decided by policy as they are learned. Both
    /// follow the log's redirect to its document. A `url`'s host is checked against the
    /// configured API.
    fn plan(&self, args: &Self::Args, upstream: &UpstreamSettings) -> Planned<Plan> {
        let subject = args.own.subject(&upstream.github_api_url)?;
        let path = ApiPath::parse(&subject.policy_path())
            .map_err(|e| ToolError::Internal(format!("built path refused: {e}")))?;
        let first = Target::new(Vendor::GitHub, Method::Get, &path);
        let per_job = subject.per_job();
        let targets = match subject.what {
            What::Job(id) => Targets::one(first.clone())
                .and(member(&per_job.job, id)?)
                .and(member(&per_job.annotations, id)?),
            What::Run(_) => Targets::one(first.clone())
                .and_family(per_job.annotations.clone())
                .and_family(per_job.logs.clone()),
        };
        let plan = Plan {
            subject,
            first,
            per_job,
        };
        Ok((targets.and_documents(), plan))
    }

    async fn run(
        &self,
        WithCommon { common, own: args }: Self::Args,
        Plan {
            subject,
            first,
            per_job,
        }: Plan,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let options = args.log.options()?;
        let cache = LogCache::new(&call, Vendor::GitHub);
        let (jobs, more) = match subject.what {
            What::Job(id) => {
                if let Some(report) = from_cache(&cache, &subject, id, &options).await {
                    return respond(&call, &common, vec![report], 0).await;
                }
                match get(&call, &member(&per_job.job, id)?, &[]).await {
                    Ok(job) => (vec![job], 0),
                    Err(error) => return Err(error.into()),
                }
            }
            What::Run(_) => {
                let query = [
                    ("filter".to_owned(), "latest".to_owned()),
                    ("per_page".to_owned(), "100".to_owned()),
                ];
                let list = match get(&call, &first, &query).await {
                    Ok(list) => list,
                    Err(error) => return Err(error.into()),
                };
                let mut jobs: Vec<Value> = match list.get("jobs") {
                    Some(Value::Array(jobs)) => jobs.clone(),
                    _ => Vec::new(),
                };
                if args.failed_only {
                    jobs.retain(|job| {
                        FAILED.contains(&text(job, "conclusion").unwrap_or_default())
                    });
                }
                let more = jobs.len().saturating_sub(MAX_JOBS);
                jobs.truncate(MAX_JOBS);
                (jobs, more)
            }
        };
        let mut reports = Vec::with_capacity(jobs.len());
        for job in &jobs {
            // A job's requests are decided as its id is learned; its cached report stands in for
            // them only where they would be sent, else the job is read and refused as live.
            let cached = match number(job, "id") {
                Some(id) if admits(&call, &per_job, id) => {
                    from_cache(&cache, &subject, id, &options).await
                }
                _ => None,
            };
            let report = match cached {
                Some(report) => report,
                None => read_job(&call, &cache, &subject, &per_job, job, &options).await?,
            };
            let over_budget = matches!(report.log, Err(LogError::Grep(_)));
            reports.push(report);
            if over_budget {
                // The call fails (see `respond`), and the next jobs share the spent budget.
                break;
            }
        }
        respond(&call, &common, reports, more).await
    }
}

/// Whether policy lets the call send job `id`'s log and annotation requests.
fn admits(call: &ToolContext<'_>, per_job: &PerJob, id: u64) -> bool {
    [&per_job.logs, &per_job.annotations]
        .into_iter()
        .all(|family| family.member(id).is_some_and(|t| call.upstream.admits(&t)))
}

/// The cache's name for job `id` of the subject's repository.
fn cache_name(subject: &Subject, id: u64) -> String {
    format!("{}/{}/{id}", subject.owner, subject.repo)
}

/// Job `id` answered from the cache and its log's artifact, when both are there.
async fn from_cache(
    cache: &LogCache<'_, '_>,
    subject: &Subject,
    id: u64,
    options: &Options,
) -> Option<JobReport> {
    let hit = cache.lookup(&cache_name(subject, id)).await?;
    let mut excerpter = Excerpter::new(options.clone(), hit.steps, true);
    if !cache.replay(&hit.artifact, &mut excerpter).await {
        return None;
    }
    let mut fields = hit.fields;
    fields.insert("cached".into(), Value::Bool(true));
    Some(JobReport {
        fields,
        log: excerpter.finish().map_err(LogError::Grep),
        artifact: Some(hit.artifact),
    })
}

/// A GET on the GitHub API, decoded (a conditional one when its answer is kept).
async fn get(
    call: &ToolContext<'_>,
    target: &Target,
    query: &[(String, String)],
) -> Result<Value, UpstreamError> {
    let reply = crate::tools::ciloop::get(call, target, query).await?;
    Ok(reply.body)
}

fn number(value: &Value, key: &str) -> Option<u64> {
    match value.get(key) {
        Some(Value::Number(n)) => n.as_i64().and_then(|n| u64::try_from(n).ok()),
        _ => None,
    }
}

/// The steps GitHub lists for `job`, in order.
fn job_steps(job: &Value) -> Vec<Step> {
    let Some(Value::Array(steps)) = job.get("steps") else {
        return Vec::new();
    };
    steps
        .iter()
        .map(|s| Step {
            number: number(s, "number").unwrap_or_default(),
            name: text(s, "name").unwrap_or_default().to_owned(),
            conclusion: text(s, "conclusion").map(str::to_owned),
            started_at: text(s, "started_at").and_then(parse_iso8601_seconds),
        })
        .collect()
}

async fn read_job(
    call: &ToolContext<'_>,
    cache: &LogCache<'_, '_>,
    subject: &Subject,
    per_job: &PerJob,
    job: &Value,
    options: &Options,
) -> Result<JobReport, ToolError> {
    let id = number(job, "id")
        .ok_or_else(|| ToolError::Failed("GitHub listed a job without an id".into()))?;
    let mut fields = Map::new();
    fields.insert("id".into(), super::int(id));
    for (name, key) in [
        ("name", "name"),
        ("status", "status"),
        ("conclusion", "conclusion"),
        ("url", "html_url"),
    ] {
        fields.insert(
            name.into(),
            text(job, key).map_or(Value::Null, |t| Value::String(t.to_owned())),
        );
    }
    let query = [("per_page".to_owned(), MAX_ANNOTATIONS.to_string())];
    match get(call, &member(&per_job.annotations, id)?, &query).await {
        Ok(list) => {
            fields.insert("annotations".into(), annotations(&list));
        }
        Err(error) => {
            fields.insert("annotationsError".into(), Value::String(error.text()));
        }
    }
    let steps = job_steps(job);
    let mut excerpter = Excerpter::new(options.clone(), steps.clone(), true);
    let mut writer = log_writer(call).await?;
    let logs = member(&per_job.logs, id)?;
    let outcome = match call.upstream.open(&logs).await {
        Ok(opened) => {
            let sink = Sink {
                excerpter: &mut excerpter,
                writer: &mut writer,
            };
            download::from_vendor(call.ports, call.upstream, &logs, opened, sink).await
        }
        Err(e) => Err(LogError::Upstream(e)),
    };
    Ok(match outcome {
        Ok(_) => {
            let artifact = writer.finish().await;
            if let (Some(artifact), Some("completed")) = (&artifact, text(job, "status")) {
                cache
                    .store(&cache_name(subject, id), &fields, &steps, artifact)
                    .await;
            }
            fields.insert("cached".into(), Value::Bool(false));
            JobReport {
                fields,
                artifact,
                log: excerpter.finish().map_err(LogError::Grep),
            }
        }
        Err(e) => {
            writer.abandon().await;
            fields.insert("cached".into(), Value::Bool(false));
            JobReport {
                fields,
                artifact: None,
                log: Err(e),
            }
        }
    })
}

/// `[{path, line, level, message}]` from GitHub's check-run annotations.
fn annotations(list: &Value) -> Value {
    let Value::Array(items) = list else {
        return Value::Array(Vec::new());
    };
    Value::Array(
        items
            .iter()
            .map(|a| {
                let mut m = Map::new();
                m.insert(
                    "path".into(),
                    text(a, "path").map_or(Value::Null, |t| Value::String(t.to_owned())),
                );
                m.insert(
                    "line".into(),
                    number(a, "start_line").map_or(Value::Null, super::int),
                );
                m.insert(
                    "level".into(),
                    text(a, "annotation_level")
                        .map_or(Value::Null, |t| Value::String(t.to_owned())),
                );
                m.insert(
                    "message".into(),
                    text(a, "message").map_or(Value::Null, |t| {
                        Value::String(crate::logs::line::shorten(t))
                    }),
                );
                Value::Object(m)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value as Json};

    fn subject(args: Json) -> Result<Subject, ToolError> {
        let args: Args = crate::tools::registry::read_args(&args).unwrap();
        args.subject("https://api.github.com")
    }

    fn job(owner: &str, repo: &str, id: u64) -> Subject {
        Subject {
            owner: owner.into(),
            repo: repo.into(),
            what: What::Job(id),
        }
    }

    #[test]
    fn subjects_from_ids_and_urls() {
        let cases = [
            (
                json!({"owner": "o", "repo": "r", "jobId": 7}),
                job("o", "r", 7),
            ),
            (
                json!({"owner": "o", "repo": "r", "jobId": 7.0}),
                job("o", "r", 7),
            ),
            (
                json!({"owner": "o", "repo": "r", "runId": 9}),
                Subject {
                    owner: "o".into(),
                    repo: "r".into(),
                    what: What::Run(9),
                },
            ),
            (
                json!({"url": "https://github.com/octo-org/hello/actions/runs/12/job/34"}),
                job("octo-org", "hello", 34),
            ),
            (
                json!({"url": "https://github.com/octo-org/hello/actions/runs/12/attempts/2?pr=1#x"}),
                Subject {
                    owner: "octo-org".into(),
                    repo: "hello".into(),
                    what: What::Run(12),
                },
            ),
            (
                json!({"url": "https://github.com/o/r/actions/runs/12/job/34/", "owner": "O"}),
                job("o", "r", 34),
            ),
        ];
        for (args, want) in cases {
            assert_eq!(subject(args.clone()).unwrap(), want, "{args}");
        }
        assert_eq!(
            job("o", "r", 7).policy_path(),
            "/repos/o/r/actions/jobs/7/logs"
        );
    }

    #[test]
    fn bad_subjects_say_why() {
        for (args, says) in [
            (json!({"owner": "o", "repo": "r"}), "exactly one of"),
            (
                json!({"owner": "o", "repo": "r", "jobId": 1, "runId": 2}),
                "exactly one of",
            ),
            (json!({"repo": "r", "jobId": 1}), "owner is required"),
            (json!({"owner": "o", "repo": "r", "jobId": 0}), "positive"),
            (
                json!({"owner": "../x", "repo": "r", "jobId": 1}),
                "GitHub name",
            ),
            (
                json!({"url": "https://evil.example/o/r/actions/runs/1"}),
                "github.com",
            ),
            (
                json!({"url": "http://github.com/o/r/actions/runs/1"}),
                "run or job URL",
            ),
            (
                json!({"url": "https://github.com/o/r/pull/1"}),
                "run or job URL",
            ),
            (
                json!({"url": "https://github.com/o/r/actions/runs/x"}),
                "run or job URL",
            ),
            (
                json!({"url": "https://github.com/o/r/actions/runs/1/job/x"}),
                "run or job URL",
            ),
            (
                json!({"url": "https://github.com/o/r/actions/runs/1/job/2", "repo": "other"}),
                "does not match",
            ),
            (
                json!({"url": "https://github.com/../r/actions/runs/1"}),
                "GitHub name",
            ),
        ] {
            match subject(args.clone()) {
                Err(ToolError::InvalidArguments(m)) => assert!(m.contains(says), "{args}: {m}"),
                other => panic!("{args}: {other:?}"),
            }
        }
    }

    #[test]
    fn enterprise_urls_use_the_configured_host() {
        let args: Args = crate::tools::registry::read_args(
            &json!({"url": "https://ghe.example/o/r/actions/runs/5"}),
        )
        .unwrap();
        assert_eq!(
            args.subject("https://ghe.example/api/v3").unwrap().what,
            What::Run(5)
        );
        assert!(args.subject("https://api.github.com").is_err());
    }

    /// The policy target of an Enterprise URL is its job's logs path, checked against the
    /// configured API when the call is planned.
    #[test]
    fn enterprise_urls_have_a_policy_target() {
        let args: WithCommon<Args> = crate::tools::registry::read_args(
            &json!({"url": "https://ghe.example/o/r/actions/runs/5/job/7"}),
        )
        .unwrap();
        let upstream = UpstreamSettings {
            github_api_url: "https://ghe.example/api/v3".into(),
            ..UpstreamSettings::default()
        };
        let (targets, plan) = GetJobLogs(spec()).plan(&args, &upstream).unwrap();
        let (target, subject) = (targets.first().unwrap(), plan.subject);
        assert_eq!(target.path(), "/repos/o/r/actions/jobs/7/logs");
        assert_eq!(subject.what, What::Job(7));
        assert!(GetJobLogs(spec())
            .plan(&args, &UpstreamSettings::default())
            .is_err());
    }
}
