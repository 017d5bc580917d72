//! Atlassian's three-legged OAuth 2.0: the consent URL the person is sent to after signing in,
//! the code exchange and renewal at Atlassian's token endpoint (JSON bodies; `offline_access`
//! refresh tokens rotate on every use), and the choice of the configured site among the ones
//! the person's token reaches (`accessible-resources`), whose cloud id places Jira and
//! Confluence calls on the API gateway.

use super::error::OAuthError;
use super::settings::AtlassianApp;
use super::store::UpstreamToken;
use super::token_endpoint::{send, token_answer, upstream_token, TokenAnswer, IDP_TIMEOUT_MS};
use super::url::parse_setting;
use crate::ports::{Ports, UpstreamHttp, UpstreamRequest};
use crate::upstream::path::form_urlencode;
use crate::upstream::vendor::{atlassian_gateway_url, USER_AGENT};
use crate::upstream::Vendor;
use serde_json::{json, Value as Json};

/// The vendor id the person's Atlassian token is sealed under; it acts for Jira and Confluence.
pub(crate) const VENDOR: &str = "atlassian";

/// Where the person consents: Atlassian's authorization URL for `state`, returning to
/// `redirect_uri`.
pub(crate) fn authorization_url(app: &AtlassianApp, redirect_uri: &str, state: &str) -> String {
    let params = [
        ("audience", "api.atlassian.com"),
        ("client_id", app.client_id.as_str()),
        ("scope", app.scopes.as_str()),
        ("redirect_uri", redirect_uri),
        ("state", state),
        ("response_type", "code"),
        ("prompt", "consent"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    format!("{}/authorize?{}", app.auth_url, form_urlencode(&params))
}

/// A request to Atlassian with the JSON headers, and `bearer` as the credential if given.
fn request(url: String, bearer: Option<&str>, body: Option<Json>) -> UpstreamRequest {
    let mut headers: Vec<(String, String)> = bearer
        .map(|t| ("Authorization".to_owned(), format!("Bearer {t}")))
        .into_iter()
        .collect();
    if body.is_some() {
        headers.push(("Content-Type".into(), "application/json".into()));
    }
    headers.push(("Accept".into(), "application/json".into()));
    headers.push(("User-Agent".into(), USER_AGENT.into()));
    UpstreamRequest {
        method: if body.is_some() { "POST" } else { "GET" }.into(),
        url,
        headers,
        body: body.map(|b| b.to_string().into_bytes()),
        timeout_ms: IDP_TIMEOUT_MS,
    }
}

/// One request to Atlassian's token endpoint with the app's credentials added to `grant`.
pub(super) async fn token_request(
    app: &AtlassianApp,
    grant: &[(&str, &str)],
    http: &dyn UpstreamHttp,
) -> Result<(String, TokenAnswer), OAuthError> {
    let mut body: serde_json::Map<String, Json> = grant
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    body.insert("client_id".into(), json!(app.client_id));
    body.insert("client_secret".into(), json!(app.client_secret.expose()));
    let url = format!("{}/oauth/token", app.auth_url);
    let answer = send(http, request(url, None, Some(Json::Object(body)))).await?;
    token_answer(answer, "Atlassian")
}

/// Exchanges Atlassian's `code` for the person's token and finds the configured site's cloud id
/// among the sites it reaches; a token that cannot reach the site is refused.
pub(crate) async fn exchange(
    app: &AtlassianApp,
    redirect_uri: &str,
    code: &str,
    ports: Ports<'_>,
) -> Result<UpstreamToken, OAuthError> {
    let grant = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri),
    ];
    let (access, answer) = token_request(app, &grant, ports.http).await?;
    let url = format!("{}/oauth/token/accessible-resources", app.api_url);
    let resources = send(ports.http, request(url, Some(&access), None)).await?;
    let site = cloud_id_for(&resources, &app.site_url)?;
    Ok(upstream_token(
        VENDOR,
        access,
        answer,
        Some(site),
        ports.clock,
    ))
}

/// The cloud id of the entry of `resources` (an `accessible-resources` answer) whose URL is the
/// configured site's origin.
pub(crate) fn cloud_id_for(resources: &Json, site_url: &str) -> Result<String, OAuthError> {
    let origin = |text: &str| {
        parse_setting(text)
            .ok()
            .map(|u| u.origin().ascii_serialization())
    };
    let wanted = origin(site_url);
    resources
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| wanted.is_some() && r["url"].as_str().and_then(origin) == wanted)
        .and_then(|r| r["id"].as_str())
        .filter(|id| valid_cloud_id(id))
        .map(str::to_owned)
        .ok_or_else(|| {
            OAuthError::access_denied(format!(
                "your Atlassian account did not grant access to {site_url}, the site this \
                 server uses; sign in again and choose that site on Atlassian's consent page"
            ))
        })
}

