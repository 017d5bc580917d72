//! The OAuth settings: the public issuer, the encryption key for what grants carry, the identity
//! provider sign-in is delegated to, who may sign in, and token lifetimes. OAuth is on when
//! `MCP_OAUTH_ISSUER` is set; every other setting is then checked at startup. The types and
//! checks are here; `config`, the composition root, reads the settings and builds them.

use super::url::{is_loopback_url, parse_setting};
use crate::auth::split_attributes;
use crate::outbound::setting_shown;
use crate::upstream::Secret;
use sha2::{Digest, Sha256};
use std::fmt;

/// The access token lifetime when `MCP_OAUTH_ACCESS_TTL_SECONDS` is unset: one hour.
pub(crate) const DEFAULT_ACCESS_TTL_SECONDS: u64 = 3_600;

/// The refresh token lifetime when `MCP_OAUTH_REFRESH_TTL_SECONDS` is unset: 30 days.
pub(crate) const DEFAULT_REFRESH_TTL_SECONDS: u64 = 30 * 86_400;

/// The shortest `MCP_OAUTH_ENCRYPTION_KEY` accepted, in characters.
pub(crate) const MIN_ENCRYPTION_KEY_LEN: usize = 32;

/// GitHub's web root, where its OAuth endpoints live.
pub(crate) const GITHUB_WEB_DEFAULT: &str = "https://github.com";

/// Atlassian's authorization server, where people consent and tokens are issued.
pub(crate) const ATLASSIAN_AUTH_DEFAULT: &str = "https://auth.atlassian.com";

/// Atlassian's API gateway: the sites a token reaches, and the products under `/ex/...`.
pub(crate) const ATLASSIAN_API_DEFAULT: &str = "https://api.atlassian.com";

/// The Atlassian scopes requested when `MCP_OAUTH_ATLASSIAN_SCOPES` is unset: reading Jira and
/// Confluence, and `offline_access` for refresh tokens (access tokens last an hour).
pub(crate) const ATLASSIAN_SCOPES_DEFAULT: &str = "read:jira-work read:jira-user \
     read:confluence-content.all read:confluence-space.summary search:confluence offline_access";

/// The path of the MCP endpoint, which is the protected resource.
const RESOURCE_PATH: &str = "/mcp";

/// The 256-bit key that seals what a grant carries; `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct GrantKey([u8; 32]);

impl GrantKey {
    /// The key derived from the secret's text: SHA-256 over a label and the text, so any
    /// sufficiently long secret works and the key is never the secret itself.
    pub(crate) fn derive(secret: &str) -> GrantKey {
        let mut hash = Sha256::new();
        hash.update(b"devtools-mcp-edge oauth grant key\n");
        hash.update(secret.as_bytes());
        GrantKey(hash.finalize().into())
    }

    /// The key bytes, for the cipher port only.
    pub(crate) fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for GrantKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GrantKey(<redacted>)")
    }
}

/// What names a person signed in with OpenID Connect (`MCP_OAUTH_PRINCIPAL_CLAIM`): only claims
/// that are stable and verified may.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PrincipalClaim {
    /// `sub` (the default): `oidc~` and a hash of the provider and the subject, which the
    /// provider never gives to another person.
    Subject,
    /// `email`: the e-mail address, only when the provider says `email_verified: true`.
    VerifiedEmail,
}

impl PrincipalClaim {
    /// The setting's value: `sub` or `email`; any other claim is refused, since the provider
    /// does not vouch for it.
    pub(crate) fn parse(text: &str) -> Result<PrincipalClaim, BadSetting> {
        match text.trim() {
            "sub" => Ok(PrincipalClaim::Subject),
            "email" => Ok(PrincipalClaim::VerifiedEmail),
            other => Err(BadSetting::Claim(other.chars().take(40).collect())),
        }
    }
}

