//! The header checks a `POST /mcp` passes before its body is read: bearer authentication (with
//! the loopback-only anonymous opt-in), content type, `Accept`, and CORS for the origins in
//! `MCP_ALLOWED_ORIGINS`.

use crate::auth::{self, AuthError, Principal};
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse};
use crate::ports::{Level, Log};

/// Request headers a browser client may send cross-origin (the MCP headers of every revision).
const CORS_ALLOW_HEADERS: &str =
    "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name";

/// How long a browser may cache a preflight answer, in seconds.
const CORS_MAX_AGE: &str = "600";

/// Authenticates by bearer token. A request without `Authorization` runs as the anonymous
/// principal only when all three hold: `MCP_ALLOW_ANONYMOUS` is on, no token is configured (a
/// deployment with tokens never goes anonymous), and it was addressed to a loopback host.
pub(crate) fn authenticate(
    config: &Config,
    request: &HttpRequest,
    log: &dyn Log,
) -> Result<Principal, AuthError> {
    let authorization = request.header("Authorization");
    if authorization.is_none()
        && config.allow_anonymous
        && config.auth_tokens.is_empty()
        && is_loopback_host(request.header("Host"))
    {
        log.event(
            Level::Warn,
            "anonymous_request",
            &[(
                "detail",
                "MCP_ALLOW_ANONYMOUS is on: serving a loopback request without credentials as \
                 the anonymous principal"
                    .into(),
            )],
        );
        return Ok(Principal::anonymous());
    }
    let result = auth::authenticate(&config.auth_tokens, authorization);
    match result {
        Err(AuthError::NotConfigured) if config.oauth.is_none() => log.event(
            Level::Error,
            "auth_not_configured",
            &[(
                "detail",
                "refused: MCP_AUTH_TOKENS holds no tokens, so no request can be authenticated"
                    .into(),
            )],
        ),
        Err(AuthError::Invalid) => log.event(Level::Warn, "auth_invalid_token", &[]),
        _ => {}
    }
    result
}

/// True for `localhost`, `*.localhost`, `127.0.0.0/8` and `[::1]`, with or without a port.
pub(crate) fn is_loopback_host(host: Option<&str>) -> bool {
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
pub(crate) fn is_json_content_type(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        v.split(';')
            .next()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// True unless `Accept` is present and admits neither `application/json` nor a wildcard that
/// covers it. The spec asks clients to list both JSON and SSE; every reply can be JSON, and only
/// a call that reports progress streams (when [`accepts_events`]), so JSON's acceptability
/// decides.
pub(crate) fn accepts_json(value: Option<&str>) -> bool {
    let Some(value) = value else { return true };
    accepted(value)
        .any(|media| matches!(media.as_str(), "application/json" | "application/*" | "*/*"))
}

/// Whether `Accept` names `text/event-stream` (no wildcard: a stream is sent only to a client
/// that reads one).
pub(crate) fn accepts_events(value: Option<&str>) -> bool {
    value.is_some_and(|value| accepted(value).any(|media| media == "text/event-stream"))
}

/// The media ranges of an `Accept` value, lower case, but those it refuses with `q=0`.
fn accepted(value: &str) -> impl Iterator<Item = String> + '_ {
    value.split(',').filter_map(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
        });
        (!refused).then_some(media)
    })
}

/// Adds the CORS headers that let a browser page at an allowed `origin` read the response.
pub(crate) fn with_cors(response: HttpResponse, origin: &str) -> HttpResponse {
    response
        .with_header("Access-Control-Allow-Origin", origin)
        .with_header("Access-Control-Expose-Headers", "WWW-Authenticate")
        .with_header("Vary", "Origin")
}

/// The answer to a CORS preflight (`OPTIONS /mcp`) from an allowed origin.
pub(crate) fn preflight(origin: &str) -> HttpResponse {
    with_cors(HttpResponse::empty(204), origin)
        .with_header("Access-Control-Allow-Methods", "POST")
        .with_header("Access-Control-Allow-Headers", CORS_ALLOW_HEADERS)
        .with_header("Access-Control-Max-Age", CORS_MAX_AGE)
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
        for ok in [
            "application/json, text/event-stream",
            "Text/Event-Stream;q=0.5",
        ] {
            assert!(accepts_events(Some(ok)), "{ok}");
        }
        for bad in [
            None,
            Some("application/json"),
            Some("*/*"),
            Some("text/event-stream;q=0"),
        ] {
            assert!(!accepts_events(bad), "{bad:?}");
        }
    }
}
