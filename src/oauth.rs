//! Sign-in with OAuth: the worker is the resource server (`/mcp`) and its own authorization
//! server, and delegates the sign-in itself to an identity provider (GitHub or OpenID Connect).
//! Discovery documents live in `metadata`, tokens in `store`, settings in `settings`.
//!
//! Static bearer tokens keep working beside it: a request whose token has the shape of an
//! issued token ([`store::is_issued_token`]) is checked here, every other token against the
//! static table, and only a request without credentials, or with an issued-shape token, is
//! pointed at OAuth discovery (docs/decisions/0040-oauth-beside-static-tokens.md).

pub mod error;
pub mod metadata;
pub mod settings;
pub mod store;
pub mod url;

use crate::auth::Principal;
use crate::http::{HttpRequest, HttpResponse};
use crate::ports::Ports;
use error::json_reply;
use serde_json::json;
use settings::OAuthSettings;

/// The one scope: access to the MCP endpoint as the signed-in person.
pub const SCOPE: &str = "mcp";
/// The authorization endpoint.
pub const AUTHORIZE_PATH: &str = "/oauth/authorize";
/// The token endpoint.
pub const TOKEN_PATH: &str = "/oauth/token";
/// The dynamic client registration endpoint (RFC 7591).
pub const REGISTER_PATH: &str = "/oauth/register";
/// The revocation endpoint (RFC 7009).
pub const REVOKE_PATH: &str = "/oauth/revoke";
/// Where the identity provider sends the person back.
pub const CALLBACK_PATH: &str = "/oauth/callback";

/// True for the paths this module answers.
pub fn is_oauth_path(path: &str) -> bool {
    matches!(
        path,
        metadata::RESOURCE_METADATA_PATH
            | metadata::RESOURCE_METADATA_ROOT
            | metadata::SERVER_METADATA_PATH
    )
}

/// Answers a request to one of the [`is_oauth_path`] paths.
pub async fn handle(
    settings: &OAuthSettings,
    request: &HttpRequest,
    _ports: Ports<'_>,
) -> HttpResponse {
    let response = match (request.method.as_str(), request.path.as_str()) {
        ("OPTIONS", _) => {
            return public_cors(HttpResponse::empty(204))
                .with_header("Access-Control-Allow-Methods", "GET, POST")
                .with_header(
                    "Access-Control-Allow-Headers",
                    "Authorization, Content-Type, MCP-Protocol-Version",
                )
                .with_header("Access-Control-Max-Age", "600")
        }
        ("GET" | "HEAD", metadata::RESOURCE_METADATA_PATH | metadata::RESOURCE_METADATA_ROOT) => {
            json_reply(200, &metadata::resource_metadata(settings))
        }
        ("GET" | "HEAD", metadata::SERVER_METADATA_PATH) => {
            json_reply(200, &metadata::server_metadata(settings))
        }
        _ => HttpResponse::new(405, "text/plain; charset=utf-8", "Method not allowed\n")
            .with_header("Allow", "GET, HEAD, OPTIONS"),
    };
    public_cors(response)
}

/// Discovery and the token, registration and revocation endpoints carry no ambient credential
/// (no cookie), so any origin may read them: browser-based MCP clients need to.
fn public_cors(response: HttpResponse) -> HttpResponse {
    response.with_header("Access-Control-Allow-Origin", "*")
}

/// Authenticates an issued access token; the error is the text of the 401. Why a token failed
/// goes to the log only, so a caller learns nothing about other people's tokens.
pub async fn authenticate(
    settings: &OAuthSettings,
    token: &str,
    ports: Ports<'_>,
) -> Result<Principal, &'static str> {
    match store::TokenStore::new(settings, ports)
        .authenticate(token)
        .await
    {
        Ok(who) => Ok(Principal::named(&who.principal)),
        Err(store::Rejection::Invalid(reason)) => {
            let line = json!({ "level": "warn", "event": "oauth_token_refused", "reason": reason });
            ports.log.line(&line.to_string());
            Err("Unauthorized: invalid or expired access token")
        }
        Err(store::Rejection::Unavailable(detail)) => {
            let line =
                json!({ "level": "error", "event": "oauth_store_unavailable", "detail": detail });
            ports.log.line(&line.to_string());
            Err("Unauthorized: the access token cannot be checked right now; retry")
        }
    }
}
