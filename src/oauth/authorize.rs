//! The browser half of sign-in: the authorization request (`GET /oauth/authorize`), the consent
//! page (`POST /oauth/authorize`), the hand-off to the identity provider, and its return
//! (`GET /oauth/callback`), which ends with a code sent to the client.
//!
//! Nothing is stored for a caller before a person has signed in: the waiting request travels
//! sealed, in the consent form and then in the identity provider's `state`. Every step after
//! the consent page continues only in the browser that was shown it: the page sets a random
//! cookie, the sealed request carries the same value, and each later step compares the two
//! (docs/security.md).

use super::client::{self, Client};
use super::error::OAuthError;
use super::form::{html_escape, Params};
use super::sealed::{self, Purpose, Refused};
use super::settings::{AtlassianApp, OAuthSettings};
use super::store::{pkce_challenge, token_hash, NewCode, SignedIn, TokenStore, CODE_TTL_SECONDS};
use super::url::{redirect_matches, redirect_uri_problem};
use super::{atlassian, identity, idp, ATLASSIAN_CALLBACK_PATH, AUTHORIZE_PATH, SCOPE};
use crate::auth::constant_time_eq;
use crate::http::{HttpRequest, HttpResponse};
use crate::ports::{CacheEntry, CacheStore, Claim, ClaimStore, Level, Ports};
use crate::upstream::path::form_urlencode;
use serde::{Deserialize, Serialize};

/// The cookie that binds one sign-in to the browser that was shown its consent page, on an
/// https issuer. The `__Host-` prefix makes browsers refuse it unless it was set by this origin
/// over https with `Path=/` and no `Domain`, so neither a sibling subdomain nor a plain-http
/// response can plant one whose value an outsider knows.
const BROWSER_COOKIE_SECURE: &str = "__Host-mcp_oauth_browser";
/// The same cookie on a loopback http issuer (a local run), where `__Host-` cannot be set.
const BROWSER_COOKIE_LOCAL: &str = "mcp_oauth_browser";

/// The longest `state` a client may send; it travels inside the identity provider's `state`.
pub(crate) const MAX_CLIENT_STATE_LEN: usize = 512;

/// An authorization request waiting for consent and then for the identity provider; it only
/// ever exists sealed (in the consent form, then in the provider's `state`) or in the store
/// after the person signed in (waiting for Atlassian).
#[derive(Clone, Serialize, Deserialize)]
struct Pending {
    client_id: String,
    redirect_uri: String,
    state: Option<String>,
    code_challenge: String,
    resource: String,
    /// The value of the binding cookie set with the consent page.
    browser: String,
    /// The PKCE verifier toward the identity provider, set once consent is given.
    #[serde(default)]
    idp_verifier: Option<String>,
}

/// A page for errors that cannot go back to the client: the client, its redirect URI or the
/// request is not valid, or the request did not come from the browser that consented.
fn error_page(status: u16, message: &str) -> HttpResponse {
    page(
        status,
        &format!("<h1>Sign-in failed</h1><p>{}</p>", html_escape(message)),
    )
}

