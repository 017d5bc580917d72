//! GitHub Actions list tools: `github_list_workflow_runs` and `github_list_workflow_jobs`,
//! declared in [`spec`] on the machinery here. Each builds one REST path from typed arguments, sends it through the
//! shared upstream client (never cached: run and job status changes by the second) and answers
//! `{data, nextPage}`, where `nextPage` comes from the `Link` header.

pub(crate) mod actions;
pub(crate) mod run;
pub(crate) mod spec;

use crate::mcp::{CallToolResult, ToolAnnotations, ToolDescriptor};
use crate::structured::{Contract, Envelope};
use crate::tools::args::{
    arguments, input_schema, Arguments, WithCommon, JQ, OUTPUT_FORMAT, OWNER, PAGE, PER_PAGE, REPO,
};
use crate::tools::output::{self, Rendered};
use crate::tools::registry::{
    Access, Planned, Tool, ToolContext, ToolError, ToolSpec, Upstream, UpstreamTool,
};
use crate::upstream::{link, ApiPath, Method, Target, Targets, UpstreamSettings, Vendor};
use crate::value::{Map, Number, Value};

arguments! {
    /// What every GitHub list tool takes first: the repository, the page, and the shared `jq`
    /// and `outputFormat`.
    pub(crate) struct RepoPage: open {
        owner: String = OWNER,
        repo: String = REPO,
        per_page: u64 = PER_PAGE,
        page: Option<u64> = PAGE,
        shared JQ,
        shared OUTPUT_FORMAT,
    }
}

/// A GitHub list tool, declared once in [`spec`]: its arguments (a [`RepoPage`] and its own),
/// its metadata, and the request they make.
trait ListTool: Arguments + 'static {
    /// The tool's name.
    const NAME: &'static str;
    /// Its title, also its annotations' title.
    const TITLE: &'static str;
    /// What the model reads about it.
    const DESCRIPTION: &'static str;
    /// The repository and page asked for.
    fn page(&self) -> &RepoPage;
    /// The API path after `/repos/{owner}/{repo}`, its segments checked.
    fn path(&self) -> Result<String, ToolError>;
    /// The tool's own query parameters, sent before the paging ones.
    fn params(&self) -> Vec<(String, String)>;
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

fn parse_path(path: &str) -> Result<ApiPath, ToolError> {
    // Segments were checked above, so this only fails on a programming error.
    ApiPath::parse(path).map_err(|e| ToolError::Internal(format!("built path refused: {e}")))
}

/// The request `args` ask for. `per_page` is always sent, so the page size (and so what
/// `nextPage` means) never depends on a server default; `page` only when asked for.
fn request<A: ListTool>(args: &A) -> Result<Request, ToolError> {
    let at = args.page();
    let owner = name_segment("owner", &at.owner)?;
    let repo = name_segment("repo", &at.repo)?;
    let path = parse_path(&format!("/repos/{owner}/{repo}{}", args.path()?))?;
    let mut params = args.params();
    params.push(("per_page".to_owned(), at.per_page.to_string()));
    if let Some(p) = at.page {
        params.push(("page".to_owned(), p.to_string()));
    }
    Ok(Request { path, params })
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

/// A GitHub list tool; `A` says which.
struct List<A> {
    spec: ToolSpec,
    args: std::marker::PhantomData<fn() -> A>,
}

impl<A: ListTool> List<A> {
    /// The tool, for the registry.
    fn boxed() -> Box<dyn Tool> {
        Box::new(Upstream(List::<A> {
            spec: ToolSpec {
                descriptor: ToolDescriptor {
                    name: A::NAME.into(),
                    title: Some(A::TITLE.into()),
                    description: A::DESCRIPTION.into(),
                    input_schema: input_schema::<WithCommon<A>>(),
                    output_schema: Some(Contract::Paged.output_schema()),
                    annotations: Some(ToolAnnotations::reads_upstream(A::TITLE)),
                },
                access: Access::Rules,
            },
            args: std::marker::PhantomData,
        }))
    }
}

impl<A: ListTool> UpstreamTool for List<A> {
    type Args = WithCommon<A>;
    /// The one request the call makes, and its query parameters, checked with the path.
    type Plan = (Target, Vec<(String, String)>);

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn plan(&self, args: &Self::Args, _: &UpstreamSettings) -> Planned<Self::Plan> {
        let Request { path, params } = request(&args.own)?;
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
        let reply = crate::tools::ciloop::get(&call, &target, &params).await?;
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
    use super::spec::{tools, JobsArgs, RunsArgs};
    use super::*;
    use serde_json::{json, Value as Json};

    /// The path and query of a call's arguments after the checks the server runs: the input
    /// schema, then the request.
    fn checked<A: ListTool>(args: Json) -> Result<(String, String), ToolError> {
        crate::tools::schema::validate(&input_schema::<WithCommon<A>>(), &args)
            .map_err(|e| ToolError::InvalidArguments(e.join("; ")))?;
        let args: WithCommon<A> = crate::tools::registry::read_args(&args)?;
        let r = request(&args.own)?;
        Ok((
            r.path.path().to_owned(),
            crate::upstream::path::form_urlencode(&r.params),
        ))
    }

    fn runs(args: Json) -> Result<(String, String), ToolError> {
        checked::<RunsArgs>(args)
    }

    fn jobs(args: Json) -> Result<(String, String), ToolError> {
        checked::<JobsArgs>(args)
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
        let names: Vec<String> = tools()
            .iter()
            .map(|t| t.spec().descriptor.name.clone())
            .collect();
        for tool in tools() {
            registry.register(tool).unwrap();
        }
        assert_eq!(registry.names(), names);
        assert!(
            names.iter().all(|n| n.starts_with("github_list_")),
            "{names:?}"
        );
    }
}
