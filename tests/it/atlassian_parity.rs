//! Parity of the `jira_*`, `conf_*` and `bb_*` tools with the reference servers, on every golden
//! in tests/golden/atlassian (docs/parity.md, "Using the goldens from the Rust tests"): the
//! request sent, the text byte for byte and `isError`. Where the reference names the local file
//! holding the raw response, ours names the artifact holding the full value.

use crate::common::protocol::*;
use base64::Engine as _;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::UpstreamResponse;
use devtools_mcp_edge::render::ArtifactRef;
use devtools_mcp_edge::server::Server;
use devtools_mcp_edge::tools;
use serde_json::{json, Value as Json};

const EMAIL: &str = "parity@example.com";
const TOKEN: &str = "parity-dummy-token";

fn server() -> Server {
    let mut settings = base_settings();
    for (k, v) in [
        ("ATLASSIAN_SITE_NAME", "parity-site"),
        ("ATLASSIAN_USER_EMAIL", EMAIL),
        ("ATLASSIAN_API_TOKEN", TOKEN),
    ] {
        settings.push((k.into(), v.into()));
    }
    Server::with_registry(&settings_fn(settings), tools::all())
}

fn goldens(vendor: &str) -> Vec<Json> {
    let path = format!(
        "{}/tests/golden/atlassian/{vendor}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str::<Json>(&text)
        .unwrap()
        .as_array()
        .cloned()
        .unwrap()
}

/// Our reply for one golden case, the request the fake upstream saw and the ids of the
/// artifacts saved.
fn run(
    server: &Server,
    case: &Json,
) -> (
    Json,
    Vec<devtools_mcp_edge::ports::UpstreamRequest>,
    Vec<String>,
) {
    let upstream = case["upstream"].clone();
    let http = ScriptedHttp::new(move |_| {
        Ok(UpstreamResponse {
            status: upstream["status"].as_u64().unwrap() as u16,
            status_text: upstream["statusText"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            headers: upstream["headers"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect(),
            body: upstream["body"]
                .as_str()
                .map(|b| b.as_bytes().to_vec())
                .unwrap_or_default(),
        })
    });
    let env = FakeEnv::with_http(http);
    let tool = case["tool"].as_str().unwrap();
    let body = request(
        1,
        "tools/call",
        json!({"name": tool, "arguments": case["args"], "_meta": meta_2026()}),
    );
    let response = futures::executor::block_on(server.handle(
        post(&body.to_string(), &headers_2026("tools/call", Some(tool))),
        env.ports(),
    ));
    let ids = env
        .artifacts
        .keys()
        .iter()
        .filter_map(|key| key.rsplit('/').next().map(str::to_owned))
        .collect();
    (body_json(&response), env.http.sent(), ids)
}

fn check(vendor: &str) {
    let server = server();
    let expected_auth = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{EMAIL}:{TOKEN}"))
    );
    let cases = goldens(vendor);
    assert!(!cases.is_empty());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let (reply, sent, artifact_ids) = run(&server, case);
        let result = &reply["result"];
        let want = &case["request"];
        if sent.len() != 1 {
            failures.push(format!(
                "{name}: {} requests sent, reply {reply}",
                sent.len()
            ));
            continue;
        }
        let req = &sent[0];
        if req.method != want["method"].as_str().unwrap()
            || req.url != want["url"].as_str().unwrap()
        {
            failures.push(format!(
                "{name}: request {} {} != {} {}",
                req.method, req.url, want["method"], want["url"]
            ));
        }
        let want_headers: Vec<(String, String)> = want["headers"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                let v = if k == "Authorization" {
                    expected_auth.clone()
                } else {
                    v.as_str().unwrap().to_owned()
                };
                (k.clone(), v)
            })
            .collect();
        if req.headers != want_headers {
            failures.push(format!(
                "{name}: headers {:?} != {want_headers:?}",
                req.headers
            ));
        }
        let body = req
            .body
            .as_ref()
            .map(|b| String::from_utf8(b.clone()).unwrap());
        if body.as_deref() != want["body"].as_str() {
            failures.push(format!("{name}: body {body:?} != {}", want["body"]));
        }
        let mut lines: Vec<&str> = case["result"]["text"]
            .as_str()
            .unwrap()
            .split('\n')
            .collect();
        let saved_at = case["result"]["savedAtLine"].as_u64().map(|i| i as usize);
        let guidance = lines
            .iter()
            .position(|line| *line == "**To access the complete data:**");
        let line = |id: &String| ArtifactRef { id: id.clone() }.guidance_line();
        // (index, replaces the reference's line, our line)
        let artifact_line = match (saved_at, guidance, &artifact_ids[..]) {
            (Some(i), _, [id]) => Some((i, true, line(id))),
            // The reference saves no file for a text body (a diff); we save every cut value.
            (None, Some(g), [id]) => Some((g + 1, false, line(id))),
            (None, _, []) => None,
            (at, _, ids) => {
                failures.push(format!("{name}: saved-at line {at:?}, artifacts {ids:?}"));
                continue;
            }
        };
        if let Some((i, replaces, line)) = &artifact_line {
            if *replaces {
                lines[*i] = line;
            } else {
                lines.insert(*i, line);
            }
        }
        let want_text = lines.join("\n");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        if text != want_text {
            failures.push(format!(
                "{name}: text differs\n--- ours\n{text}\n--- reference\n{want_text}"
            ));
        }
        let is_error = result["isError"].as_bool().unwrap_or(false);
        if is_error != case["result"]["errorResult"].as_bool().unwrap() {
            failures.push(format!("{name}: isError {is_error}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {vendor} goldens differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn jira_matches_the_reference() {
    check("jira");
}

#[test]
fn confluence_matches_the_reference() {
    check("confluence");
}

#[test]
fn bitbucket_matches_the_reference() {
    check("bitbucket");
}
