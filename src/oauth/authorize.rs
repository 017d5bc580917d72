//! The browser half of sign-in: the authorization request (`GET /oauth/authorize`), the consent
//! page with its anti-forgery check (`POST /oauth/authorize`), the hand-off to the identity
//! provider, and its return (`GET /oauth/callback`), which ends with a code sent to the client.

use super::client::{self, Client};
use super::error::OAuthError;
use super::form::{html_escape, Params};
use super::settings::{AtlassianApp, OAuthSettings};
use super::store::{pkce_challenge, NewCode, SignedIn, TokenStore, CODE_TTL_SECONDS};
use super::url::{redirect_matches, Url};
use super::{atlassian, idp, ATLASSIAN_CALLBACK_PATH, AUTHORIZE_PATH, SCOPE};
use crate::auth::constant_time_eq;
use crate::http::{HttpRequest, HttpResponse};
use crate::ports::{CacheEntry, Level, Ports};
use crate::upstream::path::form_urlencode;
use serde::{Deserialize, Serialize};

/// The cookie that carries the consent page's anti-forgery token.
const CONSENT_COOKIE: &str = "mcp_oauth_consent";

/// An authorization request waiting for consent and then for the identity provider.
#[derive(Clone, Serialize, Deserialize)]
struct Pending {
    client_id: String,
    client_name: String,
    redirect_uri: String,
    state: Option<String>,
    code_challenge: String,
    resource: String,
    csrf: String,
    /// The PKCE verifier toward the identity provider, set once consent is given.
    #[serde(default)]
    idp_verifier: Option<String>,
}

fn pending_key(id: &str) -> String {
    format!("authreq:{id}")
}

/// A page for errors that cannot go back to the client (no valid redirect URI yet).
fn error_page(status: u16, message: &str) -> HttpResponse {
    page(
        status,
        &format!("<h1>Sign-in failed</h1><p>{}</p>", html_escape(message)),
    )
}

fn page(status: u16, body: &str) -> HttpResponse {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Sign in</title>\
         <style>body{{font-family:sans-serif;max-width:36em;margin:3em auto}}</style></head>\
         <body>{body}</body></html>"
    );
    HttpResponse::new(status, "text/html; charset=utf-8", html)
        .with_header("Cache-Control", "no-store")
        .with_header(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        )
        .with_header("X-Frame-Options", "DENY")
        .with_header("Referrer-Policy", "no-referrer")
}

/// A redirect back to the client with `params`, `state` and `iss` (RFC 9207).
fn back_to_client(
    settings: &OAuthSettings,
    redirect_uri: &str,
    state: Option<&str>,
    mut params: Vec<(String, String)>,
) -> HttpResponse {
    if let Some(state) = state {
        params.push(("state".into(), state.into()));
    }
    params.push(("iss".into(), settings.issuer.clone()));
    let sep = if redirect_uri.contains('?') { '&' } else { '?' };
    let location = format!("{redirect_uri}{sep}{}", form_urlencode(&params));
    HttpResponse::empty(302)
        .with_header("Location", &location)
        .with_header("Cache-Control", "no-store")
}

fn error_to_client(
    settings: &OAuthSettings,
    redirect_uri: &str,
    state: Option<&str>,
    error: &OAuthError,
) -> HttpResponse {
    let params = vec![
        ("error".to_owned(), error.code.to_owned()),
        ("error_description".to_owned(), error.description.clone()),
    ];
    back_to_client(settings, redirect_uri, state, params)
}

