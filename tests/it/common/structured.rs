//! Shared harness for the structured-output host tests: a production-registry server with every
//! vendor configured and the flag set either way, an upstream scripted by URL, calls that return
//! the whole reply, a JSON Schema check of `structuredContent`, and an `artifact_read` loop.

use crate::common::protocol::*;
use base64::Engine as _;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::UpstreamResponse;
use devtools_mcp_edge::registry::{self, schema};
use devtools_mcp_edge::server::Server;
use serde_json::{json, Value as Json};

/// The six tools that advertise an output schema when the flag is on.
pub const SCHEMA_TOOLS: [&str; 6] = [
    "jira_get",
    "conf_get",
    "bb_get",
    "github_list_workflow_runs",
    "github_list_workflow_jobs",
    "circleci_get",
];

/// Settings with every vendor configured, the flag as given, plus `extra` (later entries win).
pub fn flagged_settings(structured: bool, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut pairs = base_settings();
    let flag = if structured { "true" } else { "false" };
    for (k, v) in [
        ("GITHUB_TOKEN", "ghp_structured0123456789"),
        ("GITHUB_API_URL", "https://gh.test"),
        ("CIRCLECI_TOKEN", "circle-structured-0123456789"),
        ("CIRCLECI_API_URL", "https://circle.test/api/v2"),
        ("ATLASSIAN_BASE_URL", "https://atl.test"),
        ("ATLASSIAN_USER_EMAIL", "me@example.com"),
        ("ATLASSIAN_API_TOKEN", "atl-token-0123456789"),
        ("BITBUCKET_API_URL", "https://bb.test"),
        ("MCP_STRUCTURED_OUTPUT", flag),
    ]
    .into_iter()
    .chain(extra.iter().copied())
    {
        pairs.retain(|(name, _)| name != k);
        pairs.push((k.into(), v.into()));
    }
    pairs
}

/// The production registry with the flag as given.
pub fn flagged_server(structured: bool, extra: &[(&str, &str)]) -> Server {
    Server::with_registry(
        &settings_fn(flagged_settings(structured, extra)),
        registry::production(),
    )
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

/// A whole `tools/call` reply.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The reply body as sent.
    pub raw: String,
    /// The reply body parsed.
    pub json: Json,
}

impl Reply {
    /// `result`.
    pub fn result(&self) -> &Json {
        &self.json["result"]
    }
    /// The first text block.
    pub fn text(&self) -> &str {
        self.result()["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text block: {}", self.raw))
    }
    /// `structuredContent`, if any.
    pub fn structured(&self) -> Option<&Json> {
        self.result().get("structuredContent")
    }
    /// `isError`.
    pub fn is_error(&self) -> bool {
        self.result()["isError"].as_bool().unwrap_or(false)
    }
}

/// Calls `name` as principal `ci` under 2025-06-18 (the first revision with structured output).
pub fn call(server: &Server, env: &FakeEnv, name: &str, arguments: Json) -> Reply {
    call_with(server, env, name, arguments, "2025-06-18", TOKEN)
}

/// Calls `name` under revision `version` (2026-07-28 with its per-request `_meta` and headers)
/// with bearer `token`.
pub fn call_with(
    server: &Server,
    env: &FakeEnv,
    name: &str,
    arguments: Json,
    version: &str,
    token: &str,
) -> Reply {
    let stateless = version == "2026-07-28";
    let mut params = json!({"name": name, "arguments": arguments});
    if stateless {
        // 2026-07-28 has no initialize: each request names its revision in _meta and headers.
        params["_meta"] = meta_2026();
    }
    let body = request(1, "tools/call", params);
    let auth = format!("Bearer {token}");
    let mut headers = vec![
        ("MCP-Protocol-Version", version),
        ("Authorization", auth.as_str()),
    ];
    if stateless {
        headers.extend(headers_2026("tools/call", Some(name)).into_iter().skip(1));
    }
    let response =
        futures::executor::block_on(server.handle(post(&body.to_string(), &headers), env.ports()));
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let raw = String::from_utf8_lossy(&response.body).into_owned();
    let json = body_json(&response);
    assert!(json["result"].is_object(), "not a result: {raw}");
    Reply { raw, json }
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

/// Asserts that `reply`'s `structuredContent` conforms to the schema `server` advertises for
/// `tool`, and returns it.
pub fn conforming<'a>(server: &Server, tool: &str, reply: &'a Reply) -> &'a Json {
    let value = reply
        .structured()
        .unwrap_or_else(|| panic!("no structuredContent: {}", reply.raw));
    let schema = output_schema(server, tool);
    if let Err(errors) = schema::validate(&schema, value) {
        panic!("{tool}: structuredContent does not conform: {errors:?}\n{value}");
    }
    value
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
