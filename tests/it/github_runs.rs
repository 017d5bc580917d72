//! Host tests of `github_get_workflow_run` through `Server::handle` against a fake GitHub whose
//! run changes state as it is polled, with ETags, 304s, rate-limit headers and refusals: the
//! run and its failed jobs, waiting (backoff on the fake clock, polls, completion, the
//! deadline), rate limits honoured or ending the wait, and refused arguments.

use crate::common::ci::*;
use crate::common::protocol::{body_json, headers_2026, meta_2026, post, ALICE_TOKEN_2};
use devtools_mcp_edge::ports::fake::{FakeEnv, ManualClock};
use devtools_mcp_edge::ports::{
    header, BodyRead, BodyRoom, CacheStore, Gone, ReplyStream, RequestBody, UpstreamRequest,
    UpstreamResponse,
};
use devtools_mcp_edge::server::Server;
use futures::executor::block_on;
use serde_json::{json, Value as Json};
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::task::{Context, Poll};

const RUN: &str = "github_get_workflow_run";
const RUN_PATH: &str = "/api/v3/repos/octo/app/actions/runs/77";

/// What the fake GitHub does, and what it saw.
#[derive(Default)]
pub struct Fake {
    /// Polls of the run answered `in_progress` before it completes (`None`: never).
    pub completes_after: Option<u64>,
    /// Run polls seen so far (304s included).
    pub run_polls: u64,
    /// Answers to send instead, by the index of the run poll they replace.
    pub faults: Vec<(u64, UpstreamResponse)>,
    /// Every request: method, path and query, If-None-Match.
    pub seen: Vec<(String, String, Option<String>)>,
    /// How many answers were 304.
    pub not_modified: u64,
    /// Answers to writes: the path suffix and the response.
    pub writes: Vec<(String, UpstreamResponse)>,
    /// The attempt the run is on.
    pub attempt: u64,
    /// The bodies of the writes, in order.
    pub bodies: Vec<String>,
    /// What a workflow's run list answers (an empty list when `None`).
    pub workflow_runs: Option<String>,
    /// The isolate's budget, read at each run poll into `in_use_at_polls` when set.
    pub budget: Option<devtools_mcp_edge::memory::MemoryBudget>,
    /// Memory in use when each run poll arrived.
    pub in_use_at_polls: Vec<usize>,
}

pub type Shared = Rc<RefCell<Fake>>;

fn run_body(f: &Fake, completed: bool) -> String {
    let (status, conclusion) = if completed {
        ("completed", json!("failure"))
    } else {
        ("in_progress", Json::Null)
    };
    json!({
        "id": 77, "name": "CI", "run_attempt": f.attempt.max(1), "workflow_id": 5,
        "status": status, "conclusion": conclusion, "event": "push",
        "head_branch": "main", "head_sha": "abc123",
        "html_url": "https://github.com/octo/app/actions/runs/77",
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:01:00Z",
        "pull_requests": [], "repository": {"id": 1, "full_name": "octo/app"}
    })
    .to_string()
}

const JOBS: &str = r#"{"total_count":2,"jobs":[
 {"id":9001,"name":"build","status":"completed","conclusion":"success","steps":[{"name":"Build","conclusion":"success"}]},
 {"id":9002,"name":"test (ubuntu)","status":"completed","conclusion":"failure",
  "steps":[{"name":"Checkout","conclusion":"success"},{"name":"Run tests","conclusion":"failure"},{"name":"Post","conclusion":"skipped"}]}
]}"#;

/// A JSON answer carrying `etag`, or a 304 when the request already holds it.
fn tagged(f: &mut Fake, request: &UpstreamRequest, body: String, etag: &str) -> UpstreamResponse {
    if header(&request.headers, "if-none-match") == Some(etag) {
        f.not_modified += 1;
        return UpstreamResponse {
            status: 304,
            status_text: "Not Modified".into(),
            headers: vec![("ETag".into(), etag.into())],
            body: Vec::new(),
        };
    }
    json_response(
        200,
        &body,
        &[("ETag", etag), ("X-RateLimit-Remaining", "4999")],
    )
}

