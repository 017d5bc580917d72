//! The HTTP face of the server: routing, the checks every `POST /mcp` passes before its body is
//! read (configuration, origin, authentication, size, content type), panic containment, and
//! the one place where errors become HTTP replies. JSON-RPC dispatch lives in [`dispatch`].

mod dispatch;
mod reply;
mod version;

use crate::auth::{self, AuthError, Principal};
use crate::config::{Config, ConfigError};
use crate::http::{HttpRequest, HttpResponse};
use crate::jsonrpc::{ErrorCode, ErrorObject};
use crate::ports::Ports;
use crate::registry::{self, Registry, RegistryError};
use futures::FutureExt;
use reply::{log_event, rpc_error_reply};
use serde_json::json;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};

/// The adapter reads at most this many body bytes (plus one, to detect overflow) and sets
/// `body_too_large` when there were more.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The MCP endpoint's path.
pub const MCP_PATH: &str = "/mcp";

/// The server's name in `initialize` and `server/discover`.
pub const SERVER_NAME: &str = "devtools-mcp-edge";

const HOME_PAGE: &str = "devtools-mcp-edge: a remote MCP (Model Context Protocol) server for CI \
and project data (GitHub Actions, CircleCI, Jira, Confluence, Bitbucket).\n\nConnect an MCP \
client to POST /mcp (Streamable HTTP, JSON responses) with an Authorization: Bearer token.\n\
Protocol revisions: 2025-03-26, 2025-06-18, 2025-11-25 (initialize) and 2026-07-28 (stateless).\n";

/// The server: configuration and tools, built once per isolate and shared by every request.
pub struct Server {
    config: Result<Config, ConfigError>,
    registry: Result<Registry, RegistryError>,
    startup_logged: AtomicBool,
}

impl Server {
    /// Built once per isolate from the worker's settings: `settings(name)` returns the secret or
    /// var called `name` (the adapter asks for the secret first, then the var).
    pub fn new(settings: &dyn Fn(&str) -> Option<String>) -> Server {
        Server::with_registry(settings, registry::production())
    }

    /// A server with a given tool registry (tests register their own tools).
    pub fn with_registry(
        settings: &dyn Fn(&str) -> Option<String>,
        registry: Result<Registry, RegistryError>,
    ) -> Server {
        Server {
            config: Config::from_settings(settings),
            registry,
            startup_logged: AtomicBool::new(false),
        }
    }

    /// The configuration, or the error that makes every request fail.
    pub fn config(&self) -> Result<&Config, &ConfigError> {
        self.config.as_ref()
    }

    /// Handles one HTTP request; never panics, never returns an error.
    pub async fn handle(&self, request: HttpRequest, ports: Ports<'_>) -> HttpResponse {
        self.log_startup_once(ports);
        // On the host a panic unwinds to here and becomes a -32603; on wasm32 (panic=abort) the
        // isolate dies instead, which is why request paths must not panic in the first place.
        match AssertUnwindSafe(self.route(request, ports))
            .catch_unwind()
            .await
        {
            Ok(response) => response,
            Err(payload) => {
                log_event(
                    ports,
                    "error",
                    "panic",
                    json!({ "detail": reply::panic_message(payload.as_ref()) }),
                );
                rpc_error_reply(500, None, ErrorObject::internal())
            }
        }
    }

    fn log_startup_once(&self, ports: Ports<'_>) {
        if self.startup_logged.swap(true, Ordering::Relaxed) {
            return;
        }
        if let Ok(config) = &self.config {
            for (setting, given, used) in &config.clamped {
                log_event(
                    ports,
                    "warn",
                    "setting_clamped",
                    json!({ "setting": setting, "given": given, "used": used }),
                );
            }
            if config.allow_anonymous && !config.auth_tokens.is_empty() {
                log_event(
                    ports,
                    "warn",
                    "anonymous_ignored",
                    json!({ "detail": "MCP_ALLOW_ANONYMOUS is ignored because MCP_AUTH_TOKENS \
                        holds tokens: every request must present one" }),
                );
            }
            if config.auth_tokens.is_empty() {
                log_event(
                    ports,
                    "error",
                    "no_auth_tokens",
                    json!({ "detail": if config.allow_anonymous {
                        "MCP_AUTH_TOKENS is empty or unset: only credential-less loopback \
                         requests (MCP_ALLOW_ANONYMOUS) will be served"
                    } else {
                        "MCP_AUTH_TOKENS is empty or unset: every request to /mcp will be \
                         refused with 401"
                    } }),
                );
            }
        }
    }

