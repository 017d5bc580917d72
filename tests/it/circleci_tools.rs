//! Host tests of `circleci_get` through `Server::handle`: the request sent (URL, query,
//! `Circle-Token`), the `{data, cache}` envelope, body decoding (204, text), error statuses,
//! transport failures and refused paths. Cache behaviour is in tests/it/http_cache.rs.

use crate::common::ci::*;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::{TransportError, UpstreamResponse};
use serde_json::json;

const GET: &str = "circleci_get";

#[test]
fn sends_circle_token_and_the_query() {
    let server = ci_server();
    let env = env_with(|_| {
        Ok(json_response(
            200,
            r#"{"items":[],"next_page_token":null}"#,
            &[],
        ))
    });
    let out = call(
        &server,
        &env,
        GET,
        json!({"path": "/project/gh/octo-org/hello-world/envvar?limit=5",
               "queryParams": {"page-token": "a b/c+d", "branch": "main"}}),
    );
    assert!(!out.is_error, "{}", out.text);
    let sent = env.http.sent();
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(r.method, "GET");
    assert!(
        r.url.starts_with(
            "https://circle.test/api/v2/project/gh/octo-org/hello-world/envvar?limit=5&"
        ),
        "{}",
        r.url
    );
    assert!(r.url.contains("page-token=a+b%2Fc%2Bd"), "{}", r.url);
    assert!(r.url.contains("branch=main"), "{}", r.url);
    assert_eq!(request_header(r, "Circle-Token"), Some(CIRCLECI_TOKEN));
    assert_eq!(request_header(r, "Authorization"), None);
    assert_eq!(request_header(r, "Accept"), Some("application/json"));
    assert_eq!(r.body, None);
    assert!(!r.url.contains("fresh"));
    assert_no_secret(&out, &env);
}

