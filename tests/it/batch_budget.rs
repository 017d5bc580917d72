//! Host tests of a JSON-RPC batch's shared budget through `Server::handle`: a batch is one
//! request, so its calls share one request's jq fuel, time and reply memory, the calls past a
//! bound are answered with `batch_budget_exceeded`, and a batch longer than the bound on its
//! messages is refused as a whole.

use crate::common::ci::*;
use crate::common::protocol::{body_json, post, request};
use devtools_mcp_edge::memory::{BATCH_SHARE, BYTES_PER_REPLY_BYTE};
use devtools_mcp_edge::ports::fake::{FakeEnv, ManualClock};
use devtools_mcp_edge::projection::{last_spent, Limits, Projection};
use devtools_mcp_edge::server::Server;
use futures::executor::block_on;
use serde_json::{json, Value as Json};
use std::cell::RefCell;
use std::rc::Rc;

const GET: &str = "circleci_get";

/// Sends `batch` (2025-03-26) through `server` on `env`; returns the status and the replies.
fn send_batch(server: &Server, env: &FakeEnv, batch: &[Json]) -> (u16, Json) {
    let body = Json::Array(batch.to_vec()).to_string();
    let request = post(&body, &[("MCP-Protocol-Version", "2025-03-26")]);
    let response = block_on(server.handle(request, env.ports()));
    (response.status, body_json(&response))
}

/// A `circleci_get` of a path of its own (so that none is answered from the cache).
fn get_call(id: i64, jq: &str) -> Json {
    let path = format!("/project/{id}");
    request(
        id,
        "tools/call",
        json!({"name": GET, "arguments": {"path": path, "jq": jq}}),
    )
}

/// `error.data` of a reply refused for its batch's budget: its bound.
fn refused_for(reply: &Json) -> &str {
    assert_eq!(reply["error"]["code"], -32000, "{reply}");
    assert_eq!(
        reply["error"]["data"]["code"], "batch_budget_exceeded",
        "{reply}"
    );
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Batch budget exceeded"),
        "{reply}"
    );
    reply["error"]["data"]["bound"].as_str().unwrap()
}

fn text(reply: &Json) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn a_batch_longer_than_its_bound_is_refused_as_a_whole() {
    let server = ci_server();
    let env = FakeEnv::new();
    let pings: Vec<Json> = (0..51).map(|id| request(id, "ping", json!({}))).collect();
    let (status, body) = send_batch(&server, &env, &pings);
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(-32600))
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("at most 50 messages and this one holds 51"),
        "{message}"
    );
    let (status, body) = send_batch(&server, &env, &pings[..50]);
    assert_eq!(status, 200);
    assert_eq!(body.as_array().unwrap().len(), 50);
}

/// A jq program over `{"n": n}` and the `n` at which it spends about `share` of a run's fuel.
fn program_spending(share: f64) -> (&'static str, u64) {
    let program = ".n as $n | reduce limit($n; repeat(1)) as $x (0; . + $x)";
    let probe = 10_000;
    let compiled = Projection::compile(program);
    let data = devtools_mcp_edge::value::parse(&format!("{{\"n\":{probe}}}")).unwrap();
    compiled.apply(&data).unwrap();
    let per_item = last_spent() as f64 / probe as f64;
    (
        program,
        (Limits::default().fuel as f64 * share / per_item) as u64,
    )
}

#[test]
fn the_calls_of_a_batch_share_one_requests_jq_fuel() {
    let (program, n) = program_spending(0.6);
    let server = ci_server();
    let body = format!("{{\"n\":{n}}}");
    let env = env_with(move |_| Ok(json_response(200, &body, &[])));
    // Alone, each call has fuel enough.
    let alone = call(&server, &env, GET, json!({"path": "/me", "jq": program}));
    let answer = format!("data: {n}\n");
    assert!(alone.text.starts_with(&answer), "{}", alone.text);
    // The caller's bucket of fuel refills before the batch (ten seconds fill it).
    env.clock.advance(10_000);
    let batch: Vec<Json> = (1..=3).map(|id| get_call(id, program)).collect();
    let (status, replies) = send_batch(&server, &env, &batch);
    assert_eq!(status, 200);
    let replies = replies.as_array().unwrap();
    assert_eq!(replies.len(), 3);
    assert!(text(&replies[0]).starts_with(&answer), "{}", replies[0]);
    // The second starts with what the first left, and stops where it ends.
    assert!(
        text(&replies[1]).contains("evaluation budget exhausted"),
        "{}",
        replies[1]
    );
    assert_eq!(refused_for(&replies[2]), "fuel");
}

#[test]
fn a_batch_starts_no_call_once_one_upstream_requests_time_is_up() {
    let server = ci_builder(&[("UPSTREAM_TIMEOUT_MS", "5000")])
        .build()
        .server;
    let clock: Rc<RefCell<Option<ManualClock>>> = Rc::default();
    let seen = clock.clone();
    let env = env_with(move |_| {
        // Each upstream answer takes two and a half seconds.
        if let Some(clock) = seen.borrow().as_ref() {
            clock.advance(2_500);
        }
        Ok(json_response(200, "{}", &[]))
    });
    *clock.borrow_mut() = Some(env.clock.clone());
    let batch: Vec<Json> = (1..=4).map(|id| get_call(id, "")).collect();
    let (_, replies) = send_batch(&server, &env, &batch);
    let replies = replies.as_array().unwrap();
    assert!(replies[0]["result"].is_object() && replies[1]["result"].is_object());
    assert_eq!(refused_for(&replies[2]), "time");
    assert_eq!(refused_for(&replies[3]), "time");
    assert_eq!(replies[3]["id"], 4);
}

#[test]
fn replies_past_the_batchs_share_of_memory_stop_the_calls_not_yet_started_and_each_is_answered() {
    let budget = 1_677_722;
    let server = ci_builder(&[("MEMORY_BUDGET_BYTES", &budget.to_string())])
        .build()
        .server;
    // Each reply holds some 30,000 bytes of text (under the output's cut): the share holds
    // three and a bit of them, and the request, its small body and one call's page stay far
    // inside the rest of the budget.
    let share = budget / BATCH_SHARE / BYTES_PER_REPLY_BYTE;
    assert!(3 * 30_100 < share && share < 4 * 30_000);
    let body = json!({"text": "x".repeat(30_000)}).to_string();
    let env = env_with(move |_| Ok(json_response(200, &body, &[])));
    let batch: Vec<Json> = (1..=8).map(|id| get_call(id, ".")).collect();
    let (status, replies) = send_batch(&server, &env, &batch);
    assert_eq!(status, 200);
    let replies = replies.as_array().unwrap();
    let ids: Vec<i64> = replies.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, (1..=8).collect::<Vec<_>>());
    for served in &replies[..4] {
        assert!(text(served).contains("xxx"), "{served}");
    }
    for refused in &replies[4..] {
        assert_eq!(refused_for(refused), "memory");
        assert!(refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("its replies hold"));
    }
}
