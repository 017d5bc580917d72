//! Host tests of the HTTP transport rules: body size, content type, Accept, Origin, malformed
//! JSON and invalid JSON-RPC, the version header, batching per revision, and panic containment.

use crate::common::protocol::*;
use devtools_mcp_edge::http::HttpResponse;
use devtools_mcp_edge::ports::fake::{yield_once, FakeEnv};
use devtools_mcp_edge::ports::{BodyRead, BodyRoom, RequestBody};
use devtools_mcp_edge::server::MAX_BODY_BYTES;
use futures::future::LocalBoxFuture;
use serde_json::json;
use std::cell::Cell;

fn ping() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string()
}

#[test]
fn oversized_body_is_413_before_parsing() {
    let server = server();
    let mut request = post("{not json", &[]);
    request.body_too_large = true;
    let response = send(&server, request);
    assert_eq!(response.status, 413);
    assert_eq!(error_code(&body_json(&response)), -32000);
    // A body over the limit that the adapter did not flag is refused the same way.
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(MAX_BODY_BYTES));
    assert_eq!(send(&server, post(&big, &[])).status, 413);
}

/// A request body that records whether the server read it.
struct RecordingBody {
    bytes: Vec<u8>,
    read: Cell<bool>,
}

impl RecordingBody {
    fn new(bytes: Vec<u8>) -> RecordingBody {
        RecordingBody {
            bytes,
            read: Cell::new(false),
        }
    }
}

impl RequestBody for RecordingBody {
    fn read<'a>(&'a self, limit: usize, _room: &'a dyn BodyRoom) -> LocalBoxFuture<'a, BodyRead> {
        self.read.set(true);
        let too_large = self.bytes.len() > limit;
        let bytes = if too_large {
            Vec::new()
        } else {
            self.bytes.clone()
        };
        Box::pin(async move {
            BodyRead {
                bytes,
                too_large,
                cut_short: false,
                no_room: false,
            }
        })
    }
}

#[test]
fn credentials_are_checked_before_the_body_is_read() {
    let server = server();
    let huge = vec![b' '; MAX_BODY_BYTES + 1];
    for (authorization, bytes) in [
        ("", ping().into_bytes()),
        ("Bearer wrong-token-0123456789", ping().into_bytes()),
        ("Basic Y2k6Y2k=", huge.clone()),
        ("Bearer wrong-token-0123456789", huge.clone()),
    ] {
        let body = RecordingBody::new(bytes);
        let env = FakeEnv::new();
        let request = post("", &[("Authorization", authorization)]);
        let response = futures::executor::block_on(server.serve(request, &body, env.ports()));
        assert_eq!(response.status, 401, "{authorization:?}");
        assert!(!body.read.get(), "body read for {authorization:?}");
    }
    for (bytes, status) in [(ping().into_bytes(), 200), (huge, 413)] {
        let body = RecordingBody::new(bytes);
        let env = FakeEnv::new();
        let response = futures::executor::block_on(server.serve(post("", &[]), &body, env.ports()));
        assert_eq!(response.status, status);
        assert!(body.read.get(), "an authenticated request's body is read");
    }
}

/// A body that stops before its end: what arrived, and whether the connection failed.
struct CutBody {
    bytes: Vec<u8>,
    failed: bool,
}

impl RequestBody for CutBody {
    fn read<'a>(&'a self, _limit: usize, _room: &'a dyn BodyRoom) -> LocalBoxFuture<'a, BodyRead> {
        let read = BodyRead {
            bytes: self.bytes.clone(),
            too_large: false,
            cut_short: self.failed,
            no_room: false,
        };
        Box::pin(async move { read })
    }
}

