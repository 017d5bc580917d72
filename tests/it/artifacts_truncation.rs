//! Host tests of the truncation path: a cut text saves one artifact per call holding the value
//! the text was rendered from, names it in the guidance block, and still answers (without the
//! line) when the store fails; an uncut text saves nothing.

use crate::common::artifacts::*;
use crate::common::ci::json_response;
use crate::common::protocol::TOKEN;
use devtools_mcp_edge::artifacts::{NOT_FOUND, WRITE_WINDOW_MS};
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::render::ArtifactRef;
use serde_json::{json, Value as Json};

/// A runs page of `n` runs, as compact JSON (the artifact must reproduce it byte for byte).
fn runs_body(n: usize) -> String {
    let runs: Vec<Json> = (0..n)
        .map(|i| json!({"id": 30433642 + i, "name": "CI build with a long name", "status": "completed"}))
        .collect();
    json!({"total_count": n, "workflow_runs": runs}).to_string()
}

fn runs_env(body: String) -> FakeEnv {
    FakeEnv::with_http(ScriptedHttp::new(move |_| {
        Ok(json_response(200, &body, &[]))
    }))
}

#[test]
fn truncated_text_names_one_artifact_holding_the_full_value() {
    let body = runs_body(400);
    let env = runs_env(body.clone());
    let server = artifact_server(&[("MCP_TEXT_MAX_CHARS", "1000")]);
    let ports = env.ports();
    for format in ["toon", "json"] {
        let before = env.artifacts.keys();
        let reply = call_with(
            &server,
            ports,
            TOKEN,
            RUNS,
            json!({"owner": "o", "repo": "r", "outputFormat": format}),
        );
        assert!(!reply.is_error, "{}", reply.text);
        let after = env.artifacts.keys();
        assert_eq!(after.len(), before.len() + 1, "one artifact per call");
        let key = after.iter().find(|k| !before.contains(k)).unwrap();
        let id = key.rsplit('/').next().unwrap();
        assert!(is_artifact_uuid(id));
        let line = ArtifactRef { id: id.to_owned() }.guidance_line();
        assert!(
            reply.text.contains(&format!(
                "**To access the complete data:**\n{line}\n- Consider"
            )),
            "{}",
            reply.text
        );
        // The artifact is the value the text was rendered from: the {data, nextPage} envelope.
        let whole = read_all(&server, ports, TOKEN, id, 4_096);
        assert_eq!(
            String::from_utf8(whole).unwrap(),
            format!("{{\"data\":{body},\"nextPage\":null}}")
        );
        // Only its owner can read it (once past the window in which a missing artifact may still
        // be being written, a read of one answers at once).
        env.clock.advance(WRITE_WINDOW_MS);
        let other = call_with(&server, ports, ALICE, READ, json!({"artifactId": id}));
        assert_eq!((other.is_error, other.text.as_str()), (true, NOT_FOUND));
    }
}

#[test]
fn untruncated_results_save_nothing_and_a_failed_save_still_answers() {
    let env = runs_env(runs_body(2));
    let server = artifact_server(&[("MCP_TEXT_MAX_CHARS", "1000")]);
    let reply = call_with(
        &server,
        env.ports(),
        TOKEN,
        RUNS,
        json!({"owner": "o", "repo": "r"}),
    );
    assert!(!reply.is_error && !reply.text.contains("Truncated"));
    assert!(env.artifacts.keys().is_empty());

    let env = runs_env(runs_body(400));
    env.artifacts.failing.set(true);
    let reply = call_with(
        &server,
        env.ports(),
        TOKEN,
        RUNS,
        json!({"owner": "o", "repo": "r"}),
    );
    assert!(!reply.is_error);
    assert!(reply.text.contains("## Response Truncated"));
    assert!(
        reply
            .text
            .contains("**To access the complete data:**\n- Consider refining"),
        "no artifact line when saving failed: {}",
        reply.text
    );
    let failures: Vec<String> = env
        .log
        .lines()
        .into_iter()
        .filter(|l| l.contains("artifact_save_failed"))
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
}
