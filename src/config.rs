//! The composition root: reads the worker's settings (vars and secrets, looked up by name
//! through a closure) once per isolate and hands each module its own settings type
//! ([`ToolSettings`], [`UpstreamSettings`], [`PolicySettings`]). Nothing below imports
//! [`Config`]. Every error names the setting; numeric settings with a range are clamped into it;
//! an unparsable value is an error, never a silent default.

use crate::auth::{BadTokenTable, TokenTable};
use crate::memory::DEFAULT_BUDGET_BYTES;
use crate::oauth::settings::{
    self as oauth, AllowList, AtlassianApp, GrantKey, OAuthSettings, OidcProvider, PrincipalClaim,
    Provider, ATLASSIAN_API_DEFAULT, ATLASSIAN_AUTH_DEFAULT, ATLASSIAN_SCOPES_DEFAULT,
    DEFAULT_ACCESS_TTL_SECONDS, DEFAULT_REFRESH_TTL_SECONDS, GITHUB_WEB_DEFAULT,
    MIN_ENCRYPTION_KEY_LEN,
};
use crate::oauth::url::BadScheme;
use crate::policy::PolicySettings;
use crate::ports::KV_MAX_KEY_BYTES;
use crate::tools::registry::{
    ToolSettings, DEFAULT_ARTIFACT_RETENTION_SECONDS, DEFAULT_CACHE_TTL_SECONDS,
    DEFAULT_STRUCTURED_MAX_BYTES, DEFAULT_TEXT_MAX_CHARS,
};
use crate::upstream::hosts::{BadLogHosts, LogHosts};
use crate::upstream::vendor::{
    base_url, site_url, AccessToken, BadRoot, Flavor, Secret, SelfHosted, UpstreamSettings, Vendor,
    BITBUCKET_DEFAULT_URL, CIRCLECI_DEFAULT_URL, DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_MS,
    GITHUB_DEFAULT_URL,
};
use std::fmt;

/// Bearer tokens per principal (a secret): JSON object, name -> token or list of tokens.
pub(crate) const MCP_AUTH_TOKENS: &str = "MCP_AUTH_TOKENS";
/// Comma-separated origins allowed to send an `Origin` header.
pub(crate) const MCP_ALLOWED_ORIGINS: &str = "MCP_ALLOWED_ORIGINS";
/// `true` admits requests without `Authorization` from a loopback host as the anonymous principal.
pub(crate) const MCP_ALLOW_ANONYMOUS: &str = "MCP_ALLOW_ANONYMOUS";
/// The largest text a tool result may carry, in UTF-16 code units.
pub(crate) const MCP_TEXT_MAX_CHARS: &str = "MCP_TEXT_MAX_CHARS";
/// How long cached upstream GET responses live.
pub(crate) const HTTP_CACHE_TTL_SECONDS: &str = "HTTP_CACHE_TTL_SECONDS";
/// How long one upstream request may take.
pub(crate) const UPSTREAM_TIMEOUT_MS: &str = "UPSTREAM_TIMEOUT_MS";
/// The largest upstream response body read, in bytes.
pub(crate) const UPSTREAM_MAX_BYTES: &str = "UPSTREAM_MAX_BYTES";
/// The isolate's memory budget for large upstream bodies, in bytes of memory.
pub(crate) const MEMORY_BUDGET_BYTES: &str = "MEMORY_BUDGET_BYTES";
/// How long a saved artifact stays readable through `artifact_read`.
pub(crate) const STREAMING_ARTIFACT_RETENTION_SECONDS: &str =
    "STREAMING_ARTIFACT_RETENTION_SECONDS";
