//! Host tests of the stateful revisions' lifecycle and methods: routing, `initialize`
//! negotiation, notifications, `ping`, `tools/list` and `tools/call` dispatch.

use crate::common::protocol::*;
use devtools_mcp_edge::http::HttpRequest;
use devtools_mcp_edge::server::Server;
use devtools_mcp_edge::tools::Registry;
use serde_json::json;

fn initialize(version: &str) -> serde_json::Value {
    request(
        1,
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}
        }),
    )
}

#[test]
fn initialize_echoes_each_supported_revision() {
    let server = server();
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let (status, body) = rpc(&server, initialize(version), &[]);
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["id"], 1);
        assert_eq!(body["result"]["protocolVersion"], version);
        assert_eq!(body["result"]["serverInfo"]["name"], "devtools-mcp-edge");
        assert_eq!(
            body["result"]["capabilities"],
            json!({"tools": {"listChanged": false}})
        );
        assert!(body["result"].get("resultType").is_none(), "{body}");
    }
}

#[test]
fn initialize_answers_latest_for_unknown_or_stateless_revisions() {
    let server = server();
    for version in ["2024-11-05", "1999-01-01", "2026-07-28", "banana"] {
        let (status, body) = rpc(&server, initialize(version), &[]);
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25", "{version}");
    }
}

#[test]
fn initialize_ignores_a_stale_version_header() {
    // Clients reconnecting after a server upgrade may send their old header with initialize.
    let (status, body) = rpc(
        &server(),
        initialize("2025-06-18"),
        &[("MCP-Protocol-Version", "2024-11-05")],
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
}

#[test]
fn initialize_without_params_is_invalid_params() {
    let (status, body) = rpc(
        &server(),
        json!({"jsonrpc":"2.0","id":"a","method":"initialize"}),
        &[],
    );
    assert_eq!((status, error_code(&body)), (200, -32602));
    assert_eq!(body["id"], "a");
    let (_, body) = rpc(
        &server(),
        request(2, "initialize", json!({"protocolVersion": 5})),
        &[],
    );
    assert_eq!(error_code(&body), -32602);
}

#[test]
fn notifications_and_client_responses_get_202_without_body() {
    let server = server();
    for message in [
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}),
        json!({"jsonrpc":"2.0","id":5,"result":{}}),
    ] {
        let response = send(
            &server,
            post(
                &message.to_string(),
                &[("MCP-Protocol-Version", "2025-06-18")],
            ),
        );
        assert_eq!(response.status, 202, "{message}");
        assert!(response.body.is_empty());
    }
}

#[test]
fn ping_returns_an_empty_result() {
    let (status, body) = rpc(
        &server(),
        json!({"jsonrpc":"2.0","id":9,"method":"ping"}),
        &[("MCP-Protocol-Version", "2025-11-25")],
    );
    assert_eq!(status, 200);
    assert_eq!(body, json!({"jsonrpc":"2.0","id":9,"result":{}}));
}

#[test]
fn tools_list_shape() {
    let (status, body) = rpc(
        &server(),
        request(3, "tools/list", json!({})),
        &[("MCP-Protocol-Version", "2025-06-18")],
    );
    assert_eq!(status, 200);
    let tools = body["result"]["tools"].as_array().expect("tools array");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["echo", "panics", "fails", "internal", "rejects_args"]
    );
    assert_eq!(
        tools[0],
        json!({
            "name": "echo",
            "title": "Test tool echo",
            "description": "Test tool echo.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string", "minLength": 1}},
                "required": ["text"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        })
    );
    assert!(body["result"].get("nextCursor").is_none());
}

#[test]
fn tools_list_with_an_empty_registry_is_valid() {
    let server = Server::with_registry(&settings_fn(base_settings()), Ok(Registry::new()));
    let (status, body) = rpc(&server, request(3, "tools/list", json!({})), &[]);
    assert_eq!(status, 200);
    assert_eq!(body["result"], json!({"tools": []}));
    // Production lists the vendor tools whether or not their credentials are set.
    let production = Server::new(&settings_fn(base_settings()));
    let (_, body) = rpc(&production, request(3, "tools/list", json!({})), &[]);
    let names: Vec<&str> = body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"jira_get") && names.contains(&"bb_delete"),
        "{names:?}"
    );
}

#[test]
fn tools_list_rejects_a_cursor_it_never_issued() {
    let (_, body) = rpc(
        &server(),
        request(3, "tools/list", json!({"cursor": "abc"})),
        &[],
    );
    assert_eq!(error_code(&body), -32602);
}

#[test]
fn tools_call_dispatches_with_the_principal_and_revision() {
    let (status, body) = rpc(
        &server(),
        request(
            4,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ),
        &[("MCP-Protocol-Version", "2025-06-18")],
    );
    assert_eq!(status, 200);
    assert_eq!(
        body["result"],
        json!({
            "content": [{"type": "text", "text": "hi (principal ci, revision 2025-06-18)"}],
            "structuredContent": "hi"
        })
    );
}

#[test]
fn unknown_method_and_unknown_tool() {
    let server = server();
    let (status, body) = rpc(&server, request(5, "resources/list", json!({})), &[]);
    assert_eq!((status, error_code(&body)), (200, -32601));
    assert_eq!(body["id"], 5);
    let (status, body) = rpc(
        &server,
        request(6, "tools/call", json!({"name": "nope"})),
        &[],
    );
    assert_eq!((status, error_code(&body)), (200, -32602));
    assert!(body["error"]["message"].as_str().unwrap().contains("nope"));
    // ping was removed in 2026-07-28.
    let (status, body) = rpc(
        &server,
        request(7, "ping", json!({"_meta": meta_2026()})),
        &headers_2026("ping", None),
    );
    assert_eq!((status, error_code(&body)), (404, -32601));
}

#[test]
fn server_discover_also_answers_legacy_probes() {
    let (status, body) = rpc(&server(), request(8, "server/discover", json!({})), &[]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    // A 2026-07-28 method keeps its own shape when probed under an older revision.
    assert_eq!(body["result"]["resultType"], "complete", "{body}");
    assert_eq!(body["result"]["ttlMs"], 300_000);
    assert_eq!(
        body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "devtools-mcp-edge"
    );
}

#[test]
fn routes_other_than_post_mcp() {
    let server = server();
    let get = |method: &str, path: &str| {
        send(
            &server,
            HttpRequest {
                method: method.into(),
                path: path.into(),
                query: String::new(),
                ..HttpRequest::default()
            },
        )
    };
    let home = get("GET", "/");
    assert_eq!(home.status, 200);
    assert!(home
        .header("Content-Type")
        .unwrap()
        .starts_with("text/plain"));
    assert!(String::from_utf8_lossy(&home.body).contains("MCP"));
    for method in ["GET", "DELETE", "PUT"] {
        let reply = get(method, "/mcp");
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("Allow"), Some("POST"));
    }
    assert_eq!(get("POST", "/").status, 405);
    assert_eq!(get("GET", "/other").status, 404);
    assert_eq!(get("POST", "/mcp/").status, 404);
}