/// `GET /oauth/authorize`: checks the client and redirect URI (errors shown here), then the
/// rest (errors sent back to the client), and shows the consent page.
pub async fn start(
    settings: &OAuthSettings,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> HttpResponse {
    let params = match Params::parse(&request.query) {
        Ok(p) => p,
        Err(e) => return error_page(400, &e.description),
    };
    let (client, redirect_uri) = match client_and_redirect(settings, &params, ports).await {
        Ok(found) => found,
        Err(e) => return error_page(400, &e.description),
    };
    let state = params.get("state").ok().flatten().map(str::to_owned);
    match pending_from(settings, &params, &client, &redirect_uri, ports) {
        Ok(pending) => consent(settings, pending, ports).await,
        Err(e) => error_to_client(settings, &redirect_uri, state.as_deref(), &e),
    }
}

async fn client_and_redirect(
    settings: &OAuthSettings,
    params: &Params,
    ports: Ports<'_>,
) -> Result<(Client, String), OAuthError> {
    let client_id = params.required("client_id")?;
    let client = client::resolve(settings, client_id, ports).await?;
    let redirect = params.required("redirect_uri")?;
    if !client
        .redirect_uris
        .iter()
        .any(|r| redirect_matches(r, redirect))
    {
        return Err(OAuthError::invalid_request(
            "redirect_uri is not one of the client's registered redirect URIs",
        ));
    }
    Ok((client, redirect.to_owned()))
}

fn pending_from(
    settings: &OAuthSettings,
    params: &Params,
    client: &Client,
    redirect_uri: &str,
    ports: Ports<'_>,
) -> Result<Pending, OAuthError> {
    if params.required("response_type")? != "code" {
        return Err(OAuthError::unsupported_response_type(
            "only response_type=code is supported",
        ));
    }
    let challenge = params.required("code_challenge")?;
    if params.get("code_challenge_method")? != Some("S256") {
        return Err(OAuthError::invalid_request(
            "code_challenge_method must be S256",
        ));
    }
    if challenge.len() != 43
        || !challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(OAuthError::invalid_request(
            "code_challenge must be an S256 challenge (43 base64url characters)",
        ));
    }
    if let Some(resource) = params.get("resource")? {
        if resource.trim_end_matches('/') != settings.resource {
            return Err(OAuthError::invalid_target(format!(
                "resource must be {}",
                settings.resource
            )));
        }
    }
    let store = TokenStore::new(settings, ports);
    Ok(Pending {
        client_id: client.client_id.clone(),
        client_name: client.client_name.clone(),
        redirect_uri: redirect_uri.to_owned(),
        state: params.get("state")?.map(str::to_owned),
        code_challenge: challenge.to_owned(),
        resource: settings.resource.clone(),
        csrf: store.mint(""),
        idp_verifier: None,
    })
}

async fn save(ports: Ports<'_>, id: &str, pending: &Pending) -> Result<(), String> {
    put_json(ports, &pending_key(id), pending).await
}

/// Stores `value` as JSON under `key` for the lifetime of an authorization code: the waiting
/// sign-in between two redirects.
async fn put_json(ports: Ports<'_>, key: &str, value: &impl Serialize) -> Result<(), String> {
    let value = serde_json::to_vec(value).map_err(|e| e.to_string())?;
    ports
        .oauth
        .put(
            key,
            CacheEntry {
                value,
                metadata: String::new(),
            },
            CODE_TTL_SECONDS,
        )
        .await
        .map_err(|e| e.to_string())
}

async fn consent(settings: &OAuthSettings, pending: Pending, ports: Ports<'_>) -> HttpResponse {
    let id = TokenStore::new(settings, ports).mint("");
    if save(ports, &id, &pending).await.is_err() {
        return error_page(503, "The sign-in store is unavailable; try again shortly.");
    }
    let host = Url::parse(&pending.redirect_uri)
        .map(|u| if u.host.is_empty() { u.scheme } else { u.host })
        .unwrap_or_default();
    let body = format!(
        "<h1>Allow {name}?</h1>\
         <p><b>{name}</b> wants to use the MCP server at {issuer} as you. After you sign in \
         with {provider}, it will be sent back to <b>{host}</b> and will be able to list and \
         call this server's tools (CI and project data) with your identity, until you revoke \
         it.</p>\
         <form method=\"post\" action=\"{AUTHORIZE_PATH}\">\
         <input type=\"hidden\" name=\"request\" value=\"{id}\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <button name=\"action\" value=\"approve\">Allow and sign in</button> \
         <button name=\"action\" value=\"deny\">Deny</button></form>",
        name = html_escape(&pending.client_name),
        issuer = html_escape(&settings.issuer),
        provider = match settings.atlassian {
            Some(_) => format!(
                "{} (and then Atlassian, for Jira and Confluence)",
                settings.provider.label()
            ),
            None => settings.provider.label().to_owned(),
        },
        host = html_escape(&host),
        csrf = pending.csrf,
    );
    let secure = if settings.issuer.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    page(200, &body).with_header(
        "Set-Cookie",
        &format!(
            "{CONSENT_COOKIE}={}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age={CODE_TTL_SECONDS}{secure}",
            pending.csrf
        ),
    )
}

