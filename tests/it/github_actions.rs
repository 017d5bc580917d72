//! Host tests of the GitHub Actions writes (`github_rerun_workflow_run`,
//! `github_cancel_workflow_run`, `github_dispatch_workflow`) through `Server::handle` against the
//! fake GitHub of `github_runs`: the request each sends (path, body), what it answers (the new
//! attempt, the run a dispatch started), GitHub's refusals as clear errors sent once and never
//! retried, and the annotations and read-only connections that keep them from a reader.

use crate::common::ci::json_response;
use crate::common::protocol::{base_settings, body_json, post, request, send, settings_fn};
use crate::github_runs::{call_driven, fake_github, Fake};
use devtools_mcp_edge::server::Server;
use devtools_mcp_edge::tools;
use serde_json::{json, Value as Json};

const RERUN: &str = "github_rerun_workflow_run";
const CANCEL: &str = "github_cancel_workflow_run";
const DISPATCH: &str = "github_dispatch_workflow";
const RUNS: &str = "/api/v3/repos/octo/app/actions/runs/77";
const WORKFLOWS: &str = "/api/v3/repos/octo/app/actions/workflows";

/// The result's text (TOON) or error text, and whether it is an error.
fn outcome(result: &Json) -> (String, bool) {
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    (text.to_owned(), result["isError"] == true)
}

fn posts(fake: &Fake) -> Vec<String> {
    fake.seen
        .iter()
        .filter(|s| s.0 == "POST")
        .map(|s| s.1.clone())
        .collect()
}

#[test]
fn a_rerun_of_the_failed_jobs_answers_the_new_attempt() {
    let created = json_response(201, "{}", &[]);
    let (server, env, fake) = fake_github(|f| {
        f.completes_after = Some(0);
        f.writes = vec![
            ("/rerun-failed-jobs".into(), created.clone()),
            ("/rerun".into(), created),
        ];
    });
    let args = json!({"owner": "octo", "repo": "app", "runId": 77});
    let (text, error) = outcome(&call_driven(&server, &env, RERUN, args));
    assert!(!error, "{text}");
    assert!(text.contains("attempt: 2"), "{text}");
    assert!(text.contains("failedOnly: true"), "{text}");
    let args = json!({"owner": "octo", "repo": "app", "runId": 77, "failedOnly": false,
                      "debugLogging": true});
    let (text, _) = outcome(&call_driven(&server, &env, RERUN, args));
    assert!(text.contains("attempt: 3"), "{text}");
    let f = fake.borrow();
    assert_eq!(
        posts(&f),
        [format!("{RUNS}/rerun-failed-jobs"), format!("{RUNS}/rerun")]
    );
    assert_eq!(
        f.bodies,
        [
            r#"{"enable_debug_logging":false}"#,
            r#"{"enable_debug_logging":true}"#
        ]
    );
}

#[test]
fn a_refused_rerun_is_a_clear_error_sent_once() {
    let cases = [
        (
            403,
            "Unable to re-run this workflow run because it was created over a month ago",
        ),
        (409, "This workflow is already running"),
    ];
    for (status, message) in cases {
        let body = json!({"message": message, "documentation_url": "https://docs.github.com/rest"});
        let refusal = json_response(status, &body.to_string(), &[]);
        let (server, env, fake) =
            fake_github(|f| f.writes = vec![("/rerun-failed-jobs".into(), refusal)]);
        let args = json!({"owner": "octo", "repo": "app", "runId": 77});
        let (text, error) = outcome(&call_driven(&server, &env, RERUN, args));
        assert!(error);
        assert_eq!(
            text,
            format!("Error: GitHub refused to re-run run 77 (HTTP {status}): {message}. Nothing was retried.")
        );
        assert_eq!(
            fake.borrow().seen.len(),
            1,
            "one request, not retried, nothing read"
        );
    }
    // A run that does not exist reads as GitHub's not found.
    let (server, env, fake) = fake_github(|_| {});
    let args = json!({"owner": "octo", "repo": "app", "runId": 78});
    let (text, error) = outcome(&call_driven(&server, &env, RERUN, args));
    assert!(
        error && text.starts_with("Error: Resource not found"),
        "{text}"
    );
    assert_eq!(fake.borrow().seen.len(), 1);
    // A rate limit is not retried either.
    let limited = json_response(
        429,
        r#"{"message":"secondary rate limit"}"#,
        &[("Retry-After", "30")],
    );
    let (server, env, fake) =
        fake_github(|f| f.writes = vec![("/rerun-failed-jobs".into(), limited)]);
    let args = json!({"owner": "octo", "repo": "app", "runId": 77});
    let (text, error) = outcome(&call_driven(&server, &env, RERUN, args));
    assert!(error && text.contains("Rate limit exceeded"), "{text}");
    assert_eq!(fake.borrow().seen.len(), 1);
}

