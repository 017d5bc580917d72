//! The vendors: their settings type (read by `config`), each one's base URL, path prefix,
//! credential and fixed headers, and the identity a policy decision names to act on a call
//! ([`Acting`]), resolved here to the credential it sends. A vendor is configuration, not an
//! HTTP stack: every request goes through [`super::client`].

use super::hosts::LogHosts;
use super::path::ApiPath;
use crate::outbound::setting_shown;
use base64::Engine as _;
use std::fmt;

/// Which API a deployment's Jira and Confluence (`ATLASSIAN_FLAVOR`) or Bitbucket
/// (`BITBUCKET_FLAVOR`) speak: GitHub and CircleCI are always [`Flavor::Cloud`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Flavor {
    /// Atlassian Cloud: Jira REST v3, Confluence under `/wiki`, e-mail and API token.
    #[default]
    Cloud,
    /// Data Center (or Server) on the organisation's own host: Jira REST v2, Confluence's and
    /// Bitbucket's `/rest/api` at the server's root, personal or HTTP access tokens.
    DataCenter,
}

impl Flavor {
    /// `cloud` or `datacenter`, as the setting is written; `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<Flavor> {
        match text.trim().to_ascii_lowercase().as_str() {
            "cloud" => Some(Flavor::Cloud),
            "datacenter" => Some(Flavor::DataCenter),
            _ => None,
        }
    }
}

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
    pub(crate) fn name(self) -> &'static str {
        match self {
            Vendor::GitHub => "GitHub",
            Vendor::CircleCi => "CircleCI",
            Vendor::Jira => "Jira",
            Vendor::Confluence => "Confluence",
            Vendor::Bitbucket => "Bitbucket",
        }
    }

    /// A stable lower-case identifier (cache keys, log lines).
    pub(crate) fn id(self) -> &'static str {
        match self {
            Vendor::GitHub => "github",
            Vendor::CircleCi => "circleci",
            Vendor::Jira => "jira",
            Vendor::Confluence => "confluence",
            Vendor::Bitbucket => "bitbucket",
        }
    }

    /// `path` as requested from this vendor speaking `flavor`, and so as policy sees it: with
    /// Bitbucket Cloud's `/2.0` prefix unless it already starts with it.
    pub(crate) fn request_path(self, flavor: Flavor, path: &ApiPath) -> ApiPath {
        match (self, flavor) {
            (Vendor::Bitbucket, Flavor::Cloud) => path.clone().with_prefix("/2.0"),
            _ => path.clone(),
        }
    }

    /// The largest body, in bytes, this vendor's reference accepts by its declared
    /// `Content-Length`, checked before the status; `None` when only the read limit applies.
    pub(crate) fn declared_length_limit(self) -> Option<f64> {
        match self {
            Vendor::Bitbucket => Some(BITBUCKET_MAX_RESPONSE),
            Vendor::GitHub | Vendor::CircleCi | Vendor::Jira | Vendor::Confluence => None,
        }
    }

    /// True when a 2xx `text/plain` body is the text itself, even empty or JSON-looking: the
    /// Bitbucket reference returns diffs and raw files so.
    pub(crate) fn keeps_plain_text(self) -> bool {
        match self {
            Vendor::Bitbucket => true,
            Vendor::GitHub | Vendor::CircleCi | Vendor::Jira | Vendor::Confluence => false,
        }
    }

    /// True when a body declared JSON that does not parse is an error: GitHub and CircleCI
    /// promise JSON, so text there would be mistaken for data. The Atlassian references keep
    /// such a body as text, and so do we.
    pub(crate) fn requires_valid_json(self) -> bool {
        match self {
            Vendor::GitHub | Vendor::CircleCi => true,
            Vendor::Jira | Vendor::Confluence | Vendor::Bitbucket => false,
        }
    }

    /// True for the three Atlassian products, whose texts reproduce the reference servers.
    pub(crate) fn is_atlassian(self) -> bool {
        matches!(self, Vendor::Jira | Vendor::Confluence | Vendor::Bitbucket)
    }

    /// True for the vendors whose credential is a Basic pair (user, token) rather than a token.
    pub(crate) fn uses_basic_pair(self) -> bool {
        matches!(self, Vendor::Jira | Vendor::Confluence | Vendor::Bitbucket)
    }

    /// True for the vendors a signed-in person can bring a token of their own for: the sign-in
    /// gives GitHub and Atlassian OAuth tokens, and Atlassian's reach Jira and Confluence.
    pub(crate) fn takes_personal_token(self) -> bool {
        matches!(self, Vendor::GitHub | Vendor::Jira | Vendor::Confluence)
    }

    /// The credential header built from `secrets`: a token, or a Basic pair (user, token) as
    /// [`Vendor::uses_basic_pair`] says; `None` for any other count. On Data Center a personal
    /// (or HTTP) access token alone is a bearer token, and a pair is Basic (where the
    /// administrator allows it).
    fn credential(self, flavor: Flavor, secrets: &[Secret]) -> Option<Credential> {
        match (self, secrets) {
            (Vendor::GitHub, [token]) => Some(Credential::bearer(token)),
            (_, [token]) if flavor == Flavor::DataCenter => Some(Credential::bearer(token)),
            (Vendor::CircleCi, [token]) => {
                let value = token.expose().to_owned();
                Some(Credential::header("Circle-Token", value, token.clone()))
            }
            (_, [user, token]) if self.uses_basic_pair() => Some(Credential::basic(user, token)),
            _ => None,
        }
    }

    /// The headers sent after the credential, in order.
    fn fixed_headers(self) -> Vec<(String, String)> {
        let pairs: &[(&str, &str)] = match self {
            Vendor::GitHub => &[
                ("Accept", "application/vnd.github+json"),
                ("X-GitHub-Api-Version", GITHUB_API_VERSION),
                ("User-Agent", USER_AGENT),
            ],
            Vendor::CircleCi => &[("Accept", "application/json")],
            Vendor::Jira | Vendor::Confluence | Vendor::Bitbucket => &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json"),
            ],
        };
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// The settings that must be present for this vendor, as a sentence for error texts.
    pub(crate) fn required_settings(self, flavor: Flavor) -> &'static str {
        match self {
            Vendor::GitHub => "the secret GITHUB_TOKEN",
            Vendor::CircleCi => "the secret CIRCLECI_TOKEN",
            Vendor::Jira if flavor == Flavor::DataCenter => {
                "JIRA_BASE_URL and the secret JIRA_PERSONAL_TOKEN"
            }
            Vendor::Confluence if flavor == Flavor::DataCenter => {
                "CONFLUENCE_BASE_URL and the secret CONFLUENCE_PERSONAL_TOKEN"
            }
            Vendor::Bitbucket if flavor == Flavor::DataCenter => {
                "BITBUCKET_BASE_URL and the secret BITBUCKET_PERSONAL_TOKEN"
            }
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
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The Bitbucket reference's response size limit (`DATA_LIMITS.MAX_RESPONSE_SIZE`).
pub(crate) const BITBUCKET_MAX_RESPONSE: f64 = 10.0 * 1024.0 * 1024.0;

/// GitHub's default API root.
pub(crate) const GITHUB_DEFAULT_URL: &str = "https://api.github.com";
/// CircleCI's default API root (v2).
pub(crate) const CIRCLECI_DEFAULT_URL: &str = "https://circleci.com/api/v2";
/// Bitbucket Cloud's default API host (paths get `/2.0`).
pub(crate) const BITBUCKET_DEFAULT_URL: &str = "https://api.bitbucket.org";
/// The GitHub REST API version requested.
pub(crate) const GITHUB_API_VERSION: &str = "2022-11-28";
/// The `User-Agent` sent to GitHub, which refuses requests without one.
pub(crate) const USER_AGENT: &str = "devtools-mcp-edge";

/// The vendor settings, validated: base URLs without a trailing `/`, credentials as secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamSettings {
    /// GitHub API root (`GITHUB_API_URL`).
    pub(crate) github_api_url: String,
    /// `GITHUB_TOKEN`.
    pub(crate) github_token: Option<Secret>,
    /// CircleCI API root (`CIRCLECI_API_URL`).
    pub(crate) circleci_api_url: String,
    /// `CIRCLECI_TOKEN`.
    pub(crate) circleci_token: Option<Secret>,
    /// Jira and Confluence root: `ATLASSIAN_BASE_URL`, else `https://{ATLASSIAN_SITE_NAME}.atlassian.net`.
    pub(crate) atlassian_base_url: Option<String>,
    /// `ATLASSIAN_USER_EMAIL`.
    pub(crate) atlassian_user_email: Option<Secret>,
    /// `ATLASSIAN_API_TOKEN`.
    pub(crate) atlassian_api_token: Option<Secret>,
    /// Bitbucket API host (`BITBUCKET_API_URL`).
    pub(crate) bitbucket_api_url: String,
    /// `ATLASSIAN_BITBUCKET_USERNAME`.
    pub(crate) bitbucket_username: Option<Secret>,
    /// `ATLASSIAN_BITBUCKET_APP_PASSWORD`.
    pub(crate) bitbucket_app_password: Option<Secret>,
    /// `ATLASSIAN_FLAVOR`: the API Jira and Confluence speak.
    pub(crate) atlassian_flavor: Flavor,
    /// Jira Data Center (`JIRA_BASE_URL`, `JIRA_PERSONAL_TOKEN`, `JIRA_USERNAME`).
    pub(crate) jira_server: Option<SelfHosted>,
    /// Confluence Data Center (`CONFLUENCE_BASE_URL`, `CONFLUENCE_PERSONAL_TOKEN`,
    /// `CONFLUENCE_USERNAME`).
    pub(crate) confluence_server: Option<SelfHosted>,
    /// `BITBUCKET_FLAVOR`: the API Bitbucket speaks.
    pub(crate) bitbucket_flavor: Flavor,
    /// Bitbucket Data Center (`BITBUCKET_BASE_URL`, `BITBUCKET_PERSONAL_TOKEN`,
    /// `BITBUCKET_USERNAME`).
    pub(crate) bitbucket_server: Option<SelfHosted>,
    /// Cloudflare Access service tokens of the vendors behind Access
    /// (`{JIRA,CONFLUENCE,BITBUCKET,GITHUB}_CF_ACCESS_CLIENT_ID` and `..._SECRET`).
    pub(crate) access: Vec<(Vendor, AccessToken)>,
    /// How long one request may take, in milliseconds (`UPSTREAM_TIMEOUT_MS`).
    pub timeout_ms: u64,
    /// The largest response body read, in bytes (`UPSTREAM_MAX_BYTES`).
    pub(crate) max_bytes: usize,
    /// The hosts job logs may be downloaded from (`LOG_REDIRECT_HOSTS`).
    pub(crate) log_hosts: LogHosts,
    /// The identity acting for one vendor on this call, when a policy decision named one
    /// ([`UpstreamSettings::acting_as`]); every other vendor keeps its configured credential.
    pub(crate) acting: Option<Box<Acting>>,
}

