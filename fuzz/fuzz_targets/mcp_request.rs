//! The whole request path: `Server::handle` with arbitrary bodies and headers, the production
//! tools and an upstream (in-memory fake) that answers with fuzzer-chosen bodies and statuses.
//!
//! Input: one flags byte, then header lines (`Name: value`, an empty value removes the default)
//! up to a blank line, then the JSON-RPC body up to a NUL byte, then the upstream's body.
//! Flags: bit 0 picks the server (plain, or structured output plus an enterprise policy),
//! bits 1-2 the HTTP method, bit 3 marks the body as over the size limit, bits 4-6 the upstream
//! status.
//!
//! Invariants: no panic (the host catches it and logs `"event":"panic"`; on wasm32 it would have
//! killed the isolate); every upstream request goes to the base URL of a tool the body called
//! (each tool has exactly one: a `jira_*` call never reaches GitHub), with no line break in a
//! header; reply headers hold no line break; a JSON reply parses; no configured secret appears
//! in the reply or the log unless the input put it there.
#![no_main]

use devtools_mcp_edge::http::HttpRequest;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::UpstreamResponse;
use devtools_mcp_edge::server::Server;
use devtools_mcp_edge::value::{parse_bytes, Value};
use devtools_mcp_edge_fuzz::{is_panic_line, serde_parse};
use libfuzzer_sys::fuzz_target;
use url::Url;

const TOKEN: &str = "fuzz-client-token-0123456789";
const POLICY: &str = r#"{
  "identities": [{"name": "gh-ro", "vendor": "github", "secret": "GH_RO_TOKEN"}],
  "groups": {"ops": ["ci"]},
  "rules": [
    {"id": "no-admin", "match": {"paths": ["/**/admin/**"]}, "effect": "deny"},
    {"id": "writes", "match": {"methods": ["POST", "PUT", "PATCH", "DELETE"]},
     "effect": "approval_required", "approvers": {"groups": ["ops"]}},
    {"id": "reads", "match": {"tools": ["*"]}, "effect": "allow", "identities": {"github": "gh-ro"}}
  ]
}"#;
const SETTINGS: [(&str, &str); 11] = [
    (
        "MCP_AUTH_TOKENS",
        r#"{"ci": "fuzz-client-token-0123456789"}"#,
    ),
    ("GITHUB_TOKEN", "ghp_fuzz_SECRET_github"),
    ("GITHUB_API_URL", "https://api.github.test"),
    ("CIRCLECI_TOKEN", "circle_fuzz_SECRET"),
    ("CIRCLECI_API_URL", "https://circleci.test/api/v2"),
    ("ATLASSIAN_BASE_URL", "https://acme.atlassian.test"),
    ("ATLASSIAN_USER_EMAIL", "bot@acme.test"),
    ("ATLASSIAN_API_TOKEN", "atl_fuzz_SECRET"),
    ("BITBUCKET_API_URL", "https://bitbucket.test"),
    ("ATLASSIAN_BITBUCKET_USERNAME", "bb-bot"),
    ("ATLASSIAN_BITBUCKET_APP_PASSWORD", "bb_fuzz_SECRET"),
];
const EXTRA: [(&str, &str); 4] = [
    ("MCP_STRUCTURED_OUTPUT", "true"),
    ("MCP_STRUCTURED_MAX_BYTES", "2048"),
    ("MCP_POLICY", POLICY),
    ("GH_RO_TOKEN", "ghp_fuzz_SECRET_readonly"),
];
const SECRETS: [&str; 6] = [
    "ghp_fuzz_SECRET_github",
    "circle_fuzz_SECRET",
    "atl_fuzz_SECRET",
    "bb_fuzz_SECRET",
    "ghp_fuzz_SECRET_readonly",
    TOKEN,
];
const STATUSES: [u16; 8] = [200, 200, 201, 204, 302, 404, 429, 502];

fn settings(extended: bool) -> Vec<(String, String)> {
    let extra = if extended { &EXTRA[..] } else { &[] };
    SETTINGS
        .iter()
        .chain(extra)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The one base URL tool `name` may send to, by its vendor prefix; `None` for a tool that sends
/// nothing upstream (or a name no tool has).
fn base_of(name: &str) -> Option<&'static str> {
    let setting = match name.split('_').next()? {
        "github" => "GITHUB_API_URL",
        "circleci" => "CIRCLECI_API_URL",
        "jira" | "conf" => "ATLASSIAN_BASE_URL",
        "bb" => "BITBUCKET_API_URL",
        _ => return None,
    };
    SETTINGS
        .iter()
        .find(|(k, _)| *k == setting)
        .map(|(_, v)| *v)
}

