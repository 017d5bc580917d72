//! Enterprise policy end to end on the host: the approval round trip between two principals
//! (self-approval, replay, expiry, denial, another principal), fail-closed documents with
//! tools/list still working, a KV-held policy, the `_meta` shapes with structured output on and
//! off, restricted descriptions, artifact_read's own-artifacts rule, and running without policy.

use crate::common::policy::*;
use devtools_mcp_edge::approvals::{MAX_PENDING_PER_REQUESTER, MAX_RECORD_BYTES, PAGE_BYTES};
use devtools_mcp_edge::artifacts::{Artifacts, WRITE_WINDOW_MS};
use devtools_mcp_edge::auth::Principal;
use devtools_mcp_edge::config::Config;
use devtools_mcp_edge::ports::{CacheEntry, CacheStore, StoreError, MAX_LINE_BYTES};
use serde_json::{json, Value as Json};

const FLOW_POLICY: &str = r#"{
  "identities": [
    { "name": "bb-release", "vendor": "bitbucket", "userSecret": "BB_REL_USER", "tokenSecret": "BB_REL_PASS" }
  ],
  "groups": { "release": ["carol", "dave"] },
  "rules": [
    { "id": "merges", "match": { "principals": ["alice", "bob", "carol"], "tools": ["bb_post"],
        "paths": ["/2.0/repositories/acme/*/pullrequests/*/merge"] },
      "effect": "approval_required", "approvers": { "groups": ["release"] },
      "identities": { "bitbucket": "bb-release" },
      "reason": "Merges need a release manager." },
    { "id": "jira-read", "match": { "tools": ["jira_get"], "principals": ["alice", "carol"] }, "effect": "allow" },
    { "id": "jira-issue-write", "match": { "tools": ["jira_post"], "principals": ["alice"], "paths": ["/rest/api/3/issue"] },
      "effect": "allow" }
  ]
}"#;

fn secrets() -> Vec<(String, String)> {
    vec![
        ("BB_REL_USER".into(), "release-bot".into()),
        ("BB_REL_PASS".into(), "bb_release_SECRET".into()),
    ]
}

fn merge_args(pr: u32) -> Json {
    json!({"path": format!("/repositories/acme/web/pullrequests/{pr}/merge"), "body": {"message": "ship", "close_source_branch": true}})
}

fn approval_of(result: &Json) -> (String, String) {
    let approval = &result["_meta"]["decision"]["approval"];
    (
        approval["id"].as_str().unwrap_or_default().to_owned(),
        approval["status"].as_str().unwrap_or_default().to_owned(),
    )
}

fn decide(
    server: &devtools_mcp_edge::server::Server,
    env: &devtools_mcp_edge::ports::fake::FakeEnv,
    who: &str,
    id: &str,
    approve: bool,
) -> Json {
    call(
        server,
        env,
        who,
        "approval_decide",
        json!({"approvalId": id, "approve": approve, "reason": "checked"}),
    )
}

fn events(env: &devtools_mcp_edge::ports::fake::FakeEnv, event: &str) -> Vec<Json> {
    env.log
        .lines()
        .iter()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .filter(|l| l["event"] == event)
        .collect()
}

