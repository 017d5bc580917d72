//! Shared harness for the protocol, auth and config host tests: a server built from literal
//! settings, test tools, and helpers that drive `Server::handle` with the in-memory ports.

use devtools_mcp_edge::auth::Principal;
use devtools_mcp_edge::http::{HttpRequest, HttpResponse};
use devtools_mcp_edge::mcp::CallToolResult;
use devtools_mcp_edge::mcp::{ToolAnnotations, ToolDescriptor};
use devtools_mcp_edge::ports::fake::FakeEnv;
use devtools_mcp_edge::server::Server;
use devtools_mcp_edge::tools::{Access, Registry, ToolContext, ToolError, ToolSpec, TypedTool};
use devtools_mcp_edge::value::Value;
use serde_json::{json, Value as Json};

/// The token of principal `ci` in [`base_settings`].
pub const TOKEN: &str = "ci-token-0123456789abcdef";
/// The second token of principal `alice`.
pub const ALICE_TOKEN_2: &str = "alice-token-2-0123456789";

/// Settings with two principals, one of them holding two tokens.
pub fn base_settings() -> Vec<(String, String)> {
    vec![(
        "MCP_AUTH_TOKENS".into(),
        json!({"ci": TOKEN, "alice": ["alice-token-1-0123456789", ALICE_TOKEN_2]}).to_string(),
    )]
}

/// A settings closure over literal pairs.
pub fn settings_fn(pairs: Vec<(String, String)>) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

/// A server over `pairs` with the test tools registered.
pub fn server_with(pairs: Vec<(String, String)>) -> Server {
    Server::with_registry(&settings_fn(pairs), Ok(test_registry()))
}

/// The standard test server.
pub fn server() -> Server {
    server_with(base_settings())
}

/// A `POST /mcp` with JSON content type, the `ci` bearer token and the given extra headers.
pub fn post(body: &str, extra: &[(&str, &str)]) -> HttpRequest {
    let mut headers = vec![
        ("Content-Type".to_owned(), "application/json".to_owned()),
        (
            "Accept".to_owned(),
            "application/json, text/event-stream".to_owned(),
        ),
        ("Authorization".to_owned(), format!("Bearer {TOKEN}")),
        ("Host".to_owned(), "mcp.example.com".to_owned()),
    ];
    for (name, value) in extra {
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        if !value.is_empty() {
            headers.push((name.to_string(), value.to_string()));
        }
    }
    HttpRequest {
        method: "POST".into(),
        path: "/mcp".into(),
        query: String::new(),
        headers,
        body: body.as_bytes().to_vec(),
        body_too_large: false,
    }
}

/// Sends `request` through `server` with fresh fakes; returns the reply and the log.
pub fn send_logged(server: &Server, request: HttpRequest) -> (HttpResponse, Vec<String>) {
    let env = FakeEnv::new();
    let response = futures::executor::block_on(server.handle(request, env.ports()));
    (response, env.log.lines())
}

/// Sends `request` through `server`.
pub fn send(server: &Server, request: HttpRequest) -> HttpResponse {
    send_logged(server, request).0
}

/// The reply body as JSON (panics with the body text when it is not JSON).
pub fn body_json(response: &HttpResponse) -> Json {
    serde_json::from_slice(&response.body).unwrap_or_else(|e| {
        panic!(
            "body is not JSON ({e}): {}",
            String::from_utf8_lossy(&response.body)
        )
    })
}

/// Sends one JSON-RPC body with extra headers; returns the status and the parsed body
/// (`Json::Null` for an empty body).
pub fn rpc(server: &Server, body: Json, extra: &[(&str, &str)]) -> (u16, Json) {
    let response = send(server, post(&body.to_string(), extra));
    let json = if response.body.is_empty() {
        Json::Null
    } else {
        body_json(&response)
    };
    (response.status, json)
}

/// A request object.
pub fn request(id: i64, method: &str, params: Json) -> Json {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The `_meta` a 2026-07-28 request carries.
pub fn meta_2026() -> Json {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1.0.0"}
    })
}

/// Headers of a 2026-07-28 request for `method` (and tool `name`, for `tools/call`).
pub fn headers_2026<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    headers
}

/// The error code of a JSON-RPC error body.
pub fn error_code(body: &Json) -> i64 {
    body["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {body}"))
}

fn spec(name: &str, input_schema: Json, annotations: ToolAnnotations) -> ToolSpec {
    ToolSpec {
        descriptor: ToolDescriptor {
            name: name.into(),
            title: Some(format!("Test tool {name}")),
            description: format!("Test tool {name}."),
            input_schema,
            output_schema: None,
            annotations: (annotations != ToolAnnotations::default()).then_some(annotations),
        },
        access: Access::Rules,
    }
}

/// `echo`: returns its `text` argument, the caller's principal and revision.
struct Echo(ToolSpec);

/// `echo`'s arguments.
pub struct EchoArgs {
    text: String,
}

impl devtools_mcp_edge::tools::args::Arguments for EchoArgs {
    const CLOSED: bool = false;
    fn properties() -> Vec<(devtools_mcp_edge::tools::args::Field, bool)> {
        Vec::new()
    }
    fn take(
        map: &mut serde_json::Map<String, Json>,
    ) -> Result<EchoArgs, devtools_mcp_edge::tools::args::ArgError> {
        let text = devtools_mcp_edge::tools::args::Field::string("text");
        Ok(EchoArgs {
            text: devtools_mcp_edge::tools::args::take(map, &text)?,
        })
    }
}

impl TypedTool for Echo {
    type Args = EchoArgs;
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn run(
        &self,
        args: EchoArgs,
        call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let principal: &Principal = call.principal;
        Ok(CallToolResult::text(format!(
            "{} (principal {}, revision {})",
            args.text,
            principal.name(),
            call.protocol_version.as_str()
        ))
        .with_structured(Value::from(args.text.as_str())))
    }
}

/// A tool whose handler fails in the way its name says.
struct Failing(ToolSpec);

impl TypedTool for Failing {
    type Args = serde_json::Map<String, Json>;
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn run(
        &self,
        _args: Self::Args,
        _call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        match self.0.descriptor.name.as_str() {
            "panics" => panic!("secret detail: index 7 out of range"),
            "fails" => Err(ToolError::Failed("upstream said 404: no such issue".into())),
            "internal" => Err(ToolError::Internal("KV put failed: quota".into())),
            _ => Err(ToolError::InvalidArguments("jql: unexpected token".into())),
        }
    }
}

/// The tools every protocol test server has: `echo`, `panics`, `fails`, `internal`,
/// `rejects_args`.
pub fn test_registry() -> Registry {
    let mut registry = Registry::new();
    let echo_schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1}},
        "required": ["text"],
        "additionalProperties": false
    });
    registry
        .register(Box::new(Echo(spec(
            "echo",
            echo_schema,
            ToolAnnotations {
                read_only_hint: Some(true),
                open_world_hint: Some(false),
                ..ToolAnnotations::default()
            },
        ))))
        .expect("echo registers");
    for name in ["panics", "fails", "internal", "rejects_args"] {
        registry
            .register(Box::new(Failing(spec(
                name,
                json!({"type": "object"}),
                ToolAnnotations::default(),
            ))))
            .expect("test tool registers");
    }
    registry
}
