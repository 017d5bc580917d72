//! Shared harness for the GitHub, CircleCI and HTTP cache host tests: a production-registry
//! server configured for both vendors, scripted upstream answers, and a `tools/call` helper
//! that runs against caller-owned fakes so tests can count requests and move the clock.

use crate::common::protocol::*;
use crate::common::server::{tools_call, Builder, TestServer, STATELESS};
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::{header, TransportError, UpstreamRequest, UpstreamResponse};
use devtools_mcp_edge::server::Server;
use serde_json::Value as Json;

/// The GitHub token configured.
pub const GITHUB_TOKEN: &str = "ghp_test0123456789abcdefSECRET";
/// The CircleCI token configured.
pub const CIRCLECI_TOKEN: &str = "circle-test-0123456789SECRET";
/// GitHub base URL (an Enterprise-style root with a path, to show paths append to it).
pub const GITHUB_URL: &str = "https://ghe.test/api/v3";
/// CircleCI base URL.
pub const CIRCLECI_URL: &str = "https://circle.test/api/v2";

/// Both vendors configured, plus `extra` (later entries win).
pub fn ci_builder(extra: &[(&str, &str)]) -> Builder {
    TestServer::builder()
        .settings(&[
            ("GITHUB_TOKEN", GITHUB_TOKEN),
            ("GITHUB_API_URL", GITHUB_URL),
            ("CIRCLECI_TOKEN", CIRCLECI_TOKEN),
            ("CIRCLECI_API_URL", CIRCLECI_URL),
        ])
        .settings(extra)
}

/// The standard CI test server.
pub fn ci_server() -> Server {
    ci_builder(&[]).build().server
}

/// What a `tools/call` answered.
#[derive(Debug)]
pub struct Outcome {
    /// The result's text block.
    pub text: String,
    /// `isError`.
    pub is_error: bool,
    /// The whole JSON-RPC reply body, as sent.
    pub raw: String,
}

impl Outcome {
    /// The text parsed as JSON (for `outputFormat: "json"` calls).
    pub fn json(&self) -> Json {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("text is not JSON ({e}): {}", self.text))
    }
}

/// Calls tool `name` with `arguments` as the principal holding `token`, on `env`'s fakes.
pub fn call_as(
    server: &Server,
    env: &FakeEnv,
    token: &str,
    name: &str,
    arguments: Json,
) -> Outcome {
    let reply = tools_call(server, env.ports(), STATELESS, token, name, arguments);
    Outcome {
        text: reply.text().to_owned(),
        is_error: reply.is_error(),
        raw: reply.raw,
    }
}

/// Calls tool `name` as principal `ci`.
pub fn call(server: &Server, env: &FakeEnv, name: &str, arguments: Json) -> Outcome {
    call_as(server, env, TOKEN, name, arguments)
}

/// A JSON answer with `status` and extra headers.
pub fn json_response(status: u16, body: &str, headers: &[(&str, &str)]) -> UpstreamResponse {
    let mut all = vec![(
        "Content-Type".to_owned(),
        "application/json; charset=utf-8".to_owned(),
    )];
    all.extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    UpstreamResponse {
        status,
        status_text: reason(status).to_owned(),
        headers: all,
        body: body.as_bytes().to_vec(),
    }
}

fn reason(status: u16) -> &'static str {
    devtools_mcp_edge::upstream::reason_phrase(status)
}

/// The value of query parameter `name` in `url`.
pub fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

/// The value of header `name` in a request.
pub fn request_header<'a>(request: &'a UpstreamRequest, name: &str) -> Option<&'a str> {
    header(&request.headers, name)
}

/// Asserts that no configured secret appears in `outcome` or in the log.
pub fn assert_no_secret(outcome: &Outcome, env: &FakeEnv) {
    for secret in [GITHUB_TOKEN, CIRCLECI_TOKEN, TOKEN] {
        assert!(
            !outcome.raw.contains(secret),
            "secret in reply: {}",
            outcome.raw
        );
        for line in env.log.lines() {
            assert!(!line.contains(secret), "secret in log: {line}");
        }
    }
}

/// An error status case: status, body, headers, expected text prefix.
pub type StatusCase = (
    u16,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);
/// A scripted upstream answer.
pub type Responder = Box<dyn Fn(&UpstreamRequest) -> Result<UpstreamResponse, TransportError>>;

/// Fakes whose upstream answers with `respond`.
pub fn env_with(
    respond: impl Fn(&UpstreamRequest) -> Result<UpstreamResponse, TransportError> + 'static,
) -> FakeEnv {
    FakeEnv::with_http(ScriptedHttp::new(respond))
}

/// A CI server with structured output over a fake upstream whose state is a `T` set up by
/// `setup` and answered by `answer`; the state is shared so a test reads what it saw.
pub fn scripted<T: Default + 'static>(
    setup: impl FnOnce(&mut T),
    answer: fn(&std::rc::Rc<std::cell::RefCell<T>>, &UpstreamRequest) -> UpstreamResponse,
) -> (Server, FakeEnv, std::rc::Rc<std::cell::RefCell<T>>) {
    let shared = std::rc::Rc::<std::cell::RefCell<T>>::default();
    setup(&mut shared.borrow_mut());
    let for_http = shared.clone();
    let env = env_with(move |r| Ok(answer(&for_http, r)));
    let server = ci_builder(&[("MCP_STRUCTURED_OUTPUT", "true")])
        .build()
        .server;
    (server, env, shared)
}
