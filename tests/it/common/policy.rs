//! Shared harness for the enterprise-policy host tests: a production-registry server with every
//! vendor configured, principals alice, bob, carol, dave, erin and mallory, a policy document,
//! identity secrets in the settings port, and a `tools/call` helper returning the whole result.

use devtools_mcp_edge::http::HttpRequest;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::UpstreamResponse;
use devtools_mcp_edge::server::Server;
use devtools_mcp_edge::tools;
use serde_json::{json, Value as Json};

/// Default (configured) credentials.
pub const DEFAULT_SETTINGS: &[(&str, &str)] = &[
    ("GITHUB_TOKEN", "ghp_default_SECRET"),
    ("GITHUB_API_URL", "https://gh.test"),
    ("CIRCLECI_TOKEN", "circle_default_SECRET"),
    ("CIRCLECI_API_URL", "https://circle.test/api/v2"),
    ("ATLASSIAN_BASE_URL", "https://acme.test"),
    ("ATLASSIAN_USER_EMAIL", "default@acme.test"),
    ("ATLASSIAN_API_TOKEN", "atl_default_SECRET"),
    ("BITBUCKET_API_URL", "https://bb.test"),
];

/// The token of principal `name`.
pub fn token(name: &str) -> String {
    format!("{name}-token-0123456789abcdef")
}

/// The principals the tests use.
pub const PRINCIPALS: &[&str] = &["alice", "bob", "carol", "dave", "erin", "mallory"];

/// Settings: tokens for every principal, the default credentials, the policy (when given),
/// the identity secrets and `extra` (later entries win).
pub fn settings(
    policy: Option<&str>,
    secrets: &[(String, String)],
    extra: &[(&str, &str)],
) -> Vec<(String, String)> {
    let tokens: serde_json::Map<String, Json> = PRINCIPALS
        .iter()
        .map(|p| (p.to_string(), json!(token(p))))
        .collect();
    let mut pairs = vec![(
        "MCP_AUTH_TOKENS".to_owned(),
        Json::Object(tokens).to_string(),
    )];
    pairs.extend(
        DEFAULT_SETTINGS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    if let Some(policy) = policy {
        pairs.push(("MCP_POLICY".into(), policy.to_owned()));
    }
    pairs.extend(secrets.iter().cloned());
    for (k, v) in extra {
        pairs.retain(|(name, _)| name != k);
        pairs.push((k.to_string(), v.to_string()));
    }
    pairs
}

/// A server with the production registry over `pairs`.
pub fn server(pairs: &[(String, String)]) -> Server {
    let pairs = pairs.to_vec();
    Server::with_registry(
        &move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        },
        tools::all(),
    )
}

/// Fakes whose upstream answers every request with 200 `{}` and whose settings port holds
/// `pairs` (identity secrets are read there at call time).
pub fn env(pairs: &[(String, String)]) -> FakeEnv {
    let env = FakeEnv::with_http(ScriptedHttp::new(|_| {
        Ok(UpstreamResponse {
            status: 200,
            status_text: "OK".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: b"{\"ok\":true}".to_vec(),
        })
    }));
    for (k, v) in pairs {
        env.settings.set(k, v);
    }
    env
}

/// One JSON-RPC call as `principal` under protocol revision 2025-06-18; returns the reply.
pub fn rpc(server: &Server, env: &FakeEnv, principal: &str, method: &str, params: Json) -> Json {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let request = HttpRequest {
        method: "POST".into(),
        path: "/mcp".into(),
        query: String::new(),
        headers: vec![
            ("Content-Type".into(), "application/json".into()),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
            (
                "Authorization".into(),
                format!("Bearer {}", token(principal)),
            ),
            ("Host".into(), "mcp.example.com".into()),
            ("MCP-Protocol-Version".into(), "2025-06-18".into()),
        ],
        body: body.into_bytes(),
        body_too_large: false,
    };
    let response = futures::executor::block_on(server.handle(request, env.ports()));
    serde_json::from_slice(&response.body).unwrap_or_else(|e| {
        panic!(
            "reply is not JSON ({e}): {}",
            String::from_utf8_lossy(&response.body)
        )
    })
}

/// `tools/call` of `tool` with `arguments` as `principal`; returns the `result` object.
pub fn call(server: &Server, env: &FakeEnv, principal: &str, tool: &str, arguments: Json) -> Json {
    let reply = rpc(
        server,
        env,
        principal,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    let result = reply["result"].clone();
    assert!(result.is_object(), "not a result: {reply}");
    result
}

/// The text of a result's first block.
pub fn text(result: &Json) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}
