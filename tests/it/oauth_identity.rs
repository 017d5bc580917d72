//! Host tests of the signed-in person's own upstream identity: a policy rule choosing
//! `signed-in-user` sends the person's GitHub token from their sign-in (and names it in
//! `_meta`), never the deployment's and never to a log; provider groups match `match.groups`;
//! an expiring token is renewed with its refresh token before it expires, and one that cannot
//! be renewed asks the person to sign in again.

use crate::common::ci::*;
use crate::common::oauth::{mint_signed_in, oauth_settings};
use crate::common::protocol::TOKEN;
use crate::common::server::{Reply, TestServer};
use devtools_mcp_edge::oauth::store::{SignedIn, UpstreamToken};
use devtools_mcp_edge::ports::fake::FakeEnv;
use devtools_mcp_edge::ports::Clock;
use devtools_mcp_edge::ports::{UpstreamRequest, UpstreamResponse};
use devtools_mcp_edge::upstream::Secret;
use serde_json::{json, Value as Json};

const RUNS: &str = "github_list_workflow_runs";
const PERSON_TOKEN: &str = "gho_person_0123456789SECRET";
const RENEWED_TOKEN: &str = "ghu_renewed_0123456789SECRET";

/// Members of the GitHub organisation `acme` read CI as themselves; `ci` (a static token) too.
const POLICY: &str = r#"{
  "rules": [
    {"id": "acme-as-themselves", "match": {"groups": ["github:acme"], "tools": ["github_*"]},
     "effect": "allow", "identities": {"github": "signed-in-user"}},
    {"id": "ci-as-itself", "match": {"principals": ["ci"], "tools": ["github_*"]},
     "effect": "allow", "identities": {"github": "signed-in-user"}}
  ]
}"#;

