//! The identity provider sign-in is delegated to: the URL the person is sent to, the code
//! exchange, and who they are (GitHub's `/user` and `/user/orgs`, or OpenID Connect userinfo).

use super::atlassian;
use super::error::OAuthError;
use super::settings::{OAuthSettings, PrincipalClaim, Provider};
use super::store::{SignedIn, UpstreamToken};
use super::token_endpoint::{
    idp_error, send, send_status, token_answer, upstream_token, TokenAnswer, IDP_TIMEOUT_MS,
};
use super::CALLBACK_PATH;
use crate::auth::{
    valid_provider_group, EMAIL_ALIAS, GITHUB_GROUP, LOGIN_ALIAS, OIDC_GROUP, STABLE_SEPARATOR,
};
use crate::hex::hex;
use crate::ports::{Ports, UpstreamHttp, UpstreamRequest};
use crate::upstream::path::form_urlencode;
use crate::upstream::vendor::{GITHUB_API_VERSION, USER_AGENT};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

/// The most groups kept from a sign-in.
const MAX_GROUPS: usize = 100;
/// GitHub scopes: the profile, and organisation membership for groups and the allow-list.
const GITHUB_SCOPES: &str = "read:user read:org";

/// The principal name of the GitHub user with numeric `id`: logins are renamed and
/// re-registered, the id never changes hands.
pub(crate) fn github_principal(id: u64) -> String {
    format!("github{STABLE_SEPARATOR}{id}")
}

/// The principal name of OpenID Connect subject `subject` at the provider answering at
/// `issuer`: 128 bits of SHA-256 over both, so it has a fixed length whatever the subject.
pub(crate) fn oidc_principal(issuer: &str, subject: &str) -> String {
    let mut hash = Sha256::new();
    hash.update((issuer.len() as u64).to_be_bytes());
    hash.update(issuer.as_bytes());
    hash.update(subject.as_bytes());
    format!("oidc{STABLE_SEPARATOR}{}", hex(&hash.finalize()[..16]))
}

/// Where the person signs in: the provider's authorization URL for `state`, with PKCE.
pub(crate) fn authorization_url(settings: &OAuthSettings, state: &str, challenge: &str) -> String {
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

/// Reads `url` with the person's `token`; a 401 means the provider no longer accepts the token
/// (revoked, or the person removed), which is `access_denied`, not an outage.
async fn read_as_person(
    http: &dyn UpstreamHttp,
    url: String,
    token: &str,
) -> Result<Json, OAuthError> {
    send_status(http, get(url, token))
        .await
        .map_err(|(status, e)| match status {
            Some(401) => OAuthError::access_denied(
                "the identity provider no longer accepts the person's token (HTTP 401)",
            ),
            _ => e,
        })
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
    http: &dyn UpstreamHttp,
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
        http,
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

/// Renews a person's expiring upstream token with its refresh token, at the token endpoint it
/// came from (GitHub App user tokens last eight hours, Atlassian's one hour; both rotate their
/// refresh tokens, so the answer's replaces the old one, kept only when the answer has none).
pub(crate) async fn refresh(
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
        (atlassian::VENDOR, Some(app)) => atlassian::token_request(app, &grant, ports.http).await?,
        (atlassian::VENDOR, None) => {
            return Err(OAuthError::invalid_grant(
                "Atlassian sign-in is no longer configured",
            ))
        }
        _ => token_request(settings, &grant, ports.http).await?,
    };
    let mut renewed = upstream_token(
        &token.vendor,
        access,
        answer,
        token.site.clone(),
        ports.clock,
    );
    if renewed.refresh.is_none() {
        renewed.refresh = token.refresh.clone();
    }
    Ok(renewed)
}

/// The vendor id under which an OpenID Connect provider's own token is kept in a grant: it acts
/// for no tool, and serves only to read the person's claims again at each refresh.
pub(crate) const OIDC_VENDOR: &str = "oidc";

/// Exchanges the provider's `code` and reads who signed in ([`identify`]). The admission (the
/// allow-list and the rest) is [`super::identity::admit`]'s.
pub(crate) async fn sign_in(
    settings: &OAuthSettings,
    code: &str,
    verifier: &str,
    ports: Ports<'_>,
) -> Result<(SignedIn, Option<String>), OAuthError> {
    let token = exchange(settings, code, verifier, ports).await?;
    identify(settings, token, ports.http).await
}

/// Exchanges the provider's `code` (with the PKCE `verifier`) for the person's token at the
/// provider; the provider's refusal is `access_denied`.
pub(crate) async fn exchange(
    settings: &OAuthSettings,
    code: &str,
    verifier: &str,
    ports: Ports<'_>,
) -> Result<UpstreamToken, OAuthError> {
    let redirect = format!("{}{CALLBACK_PATH}", settings.issuer);
    let grant = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect.as_str()),
        ("code_verifier", verifier),
    ];
    let (access, answer) =
        token_request(settings, &grant, ports.http)
            .await
            .map_err(|e| match e.code {
                "access_denied" => OAuthError::access_denied(format!(
                    "the identity provider refused the sign-in: {}",
                    e.description
                )),
                _ => e,
            })?;
    let vendor = match settings.provider {
        Provider::GitHub { .. } => "github",
        Provider::Oidc(_) => OIDC_VENDOR,
    };
    Ok(upstream_token(vendor, access, answer, None, ports.clock))
}

