//! Sign-in with OAuth: the worker is the resource server (`/mcp`) and its own authorization
//! server, and delegates the sign-in itself to an identity provider (GitHub or OpenID Connect).
//! Discovery documents live in `metadata`, tokens in `store`, settings in `settings`.
//!
//! Static bearer tokens keep working beside it: a request whose token has the shape of an
//! issued token ([`store::is_issued_token`]) is checked here, every other token against the
//! static table, and only a request without credentials, or with an issued-shape token, is
//! pointed at OAuth discovery (docs/decisions/0040-oauth-beside-static-tokens.md).

pub(crate) mod atlassian;
pub(crate) mod authorize;
pub(crate) mod client;
pub(crate) mod error;
pub mod form;
pub(crate) mod identity;
pub(crate) mod idp;
pub(crate) mod metadata;
pub(crate) mod sealed;
pub mod settings;
pub mod store;
mod token_endpoint;
pub(crate) mod url;

use crate::auth::{PersonalToken, Principal};
use crate::http::{HttpRequest, HttpResponse};
use crate::ports::{Level, Log, Ports, RateLimit};
use crate::upstream::Vendor;
use error::{json_reply, OAuthError};
use serde_json::json;
use settings::OAuthSettings;

/// The one scope: access to the MCP endpoint as the signed-in person.
pub(crate) const SCOPE: &str = "mcp";
/// The authorization endpoint.
pub(crate) const AUTHORIZE_PATH: &str = "/oauth/authorize";
/// The token endpoint.
pub(crate) const TOKEN_PATH: &str = "/oauth/token";
/// The dynamic client registration endpoint (RFC 7591).
pub(crate) const REGISTER_PATH: &str = "/oauth/register";
/// The revocation endpoint (RFC 7009).
pub(crate) const REVOKE_PATH: &str = "/oauth/revoke";
/// Where the identity provider sends the person back.
pub(crate) const CALLBACK_PATH: &str = "/oauth/callback";
/// Where Atlassian sends the person back from its consent (when its app is configured).
pub(crate) const ATLASSIAN_CALLBACK_PATH: &str = "/oauth/atlassian/callback";

/// True for the paths this module answers.
pub(crate) fn is_oauth_path(path: &str) -> bool {
    matches!(
        path,
        metadata::RESOURCE_METADATA_PATH
            | metadata::RESOURCE_METADATA_ROOT
            | metadata::SERVER_METADATA_PATH
            | AUTHORIZE_PATH
            | TOKEN_PATH
            | REGISTER_PATH
            | REVOKE_PATH
            | CALLBACK_PATH
            | ATLASSIAN_CALLBACK_PATH
    )
}

/// The limiter's count a request to one of the [`is_oauth_path`] paths is counted under: the
/// requests that do work for their sender. `None` for the discovery documents, preflights and
/// methods a path does not take, which are answered at once.
fn count_of(request: &HttpRequest) -> Option<&'static str> {
    match (request.method.as_str(), request.path.as_str()) {
        ("GET" | "POST", AUTHORIZE_PATH)
        | ("POST", REGISTER_PATH)
        | ("GET", CALLBACK_PATH | ATLASSIAN_CALLBACK_PATH) => Some("oauth"),
        // Counted apart, so that an address's registrations never hold back the refresh
        // grants of the clients signed in behind it.
        ("POST", TOKEN_PATH | REVOKE_PATH) => Some("oauth-token"),
        _ => None,
    }
}

/// Whether `request` does work for its sender (see [`count_of`]): only those are counted, hold
/// a place among the requests in flight, or have a body read.
pub(crate) fn is_counted(request: &HttpRequest) -> bool {
    count_of(request).is_some()
}

/// The refusal of a counted request (see [`count_of`]) from an address over its limit; asked
/// before the request's body is read, so that a refused request costs no memory.
pub(crate) async fn refused(request: &HttpRequest, ports: Ports<'_>) -> Option<HttpResponse> {
    let key = format!("{}:{}", count_of(request)?, address_key(request));
    let refused = over_limit(&key, request, ports.limiter, ports.log).await?;
    Some(public_cors(refused))
}

