//! The host half of the security suite, through the whole server with the production
//! registry and every vendor configured: path traversal and host-escape attempts (plain and
//! encoded) against every passthrough tool and the GitHub path arguments, CR/LF header injection
//! through every kind of argument, depth bombs and oversized JSON-RPC bodies, jq and JMESPath
//! programs that try to burn CPU or memory, and cross-principal reads of cache entries and
//! artifacts. Every reply and log line is scanned for the configured credentials.
//! tests/e2e/security.test.mjs repeats the attacks that depend on the runtime in workerd.

use crate::common::protocol::*;
use crate::common::server::TestServer;
use devtools_mcp_edge::ports::{TransportError, UpstreamRequest, UpstreamResponse};
use devtools_mcp_edge::tools;
use serde_json::{json, Value as Json};
use std::time::{Duration, Instant};

const ALICE: &str = "alice-token-1-0123456789";
const CREDENTIALS: [(&str, &str); 7] = [
    ("GITHUB_TOKEN", "ghp_sec0123456789abcdefSECRET"),
    ("CIRCLECI_TOKEN", "circle-sec-0123456789SECRET"),
    ("ATLASSIAN_USER_EMAIL", "robot@sec.example"),
    ("ATLASSIAN_API_TOKEN", "ATATT-sec-0123456789SECRET"),
    ("ATLASSIAN_BITBUCKET_USERNAME", "bb-robot"),
    (
        "ATLASSIAN_BITBUCKET_APP_PASSWORD",
        "ATBB-sec-0123456789SECRET",
    ),
    ("MCP_TEXT_MAX_CHARS", "1000"),
];
/// Each vendor's base URL; a tool's requests may only go under its own vendor's.
const BASES: [(&str, &str); 4] = [
    ("GITHUB_API_URL", "https://gh.sec.test"),
    ("CIRCLECI_API_URL", "https://circle.sec.test/api/v2"),
    ("ATLASSIAN_BASE_URL", "https://acme.sec.test"),
    ("BITBUCKET_API_URL", "https://bb.sec.test"),
];

/// Every vendor configured, the upstream answering with `respond`.
fn server_with(
    respond: impl Fn(&UpstreamRequest) -> Result<UpstreamResponse, TransportError> + 'static,
) -> TestServer {
    TestServer::builder()
        .settings(&CREDENTIALS)
        .settings(&BASES)
        .upstream(respond)
        .build()
}

