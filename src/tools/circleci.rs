//! The `circleci_get` tool: a GET on the CircleCI v2 API through the shared upstream client, with
//! successful bodies cached in the HTTP cache per principal and credential. Paths about
//! pipelines, workflows and jobs (status that changes while you look) are never cached. The
//! CI loop's workflow tools are in [`workflow`].

pub(crate) mod workflow;

use crate::cache::{cache_key, CachedResponse, HttpCache, UpstreamIdentity};
use crate::mcp::{CallToolResult, ToolAnnotations, ToolDescriptor};
use crate::ports::header;
use crate::structured::{Contract, Envelope};
use crate::time::iso8601_utc_ms;
use crate::tools::args::{
    arguments, input_schema, CommonArgs, Fallback, Field, WithCommon, JQ, OUTPUT_FORMAT,
    QUERY_PARAMS,
};
use crate::tools::output::{self, Rendered};
use crate::tools::registry::{
    Access, Planned, Tool, ToolContext, ToolError, ToolSpec, Upstream, UpstreamTool,
};
use crate::upstream::{self, ApiPath, Flavor, Method, Target, Targets, UpstreamSettings, Vendor};
use crate::value::{Map, Number, Value};

/// Name of the tool.
pub(crate) const GET: &str = "circleci_get";

/// The CircleCI tools, for the registry.
pub(crate) fn tools() -> Vec<Box<dyn Tool>> {
    vec![Box::new(Upstream(CircleGet(spec())))]
}

fn spec() -> ToolSpec {
    ToolSpec {
        descriptor: ToolDescriptor {
        name: GET.into(),
        title: Some("CircleCI API GET".into()),
        description: "GET any CircleCI API v2 endpoint. `path` is relative to the v2 API (e.g. `/me`, \
`/project/gh/octo-org/hello-world`, `/project/gh/octo-org/hello-world/pipeline?branch=main`, \
`/pipeline/{id}/workflow`, `/workflow/{id}/job`, `/project/gh/octo-org/hello-world/job/{number}`, \
`/project/gh/octo-org/hello-world/{job-number}/artifacts`, `/insights/gh/octo-org/hello-world/workflows`). Project \
slugs are `vcs/org/repo` (`gh`, `bb`, or `circleci/{org-id}/{project-id}`). Lists are paged with \
`next_page_token`: pass it back as queryParams `{\"page-token\": ...}`. Result: `{data, cache: {hit, ageMs, \
fetchedAt}}`, `data` being the response after `jq`, `cache` whether and how long ago (ms, and when in UTC) it was \
cached here. Responses are cached briefly per caller, except pipelines, workflows and jobs (always live); \
`fresh: true` bypasses the cache."
            .into(),
        input_schema: input_schema::<WithCommon<Args>>(),
        output_schema: Some(Contract::CircleCiRead.output_schema()),
        annotations: Some(ToolAnnotations::reads_upstream("CircleCI API GET")),
        },
        access: Access::Rules,
    }
}

arguments! {
    /// `circleci_get`'s arguments (`queryParams`, `jq` and `outputFormat` are the shared ones).
    pub(crate) struct Args: closed {
        /// The API path.
        path: String = Field::string("path").min(1).max(2000).describe(
            "API path under https://circleci.com/api/v2 (or the configured CircleCI server), \
             e.g. `/project/gh/octo-org/hello-world/pipeline`. A path, never a full URL.",
        ),
        shared QUERY_PARAMS,
        shared JQ,
        shared OUTPUT_FORMAT,
        /// Skip the cache.
        fresh: bool = Field::boolean("fresh").default(Fallback::Boolean(false)).describe(
            "Skip the cache: fetch now and replace the cached copy (after a change, or when \
             `cache.ageMs` is too old).",
        ),
    }
}

/// Validates `raw` as a v2 API path. A leading `/api/v2` (from a URL copied out of the docs) is
/// dropped, since the configured base already ends with it.
fn api_path(raw: &str) -> Result<ApiPath, ToolError> {
    let parsed = ApiPath::parse(raw).map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
    let path = parsed.path();
    let rest = match path.strip_prefix("/api/v2") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
        _ => return Ok(parsed),
    };
    let mut again = if rest.is_empty() { "/" } else { rest }.to_owned();
    if let Some(q) = parsed.query() {
        again.push('?');
        again.push_str(q);
    }
    ApiPath::parse(&again).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}

