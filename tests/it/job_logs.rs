//! Host tests of `github_get_job_logs` through `Server::handle`: the requests made (job,
//! annotations, the log request and the one redirect, without the credential), the excerpt
//! (failed step's tail, errors, grep), the complete log as an artifact, url inputs, a redirect
//! off the allow-list (nothing sent there), an expired signed URL, and upstream errors.

use crate::common::ci::*;
use crate::common::protocol::ALICE_TOKEN_2;
use devtools_mcp_edge::ports::fake::FakeEnv;
use devtools_mcp_edge::ports::{ArtifactStore, UpstreamRequest, UpstreamResponse};
use serde_json::{json, Value as Json};

const TOOL: &str = "github_get_job_logs";
const SIGNED: &str =
    "https://pipelines.actions.githubusercontent.com/abc/_apis/logs/7?sig=SIGNATURE";

fn text_response(status: u16, body: &[u8], headers: &[(&str, &str)]) -> UpstreamResponse {
    UpstreamResponse {
        status,
        status_text: String::new(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: body.to_vec(),
    }
}

/// A failed build: step 3 (`Build`) ends with a compile error.
fn log() -> String {
    let mut lines = vec![
        "2026-01-01T00:00:00.1000000Z Current runner version: '2.321.0'".to_owned(),
        "2026-01-01T00:00:01.1000000Z ##[group]Run actions/checkout@v4".to_owned(),
        "2026-01-01T00:00:01.2000000Z ##[endgroup]".to_owned(),
        "2026-01-01T00:00:02.1000000Z ##[group]Run cargo build".to_owned(),
        "2026-01-01T00:00:02.2000000Z ##[endgroup]".to_owned(),
    ];
    for i in 0..200 {
        lines.push(format!(
            "2026-01-01T00:00:03.0000000Z \u{1b}[32m   Compiling\u{1b}[0m crate-{i} v1.0.0\r"
        ));
    }
    lines.push(
        "2026-01-01T00:00:04.0000000Z \u{1b}[1m\u{1b}[31merror[E0308]\u{1b}[0m: mismatched types"
            .into(),
    );
    lines
        .push("2026-01-01T00:00:04.1000000Z ##[error]Process completed with exit code 101.".into());
    lines.push("2026-01-01T00:00:05.1000000Z Post job cleanup.".into());
    lines.join("\n") + "\n"
}

fn job_json(id: u64, conclusion: &str) -> Json {
    let step = |n: u64, name: &str, c: &str, s: u64| {
        json!({"number": n, "name": name, "status": "completed", "conclusion": c,
               "started_at": format!("2026-01-01T00:00:0{s}Z"), "completed_at": "2026-01-01T00:00:05Z"})
    };
    json!({
        "id": id, "run_id": 9, "name": format!("build-{id}"), "status": "completed", "conclusion": conclusion,
        "html_url": format!("https://github.com/o/r/actions/runs/9/job/{id}"),
        "steps": [step(1, "Set up job", "success", 0), step(2, "Checkout", "success", 1),
                  step(3, "Build", if conclusion == "success" {"success"} else {"failure"}, 2),
                  step(4, "Complete job", "success", 5)]
    })
}

/// The GitHub API and the log host: job 7 failed, job 8 succeeded; logs redirect to `location`.
fn upstream(
    location: &'static str,
    log_status: u16,
) -> impl Fn(&UpstreamRequest) -> Result<UpstreamResponse, devtools_mcp_edge::ports::TransportError>
{
    move |request| {
        let url = request.url.as_str();
        let path = url.split('?').next().unwrap_or_default();
        Ok(
            if let Some(rest) = path.strip_prefix(&format!("{GITHUB_URL}/repos/o/r")) {
                match rest {
                "/actions/jobs/7" => json_response(200, &job_json(7, "failure").to_string(), &[]),
                "/actions/jobs/8" => json_response(200, &job_json(8, "success").to_string(), &[]),
                "/actions/runs/9/jobs" => json_response(
                    200,
                    &json!({"total_count": 2, "jobs": [job_json(7, "failure"), job_json(8, "success")]}).to_string(),
                    &[],
                ),
                "/check-runs/7/annotations" => json_response(
                    200,
                    &json!([{"path": "src/main.rs", "start_line": 2, "annotation_level": "failure",
                             "message": "mismatched types", "title": "rustc"}]).to_string(),
                    &[],
                ),
                "/check-runs/8/annotations" => json_response(200, "[]", &[]),
                "/actions/jobs/7/logs" | "/actions/jobs/8/logs" => {
                    text_response(302, b"", &[("Location", location)])
                }
                _ => json_response(404, r#"{"message":"Not Found"}"#, &[]),
            }
            } else if url.starts_with(location) {
                text_response(
                    log_status,
                    log().as_bytes(),
                    &[("Content-Type", "text/plain")],
                )
            } else {
                json_response(599, "unexpected", &[])
            },
        )
    }
}

fn fake(location: &'static str, log_status: u16) -> FakeEnv {
    let env = env_with(upstream(location, log_status));
    env.http.chunk_bytes.set(1000);
    env
}

fn read_artifact(env: &FakeEnv, id: &str) -> Vec<u8> {
    let key = env
        .artifacts
        .keys()
        .into_iter()
        .find(|k| k.ends_with(id))
        .expect("artifact stored");
    futures::executor::block_on(env.artifacts.get_range(&key, 0, u64::MAX))
        .unwrap()
        .unwrap()
        .bytes
}

#[test]
fn a_failed_job_comes_down_to_its_decisive_lines() {
    let server = ci_server();
    let env = fake(SIGNED, 200);
    let out = call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "jobId": 7, "tailLines": 3, "outputFormat": "json"}),
    );
    assert!(!out.is_error, "{}", out.text);
    let data = out.json();
    let job = &data["jobs"][0];
    assert_eq!(job["name"], "build-7");
    assert_eq!(job["conclusion"], "failure");
    assert_eq!(
        job["annotations"][0],
        json!({"path": "src/main.rs", "line": 2, "level": "failure", "message": "mismatched types"})
    );
    let steps = job["log"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0]["name"], "Build");
    let tail: Vec<&str> = steps[0]["tail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        tail,
        [
            "   Compiling crate-199 v1.0.0",
            "error[E0308]: mismatched types",
            "##[error]Process completed with exit code 101."
        ]
    );
    assert_eq!(job["log"]["errors"][0]["line"], 207);
    assert_eq!(job["log"]["lines"], 208);
    assert!(data["moreJobs"] == 0);
    // The log came in many pieces and the complete log is the artifact, byte for byte.
    assert!(env.http.chunks_read.get() > 10);
    let id = job["logArtifactId"].as_str().unwrap();
    assert_eq!(read_artifact(&env, id), log().as_bytes());
    // The log host got no credential; the API got it every time.
    let sent = env.http.sent();
    let to_host: Vec<&UpstreamRequest> =
        sent.iter().filter(|r| r.url.starts_with(SIGNED)).collect();
    assert_eq!(to_host.len(), 1);
    assert!(
        to_host[0]
            .headers
            .iter()
            .all(|(k, _)| !k.eq_ignore_ascii_case("authorization")),
        "{:?}",
        to_host[0]
    );
    assert!(sent
        .iter()
        .filter(|r| r.url.starts_with(GITHUB_URL))
        .all(|r| request_header(r, "Authorization").is_some()));
    assert_no_secret(&out, &env);
    assert!(!out.raw.contains("SIGNATURE"));
}

