//! Host tests of the tool list sized to the connection: toolsets and read-only mode chosen by
//! URL path and by headers, the 400 for unknown toolsets, and the refusal of a call to a tool
//! the connection was not offered.

use crate::common::protocol::*;
use devtools_mcp_edge::server::Server;
use devtools_mcp_edge::tools;
use serde_json::{json, Value as Json};

fn production() -> Server {
    Server::with_registry(&settings_fn(base_settings()), tools::all())
}

/// One request to `path` with `extra` headers under 2025-11-25; the status and the body.
fn at(server: &Server, path: &str, body: Json, extra: &[(&str, &str)]) -> (u16, Json) {
    let mut headers = vec![("MCP-Protocol-Version", "2025-11-25")];
    headers.extend_from_slice(extra);
    let mut request = post(&body.to_string(), &headers);
    request.path = path.into();
    let response = send(server, request);
    (response.status, body_json(&response))
}

fn names(server: &Server, path: &str, extra: &[(&str, &str)]) -> Vec<String> {
    let (status, body) = at(server, path, request(1, "tools/list", json!({})), extra);
    assert_eq!(status, 200, "{body}");
    body["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {body}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// What `/mcp/x/github` offers without a policy: the GitHub tools and `artifact_read`, in
/// registration order, as the registry says.
fn github() -> Vec<String> {
    let registry = tools::all().unwrap();
    registry
        .names()
        .into_iter()
        .filter(|name| {
            matches!(
                registry.entry(name).unwrap().0,
                Some(tools::Toolset::Github | tools::Toolset::Artifacts)
            )
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_plain_endpoint_offers_every_tool() {
    let server = production();
    let all = names(&server, "/mcp", &[]);
    assert_eq!(all, tools::all().unwrap().names());
}

#[test]
fn a_path_chooses_toolsets_with_artifact_read_beside_them() {
    let server = production();
    assert_eq!(names(&server, "/mcp/x/github", &[]), github());
    assert_eq!(
        names(&server, "/mcp/x/circleci,jira", &[]),
        [
            "jira_get",
            "jira_post",
            "jira_put",
            "jira_patch",
            "jira_delete",
            "circleci_get",
            "circleci_get_job_logs",
            "circleci_get_workflow",
            "circleci_rerun_workflow",
            "artifact_read"
        ]
    );
    // A read-only connection keeps the workflow's read and drops its re-run, a write.
    assert_eq!(
        names(&server, "/mcp/x/circleci/readonly", &[]),
        [
            "circleci_get",
            "circleci_get_job_logs",
            "circleci_get_workflow",
            "artifact_read"
        ]
    );
    // Without a policy the approval tools have nothing to do, so a chosen list leaves them out.
    assert!(!names(&server, "/mcp/x/confluence,bitbucket", &[])
        .iter()
        .any(|t| t.starts_with("approval_")));
}

#[test]
fn read_only_mode_keeps_the_tools_that_change_nothing() {
    let server = production();
    let read_only = names(&server, "/mcp/readonly", &[]);
    assert!(read_only.contains(&"jira_get".to_owned()), "{read_only:?}");
    for writer in ["jira_post", "conf_put", "bb_delete", "approval_decide"] {
        assert!(!read_only.contains(&writer.to_owned()), "{writer}");
    }
    assert_eq!(
        names(&server, "/mcp/x/jira/readonly", &[]),
        ["jira_get", "artifact_read"]
    );
    assert_eq!(
        names(&server, "/mcp/x/jira", &[("X-MCP-Readonly", "true")]),
        ["jira_get", "artifact_read"]
    );
}

#[test]
fn headers_choose_and_narrow_the_path() {
    let server = production();
    assert_eq!(
        names(&server, "/mcp", &[("X-MCP-Toolsets", "GitHub")]),
        github()
    );
    assert_eq!(
        names(
            &server,
            "/mcp/x/github,bitbucket",
            &[
                ("X-MCP-Toolsets", "bitbucket,jira"),
                ("X-MCP-Readonly", "1")
            ]
        ),
        ["bb_get", "artifact_read"]
    );
}

#[test]
fn the_stateless_revision_lists_the_same_choice() {
    let server = production();
    let mut headers = headers_2026("tools/list", None);
    headers.push(("X-MCP-Toolsets", "github"));
    let mut request = post(
        &request(1, "tools/list", json!({"_meta": meta_2026()})).to_string(),
        &headers,
    );
    request.path = "/mcp/x/github".into();
    let body = body_json(&send(&server, request));
    let listed: Vec<&str> = body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, github());
    assert_eq!(body["result"]["cacheScope"], "private");
}

#[test]
fn unknown_toolsets_are_a_clear_400() {
    let server = production();
    let list = request(1, "tools/list", json!({}));
    for (path, headers, expected) in [
        (
            "/mcp/x/github,gitlab",
            vec![],
            "the URL path names an unknown toolset \"gitlab\"",
        ),
        ("/mcp/x/", vec![], "unknown toolset \"\""),
        (
            "/mcp",
            vec![("X-MCP-Toolsets", "jira, wiki")],
            "X-MCP-Toolsets names an unknown toolset \"wiki\"",
        ),
        (
            "/mcp",
            vec![("X-MCP-Readonly", "sometimes")],
            "X-MCP-Readonly must be true or false",
        ),
        (
            "/mcp/x/github",
            vec![("X-MCP-Toolsets", "jira")],
            "together they leave no toolset",
        ),
    ] {
        let (status, body) = at(&server, path, list.clone(), &headers);
        assert_eq!(status, 400, "{path} {headers:?}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{message}");
        assert!(
            message.contains("github, circleci, jira, confluence, bitbucket")
                || !expected.contains("unknown"),
            "{message}"
        );
        assert_eq!(
            body["error"]["data"]["toolsets"],
            json!(["github", "circleci", "jira", "confluence", "bitbucket"])
        );
    }
}

#[test]
fn credentials_are_checked_before_the_toolsets() {
    let server = production();
    let (status, _) = at(
        &server,
        "/mcp/x/gitlab",
        request(1, "tools/list", json!({})),
        &[("Authorization", "Bearer wrong-token-0123456789")],
    );
    assert_eq!(status, 401);
}

#[test]
fn other_paths_and_methods_keep_their_answers() {
    let server = production();
    for path in ["/mcp/", "/mcp/other", "/mcp/x/github/extra"] {
        let mut request = post("{}", &[]);
        request.path = path.into();
        assert_eq!(send(&server, request).status, 404, "{path}");
    }
    let mut get = post("", &[]);
    get.method = "GET".into();
    get.path = "/mcp/x/github".into();
    let response = send(&server, get);
    assert_eq!(response.status, 405);
}

#[test]
fn a_call_outside_the_connection_is_refused_and_says_why() {
    let server = production();
    let call = |name: &str| request(2, "tools/call", json!({"name": name, "arguments": {}}));
    let (status, body) = at(&server, "/mcp/x/github", call("jira_get"), &[]);
    assert_eq!((status, error_code(&body)), (200, -32602), "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        "Tool jira_get is not offered on this connection (toolsets github): it belongs to \
         toolset jira; connect to /mcp/x/jira or add jira to X-MCP-Toolsets to use it."
    );
    assert_eq!(body["error"]["data"]["toolset"], "jira");

    let (_, body) = at(&server, "/mcp/readonly", call("jira_post"), &[]);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("it can change data, and this connection is read-only"),
        "{message}"
    );

    let (_, body) = at(&server, "/mcp/x/jira", call("approval_list"), &[]);
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("only under an enterprise policy"));

    // An offered tool runs: its argument error is the tool's, not the connection's.
    let (_, body) = at(&server, "/mcp/x/jira", call("jira_get"), &[]);
    assert_eq!(body["result"]["isError"], true, "{body}");
    // A tool that does not exist at all stays unknown.
    let (_, body) = at(&server, "/mcp/x/jira", call("nope"), &[]);
    assert_eq!(
        body["error"]["message"],
        "Invalid params: Unknown tool: nope"
    );
}

#[test]
fn under_a_policy_a_chosen_list_keeps_the_approval_tools() {
    let mut settings = base_settings();
    settings.push((
        "MCP_POLICY".into(),
        r#"{"rules": [{"id": "all", "effect": "allow"}]}"#.into(),
    ));
    let server = Server::with_registry(&settings_fn(settings), tools::all());
    let listed = names(&server, "/mcp/x/github", &[]);
    assert!(listed.contains(&"approval_list".to_owned()), "{listed:?}");
    assert!(listed.contains(&"approval_decide".to_owned()), "{listed:?}");
    let read_only = names(&server, "/mcp/x/github/readonly", &[]);
    assert!(read_only.contains(&"approval_list".to_owned()));
    assert!(!read_only.contains(&"approval_decide".to_owned()));
}