/// True when `path` (relative to the v2 API; canonical, so `pipel%69ne` is `pipeline`, and
/// compared in lower case) reads status that changes while a run
/// is going, so it is never served from or written to the cache:
/// - any segment `pipeline`, `pipelines`, `workflow`, `workflows`, `job` or `jobs`, or ending in
///   `_job` / `-job` (e.g. `/organizations/{id}/usage_export_job/{id}`, an export's progress);
/// - `/project/{vcs}/{org}/{repo}/{job-number}/...`: a job's artifacts and test results, which
///   grow while the job runs.
///
/// Insights (`/insights/...`) are aggregates CircleCI itself refreshes with a delay; they are
/// cached although their paths say `workflows` and `jobs`.
pub(crate) fn is_live_path(path: &ApiPath) -> bool {
    let segments: Vec<String> = path
        .path()
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    if segments.first().map(String::as_str) == Some("insights") {
        return false;
    }
    let status_segment = segments.iter().any(|s| {
        matches!(
            s.as_str(),
            "pipeline" | "pipelines" | "workflow" | "workflows" | "job" | "jobs"
        ) || s.ends_with("_job")
            || s.ends_with("-job")
    });
    let job_number = segments.first().map(String::as_str) == Some("project")
        && segments
            .get(4)
            .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    status_segment || job_number
}

/// What the result says about the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CacheInfo {
    hit: bool,
    age_ms: u64,
    fetched_at_ms: u64,
}

/// The result value: `{data, cache: {hit, ageMs, fetchedAt}}`.
fn envelope(data: Value, info: CacheInfo) -> Value {
    let mut cache = Map::new();
    cache.insert("hit".into(), Value::Bool(info.hit));
    cache.insert(
        "ageMs".into(),
        Value::Number(Number::from_i64(
            i64::try_from(info.age_ms).unwrap_or(i64::MAX),
        )),
    );
    cache.insert(
        "fetchedAt".into(),
        Value::String(iso8601_utc_ms(info.fetched_at_ms)),
    );
    let mut map = Map::new();
    map.insert("data".into(), data);
    map.insert("cache".into(), Value::Object(cache));
    Value::Object(map)
}

struct CircleGet(ToolSpec);

impl UpstreamTool for CircleGet {
    type Args = WithCommon<Args>;
    /// The one request the call makes.
    type Plan = Target;

    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn plan(&self, args: &Self::Args, _: &UpstreamSettings) -> Planned<Target> {
        let path = api_path(&args.own.path)?;
        let target = Target::checked(Vendor::CircleCi, Flavor::Cloud, Method::Get, &path)
            .map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
        Ok((Targets::one(target.clone()), target))
    }

    /// Serves the call from the cache when allowed and present, else fetches (and fills the cache
    /// when allowed). The cache holds the raw body; `jq` runs afterwards, so one entry serves every
    /// projection of the same URL.
    async fn run(
        &self,
        args: Self::Args,
        target: Target,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let WithCommon { common, own: args } = args;
        let path = &target.path;
        let cache = HttpCache::new(&call.ports, call.settings.cache_ttl_seconds);
        // Without credentials there is nothing to key on; the client then answers "not configured".
        let key = match call.upstream.endpoint(Vendor::CircleCi) {
            Some(endpoint) if !is_live_path(path) => {
                let identity = UpstreamIdentity::new(
                    Vendor::CircleCi.id(),
                    endpoint.credential.identity.expose(),
                );
                // The URL the client builds for the target.
                let url = path.url(&endpoint.base_url, &common.query_params.0);
                Some(cache_key(call.principal.name(), &identity, &url))
            }
            _ => None,
        };
        if let (Some(key), false) = (&key, args.fresh) {
            let clock = call.ports.clock;
            // A cached body costs what a fetched one does once parsed and rendered.
            let cached = cache
                .lookup(key)
                .await
                .map_err(|busy| upstream::UpstreamError::busy(&target, clock.now_ms(), busy))?;
            if let Some(hit) = cached {
                let now = clock.now_ms();
                let headers: Vec<(String, String)> = hit
                    .content_type
                    .iter()
                    .map(|ct| ("Content-Type".to_owned(), ct.clone()))
                    .collect();
                let decoded = call
                    .upstream
                    .decode_bytes(&target, hit.status, &headers, &hit.body)?;
                let info = CacheInfo {
                    hit: true,
                    age_ms: now.saturating_sub(hit.fetched_at_ms),
                    fetched_at_ms: hit.fetched_at_ms,
                };
                return Ok(respond(decoded.value, info, &common, &call).await);
            }
        }
        let query = &common.query_params.0;
        let raw = call.upstream.send_raw(&target, query, None).await?;
        // A broken JSON body is an error, and never cached.
        let decoded = call.upstream.decode_checked(&target, &raw)?;
        let info = CacheInfo {
            hit: false,
            age_ms: 0,
            fetched_at_ms: raw.received_at_ms,
        };
        if let Some(key) = &key {
            let entry = CachedResponse {
                status: raw.status,
                content_type: header(&raw.headers, "content-type").map(str::to_owned),
                body: raw.body,
                fetched_at_ms: raw.received_at_ms,
            };
            cache.store(key, entry).await;
        }
        Ok(respond(decoded.value, info, &common, &call).await)
    }
}