#[test]
fn a_cancel_and_a_forced_one() {
    let accepted = json_response(202, "{}", &[]);
    let (server, env, fake) = fake_github(|f| {
        f.writes = vec![
            ("/force-cancel".into(), accepted.clone()),
            ("/cancel".into(), accepted),
        ];
    });
    for force in [false, true] {
        let args = json!({"owner": "octo", "repo": "app", "runId": 77, "force": force});
        let (text, error) = outcome(&call_driven(&server, &env, CANCEL, args));
        assert!(!error && text.contains("cancelRequested: true"), "{text}");
    }
    assert_eq!(
        posts(&fake.borrow()),
        [format!("{RUNS}/cancel"), format!("{RUNS}/force-cancel")]
    );
    let done = json_response(
        409,
        r#"{"message":"Cannot cancel a workflow run that is completed."}"#,
        &[],
    );
    let (server, env, _) = fake_github(|f| f.writes = vec![("/cancel".into(), done)]);
    let args = json!({"owner": "octo", "repo": "app", "runId": 77});
    let (text, error) = outcome(&call_driven(&server, &env, CANCEL, args));
    assert!(error);
    assert_eq!(text, "Error: GitHub refused to cancel run 77 (HTTP 409): Cannot cancel a workflow run that is completed. Nothing was retried.");
}

#[test]
fn a_dispatch_answers_the_run_github_names() {
    let details = json!({"workflow_run_id": 88, "run_url": "https://ghe.test/api/v3/repos/octo/app/actions/runs/88",
                         "html_url": "https://github.com/octo/app/actions/runs/88"});
    let ok = json_response(200, &details.to_string(), &[]);
    let (server, env, fake) = fake_github(|f| f.writes = vec![("/dispatches".into(), ok)]);
    let args = json!({"owner": "octo", "repo": "app", "workflow": "deploy.yml", "ref": "main",
                      "inputs": {"environment": "staging", "dry": true}});
    let (text, error) = outcome(&call_driven(&server, &env, DISPATCH, args));
    assert!(!error && text.contains("runId: 88"), "{text}");
    let f = fake.borrow();
    assert_eq!(posts(&f), [format!("{WORKFLOWS}/deploy.yml/dispatches")]);
    assert_eq!(
        f.bodies,
        [
            r#"{"ref":"main","inputs":{"environment":"staging","dry":true},"return_run_details":true}"#
        ]
    );
    assert_eq!(f.seen.len(), 1, "nothing looked for");
}

#[test]
fn a_dispatch_without_details_finds_its_run_or_says_it_is_not_known_yet() {
    let no_content = || devtools_mcp_edge::ports::UpstreamResponse {
        status: 204,
        status_text: "No Content".into(),
        headers: vec![],
        body: vec![],
    };
    let runs = json!({"total_count": 1, "workflow_runs": [
        {"id": 99, "name": "CI", "status": "queued", "event": "workflow_dispatch",
         "head_branch": "main", "created_at": "2026-01-01T00:00:01Z"}]});
    let (server, env, fake) = fake_github(|f| {
        f.writes = vec![("/dispatches".into(), no_content())];
        f.workflow_runs = Some(runs.to_string());
    });
    let args = json!({"owner": "octo", "repo": "app", "workflow": 5, "ref": "main"});
    let (text, error) = outcome(&call_driven(&server, &env, DISPATCH, args.clone()));
    assert!(!error && text.contains("runId: 99"), "{text}");
    let seen = fake.borrow().seen.clone();
    assert_eq!(
        seen[1].1,
        format!("{WORKFLOWS}/5/runs?event=workflow_dispatch&created=%3E%3D2025-12-31T23%3A59%3A55Z&per_page=5")
    );
    // An older run is not the one started: after three looks, a note.
    let old = json!({"total_count": 1, "workflow_runs": [
        {"id": 98, "created_at": "2025-12-31T23:00:00Z"}]});
    let (server, env, fake) = fake_github(|f| {
        f.writes = vec![("/dispatches".into(), no_content())];
        f.workflow_runs = Some(old.to_string());
    });
    let (text, error) = outcome(&call_driven(&server, &env, DISPATCH, args));
    assert!(!error, "{text}");
    assert!(
        text.contains("runId: null") && text.contains("lists no run of 5"),
        "{text}"
    );
    assert_eq!(fake.borrow().seen.len(), 4);
}