    async fn route(&self, request: HttpRequest, ports: Ports<'_>) -> HttpResponse {
        match (request.method.as_str(), request.path.as_str()) {
            ("GET" | "HEAD", "/") => {
                let body = if request.method == "HEAD" {
                    ""
                } else {
                    HOME_PAGE
                };
                HttpResponse::new(200, "text/plain; charset=utf-8", body)
            }
            (_, "/") => method_not_allowed("GET, HEAD"),
            ("POST", MCP_PATH) => self.post_mcp(request, ports).await,
            // No server-initiated SSE stream (GET) and no sessions to end (DELETE).
            (_, MCP_PATH) => method_not_allowed("POST"),
            _ => HttpResponse::new(404, "text/plain; charset=utf-8", "Not found\n"),
        }
    }

    async fn post_mcp(&self, request: HttpRequest, ports: Ports<'_>) -> HttpResponse {
        let config = match &self.config {
            Ok(config) => config,
            Err(error) => {
                log_event(
                    ports,
                    "error",
                    "config_invalid",
                    json!({ "setting": error.setting, "reason": error.reason }),
                );
                let message = format!("Internal error: server misconfigured: {error}");
                return rpc_error_reply(
                    500,
                    None,
                    ErrorObject::new(ErrorCode::INTERNAL_ERROR, message),
                );
            }
        };
        let registry = match &self.registry {
            Ok(registry) => registry,
            Err(error) => {
                log_event(
                    ports,
                    "error",
                    "registry_invalid",
                    json!({ "detail": error.0 }),
                );
                return rpc_error_reply(500, None, ErrorObject::internal());
            }
        };
        if let Some(origin) = request.header("Origin") {
            if !config.origin_allowed(origin) {
                log_event(ports, "warn", "origin_refused", json!({ "origin": origin }));
                return rpc_error_reply(
                    403,
                    None,
                    ErrorObject::new(ErrorCode::SERVER_ERROR, "Forbidden: origin not allowed"),
                );
            }
        }
        let principal = match authenticate(config, &request, ports) {
            Ok(principal) => principal,
            Err(error) => return unauthorized(error),
        };
        if request.body_too_large || request.body.len() > MAX_BODY_BYTES {
            return rpc_error_reply(
                413,
                None,
                ErrorObject::new(
                    ErrorCode::SERVER_ERROR,
                    format!("Payload too large: the body limit is {MAX_BODY_BYTES} bytes"),
                ),
            );
        }
        if !is_json_content_type(request.header("Content-Type")) {
            return rpc_error_reply(
                415,
                None,
                ErrorObject::new(
                    ErrorCode::SERVER_ERROR,
                    "Unsupported Media Type: Content-Type must be application/json",
                ),
            );
        }
        if !accepts_json(request.header("Accept")) {
            return rpc_error_reply(
                406,
                None,
                ErrorObject::new(
                    ErrorCode::SERVER_ERROR,
                    "Not Acceptable: this server answers with application/json",
                ),
            );
        }
        let context = dispatch::Context {
            config,
            registry,
            principal: &principal,
            ports,
            request: &request,
        };
        dispatch::handle_body(&context).await
    }
}

fn method_not_allowed(allow: &str) -> HttpResponse {
    rpc_error_reply(
        405,
        None,
        ErrorObject::new(ErrorCode::SERVER_ERROR, "Method not allowed"),
    )
    .with_header("Allow", allow)
}

fn unauthorized(error: AuthError) -> HttpResponse {
    let message = match error {
        AuthError::Missing => "Unauthorized: send Authorization: Bearer <token>",
        AuthError::Invalid | AuthError::NotConfigured => "Unauthorized: invalid token",
    };
    rpc_error_reply(
        401,
        None,
        ErrorObject::new(ErrorCode::SERVER_ERROR, message),
    )
    .with_header("WWW-Authenticate", error.challenge())
}