#[test]
fn answers_data_and_cache_state() {
    let server = ci_server();
    let env = env_with(|_| Ok(json_response(200, r#"{"name":"octocat","id":"u-1"}"#, &[])));
    let out = call(
        &server,
        &env,
        GET,
        json!({"path": "/me", "outputFormat": "json"}),
    );
    assert_eq!(
        out.json(),
        json!({"data": {"name": "octocat", "id": "u-1"},
               "cache": {"hit": false, "ageMs": 0, "fetchedAt": "2026-01-01T00:00:00.000Z"}})
    );
    let toon = call(
        &server,
        &env,
        GET,
        json!({"path": "/me", "jq": "name", "fresh": true}),
    );
    assert_eq!(
        toon.text,
        "data: octocat\ncache:\n  hit: false\n  ageMs: 0\n  fetchedAt: \"2026-01-01T00:00:00.000Z\""
    );
}

#[test]
fn a_leading_api_v2_is_dropped() {
    let server = ci_server();
    let env = env_with(|_| Ok(json_response(200, "{}", &[])));
    call(&server, &env, GET, json!({"path": "/api/v2/me"}));
    assert_eq!(env.http.sent()[0].url, "https://circle.test/api/v2/me");
}

#[test]
fn empty_and_text_bodies() {
    let server = ci_server();
    let env = env_with(|r| {
        Ok(if r.url.ends_with("/empty") {
            UpstreamResponse {
                status: 204,
                status_text: "No Content".into(),
                headers: vec![],
                body: vec![],
            }
        } else {
            UpstreamResponse {
                status: 200,
                status_text: "OK".into(),
                headers: vec![("Content-Type".into(), "text/plain".into())],
                body: b"line 1\nline 2\n".to_vec(),
            }
        })
    });
    let empty = call(
        &server,
        &env,
        GET,
        json!({"path": "/empty", "outputFormat": "json"}),
    );
    assert_eq!(empty.json()["data"], json!({}));
    let text = call(
        &server,
        &env,
        GET,
        json!({"path": "/log.txt", "outputFormat": "json"}),
    );
    assert_eq!(text.json()["data"], "line 1\nline 2\n");
    // Served again from the cache, both decode the same way.
    let empty = call(
        &server,
        &env,
        GET,
        json!({"path": "/empty", "outputFormat": "json"}),
    );
    assert_eq!(empty.json()["data"], json!({}));
    assert_eq!(empty.json()["cache"]["hit"], true);
    let text = call(
        &server,
        &env,
        GET,
        json!({"path": "/log.txt", "outputFormat": "json", "jq": "length(@)"}),
    );
    assert_eq!(text.json()["data"], 14);
    assert_eq!(text.json()["cache"]["hit"], true);
    assert_eq!(env.http.sent().len(), 2);
}

#[test]
fn error_statuses_are_error_results() {
    let server = ci_server();
    let cases: &[StatusCase] = &[
        (400, r#"{"message":"Invalid page-token."}"#, &[], "Error: CircleCI API request failed. Detail: Invalid page-token.\nCircleCI API Error: {\"message\":\"Invalid page-token.\"}"),
        (401, r#"{"message":"You must log in first."}"#, &[], "Error: Authentication failed. CircleCI API: You must log in first.\n"),
        (403, r#"{"message":"Permission denied"}"#, &[], "Error: Insufficient permissions. CircleCI API: Permission denied\n"),
        (404, r#"{"message":"Project not found"}"#, &[], "Error: Resource not found. CircleCI API: Project not found\nCircleCI API Error: {\"message\":\"Project not found\"}"),
        (429, r#"{"message":"Rate limit exceeded"}"#, &[("Retry-After", "30")],
         "Error: Rate limit exceeded. CircleCI API: Rate limit exceeded. Retry after 30 seconds (at 2026-01-01T00:00:30.000Z).\n"),
        (429, "", &[], "Error: Rate limit exceeded. CircleCI API: 429 Too Many Requests. The API gave no retry time: wait a minute before retrying."),
        (500, "<html>oops</html>", &[], "Error: CircleCI server error. Detail: 500 Internal Server Error\nCircleCI API Error: <html>oops</html>"),
        (503, "", &[], "Error: CircleCI server error. Detail: 503 Service Unavailable"),
    ];
    for (status, body, headers, expected) in cases {
        let (status, body) = (*status, body.to_string());
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let env = env_with(move |_| {
            let h: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            Ok(json_response(status, &body, &h))
        });
        let out = call(&server, &env, GET, json!({"path": "/project/gh/o/r"}));
        assert!(out.is_error, "{status}: {}", out.text);
        assert!(
            out.text.starts_with(expected),
            "{status}: {:?}\nexpected prefix {expected:?}",
            out.text
        );
        // Errors are never cached: a second call asks again.
        call(&server, &env, GET, json!({"path": "/project/gh/o/r"}));
        assert_eq!(env.http.sent().len(), 2, "{status}");
        assert!(env.cache.keys().is_empty(), "{status}");
        assert_no_secret(&out, &env);
    }
}

#[test]
fn transport_failures_are_clear_errors() {
    let server = ci_builder(&[("UPSTREAM_MAX_BYTES", "65536")])
        .build()
        .server;
    let cases: Vec<(Responder, &str)> = vec![
        (
            Box::new(|_| Err(TransportError::Timeout)),
            "Error: Request timeout: CircleCI API did not respond within 30 seconds",
        ),
        (
            Box::new(|_| {
                Err(TransportError::Network(format!(
                    "reset; token {CIRCLECI_TOKEN}"
                )))
            }),
            "Error: Network error connecting to CircleCI API: fetch failed",
        ),
        (
            Box::new(|_| Ok(json_response(200, &"[1]".repeat(30_000), &[]))),
            "Error: Response size exceeds the maximum of 65536 bytes",
        ),
    ];
    for (respond, expected) in cases {
        let env = FakeEnv::with_http(ScriptedHttp::new(respond));
        let out = call(&server, &env, GET, json!({"path": "/me"}));
        assert!(out.is_error);
        assert!(out.text.starts_with(expected), "{:?}", out.text);
        assert!(env.cache.keys().is_empty());
        assert_no_secret(&out, &env);
    }
}

#[test]
fn path_injection_never_reaches_upstream() {
    let server = ci_server();
    let env = FakeEnv::new();
    for path in [
        "https://evil.test/me",
        "http:/evil.test/me",
        "//evil.test/me",
        "/me@evil.test",
        "/project/..\\..\\me",
        "/../me",
        "/project/../../me",
        "/%2e%2e/admin",
        "/me\r\nX-Injected: 1",
        "/me#frag",
        "/me%zz",
        "",
    ] {
        let out = call(&server, &env, GET, json!({"path": path}));
        assert!(out.is_error, "{path:?}: {}", out.text);
        assert!(
            out.text.contains("Invalid path") || out.text.contains("arguments.path"),
            "{path:?}: {}",
            out.text
        );
    }
    for args in [
        json!({"path": "/me", "queryParams": {"n": 5}}),
        json!({"path": "/me", "fresh": "yes"}),
        json!({"path": "/me", "body": {}}),
        json!({"path": ["/me"]}),
    ] {
        assert!(call(&server, &env, GET, args.clone()).is_error, "{args}");
    }
    assert!(env.http.sent().is_empty());
}

#[test]
fn without_a_token_the_error_says_what_to_set() {
    let server = ci_builder(&[]).without("CIRCLECI_TOKEN").build().server;
    let env = FakeEnv::new();
    let out = call(&server, &env, GET, json!({"path": "/me"}));
    assert!(out.is_error);
    assert_eq!(
        out.text,
        "Error: CircleCI is not configured on this server: set the secret CIRCLECI_TOKEN."
    );
    assert!(env.http.sent().is_empty() && env.cache.keys().is_empty());
}

#[test]
fn malformed_json_declared_as_json_is_an_error_and_never_cached() {
    let server = ci_server();
    let env = env_with(|_| Ok(json_response(200, r#"{"items": [{"id": 1, "name": "#, &[])));
    for _ in 0..2 {
        let out = call(&server, &env, GET, json!({"path": "/me"}));
        assert!(out.is_error, "{}", out.raw);
        assert!(
            out.text.starts_with(
                "Error: Invalid response from CircleCI API: the body is declared as JSON but is not valid JSON"
            ),
            "{}",
            out.text
        );
    }
    // Both calls went upstream: the broken body was not cached.
    assert_eq!(env.http.sent().len(), 2);
}
