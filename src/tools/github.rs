//! GitHub Actions tools: `github_list_workflow_runs` and `github_list_workflow_jobs`. Each builds
//! one REST path from typed arguments, sends it through the shared upstream client (never
//! cached: run and job status changes by the second) and answers `{data, nextPage}`, where
//! `nextPage` comes from the `Link` header.

mod spec;

use crate::mcp::CallToolResult;
use crate::structured::Envelope;
use crate::tools::args::{whole, whole_opt, WithCommon};
use crate::tools::output::{self, Rendered};
use crate::tools::registry::{Tool, ToolContext, ToolError, ToolSpec, Upstream, UpstreamTool};
use crate::upstream::{link, ApiPath, Method, Target, Targets, UpstreamSettings, Vendor};
use crate::value::{Map, Number, Value};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use spec::{list_jobs_spec, list_runs_spec, DEFAULT_PER_PAGE, MAX_PER_PAGE, RUN_STATUSES};

/// Name of the workflow-runs tool.
pub const LIST_RUNS: &str = "github_list_workflow_runs";
/// Name of the workflow-jobs tool.
pub const LIST_JOBS: &str = "github_list_workflow_jobs";

/// The GitHub tools, for the registry.
pub fn tools() -> Vec<Box<dyn Tool>> {
    vec![
        Box::new(Upstream(List::<RunsArgs>::new(list_runs_spec()))),
        Box::new(Upstream(List::<JobsArgs>::new(list_jobs_spec()))),
    ]
}

/// `workflowId`: a number or a workflow file name.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum WorkflowId {
    /// A numeric workflow id.
    Id(#[serde(deserialize_with = "whole")] u64),
    /// A workflow file name.
    Name(String),
}

/// `github_list_workflow_runs`' own arguments (`jq` and `outputFormat` are the shared ones).
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct RunsArgs {
    owner: String,
    repo: String,
    workflow_id: Option<WorkflowId>,
    branch: Option<String>,
    status: Option<String>,
    event: Option<String>,
    actor: Option<String>,
    #[serde(default, deserialize_with = "whole_opt")]
    per_page: Option<u64>,
    #[serde(default, deserialize_with = "whole_opt")]
    page: Option<u64>,
}

/// `github_list_workflow_jobs`' own arguments (`jq` and `outputFormat` are the shared ones).
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct JobsArgs {
    owner: String,
    repo: String,
    #[serde(deserialize_with = "whole")]
    run_id: u64,
    filter: Option<String>,
    #[serde(default, deserialize_with = "whole_opt")]
    per_page: Option<u64>,
    #[serde(default, deserialize_with = "whole_opt")]
    page: Option<u64>,
}

/// A request to make: the API path and its query parameters, in the order they are sent.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    path: ApiPath,
    params: Vec<(String, String)>,
}

/// Checks an owner or repository name and returns it as a path segment. GitHub names are
/// letters, digits, `-`, `_` and `.`; refusing anything else keeps the path from being bent.
pub(crate) fn name_segment(field: &str, value: &str) -> Result<String, ToolError> {
    let value = value.trim();
    let ok = !value.is_empty()
        && value != "."
        && value != ".."
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(value.to_owned())
    } else {
        Err(ToolError::InvalidArguments(format!(
            "{field} must be a GitHub name (letters, digits, '-', '_' and '.'), not {value:?}"
        )))
    }
}

