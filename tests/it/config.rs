//! Host tests of configuration: defaults, clamping (with a one-time log line), unparsable
//! values answering every request with -32603 naming the setting, and documentation coverage.

use crate::common::protocol::*;
use devtools_mcp_edge::config::{self, Config, SETTINGS};
use devtools_mcp_edge::http::HttpRequest;
use serde_json::json;

fn config_from(pairs: &[(&str, &str)]) -> Result<Config, config::ConfigError> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_settings(&settings_fn(pairs))
}

fn ping() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string()
}

#[test]
fn defaults_without_any_setting() {
    let config = config_from(&[]).unwrap();
    assert_eq!(config.tools.text_max_chars, 40_000);
    assert_eq!(config.tools.cache_ttl_seconds, 60);
    assert_eq!(config.upstream.timeout_ms, 30_000);
    assert!(config.allowed_origins.is_empty());
    assert!(!config.allow_anonymous);
    assert!(config.auth_tokens.is_empty());
    assert!(config.clamped.is_empty());
}

#[test]
fn values_in_range_are_used_and_out_of_range_values_clamped() {
    let config = config_from(&[
        ("MCP_TEXT_MAX_CHARS", "120000"),
        ("HTTP_CACHE_TTL_SECONDS", "5"),
        ("UPSTREAM_TIMEOUT_MS", "999999"),
    ])
    .unwrap();
    assert_eq!(config.tools.text_max_chars, 120_000);
    assert_eq!(config.tools.cache_ttl_seconds, 60);
    assert_eq!(config.upstream.timeout_ms, 60_000);
    assert_eq!(
        config.clamped,
        vec![
            ("HTTP_CACHE_TTL_SECONDS", "5".to_owned(), 60),
            ("UPSTREAM_TIMEOUT_MS", "999999".to_owned(), 60_000)
        ]
    );
}

#[test]
fn clamping_is_logged_once_per_isolate() {
    let mut settings = base_settings();
    settings.push(("MCP_TEXT_MAX_CHARS".into(), "10".into()));
    let server = server_with(settings);
    let (first, log) = send_logged(&server, post(&ping(), &[]));
    assert_eq!(first.status, 200);
    let clamped: Vec<_> = log
        .iter()
        .filter(|l| l.contains("setting_clamped"))
        .collect();
    assert_eq!(clamped.len(), 1, "{log:?}");
    assert!(clamped[0].contains("MCP_TEXT_MAX_CHARS") && clamped[0].contains("1000"));
    let (_, log) = send_logged(&server, post(&ping(), &[]));
    assert!(
        !log.iter().any(|l| l.contains("setting_clamped")),
        "{log:?}"
    );
}

#[test]
fn an_unparsable_value_fails_every_request_naming_the_setting() {
    for (setting, value) in [
        ("MCP_TEXT_MAX_CHARS", "lots"),
        ("HTTP_CACHE_TTL_SECONDS", "1.5"),
        ("UPSTREAM_TIMEOUT_MS", "10s"),
        ("MCP_ALLOW_ANONYMOUS", "sometimes"),
        ("MCP_ALLOWED_ORIGINS", "claude.ai"),
        ("MCP_AUTH_TOKENS", "not json"),
    ] {
        let mut settings = base_settings();
        settings.retain(|(k, _)| k != setting);
        settings.push((setting.into(), value.into()));
        let server = server_with(settings);
        for body in [ping(), "{broken".to_owned()] {
            let (response, log) = send_logged(&server, post(&body, &[]));
            assert_eq!(response.status, 500, "{setting}");
            let reply = body_json(&response);
            assert_eq!(error_code(&reply), -32603, "{setting}");
            let message = reply["error"]["message"].as_str().unwrap();
            assert!(message.contains(setting), "{setting}: {message}");
            assert!(log
                .iter()
                .any(|l| l.contains("config_invalid") && l.contains(setting)));
        }
        // The home page does not depend on configuration.
        let home = send(
            &server,
            HttpRequest {
                method: "GET".into(),
                path: "/".into(),
                query: String::new(),
                ..HttpRequest::default()
            },
        );
        assert_eq!(home.status, 200);
    }
}

#[test]
fn a_bad_token_table_never_echoes_a_token() {
    let secret = "very-secret-token-0123456789";
    let tables = [
        json!({"ci": secret, "other": secret}).to_string(),
        json!({"bad name": secret}).to_string(),
        format!("{{\"ci\": \"{secret}\""),
    ];
    for table in tables {
        let server = server_with(vec![("MCP_AUTH_TOKENS".into(), table.clone())]);
        let (response, log) = send_logged(&server, post(&ping(), &[]));
        let everything = format!("{log:?}{}", String::from_utf8_lossy(&response.body));
        assert_eq!(response.status, 500, "{table}");
        assert!(everything.contains("MCP_AUTH_TOKENS"), "{everything}");
        assert!(
            !everything.contains(secret),
            "token leaked for {table}: {everything}"
        );
    }
}

#[test]
fn every_setting_is_documented() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md");
    let doc = std::fs::read_to_string(path).expect("docs/configuration.md exists");
    for setting in SETTINGS {
        assert!(
            doc.contains(&format!("`{setting}`")),
            "{setting} is not documented in {path}"
        );
    }
    for (name, bounds) in [
        ("MCP_TEXT_MAX_CHARS", config::TEXT_MAX_CHARS),
        ("HTTP_CACHE_TTL_SECONDS", config::CACHE_TTL_SECONDS),
        ("UPSTREAM_TIMEOUT_MS", config::TIMEOUT_MS),
        ("UPSTREAM_MAX_BYTES", config::MAX_BYTES),
        ("MEMORY_BUDGET_BYTES", config::MEMORY_BUDGET),
        ("MCP_STRUCTURED_MAX_BYTES", config::STRUCTURED_MAX_BYTES),
        (
            "MCP_APPROVAL_LEDGER_MAX_BYTES",
            config::APPROVAL_LEDGER_MAX_BYTES,
        ),
    ] {
        let range = format!("{}–{}", group(bounds.min), group(bounds.max));
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}`")))
            .unwrap_or_else(|| panic!("no table row for {name}"));
        assert!(
            row.contains(&group(bounds.default)),
            "{name}: default missing in {row}"
        );
        assert!(
            row.contains(&range),
            "{name}: range {range} missing in {row}"
        );
    }
}

/// 40000 -> "40 000", as the documentation writes numbers.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}