#[test]
fn grep_and_all_steps() {
    let server = ci_server();
    let env = fake(SIGNED, 200);
    let out = call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "jobId": 7, "grep": "E0308|crate-7 ", "context": 1, "steps": "all", "tailLines": 1, "outputFormat": "json"}),
    );
    let data = out.json();
    let log = &data["jobs"][0]["log"];
    assert_eq!(log["grep"]["matches"], 2);
    let lines: Vec<(u64, bool)> = log["grep"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["line"].as_u64().unwrap(), l["match"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        lines,
        [
            (12, false),
            (13, true),
            (14, false),
            (205, false),
            (206, true),
            (207, false)
        ]
    );
    let names: Vec<&str> = log["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Set up job", "Checkout", "Build", "Complete job"]);
}

#[test]
fn runs_and_urls_read_the_failed_jobs() {
    let server = ci_server();
    for args in [
        json!({"owner": "o", "repo": "r", "runId": 9}),
        json!({"url": "https://github.com/o/r/actions/runs/9"}),
    ] {
        let env = fake(SIGNED, 200);
        let data = call(
            &server,
            &env,
            TOOL,
            json!({"outputFormat": "json", "tailLines": 1})
                .as_object()
                .unwrap()
                .clone()
                .into_iter()
                .chain(args.as_object().unwrap().clone())
                .collect::<serde_json::Map<_, _>>()
                .into(),
        )
        .json();
        let ids: Vec<u64> = data["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["id"].as_u64().unwrap())
            .collect();
        assert_eq!(ids, [7], "{args}");
    }
    let env = fake(SIGNED, 200);
    let data = call(&server, &env, TOOL, json!({"url": "https://github.com/o/r/actions/runs/9", "failedOnly": false, "outputFormat": "json"})).json();
    assert_eq!(data["jobs"].as_array().unwrap().len(), 2);
    let env = fake(SIGNED, 200);
    let data = call(
        &server,
        &env,
        TOOL,
        json!({"url": "https://github.com/o/r/actions/runs/9/job/8", "outputFormat": "json"}),
    )
    .json();
    // No step failed: the last step that wrote is shown.
    assert_eq!(data["jobs"][0]["log"]["steps"][0]["name"], "Complete job");
}

#[test]
fn a_redirect_off_the_allow_list_is_refused_and_nothing_is_sent_there() {
    let server = ci_server();
    let env = fake("https://evil.example/steal?sig=SIGNATURE", 200);
    let out = call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "jobId": 7, "outputFormat": "json"}),
    );
    assert!(!out.is_error);
    let job = &out.json()["jobs"][0];
    let error = job["logError"].as_str().unwrap();
    assert!(
        error.contains("evil.example") && error.contains("LOG_REDIRECT_HOSTS"),
        "{error}"
    );
    assert!(!error.contains("SIGNATURE"));
    assert_eq!(job["logArtifactId"], Json::Null);
    assert!(env
        .http
        .sent()
        .iter()
        .all(|r| !r.url.contains("evil.example")));
    assert!(env.artifacts.keys().is_empty());
}

