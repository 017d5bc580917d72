//! Host tests of `github_list_workflow_runs` and `github_list_workflow_jobs` through
//! `Server::handle`: the request sent (URL, query, headers), paging from `Link` headers on the
//! first, a middle and the last page, projection, the text, error statuses, transport
//! failures, refused arguments, and that nothing is cached or leaks a credential.

use crate::common::ci::*;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::{TransportError, UpstreamRequest, UpstreamResponse};
use serde_json::{json, Value as Json};

const RUNS: &str = "github_list_workflow_runs";
const JOBS: &str = "github_list_workflow_jobs";
/// Runs the fake repository has.
const TOTAL: u64 = 95;

/// A GitHub-like runs endpoint: `TOTAL` runs, newest first, paged by `per_page`/`page` with a
/// Link header written as api.github.com writes it (prev, next, last, first).
fn runs_upstream(request: &UpstreamRequest) -> Result<UpstreamResponse, TransportError> {
    let per_page: u64 = query_param(&request.url, "per_page").map_or(30, |v| v.parse().unwrap());
    let page: u64 = query_param(&request.url, "page").map_or(1, |v| v.parse().unwrap());
    let last = TOTAL.div_ceil(per_page);
    let first_id = TOTAL - (page - 1) * per_page;
    let ids: Vec<u64> = (0..per_page)
        .map(|i| first_id.wrapping_sub(i))
        .filter(|id| (1..=TOTAL).contains(id))
        .collect();
    let runs: Vec<Json> = ids
        .iter()
        .map(|id| json!({"id": id, "name": "CI", "status": "completed", "conclusion": if id % 3 == 0 {"failure"} else {"success"}}))
        .collect();
    let base = "https://ghe.test/api/v3/repositories/42/actions/runs";
    let link = |p: u64, rel: &str| format!("<{base}?per_page={per_page}&page={p}>; rel=\"{rel}\"");
    let mut parts = Vec::new();
    if page > 1 {
        parts.push(link(page - 1, "prev"));
    }
    if page < last {
        parts.push(link(page + 1, "next"));
        parts.push(link(last, "last"));
    }
    if page > 1 {
        parts.push(link(1, "first"));
    }
    let body = json!({"total_count": TOTAL, "workflow_runs": runs}).to_string();
    let joined = parts.join(", ");
    let headers: Vec<(&str, &str)> = if joined.is_empty() {
        vec![]
    } else {
        vec![("Link", joined.as_str())]
    };
    Ok(json_response(200, &body, &headers))
}

#[test]
fn pages_follow_the_link_header_first_middle_last() {
    let server = ci_server();
    let env = env_with(runs_upstream);
    let args = |page: Option<u64>| {
        let mut a = json!({"owner": "octo-org", "repo": "hello-world", "perPage": 40, "outputFormat": "json",
                           "jq": "workflow_runs[*].id"});
        if let Some(p) = page {
            a["page"] = json!(p);
        }
        a
    };
    let first = call(&server, &env, RUNS, args(None));
    assert!(!first.is_error, "{}", first.text);
    let ids: Vec<u64> = (56..=95).rev().collect();
    assert_eq!(first.json(), json!({"data": ids, "nextPage": 2}));
    let middle = call(&server, &env, RUNS, args(Some(2)));
    assert_eq!(middle.json()["nextPage"], 3);
    assert_eq!(middle.json()["data"][0], 55);
    let last = call(&server, &env, RUNS, args(Some(3)));
    assert_eq!(
        last.json(),
        json!({"data": (1..=15).rev().collect::<Vec<u64>>(), "nextPage": null})
    );
    let urls: Vec<String> = env.http.sent().iter().map(|r| r.url.clone()).collect();
    assert_eq!(
        urls,
        [
            "https://ghe.test/api/v3/repos/octo-org/hello-world/actions/runs?per_page=40",
            "https://ghe.test/api/v3/repos/octo-org/hello-world/actions/runs?per_page=40&page=2",
            "https://ghe.test/api/v3/repos/octo-org/hello-world/actions/runs?per_page=40&page=3",
        ]
    );
    assert_no_secret(&last, &env);
}

#[test]
fn a_single_page_has_no_next_page() {
    let server = ci_server();
    let env = env_with(|_| {
        Ok(json_response(
            200,
            r#"{"total_count":0,"workflow_runs":[]}"#,
            &[],
        ))
    });
    let out = call(
        &server,
        &env,
        RUNS,
        json!({"owner": "o", "repo": "r", "outputFormat": "json"}),
    );
    assert_eq!(
        out.json(),
        json!({"data": {"total_count": 0, "workflow_runs": []}, "nextPage": null})
    );
}

