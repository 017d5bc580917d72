//! The vendors: their settings type (read by `config`), each one's base URL, path prefix,
//! credential and fixed headers. A vendor is configuration, not an HTTP stack: every request goes through
//! [`super::client`].

use super::hosts::LogHosts;
use super::path::ApiPath;
use base64::Engine as _;
use std::fmt;

/// An upstream API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// GitHub REST API (GitHub Actions).
    GitHub,
    /// CircleCI API v2.
    CircleCi,
    /// Jira Cloud REST API.
    Jira,
    /// Confluence Cloud REST API.
    Confluence,
    /// Bitbucket Cloud API 2.0.
    Bitbucket,
}

impl Vendor {
    /// Every vendor.
    pub const ALL: [Vendor; 5] = [
        Vendor::GitHub,
        Vendor::CircleCi,
        Vendor::Jira,
        Vendor::Confluence,
        Vendor::Bitbucket,
    ];

    /// The product name used in messages (`Jira`, `GitHub`...).
    pub fn name(self) -> &'static str {
        match self {
            Vendor::GitHub => "GitHub",
            Vendor::CircleCi => "CircleCI",
            Vendor::Jira => "Jira",
            Vendor::Confluence => "Confluence",
            Vendor::Bitbucket => "Bitbucket",
        }
    }

    /// A stable lower-case identifier (cache keys, log lines).
    pub fn id(self) -> &'static str {
        match self {
            Vendor::GitHub => "github",
            Vendor::CircleCi => "circleci",
            Vendor::Jira => "jira",
            Vendor::Confluence => "confluence",
            Vendor::Bitbucket => "bitbucket",
        }
    }

    /// The segment every request path starts with (added when the caller left it out).
    fn path_prefix(self) -> Option<&'static str> {
        match self {
            Vendor::Bitbucket => Some("/2.0"),
            Vendor::GitHub | Vendor::CircleCi | Vendor::Jira | Vendor::Confluence => None,
        }
    }

    /// `path` as requested from this vendor, and so as policy sees it: with the vendor's prefix
    /// (Bitbucket `/2.0`) unless it already starts with it.
    pub fn request_path(self, path: &ApiPath) -> ApiPath {
        match self.path_prefix() {
            Some(prefix) => path.clone().with_prefix(prefix),
            None => path.clone(),
        }
    }

    /// The largest body, in bytes, this vendor's reference accepts by its declared
    /// `Content-Length`, checked before the status; `None` when only the read limit applies.
    pub fn declared_length_limit(self) -> Option<f64> {
        match self {
            Vendor::Bitbucket => Some(BITBUCKET_MAX_RESPONSE),
            Vendor::GitHub | Vendor::CircleCi | Vendor::Jira | Vendor::Confluence => None,
        }
    }

    /// True when a 2xx `text/plain` body is the text itself, even empty or JSON-looking: the
    /// Bitbucket reference returns diffs and raw files so.
    pub fn keeps_plain_text(self) -> bool {
        match self {
            Vendor::Bitbucket => true,
            Vendor::GitHub | Vendor::CircleCi | Vendor::Jira | Vendor::Confluence => false,
        }
    }

    /// True when a body declared JSON that does not parse is an error: GitHub and CircleCI
    /// promise JSON, so text there would be mistaken for data. The Atlassian references keep
    /// such a body as text, and so do we.
    pub fn requires_valid_json(self) -> bool {
        match self {
            Vendor::GitHub | Vendor::CircleCi => true,
            Vendor::Jira | Vendor::Confluence | Vendor::Bitbucket => false,
        }
    }

    /// True for the three Atlassian products, whose texts reproduce the reference servers.
    pub fn is_atlassian(self) -> bool {
        matches!(self, Vendor::Jira | Vendor::Confluence | Vendor::Bitbucket)
    }

    /// The settings that must be present for this vendor, as a sentence for error texts.
    pub fn required_settings(self) -> &'static str {
        match self {
            Vendor::GitHub => "the secret GITHUB_TOKEN",
            Vendor::CircleCi => "the secret CIRCLECI_TOKEN",
            Vendor::Jira | Vendor::Confluence => {
                "the secrets ATLASSIAN_USER_EMAIL and ATLASSIAN_API_TOKEN, and \
                 ATLASSIAN_SITE_NAME or ATLASSIAN_BASE_URL"
            }
            Vendor::Bitbucket => {
                "the secrets ATLASSIAN_BITBUCKET_USERNAME and ATLASSIAN_BITBUCKET_APP_PASSWORD \
                 (or ATLASSIAN_USER_EMAIL and ATLASSIAN_API_TOKEN)"
            }
        }
    }
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A secret setting's value. `Debug` never shows it, and there is no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value, for building a credential header or a fingerprint; never for text.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The Bitbucket reference's response size limit (`DATA_LIMITS.MAX_RESPONSE_SIZE`).
pub const BITBUCKET_MAX_RESPONSE: f64 = 10.0 * 1024.0 * 1024.0;