/// The fake GitHub's answer to `request`.
pub fn answer(shared: &Shared, request: &UpstreamRequest) -> UpstreamResponse {
    let mut f = shared.borrow_mut();
    let rest = request
        .url
        .strip_prefix("https://ghe.test")
        .unwrap_or(&request.url);
    let path = rest.split('?').next().unwrap_or_default().to_owned();
    f.seen.push((
        request.method.clone(),
        rest.to_owned(),
        header(&request.headers, "if-none-match").map(str::to_owned),
    ));
    if request.method != "GET" {
        let body = String::from_utf8_lossy(request.body.as_deref().unwrap_or_default());
        f.bodies.push(body.into_owned());
        let found = f
            .writes
            .iter()
            .find(|(suffix, _)| path.ends_with(suffix.as_str()))
            .map(|(_, r)| r.clone());
        let response =
            found.unwrap_or_else(|| json_response(404, r#"{"message":"Not Found"}"#, &[]));
        let rerun = path.ends_with("/rerun") || path.ends_with("/rerun-failed-jobs");
        if rerun && (200..300).contains(&response.status) {
            f.attempt = f.attempt.max(1) + 1;
        }
        return response;
    }
    if path.contains("/actions/workflows/") && path.ends_with("/runs") {
        let body = f
            .workflow_runs
            .clone()
            .unwrap_or_else(|| r#"{"total_count":0,"workflow_runs":[]}"#.to_owned());
        return json_response(200, &body, &[]);
    }
    if path == RUN_PATH
        || path.starts_with(&format!("{RUN_PATH}/attempts/")) && !path.ends_with("/jobs")
    {
        let index = f.run_polls;
        f.run_polls += 1;
        if let Some(in_use) = f.budget.as_ref().map(|b| b.in_use()) {
            f.in_use_at_polls.push(in_use);
        }
        if let Some((_, fault)) = f.faults.iter().find(|(i, _)| *i == index) {
            return fault.clone();
        }
        let completed = f.completes_after.is_some_and(|n| index >= n);
        let body = run_body(&f, completed);
        let etag = format!("\"run-{completed}-{}\"", f.attempt);
        return tagged(&mut f, request, body, &etag);
    }
    if path.ends_with("/jobs") && path.starts_with(RUN_PATH) {
        return tagged(&mut f, request, JOBS.to_owned(), "\"jobs-1\"");
    }
    json_response(
        404,
        r#"{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}"#,
        &[],
    )
}

/// A server and fakes over a fake GitHub set up by `setup`.
pub fn fake_github(setup: impl FnOnce(&mut Fake)) -> (Server, FakeEnv, Shared) {
    scripted(setup, answer)
}

/// Runs `future` to its end, moving `clock` on a second whenever it waits (the only thing a
/// call here waits on is the clock).
pub fn drive<F: Future>(future: F, clock: &ManualClock) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    for _ in 0..100_000 {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        clock.advance(1_000);
    }
    panic!("the call never finished");
}

/// `tools/call` of `name` as principal `ci`, driven on the fake clock: the result.
pub fn call_driven(server: &Server, env: &FakeEnv, name: &str, arguments: Json) -> Json {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments, "_meta": meta_2026()}});
    let mut headers = vec![("Accept", "application/json")];
    headers.extend(headers_2026("tools/call", Some(name)));
    let response = drive(
        server.handle(post(&body.to_string(), &headers), env.ports()),
        &env.clock,
    );
    assert_eq!(response.status, 200);
    body_json(&response)["result"].clone()
}

/// The result's structured value, or the error text.
fn data(result: &Json) -> Result<Json, String> {
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    if result["isError"] == true {
        return Err(text.to_owned());
    }
    Ok(result["structuredContent"]["data"].clone())
}

