//! Host tests of the structured size bound: oversized values become `data: null` plus
//! `incomplete` with the whole value in one artifact read back through `artifact_read`; the bound
//! and text truncation are independent but share the call's one artifact; a failed save still
//! answers. And the flag-off proof: both modes' bytes compared call by call.

use crate::common::protocol::{ALICE_TOKEN_2, TOKEN};
use crate::common::server::Reply;
use crate::common::structured::*;
use devtools_mcp_edge::ports::fake::FakeEnv;
use devtools_mcp_edge::ports::UpstreamResponse;
use serde_json::{json, Value as Json};

const LINK_NEXT: &str = r#"<https://gh.test/repositories/1/actions/runs?page=2>; rel="next""#;

/// Five runs of about 5 KB each: about 25 KB of compact JSON.
fn big_runs() -> UpstreamResponse {
    let runs: Vec<Json> = (0..5).map(|i| run(1000 + i, 5_000)).collect();
    answer(
        200,
        "application/json",
        &runs_body(&runs),
        &[("Link", LINK_NEXT)],
    )
}

fn runs_args() -> Json {
    json!({"owner": "o", "repo": "r", "outputFormat": "json"})
}

/// Settings: structured bound at its minimum (16 KiB), text bound as given.
fn bounded(text_max: &str) -> Extra {
    vec![
        ("MCP_STRUCTURED_MAX_BYTES", "16384".to_owned()),
        ("MCP_TEXT_MAX_CHARS", text_max.to_owned()),
    ]
}

