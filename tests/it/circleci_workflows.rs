//! Host tests of `circleci_get_workflow` and `circleci_rerun_workflow` through `Server::handle`
//! against a fake CircleCI whose workflow changes state as it is polled: the workflow and its
//! failed jobs (over pages), the wait on the fake clock (the back-off GitHub's runs are waited
//! with), a rate limit honoured, the re-run sent once with its body, and CircleCI's refusals.

use crate::common::ci::*;
use crate::github_runs::call_driven;
use devtools_mcp_edge::ports::fake::FakeEnv;
use devtools_mcp_edge::ports::{UpstreamRequest, UpstreamResponse};
use devtools_mcp_edge::server::Server;
use serde_json::{json, Value as Json};
use std::cell::RefCell;
use std::rc::Rc;

const GET: &str = "circleci_get_workflow";
const RERUN: &str = "circleci_rerun_workflow";
const ID: &str = "5034460f-c7c4-4c43-9457-de07e2029e7b";
const NEW_ID: &str = "a1b2c3d4-0000-4000-8000-000000000002";

/// What the fake CircleCI does, and what it saw.
#[derive(Default)]
struct Fake {
    /// Polls answered `running` before the workflow is `failed` (`None`: never).
    finishes_after: Option<u64>,
    /// Workflow polls seen so far.
    polls: u64,
    /// An answer replacing the workflow poll of this index.
    fault: Option<(u64, UpstreamResponse)>,
    /// The re-run's answer.
    rerun: Option<UpstreamResponse>,
    /// Every request: method, path and query, body.
    seen: Vec<(String, String, String)>,
}

type Shared = Rc<RefCell<Fake>>;