/// An OpenID Connect provider's endpoints and claims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OidcProvider {
    /// The provider's authorization endpoint.
    pub(crate) authorization_url: String,
    /// Its token endpoint.
    pub(crate) token_url: String,
    /// Its userinfo endpoint, which gives the claims (no ID token signature to check).
    pub(crate) userinfo_url: String,
    /// The scopes requested (space-separated).
    pub(crate) scopes: String,
    /// What names the principal.
    pub(crate) principal_claim: PrincipalClaim,
    /// The claim holding a list of group names, if any.
    pub(crate) groups_claim: Option<String>,
}

/// The identity provider sign-in is delegated to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Provider {
    /// GitHub (an OAuth App, or a GitHub App's user-to-server flow): the principal is the login,
    /// groups are the organisations, and the person's token is sealed into the grant, for policy
    /// rules that choose the `signed-in-user` identity.
    GitHub {
        /// Web root (`https://github.com`, or a GitHub Enterprise host).
        web_url: String,
        /// API root for `/user` and `/user/orgs` (the `GITHUB_API_URL` setting).
        api_url: String,
    },
    /// A generic OpenID Connect provider (Okta, Entra ID, Google, Cloudflare Access).
    Oidc(OidcProvider),
}

impl Provider {
    /// The name shown on the consent page and in logs.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Provider::GitHub { .. } => "GitHub",
            Provider::Oidc(_) => "your identity provider",
        }
    }
}

/// Atlassian's OAuth 2.0 (3LO) app, when configured: after signing in with the identity
/// provider, the person is also asked to consent at Atlassian, and their Atlassian token is
/// sealed into the grant for rules that choose `signed-in-user` for Jira or Confluence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AtlassianApp {
    /// The app's client id.
    pub client_id: String,
    /// Its client secret.
    pub(crate) client_secret: Secret,
    /// The scopes requested (space-separated).
    pub(crate) scopes: String,
    /// The authorization server's root (`https://auth.atlassian.com`).
    pub(crate) auth_url: String,
    /// The API gateway's root (`https://api.atlassian.com`).
    pub(crate) api_url: String,
    /// The configured site (`ATLASSIAN_BASE_URL`, or the `ATLASSIAN_SITE_NAME` URL): the one
    /// of the person's accessible sites the token is used for.
    pub(crate) site_url: String,
}

/// Who may sign in. A person passes when any list admits them; with every list empty nobody
/// does (startup refuses that configuration). Each list is matched against what the identity
/// provider verified, never against a name the person chose unverified.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AllowList {
    /// People: GitHub logins, verified e-mail addresses or stable principal names,
    /// case-insensitive.
    pub(crate) users: Vec<String>,
    /// The identity provider's groups whose members may sign in (GitHub organisations, or OIDC
    /// groups), by their bare name (`acme`) or namespaced (`github:acme`), case-insensitive.
    pub groups: Vec<String>,
    /// E-mail domains (the part after `@` of a verified e-mail), case-insensitive.
    pub(crate) domains: Vec<String>,
    /// The static tokens' principal names (`MCP_AUTH_TOKENS`): nobody whose alias is one of
    /// them signs in, or a policy naming that principal would also mean them.
    pub(crate) static_names: Vec<String>,
}

impl AllowList {
    /// True when the person named `principal`, with the verified `attributes` of a sign-in
    /// (aliases and namespaced provider groups) and verified `email`, may sign in.
    pub(crate) fn admits(
        &self,
        principal: &str,
        attributes: &[String],
        email: Option<&str>,
    ) -> bool {
        let eq = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
        let (aliases, groups) = split_attributes(attributes);
        let bare = |g: &str| {
            g.split_once(':')
                .map_or(g.to_owned(), |(_, name)| name.to_owned())
        };
        let domain_of = |e: &str| e.rsplit_once('@').map(|(_, d)| d.to_owned());
        if self.is_static_name(&aliases) {
            return false;
        }
        let domains: Vec<String> = email
            .into_iter()
            .chain(
                aliases
                    .iter()
                    .map(String::as_str)
                    .filter(|a| a.contains('@')),
            )
            .filter_map(domain_of)
            .collect();
        self.users
            .iter()
            .any(|u| eq(u, principal) || aliases.iter().any(|a| eq(u, a)))
            || self
                .groups
                .iter()
                .any(|g| groups.iter().any(|have| eq(g, have) || eq(g, &bare(have))))
            || domains
                .iter()
                .any(|domain| self.domains.iter().any(|d| eq(d, domain)))
    }