fn cookie<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("Cookie"))
        .flat_map(|(_, v)| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

async fn load(ports: Ports<'_>, id: &str) -> Option<Pending> {
    get_json(ports, &pending_key(id)).await
}

/// What [`put_json`] stored under `key`, if it is still there and reads as a `T`.
async fn get_json<T: serde::de::DeserializeOwned>(ports: Ports<'_>, key: &str) -> Option<T> {
    let entry = ports.oauth.get(key).await.ok()??;
    serde_json::from_slice(&entry.value).ok()
}

/// Whether `request` comes from the browser that was shown `pending`'s consent page: it holds
/// the page's anti-forgery cookie.
fn same_browser(request: &HttpRequest, pending: &Pending) -> bool {
    cookie(request, CONSENT_COOKIE)
        .is_some_and(|c| constant_time_eq(pending.csrf.as_bytes(), c.as_bytes()))
}

/// `POST /oauth/authorize`: the consent form. The anti-forgery token must be in the form and in
/// the cookie set with the page, and match the pending request; otherwise nothing happens.
pub async fn decide(
    settings: &OAuthSettings,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> HttpResponse {
    let body = String::from_utf8_lossy(&request.body);
    let params = match Params::parse(&body) {
        Ok(p) => p,
        Err(e) => return error_page(400, &e.description),
    };
    let (Ok(Some(id)), Ok(Some(csrf))) = (params.get("request"), params.get("csrf")) else {
        return error_page(400, "The consent form is incomplete.");
    };
    let Some(mut pending) = load(ports, id).await else {
        return error_page(
            400,
            "This sign-in request has expired or was already used; start again from your client.",
        );
    };
    if !same_browser(request, &pending)
        || !constant_time_eq(pending.csrf.as_bytes(), csrf.as_bytes())
    {
        return error_page(
            403,
            "The consent form failed its anti-forgery check; nothing was authorized.",
        );
    }
    if params.get("action").ok().flatten() != Some("approve") {
        let _ = ports.oauth.delete(&pending_key(id)).await;
        let denied = OAuthError::access_denied("the person denied the request");
        return error_to_client(
            settings,
            &pending.redirect_uri,
            pending.state.as_deref(),
            &denied,
        );
    }
    let verifier = TokenStore::new(settings, ports).mint("");
    let challenge = pkce_challenge(&verifier);
    pending.idp_verifier = Some(verifier);
    if save(ports, id, &pending).await.is_err() {
        return error_page(503, "The sign-in store is unavailable; try again shortly.");
    }
    HttpResponse::empty(302)
        .with_header(
            "Location",
            &idp::authorization_url(settings, id, &challenge),
        )
        .with_header("Cache-Control", "no-store")
}

/// `GET /oauth/callback`: the identity provider's answer. The pending request is used once;
/// the person must pass the allow-list, and may not take a static principal's name. With an
/// Atlassian app configured, the person then goes on to Atlassian's consent before the code is
/// issued.
pub async fn callback(
    settings: &OAuthSettings,
    static_principal: &dyn Fn(&str) -> bool,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> HttpResponse {
    let params = match Params::parse(&request.query) {
        Ok(p) => p,
        Err(e) => return error_page(400, &e.description),
    };
    let Ok(Some(id)) = params.get("state") else {
        return error_page(400, "The identity provider's answer has no state.");
    };
    let Some(pending) = load(ports, id).await else {
        return error_page(
            400,
            "This sign-in request has expired or was already used; start again from your client.",
        );
    };
    let Some(verifier) = pending.idp_verifier.clone() else {
        return error_page(
            400,
            "This sign-in request was never approved on the consent page.",
        );
    };
    let _ = ports.oauth.delete(&pending_key(id)).await;
    let back = |e: OAuthError| {
        error_to_client(
            settings,
            &pending.redirect_uri,
            pending.state.as_deref(),
            &e,
        )
    };
    let Ok(Some(code)) = params.get("code") else {
        return back(OAuthError::access_denied(
            "the sign-in at the identity provider did not complete",
        ));
    };
    let (signed_in, email) = match idp::sign_in(settings, code, &verifier, ports).await {
        Ok(found) => found,
        Err(e) => return back(e),
    };
    if !crate::auth::valid_signed_in_name(&signed_in.principal) {
        return back(OAuthError::access_denied(
            "the identity provider's name for you is not a usable principal name",
        ));
    }
    if static_principal(&signed_in.principal) {
        return back(OAuthError::access_denied(
            "that name belongs to a principal with a static token; it cannot sign in",
        ));
    }
    if !settings
        .allow
        .admits(&signed_in.principal, &signed_in.groups, email.as_deref())
    {
        return back(OAuthError::access_denied(
            "you are not allowed to sign in to this server",
        ));
    }
    if let Some(app) = &settings.atlassian {
        return match to_atlassian(settings, app, pending.clone(), signed_in, ports).await {
            Ok(redirect) => redirect,
            Err(e) => back(e),
        };
    }
    issue_code(settings, &pending, signed_in, ports).await
}

/// The end of a sign-in: the authorization code for `signed_in`, sent back to the client.
async fn issue_code(
    settings: &OAuthSettings,
    pending: &Pending,
    signed_in: SignedIn,
    ports: Ports<'_>,
) -> HttpResponse {
    let code = TokenStore::new(settings, ports)
        .issue_code(NewCode {
            client_id: pending.client_id.clone(),
            redirect_uri: pending.redirect_uri.clone(),
            code_challenge: pending.code_challenge.clone(),
            resource: pending.resource.clone(),
            scope: SCOPE.to_owned(),
            signed_in,
        })
        .await;
    let params = match code {
        Ok(code) => vec![("code".into(), code)],
        Err(e) => {
            return error_to_client(
                settings,
                &pending.redirect_uri,
                pending.state.as_deref(),
                &e,
            )
        }
    };
    back_to_client(
        settings,
        &pending.redirect_uri,
        pending.state.as_deref(),
        params,
    )
}

/// A sign-in that passed the identity provider and waits for Atlassian's consent: the pending
/// authorization, and who signed in with their upstream tokens sealed as in a grant (KV never
/// holds them in clear).
#[derive(Serialize, Deserialize)]
struct AtlassianLeg {
    pending: Pending,
    principal: String,
    groups: Vec<String>,
    sealed: Option<String>,
}

fn atlassian_key(state: &str) -> String {
    format!("atlassian:{state}")
}

/// Sends the signed-in person on to Atlassian's consent, under a state of its own that keys the
/// waiting sign-in (used once, and only by the browser holding the consent cookie).
async fn to_atlassian(
    settings: &OAuthSettings,
    app: &AtlassianApp,
    pending: Pending,
    signed_in: SignedIn,
    ports: Ports<'_>,
) -> Result<HttpResponse, OAuthError> {
    let store = TokenStore::new(settings, ports);
    let sealed = store
        .seal(
            &pending.client_id,
            &signed_in.principal,
            &signed_in.upstream,
        )
        .await?;
    let state = store.mint("");
    let leg = AtlassianLeg {
        pending,
        principal: signed_in.principal,
        groups: signed_in.groups,
        sealed,
    };
    put_json(ports, &atlassian_key(&state), &leg)
        .await
        .map_err(|e| OAuthError::server_error(format!("the sign-in store is unavailable ({e})")))?;
    let redirect = atlassian_redirect(settings);
    Ok(HttpResponse::empty(302)
        .with_header(
            "Location",
            &atlassian::authorization_url(app, &redirect, &state),
        )
        .with_header("Cache-Control", "no-store"))
}

/// `GET /oauth/atlassian/callback`: Atlassian's answer. The waiting sign-in is used once, by the
/// browser that holds its consent cookie. Consent given: the code is exchanged and the token,
/// for the configured site, joins the person's upstream tokens. Consent declined: the sign-in
/// completes without an Atlassian identity. An exchange that fails, or a token that cannot
/// reach the site, ends the sign-in with the reason sent back to the client.
pub async fn atlassian_callback(
    settings: &OAuthSettings,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> HttpResponse {
    let Some(app) = &settings.atlassian else {
        return error_page(404, "Atlassian sign-in is not configured on this server.");
    };
    let params = match Params::parse(&request.query) {
        Ok(p) => p,
        Err(e) => return error_page(400, &e.description),
    };
    let Ok(Some(state)) = params.get("state") else {
        return error_page(400, "Atlassian's answer has no state.");
    };
    let key = atlassian_key(state);
    let Some(leg) = get_json::<AtlassianLeg>(ports, &key).await else {
        return error_page(
            400,
            "This sign-in request has expired or was already used; start again from your client.",
        );
    };
    if !same_browser(request, &leg.pending) {
        return error_page(
            403,
            "This answer from Atlassian does not belong to a sign-in started in this browser; \
             nothing was authorized.",
        );
    }
    let _ = ports.oauth.delete(&key).await;
    let pending = &leg.pending;
    let back = |e: OAuthError| {
        error_to_client(
            settings,
            &pending.redirect_uri,
            pending.state.as_deref(),
            &e,
        )
    };
    let store = TokenStore::new(settings, ports);
    let mut upstream = match store
        .unseal(&pending.client_id, &leg.principal, leg.sealed.as_deref())
        .await
    {
        Ok(tokens) => tokens,
        Err(e) => return back(OAuthError::server_error(e)),
    };
    match params.get("code") {
        Ok(Some(code)) => {
            let redirect = atlassian_redirect(settings);
            match atlassian::exchange(app, &redirect, code, ports).await {
                Ok(token) => upstream.push(token),
                Err(e) => return back(e),
            }
        }
        _ => ports.log.event(
            Level::Info,
            "oauth_atlassian_declined",
            &[("principal", (&leg.principal).into())],
        ),
    }
    let signed_in = SignedIn {
        principal: leg.principal.clone(),
        groups: leg.groups.clone(),
        upstream,
    };
    issue_code(settings, pending, signed_in, ports).await
}

/// Where Atlassian sends the person back: the consent request and the code exchange must name
/// exactly the same URL.
fn atlassian_redirect(settings: &OAuthSettings) -> String {
    format!("{}{ATLASSIAN_CALLBACK_PATH}", settings.issuer)
}