#[test]
fn a_refused_dispatch_says_why() {
    let cases = [
        (422, "Workflow does not have 'workflow_dispatch' trigger"),
        (422, "Required input 'environment' not provided"),
    ];
    for (status, message) in cases {
        let refusal = json_response(status, &json!({"message": message}).to_string(), &[]);
        let (server, env, fake) = fake_github(|f| f.writes = vec![("/dispatches".into(), refusal)]);
        let args = json!({"owner": "octo", "repo": "app", "workflow": "ci.yml", "ref": "main"});
        let (text, error) = outcome(&call_driven(&server, &env, DISPATCH, args));
        assert!(error);
        assert_eq!(
            text,
            format!("Error: GitHub refused to dispatch workflow ci.yml (HTTP {status}): {message}. Nothing was retried.")
        );
        assert_eq!(fake.borrow().seen.len(), 1);
    }
    let (server, env, _) = fake_github(|_| {});
    let args = json!({"owner": "octo", "repo": "app", "workflow": "nope.yml", "ref": "main"});
    let (text, error) = outcome(&call_driven(&server, &env, DISPATCH, args));
    assert!(
        error && text.starts_with("Error: Resource not found"),
        "{text}"
    );
    for bad in [
        json!({"owner": "octo", "repo": "app", "workflow": "a/b.yml", "ref": "main"}),
        json!({"owner": "octo", "repo": "app", "workflow": "ci.yml"}),
        json!({"owner": "octo", "repo": "app", "workflow": "ci.yml", "ref": "main", "inputs": "x"}),
    ] {
        let (text, error) = outcome(&call_driven(&server, &env, DISPATCH, bad.clone()));
        assert!(
            error && text.starts_with("Invalid arguments"),
            "{bad}: {text}"
        );
    }
}

/// The annotations `/mcp/x/github` lists for `name`, and whether read-only connections list it.
fn listed(name: &str) -> (Json, bool, bool) {
    let server = Server::with_registry(&settings_fn(base_settings()), tools::all());
    let list = |path: &str| {
        let mut r = post(
            &request(1, "tools/list", json!({})).to_string(),
            &[("MCP-Protocol-Version", "2025-11-25")],
        );
        r.path = path.into();
        let tools = body_json(&send(&server, r))["result"]["tools"].clone();
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
    };
    let github = list("/mcp/x/github").unwrap_or_else(|| panic!("{name} not listed"));
    (
        github["annotations"].clone(),
        list("/mcp/readonly").is_some(),
        list("/mcp/x/github/readonly").is_some(),
    )
}

#[test]
fn writes_say_what_they_do_and_are_never_offered_read_only() {
    for (name, destructive, idempotent) in [
        (RERUN, false, false),
        (CANCEL, true, true),
        (DISPATCH, false, false),
    ] {
        let (annotations, readonly, github_readonly) = listed(name);
        assert_eq!(annotations["readOnlyHint"], false, "{name}");
        assert_eq!(annotations["destructiveHint"], destructive, "{name}");
        assert_eq!(annotations["idempotentHint"], idempotent, "{name}");
        assert!(!readonly && !github_readonly, "{name}");
    }
    let (annotations, readonly, _) = listed("github_get_workflow_run");
    assert_eq!(annotations["readOnlyHint"], true);
    assert!(readonly);
}
