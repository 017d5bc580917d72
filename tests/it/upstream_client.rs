//! Host tests of the upstream client (`upstream::Client`) on the in-memory ports: credentials and
//! headers per vendor, the configured host only, timeouts, network failures, the body bound,
//! redirects, rate limits, Confluence's error texts, paths refused before any request, and that
//! no secret ever reaches a result, an error text or a log line.

use crate::common::protocol::*;
use base64::Engine as _;
use devtools_mcp_edge::config::Config;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::{TransportError, UpstreamRequest, UpstreamResponse};
use devtools_mcp_edge::server::Server;
use devtools_mcp_edge::tools;
use devtools_mcp_edge::upstream::{
    self, ApiPath, Client, ErrorKind, Method, Target, Targets, UpstreamError, Vendor,
};
use devtools_mcp_edge::value::Value;
use serde_json::json;

const GITHUB_TOKEN: &str = "ghp_secret0123456789";
const CIRCLE_TOKEN: &str = "circle-secret-0123456789";
const EMAIL: &str = "bot@example.com";
const API_TOKEN: &str = "atl-secret-0123456789";
const BB_USER: &str = "bb-user-secret";
const BB_PASSWORD: &str = "bb-app-password-secret";

fn all_settings() -> Vec<(String, String)> {
    [
        ("GITHUB_TOKEN", GITHUB_TOKEN),
        ("CIRCLECI_TOKEN", CIRCLE_TOKEN),
        ("ATLASSIAN_SITE_NAME", "acme"),
        ("ATLASSIAN_USER_EMAIL", EMAIL),
        ("ATLASSIAN_API_TOKEN", API_TOKEN),
        ("ATLASSIAN_BITBUCKET_USERNAME", BB_USER),
        ("ATLASSIAN_BITBUCKET_APP_PASSWORD", BB_PASSWORD),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn config(pairs: Vec<(String, String)>) -> Config {
    Config::from_settings(&settings_fn(pairs)).unwrap()
}

fn basic(user: &str, password: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {encoded}")
}

/// Every string a secret could appear as: the values and the Basic header values.
fn secret_forms() -> Vec<String> {
    let mut forms: Vec<String> = [GITHUB_TOKEN, CIRCLE_TOKEN, API_TOKEN, BB_USER, BB_PASSWORD]
        .iter()
        .map(|s| s.to_string())
        .collect();
    forms.push(basic(EMAIL, API_TOKEN));
    forms.push(basic(BB_USER, BB_PASSWORD));
    forms
}

fn respond(
    status: u16,
    headers: &[(&str, &str)],
    body: &str,
) -> impl Fn(&UpstreamRequest) -> Result<UpstreamResponse, TransportError> + 'static {
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let body = body.as_bytes().to_vec();
    move |_| {
        Ok(UpstreamResponse {
            status,
            status_text: upstream::reason_phrase(status).to_owned(),
            headers: headers.clone(),
            body: body.clone(),
        })
    }
}

/// Sends one GET of `path` to `vendor`; returns the outcome, the requests and the log.
fn get(
    config: &Config,
    vendor: Vendor,
    path: &str,
    http: ScriptedHttp,
) -> (
    Result<upstream::UpstreamReply, UpstreamError>,
    Vec<UpstreamRequest>,
    Vec<String>,
) {
    let env = FakeEnv::with_http(http);
    let path = ApiPath::parse(path).unwrap();
    let target = Target::new(vendor, Method::Get, &path);
    let targets = Targets::one(target.clone());
    let client = Client::new(env.ports(), &env.memory, &config.upstream, &targets, None);
    let outcome = futures::executor::block_on(client.send(&target, &[], None));
    (outcome, env.http.sent(), env.log.lines())
}

fn assert_no_secret(text: &str) {
    for secret in secret_forms() {
        assert!(
            !text.contains(&secret),
            "secret {secret:?} leaked into {text:?}"
        );
    }
}

#[test]
fn a_vendor_without_credentials_says_which_settings_to_set() {
    let config = config(vec![]);
    for vendor in Vendor::ALL {
        let (outcome, sent, _) = get(&config, vendor, "/x", ScriptedHttp::unreachable());
        let error = outcome.unwrap_err();
        assert_eq!(error.kind(), &ErrorKind::NotConfigured, "{vendor}");
        assert!(sent.is_empty(), "{vendor}: a request was sent");
        let text = error.text();
        assert!(
            text.starts_with(&format!(
                "Error: {vendor} is not configured on this server: set "
            )),
            "{text}"
        );
    }
    let (outcome, _, _) = get(&config, Vendor::Jira, "/x", ScriptedHttp::unreachable());
    assert!(outcome.unwrap_err().text().contains("ATLASSIAN_API_TOKEN"));
}

#[test]
fn each_vendor_gets_its_credential_headers_and_host() {
    let config = config(all_settings());
    let cases = [
        (
            Vendor::GitHub,
            "/repos/o/r/actions/runs",
            "https://api.github.com/repos/o/r/actions/runs",
            vec![
                ("Authorization", format!("Bearer {GITHUB_TOKEN}")),
                ("Accept", "application/vnd.github+json".to_owned()),
                ("X-GitHub-Api-Version", "2022-11-28".to_owned()),
                ("User-Agent", "devtools-mcp-edge".to_owned()),
            ],
        ),
        (
            Vendor::CircleCi,
            "/me",
            "https://circleci.com/api/v2/me",
            vec![
                ("Circle-Token", CIRCLE_TOKEN.to_owned()),
                ("Accept", "application/json".to_owned()),
            ],
        ),
        (
            Vendor::Jira,
            "/rest/api/3/myself",
            "https://acme.atlassian.net/rest/api/3/myself",
            vec![
                ("Authorization", basic(EMAIL, API_TOKEN)),
                ("Content-Type", "application/json".to_owned()),
                ("Accept", "application/json".to_owned()),
            ],
        ),
        (
            Vendor::Confluence,
            "/wiki/api/v2/pages",
            "https://acme.atlassian.net/wiki/api/v2/pages",
            vec![
                ("Authorization", basic(EMAIL, API_TOKEN)),
                ("Content-Type", "application/json".to_owned()),
                ("Accept", "application/json".to_owned()),
            ],
        ),
        (
            // The Atlassian pair wins when both pairs are set, as in the reference.
            Vendor::Bitbucket,
            "/user",
            "https://api.bitbucket.org/2.0/user",
            vec![
                ("Authorization", basic(EMAIL, API_TOKEN)),
                ("Content-Type", "application/json".to_owned()),
                ("Accept", "application/json".to_owned()),
            ],
        ),
    ];
    for (vendor, path, url, headers) in cases {
        let (outcome, sent, _) = get(
            &config,
            vendor,
            path,
            ScriptedHttp::new(respond(200, &[], "{}")),
        );
        assert!(outcome.is_ok(), "{vendor}");
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].url, url);
        assert_eq!(sent[0].method, "GET");
        assert_eq!(sent[0].timeout_ms, 30_000);
        let want: Vec<(String, String)> = headers
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        assert_eq!(sent[0].headers, want, "{vendor}");
    }
}

