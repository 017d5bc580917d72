//! Where the time of a large tool result goes, on the host.
//!
//! `bench_tool_path RUNS_JSON JIRA_JSON [ITERATIONS]` answers `tools/call` requests through
//! `Server::handle` with an in-memory upstream serving the two bodies (the fake upstream's
//! 100-run page and 50-issue search, as bench/tools-latency.mjs sends them), then times each
//! stage of the output path by itself on the same value. Prints the median milliseconds.

use devtools_mcp_edge::http::HttpRequest;
use devtools_mcp_edge::mcp::CallToolResult;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::UpstreamResponse;
use devtools_mcp_edge::render::{self, OutputFormat};
use devtools_mcp_edge::server::Server;
use devtools_mcp_edge::structured::{self, Envelope};
use devtools_mcp_edge::value::{self, Map, Value};
use futures::executor::block_on;
use std::hint::black_box;
use std::time::Instant;

type Error = Box<dyn std::error::Error>;

const TOKEN: &str = "bench-token-0123456789abcdef";

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs = std::fs::read(args.first().ok_or("RUNS_JSON")?)?;
    let jira = std::fs::read(args.get(1).ok_or("JIRA_JSON")?)?;
    let n: usize = args.get(2).map_or(Ok(200), |s| s.parse())?;
    // An optional fourth argument runs only the calls whose label starts with it (for a profiler).
    let only = args.get(3).cloned().unwrap_or_default();

    let calls = [
        (
            "runs",
            "github_list_workflow_runs",
            r#"{"owner":"octo-org","repo":"hello-world","perPage":100}"#,
            None,
        ),
        (
            "runs json",
            "github_list_workflow_runs",
            r#"{"owner":"octo-org","repo":"hello-world","perPage":100,"outputFormat":"json"}"#,
            None,
        ),
        (
            "runs jq number",
            "github_list_workflow_runs",
            r#"{"owner":"octo-org","repo":"hello-world","perPage":100,"jq":"length(workflow_runs)"}"#,
            None,
        ),
        (
            "runs untruncated",
            "github_list_workflow_runs",
            r#"{"owner":"octo-org","repo":"hello-world","perPage":100}"#,
            Some("1000000"),
        ),
        (
            "runs structured",
            "github_list_workflow_runs",
            r#"{"owner":"octo-org","repo":"hello-world","perPage":100}"#,
            Some("structured"),
        ),
        (
            "jira search",
            "jira_get",
            r#"{"path":"/rest/api/3/search/jql","queryParams":{"jql":"project = PROJ ORDER BY key","maxResults":"50"}}"#,
            None,
        ),
    ];
    for (label, tool, arguments, variant) in calls {
        if !label.starts_with(only.as_str()) {
            continue;
        }
        let body = if tool == "jira_get" {
            jira.clone()
        } else {
            runs.clone()
        };
        let mut settings = vec![
            ("MCP_AUTH_TOKENS", format!("{{\"bench\":\"{TOKEN}\"}}")),
            (
                "GITHUB_TOKEN",
                "ghp_bench0123456789abcdefABCDEF0123456789".to_owned(),
            ),
            ("GITHUB_API_URL", "https://gh.test".to_owned()),
            ("ATLASSIAN_BASE_URL", "https://jira.test".to_owned()),
            ("ATLASSIAN_USER_EMAIL", "bench@example.com".to_owned()),
            ("ATLASSIAN_API_TOKEN", "ATATT3xBench0123456789".to_owned()),
        ];
        match variant {
            Some("structured") => settings.push(("MCP_STRUCTURED_OUTPUT", "true".to_owned())),
            Some(limit) => settings.push(("MCP_TEXT_MAX_CHARS", limit.to_owned())),
            None => {}
        }
        let server = Server::new(&move |name: &str| {
            settings
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone())
        });
        let env = FakeEnv::with_http(ScriptedHttp::new(move |_| {
            Ok(UpstreamResponse {
                status: 200,
                status_text: "OK".into(),
                headers: vec![("Content-Type".into(), "application/json".into())],
                body: body.clone(),
            })
        }));
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        );
        let mut times = Vec::with_capacity(n);
        let mut size = 0;
        for _ in 0..n + 10 {
            let req = HttpRequest {
                method: "POST".into(),
                path: "/mcp".into(),
                query: String::new(),
                headers: vec![
                    ("Content-Type".into(), "application/json".into()),
                    (
                        "Accept".into(),
                        "application/json, text/event-stream".into(),
                    ),
                    ("Authorization".into(), format!("Bearer {TOKEN}")),
                    ("MCP-Protocol-Version".into(), "2025-06-18".into()),
                    ("Host".into(), "mcp.example.com".into()),
                ],
                body: request.clone().into_bytes(),
                body_too_large: false,
            };
            let start = Instant::now();
            let response = block_on(server.handle(req, env.ports()));
            times.push(start.elapsed().as_secs_f64() * 1e3);
            assert_eq!(
                response.status,
                200,
                "{}",
                String::from_utf8_lossy(&response.body)
            );
            size = response.body.len();
        }
        println!(
            "handle {label:<18} {:>7.3} ms  ({size} bytes)",
            median(&mut times[10..])
        );
    }

    if !only.is_empty() {
        return Ok(());
    }
    println!();
    stages("runs", &runs, true, n);
    stages("jira", &jira, false, n);
    Ok(())
}

