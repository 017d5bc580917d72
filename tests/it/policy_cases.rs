//! The policy case table (`tests/policy/cases.json`): each principal x tool x arguments row is
//! called through the whole server, and the effect, deciding rule, normalised method and path,
//! and the upstream identity (in `_meta` and in the credential actually sent) are checked.

use crate::common::policy::*;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{json, Map, Value as Json};

#[derive(Deserialize)]
struct Table {
    secrets: Map<String, Json>,
    policy: Json,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    note: String,
    principal: String,
    tool: String,
    arguments: Json,
    effect: String,
    rule: Option<String>,
    identity: Option<String>,
    method: Option<String>,
    path: Option<String>,
    #[serde(default)]
    approvers: Vec<String>,
}

fn table() -> Table {
    serde_json::from_str(include_str!("../policy/cases.json")).expect("cases.json parses")
}

fn secrets(table: &Table) -> Vec<(String, String)> {
    table
        .secrets
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
        .collect()
}

fn vendor_of(tool: &str) -> &'static str {
    match tool.split('_').next() {
        Some("jira") => "jira",
        Some("conf") => "confluence",
        Some("bb") => "bitbucket",
        Some("github") => "github",
        Some("circleci") => "circleci",
        _ => panic!("no vendor for {tool}"),
    }
}

fn base_url(vendor: &str) -> &'static str {
    match vendor {
        "jira" | "confluence" => "https://acme.test",
        "bitbucket" => "https://bb.test",
        "github" => "https://gh.test",
        _ => "https://circle.test/api/v2",
    }
}