async fn respond(
    body: Value,
    info: CacheInfo,
    common: &CommonArgs,
    call: &ToolContext<'_>,
) -> CallToolResult {
    let data = output::project(body, common.jq.as_deref(), call);
    Rendered::new(envelope(data, info), common.output_format, call.settings)
        .with_envelope(Envelope::Whole)
        .finish(call)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_paths_are_pipelines_workflows_and_jobs() {
        for path in [
            "/pipeline",
            "/pipeline/5034460f-c7c4-4c43-9457-de07e2029e7b",
            "/pipeline/5034460f/workflow",
            "/pipeline/5034460f/config",
            "/project/gh/org/repo/pipeline",
            "/project/gh/org/repo/pipeline/mine",
            "/project/gh/org/repo/pipeline/123",
            "/project/gh/org/repo/job/42",
            "/project/gh/org/repo/42/artifacts",
            "/project/gh/org/repo/42/tests",
            "/project/circleci/0f5b/1c2d/42/artifacts",
            "/workflow/5034460f",
            "/workflow/5034460f/job",
            "/jobs/abc/steps",
            "/organizations/abc/usage_export_job/def",
            "/Project/gh/org/repo/Pipeline",
            "/project/gh/org/repo/pipel%69ne",
            "/project/gh/org/repo/%50IPELINE",
        ] {
            assert!(
                is_live_path(&ApiPath::parse(path).unwrap()),
                "{path} should be live"
            );
        }
    }

    #[test]
    fn other_paths_are_cacheable() {
        for path in [
            "/",
            "/me",
            "/me/collaborations",
            "/project/gh/org/repo",
            "/project/gh/org/repo/envvar",
            "/project/gh/org/repo/checkout-key",
            "/project/gh/org/repo/schedule",
            "/context",
            "/context/abc/environment-variable",
            "/insights/gh/org/repo/workflows",
            "/insights/gh/org/repo/workflows/build/jobs",
            "/insights/gh/org/summary",
            "/project/gh/org/pipelines-repo",
            "/project/gh/org/job-runner",
            "/project/gh/org/repo/envvar/JOB_NAME",
            "/user/abc",
            "/project/gh/org/4",
        ] {
            assert!(
                !is_live_path(&ApiPath::parse(path).unwrap()),
                "{path} should be cacheable"
            );
        }
    }

    #[test]
    fn paths_are_validated_and_lose_a_leading_api_v2() {
        let ok = |raw: &str| {
            let p = api_path(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            match p.query() {
                Some(q) => format!("{}?{q}", p.path()),
                None => p.path().to_owned(),
            }
        };
        assert_eq!(ok("/me"), "/me");
        assert_eq!(ok("me"), "/me");
        assert_eq!(ok("/api/v2/me"), "/me");
        assert_eq!(ok("/api/v2"), "/");
        assert_eq!(
            ok("/api/v2/project/gh/o/r?branch=main"),
            "/project/gh/o/r?branch=main"
        );
        assert_eq!(ok("/api/v20/x"), "/api/v20/x");
        for bad in [
            "https://evil.example/me",
            "//evil.example/me",
            "/me@evil.example",
            "/a\\b",
            "/a/../../me",
            "/me\r\nX: y",
            "",
        ] {
            match api_path(bad) {
                Err(ToolError::InvalidArguments(m)) => {
                    assert!(m.starts_with("Invalid path"), "{m}")
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn envelope_reports_cache_state() {
        let v = envelope(
            Value::from("x"),
            CacheInfo {
                hit: true,
                age_ms: 1500,
                fetched_at_ms: 1_767_225_600_000,
            },
        );
        assert_eq!(
            v.to_compact_json(),
            r#"{"data":"x","cache":{"hit":true,"ageMs":1500,"fetchedAt":"2026-01-01T00:00:00.000Z"}}"#
        );
    }
}