/// `workflowId` as a path segment: digits as they are, a file name percent-encoded.
fn workflow_segment(id: &WorkflowId) -> Result<String, ToolError> {
    let name = match id {
        WorkflowId::Id(0) => {
            return Err(ToolError::InvalidArguments(
                "workflowId must be a positive id or a workflow file name".into(),
            ))
        }
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

fn per_page(value: Option<u64>) -> Result<u64, ToolError> {
    match value {
        None => Ok(DEFAULT_PER_PAGE),
        Some(n) if (1..=MAX_PER_PAGE).contains(&n) => Ok(n),
        Some(n) => Err(ToolError::InvalidArguments(format!(
            "perPage must be between 1 and {MAX_PER_PAGE}, not {n}"
        ))),
    }
}

fn page(value: Option<u64>) -> Result<Option<u64>, ToolError> {
    match value {
        Some(0) => Err(ToolError::InvalidArguments("page must be 1 or more".into())),
        other => Ok(other),
    }
}

fn parse_path(path: &str) -> Result<ApiPath, ToolError> {
    // Segments were checked above, so this only fails on a programming error.
    ApiPath::parse(path).map_err(|e| ToolError::Internal(format!("built path refused: {e}")))
}

impl RunsArgs {
    fn request(&self) -> Result<Request, ToolError> {
        let owner = name_segment("owner", &self.owner)?;
        let repo = name_segment("repo", &self.repo)?;
        let path = match &self.workflow_id {
            Some(id) => format!(
                "/repos/{owner}/{repo}/actions/workflows/{}/runs",
                workflow_segment(id)?
            ),
            None => format!("/repos/{owner}/{repo}/actions/runs"),
        };
        if let Some(status) = &self.status {
            if !RUN_STATUSES.contains(&status.trim()) {
                return Err(ToolError::InvalidArguments(format!(
                    "status must be one of {}, not {status:?}",
                    RUN_STATUSES.join(", ")
                )));
            }
        }
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
        push_paging(&mut params, self.per_page, self.page)?;
        Ok(Request {
            path: parse_path(&path)?,
            params,
        })
    }
}

impl JobsArgs {
    fn request(&self) -> Result<Request, ToolError> {
        let owner = name_segment("owner", &self.owner)?;
        let repo = name_segment("repo", &self.repo)?;
        if self.run_id == 0 {
            return Err(ToolError::InvalidArguments(
                "runId must be a positive run id".into(),
            ));
        }
        let mut params = Vec::new();
        if let Some(filter) = &self.filter {
            if filter != "latest" && filter != "all" {
                return Err(ToolError::InvalidArguments(format!(
                    "filter must be \"latest\" or \"all\", not {filter:?}"
                )));
            }
            params.push(("filter".to_owned(), filter.clone()));
        }
        push_paging(&mut params, self.per_page, self.page)?;
        Ok(Request {
            path: parse_path(&format!(
                "/repos/{owner}/{repo}/actions/runs/{}/jobs",
                self.run_id
            ))?,
            params,
        })
    }
}

/// `per_page` is always sent, so the page size (and so what `nextPage` means) never depends on
/// a server default; `page` only when asked for.
fn push_paging(
    params: &mut Vec<(String, String)>,
    per: Option<u64>,
    pg: Option<u64>,
) -> Result<(), ToolError> {
    params.push(("per_page".to_owned(), per_page(per)?.to_string()));
    if let Some(p) = page(pg)? {
        params.push(("page".to_owned(), p.to_string()));
    }
    Ok(())
}

/// The result value: `{data, nextPage}`.
fn envelope(data: Value, next_page: Option<u64>) -> Value {
    let mut map = Map::new();
    map.insert("data".into(), data);
    map.insert(
        "nextPage".into(),
        next_page.map_or(Value::Null, |n| {
            Value::Number(Number::from_i64(i64::try_from(n).unwrap_or(i64::MAX)))
        }),
    );
    Value::Object(map)
}

/// The typed arguments of a GitHub list tool: how they become a request.
trait ListArgs: DeserializeOwned {
    /// The request the arguments ask for, checked.
    fn request(&self) -> Result<Request, ToolError>;
}

impl ListArgs for RunsArgs {
    fn request(&self) -> Result<Request, ToolError> {
        RunsArgs::request(self)
    }
}

impl ListArgs for JobsArgs {
    fn request(&self) -> Result<Request, ToolError> {
        JobsArgs::request(self)
    }
}

/// A GitHub list tool; `A` says which.
struct List<A> {
    spec: ToolSpec,
    args: std::marker::PhantomData<fn() -> A>,
}

impl<A> List<A> {
    fn new(spec: ToolSpec) -> List<A> {
        List {
            spec,
            args: std::marker::PhantomData,
        }
    }
}

impl<A: ListArgs> UpstreamTool for List<A> {
    type Args = WithCommon<A>;
    /// The one request the call makes, and its query parameters, checked with the path.
    type Plan = (Target, Vec<(String, String)>);

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn plan(
        &self,
        args: &Self::Args,
        _: &UpstreamSettings,
    ) -> Result<(Targets, Self::Plan), ToolError> {
        let Request { path, params } = args.own.request()?;
        let target = Target::new(Vendor::GitHub, Method::Get, &path);
        Ok((Targets::one(target.clone()), (target, params)))
    }

    /// Sends the request, projects the body and answers the `{data, nextPage}` envelope; an
    /// upstream failure is an `isError` result with the client's text.
    async fn run(
        &self,
        args: Self::Args,
        (target, params): Self::Plan,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let common = &args.common;
        let reply = call.upstream.send(&target, &params, None).await?;
        let next = link::next_page(&reply.headers);
        let data = output::project(reply.body, common.jq.as_deref(), &call);
        Ok(
            Rendered::new(envelope(data, next), common.output_format, call.settings)
                .with_envelope(Envelope::Whole)
                .finish(&call)
                .await,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value as Json};

    fn runs(args: Json) -> Result<(String, String), ToolError> {
        let args: RunsArgs = serde_json::from_value(args).unwrap();
        let r = args.request()?;
        Ok((
            r.path.path().to_owned(),
            crate::upstream::path::form_urlencode(&r.params),
        ))
    }

    fn jobs(args: Json) -> Result<(String, String), ToolError> {
        let args: JobsArgs = serde_json::from_value(args).unwrap();
        let r = args.request()?;
        Ok((
            r.path.path().to_owned(),
            crate::upstream::path::form_urlencode(&r.params),
        ))
    }

    #[test]
    fn runs_paths_and_query() {
        let cases = [
            (
                json!({"owner": "octo-org", "repo": "hello-world"}),
                ("/repos/octo-org/hello-world/actions/runs", "per_page=30"),
            ),
            (
                json!({"owner": "o", "repo": "r.js", "workflowId": 1000, "perPage": 100, "page": 3}),
                (
                    "/repos/o/r.js/actions/workflows/1000/runs",
                    "per_page=100&page=3",
                ),
            ),
            (
                json!({"owner": "o", "repo": "r", "workflowId": "ci.yml", "branch": "feature/x y",
                       "status": "failure", "event": "push", "actor": "octocat"}),
                (
                    "/repos/o/r/actions/workflows/ci.yml/runs",
                    "branch=feature%2Fx+y&status=failure&event=push&actor=octocat&per_page=30",
                ),
            ),
            (
                json!({"owner": "o", "repo": "r", "workflowId": "my flow%.yml"}),
                (
                    "/repos/o/r/actions/workflows/my%20flow%25.yml/runs",
                    "per_page=30",
                ),
            ),
            (
                json!({"owner": "o", "repo": "r", "workflowId": 1000.0, "perPage": 5.0, "page": 2.0}),
                (
                    "/repos/o/r/actions/workflows/1000/runs",
                    "per_page=5&page=2",
                ),
            ),
            (
                json!({"owner": "o", "repo": "r", "workflowId": "42"}),
                ("/repos/o/r/actions/workflows/42/runs", "per_page=30"),
            ),
        ];
        for (args, (path, query)) in cases {
            assert_eq!(
                runs(args.clone()).unwrap(),
                (path.to_owned(), query.to_owned()),
                "{args}"
            );
        }
    }

    #[test]
    fn runs_refuse_bent_paths_and_bad_paging() {
        for args in [
            json!({"owner": "../admin", "repo": "r"}),
            json!({"owner": "o/x", "repo": "r"}),
            json!({"owner": "o", "repo": ".."}),
            json!({"owner": "o", "repo": "r?x=1"}),
            json!({"owner": "o", "repo": "r#x"}),
            json!({"owner": "o", "repo": "r@evil"}),
            json!({"owner": "", "repo": "r"}),
            json!({"owner": "o", "repo": "r", "workflowId": "../../x"}),
            json!({"owner": "o", "repo": "r", "workflowId": "a/b.yml"}),
            json!({"owner": "o", "repo": "r", "workflowId": "a\\b.yml"}),
            json!({"owner": "o", "repo": "r", "workflowId": ".."}),
            json!({"owner": "o", "repo": "r", "workflowId": "x\u{0}"}),
            json!({"owner": "o", "repo": "r", "workflowId": 0}),
            json!({"owner": "o", "repo": "r", "perPage": 0}),
            json!({"owner": "o", "repo": "r", "perPage": 101}),
            json!({"owner": "o", "repo": "r", "page": 0}),
            json!({"owner": "o", "repo": "r", "status": "broken"}),
        ] {
            match runs(args.clone()) {
                Err(ToolError::InvalidArguments(_)) => {}
                other => panic!("{args}: {other:?}"),
            }
        }
    }

    #[test]
    fn jobs_paths_and_query() {
        assert_eq!(
            jobs(json!({"owner": "o", "repo": "r", "runId": 250})).unwrap(),
            (
                "/repos/o/r/actions/runs/250/jobs".into(),
                "per_page=30".into()
            )
        );
        assert_eq!(
            jobs(json!({"owner": "o", "repo": "r", "runId": 7, "filter": "all", "perPage": 5, "page": 2}))
                .unwrap(),
            (
                "/repos/o/r/actions/runs/7/jobs".into(),
                "filter=all&per_page=5&page=2".into()
            )
        );
        assert_eq!(
            jobs(json!({"owner": "o", "repo": "r", "runId": 250.0}))
                .unwrap()
                .0,
            "/repos/o/r/actions/runs/250/jobs"
        );
        for args in [
            json!({"owner": "o", "repo": "r", "runId": 0}),
            json!({"owner": "o", "repo": "r", "runId": 1, "filter": "first"}),
            json!({"owner": "o", "repo": "..", "runId": 1}),
        ] {
            assert!(matches!(jobs(args), Err(ToolError::InvalidArguments(_))));
        }
    }

    #[test]
    fn envelope_has_data_then_next_page() {
        assert_eq!(
            envelope(Value::from(1i64), Some(3)).to_compact_json(),
            r#"{"data":1,"nextPage":3}"#
        );
        assert_eq!(
            envelope(Value::from(1i64), None).to_compact_json(),
            r#"{"data":1,"nextPage":null}"#
        );
    }

    #[test]
    fn specs_register() {
        let mut registry = crate::tools::registry::Registry::new();
        for tool in tools() {
            registry.register(tool).unwrap();
        }
        assert_eq!(registry.names(), [LIST_RUNS, LIST_JOBS]);
    }
}
