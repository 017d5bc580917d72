//! The CI-loop policy of docs/policy.md ("Example: the CI loop under policy"), read from the
//! document itself and run through the whole server: re-runs allowed to everyone, `ci.yml`
//! dispatched freely, `deploy.yml` (by name or id) and cancels outside the sandboxes waiting for
//! a release manager's approval, and an approved dispatch sent once.

use crate::common::policy::*;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::UpstreamResponse;
use serde_json::{json, Value as Json};

/// The policy document as docs/policy.md shows it.
fn documented_policy() -> String {
    let doc = include_str!("../../docs/policy.md");
    let start = doc
        .find("<!-- ci-loop-policy -->\n```json\n")
        .expect("the marked example");
    let rest = &doc[start..];
    let body = &rest[rest.find('{').unwrap()..];
    let end = body.find("\n```").unwrap();
    let policy = &body[..end];
    serde_json::from_str::<Json>(policy).expect("the example is JSON");
    policy.to_owned()
}

/// Fakes whose GitHub accepts every write, names a dispatched run, and answers reads `{}`.
fn github_env(pairs: &[(String, String)]) -> FakeEnv {
    let env = FakeEnv::with_http(ScriptedHttp::new(|request| {
        let (status, body) = if request.url.ends_with("/dispatches") {
            (
                200,
                r#"{"workflow_run_id":5,"html_url":"https://github.com/acme/app/actions/runs/5"}"#,
            )
        } else if request.method == "POST" {
            (201, "{}")
        } else {
            (200, r#"{"id":77,"run_attempt":2,"status":"queued"}"#)
        };
        Ok(UpstreamResponse {
            status,
            status_text: String::new(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        })
    }));
    for (k, v) in pairs {
        env.settings.set(k, v);
    }
    env
}

fn code(result: &Json) -> Option<&str> {
    result["_meta"]["code"].as_str()
}

#[test]
fn reruns_are_allowed_to_everyone_and_deploys_and_cancels_need_an_approval() {
    let pairs = settings(Some(&documented_policy()), &[], &[]);
    let server = server(&pairs);
    let env = github_env(&pairs);
    let run = json!({"owner": "acme", "repo": "app", "runId": 77});
    for who in ["alice", "mallory"] {
        let rerun = call(&server, &env, who, "github_rerun_workflow_run", run.clone());
        assert_eq!(code(&rerun), None, "{who}: {rerun}");
        assert!(text(&rerun).contains("attempt: 2"), "{}", text(&rerun));
    }
    let read = call(
        &server,
        &env,
        "mallory",
        "github_get_workflow_run",
        run.clone(),
    );
    assert_eq!(code(&read), None, "{read}");
    let ci = json!({"owner": "acme", "repo": "app", "workflow": "ci.yml", "ref": "main"});
    let dispatched = call(&server, &env, "alice", "github_dispatch_workflow", ci);
    assert_eq!(code(&dispatched), None, "{dispatched}");
    let sent = env.http.sent().len();

    let deploy = json!({"owner": "acme", "repo": "app", "workflow": "deploy.yml", "ref": "main"});
    let by_id = json!({"owner": "acme", "repo": "app", "workflow": 1234, "ref": "main"});
    let cancel = json!({"owner": "acme", "repo": "app", "runId": 77, "force": true});
    for (tool, args, rule) in [
        (
            "github_dispatch_workflow",
            &deploy,
            "dispatch-needs-approval",
        ),
        (
            "github_dispatch_workflow",
            &by_id,
            "dispatch-needs-approval",
        ),
        (
            "github_cancel_workflow_run",
            &cancel,
            "cancel-needs-approval",
        ),
    ] {
        let held = call(&server, &env, "alice", tool, args.clone());
        assert_eq!(
            code(&held),
            Some("approval_required"),
            "{tool} {args}: {held}"
        );
        assert_eq!(held["_meta"]["decision"]["rule"], rule);
    }
    assert_eq!(
        env.http.sent().len(),
        sent,
        "nothing sent while approvals are pending"
    );
    let sandbox = json!({"owner": "acme", "repo": "sandbox-1", "runId": 9});
    let cancelled = call(
        &server,
        &env,
        "alice",
        "github_cancel_workflow_run",
        sandbox,
    );
    assert_eq!(code(&cancelled), None, "{cancelled}");
    let other = json!({"owner": "elsewhere", "repo": "app", "runId": 77});
    let denied = call(&server, &env, "alice", "github_rerun_workflow_run", other);
    assert_eq!(code(&denied), Some("policy_denied"), "{denied}");

    // A release manager approves the deploy; the identical call then runs, once.
    let held = call(
        &server,
        &env,
        "alice",
        "github_dispatch_workflow",
        deploy.clone(),
    );
    let id = held["_meta"]["decision"]["approval"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let decided = call(
        &server,
        &env,
        "carol",
        "approval_decide",
        json!({"approvalId": id, "approve": true}),
    );
    assert_eq!(decided.get("isError"), None, "{decided}");
    let before = env.http.sent().len();
    let ran = call(&server, &env, "alice", "github_dispatch_workflow", deploy);
    assert_eq!(code(&ran), None, "{ran}");
    assert!(text(&ran).contains("runId: 5"), "{}", text(&ran));
    let sent = env.http.sent();
    assert_eq!(
        sent.len(),
        before + 1,
        "the dispatch, once; GitHub named its run"
    );
    assert_eq!(sent[before].method, "POST");
    assert_eq!(
        sent[before].url,
        "https://gh.test/repos/acme/app/actions/workflows/deploy.yml/dispatches"
    );
}