#[test]
fn sends_the_github_headers_and_filters() {
    let server = ci_server();
    let env = env_with(runs_upstream);
    let out = call(
        &server,
        &env,
        RUNS,
        json!({"owner": "o", "repo": "r", "workflowId": "ci.yml", "branch": "release/1.x",
               "status": "failure", "event": "push", "actor": "octo cat", "perPage": 5, "page": 2}),
    );
    assert!(!out.is_error, "{}", out.text);
    let sent = env.http.sent();
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(r.method, "GET");
    assert_eq!(
        r.url,
        "https://ghe.test/api/v3/repos/o/r/actions/workflows/ci.yml/runs?branch=release%2F1.x&status=failure&event=push&actor=octo+cat&per_page=5&page=2"
    );
    assert_eq!(
        request_header(r, "Authorization"),
        Some(format!("Bearer {GITHUB_TOKEN}").as_str())
    );
    assert_eq!(
        request_header(r, "Accept"),
        Some("application/vnd.github+json")
    );
    assert_eq!(
        request_header(r, "X-GitHub-Api-Version"),
        Some("2022-11-28")
    );
    assert!(request_header(r, "User-Agent").is_some());
    assert_eq!(request_header(r, "Circle-Token"), None);
    assert_eq!(r.body, None);
    assert_eq!(r.timeout_ms, 30_000);
    assert_no_secret(&out, &env);
}

#[test]
fn numeric_workflow_ids_and_jobs() {
    let server = ci_server();
    let env = env_with(|r| {
        let body = if r.url.contains("/jobs") {
            r#"{"total_count":2,"jobs":[{"id":1,"name":"build","conclusion":"success"},{"id":2,"name":"test","conclusion":"failure"}]}"#
        } else {
            r#"{"total_count":0,"workflow_runs":[]}"#
        };
        Ok(json_response(200, body, &[]))
    });
    call(
        &server,
        &env,
        RUNS,
        json!({"owner": "o", "repo": "r", "workflowId": 1000}),
    );
    let jobs = call(
        &server,
        &env,
        JOBS,
        json!({"owner": "o", "repo": "r", "runId": 250, "filter": "all", "jq": "jobs[?conclusion=='failure'].name",
               "outputFormat": "json"}),
    );
    assert_eq!(jobs.json(), json!({"data": ["test"], "nextPage": null}));
    let urls: Vec<String> = env.http.sent().iter().map(|r| r.url.clone()).collect();
    assert_eq!(
        urls,
        [
            "https://ghe.test/api/v3/repos/o/r/actions/workflows/1000/runs?per_page=30",
            "https://ghe.test/api/v3/repos/o/r/actions/runs/250/jobs?filter=all&per_page=30",
        ]
    );
}

#[test]
fn toon_is_the_default_text() {
    let server = ci_server();
    let env = env_with(|_| {
        Ok(json_response(
            200,
            r#"{"total_count":2,"jobs":[{"id":1,"name":"build"},{"id":2,"name":"test"}]}"#,
            &[("Link", "<https://ghe.test/x?page=2>; rel=\"next\"")],
        ))
    });
    let out = call(
        &server,
        &env,
        JOBS,
        json!({"owner": "o", "repo": "r", "runId": 1}),
    );
    assert_eq!(
        out.text,
        "data:\n  total_count: 2\n  jobs[2]{id,name}:\n    1,build\n    2,test\nnextPage: 2"
    );
}

#[test]
fn a_failing_projection_is_data_not_an_error() {
    let server = ci_server();
    let env = env_with(runs_upstream);
    let out = call(
        &server,
        &env,
        RUNS,
        json!({"owner": "o", "repo": "r", "perPage": 1, "jq": "length(total_count)", "outputFormat": "json"}),
    );
    assert!(!out.is_error);
    let v = out.json();
    assert!(v["data"]["_jqError"].is_string(), "{v}");
    assert_eq!(v["data"]["_originalData"]["total_count"], TOTAL);
    assert_eq!(v["nextPage"], 2);
}

#[test]
fn never_cached() {
    let server = ci_server();
    let env = env_with(runs_upstream);
    for _ in 0..3 {
        assert!(!call(&server, &env, RUNS, json!({"owner": "o", "repo": "r"})).is_error);
        assert!(
            !call(
                &server,
                &env,
                JOBS,
                json!({"owner": "o", "repo": "r", "runId": 3})
            )
            .is_error
        );
    }
    assert_eq!(env.http.sent().len(), 6);
    assert!(env.cache.keys().is_empty());
}

