//! Shared harness for the OAuth host tests: a server with static tokens and OAuth sign-in on,
//! requests to the OAuth endpoints, and tokens minted straight into the fake token store.

pub use super::protocol::*;

use devtools_mcp_edge::config::Config;
use devtools_mcp_edge::http::{HttpRequest, HttpResponse};
use devtools_mcp_edge::oauth::settings::OAuthSettings;
use devtools_mcp_edge::oauth::store::{pkce_challenge, NewCode, SignedIn, TokenSet, TokenStore};
use devtools_mcp_edge::ports::fake::FakeEnv;
use devtools_mcp_edge::server::Server;
use futures::executor::block_on;

/// The public origin of the test server.
pub const ISSUER: &str = "https://mcp.example.com";
/// A PKCE verifier (RFC 7636 appendix B).
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

/// The static settings plus OAuth with GitHub sign-in.
pub fn oauth_settings() -> Vec<(String, String)> {
    let mut pairs = base_settings();
    for (k, v) in [
        ("MCP_OAUTH_ISSUER", ISSUER),
        (
            "MCP_OAUTH_ENCRYPTION_KEY",
            "test-key-0123456789abcdef0123456789",
        ),
        ("MCP_OAUTH_PROVIDER", "github"),
        ("MCP_OAUTH_CLIENT_ID", "Iv1.test"),
        ("MCP_OAUTH_CLIENT_SECRET", "github-client-secret"),
        ("MCP_OAUTH_ALLOWED_USERS", "octocat"),
    ] {
        pairs.push((k.into(), v.into()));
    }
    pairs
}

/// A server with OAuth on and the test tools.
pub fn oauth_server() -> Server {
    server_with(oauth_settings())
}

/// The OAuth settings of `server`.
pub fn settings_of(server: &Server) -> OAuthSettings {
    let config: &Config = server.config().expect("valid config");
    config.oauth.clone().expect("OAuth on")
}

/// Tokens for `principal` issued through the store, as a sign-in would leave them.
pub fn mint_tokens(server: &Server, env: &FakeEnv, principal: &str) -> TokenSet {
    mint_signed_in(
        server,
        env,
        SignedIn {
            principal: principal.into(),
            groups: Vec::new(),
            upstream: Vec::new(),
        },
    )
}

/// Tokens for the person `signed_in` describes (groups and upstream tokens), issued through the
/// store as their sign-in would leave them.
pub fn mint_signed_in(server: &Server, env: &FakeEnv, signed_in: SignedIn) -> TokenSet {
    let settings = settings_of(server);
    let store = TokenStore::new(&settings, env.ports());
    let code = block_on(store.issue_code(NewCode {
        client_id: "client-1".into(),
        redirect_uri: "http://127.0.0.1:3000/callback".into(),
        code_challenge: pkce_challenge(VERIFIER),
        resource: settings.resource.clone(),
        scope: "mcp".into(),
        signed_in,
    }))
    .unwrap();
    block_on(store.exchange_code(
        &code,
        "client-1",
        "http://127.0.0.1:3000/callback",
        VERIFIER,
        None,
    ))
    .unwrap()
}

/// A request with `method` to `path` (query included after `?`) and the given headers.
pub fn http(
    method: &str,
    path_and_query: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> HttpRequest {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    HttpRequest {
        method: method.into(),
        path: path.into(),
        query: query.into(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: body.as_bytes().to_vec(),
        body_too_large: false,
    }
}

/// Sends `request` through `server` on `env`.
pub fn send_on(server: &Server, env: &FakeEnv, request: HttpRequest) -> HttpResponse {
    block_on(server.handle(request, env.ports()))
}
