//! Host tests of `tools/call` outcomes: argument validation per revision (-32602 before
//! 2025-11-25, an `isError` result from then on), tool failures, internal errors kept out of
//! replies, and malformed call params.

use crate::common::protocol::*;
use serde_json::{json, Value};

fn call(name: &str, arguments: Value) -> Value {
    request(
        9,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

fn version(v: &str) -> [(&'static str, &str); 1] {
    [("MCP-Protocol-Version", v)]
}

#[test]
fn schema_violations_are_invalid_params_before_2025_11_25() {
    let server = server();
    for revision in ["2025-03-26", "2025-06-18"] {
        let (status, body) = rpc(
            &server,
            call("echo", json!({"text": 5, "extra": true})),
            &version(revision),
        );
        assert_eq!((status, error_code(&body)), (200, -32602), "{revision}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("tool echo"), "{message}");
        assert!(
            message.contains("arguments.extra: unknown argument"),
            "{message}"
        );
        assert!(
            message.contains("arguments.text: expected string, got number"),
            "{message}"
        );
    }
}

#[test]
fn schema_violations_are_tool_errors_from_2025_11_25() {
    let (status, body) = rpc(&server(), call("echo", json!({})), &version("2025-11-25"));
    assert_eq!(status, 200);
    assert_eq!(body["result"]["isError"], true);
    assert_eq!(
        body["result"]["content"],
        json!([{"type": "text", "text": "Invalid arguments for tool echo: arguments.text: is required"}])
    );
}

#[test]
fn handler_argument_errors_follow_the_same_rule() {
    let server = server();
    let (_, old) = rpc(
        &server,
        call("rejects_args", json!({})),
        &version("2025-06-18"),
    );
    assert_eq!(error_code(&old), -32602);
    assert!(old["error"]["message"]
        .as_str()
        .unwrap()
        .contains("jql: unexpected token"));
    let (_, new) = rpc(
        &server,
        call("rejects_args", json!({})),
        &version("2025-11-25"),
    );
    assert_eq!(new["result"]["isError"], true);
}

#[test]
fn missing_arguments_read_as_an_empty_object() {
    let (_, body) = rpc(
        &server(),
        request(9, "tools/call", json!({"name": "echo"})),
        &version("2025-11-25"),
    );
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Invalid arguments for tool echo: arguments.text: is required"
    );
}

#[test]
fn tool_failures_are_readable_error_results() {
    let (status, body) = rpc(&server(), call("fails", json!({})), &version("2025-06-18"));
    assert_eq!(status, 200);
    assert_eq!(
        body["result"],
        json!({"content": [{"type": "text", "text": "upstream said 404: no such issue"}], "isError": true})
    );
}

#[test]
fn internal_tool_errors_keep_details_in_the_log() {
    let server = server();
    let (response, log) = send_logged(&server, post(&call("internal", json!({})).to_string(), &[]));
    let body = body_json(&response);
    assert_eq!(response.status, 200);
    assert_eq!(body["result"]["isError"], true);
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("quota"), "{text}");
    assert!(
        log.iter().any(|l| l.contains("KV put failed: quota")),
        "{log:?}"
    );
}

#[test]
fn malformed_call_params_are_invalid_params() {
    let server = server();
    let cases = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}),
        request(1, "tools/call", json!({})),
        request(1, "tools/call", json!({"name": 7})),
        request(1, "tools/call", json!({"name": "echo", "arguments": [1]})),
        request(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": "text"}),
        ),
    ];
    for body in cases {
        let (status, reply) = rpc(&server, body.clone(), &[]);
        assert_eq!((status, error_code(&reply)), (200, -32602), "{body}");
        assert_eq!(reply["id"], 1);
    }
}

#[test]
fn structured_content_is_left_out_for_2025_03_26_clients() {
    let server = server();
    let (_, old) = rpc(&server, call("echo", json!({"text": "s"})), &[]);
    assert!(old["result"].get("structuredContent").is_none(), "{old}");
    assert_eq!(old["result"]["content"][0]["type"], "text");
    let (_, new) = rpc(
        &server,
        call("echo", json!({"text": "s"})),
        &version("2025-06-18"),
    );
    assert_eq!(new["result"]["structuredContent"], "s");
}
