//! Whether a signed-in person may be: the admission a sign-in and every refresh pass, and the
//! refresh's re-check against the provider
//! (docs/decisions/0078-verified-principals-and-provider-group-namespaces.md).

use super::error::OAuthError;
use super::idp;
use super::settings::{OAuthSettings, Provider};
use super::store::{GrantIdentity, SignedIn, TokenStore, UpstreamToken};
use super::RENEW_BEFORE_MS;
use crate::auth::{split_attributes, valid_signed_in_name};
use crate::ports::{Level, Ports};

/// Every check a person passes before a code is issued for them, and again at each refresh: a
/// usable principal name, no alias that is a static token's principal name (a policy naming
/// that principal would also mean them), and the allow-list in force.
pub(crate) fn admit(settings: &OAuthSettings, signed_in: &SignedIn) -> Result<(), OAuthError> {
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
        Reread::Vouched(attributes, upstream) => {
            store
                .update_identity(&grant.grant, attributes, &upstream)
                .await
        }
        Reread::Refused(reason) => {
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

/// What the provider says of a person read again.
enum Reread {
    /// Still vouched for and admitted: their fresh attributes and upstream tokens.
    Vouched(Vec<String>, Vec<UpstreamToken>),
    /// No longer: why, for the log and the client.
    Refused(String),
}

/// The person behind `grant` read again: their fresh attributes and upstream tokens, or why
/// they are refused now. An outage at the provider is an error, which revokes nothing.
async fn reread(
    settings: &OAuthSettings,
    grant: &GrantIdentity,
    ports: Ports<'_>,
) -> Result<Reread, OAuthError> {
    let mut upstream = grant.upstream.clone();
    let Some(at) = upstream.iter().position(|t| is_identity_token(settings, t)) else {
        return Ok(Reread::Refused(
            "the grant holds no identity-provider token to check you with".into(),
        ));
    };
    let token = match renewed(settings, &upstream[at], ports).await {
        Ok(token) => token,
        Err(e) if e.code == "server_error" => return Err(e),
        Err(e) => {
            return Ok(Reread::Refused(format!(
                "your identity-provider token has expired and cannot be renewed ({})",
                e.description
            )))
        }
    };
    let now = match idp::identify(settings, token, ports.http).await {
        Ok((now, _)) => now,
        Err(e) if e.code == "server_error" => return Err(e),
        Err(e) => {
            return Ok(Reread::Refused(format!(
                "the identity provider no longer vouches for you ({})",
                e.description
            )))
        }
    };
    if now.principal != grant.principal {
        return Ok(Reread::Refused(
            "the identity provider now names another person".into(),
        ));
    }
    if let Err(e) = admit(settings, &now) {
        return Ok(Reread::Refused(e.description));
    }
    if let Some(fresh) = now.upstream.into_iter().next() {
        upstream[at] = fresh;
    }
    Ok(Reread::Vouched(now.groups, upstream))
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
            person(
                &idp::oidc_principal("u", "5"),
                &["email:octocat@example.com"],
            ),
        ];
        for p in refused {
            let err = admit(&settings, &p).unwrap_err();
            assert_eq!(err.code, "access_denied", "{p:?}");
        }
    }
}