/// `true` makes the six schema tools advertise `outputSchema` and return `structuredContent`.
pub(crate) const MCP_STRUCTURED_OUTPUT: &str = "MCP_STRUCTURED_OUTPUT";
/// The largest serialized `structuredContent` value, in bytes; larger goes to an artifact.
pub(crate) const MCP_STRUCTURED_MAX_BYTES: &str = "MCP_STRUCTURED_MAX_BYTES";
/// The enterprise policy document (JSON), a var or secret; see docs/policy.md.
pub(crate) const MCP_POLICY: &str = "MCP_POLICY";
/// The key of the policy document in the `POLICY` KV namespace.
pub(crate) const MCP_POLICY_KV_KEY: &str = "MCP_POLICY_KV_KEY";
/// How long an approval request (pending or approved) lives.
pub(crate) const MCP_APPROVAL_TTL_SECONDS: &str = "MCP_APPROVAL_TTL_SECONDS";
/// The most bytes of approval records the approval ledger holds.
pub(crate) const MCP_APPROVAL_LEDGER_MAX_BYTES: &str = "MCP_APPROVAL_LEDGER_MAX_BYTES";
/// `true` leaves out of `tools/list` the tools the policy denies a principal every call of.
pub(crate) const MCP_POLICY_HIDE_UNUSABLE_TOOLS: &str = "MCP_POLICY_HIDE_UNUSABLE_TOOLS";
/// GitHub token (a secret).
pub(crate) const GITHUB_TOKEN: &str = "GITHUB_TOKEN";
/// GitHub API root (GitHub Enterprise, tests).
pub(crate) const GITHUB_API_URL: &str = "GITHUB_API_URL";
/// CircleCI personal API token (a secret), sent as `Circle-Token`.
pub(crate) const CIRCLECI_TOKEN: &str = "CIRCLECI_TOKEN";
/// CircleCI API root.
pub(crate) const CIRCLECI_API_URL: &str = "CIRCLECI_API_URL";
/// The API Jira and Confluence speak: `cloud` (default) or `datacenter`.
pub(crate) const ATLASSIAN_FLAVOR: &str = "ATLASSIAN_FLAVOR";
/// Jira Data Center's root, with its context path (`datacenter` only).
pub(crate) const JIRA_BASE_URL: &str = "JIRA_BASE_URL";
/// A Jira Data Center personal access token (a secret), sent as a bearer token.
pub(crate) const JIRA_PERSONAL_TOKEN: &str = "JIRA_PERSONAL_TOKEN";
/// A Jira Data Center user name (a secret): with it the token goes as Basic.
pub(crate) const JIRA_USERNAME: &str = "JIRA_USERNAME";
/// Confluence Data Center's root, with its context path (`datacenter` only).
pub(crate) const CONFLUENCE_BASE_URL: &str = "CONFLUENCE_BASE_URL";
/// A Confluence Data Center personal access token (a secret), sent as a bearer token.
pub(crate) const CONFLUENCE_PERSONAL_TOKEN: &str = "CONFLUENCE_PERSONAL_TOKEN";
/// A Confluence Data Center user name (a secret): with it the token goes as Basic.
pub(crate) const CONFLUENCE_USERNAME: &str = "CONFLUENCE_USERNAME";
/// Cloudflare Access service token in front of Jira Data Center: its client id (a secret).
pub(crate) const JIRA_CF_ACCESS_CLIENT_ID: &str = "JIRA_CF_ACCESS_CLIENT_ID";
/// Its client secret (a secret).
pub(crate) const JIRA_CF_ACCESS_CLIENT_SECRET: &str = "JIRA_CF_ACCESS_CLIENT_SECRET";
/// Cloudflare Access service token in front of Confluence Data Center: its client id.
pub(crate) const CONFLUENCE_CF_ACCESS_CLIENT_ID: &str = "CONFLUENCE_CF_ACCESS_CLIENT_ID";
/// Its client secret (a secret).
pub(crate) const CONFLUENCE_CF_ACCESS_CLIENT_SECRET: &str = "CONFLUENCE_CF_ACCESS_CLIENT_SECRET";
/// Cloudflare Access service token in front of GitHub Enterprise Server: its client id.
pub(crate) const GITHUB_CF_ACCESS_CLIENT_ID: &str = "GITHUB_CF_ACCESS_CLIENT_ID";
/// Its client secret (a secret).
pub(crate) const GITHUB_CF_ACCESS_CLIENT_SECRET: &str = "GITHUB_CF_ACCESS_CLIENT_SECRET";
/// Atlassian Cloud site name: `https://{site}.atlassian.net` for Jira and Confluence.
pub(crate) const ATLASSIAN_SITE_NAME: &str = "ATLASSIAN_SITE_NAME";
/// Jira and Confluence root, overriding the site name (Data Center, tests).
pub(crate) const ATLASSIAN_BASE_URL: &str = "ATLASSIAN_BASE_URL";
/// Atlassian account e-mail (a secret), half of the Basic credential.
pub(crate) const ATLASSIAN_USER_EMAIL: &str = "ATLASSIAN_USER_EMAIL";
/// Atlassian API token (a secret), the other half.
pub(crate) const ATLASSIAN_API_TOKEN: &str = "ATLASSIAN_API_TOKEN";
/// Bitbucket username (a secret), used when the Atlassian pair is not set.
pub(crate) const ATLASSIAN_BITBUCKET_USERNAME: &str = "ATLASSIAN_BITBUCKET_USERNAME";
/// Bitbucket app password (a secret).
pub(crate) const ATLASSIAN_BITBUCKET_APP_PASSWORD: &str = "ATLASSIAN_BITBUCKET_APP_PASSWORD";
/// Bitbucket API host (paths get `/2.0`).
pub(crate) const BITBUCKET_API_URL: &str = "BITBUCKET_API_URL";
/// The API Bitbucket speaks: `cloud` (default) or `datacenter`.
pub(crate) const BITBUCKET_FLAVOR: &str = "BITBUCKET_FLAVOR";
/// Bitbucket Data Center's root, with its context path (`datacenter` only).
pub(crate) const BITBUCKET_BASE_URL: &str = "BITBUCKET_BASE_URL";
/// A Bitbucket Data Center HTTP access token (a secret), sent as a bearer token.
pub(crate) const BITBUCKET_PERSONAL_TOKEN: &str = "BITBUCKET_PERSONAL_TOKEN";
/// A Bitbucket Data Center user name (a secret): with it the token goes as Basic.
pub(crate) const BITBUCKET_USERNAME: &str = "BITBUCKET_USERNAME";
/// Cloudflare Access service token in front of Bitbucket Data Center: its client id.
pub(crate) const BITBUCKET_CF_ACCESS_CLIENT_ID: &str = "BITBUCKET_CF_ACCESS_CLIENT_ID";
/// Its client secret (a secret).
pub(crate) const BITBUCKET_CF_ACCESS_CLIENT_SECRET: &str = "BITBUCKET_CF_ACCESS_CLIENT_SECRET";
/// This server's public origin; setting it turns OAuth sign-in on (docs/configuration.md).
pub(crate) const MCP_OAUTH_ISSUER: &str = "MCP_OAUTH_ISSUER";
/// The secret that seals what a grant carries (a secret, at least 32 characters).
pub(crate) const MCP_OAUTH_ENCRYPTION_KEY: &str = "MCP_OAUTH_ENCRYPTION_KEY";
/// The identity provider: `github` or `oidc`.
pub(crate) const MCP_OAUTH_PROVIDER: &str = "MCP_OAUTH_PROVIDER";
/// This server's client id at the identity provider.
pub(crate) const MCP_OAUTH_CLIENT_ID: &str = "MCP_OAUTH_CLIENT_ID";
/// This server's client secret at the identity provider (a secret).
pub(crate) const MCP_OAUTH_CLIENT_SECRET: &str = "MCP_OAUTH_CLIENT_SECRET";
/// GitHub's web root for sign-in (GitHub Enterprise, tests).
pub(crate) const MCP_OAUTH_GITHUB_URL: &str = "MCP_OAUTH_GITHUB_URL";
/// The OpenID Connect provider's authorization endpoint.
pub(crate) const MCP_OAUTH_OIDC_AUTHORIZATION_URL: &str = "MCP_OAUTH_OIDC_AUTHORIZATION_URL";
/// The OpenID Connect provider's token endpoint.
pub(crate) const MCP_OAUTH_OIDC_TOKEN_URL: &str = "MCP_OAUTH_OIDC_TOKEN_URL";
/// The OpenID Connect provider's userinfo endpoint.
pub(crate) const MCP_OAUTH_OIDC_USERINFO_URL: &str = "MCP_OAUTH_OIDC_USERINFO_URL";
/// The scopes requested from the OpenID Connect provider.
pub(crate) const MCP_OAUTH_OIDC_SCOPES: &str = "MCP_OAUTH_OIDC_SCOPES";
/// What names an OpenID Connect principal: `sub` (default) or `email` (verified only).
pub(crate) const MCP_OAUTH_PRINCIPAL_CLAIM: &str = "MCP_OAUTH_PRINCIPAL_CLAIM";
/// The OpenID Connect claim listing the person's groups.
pub(crate) const MCP_OAUTH_GROUPS_CLAIM: &str = "MCP_OAUTH_GROUPS_CLAIM";
/// Who may sign in: principal names.
pub(crate) const MCP_OAUTH_ALLOWED_USERS: &str = "MCP_OAUTH_ALLOWED_USERS";
/// Who may sign in: GitHub organisations or OIDC groups.
pub(crate) const MCP_OAUTH_ALLOWED_GROUPS: &str = "MCP_OAUTH_ALLOWED_GROUPS";
/// Who may sign in: e-mail domains.
pub(crate) const MCP_OAUTH_ALLOWED_DOMAINS: &str = "MCP_OAUTH_ALLOWED_DOMAINS";
/// Access token lifetime.
pub(crate) const MCP_OAUTH_ACCESS_TTL_SECONDS: &str = "MCP_OAUTH_ACCESS_TTL_SECONDS";
/// Refresh token lifetime.
pub(crate) const MCP_OAUTH_REFRESH_TTL_SECONDS: &str = "MCP_OAUTH_REFRESH_TTL_SECONDS";
/// Private-use redirect schemes allowed although not in reverse-domain form (`cursor`).
pub(crate) const MCP_OAUTH_REDIRECT_SCHEMES: &str = "MCP_OAUTH_REDIRECT_SCHEMES";
/// Atlassian OAuth 2.0 (3LO) app's client id; setting it chains Atlassian consent to sign-in.
pub(crate) const MCP_OAUTH_ATLASSIAN_CLIENT_ID: &str = "MCP_OAUTH_ATLASSIAN_CLIENT_ID";
/// That app's client secret (a secret).
pub(crate) const MCP_OAUTH_ATLASSIAN_CLIENT_SECRET: &str = "MCP_OAUTH_ATLASSIAN_CLIENT_SECRET";
/// The Atlassian scopes requested (space-separated).
pub(crate) const MCP_OAUTH_ATLASSIAN_SCOPES: &str = "MCP_OAUTH_ATLASSIAN_SCOPES";
/// Atlassian's authorization server root (tests).
pub(crate) const MCP_OAUTH_ATLASSIAN_AUTH_URL: &str = "MCP_OAUTH_ATLASSIAN_AUTH_URL";
/// Atlassian's API gateway root (tests).
pub(crate) const MCP_OAUTH_ATLASSIAN_API_URL: &str = "MCP_OAUTH_ATLASSIAN_API_URL";
/// Comma-separated hosts job logs may be downloaded from (the vendors' signed URLs).
pub(crate) const LOG_REDIRECT_HOSTS: &str = "LOG_REDIRECT_HOSTS";

