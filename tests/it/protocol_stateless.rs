//! Host tests of the stateless 2026-07-28 revision: `server/discover`, per-request `_meta`,
//! the `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers checked against the body,
//! `resultType`, result `_meta` and cache hints.

use crate::common::protocol::*;
use serde_json::{json, Value};

fn call_echo(text: &str) -> Value {
    request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": text}, "_meta": meta_2026()}),
    )
}

fn meta_without(key: &str) -> Value {
    let mut meta = meta_2026();
    meta.as_object_mut().unwrap().remove(key);
    meta
}

#[test]
fn discover_lists_versions_capabilities_identity_and_cache_hints() {
    let (status, body) = rpc(
        &server(),
        request(1, "server/discover", json!({"_meta": meta_2026()})),
        &headers_2026("server/discover", None),
    );
    assert_eq!(status, 200, "{body}");
    let result = &body["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    assert_eq!(
        result["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
    assert!(
        result.get("serverInfo").is_none(),
        "the identity is in _meta only: {body}"
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "devtools-mcp-edge"
    );
    assert_eq!(result["ttlMs"], 300_000);
    assert_eq!(result["cacheScope"], "private");
}

#[test]
fn tools_list_carries_result_type_and_cache_hints() {
    let (status, body) = rpc(
        &server(),
        request(2, "tools/list", json!({"_meta": meta_2026()})),
        &headers_2026("tools/list", None),
    );
    assert_eq!(status, 200, "{body}");
    let result = &body["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 300_000);
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(result["tools"].as_array().map(Vec::len), Some(5));
}

#[test]
fn tools_call_runs_without_any_prior_request() {
    let (status, body) = rpc(
        &server(),
        call_echo("hello"),
        &headers_2026("tools/call", Some("echo")),
    );
    assert_eq!(status, 200, "{body}");
    let result = &body["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["content"][0]["text"],
        "hello (principal ci, revision 2026-07-28)"
    );
    assert!(
        result.get("ttlMs").is_none(),
        "tools/call is not cacheable: {body}"
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        env!("CARGO_PKG_VERSION")
    );
}

#[test]
fn mcp_name_accepts_the_base64_form() {
    // "echo" in base64 is ZWNobw==.
    let (status, body) = rpc(
        &server(),
        call_echo("x"),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?ZWNobw==?="),
        ],
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = rpc(
        &server(),
        call_echo("x"),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?!!!?="),
        ],
    );
    assert_eq!((status, error_code(&body)), (400, -32020));
}

#[test]
fn header_and_body_disagreements_are_header_mismatch_400() {
    let server = server();
    type Case<'a> = (&'a str, Value, Vec<(&'a str, &'a str)>);
    let cases: Vec<Case> = vec![
        (
            "Mcp-Method missing",
            call_echo("x"),
            vec![("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Name", "echo")],
        ),
        (
            "Mcp-Method differs",
            call_echo("x"),
            headers_2026("tools/list", Some("echo")),
        ),
        (
            "Mcp-Name missing",
            call_echo("x"),
            headers_2026("tools/call", None),
        ),
        (
            "Mcp-Name differs",
            call_echo("x"),
            headers_2026("tools/call", Some("panics")),
        ),
        (
            "version header missing while _meta names 2026-07-28",
            call_echo("x"),
            vec![("Mcp-Method", "tools/call"), ("Mcp-Name", "echo")],
        ),
        (
            "version header names an older revision than _meta",
            call_echo("x"),
            vec![
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "echo"),
            ],
        ),
        (
            "_meta names an older revision than the header",
            request(
                3,
                "tools/list",
                json!({"_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2025-11-25",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}
                }}),
            ),
            headers_2026("tools/list", None),
        ),
    ];
    for (case, body, headers) in cases {
        let (status, reply) = rpc(&server, body, &headers);
        assert_eq!(
            (status, error_code(&reply)),
            (400, -32020),
            "{case}: {reply}"
        );
        assert!(
            reply["id"].is_number(),
            "{case}: the error keeps the request id"
        );
    }
}