fn get_run(server: &Server, env: &FakeEnv, extra: Json) -> Result<Json, String> {
    let mut args = json!({"owner": "octo", "repo": "app", "runId": 77});
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    data(&call_driven(server, env, RUN, args))
}

#[test]
fn a_run_with_its_failed_jobs_without_waiting() {
    let (server, env, fake) = fake_github(|_| {});
    let v = get_run(&server, &env, json!({})).unwrap();
    assert_eq!(v["run"]["status"], "in_progress");
    assert_eq!(v["run"]["branch"], "main");
    assert_eq!(v["run"]["attempt"], 1);
    assert_eq!(
        v["failedJobs"],
        json!([{"id": 9002, "name": "test (ubuntu)", "conclusion": "failure", "failedStep": "Run tests"}])
    );
    assert_eq!(
        (
            v["completed"].clone(),
            v["polls"].clone(),
            v["waitedMs"].clone()
        ),
        (json!(false), json!(1), json!(0))
    );
    let seen: Vec<String> = fake.borrow().seen.iter().map(|s| s.1.clone()).collect();
    assert_eq!(
        seen,
        [
            RUN_PATH.to_owned(),
            format!("{RUN_PATH}/jobs?filter=latest&per_page=100")
        ]
    );
}

#[test]
fn waiting_polls_with_backoff_until_the_run_completes() {
    let (server, env, fake) = fake_github(|f| f.completes_after = Some(3));
    let v = get_run(&server, &env, json!({"waitSeconds": 600})).unwrap();
    assert_eq!(v["completed"], true);
    assert_eq!(v["run"]["conclusion"], "failure");
    // Polls at 0, 5, 15 and 35 s: the pauses double from 5 s.
    assert_eq!(v["polls"], 4);
    assert_eq!(v["waitedMs"], 35_000);
    assert_eq!(fake.borrow().run_polls, 4);
}

#[test]
fn waiting_stops_at_the_deadline() {
    let (server, env, fake) = fake_github(|f| f.completes_after = None);
    let v = get_run(&server, &env, json!({"waitSeconds": 60})).unwrap();
    assert_eq!(v["completed"], false);
    // 0, 5, 15, 35, then the last pause is cut to the deadline: 60.
    assert_eq!(v["polls"], 5);
    assert_eq!(v["waitedMs"], 60_000);
    assert_eq!(fake.borrow().run_polls, 5);
    assert!(v.get("note").is_none(), "{v}");
}

#[test]
fn ten_minutes_of_waiting_stay_within_forty_requests() {
    let (server, env, fake) = fake_github(|f| f.completes_after = None);
    let v = get_run(&server, &env, json!({"waitSeconds": 600})).unwrap();
    assert_eq!(v["waitedMs"], 600_000);
    let polls = v["polls"].as_u64().unwrap();
    assert!(polls <= 40, "{polls}");
    assert_eq!(fake.borrow().seen.len() as u64, polls + 1);
}

#[test]
fn a_wait_holds_one_polls_memory_however_many_polls_it_makes() {
    let (server, env, fake) = fake_github(|f| f.completes_after = None);
    fake.borrow_mut().budget = Some(server.memory().clone());
    let v = get_run(&server, &env, json!({"waitSeconds": 600})).unwrap();
    assert_eq!(v["polls"], 23);
    let seen = fake.borrow().in_use_at_polls.clone();
    // From the third poll on (the first two read the kept copy into place), every poll finds
    // what the one before it held, not the sum of them.
    assert!(seen[2] > 0, "{seen:?}");
    assert!(seen[2..].iter().all(|&n| n == seen[2]), "{seen:?}");
    assert_eq!(server.memory().in_use(), 0);
}