/// Every setting this module reads, for documentation checks and diagnostics.
pub const SETTINGS: &[&str] = &[
    MCP_AUTH_TOKENS,
    MCP_ALLOWED_ORIGINS,
    MCP_ALLOW_ANONYMOUS,
    MCP_TEXT_MAX_CHARS,
    HTTP_CACHE_TTL_SECONDS,
    UPSTREAM_TIMEOUT_MS,
    UPSTREAM_MAX_BYTES,
    MEMORY_BUDGET_BYTES,
    STREAMING_ARTIFACT_RETENTION_SECONDS,
    MCP_STRUCTURED_OUTPUT,
    MCP_STRUCTURED_MAX_BYTES,
    MCP_POLICY,
    MCP_POLICY_KV_KEY,
    MCP_APPROVAL_TTL_SECONDS,
    MCP_APPROVAL_LEDGER_MAX_BYTES,
    MCP_POLICY_HIDE_UNUSABLE_TOOLS,
    GITHUB_TOKEN,
    GITHUB_API_URL,
    CIRCLECI_TOKEN,
    CIRCLECI_API_URL,
    ATLASSIAN_FLAVOR,
    ATLASSIAN_SITE_NAME,
    ATLASSIAN_BASE_URL,
    ATLASSIAN_USER_EMAIL,
    ATLASSIAN_API_TOKEN,
    ATLASSIAN_BITBUCKET_USERNAME,
    ATLASSIAN_BITBUCKET_APP_PASSWORD,
    BITBUCKET_API_URL,
    BITBUCKET_FLAVOR,
    BITBUCKET_BASE_URL,
    BITBUCKET_PERSONAL_TOKEN,
    BITBUCKET_USERNAME,
    BITBUCKET_CF_ACCESS_CLIENT_ID,
    BITBUCKET_CF_ACCESS_CLIENT_SECRET,
    JIRA_BASE_URL,
    JIRA_PERSONAL_TOKEN,
    JIRA_USERNAME,
    CONFLUENCE_BASE_URL,
    CONFLUENCE_PERSONAL_TOKEN,
    CONFLUENCE_USERNAME,
    JIRA_CF_ACCESS_CLIENT_ID,
    JIRA_CF_ACCESS_CLIENT_SECRET,
    CONFLUENCE_CF_ACCESS_CLIENT_ID,
    CONFLUENCE_CF_ACCESS_CLIENT_SECRET,
    GITHUB_CF_ACCESS_CLIENT_ID,
    GITHUB_CF_ACCESS_CLIENT_SECRET,
    MCP_OAUTH_ISSUER,
    MCP_OAUTH_ENCRYPTION_KEY,
    MCP_OAUTH_PROVIDER,
    MCP_OAUTH_CLIENT_ID,
    MCP_OAUTH_CLIENT_SECRET,
    MCP_OAUTH_GITHUB_URL,
    MCP_OAUTH_OIDC_AUTHORIZATION_URL,
    MCP_OAUTH_OIDC_TOKEN_URL,
    MCP_OAUTH_OIDC_USERINFO_URL,
    MCP_OAUTH_OIDC_SCOPES,
    MCP_OAUTH_PRINCIPAL_CLAIM,
    MCP_OAUTH_GROUPS_CLAIM,
    MCP_OAUTH_ALLOWED_USERS,
    MCP_OAUTH_ALLOWED_GROUPS,
    MCP_OAUTH_ALLOWED_DOMAINS,
    MCP_OAUTH_ACCESS_TTL_SECONDS,
    MCP_OAUTH_REFRESH_TTL_SECONDS,
    MCP_OAUTH_REDIRECT_SCHEMES,
    MCP_OAUTH_ATLASSIAN_CLIENT_ID,
    MCP_OAUTH_ATLASSIAN_CLIENT_SECRET,
    MCP_OAUTH_ATLASSIAN_SCOPES,
    MCP_OAUTH_ATLASSIAN_AUTH_URL,
    MCP_OAUTH_ATLASSIAN_API_URL,
    LOG_REDIRECT_HOSTS,
];

/// An integer setting's default and the range values are clamped into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Used when the setting is absent or empty.
    pub default: u64,
    /// The smallest value kept.
    pub min: u64,
    /// The largest value kept.
    pub max: u64,
}

/// `MCP_TEXT_MAX_CHARS`: default 40 000, clamped to 1 000..=1 000 000.
pub const TEXT_MAX_CHARS: Bounds = Bounds {
    default: DEFAULT_TEXT_MAX_CHARS as u64,
    min: 1_000,
    max: 1_000_000,
};
/// `HTTP_CACHE_TTL_SECONDS`: default 60 (Workers KV's minimum TTL), clamped to 60..=86 400.
pub const CACHE_TTL_SECONDS: Bounds = Bounds {
    default: DEFAULT_CACHE_TTL_SECONDS,
    min: 60,
    max: 86_400,
};
/// `UPSTREAM_TIMEOUT_MS`: default 30 000 (the reference servers' timeout), clamped to
/// 1 000..=60 000.
pub const TIMEOUT_MS: Bounds = Bounds {
    default: DEFAULT_TIMEOUT_MS,
    min: 1_000,
    max: 60_000,
};
/// `UPSTREAM_MAX_BYTES`: default 16 MiB, clamped to 64 KiB..=100 MiB (a Worker has 128 MB of
/// memory, and a body is counted at twice its size while its call runs; docs/configuration.md
/// has the arithmetic).
pub const MAX_BYTES: Bounds = Bounds {
    default: DEFAULT_MAX_BYTES as u64,
    min: 64 * 1024,
    max: 100 * 1024 * 1024,
};
/// `MEMORY_BUDGET_BYTES`: default 72 MiB, clamped to 1 MiB..=100 MiB (docs/configuration.md
/// has the arithmetic).
pub const MEMORY_BUDGET: Bounds = Bounds {
    default: DEFAULT_BUDGET_BYTES as u64,
    min: 1024 * 1024,
    max: 100 * 1024 * 1024,
};

/// `STREAMING_ARTIFACT_RETENTION_SECONDS`: default one hour, clamped to 5 minutes..=7 days.
pub(crate) const ARTIFACT_RETENTION_SECONDS: Bounds = Bounds {
    default: DEFAULT_ARTIFACT_RETENTION_SECONDS,
    min: 300,
    max: 604_800,
};

/// `MCP_STRUCTURED_MAX_BYTES`: default 256 KiB, clamped to 16 KiB..=16 MiB.
pub const STRUCTURED_MAX_BYTES: Bounds = Bounds {
    default: DEFAULT_STRUCTURED_MAX_BYTES as u64,
    min: 16 * 1024,
    max: 16 * 1024 * 1024,
};

/// `MCP_APPROVAL_TTL_SECONDS`: default one hour, clamped to 60 (KV's minimum TTL)..=86 400.
pub(crate) const APPROVAL_TTL_SECONDS: Bounds = Bounds {
    default: 3_600,
    min: 60,
    max: 86_400,
};

/// `MCP_APPROVAL_LEDGER_MAX_BYTES`: default 8 MiB, accepted from 64 KiB (four of the largest
/// records) to 64 MiB (half the memory of the object's isolate); a value outside is an error,
/// not clamped, since it sizes what a Durable Object holds.
pub const APPROVAL_LEDGER_MAX_BYTES: Bounds = Bounds {
    default: crate::ledger::DEFAULT_LEDGER_MAX_BYTES as u64,
    min: 64 * 1024,
    max: 64 * 1024 * 1024,
};

/// `MCP_OAUTH_ACCESS_TTL_SECONDS`: default one hour, clamped to 5 minutes..=1 hour. An access
/// token outlives a person's removal from the allow-list or an organisation by up to this long,
/// since only a refresh asks the identity provider again.
pub(crate) const OAUTH_ACCESS_TTL_SECONDS: Bounds = Bounds {
    default: DEFAULT_ACCESS_TTL_SECONDS,
    min: 300,
    max: 3_600,
};

/// `MCP_OAUTH_REFRESH_TTL_SECONDS`: default 30 days, clamped to 1 hour..=90 days.
pub(crate) const OAUTH_REFRESH_TTL_SECONDS: Bounds = Bounds {
    default: DEFAULT_REFRESH_TTL_SECONDS,
    min: 3_600,
    max: 90 * 86_400,
};

/// The server's settings, typed: the HTTP face's own, and each module's settings type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Principals and their bearer tokens; empty means every request is refused.
    pub auth_tokens: TokenTable,
    /// Origins (`scheme://host[:port]`, lower case, no trailing slash) allowed in `Origin`.
    pub allowed_origins: Vec<String>,
    /// Whether a loopback request without credentials runs as the anonymous principal.
    pub allow_anonymous: bool,
    /// What the tools read: text limit, cache TTL, artifact retention, structured output.
    pub tools: ToolSettings,
    /// Vendor base URLs, credentials, timeout and body limit.
    pub upstream: UpstreamSettings,
    /// Where the enterprise policy is, and the approval TTL.
    pub(crate) policy: PolicySettings,
    /// The isolate's memory budget for large upstream bodies, in bytes of memory.
    pub(crate) memory_budget_bytes: usize,
    /// OAuth sign-in, when `MCP_OAUTH_ISSUER` is set.
    pub oauth: Option<OAuthSettings>,
    /// Settings that were out of range and clamped: (name, value given, value used).
    pub clamped: Vec<(&'static str, String, u64)>,
}

impl Default for Config {
    /// Every setting at its built-in default (no tokens, so nobody is admitted).
    fn default() -> Config {
        Config {
            auth_tokens: TokenTable::default(),
            allowed_origins: Vec::new(),
            allow_anonymous: false,
            tools: ToolSettings::default(),
            upstream: UpstreamSettings::default(),
            policy: PolicySettings {
                approval_ttl_seconds: APPROVAL_TTL_SECONDS.default,
                ledger_max_bytes: crate::ledger::DEFAULT_LEDGER_MAX_BYTES,
                ..PolicySettings::default()
            },
            memory_budget_bytes: DEFAULT_BUDGET_BYTES,
            oauth: None,
            clamped: Vec::new(),
        }
    }
}

