//! The token store: authorization codes, grants, access and refresh tokens in KV (`OAUTH`),
//! each kept only as the SHA-256 of its value, with what a grant carries (the person's upstream
//! tokens) sealed by the cipher port. Codes are single-use (a second use revokes the grant it
//! made), refresh tokens rotate (a replayed one revokes its grant), and every access token is
//! bound to the resource it was issued for and checked against it on each request. KV has no
//! compare-and-set, so which use of a code or refresh token is the first is decided by the claim
//! port (`ports.claims`), once for every isolate and location; the KV records only carry marks
//! that let later uses be refused without a claim.

use super::error::OAuthError;
use super::settings::OAuthSettings;
use crate::auth::constant_time_eq;
use crate::ports::{CacheEntry, Claim, Ports, StoreError};
use crate::upstream::Secret;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

pub(crate) use crate::auth::{is_issued_token, ACCESS_PREFIX, REFRESH_PREFIX};
/// The prefix of every authorization code.
pub(crate) const CODE_PREFIX: &str = "mcp_ac_";
/// How long an authorization code can be exchanged, in seconds.
pub(crate) const CODE_TTL_SECONDS: u64 = 600;
/// Random bytes in every token and code (256 bits).
const TOKEN_BYTES: usize = 32;
/// KV keeps nothing for less than a minute.
const KV_MIN_TTL: u64 = 60;
/// How long a claim outlives what it spends, for clocks that differ between locations.
const CLAIM_MARGIN_SECONDS: u64 = 60;

/// The storage name of a token or code: the hex SHA-256 of its text.
pub(crate) fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The S256 challenge of a PKCE verifier: base64url(SHA-256(verifier)), unpadded.
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// True for a PKCE verifier of the syntax RFC 7636 section 4.1 requires.
pub(crate) fn valid_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// A person's token at an upstream vendor, obtained at sign-in. `Debug` hides the secrets.
#[derive(Clone, PartialEq, Eq)]
pub struct UpstreamToken {
    /// The vendor id (`github`, or `atlassian` for Jira and Confluence).
    pub vendor: String,
    /// The access token.
    pub access: Secret,
    /// The refresh token, for tokens that expire.
    pub refresh: Option<Secret>,
    /// When the access token expires (ms since the epoch), if it does.
    pub expires_ms: Option<u64>,
    /// The site the token is used for, when the vendor has several (Atlassian's cloud id).
    pub site: Option<String>,
}

impl fmt::Debug for UpstreamToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpstreamToken")
            .field("vendor", &self.vendor)
            .field("expires_ms", &self.expires_ms)
            .field("site", &self.site)
            .finish_non_exhaustive()
    }
}

/// The serialized form of [`UpstreamToken`], only ever written sealed.
#[derive(Serialize, Deserialize)]
struct SealedToken {
    vendor: String,
    access: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    site: Option<String>,
}

/// Who signed in, as the identity provider told us.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedIn {
    /// The stable principal name (`github~583231`, `oidc~<hash>`, or a verified e-mail).
    pub principal: String,
    /// What the provider verified about the person beyond that name, each entry namespaced:
    /// provider groups (`github:acme`, `oidc:engineering`) and aliases (`login:octocat`,
    /// `email:a@b.example`); [`crate::auth::split_attributes`] tells them apart.
    pub groups: Vec<String>,
    /// The person's upstream tokens.
    pub upstream: Vec<UpstreamToken>,
}

/// What an authorization code is issued for.
#[derive(Clone, Debug)]
pub struct NewCode {
    /// The client.
    pub client_id: String,
    /// The redirect URI of the authorization request.
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// The resource the tokens will be bound to.
    pub resource: String,
    /// The granted scope.
    pub scope: String,
    /// The person.
    pub signed_in: SignedIn,
}

/// A token endpoint answer (RFC 6749 section 5.1).
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// Always `Bearer`.
    pub(crate) token_type: &'static str,
    /// Seconds until the access token expires.
    pub(crate) expires_in: u64,
    /// The refresh token (rotated on every use).
    pub refresh_token: String,
    /// The granted scope.
    pub scope: String,
}

impl fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSet")
            .field("expires_in", &self.expires_in)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// A valid access token's grant: who is calling, through which client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authenticated {
    /// The principal name.
    pub principal: String,
    /// The verified attributes, namespaced as in [`SignedIn::groups`].
    pub groups: Vec<String>,
    /// The person's upstream tokens, unsealed.
    pub upstream: Vec<UpstreamToken>,
    /// The client the token was issued to.
    pub client_id: String,
    /// The grant's id, to store renewed upstream tokens under.
    pub(crate) grant: String,
}

/// Why an access token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// Unknown, expired, revoked, or for another resource; the text is for logs.
    Invalid(&'static str),
    /// The store could not be read; the text is for logs.
    Unavailable(String),
}

