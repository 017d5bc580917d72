//! Host tests of `circleci_get_job_logs` through `Server::handle`: v1.1 job details on the v1.1
//! root beside the configured v2 one, each step's output from its signed URL (allow-listed, no
//! credential), v2 failed tests, the excerpt and the artifact, url inputs and refusals.

use crate::common::ci::*;
use devtools_mcp_edge::ports::fake::FakeEnv;
use devtools_mcp_edge::ports::{ArtifactStore, TransportError, UpstreamRequest, UpstreamResponse};
use serde_json::json;

const TOOL: &str = "circleci_get_job_logs";
const S3: &str = "https://circle-production-action-output.s3.amazonaws.com";

fn outputs(step: u32) -> String {
    let messages = match step {
        1 => {
            json!([{"type": "out", "message": "Starting container cimg/node:20.11\r\nusing image cimg/node@sha256:abc\r\n"}])
        }
        _ => json!([
            {"type": "out", "message": "\u{1b}[32mPASS\u{1b}[39m src/a.test.ts\r\n"},
            {"type": "out", "message": "\u{1b}[31mFAIL\u{1b}[39m src/api/client.test.ts\r\n  ● ApiClient › retries on 503\r\n"},
            {"type": "err", "message": "Exited with code exit status 1\r\n"}
        ]),
    };
    messages.to_string()
}