#[test]
fn a_retry_after_within_the_wait_is_honoured() {
    let limited = json_response(
        429,
        r#"{"message":"You have exceeded a secondary rate limit"}"#,
        &[("Retry-After", "40")],
    );
    let (server, env, fake) = fake_github(|f| {
        f.completes_after = Some(2);
        f.faults = vec![(1, limited)];
    });
    let v = get_run(&server, &env, json!({"waitSeconds": 600})).unwrap();
    assert_eq!(v["completed"], true);
    // 0; 5 (limited: pause 40 s); 45, completed.
    assert_eq!(v["polls"], 3);
    assert_eq!(v["waitedMs"], 45_000);
    assert_eq!(fake.borrow().run_polls, 3);
}

#[test]
fn a_rate_limit_past_the_wait_ends_it_with_a_note() {
    // Reset an hour after the fake clock's start.
    let reset = (1_767_225_600u64 + 3_600).to_string();
    let spent = json_response(
        403,
        r#"{"message":"API rate limit exceeded"}"#,
        &[
            ("X-RateLimit-Remaining", "0"),
            ("X-RateLimit-Reset", &reset),
        ],
    );
    let (server, env, fake) = fake_github(|f| {
        f.completes_after = None;
        f.faults = vec![(1, spent.clone())];
    });
    let v = get_run(&server, &env, json!({"waitSeconds": 120})).unwrap();
    assert_eq!(v["completed"], false);
    assert_eq!(v["polls"], 2);
    assert_eq!(v["run"]["status"], "in_progress");
    let note = v["note"].as_str().unwrap();
    assert!(
        note.starts_with("Stopped waiting: GitHub's rate limit"),
        "{note}"
    );
    assert_eq!(fake.borrow().run_polls, 2);
    // The first poll limited: the call fails with GitHub's reason, nothing retried.
    let (server, env, _) = fake_github(|f| f.faults = vec![(0, spent)]);
    let error = get_run(&server, &env, json!({"waitSeconds": 120})).unwrap_err();
    assert!(error.contains("Rate limit exceeded"), "{error}");
}

#[test]
fn a_missing_run_is_a_clear_error() {
    let (server, env, _) = fake_github(|_| {});
    let error = get_run(&server, &env, json!({"runId": 78})).unwrap_err();
    assert!(error.starts_with("Error: Resource not found"), "{error}");
}

#[test]
fn a_run_url_and_an_attempt() {
    let (server, env, fake) = fake_github(|f| f.attempt = 2);
    let result = call_driven(
        &server,
        &env,
        RUN,
        json!({"url": "https://github.com/octo/app/actions/runs/77", "attempt": 1}),
    );
    let v = data(&result).unwrap();
    assert_eq!(v["run"]["id"], 77);
    let seen: Vec<String> = fake.borrow().seen.iter().map(|s| s.1.clone()).collect();
    assert_eq!(
        seen,
        [
            format!("{RUN_PATH}/attempts/1"),
            format!("{RUN_PATH}/attempts/1/jobs?per_page=100")
        ]
    );
    for bad in [
        json!({"url": "https://github.com/octo/app/actions/runs/77", "runId": 77}),
        json!({"url": "https://github.com/octo/app/actions/runs/77/job/5"}),
        json!({"owner": "octo", "url": "https://github.com/other/app/actions/runs/77"}),
        json!({"owner": "octo", "repo": "app"}),
        json!({"runId": 77}),
        json!({"owner": "octo", "repo": "app", "runId": 77, "waitSeconds": 601}),
    ] {
        let result = call_driven(&server, &env, RUN, bad.clone());
        assert_eq!(result["isError"], true, "{bad}: {result}");
    }
}