fn page(status: u16, body: &str) -> HttpResponse {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Sign in</title>\
         <style>body{{font-family:sans-serif;max-width:36em;margin:3em auto}}\
         code{{word-break:break-all}}</style></head><body>{body}</body></html>"
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

/// A redirect back to the client with `params`, `state` and `iss` (RFC 9207). It ends the
/// sign-in, so the browser's binding cookie is cleared. 303, since it also answers the consent
/// form's POST, which must not be reposted.
fn back_to_client(
    settings: &OAuthSettings,
    pending: &Pending,
    mut params: Vec<(String, String)>,
) -> HttpResponse {
    if let Some(state) = &pending.state {
        params.push(("state".into(), state.clone()));
    }
    params.push(("iss".into(), settings.issuer.clone()));
    let redirect_uri = &pending.redirect_uri;
    let sep = if redirect_uri.contains('?') { '&' } else { '?' };
    let location = format!("{redirect_uri}{sep}{}", form_urlencode(&params));
    HttpResponse::empty(303)
        .with_header("Location", &location)
        .with_header("Cache-Control", "no-store")
        .with_header("Set-Cookie", &browser_cookie(settings, "", 0))
}

fn error_to_client(
    settings: &OAuthSettings,
    pending: &Pending,
    error: &OAuthError,
) -> HttpResponse {
    let params = vec![
        ("error".to_owned(), error.code.to_owned()),
        ("error_description".to_owned(), error.description.clone()),
    ];
    back_to_client(settings, pending, params)
}

/// The binding cookie's name for `settings`' issuer.
fn browser_cookie_name(settings: &OAuthSettings) -> &'static str {
    if settings.issuer.starts_with("https://") {
        BROWSER_COOKIE_SECURE
    } else {
        BROWSER_COOKIE_LOCAL
    }
}

/// The `Set-Cookie` value of the binding cookie: `HttpOnly`, `SameSite=Lax` (sent on the
/// top-level redirects back from the providers, never on another site's POST), and on an https
/// issuer `__Host-` with `Secure` and `Path=/`; a local run's is scoped to the sign-in paths.
fn browser_cookie(settings: &OAuthSettings, value: &str, max_age: u64) -> String {
    let name = browser_cookie_name(settings);
    let scope = if name == BROWSER_COOKIE_SECURE {
        "Path=/; Secure"
    } else {
        "Path=/oauth"
    };
    format!("{name}={value}; {scope}; HttpOnly; SameSite=Lax; Max-Age={max_age}")
}