/// The base URLs of the tools `body` calls (one message or a batch), read with the server's own
/// parser so that both agree on which tool was named.
fn called_bases(body: &[u8]) -> Vec<&'static str> {
    let Ok(message) = parse_bytes(body) else {
        return Vec::new();
    };
    let messages = match &message {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    messages
        .into_iter()
        .filter_map(|m| m.get("params")?.get("name")?.as_str())
        .filter_map(base_of)
        .collect()
}

fn server(extended: bool) -> Server {
    let pairs = settings(extended);
    Server::new(&move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    })
}

thread_local! {
    static SERVERS: [Server; 2] = [server(false), server(true)];
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let (head, rest) = match rest.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&rest[..i], &rest[i + 2..]),
        None => (&[][..], rest),
    };
    let (body, upstream_body) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let mut headers: Vec<(String, String)> = vec![
        ("Content-Type".into(), "application/json".into()),
        (
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ),
        ("Authorization".into(), format!("Bearer {TOKEN}")),
        ("Host".into(), "mcp.example.com".into()),
    ];
    for line in String::from_utf8_lossy(head).split('\n') {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        if !value.is_empty() {
            headers.push((name.to_owned(), value.to_owned()));
        }
    }
    let method = ["POST", "GET", "DELETE", "OPTIONS"][usize::from(flags >> 1 & 3)];
    let status = STATUSES[usize::from(flags >> 4 & 7)];
    let request = HttpRequest {
        method: method.into(),
        path: "/mcp".into(),
        query: String::new(),
        headers,
        body: body.to_vec(),
        body_too_large: flags & 8 != 0,
    };
    let upstream_body = upstream_body.to_vec();
    let env = FakeEnv::with_http(ScriptedHttp::new(move |_| {
        Ok(UpstreamResponse {
            status,
            status_text: String::new(),
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                ("Location".into(), "https://elsewhere.test/next".into()),
            ],
            body: upstream_body.clone(),
        })
    }));
    let extended = flags & 1 != 0;
    for (k, v) in settings(extended) {
        env.settings.set(&k, &v);
    }
    let response = SERVERS.with(|servers| {
        futures::executor::block_on(servers[usize::from(extended)].handle(request, env.ports()))
    });

    let bases = called_bases(body);
    let log = env.log.lines();
    if let Some(line) = log.iter().find(|l| is_panic_line(l)) {
        panic!("the request panicked: {line}");
    }
    for sent in env.http.sent() {
        let url =
            Url::parse(&sent.url).unwrap_or_else(|e| panic!("upstream URL {}: {e}", sent.url));
        assert!(
            bases.iter().any(|base| sent
                .url
                .strip_prefix(base)
                .is_some_and(|rest| rest.starts_with('/'))),
            "a request outside the called tools' base URLs {bases:?}: {}",
            sent.url
        );
        assert!(
            url.username().is_empty() && url.password().is_none(),
            "{}",
            sent.url
        );
        for (name, value) in &sent.headers {
            assert!(
                !(name.contains(['\r', '\n']) || value.contains(['\r', '\n'])),
                "a line break in upstream header {name:?}"
            );
        }
    }
    for (name, value) in &response.headers {
        assert!(
            !(name.contains(['\r', '\n']) || value.contains(['\r', '\n'])),
            "a line break in reply header {name:?}"
        );
    }
    let reply = String::from_utf8_lossy(&response.body);
    if !response.body.is_empty()
        && response
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
    {
        if let Err(e) = serde_parse(&reply) {
            panic!("a JSON reply that does not parse ({e}): {reply}");
        }
    }
    // A secret the input itself holds (the fuzzer learns them from comparisons) may come back
    // as data, like any upstream text; only a secret the input never held is a leak.
    let input = String::from_utf8_lossy(data);
    for secret in SECRETS.iter().filter(|s| !input.contains(*s)) {
        assert!(!reply.contains(secret), "a secret in the reply: {reply}");
        assert!(
            !log.iter().any(|l| l.contains(secret)),
            "a secret in the log"
        );
    }
});