#[test]
fn an_expired_signed_url_says_so() {
    let server = ci_server();
    for status in [403, 404] {
        let env = fake(SIGNED, status);
        let out = call(
            &server,
            &env,
            TOOL,
            json!({"owner": "o", "repo": "r", "jobId": 7, "outputFormat": "json"}),
        );
        let error = out.json()["jobs"][0]["logError"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            error.contains("expired") && error.contains(&format!("HTTP {status}")),
            "{error}"
        );
        assert!(env.artifacts.keys().is_empty());
    }
}

#[test]
fn upstream_errors_and_bad_arguments() {
    let server = ci_server();
    let env = fake(SIGNED, 200);
    let out = call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "jobId": 404}),
    );
    assert!(out.is_error);
    assert!(out.text.contains("Not Found"), "{}", out.text);
    for (args, says) in [
        (
            json!({"owner": "o", "repo": "r", "jobId": 7, "grep": "(unclosed"}),
            "not a valid regular expression",
        ),
        (
            json!({"owner": "o", "repo": "r", "jobId": 7, "runId": 9}),
            "exactly one of",
        ),
        (
            json!({"url": "https://github.com/o/r/issues/1"}),
            "run or job URL",
        ),
    ] {
        let out = call(&server, &env, TOOL, args.clone());
        assert!(
            out.is_error && out.text.contains(says),
            "{args}: {}",
            out.text
        );
    }
}

#[test]
fn a_completed_job_is_answered_again_from_the_cache_with_new_options() {
    let server = ci_server();
    let env = fake(SIGNED, 200);
    let first = call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "jobId": 7, "outputFormat": "json"}),
    )
    .json();
    assert_eq!(first["jobs"][0]["cached"], false);
    let sent = env.http.sent().len();
    let again = call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "jobId": 7, "grep": "E0308", "context": 0, "tailLines": 1, "outputFormat": "json"}),
    )
    .json();
    assert_eq!(env.http.sent().len(), sent, "no upstream call on a hit");
    let job = &again["jobs"][0];
    assert_eq!(job["cached"], true);
    assert_eq!(job["annotations"], first["jobs"][0]["annotations"]);
    assert_eq!(job["logArtifactId"], first["jobs"][0]["logArtifactId"]);
    assert_eq!(job["log"]["grep"]["lines"][0]["line"], 206);
    assert_eq!(
        job["log"]["steps"][0]["tail"][0]["text"],
        "##[error]Process completed with exit code 101."
    );
    // A run's list is live, its completed jobs come from the cache.
    call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "runId": 9}),
    );
    let run_calls: Vec<String> = env.http.sent()[sent..]
        .iter()
        .map(|r| r.url.clone())
        .collect();
    assert_eq!(run_calls.len(), 1, "{run_calls:?}");
    // Another principal does not share the entry.
    let other = call_as(
        &server,
        &env,
        ALICE_TOKEN_2,
        TOOL,
        json!({"owner": "o", "repo": "r", "jobId": 7, "outputFormat": "json"}),
    );
    assert_eq!(other.json()["jobs"][0]["cached"], false);
}