/// GitHub's default API root.
pub const GITHUB_DEFAULT_URL: &str = "https://api.github.com";
/// CircleCI's default API root (v2).
pub const CIRCLECI_DEFAULT_URL: &str = "https://circleci.com/api/v2";
/// Bitbucket Cloud's default API host (paths get `/2.0`).
pub const BITBUCKET_DEFAULT_URL: &str = "https://api.bitbucket.org";
/// The GitHub REST API version requested.
pub const GITHUB_API_VERSION: &str = "2022-11-28";
/// The `User-Agent` sent to GitHub, which refuses requests without one.
pub const USER_AGENT: &str = "devtools-mcp-edge";

/// The vendor settings, validated: base URLs without a trailing `/`, credentials as secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamSettings {
    /// GitHub API root (`GITHUB_API_URL`).
    pub github_api_url: String,
    /// `GITHUB_TOKEN`.
    pub github_token: Option<Secret>,
    /// CircleCI API root (`CIRCLECI_API_URL`).
    pub circleci_api_url: String,
    /// `CIRCLECI_TOKEN`.
    pub circleci_token: Option<Secret>,
    /// Jira and Confluence root: `ATLASSIAN_BASE_URL`, else `https://{ATLASSIAN_SITE_NAME}.atlassian.net`.
    pub atlassian_base_url: Option<String>,
    /// `ATLASSIAN_USER_EMAIL`.
    pub atlassian_user_email: Option<Secret>,
    /// `ATLASSIAN_API_TOKEN`.
    pub atlassian_api_token: Option<Secret>,
    /// Bitbucket API host (`BITBUCKET_API_URL`).
    pub bitbucket_api_url: String,
    /// `ATLASSIAN_BITBUCKET_USERNAME`.
    pub bitbucket_username: Option<Secret>,
    /// `ATLASSIAN_BITBUCKET_APP_PASSWORD`.
    pub bitbucket_app_password: Option<Secret>,
    /// How long one request may take, in milliseconds (`UPSTREAM_TIMEOUT_MS`).
    pub timeout_ms: u64,
    /// The largest response body read, in bytes (`UPSTREAM_MAX_BYTES`).
    pub max_bytes: usize,
    /// The hosts job logs may be downloaded from (`LOG_REDIRECT_HOSTS`).
    pub log_hosts: LogHosts,
    /// A signed-in person's own Atlassian token, set per call when a policy rule acts as them:
    /// Jira or Confluence is then called through Atlassian's API gateway with it, never with
    /// the deployment's pair and never at the site URL.
    pub atlassian_bearer: Option<Box<AtlassianBearer>>,
}

/// A person's Atlassian OAuth 2.0 token and where it is sent: the product's root on the API
/// gateway (`https://api.atlassian.com/ex/{product}/{cloudid}`), under which the same API paths
/// as at the site URL are served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtlassianBearer {
    /// The product this root serves (Jira or Confluence).
    pub vendor: Vendor,
    /// The product's root on the gateway, without a trailing `/`.
    pub base_url: String,
    /// The access token.
    pub token: Secret,
}

/// The root of `vendor` (Jira or Confluence) on the Atlassian API gateway `gateway_url` for the
/// site `cloud_id`.
pub fn atlassian_gateway_url(gateway_url: &str, vendor: Vendor, cloud_id: &str) -> String {
    format!(
        "{}/ex/{}/{cloud_id}",
        gateway_url.trim_end_matches('/'),
        vendor.id()
    )
}

/// The timeout when `UPSTREAM_TIMEOUT_MS` is not set: the reference servers' 30 s.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// The body limit when `UPSTREAM_MAX_BYTES` is not set: 16 MiB, whose cost (64 MiB at four bytes
/// of memory per byte of body) fits in the default memory budget beside the JS heap.
pub const DEFAULT_MAX_BYTES: usize = 16 * 1024 * 1024;

impl Default for UpstreamSettings {
    /// Public default URLs, default limits and no credentials.
    fn default() -> UpstreamSettings {
        UpstreamSettings {
            github_api_url: GITHUB_DEFAULT_URL.into(),
            github_token: None,
            circleci_api_url: CIRCLECI_DEFAULT_URL.into(),
            circleci_token: None,
            atlassian_base_url: None,
            atlassian_user_email: None,
            atlassian_api_token: None,
            bitbucket_api_url: BITBUCKET_DEFAULT_URL.into(),
            bitbucket_username: None,
            bitbucket_app_password: None,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            max_bytes: DEFAULT_MAX_BYTES,
            log_hosts: LogHosts::default(),
            atlassian_bearer: None,
        }
    }
}