    /// True when one of `aliases` is a static token's principal name (in any case).
    pub(crate) fn is_static_name(&self, aliases: &[String]) -> bool {
        aliases.iter().any(|a| {
            self.static_names
                .iter()
                .any(|name| name.eq_ignore_ascii_case(a))
        })
    }

    /// True when no list admits anyone.
    pub(crate) fn is_empty(&self) -> bool {
        self.users.is_empty() && self.groups.is_empty() && self.domains.is_empty()
    }
}

/// The OAuth settings, present when `MCP_OAUTH_ISSUER` is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthSettings {
    /// The issuer: this server's public origin, without a trailing slash.
    pub(crate) issuer: String,
    /// The protected resource every token is bound to: the issuer plus `/mcp`.
    pub resource: String,
    /// True when the issuer is a loopback host (a local run): client metadata documents may
    /// then be fetched from loopback over http, as local clients serve them.
    pub(crate) local: bool,
    /// Seals what grants carry.
    pub(crate) grant_key: GrantKey,
    /// Where people sign in.
    pub(crate) provider: Provider,
    /// This server's client id at the identity provider.
    pub client_id: String,
    /// Its client secret there.
    pub(crate) client_secret: Secret,
    /// Who may sign in.
    pub(crate) allow: AllowList,
    /// Access token lifetime.
    pub access_ttl_seconds: u64,
    /// Refresh token (and grant) lifetime.
    pub(crate) refresh_ttl_seconds: u64,
    /// Atlassian's three-legged OAuth, chained after the sign-in, when configured.
    pub(crate) atlassian: Option<AtlassianApp>,
    /// Private-use redirect schemes allowed besides the reverse-domain ones
    /// (`MCP_OAUTH_REDIRECT_SCHEMES`).
    pub(crate) redirect_schemes: Vec<String>,
}

impl OAuthSettings {
    /// The protected resource for `issuer`: the MCP endpoint under it.
    pub(crate) fn resource_for(issuer: &str) -> String {
        format!("{issuer}{RESOURCE_PATH}")
    }
}

/// True when `issuer` (already checked by [`issuer`]) is a loopback origin: a local run.
pub(crate) fn is_local(issuer: &str) -> bool {
    parse_setting(issuer).is_ok_and(|u| is_loopback_url(&u))
}

/// The issuer, as the parser writes its origin: `https://host[:port]`, or `http://` for a
/// loopback host; no path, query or fragment (the metadata URL is built by appending the
/// well-known path to it).
pub(crate) fn issuer(text: &str) -> Result<String, BadSetting> {
    let text = text.trim().trim_end_matches('/');
    let url = parse_setting(text).map_err(|e| BadSetting::NotAUrl(setting_shown(text), e))?;
    let secure = url.scheme() == "https" || (url.scheme() == "http" && is_loopback_url(&url));
    if !secure || url.host().is_none() {
        return Err(BadSetting::InsecureIssuer(setting_shown(text)));
    }
    let bare = url.path() == "/" && url.query().is_none() && url.fragment().is_none();
    if !bare || has_user(&url) {
        return Err(BadSetting::NotAnOrigin(setting_shown(text)));
    }
    Ok(url.origin().ascii_serialization())
}

/// Whether `url` carries `user[:password]@`.
fn has_user(url: &url::Url) -> bool {
    !url.username().is_empty() || url.password().is_some()
}

/// True when GitHub's web root `web_url` (where people sign in) and API root `api_url` (where
/// their token is read from and sent by tools) are one GitHub: the same host, or github.com
/// with api.github.com. A person's token must only go to the GitHub it came from.
pub(crate) fn github_roots_agree(web_url: &str, api_url: &str) -> bool {
    match (parse_setting(web_url), parse_setting(api_url)) {
        (Ok(web), Ok(api)) => match (web.host_str(), api.host_str()) {
            (Some(web), Some(api)) => {
                web == api || (web == "github.com" && api == "api.github.com")
            }
            _ => false,
        },
        _ => false,
    }
}