#[test]
fn bitbucket_falls_back_to_its_own_pair_and_urls_follow_the_settings() {
    let mut settings: Vec<(String, String)> = all_settings()
        .into_iter()
        .filter(|(k, _)| k != "ATLASSIAN_API_TOKEN")
        .collect();
    settings.push((
        "BITBUCKET_API_URL".into(),
        "http://127.0.0.1:8787/bb/".into(),
    ));
    settings.push((
        "ATLASSIAN_BASE_URL".into(),
        "http://127.0.0.1:8787/jira".into(),
    ));
    let config = config(settings);
    let (_, sent, _) = get(
        &config,
        Vendor::Bitbucket,
        "repositories/w",
        ScriptedHttp::new(respond(200, &[], "{}")),
    );
    assert_eq!(sent[0].url, "http://127.0.0.1:8787/bb/2.0/repositories/w");
    assert_eq!(
        sent[0].headers[0],
        ("Authorization".to_owned(), basic(BB_USER, BB_PASSWORD))
    );
    // Jira now lacks its token.
    let (outcome, _, _) = get(&config, Vendor::Jira, "/x", ScriptedHttp::unreachable());
    assert_eq!(outcome.unwrap_err().kind(), &ErrorKind::NotConfigured);
    let mut settings = all_settings();
    settings.push((
        "ATLASSIAN_BASE_URL".into(),
        "http://127.0.0.1:8787/jira".into(),
    ));
    let (_, sent, _) = get(
        &config_with(settings),
        Vendor::Jira,
        "/rest/api/3/myself",
        ScriptedHttp::new(respond(200, &[], "{}")),
    );
    assert_eq!(sent[0].url, "http://127.0.0.1:8787/jira/rest/api/3/myself");
}