#[test]
fn polls_are_conditional_and_a_304_is_answered_from_the_kept_body() {
    let (server, env, fake) = fake_github(|f| f.completes_after = Some(3));
    let v = get_run(&server, &env, json!({"waitSeconds": 600})).unwrap();
    assert_eq!(v["completed"], true);
    // The first poll is a 200 with an ETag; the two unchanged ones are 304s; the completed run
    // is new again.
    assert_eq!(
        (v["polls"].clone(), v["revalidated"].clone()),
        (json!(4), json!(2))
    );
    assert_eq!(v["run"]["status"], "completed");
    let seen = fake.borrow().seen.clone();
    let tags: Vec<Option<&str>> = seen.iter().map(|s| s.2.as_deref()).collect();
    assert_eq!(
        tags,
        [
            None,
            Some("\"run-false-0\""),
            Some("\"run-false-0\""),
            Some("\"run-false-0\""),
            None
        ]
    );
    // Asked again, the run and its jobs are both revalidated, and the answer is the same.
    let again = get_run(&server, &env, json!({})).unwrap();
    assert_eq!(
        (again["polls"].clone(), again["revalidated"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(again["run"], v["run"]);
    assert_eq!(again["failedJobs"], v["failedJobs"]);
    assert_eq!(fake.borrow().not_modified, 4);
    // Another principal holds its own entries: its first GETs are unconditional.
    let body = json!({"owner": "octo", "repo": "app", "runId": 77});
    let reply = call_as(&server, &env, ALICE_TOKEN_2, RUN, body);
    assert!(!reply.is_error, "{}", reply.text);
    let seen = fake.borrow().seen.clone();
    assert_eq!(seen[seen.len() - 2].2, None);
    assert_eq!(seen[seen.len() - 1].2, None);
}

#[test]
fn ten_minutes_of_waiting_are_mostly_304s() {
    let (server, env, _) = fake_github(|f| f.completes_after = None);
    let v = get_run(&server, &env, json!({"waitSeconds": 600})).unwrap();
    let (polls, revalidated) = (
        v["polls"].as_u64().unwrap(),
        v["revalidated"].as_u64().unwrap(),
    );
    assert_eq!(revalidated, polls - 1);
    assert!(revalidated * 10 >= polls * 9, "{revalidated} of {polls}");
}

#[test]
fn the_list_tools_revalidate_and_keep_their_next_page() {
    let calls = Rc::new(RefCell::new(Vec::<Option<String>>::new()));
    let seen = calls.clone();
    let env = env_with(move |request: &UpstreamRequest| {
        let tag = header(&request.headers, "if-none-match").map(str::to_owned);
        seen.borrow_mut().push(tag.clone());
        if tag.as_deref() == Some("W/\"runs-1\"") {
            return Ok(UpstreamResponse {
                status: 304,
                status_text: "Not Modified".into(),
                headers: vec![("ETag".into(), "W/\"runs-1\"".into())],
                body: Vec::new(),
            });
        }
        let link = "<https://ghe.test/api/v3/repositories/1/actions/runs?page=2>; rel=\"next\"";
        Ok(json_response(
            200,
            r#"{"total_count":40,"workflow_runs":[{"id":1}]}"#,
            &[("ETag", "W/\"runs-1\""), ("Link", link)],
        ))
    });
    let server = ci_server();
    let args = json!({"owner": "o", "repo": "r", "outputFormat": "json"});
    let first = call(&server, &env, "github_list_workflow_runs", args.clone());
    let second = call(&server, &env, "github_list_workflow_runs", args);
    assert_eq!(
        first.json(),
        json!({"data": {"total_count": 40, "workflow_runs": [{"id": 1}]}, "nextPage": 2})
    );
    assert_eq!(second.json(), first.json());
    assert_eq!(*calls.borrow(), [None, Some("W/\"runs-1\"".to_owned())]);
    // The kept entry names neither the principal nor the token.
    for (key, value) in env.cache.dump() {
        assert!(!key.contains("ci") || key.starts_with("http:v2:"), "{key}");
        assert!(!String::from_utf8_lossy(&value).contains(GITHUB_TOKEN));
    }
}

#[test]
fn a_kept_answer_no_longer_whole_after_its_304_is_fetched_again() {
    let calls = Rc::new(RefCell::new(Vec::<Option<String>>::new()));
    let seen = calls.clone();
    let env = env_with(move |request: &UpstreamRequest| {
        let tag = header(&request.headers, "if-none-match").map(str::to_owned);
        seen.borrow_mut().push(tag.clone());
        if tag.is_some() {
            return Ok(UpstreamResponse {
                status: 304,
                status_text: "Not Modified".into(),
                headers: vec![("ETag".into(), "W/\"runs-1\"".into())],
                body: Vec::new(),
            });
        }
        Ok(json_response(
            200,
            r#"{"total_count":1,"workflow_runs":[{"id":1}]}"#,
            &[("ETag", "W/\"runs-1\"")],
        ))
    });
    let server = ci_server();
    let args = json!({"owner": "o", "repo": "r", "outputFormat": "json"});
    let first = call(&server, &env, "github_list_workflow_runs", args.clone());
    // The kept body loses a byte between the validator's reading and the 304.
    for (key, _) in env.cache.dump() {
        let mut entry = block_on(env.cache.get(&key)).unwrap().unwrap();
        entry.value.pop();
        block_on(env.cache.put(&key, entry, 3600)).unwrap();
    }
    let second = call(&server, &env, "github_list_workflow_runs", args);
    assert!(!second.is_error, "{}", second.text);
    assert_eq!(second.json(), first.json());
    let etag = Some("W/\"runs-1\"".to_owned());
    assert_eq!(*calls.borrow(), [None, etag, None]);
}

#[test]
fn a_304_to_a_request_that_held_no_etag_is_still_an_error() {
    let env = env_with(|_: &UpstreamRequest| {
        Ok(UpstreamResponse {
            status: 304,
            status_text: "Not Modified".into(),
            headers: vec![("ETag".into(), "\"x\"".into())],
            body: Vec::new(),
        })
    });
    let server = ci_server();
    let out = call(
        &server,
        &env,
        "github_list_workflow_runs",
        json!({"owner": "o", "repo": "r"}),
    );
    assert!(out.is_error, "{}", out.text);
    assert!(env.cache.keys().is_empty());
}

/// A reply stream that records what went out, and whose client goes away after `sends` events.
#[derive(Default)]
struct Recorded {
    head: RefCell<Option<Vec<(String, String)>>>,
    events: RefCell<Vec<String>>,
    sends: Option<usize>,
}

impl ReplyStream for Recorded {
    fn start(&self, headers: Vec<(String, String)>) {
        self.head.borrow_mut().get_or_insert(headers);
    }
    fn send(&self, bytes: Vec<u8>) -> Result<(), Gone> {
        if self.sends.is_some_and(|n| self.events.borrow().len() >= n) {
            return Err(Gone);
        }
        self.events
            .borrow_mut()
            .push(String::from_utf8(bytes).unwrap());
        Ok(())
    }
}

/// A wait of `waitSeconds: 600` with a progress token, `accept` as the `Accept` header, answered
/// on `out`: the final response.
fn wait_streamed(
    server: &Server,
    env: &FakeEnv,
    accept: &str,
    token: Option<Json>,
    out: &Recorded,
) -> devtools_mcp_edge::http::HttpResponse {
    let mut meta = meta_2026();
    if let Some(token) = token {
        meta["progressToken"] = token;
    }
    let arguments = json!({"owner": "octo", "repo": "app", "runId": 77, "waitSeconds": 600});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": RUN, "arguments": arguments, "_meta": meta}});
    let mut headers = vec![("Accept", accept)];
    headers.extend(headers_2026("tools/call", Some(RUN)));
    let mut request = post(&body.to_string(), &headers);
    let body = Whole(RefCell::new(std::mem::take(&mut request.body)));
    drive(
        server.serve_streaming(request, &body, env.ports(), Some(out)),
        &env.clock,
    )
}

/// A request body in hand.
struct Whole(RefCell<Vec<u8>>);

impl RequestBody for Whole {
    fn read<'a>(
        &'a self,
        _limit: usize,
        _room: &'a dyn BodyRoom,
    ) -> futures::future::LocalBoxFuture<'a, BodyRead> {
        let bytes = self.0.take();
        Box::pin(async move {
            BodyRead {
                bytes,
                too_large: false,
                cut_short: false,
                no_room: false,
            }
        })
    }
}

/// The JSON message of one SSE event.
fn event_json(event: &str) -> Json {
    let data = event
        .strip_prefix("event: message\ndata: ")
        .and_then(|rest| rest.strip_suffix("\n\n"))
        .unwrap_or_else(|| panic!("not one message event: {event:?}"));
    serde_json::from_str(data).unwrap()
}

#[test]
fn a_wait_tells_a_client_reading_events_how_it_goes_then_answers_last() {
    let (server, env, fake) = fake_github(|f| f.completes_after = Some(3));
    let out = Recorded::default();
    let last = wait_streamed(
        &server,
        &env,
        "application/json, text/event-stream",
        Some(json!("p-1")),
        &out,
    );
    let head = out.head.borrow().clone().expect("the stream started");
    assert!(head.contains(&("Content-Type".into(), "text/event-stream".into())));
    // One notification after each poll that found the run still going: at 0, 5 and 15 s.
    let notes: Vec<Json> = out.events.borrow().iter().map(|e| event_json(e)).collect();
    let seen: Vec<(Json, Json, Json)> = notes
        .iter()
        .map(|n| {
            assert_eq!(n["method"], "notifications/progress");
            let p = &n["params"];
            (
                p["progressToken"].clone(),
                p["progress"].clone(),
                p["total"].clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (json!("p-1"), json!(0), json!(600)),
            (json!("p-1"), json!(5), json!(600)),
            (json!("p-1"), json!(15), json!(600))
        ]
    );
    assert_eq!(
        notes[2]["params"]["message"],
        "in_progress; 3 polls, 15 s of 600 s"
    );
    // The answer is the stream's last event.
    assert_eq!(last.header("Content-Type"), Some("text/event-stream"));
    let answer = event_json(&String::from_utf8(last.body).unwrap());
    assert_eq!(answer["id"], 1);
    assert_eq!(
        answer["result"]["structuredContent"]["data"]["completed"],
        true
    );
    assert_eq!(fake.borrow().run_polls, 4);
}

#[test]
fn a_wait_stops_polling_when_its_client_goes_away() {
    let (server, env, fake) = fake_github(|f| f.completes_after = None);
    let out = Recorded {
        sends: Some(2),
        ..Recorded::default()
    };
    let last = wait_streamed(
        &server,
        &env,
        "text/event-stream, application/json",
        Some(json!(7)),
        &out,
    );
    // The third poll's notification found the client gone: no fourth poll, not ten minutes of them.
    assert_eq!(fake.borrow().run_polls, 3);
    let answer = event_json(&String::from_utf8(last.body).unwrap());
    let data = &answer["result"]["structuredContent"]["data"];
    assert_eq!(data["note"], "Stopped waiting: the client went away.");
    assert_eq!(data["waitedMs"], 15_000);
}

#[test]
fn without_a_token_or_an_event_stream_a_wait_answers_json_only() {
    for (accept, token) in [
        ("application/json, text/event-stream", None),
        ("application/json", Some(json!("p-1"))),
        (
            "application/json, text/event-stream",
            Some(json!({"not": "a token"})),
        ),
        // Every notification repeats the token: a long one gets none.
        (
            "application/json, text/event-stream",
            Some(json!("t".repeat(257))),
        ),
    ] {
        let (server, env, fake) = fake_github(|f| f.completes_after = Some(2));
        let out = Recorded::default();
        let last = wait_streamed(&server, &env, accept, token.clone(), &out);
        assert!(out.head.borrow().is_none(), "{accept} {token:?}");
        assert!(out.events.borrow().is_empty());
        assert_eq!(last.header("Content-Type"), Some("application/json"));
        assert_eq!(
            body_json(&last)["result"]["structuredContent"]["data"]["completed"],
            true
        );
        assert_eq!(fake.borrow().run_polls, 3);
    }
}
