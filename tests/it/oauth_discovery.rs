//! Host tests of OAuth discovery and of how the MCP endpoint authenticates with OAuth on:
//! metadata documents, which 401s point at discovery, issued tokens beside static tokens.

use crate::common::oauth::*;
use devtools_mcp_edge::ports::fake::FakeEnv;
use serde_json::json;

fn tools_list() -> String {
    request(1, "tools/list", json!({"_meta": meta_2026()})).to_string()
}

fn mcp_post(authorization: &str) -> devtools_mcp_edge::http::HttpRequest {
    let mut request = post(&tools_list(), &[("Authorization", authorization)]);
    for (name, value) in headers_2026("tools/list", None) {
        request.headers.push((name.into(), value.into()));
    }
    request
}

#[test]
fn metadata_documents() {
    let server = oauth_server();
    let env = FakeEnv::new();
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = send_on(&server, &env, http("GET", path, &[], ""));
        assert_eq!(response.status, 200, "{path}");
        assert_eq!(response.header("Access-Control-Allow-Origin"), Some("*"));
        let body = body_json(&response);
        assert_eq!(body["resource"], "https://mcp.example.com/mcp");
        assert_eq!(body["authorization_servers"], json!([ISSUER]));
    }
    let response = send_on(
        &server,
        &env,
        http("GET", "/.well-known/oauth-authorization-server", &[], ""),
    );
    assert_eq!(response.header("Content-Type"), Some("application/json"));
    let body = body_json(&response);
    assert_eq!(body["issuer"], ISSUER);
    assert_eq!(
        body["authorization_endpoint"],
        "https://mcp.example.com/oauth/authorize"
    );
    assert_eq!(
        body["token_endpoint"],
        "https://mcp.example.com/oauth/token"
    );
    assert_eq!(body["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(body["client_id_metadata_document_supported"], true);
    assert_eq!(body["authorization_response_iss_parameter_supported"], true);
    let post = send_on(
        &server,
        &env,
        http("POST", "/.well-known/oauth-authorization-server", &[], ""),
    );
    assert_eq!(post.status, 405);
}

#[test]
fn without_oauth_there_is_no_discovery() {
    let server = server();
    let env = FakeEnv::new();
    let response = send_on(
        &server,
        &env,
        http("GET", "/.well-known/oauth-protected-resource/mcp", &[], ""),
    );
    assert_eq!(response.status, 404);
    let (status, _) = rpc(
        &server,
        request(1, "ping", json!({})),
        &[("Authorization", "")],
    );
    assert_eq!(status, 401);
    let response = send(&server, post("{}", &[("Authorization", "")]));
    assert_eq!(response.header("WWW-Authenticate"), Some("Bearer"));
}

#[test]
fn only_credential_less_and_issued_token_requests_are_pointed_at_discovery() {
    let server = oauth_server();
    let env = FakeEnv::new();
    let discovery =
        "resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\"";
    let cases = [
        ("", Some(false)),
        ("Bearer mcp_at_unknown-token-value", Some(true)),
        ("Bearer a-static-token-that-is-wrong", None),
    ];
    for (authorization, expected) in cases {
        let response = send_on(&server, &env, mcp_post(authorization));
        assert_eq!(response.status, 401, "{authorization}");
        let challenge = response.header("WWW-Authenticate").unwrap();
        match expected {
            Some(invalid) => {
                assert!(
                    challenge.contains(discovery),
                    "{authorization}: {challenge}"
                );
                assert_eq!(challenge.contains("invalid_token"), invalid, "{challenge}");
            }
            None => assert_eq!(
                challenge, "Bearer error=\"invalid_token\"",
                "{authorization}"
            ),
        }
    }
}

#[test]
fn issued_and_static_tokens_both_serve() {
    let server = oauth_server();
    let env = FakeEnv::new();
    let tokens = mint_tokens(&server, &env, "octocat");
    for authorization in [
        format!("Bearer {}", tokens.access_token),
        format!("Bearer {TOKEN}"),
    ] {
        let response = send_on(&server, &env, mcp_post(&authorization));
        assert_eq!(
            response.status,
            200,
            "{}",
            String::from_utf8_lossy(&response.body)
        );
        assert!(body_json(&response)["result"]["tools"].is_array());
    }
    // A refresh token is not an access token.
    let response = send_on(
        &server,
        &env,
        mcp_post(&format!("Bearer {}", tokens.refresh_token)),
    );
    assert_eq!(response.status, 401);
}

#[test]
fn an_expired_access_token_is_refused_with_the_reason_in_the_log_only() {
    let server = oauth_server();
    let env = FakeEnv::new();
    let tokens = mint_tokens(&server, &env, "octocat");
    env.clock
        .advance(settings_of(&server).access_ttl_seconds * 1000);
    let response = send_on(
        &server,
        &env,
        mcp_post(&format!("Bearer {}", tokens.access_token)),
    );
    assert_eq!(response.status, 401);
    assert_eq!(
        body_json(&response)["error"]["message"],
        "Unauthorized: invalid or expired access token"
    );
    let reason = "\"event\":\"oauth_token_refused\"";
    assert!(env.log.lines().iter().any(|l| l.contains(reason)));
    assert!(env
        .log
        .lines()
        .iter()
        .all(|l| !l.contains(&tokens.access_token)));
}