#[test]
fn error_statuses_are_error_results() {
    let server = ci_server();
    let cases: &[StatusCase] = &[
        (401, r#"{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}"#, &[],
         "Error: Authentication failed. GitHub API: Bad credentials\nGitHub API Error: {\"message\":\"Bad credentials\""),
        (403, r#"{"message":"Resource not accessible by integration"}"#, &[("X-RateLimit-Remaining", "4999")],
         "Error: Insufficient permissions. GitHub API: Resource not accessible by integration\n"),
        (403, r#"{"message":"API rate limit exceeded for user ID 1."}"#,
         &[("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "1767225900")],
         "Error: Rate limit exceeded. GitHub API: API rate limit exceeded for user ID 1. Retry after 300 seconds (at 2026-01-01T00:05:00.000Z).\n"),
        (404, r#"{"message":"Not Found","documentation_url":"https://docs.github.com/rest/actions/workflow-runs","status":"404"}"#, &[],
         "Error: Resource not found. GitHub API: Not Found\n"),
        (422, r#"{"message":"Validation Failed","errors":[{"resource":"Job","field":"filter","code":"invalid"}]}"#, &[],
         "Error: GitHub API request failed. Detail: Validation Failed | filter: invalid\n"),
        (429, "", &[("Retry-After", "17")],
         "Error: Rate limit exceeded. GitHub API: 429 Too Many Requests. Retry after 17 seconds (at 2026-01-01T00:00:17.000Z)."),
        (500, "oops", &[], "Error: GitHub server error. Detail: 500 Internal Server Error\nGitHub API Error: oops"),
        (502, "", &[], "Error: GitHub server error. Detail: 502 Bad Gateway"),
        (503, "", &[("Retry-After", "5")], "Error: GitHub server error. Detail: 503 Service Unavailable. Retry after 5 seconds"),
        (302, "", &[("Location", "https://elsewhere.test/signed?token=abc")],
         "Error: GitHub API answered 302 (a redirect to elsewhere.test); redirects are not followed."),
    ];
    for (status, body, headers, expected) in cases {
        let (status, body) = (*status, body.to_string());
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let env = env_with(move |_| {
            let h: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            Ok(json_response(status, &body, &h))
        });
        let out = call(&server, &env, RUNS, json!({"owner": "o", "repo": "r"}));
        assert!(out.is_error, "{status}: {}", out.text);
        assert!(
            out.text.starts_with(expected),
            "{status}: {:?}\nexpected prefix {expected:?}",
            out.text
        );
        assert!(!out.text.contains("signed?token"), "{}", out.text);
        assert_no_secret(&out, &env);
    }
}

#[test]
fn transport_failures_are_clear_errors() {
    let server = ci_builder(&[
        ("UPSTREAM_TIMEOUT_MS", "2500"),
        ("UPSTREAM_MAX_BYTES", "65536"),
    ])
    .build()
    .server;
    let cases: Vec<(Responder, &str)> = vec![
        (
            Box::new(|_| Err(TransportError::Timeout)),
            "Error: Request timeout: GitHub API did not respond within 2.5 seconds",
        ),
        (
            Box::new(|_| {
                Err(TransportError::Network(format!(
                    "connection reset while sending Bearer {GITHUB_TOKEN}"
                )))
            }),
            "Error: Network error connecting to GitHub API: fetch failed",
        ),
        (
            Box::new(|_| {
                Ok(json_response(
                    200,
                    &format!("\"{}\"", "x".repeat(70_000)),
                    &[],
                ))
            }),
            "Error: Response size exceeds the maximum of 65536 bytes (UPSTREAM_MAX_BYTES)",
        ),
    ];
    for (respond, expected) in cases {
        let env = FakeEnv::with_http(ScriptedHttp::new(respond));
        let out = call(
            &server,
            &env,
            JOBS,
            json!({"owner": "o", "repo": "r", "runId": 9}),
        );
        assert!(out.is_error);
        assert!(out.text.starts_with(expected), "{:?}", out.text);
        assert_eq!(env.http.sent()[0].timeout_ms, 2500);
        assert_no_secret(&out, &env);
    }
}

#[test]
fn bent_arguments_never_reach_upstream() {
    let server = ci_server();
    let env = FakeEnv::new();
    for args in [
        json!({"owner": "..", "repo": "r"}),
        json!({"owner": "o/../../admin", "repo": "r"}),
        json!({"owner": "o", "repo": "r/../../x"}),
        json!({"owner": "o", "repo": "r?per_page=1"}),
        json!({"owner": "o", "repo": "r%2F..%2Fx"}),
        json!({"owner": "https://evil.test", "repo": "r"}),
        json!({"owner": "o", "repo": "r", "workflowId": "../../../user"}),
        json!({"owner": "o", "repo": "r", "workflowId": "a\\b"}),
        json!({"owner": "o", "repo": "r", "workflowId": "x\r\nHost: evil"}),
        json!({"owner": "o", "repo": "r", "workflowId": 0}),
        json!({"owner": "o", "repo": "r", "perPage": 101}),
        json!({"owner": "o", "repo": "r", "page": 0}),
        json!({"owner": "o", "repo": "r", "status": "exploded"}),
        json!({"owner": "o", "repo": "r", "outputFormat": "yaml"}),
        json!({"owner": "o", "repo": "r", "unknown": 1}),
        json!({"repo": "r"}),
    ] {
        let out = call(&server, &env, RUNS, args.clone());
        assert!(out.is_error, "{args}: {}", out.text);
    }
    for args in [
        json!({"owner": "o", "repo": "r"}),
        json!({"owner": "o", "repo": "r", "runId": -1}),
        json!({"owner": "o", "repo": "r", "runId": "1; rm"}),
        json!({"owner": "o", "repo": "r", "runId": 1, "filter": "none"}),
    ] {
        let out = call(&server, &env, JOBS, args.clone());
        assert!(out.is_error, "{args}: {}", out.text);
    }
    assert!(env.http.sent().is_empty());
}

#[test]
fn without_a_token_the_error_says_what_to_set() {
    let server = ci_builder(&[]).without("GITHUB_TOKEN").build().server;
    let env = FakeEnv::new();
    let out = call(&server, &env, RUNS, json!({"owner": "o", "repo": "r"}));
    assert!(out.is_error);
    assert_eq!(
        out.text,
        "Error: GitHub is not configured on this server: set the secret GITHUB_TOKEN."
    );
    assert!(env.http.sent().is_empty());
}

#[test]
fn tools_are_listed_with_read_only_annotations() {
    let server = ci_server();
    let env = FakeEnv::new();
    let body = crate::common::protocol::request(
        1,
        "tools/list",
        json!({"_meta": crate::common::protocol::meta_2026()}),
    );
    let response = futures::executor::block_on(server.handle(
        crate::common::protocol::post(
            &body.to_string(),
            &crate::common::protocol::headers_2026("tools/list", None),
        ),
        env.ports(),
    ));
    let listed = crate::common::protocol::body_json(&response);
    let tools = listed["result"]["tools"].as_array().unwrap();
    for name in [RUNS, JOBS] {
        let tool = tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} not listed"));
        let a = &tool["annotations"];
        assert_eq!(
            (
                a["readOnlyHint"].clone(),
                a["idempotentHint"].clone(),
                a["openWorldHint"].clone()
            ),
            (json!(true), json!(true), json!(true))
        );
        assert_eq!(a["destructiveHint"], false);
        assert!(tool["description"].as_str().unwrap().contains("nextPage"));
    }
}

#[test]
fn malformed_json_declared_as_json_is_an_error() {
    let server = ci_server();
    let env = env_with(|_| {
        Ok(json_response(
            200,
            r#"{"total_count": 3, "workflow_runs": ["#,
            &[],
        ))
    });
    let out = call(&server, &env, RUNS, json!({"owner": "o", "repo": "r"}));
    assert!(out.is_error, "{}", out.raw);
    assert_eq!(
        out.text,
        "Error: Invalid response from GitHub API: the body is declared as JSON but is not valid \
         JSON (cut off or corrupted on the way); try the call again"
    );
    // Broken only past the part the parser releases as it goes: the same error.
    let env = env_with(|_| {
        let runs = vec![r#"{"id":1,"name":"CI"}"#; 200_000].join(",");
        Ok(json_response(
            200,
            &format!(r#"{{"total_count": 3, "workflow_runs": [{runs},]}}"#),
            &[],
        ))
    });
    let big = call(&server, &env, RUNS, json!({"owner": "o", "repo": "r"}));
    assert!(big.is_error, "{}", big.raw);
    assert_eq!(big.text, out.text);
    // Without a JSON content type the body is data, as for any text endpoint.
    let env = env_with(|_| {
        Ok(UpstreamResponse {
            status: 200,
            status_text: "OK".into(),
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: b"not json".to_vec(),
        })
    });
    let out = call(
        &server,
        &env,
        RUNS,
        json!({"owner": "o", "repo": "r", "outputFormat": "json"}),
    );
    assert!(!out.is_error, "{}", out.raw);
    assert_eq!(out.json()["data"], "not json");
}