#[derive(Serialize, Deserialize)]
struct CodeRecord {
    client_id: String,
    redirect_uri: String,
    code_challenge: String,
    resource: String,
    scope: String,
    principal: String,
    groups: Vec<String>,
    sealed: Option<String>,
    expires_ms: u64,
    /// Set once exchanged: the grant it made, revoked if the code comes back.
    #[serde(default)]
    used_by: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct GrantRecord {
    client_id: String,
    principal: String,
    groups: Vec<String>,
    resource: String,
    scope: String,
    sealed: Option<String>,
    expires_ms: u64,
}

#[derive(Serialize, Deserialize)]
struct AccessRecord {
    grant: String,
    expires_ms: u64,
    resource: String,
}

#[derive(Serialize, Deserialize)]
struct RefreshRecord {
    grant: String,
    client_id: String,
    expires_ms: u64,
    /// Set once used: a rotated token that comes back was stolen or replayed.
    #[serde(default)]
    rotated: bool,
}

// Codes and grants from before principals were stable identifiers live under `code:` and
// `grant:`; they are never read, so their tokens are refused and the person signs in again.
fn code_key(hash: &str) -> String {
    format!("code2:{hash}")
}
fn grant_key(id: &str) -> String {
    format!("grant2:{id}")
}
/// The claim that marks grant `id` revoked.
fn revoked_key(id: &str) -> String {
    format!("revoked:{id}")
}

fn access_key(hash: &str) -> String {
    format!("at:{hash}")
}
fn refresh_key(hash: &str) -> String {
    format!("rt:{hash}")
}

/// The token store for one request.
pub struct TokenStore<'a> {
    settings: &'a OAuthSettings,
    ports: Ports<'a>,
}

fn unavailable(error: StoreError) -> OAuthError {
    OAuthError::server_error(format!("the sign-in store is unavailable ({error})"))
}

