//! `TestServer`: a server and its in-memory ports built from settings, a registry and a
//! scripted upstream, and the one `tools/call` path every harness sends through. Every tool
//! result that path sees is checked against the `outputSchema` the server advertises for the
//! tool, by an independent JSON Schema validator (the `jsonschema` crate), so a result that the
//! server's own validator wrongly accepts still fails the test.

use crate::common::protocol::{
    base_settings, body_json, headers_2026, meta_2026, post, settings_fn,
};
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::{Ports, TransportError, UpstreamRequest, UpstreamResponse};
use devtools_mcp_edge::server::Server;
use devtools_mcp_edge::tools::{self, Registry};
use futures::executor::block_on;
use serde_json::{json, Value as Json};
use std::ops::Deref;

/// The revision every harness calls under unless it names another.
pub const STATELESS: &str = "2026-07-28";

/// Builds a [`TestServer`]: settings (later entries win), the registry, the fake upstream.
pub struct Builder {
    pairs: Vec<(String, String)>,
    registry: Option<Registry>,
    env: FakeEnv,
}

impl Builder {
    /// Sets each `(name, value)`, replacing an earlier value of the same name.
    pub fn settings(mut self, pairs: &[(&str, &str)]) -> Builder {
        for (name, value) in pairs {
            self.pairs.retain(|(k, _)| k != name);
            self.pairs.push((name.to_string(), value.to_string()));
        }
        self
    }

    /// Leaves setting `name` unset.
    pub fn without(mut self, name: &str) -> Builder {
        self.pairs.retain(|(k, _)| k != name);
        self
    }

    /// Serves `registry` instead of the production tools.
    pub fn registry(mut self, registry: Registry) -> Builder {
        self.registry = Some(registry);
        self
    }

    /// An upstream that answers every request with `respond`.
    pub fn upstream(
        mut self,
        respond: impl Fn(&UpstreamRequest) -> Result<UpstreamResponse, TransportError> + 'static,
    ) -> Builder {
        self.env = FakeEnv::with_http(ScriptedHttp::new(respond));
        self
    }

    /// The server, over the fakes chosen (a fresh `FakeEnv` when no upstream was given).
    pub fn build(self) -> TestServer {
        let registry = self.registry.map_or_else(tools::all, Ok);
        TestServer {
            server: Server::with_registry(&settings_fn(self.pairs), registry),
            env: self.env,
        }
    }
}

/// A server under test with its own fakes (clock, stores, log, upstream) in `env`. Derefs to
/// the [`Server`], so it can also be driven through other ports.
pub struct TestServer {
    /// The server.
    pub server: Server,
    /// Its fakes.
    pub env: FakeEnv,
}

impl Deref for TestServer {
    type Target = Server;
    fn deref(&self) -> &Server {
        &self.server
    }
}

impl TestServer {
    /// A builder over [`base_settings`] (principals `ci` and `alice`) and the production tools.
    pub fn builder() -> Builder {
        Builder {
            pairs: base_settings(),
            registry: None,
            env: FakeEnv::new(),
        }
    }

    /// `tools/call` of `name` under 2026-07-28 with bearer `token`, on this server's fakes.
    pub fn call_as(&self, token: &str, name: &str, arguments: Json) -> Reply {
        tools_call(
            &self.server,
            self.env.ports(),
            STATELESS,
            token,
            name,
            arguments,
        )
    }
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
    /// The first text block (empty when there is none).
    pub fn text(&self) -> &str {
        self.result()["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
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

/// Calls tool `name` with `arguments` through `server` on `ports`, as the holder of `token`,
/// under revision `version` (2026-07-28 with its per-request `_meta` and headers). Asserts a
/// 200 reply holding a result, and that the result conforms to the tool's advertised output
/// schema ([`assert_conforms`]).
pub fn tools_call(
    server: &Server,
    ports: Ports<'_>,
    version: &str,
    token: &str,
    name: &str,
    arguments: Json,
) -> Reply {
    let stateless = version == STATELESS;
    let mut params = json!({"name": name, "arguments": arguments});
    if stateless {
        // 2026-07-28 has no initialize: each request names its revision in _meta and headers.
        params["_meta"] = meta_2026();
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let auth = format!("Bearer {token}");
    let mut headers = vec![
        ("MCP-Protocol-Version", version),
        ("Authorization", auth.as_str()),
    ];
    if stateless {
        headers.extend(headers_2026("tools/call", Some(name)).into_iter().skip(1));
    }
    let response = block_on(server.handle(post(&body.to_string(), &headers), ports));
    let raw = String::from_utf8_lossy(&response.body).into_owned();
    assert_eq!(response.status, 200, "{raw}");
    let json = body_json(&response);
    assert!(json["result"].is_object(), "not a result: {raw}");
    let reply = Reply { raw, json };
    if let Some(schema) = advertised_schema(server, version, token, name) {
        assert_conforms(name, &schema, &reply);
    }
    reply
}

/// The `outputSchema` `server` lists for `tool` to the holder of `token` under `version`, if
/// any. Listed on fresh fakes, so that the listing leaves nothing in the test's log, stores or
/// request counts; a listing that fails gives `None`, and the call's own assertions judge it.
pub fn advertised_schema(server: &Server, version: &str, token: &str, tool: &str) -> Option<Json> {
    let mut params = json!({});
    let auth = format!("Bearer {token}");
    let mut headers = vec![
        ("MCP-Protocol-Version", version),
        ("Authorization", auth.as_str()),
    ];
    if version == STATELESS {
        params["_meta"] = meta_2026();
        headers.extend(headers_2026("tools/list", None).into_iter().skip(1));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params});
    let fresh = FakeEnv::new();
    let response = block_on(server.handle(post(&body.to_string(), &headers), fresh.ports()));
    let listed: Json = serde_json::from_slice(&response.body).ok()?;
    listed["result"]["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == tool)?
        .get("outputSchema")
        .cloned()
}

/// Asserts the output-schema contract for one result of `tool`: an error result carries no
/// `structuredContent`; any other carries one that `schema` accepts, judged by the
/// `jsonschema` crate rather than the server's own validator.
pub fn assert_conforms(tool: &str, schema: &Json, reply: &Reply) {
    if reply.is_error() {
        assert!(
            reply.structured().is_none(),
            "{tool}: an error result with structuredContent: {}",
            reply.raw
        );
        return;
    }
    let value = reply.structured().unwrap_or_else(|| {
        panic!(
            "{tool} advertises an outputSchema but sent no structuredContent: {}",
            reply.raw
        )
    });
    let validator = jsonschema::validator_for(schema).unwrap_or_else(|e| {
        panic!("{tool}: the advertised outputSchema is not a valid schema: {e}\n{schema}")
    });
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{tool}: structuredContent does not conform to its outputSchema: {errors:?}\n{value}"
    );
}