/// The credential header (name, value) an identity of `vendor` sends.
fn credential(table: &Table, vendor: &str, identity: &str) -> (String, String) {
    let secret = |name: &str| -> String {
        if identity == "default" {
            DEFAULT_SETTINGS
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
                .unwrap_or_else(|| panic!("default setting {name}"))
        } else {
            table.secrets[name].as_str().unwrap().to_owned()
        }
    };
    let def = table.policy["identities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == identity)
        .cloned();
    let basic = |user: String, token: String| {
        let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{token}"));
        ("Authorization".to_owned(), format!("Basic {encoded}"))
    };
    match (vendor, def) {
        ("github", Some(d)) => (
            "Authorization".into(),
            format!("Bearer {}", secret(d["secret"].as_str().unwrap())),
        ),
        ("github", None) => (
            "Authorization".into(),
            format!("Bearer {}", secret("GITHUB_TOKEN")),
        ),
        ("circleci", Some(d)) => ("Circle-Token".into(), secret(d["secret"].as_str().unwrap())),
        ("circleci", None) => ("Circle-Token".into(), secret("CIRCLECI_TOKEN")),
        (_, Some(d)) => basic(
            secret(d["userSecret"].as_str().unwrap()),
            secret(d["tokenSecret"].as_str().unwrap()),
        ),
        (_, None) => basic(
            secret("ATLASSIAN_USER_EMAIL"),
            secret("ATLASSIAN_API_TOKEN"),
        ),
    }
}

#[test]
fn every_case_of_the_table() {
    let table = table();
    let secrets = secrets(&table);
    let pairs = settings(Some(&table.policy.to_string()), &secrets, &[]);
    let server = server(&pairs);
    assert!(
        table.cases.len() >= 30,
        "the table covers the listed concerns"
    );
    for case in &table.cases {
        let env = env(&pairs);
        let label = format!(
            "{} ({} {} {})",
            case.note, case.principal, case.tool, case.arguments
        );
        let result = call(
            &server,
            &env,
            &case.principal,
            &case.tool,
            case.arguments.clone(),
        );
        let meta = &result["_meta"];
        let sent = env.http.sent();
        match case.effect.as_str() {
            "allow" => {
                assert!(meta.get("code").is_none(), "{label}: refused: {result}");
                let Some(path) = &case.path else {
                    assert!(sent.is_empty(), "{label}: a built-in tool made a request");
                    assert!(meta.get("mcp-devtools/upstream").is_none(), "{label}");
                    continue;
                };
                assert_eq!(result["isError"], Json::Null, "{label}: {result}");
                assert_eq!(sent.len(), 1, "{label}: one upstream request");
                let request = &sent[0];
                let vendor = vendor_of(&case.tool);
                let identity = case
                    .identity
                    .as_deref()
                    .expect("allow rows name an identity");
                assert_eq!(
                    Some(request.method.as_str()),
                    case.method.as_deref(),
                    "{label}"
                );
                let expected_url = format!("{}{path}", base_url(vendor));
                let url_path = request.url.split('?').next().unwrap_or_default();
                assert_eq!(url_path, expected_url, "{label}");
                let (header, value) = credential(&table, vendor, identity);
                let sent_value = devtools_mcp_edge::ports::header(&request.headers, &header);
                assert_eq!(
                    sent_value,
                    Some(value.as_str()),
                    "{label}: credential of {identity}"
                );
                assert_eq!(
                    meta["mcp-devtools/upstream"],
                    json!({"vendor": vendor, "identity": identity}),
                    "{label}"
                );
            }
            "deny" | "approval_required" => {
                assert!(
                    sent.is_empty(),
                    "{label}: a refused call reached the upstream"
                );
                assert_eq!(result["isError"], json!(true), "{label}");
                assert!(result.get("structuredContent").is_none(), "{label}");
                assert!(meta.get("mcp-devtools/upstream").is_none(), "{label}");
                let code = if case.effect == "deny" {
                    "policy_denied"
                } else {
                    "approval_required"
                };
                assert_eq!(meta["code"], json!(code), "{label}: {result}");
                let decision = &meta["decision"];
                assert_eq!(decision["effect"], json!(case.effect), "{label}");
                assert_eq!(decision["rule"], json!(case.rule), "{label}");
                assert_eq!(decision["principal"], json!(case.principal), "{label}");
                assert_eq!(decision["tool"], json!(case.tool), "{label}");
                assert_eq!(decision["method"], json!(case.method), "{label}");
                assert_eq!(decision["path"], json!(case.path), "{label}");
                assert!(
                    decision["reason"].as_str().is_some_and(|r| !r.is_empty()),
                    "{label}"
                );
                assert!(!text(&result).is_empty(), "{label}");
                if case.effect == "approval_required" {
                    let approval = &decision["approval"];
                    assert_eq!(approval["status"], json!("pending"), "{label}");
                    assert!(
                        approval["id"]
                            .as_str()
                            .is_some_and(|id| id.starts_with("apr_")),
                        "{label}"
                    );
                    assert!(approval["expiresAt"].as_str().is_some(), "{label}");
                    assert_eq!(decision["approvers"], json!(case.approvers), "{label}");
                } else {
                    assert!(decision.get("approval").is_none(), "{label}");
                }
            }
            other => panic!("{label}: unknown effect {other}"),
        }
    }
}

#[test]
fn every_decision_is_logged_once_without_secrets() {
    let table = table();
    let secrets = secrets(&table);
    let pairs = settings(Some(&table.policy.to_string()), &secrets, &[]);
    let server = server(&pairs);
    for case in &table.cases {
        let env = env(&pairs);
        call(
            &server,
            &env,
            &case.principal,
            &case.tool,
            case.arguments.clone(),
        );
        let lines = env.log.lines();
        let decisions: Vec<Json> = lines
            .iter()
            .filter_map(|l| serde_json::from_str::<Json>(l).ok())
            .filter(|l| l["event"] == "policy_decision")
            .collect();
        assert_eq!(decisions.len(), 1, "{}: {lines:?}", case.note);
        assert_eq!(decisions[0]["principal"], json!(case.principal));
        assert_eq!(decisions[0]["tool"], json!(case.tool));
        for line in &lines {
            for (_, secret) in &secrets {
                assert!(
                    !line.contains(secret.as_str()),
                    "{}: secret in log {line}",
                    case.note
                );
            }
        }
    }
}