impl<'a> TokenStore<'a> {
    /// The store under `settings`, on `ports.oauth`.
    pub fn new(settings: &'a OAuthSettings, ports: Ports<'a>) -> TokenStore<'a> {
        TokenStore { settings, ports }
    }

    fn now(&self) -> u64 {
        self.ports.clock.now_ms()
    }

    /// A fresh random value with `prefix`: 256 bits, base64url.
    pub(crate) fn mint(&self, prefix: &str) -> String {
        let mut bytes = [0u8; TOKEN_BYTES];
        self.ports.rng.fill(&mut bytes);
        format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
    }

    async fn read<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StoreError> {
        match self.ports.oauth.get(key).await? {
            // A record that does not parse was not written by this code: treat it as absent.
            Some(entry) => Ok(serde_json::from_slice(&entry.value).ok()),
            None => Ok(None),
        }
    }

    async fn write<T: Serialize>(&self, key: &str, value: &T, ttl: u64) -> Result<(), StoreError> {
        let value = serde_json::to_vec(value).map_err(|e| StoreError(e.to_string()))?;
        let entry = CacheEntry {
            value,
            metadata: String::new(),
        };
        self.ports.oauth.put(key, entry, ttl.max(KV_MIN_TTL)).await
    }

    fn seal_context(client_id: &str, principal: &str) -> Vec<u8> {
        format!("upstream\n{client_id}\n{principal}").into_bytes()
    }

    /// Seals `tokens` for the grant of `principal` through `client_id` (`None` for none).
    pub(super) async fn seal(
        &self,
        client_id: &str,
        principal: &str,
        tokens: &[UpstreamToken],
    ) -> Result<Option<String>, OAuthError> {
        if tokens.is_empty() {
            return Ok(None);
        }
        let plain: Vec<SealedToken> = tokens
            .iter()
            .map(|t| SealedToken {
                vendor: t.vendor.clone(),
                access: t.access.expose().to_owned(),
                refresh: t.refresh.as_ref().map(|r| r.expose().to_owned()),
                expires_ms: t.expires_ms,
                site: t.site.clone(),
            })
            .collect();
        let bytes =
            serde_json::to_vec(&plain).map_err(|e| OAuthError::server_error(e.to_string()))?;
        let context = Self::seal_context(client_id, principal);
        let sealed = self
            .ports
            .cipher
            .seal(self.settings.grant_key.bytes(), &context, &bytes)
            .await
            .map_err(|e| OAuthError::server_error(format!("sealing failed ({e})")))?;
        Ok(Some(URL_SAFE_NO_PAD.encode(sealed)))
    }

    /// Opens what [`TokenStore::seal`] sealed for the same client and principal; what cannot be
    /// opened is this server's fault, a `server_error`.
    pub(super) async fn unseal(
        &self,
        client_id: &str,
        principal: &str,
        sealed: Option<&str>,
    ) -> Result<Vec<UpstreamToken>, OAuthError> {
        let Some(sealed) = sealed else {
            return Ok(Vec::new());
        };
        let bytes = URL_SAFE_NO_PAD
            .decode(sealed)
            .map_err(|_| OAuthError::server_error("sealed upstream tokens are not base64url"))?;
        let context = Self::seal_context(client_id, principal);
        let plain = self
            .ports
            .cipher
            .open(self.settings.grant_key.bytes(), &context, &bytes)
            .await
            .map_err(|e| OAuthError::server_error(e.to_string()))?;
        let tokens: Vec<SealedToken> = serde_json::from_slice(&plain)
            .map_err(|_| OAuthError::server_error("unsealed tokens do not parse"))?;
        Ok(tokens
            .into_iter()
            .map(|t| UpstreamToken {
                vendor: t.vendor,
                access: Secret::new(t.access),
                refresh: t.refresh.map(Secret::new),
                expires_ms: t.expires_ms,
                site: t.site,
            })
            .collect())
    }

    /// Stores a single-use authorization code for `grant` and returns it.
    pub async fn issue_code(&self, grant: NewCode) -> Result<String, OAuthError> {
        let code = self.mint(CODE_PREFIX);
        let sealed = self
            .seal(
                &grant.client_id,
                &grant.signed_in.principal,
                &grant.signed_in.upstream,
            )
            .await?;
        let record = CodeRecord {
            client_id: grant.client_id,
            redirect_uri: grant.redirect_uri,
            code_challenge: grant.code_challenge,
            resource: grant.resource,
            scope: grant.scope,
            principal: grant.signed_in.principal,
            groups: grant.signed_in.groups,
            sealed,
            expires_ms: self.now() + CODE_TTL_SECONDS * 1000,
            used_by: None,
        };
        self.write(&code_key(&token_hash(&code)), &record, CODE_TTL_SECONDS)
            .await
            .map_err(unavailable)?;
        Ok(code)
    }

    /// The `authorization_code` grant: checks the code, client, redirect URI, PKCE verifier and
    /// resource, then creates the grant and its first tokens.
    pub async fn exchange_code(
        &self,
        code: &str,
        client_id: &str,
        redirect_uri: &str,
        verifier: &str,
        resource: Option<&str>,
    ) -> Result<TokenSet, OAuthError> {
        let key = code_key(&token_hash(code));
        let Some(mut record) = self.read::<CodeRecord>(&key).await.map_err(unavailable)? else {
            return Err(OAuthError::invalid_grant(
                "the authorization code is not valid",
            ));
        };
        if let Some(grant) = &record.used_by {
            return self.code_reused(grant).await;
        }
        if self.now() >= record.expires_ms {
            return Err(OAuthError::invalid_grant(
                "the authorization code has expired",
            ));
        }
        if record.client_id != client_id {
            return Err(OAuthError::invalid_grant(
                "the authorization code was issued to another client",
            ));
        }
        if record.redirect_uri != redirect_uri {
            return Err(OAuthError::invalid_grant(
                "redirect_uri differs from the authorization request's",
            ));
        }
        if !valid_verifier(verifier)
            || !constant_time_eq(
                record.code_challenge.as_bytes(),
                pkce_challenge(verifier).as_bytes(),
            )
        {
            return Err(OAuthError::invalid_grant(
                "code_verifier does not match the code_challenge",
            ));
        }
        if resource.is_some_and(|r| r != record.resource) {
            return Err(OAuthError::invalid_target(format!(
                "resource must be {}",
                record.resource
            )));
        }
        let grant_id = self.mint("");
        let grant = GrantRecord {
            client_id: record.client_id.clone(),
            principal: record.principal.clone(),
            groups: record.groups.clone(),
            resource: record.resource.clone(),
            scope: record.scope.clone(),
            sealed: record.sealed.clone(),
            expires_ms: self.now() + self.settings.refresh_ttl_seconds * 1000,
        };
        // Written before the claim: a later use that loses the claim deletes it after this write,
        // so the deletion wins in KV, wherever the two ran.
        self.write(
            &grant_key(&grant_id),
            &grant,
            self.settings.refresh_ttl_seconds,
        )
        .await
        .map_err(unavailable)?;
        if let Claim::Taken(first) = self.claim(&key, &grant_id, record.expires_ms).await? {
            self.delete_grant(&grant_id).await.map_err(unavailable)?;
            return self.code_reused(&first).await;
        }
        // Marks the code spent in KV too, where a later use sees it without a claim.
        record.used_by = Some(grant_id.clone());
        let remaining = record.expires_ms.saturating_sub(self.now()) / 1000;
        self.write(&key, &record, remaining)
            .await
            .map_err(unavailable)?;
        self.issue_tokens(&grant_id, &grant).await
    }

    /// RFC 6749 section 4.1.2: a code used twice revokes `grant`, what it was first exchanged for.
    async fn code_reused(&self, grant: &str) -> Result<TokenSet, OAuthError> {
        self.delete_grant(grant).await.map_err(unavailable)?;
        Err(OAuthError::invalid_grant(
            "the authorization code was already used; the tokens issued for it are revoked",
        ))
    }

    /// Spends the one-time credential stored at `key` for `holder`: the claim outlives the
    /// credential (valid until `until_ms`) by a margin for the clocks of other locations.
    async fn claim(&self, key: &str, holder: &str, until_ms: u64) -> Result<Claim, OAuthError> {
        let ttl = until_ms.saturating_sub(self.now()) / 1000 + CLAIM_MARGIN_SECONDS;
        self.ports
            .claims
            .claim(key, holder, ttl)
            .await
            .map_err(unavailable)
    }

    async fn issue_tokens(
        &self,
        grant_id: &str,
        grant: &GrantRecord,
    ) -> Result<TokenSet, OAuthError> {
        let access = self.mint(ACCESS_PREFIX);
        let refresh = self.mint(REFRESH_PREFIX);
        let ttl = self.settings.access_ttl_seconds;
        let access_record = AccessRecord {
            grant: grant_id.to_owned(),
            expires_ms: self.now() + ttl * 1000,
            resource: grant.resource.clone(),
        };
        self.write(&access_key(&token_hash(&access)), &access_record, ttl)
            .await
            .map_err(unavailable)?;
        let refresh_ttl = grant.expires_ms.saturating_sub(self.now()) / 1000;
        let refresh_record = RefreshRecord {
            grant: grant_id.to_owned(),
            client_id: grant.client_id.clone(),
            expires_ms: grant.expires_ms,
            rotated: false,
        };
        self.write(
            &refresh_key(&token_hash(&refresh)),
            &refresh_record,
            refresh_ttl,
        )
        .await
        .map_err(unavailable)?;
        Ok(TokenSet {
            access_token: access,
            token_type: "Bearer",
            expires_in: ttl,
            refresh_token: refresh,
            scope: grant.scope.clone(),
        })
    }

    /// The `refresh_token` grant: the token is spent and a new pair issued; a spent token that
    /// comes back revokes the whole grant (OAuth 2.1 section 4.3.1).
    pub(crate) async fn refresh(
        &self,
        token: &str,
        client_id: &str,
        resource: Option<&str>,
    ) -> Result<TokenSet, OAuthError> {
        let key = refresh_key(&token_hash(token));
        let Some(mut record) = self
            .read::<RefreshRecord>(&key)
            .await
            .map_err(unavailable)?
        else {
            return Err(OAuthError::invalid_grant("the refresh token is not valid"));
        };
        if record.client_id != client_id {
            return Err(OAuthError::invalid_grant(
                "the refresh token was issued to another client",
            ));
        }
        if record.rotated {
            return self.refresh_replayed(&record.grant).await;
        }
        if self.now() >= record.expires_ms {
            return Err(OAuthError::invalid_grant("the refresh token has expired"));
        }
        let Some(grant) = self
            .read::<GrantRecord>(&grant_key(&record.grant))
            .await
            .map_err(unavailable)?
        else {
            return Err(OAuthError::invalid_grant("the grant was revoked"));
        };
        if resource.is_some_and(|r| r != grant.resource) {
            return Err(OAuthError::invalid_target(format!(
                "resource must be {}",
                grant.resource
            )));
        }
        if let Claim::Taken(_) = self.claim(&key, &record.grant, record.expires_ms).await? {
            return self.refresh_replayed(&record.grant).await;
        }
        // Marks the token spent in KV too, where a later use sees it without a claim.
        record.rotated = true;
        let remaining = record.expires_ms.saturating_sub(self.now()) / 1000;
        self.write(&key, &record, remaining)
            .await
            .map_err(unavailable)?;
        self.issue_tokens(&record.grant, &grant).await
    }

    /// A spent refresh token came back, stolen or replayed: its grant is revoked.
    async fn refresh_replayed(&self, grant: &str) -> Result<TokenSet, OAuthError> {
        self.delete_grant(grant).await.map_err(unavailable)?;
        Err(OAuthError::invalid_grant(
            "the refresh token was already used; the grant is revoked",
        ))
    }

    /// Checks an access token: known, unexpired, for this server's resource, its grant not
    /// revoked; then unseals the person's upstream tokens.
    pub async fn authenticate(&self, token: &str) -> Result<Authenticated, Rejection> {
        let record = self
            .read::<AccessRecord>(&access_key(&token_hash(token)))
            .await
            .map_err(|e| Rejection::Unavailable(e.to_string()))?
            .ok_or(Rejection::Invalid("unknown access token"))?;
        if self.now() >= record.expires_ms {
            return Err(Rejection::Invalid("expired access token"));
        }
        if record.resource != self.settings.resource {
            return Err(Rejection::Invalid("access token for another resource"));
        }
        let grant = self
            .read::<GrantRecord>(&grant_key(&record.grant))
            .await
            .map_err(|e| Rejection::Unavailable(e.to_string()))?
            .ok_or(Rejection::Invalid("revoked grant"))?;
        if grant.resource != self.settings.resource {
            return Err(Rejection::Invalid("grant for another resource"));
        }
        let upstream = self
            .unseal(&grant.client_id, &grant.principal, grant.sealed.as_deref())
            .await
            .map_err(|e| Rejection::Unavailable(e.description))?;
        Ok(Authenticated {
            principal: grant.principal,
            groups: grant.groups,
            upstream,
            client_id: grant.client_id,
            grant: record.grant,
        })
    }

    /// Stores renewed upstream tokens in grant `grant_id`, sealed as at sign-in; a grant revoked
    /// meanwhile stays revoked.
    pub(crate) async fn replace_upstream(
        &self,
        grant_id: &str,
        tokens: &[UpstreamToken],
    ) -> Result<(), OAuthError> {
        self.rewrite_grant(grant_id, None, tokens).await
    }

    /// Rewrites grant `grant_id` with `tokens` (and `attributes`, when given); a grant revoked
    /// meanwhile stays revoked.
    async fn rewrite_grant(
        &self,
        grant_id: &str,
        attributes: Option<Vec<String>>,
        tokens: &[UpstreamToken],
    ) -> Result<(), OAuthError> {
        let key = grant_key(grant_id);
        let Some(mut grant) = self.read::<GrantRecord>(&key).await.map_err(unavailable)? else {
            return Ok(());
        };
        if let Some(attributes) = attributes {
            grant.groups = attributes;
        }
        grant.sealed = self
            .seal(&grant.client_id, &grant.principal, tokens)
            .await?;
        let remaining = grant.expires_ms.saturating_sub(self.now()) / 1000;
        self.write(&key, &grant, remaining)
            .await
            .map_err(unavailable)?;
        // What was read may be a copy this location's KV kept after another location deleted
        // the grant, and the write has then put it back. Revocations are claimed before their
        // delete, so asking after the write finds any revocation this write could have undone.
        match self.ports.claims.holder(&revoked_key(grant_id)).await {
            Ok(None) => Ok(()),
            Ok(Some(_)) => self.ports.oauth.delete(&key).await.map_err(unavailable),
            Err(e) => {
                let _ = self.ports.oauth.delete(&key).await;
                Err(unavailable(e))
            }
        }
    }

    /// RFC 7009: a refresh token revokes its grant (and so every access token of it); an access
    /// token revokes itself. Unknown tokens, and tokens of other clients, are left alone.
    pub(crate) async fn revoke(&self, token: &str, client_id: &str) -> Result<(), OAuthError> {
        let hash = token_hash(token);
        if token.starts_with(REFRESH_PREFIX) {
            if let Some(record) = self
                .read::<RefreshRecord>(&refresh_key(&hash))
                .await
                .map_err(unavailable)?
            {
                if record.client_id == client_id {
                    self.delete_grant(&record.grant)
                        .await
                        .map_err(unavailable)?;
                }
            }
            return Ok(());
        }
        let key = access_key(&hash);
        if let Some(record) = self.read::<AccessRecord>(&key).await.map_err(unavailable)? {
            let grant = self
                .read::<GrantRecord>(&grant_key(&record.grant))
                .await
                .map_err(unavailable)?;
            if grant.is_none_or(|g| g.client_id == client_id) {
                self.ports.oauth.delete(&key).await.map_err(unavailable)?;
            }
        }
        Ok(())
    }

    /// Revokes grant `grant_id` for good: the revocation is claimed (for as long as any grant
    /// lives) before the grant is deleted, so that a rewrite from a stale copy undoes itself.
    async fn delete_grant(&self, grant_id: &str) -> Result<(), StoreError> {
        let ttl = self.settings.refresh_ttl_seconds + CLAIM_MARGIN_SECONDS;
        let claimed = self
            .ports
            .claims
            .claim(&revoked_key(grant_id), "revoked", ttl)
            .await;
        self.ports.oauth.delete(&grant_key(grant_id)).await?;
        claimed.map(|_| ())
    }

    /// Revokes grant `grant_id`, and so every access and refresh token of it.
    pub(crate) async fn revoke_grant(&self, grant_id: &str) -> Result<(), OAuthError> {
        self.delete_grant(grant_id).await.map_err(unavailable)
    }

    /// The grant behind a refresh token that [`TokenStore::refresh`] may accept (known, of
    /// `client_id`, not yet used, unexpired, its grant present), read without changing
    /// anything; `None` otherwise, leaving the refusal (and a replay's revocation) to `refresh`.
    pub(crate) async fn grant_behind_refresh(
        &self,
        token: &str,
        client_id: &str,
    ) -> Result<Option<GrantIdentity>, OAuthError> {
        let record = self
            .read::<RefreshRecord>(&refresh_key(&token_hash(token)))
            .await
            .map_err(unavailable)?;
        let Some(record) =
            record.filter(|r| r.client_id == client_id && !r.rotated && self.now() < r.expires_ms)
        else {
            return Ok(None);
        };
        let key = grant_key(&record.grant);
        let Some(grant) = self.read::<GrantRecord>(&key).await.map_err(unavailable)? else {
            return Ok(None);
        };
        let upstream = self
            .unseal(&grant.client_id, &grant.principal, grant.sealed.as_deref())
            .await?;
        Ok(Some(GrantIdentity {
            grant: record.grant,
            principal: grant.principal,
            attributes: grant.groups,
            upstream,
        }))
    }

    /// Stores what the identity provider verified at a refresh in grant `grant_id`: the
    /// person's attributes and upstream tokens (sealed as at sign-in); a grant revoked
    /// meanwhile stays revoked.
    pub(crate) async fn update_identity(
        &self,
        grant_id: &str,
        attributes: Vec<String>,
        tokens: &[UpstreamToken],
    ) -> Result<(), OAuthError> {
        self.rewrite_grant(grant_id, Some(attributes), tokens).await
    }
}

