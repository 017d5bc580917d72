//! OAuth clients: dynamic registration (RFC 7591), stateless (the client id is the registration,
//! sealed with the deployment's key, so an anonymous caller writes nothing), and Client ID
//! Metadata Documents (an https URL as `client_id`, fetched with SSRF protection, bounded in size
//! and time). Every client is public (PKCE, no secret).

use super::error::OAuthError;
use super::sealed::{self, Purpose};
use super::settings::OAuthSettings;
use super::url::redirect_uri_problem;
use crate::outbound::{OutboundUrl, Reach};
use crate::ports::{Ports, UpstreamRequest};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use std::cell::RefCell;

/// The largest registration request body, in bytes.
pub(crate) const MAX_REGISTRATION_BYTES: usize = 16 * 1024;
/// The largest client metadata document fetched, in bytes.
pub(crate) const MAX_METADATA_BYTES: usize = 5 * 1024;
/// How long a metadata document fetch may take, in milliseconds.
pub(crate) const METADATA_TIMEOUT_MS: u64 = 5_000;
/// How long a fetched metadata document is reused, in seconds.
pub(crate) const METADATA_CACHE_SECONDS: u64 = 600;
/// The most metadata documents an isolate keeps in memory.
const MAX_CACHED_DOCUMENTS: usize = 32;

thread_local! {
    /// Metadata documents this isolate fetched, with when each expires (ms since the epoch):
    /// kept in memory because nothing a caller sends before signing in is written to storage.
    static DOCUMENTS: RefCell<Vec<(u64, Client)>> = const { RefCell::new(Vec::new()) };
}

/// The cached client `client_id`, if this isolate fetched its document and it is still fresh.
fn cached_document(client_id: &str, now_ms: u64) -> Option<Client> {
    DOCUMENTS.with(|cache| {
        let mut cache = cache.borrow_mut();
        cache.retain(|(expires, _)| *expires > now_ms);
        cache
            .iter()
            .find(|(_, c)| c.client_id == client_id)
            .map(|(_, c)| c.clone())
    })
}

/// Keeps `client` for [`METADATA_CACHE_SECONDS`], dropping the oldest past the bound.
fn cache_document(client: &Client, now_ms: u64) {
    DOCUMENTS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() == MAX_CACHED_DOCUMENTS {
            cache.remove(0);
        }
        cache.push((now_ms + METADATA_CACHE_SECONDS * 1000, client.clone()));
    })
}

/// The prefix of every client id this server issues: the sealed registration follows it.
pub(crate) const CLIENT_PREFIX: &str = "mcp_c_";
/// The most bytes a registration may hold (its name and redirect URIs as JSON): it travels in
/// the client id, and the client id in every authorization request.
pub(crate) const MAX_SEALED_CLIENT_BYTES: usize = 1024;
/// The most redirect URIs a client may register.
pub(crate) const MAX_REDIRECT_URIS: usize = 10;
/// The longest client name kept, in characters.
const MAX_NAME_CHARS: usize = 100;

/// A client as the authorization endpoint needs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Client {
    /// The client id (a random id, or the metadata document's URL).
    pub client_id: String,
    /// The name shown on the consent page.
    pub(crate) client_name: String,
    /// The registered redirect URIs.
    pub(crate) redirect_uris: Vec<String>,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_name: Option<String>,
    #[serde(default)]
    redirect_uris: Option<Vec<String>>,
    #[serde(default)]
    grant_types: Option<Vec<String>>,
    #[serde(default)]
    response_types: Option<Vec<String>>,
}