fn upstream(
    request: &UpstreamRequest,
) -> Result<UpstreamResponse, devtools_mcp_edge::ports::TransportError> {
    Ok(if request.url.ends_with("/login/oauth/access_token") {
        json_response(
            200,
            &json!({"access_token": RENEWED_TOKEN, "token_type": "bearer", "expires_in": 28_800,
                    "refresh_token": "ghr_renewed_refresh"})
            .to_string(),
            &[],
        )
    } else {
        json_response(200, r#"{"total_count": 0, "workflow_runs": []}"#, &[])
    })
}

fn server() -> TestServer {
    let mut pairs: Vec<(String, String)> = oauth_settings();
    pairs.push(("MCP_POLICY".into(), POLICY.into()));
    // The sign-in's GitHub is the tools' GitHub (an Enterprise host here).
    pairs.push(("MCP_OAUTH_GITHUB_URL".into(), "https://ghe.test".into()));
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    ci_builder(&pairs).upstream(upstream).build()
}

fn person(name: &str, groups: &[&str], token: UpstreamToken) -> SignedIn {
    SignedIn {
        principal: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        upstream: vec![token],
    }
}

fn github_token(access: &str, refresh: Option<&str>, expires_ms: Option<u64>) -> UpstreamToken {
    UpstreamToken {
        vendor: "github".into(),
        access: Secret::new(access),
        refresh: refresh.map(Secret::new),
        expires_ms,
        site: None,
    }
}

fn list_runs(test: &TestServer, bearer: &str) -> Reply {
    test.call_as(
        bearer,
        RUNS,
        json!({"owner": "octo-org", "repo": "hello-world"}),
    )
}

/// The Authorization header of every request sent to the GitHub API.
fn api_credentials(env: &FakeEnv) -> Vec<String> {
    env.http
        .sent()
        .iter()
        .filter(|r| r.url.starts_with(GITHUB_URL))
        .map(|r| {
            request_header(r, "Authorization")
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn acting(reply: &Reply) -> &Json {
    &reply.result()["_meta"]["mcp-devtools/upstream"]
}

#[test]
fn a_rule_choosing_the_signed_in_user_acts_with_their_own_github_token() {
    let test = server();
    let tokens = mint_signed_in(
        &test.server,
        &test.env,
        person(
            "octocat",
            &["github:acme"],
            github_token(PERSON_TOKEN, None, None),
        ),
    );
    let reply = list_runs(&test, &tokens.access_token);
    assert!(!reply.is_error(), "{}", reply.raw);
    assert_eq!(
        acting(&reply),
        &json!({"vendor": "github", "identity": "signed-in-user"})
    );
    assert_eq!(
        api_credentials(&test.env),
        [format!("Bearer {PERSON_TOKEN}")]
    );
    assert!(!reply.raw.contains(PERSON_TOKEN));
    assert!(test
        .env
        .log
        .lines()
        .iter()
        .all(|l| !l.contains(PERSON_TOKEN) && !l.contains(GITHUB_TOKEN)));
    // Another person's same call is not served from the first one's cache: their own token goes.
    let other = mint_signed_in(
        &test.server,
        &test.env,
        person(
            "hubot",
            &["github:acme"],
            github_token("gho_hubot_0123456789", None, None),
        ),
    );
    assert!(!list_runs(&test, &other.access_token).is_error());
    assert_eq!(
        api_credentials(&test.env),
        [
            format!("Bearer {PERSON_TOKEN}"),
            "Bearer gho_hubot_0123456789".to_owned()
        ]
    );
}

#[test]
fn provider_groups_match_rules_and_a_static_token_has_no_personal_identity() {
    let test = server();
    // Outside the provider group `acme`: no rule matches, default deny.
    let outsider = mint_signed_in(
        &test.server,
        &test.env,
        person(
            "mallory",
            &["github:other"],
            github_token(PERSON_TOKEN, None, None),
        ),
    );
    let reply = list_runs(&test, &outsider.access_token);
    assert!(reply.is_error());
    assert_eq!(
        reply.result()["_meta"]["code"],
        "policy_denied",
        "{}",
        reply.raw
    );
    // A static-token principal chosen to act as itself has no token of its own.
    let reply = list_runs(&test, TOKEN);
    assert!(reply.is_error());
    assert_eq!(
        reply.result()["_meta"]["code"],
        "sign_in_required",
        "{}",
        reply.raw
    );
    assert!(reply.text().contains("sign in"), "{}", reply.text());
    assert!(
        api_credentials(&test.env).is_empty(),
        "the deployment's token was sent"
    );
}

#[test]
fn an_expiring_token_is_renewed_before_it_expires_and_an_expired_one_asks_to_sign_in_again() {
    let test = server();
    let now = test.env.clock.now_ms();
    let hour = 3_600_000;
    let renewable = mint_signed_in(
        &test.server,
        &test.env,
        person(
            "octocat",
            &["github:acme"],
            github_token(PERSON_TOKEN, Some("ghr_first"), Some(now + hour)),
        ),
    );
    // Far from expiry: no renewal.
    assert!(!list_runs(&test, &renewable.access_token).is_error());
    // Within five minutes of expiry: renewed first, and the renewed token acts (and is kept).
    test.env.clock.advance(hour - 60_000);
    assert!(!list_runs(&test, &renewable.access_token).is_error());
    assert!(!list_runs(&test, &renewable.access_token).is_error());
    let renewals: Vec<String> = test
        .env
        .http
        .sent()
        .iter()
        .filter(|r| r.url.ends_with("/login/oauth/access_token"))
        .map(|r| String::from_utf8_lossy(r.body.as_deref().unwrap_or_default()).into_owned())
        .collect();
    assert_eq!(renewals.len(), 1, "{renewals:?}");
    assert!(
        renewals[0].contains("grant_type=refresh_token")
            && renewals[0].contains("refresh_token=ghr_first")
    );
    assert_eq!(
        api_credentials(&test.env),
        [PERSON_TOKEN, RENEWED_TOKEN, RENEWED_TOKEN].map(|t| format!("Bearer {t}"))
    );
    // No refresh token and past expiry: refused, asking to sign in again; nothing sent.
    let now = test.env.clock.now_ms();
    let expiring = mint_signed_in(
        &test.server,
        &test.env,
        person(
            "hubot",
            &["github:acme"],
            github_token("ghu_short", None, Some(now + 1_000)),
        ),
    );
    test.env.clock.advance(1_000);
    let before = test.env.http.sent().len();
    let reply = list_runs(&test, &expiring.access_token);
    assert_eq!(
        reply.result()["_meta"]["code"],
        "sign_in_required",
        "{}",
        reply.raw
    );
    assert!(
        reply.text().contains("sign in to this server again"),
        "{}",
        reply.text()
    );
    assert_eq!(test.env.http.sent().len(), before);
    for line in test.env.log.lines() {
        assert!(
            !line.contains("ghr_first") && !line.contains(RENEWED_TOKEN),
            "{line}"
        );
    }
}