/// Who a grant was issued to, as a refresh re-checks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GrantIdentity {
    /// The grant's id.
    pub(crate) grant: String,
    /// The stable principal name.
    pub principal: String,
    /// The verified attributes, namespaced as in [`SignedIn::groups`].
    pub(crate) attributes: Vec<String>,
    /// The person's upstream tokens, unsealed.
    pub upstream: Vec<UpstreamToken>,
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::config::{Config, MCP_OAUTH_ISSUER};
    use crate::ports::fake::FakeEnv;
    use crate::ports::CacheStore;
    use futures::executor::block_on;

    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const REDIRECT: &str = "http://127.0.0.1:3000/callback";

    /// GitHub sign-in settings admitting `alice`.
    pub(in crate::oauth) fn settings() -> OAuthSettings {
        let pairs = [
            (MCP_OAUTH_ISSUER, "https://mcp.example.com"),
            (
                "MCP_OAUTH_ENCRYPTION_KEY",
                "k0123456789abcdef0123456789abcdef",
            ),
            ("MCP_OAUTH_PROVIDER", "github"),
            ("MCP_OAUTH_CLIENT_ID", "id"),
            ("MCP_OAUTH_CLIENT_SECRET", "secret"),
            ("MCP_OAUTH_ALLOWED_USERS", "alice"),
        ];
        let config = Config::from_settings(&|name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
        .unwrap();
        config.oauth.unwrap()
    }

    fn new_code(resource: &str) -> NewCode {
        NewCode {
            client_id: "client-1".into(),
            redirect_uri: REDIRECT.into(),
            code_challenge: pkce_challenge(VERIFIER),
            resource: resource.into(),
            scope: "mcp".into(),
            signed_in: SignedIn {
                principal: "alice".into(),
                groups: vec!["acme".into()],
                upstream: vec![UpstreamToken {
                    vendor: "github".into(),
                    access: Secret::new("gho_person"),
                    refresh: None,
                    expires_ms: None,
                    site: None,
                }],
            },
        }
    }

    fn exchange(store: &TokenStore<'_>, code: &str) -> Result<TokenSet, OAuthError> {
        block_on(store.exchange_code(code, "client-1", REDIRECT, VERIFIER, None))
    }

    /// A code for alice, issued for the deployment's own resource.
    fn issue(store: &TokenStore<'_>) -> String {
        block_on(store.issue_code(new_code(&store.settings.resource))).unwrap()
    }

    /// Tokens for alice, and the grant behind their refresh token.
    fn signed_in_grant(store: &TokenStore<'_>) -> (TokenSet, GrantIdentity) {
        let tokens = exchange(store, &issue(store)).unwrap();
        let grant = block_on(store.grant_behind_refresh(&tokens.refresh_token, "client-1"))
            .unwrap()
            .unwrap();
        (tokens, grant)
    }

    /// The stored grant's key and value (the store holds one).
    fn stored_grant(env: &FakeEnv) -> (String, Vec<u8>) {
        env.oauth
            .dump()
            .into_iter()
            .find(|(k, _)| k.starts_with("grant2:"))
            .unwrap()
    }

    /// `tokens` no longer authenticate, and their refresh token no longer redeems.
    fn assert_revoked(store: &TokenStore<'_>, tokens: &TokenSet) {
        assert_eq!(
            block_on(store.authenticate(&tokens.access_token)),
            Err(Rejection::Invalid("revoked grant"))
        );
        assert!(block_on(store.refresh(&tokens.refresh_token, "client-1", None)).is_err());
    }

    #[test]
    fn pkce_matches_rfc_7636_appendix_b() {
        assert_eq!(
            pkce_challenge(VERIFIER),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert!(valid_verifier(VERIFIER));
        assert!(!valid_verifier("short"));
        assert!(!valid_verifier(&"a".repeat(129)));
        assert!(!valid_verifier(&format!("{VERIFIER}+")));
    }

    #[test]
    fn a_code_becomes_tokens_that_authenticate_and_nothing_is_stored_in_clear() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        assert!(code.starts_with(CODE_PREFIX));
        let tokens = exchange(&store, &code).unwrap();
        assert!(tokens.access_token.starts_with(ACCESS_PREFIX));
        assert!(is_issued_token(&tokens.refresh_token));
        let who = block_on(store.authenticate(&tokens.access_token)).unwrap();
        assert_eq!(who.principal, "alice");
        assert_eq!(who.groups, ["acme"]);
        assert_eq!(who.upstream[0].access.expose(), "gho_person");
        assert!(!format!("{who:?}").contains("gho_person"));
        for (key, value) in env.oauth.dump() {
            let text = String::from_utf8_lossy(&value);
            for secret in [
                &code,
                &tokens.access_token,
                &tokens.refresh_token,
                "gho_person",
            ] {
                assert!(
                    !key.contains(secret) && !text.contains(secret),
                    "{key}: {text}"
                );
            }
        }
    }

    #[test]
    fn codes_are_refused_for_the_wrong_verifier_client_redirect_or_resource() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        let other_verifier = "x".repeat(43);
        let cases: [(&str, &str, &str, Option<&str>, &str); 5] = [
            ("client-1", REDIRECT, &other_verifier, None, "invalid_grant"),
            ("client-1", REDIRECT, "short", None, "invalid_grant"),
            ("client-2", REDIRECT, VERIFIER, None, "invalid_grant"),
            (
                "client-1",
                "http://127.0.0.1:3001/callback",
                VERIFIER,
                None,
                "invalid_grant",
            ),
            (
                "client-1",
                REDIRECT,
                VERIFIER,
                Some("https://other.example/mcp"),
                "invalid_target",
            ),
        ];
        for (client, redirect, verifier, resource, expected) in cases {
            let err = block_on(store.exchange_code(&code, client, redirect, verifier, resource))
                .unwrap_err();
            assert_eq!(
                err.code, expected,
                "{client} {redirect} {verifier} {resource:?}"
            );
        }
        // None of those spent the code.
        assert!(exchange(&store, &code).is_ok());
    }

    #[test]
    fn a_code_used_twice_is_refused_and_revokes_its_tokens() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        let tokens = exchange(&store, &code).unwrap();
        assert_eq!(exchange(&store, &code).unwrap_err().code, "invalid_grant");
        assert_eq!(
            block_on(store.authenticate(&tokens.access_token)),
            Err(Rejection::Invalid("revoked grant"))
        );
    }

    /// Both results of `a` and `b` polled together, on a store whose every call yields first,
    /// so that each runs up to its next store call before the other goes on.
    fn at_once<T>(
        env: &FakeEnv,
        a: impl std::future::Future<Output = T>,
        b: impl std::future::Future<Output = T>,
    ) -> [T; 2] {
        env.oauth.yielding.set(true);
        let both = block_on(futures::future::join(a, b));
        env.oauth.yielding.set(false);
        [both.0, both.1]
    }

    /// The one success of `results`; the other is a refusal with `invalid_grant`.
    fn one_of(results: [Result<TokenSet, OAuthError>; 2]) -> TokenSet {
        let [a, b] = results;
        match (a, b) {
            (Ok(tokens), Err(e)) | (Err(e), Ok(tokens)) => {
                assert_eq!(e.code, "invalid_grant", "{e:?}");
                tokens
            }
            (a, b) => panic!("not exactly one success: {a:?} {b:?}"),
        }
    }

    #[test]
    fn a_code_redeemed_twice_at_once_gives_one_token_set_and_revokes_it() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        let redeem = || store.exchange_code(&code, "client-1", REDIRECT, VERIFIER, None);
        let tokens = one_of(at_once(&env, redeem(), redeem()));
        assert_revoked(&store, &tokens);
    }

    #[test]
    fn a_refresh_token_redeemed_twice_at_once_rotates_once_and_revokes_the_grant() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        let first = exchange(&store, &code).unwrap();
        let redeem = || store.refresh(&first.refresh_token, "client-1", None);
        let tokens = one_of(at_once(&env, redeem(), redeem()));
        assert_revoked(&store, &tokens);
    }

    #[test]
    fn without_the_claim_store_nothing_is_spent_and_the_error_names_the_binding() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        env.claims
            .fail_with(Some(StoreError::missing_binding("CLAIMS")));
        let refused = exchange(&store, &code).unwrap_err();
        assert_eq!(refused.code, "server_error");
        assert!(
            refused.description.contains("binding CLAIMS"),
            "{refused:?}"
        );
        env.claims.fail_with(None);
        let tokens = exchange(&store, &code).unwrap();
        env.claims
            .fail_with(Some(StoreError::missing_binding("CLAIMS")));
        let refused = block_on(store.refresh(&tokens.refresh_token, "client-1", None)).unwrap_err();
        assert_eq!(refused.code, "server_error");
        env.claims.fail_with(None);
        assert!(block_on(store.refresh(&tokens.refresh_token, "client-1", None)).is_ok());
    }

    #[test]
    fn codes_and_access_tokens_expire() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        env.clock.advance(CODE_TTL_SECONDS * 1000);
        assert_eq!(exchange(&store, &code).unwrap_err().code, "invalid_grant");
        let code = block_on(store.issue_code(new_code(&settings.resource))).unwrap();
        let tokens = exchange(&store, &code).unwrap();
        env.clock.advance(settings.access_ttl_seconds * 1000 - 1);
        assert!(block_on(store.authenticate(&tokens.access_token)).is_ok());
        env.clock.advance(1);
        assert!(matches!(
            block_on(store.authenticate(&tokens.access_token)),
            Err(Rejection::Invalid(_))
        ));
    }

    #[test]
    fn refresh_rotates_and_a_replayed_refresh_token_revokes_the_grant() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        let first = exchange(&store, &code).unwrap();
        let second = block_on(store.refresh(&first.refresh_token, "client-1", None)).unwrap();
        assert_ne!(second.refresh_token, first.refresh_token);
        assert!(block_on(store.authenticate(&second.access_token)).is_ok());
        let other = block_on(store.refresh(&second.refresh_token, "client-2", None)).unwrap_err();
        assert_eq!(other.code, "invalid_grant");
        let target = block_on(store.refresh(
            &second.refresh_token,
            "client-1",
            Some("https://other.example/mcp"),
        ))
        .unwrap_err();
        assert_eq!(target.code, "invalid_target");
        let replay = block_on(store.refresh(&first.refresh_token, "client-1", None)).unwrap_err();
        assert_eq!(replay.code, "invalid_grant");
        assert!(block_on(store.authenticate(&second.access_token)).is_err());
        let after = block_on(store.refresh(&second.refresh_token, "client-1", None)).unwrap_err();
        assert_eq!(after.code, "invalid_grant");
    }

    #[test]
    fn a_token_for_another_resource_is_refused() {
        let env = FakeEnv::new();
        let settings = settings();
        let store = TokenStore::new(&settings, env.ports());
        let code = block_on(store.issue_code(new_code("https://old.example.com/mcp"))).unwrap();
        let tokens = exchange(&store, &code).unwrap();
        assert_eq!(
            block_on(store.authenticate(&tokens.access_token)),
            Err(Rejection::Invalid("access token for another resource"))
        );
    }

    #[test]
    fn revocation() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        let tokens = exchange(&store, &code).unwrap();
        // Another client's revocation request changes nothing.
        block_on(store.revoke(&tokens.refresh_token, "client-2")).unwrap();
        block_on(store.revoke(&tokens.access_token, "client-2")).unwrap();
        assert!(block_on(store.authenticate(&tokens.access_token)).is_ok());
        block_on(store.revoke(&tokens.access_token, "client-1")).unwrap();
        assert!(block_on(store.authenticate(&tokens.access_token)).is_err());
        let again = block_on(store.refresh(&tokens.refresh_token, "client-1", None)).unwrap();
        block_on(store.revoke(&again.refresh_token, "client-1")).unwrap();
        assert!(block_on(store.authenticate(&again.access_token)).is_err());
        assert!(block_on(store.refresh(&again.refresh_token, "client-1", None)).is_err());
        block_on(store.revoke("mcp_rt_unknown", "client-1")).unwrap();
    }

    #[test]
    fn a_grant_from_before_stable_principals_is_never_read() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        let tokens = exchange(&store, &code).unwrap();
        // Move the grant to where grants keyed by login were kept: its tokens stop working.
        let (key, value) = stored_grant(&env);
        block_on(env.oauth.delete(&key)).unwrap();
        let old = key.replacen("grant2:", "grant:", 1);
        let entry = CacheEntry {
            value,
            metadata: String::new(),
        };
        block_on(env.oauth.put(&old, entry, 3600)).unwrap();
        assert_eq!(
            block_on(store.authenticate(&tokens.access_token)),
            Err(Rejection::Invalid("revoked grant"))
        );
        let refused = block_on(store.refresh(&tokens.refresh_token, "client-1", None));
        assert_eq!(refused.unwrap_err().code, "invalid_grant");
    }

    #[test]
    fn the_grant_behind_a_refresh_token_is_read_and_its_identity_updated() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let (tokens, grant) = signed_in_grant(&store);
        assert_eq!(grant.principal, "alice");
        assert_eq!(grant.attributes, ["acme"]);
        assert_eq!(grant.upstream[0].access.expose(), "gho_person");
        assert_eq!(
            block_on(store.grant_behind_refresh(&tokens.refresh_token, "client-2")).unwrap(),
            None
        );
        block_on(store.update_identity(&grant.grant, vec!["github:new".into()], &[])).unwrap();
        let who = block_on(store.authenticate(&tokens.access_token)).unwrap();
        assert_eq!(
            (who.groups, who.upstream.len()),
            (vec!["github:new".to_owned()], 0)
        );
        // Reading changed nothing: the refresh token still redeems once.
        let next = block_on(store.refresh(&tokens.refresh_token, "client-1", None)).unwrap();
        block_on(store.revoke_grant(&grant.grant)).unwrap();
        assert!(block_on(store.authenticate(&next.access_token)).is_err());
        assert_eq!(
            block_on(store.grant_behind_refresh(&next.refresh_token, "client-1")).unwrap(),
            None
        );
    }

    #[test]
    fn a_rewrite_from_a_stale_copy_does_not_bring_a_revoked_grant_back() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let (tokens, grant) = signed_in_grant(&store);
        let (key, copy) = stored_grant(&env);
        block_on(store.revoke(&tokens.refresh_token, "client-1")).unwrap();
        for identity_update in [true, false] {
            // The rewrite runs where KV still holds a copy of the revoked grant.
            let stale = CacheEntry {
                value: copy.clone(),
                metadata: String::new(),
            };
            block_on(env.oauth.put(&key, stale, 3600)).unwrap();
            let rewrite = if identity_update {
                block_on(store.update_identity(&grant.grant, vec![], &grant.upstream))
            } else {
                block_on(store.replace_upstream(&grant.grant, &grant.upstream))
            };
            rewrite.unwrap();
            assert!(env.oauth.dump().iter().all(|(k, _)| k != &key));
            assert!(block_on(store.authenticate(&tokens.access_token)).is_err());
        }
    }

    #[test]
    fn a_tampered_seal_is_refused() {
        let (env, settings) = (FakeEnv::new(), settings());
        let store = TokenStore::new(&settings, env.ports());
        let code = issue(&store);
        let tokens = exchange(&store, &code).unwrap();
        let (key, value) = stored_grant(&env);
        let mut grant: serde_json::Value = serde_json::from_slice(&value).unwrap();
        grant["principal"] = "mallory".into();
        block_on(env.oauth.put(
            &key,
            CacheEntry {
                value: grant.to_string().into_bytes(),
                metadata: String::new(),
            },
            3600,
        ))
        .unwrap();
        assert!(matches!(
            block_on(store.authenticate(&tokens.access_token)),
            Err(Rejection::Unavailable(_))
        ));
    }
}