/// Checks registration or document metadata; the client id is supplied by the caller, the
/// private-use schemes an operator allows besides the reverse-domain ones by the settings.
fn client_from(
    settings: &OAuthSettings,
    metadata: Metadata,
    client_id: String,
) -> Result<Client, OAuthError> {
    let uris = metadata.redirect_uris.unwrap_or_default();
    if uris.is_empty() || uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::invalid_redirect_uri(format!(
            "redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs"
        )));
    }
    for uri in &uris {
        if !uri.is_ascii() {
            return Err(OAuthError::invalid_redirect_uri(
                "a redirect URI must be ASCII (percent-encode other characters), so that the \
                 consent page shows it as the browser will open it",
            ));
        }
        if let Some(problem) = redirect_uri_problem(uri, &settings.redirect_schemes) {
            return Err(OAuthError::invalid_redirect_uri(problem));
        }
    }
    let allowed = |list: &Option<Vec<String>>, ok: &[&str], what: &str| match list {
        Some(items) if items.iter().any(|g| !ok.contains(&g.as_str())) => {
            Err(OAuthError::invalid_client_metadata(format!(
                "{what} may only contain {}",
                ok.join(", ")
            )))
        }
        _ => Ok(()),
    };
    allowed(
        &metadata.grant_types,
        &["authorization_code", "refresh_token"],
        "grant_types",
    )?;
    allowed(&metadata.response_types, &["code"], "response_types")?;
    let name: String = metadata
        .client_name
        .unwrap_or_default()
        .chars()
        .filter(|&c| !c.is_control() && !reorders_text(c))
        .take(MAX_NAME_CHARS)
        .collect();
    Ok(Client {
        client_name: if name.trim().is_empty() {
            "an unnamed client".to_owned()
        } else {
            name
        },
        client_id,
        redirect_uris: uris,
    })
}