/// `GET /oauth/authorize`: checks the client, the redirect URI and the whole request, and shows
/// the consent page. Until all of them are valid, errors are shown here, never sent to a
/// redirect URI (RFC 6749 section 4.1.2.1), so the endpoint redirects nobody anywhere.
pub(crate) async fn start(
    settings: &OAuthSettings,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> HttpResponse {
    let checked = match Params::parse(&request.query) {
        Ok(params) => checked_request(settings, &params, ports).await,
        Err(e) => Err(e),
    };
    match checked {
        Ok((client, pending)) => consent(settings, &client, pending, ports).await,
        Err(e) => error_page(400, &e.description),
    }
}

/// The client and the pending request, when the client, its redirect URI and every parameter
/// of the request are valid.
async fn checked_request(
    settings: &OAuthSettings,
    params: &Params,
    ports: Ports<'_>,
) -> Result<(Client, Pending), OAuthError> {
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
    // A registration is checked when it is made, but it lives on (sealed in its client id, or
    // stored) after the rules tighten: the redirect is checked again against the rules in force.
    if let Some(problem) = redirect_uri_problem(redirect, &settings.redirect_schemes) {
        return Err(OAuthError::invalid_request(format!(
            "the client's redirect URI is no longer accepted ({problem}); register the client again"
        )));
    }
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
    if let Some(scope) = params.get("scope")? {
        if scope.split(' ').any(|s| !s.is_empty() && s != SCOPE) {
            return Err(OAuthError::invalid_request(format!(
                "scope may only be {SCOPE}"
            )));
        }
    }
    let state = params.get("state")?;
    if state.is_some_and(|s| s.len() > MAX_CLIENT_STATE_LEN) {
        return Err(OAuthError::invalid_request(format!(
            "state is longer than {MAX_CLIENT_STATE_LEN} bytes"
        )));
    }
    let pending = Pending {
        client_id: client.client_id.clone(),
        redirect_uri: redirect.to_owned(),
        state: state.map(str::to_owned),
        code_challenge: challenge.to_owned(),
        resource: settings.resource.clone(),
        browser: TokenStore::new(settings, ports).mint(""),
        idp_verifier: None,
    };
    Ok((client, pending))
}

/// Seals `pending` for `purpose` until the sign-in's deadline.
async fn seal_pending(
    settings: &OAuthSettings,
    ports: Ports<'_>,
    purpose: Purpose,
    pending: &Pending,
) -> Result<String, OAuthError> {
    let expires = ports.clock.now_ms() + CODE_TTL_SECONDS * 1000;
    sealed::seal(settings, ports.cipher, purpose, Some(expires), pending).await
}

/// Opens a sealed pending request and checks that `request` comes from the browser it is
/// bound to; the error is the page to show.
async fn open_pending(
    settings: &OAuthSettings,
    ports: Ports<'_>,
    purpose: Purpose,
    text: &str,
    request: &HttpRequest,
) -> Result<Pending, HttpResponse> {
    let pending: Pending =
        match sealed::open(settings, ports.cipher, ports.clock, purpose, text).await {
            Ok(pending) => pending,
            Err(Refused::Expired) => {
                return Err(error_page(
                    400,
                    "This sign-in request has expired; start again from your client.",
                ))
            }
            Err(Refused::Invalid) => {
                return Err(error_page(
                    400,
                    "This sign-in request is not valid; start again from your client.",
                ))
            }
        };
    if !same_browser(settings, request, &pending) {
        ports.log.event(
            Level::Warn,
            "oauth_browser_mismatch",
            &[("step", purpose.name().into())],
        );
        return Err(error_page(
            403,
            "This sign-in was not started in this browser, so it cannot continue here; nothing \
             was authorized. Start again from your client.",
        ));
    }
    Ok(pending)
}

async fn consent(
    settings: &OAuthSettings,
    client: &Client,
    pending: Pending,
    ports: Ports<'_>,
) -> HttpResponse {
    let sealed = match seal_pending(settings, ports, Purpose::Consent, &pending).await {
        Ok(sealed) => sealed,
        Err(e) => return error_page(500, &e.description),
    };
    let identified = match client::document_host(&client.client_id) {
        Some(host) => format!(
            "It is identified by a metadata document published at <b>{}</b>.",
            html_escape(&host)
        ),
        None => "It registered itself with this server; its name is its own claim.".to_owned(),
    };
    let body = format!(
        "<h1>Allow {name}?</h1>\
         <p><b>{name}</b> wants to use the MCP server at {issuer} as you. {identified}</p>\
         <p>After you sign in with {provider}, your authorization will be sent to \
         <code>{redirect}</code>{host}, which will then be able to list and call this server's \
         tools (CI and project data) with your identity, until you revoke it. Allow only if you \
         started this sign-in yourself and recognise that address.</p>\
         <form method=\"post\" action=\"{AUTHORIZE_PATH}\">\
         <input type=\"hidden\" name=\"request\" value=\"{sealed}\">\
         <button name=\"action\" value=\"approve\">Allow and sign in</button> \
         <button name=\"action\" value=\"deny\">Deny</button></form>",
        name = html_escape(&client.client_name),
        issuer = html_escape(&settings.issuer),
        provider = match settings.atlassian {
            Some(_) => format!(
                "{} (and then Atlassian, for Jira and Confluence)",
                settings.provider.label()
            ),
            None => settings.provider.label().to_owned(),
        },
        redirect = html_escape(&pending.redirect_uri),
        host = redirect_owner(&pending.redirect_uri),
    );
    page(200, &body).with_header(
        "Set-Cookie",
        &browser_cookie(settings, &pending.browser, CODE_TTL_SECONDS),
    )
}

/// Who receives a redirect, in words: the host of a web address as the browser reads it, or
/// the application that handles a private-use scheme.
fn redirect_owner(redirect_uri: &str) -> String {
    match url::Url::parse(redirect_uri) {
        Ok(url) if url.scheme() == "http" => " (a program on this computer)".to_owned(),
        Ok(url) if url.scheme() == "https" => format!(
            " (the site <b>{}</b>)",
            html_escape(url.host_str().unwrap_or_default())
        ),
        Ok(url) => format!(
            " (the application registered for <b>{}:</b> links on this device)",
            html_escape(url.scheme())
        ),
        Err(_) => String::new(),
    }
}

/// The value of the cookie `name`, when the request carries it exactly once: a second cookie of
/// the same name (one planted for a longer path or a parent domain is sent first) makes the
/// browser's own value ambiguous, so it counts as none.
fn cookie<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    let mut found = request
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("Cookie"))
        .flat_map(|(_, v)| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| v);
    let first = found.next();
    found.next().map_or(first, |_| None)
}