/// Times each stage of the output path by itself: `whole` is a GitHub list (the envelope is the
/// rendered value), else an Atlassian read (data-only envelope).
fn stages(label: &str, body: &[u8], whole: bool, n: usize) {
    let limit = 40_000;
    let parsed = value::parse_bytes(body).unwrap();
    let make = || {
        let data = value::parse_bytes(body).unwrap();
        if whole {
            let mut map = Map::new();
            map.insert("data".into(), data);
            map.insert("nextPage".into(), Value::Null);
            Value::Object(map)
        } else {
            data
        }
    };
    let envelope = if whole {
        Envelope::Whole
    } else {
        Envelope::DataOnly
    };
    let v = make();
    let t = |name: &str, f: &mut dyn FnMut()| {
        let mut times: Vec<f64> = (0..n)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        println!("{label} {name:<34} {:>7.3} ms", median(&mut times));
    };
    t("parse", &mut || {
        black_box(value::parse_bytes(black_box(body)).unwrap());
    });
    t("drop value", &mut || {
        let c = parsed.clone();
        let start = Instant::now();
        drop(c);
        black_box(start);
    });
    t("clone value", &mut || {
        black_box(parsed.clone());
    });
    t("render_bounded toon", &mut || {
        black_box(render::render_bounded(&v, OutputFormat::Toon, limit));
    });
    t("render_bounded json", &mut || {
        black_box(render::render_bounded(&v, OutputFormat::Json, limit));
    });
    t("render toon (whole)", &mut || {
        black_box(render::render(&v, OutputFormat::Toon));
    });
    t("null_non_finite", &mut || {
        let mut c = v.clone();
        let start = Instant::now();
        structured::null_non_finite(&mut c);
        black_box(start);
    });
    t("compact_len", &mut || {
        black_box(structured::compact_len(&v));
    });
    t("fits", &mut || {
        black_box(envelope.fits(&v, 262_144));
    });
    t("to_json (artifact)", &mut || {
        black_box(envelope.to_json(&v));
    });
    let (text, cut) = render::render_bounded(&v, OutputFormat::Toon, limit);
    t("cut.apply", &mut || {
        black_box(cut.as_ref().map(|c| c.apply(&text, None)));
    });
    let result = CallToolResult::text(cut.as_ref().map_or(text.clone(), |c| c.apply(&text, None)));
    t("reply of the cut text", &mut || {
        black_box(serde_json::to_vec(&result).unwrap());
    });
    let whole_text = CallToolResult::text(render::render(&v, OutputFormat::Toon));
    t("reply of the whole text", &mut || {
        black_box(serde_json::to_vec(&whole_text).unwrap());
    });
    let structured = CallToolResult::text("x").with_structured(v.clone());
    t("reply with structuredContent", &mut || {
        black_box(serde_json::to_vec(&structured).unwrap());
    });
}

fn median(times: &mut [f64]) -> f64 {
    times.sort_by(|a, b| a.total_cmp(b));
    times[times.len() / 2]
}