/// A Jira, Confluence or Bitbucket Data Center server: its root (with the context path the
/// administrator configured, e.g. `https://wiki.example.com/confluence`) and its credential, a
/// personal (or, on Bitbucket, HTTP) access token sent as a bearer token, or Basic with a user
/// name where the administrator allows it. Each product has its own: an access token is issued
/// by one product and valid on that one only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SelfHosted {
    /// The root, without a trailing `/`.
    pub(crate) base_url: String,
    /// The user name for Basic, when set.
    pub(crate) username: Option<Secret>,
    /// The personal access token (or password, with a user name).
    pub(crate) token: Secret,
}

/// A Cloudflare Access service token, sent as `CF-Access-Client-Id` and `CF-Access-Client-Secret`
/// so that a self-hosted server behind Access can be reached. Both halves are secrets: scrubbed
/// from answers like a credential, never shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AccessToken {
    /// `CF-Access-Client-Id`.
    pub(crate) client_id: Secret,
    /// `CF-Access-Client-Secret`.
    pub(crate) client_secret: Secret,
}

impl AccessToken {
    /// The two headers, in order.
    pub(crate) fn headers(&self) -> [(String, String); 2] {
        [
            (
                "CF-Access-Client-Id".to_owned(),
                self.client_id.expose().to_owned(),
            ),
            (
                "CF-Access-Client-Secret".to_owned(),
                self.client_secret.expose().to_owned(),
            ),
        ]
    }
}