/// Every vendor configured, the upstream answering every request with a small JSON object.
fn server() -> TestServer {
    server_with(|_| Ok(ok_json(r#"{"ok":true}"#)))
}

/// Every string that must never reach a reply or a log line.
fn secrets() -> Vec<String> {
    let mut out: Vec<String> = CREDENTIALS[..6]
        .iter()
        .filter(|(k, _)| !k.ends_with("EMAIL") && !k.ends_with("USERNAME"))
        .map(|(_, v)| (*v).to_owned())
        .collect();
    out.extend([TOKEN.to_owned(), ALICE.to_owned()]);
    out
}

fn ok_json(body: &str) -> UpstreamResponse {
    UpstreamResponse {
        status: 200,
        status_text: "OK".into(),
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
    }
}

/// Sends a raw JSON-RPC body as `token`; checks the reply and the log for secrets.
fn send_raw(server: &TestServer, token: &str, body: &str, name: &str) -> (u16, String) {
    let auth = format!("Bearer {token}");
    let mut headers = headers_2026("tools/call", Some(name));
    headers.push(("Authorization", auth.as_str()));
    let response =
        futures::executor::block_on(server.handle(post(body, &headers), server.env.ports()));
    let raw = String::from_utf8_lossy(&response.body).into_owned();
    assert_no_secret(server, &raw);
    (response.status, raw)
}

/// Asserts that no configured secret is in `raw` or in the log.
fn assert_no_secret(server: &TestServer, raw: &str) {
    let lines = server.env.log.lines();
    for secret in secrets() {
        assert!(!raw.contains(&secret), "a secret in the reply: {raw}");
        assert!(
            lines.iter().all(|l| !l.contains(&secret)),
            "a secret in the log"
        );
    }
}

/// Calls tool `name` as `token`; checks the reply and the log for secrets; returns the result.
fn call_as(server: &TestServer, token: &str, name: &str, args: Json) -> Json {
    let reply = server.call_as(token, name, args);
    assert_no_secret(server, &reply.raw);
    reply.result().clone()
}

fn call(server: &TestServer, name: &str, args: Json) -> Json {
    call_as(server, TOKEN, name, args)
}

fn text(result: &Json) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The passthrough tools: every tool with a free-form `path` argument.
fn passthrough_tools() -> Vec<String> {
    let Ok(registry) = tools::all() else {
        panic!("the production registry builds");
    };
    let names: Vec<String> = registry
        .names()
        .into_iter()
        .map(str::to_owned)
        .filter(|n| {
            n == "circleci_get"
                || n.starts_with("jira_")
                || n.starts_with("conf_")
                || n.starts_with("bb_")
        })
        .collect();
    assert_eq!(names.len(), 16, "{names:?}");
    names
}

fn args_for(tool: &str, path: &str) -> Json {
    // circleci_get would answer a repeated normalised path from its cache, without a request.
    if tool == "circleci_get" {
        return json!({"path": path, "fresh": true});
    }
    if ["_post", "_put", "_patch"]
        .iter()
        .any(|s| tool.ends_with(s))
    {
        json!({"path": path, "body": {"k": "v"}})
    } else {
        json!({"path": path})
    }
}

/// `text` with percent escapes decoded once (invalid escapes kept as they are).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The one base URL `tool` may send to: its own vendor's, never another configured vendor's.
fn base_of(tool: &str) -> &'static str {
    let setting = match tool.split('_').next() {
        Some("github") => "GITHUB_API_URL",
        Some("circleci") => "CIRCLECI_API_URL",
        Some("jira" | "conf") => "ATLASSIAN_BASE_URL",
        Some("bb") => "BITBUCKET_API_URL",
        _ => panic!("{tool}: no vendor known for this tool"),
    };
    BASES
        .iter()
        .find(|(k, _)| *k == setting)
        .map(|(_, base)| *base)
        .unwrap_or_else(|| panic!("{setting} is not configured"))
}

/// Asserts that `request`, sent by `tool`, stays on that tool's own base URL, with no dot
/// segment in its path as sent or once decoded (encoded slashes and backslashes read as
/// separators, as some servers do), no raw control character or space in the URL, and no line
/// break in any header. Encoded control characters are data, not syntax, so they may pass. A second decoding is not
/// checked: no upstream API we call decodes twice, and `%25` must stay usable in ids.
fn assert_contained(tool: &str, request: &UpstreamRequest, attempt: &str) {
    let url = &request.url;
    let base = base_of(tool);
    assert!(
        url.strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/')),
        "{tool} {attempt:?} left {base}: {url}"
    );
    let path = url[base.len()..]
        .split(['?', '#'])
        .next()
        .unwrap_or_default();
    for form in [path.to_owned(), percent_decode(path)] {
        for segment in form.split(['/', '\\']) {
            assert!(
                segment != ".." && segment != ".",
                "{attempt:?}: dot segment in {url}"
            );
        }
    }
    assert!(
        !url.chars().any(|c| c.is_control() || c == ' '),
        "{attempt:?}: raw {url:?}"
    );
    for (name, value) in &request.headers {
        assert!(
            !name.contains(['\r', '\n', ':']) && !value.contains(['\r', '\n']),
            "{attempt:?}: header {name:?}: {value:?}"
        );
        assert!(
            !name.eq_ignore_ascii_case("x-injected"),
            "{attempt:?}: injected header"
        );
    }
}

const ESCAPES: [&str; 34] = [
    "../../../etc/passwd",
    "/../x",
    "/a/../../x",
    "/./x",
    "/x/.",
    "/x/..",
    "%2e%2e/x",
    "/%2e%2e/%2e%2e/x",
    "/%2E%2E%2Fx",
    "/%252e%252e/x",
    "/..%2f..%2fx",
    "/..%5c..%5cx",
    "/a/..;/x",
    "/\\..\\x",
    "/%c0%ae%c0%ae/x",
    "/\u{FF0E}\u{FF0E}/x",
    "https://evil.example/x",
    "//evil.example/x",
    "///evil.example/x",
    "/@evil.example",
    "http:/evil.example",
    "/x@evil.example/",
    "evil.example",
    "/%2F%2Fevil.example/x",
    "/x#@evil.example/..",
    "/x?@evil.example",
    "/x%00y",
    "/x%0d%0aHost:%20evil",
    "/x\r\nHost: evil",
    "\t/x",
    "/x y",
    "javascript:alert(1)",
    "file:///etc/passwd",
    "/x\\@evil.example",
];

#[test]
fn traversal_and_host_escapes_never_leave_a_vendor_base() {
    let mut refused = 0;
    for tool in passthrough_tools() {
        let server = server();
        for attempt in ESCAPES {
            let before = server.env.http.sent().len();
            let result = call(&server, &tool, args_for(&tool, attempt));
            let sent = server.env.http.sent();
            if sent.len() == before {
                assert_eq!(
                    result["isError"], true,
                    "{tool} {attempt:?}: no request, so an error"
                );
                refused += 1;
            }
            for request in &sent[before..] {
                assert_contained(&tool, request, attempt);
            }
        }
    }
    // 21 of the 34 are refused outright (336 in all today); the rest (dot segments that stay
    // inside the base, encoded data such as %00 or a space, a leading tab) were sent, contained.
    assert!(refused >= 16 * 20, "{refused} refusals");
}

#[test]
fn github_path_arguments_cannot_escape_the_repository() {
    let server = server();
    let bad = [
        "..",
        ".",
        "a/b",
        "a%2Fb",
        "%2e%2e",
        "a\\b",
        "a?b",
        "a#b",
        "a@evil.example",
        "a b",
        "a\r\nX-Injected: 1",
        "",
    ];
    for value in bad {
        for (tool, args) in [
            (
                "github_list_workflow_runs",
                json!({"owner": value, "repo": "r"}),
            ),
            (
                "github_list_workflow_runs",
                json!({"owner": "o", "repo": value}),
            ),
            (
                "github_list_workflow_jobs",
                json!({"owner": "o", "repo": value, "runId": 1}),
            ),
        ] {
            let result = call(&server, tool, args.clone());
            assert_eq!(result["isError"], true, "{tool} {args}: {}", text(&result));
        }
    }
    for run_id in [json!("1/../../x"), json!("1%2F.."), json!(-1), json!(1.5)] {
        let result = call(
            &server,
            "github_list_workflow_jobs",
            json!({"owner": "o", "repo": "r", "runId": run_id}),
        );
        assert_eq!(result["isError"], true, "runId {run_id}");
    }
    assert!(server.env.http.sent().is_empty());
}

#[test]
fn cr_lf_in_any_argument_never_becomes_a_header() {
    let server = server();
    let evil = "v\r\nX-Injected: 1\r\n\r\nGET /admin HTTP/1.1";
    let cases = [
        (
            "jira_get",
            json!({"path": format!("/rest/api/3/myself{evil}")}),
        ),
        (
            "jira_get",
            json!({"path": "/rest/api/3/search/jql", "queryParams": {"jql": evil}}),
        ),
        (
            "jira_get",
            json!({"path": "/rest/api/3/search/jql", "queryParams": {evil: "x"}}),
        ),
        (
            "conf_get",
            json!({"path": "/wiki/api/v2/spaces", "queryParams": {"limit": evil}}),
        ),
        (
            "bb_get",
            json!({"path": "/repositories/w", "queryParams": {"q": evil}}),
        ),
        (
            "circleci_get",
            json!({"path": "/me", "queryParams": {"x": evil}}),
        ),
        (
            "jira_post",
            json!({"path": "/rest/api/3/issue", "body": {"fields": {"summary": evil}}}),
        ),
        (
            "conf_put",
            json!({"path": "/wiki/api/v2/pages/1", "body": {evil: evil}}),
        ),
        (
            "bb_post",
            json!({"path": "/repositories/w/r/pullrequests", "body": {"title": evil}}),
        ),
        (
            "jira_get",
            json!({"path": "/rest/api/3/myself", "jq": evil}),
        ),
        (
            "jira_get",
            json!({"path": "/rest/api/3/myself", "outputFormat": evil}),
        ),
        (
            "github_list_workflow_runs",
            json!({"owner": "o", "repo": "r", "branch": evil}),
        ),
        (
            "github_list_workflow_runs",
            json!({"owner": "o", "repo": "r", "event": evil}),
        ),
    ];
    for (tool, args) in cases {
        let before = server.env.http.sent().len();
        let result = call(&server, tool, args.clone());
        let sent = server.env.http.sent();
        for request in &sent[before..] {
            assert_contained(tool, request, &args.to_string());
            if let Some(body) = &request.body {
                let parsed: Result<Json, _> = serde_json::from_slice(body);
                assert!(parsed.is_ok(), "{tool}: the body stays one JSON document");
            }
        }
        if sent.len() == before {
            assert_eq!(result["isError"], true, "{tool} {args}");
        }
    }
}

#[test]
fn depth_bombs_and_oversized_bodies_are_refused_and_the_server_keeps_serving() {
    let server = server();
    let deep = 200_000;
    let bombs = [
        "[".repeat(deep),
        format!("{}1{}", "[".repeat(deep), "]".repeat(deep)),
        "{\"a\":".repeat(deep),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"jira_post","arguments":{{"path":"/x","body":{}0{}}}}}}}"#,
            "[".repeat(deep),
            "]".repeat(deep)
        ),
    ];
    for bomb in &bombs {
        let start = Instant::now();
        let (status, raw) = send_raw(&server, TOKEN, bomb, "jira_post");
        assert!(start.elapsed() < Duration::from_secs(10));
        let code = serde_json::from_str::<Json>(&raw).map(|b| b["error"]["code"].clone());
        assert!(
            status == 400 || matches!(code, Ok(Json::Number(_))),
            "a bomb is refused: {status} {}",
            &raw[..raw.len().min(200)]
        );
    }
    let mut big = post("{}", &[]);
    big.body_too_large = true;
    let response = futures::executor::block_on(server.handle(big, server.env.ports()));
    assert_eq!(response.status, 413);
    assert!(
        server.env.http.sent().is_empty(),
        "no bomb reached an upstream"
    );
    let result = call(&server, "jira_get", json!({"path": "/rest/api/3/myself"}));
    assert_eq!(result["isError"], Json::Null, "{result}");
}