fn upstream(
    output_host: &'static str,
) -> impl Fn(&UpstreamRequest) -> Result<UpstreamResponse, TransportError> {
    move |request| {
        let url = request.url.as_str();
        Ok(match url {
            "https://circle.test/api/v1.1/project/gh/o/r/42" => json_response(
                200,
                &json!({"build_num": 42, "lifecycle": "finished", "outcome": "failed", "status": "failed",
                        "build_url": "https://circleci.com/gh/o/r/42", "workflows": {"job_name": "test"},
                        "steps": [
                            {"name": "Spin up environment", "actions": [{"name": "Spin up environment", "index": 0, "status": "success", "exit_code": null, "has_output": true, "output_url": format!("{output_host}/out/1?X-Amz-Signature=SIG")}]},
                            {"name": "npm test", "actions": [{"name": "npm test", "index": 0, "status": "failed", "failed": true, "exit_code": 1, "has_output": true, "output_url": format!("{output_host}/out/2?X-Amz-Signature=SIG")}]},
                            {"name": "Save results", "actions": [{"name": "Save results", "index": 0, "status": "success", "exit_code": 0, "has_output": true, "output_url": format!("{output_host}/out/3?X-Amz-Signature=SIG")}]}
                        ]})
                .to_string(),
                &[],
            ),
            "https://circle.test/api/v2/project/gh/o/r/42/tests" => json_response(
                200,
                &json!({"items": [
                    {"name": "retries on 503", "classname": "ApiClient", "file": "src/api/client.test.ts", "result": "failure", "message": "Expected: 3\nReceived: 1", "run_time": 0.2},
                    {"name": "formats", "classname": "fmt", "file": "src/a.test.ts", "result": "success", "message": "", "run_time": 0.1}
                ], "next_page_token": null})
                .to_string(),
                &[],
            ),
            u if u.starts_with(&format!("{output_host}/out/")) => {
                let step = [1, 2, 3].into_iter().find(|n| u.contains(&format!("/out/{n}?"))).unwrap_or(2);
                json_response(200, &outputs(step), &[])
            }
            _ => json_response(404, r#"{"message":"Not Found"}"#, &[]),
        })
    }
}

fn fake(host: &'static str) -> FakeEnv {
    let env = env_with(upstream(host));
    env.http.chunk_bytes.set(50);
    env
}

#[test]
fn a_failed_step_its_tests_and_the_whole_output() {
    let server = ci_server();
    let env = fake(S3);
    for args in [
        json!({"projectSlug": "gh/o/r", "jobNumber": 42}),
        json!({"url": "https://app.circleci.com/pipelines/github/o/r/7/workflows/abc/jobs/42"}),
    ] {
        let mut args = args.as_object().unwrap().clone();
        args.insert("outputFormat".into(), json!("json"));
        let out = call(&server, &env, TOOL, args.into());
        assert!(!out.is_error, "{}", out.text);
        let job = &out.json()["jobs"][0];
        assert_eq!(job["name"], "test");
        assert_eq!(job["conclusion"], "failed");
        assert_eq!(
            job["failedTests"],
            json!([{"name": "retries on 503", "classname": "ApiClient", "file": "src/api/client.test.ts", "message": "Expected: 3\nReceived: 1"}])
        );
        let steps = job["log"]["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0]["name"], "npm test");
        assert_eq!(steps[0]["conclusion"], "failed (exit code 1)");
        let tail: Vec<&str> = steps[0]["tail"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            tail,
            [
                "PASS src/a.test.ts",
                "FAIL src/api/client.test.ts",
                "  ● ApiClient › retries on 503",
                "Exited with code exit status 1"
            ]
        );
        assert_eq!(steps[0]["firstLine"], 3);
        let id = job["logArtifactId"].as_str().unwrap();
        let key = env
            .artifacts
            .keys()
            .into_iter()
            .find(|k| k.ends_with(id))
            .unwrap();
        let stored = futures::executor::block_on(env.artifacts.get_range(&key, 0, u64::MAX))
            .unwrap()
            .unwrap()
            .bytes;
        assert!(String::from_utf8(stored)
            .unwrap()
            .starts_with("Starting container cimg/node:20.11\r\n"));
        assert_no_secret(&out, &env);
    }
    // The output host never got the credential; the API always did.
    for request in env.http.sent() {
        let credential = request_header(&request, "Circle-Token").is_some();
        assert_eq!(
            credential,
            request.url.starts_with("https://circle.test/"),
            "{}",
            request.url
        );
    }
}

#[test]
fn an_output_url_off_the_allow_list_is_refused() {
    let server = ci_server();
    let env = fake("https://evil.example");
    let out = call(
        &server,
        &env,
        TOOL,
        json!({"projectSlug": "gh/o/r", "jobNumber": 42, "outputFormat": "json"}),
    );
    let job = &out.json()["jobs"][0];
    assert!(
        job["logError"].as_str().unwrap().contains("evil.example"),
        "{job}"
    );
    assert!(env
        .http
        .sent()
        .iter()
        .all(|r| !r.url.contains("evil.example")));
}

#[test]
fn bad_arguments_and_unknown_jobs() {
    let server = ci_server();
    let env = fake(S3);
    let out = call(
        &server,
        &env,
        TOOL,
        json!({"projectSlug": "gh/o/r", "jobNumber": 7}),
    );
    assert!(
        out.is_error && out.text.contains("Not Found"),
        "{}",
        out.text
    );
    let out = call(
        &server,
        &env,
        TOOL,
        json!({"projectSlug": "gh/o/r", "jobNumber": 42, "grep": "a{1000}{1000}"}),
    );
    assert!(
        out.is_error && out.text.contains("not a valid regular expression"),
        "{}",
        out.text
    );
}

#[test]
fn a_grep_past_its_budget_stops_reading_the_outputs_and_answers_its_code() {
    let server = ci_server();
    let base = upstream(S3);
    // Step 2's output holds 20 KB of lines: `(?:.?){0,200}QQ` (32 KB compiled on a 64-bit host)
    // runs out of budget after about 8 KB of them.
    let env = env_with(move |request: &UpstreamRequest| {
        if request.url.contains("/out/2?") {
            let messages =
                json!([{"type": "out", "message": "PASS src/a.test.ts\r\n".repeat(1000)}]);
            Ok(json_response(200, &messages.to_string(), &[]))
        } else {
            base(request)
        }
    });
    let out = call(
        &server,
        &env,
        TOOL,
        json!({"projectSlug": "gh/o/r", "jobNumber": 42, "grep": "(?:.?){0,200}QQ"}),
    );
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains("Use a shorter, simpler pattern"),
        "{}",
        out.text
    );
    assert!(
        out.raw.contains(r#""code":"grep_over_budget""#),
        "{}",
        out.raw
    );
    let sent: Vec<String> = env.http.sent().into_iter().map(|r| r.url).collect();
    assert!(sent.iter().any(|u| u.contains("/out/2?")), "{sent:?}");
    assert!(!sent.iter().any(|u| u.contains("/out/3?")), "{sent:?}");
    assert!(env.artifacts.keys().is_empty());
}