/// The identity a policy decision names for one vendor, with the credential it resolves to:
/// only requests to that vendor carry it, and only to that vendor's root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acting {
    /// The vendor it acts for.
    pub vendor: Vendor,
    /// Its name, reported in the result's `_meta` (`default`, a document's identity,
    /// `signed-in-user`).
    pub name: String,
    source: Source,
}

/// Where an acting identity's credential comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Source {
    /// The vendor's configured credential.
    Configured,
    /// Secrets a policy document's identity names: a token, or a Basic pair (user, token).
    Secrets(Vec<Secret>),
    /// A signed-in person's own token, at the vendor's configured root (GitHub) or at the
    /// root their sign-in found (Atlassian's API gateway for their site).
    Personal {
        /// The access token.
        token: Secret,
        /// The root it goes to, when not the configured one.
        base_url: Option<String>,
    },
}

impl Acting {
    /// The vendor's configured credential, under `name`.
    pub(crate) fn configured(vendor: Vendor, name: &str) -> Acting {
        Acting {
            vendor,
            name: name.to_owned(),
            source: Source::Configured,
        }
    }

    /// A policy document's identity `name`, with the secrets it names: one token, or a Basic
    /// pair (user, token), as [`Vendor::uses_basic_pair`] says. Any other count sends nothing.
    pub fn named(vendor: Vendor, name: &str, secrets: &[Secret]) -> Acting {
        Acting {
            vendor,
            name: name.to_owned(),
            source: Source::Secrets(secrets.to_vec()),
        }
    }