fn answer(shared: &Shared, request: &UpstreamRequest) -> UpstreamResponse {
    let mut f = shared.borrow_mut();
    let rest = request
        .url
        .strip_prefix(CIRCLECI_URL)
        .unwrap_or(&request.url)
        .to_owned();
    let body = String::from_utf8_lossy(request.body.as_deref().unwrap_or_default()).into_owned();
    f.seen.push((request.method.clone(), rest.clone(), body));
    let workflow = format!("/workflow/{ID}");
    if request.method == "POST" && rest == format!("{workflow}/rerun") {
        return f.rerun.clone().unwrap_or_else(|| {
            json_response(202, &json!({ "workflow_id": NEW_ID }).to_string(), &[])
        });
    }
    if rest == workflow {
        let index = f.polls;
        f.polls += 1;
        if let Some((_, fault)) = f.fault.as_ref().filter(|(i, _)| *i == index) {
            return fault.clone();
        }
        let done = f.finishes_after.is_some_and(|n| index >= n);
        let status = if done { "failed" } else { "running" };
        let body = json!({"id": ID, "name": "build-and-test", "status": status,
            "project_slug": "gh/octo/app", "pipeline_id": "p-1", "pipeline_number": 12,
            "created_at": "2026-01-01T00:00:00Z", "stopped_at": null, "tag": null});
        return json_response(200, &body.to_string(), &[]);
    }
    let job = |n: u64, name: &str, status: &str| json!({"job_number": n, "name": name, "status": status, "type": "build", "id": format!("j{n}")});
    if rest == format!("{workflow}/job") {
        let body = json!({"items": [job(7, "build", "success"), job(8, "test", "failed")],
                          "next_page_token": "page2"});
        return json_response(200, &body.to_string(), &[]);
    }
    if rest == format!("{workflow}/job?page-token=page2") {
        let body =
            json!({"items": [job(9, "lint", "infrastructure_fail")], "next_page_token": null});
        return json_response(200, &body.to_string(), &[]);
    }
    json_response(404, r#"{"message":"Workflow not found."}"#, &[])
}

fn fake_circleci(setup: impl FnOnce(&mut Fake)) -> (Server, FakeEnv, Shared) {
    scripted(setup, answer)
}

/// The structured value of a successful call, or the error text.
fn data(result: &Json) -> Result<Json, String> {
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    if result["isError"] == true {
        return Err(text.to_owned());
    }
    Ok(result["structuredContent"]["data"].clone())
}

#[test]
fn a_workflow_with_its_failed_jobs_over_pages() {
    let (server, env, fake) = fake_circleci(|f| f.finishes_after = Some(0));
    let v = data(&call_driven(&server, &env, GET, json!({"workflowId": ID}))).unwrap();
    assert_eq!(v["workflow"]["status"], "failed");
    assert_eq!(v["workflow"]["projectSlug"], "gh/octo/app");
    assert_eq!(v["workflow"]["pipelineNumber"], 12);
    assert_eq!(
        v["failedJobs"],
        json!([{"jobNumber": 8, "name": "test", "status": "failed"},
               {"jobNumber": 9, "name": "lint", "status": "infrastructure_fail"}])
    );
    assert_eq!(
        (v["completed"].clone(), v["polls"].clone()),
        (json!(true), json!(1))
    );
    let seen: Vec<String> = fake.borrow().seen.iter().map(|s| s.1.clone()).collect();
    assert_eq!(
        seen,
        [
            format!("/workflow/{ID}"),
            format!("/workflow/{ID}/job"),
            format!("/workflow/{ID}/job?page-token=page2"),
        ]
    );
}

/// `circleci_get_workflow` waiting `wait_seconds` on a workflow final after `finishes_after`
/// polls (never when `None`), with `fault` replacing one poll: the answer's wait figures and the
/// workflow's status.
fn wait_for(
    finishes_after: Option<u64>,
    fault: Option<(u64, UpstreamResponse)>,
    wait_seconds: u64,
) -> (Json, Json, Json, Json) {
    let (server, env, _) = fake_circleci(|f| {
        f.finishes_after = finishes_after;
        f.fault = fault;
    });
    let args = json!({"workflowId": ID, "waitSeconds": wait_seconds});
    let v = data(&call_driven(&server, &env, GET, args)).unwrap();
    let status = v["workflow"]["status"].clone();
    (
        v["completed"].clone(),
        v["polls"].clone(),
        v["waitedMs"].clone(),
        status,
    )
}

#[test]
fn waiting_backs_off_until_a_final_state_or_the_deadline() {
    // Polls at 0, 5, 15 and 35 s: GitHub's back-off, the same loop.
    assert_eq!(
        wait_for(Some(3), None, 600),
        (json!(true), json!(4), json!(35_000), json!("failed"))
    );
    // 0, 5, 15, 35, then the last pause is cut to the deadline: 60.
    assert_eq!(
        wait_for(None, None, 60),
        (json!(false), json!(5), json!(60_000), json!("running"))
    );
}

#[test]
fn a_retry_after_within_the_wait_is_honoured() {
    let limited = json_response(
        429,
        r#"{"message":"Too many requests."}"#,
        &[("Retry-After", "40")],
    );
    // 0; 5 (limited: pause 40 s); 45, final.
    assert_eq!(
        wait_for(Some(2), Some((1, limited)), 600),
        (json!(true), json!(3), json!(45_000), json!("failed"))
    );
}

#[test]
fn bad_ids_and_missing_workflows_are_clear_errors() {
    let (server, env, fake) = fake_circleci(|_| {});
    for tool in [GET, RERUN] {
        let error = data(&call_driven(
            &server,
            &env,
            tool,
            json!({"workflowId": "../me"}),
        ))
        .unwrap_err();
        assert!(
            error.contains("workflowId must be a CircleCI workflow id, a UUID"),
            "{error}"
        );
    }
    assert!(fake.borrow().seen.is_empty(), "nothing sent for a bad id");
    let other = "5034460f-c7c4-4c43-9457-de07e2029e7c";
    let error = data(&call_driven(
        &server,
        &env,
        GET,
        json!({"workflowId": other}),
    ))
    .unwrap_err();
    assert!(
        error.starts_with("Error: Resource not found. CircleCI API: Workflow not found"),
        "{error}"
    );
}

#[test]
fn a_rerun_is_sent_once_and_answers_the_new_workflow() {
    let (server, env, fake) = fake_circleci(|_| {});
    let result = call_driven(
        &server,
        &env,
        RERUN,
        json!({"workflowId": ID.to_uppercase()}),
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(result.get("isError"), None, "{text}");
    assert!(text.contains(&format!("workflowId: {NEW_ID}")), "{text}");
    assert!(text.contains(&format!("rerunOf: {ID}")), "{text}");
    let result = call_driven(
        &server,
        &env,
        RERUN,
        json!({"workflowId": ID, "fromFailed": false}),
    );
    assert_eq!(result.get("isError"), None, "{result}");
    let seen = &fake.borrow().seen;
    let sent: Vec<(&str, &str, &str)> = seen
        .iter()
        .map(|(m, p, b)| (m.as_str(), p.as_str(), b.as_str()))
        .collect();
    let path = format!("/workflow/{ID}/rerun");
    assert_eq!(
        sent,
        [
            ("POST", path.as_str(), r#"{"from_failed":true}"#),
            ("POST", path.as_str(), r#"{"from_failed":false}"#),
        ]
    );
}

#[test]
fn circleci_refusals_carry_its_reason_and_nothing_is_retried() {
    for (status, body, expected) in [
        (400, r#"{"message":"Workflow is not in a final state"}"#,
         format!("Error: CircleCI refused to re-run workflow {ID} (HTTP 400): Workflow is not in a final state. Nothing was retried.")),
        (404, r#"{"message":"Workflow not found."}"#,
         "Error: Resource not found. CircleCI API: Workflow not found".to_owned()),
        (503, r#"{"message":"Service unavailable"}"#, "Error: CircleCI server error".to_owned()),
    ] {
        let (server, env, fake) = fake_circleci(|f| f.rerun = Some(json_response(status, body, &[])));
        let error = data(&call_driven(&server, &env, RERUN, json!({"workflowId": ID}))).unwrap_err();
        assert!(error.starts_with(&expected), "{status}: {error}");
        assert_eq!(fake.borrow().seen.len(), 1, "{status}: sent once");
    }
}