/// A cloud id becomes a URL path segment: letters, digits and `-` only.
fn valid_cloud_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The API root of `vendor` (Jira or Confluence) for the person's site on the app's gateway.
pub(crate) fn gateway_url(app: &AtlassianApp, vendor: Vendor, cloud_id: &str) -> String {
    atlassian_gateway_url(&app.api_url, vendor, cloud_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::form::Params;
    use crate::ports::fake::{FakeEnv, ScriptedHttp};
    use crate::ports::{TransportError, UpstreamResponse};
    use crate::upstream::Secret;
    use futures::executor::block_on;

    const CLOUD: &str = "11111111-2222-3333-4444-555555555555";
    const REDIRECT: &str = "https://mcp.example.com/oauth/atlassian/callback";

    fn app() -> AtlassianApp {
        AtlassianApp {
            client_id: "atl-client".into(),
            client_secret: Secret::new("atl-secret"),
            scopes: "read:jira-work offline_access".into(),
            auth_url: "https://auth.atlassian.com".into(),
            api_url: "https://api.atlassian.com".into(),
            site_url: "https://acme.atlassian.net".into(),
        }
    }

    fn reply(status: u16, body: Json) -> Result<UpstreamResponse, TransportError> {
        Ok(UpstreamResponse {
            status,
            status_text: String::new(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        })
    }

    /// Atlassian's token endpoint and accessible-resources, the latter listing `sites`.
    fn atlassian(sites: Json) -> FakeEnv {
        FakeEnv::with_http(ScriptedHttp::new(move |r| {
            if r.url.ends_with("/oauth/token") {
                let body: Json = serde_json::from_slice(r.body.as_deref().unwrap()).unwrap();
                if body["code"] == "bad" || body["refresh_token"] == "revoked" {
                    return reply(403, json!({"error": "invalid_grant"}));
                }
                reply(
                    200,
                    json!({"access_token": "atl-access", "expires_in": 3600,
                           "refresh_token": "atl-rotated", "token_type": "Bearer"}),
                )
            } else {
                reply(200, sites.clone())
            }
        }))
    }

    fn sites() -> Json {
        json!([
            {"id": "other-cloud", "url": "https://other.atlassian.net", "name": "other"},
            {"id": CLOUD, "url": "https://ACME.atlassian.net/", "name": "acme"}
        ])
    }

    #[test]
    fn the_consent_url_asks_for_the_gateway_audience_and_the_scopes() {
        let url = authorization_url(&app(), REDIRECT, "st-1");
        let (base, query) = url.split_once('?').unwrap();
        assert_eq!(base, "https://auth.atlassian.com/authorize");
        let params = Params::parse(query).unwrap();
        for (k, v) in [
            ("audience", "api.atlassian.com"),
            ("client_id", "atl-client"),
            ("scope", "read:jira-work offline_access"),
            ("redirect_uri", REDIRECT),
            ("state", "st-1"),
            ("response_type", "code"),
            ("prompt", "consent"),
        ] {
            assert_eq!(params.get(k).unwrap(), Some(v), "{k}");
        }
    }

    #[test]
    fn the_code_becomes_a_token_for_the_configured_sites_cloud_id() {
        let env = atlassian(sites());
        let token = block_on(exchange(&app(), REDIRECT, "good", env.ports())).unwrap();
        assert_eq!(token.vendor, VENDOR);
        assert_eq!(token.access.expose(), "atl-access");
        assert_eq!(token.refresh.as_ref().unwrap().expose(), "atl-rotated");
        assert_eq!(token.site.as_deref(), Some(CLOUD));
        let sent = env.http.sent();
        assert_eq!(sent[0].url, "https://auth.atlassian.com/oauth/token");
        let body: Json = serde_json::from_slice(sent[0].body.as_deref().unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"grant_type": "authorization_code", "code": "good", "redirect_uri": REDIRECT,
                   "client_id": "atl-client", "client_secret": "atl-secret"})
        );
        assert_eq!(
            sent[1].url,
            "https://api.atlassian.com/oauth/token/accessible-resources"
        );
        assert!(sent[1]
            .headers
            .contains(&("Authorization".into(), "Bearer atl-access".into())));
        assert_eq!(
            gateway_url(&app(), Vendor::Jira, CLOUD),
            format!("https://api.atlassian.com/ex/jira/{CLOUD}")
        );
    }

    #[test]
    fn a_token_that_cannot_reach_the_site_or_a_refused_code_is_refused() {
        let env = atlassian(json!([{"id": "x", "url": "https://other.atlassian.net"}]));
        let err = block_on(exchange(&app(), REDIRECT, "good", env.ports())).unwrap_err();
        assert_eq!(err.code, "access_denied");
        assert!(
            err.description.contains("https://acme.atlassian.net"),
            "{err:?}"
        );
        let err = block_on(exchange(
            &app(),
            REDIRECT,
            "bad",
            atlassian(sites()).ports(),
        ));
        assert!(err.is_err());
        // A cloud id that is not a plain path segment is not used.
        let odd = json!([{"id": "../x", "url": "https://acme.atlassian.net"}]);
        assert!(cloud_id_for(&odd, "https://acme.atlassian.net").is_err());
        assert!(cloud_id_for(&json!({}), "https://acme.atlassian.net").is_err());
    }
}