/// An identity-provider endpoint, as the parser writes it (a bare origin without its `/`, since
/// some are roots that paths are appended to): https, or http to loopback when the server
/// itself is local.
pub(crate) fn endpoint_url(text: &str, local: bool) -> Result<String, BadSetting> {
    let text = text.trim().trim_end_matches('/');
    let url = parse_setting(text).map_err(|e| BadSetting::NotAUrl(setting_shown(text), e))?;
    let ok = url.scheme() == "https" || (local && url.scheme() == "http" && is_loopback_url(&url));
    if !ok || url.host().is_none() || has_user(&url) || url.fragment().is_some() {
        return Err(BadSetting::Endpoint(setting_shown(text)));
    }
    let written = url.as_str();
    let bare = url.path() == "/" && url.query().is_none();
    Ok(written
        .strip_suffix('/')
        .filter(|_| bare)
        .unwrap_or(written)
        .to_owned())
}

/// Why an OAuth setting read here cannot be used; each URL variant holds the text as
/// [`setting_shown`] shows it (never user information, a path or a query).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BadSetting {
    /// A principal claim other than `sub` or `email` (its first 40 characters).
    Claim(String),
    /// Not a URL, and how.
    NotAUrl(String, url::ParseError),
    /// An issuer that is not `https://`, or `http://` to a loopback host.
    InsecureIssuer(String),
    /// An issuer with a path, query, fragment or user.
    NotAnOrigin(String),
    /// An identity-provider endpoint that is not `https://` (or local loopback `http://`), or
    /// has a user or fragment.
    Endpoint(String),
}

impl fmt::Display for BadSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadSetting::Claim(claim) => write!(
                f,
                "must be sub or email (used only when email_verified is true), got {claim:?}: \
                 other claims are neither stable nor verified, and would let one person sign in \
                 as another"
            ),
            BadSetting::NotAUrl(text, e) => write!(f, "{text} is not a URL: {e}"),
            BadSetting::InsecureIssuer(text) => write!(
                f,
                "{text} must be an https:// origin (http:// only for localhost or 127.0.0.1)"
            ),
            BadSetting::NotAnOrigin(text) => write!(
                f,
                "{text} must be an origin only (scheme://host[:port]), without path, query or \
                 user"
            ),
            BadSetting::Endpoint(text) => write!(
                f,
                "{text} must be an https:// URL without user or fragment (http:// to loopback \
                 only when MCP_OAUTH_ISSUER is itself a loopback origin)"
            ),
        }
    }
}

impl std::error::Error for BadSetting {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{self, Config, ConfigError};

    const KEY: &str = "k0123456789abcdef0123456789abcdef";

    fn read(pairs: &[(&str, &str)]) -> Result<Option<OAuthSettings>, ConfigError> {
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        Config::from_settings(&get).map(|c| c.oauth)
    }

    fn github(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        let mut pairs = vec![
            (config::MCP_OAUTH_ISSUER, "https://mcp.example.com/"),
            (config::MCP_OAUTH_ENCRYPTION_KEY, KEY),
            (config::MCP_OAUTH_PROVIDER, "github"),
            (config::MCP_OAUTH_CLIENT_ID, "Iv1.abc"),
            (config::MCP_OAUTH_CLIENT_SECRET, "shh"),
            (config::MCP_OAUTH_ALLOWED_GROUPS, "acme"),
        ];
        for (k, v) in extra {
            pairs.retain(|(name, _)| name != k);
            pairs.push((k, v));
        }
        pairs
    }

    #[test]
    fn off_without_an_issuer() {
        assert_eq!(read(&[]).unwrap(), None);
    }

    #[test]
    fn github_settings() {
        let s = read(&github(&[])).unwrap().unwrap();
        assert_eq!(s.issuer, "https://mcp.example.com");
        assert_eq!(s.resource, "https://mcp.example.com/mcp");
        assert!(!s.local);
        assert_eq!(
            s.provider,
            Provider::GitHub {
                web_url: GITHUB_WEB_DEFAULT.into(),
                api_url: "https://api.github.com".into()
            }
        );
        assert_eq!(s.access_ttl_seconds, 3_600);
        assert!(!format!("{s:?}").contains("shh"), "secret in Debug");
        assert_ne!(
            s.grant_key,
            GrantKey::derive("another key of more than 32 chars")
        );
    }