    /// A signed-in person's own `token` acting under `name`; `None` for a vendor whose sign-in
    /// gives no token ([`Vendor::takes_personal_token`]) or an Atlassian token without the
    /// gateway root of the person's site, which has nowhere to go (never the deployment's site
    /// URL).
    pub(crate) fn personal(
        vendor: Vendor,
        name: &str,
        token: &Secret,
        base_url: Option<&str>,
    ) -> Option<Acting> {
        let base_url = match vendor {
            _ if !vendor.takes_personal_token() => return None,
            Vendor::GitHub => None,
            _ => Some(base_url?.to_owned()),
        };
        Some(Acting {
            vendor,
            name: name.to_owned(),
            source: Source::Personal {
                token: token.clone(),
                base_url,
            },
        })
    }

    /// The credentials this identity sends that no upstream text may carry back (tokens and
    /// passwords, not user names).
    fn secret_values(&self) -> impl Iterator<Item = &Secret> {
        let secrets: &[Secret] = match &self.source {
            Source::Configured => &[],
            Source::Secrets(secrets) => secrets,
            Source::Personal { token, .. } => std::slice::from_ref(token),
        };
        secrets.last().into_iter()
    }
}

/// The root of `vendor` (Jira or Confluence) on the Atlassian API gateway `gateway_url` for the
/// site `cloud_id`.
pub(crate) fn atlassian_gateway_url(gateway_url: &str, vendor: Vendor, cloud_id: &str) -> String {
    format!(
        "{}/ex/{}/{cloud_id}",
        gateway_url.trim_end_matches('/'),
        vendor.id()
    )
}

/// The timeout when `UPSTREAM_TIMEOUT_MS` is not set: the reference servers' 30 s.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// The body limit when `UPSTREAM_MAX_BYTES` is not set: 16 MiB, whose cost (64 MiB at four bytes
/// of memory per byte of body) fits in the default memory budget beside the JS heap.
pub(crate) const DEFAULT_MAX_BYTES: usize = 16 * 1024 * 1024;

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
            atlassian_flavor: Flavor::Cloud,
            jira_server: None,
            confluence_server: None,
            bitbucket_flavor: Flavor::Cloud,
            bitbucket_server: None,
            access: Vec::new(),
            timeout_ms: DEFAULT_TIMEOUT_MS,
            max_bytes: DEFAULT_MAX_BYTES,
            log_hosts: LogHosts::default(),
            acting: None,
        }
    }
}