/// Answers a request to one of the [`is_oauth_path`] paths that [`refused`] let through.
pub(crate) async fn handle(
    settings: &OAuthSettings,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> HttpResponse {
    let route = (request.method.as_str(), request.path.as_str());
    let response = match route {
        ("GET", AUTHORIZE_PATH) => return authorize::start(settings, request, ports).await,
        ("POST", AUTHORIZE_PATH) => return authorize::decide(settings, request, ports).await,
        ("GET", CALLBACK_PATH) => return authorize::callback(settings, request, ports).await,
        ("GET", ATLASSIAN_CALLBACK_PATH) => {
            return authorize::atlassian_callback(settings, request, ports).await
        }
        ("POST", TOKEN_PATH) => match token(settings, request, ports).await {
            Ok(tokens) => json_reply(200, &json!(tokens)),
            Err(e) => e.reply(),
        },
        ("POST", REGISTER_PATH) => match client::register(settings, &request.body, ports).await {
            Ok(registered) => json_reply(201, &registered),
            Err(e) => e.reply(),
        },
        ("POST", REVOKE_PATH) => match revoke(settings, request, ports).await {
            Ok(()) => json_reply(200, &json!({})),
            Err(e) => e.reply(),
        },
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
            .with_header("Allow", "GET, POST, OPTIONS"),
    };
    public_cors(response)
}

/// How long a caller over the limit is told to wait: the limiter's period.
pub(crate) const RATE_LIMIT_RETRY_SECONDS: u64 = 60;

/// Who a caller of the sign-in endpoints is counted as: its IPv4 address, or the /48 prefix of
/// its IPv6 address. One site is routinely given a whole /48 (RFC 6177) and may pick any
/// address in it, as a NAT gives one office a single IPv4 address.
fn counted_address(address: &str) -> String {
    match address.trim().parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(v6)) => {
            let [a, b, c, ..] = v6.segments();
            format!("{a:x}:{b:x}:{c:x}::/48")
        }
        Ok(std::net::IpAddr::V4(v4)) => v4.to_string(),
        Err(_) => "unknown".to_owned(),
    }
}

/// Who `request` is counted as by the sign-in endpoints' bounds (see [`counted_address`]).
pub(crate) fn address_key(request: &HttpRequest) -> String {
    counted_address(request.header("CF-Connecting-IP").unwrap_or(""))
}

/// A 429 for a caller past the per-address limit, counted under `key`, on the requests anyone
/// may send: registrations, authorization requests, consent forms and the providers' callbacks
/// (each callback costs a call to the provider with this server's client secret), and the
/// token and revocation requests (their bodies can be held open). Without a limiter bound,
/// requests go on (the limiter protects cost) and a warning is logged.
async fn over_limit(
    key: &str,
    request: &HttpRequest,
    limiter: &dyn RateLimit,
    log: &dyn Log,
) -> Option<HttpResponse> {
    match limiter.admit(key).await {
        Ok(true) => None,
        Ok(false) => {
            log.event(
                Level::Warn,
                "oauth_rate_limited",
                &[("path", (&request.path).into())],
            );
            Some(temporarily_unavailable(
                429,
                &format!(
                    "too many sign-in requests from this address; retry after \
                     {RATE_LIMIT_RETRY_SECONDS} seconds"
                ),
                RATE_LIMIT_RETRY_SECONDS,
            ))
        }
        Err(e) => {
            log.event(
                Level::Warn,
                "oauth_rate_limit_unavailable",
                &[("detail", (&e.0).into())],
            );
            None
        }
    }
}