/// A setting whose value cannot be used. The message names the setting and never quotes a
/// secret's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The setting's name.
    pub(crate) setting: &'static str,
    /// What is wrong with it.
    pub(crate) reason: Reason,
}

impl ConfigError {
    /// `setting` refused for `reason`.
    fn new(setting: &'static str, reason: Reason) -> ConfigError {
        ConfigError { setting, reason }
    }

    /// `setting` refused by a rule of the settings themselves, which `text` states.
    fn rule(setting: &'static str, text: impl Into<String>) -> ConfigError {
        ConfigError::new(setting, Reason::Rule(text.into()))
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "setting {} is invalid: {}", self.setting, self.reason)
    }
}

/// What is wrong with a setting: the error of the reader that refused its text, classified by
/// the layer that reads it, or a rule of this module's own. Its `Display` is the text the
/// operator reads, written only where a [`ConfigError`] is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// `MCP_AUTH_TOKENS`.
    Tokens(BadTokenTable),
    /// An entry of `MCP_ALLOWED_ORIGINS` that is not an origin, as given.
    Origin(BadOrigin),
    /// A vendor's base URL or Atlassian site.
    Root(BadRoot),
    /// `LOG_REDIRECT_HOSTS`.
    LogHosts(BadLogHosts),
    /// An OAuth issuer, endpoint or principal claim.
    OAuth(oauth::BadSetting),
    /// `MCP_OAUTH_REDIRECT_SCHEMES`.
    Scheme(BadScheme),
    /// A rule of the settings themselves: a flag, a number and its range, settings that go
    /// together.
    Rule(String),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Tokens(e) => e.fmt(f),
            Reason::Origin(e) => e.fmt(f),
            Reason::Root(e) => e.fmt(f),
            Reason::LogHosts(e) => e.fmt(f),
            Reason::OAuth(e) => e.fmt(f),
            Reason::Scheme(e) => e.fmt(f),
            Reason::Rule(text) => f.write_str(text),
        }
    }
}

/// An entry of `MCP_ALLOWED_ORIGINS` that is not an origin, as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BadOrigin(pub String);

impl fmt::Display for BadOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not an origin (expected scheme://host[:port], e.g. https://claude.ai; no \
             paths or wildcards)",
            self.0
        )
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Reads every setting through `settings` (which returns a var's or secret's text by name).
    /// The first invalid setting, in [`SETTINGS`] order, is the error.
    pub fn from_settings(settings: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        // Wrangler writes an unset var as "", so empty and blank mean "use the default".
        let get = |name: &str| settings(name).filter(|v| !v.trim().is_empty());
        let boolean = |setting: &'static str| match get(setting) {
            None => Ok(false),
            Some(text) => parse_bool(&text).ok_or_else(|| {
                ConfigError::rule(
                    setting,
                    format!("expected true or false, got {:?}", text.trim()),
                )
            }),
        };
        let mut config = Config::default();
        if let Some(text) = get(MCP_AUTH_TOKENS) {
            config.auth_tokens = TokenTable::parse(&text)
                .map_err(|reason| ConfigError::new(MCP_AUTH_TOKENS, Reason::Tokens(reason)))?;
        }
        if let Some(text) = get(MCP_ALLOWED_ORIGINS) {
            config.allowed_origins = parse_origins(&text)
                .map_err(|reason| ConfigError::new(MCP_ALLOWED_ORIGINS, Reason::Origin(reason)))?;
        }
        config.allow_anonymous = boolean(MCP_ALLOW_ANONYMOUS)?;
        let mut number = |name: &'static str, bounds: Bounds| {
            read_number(&get, name, bounds, &mut config.clamped)
        };
        let text_max_chars = number(MCP_TEXT_MAX_CHARS, TEXT_MAX_CHARS)?;
        let ttl = number(HTTP_CACHE_TTL_SECONDS, CACHE_TTL_SECONDS)?;
        let timeout = number(UPSTREAM_TIMEOUT_MS, TIMEOUT_MS)?;
        let max_bytes = number(UPSTREAM_MAX_BYTES, MAX_BYTES)?;
        let memory_budget = number(MEMORY_BUDGET_BYTES, MEMORY_BUDGET)?;
        let retention = number(
            STREAMING_ARTIFACT_RETENTION_SECONDS,
            ARTIFACT_RETENTION_SECONDS,
        )?;
        let structured_output = boolean(MCP_STRUCTURED_OUTPUT)?;
        let structured_max_bytes = number(MCP_STRUCTURED_MAX_BYTES, STRUCTURED_MAX_BYTES)?;
        let approval_ttl = number(MCP_APPROVAL_TTL_SECONDS, APPROVAL_TTL_SECONDS)?;
        let ledger_max_bytes = read_in_range(
            &get,
            MCP_APPROVAL_LEDGER_MAX_BYTES,
            APPROVAL_LEDGER_MAX_BYTES,
        )?;
        let mut upstream = upstream_settings(&get)?;
        upstream.timeout_ms = timeout;
        upstream.max_bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        config.upstream = upstream;
        config.memory_budget_bytes = usize::try_from(memory_budget).unwrap_or(usize::MAX);
        // The document itself is checked at each call, so a broken one refuses tool calls
        // (fail closed) while tools/list and the rest of the server keep working.
        let kv_key = get(MCP_POLICY_KV_KEY).map(|k| k.trim().to_owned());
        if let Some(key) = &kv_key {
            if key.len() > KV_MAX_KEY_BYTES {
                return Err(ConfigError::rule(
                    MCP_POLICY_KV_KEY,
                    format!("a KV key is at most {KV_MAX_KEY_BYTES} bytes"),
                ));
            }
        }
        config.policy = PolicySettings {
            document: get(MCP_POLICY),
            kv_key,
            approval_ttl_seconds: approval_ttl,
            ledger_max_bytes: usize::try_from(ledger_max_bytes).unwrap_or(usize::MAX),
            hide_unusable: boolean(MCP_POLICY_HIDE_UNUSABLE_TOOLS)?,
        };
        config.tools = ToolSettings {
            text_max_chars: usize::try_from(text_max_chars).unwrap_or(usize::MAX),
            cache_ttl_seconds: ttl,
            artifact_retention_seconds: retention,
            structured_output,
            structured_max_bytes: usize::try_from(structured_max_bytes).unwrap_or(usize::MAX),
            policy_configured: config.policy.is_configured(),
        };
        let mut clamped = Vec::new();
        config.oauth = oauth_settings(
            &get,
            &mut |name, bounds| read_number(&get, name, bounds, &mut clamped),
            &config.upstream.github_api_url,
            config.upstream.atlassian_base_url.as_deref(),
        )?;
        let data_center = config.upstream.atlassian_flavor == Flavor::DataCenter;
        if data_center && config.oauth.as_ref().is_some_and(|o| o.atlassian.is_some()) {
            return Err(ConfigError::rule(
                MCP_OAUTH_ATLASSIAN_CLIENT_ID,
                format!(
                    "Atlassian's OAuth 2.0 (3LO) apps reach Atlassian Cloud only; with \
                     {ATLASSIAN_FLAVOR}=datacenter leave it unset (Jira and Confluence use \
                     their personal access tokens)"
                ),
            ));
        }
        config.clamped.extend(clamped);
        if let Some(oauth) = config.oauth.as_mut() {
            oauth.allow.static_names = config.auth_tokens.names();
        }
        config.upstream.log_hosts = match get(LOG_REDIRECT_HOSTS) {
            Some(text) => LogHosts::parse(&text)
                .map_err(|reason| ConfigError::new(LOG_REDIRECT_HOSTS, Reason::LogHosts(reason)))?,
            None => LogHosts::default_for(&config.upstream.github_api_url),
        };
        Ok(config)
    }

    /// True when `origin` (an `Origin` header value) is in `MCP_ALLOWED_ORIGINS`.
    pub(crate) fn origin_allowed(&self, origin: &str) -> bool {
        let origin = normalize_origin(origin);
        self.allowed_origins.contains(&origin)
    }
}

