//! Host tests of the signed-in person's own Atlassian identity: with Atlassian's OAuth app
//! configured, a rule choosing `signed-in-user` for Jira or Confluence sends the person's
//! Atlassian token, as a bearer, to the product's root on the API gateway for the site found at
//! sign-in, under the same path the policy matched; never the deployment's pair, never to the
//! site URL, never to a log. An expiring token is renewed with its rotating refresh token (a
//! JSON body at Atlassian's token endpoint) and the rotation kept; a failed renewal ends in
//! `sign_in_required` once the token has expired.

use crate::common::ci::*;
use crate::common::oauth::{mint_signed_in, oauth_settings};
use crate::common::server::{Reply, TestServer};
use devtools_mcp_edge::oauth::store::{SignedIn, UpstreamToken};
use devtools_mcp_edge::ports::fake::FakeEnv;
use devtools_mcp_edge::ports::Clock;
use devtools_mcp_edge::ports::{UpstreamRequest, UpstreamResponse};
use devtools_mcp_edge::upstream::Secret;
use serde_json::{json, Value as Json};

const SITE: &str = "https://acme.atlassian.net";
const AUTH: &str = "https://auth.atlassian.test";
const GATEWAY: &str = "https://api.atlassian.test";
const CLOUD: &str = "11111111-2222-3333-4444-555555555555";
const PERSON_TOKEN: &str = "atl_person_0123456789SECRET";
const RENEWED_TOKEN: &str = "atl_renewed_0123456789SECRET";
const DEPLOYMENT_TOKEN: &str = "deployment-atlassian-token-SECRET";

const POLICY: &str = r#"{
  "rules": [
    {"id": "atlassian-as-themselves", "match": {"tools": ["jira_*", "conf_*"]},
     "effect": "allow", "identities": {"jira": "signed-in-user", "confluence": "signed-in-user"}}
  ]
}"#;