/// The key under which registrations were once stored; still read so that clients registered
/// then keep working until those records expire.
/// True for the invisible characters that reorder or hide text (bidirectional controls,
/// zero-width characters): in a client's name they could make the consent page read otherwise.
fn reorders_text(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

fn client_key(id: &str) -> String {
    format!("client:{id}")
}

fn store_error(e: crate::ports::StoreError) -> OAuthError {
    OAuthError::server_error(format!("the sign-in store is unavailable ({e})"))
}

/// A registration as its client id carries it.
#[derive(Serialize, Deserialize)]
struct Registration {
    #[serde(rename = "n")]
    client_name: String,
    #[serde(rename = "r")]
    redirect_uris: Vec<String>,
}

/// `POST /oauth/register`: answers RFC 7591's 201 with a client id that is the registration
/// itself, sealed; nothing is stored. Whatever authentication method was asked for, the client
/// is registered as public (`none`): this server issues no client secrets, and says so.
pub(crate) async fn register(
    settings: &OAuthSettings,
    body: &[u8],
    ports: Ports<'_>,
) -> Result<Json, OAuthError> {
    if body.len() > MAX_REGISTRATION_BYTES {
        return Err(OAuthError::invalid_client_metadata(format!(
            "the registration request is larger than {MAX_REGISTRATION_BYTES} bytes"
        )));
    }
    let metadata: Metadata = serde_json::from_slice(body).map_err(|e| {
        OAuthError::invalid_client_metadata(format!("not a JSON client metadata object: {e}"))
    })?;
    let client = client_from(settings, metadata, String::new())?;
    let registration = Registration {
        client_name: client.client_name,
        redirect_uris: client.redirect_uris,
    };
    let size = serde_json::to_vec(&registration)
        .map_err(|e| OAuthError::server_error(e.to_string()))?
        .len();
    if size > MAX_SEALED_CLIENT_BYTES {
        return Err(OAuthError::invalid_client_metadata(format!(
            "the client name and redirect URIs take {size} bytes; at most \
             {MAX_SEALED_CLIENT_BYTES} can be registered"
        )));
    }
    let sealed = sealed::seal(settings, ports.cipher, Purpose::Client, None, &registration).await?;
    Ok(json!({
        "client_id": format!("{CLIENT_PREFIX}{sealed}"),
        "client_id_issued_at": ports.clock.now_ms() / 1000,
        "client_name": registration.client_name,
        "redirect_uris": registration.redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }))
}

/// True when `client_id` names a metadata document rather than a registration.
pub(crate) fn is_metadata_url(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

/// The client `client_id`: a registration, or a metadata document fetched (or from cache).
pub(crate) async fn resolve(
    settings: &OAuthSettings,
    client_id: &str,
    ports: Ports<'_>,
) -> Result<Client, OAuthError> {
    if let Some(sealed) = client_id.strip_prefix(CLIENT_PREFIX) {
        let registration: Registration =
            sealed::open(settings, ports.cipher, ports.clock, Purpose::Client, sealed)
                .await
                .map_err(|_| OAuthError::invalid_client("client_id is not registered"))?;
        return Ok(Client {
            client_id: client_id.to_owned(),
            client_name: registration.client_name,
            redirect_uris: registration.redirect_uris,
        });
    }
    if !is_metadata_url(client_id) {
        // Only the 32 hex digits of an earlier stored registration can name one.
        if client_id.len() != 32 || !client_id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(OAuthError::invalid_client("client_id is not registered"));
        }
        let entry = ports
            .oauth
            .get(&client_key(client_id))
            .await
            .map_err(store_error)?
            .ok_or_else(|| OAuthError::invalid_client("client_id is not registered"))?;
        return serde_json::from_slice(&entry.value)
            .map_err(|_| OAuthError::invalid_client("client_id is not registered"));
    }
    let url = document_url(settings, client_id)?;
    let now = ports.clock.now_ms();
    if let Some(client) = cached_document(client_id, now) {
        return Ok(client);
    }
    let response = ports
        .http
        .send(
            UpstreamRequest::get(
                &url,
                vec![("Accept".into(), "application/json".into())],
                METADATA_TIMEOUT_MS,
            ),
            MAX_METADATA_BYTES,
        )
        .await
        .map_err(|e| {
            OAuthError::invalid_client(format!(
                "the client metadata document could not be fetched: {e}"
            ))
        })?;
    if response.status != 200 {
        return Err(OAuthError::invalid_client(format!(
            "the client metadata document answered HTTP {}",
            response.status
        )));
    }
    let metadata: Metadata = serde_json::from_slice(&response.body).map_err(|_| {
        OAuthError::invalid_client("the client metadata document is not a JSON object")
    })?;
    if metadata.client_id.as_deref() != Some(client_id) {
        return Err(OAuthError::invalid_client(
            "the client metadata document's client_id is not its own URL",
        ));
    }
    let client = client_from(settings, metadata, client_id.to_owned())
        .map_err(|e| OAuthError::invalid_client(e.description))?;
    cache_document(&client, now);
    Ok(client)
}

/// The host that publishes `client_id`'s metadata document, as it is fetched, when the client is
/// identified by one: the consent page names it, since the document's author chose the client's
/// name.
pub(crate) fn document_host(client_id: &str) -> Option<String> {
    if !is_metadata_url(client_id) {
        return None;
    }
    url::Url::parse(client_id)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
}

/// Checks a metadata document URL before anything is fetched: read as `fetch` reads it, on a
/// public host over https (a local server, whose issuer is loopback, may also fetch from
/// loopback, over http, where local clients serve their documents; never from other private
/// addresses), with a path and no user or fragment, and written as the parser writes it back, so
/// that the id the document must repeat is the URL fetched and no spelling (`%31%32%37.0.0.1`,
/// a trailing dot, dot segments, a backslash) reads one way here and another way there.
fn document_url(settings: &OAuthSettings, client_id: &str) -> Result<OutboundUrl, OAuthError> {
    let refuse = |why: &str| OAuthError::invalid_client(format!("client_id URL refused: {why}"));
    let reach = if settings.local {
        Reach::PublicOrLoopback
    } else {
        Reach::Public
    };
    let url = OutboundUrl::check(client_id, reach).map_err(|e| refuse(&e.to_string()))?;
    if url.as_str() != client_id {
        return Err(refuse(&format!(
            "it is not written as a URL parser writes it back ({})",
            url.as_str()
        )));
    }
    if url.path().len() < 2 {
        return Err(refuse("it needs a path"));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_url_is_fetched_as_written_and_only_from_a_public_host() {
        let public = crate::oauth::store::tests::settings();
        let mut local = public.clone();
        local.local = true;
        let fetched = |settings: &OAuthSettings, id: &str| {
            document_url(settings, id).map(|u| u.as_str().to_owned())
        };
        let doc = "https://client.example.org/oauth/cimd.json";
        assert_eq!(fetched(&public, doc).as_deref(), Ok(doc));
        for id in [
            "https://169.254.169.254./latest",
            "https://%31%32%37.0.0.1/cimd.json",
            "https://\u{ff11}\u{ff12}\u{ff17}.0.0.1/cimd.json",
            "https://localhost./cimd.json",
            "https://metadata.google.internal./v1",
            "https://Client.Example.org/cimd.json",
            "https://client.example.org/a/../cimd.json",
            "https://client.example.org\\.evil/cimd.json",
            "https://client.example.org/",
            "http://127.0.0.1:3000/cimd.json",
        ] {
            let err = fetched(&public, id).unwrap_err();
            assert!(err.description.contains("client_id URL refused"), "{id}");
        }
        let loopback = "http://127.0.0.1:3000/cimd.json";
        assert_eq!(fetched(&local, loopback).as_deref(), Ok(loopback));
        assert!(fetched(&local, "http://10.0.0.1/cimd.json").is_err());
    }
}