fn config_with(pairs: Vec<(String, String)>) -> Config {
    config(pairs)
}

#[test]
fn timeouts_name_the_vendor_and_the_wait() {
    let mut settings = all_settings();
    settings.push(("UPSTREAM_TIMEOUT_MS".into(), "2500".into()));
    let config = config(settings);
    let timeout = || ScriptedHttp::new(|_| Err(TransportError::Timeout));
    let (outcome, sent, log) = get(&config, Vendor::Jira, "/rest/api/3/myself", timeout());
    assert_eq!(sent[0].timeout_ms, 2500);
    let error = outcome.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::Timeout { after_ms: 2500 });
    assert_eq!(
        error.text(),
        "Error: An unexpected error occurred while GET request api. Error details: Request \
         timeout: Jira API did not respond within 2.5 seconds"
    );
    assert!(
        log.iter().any(|l| l.contains("\"outcome\":\"timeout\"")),
        "{log:?}"
    );
    let (outcome, _, _) = get(&config, Vendor::Bitbucket, "/user", timeout());
    assert_eq!(
        outcome.unwrap_err().text(),
        "Error: An unexpected error occurred while GET request api. Error details: Request \
         timeout: Bitbucket API did not respond within 2.5 seconds\nHTTP Status: 408"
    );
    let (outcome, _, _) = get(&config, Vendor::GitHub, "/x", timeout());
    assert_eq!(
        outcome.unwrap_err().text(),
        "Error: Request timeout: GitHub API did not respond within 2.5 seconds"
    );
}

#[test]
fn network_failures_are_clear_and_their_details_stay_in_a_scrubbed_log() {
    let config = config(all_settings());
    let detail = format!("connect ECONNREFUSED (sent {GITHUB_TOKEN})");
    let failing = move || {
        let detail = detail.clone();
        ScriptedHttp::new(move |_| Err(TransportError::Network(detail.clone())))
    };
    let (outcome, _, log) = get(&config, Vendor::Jira, "/x", failing());
    assert_eq!(
        outcome.unwrap_err().text(),
        "Error: Network error while GET request Jira. Please check your internet connection and \
         try again. Error details: Network error connecting to Jira API: fetch failed"
    );
    let line = log
        .iter()
        .find(|l| l.contains("\"event\":\"upstream\""))
        .unwrap();
    assert!(
        line.contains("ECONNREFUSED") && line.contains(devtools_mcp_edge::upstream::scrub::MARKER),
        "{line}"
    );
    assert_no_secret(line);
    let (outcome, _, _) = get(&config, Vendor::Bitbucket, "/x", failing());
    assert_eq!(
        outcome.unwrap_err().text(),
        "Error: Network error while GET request the Bitbucket API. Please check your internet \
         connection and try again. Error details: Network error while calling Bitbucket API: \
         fetch failed\nHTTP Status: 500"
    );
}

#[test]
fn bodies_past_the_bound_are_refused() {
    let mut settings = all_settings();
    settings.push(("UPSTREAM_MAX_BYTES".into(), "65536".into()));
    let config = config(settings);
    let big = format!("\"{}\"", "x".repeat(70_000));
    let (outcome, _, _) = get(
        &config,
        Vendor::CircleCi,
        "/x",
        ScriptedHttp::new(respond(200, &[], &big)),
    );
    let error = outcome.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::TooLarge { limit: 65_536 });
    assert!(
        error.text().contains("65536 bytes (UPSTREAM_MAX_BYTES)"),
        "{}",
        error.text()
    );
    let (outcome, _, _) = get(
        &config,
        Vendor::Jira,
        "/x",
        ScriptedHttp::new(respond(200, &[], &big)),
    );
    assert!(outcome
        .unwrap_err()
        .text()
        .starts_with("Error: An unexpected error occurred while GET request api. Error details: Response size exceeds"));
    let fits = format!("\"{}\"", "x".repeat(60_000));
    let (outcome, _, _) = get(
        &config,
        Vendor::CircleCi,
        "/x",
        ScriptedHttp::new(respond(200, &[], &fits)),
    );
    assert_eq!(outcome.unwrap().body, Value::String("x".repeat(60_000)));
}