/// Whether `request` comes from the browser that was shown `pending`'s consent page: it holds
/// the cookie set with the page, once (compared in constant time).
fn same_browser(settings: &OAuthSettings, request: &HttpRequest, pending: &Pending) -> bool {
    cookie(request, browser_cookie_name(settings))
        .is_some_and(|c| constant_time_eq(pending.browser.as_bytes(), c.as_bytes()))
}

/// `POST /oauth/authorize`: the consent form. The sealed request must come back from the
/// browser it was shown to; otherwise nothing happens.
pub(crate) async fn decide(
    settings: &OAuthSettings,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> HttpResponse {
    let body = String::from_utf8_lossy(&request.body);
    let params = match Params::parse(&body) {
        Ok(p) => p,
        Err(e) => return error_page(400, &e.description),
    };
    let Ok(Some(sealed)) = params.get("request") else {
        return error_page(400, "The consent form is incomplete.");
    };
    let mut pending = match open_pending(settings, ports, Purpose::Consent, sealed, request).await {
        Ok(pending) => pending,
        Err(page) => return page,
    };
    if params.get("action").ok().flatten() != Some("approve") {
        let denied = OAuthError::access_denied("the person denied the request");
        return error_to_client(settings, &pending, &denied);
    }
    let verifier = TokenStore::new(settings, ports).mint("");
    let challenge = pkce_challenge(&verifier);
    pending.idp_verifier = Some(verifier);
    let state = match seal_pending(settings, ports, Purpose::ProviderState, &pending).await {
        Ok(state) => state,
        Err(e) => return error_page(500, &e.description),
    };
    // 303: the browser must go on with a GET and must not repost the form (RFC 9700 4.12).
    HttpResponse::empty(303)
        .with_header(
            "Location",
            &idp::authorization_url(settings, &state, &challenge),
        )
        .with_header("Cache-Control", "no-store")
}

/// `GET /oauth/callback`: the identity provider's answer, accepted only in the browser that
/// consented. The person must be admitted ([`identity::admit`]: the allow-list in force, and
/// no static principal's name). With an Atlassian app configured, the person then goes on to
/// Atlassian's consent before the code is issued.
pub(crate) async fn callback(
    settings: &OAuthSettings,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> HttpResponse {
    let params = match Params::parse(&request.query) {
        Ok(p) => p,
        Err(e) => return error_page(400, &e.description),
    };
    if let Some(used) = first_arrival(&params, "idp-code", ports.claims).await {
        return used;
    }
    let Ok(Some(state)) = params.get("state") else {
        return error_page(400, "The identity provider's answer has no state.");
    };
    let pending = match open_pending(settings, ports, Purpose::ProviderState, state, request).await
    {
        Ok(pending) => pending,
        Err(page) => {
            spend_refused_code(settings, state, &params, ports).await;
            return page;
        }
    };
    let Some(verifier) = pending.idp_verifier.as_deref() else {
        return error_page(400, "This sign-in request was never approved.");
    };
    let back = |e: OAuthError| error_to_client(settings, &pending, &e);
    let Ok(Some(code)) = params.get("code") else {
        return back(OAuthError::access_denied(
            "the sign-in at the identity provider did not complete",
        ));
    };
    let (signed_in, _) = match idp::sign_in(settings, code, verifier, ports).await {
        Ok(found) => found,
        Err(e) => return back(e),
    };
    if let Err(refused) = identity::admit(settings, &signed_in) {
        return back(refused);
    }
    if let Some(app) = &settings.atlassian {
        return match to_atlassian(settings, app, pending.clone(), signed_in, ports).await {
            Ok(redirect) => redirect,
            Err(e) => back(e),
        };
    }
    issue_code(settings, &pending, signed_in, ports).await
}

/// Spends the `code` of a provider's answer at this end the first time any callback brings it,
/// before its `state` is read, and `None` then; a later arrival gets the page to show instead.
/// A refused answer's address is easily asked for (and logged), and its `state` is the caller's
/// to rewrite: a victim sent through an attacker's sign-in with the state altered would be
/// refused without anything to spend the code with, and the attacker could then put back their
/// own state and finish their sign-in with the victim's code. The claim lasts as long as a
/// provider's code may (ten minutes) plus the margin; answers are rate-limited per address, so
/// what strangers can make it hold is bounded.
async fn first_arrival(
    params: &Params,
    kind: &str,
    claims: &dyn ClaimStore,
) -> Option<HttpResponse> {
    let Ok(Some(code)) = params.get("code") else {
        return None;
    };
    let key = format!("{kind}:{}", token_hash(code));
    let ttl = CODE_TTL_SECONDS + PROVIDER_CLAIM_MARGIN_SECONDS;
    match claims.claim(&key, "arrived", ttl).await {
        Ok(Claim::First) => None,
        Ok(Claim::Taken(_)) => Some(error_page(
            400,
            "This answer was already used; nothing was authorized. Start again from your client.",
        )),
        Err(e) => Some(error_page(
            503,
            &format!("The sign-in store is unavailable ({e}); start again from your client."),
        )),
    }
}

/// Spends the provider's code of a callback refused because it came from another browser. The
/// code was issued for whoever signed in at the provider, for the PKCE challenge sealed in the
/// state; left unspent, anyone who later opened the refused URL in the browser that started the
/// sign-in (the address of an error page is easily asked for, or logged) would finish that
/// sign-in there. Exchanging it at the provider, and dropping what comes back, spends it.
async fn spend_refused_code(
    settings: &OAuthSettings,
    state: &str,
    params: &Params,
    ports: Ports<'_>,
) {
    let Ok(Some(code)) = params.get("code") else {
        return;
    };
    let Ok(pending) = sealed::open::<Pending>(
        settings,
        ports.cipher,
        ports.clock,
        Purpose::ProviderState,
        state,
    )
    .await
    else {
        return;
    };
    if let Some(verifier) = pending.idp_verifier.as_deref() {
        let spent = idp::exchange(settings, code, verifier, ports).await.is_ok();
        ports.log.event(
            Level::Warn,
            "oauth_refused_code_spent",
            &[("exchanged", spent.into())],
        );
    }
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
        Err(e) => return error_to_client(settings, pending, &e),
    };
    back_to_client(settings, pending, params)
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

/// The store key of the Atlassian leg that `state` names: its hash, as for every bearer value.
fn atlassian_key(state: &str) -> String {
    format!("atlassian2:{}", token_hash(state))
}

/// How long the claims that spend a provider's code or an Atlassian leg outlive what they spend,
/// for the clocks of other locations.
const PROVIDER_CLAIM_MARGIN_SECONDS: u64 = 60;

/// Stores `value` as JSON under `key` for the lifetime of an authorization code: a signed-in
/// person's sign-in between two redirects. A failure is the store's, a `server_error`.
async fn put_json(
    store: &dyn CacheStore,
    key: &str,
    value: &impl Serialize,
) -> Result<(), OAuthError> {
    let unavailable = |e: &dyn std::fmt::Display| {
        OAuthError::server_error(format!("the sign-in store is unavailable ({e})"))
    };
    let value = serde_json::to_vec(value).map_err(|e| unavailable(&e))?;
    store
        .put(
            key,
            CacheEntry {
                value,
                metadata: String::new(),
            },
            CODE_TTL_SECONDS,
        )
        .await
        .map_err(|e| unavailable(&e))
}

/// What [`put_json`] stored under `key`, if it is still there and reads as a `T`.
async fn get_json<T: serde::de::DeserializeOwned>(store: &dyn CacheStore, key: &str) -> Option<T> {
    let entry = store.get(key).await.ok()??;
    serde_json::from_slice(&entry.value).ok()
}

/// Sends the signed-in person on to Atlassian's consent, under a state of its own that keys the
/// waiting sign-in (used once, and only by the browser that consented).
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
    put_json(ports.oauth, &atlassian_key(&state), &leg).await?;
    let redirect = atlassian_redirect(settings);
    Ok(HttpResponse::empty(303)
        .with_header(
            "Location",
            &atlassian::authorization_url(app, &redirect, &state),
        )
        .with_header("Cache-Control", "no-store"))
}

/// `GET /oauth/atlassian/callback`: Atlassian's answer. The waiting sign-in is used once, by the
/// browser that consented. Consent given: the code is exchanged and the token,
/// for the configured site, joins the person's upstream tokens. Consent declined: the sign-in
/// completes without an Atlassian identity. An exchange that fails, or a token that cannot
/// reach the site, ends the sign-in with the reason sent back to the client.
pub(crate) async fn atlassian_callback(
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
    if let Some(used) = first_arrival(&params, "atlassian-code", ports.claims).await {
        return used;
    }
    let Ok(Some(state)) = params.get("state") else {
        return error_page(400, "Atlassian's answer has no state.");
    };
    let key = atlassian_key(state);
    let used = || {
        error_page(
            400,
            "This sign-in request has expired or was already used; start again from your client.",
        )
    };
    let Some(leg) = get_json::<AtlassianLeg>(ports.oauth, &key).await else {
        return used();
    };
    // The first answer spends the leg, in whichever browser it arrives and whether it is
    // accepted or refused: a refused answer's address is easily asked for (and logged), and
    // KV may still hold the leg for a minute at another location, so only the claim, decided
    // once for every location, keeps that address from opening the sign-in later.
    let claim = ports
        .claims
        .claim(
            &key,
            "spent",
            CODE_TTL_SECONDS + PROVIDER_CLAIM_MARGIN_SECONDS,
        )
        .await;
    let _ = ports.oauth.delete(&key).await;
    match claim {
        Ok(Claim::First) => {}
        Ok(Claim::Taken(_)) => return used(),
        Err(e) => {
            return error_page(
                503,
                &format!("The sign-in store is unavailable ({e}); start again from your client."),
            )
        }
    }
    if !same_browser(settings, request, &leg.pending) {
        if let Ok(Some(code)) = params.get("code") {
            // Exchanged and dropped, so that Atlassian refuses the code wherever it comes back.
            let spent = atlassian::exchange(app, &atlassian_redirect(settings), code, ports)
                .await
                .is_ok();
            ports.log.event(
                Level::Warn,
                "oauth_refused_code_spent",
                &[
                    ("exchanged", spent.into()),
                    ("provider", "atlassian".into()),
                ],
            );
        }
        return error_page(
            403,
            "This answer from Atlassian does not belong to a sign-in started in this browser; \
             nothing was authorized.",
        );
    }
    let pending = &leg.pending;
    let back = |e: OAuthError| error_to_client(settings, pending, &e);
    let store = TokenStore::new(settings, ports);
    let mut upstream = match store
        .unseal(&pending.client_id, &leg.principal, leg.sealed.as_deref())
        .await
    {
        Ok(tokens) => tokens,
        Err(e) => return back(e),
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