/// Authenticates by bearer token. A request without `Authorization` runs as the anonymous
/// principal only when all three hold: `MCP_ALLOW_ANONYMOUS` is on, no token is configured (a
/// deployment with tokens never goes anonymous), and it was addressed to a loopback host.
fn authenticate(
    config: &Config,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> Result<Principal, AuthError> {
    let authorization = request.header("Authorization");
    if authorization.is_none()
        && config.allow_anonymous
        && config.auth_tokens.is_empty()
        && is_loopback_host(request.header("Host"))
    {
        log_event(
            ports,
            "warn",
            "anonymous_request",
            json!({ "detail": "MCP_ALLOW_ANONYMOUS is on: serving a loopback request without \
                credentials as the anonymous principal" }),
        );
        return Ok(Principal::anonymous());
    }
    let result = auth::authenticate(&config.auth_tokens, authorization);
    match result {
        Err(AuthError::NotConfigured) => log_event(
            ports,
            "error",
            "auth_not_configured",
            json!({ "detail": "refused: MCP_AUTH_TOKENS holds no tokens, so no request can be \
                authenticated" }),
        ),
        Err(AuthError::Invalid) => log_event(ports, "warn", "auth_invalid_token", json!({})),
        _ => {}
    }
    result
}

/// True for `localhost`, `*.localhost`, `127.0.0.0/8` and `[::1]`, with or without a port.
fn is_loopback_host(host: Option<&str>) -> bool {
    let Some(host) = host.map(|h| h.trim().to_ascii_lowercase()) else {
        return false;
    };
    let name = if host.starts_with('[') {
        host.split_once(']')
            .map_or(host.as_str(), |(h, _)| h)
            .trim_start_matches('[')
            .to_owned()
    } else {
        host.split(':').next().unwrap_or_default().to_owned()
    };
    name == "localhost"
        || name.ends_with(".localhost")
        || name == "::1"
        || name.strip_prefix("127.").is_some_and(|rest| {
            rest.split('.').count() == 3 && rest.split('.').all(|p| p.parse::<u8>().is_ok())
        })
}

/// `application/json`, any case, with optional parameters (`; charset=utf-8`).
fn is_json_content_type(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        v.split(';')
            .next()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// True unless `Accept` is present and admits neither `application/json` nor a wildcard that
/// covers it. The spec asks clients to list both JSON and SSE; we only ever answer JSON, so only
/// JSON's acceptability matters.
fn accepts_json(value: Option<&str>) -> bool {
    let Some(value) = value else { return true };
    value.split(',').any(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
        });
        !refused && matches!(media.as_str(), "application/json" | "application/*" | "*/*")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for host in [
            "localhost",
            "localhost:8787",
            "127.0.0.1:8787",
            "[::1]:8787",
            "a.localhost",
        ] {
            assert!(is_loopback_host(Some(host)), "{host}");
        }
        for host in [
            "example.com",
            "127.0.0.1.evil.com",
            "localhost.evil.com",
            "[::2]",
            "",
        ] {
            assert!(!is_loopback_host(Some(host)), "{host}");
        }
        assert!(!is_loopback_host(None));
    }

    #[test]
    fn content_types() {
        assert!(is_json_content_type(Some("application/json")));
        assert!(is_json_content_type(Some(
            "Application/JSON; charset=utf-8"
        )));
        assert!(!is_json_content_type(Some("text/plain")));
        assert!(!is_json_content_type(Some("application/jsonx")));
        assert!(!is_json_content_type(None));
    }

    #[test]
    fn accept_headers() {
        for ok in [
            None,
            Some("application/json, text/event-stream"),
            Some("*/*"),
            Some("text/event-stream, application/*;q=0.5"),
        ] {
            assert!(accepts_json(ok), "{ok:?}");
        }
        for bad in ["text/event-stream", "text/html", "application/json;q=0"] {
            assert!(!accepts_json(Some(bad)), "{bad}");
        }
    }
}