    #[test]
    fn every_problem_names_its_setting() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (
                &[(config::MCP_OAUTH_ISSUER, "http://mcp.example.com")],
                config::MCP_OAUTH_ISSUER,
            ),
            (
                &[(config::MCP_OAUTH_ISSUER, "https://x.example/mcp")],
                config::MCP_OAUTH_ISSUER,
            ),
            (
                &[(config::MCP_OAUTH_ENCRYPTION_KEY, "short")],
                config::MCP_OAUTH_ENCRYPTION_KEY,
            ),
            (
                &[(config::MCP_OAUTH_PROVIDER, "saml")],
                config::MCP_OAUTH_PROVIDER,
            ),
            (
                &[(config::MCP_OAUTH_ALLOWED_GROUPS, " , ")],
                config::MCP_OAUTH_ALLOWED_USERS,
            ),
            (
                &[(config::MCP_OAUTH_PROVIDER, "oidc")],
                config::MCP_OAUTH_OIDC_AUTHORIZATION_URL,
            ),
            (
                &[(config::MCP_OAUTH_GITHUB_URL, "http://127.0.0.1:9")],
                config::MCP_OAUTH_GITHUB_URL,
            ),
            (
                &[(config::MCP_OAUTH_GITHUB_URL, "https://ghe.example.com")],
                config::MCP_OAUTH_GITHUB_URL,
            ),
        ];
        for (extra, setting) in cases {
            let err = read(&github(extra)).expect_err(setting);
            assert_eq!(err.setting, *setting, "{extra:?}: {err}");
            assert!(!err.to_string().contains(KEY));
        }
    }

    #[test]
    fn a_local_issuer_admits_loopback_endpoints() {
        let s = read(&github(&[
            (config::MCP_OAUTH_ISSUER, "http://127.0.0.1:8787"),
            (config::MCP_OAUTH_GITHUB_URL, "http://127.0.0.1:9"),
            (config::GITHUB_API_URL, "http://127.0.0.1:9"),
        ]))
        .unwrap()
        .unwrap();
        assert!(s.local);
        assert!(
            matches!(s.provider, Provider::GitHub { ref web_url, .. } if web_url == "http://127.0.0.1:9")
        );
    }

    /// What is checked is what is used: each URL setting as the WHATWG parser (and so `fetch`)
    /// reads it, not as written.
    #[test]
    fn url_settings_are_used_as_the_parser_reads_them() {
        assert_eq!(
            issuer("https://MCP.Example.com:443/").as_deref(),
            Ok("https://mcp.example.com")
        );
        assert_eq!(
            endpoint_url("https://IdP.example/Token?x=1", false).as_deref(),
            Ok("https://idp.example/Token?x=1")
        );
        assert_eq!(
            endpoint_url("https://idp.example\\token", false).as_deref(),
            Ok("https://idp.example/token")
        );
        assert_eq!(
            endpoint_url("http://127.0.0.1:9/", true).as_deref(),
            Ok("http://127.0.0.1:9")
        );
        // Not loopback as fetch reads them (`*.localhost` names no address fetch knows).
        for text in [
            "http://a.localhost:9",
            "http://localhost..:9",
            "http://127.0.0.1.evil.example",
        ] {
            assert!(endpoint_url(text, true).is_err(), "{text}");
            assert!(issuer(text).is_err(), "{text}");
        }
        assert!(matches!(
            issuer("https://u:p@mcp.example.com"),
            Err(BadSetting::NotAnOrigin(_))
        ));
        assert!(matches!(
            endpoint_url("https://u@idp.example/t", false),
            Err(BadSetting::Endpoint(_))
        ));
    }

    #[test]
    fn atlassian_app_settings() {
        assert_eq!(read(&github(&[])).unwrap().unwrap().atlassian, None);
        let app = read(&github(&[
            (config::MCP_OAUTH_ATLASSIAN_CLIENT_ID, "atl-id"),
            (config::MCP_OAUTH_ATLASSIAN_CLIENT_SECRET, "atl-shh"),
            (config::ATLASSIAN_SITE_NAME, "acme"),
        ]))
        .unwrap()
        .unwrap()
        .atlassian
        .unwrap();
        assert_eq!(app.client_id, "atl-id");
        assert_eq!(app.auth_url, ATLASSIAN_AUTH_DEFAULT);
        assert_eq!(app.api_url, ATLASSIAN_API_DEFAULT);
        assert_eq!(app.site_url, "https://acme.atlassian.net");
        assert!(app.scopes.split(' ').any(|s| s == "offline_access"));
        assert!(app.scopes.split(' ').all(|s| !s.starts_with("write:")));
        assert!(!format!("{app:?}").contains("atl-shh"), "secret in Debug");
        let local = read(&github(&[
            (config::MCP_OAUTH_ISSUER, "http://127.0.0.1:8787"),
            (config::MCP_OAUTH_GITHUB_URL, "http://127.0.0.1:9"),
            (config::GITHUB_API_URL, "http://127.0.0.1:9"),
            (config::MCP_OAUTH_ATLASSIAN_CLIENT_ID, "atl-id"),
            (config::MCP_OAUTH_ATLASSIAN_CLIENT_SECRET, "atl-shh"),
            (config::ATLASSIAN_BASE_URL, "http://127.0.0.1:9"),
            (config::MCP_OAUTH_ATLASSIAN_AUTH_URL, "http://127.0.0.1:9/"),
            (config::MCP_OAUTH_ATLASSIAN_API_URL, "http://localhost:9"),
            (config::MCP_OAUTH_ATLASSIAN_SCOPES, " read:jira-work "),
        ]))
        .unwrap()
        .unwrap()
        .atlassian
        .unwrap();
        assert_eq!(local.auth_url, "http://127.0.0.1:9");
        assert_eq!(local.scopes, "read:jira-work");
    }

    #[test]
    fn every_atlassian_problem_names_its_setting() {
        let app = [
            (config::MCP_OAUTH_ATLASSIAN_CLIENT_ID, "atl-id"),
            (config::MCP_OAUTH_ATLASSIAN_CLIENT_SECRET, "atl-shh"),
            (config::ATLASSIAN_SITE_NAME, "acme"),
        ];
        let cases: &[(&[(&str, &str)], &str)] = &[
            (
                &[(config::MCP_OAUTH_ATLASSIAN_CLIENT_SECRET, "")],
                config::MCP_OAUTH_ATLASSIAN_CLIENT_SECRET,
            ),
            (
                &[(config::ATLASSIAN_SITE_NAME, "")],
                config::MCP_OAUTH_ATLASSIAN_CLIENT_ID,
            ),
            (
                &[(config::MCP_OAUTH_ATLASSIAN_AUTH_URL, "http://127.0.0.1:9")],
                config::MCP_OAUTH_ATLASSIAN_AUTH_URL,
            ),
            (
                &[(config::MCP_OAUTH_ATLASSIAN_API_URL, "http://api.example")],
                config::MCP_OAUTH_ATLASSIAN_API_URL,
            ),
        ];
        for (extra, setting) in cases {
            let mut pairs = github(&app);
            for (k, v) in extra.iter() {
                pairs.retain(|(name, _)| name != k);
                if !v.is_empty() {
                    pairs.push((k, v));
                }
            }
            let err = read(&pairs).expect_err(setting);
            assert_eq!(err.setting, *setting, "{extra:?}: {err}");
            assert!(!err.to_string().contains("atl-shh"));
        }
    }

    #[test]
    fn github_roots_agree_on_one_host() {
        assert!(github_roots_agree(
            "https://github.com",
            "https://api.github.com"
        ));
        assert!(github_roots_agree(
            "https://ghe.example.com",
            "https://GHE.example.com/api/v3"
        ));
        assert!(!github_roots_agree(
            "https://github.com",
            "https://ghe.example.com/api/v3"
        ));
        assert!(!github_roots_agree(
            "https://ghe.example.com",
            "https://api.github.com"
        ));
    }

    #[test]
    fn allow_list_matches_verified_aliases_groups_and_domains() {
        let allow = AllowList {
            users: vec!["Alice".into(), "github~9".into()],
            groups: vec!["acme".into(), "oidc:Eng".into()],
            domains: vec!["example.com".into()],
            static_names: vec!["ci".into()],
        };
        let attrs = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert!(allow.admits("github~1", &attrs(&["login:alice"]), None));
        assert!(allow.admits("github~9", &[], None));
        assert!(allow.admits("github~2", &attrs(&["github:ACME"]), None));
        assert!(allow.admits("oidc~x", &attrs(&["oidc:acme"]), None));
        assert!(allow.admits("oidc~x", &attrs(&["oidc:eng"]), None));
        assert!(allow.admits("oidc~x", &attrs(&["email:carol@Example.com"]), None));
        assert!(allow.admits("oidc~x", &[], Some("carol@example.com")));
        // A name the person chose is not an alias: only the namespaced, verified ones count.
        assert!(!allow.admits("github~3", &attrs(&["alice", "acme"]), None));
        assert!(!allow.admits("oidc~x", &attrs(&["email:c@example.com.evil"]), None));
        assert!(!allow.admits("github~4", &attrs(&["login:mallory", "github:other"]), None));
        // A login that is a static token's principal name is refused, even in the allow-list.
        assert!(!allow.admits("github~5", &attrs(&["login:CI", "github:acme"]), None));
    }

    #[test]
    fn only_sub_or_a_verified_email_names_an_oidc_principal() {
        let oidc = |claim: Option<&'static str>| {
            let mut extra = vec![
                (config::MCP_OAUTH_PROVIDER, "oidc"),
                (
                    config::MCP_OAUTH_OIDC_AUTHORIZATION_URL,
                    "https://idp.example/auth",
                ),
                (
                    config::MCP_OAUTH_OIDC_TOKEN_URL,
                    "https://idp.example/token",
                ),
                (
                    config::MCP_OAUTH_OIDC_USERINFO_URL,
                    "https://idp.example/userinfo",
                ),
            ];
            extra.extend(claim.map(|c| (config::MCP_OAUTH_PRINCIPAL_CLAIM, c)));
            read(&github(&extra)).map(|s| match s.unwrap().provider {
                Provider::Oidc(o) => o.principal_claim,
                other => panic!("{other:?}"),
            })
        };
        assert_eq!(oidc(None).unwrap(), PrincipalClaim::Subject);
        assert_eq!(oidc(Some("sub")).unwrap(), PrincipalClaim::Subject);
        assert_eq!(oidc(Some("email")).unwrap(), PrincipalClaim::VerifiedEmail);
        for claim in ["preferred_username", "name"] {
            let err = oidc(Some(claim)).unwrap_err();
            assert_eq!(err.setting, config::MCP_OAUTH_PRINCIPAL_CLAIM, "{claim}");
        }
    }

    #[test]
    fn operators_list_redirect_schemes_but_never_a_browser_one() {
        let schemes = |text: &'static str| {
            read(&github(&[(config::MCP_OAUTH_REDIRECT_SCHEMES, text)]))
                .map(|s| s.unwrap().redirect_schemes)
        };
        assert_eq!(schemes("cursor").unwrap(), ["cursor"]);
        assert!(read(&github(&[]))
            .unwrap()
            .unwrap()
            .redirect_schemes
            .is_empty());
        let err = schemes("cursor, microsoft-edge").unwrap_err();
        assert_eq!(err.setting, config::MCP_OAUTH_REDIRECT_SCHEMES);
        assert!(err.to_string().contains("microsoft-edge"), "{err}");
    }

    #[test]
    fn access_tokens_live_at_most_an_hour() {
        let s = read(&github(&[(config::MCP_OAUTH_ACCESS_TTL_SECONDS, "86400")]))
            .unwrap()
            .unwrap();
        assert_eq!(s.access_ttl_seconds, 3_600);
    }
}