#[test]
fn missing_or_malformed_meta_is_invalid_params_with_http_400() {
    let server = server();
    let list = |params: Value| request(4, "tools/list", params);
    let cases = [
        ("no _meta", list(json!({}))),
        (
            "no params at all",
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
        ),
        (
            "no protocolVersion",
            list(json!({"_meta": meta_without("io.modelcontextprotocol/protocolVersion")})),
        ),
        (
            "no clientCapabilities",
            list(json!({"_meta": meta_without("io.modelcontextprotocol/clientCapabilities")})),
        ),
        (
            "clientInfo without version",
            list(json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "c"}
            }})),
        ),
    ];
    for (case, body) in cases {
        let (status, reply) = rpc(&server, body, &headers_2026("tools/list", None));
        assert_eq!(
            (status, error_code(&reply)),
            (400, -32602),
            "{case}: {reply}"
        );
        assert_eq!(reply["id"], 4, "{case}");
    }
}

#[test]
fn client_info_is_optional() {
    let meta = meta_without("io.modelcontextprotocol/clientInfo");
    let (status, body) = rpc(
        &server(),
        request(
            4,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "anonymous client"}, "_meta": meta}),
        ),
        &headers_2026("tools/call", Some("echo")),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["resultType"], "complete");
}

#[test]
fn unsupported_version_is_400_listing_supported_versions_and_a_disagreeing_meta_is_mismatch() {
    let body = request(
        5,
        "server/discover",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    );
    let unsupported = [
        ("MCP-Protocol-Version", "2099-01-01"),
        ("Mcp-Method", "server/discover"),
    ];
    let (status, reply) = rpc(&server(), body.clone(), &unsupported);
    assert_eq!((status, error_code(&reply)), (400, -32022), "{reply}");
    assert_eq!(reply["error"]["data"]["supported"][0], "2026-07-28");
    assert_eq!(reply["error"]["data"]["supportedVersions"][0], "2026-07-28");
    assert_eq!(reply["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(reply["id"], 5);
    // The header names a revision spoken here and _meta another one (or none at all).
    for headers in [
        vec![("Mcp-Method", "server/discover")],
        headers_2026("server/discover", None),
    ] {
        let (status, reply) = rpc(&server(), body.clone(), &headers);
        assert_eq!((status, error_code(&reply)), (400, -32020), "{reply}");
        assert_eq!(reply["id"], 5);
    }
}

#[test]
fn handshake_methods_do_not_exist_in_the_stateless_revision() {
    for method in ["initialize", "ping", "logging/setLevel"] {
        let (status, reply) = rpc(
            &server(),
            request(
                6,
                method,
                json!({"_meta": meta_2026(), "protocolVersion": "2026-07-28"}),
            ),
            &headers_2026(method, None),
        );
        assert_eq!((status, error_code(&reply)), (404, -32601), "{method}");
    }
}

#[test]
fn notifications_need_no_meta_and_only_a_consistent_method_header() {
    let server = server();
    let note =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    let with = |headers: &[(&str, &str)]| send(&server, post(&note.to_string(), headers)).status;
    assert_eq!(with(&[("MCP-Protocol-Version", "2026-07-28")]), 202);
    assert_eq!(with(&headers_2026("notifications/cancelled", None)), 202);
    assert_eq!(with(&headers_2026("tools/call", None)), 400);
}

#[test]
fn tool_argument_errors_are_tool_results() {
    let body = request(
        7,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": ""}, "_meta": meta_2026()}),
    );
    let (status, reply) = rpc(&server(), body, &headers_2026("tools/call", Some("echo")));
    assert_eq!(status, 200);
    assert_eq!(reply["result"]["isError"], true);
    assert_eq!(reply["result"]["resultType"], "complete");
}