#[test]
fn projections_that_burn_cpu_or_memory_stop_within_the_budget() {
    let server = server_with(|_| {
        Ok(ok_json(
            &json!({"a": (0..1000).collect::<Vec<_>>(), "s": "x".repeat(1000)}).to_string(),
        ))
    });
    let programs = [
        ".a | [range(1000000000)]",
        "[limit(1000000000; repeat(1))] | length",
        "reduce range(1000000000) as $i (0; . + 1)",
        "def f: [f]; f",
        "def f: f; f",
        "[.a[] as $x | .a[] as $y | .a[] as $z | $x + $y + $z] | length",
        ".s * 100000000",
        "[0 | recurse(. + 1)] | length",
        "[paths] | tostring * 100000",
        "until(false; .)",
        &format!("{}.{}", "[".repeat(5000), "]".repeat(5000)),
        &format!("a{}", ".a".repeat(100_000)),
        &format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000)),
        "a[*].a[*].a[*].a[*].a[*].a[*].a[*].a[*]",
    ];
    // The first ten never end on their own; the rest are deep or long rather than endless.
    const RUNAWAY: usize = 10;
    for (i, program) in programs.into_iter().enumerate() {
        let start = Instant::now();
        let result = call(
            &server,
            "jira_get",
            json!({"path": "/x", "jq": program, "outputFormat": "json"}),
        );
        let took = start.elapsed();
        // The host build is unoptimised; in workerd the same programs stop within 2 s.
        assert!(took < Duration::from_secs(30), "{program:.60}: {took:?}");
        let out = text(&result);
        // MCP_TEXT_MAX_CHARS is 1000; the truncation notice comes on top.
        assert!(
            out.chars().count() <= 1600,
            "{program:.60}: {} chars",
            out.len()
        );
        if i < RUNAWAY {
            assert!(
                out.contains("_jqError"),
                "{program:.60} must be stopped: {out:.300}"
            );
        }
    }
}