#[test]
fn an_expired_artifact_means_reading_the_log_again() {
    let server = ci_server();
    let env = fake(SIGNED, 200);
    call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "jobId": 7}),
    );
    let sent = env.http.sent().len();
    // Past the artifact's retention (one hour by default) the entry is of no use.
    env.clock.advance(3_600_000);
    let again = call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "jobId": 7, "outputFormat": "json"}),
    )
    .json();
    assert_eq!(again["jobs"][0]["cached"], false);
    assert!(env.http.sent().len() > sent);
}

#[test]
fn a_grep_pattern_past_its_work_budget_is_refused_with_a_code_live_and_from_the_cache() {
    let server = ci_server();
    let base = upstream(SIGNED, 200);
    // About 300 KB of lines to match: a literal matches them for free, `(?:.?){0,200}QQ` (32 KB
    // compiled on a 64-bit host) runs out of budget after about 8 KB.
    let env = env_with(move |request: &UpstreamRequest| {
        if request.url.starts_with(SIGNED) {
            Ok(text_response(200, log().repeat(50).as_bytes(), &[]))
        } else {
            base(request)
        }
    });
    env.http.chunk_bytes.set(1000);
    let costly = json!({"owner": "o", "repo": "r", "jobId": 7, "grep": "(?:.?){0,200}QQ"});
    let refused = |out: &Outcome| {
        assert!(out.is_error, "{}", out.text);
        assert!(
            out.text.contains("Use a shorter, simpler pattern"),
            "{}",
            out.text
        );
        let reply: Json = serde_json::from_str(&out.raw).unwrap();
        assert_eq!(
            reply["result"]["_meta"]["code"], "grep_over_budget",
            "{}",
            out.raw
        );
    };
    refused(&call(&server, &env, TOOL, costly.clone()));
    // The download stopped where the budget did: no artifact, nothing cached.
    assert!(env.artifacts.keys().is_empty());
    let literal = call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "jobId": 7, "grep": "E0308", "context": 0, "outputFormat": "json"}),
    )
    .json();
    assert_eq!(literal["jobs"][0]["log"]["grep"]["matches"], 50);
    assert_eq!(literal["jobs"][0]["cached"], false);
    // From the cache: no upstream call, the same refusal.
    let sent = env.http.sent().len();
    refused(&call(&server, &env, TOOL, costly));
    assert_eq!(env.http.sent().len(), sent);
    // A run's jobs share one budget; the call stops at the first job that spends it.
    refused(&call(
        &server,
        &env,
        TOOL,
        json!({"owner": "o", "repo": "r", "runId": 9, "failedOnly": false, "grep": "(?:.?){0,200}QQ"}),
    ));
}

/// In a run, a job's cached report stands in for its requests only where policy would let them
/// go out: a rule written after the log was cached refuses the cached copy as it does the live
/// one.
#[test]
fn a_cached_job_in_a_run_is_decided_as_a_live_one() {
    let env = fake(SIGNED, 200);
    let job = json!({"owner": "o", "repo": "r", "jobId": 7, "outputFormat": "json"});
    let first = call(&ci_server(), &env, TOOL, job).json();
    assert_eq!(first["jobs"][0]["cached"], false);
    let run = json!({"owner": "o", "repo": "r", "runId": 9, "outputFormat": "json"});
    let open = call(&ci_server(), &env, TOOL, run.clone());
    assert_eq!(open.json()["jobs"][0]["cached"], true, "{}", open.text);
    let policy = r#"{"rules": [
        {"id": "no-logs", "match": {"paths": ["/repos/o/r/actions/jobs/*/logs"]}, "effect": "deny"},
        {"id": "read", "match": {"methods": ["GET"]}, "effect": "allow"}]}"#;
    let guarded = ci_builder(&[("MCP_POLICY", policy)]).build().server;
    let refused = call(&guarded, &env, TOOL, run);
    assert_eq!(
        refused.json()["jobs"][0]["cached"],
        false,
        "{}",
        refused.text
    );
    assert!(refused.text.contains("no-logs"), "{}", refused.text);
    assert!(!refused.text.contains("exit code 101"), "{}", refused.text);
}