impl UpstreamSettings {
    /// Everything needed to call `vendor`, or `None` when its settings are incomplete.
    pub fn endpoint(&self, vendor: Vendor) -> Option<Endpoint> {
        let pair = |a: &Option<Secret>, b: &Option<Secret>| match (a, b) {
            (Some(a), Some(b)) => Some((a.clone(), b.clone())),
            _ => None,
        };
        let atlassian = pair(&self.atlassian_user_email, &self.atlassian_api_token);
        let json_headers = || {
            vec![
                ("Content-Type".to_owned(), "application/json".to_owned()),
                ("Accept".to_owned(), "application/json".to_owned()),
            ]
        };
        let (base_url, credential, headers) = match vendor {
            Vendor::GitHub => {
                let token = self.github_token.clone()?;
                let value = format!("Bearer {}", token.expose());
                (
                    self.github_api_url.clone(),
                    Credential::header("Authorization", value, token),
                    vec![
                        (
                            "Accept".to_owned(),
                            "application/vnd.github+json".to_owned(),
                        ),
                        (
                            "X-GitHub-Api-Version".to_owned(),
                            GITHUB_API_VERSION.to_owned(),
                        ),
                        ("User-Agent".to_owned(), USER_AGENT.to_owned()),
                    ],
                )
            }
            Vendor::CircleCi => {
                let token = self.circleci_token.clone()?;
                let value = token.expose().to_owned();
                (
                    self.circleci_api_url.clone(),
                    Credential::header("Circle-Token", value, token),
                    vec![("Accept".to_owned(), "application/json".to_owned())],
                )
            }
            Vendor::Jira | Vendor::Confluence if self.atlassian_bearer.is_some() => {
                // Acting as a person: their token, at the gateway root of this very product
                // only; no fallback to the deployment's pair.
                let bearer = self
                    .atlassian_bearer
                    .as_ref()
                    .filter(|b| b.vendor == vendor)?;
                let value = format!("Bearer {}", bearer.token.expose());
                (
                    bearer.base_url.clone(),
                    Credential::header("Authorization", value, bearer.token.clone()),
                    json_headers(),
                )
            }
            Vendor::Jira | Vendor::Confluence => {
                let base = self.atlassian_base_url.clone()?;
                let (user, token) = atlassian?;
                (base, Credential::basic(&user, &token), json_headers())
            }
            Vendor::Bitbucket => {
                // The reference prefers the Atlassian pair when both of its halves are set.
                let (user, token) = atlassian
                    .or_else(|| pair(&self.bitbucket_username, &self.bitbucket_app_password))?;
                (
                    self.bitbucket_api_url.clone(),
                    Credential::basic(&user, &token),
                    json_headers(),
                )
            }
        };
        Some(Endpoint {
            vendor,
            base_url,
            credential,
            headers,
        })
    }

    /// CircleCI's API v1.1 root beside the configured v2 root (`.../api/v2` -> `.../api/v1.1`),
    /// for what only v1.1 serves (a job's steps with their output URLs).
    pub fn circleci_v1_url(&self) -> String {
        match self.circleci_api_url.strip_suffix("/v2") {
            Some(root) => format!("{root}/v1.1"),
            None => format!("{}/v1.1", self.circleci_api_url),
        }
    }

    /// Every configured credential (tokens and passwords, not the user names that go with
    /// them, which identify and appear in data), which no upstream text may carry back.
    pub fn credential_values(&self) -> Vec<&str> {
        [
            &self.github_token,
            &self.circleci_token,
            &self.atlassian_api_token,
            &self.bitbucket_app_password,
        ]
        .into_iter()
        .flatten()
        .chain(self.atlassian_bearer.as_ref().map(|b| &b.token))
        .map(Secret::expose)
        .collect()
    }
}

/// The credential header of a vendor and the secret it was built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credential {
    /// Header name (`Authorization`, `Circle-Token`).
    pub header: &'static str,
    /// Header value (holds the secret).
    pub value: Secret,
    /// What identifies the credential for cache partitioning (the token, or `user:token`).
    pub identity: Secret,
}

impl Credential {
    fn header(header: &'static str, value: String, identity: Secret) -> Credential {
        Credential {
            header,
            value: Secret::new(value),
            identity,
        }
    }

    fn basic(user: &Secret, token: &Secret) -> Credential {
        let pair = format!("{}:{}", user.expose(), token.expose());
        let encoded = base64::engine::general_purpose::STANDARD.encode(pair.as_bytes());
        Credential {
            header: "Authorization",
            value: Secret::new(format!("Basic {encoded}")),
            identity: Secret::new(pair),
        }
    }
}

