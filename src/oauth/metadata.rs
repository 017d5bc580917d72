//! The discovery documents: protected resource metadata (RFC 9728) for `/mcp`, authorization
//! server metadata (RFC 8414), and the `WWW-Authenticate` challenge that points at the former.

use super::settings::OAuthSettings;
use super::{AUTHORIZE_PATH, REGISTER_PATH, REVOKE_PATH, SCOPE, TOKEN_PATH};
use serde_json::{json, Value as Json};

/// Where the protected resource metadata of `/mcp` is (the path-suffixed form of RFC 9728
/// section 3.1; the bare form is served too).
pub(crate) const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
/// The bare protected resource metadata path.
pub(crate) const RESOURCE_METADATA_ROOT: &str = "/.well-known/oauth-protected-resource";
/// The authorization server metadata path (the issuer has no path, so nothing is appended).
pub(crate) const SERVER_METADATA_PATH: &str = "/.well-known/oauth-authorization-server";

/// RFC 9728 metadata of the MCP endpoint.
pub(crate) fn resource_metadata(settings: &OAuthSettings) -> Json {
    json!({
        "resource": settings.resource,
        "authorization_servers": [settings.issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": [SCOPE],
        "resource_name": env!("CARGO_PKG_NAME"),
    })
}

/// RFC 8414 metadata of this authorization server.
pub(crate) fn server_metadata(settings: &OAuthSettings) -> Json {
    let at = |path: &str| format!("{}{path}", settings.issuer);
    json!({
        "issuer": settings.issuer,
        "authorization_endpoint": at(AUTHORIZE_PATH),
        "token_endpoint": at(TOKEN_PATH),
        "registration_endpoint": at(REGISTER_PATH),
        "revocation_endpoint": at(REVOKE_PATH),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "scopes_supported": [SCOPE],
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
    })
}

/// The `WWW-Authenticate` value of a 401 that invites OAuth: RFC 6750 with the RFC 9728
/// `resource_metadata` parameter; `invalid_token` when a token was presented.
pub(crate) fn challenge(settings: &OAuthSettings, token_presented: bool) -> String {
    let error = if token_presented {
        "error=\"invalid_token\", "
    } else {
        ""
    };
    format!(
        "Bearer {error}resource_metadata=\"{}{RESOURCE_METADATA_PATH}\", scope=\"{SCOPE}\"",
        settings.issuer
    )
}