#[test]
fn no_principal_reads_another_ones_cache_entries_or_artifacts() {
    let server = server_with(|r| {
        let runs: Vec<Json> = (0..300)
            .map(|n| json!({"id": n, "name": "build"}))
            .collect();
        let body = if r.url.contains("/actions/runs") {
            json!({"total_count": 300, "workflow_runs": runs})
        } else {
            json!({"who": "whoever asked"})
        };
        Ok(ok_json(&body.to_string()))
    });
    let me = json!({"path": "/me", "outputFormat": "json"});
    call(&server, "circleci_get", me.clone());
    let alice: Json = serde_json::from_str(text(&call_as(&server, ALICE, "circleci_get", me)))
        .unwrap_or_default();
    assert_eq!(alice["cache"]["hit"], false, "ci's entry is not alice's");
    assert_eq!(server.env.http.sent().len(), 2);

    let saved = call(
        &server,
        "github_list_workflow_runs",
        json!({"owner": "o", "repo": "r"}),
    );
    let uuid = |t: &str| {
        t.split(|c: char| !(c.is_ascii_hexdigit() || c == '-'))
            .find(|w| w.len() == 36)
            .map(str::to_owned)
    };
    let Some(id) = uuid(text(&saved)) else {
        panic!("the cut text names an artifact: {}", text(&saved));
    };
    let own = call(&server, "artifact_read", json!({"artifactId": id}));
    assert_eq!(own["isError"], Json::Null, "{own}");
    // Past the window in which a missing artifact may still be being written (within it, any
    // missing id of that age waits alike: the artifacts module's tests).
    server
        .env
        .clock
        .advance(devtools_mcp_edge::artifacts::WRITE_WINDOW_MS);
    let theirs = call_as(&server, ALICE, "artifact_read", json!({"artifactId": id}));
    let unknown = call_as(
        &server,
        ALICE,
        "artifact_read",
        json!({"artifactId": "00000000-0000-4000-8000-000000000000"}),
    );
    assert_eq!(theirs["isError"], true);
    assert_eq!(
        text(&theirs),
        text(&unknown),
        "another's artifact reads as one that does not exist"
    );
    for key in server
        .env
        .artifacts
        .keys()
        .iter()
        .chain(server.env.cache.keys().iter())
    {
        assert!(
            !key.contains("ci") && !key.contains("alice"),
            "keys name no principal: {key}"
        );
    }
}