/// One vendor, ready to call: where, with which credential and fixed headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The vendor.
    pub vendor: Vendor,
    /// API root without a trailing `/`; the request host is always this one's.
    pub base_url: String,
    /// The credential header.
    pub credential: Credential,
    /// Fixed headers sent after the credential, in order.
    pub headers: Vec<(String, String)>,
}

/// Validates a base URL setting: `http(s)://host[:port][/path]`, no query, fragment or userinfo;
/// returned without a trailing `/`.
pub fn base_url(text: &str) -> Result<String, String> {
    let text = text.trim();
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .ok_or_else(|| format!("{text:?} must start with https:// (or http:// for local tests)"))?;
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() || host.contains(['@', '?', '#', '\\', ' ']) || rest.contains(['?', '#']) {
        return Err(format!(
            "{text:?} is not a base URL (expected scheme://host[:port][/path], without user, \
             query or fragment)"
        ));
    }
    Ok(text.trim_end_matches('/').to_owned())
}

/// `https://{site}.atlassian.net` for a site name such as `acme`.
pub fn site_url(site: &str) -> Result<String, String> {
    let valid = !site.is_empty()
        && site.len() <= 63
        && site.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if !valid {
        return Err(format!(
            "{site:?} is not a site name (the part before .atlassian.net, letters, digits and '-')"
        ));
    }
    Ok(format!("https://{site}.atlassian.net"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_validated() {
        assert_eq!(
            base_url("https://x.example/api/").unwrap(),
            "https://x.example/api"
        );
        assert_eq!(
            base_url("http://127.0.0.1:8787").unwrap(),
            "http://127.0.0.1:8787"
        );
        for bad in [
            "x.example",
            "ftp://x",
            "https://",
            "https://u@x",
            "https://x/?a",
            "https://x#f",
        ] {
            assert!(base_url(bad).is_err(), "{bad}");
        }
        assert_eq!(site_url("acme-1").unwrap(), "https://acme-1.atlassian.net");
        assert!(site_url("evil.com/").is_err());
    }

    #[test]
    fn endpoints_need_their_credentials() {
        let s = UpstreamSettings::default();
        for vendor in Vendor::ALL {
            assert!(s.endpoint(vendor).is_none(), "{vendor}");
        }
        let s = UpstreamSettings {
            atlassian_user_email: Some(Secret::new("a@example.com")),
            atlassian_api_token: Some(Secret::new("tok")),
            ..UpstreamSettings::default()
        };
        // Jira also needs a site; Bitbucket has a default host.
        assert!(s.endpoint(Vendor::Jira).is_none());
        let bb = s.endpoint(Vendor::Bitbucket).unwrap();
        assert_eq!(bb.base_url, "https://api.bitbucket.org");
        assert_eq!(
            bb.credential.value.expose(),
            "Basic YUBleGFtcGxlLmNvbTp0b2s="
        );
    }

    #[test]
    fn a_persons_atlassian_token_goes_to_its_products_gateway_root_only() {
        let s = UpstreamSettings {
            atlassian_base_url: Some("https://acme.atlassian.net".into()),
            atlassian_user_email: Some(Secret::new("a@example.com")),
            atlassian_api_token: Some(Secret::new("tok")),
            atlassian_bearer: Some(Box::new(AtlassianBearer {
                vendor: Vendor::Jira,
                base_url: atlassian_gateway_url("https://api.atlassian.com/", Vendor::Jira, "c-1"),
                token: Secret::new("person"),
            })),
            ..UpstreamSettings::default()
        };
        let jira = s.endpoint(Vendor::Jira).unwrap();
        assert_eq!(jira.base_url, "https://api.atlassian.com/ex/jira/c-1");
        assert_eq!(jira.credential.value.expose(), "Bearer person");
        assert_eq!(jira.credential.identity.expose(), "person");
        // Never the deployment's pair for the other product while acting as the person.
        assert!(s.endpoint(Vendor::Confluence).is_none());
        assert_eq!(
            atlassian_gateway_url("https://api.atlassian.com", Vendor::Confluence, "c-1"),
            "https://api.atlassian.com/ex/confluence/c-1"
        );
        assert!(s.credential_values().contains(&"person"));
        assert!(!format!("{s:?}").contains("person"));
    }

    #[test]
    fn secrets_never_show_in_debug() {
        let s = UpstreamSettings {
            github_token: Some(Secret::new("ghp_supersecret")),
            circleci_token: Some(Secret::new("cc-secret")),
            ..UpstreamSettings::default()
        };
        let debug = format!("{s:?} {:?}", s.endpoint(Vendor::GitHub));
        assert!(
            !debug.contains("supersecret") && !debug.contains("cc-secret"),
            "{debug}"
        );
        assert_eq!(s.credential_values(), ["ghp_supersecret", "cc-secret"]);
    }
}
