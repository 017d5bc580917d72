//! Host tests of the HTTP cache as `circleci_get` uses it: miss then hit with upstream request
//! counts, `fresh`, paths that are never cached, TTL expiry on the clock, partitioning by
//! principal and by credential, projection after the cache, and a failing KV store.

use crate::common::ci::*;
use crate::common::protocol::{ALICE_TOKEN_2, TOKEN};
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::UpstreamRequest;
use serde_json::{json, Value as Json};
use std::cell::Cell;
use std::rc::Rc;

const GET: &str = "circleci_get";

/// An upstream whose body says how many requests it has answered so far, so a test can tell
/// which fetch a cached body came from.
fn counting_env() -> FakeEnv {
    let count = Rc::new(Cell::new(0u32));
    FakeEnv::with_http(ScriptedHttp::new(move |r: &UpstreamRequest| {
        count.set(count.get() + 1);
        let path = r.url.trim_start_matches(CIRCLECI_URL);
        let body = json!({"fetch": count.get(), "path": path}).to_string();
        Ok(json_response(200, &body, &[]))
    }))
}

fn get(server: &devtools_mcp_edge::server::Server, env: &FakeEnv, token: &str, args: Json) -> Json {
    let mut args = args;
    args["outputFormat"] = json!("json");
    let out = call_as(server, env, token, GET, args);
    assert!(!out.is_error, "{}", out.text);
    assert_no_secret(&out, env);
    out.json()
}

#[test]
fn miss_then_hit_keeps_fetched_at_and_reports_age() {
    let server = ci_server();
    let env = counting_env();
    let first = get(&server, &env, TOKEN, json!({"path": "/project/gh/o/r"}));
    assert_eq!(
        first,
        json!({"data": {"fetch": 1, "path": "/project/gh/o/r"},
               "cache": {"hit": false, "ageMs": 0, "fetchedAt": "2026-01-01T00:00:00.000Z"}})
    );
    env.clock.advance(12_345);
    let second = get(&server, &env, TOKEN, json!({"path": "/project/gh/o/r"}));
    assert_eq!(
        second,
        json!({"data": {"fetch": 1, "path": "/project/gh/o/r"},
               "cache": {"hit": true, "ageMs": 12_345, "fetchedAt": "2026-01-01T00:00:00.000Z"}})
    );
    assert_eq!(env.http.sent().len(), 1);
    assert_eq!(env.cache.keys().len(), 1);
    // The key names nothing readable: a version, then two hex digests.
    let key = &env.cache.keys()[0];
    let parts: Vec<&str> = key.split(':').collect();
    assert_eq!(parts[..2], ["http", "v2"], "{key}");
    assert_eq!(
        (parts.len(), parts[2].len(), parts[3].len()),
        (4, 16, 64),
        "{key}"
    );
    assert!(
        parts[2..]
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_hexdigit())),
        "{key}"
    );
}

#[test]
fn different_urls_are_different_entries() {
    let server = ci_server();
    let env = counting_env();
    get(&server, &env, TOKEN, json!({"path": "/project/gh/o/r"}));
    get(&server, &env, TOKEN, json!({"path": "/project/gh/o/r2"}));
    get(
        &server,
        &env,
        TOKEN,
        json!({"path": "/project/gh/o/r", "queryParams": {"a": "1"}}),
    );
    get(&server, &env, TOKEN, json!({"path": "/project/gh/o/r?a=1"}));
    assert_eq!(env.http.sent().len(), 3, "the last URL equals the third");
}

#[test]
fn projection_runs_after_the_cache() {
    let server = ci_server();
    let env = counting_env();
    get(&server, &env, TOKEN, json!({"path": "/me"}));
    let projected = get(&server, &env, TOKEN, json!({"path": "/me", "jq": "fetch"}));
    assert_eq!(projected["data"], 1);
    assert_eq!(projected["cache"]["hit"], true);
    let jq = get(
        &server,
        &env,
        TOKEN,
        json!({"path": "/me", "jq": ".path | ascii_upcase"}),
    );
    assert_eq!(jq["data"], "/ME");
    assert_eq!(env.http.sent().len(), 1);
}

#[test]
fn fresh_bypasses_and_replaces_the_entry() {
    let server = ci_server();
    let env = counting_env();
    get(&server, &env, TOKEN, json!({"path": "/me"}));
    env.clock.advance(5_000);
    let fresh = get(&server, &env, TOKEN, json!({"path": "/me", "fresh": true}));
    assert_eq!(
        fresh["cache"],
        json!({"hit": false, "ageMs": 0, "fetchedAt": "2026-01-01T00:00:05.000Z"})
    );
    assert_eq!(fresh["data"]["fetch"], 2);
    env.clock.advance(1_000);
    let after = get(&server, &env, TOKEN, json!({"path": "/me"}));
    assert_eq!(
        after["data"]["fetch"], 2,
        "the fresh body replaced the old entry"
    );
    assert_eq!(
        after["cache"],
        json!({"hit": true, "ageMs": 1_000, "fetchedAt": "2026-01-01T00:00:05.000Z"})
    );
    assert_eq!(env.http.sent().len(), 2);
    for r in env.http.sent() {
        assert!(!r.url.contains("fresh"), "{}", r.url);
    }
}

