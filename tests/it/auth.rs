//! Host tests of authentication: bearer tokens per principal (single and lists), 401 with
//! `WWW-Authenticate`, the no-tokens case, and the loopback-only anonymous opt-in.

use crate::common::protocol::*;
use devtools_mcp_edge::http::HttpResponse;
use serde_json::json;

fn echo() -> String {
    request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "who"}}),
    )
    .to_string()
}

fn echoed_text(response: &HttpResponse) -> String {
    body_json(response)["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn missing_credentials_are_401_with_a_bearer_challenge() {
    let server = server();
    for authorization in ["", "Basic dXNlcjpwYXNz", "Bearer", TOKEN] {
        let response = send(&server, post(&echo(), &[("Authorization", authorization)]));
        assert_eq!(response.status, 401, "{authorization:?}");
        assert_eq!(
            response.header("WWW-Authenticate"),
            Some("Bearer"),
            "{authorization:?}"
        );
        assert_eq!(error_code(&body_json(&response)), -32000);
    }
}

#[test]
fn a_wrong_token_is_401_invalid_token() {
    let server = server();
    for token in ["ci-token-0123456789abcdeX", "ci-token-0123456789abcde", "x"] {
        let (response, log) = send_logged(
            &server,
            post(&echo(), &[("Authorization", &format!("Bearer {token}"))]),
        );
        assert_eq!(response.status, 401);
        assert_eq!(
            response.header("WWW-Authenticate"),
            Some("Bearer error=\"invalid_token\"")
        );
        let everything = format!("{log:?}{}", String::from_utf8_lossy(&response.body));
        assert!(
            !everything.contains(token),
            "the presented token leaked: {everything}"
        );
    }
}

#[test]
fn the_token_selects_the_principal_passed_to_tools() {
    let server = server();
    let ci = send(&server, post(&echo(), &[]));
    assert_eq!(echoed_text(&ci), "who (principal ci, revision 2025-03-26)");
    for token in ["alice-token-1-0123456789", ALICE_TOKEN_2] {
        let alice = send(
            &server,
            post(&echo(), &[("Authorization", &format!("bearer {token}"))]),
        );
        assert_eq!(alice.status, 200);
        assert_eq!(
            echoed_text(&alice),
            "who (principal alice, revision 2025-03-26)"
        );
    }
}

#[test]
fn no_tokens_configured_refuses_everything_and_says_why_in_the_log() {
    let server = server_with(vec![]);
    let (response, log) = send_logged(&server, post(&echo(), &[]));
    assert_eq!(response.status, 401);
    assert_eq!(response.header("WWW-Authenticate"), Some("Bearer"));
    assert!(
        log.iter().any(|l| l.contains("\"no_auth_tokens\"")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.contains("\"auth_not_configured\"")),
        "{log:?}"
    );
    // Every later request is refused and logged too.
    let (again, log) = send_logged(&server, post(&echo(), &[("Authorization", "")]));
    assert_eq!(again.status, 401);
    assert!(log.iter().any(|l| l.contains("MCP_AUTH_TOKENS")), "{log:?}");
    // An empty object is the same as no setting.
    let empty = server_with(vec![("MCP_AUTH_TOKENS".into(), "{}".into())]);
    assert_eq!(send(&empty, post(&echo(), &[])).status, 401);
}

fn anonymous_server(with_tokens: bool) -> devtools_mcp_edge::server::Server {
    let mut settings = if with_tokens { base_settings() } else { vec![] };
    settings.push(("MCP_ALLOW_ANONYMOUS".into(), "true".into()));
    server_with(settings)
}

#[test]
fn anonymous_needs_the_opt_in_and_a_loopback_host() {
    let server = anonymous_server(false);
    for host in ["localhost:8787", "127.0.0.1", "[::1]:8787"] {
        let (response, log) = send_logged(
            &server,
            post(&echo(), &[("Authorization", ""), ("Host", host)]),
        );
        assert_eq!(response.status, 200, "{host}");
        assert_eq!(
            echoed_text(&response),
            "who (principal anonymous, revision 2025-03-26)"
        );
        assert!(log
            .iter()
            .any(|l| l.contains("\"anonymous_request\"") && l.contains("\"warn\"")));
    }
    for host in ["mcp.example.com", "localhost.example.com", ""] {
        let response = send(
            &server,
            post(&echo(), &[("Authorization", ""), ("Host", host)]),
        );
        assert_eq!(response.status, 401, "{host:?}");
    }
    // A presented token is always checked, and none can match.
    let wrong = send(
        &server,
        post(
            &echo(),
            &[
                ("Authorization", "Bearer wrong-token-0123456789"),
                ("Host", "localhost"),
            ],
        ),
    );
    assert_eq!(wrong.status, 401);
}

#[test]
fn configured_tokens_switch_anonymous_off() {
    let server = anonymous_server(true);
    let (response, log) = send_logged(
        &server,
        post(&echo(), &[("Authorization", ""), ("Host", "localhost")]),
    );
    assert_eq!(response.status, 401);
    assert!(
        log.iter().any(|l| l.contains("\"anonymous_ignored\"")),
        "{log:?}"
    );
    let right = send(&server, post(&echo(), &[("Host", "localhost")]));
    assert_eq!(
        echoed_text(&right),
        "who (principal ci, revision 2025-03-26)"
    );
}

#[test]
fn without_the_opt_in_loopback_is_not_special() {
    let server = server();
    let response = send(
        &server,
        post(&echo(), &[("Authorization", ""), ("Host", "localhost")]),
    );
    assert_eq!(response.status, 401);
    let off = server_with(vec![("MCP_ALLOW_ANONYMOUS".into(), "false".into())]);
    let response = send(
        &off,
        post(&echo(), &[("Authorization", ""), ("Host", "localhost")]),
    );
    assert_eq!(response.status, 401);
}