fn form_body(request: &HttpRequest) -> Result<form::Params, OAuthError> {
    let form = request.header("Content-Type").is_some_and(|t| {
        t.split(';').next().is_some_and(|t| {
            t.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
    });
    if !form {
        return Err(OAuthError::invalid_request(
            "the body must be application/x-www-form-urlencoded",
        ));
    }
    let text = std::str::from_utf8(&request.body)
        .map_err(|_| OAuthError::invalid_request("the body is not UTF-8"))?;
    form::Params::parse(text)
}

/// `POST /oauth/token`: the code and refresh grants for public clients. A refresh first asks the
/// identity provider about the person again ([`identity::recheck`]).
async fn token(
    settings: &OAuthSettings,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> Result<store::TokenSet, OAuthError> {
    let params = form_body(request)?;
    let client_id = params.required("client_id")?;
    let resource = params.get("resource")?.map(|r| r.trim_end_matches('/'));
    let store = store::TokenStore::new(settings, ports);
    match params.required("grant_type")? {
        "authorization_code" => {
            store
                .exchange_code(
                    params.required("code")?,
                    client_id,
                    params.required("redirect_uri")?,
                    params.required("code_verifier")?,
                    resource,
                )
                .await
        }
        "refresh_token" => {
            let refresh_token = params.required("refresh_token")?;
            identity::recheck(settings, &store, refresh_token, client_id, ports).await?;
            store.refresh(refresh_token, client_id, resource).await
        }
        other => Err(OAuthError::unsupported_grant_type(format!(
            "grant_type {:?} is not supported (authorization_code, refresh_token)",
            other.chars().take(40).collect::<String>()
        ))),
    }
}

/// `POST /oauth/revoke` (RFC 7009): always 200 for a well-formed request.
async fn revoke(
    settings: &OAuthSettings,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> Result<(), OAuthError> {
    let params = form_body(request)?;
    let token = params.required("token")?;
    let client_id = params.required("client_id")?;
    store::TokenStore::new(settings, ports)
        .revoke(token, client_id)
        .await
}

/// OAuth's `invalid_request` readable by any origin: the sign-in endpoints' answer to a request
/// refused before it is read.
pub(crate) fn bad_request(description: &str) -> HttpResponse {
    public_cors(error::OAuthError::invalid_request(description).reply())
}

/// OAuth's `temporarily_unavailable` with `status`, readable by any origin: the sign-in
/// endpoints' answer to a request they cannot take now, to retry after `retry_after` seconds.
pub(crate) fn temporarily_unavailable(
    status: u16,
    description: &str,
    retry_after: u64,
) -> HttpResponse {
    let body = json!({"error": "temporarily_unavailable", "error_description": description});
    public_cors(json_reply(status, &body)).with_header("Retry-After", &retry_after.to_string())
}

/// Discovery and the token, registration and revocation endpoints carry no ambient credential
/// (no cookie), so any origin may read them: browser-based MCP clients need to.
fn public_cors(response: HttpResponse) -> HttpResponse {
    response.with_header("Access-Control-Allow-Origin", "*")
}

/// A person's upstream token is renewed this long before it expires, so that two requests
/// renewing at once (the provider rotates refresh tokens, so one of them fails) still hold a
/// token that works while the renewed one reaches the grant.
pub(crate) const RENEW_BEFORE_MS: u64 = 5 * 60 * 1000;

/// Renews the person's upstream tokens that expire within [`RENEW_BEFORE_MS`] and have a
/// refresh token, and stores the renewed ones in the grant. A renewal that fails is logged
/// (without the token) and the old token kept: the gate refuses it once it has expired, asking
/// the person to sign in again.
async fn renew_upstream(
    settings: &OAuthSettings,
    store: &store::TokenStore<'_>,
    who: &store::Authenticated,
    ports: Ports<'_>,
) -> Vec<store::UpstreamToken> {
    let now = ports.clock.now_ms();
    let mut tokens = who.upstream.clone();
    let mut renewed = false;
    for token in tokens.iter_mut() {
        let due = token
            .expires_ms
            .is_some_and(|at| at <= now.saturating_add(RENEW_BEFORE_MS));
        if !due || token.refresh.is_none() {
            continue;
        }
        match idp::refresh(settings, token, ports).await {
            Ok(fresh) => {
                *token = fresh;
                renewed = true;
                ports.log.event(
                    Level::Info,
                    "oauth_upstream_renewed",
                    &[
                        ("principal", (&who.principal).into()),
                        ("vendor", (&token.vendor).into()),
                    ],
                );
            }
            Err(e) => ports.log.event(
                Level::Warn,
                "oauth_upstream_renewal_failed",
                &[
                    ("principal", (&who.principal).into()),
                    ("vendor", (&token.vendor).into()),
                    ("detail", (&e.description).into()),
                ],
            ),
        }
    }
    if renewed {
        if let Err(e) = store.replace_upstream(&who.grant, &tokens).await {
            ports.log.event(
                Level::Error,
                "oauth_store_unavailable",
                &[("detail", (&e.description).into())],
            );
        }
    }
    tokens
}

/// The principal of a signed-in person: their verified attributes (aliases and provider
/// groups), and their upstream tokens for the vendors this server calls. An Atlassian token acts for Jira and Confluence, each at its root on the
/// gateway for the site found at sign-in; without Atlassian configured it acts for neither.
fn signed_in_principal(
    settings: &OAuthSettings,
    name: &str,
    attributes: &[String],
    tokens: Vec<store::UpstreamToken>,
) -> Principal {
    let mut personal = Vec::new();
    for t in tokens {
        let vendors: &[Vendor] = match t.vendor.as_str() {
            "github" => &[Vendor::GitHub],
            atlassian::VENDOR => &[Vendor::Jira, Vendor::Confluence],
            _ => &[],
        };
        for &vendor in vendors {
            let base_url = match (vendor, &settings.atlassian, &t.site) {
                (Vendor::GitHub, _, _) => None,
                (_, Some(app), Some(site)) => Some(atlassian::gateway_url(app, vendor, site)),
                _ => continue,
            };
            personal.push(PersonalToken {
                vendor,
                token: t.access.clone(),
                expires_ms: t.expires_ms,
                base_url,
            });
        }
    }
    Principal::signed_in(name, attributes, personal)
}

/// Authenticates an issued access token; the error is the text of the 401. Why a token failed
/// goes to the log only, so a caller learns nothing about other people's tokens.
pub(crate) async fn authenticate(
    settings: &OAuthSettings,
    token: &str,
    ports: Ports<'_>,
) -> Result<Principal, &'static str> {
    let store = store::TokenStore::new(settings, ports);
    match store.authenticate(token).await {
        Ok(who) => {
            let tokens = renew_upstream(settings, &store, &who, ports).await;
            Ok(signed_in_principal(
                settings,
                &who.principal,
                &who.groups,
                tokens,
            ))
        }
        Err(store::Rejection::Invalid(reason)) => {
            ports.log.event(
                Level::Warn,
                "oauth_token_refused",
                &[("reason", reason.into())],
            );
            Err("Unauthorized: invalid or expired access token")
        }
        Err(store::Rejection::Unavailable(detail)) => {
            ports.log.event(
                Level::Error,
                "oauth_store_unavailable",
                &[("detail", (&detail).into())],
            );
            Err("Unauthorized: the access token cannot be checked right now; retry")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::counted_address;

    #[test]
    fn callers_are_counted_by_ipv4_address_or_ipv6_site_prefix() {
        assert_eq!(counted_address("203.0.113.7"), "203.0.113.7");
        assert_ne!(
            counted_address("203.0.113.7"),
            counted_address("203.0.113.8")
        );
        // Every /64 of one /48 is one caller.
        assert_eq!(
            counted_address("2001:db8:1:2:aaaa::1"),
            counted_address("2001:DB8:1:ffff:1:2:3:4")
        );
        assert_eq!(counted_address("2001:db8:1:2::1"), "2001:db8:1::/48");
        assert_ne!(
            counted_address("2001:db8:1:2::1"),
            counted_address("2001:db8:2:2::1")
        );
        assert_eq!(counted_address(""), "unknown");
        assert_eq!(counted_address("not an address"), "unknown");
    }
}
