//! The identity provider sign-in is delegated to: the URL the person is sent to, the code
//! exchange, and who they are (GitHub's `/user` and `/user/orgs`, or OpenID Connect userinfo).

use super::atlassian;
use super::error::OAuthError;
use super::settings::{OAuthSettings, Provider};
use super::store::{SignedIn, UpstreamToken};
use super::CALLBACK_PATH;
use crate::ports::{Ports, UpstreamRequest};
use crate::upstream::path::form_urlencode;
use crate::upstream::vendor::{GITHUB_API_VERSION, USER_AGENT};
use crate::upstream::Secret;
use serde::Deserialize;
use serde_json::Value as Json;

/// How long one identity-provider request may take, in milliseconds.
pub(super) const IDP_TIMEOUT_MS: u64 = 10_000;
/// The largest identity-provider answer read, in bytes.
const IDP_MAX_BYTES: usize = 256 * 1024;
/// The most groups kept from a sign-in.
const MAX_GROUPS: usize = 100;
/// GitHub scopes: the profile, and organisation membership for groups and the allow-list.
const GITHUB_SCOPES: &str = "read:user read:org";

/// Where the person signs in: the provider's authorization URL for `state`, with PKCE.
pub fn authorization_url(settings: &OAuthSettings, state: &str, challenge: &str) -> String {
    let redirect = format!("{}{CALLBACK_PATH}", settings.issuer);
    let (base, scope) = match &settings.provider {
        Provider::GitHub { web_url, .. } => {
            (format!("{web_url}/login/oauth/authorize"), GITHUB_SCOPES)
        }
        Provider::Oidc(oidc) => (oidc.authorization_url.clone(), oidc.scopes.as_str()),
    };
    let params = [
        ("response_type", "code"),
        ("client_id", settings.client_id.as_str()),
        ("redirect_uri", redirect.as_str()),
        ("scope", scope),
        ("state", state),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}{}", form_urlencode(&params))
}

/// A token endpoint's answer, success or refusal (both the identity provider's and Atlassian's).
#[derive(Deserialize)]
pub(super) struct TokenAnswer {
    access_token: Option<String>,
    refresh_token: Option<String>,
    expires_in: Option<u64>,
    error: Option<String>,
}

pub(super) fn idp_error(what: &str) -> OAuthError {
    OAuthError::server_error(format!("the identity provider failed: {what}"))
}

pub(super) async fn send(ports: Ports<'_>, request: UpstreamRequest) -> Result<Json, OAuthError> {
    let response = ports
        .http
        .send(request, IDP_MAX_BYTES)
        .await
        .map_err(|e| idp_error(&e.to_string()))?;
    if !(200..300).contains(&response.status) {
        return Err(idp_error(&format!("HTTP {}", response.status)));
    }
    serde_json::from_slice(&response.body).map_err(|_| idp_error("an answer that is not JSON"))
}

fn get(url: String, token: &str) -> UpstreamRequest {
    UpstreamRequest {
        method: "GET".into(),
        url,
        headers: vec![
            ("Authorization".into(), format!("Bearer {token}")),
            ("Accept".into(), "application/json".into()),
            ("User-Agent".into(), USER_AGENT.into()),
            ("X-GitHub-Api-Version".into(), GITHUB_API_VERSION.into()),
        ],
        body: None,
        timeout_ms: IDP_TIMEOUT_MS,
    }
}

fn token_url(settings: &OAuthSettings) -> String {
    match &settings.provider {
        Provider::GitHub { web_url, .. } => format!("{web_url}/login/oauth/access_token"),
        Provider::Oidc(oidc) => oidc.token_url.clone(),
    }
}

/// One request to the provider's token endpoint with this server's client credentials; the
/// access token, or the provider's refusal as `access_denied`.
async fn token_request(
    settings: &OAuthSettings,
    grant: &[(&str, &str)],
    ports: Ports<'_>,
) -> Result<(String, TokenAnswer), OAuthError> {
    let mut form: Vec<(String, String)> = grant
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    form.push(("client_id".into(), settings.client_id.clone()));
    form.push((
        "client_secret".into(),
        settings.client_secret.expose().to_owned(),
    ));
    let answer = send(
        ports,
        UpstreamRequest {
            method: "POST".into(),
            url: token_url(settings),
            headers: vec![
                (
                    "Content-Type".into(),
                    "application/x-www-form-urlencoded".into(),
                ),
                ("Accept".into(), "application/json".into()),
                ("User-Agent".into(), USER_AGENT.into()),
            ],
            body: Some(form_urlencode(&form).into_bytes()),
            timeout_ms: IDP_TIMEOUT_MS,
        },
    )
    .await?;
    token_answer(answer, "the identity provider")
}

