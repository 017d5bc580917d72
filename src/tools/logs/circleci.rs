//! `circleci_get_job_logs`: why a CircleCI job failed. API v1.1 lists a job's steps with each
//! action's outcome and a signed output URL (downloaded from an allow-listed host, without the
//! credential); API v2 lists the job's test results. The excerpt covers every step's output, in
//! order, and the artifact holds it all.

use super::{log_writer, respond, text, JobReport, LogArgs};
use crate::artifacts::stream::ArtifactWriter;
use crate::logs::excerpt::Step;
use crate::logs::Excerpter;
use crate::mcp::CallToolResult;
use crate::tools::args::{arguments, Field, WithCommon};
use crate::tools::logs::download::{self, LogError, Pacer};
use crate::tools::registry::{
    Planned, Tool, ToolContext, ToolError, ToolSpec, Upstream, UpstreamTool,
};
use crate::upstream::{stream, ApiPath, Method, Target, Targets, UpstreamSettings, Vendor};
use crate::value::{Map, Value};
use serde::Deserialize;

/// The tool's name.
pub(crate) const NAME: &str = "circleci_get_job_logs";
/// Most step outputs downloaded per job (each is a request).
pub(crate) const MAX_OUTPUTS: usize = 40;
/// Most failed tests listed.
pub(crate) const MAX_TESTS: usize = 20;

/// The tool, for the registry.
pub(crate) fn tool() -> Box<dyn Tool> {
    Box::new(Upstream(GetJobLogs(spec())))
}

fn spec() -> ToolSpec {
    super::spec::<Args>(
        NAME,
        "Why a CircleCI job failed",
        "Why a CircleCI job failed: give `projectSlug` and `jobNumber`, or a job `url`. Result: \
the job's name, status and URL, its failed tests (name, file, message) and an excerpt of its steps' output: \
cleaned lines numbered across the job, the last `tailLines` lines of each failed step (exit code in the \
conclusion), plus `grep` matches. `logArtifactId` names the complete output (read it with artifact_read). \
E.g. `jq`: `jobs[0].{tests: failedTests, tail: log.steps[*].tail}`.",
    )
}

arguments! {
    /// The tool's arguments: the job, then the excerpt's.
    pub(crate) struct Args: closed {
        project_slug: Option<String> = Field::string("projectSlug").min(1).max(300).describe(
            "Project slug `vcs/org/repo`, e.g. `gh/octo-org/hello-world` (not needed with `url`).",
        ),
        job_number: Option<u64> = Field::integer("jobNumber")
            .min(1)
            .describe("The job number (`job_number`, the last number of a job URL)."),
        url: Option<String> = Field::string("url").min(1).max(500).describe(
            "A CircleCI job URL: \
             https://app.circleci.com/pipelines/{vcs}/{org}/{repo}/{n}/workflows/{id}/jobs/{jobNumber}, \
             or https://circleci.com/{vcs}/{org}/{repo}/{jobNumber}.",
        ),
        flatten log: LogArgs,
    }
}

/// A job: its project slug (`gh/org/repo`) and number.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Job {
    slug: String,
    number: u64,
}