#[test]
fn a_body_that_stops_before_its_end_is_400_and_not_run() {
    let server = server();
    let ping = ping();
    let serve = |length: usize, failed: bool| {
        let env = FakeEnv::new();
        let request = post("", &[("Content-Length", &length.to_string())]);
        let body = CutBody {
            bytes: ping.clone().into_bytes(),
            failed,
        };
        let response = futures::executor::block_on(server.serve(request, &body, env.ports()));
        (response, env.log.lines().join("\n"))
    };
    // Shorter than declared (a dropped connection, or a liar), or a failed connection whose
    // prefix happens to be a whole request: refused, with no result.
    for (length, failed) in [
        (ping.len() + 100, false),
        (ping.len() - 1, false),
        (ping.len(), true),
    ] {
        let (response, log) = serve(length, failed);
        assert_eq!(response.status, 400, "{length} {failed}");
        let body = body_json(&response);
        assert_eq!(error_code(&body), -32000);
        assert!(body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nothing was run"));
        assert!(body.get("result").is_none());
        assert!(log.contains("request_body_cut_short"), "{log}");
    }
    assert_eq!(serve(ping.len(), false).0.status, 200);
}

/// A body that never arrives.
struct HeldBody;

impl RequestBody for HeldBody {
    fn read<'a>(&'a self, _limit: usize, _room: &'a dyn BodyRoom) -> LocalBoxFuture<'a, BodyRead> {
        Box::pin(futures::future::pending())
    }
}

#[test]
fn a_body_that_does_not_arrive_within_a_minute_is_408() {
    let server = server();
    let env = FakeEnv::new();
    let serving = server.serve(post("", &[]), &HeldBody, env.ports());
    let waited = async {
        yield_once().await;
        env.clock.advance(59_999);
        yield_once().await;
        let early = env.log.lines().join("\n");
        env.clock.advance(1);
        early
    };
    let (response, early) = futures::executor::block_on(futures::future::join(serving, waited));
    assert!(!early.contains("request_body_too_slow"), "{early}");
    assert_eq!(response.status, 408);
    assert_eq!(error_code(&body_json(&response)), -32000);
    assert!(env.log.lines().join("\n").contains("request_body_too_slow"));
}

/// A body whose pieces arrive one after another, each kept once the room holds it.
struct PiecesBody(Vec<u8>);

impl RequestBody for PiecesBody {
    fn read<'a>(&'a self, _limit: usize, room: &'a dyn BodyRoom) -> LocalBoxFuture<'a, BodyRead> {
        Box::pin(async move {
            for end in
                (1..=self.0.len().div_ceil(64 * 1024)).map(|n| (n * 64 * 1024).min(self.0.len()))
            {
                if !room.grow(end).await {
                    return BodyRead {
                        no_room: true,
                        ..BodyRead::default()
                    };
                }
            }
            BodyRead {
                bytes: self.0.clone(),
                ..BodyRead::default()
            }
        })
    }
}

#[test]
fn a_caller_s_request_bodies_hold_at_most_8_mib_together() {
    let server = server();
    let env = FakeEnv::new();
    let four = (MAX_BODY_BYTES).to_string();
    // Two held bodies that declare 4 MiB each: the caller's whole share.
    let mut held = vec![
        Box::pin(server.serve(
            post("", &[("Content-Length", &four)]),
            &HeldBody,
            env.ports(),
        )),
        Box::pin(server.serve(
            post("", &[("Content-Length", &four)]),
            &HeldBody,
            env.ports(),
        )),
    ];
    // Bodies without a length reserve as they arrive: held before their first byte, they hold
    // nothing.
    held.extend((0..10).map(|_| Box::pin(server.serve(post("", &[]), &HeldBody, env.ports()))));
    futures::executor::block_on(async {
        for request in &mut held {
            assert!(futures::poll!(request.as_mut()).is_pending());
        }
    });
    let refused = |response: HttpResponse| {
        assert_eq!(response.status, 429);
        assert_eq!(response.header("Retry-After"), Some("2"));
        let message = body_json(&response)["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            message.contains("at most 8 MiB of request bodies at once per caller"),
            "{message}"
        );
    };
    let ping = ping();
    let declared = ping.len().to_string();
    refused(send(&server, post(&ping, &[("Content-Length", &declared)])));
    // A body without a length is refused at the piece that goes past the share.
    let pieces = PiecesBody(ping.clone().into_bytes());
    refused(futures::executor::block_on(server.serve(
        post("", &[]),
        &pieces,
        env.ports(),
    )));
    // Another caller is not held back.
    let alice = format!("Bearer {ALICE_TOKEN_2}");
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"pad\":\"{}\"}}",
        "x".repeat(2 << 20)
    );
    let pieces = PiecesBody(big.clone().into_bytes());
    let alice_call = server.serve(post("", &[("Authorization", &alice)]), &pieces, env.ports());
    assert_eq!(futures::executor::block_on(alice_call).status, 200);
    drop(held);
    assert_eq!(
        send(
            &server,
            post(&big, &[("Content-Length", &big.len().to_string())])
        )
        .status,
        200
    );
}

#[test]
fn wrong_or_missing_content_type_is_415() {
    let server = server();
    for content_type in ["text/plain", "application/x-www-form-urlencoded", ""] {
        let response = send(&server, post(&ping(), &[("Content-Type", content_type)]));
        assert_eq!(response.status, 415, "{content_type:?}");
        assert_eq!(response.header("Content-Type"), Some("application/json"));
    }
    let ok = send(
        &server,
        post(
            &ping(),
            &[("Content-Type", "application/json; charset=utf-8")],
        ),
    );
    assert_eq!(ok.status, 200);
}