#[test]
fn redirects_are_not_followed_and_their_targets_not_quoted() {
    let config = config(all_settings());
    for vendor in Vendor::ALL {
        let http = ScriptedHttp::new(respond(
            302,
            &[("Location", "https://evil.example/collect?sig=s3cr3t")],
            "",
        ));
        let (outcome, sent, _) = get(&config, vendor, "/x", http);
        assert_eq!(sent.len(), 1, "{vendor}: the redirect was followed");
        let error = outcome.unwrap_err();
        assert_eq!(error.status(), Some(302));
        let text = error.text();
        assert!(
            text.contains("evil.example") && !text.contains("s3cr3t"),
            "{text}"
        );
        assert!(text.contains("redirects are not followed"), "{text}");
    }
}

#[test]
fn rate_limits_say_when_to_retry() {
    let config = config(all_settings());
    let now_s = 1_767_225_600; // FakeEnv's clock: 2026-01-01T00:00:00Z
    let reset = (now_s + 90).to_string();
    let http = ScriptedHttp::new(respond(
        403,
        &[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", &reset),
        ],
        r#"{"message":"API rate limit exceeded"}"#,
    ));
    let (outcome, _, _) = get(&config, Vendor::GitHub, "/repos/o/r/actions/runs", http);
    let error = outcome.unwrap_err();
    assert_eq!(error.retry_after_ms(), Some(90_000));
    assert!(
        error.text().starts_with(
            "Error: Rate limit exceeded. GitHub API: API rate limit exceeded. Retry after 90 \
             seconds (at 2026-01-01T00:01:30.000Z)."
        ),
        "{}",
        error.text()
    );
    let http = ScriptedHttp::new(respond(429, &[("Retry-After", "5")], ""));
    let (outcome, _, _) = get(&config, Vendor::CircleCi, "/x", http);
    let error = outcome.unwrap_err();
    assert_eq!(error.retry_after_ms(), Some(5_000));
    assert!(
        error.text().contains("Retry after 5 seconds"),
        "{}",
        error.text()
    );
    let http = ScriptedHttp::new(respond(429, &[], ""));
    let (outcome, _, _) = get(&config, Vendor::CircleCi, "/x", http);
    let error = outcome.unwrap_err();
    assert_eq!(error.retry_after_ms(), None);
    assert!(error.text().contains("wait a minute"), "{}", error.text());
    // Atlassian keeps the reference's text, which does not mention Retry-After; the wait is
    // still known to callers.
    let http = ScriptedHttp::new(respond(429, &[("Retry-After", "30")], ""));
    let (outcome, _, _) = get(&config, Vendor::Jira, "/x", http);
    let error = outcome.unwrap_err();
    assert_eq!(error.retry_after_ms(), Some(30_000));
    assert!(!error.text().contains("Retry after"));
}

#[test]
fn confluence_errors_use_its_templates_and_the_shared_classification() {
    let config = config(all_settings());
    let json = [("content-type", "application/json")];
    let cases = [
        (
            404,
            r#"{"statusCode":404,"message":"No content found with id: 1"}"#,
            "Error: API not found. Verify the ID is correct and that you have access to this \
             api.\nConfluence API Error: {\"statusCode\":404,\"message\":\"No content found with \
             id: 1\"}",
        ),
        (
            400,
            r#"{"errors":[{"status":400,"code":"INVALID_REQUEST_PARAMETER","title":"Invalid spaceId"},{"title":"Bad limit"}]}"#,
            "Error: Confluence API request failed. Detail: Invalid spaceId; Bad limit\n\
             Confluence API Error: {\"errors\":[{\"status\":400,\"code\":\"INVALID_REQUEST_PARAMETER\",\
             \"title\":\"Invalid spaceId\"},{\"title\":\"Bad limit\"}]}",
        ),
        (
            403,
            r#"{"message":"Not permitted","reason":"space restrictions"}"#,
            "Error: Access denied for api. Verify your credentials and permissions.\nConfluence \
             API Error: {\"message\":\"Not permitted\",\"reason\":\"space restrictions\"}",
        ),
        (
            500,
            r#"{"title":"Internal error","detail":"try later"}"#,
            "Error: An unexpected error occurred while GET request api. Error details: \
             Confluence service error. Detail: Internal error: try later\nConfluence API Error: \
             {\"title\":\"Internal error\",\"detail\":\"try later\"}",
        ),
        (
            429,
            "",
            "Error: Rate limit exceeded. Please wait a moment and try again, or reduce the \
             frequency of requests to the Confluence API. Error details: Rate limit exceeded. \
             Confluence API: 429 Too Many Requests",
        ),
    ];
    for (status, body, want) in cases {
        let http = ScriptedHttp::new(respond(status, &json, body));
        let (outcome, _, _) = get(&config, Vendor::Confluence, "/wiki/api/v2/pages/1", http);
        assert_eq!(outcome.unwrap_err().text(), want, "{status}");
    }
}

