//! OAuth error responses (RFC 6749 section 5.2, RFC 7591 section 3.2.2, RFC 8707): a code a
//! client can act on and a description for people. Descriptions never carry a token or secret.

use crate::http::HttpResponse;
use serde_json::json;

/// An OAuth error: its code and a human-readable description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthError {
    /// The `error` code (`invalid_grant`, ...).
    pub(crate) code: &'static str,
    /// The `error_description`.
    pub description: String,
}

impl OAuthError {
    fn new(code: &'static str, description: impl Into<String>) -> OAuthError {
        OAuthError {
            code,
            description: description.into(),
        }
    }

    /// A request that is missing a parameter, repeats one or is otherwise malformed.
    pub(crate) fn invalid_request(description: impl Into<String>) -> OAuthError {
        OAuthError::new("invalid_request", description)
    }

    /// An unknown client, or a client whose authentication failed.
    pub(crate) fn invalid_client(description: impl Into<String>) -> OAuthError {
        OAuthError::new("invalid_client", description)
    }

    /// A code or refresh token that is invalid, expired, revoked, used, or issued to another
    /// client or redirect URI, or a PKCE verifier that does not match.
    pub(crate) fn invalid_grant(description: impl Into<String>) -> OAuthError {
        OAuthError::new("invalid_grant", description)
    }

    /// A grant type this server does not offer.
    pub(crate) fn unsupported_grant_type(description: impl Into<String>) -> OAuthError {
        OAuthError::new("unsupported_grant_type", description)
    }

    /// A response type this server does not offer.
    pub(crate) fn unsupported_response_type(description: impl Into<String>) -> OAuthError {
        OAuthError::new("unsupported_response_type", description)
    }

    /// A `resource` that is not this server's MCP endpoint (RFC 8707).
    pub(crate) fn invalid_target(description: impl Into<String>) -> OAuthError {
        OAuthError::new("invalid_target", description)
    }

    /// The person (or the allow-list) refused.
    pub(crate) fn access_denied(description: impl Into<String>) -> OAuthError {
        OAuthError::new("access_denied", description)
    }

    /// Client metadata that cannot be registered (RFC 7591).
    pub(crate) fn invalid_client_metadata(description: impl Into<String>) -> OAuthError {
        OAuthError::new("invalid_client_metadata", description)
    }

    /// A redirect URI that cannot be registered (RFC 7591).
    pub(crate) fn invalid_redirect_uri(description: impl Into<String>) -> OAuthError {
        OAuthError::new("invalid_redirect_uri", description)
    }

    /// Something on this side failed (storage, the identity provider); details are in the log.
    pub(crate) fn server_error(description: impl Into<String>) -> OAuthError {
        OAuthError::new("server_error", description)
    }

    /// The JSON error response of the token, registration and revocation endpoints: 401 for a
    /// failed client authentication, 500 for a server error, 400 otherwise; never cached.
    pub(crate) fn reply(&self) -> HttpResponse {
        let status = match self.code {
            "invalid_client" => 401,
            "server_error" => 500,
            _ => 400,
        };
        json_reply(
            status,
            &json!({ "error": self.code, "error_description": self.description }),
        )
    }
}

/// A JSON response that no cache may keep (RFC 6749 section 5.1).
pub(crate) fn json_reply(status: u16, body: &serde_json::Value) -> HttpResponse {
    HttpResponse::new(status, "application/json", body.to_string())
        .with_header("Cache-Control", "no-store")
        .with_header("Pragma", "no-cache")
}