/// A slug segment: letters, digits, `-`, `_`, `.`, never `.` or `..`.
fn segment_ok(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `vcs/org/repo` with `github`/`bitbucket` shortened as the API expects.
fn slug(text: &str) -> Result<String, ToolError> {
    let parts: Vec<&str> = text.trim().split('/').collect();
    let ok = parts.len() == 3 && parts.iter().all(|p| segment_ok(p));
    if !ok {
        return Err(ToolError::InvalidArguments(format!(
            "projectSlug must be vcs/org/repo (e.g. gh/octo-org/hello-world), not {text:?}"
        )));
    }
    let vcs = match parts[0] {
        "github" => "gh",
        "bitbucket" => "bb",
        other => other,
    };
    Ok(format!("{vcs}/{}/{}", parts[1], parts[2]))
}

impl Args {
    fn job(&self) -> Result<Job, ToolError> {
        let invalid = |m: String| ToolError::InvalidArguments(m);
        match (&self.project_slug, self.job_number, &self.url) {
            (Some(s), Some(n), None) if n > 0 => Ok(Job {
                slug: slug(s)?,
                number: n,
            }),
            (_, _, Some(url)) if self.job_number.is_none() => {
                let job = parse_url(url)?;
                match &self.project_slug {
                    Some(s) if slug(s)? != job.slug => Err(invalid(format!(
                        "projectSlug {s:?} does not match the url's {:?}",
                        job.slug
                    ))),
                    _ => Ok(job),
                }
            }
            (_, Some(0), _) => Err(invalid("jobNumber must be a positive number".into())),
            _ => Err(invalid(
                "give projectSlug and jobNumber, or a job url".into(),
            )),
        }
    }
}

/// A CircleCI job URL: the app's (`/pipelines/{vcs}/{org}/{repo}/{n}/workflows/{id}/jobs/{job}`)
/// or the legacy one (`circleci.com/{vcs}/{org}/{repo}/{job}`).
fn parse_url(url: &str) -> Result<Job, ToolError> {
    let bad = || {
        ToolError::InvalidArguments(format!(
            "url must be a CircleCI job URL, https://app.circleci.com/pipelines/{{vcs}}/{{org}}/{{repo}}/{{n}}/workflows/{{id}}/jobs/{{jobNumber}}, not {url:?}"
        ))
    };
    let rest = url.trim().strip_prefix("https://").ok_or_else(bad)?;
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (host, path) = rest.split_once('/').ok_or_else(bad)?;
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let number = |s: &str| s.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(bad);
    let (vcs, org, repo, job) = match (host.to_ascii_lowercase().as_str(), segments.as_slice()) {
        ("app.circleci.com", ["pipelines", vcs, org, repo, _, "workflows", _, "jobs", job, ..]) => {
            (*vcs, *org, *repo, number(job)?)
        }
        ("circleci.com" | "app.circleci.com", [vcs, org, repo, job]) => {
            (*vcs, *org, *repo, number(job)?)
        }
        _ => return Err(bad()),
    };
    Ok(Job {
        slug: slug(&format!("{vcs}/{org}/{repo}"))?,
        number: job,
    })
}

struct GetJobLogs(ToolSpec);

/// The requests of a call: the job's details with its steps (API v1.1, where the steps' output
/// URLs are) and its failed tests (v2), then each step's output document.
struct Plan {
    job: Job,
    details: Target,
    tests: Target,
}

impl UpstreamTool for GetJobLogs {
    type Args = WithCommon<Args>;
    type Plan = Plan;

    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn plan(&self, args: &Self::Args, _: &UpstreamSettings) -> Planned<Plan> {
        let job = args.own.job()?;
        let (slug, number) = (&job.slug, job.number);
        let details = Target::circleci_v1(&path(&format!("/project/{slug}/{number}"))?);
        let tests = path(&format!("/project/{slug}/{number}/tests"))?;
        let tests = Target::new(Vendor::CircleCi, Method::Get, &tests);
        let targets = Targets::one(details.clone())
            .and(tests.clone())
            .and_documents();
        Ok((
            targets,
            Plan {
                job,
                details,
                tests,
            },
        ))
    }

    async fn run(
        &self,
        WithCommon { common, own: args }: Self::Args,
        Plan {
            job,
            details,
            tests,
        }: Plan,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let options = args.log.options()?;
        let opened = call.upstream.open(&details).await?;
        let status = opened.status;
        if !(200..300).contains(&status) {
            return Err(stream::status_error(call.ports.clock, &details, opened)
                .await
                .into());
        }
        let body = match download::read_all(
            call.ports,
            Vendor::CircleCi,
            opened.body,
            "CircleCI",
            call.upstream.max_bytes(),
        )
        .await
        {
            Ok(body) => body,
            Err(e) => return Err(ToolError::Failed(e.text())),
        };
        let decoded = call
            .upstream
            .decode_bytes(&details, status, &Vec::new(), &body)?;
        if !decoded.parsed_json {
            return Err(ToolError::Failed(
                "Error: Invalid response from CircleCI API v1.1: the job details are not JSON."
                    .into(),
            ));
        }
        let details = decoded.value;
        let mut fields = Map::new();
        fields.insert("id".into(), super::int(job.number));
        let name = details
            .get("workflows")
            .and_then(|w| text(w, "job_name"))
            .or_else(|| text(&details, "job_name"));
        fields.insert("name".into(), string(name));
        fields.insert("status".into(), string(text(&details, "lifecycle")));
        fields.insert(
            "conclusion".into(),
            string(text(&details, "outcome").or_else(|| text(&details, "status"))),
        );
        fields.insert("url".into(), string(text(&details, "build_url")));
        fields.insert("failedTests".into(), failed_tests(&call, &tests).await);
        let actions = actions(&details);
        let steps: Vec<Step> = actions.iter().map(|a| a.step.clone()).collect();
        let mut excerpter = Excerpter::new(options, steps, false);
        let mut writer = log_writer(&call).await?;
        let outcome = read_outputs(&call, &actions, &mut excerpter, &mut writer).await;
        fields.insert("cached".into(), Value::Bool(false));
        let report = match outcome {
            Ok(()) => JobReport {
                fields,
                artifact: writer.finish().await,
                log: excerpter.finish().map_err(LogError::Grep),
            },
            Err(e) => {
                writer.abandon().await;
                JobReport {
                    fields,
                    artifact: None,
                    log: Err(e),
                }
            }
        };
        respond(&call, &common, vec![report], 0).await
    }
}

fn path(text: &str) -> Result<ApiPath, ToolError> {
    ApiPath::parse(text).map_err(|e| ToolError::Internal(format!("built path refused: {e}")))
}

fn string(value: Option<&str>) -> Value {
    value.map_or(Value::Null, |t| Value::String(t.to_owned()))
}

/// One action (a step on one parallel container) and where its output is.
struct Action {
    step: Step,
    output_url: Option<String>,
}

/// Every action of every step, in order; the parallel index is named when there are several.
fn actions(details: &Value) -> Vec<Action> {
    let Some(Value::Array(steps)) = details.get("steps") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for step in steps {
        let Some(Value::Array(actions)) = step.get("actions") else {
            continue;
        };
        let parallel = actions.len() > 1;
        for action in actions {
            let name = text(action, "name")
                .or_else(|| text(step, "name"))
                .unwrap_or_default();
            let index = match action.get("index") {
                Some(Value::Number(n)) => n.as_i64().unwrap_or_default(),
                _ => 0,
            };
            let exit = match action.get("exit_code") {
                Some(Value::Number(n)) => n.as_i64(),
                _ => None,
            };
            let status = text(action, "status").map(|s| match exit {
                Some(code) if code != 0 => format!("{s} (exit code {code})"),
                _ => s.to_owned(),
            });
            // The excerpt recognises the plain status words; an exit code only annotates them.
            let failed = action.get("failed") == Some(&Value::Bool(true));
            let conclusion = match (failed, status) {
                (true, Some(s)) if !s.starts_with("failed") && !s.starts_with("timedout") => {
                    Some(format!("failed: {s}"))
                }
                (_, s) => s,
            };
            out.push(Action {
                step: Step {
                    number: out.len() as u64 + 1,
                    name: if parallel {
                        format!("{name} [container {index}]")
                    } else {
                        name.to_owned()
                    },
                    conclusion,
                    started_at: None,
                },
                output_url: text(action, "output_url").map(str::to_owned),
            });
        }
    }
    out
}

/// One message of a step's output document.
#[derive(Deserialize)]
struct Message {
    message: Option<String>,
}

/// Downloads each action's output (a JSON array of messages on a signed URL) into the excerpt
/// and the artifact, in order.
async fn read_outputs(
    call: &ToolContext<'_>,
    actions: &[Action],
    excerpter: &mut Excerpter,
    writer: &mut ArtifactWriter<'_>,
) -> Result<(), LogError> {
    for (i, action) in actions.iter().enumerate().take(MAX_OUTPUTS) {
        excerpter.start_step(i);
        let Some(url) = &action.output_url else {
            continue;
        };
        let (host, body) = download::open_url(call.ports.log, call.upstream, url).await?;
        let bytes = download::read_all(
            call.ports,
            Vendor::CircleCi,
            body,
            &host,
            call.upstream.max_bytes(),
        )
        .await?;
        let messages: Vec<Message> = serde_json::from_slice(&bytes).map_err(|_| {
            LogError::Download(format!(
                "A step's output on {host} is not CircleCI's JSON list of messages."
            ))
        })?;
        drop(bytes);
        let mut pacer = Pacer::new(call.ports.clock);
        for message in messages.into_iter().filter_map(|m| m.message) {
            excerpter.push(message.as_bytes());
            if let Some(over) = excerpter.over_budget() {
                return Err(LogError::Grep(over));
            }
            writer.write(message.as_bytes()).await;
            pacer.handled(message.len()).await;
        }
    }
    Ok(())
}

/// The job's failed tests (v2), at most [`MAX_TESTS`]: `[{name, classname, file, message}]`, or
/// the error's text.
async fn failed_tests(call: &ToolContext<'_>, tests: &Target) -> Value {
    let reply = call.upstream.send(tests, &[], None).await;
    let body = match reply {
        Ok(reply) => reply.body,
        Err(e) => return Value::String(e.text()),
    };
    let Some(Value::Array(items)) = body.get("items") else {
        return Value::Array(Vec::new());
    };
    Value::Array(
        items
            .iter()
            .filter(|t| matches!(text(t, "result"), Some("failure" | "error" | "failed")))
            .take(MAX_TESTS)
            .map(|t| {
                let mut m = Map::new();
                m.insert("name".into(), string(text(t, "name")));
                m.insert("classname".into(), string(text(t, "classname")));
                m.insert("file".into(), string(text(t, "file")));
                m.insert(
                    "message".into(),
                    string(
                        text(t, "message")
                            .map(crate::logs::line::shorten)
                            .as_deref(),
                    ),
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

    fn job(args: Json) -> Result<Job, ToolError> {
        crate::tools::registry::read_args::<Args>(&args)
            .unwrap()
            .job()
    }

    #[test]
    fn jobs_from_slugs_and_urls() {
        let want = Job {
            slug: "gh/octo-org/hello".into(),
            number: 42,
        };
        for args in [
            json!({"projectSlug": "gh/octo-org/hello", "jobNumber": 42}),
            json!({"projectSlug": "github/octo-org/hello", "jobNumber": 42.0}),
            json!({"url": "https://app.circleci.com/pipelines/github/octo-org/hello/7/workflows/0f3c-11/jobs/42"}),
            json!({"url": "https://app.circleci.com/pipelines/gh/octo-org/hello/7/workflows/x/jobs/42/steps?x=1"}),
            json!({"url": "https://circleci.com/gh/octo-org/hello/42", "projectSlug": "gh/octo-org/hello"}),
        ] {
            assert_eq!(job(args.clone()).unwrap(), want, "{args}");
        }
        for (args, says) in [
            (
                json!({"projectSlug": "gh/o/r"}),
                "give projectSlug and jobNumber",
            ),
            (
                json!({"projectSlug": "gh/o", "jobNumber": 1}),
                "vcs/org/repo",
            ),
            (
                json!({"projectSlug": "gh/../r", "jobNumber": 1}),
                "vcs/org/repo",
            ),
            (json!({"projectSlug": "gh/o/r", "jobNumber": 0}), "positive"),
            (
                json!({"url": "https://evil.example/gh/o/r/1"}),
                "CircleCI job URL",
            ),
            (
                json!({"url": "https://circleci.com/gh/o/r/x"}),
                "CircleCI job URL",
            ),
            (
                json!({"url": "https://circleci.com/gh/o/r/1", "projectSlug": "gh/o/other"}),
                "does not match",
            ),
            (
                json!({"url": "https://circleci.com/gh/o/r/1", "jobNumber": 1}),
                "give projectSlug",
            ),
        ] {
            match job(args.clone()) {
                Err(ToolError::InvalidArguments(m)) => assert!(m.contains(says), "{args}: {m}"),
                other => panic!("{args}: {other:?}"),
            }
        }
    }

    #[test]
    fn actions_carry_their_outcome() {
        let details = crate::value::parse(
            r#"{"steps": [
                {"name": "Spin up environment", "actions": [{"name": "Spin up environment", "status": "success", "index": 0, "output_url": "https://x/1"}]},
                {"name": "Run tests", "actions": [
                    {"name": "Run tests", "status": "success", "index": 0, "exit_code": 0},
                    {"name": "Run tests", "status": "failed", "failed": true, "index": 1, "exit_code": 2, "output_url": "https://x/2"}]}
            ]}"#,
        )
        .unwrap();
        let got: Vec<(String, Option<String>, bool)> = actions(&details)
            .into_iter()
            .map(|a| {
                (
                    a.step.name.clone(),
                    a.step.conclusion.clone(),
                    a.step.failed(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("Spin up environment".into(), Some("success".into()), false),
                (
                    "Run tests [container 0]".into(),
                    Some("success".into()),
                    false
                ),
                (
                    "Run tests [container 1]".into(),
                    Some("failed (exit code 2)".into()),
                    true
                ),
            ]
        );
    }
}