/// A token endpoint's JSON answer: the access token and the rest of the answer, or the refusal
/// of `who` (the provider's name in the error) as `access_denied`.
pub(super) fn token_answer(answer: Json, who: &str) -> Result<(String, TokenAnswer), OAuthError> {
    let mut answer: TokenAnswer = serde_json::from_value(answer)
        .map_err(|_| idp_error(&format!("a malformed token answer from {who}")))?;
    match (answer.access_token.take(), &answer.error) {
        (Some(token), None) => Ok((token, answer)),
        (_, Some(error)) => Err(OAuthError::access_denied(format!(
            "{who} refused ({})",
            error.chars().take(64).collect::<String>()
        ))),
        (None, None) => Err(idp_error(&format!("no access token from {who}"))),
    }
}

/// A person's token for `vendor` as a token endpoint answered it, with its expiry made absolute.
pub(super) fn upstream_token(
    vendor: &str,
    access: String,
    answer: TokenAnswer,
    site: Option<String>,
    ports: Ports<'_>,
) -> UpstreamToken {
    UpstreamToken {
        vendor: vendor.into(),
        access: Secret::new(access),
        refresh: answer.refresh_token.map(Secret::new),
        expires_ms: answer
            .expires_in
            .map(|s| ports.clock.now_ms() + s.saturating_mul(1000)),
        site,
    }
}

/// Renews a person's expiring upstream token with its refresh token, at the token endpoint it
/// came from (GitHub App user tokens last eight hours, Atlassian's one hour; both rotate their
/// refresh tokens, so the answer's replaces the old one, kept only when the answer has none).
pub async fn refresh(
    settings: &OAuthSettings,
    token: &UpstreamToken,
    ports: Ports<'_>,
) -> Result<UpstreamToken, OAuthError> {
    let Some(refresh) = &token.refresh else {
        return Err(OAuthError::invalid_grant("the token has no refresh token"));
    };
    let grant = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh.expose()),
    ];
    let (access, answer) = match (token.vendor.as_str(), &settings.atlassian) {
        (atlassian::VENDOR, Some(app)) => atlassian::token_request(app, &grant, ports).await?,
        (atlassian::VENDOR, None) => {
            return Err(OAuthError::invalid_grant(
                "Atlassian sign-in is no longer configured",
            ))
        }
        _ => token_request(settings, &grant, ports).await?,
    };
    let mut renewed = upstream_token(&token.vendor, access, answer, token.site.clone(), ports);
    if renewed.refresh.is_none() {
        renewed.refresh = token.refresh.clone();
    }
    Ok(renewed)
}

/// Exchanges the provider's `code` and reads who signed in. The allow-list is the caller's.
pub async fn sign_in(
    settings: &OAuthSettings,
    code: &str,
    verifier: &str,
    ports: Ports<'_>,
) -> Result<(SignedIn, Option<String>), OAuthError> {
    let redirect = format!("{}{CALLBACK_PATH}", settings.issuer);
    let grant = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect.as_str()),
        ("code_verifier", verifier),
    ];
    let (access, answer) =
        token_request(settings, &grant, ports)
            .await
            .map_err(|e| match e.code {
                "access_denied" => OAuthError::access_denied(format!(
                    "the identity provider refused the sign-in: {}",
                    e.description
                )),
                _ => e,
            })?;
    match &settings.provider {
        Provider::GitHub { api_url, .. } => {
            let user = send(ports, get(format!("{api_url}/user"), &access)).await?;
            let login = user["login"]
                .as_str()
                .ok_or_else(|| idp_error("no login in /user"))?
                .to_owned();
            let orgs = send(
                ports,
                get(format!("{api_url}/user/orgs?per_page=100"), &access),
            )
            .await?;
            let groups = orgs
                .as_array()
                .map(|list| {
                    list.iter()
                        .filter_map(|o| o["login"].as_str().map(str::to_owned))
                        .take(MAX_GROUPS)
                        .collect()
                })
                .unwrap_or_default();
            let upstream = upstream_token("github", access.clone(), answer, None, ports);
            Ok((
                SignedIn {
                    principal: login,
                    groups,
                    upstream: vec![upstream],
                },
                None,
            ))
        }
        Provider::Oidc(oidc) => {
            let claims = send(ports, get(oidc.userinfo_url.clone(), &access)).await?;
            let principal = claims[oidc.principal_claim.as_str()]
                .as_str()
                .ok_or_else(|| {
                    OAuthError::access_denied(format!(
                        "the identity provider gave no {} claim",
                        oidc.principal_claim
                    ))
                })?
                .to_owned();
            let email = claims["email"]
                .as_str()
                .filter(|_| claims["email_verified"].as_bool() == Some(true))
                .map(str::to_owned);
            let groups = oidc
                .groups_claim
                .as_deref()
                .and_then(|claim| claims[claim].as_array())
                .map(|list| {
                    list.iter()
                        .filter_map(|g| g.as_str().map(str::to_owned))
                        .take(MAX_GROUPS)
                        .collect()
                })
                .unwrap_or_default();
            Ok((
                SignedIn {
                    principal,
                    groups,
                    upstream: Vec::new(),
                },
                email,
            ))
        }
    }
}