#[test]
fn accept_without_json_is_406() {
    let server = server();
    assert_eq!(
        send(&server, post(&ping(), &[("Accept", "text/event-stream")])).status,
        406
    );
    assert_eq!(send(&server, post(&ping(), &[("Accept", "")])).status, 200);
    assert_eq!(
        send(&server, post(&ping(), &[("Accept", "*/*")])).status,
        200
    );
}

#[test]
fn origin_outside_the_allow_list_is_403() {
    let mut settings = base_settings();
    settings.push((
        "MCP_ALLOWED_ORIGINS".into(),
        "https://claude.ai, http://localhost:6274".into(),
    ));
    let server = server_with(settings);
    for (origin, status) in [
        ("https://claude.ai", 200),
        ("https://Claude.ai/", 200),
        ("http://localhost:6274", 200),
        ("https://evil.example", 403),
        ("null", 403),
    ] {
        let response = send(&server, post(&ping(), &[("Origin", origin)]));
        assert_eq!(response.status, status, "{origin}");
    }
    // Without MCP_ALLOWED_ORIGINS, any Origin is refused; no Origin is fine.
    let strict = server_with(base_settings());
    assert_eq!(
        send(&strict, post(&ping(), &[("Origin", "https://claude.ai")])).status,
        403
    );
    assert_eq!(send(&strict, post(&ping(), &[])).status, 200);
}

#[test]
fn origin_is_checked_before_authentication() {
    let response = send(
        &server(),
        post(
            &ping(),
            &[("Origin", "https://evil.example"), ("Authorization", "")],
        ),
    );
    assert_eq!(response.status, 403);
}

#[test]
fn malformed_json_is_parse_error_400() {
    let server = server();
    for body in ["{", "", "[1,", "{\"jsonrpc\":\"2.0\",}", "\u{feff}{}"] {
        let response = send(&server, post(body, &[]));
        assert_eq!(response.status, 400, "{body:?}");
        let json = body_json(&response);
        assert_eq!(error_code(&json), -32700, "{body:?}");
        assert_eq!(json["id"], json!(null));
    }
}

#[test]
fn invalid_requests_are_400_with_the_id_when_readable() {
    let server = server();
    let cases = [
        (json!({"jsonrpc": "2.0", "id": 3}), json!(3)),
        (
            json!({"jsonrpc": "1.0", "id": "x", "method": "ping"}),
            json!("x"),
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            json!(null),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1]}),
            json!(4),
        ),
        (json!("ping"), json!(null)),
        (json!(42), json!(null)),
    ];
    for (body, id) in cases {
        let (status, reply) = rpc(&server, body.clone(), &[]);
        assert_eq!((status, error_code(&reply)), (400, -32600), "{body}");
        assert_eq!(reply["id"], id, "{body}");
    }
}

#[test]
fn unsupported_version_header_is_400_with_the_supported_list() {
    let (status, body) = rpc(
        &server(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        &[("MCP-Protocol-Version", "2024-11-05")],
    );
    assert_eq!(status, 400);
    assert_eq!(error_code(&body), -32022);
    assert_eq!(body["id"], 2);
    assert_eq!(body["error"]["data"]["requested"], "2024-11-05");
    assert_eq!(
        body["error"]["data"]["supported"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    // Notifications are held to the same rule.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let response = send(
        &server(),
        post(&note, &[("MCP-Protocol-Version", "garbage")]),
    );
    assert_eq!(response.status, 400);
}

#[test]
fn batches_work_only_in_2025_03_26() {
    let server = server();
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "b"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "nope"},
        {"jsonrpc": "2.0", "id": 4}
    ]);
    for header in [None, Some("2025-03-26")] {
        let extra: Vec<(&str, &str)> = header
            .map(|h| ("MCP-Protocol-Version", h))
            .into_iter()
            .collect();
        let (status, body) = rpc(&server, batch.clone(), &extra);
        assert_eq!(status, 200, "{body}");
        let replies = body.as_array().expect("batch reply");
        let ids: Vec<_> = replies.iter().map(|r| r["id"].clone()).collect();
        assert_eq!(ids, [json!(1), json!(2), json!(3), json!(4)]);
        assert_eq!(replies[0]["result"], json!({}));
        assert_eq!(
            replies[1]["result"]["content"][0]["text"],
            "b (principal ci, revision 2025-03-26)"
        );
        assert_eq!(replies[2]["error"]["code"], -32601);
        assert_eq!(replies[3]["error"]["code"], -32600);
    }
    for header in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let (status, body) = rpc(&server, batch.clone(), &[("MCP-Protocol-Version", header)]);
        assert_eq!((status, error_code(&body)), (400, -32600), "{header}");
    }
}