impl UpstreamSettings {
    /// Everything needed to call `vendor`, or `None` when its settings are incomplete: its
    /// root, and the credential of the identity acting for it on this call (the configured one
    /// when none acts for it).
    pub(crate) fn endpoint(&self, vendor: Vendor) -> Option<Endpoint> {
        let acting = self.acting.as_deref();
        let source = match acting {
            Some(a) if a.vendor == vendor => &a.source,
            // Acting as a person on one Atlassian product: never the deployment's pair for
            // the other, which the person's token does not reach either.
            Some(Acting {
                vendor: Vendor::Jira | Vendor::Confluence,
                source: Source::Personal { .. },
                ..
            }) if matches!(vendor, Vendor::Jira | Vendor::Confluence) => return None,
            _ => &Source::Configured,
        };
        let flavor = self.flavor(vendor);
        // The Access token guards the configured root only: never sent to another host (the
        // Atlassian gateway a person's token goes to).
        let access = match source {
            Source::Personal {
                base_url: Some(_), ..
            } => None,
            _ => self
                .access
                .iter()
                .find(|(v, _)| *v == vendor)
                .map(|(_, token)| token.clone()),
        };
        let (base_url, credential) = match source {
            Source::Configured => (
                self.root(vendor)?,
                vendor.credential(flavor, &self.configured(vendor)?)?,
            ),
            Source::Secrets(secrets) => (self.root(vendor)?, vendor.credential(flavor, secrets)?),
            Source::Personal {
                token,
                base_url: None,
            } => (
                self.root(vendor)?,
                vendor.credential(flavor, std::slice::from_ref(token))?,
            ),
            Source::Personal {
                token,
                base_url: Some(root),
            } => (root.clone(), Credential::bearer(token)),
        };
        Some(Endpoint {
            vendor,
            base_url,
            credential,
            headers: vendor.fixed_headers(),
            access,
        })
    }

    /// The API `vendor` speaks on this deployment.
    pub(crate) fn flavor(&self, vendor: Vendor) -> Flavor {
        match vendor {
            Vendor::Jira | Vendor::Confluence => self.atlassian_flavor,
            Vendor::Bitbucket => self.bitbucket_flavor,
            Vendor::GitHub | Vendor::CircleCi => Flavor::Cloud,
        }
    }

    /// The Data Center server of `vendor`, on a Data Center deployment.
    fn server(&self, vendor: Vendor) -> Option<&SelfHosted> {
        match vendor {
            Vendor::Jira => self.jira_server.as_ref(),
            Vendor::Confluence => self.confluence_server.as_ref(),
            Vendor::Bitbucket => self.bitbucket_server.as_ref(),
            Vendor::GitHub | Vendor::CircleCi => None,
        }
    }

    /// The configured root of `vendor`'s API.
    fn root(&self, vendor: Vendor) -> Option<String> {
        match vendor {
            Vendor::GitHub => Some(self.github_api_url.clone()),
            Vendor::CircleCi => Some(self.circleci_api_url.clone()),
            _ if self.flavor(vendor) == Flavor::DataCenter => {
                Some(self.server(vendor)?.base_url.clone())
            }
            Vendor::Jira | Vendor::Confluence => self.atlassian_base_url.clone(),
            Vendor::Bitbucket => Some(self.bitbucket_api_url.clone()),
        }
    }

    /// The configured secrets of `vendor`'s credential: its token, or its Basic pair.
    fn configured(&self, vendor: Vendor) -> Option<Vec<Secret>> {
        let pair = |a: &Option<Secret>, b: &Option<Secret>| Some(vec![a.clone()?, b.clone()?]);
        let atlassian = || pair(&self.atlassian_user_email, &self.atlassian_api_token);
        match vendor {
            Vendor::GitHub => Some(vec![self.github_token.clone()?]),
            Vendor::CircleCi => Some(vec![self.circleci_token.clone()?]),
            _ if self.flavor(vendor) == Flavor::DataCenter => {
                let server = self.server(vendor)?;
                let user = server.username.iter().cloned();
                Some(user.chain([server.token.clone()]).collect())
            }
            Vendor::Jira | Vendor::Confluence => atlassian(),
            // The reference prefers the Atlassian pair when both of its halves are set.
            Vendor::Bitbucket => {
                atlassian().or_else(|| pair(&self.bitbucket_username, &self.bitbucket_app_password))
            }
        }
    }

    /// These settings with `acting` acting for its vendor on one call.
    pub(crate) fn acting_as(&self, acting: Acting) -> UpstreamSettings {
        UpstreamSettings {
            acting: Some(Box::new(acting)),
            ..self.clone()
        }
    }

    /// CircleCI's API v1.1 root beside the configured v2 root (`.../api/v2` -> `.../api/v1.1`),
    /// for what only v1.1 serves (a job's steps with their output URLs).
    pub(crate) fn circleci_v1_url(&self) -> String {
        match self.circleci_api_url.strip_suffix("/v2") {
            Some(root) => format!("{root}/v1.1"),
            None => format!("{}/v1.1", self.circleci_api_url),
        }
    }