/// The vendor base URLs and credentials, read through `get` (which already maps blank values
/// to `None`); the timeout and body limit are left at their defaults.
fn upstream_settings(
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<UpstreamSettings, ConfigError> {
    let secret = |name: &str| get(name).map(|v| Secret::new(v.trim()));
    let url = |name: &'static str, default: &str| -> Result<String, ConfigError> {
        match get(name) {
            Some(text) => {
                base_url(&text).map_err(|reason| ConfigError::new(name, Reason::Root(reason)))
            }
            None => Ok(default.to_owned()),
        }
    };
    let flavor = |name: &'static str| match get(name) {
        None => Ok(Flavor::Cloud),
        Some(text) => Flavor::parse(&text).ok_or_else(|| {
            ConfigError::rule(
                name,
                format!("expected cloud or datacenter, got {:?}", text.trim()),
            )
        }),
    };
    let atlassian_flavor = flavor(ATLASSIAN_FLAVOR)?;
    let (jira_server, confluence_server) = self_hosted(get, atlassian_flavor)?;
    let bitbucket_flavor = flavor(BITBUCKET_FLAVOR)?;
    let bitbucket_server = bitbucket_server(get, bitbucket_flavor)?;
    let atlassian_base_url =
        match get(ATLASSIAN_BASE_URL) {
            Some(text) => Some(
                base_url(&text)
                    .map_err(|reason| ConfigError::new(ATLASSIAN_BASE_URL, Reason::Root(reason)))?,
            ),
            None => match get(ATLASSIAN_SITE_NAME) {
                Some(site) => Some(site_url(site.trim()).map_err(|reason| {
                    ConfigError::new(ATLASSIAN_SITE_NAME, Reason::Root(reason))
                })?),
                None => None,
            },
        };
    Ok(UpstreamSettings {
        github_api_url: url(GITHUB_API_URL, GITHUB_DEFAULT_URL)?,
        github_token: secret(GITHUB_TOKEN),
        circleci_api_url: url(CIRCLECI_API_URL, CIRCLECI_DEFAULT_URL)?,
        circleci_token: secret(CIRCLECI_TOKEN),
        atlassian_base_url,
        atlassian_user_email: secret(ATLASSIAN_USER_EMAIL),
        atlassian_api_token: secret(ATLASSIAN_API_TOKEN),
        bitbucket_api_url: url(BITBUCKET_API_URL, BITBUCKET_DEFAULT_URL)?,
        bitbucket_username: secret(ATLASSIAN_BITBUCKET_USERNAME),
        bitbucket_app_password: secret(ATLASSIAN_BITBUCKET_APP_PASSWORD),
        atlassian_flavor,
        jira_server,
        confluence_server,
        bitbucket_flavor,
        bitbucket_server,
        access: access_tokens(get)?,
        ..UpstreamSettings::default()
    })
}