fn upstream(
    request: &UpstreamRequest,
) -> Result<UpstreamResponse, devtools_mcp_edge::ports::TransportError> {
    let body = String::from_utf8_lossy(request.body.as_deref().unwrap_or_default()).into_owned();
    Ok(if request.url == format!("{AUTH}/oauth/token") {
        if body.contains("atl_refresh_revoked") {
            json_response(403, r#"{"error": "invalid_grant"}"#, &[])
        } else {
            json_response(
                200,
                &json!({"access_token": RENEWED_TOKEN, "token_type": "Bearer",
                        "expires_in": 1_800, "refresh_token": "atl_refresh_rotated"})
                .to_string(),
                &[],
            )
        }
    } else {
        json_response(200, r#"{"accountId": "x"}"#, &[])
    })
}

fn server() -> TestServer {
    let mut pairs: Vec<(String, String)> = oauth_settings();
    for (k, v) in [
        ("MCP_POLICY", POLICY),
        // Long enough for the Atlassian token to be renewed twice under one access token.
        ("MCP_OAUTH_GITHUB_URL", "https://ghe.test"),
        ("ATLASSIAN_BASE_URL", SITE),
        ("ATLASSIAN_USER_EMAIL", "bot@acme.test"),
        ("ATLASSIAN_API_TOKEN", DEPLOYMENT_TOKEN),
        ("MCP_OAUTH_ATLASSIAN_CLIENT_ID", "atl-client"),
        ("MCP_OAUTH_ATLASSIAN_CLIENT_SECRET", "atl-secret"),
        ("MCP_OAUTH_ATLASSIAN_AUTH_URL", AUTH),
        ("MCP_OAUTH_ATLASSIAN_API_URL", GATEWAY),
    ] {
        pairs.push((k.into(), v.into()));
    }
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    ci_builder(&pairs).upstream(upstream).build()
}

fn atlassian_token(refresh: Option<&str>, expires_ms: Option<u64>) -> UpstreamToken {
    UpstreamToken {
        vendor: "atlassian".into(),
        access: Secret::new(PERSON_TOKEN),
        refresh: refresh.map(Secret::new),
        expires_ms,
        site: Some(CLOUD.into()),
    }
}

fn sign_in(test: &TestServer, tokens: Vec<UpstreamToken>) -> String {
    mint_signed_in(
        &test.server,
        &test.env,
        SignedIn {
            principal: "octocat".into(),
            groups: Vec::new(),
            upstream: tokens,
        },
    )
    .access_token
}

fn get(test: &TestServer, bearer: &str, tool: &str, path: &str) -> Reply {
    test.call_as(bearer, tool, json!({"path": path}))
}

/// (URL, Authorization) of every request that was not to Atlassian's token endpoint.
fn api_calls(env: &FakeEnv) -> Vec<(String, String)> {
    env.http
        .sent()
        .iter()
        .filter(|r| !r.url.starts_with(AUTH))
        .map(|r| {
            let auth = request_header(r, "Authorization").unwrap_or_default();
            (r.url.clone(), auth.to_owned())
        })
        .collect()
}

fn code(reply: &Reply) -> &Json {
    &reply.result()["_meta"]["code"]
}

#[test]
fn jira_and_confluence_act_with_the_persons_token_at_the_gateway_under_the_same_path() {
    let test = server();
    let bearer = sign_in(&test, vec![atlassian_token(None, None)]);
    let reply = get(&test, &bearer, "jira_get", "/rest/api/3/myself");
    assert!(!reply.is_error(), "{}", reply.raw);
    assert_eq!(
        reply.result()["_meta"]["mcp-devtools/upstream"],
        json!({"vendor": "jira", "identity": "signed-in-user"})
    );
    let reply = get(&test, &bearer, "conf_get", "/wiki/api/v2/pages");
    assert!(!reply.is_error(), "{}", reply.raw);
    let person = format!("Bearer {PERSON_TOKEN}");
    assert_eq!(
        api_calls(&test.env),
        [
            (
                format!("{GATEWAY}/ex/jira/{CLOUD}/rest/api/3/myself"),
                person.clone()
            ),
            (
                format!("{GATEWAY}/ex/confluence/{CLOUD}/wiki/api/v2/pages"),
                person
            ),
        ]
    );
    for line in test.env.log.lines() {
        assert!(!line.contains(PERSON_TOKEN), "{line}");
    }
    assert!(!reply.raw.contains(PERSON_TOKEN));
}

#[test]
fn without_an_atlassian_sign_in_the_call_asks_to_sign_in_and_nothing_is_sent() {
    let test = server();
    // Signed in with GitHub only (Atlassian consent declined): no Atlassian identity.
    let bearer = sign_in(&test, Vec::new());
    let reply = get(&test, &bearer, "jira_get", "/rest/api/3/myself");
    assert_eq!(code(&reply), "sign_in_required", "{}", reply.raw);
    assert!(
        api_calls(&test.env).is_empty(),
        "the deployment's pair was sent"
    );
}

#[test]
fn an_expiring_atlassian_token_is_renewed_and_its_rotated_refresh_token_kept() {
    let test = server();
    let now = test.env.clock.now_ms();
    let minute = 60_000;
    let bearer = sign_in(
        &test,
        vec![atlassian_token(
            Some("atl_refresh_first"),
            Some(now + 10 * minute),
        )],
    );
    test.env.clock.advance(6 * minute);
    assert!(!get(&test, &bearer, "jira_get", "/rest/api/3/myself").is_error());
    // The renewed token expires half an hour later; renewing it again, while the access token
    // still lives, uses the rotated refresh token.
    test.env.clock.advance(26 * minute);
    assert!(!get(&test, &bearer, "jira_get", "/rest/api/3/myself").is_error());
    let renewals: Vec<Json> = test
        .env
        .http
        .sent()
        .iter()
        .filter(|r| r.url == format!("{AUTH}/oauth/token"))
        .map(|r| serde_json::from_slice(r.body.as_deref().unwrap_or_default()).unwrap())
        .collect();
    assert_eq!(renewals.len(), 2, "{renewals:?}");
    assert_eq!(renewals[0]["grant_type"], "refresh_token");
    assert_eq!(renewals[0]["refresh_token"], "atl_refresh_first");
    assert_eq!(renewals[0]["client_id"], "atl-client");
    assert_eq!(renewals[0]["client_secret"], "atl-secret");
    assert_eq!(renewals[1]["refresh_token"], "atl_refresh_rotated");
    let renewed = format!("Bearer {RENEWED_TOKEN}");
    assert!(api_calls(&test.env).iter().all(|(url, auth)| {
        url.starts_with(&format!("{GATEWAY}/ex/jira/{CLOUD}/")) && *auth == renewed
    }));
    for line in test.env.log.lines() {
        assert!(
            !line.contains("atl_refresh") && !line.contains(RENEWED_TOKEN),
            "{line}"
        );
    }
}

#[test]
fn a_failed_renewal_asks_to_sign_in_again_once_the_token_has_expired() {
    let test = server();
    let now = test.env.clock.now_ms();
    let bearer = sign_in(
        &test,
        vec![atlassian_token(
            Some("atl_refresh_revoked"),
            Some(now + 60_000),
        )],
    );
    // Within the renewal window the old token still works while the renewal fails.
    assert!(!get(&test, &bearer, "jira_get", "/rest/api/3/myself").is_error());
    test.env.clock.advance(60_000);
    let reply = get(&test, &bearer, "jira_get", "/rest/api/3/myself");
    assert_eq!(code(&reply), "sign_in_required", "{}", reply.raw);
    assert_eq!(api_calls(&test.env).len(), 1);
    assert!(test
        .env
        .log
        .lines()
        .iter()
        .any(|l| l.contains("oauth_upstream_renewal_failed")));
}