    /// Every configured credential and the acting identity's (tokens and passwords, not the
    /// user names that go with them, which identify and appear in data), which no upstream
    /// text may carry back.
    pub(crate) fn credential_values(&self) -> Vec<&str> {
        [
            &self.github_token,
            &self.circleci_token,
            &self.atlassian_api_token,
            &self.bitbucket_app_password,
        ]
        .into_iter()
        .flatten()
        .chain(
            [
                &self.jira_server,
                &self.confluence_server,
                &self.bitbucket_server,
            ]
            .into_iter()
            .flatten()
            .map(|server| &server.token),
        )
        .chain(
            self.access
                .iter()
                .flat_map(|(_, t)| [&t.client_id, &t.client_secret]),
        )
        .chain(self.acting.iter().flat_map(|a| a.secret_values()))
        .map(Secret::expose)
        .collect()
    }
}

/// The credential header of a vendor and the secret it was built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Credential {
    /// Header name (`Authorization`, `Circle-Token`).
    pub(crate) header: &'static str,
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

    fn bearer(token: &Secret) -> Credential {
        let value = format!("Bearer {}", token.expose());
        Credential::header("Authorization", value, token.clone())
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
    pub(crate) base_url: String,
    /// The credential header.
    pub(crate) credential: Credential,
    /// Fixed headers sent after the credential, in order.
    pub headers: Vec<(String, String)>,
    /// The Cloudflare Access service token sent after them, to the configured root only.
    pub(crate) access: Option<AccessToken>,
}

/// Validates a base URL setting: `http(s)://host[:port][/path]`, no query, fragment or userinfo;
/// returned without a trailing `/`.
pub(crate) fn base_url(text: &str) -> Result<String, BadRoot> {
    let text = text.trim();
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .ok_or_else(|| bad_root(text, RootProblem::Scheme))?;
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() || host.contains(['@', '?', '#', '\\', ' ']) || rest.contains(['?', '#']) {
        return Err(bad_root(text, RootProblem::NotABase));
    }
    Ok(text.trim_end_matches('/').to_owned())
}

/// `https://{site}.atlassian.net` for a site name such as `acme`.
pub(crate) fn site_url(site: &str) -> Result<String, BadRoot> {
    let valid = !site.is_empty()
        && site.len() <= 63
        && site.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if !valid {
        return Err(bad_root(site, RootProblem::Site));
    }
    Ok(format!("https://{site}.atlassian.net"))
}

/// Why a vendor's root setting cannot be used: the text as it may be shown, and what is wrong
/// with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BadRoot {
    /// The setting's text as [`setting_shown`] shows it.
    pub(crate) shown: String,
    /// What is wrong with it.
    pub(crate) problem: RootProblem,
}

/// What is wrong with a vendor's root setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RootProblem {
    /// A base URL that starts with neither `https://` nor `http://`.
    Scheme,
    /// A base URL with no host, or with user, query or fragment.
    NotABase,
    /// An Atlassian site name that is not one.
    Site,
}

impl fmt::Display for BadRoot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.problem {
            RootProblem::Scheme => "must start with https:// (or http:// for local tests)",
            RootProblem::NotABase => {
                "is not a base URL (expected scheme://host[:port][/path], without user, query or \
                 fragment)"
            }
            RootProblem::Site => {
                "is not a site name (the part before .atlassian.net, letters, digits and '-')"
            }
        };
        write!(f, "{} {what}", self.shown)
    }
}

impl std::error::Error for BadRoot {}