/// Who holds the provider's `token`, read from the provider: the stable principal name, the
/// verified attributes (aliases and namespaced groups, as [`SignedIn::groups`] holds them), with
/// `token` as the person's first upstream token; and the verified e-mail address, if any. A
/// sign-in and every refresh read the person this way. A token the provider no longer accepts
/// is `access_denied`.
pub(crate) async fn identify(
    settings: &OAuthSettings,
    token: UpstreamToken,
    http: &dyn UpstreamHttp,
) -> Result<(SignedIn, Option<String>), OAuthError> {
    let access = token.access.expose().to_owned();
    let groups = |list: Option<&Vec<Json>>, field: Option<&str>, namespace: &str| -> Vec<String> {
        list.map(|list| {
            list.iter()
                .filter_map(|g| match field {
                    Some(f) => g[f].as_str(),
                    None => g.as_str(),
                })
                .map(|g| format!("{namespace}{g}"))
                .filter(|g| valid_provider_group(g))
                .take(MAX_GROUPS)
                .collect()
        })
        .unwrap_or_default()
    };
    match &settings.provider {
        Provider::GitHub { api_url, .. } => {
            let user = read_as_person(http, format!("{api_url}/user"), &access).await?;
            let id = user["id"]
                .as_u64()
                .ok_or_else(|| idp_error("no numeric id in /user"))?;
            let login = user["login"]
                .as_str()
                .ok_or_else(|| idp_error("no login in /user"))?;
            let orgs =
                read_as_person(http, format!("{api_url}/user/orgs?per_page=100"), &access).await?;
            let mut attributes = vec![format!("{LOGIN_ALIAS}{login}")];
            attributes.extend(groups(orgs.as_array(), Some("login"), GITHUB_GROUP));
            Ok((
                SignedIn {
                    principal: github_principal(id),
                    groups: attributes,
                    upstream: vec![token],
                },
                None,
            ))
        }
        Provider::Oidc(oidc) => {
            let claims = read_as_person(http, oidc.userinfo_url.clone(), &access).await?;
            let email = claims["email"]
                .as_str()
                .filter(|_| claims["email_verified"].as_bool() == Some(true))
                .map(str::to_ascii_lowercase);
            let principal = match oidc.principal_claim {
                PrincipalClaim::Subject => {
                    let subject = claims["sub"].as_str().filter(|s| !s.is_empty());
                    let subject = subject.ok_or_else(|| {
                        OAuthError::access_denied("the identity provider gave no sub claim")
                    })?;
                    oidc_principal(&oidc.userinfo_url, subject)
                }
                PrincipalClaim::VerifiedEmail => email.clone().ok_or_else(|| {
                    OAuthError::access_denied(
                        "the identity provider gave no verified e-mail address \
                         (email with email_verified true), which names you on this server",
                    )
                })?,
            };
            let mut attributes: Vec<String> =
                email.iter().map(|e| format!("{EMAIL_ALIAS}{e}")).collect();
            let claimed = oidc
                .groups_claim
                .as_deref()
                .and_then(|c| claims[c].as_array());
            attributes.extend(groups(claimed, None, OIDC_GROUP));
            Ok((
                SignedIn {
                    principal,
                    groups: attributes,
                    upstream: vec![token],
                },
                email,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::valid_signed_in_name;

    #[test]
    fn stable_names_are_valid_and_never_static_names() {
        let gh = github_principal(583_231);
        assert_eq!(gh, "github~583231");
        let oidc = oidc_principal("https://idp.example/userinfo", "248289761001");
        assert_eq!(oidc.len(), "oidc~".len() + 32);
        for name in [&gh, &oidc] {
            assert!(valid_signed_in_name(name), "{name}");
            assert!(crate::auth::TokenTable::parse(&format!(
                "{{\"{name}\": \"tok-aaaaaaaaaaaaaaaa\"}}"
            ))
            .is_err());
        }
        // The issuer and the subject are kept apart: ("ab", "c") is not ("a", "bc").
        assert_ne!(oidc_principal("ab", "c"), oidc_principal("a", "bc"));
        assert_ne!(
            oidc_principal("https://a.example/u", "1"),
            oidc_principal("https://b.example/u", "1")
        );
    }
}