#[test]
fn pipelines_workflows_and_jobs_are_never_cached() {
    let server = ci_server();
    let env = counting_env();
    let live = [
        "/project/gh/o/r/pipeline",
        "/pipeline/5034460f-c7c4-4c43-9457-de07e2029e7b/workflow",
        "/workflow/wf-1/job",
        "/project/gh/o/r/job/42",
        "/project/gh/o/r/42/artifacts",
    ];
    for path in live {
        for _ in 0..2 {
            let v = get(&server, &env, TOKEN, json!({"path": path}));
            assert_eq!(v["cache"]["hit"], false, "{path}");
        }
    }
    assert_eq!(env.http.sent().len(), 2 * live.len());
    assert!(env.cache.keys().is_empty(), "{:?}", env.cache.keys());
    // Insights are aggregates and are cached.
    get(
        &server,
        &env,
        TOKEN,
        json!({"path": "/insights/gh/o/r/workflows"}),
    );
    let v = get(
        &server,
        &env,
        TOKEN,
        json!({"path": "/insights/gh/o/r/workflows"}),
    );
    assert_eq!(v["cache"]["hit"], true);
}

#[test]
fn entries_expire_after_the_ttl() {
    for (ttl, setting) in [(60_000u64, None), (120_000, Some("120"))] {
        let extra: Vec<(&str, &str)> = setting
            .map(|s| ("HTTP_CACHE_TTL_SECONDS", s))
            .into_iter()
            .collect();
        let server = ci_builder(&extra).build().server;
        let env = counting_env();
        get(&server, &env, TOKEN, json!({"path": "/me"}));
        env.clock.advance(ttl - 1);
        let v = get(&server, &env, TOKEN, json!({"path": "/me"}));
        assert_eq!(
            (v["cache"]["hit"].clone(), v["cache"]["ageMs"].clone()),
            (json!(true), json!(ttl - 1))
        );
        env.clock.advance(1);
        let v = get(&server, &env, TOKEN, json!({"path": "/me"}));
        assert_eq!(v["cache"]["hit"], false, "ttl {ttl}");
        assert_eq!(v["data"]["fetch"], 2);
        assert_eq!(env.http.sent().len(), 2);
    }
}

#[test]
fn principals_never_share_entries() {
    let server = ci_server();
    let env = counting_env();
    let ci = get(&server, &env, TOKEN, json!({"path": "/me"}));
    let alice = get(&server, &env, ALICE_TOKEN_2, json!({"path": "/me"}));
    assert_eq!(
        (ci["data"]["fetch"].clone(), alice["data"]["fetch"].clone()),
        (json!(1), json!(2))
    );
    assert_eq!(alice["cache"]["hit"], false, "no cross-principal hit");
    // Each principal now hits its own entry.
    let ci = get(&server, &env, TOKEN, json!({"path": "/me"}));
    let alice = get(&server, &env, ALICE_TOKEN_2, json!({"path": "/me"}));
    assert_eq!(
        (ci["data"]["fetch"].clone(), alice["data"]["fetch"].clone()),
        (json!(1), json!(2))
    );
    assert_eq!(env.http.sent().len(), 2);
    let keys = env.cache.keys();
    assert_eq!(keys.len(), 2);
    let prefix = |k: &str| k.rsplit_once(':').map(|(p, _)| p.to_owned()).unwrap();
    assert_ne!(prefix(&keys[0]), prefix(&keys[1]));
}

#[test]
fn a_new_credential_starts_a_new_cache() {
    let env = counting_env();
    let before = ci_server();
    let rotated = ci_builder(&[("CIRCLECI_TOKEN", "circle-rotated-0123456789")])
        .build()
        .server;
    get(&before, &env, TOKEN, json!({"path": "/me"}));
    let v = get(&rotated, &env, TOKEN, json!({"path": "/me"}));
    assert_eq!(v["cache"]["hit"], false);
    assert_eq!(
        request_header(&env.http.sent()[1], "Circle-Token"),
        Some("circle-rotated-0123456789")
    );
    assert_eq!(env.cache.keys().len(), 2);
    for key in env.cache.keys() {
        assert!(
            !key.contains("rotated") && !key.contains(CIRCLECI_TOKEN),
            "{key}"
        );
    }
}

#[test]
fn a_failing_store_never_fails_the_call_and_is_logged_once() {
    let server = ci_server();
    let env = counting_env();
    env.cache.failing.set(true);
    for n in 1..=2 {
        let v = get(&server, &env, TOKEN, json!({"path": "/me"}));
        assert_eq!(v["data"]["fetch"], n);
        assert_eq!(v["cache"]["hit"], false);
    }
    let cache_lines: Vec<String> = env
        .log
        .lines()
        .into_iter()
        .filter(|l| l.contains("http_cache_unavailable"))
        .collect();
    // One line per call, although each call both read and tried to write.
    assert_eq!(cache_lines.len(), 2, "{cache_lines:?}");
    let line: Json = serde_json::from_str(&cache_lines[0]).unwrap();
    assert_eq!(line["op"], "get");
    // Once the store recovers, caching resumes.
    env.cache.failing.set(false);
    get(&server, &env, TOKEN, json!({"path": "/me"}));
    let v = get(&server, &env, TOKEN, json!({"path": "/me"}));
    assert_eq!(v["cache"]["hit"], true);
    assert_eq!(env.http.sent().len(), 3);
}