fn bad_root(given: &str, problem: RootProblem) -> BadRoot {
    let shown = match problem {
        RootProblem::Site => "the value".to_owned(),
        RootProblem::Scheme | RootProblem::NotABase => setting_shown(given),
    };
    BadRoot { shown, problem }
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
        let base = UpstreamSettings {
            atlassian_base_url: Some("https://acme.atlassian.net".into()),
            atlassian_user_email: Some(Secret::new("a@example.com")),
            atlassian_api_token: Some(Secret::new("tok")),
            ..UpstreamSettings::default()
        };
        let gateway = atlassian_gateway_url("https://api.atlassian.com/", Vendor::Jira, "c-1");
        let person = Secret::new("person");
        let acting = Acting::personal(Vendor::Jira, "signed-in-user", &person, Some(&gateway));
        let s = base.acting_as(acting.unwrap());
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
    fn identities_replace_only_their_vendor_credential() {
        let base = UpstreamSettings {
            atlassian_base_url: Some("https://acme.atlassian.net".into()),
            atlassian_user_email: Some(Secret::new("a@x")),
            atlassian_api_token: Some(Secret::new("t")),
            ..UpstreamSettings::default()
        };
        let pair = [Secret::new("value-of-BU"), Secret::new("value-of-BT")];
        let s = base.acting_as(Acting::named(Vendor::Bitbucket, "bb", &pair));
        let endpoint = s.endpoint(Vendor::Bitbucket).unwrap();
        assert_eq!(
            endpoint.credential.identity.expose(),
            "value-of-BU:value-of-BT"
        );
        let s = base.acting_as(Acting::named(
            Vendor::GitHub,
            "gh-bot",
            &[Secret::new("value-of-GH")],
        ));
        let github = s.endpoint(Vendor::GitHub).unwrap();
        assert_eq!(github.credential.identity, Secret::new("value-of-GH"));
        assert_eq!(s.endpoint(Vendor::Jira), base.endpoint(Vendor::Jira));
        let s = base.acting_as(Acting::configured(Vendor::Jira, "default"));
        for vendor in Vendor::ALL {
            assert_eq!(s.endpoint(vendor), base.endpoint(vendor), "{vendor}");
        }
        // Secrets of the wrong shape for the vendor send nothing rather than something else.
        let s = base.acting_as(Acting::named(Vendor::Jira, "x", &pair[..1]));
        assert!(s.endpoint(Vendor::Jira).is_none());
    }

    #[test]
    fn a_signed_in_token_acts_for_github_jira_and_confluence_only() {
        let base = UpstreamSettings::default();
        let token = Secret::new("person");
        let gateway = Some("https://api.atlassian.com/ex/jira/c-1");
        let jira = Acting::personal(Vendor::Jira, "me", &token, gateway).unwrap();
        let endpoint = base.acting_as(jira).endpoint(Vendor::Jira).unwrap();
        assert_eq!(endpoint.base_url, "https://api.atlassian.com/ex/jira/c-1");
        assert_eq!(endpoint.credential.value.expose(), "Bearer person");
        // An Atlassian token without the site the sign-in found has nowhere to go.
        assert!(Acting::personal(Vendor::Jira, "me", &token, None).is_none());
        for vendor in [Vendor::CircleCi, Vendor::Bitbucket] {
            assert!(
                Acting::personal(vendor, "me", &token, gateway).is_none(),
                "{vendor}"
            );
        }
        let github = Acting::personal(Vendor::GitHub, "me", &token, None).unwrap();
        let endpoint = base.acting_as(github).endpoint(Vendor::GitHub).unwrap();
        assert_eq!(endpoint.base_url, GITHUB_DEFAULT_URL);
        assert_eq!(endpoint.credential.identity, token);
    }

    #[test]
    fn an_access_token_goes_to_its_vendors_configured_root_only() {
        let token = AccessToken {
            client_id: Secret::new("id.access"),
            client_secret: Secret::new("cf-secret"),
        };
        let s = UpstreamSettings {
            atlassian_flavor: Flavor::DataCenter,
            jira_server: Some(SelfHosted {
                base_url: "https://jira.example.com".into(),
                username: None,
                token: Secret::new("pat"),
            }),
            github_token: Some(Secret::new("gh")),
            access: vec![(Vendor::Jira, token.clone())],
            ..UpstreamSettings::default()
        };
        assert_eq!(s.endpoint(Vendor::Jira).unwrap().access, Some(token));
        assert_eq!(s.endpoint(Vendor::GitHub).unwrap().access, None);
        let values = s.credential_values();
        assert!(values.contains(&"id.access") && values.contains(&"cf-secret"));
        let debug = format!("{s:?} {:?}", s.endpoint(Vendor::Jira));
        assert!(
            !debug.contains("cf-secret") && !debug.contains("id.access"),
            "{debug}"
        );
        // A person's token at another root never carries it.
        let person = Secret::new("person");
        let gateway = Some("https://api.atlassian.com/ex/jira/c-1");
        let acting = Acting::personal(Vendor::Jira, "me", &person, gateway).unwrap();
        assert_eq!(
            s.acting_as(acting).endpoint(Vendor::Jira).unwrap().access,
            None
        );
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