fn server_with(
    structured: bool,
    extra: &[(&'static str, String)],
) -> devtools_mcp_edge::server::Server {
    let pairs: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
    flagged_server(structured, &pairs)
}

#[test]
fn an_oversized_value_is_saved_whole_and_reported() {
    let server = server_with(true, &bounded("1000000"));
    let env = env(|_| big_runs());
    let reply = call(&server, &env, "github_list_workflow_runs", runs_args());
    let value = conforming(&server, "github_list_workflow_runs", &reply).clone();
    assert_eq!(value["data"], Json::Null);
    assert_eq!(value["nextPage"], 2, "metadata is kept");
    let incomplete = &value["incomplete"];
    assert_eq!(incomplete["reason"], "size");
    assert_eq!(incomplete["limitBytes"], 16384);
    let id = incomplete["artifactId"].as_str().unwrap();
    // The artifact, read back in chunks, is the whole value as structuredContent would have been
    // without the bound, and `bytes` is its length.
    let whole = read_artifact(&server, &env, id, 7_000);
    assert_eq!(incomplete["bytes"], whole.len());
    // The figure docs/structured-output.md shows for this page.
    assert_eq!(whole.len(), 25_572);
    let unbounded = server_with(true, &[("MCP_TEXT_MAX_CHARS", "1000000".to_owned())]);
    let full = call(&unbounded, &env, "github_list_workflow_runs", runs_args());
    let full_value = conforming(&unbounded, "github_list_workflow_runs", &full);
    assert_eq!(&serde_json::from_slice::<Json>(&whole).unwrap(), full_value);
    // The text is not affected: whole, and the same as without the bound.
    assert!(!reply.text().contains("Response Truncated"));
    assert_eq!(reply.text(), full.text());
    // Another principal, or the same one after retention, cannot read it (past the window in
    // which a missing artifact may still be being written, a read of one answers at once).
    env.clock
        .advance(devtools_mcp_edge::artifacts::WRITE_WINDOW_MS);
    let other = call_with(
        &server,
        &env,
        "artifact_read",
        json!({"artifactId": id}),
        "2025-06-18",
        ALICE_TOKEN_2,
    );
    assert!(other.is_error());
    assert_eq!(other.text(), "Artifact not found or expired");
    env.clock.advance(3_600_000);
    let expired = call(&server, &env, "artifact_read", json!({"artifactId": id}));
    assert_eq!(expired.text(), "Artifact not found or expired");
}

#[test]
fn every_contract_keeps_its_metadata_when_oversized() {
    let server = server_with(true, &bounded("1000000"));
    let body = json!({"items": vec!["x".repeat(1_000); 20]}).to_string();
    let env = env(move |_| json_answer(&body));
    let circle = call(&server, &env, "circleci_get", json!({"path": "/me"}));
    let value = conforming(&server, "circleci_get", &circle);
    assert_eq!(value["data"], Json::Null);
    assert_eq!(value["cache"]["hit"], false);
    assert_eq!(value["incomplete"]["reason"], "size");
    let jira = call(
        &server,
        &env,
        "jira_get",
        json!({"path": "/rest/api/3/search/jql"}),
    );
    let value = conforming(&server, "jira_get", &jira);
    let names: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(names, ["data", "incomplete"]);
    // The Atlassian artifact holds the envelope, {data: body}, not the bare body.
    let id = value["incomplete"]["artifactId"].as_str().unwrap();
    let whole: Json = serde_json::from_slice(&read_artifact(&server, &env, id, 65_536)).unwrap();
    assert_eq!(whole["data"]["items"][19], "x".repeat(1_000));
}

#[test]
fn a_cut_text_and_a_whole_value_are_independent() {
    // Text bound small, structured bound default: the text is cut, the value is whole.
    let server = server_with(true, &[("MCP_TEXT_MAX_CHARS", "1000".to_owned())]);
    let env = env(|_| big_runs());
    let reply = call(&server, &env, "github_list_workflow_runs", runs_args());
    let value = conforming(&server, "github_list_workflow_runs", &reply);
    assert!(value.get("incomplete").is_none());
    assert_eq!(value["data"]["workflow_runs"].as_array().unwrap().len(), 5);
    let id = named_artifact(reply.text()).expect("the cut text names the artifact");
    // The artifact holds the envelope exactly as structuredContent has it.
    let whole: Json = serde_json::from_slice(&read_artifact(&server, &env, &id, 65_536)).unwrap();
    assert_eq!(&whole, value);
    assert_eq!(env.artifacts.keys().len(), 1);
}

#[test]
fn a_cut_text_and_an_oversized_value_share_one_artifact() {
    let server = server_with(true, &bounded("1000"));
    let env = env(|_| big_runs());
    let reply = call(&server, &env, "github_list_workflow_runs", runs_args());
    let value = conforming(&server, "github_list_workflow_runs", &reply);
    let named = named_artifact(reply.text()).expect("the cut text names the artifact");
    assert_eq!(value["incomplete"]["artifactId"], named.as_str());
    assert_eq!(env.artifacts.keys().len(), 1, "one artifact per call");
}

#[test]
fn a_failed_save_still_answers() {
    let server = server_with(true, &bounded("1000"));
    let env = env(|_| big_runs());
    env.artifacts.failing.set(true);
    let reply = call(&server, &env, "github_list_workflow_runs", runs_args());
    assert!(!reply.is_error(), "{}", reply.raw);
    let value = conforming(&server, "github_list_workflow_runs", &reply);
    assert_eq!(value["incomplete"]["artifactId"], Json::Null);
    assert_eq!(value["incomplete"]["reason"], "size");
    assert!(reply.text().contains("Response Truncated"));
    assert_eq!(named_artifact(reply.text()), None);
    let failures = env
        .log
        .lines()
        .iter()
        .filter(|l| l.contains("artifact_save_failed"))
        .count();
    assert_eq!(failures, 1, "one save attempt, logged once");
}

#[test]
fn the_bound_counts_utf8_bytes_of_compact_json() {
    // 3 000 three-byte characters: 9 000 bytes of UTF-8 in one string, 3 000 UTF-16 units.
    let wide = "€".repeat(3_000);
    let body = json!({"a": wide, "b": wide}).to_string();
    let env = env(move |_| json_answer(&body));
    let server = server_with(true, &bounded("1000000"));
    let reply = call(&server, &env, "jira_get", json!({"path": "/x"}));
    let value = conforming(&server, "jira_get", &reply);
    // {"data":{"a":"…","b":"…"}}: 18 000 bytes of characters plus 24 of syntax.
    assert_eq!(value["incomplete"]["bytes"], 18_024);
}

/// Settings added to the flag for one scenario.
type Extra = Vec<(&'static str, String)>;

/// The scenarios the byte-identity proof runs in both modes: every schema tool, projections,
/// truncation (with its artifact), an oversized value, errors, and tools without a schema.
fn scenarios() -> Vec<(&'static str, Json, Extra)> {
    let small_text = vec![("MCP_TEXT_MAX_CHARS", "1000".to_owned())];
    let tiny_bound = bounded("1000000");
    vec![
        (
            "github_list_workflow_runs",
            json!({"owner": "o", "repo": "r"}),
            vec![],
        ),
        ("github_list_workflow_runs", runs_args(), small_text.clone()),
        ("github_list_workflow_runs", runs_args(), tiny_bound.clone()),
        (
            "github_list_workflow_runs",
            json!({"owner": "o", "repo": "r", "jq": "workflow_runs[*].id"}),
            vec![],
        ),
        (
            "github_list_workflow_jobs",
            json!({"owner": "o", "repo": "r", "runId": 9}),
            vec![],
        ),
        (
            "circleci_get",
            json!({"path": "/me", "outputFormat": "json"}),
            vec![],
        ),
        ("circleci_get", json!({"path": "/me"}), small_text.clone()),
        ("jira_get", json!({"path": "/rest/api/3/issue/P-1"}), vec![]),
        (
            "conf_get",
            json!({"path": "/wiki/api/v2/pages", "outputFormat": "json"}),
            small_text.clone(),
        ),
        (
            "bb_get",
            json!({"path": "/repositories/w/r/diff/a..b"}),
            vec![],
        ),
        (
            "bb_get",
            json!({"path": "/repositories/w/r", "jq": "[["}),
            vec![],
        ),
        (
            "jira_post",
            json!({"path": "/rest/api/3/issue", "body": {"fields": {}}}),
            small_text,
        ),
        ("jira_get", json!({"path": "/missing"}), vec![]),
        (
            "artifact_read",
            json!({"artifactId": "00000000-0000-4000-8000-000000000000"}),
            vec![],
        ),
    ]
}

fn scenario_upstream() -> FakeEnv {
    env(|url| {
        if url.contains("/missing") {
            answer(
                404,
                "application/json",
                r#"{"errorMessages":["Issue does not exist"]}"#,
                &[],
            )
        } else if url.contains("/diff/") {
            answer(200, "text/plain", "diff --git a/x b/x\n", &[])
        } else if url.contains("/actions/runs")
            || url.contains("/rest/api/3/issue")
            || url.contains("/wiki/")
        {
            big_runs()
        } else {
            json_answer(r#"{"name":"me","jobs":[{"id":1}],"total_count":1}"#)
        }
    })
}

/// `reply` without `result.structuredContent`, serialized as the server writes JSON.
fn without_structured(reply: &Reply) -> String {
    let mut json = reply.json.clone();
    if let Some(result) = json["result"].as_object_mut() {
        result.shift_remove("structuredContent");
    }
    serde_json::to_string(&json).unwrap()
}

/// Asserts `a == b`, reporting where they first differ (the replies are large).
fn same_bytes(a: &str, b: &str, tool: &str, version: &str) {
    if a != b {
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let around = |s: &str| {
            s.get(at.saturating_sub(40)..(at + 80).min(s.len()))
                .unwrap_or("")
                .to_owned()
        };
        panic!(
            "{tool} {version}: differ at byte {at}:\n  on:  {}\n  off: {}",
            around(a),
            around(b)
        );
    }
}

#[test]
fn flag_off_is_byte_identical_apart_from_the_structured_members() {
    // tools/list: the flag adds the outputSchema members and nothing else.
    let on_list: Json = serde_json::from_str(&list(&flagged_server(true, &[]))).unwrap();
    let off_list = list(&flagged_server(false, &[]));
    let mut stripped = on_list.clone();
    for tool in stripped["result"]["tools"].as_array_mut().unwrap() {
        tool.as_object_mut().unwrap().shift_remove("outputSchema");
    }
    assert_ne!(on_list.to_string(), off_list);
    assert_eq!(serde_json::to_string(&stripped).unwrap(), off_list);
    // tools/call: each scenario on fresh fakes with the same seed, so artifact ids agree.
    let mut with_structured = 0;
    for (tool, args, extra) in scenarios() {
        for version in ["2025-06-18", "2025-11-25", "2026-07-28", "2025-03-26"] {
            let run = |flag: bool| {
                let server = server_with(flag, &extra);
                call_with(
                    &server,
                    &scenario_upstream(),
                    tool,
                    args.clone(),
                    version,
                    TOKEN,
                )
            };
            let (on, off) = (run(true), run(false));
            assert!(
                !off.raw.contains("structuredContent"),
                "{tool}: {}",
                off.raw
            );
            same_bytes(&without_structured(&on), &off.raw, tool, version);
            if version == "2025-03-26" {
                // Older clients never see structured content, so both modes are identical.
                same_bytes(&on.raw, &off.raw, tool, version);
            } else if on.structured().is_some() {
                with_structured += 1;
            }
        }
    }
    // The proof compared real structured results, not only text-only ones: every schema-tool
    // scenario but the 404 (a failed projection is a value, `_jqError`, not an error).
    assert_eq!(
        with_structured,
        3 * 11,
        "schema-tool successes with structuredContent"
    );
}