#[test]
fn decoding_follows_the_references() {
    let config = config(all_settings());
    let cases = [
        (
            Vendor::GitHub,
            200,
            "text/plain",
            "{\"a\":1}",
            json!({"a": 1}),
        ),
        (
            Vendor::Bitbucket,
            200,
            "text/plain",
            "{\"a\":1}",
            json!("{\"a\":1}"),
        ),
        (Vendor::Jira, 204, "application/json", "", json!({})),
        (Vendor::CircleCi, 200, "application/json", " \n", json!({})),
        (
            Vendor::Jira,
            200,
            "text/x-diff",
            "diff --git",
            json!("diff --git"),
        ),
    ];
    for (vendor, status, ct, body, want) in cases {
        let http = ScriptedHttp::new(respond(status, &[("content-type", ct)], body));
        let (outcome, _, _) = get(&config, vendor, "/x", http);
        let reply = outcome.unwrap();
        let got: serde_json::Value = serde_json::from_str(&reply.body.to_compact_json()).unwrap();
        assert_eq!(got, want, "{vendor} {ct} {body:?}");
    }
}

fn call_tool(
    server: &Server,
    env: &FakeEnv,
    tool: &str,
    arguments: serde_json::Value,
) -> serde_json::Value {
    let body = request(
        1,
        "tools/call",
        json!({"name": tool, "arguments": arguments, "_meta": meta_2026()}),
    );
    let response = futures::executor::block_on(server.handle(
        post(&body.to_string(), &headers_2026("tools/call", Some(tool))),
        env.ports(),
    ));
    body_json(&response)
}

fn tool_server() -> Server {
    let mut settings = base_settings();
    settings.extend(all_settings());
    Server::with_registry(&settings_fn(settings), tools::all())
}

#[test]
fn paths_that_could_leave_the_api_are_refused_before_any_request() {
    let server = tool_server();
    for path in [
        "https://evil.example/rest/api/3/myself",
        "//evil.example/x",
        "/x@evil.example",
        "/a\\..\\b",
        "/a\r\nHost: evil.example",
        "/../admin",
        "/rest/%2e%2e/%2E%2E/x",
        "javascript:alert(1)",
    ] {
        for tool in ["jira_get", "conf_delete", "bb_get"] {
            let env = FakeEnv::with_http(ScriptedHttp::unreachable());
            let reply = call_tool(&server, &env, tool, json!({"path": path}));
            assert!(env.http.sent().is_empty(), "{tool} {path:?} sent a request");
            let result = &reply["result"];
            assert_eq!(result["isError"], true, "{tool} {path:?}: {reply}");
            let text = result["content"][0]["text"].as_str().unwrap();
            assert!(text.contains("Invalid path"), "{text}");
        }
    }
}

#[test]
fn no_secret_reaches_a_result_or_a_log_line() {
    let server = tool_server();
    let outcomes: Vec<Box<dyn Fn() -> ScriptedHttp>> = vec![
        Box::new(|| ScriptedHttp::new(respond(401, &[], "Unauthorized"))),
        Box::new(|| ScriptedHttp::new(respond(500, &[], ""))),
        Box::new(|| ScriptedHttp::new(respond(302, &[("location", "https://x.example/")], ""))),
        Box::new(|| ScriptedHttp::new(|_| Err(TransportError::Timeout))),
        Box::new(|| {
            ScriptedHttp::new(|r: &UpstreamRequest| {
                Err(TransportError::Network(format!("failed: {:?}", r.headers)))
            })
        }),
        Box::new(|| ScriptedHttp::new(respond(200, &[], r#"{"ok":true}"#))),
    ];
    for make in &outcomes {
        for tool in ["jira_get", "conf_get", "bb_get", "jira_post"] {
            let env = FakeEnv::with_http(make());
            let path = if tool == "conf_get" { "/wiki/x" } else { "/x" };
            let reply = call_tool(&server, &env, tool, json!({"path": path, "body": {}}));
            assert_no_secret(&reply.to_string());
            for line in env.log.lines() {
                assert_no_secret(&line);
            }
            assert_eq!(env.http.sent().len(), 1, "{tool}");
        }
    }
}
