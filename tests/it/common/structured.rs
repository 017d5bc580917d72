//! Shared harness for the structured-output host tests: a production-registry server with every
//! vendor configured and the flag set either way, an upstream scripted by URL, calls that return
//! the whole reply, a JSON Schema check of `structuredContent`, and an `artifact_read` loop.

use crate::common::protocol::*;
use crate::common::server::{assert_conforms, tools_call, Builder, Reply, TestServer};
use base64::Engine as _;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::UpstreamResponse;
use devtools_mcp_edge::server::Server;
use serde_json::{json, Value as Json};

/// The tools that advertise an output schema when the flag is on, as the registry declares them.
pub fn schema_tools() -> Vec<String> {
    devtools_mcp_edge::tools::all()
        .unwrap()
        .descriptors(true, &devtools_mcp_edge::tools::Selection::ALL, true)
        .into_iter()
        .filter(|d| d.output_schema.is_some())
        .map(|d| d.name)
        .collect()
}

/// Every vendor configured, the flag as given, plus `extra` (later entries win).
pub fn flagged(structured: bool, extra: &[(&str, &str)]) -> Builder {
    let flag = if structured { "true" } else { "false" };
    TestServer::builder()
        .settings(&[
            ("GITHUB_TOKEN", "ghp_structured0123456789"),
            ("GITHUB_API_URL", "https://gh.test"),
            ("CIRCLECI_TOKEN", "circle-structured-0123456789"),
            ("CIRCLECI_API_URL", "https://circle.test/api/v2"),
            ("ATLASSIAN_BASE_URL", "https://atl.test"),
            ("ATLASSIAN_USER_EMAIL", "me@example.com"),
            ("ATLASSIAN_API_TOKEN", "atl-token-0123456789"),
            ("BITBUCKET_API_URL", "https://bb.test"),
            ("MCP_STRUCTURED_OUTPUT", flag),
        ])
        .settings(extra)
}

/// The production registry with the flag as given.
pub fn flagged_server(structured: bool, extra: &[(&str, &str)]) -> Server {
    flagged(structured, extra).build().server
}

/// An upstream answer.
pub fn answer(
    status: u16,
    content_type: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> UpstreamResponse {
    let mut all = Vec::new();
    if !content_type.is_empty() {
        all.push(("Content-Type".to_owned(), content_type.to_owned()));
    }
    all.extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    UpstreamResponse {
        status,
        status_text: devtools_mcp_edge::upstream::reason_phrase(status).to_owned(),
        headers: all,
        body: body.as_bytes().to_vec(),
    }
}

/// A JSON answer.
pub fn json_answer(body: &str) -> UpstreamResponse {
    answer(200, "application/json; charset=utf-8", body, &[])
}

/// Fakes whose upstream answers every request with `respond(url)`.
pub fn env(respond: impl Fn(&str) -> UpstreamResponse + 'static) -> FakeEnv {
    FakeEnv::with_http(ScriptedHttp::new(move |request| Ok(respond(&request.url))))
}

/// Calls `name` as principal `ci` under 2025-06-18 (the first revision with structured output).
pub fn call(server: &Server, env: &FakeEnv, name: &str, arguments: Json) -> Reply {
    call_with(server, env, name, arguments, "2025-06-18", TOKEN)
}

/// Calls `name` under revision `version` with bearer `token`.
pub fn call_with(
    server: &Server,
    env: &FakeEnv,
    name: &str,
    arguments: Json,
    version: &str,
    token: &str,
) -> Reply {
    tools_call(server, env.ports(), version, token, name, arguments)
}

/// The raw `tools/list` reply under 2025-06-18.
pub fn list(server: &Server) -> String {
    let body = request(1, "tools/list", json!({}));
    let response = send(
        server,
        post(&body.to_string(), &[("MCP-Protocol-Version", "2025-06-18")]),
    );
    assert_eq!(response.status, 200);
    String::from_utf8_lossy(&response.body).into_owned()
}

/// The output schema `server` advertises for `tool`.
pub fn output_schema(server: &Server, tool: &str) -> Json {
    let listed: Json = serde_json::from_str(&list(server)).unwrap();
    listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tool)
        .and_then(|t| t.get("outputSchema"))
        .cloned()
        .unwrap_or_else(|| panic!("{tool} advertises no output schema"))
}

/// `reply`'s `structuredContent`, checked against the schema `server` advertises for `tool`
/// under 2025-06-18 (whatever revision `reply` came under) by the independent validator.
pub fn conforming<'a>(server: &Server, tool: &str, reply: &'a Reply) -> &'a Json {
    assert_conforms(tool, &output_schema(server, tool), reply);
    reply
        .structured()
        .unwrap_or_else(|| panic!("{tool}: no structuredContent: {}", reply.raw))
}

/// Reads artifact `id` whole through `artifact_read` as `token`, in chunks of `chunk` bytes.
pub fn read_artifact(server: &Server, env: &FakeEnv, id: &str, chunk: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    loop {
        let reply = call(
            server,
            env,
            "artifact_read",
            json!({"artifactId": id, "offset": offset, "maxBytes": chunk}),
        );
        assert!(!reply.is_error(), "{}", reply.raw);
        let page: Json = serde_json::from_str(reply.text()).unwrap();
        let data = base64::engine::general_purpose::STANDARD
            .decode(page["data"].as_str().unwrap())
            .unwrap();
        out.extend(data);
        offset = page["nextOffset"].as_u64().unwrap();
        if page["eof"] == true {
            return out;
        }
    }
}

/// The artifact id the truncation notice names, if any.
pub fn named_artifact(text: &str) -> Option<String> {
    let start = text.find("saved as artifact `")? + "saved as artifact `".len();
    let rest = &text[start..];
    Some(rest[..rest.find('`')?].to_owned())
}

/// A GitHub run object of roughly `pad` extra bytes.
pub fn run(id: u64, pad: usize) -> Json {
    json!({
        "id": id,
        "name": "Build",
        "head_branch": "main",
        "status": "completed",
        "conclusion": "success",
        "notes": "x".repeat(pad),
    })
}

/// A GitHub runs page body.
pub fn runs_body(runs: &[Json]) -> String {
    json!({"total_count": runs.len(), "workflow_runs": runs}).to_string()
}

/// `v` as JavaScript's `JSON.parse` would hold it: every number a double (structuredContent keeps
/// number literals as the upstream wrote them, text prints them the JavaScript way, and a JS
/// client sees the two as equal).
pub fn as_js(v: &Json) -> Json {
    match v {
        Json::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Json::Null, Json::Number),
        Json::Array(items) => Json::Array(items.iter().map(as_js).collect()),
        Json::Object(map) => Json::Object(map.iter().map(|(k, v)| (k.clone(), as_js(v))).collect()),
        other => other.clone(),
    }
}
