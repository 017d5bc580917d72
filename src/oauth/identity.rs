//! Who a signed-in person is, and whether they may be: stable principal names from what the
//! identity provider verified, the admission a sign-in and every refresh pass, and the refresh's
//! re-check against the provider (docs/decisions/0078-verified-principals-and-provider-group-namespaces.md).

use super::error::OAuthError;
use super::idp;
use super::settings::{OAuthSettings, Provider};
use super::store::{GrantIdentity, SignedIn, TokenStore, UpstreamToken};
use super::RENEW_BEFORE_MS;
use crate::auth::{split_attributes, valid_signed_in_name, STABLE_SEPARATOR};
use crate::hex::hex;
use crate::ports::{Level, Ports};
use sha2::{Digest, Sha256};

/// The principal name of the GitHub user with numeric `id`: logins are renamed and
/// re-registered, the id never changes hands.
pub fn github_principal(id: u64) -> String {
    format!("github{STABLE_SEPARATOR}{id}")
}

/// The principal name of OpenID Connect subject `subject` at the provider answering at
/// `issuer`: 128 bits of SHA-256 over both, so it has a fixed length whatever the subject.
pub fn oidc_principal(issuer: &str, subject: &str) -> String {
    let mut hash = Sha256::new();
    hash.update((issuer.len() as u64).to_be_bytes());
    hash.update(issuer.as_bytes());
    hash.update(subject.as_bytes());
    format!("oidc{STABLE_SEPARATOR}{}", hex(&hash.finalize()[..16]))
}

/// Every check a person passes before a code is issued for them, and again at each refresh: a
/// usable principal name, no alias that is a static token's principal name (a policy naming
/// that principal would also mean them), and the allow-list in force.
pub fn admit(settings: &OAuthSettings, signed_in: &SignedIn) -> Result<(), OAuthError> {
    if !valid_signed_in_name(&signed_in.principal) {
        return Err(OAuthError::access_denied(
            "the identity provider's name for you is not a usable principal name",
        ));
    }
    let (aliases, _) = split_attributes(&signed_in.groups);
    if settings.allow.is_static_name(&aliases) {
        return Err(OAuthError::access_denied(
            "your name at the identity provider belongs to a principal with a static token; it \
             cannot sign in",
        ));
    }
    let email = aliases.iter().find(|a| a.contains('@')).map(String::as_str);
    if !settings
        .allow
        .admits(&signed_in.principal, &signed_in.groups, email)
    {
        return Err(OAuthError::access_denied(
            "you are not allowed to sign in to this server",
        ));
    }
    Ok(())
}

/// Before a refresh token is redeemed: reads the person again from the identity provider with
/// the provider token sealed in the grant (renewed first when it expires soon) and admits them
/// again; accepted, the grant takes the fresh attributes and tokens. A person the provider no
/// longer vouches for, or the allow-list no longer admits, has the grant revoked and the refresh
/// refused. A refresh token `TokenStore::refresh` would refuse anyway is left to it.
pub(super) async fn recheck(
    settings: &OAuthSettings,
    store: &TokenStore<'_>,
    refresh_token: &str,
    client_id: &str,
    ports: Ports<'_>,
) -> Result<(), OAuthError> {
    let Some(grant) = store.grant_behind_refresh(refresh_token, client_id).await? else {
        return Ok(());
    };
    match reread(settings, &grant, ports).await? {
        Ok((attributes, upstream)) => {
            store
                .update_identity(&grant.grant, attributes, &upstream)
                .await
        }
        Err(reason) => {
            let aliases = split_attributes(&grant.attributes).0.join(" ");
            ports.log.event(
                Level::Warn,
                "oauth_refresh_refused",
                &[
                    ("principal", (&grant.principal).into()),
                    ("aliases", (&aliases).into()),
                    ("reason", (&reason).into()),
                ],
            );
            store.revoke_grant(&grant.grant).await?;
            Err(OAuthError::invalid_grant(format!(
                "{reason}; the grant is revoked, sign in again"
            )))
        }
    }
}

/// The person behind `grant` read again: their fresh attributes and upstream tokens, or why
/// they are refused now. An outage at the provider is an error, which revokes nothing.
async fn reread(
    settings: &OAuthSettings,
    grant: &GrantIdentity,
    ports: Ports<'_>,
) -> Result<Result<(Vec<String>, Vec<UpstreamToken>), String>, OAuthError> {
    let mut upstream = grant.upstream.clone();
    let Some(at) = upstream.iter().position(|t| is_identity_token(settings, t)) else {
        return Ok(Err(
            "the grant holds no identity-provider token to check you with".into(),
        ));
    };
    let token = match renewed(settings, &upstream[at], ports).await {
        Ok(token) => token,
        Err(e) if e.code == "server_error" => return Err(e),
        Err(e) => {
            return Ok(Err(format!(
                "your identity-provider token has expired and cannot be renewed ({})",
                e.description
            )))
        }
    };
    let now = match idp::identify(settings, token, ports).await {
        Ok((now, _)) => now,
        Err(e) if e.code == "server_error" => return Err(e),
        Err(e) => {
            return Ok(Err(format!(
                "the identity provider no longer vouches for you ({})",
                e.description
            )))
        }
    };
    if now.principal != grant.principal {
        return Ok(Err("the identity provider now names another person".into()));
    }
    if let Err(e) = admit(settings, &now) {
        return Ok(Err(e.description));
    }
    if let Some(fresh) = now.upstream.into_iter().next() {
        upstream[at] = fresh;
    }
    Ok(Ok((now.groups, upstream)))
}

/// True for the token the identity provider issued at sign-in (GitHub's, or the OpenID Connect
/// provider's), which reads the person again.
fn is_identity_token(settings: &OAuthSettings, token: &UpstreamToken) -> bool {
    match settings.provider {
        Provider::GitHub { .. } => token.vendor == "github",
        Provider::Oidc(_) => token.vendor == idp::OIDC_VENDOR,
    }
}

/// `token`, renewed with its refresh token when it expires within [`RENEW_BEFORE_MS`]; an
/// expired one without a refresh token is an error.
async fn renewed(
    settings: &OAuthSettings,
    token: &UpstreamToken,
    ports: Ports<'_>,
) -> Result<UpstreamToken, OAuthError> {
    let due = token
        .expires_ms
        .is_some_and(|at| at <= ports.clock.now_ms().saturating_add(RENEW_BEFORE_MS));
    if !due {
        return Ok(token.clone());
    }
    idp::refresh(settings, token, ports).await
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

    #[test]
    fn admit_checks_the_name_the_static_names_and_the_allow_list() {
        let mut settings = crate::oauth::store::tests::settings();
        settings.allow.users = vec!["octocat".into()];
        settings.allow.groups = vec!["acme".into()];
        settings.allow.static_names = vec!["ci".into()];
        let person = |principal: &str, attributes: &[&str]| SignedIn {
            principal: principal.into(),
            groups: attributes.iter().map(|a| a.to_string()).collect(),
            upstream: Vec::new(),
        };
        assert!(admit(&settings, &person("github~1", &["login:OctoCat"])).is_ok());
        assert!(admit(&settings, &person("github~2", &["login:x", "github:acme"])).is_ok());
        let refused = [
            person("octocat", &["login:octocat"]),
            person("github~3", &["login:ci", "github:acme"]),
            person("github~4", &["login:mallory", "github:other"]),
            person(&oidc_principal("u", "5"), &["email:octocat@example.com"]),
        ];
        for p in refused {
            let err = admit(&settings, &p).unwrap_err();
            assert_eq!(err.code, "access_denied", "{p:?}");
        }
    }
}