#[test]
fn approval_round_trip_between_two_principals() {
    let pairs = settings(Some(FLOW_POLICY), &secrets(), &[]);
    let server = server(&pairs);
    let env = env(&pairs);

    let first = call(&server, &env, "alice", "bb_post", merge_args(7));
    assert_eq!(
        first["_meta"]["code"],
        json!("approval_required"),
        "{first}"
    );
    let (id, status) = approval_of(&first);
    assert_eq!(status, "pending");
    assert!(
        text(&first).contains(&id) && text(&first).contains("carol, dave"),
        "{}",
        text(&first)
    );

    // The identical call (keys in another order) finds the same request.
    let again = call(
        &server,
        &env,
        "alice",
        "bb_post",
        json!({"body": {"close_source_branch": true, "message": "ship"}, "path": "/repositories/acme/web/pullrequests/7/merge"}),
    );
    assert_eq!(approval_of(&again), (id.clone(), "pending".into()));

    // Only approvers list; the requester is not one.
    let listed = call(&server, &env, "carol", "approval_list", json!({}));
    assert_eq!(listed.get("isError"), None, "{listed}");
    let listed: Json = serde_json::from_str(text(&listed)).expect("the list is JSON");
    let entry = &listed["approvals"][0];
    assert_eq!(entry["id"], json!(id));
    assert_eq!(entry["requester"], json!("alice"));
    assert_eq!(entry["tool"], json!("bb_post"));
    assert_eq!(
        entry["requesterText"]["path"],
        json!("/2.0/repositories/acme/web/pullrequests/7/merge")
    );
    assert_eq!(
        entry["requesterText"]["arguments"]["body"]["message"],
        json!("ship")
    );
    for outsider in ["alice", "mallory"] {
        let refused = call(&server, &env, outsider, "approval_list", json!({}));
        assert_eq!(
            refused["_meta"]["code"],
            json!("policy_denied"),
            "{outsider}: {refused}"
        );
        assert_eq!(refused["_meta"]["decision"]["rule"], Json::Null);
        let refused = decide(&server, &env, outsider, &id, true);
        assert_eq!(
            refused["_meta"]["code"],
            json!("policy_denied"),
            "{outsider}: {refused}"
        );
    }
    assert!(
        env.http.sent().is_empty(),
        "nothing reached the upstream yet"
    );

    let approved = decide(&server, &env, "carol", &id, true);
    assert_eq!(approved.get("isError"), None, "{approved}");
    assert!(text(&approved).contains("approved"), "{}", text(&approved));
    // Decided once only.
    let twice = decide(&server, &env, "dave", &id, false);
    assert_eq!(twice["isError"], json!(true));
    assert!(text(&twice).contains("already decided"), "{}", text(&twice));

    // Another principal's identical call does not use alice's approval.
    let bob = call(&server, &env, "bob", "bb_post", merge_args(7));
    let (bob_id, bob_status) = approval_of(&bob);
    assert_eq!(bob_status, "pending");
    assert_ne!(bob_id, id);

    // A different argument does not either.
    let other = call(&server, &env, "alice", "bb_post", merge_args(8));
    assert_ne!(approval_of(&other).0, id);
    assert!(env.http.sent().is_empty());

    // The approved call runs once, with the rule's identity.
    let ran = call(&server, &env, "alice", "bb_post", merge_args(7));
    assert_eq!(ran["_meta"].get("code"), None, "{ran}");
    assert_eq!(
        ran["_meta"]["mcp-devtools/upstream"],
        json!({"vendor": "bitbucket", "identity": "bb-release"})
    );
    let sent = env.http.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].method, "POST");
    assert_eq!(
        sent[0].url,
        "https://bb.test/2.0/repositories/acme/web/pullrequests/7/merge"
    );
    assert_eq!(
        devtools_mcp_edge::ports::header(&sent[0].headers, "Authorization"),
        Some("Basic cmVsZWFzZS1ib3Q6YmJfcmVsZWFzZV9TRUNSRVQ="),
        "release-bot:bb_release_SECRET"
    );

    // Replay: refused, with a new request.
    let replay = call(&server, &env, "alice", "bb_post", merge_args(7));
    let (replay_id, replay_status) = approval_of(&replay);
    assert_eq!(replay_status, "pending", "{replay}");
    assert_ne!(replay_id, id);
    assert_eq!(
        env.http.sent().len(),
        1,
        "the replay did not reach the upstream"
    );

    let actions: Vec<(String, String)> = events(&env, "approval")
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["by"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("requested", "alice"),
        ("approved", "carol"),
        ("requested", "bob"),
        ("requested", "alice"),
        ("consumed", "alice"),
        ("requested", "alice"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(actions, expected);
    for line in env.log.lines() {
        assert!(
            !line.contains("bb_release_SECRET") && !line.contains("ship"),
            "{line}"
        );
    }
}

#[test]
fn self_approval_expiry_and_denial() {
    let pairs = settings(
        Some(FLOW_POLICY),
        &secrets(),
        &[("MCP_APPROVAL_TTL_SECONDS", "120")],
    );
    let server = server(&pairs);
    let env = env(&pairs);

    // carol is both a requester and an approver: she cannot decide her own request.
    let mine = call(&server, &env, "carol", "bb_post", merge_args(1));
    let (mine_id, _) = approval_of(&mine);
    let own = decide(&server, &env, "carol", &mine_id, true);
    assert_eq!(own["isError"], json!(true));
    assert!(
        text(&own).contains("cannot decide your own"),
        "{}",
        text(&own)
    );
    let listed = call(&server, &env, "carol", "approval_list", json!({}));
    assert!(
        !text(&listed).contains(&mine_id),
        "her own request is not hers to decide"
    );
    // dave can.
    let listed = call(&server, &env, "dave", "approval_list", json!({}));
    assert!(text(&listed).contains(&mine_id));

    // Expiry: approved, but used after the TTL.
    let late = call(&server, &env, "alice", "bb_post", merge_args(2));
    let (late_id, _) = approval_of(&late);
    assert_eq!(
        late["_meta"]["decision"]["approval"]["expiresAt"],
        json!("2026-01-01T00:02:00.000Z")
    );
    assert_eq!(
        decide(&server, &env, "dave", &late_id, true).get("isError"),
        None
    );
    env.clock.advance(120_000);
    let expired = call(&server, &env, "alice", "bb_post", merge_args(2));
    let (new_id, status) = approval_of(&expired);
    assert_eq!(status, "pending", "{expired}");
    assert_ne!(new_id, late_id);
    assert!(
        env.http.sent().is_empty(),
        "an expired approval runs nothing"
    );
    let gone = decide(&server, &env, "dave", &late_id, true);
    assert!(
        text(&gone).contains("No live approval request"),
        "{}",
        text(&gone)
    );

    // Denial: the requester's repeats say so until expiry.
    let denied = decide(&server, &env, "dave", &new_id, false);
    assert!(text(&denied).contains("denied"), "{}", text(&denied));
    let repeat = call(&server, &env, "alice", "bb_post", merge_args(2));
    assert_eq!(repeat["_meta"]["code"], json!("approval_required"));
    assert_eq!(approval_of(&repeat), (new_id.clone(), "denied".into()));
    assert!(
        text(&repeat).contains("was denied by dave (checked)"),
        "{}",
        text(&repeat)
    );
    assert!(env.http.sent().is_empty());
    assert!(events(&env, "approval")
        .iter()
        .any(|e| e["action"] == "denied" && e["by"] == "dave"));
}

#[test]
fn approvals_fail_closed_when_their_store_is_down() {
    let pairs = settings(Some(FLOW_POLICY), &secrets(), &[]);
    let server = server(&pairs);
    let env = env(&pairs);
    env.approvals
        .fail_with(Some(StoreError("Durable Object reset".into())));
    let result = call(&server, &env, "alice", "bb_post", merge_args(3));
    assert_eq!(result["_meta"]["code"], json!("policy_denied"), "{result}");
    assert_eq!(result["_meta"]["decision"]["rule"], json!("merges"));
    assert!(
        text(&result).contains("approval store is unavailable"),
        "{}",
        text(&result)
    );
    assert!(env.http.sent().is_empty());
    assert_eq!(events(&env, "approval_store_failed").len(), 1);
}

#[test]
fn approvals_fail_closed_without_their_binding() {
    let pairs = settings(Some(FLOW_POLICY), &secrets(), &[]);
    let server = server(&pairs);
    let env = env(&pairs);
    env.approvals
        .fail_with(Some(StoreError::missing_binding("APPROVALS")));
    let result = call(&server, &env, "alice", "bb_post", merge_args(3));
    assert_eq!(result["_meta"]["code"], json!("policy_denied"), "{result}");
    assert_eq!(
        result["_meta"]["decision"]["effect"],
        json!("approval_required")
    );
    assert!(
        text(&result).contains("(the APPROVALS Durable Object) is not configured"),
        "{}",
        text(&result)
    );
    for (tool, args) in [
        ("approval_list", json!({})),
        (
            "approval_decide",
            json!({"approvalId": "apr_0123456789abcdef0123456789abcdef", "approve": true}),
        ),
    ] {
        let answer = call(&server, &env, "carol", tool, args);
        assert_eq!(answer["isError"], json!(true), "{answer}");
        assert!(text(&answer).contains("is not configured"), "{answer}");
    }
    // Calls no approval rule governs are not affected.
    let read = call(
        &server,
        &env,
        "alice",
        "jira_get",
        json!({"path": "/rest/api/3/myself"}),
    );
    assert_eq!(read.get("isError"), None, "{read}");
}

#[test]
fn pending_requests_are_capped_per_requester_with_a_clear_refusal() {
    let pairs = settings(Some(FLOW_POLICY), &secrets(), &[]);
    let server = server(&pairs);
    let env = env(&pairs);
    for pr in 0..MAX_PENDING_PER_REQUESTER as u32 {
        let result = call(&server, &env, "alice", "bb_post", merge_args(pr));
        assert_eq!(approval_of(&result).1, "pending", "{result}");
    }
    // The same call again is not a new request: it answers with its own.
    let same = call(&server, &env, "alice", "bb_post", merge_args(0));
    assert_eq!(approval_of(&same).1, "pending", "{same}");
    let over = call(&server, &env, "alice", "bb_post", merge_args(999));
    assert_eq!(over["_meta"]["code"], json!("approval_limit"), "{over}");
    assert_eq!(over["_meta"]["limit"], json!("pending_per_principal"));
    assert_eq!(over["_meta"]["decision"]["rule"], json!("merges"));
    assert!(
        text(&over).contains(&format!(
            "You already have {MAX_PENDING_PER_REQUESTER} pending approval requests"
        )),
        "{}",
        text(&over)
    );
    // Another requester is not held back, and a decision frees a place.
    let bob = call(&server, &env, "bob", "bb_post", merge_args(999));
    assert_eq!(approval_of(&bob).1, "pending", "{bob}");
    decide(&server, &env, "carol", &approval_of(&same).0, false);
    let freed = call(&server, &env, "alice", "bb_post", merge_args(999));
    assert_eq!(approval_of(&freed).1, "pending", "{freed}");
    assert!(env.http.sent().is_empty());
}

#[test]
fn decided_requests_never_crowd_pending_ones_out_of_approval_list() {
    let pairs = settings(Some(FLOW_POLICY), &secrets(), &[]);
    let server = server(&pairs);
    let env = env(&pairs);
    // More decided requests than any listing would read, all older than the pending one.
    for pr in 0..210 {
        let requested = call(&server, &env, "bob", "bb_post", merge_args(pr));
        let (id, _) = approval_of(&requested);
        decide(&server, &env, "carol", &id, pr % 2 == 0);
    }
    let waiting = call(&server, &env, "alice", "bb_post", merge_args(5000));
    let (waiting_id, _) = approval_of(&waiting);
    let listed = call(&server, &env, "dave", "approval_list", json!({}));
    let listed: Json = serde_json::from_str(text(&listed)).expect("JSON");
    let ids: Vec<&str> = listed["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["id"].as_str())
        .collect();
    assert_eq!(ids, vec![waiting_id.as_str()], "{listed}");
    assert_eq!(listed.get("nextCursor"), None);
}

#[test]
fn approval_list_pages_with_a_cursor_and_refuses_one_it_did_not_give() {
    let pairs = settings(Some(FLOW_POLICY), &secrets(), &[]);
    let server = server(&pairs);
    let env = env(&pairs);
    // Twenty requests of about 3 KB each from two requesters: more than one page of bytes.
    let mut made = Vec::new();
    for pr in 0..20u32 {
        let mut args = merge_args(pr);
        args["body"]["message"] = json!("m".repeat(3000));
        let requester = if pr % 2 == 0 { "alice" } else { "bob" };
        made.push(approval_of(&call(&server, &env, requester, "bb_post", args)).0);
    }
    let (mut listed, mut pages, mut cursor) = (Vec::new(), 0, None::<String>);
    loop {
        let args = cursor
            .as_ref()
            .map_or(json!({}), |c| json!({ "cursor": c }));
        let page = call(&server, &env, "dave", "approval_list", args);
        assert_eq!(page.get("isError"), None, "{page}");
        assert!(
            text(&page).len() <= PAGE_BYTES,
            "{} bytes",
            text(&page).len()
        );
        let page: Json = serde_json::from_str(text(&page)).expect("JSON");
        for entry in page["approvals"].as_array().unwrap() {
            listed.push(entry["id"].as_str().unwrap().to_owned());
        }
        pages += 1;
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    // The test clock stands still, so the ids order requests made at one instant.
    made.sort();
    assert_eq!(listed, made, "every request once, in order");
    assert!(pages >= 3, "{pages} pages");
    for bad in ["", "nope", "12.apr_zz", "1.2.3"] {
        let params = json!({"name": "approval_list", "arguments": { "cursor": bad }});
        let refused = rpc(&server, &env, "dave", "tools/call", params);
        assert_eq!(
            refused["error"]["code"],
            json!(-32602),
            "{bad:?}: {refused}"
        );
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("cursor is not a nextCursor"), "{message}");
    }
}

#[test]
fn a_request_too_large_to_hold_is_refused_before_it_reaches_the_ledger() {
    let pairs = settings(Some(FLOW_POLICY), &secrets(), &[]);
    let server = server(&pairs);
    let env = env(&pairs);
    let mut args = merge_args(1);
    args["body"]["message"] = json!("m".repeat(MAX_RECORD_BYTES));
    let refused = call(&server, &env, "alice", "bb_post", args);
    assert_eq!(
        refused["_meta"]["code"],
        json!("approval_limit"),
        "{refused}"
    );
    assert_eq!(refused["_meta"]["limit"], json!("record_too_large"));
    assert!(
        text(&refused).contains(&format!("at most {MAX_RECORD_BYTES} bytes")),
        "{}",
        text(&refused)
    );
    assert_eq!(env.approvals.ops(), 0, "nothing was sent to the ledger");
    assert!(env.approvals.is_empty());
    assert!(env.http.sent().is_empty());
}

#[test]
fn an_approval_granted_under_another_rule_is_void_after_a_policy_edit() {
    let pairs = settings(Some(FLOW_POLICY), &secrets(), &[]);
    let env = env(&pairs);
    let edits = [
        FLOW_POLICY.replace("\"id\": \"merges\"", "\"id\": \"merges-v2\""),
        FLOW_POLICY.replace("[\"carol\", \"dave\"]", "[\"dave\"]"),
        FLOW_POLICY.replace("\"identities\": { \"bitbucket\": \"bb-release\" },", ""),
    ];
    for (n, edited) in edits.iter().enumerate() {
        assert_ne!(edited, FLOW_POLICY);
        let pr = 100 + n as u32;
        let before = server(&pairs);
        let requested = call(&before, &env, "alice", "bb_post", merge_args(pr));
        let (id, _) = approval_of(&requested);
        assert_eq!(
            decide(&before, &env, "carol", &id, true).get("isError"),
            None
        );
        // The policy is edited between the approval and its use.
        let after = server(&settings(Some(edited), &secrets(), &[]));
        let refused = call(&after, &env, "alice", "bb_post", merge_args(pr));
        assert_eq!(
            refused["_meta"]["code"],
            json!("approval_required"),
            "{refused}"
        );
        let (new_id, status) = approval_of(&refused);
        assert_eq!(status, "pending");
        assert_ne!(new_id, id);
        assert!(
            text(&refused).contains(&format!(
                "Approval {id} was granted under rule \"merges\" and is void"
            )),
            "{}",
            text(&refused)
        );
        assert!(env.http.sent().is_empty(), "edit {n}: nothing ran");
        assert!(events(&env, "approval")
            .iter()
            .any(|e| e["action"] == "voided" && e["approvalId"] == json!(id)));
    }
    // Unedited, the approval is used as granted.
    let same = server(&pairs);
    let (id, _) = approval_of(&call(&same, &env, "alice", "bb_post", merge_args(7)));
    decide(&same, &env, "carol", &id, true);
    let ran = call(&server(&pairs), &env, "alice", "bb_post", merge_args(7));
    assert_eq!(ran["_meta"].get("code"), None, "{ran}");
    assert_eq!(env.http.sent().len(), 1);
}

#[test]
fn broken_policies_refuse_every_call_and_name_the_problem() {
    let valid: Json = serde_json::from_str(FLOW_POLICY).unwrap();
    let with = |pointer: &str, value: Json| {
        let mut doc = valid.clone();
        *doc.pointer_mut(pointer).unwrap() = value;
        doc.to_string()
    };
    let cases = [
        ("{\"rules\": [", "not valid JSON".to_owned()),
        (
            &with("/rules/0/identities/bitbucket", json!("bb-nobody"))[..],
            "rules[0] (\"merges\"): identity \"bb-nobody\" is not defined".to_owned(),
        ),
        (
            &with("/rules/0/match/paths/0", json!("/2.0/a**"))[..],
            "\"**\" must be a whole segment".to_owned(),
        ),
        (
            &with("/identities/0/tokenSecret", json!("BB_UNSET"))[..],
            "identities[0] (\"bb-release\"): secret BB_UNSET is not set".to_owned(),
        ),
        (
            &with("/rules/1/effect", json!("permit"))[..],
            "unknown variant `permit`".to_owned(),
        ),
        (
            &with("/rules/1/match/tools", json!([]))[..],
            "empty list".to_owned(),
        ),
        (
            &with("/rules/0/approvers/groups/0", json!("nobody"))[..],
            "group \"nobody\" is not defined".to_owned(),
        ),
        (
            &with("/identities/0/vendor", json!("gitlab"))[..],
            "vendor \"gitlab\"".to_owned(),
        ),
        (
            &with("/rules/1/match/tools/0", json!("jira get"))[..],
            "tool glob".to_owned(),
        ),
        (
            &with("/identities/0/userSecret", json!("MCP_AUTH_TOKENS"))[..],
            "MCP_ settings belong to the server".to_owned(),
        ),
    ];
    for (doc, expected) in cases {
        let pairs = settings(Some(doc), &secrets(), &[]);
        let server = server(&pairs);
        let env = env(&pairs);
        for (who, tool, args) in [
            ("alice", "jira_get", json!({"path": "/rest/api/3/myself"})),
            ("carol", "approval_list", json!({})),
            (
                "alice",
                "artifact_read",
                json!({"artifactId": "00000000-0000-4000-8000-000000000000"}),
            ),
        ] {
            let result = call(&server, &env, who, tool, args);
            assert_eq!(
                result["_meta"]["code"],
                json!("policy_denied"),
                "{doc}: {result}"
            );
            let decision = &result["_meta"]["decision"];
            assert_eq!(decision["rule"], Json::Null);
            let reason = decision["reason"].as_str().unwrap_or_default();
            assert!(
                reason.starts_with("the enterprise policy (MCP_POLICY) is invalid: "),
                "{reason}"
            );
            assert!(reason.contains(&expected), "{expected:?} not in {reason:?}");
            assert!(text(&result).contains(&expected), "{}", text(&result));
            assert!(!text(&result).contains("bb_release_SECRET"));
        }
        assert!(env.http.sent().is_empty());
        let listed = rpc(&server, &env, "alice", "tools/list", json!({}));
        let tools = listed["result"]["tools"]
            .as_array()
            .expect("tools/list still works");
        assert!(tools.len() >= 21, "nothing is hidden");
        assert!(tools.iter().all(|t| t["description"]
            .as_str()
            .unwrap()
            .contains("policy is invalid")));
    }
}

/// The request is built before the gate: a path the tool refuses is invalid arguments under any
/// policy, a broken one included, and nothing is sent.
#[test]
fn a_path_the_tool_refuses_is_invalid_before_any_policy() {
    for doc in [Some("{\"rules\": ["), Some(FLOW_POLICY), None] {
        let pairs = settings(doc, &secrets(), &[]);
        let server = server(&pairs);
        let env = env(&pairs);
        for (tool, path, says) in [
            ("jira_get", "//evil.example/x", "must not start with '//'"),
            (
                "conf_get",
                "/rest/api/3/search/jql",
                "Confluence paths start with /wiki/",
            ),
            ("jira_get", "/wiki/api/v2/pages", "Confluence's API"),
            (
                "jira_get",
                "/rest/api/3/issue;x=1/SECRET-1",
                "';' path parameters",
            ),
        ] {
            let params = json!({"name": tool, "arguments": {"path": path}});
            let reply = rpc(&server, &env, "alice", "tools/call", params);
            assert_eq!(reply["error"]["code"], json!(-32602), "{doc:?}: {reply}");
            let message = reply["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("Invalid path") && message.contains(says),
                "{message}"
            );
        }
        assert!(env.http.sent().is_empty());
    }
}

#[test]
fn a_policy_held_in_kv_is_read_at_every_call() {
    let pairs = settings(None, &secrets(), &[("MCP_POLICY_KV_KEY", "policy/v1")]);
    let server = server(&pairs);
    let env = env(&pairs);
    let args = json!({"path": "/rest/api/3/myself"});
    let missing = call(&server, &env, "alice", "jira_get", args.clone());
    let reason = missing["_meta"]["decision"]["reason"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        reason,
        "the enterprise policy (KV key \"policy/v1\" in POLICY) is missing"
    );

    let put = |doc: &str| {
        let entry = CacheEntry {
            value: doc.as_bytes().to_vec(),
            metadata: String::new(),
        };
        futures::executor::block_on(env.state.put("policy/v1", entry, 86_400)).unwrap();
    };
    put(FLOW_POLICY);
    let allowed = call(&server, &env, "alice", "jira_get", args.clone());
    assert_eq!(
        allowed["_meta"]["mcp-devtools/upstream"],
        json!({"vendor": "jira", "identity": "default"}),
        "{allowed}"
    );
    // A change takes effect on the next call, without a new server.
    put(r#"{"rules": [{"id": "lockdown", "effect": "deny"}]}"#);
    let locked = call(&server, &env, "alice", "jira_get", args.clone());
    assert_eq!(locked["_meta"]["decision"]["rule"], json!("lockdown"));
    env.state.failing.set(true);
    let unreadable = call(&server, &env, "alice", "jira_get", args);
    let reason = unreadable["_meta"]["decision"]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("could not be read"), "{reason}");
    assert_eq!(env.http.sent().len(), 1);
}

#[test]
fn meta_is_the_same_with_structured_output_on_and_off() {
    let mut metas = Vec::new();
    for flag in ["false", "true"] {
        let pairs = settings(
            Some(FLOW_POLICY),
            &secrets(),
            &[("MCP_STRUCTURED_OUTPUT", flag)],
        );
        let server = server(&pairs);
        let env = env(&pairs);
        let allowed = call(
            &server,
            &env,
            "alice",
            "jira_get",
            json!({"path": "/rest/api/3/myself"}),
        );
        assert_eq!(allowed.get("isError"), None, "{allowed}");
        assert_eq!(
            allowed.get("structuredContent").is_some(),
            flag == "true",
            "{allowed}"
        );
        let denied = call(
            &server,
            &env,
            "mallory",
            "jira_get",
            json!({"path": "/rest/api/3/myself"}),
        );
        assert!(denied.get("structuredContent").is_none());
        let pending = call(&server, &env, "alice", "bb_post", merge_args(9));
        assert!(pending.get("structuredContent").is_none());
        metas.push((
            allowed["_meta"].clone(),
            denied["_meta"].clone(),
            pending["_meta"]["code"].clone(),
        ));
    }
    assert_eq!(metas[0], metas[1]);
    assert_eq!(
        metas[0].0,
        json!({"mcp-devtools/upstream": {"vendor": "jira", "identity": "default"}})
    );
    let decision = &metas[0].1["decision"];
    assert_eq!(
        decision,
        &json!({"effect": "deny", "rule": null, "reason": "No rule of the enterprise policy allows this call (default deny).",
                "principal": "mallory", "tool": "jira_get", "product": "jira", "method": "GET", "path": "/rest/api/3/myself"})
    );
}

#[test]
fn tools_list_hides_nothing_and_says_what_is_restricted() {
    let pairs = settings(Some(FLOW_POLICY), &secrets(), &[]);
    let server = server(&pairs);
    let env = env(&pairs);
    let describe = |who: &str, tool: &str| -> String {
        let listed = rpc(&server, &env, who, "tools/list", json!({}));
        let tools = listed["result"]["tools"].as_array().unwrap().clone();
        assert!(tools.len() >= 21, "{who} sees every tool");
        tools
            .iter()
            .find(|t| t["name"] == tool)
            .and_then(|t| t["description"].as_str())
            .unwrap_or_else(|| panic!("{tool} is listed"))
            .to_owned()
    };
    assert!(
        !describe("alice", "jira_get").contains("Restricted"),
        "an unconditional allow"
    );
    assert!(describe("mallory", "jira_get").contains("denied to you"));
    assert!(describe("alice", "jira_post").contains("some calls"));
    assert!(describe("alice", "bb_post").contains("some calls"));
    assert!(describe("mallory", "approval_list").contains("only approvers"));
    assert!(!describe("carol", "approval_decide").contains("Restricted"));
    assert!(!describe("mallory", "artifact_read").contains("Restricted"));
}

#[test]
fn the_operator_may_hide_the_tools_a_principal_can_never_use() {
    let pairs = settings(
        Some(FLOW_POLICY),
        &secrets(),
        &[("MCP_POLICY_HIDE_UNUSABLE_TOOLS", "true")],
    );
    let server = server(&pairs);
    let env = env(&pairs);
    let listed = |who: &str| -> Vec<String> {
        let reply = rpc(&server, &env, who, "tools/list", json!({}));
        reply["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let mallory = listed("mallory");
    for hidden in ["jira_get", "approval_list", "approval_decide"] {
        assert!(
            !mallory.iter().any(|t| t == hidden),
            "{hidden}: {mallory:?}"
        );
    }
    assert!(mallory.iter().any(|t| t == "artifact_read"), "{mallory:?}");
    // Partly restricted and approver tools stay listed for those who can use them.
    let alice = listed("alice");
    assert!(alice.iter().any(|t| t == "jira_post"), "{alice:?}");
    assert!(listed("carol").iter().any(|t| t == "approval_decide"));
    // Hiding is a listing matter: a call still meets the gate and its refusal.
    let refused = call(
        &server,
        &env,
        "mallory",
        "jira_get",
        json!({"path": "/rest/api/3/myself"}),
    );
    assert_eq!(refused["_meta"]["code"], "policy_denied", "{refused}");
}

#[test]
fn artifact_read_serves_own_artifacts_only_whatever_the_policy() {
    for policy in [
        r#"{"rules": [{"id": "deny-all", "effect": "deny"}]}"#,
        r#"{"rules": [{"id": "allow-all", "effect": "allow"}]}"#,
    ] {
        let pairs = settings(Some(policy), &[], &[]);
        let server = server(&pairs);
        let env = env(&pairs);
        let config = Config::default();
        let id = futures::executor::block_on(
            Artifacts::new(env.call_ports(), config.tools.artifact_retention_seconds).save(
                &Principal::named("alice"),
                b"{\"x\":1}".to_vec(),
                "application/json",
            ),
        )
        .expect("saved");
        let own = call(
            &server,
            &env,
            "alice",
            "artifact_read",
            json!({"artifactId": id.as_str()}),
        );
        assert_eq!(own.get("isError"), None, "{policy}: {own}");
        assert!(own["_meta"].get("code").is_none());
        // Past the window in which a missing artifact may still be being written.
        env.clock.advance(WRITE_WINDOW_MS);
        let theirs = call(
            &server,
            &env,
            "bob",
            "artifact_read",
            json!({"artifactId": id.as_str()}),
        );
        assert_eq!(theirs["isError"], json!(true), "{policy}: {theirs}");
        assert!(
            theirs["_meta"].get("code").is_none(),
            "refused by ownership, not by policy"
        );
        assert!(!text(&theirs).contains("x\":1"));
    }
}

#[test]
fn without_a_policy_nothing_changes() {
    let pairs = settings(None, &[], &[]);
    let server = server(&pairs);
    let env = env(&pairs);
    let result = call(
        &server,
        &env,
        "mallory",
        "bb_delete",
        json!({"path": "/repositories/acme/web"}),
    );
    assert!(result.get("_meta").is_none(), "{result}");
    assert_eq!(env.http.sent().len(), 1);
    let listed = call(&server, &env, "mallory", "approval_list", json!({}));
    assert_eq!(listed["isError"], json!(true));
    assert!(text(&listed).contains("without an enterprise policy"));
    assert!(env
        .log
        .lines()
        .iter()
        .all(|l| !l.contains("policy_decision")));
}

#[test]
fn a_megabyte_path_is_cut_in_every_log_line() {
    let pairs = settings(Some(FLOW_POLICY), &secrets(), &[]);
    let server = server(&pairs);
    let env = env(&pairs);
    let path = format!("/rest/api/3/issue/{}", "a".repeat(1 << 20));
    call(&server, &env, "alice", "jira_get", json!({ "path": path }));
    let lines = env.log.lines();
    for line in &lines {
        assert!(line.len() <= MAX_LINE_BYTES, "{} bytes", line.len());
    }
    let decisions = events(&env, "policy_decision");
    assert_eq!(decisions.len(), 1, "{lines:?}");
    let logged = decisions[0]["path"].as_str().unwrap_or_default();
    assert!(logged.starts_with("/rest/api/3/issue/aaa"), "{logged}");
    assert!(logged.ends_with(" bytes]"), "{logged}");
}