/// The Cloudflare Access service tokens of the vendors that may sit behind Access: each client id
/// with its secret, or neither.
fn access_tokens(
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(Vendor, AccessToken)>, ConfigError> {
    let mut tokens = Vec::new();
    for (vendor, id, secret) in [
        (
            Vendor::Jira,
            JIRA_CF_ACCESS_CLIENT_ID,
            JIRA_CF_ACCESS_CLIENT_SECRET,
        ),
        (
            Vendor::Confluence,
            CONFLUENCE_CF_ACCESS_CLIENT_ID,
            CONFLUENCE_CF_ACCESS_CLIENT_SECRET,
        ),
        (
            Vendor::Bitbucket,
            BITBUCKET_CF_ACCESS_CLIENT_ID,
            BITBUCKET_CF_ACCESS_CLIENT_SECRET,
        ),
        (
            Vendor::GitHub,
            GITHUB_CF_ACCESS_CLIENT_ID,
            GITHUB_CF_ACCESS_CLIENT_SECRET,
        ),
    ] {
        let read = |name: &str| get(name).map(|v| Secret::new(v.trim()));
        match (read(id), read(secret)) {
            (Some(client_id), Some(client_secret)) => tokens.push((
                vendor,
                AccessToken {
                    client_id,
                    client_secret,
                },
            )),
            (Some(_), None) => {
                return Err(ConfigError::rule(
                    secret,
                    format!("must be set when {id} is set"),
                ))
            }
            (None, Some(_)) => {
                return Err(ConfigError::rule(
                    id,
                    format!("must be set when {secret} is set"),
                ))
            }
            (None, None) => {}
        }
    }
    Ok(tokens)
}

/// Jira's and Confluence's Data Center servers, each from its root, personal access token and
/// optional user name. Settings that belong to the other flavor are an error rather than
/// ignored: a deployment meant for one flavor would otherwise quietly send its requests to
/// the other's API, or nowhere.
fn self_hosted(
    get: &dyn Fn(&str) -> Option<String>,
    flavor: Flavor,
) -> Result<(Option<SelfHosted>, Option<SelfHosted>), ConfigError> {
    const PRODUCTS: [[&str; 3]; 2] = [
        [JIRA_BASE_URL, JIRA_PERSONAL_TOKEN, JIRA_USERNAME],
        [
            CONFLUENCE_BASE_URL,
            CONFLUENCE_PERSONAL_TOKEN,
            CONFLUENCE_USERNAME,
        ],
    ];
    const ACCESS: [&str; 4] = [
        JIRA_CF_ACCESS_CLIENT_ID,
        JIRA_CF_ACCESS_CLIENT_SECRET,
        CONFLUENCE_CF_ACCESS_CLIENT_ID,
        CONFLUENCE_CF_ACCESS_CLIENT_SECRET,
    ];
    if flavor == Flavor::Cloud {
        let mut data_center = PRODUCTS.iter().flatten().chain(&ACCESS);
        let given = data_center.find(|name| get(name).is_some());
        return match given {
            Some(name) => Err(ConfigError::rule(
                name,
                format!(
                    "is a Data Center setting, read only with {ATLASSIAN_FLAVOR}=datacenter (the \
                     default is cloud, which uses ATLASSIAN_SITE_NAME or ATLASSIAN_BASE_URL)"
                ),
            )),
            None => Ok((None, None)),
        };
    }
    for cloud in [ATLASSIAN_SITE_NAME, ATLASSIAN_BASE_URL] {
        if get(cloud).is_some() {
            return Err(ConfigError::rule(
                cloud,
                format!(
                    "names an Atlassian Cloud site, and {ATLASSIAN_FLAVOR} is datacenter: set \
                     {JIRA_BASE_URL} and {CONFLUENCE_BASE_URL} to the servers' roots instead"
                ),
            ));
        }
    }
    Ok((server(get, PRODUCTS[0])?, server(get, PRODUCTS[1])?))
}

/// Bitbucket Data Center's server, on `BITBUCKET_FLAVOR=datacenter`. As for Jira and
/// Confluence, a setting of the other flavor is an error rather than ignored.
fn bitbucket_server(
    get: &dyn Fn(&str) -> Option<String>,
    flavor: Flavor,
) -> Result<Option<SelfHosted>, ConfigError> {
    const DATA_CENTER: [&str; 5] = [
        BITBUCKET_BASE_URL,
        BITBUCKET_PERSONAL_TOKEN,
        BITBUCKET_USERNAME,
        BITBUCKET_CF_ACCESS_CLIENT_ID,
        BITBUCKET_CF_ACCESS_CLIENT_SECRET,
    ];
    const CLOUD: [&str; 3] = [
        BITBUCKET_API_URL,
        ATLASSIAN_BITBUCKET_USERNAME,
        ATLASSIAN_BITBUCKET_APP_PASSWORD,
    ];
    let (others, why) = match flavor {
        Flavor::Cloud => (
            &DATA_CENTER[..],
            format!(
                "is a Bitbucket Data Center setting, read only with {BITBUCKET_FLAVOR}=datacenter"
            ),
        ),
        Flavor::DataCenter => (
            &CLOUD[..],
            format!(
                "is a Bitbucket Cloud setting, and {BITBUCKET_FLAVOR} is datacenter: set \
                 {BITBUCKET_BASE_URL} and {BITBUCKET_PERSONAL_TOKEN} instead"
            ),
        ),
    };
    if let Some(name) = others.iter().find(|name| get(name).is_some()) {
        return Err(ConfigError::rule(name, why));
    }
    if flavor == Flavor::Cloud {
        return Ok(None);
    }
    match server(
        get,
        [
            BITBUCKET_BASE_URL,
            BITBUCKET_PERSONAL_TOKEN,
            BITBUCKET_USERNAME,
        ],
    )? {
        Some(server) => Ok(Some(server)),
        None => Err(ConfigError::rule(
            BITBUCKET_BASE_URL,
            format!("must be set when {BITBUCKET_FLAVOR} is datacenter"),
        )),
    }
}

/// A Data Center server from its root, access token and optional user name (`[url, token,
/// user]`); `None` when none of the three is set.
fn server(
    get: &dyn Fn(&str) -> Option<String>,
    [url, token, user]: [&'static str; 3],
) -> Result<Option<SelfHosted>, ConfigError> {
    let root = get(url)
        .map(|text| base_url(&text).map_err(|r| ConfigError::new(url, Reason::Root(r))))
        .transpose()?;
    let secret = |name: &str| get(name).map(|v| Secret::new(v.trim()));
    let together = |name: &'static str, other: &str| {
        ConfigError::rule(name, format!("must be set when {other} is set"))
    };
    match (root, secret(token), secret(user)) {
        (Some(base_url), Some(token), username) => Ok(Some(SelfHosted {
            base_url,
            username,
            token,
        })),
        (Some(_), None, _) => Err(together(token, url)),
        (None, Some(_), _) => Err(together(url, token)),
        (None, None, Some(_)) => Err(together(token, user)),
        (None, None, None) => Ok(None),
    }
}

/// The OAuth settings; `None` when `MCP_OAUTH_ISSUER` is unset. `number` reads a
/// clamped integer setting (the config's own reader, which records clamping).
fn oauth_settings(
    get: &dyn Fn(&str) -> Option<String>,
    number: &mut dyn FnMut(&'static str, Bounds) -> Result<u64, ConfigError>,
    github_api_url: &str,
    atlassian_site_url: Option<&str>,
) -> Result<Option<OAuthSettings>, ConfigError> {
    let Some(issuer_text) = get(MCP_OAUTH_ISSUER) else {
        return Ok(None);
    };
    let issuer = oauth::issuer(&issuer_text)
        .map_err(|r| ConfigError::new(MCP_OAUTH_ISSUER, Reason::OAuth(r)))?;
    let local = oauth::is_local(&issuer);
    let required = |name: &'static str| {
        get(name).map(|v| v.trim().to_owned()).ok_or_else(|| {
            ConfigError::rule(
                name,
                format!("must be set when {} is set", MCP_OAUTH_ISSUER),
            )
        })
    };
    let key = required(MCP_OAUTH_ENCRYPTION_KEY)?;
    if key.chars().count() < MIN_ENCRYPTION_KEY_LEN {
        return Err(ConfigError::rule(
            MCP_OAUTH_ENCRYPTION_KEY,
            format!("must be at least {MIN_ENCRYPTION_KEY_LEN} characters"),
        ));
    }
    let provider_name = required(MCP_OAUTH_PROVIDER)?;
    let url_setting = |name: &'static str| -> Result<String, ConfigError> {
        let text = required(name)?;
        oauth::endpoint_url(&text, local).map_err(|r| ConfigError::new(name, Reason::OAuth(r)))
    };
    let provider = match provider_name.to_ascii_lowercase().as_str() {
        "github" => {
            let web_url = match get(MCP_OAUTH_GITHUB_URL) {
                Some(text) => oauth::endpoint_url(&text, local)
                    .map_err(|r| ConfigError::new(MCP_OAUTH_GITHUB_URL, Reason::OAuth(r)))?,
                None => GITHUB_WEB_DEFAULT.to_owned(),
            };
            if !oauth::github_roots_agree(&web_url, github_api_url) {
                return Err(ConfigError::rule(
                    MCP_OAUTH_GITHUB_URL,
                    format!(
                        "{web_url} and GITHUB_API_URL ({github_api_url}) are not one GitHub: a \
                         person's token would be sent to another host than the one it came from"
                    ),
                ));
            }
            Provider::GitHub {
                web_url,
                api_url: github_api_url.to_owned(),
            }
        }
        "oidc" => Provider::Oidc(OidcProvider {
            authorization_url: url_setting(MCP_OAUTH_OIDC_AUTHORIZATION_URL)?,
            token_url: url_setting(MCP_OAUTH_OIDC_TOKEN_URL)?,
            userinfo_url: url_setting(MCP_OAUTH_OIDC_USERINFO_URL)?,
            scopes: get(MCP_OAUTH_OIDC_SCOPES).map_or_else(
                || "openid email profile".to_owned(),
                |s| s.trim().to_owned(),
            ),
            principal_claim: get(MCP_OAUTH_PRINCIPAL_CLAIM)
                .map_or(Ok(PrincipalClaim::Subject), |s| PrincipalClaim::parse(&s))
                .map_err(|r| ConfigError::new(MCP_OAUTH_PRINCIPAL_CLAIM, Reason::OAuth(r)))?,
            groups_claim: get(MCP_OAUTH_GROUPS_CLAIM).map(|s| s.trim().to_owned()),
        }),
        other => {
            return Err(ConfigError::rule(
                MCP_OAUTH_PROVIDER,
                format!("expected github or oidc, got {other:?}"),
            ))
        }
    };
    let list = |name: &str| -> Vec<String> {
        get(name)
            .map(|text| {
                text.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let allow = AllowList {
        users: list(MCP_OAUTH_ALLOWED_USERS),
        groups: list(MCP_OAUTH_ALLOWED_GROUPS),
        domains: list(MCP_OAUTH_ALLOWED_DOMAINS),
        static_names: Vec::new(),
    };
    if allow.is_empty() {
        return Err(ConfigError::rule(
            MCP_OAUTH_ALLOWED_USERS,
            format!(
                "at least one of {}, {} or {} must admit someone: an empty allow-list would \
                 let anyone with an account at the identity provider sign in",
                MCP_OAUTH_ALLOWED_USERS, MCP_OAUTH_ALLOWED_GROUPS, MCP_OAUTH_ALLOWED_DOMAINS
            ),
        ));
    }
    let client_id = required(MCP_OAUTH_CLIENT_ID)?;
    let client_secret = Secret::new(required(MCP_OAUTH_CLIENT_SECRET)?);
    let access_ttl_seconds = number(MCP_OAUTH_ACCESS_TTL_SECONDS, OAUTH_ACCESS_TTL_SECONDS)?;
    let refresh_ttl_seconds = number(MCP_OAUTH_REFRESH_TTL_SECONDS, OAUTH_REFRESH_TTL_SECONDS)?;
    let atlassian = atlassian_app(get, local, atlassian_site_url)?;
    let redirect_schemes = get(MCP_OAUTH_REDIRECT_SCHEMES)
        .map_or(Ok(Vec::new()), |text| {
            crate::oauth::url::redirect_schemes(&text)
        })
        .map_err(|r| ConfigError::new(MCP_OAUTH_REDIRECT_SCHEMES, Reason::Scheme(r)))?;
    Ok(Some(OAuthSettings {
        resource: OAuthSettings::resource_for(&issuer),
        issuer,
        local,
        grant_key: GrantKey::derive(&key),
        provider,
        client_id,
        client_secret,
        allow,
        access_ttl_seconds,
        refresh_ttl_seconds,
        atlassian,
        redirect_schemes,
    }))
}

/// Atlassian's three-legged OAuth app; `None` when `MCP_OAUTH_ATLASSIAN_CLIENT_ID` is unset.
/// It needs its secret and the site its tokens are for (`ATLASSIAN_BASE_URL` or
/// `ATLASSIAN_SITE_NAME`); its endpoints follow the identity provider's rule (https, or http to
/// loopback for a local run).
fn atlassian_app(
    get: &dyn Fn(&str) -> Option<String>,
    local: bool,
    site_url: Option<&str>,
) -> Result<Option<AtlassianApp>, ConfigError> {
    let Some(client_id) = get(MCP_OAUTH_ATLASSIAN_CLIENT_ID) else {
        return Ok(None);
    };
    let client_secret = get(MCP_OAUTH_ATLASSIAN_CLIENT_SECRET).ok_or_else(|| {
        ConfigError::rule(
            MCP_OAUTH_ATLASSIAN_CLIENT_SECRET,
            format!("must be set when {MCP_OAUTH_ATLASSIAN_CLIENT_ID} is set"),
        )
    })?;
    let site_url = site_url.ok_or_else(|| {
        ConfigError::rule(
            MCP_OAUTH_ATLASSIAN_CLIENT_ID,
            "needs ATLASSIAN_SITE_NAME or ATLASSIAN_BASE_URL: the site people's Atlassian \
             tokens are used for"
                .to_owned(),
        )
    })?;
    let endpoint = |name: &'static str, default: &str| match get(name) {
        Some(text) => {
            oauth::endpoint_url(&text, local).map_err(|r| ConfigError::new(name, Reason::OAuth(r)))
        }
        None => Ok(default.to_owned()),
    };
    let scopes = get(MCP_OAUTH_ATLASSIAN_SCOPES).map_or_else(
        || ATLASSIAN_SCOPES_DEFAULT.to_owned(),
        |s| s.trim().to_owned(),
    );
    Ok(Some(AtlassianApp {
        client_id: client_id.trim().to_owned(),
        client_secret: Secret::new(client_secret.trim()),
        scopes,
        auth_url: endpoint(MCP_OAUTH_ATLASSIAN_AUTH_URL, ATLASSIAN_AUTH_DEFAULT)?,
        api_url: endpoint(MCP_OAUTH_ATLASSIAN_API_URL, ATLASSIAN_API_DEFAULT)?,
        site_url: site_url.to_owned(),
    }))
}

/// Reads the integer setting `name` within `bounds`, recording in `clamped` a value that was
/// out of range.
fn read_number(
    get: &dyn Fn(&str) -> Option<String>,
    name: &'static str,
    bounds: Bounds,
    clamped: &mut Vec<(&'static str, String, u64)>,
) -> Result<u64, ConfigError> {
    let Some(text) = get(name) else {
        return Ok(bounds.default);
    };
    let (value, was_clamped) = parse_clamped(&text, bounds).ok_or_else(|| {
        ConfigError::rule(
            name,
            format!("expected a whole number, got {:?}", text.trim()),
        )
    })?;
    if was_clamped {
        clamped.push((name, text.trim().to_owned(), value));
    }
    Ok(value)
}

/// Like [`read_number`], but a value out of `bounds` is an error that names the range.
fn read_in_range(
    get: &dyn Fn(&str) -> Option<String>,
    name: &'static str,
    bounds: Bounds,
) -> Result<u64, ConfigError> {
    let mut clamped = Vec::new();
    let value = read_number(get, name, bounds, &mut clamped)?;
    match clamped.pop() {
        None => Ok(value),
        Some((_, text, _)) => Err(ConfigError::rule(
            name,
            format!(
                "expected a whole number from {} to {}, got {text:?}",
                bounds.min, bounds.max
            ),
        )),
    }
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Parses a decimal integer (optionally signed) and clamps it; `None` when it is not a number.
/// The flag says whether clamping changed the value.
fn parse_clamped(text: &str, bounds: Bounds) -> Option<(u64, bool)> {
    let text = text.trim();
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if text.starts_with('-') {
        // Ranges here never go below zero, so a negative number clamps to the minimum ("-0" is
        // zero, a change only when the minimum is above zero).
        let zero = digits.bytes().all(|b| b == b'0');
        return Some((bounds.min, !(zero && bounds.min == 0)));
    }
    // Too many digits for u64 is still a number: it clamps to the maximum.
    let value = digits.parse::<u64>().unwrap_or(u64::MAX);
    let clamped = value.clamp(bounds.min, bounds.max);
    Some((clamped, clamped != value))
}

fn normalize_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

fn parse_origins(text: &str) -> Result<Vec<String>, BadOrigin> {
    let mut origins = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let origin = normalize_origin(item);
        let valid = origin.split_once("://").is_some_and(|(scheme, host)| {
            matches!(scheme, "http" | "https")
                && !host.is_empty()
                && !host.contains(['/', '?', '#', ' ', '*'])
        });
        if !valid {
            return Err(BadOrigin(item.to_owned()));
        }
        origins.push(origin);
    }
    Ok(origins)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_settings(&move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn clamps_and_parses_integers() {
        let b = Bounds {
            default: 5,
            min: 2,
            max: 10,
        };
        let cases = [
            ("7", Some((7, false))),
            (" 7 ", Some((7, false))),
            ("+7", Some((7, false))),
            ("1", Some((2, true))),
            ("11", Some((10, true))),
            ("-3", Some((2, true))),
            ("-0", Some((2, true))),
            ("99999999999999999999999", Some((10, true))),
            ("7.5", None),
            ("1e3", None),
            ("ten", None),
            ("-", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_clamped(text, b), expected, "{text:?}");
        }
    }

    #[test]
    fn the_ledger_bound_is_read_in_its_range_or_refused() {
        let bound = |text: &str| {
            from(&[(MCP_APPROVAL_LEDGER_MAX_BYTES, text)]).map(|c| c.policy.ledger_max_bytes)
        };
        assert_eq!(bound(""), Ok(8 * 1024 * 1024));
        assert_eq!(bound("65536"), Ok(65536));
        assert_eq!(bound(" 67108864 "), Ok(64 * 1024 * 1024));
        for bad in ["65535", "67108865", "-1", "8MiB", "1e6"] {
            let error = bound(bad).unwrap_err();
            assert_eq!(error.setting, MCP_APPROVAL_LEDGER_MAX_BYTES, "{bad}");
            assert!(error.to_string().contains("whole number"), "{bad}: {error}");
        }
        assert!(bound("1")
            .unwrap_err()
            .reason
            .to_string()
            .contains("from 65536 to 67108864"));
    }

    #[test]
    fn origins_are_normalized_and_validated() {
        assert_eq!(
            parse_origins("https://Claude.ai/, http://localhost:6274").unwrap(),
            vec!["https://claude.ai", "http://localhost:6274"]
        );
        for bad in [
            "claude.ai",
            "https://",
            "https://a/b",
            "https://*.a.com",
            "ftp://a",
        ] {
            assert!(parse_origins(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn data_center_jira_and_confluence_have_their_own_roots_and_tokens() {
        let config = from(&[
            (ATLASSIAN_FLAVOR, " DataCenter "),
            (JIRA_BASE_URL, "https://jira.example.com/"),
            (JIRA_PERSONAL_TOKEN, "jira-pat"),
            (
                CONFLUENCE_BASE_URL,
                "https://intranet.example.com/confluence",
            ),
            (CONFLUENCE_USERNAME, "svc-mcp"),
            (CONFLUENCE_PERSONAL_TOKEN, "conf-pat"),
            // Bitbucket Cloud still reads the Atlassian pair.
            (ATLASSIAN_USER_EMAIL, "a@example.com"),
            (ATLASSIAN_API_TOKEN, "cloud-token"),
        ])
        .unwrap();
        let upstream = &config.upstream;
        assert_eq!(upstream.atlassian_flavor, Flavor::DataCenter);
        let jira = upstream.endpoint(crate::upstream::Vendor::Jira).unwrap();
        assert_eq!(jira.base_url, "https://jira.example.com");
        assert_eq!(jira.credential.value.expose(), "Bearer jira-pat");
        let conf = upstream
            .endpoint(crate::upstream::Vendor::Confluence)
            .unwrap();
        assert_eq!(conf.base_url, "https://intranet.example.com/confluence");
        // Basic where the administrator allows it: user name and token.
        assert_eq!(conf.credential.identity.expose(), "svc-mcp:conf-pat");
        assert!(upstream.credential_values().contains(&"jira-pat"));
        assert!(upstream
            .endpoint(crate::upstream::Vendor::Bitbucket)
            .is_some());
        assert!(!format!("{config:?}").contains("pat"));
    }

    #[test]
    fn bitbucket_data_center_has_its_own_flavor_root_and_token() {
        let config = from(&[
            (BITBUCKET_FLAVOR, "datacenter"),
            (BITBUCKET_BASE_URL, "https://example.com/bitbucket/"),
            (BITBUCKET_PERSONAL_TOKEN, "bb-http-token"),
            (BITBUCKET_CF_ACCESS_CLIENT_ID, "id.access"),
            (BITBUCKET_CF_ACCESS_CLIENT_SECRET, "bb-cf-secret"),
            // Jira and Confluence stay on Cloud, with the Atlassian pair.
            (ATLASSIAN_SITE_NAME, "acme"),
            (ATLASSIAN_USER_EMAIL, "a@example.com"),
            (ATLASSIAN_API_TOKEN, "cloud-token"),
        ])
        .unwrap();
        let upstream = &config.upstream;
        let bb = upstream
            .endpoint(crate::upstream::Vendor::Bitbucket)
            .unwrap();
        assert_eq!(bb.base_url, "https://example.com/bitbucket");
        assert_eq!(bb.credential.value.expose(), "Bearer bb-http-token");
        assert!(bb.access.is_some());
        let jira = upstream.endpoint(crate::upstream::Vendor::Jira).unwrap();
        assert_eq!(jira.base_url, "https://acme.atlassian.net");
        assert!(jira.access.is_none());
        for secret in ["bb-http-token", "bb-cf-secret"] {
            assert!(upstream.credential_values().contains(&secret), "{secret}");
        }
        let basic = from(&[
            (BITBUCKET_FLAVOR, "DataCenter"),
            (BITBUCKET_BASE_URL, "https://git.example.com"),
            (BITBUCKET_USERNAME, "svc"),
            (BITBUCKET_PERSONAL_TOKEN, "bb-http-token"),
        ])
        .unwrap();
        let bb = basic
            .upstream
            .endpoint(crate::upstream::Vendor::Bitbucket)
            .unwrap();
        assert_eq!(bb.credential.identity.expose(), "svc:bb-http-token");
        // Each flavor's settings are refused with the other, and Data Center needs its server.
        for (pairs, setting, says) in [
            (
                &[(BITBUCKET_PERSONAL_TOKEN, "secret-pat")][..],
                BITBUCKET_PERSONAL_TOKEN,
                "BITBUCKET_FLAVOR=datacenter",
            ),
            (
                &[(BITBUCKET_FLAVOR, "datacenter")][..],
                BITBUCKET_BASE_URL,
                "must be set",
            ),
            (
                &[
                    (BITBUCKET_FLAVOR, "datacenter"),
                    (BITBUCKET_BASE_URL, "https://git.example.com"),
                ][..],
                BITBUCKET_PERSONAL_TOKEN,
                "when BITBUCKET_BASE_URL is set",
            ),
            (
                &[
                    (BITBUCKET_FLAVOR, "datacenter"),
                    (ATLASSIAN_BITBUCKET_APP_PASSWORD, "secret-pat"),
                ][..],
                ATLASSIAN_BITBUCKET_APP_PASSWORD,
                "Bitbucket Cloud setting",
            ),
            (
                &[(BITBUCKET_FLAVOR, "server")][..],
                BITBUCKET_FLAVOR,
                "cloud or datacenter",
            ),
        ] {
            let error = from(pairs).unwrap_err();
            assert_eq!(error.setting, setting, "{error}");
            let text = error.to_string();
            assert!(
                text.contains(says) && !text.contains("secret-pat"),
                "{text}"
            );
        }
    }

    #[test]
    fn settings_of_the_other_flavor_are_refused() {
        let refused = |pairs: &[(&str, &str)], setting: &str, says: &str| {
            let error = from(pairs).unwrap_err();
            assert_eq!(error.setting, setting, "{error}");
            let text = error.to_string();
            assert!(text.contains(says), "{text}");
            assert!(!text.contains("secret-pat"), "{text}");
        };
        let dc = (ATLASSIAN_FLAVOR, "datacenter");
        let jira_root = (JIRA_BASE_URL, "https://jira.example.com");
        let pat = |name| (name, "secret-pat");
        let bad_root = [
            dc,
            (JIRA_BASE_URL, "jira.example.com"),
            pat(JIRA_PERSONAL_TOKEN),
        ];
        // The settings given, the one refused, and what its error says.
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: [Case; 11] = [
            (
                &[(ATLASSIAN_FLAVOR, "server")],
                ATLASSIAN_FLAVOR,
                "cloud or datacenter",
            ),
            (
                &[pat(JIRA_PERSONAL_TOKEN)],
                JIRA_PERSONAL_TOKEN,
                "FLAVOR=datacenter",
            ),
            (
                &[dc, (ATLASSIAN_SITE_NAME, "acme")],
                ATLASSIAN_SITE_NAME,
                "JIRA_BASE_URL",
            ),
            (
                &[dc, (ATLASSIAN_BASE_URL, "https://x")],
                ATLASSIAN_BASE_URL,
                "Cloud",
            ),
            (
                &[dc, jira_root],
                JIRA_PERSONAL_TOKEN,
                "when JIRA_BASE_URL is set",
            ),
            (
                &[dc, pat(CONFLUENCE_PERSONAL_TOKEN)],
                CONFLUENCE_BASE_URL,
                "is set",
            ),
            (
                &[dc, (JIRA_USERNAME, "me")],
                JIRA_PERSONAL_TOKEN,
                "when JIRA_USERNAME",
            ),
            (&bad_root, JIRA_BASE_URL, "https://"),
            (
                &[pat(JIRA_CF_ACCESS_CLIENT_SECRET)],
                JIRA_CF_ACCESS_CLIENT_SECRET,
                "datacenter",
            ),
            (
                &[(GITHUB_CF_ACCESS_CLIENT_ID, "i")],
                GITHUB_CF_ACCESS_CLIENT_SECRET,
                "is set",
            ),
            (
                &[pat(GITHUB_CF_ACCESS_CLIENT_SECRET)],
                GITHUB_CF_ACCESS_CLIENT_ID,
                "is set",
            ),
        ];
        for (pairs, setting, says) in cases {
            refused(pairs, setting, says);
        }
        let config = from(&[
            (GITHUB_CF_ACCESS_CLIENT_ID, "id.access"),
            (GITHUB_CF_ACCESS_CLIENT_SECRET, "cf-secret"),
        ])
        .unwrap();
        assert_eq!(config.upstream.access.len(), 1);
        assert!(config.upstream.credential_values().contains(&"cf-secret"));
        assert_eq!(
            from(&[(ATLASSIAN_FLAVOR, "cloud")]).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn empty_values_mean_default() {
        let config = from(&[(MCP_TEXT_MAX_CHARS, ""), (MCP_ALLOW_ANONYMOUS, " ")]).unwrap();
        assert_eq!(config, Config::default());
    }

    #[test]
    fn structured_output_settings() {
        assert!(!Config::default().tools.structured_output);
        assert_eq!(Config::default().tools.structured_max_bytes, 262_144);
        let config = from(&[
            (MCP_STRUCTURED_OUTPUT, "true"),
            (MCP_STRUCTURED_MAX_BYTES, "100000"),
        ])
        .unwrap();
        assert!(config.tools.structured_output);
        assert_eq!(config.tools.structured_max_bytes, 100_000);
        assert!(config.clamped.is_empty());
        for (given, used) in [("1", 16_384), ("99999999", 16_777_216), ("-5", 16_384)] {
            let config = from(&[(MCP_STRUCTURED_MAX_BYTES, given)]).unwrap();
            assert_eq!(config.tools.structured_max_bytes, used, "{given}");
            assert_eq!(
                config.clamped,
                [(MCP_STRUCTURED_MAX_BYTES, given.to_owned(), used as u64)]
            );
        }
        let err = from(&[(MCP_STRUCTURED_OUTPUT, "sometimes")]).unwrap_err();
        assert_eq!(err.setting, MCP_STRUCTURED_OUTPUT);
        let err = from(&[(MCP_STRUCTURED_MAX_BYTES, "1MB")]).unwrap_err();
        assert_eq!(err.setting, MCP_STRUCTURED_MAX_BYTES);
    }

    #[test]
    fn atlassian_base_url_wins_over_the_site_name() {
        let config = from(&[
            (ATLASSIAN_SITE_NAME, "acme"),
            (ATLASSIAN_BASE_URL, "http://127.0.0.1:9/"),
        ])
        .unwrap();
        assert_eq!(
            config.upstream.atlassian_base_url.as_deref(),
            Some("http://127.0.0.1:9")
        );
        let err = from(&[(ATLASSIAN_SITE_NAME, "a.b")]).unwrap_err();
        assert_eq!(err.setting, ATLASSIAN_SITE_NAME);
        let err = from(&[(GITHUB_API_URL, "api.github.com")]).unwrap_err();
        assert_eq!(err.setting, GITHUB_API_URL);
    }

    #[test]
    fn each_module_gets_its_settings() {
        let config = from(&[
            (UPSTREAM_TIMEOUT_MS, "5000"),
            (UPSTREAM_MAX_BYTES, "100000"),
            (MCP_POLICY_KV_KEY, "policy"),
            (GITHUB_TOKEN, " ghp_x "),
        ])
        .unwrap();
        assert_eq!(
            (config.upstream.timeout_ms, config.upstream.max_bytes),
            (5_000, 100_000)
        );
        assert_eq!(config.upstream.github_token, Some(Secret::new("ghp_x")));
        assert!(config.tools.policy_configured);
        assert!(!Config::default().tools.policy_configured);
    }

    #[test]
    fn errors_name_the_setting() {
        let err = from(&[(UPSTREAM_TIMEOUT_MS, "soon")]).unwrap_err();
        assert_eq!(err.setting, UPSTREAM_TIMEOUT_MS);
        assert!(err.to_string().contains("UPSTREAM_TIMEOUT_MS"), "{err}");
        let err = from(&[(MCP_ALLOW_ANONYMOUS, "maybe")]).unwrap_err();
        assert_eq!(err.setting, MCP_ALLOW_ANONYMOUS);
    }
}