/// Every form of a configured credential an echo of the request could show: the tokens, the
/// `user:secret` pairs, their base64 and the `Basic` header values.
fn credential_forms() -> Vec<String> {
    use base64::Engine as _;
    let setting = |name: &str| {
        CREDENTIALS
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
            .unwrap_or_default()
    };
    let mut forms = secrets();
    for (user, secret) in [
        ("ATLASSIAN_USER_EMAIL", "ATLASSIAN_API_TOKEN"),
        (
            "ATLASSIAN_BITBUCKET_USERNAME",
            "ATLASSIAN_BITBUCKET_APP_PASSWORD",
        ),
    ] {
        let pair = format!("{}:{}", setting(user), setting(secret));
        let encoded = base64::engine::general_purpose::STANDARD.encode(&pair);
        forms.extend([pair, encoded]);
    }
    forms
}

#[test]
fn an_upstream_that_echoes_the_request_headers_hands_back_no_credential() {
    // A 400 (`fail` in the URL) or a 200 whose JSON body, reason phrase and a header repeat
    // every request header; the 200 is long enough to be cut and kept as an artifact.
    let server = server_with(|r| {
        let echoed: serde_json::Map<String, Json> = r
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let auth = echoed.values().next().cloned().unwrap_or_default();
        let fail = r.url.contains("fail");
        let body = json!({
            "message": format!("bad request; you sent {}", Json::Object(echoed.clone())),
            "errorMessages": [format!("headers: {}", Json::Object(echoed.clone()))],
            "headers": echoed,
            "padding": "x".repeat(if fail { 0 } else { 3000 }),
        });
        Ok(UpstreamResponse {
            status: if fail { 400 } else { 200 },
            status_text: format!("Bad {}", auth.as_str().unwrap_or_default()),
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                (
                    "X-Echo".into(),
                    auth.as_str().unwrap_or_default().to_owned(),
                ),
            ],
            body: body.to_string().into_bytes(),
        })
    });
    // Small pieces, so that secrets straddle the chunks of the body as read.
    server.env.http.chunk_bytes.set(7);
    let mut calls: Vec<(&str, Json)> = Vec::new();
    for (tool, base) in [
        ("jira_get", "/rest/api/3/issue"),
        ("conf_get", "/wiki/rest/api/content"),
        ("bb_get", "/2.0/repositories"),
        ("circleci_get", "/project"),
    ] {
        for last in ["fail", "ok"] {
            calls.push((tool, args_for(tool, &format!("{base}/{last}"))));
        }
    }
    for owner in ["fail", "ok"] {
        calls.push((
            "github_list_workflow_runs",
            json!({"owner": owner, "repo": "r"}),
        ));
    }
    for (tool, args) in calls {
        let reply = server.call_as(TOKEN, tool, args.clone());
        let failed = args.to_string().contains("fail");
        assert_eq!(reply.result()["isError"] == true, failed, "{tool} {args}");
        assert!(
            reply
                .raw
                .contains(devtools_mcp_edge::upstream::scrub::MARKER),
            "{tool} {args}: the echo reaches the caller, scrubbed: {}",
            reply.raw
        );
        let stored = server
            .env
            .artifacts
            .dump()
            .into_iter()
            .chain(server.env.cache.dump())
            .map(|(k, v)| format!("{k} {}", String::from_utf8_lossy(&v)));
        let haystack: Vec<String> = std::iter::once(reply.raw.clone())
            .chain(server.env.log.lines())
            .chain(stored)
            .collect();
        for form in credential_forms() {
            for text in &haystack {
                assert!(
                    !text.contains(&form),
                    "{tool} {args}: a credential in {text}"
                );
            }
        }
    }
    assert!(
        !server.env.artifacts.keys().is_empty(),
        "a long echo is kept as an artifact, and checked"
    );
}