#[test]
fn batch_edge_cases() {
    let server = server();
    let (status, body) = rpc(&server, json!([]), &[]);
    assert_eq!((status, error_code(&body)), (400, -32600));
    // Only notifications: nothing to answer.
    let response = send(
        &server,
        post(
            &json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]).to_string(),
            &[],
        ),
    );
    assert_eq!((response.status, response.body.len()), (202, 0));
    // initialize must not be batched.
    let (_, body) = rpc(
        &server,
        json!([{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}}]),
        &[],
    );
    assert_eq!(body[0]["error"]["code"], -32600);
}

#[test]
fn a_panicking_tool_becomes_internal_error_with_details_only_in_the_log() {
    let server = server();
    let body = request(11, "tools/call", json!({"name": "panics", "arguments": {}})).to_string();
    let (response, log) = send_logged(&server, post(&body, &[]));
    assert_eq!(response.status, 500);
    let reply = body_json(&response);
    assert_eq!(reply["id"], 11);
    assert_eq!(
        reply["error"],
        json!({"code": -32603, "message": "Internal error"})
    );
    assert!(!String::from_utf8_lossy(&response.body).contains("secret detail"));
    let panic_line = log
        .iter()
        .find(|l| l.contains("\"panic\""))
        .expect("a panic log line");
    assert!(
        panic_line.contains("secret detail: index 7 out of range"),
        "{panic_line}"
    );
    assert!(panic_line.contains("\"tool\":\"panics\""), "{panic_line}");
    // Every log line is one JSON object.
    for line in &log {
        serde_json::from_str::<serde_json::Value>(line).expect("log lines are JSON");
    }
    // The server keeps serving afterwards.
    assert_eq!(send(&server, post(&ping(), &[])).status, 200);
}

#[test]
fn allowed_browser_origins_get_cors_headers_and_preflights() {
    let mut settings = base_settings();
    settings.push(("MCP_ALLOWED_ORIGINS".into(), "http://localhost:6274".into()));
    let server = server_with(settings);
    let options = |origin: Option<&str>| {
        let mut headers = vec![(
            "Access-Control-Request-Method".to_owned(),
            "POST".to_owned(),
        )];
        if let Some(origin) = origin {
            headers.push(("Origin".to_owned(), origin.to_owned()));
        }
        send(
            &server,
            devtools_mcp_edge::http::HttpRequest {
                method: "OPTIONS".into(),
                path: "/mcp".into(),
                headers,
                ..Default::default()
            },
        )
    };
    let preflight = options(Some("http://localhost:6274"));
    assert_eq!(preflight.status, 204);
    assert_eq!(
        preflight.header("Access-Control-Allow-Origin"),
        Some("http://localhost:6274")
    );
    assert_eq!(
        preflight.header("Access-Control-Allow-Methods"),
        Some("POST")
    );
    let allowed = preflight.header("Access-Control-Allow-Headers").unwrap();
    for name in [
        "Authorization",
        "Content-Type",
        "MCP-Protocol-Version",
        "Mcp-Method",
        "Mcp-Name",
    ] {
        assert!(allowed.contains(name), "{name} not in {allowed}");
    }
    assert_eq!(options(Some("https://evil.example")).status, 403);
    assert_eq!(options(None).status, 405);

    // Responses to an allowed origin, errors included, can be read by the page.
    let ok = send(
        &server,
        post(&ping(), &[("Origin", "http://localhost:6274")]),
    );
    assert_eq!(ok.status, 200);
    assert_eq!(
        ok.header("Access-Control-Allow-Origin"),
        Some("http://localhost:6274")
    );
    assert_eq!(ok.header("Vary"), Some("Origin"));
    let denied = send(
        &server,
        post(
            &ping(),
            &[("Origin", "http://localhost:6274"), ("Authorization", "")],
        ),
    );
    assert_eq!(denied.status, 401);
    assert_eq!(
        denied.header("Access-Control-Allow-Origin"),
        Some("http://localhost:6274")
    );
    assert_eq!(
        denied.header("Access-Control-Expose-Headers"),
        Some("WWW-Authenticate")
    );
    // No Origin, no CORS headers.
    assert_eq!(
        send(&server, post(&ping(), &[])).header("Access-Control-Allow-Origin"),
        None
    );
}
