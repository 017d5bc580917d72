//! Host tests of the isolate's memory budget through `Server::handle`, with calls in flight
//! together: an upstream whose large bodies stop at a gate the test opens holds them there, so
//! the test sees which calls wait, which answer, and what the budget holds meanwhile.

use crate::common::ci::*;
use crate::common::protocol::{body_json, headers_2026, meta_2026, post, TOKEN};
use crate::common::server::STATELESS;
use crate::common::structured::{run, runs_body};
use devtools_mcp_edge::http::HttpRequest;
use devtools_mcp_edge::memory::{
    BYTES_PER_BODY_BYTE, BYTES_PER_REQUEST_BYTE, POLL_MS, REQUEST_OVERHEAD_BYTES, SMALL_SHARE,
    WAIT_MS,
};
use devtools_mcp_edge::ports::fake::{yield_once, FakeEnv, YieldOnce};
use devtools_mcp_edge::ports::{
    BodyStream, Ports, StreamedResponse, TransportError, UpstreamHttp, UpstreamRequest,
    UpstreamResponse,
};
use devtools_mcp_edge::server::Server;
use futures::channel::oneshot;
use futures::executor::block_on;
use futures::future::{join, join3, FutureExt, LocalBoxFuture, Shared};
use serde_json::{json, Value as Json};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

const RUNS: &str = "github_list_workflow_runs";
const GET: &str = "circleci_get";
const LOGS: &str = "circleci_get_job_logs";
/// The budget: a little over one large page's cost (a page is just under 2 MiB), so two never
/// fit together.
const BUDGET: usize = 3 * 1024 * 1024 * BYTES_PER_BODY_BYTE;

type Gate = Shared<oneshot::Receiver<()>>;

/// A piece of a scripted body.
#[derive(Clone)]
enum Piece {
    Bytes(Vec<u8>),
    /// Nothing more until the gate opens.
    Wait(Gate),
    /// The connection fails here.
    Fail,
}

/// The headers and body pieces of an answer.
type Answer = (Vec<(String, String)>, Vec<Piece>);

/// An upstream answering each request with headers at once and a body made of pieces.
struct GatedHttp {
    route: Box<dyn Fn(&UpstreamRequest) -> Answer>,
}

impl UpstreamHttp for GatedHttp {
    fn send(
        &self,
        _: UpstreamRequest,
        _: usize,
    ) -> LocalBoxFuture<'_, Result<UpstreamResponse, TransportError>> {
        Box::pin(async { Err(TransportError::Network("tools read bodies by open".into())) })
    }

    fn open(
        &self,
        request: UpstreamRequest,
    ) -> LocalBoxFuture<'_, Result<StreamedResponse, TransportError>> {
        let (headers, pieces) = (self.route)(&request);
        Box::pin(async move {
            Ok(StreamedResponse {
                status: 200,
                status_text: "OK".into(),
                headers,
                body: Box::new(PiecesBody(pieces.into())),
            })
        })
    }
}

struct PiecesBody(VecDeque<Piece>);

impl BodyStream for PiecesBody {
    fn next_chunk(&mut self) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, TransportError>> {
        Box::pin(async move {
            loop {
                match self.0.pop_front() {
                    None => return Ok(None),
                    Some(Piece::Bytes(bytes)) => return Ok(Some(bytes)),
                    Some(Piece::Wait(gate)) => {
                        let _ = gate.await;
                    }
                    Some(Piece::Fail) => return Err(TransportError::Network("reset".into())),
                }
            }
        })
    }
}

fn gate() -> (oneshot::Sender<()>, Gate) {
    let (open, gate) = oneshot::channel();
    (open, gate.shared())
}

/// A runs page of a little under 2 MiB: its cost nearly fills [`BUDGET`].
fn large_page() -> Vec<u8> {
    let runs: Vec<Json> = (0..190).map(|id| run(id, 10_000)).collect();
    runs_body(&runs).into_bytes()
}

fn json_headers(length: Option<usize>) -> Vec<(String, String)> {
    let mut headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
    if let Some(length) = length {
        headers.push(("Content-Length".to_owned(), length.to_string()));
    }
    headers
}

/// Runs pages (`large`'s pieces) and small CircleCI answers.
fn upstream(large: impl Fn() -> (Option<usize>, Vec<Piece>) + 'static) -> GatedHttp {
    GatedHttp {
        route: Box::new(move |request| {
            if request.url.contains("/actions/runs") {
                let (length, pieces) = large();
                (json_headers(length), pieces)
            } else {
                let body = br#"{"login":"ci"}"#.to_vec();
                (json_headers(Some(body.len())), vec![Piece::Bytes(body)])
            }
        }),
    }
}

/// Large pages with a declared length whose bodies wait at one gate; the sender opens it.
fn gated_pages() -> (oneshot::Sender<()>, GatedHttp) {
    let (open, gate) = gate();
    let page = large_page();
    let http = upstream(move || {
        (
            Some(page.len()),
            vec![Piece::Wait(gate.clone()), Piece::Bytes(page.clone())],
        )
    });
    (open, http)
}

/// The fakes' ports with `http` as the upstream.
fn over<'a>(env: &'a FakeEnv, http: &'a GatedHttp) -> Ports<'a> {
    Ports {
        http,
        ..env.ports()
    }
}

fn server() -> Server {
    server_of(BUDGET)
}

/// The budget whose room for large bodies (all but the small bodies' share) is `room` bytes.
fn with_large_room(room: usize) -> usize {
    room / (SMALL_SHARE - 1) * SMALL_SHARE + SMALL_SHARE
}

fn server_of(budget: usize) -> Server {
    ci_builder(&[("MEMORY_BUDGET_BYTES", &budget.to_string())])
        .build()
        .server
}

/// `tools/call` of `name`, answered when the call is done; the result is pushed to `done`.
async fn call(
    server: &Server,
    ports: Ports<'_>,
    label: &'static str,
    done: &RefCell<Vec<(&'static str, Json)>>,
    name: &str,
    arguments: Json,
) {
    let response = server.handle(call_request(name, arguments), ports).await;
    assert_eq!(response.status, 200);
    done.borrow_mut()
        .push((label, body_json(&response)["result"].clone()));
}

/// The HTTP request of a `tools/call` of `name`, its length declared.
fn call_request(name: &str, arguments: Json) -> HttpRequest {
    let body = call_body(name, arguments);
    let auth = format!("Bearer {TOKEN}");
    let length = body.len().to_string();
    let mut headers = vec![
        ("MCP-Protocol-Version", STATELESS),
        ("Authorization", auth.as_str()),
        ("Content-Length", length.as_str()),
    ];
    headers.extend(headers_2026("tools/call", Some(name)).into_iter().skip(1));
    post(&body, &headers)
}

/// The body of a `tools/call` of `name`.
fn call_body(name: &str, arguments: Json) -> String {
    let params = json!({"name": name, "arguments": arguments, "_meta": meta_2026()});
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string()
}

/// What the request of a `tools/call` of `name` holds of the budget while it runs: its
/// overhead, its headers and its body.
fn request_cost(name: &str, arguments: Json) -> usize {
    let request = call_request(name, arguments);
    let headers: usize = request.headers.iter().map(|(k, v)| k.len() + v.len()).sum();
    REQUEST_OVERHEAD_BYTES + 2 * headers + request.body.len() * BYTES_PER_REQUEST_BYTE
}

fn runs_args() -> Json {
    json!({"owner": "o", "repo": "r", "perPage": 100})
}

fn settle() -> YieldOnce {
    yield_once()
}

/// Lets the calls run, then moves the clock on by `polls` waiting rounds, letting them run
/// after each.
async fn ticks(env: &FakeEnv, polls: u64) {
    settle().await;
    for _ in 0..polls {
        env.clock.advance(POLL_MS);
        settle().await;
    }
}

fn labels(done: &RefCell<Vec<(&'static str, Json)>>) -> Vec<&'static str> {
    done.borrow().iter().map(|(label, _)| *label).collect()
}

fn result<'a>(done: &'a [(&'static str, Json)], label: &str) -> &'a Json {
    &done.iter().find(|(l, _)| *l == label).unwrap().1
}

#[test]
fn small_calls_answer_while_a_large_one_waits_and_the_waiting_one_runs_when_room_frees() {
    let server = server();
    let env = FakeEnv::new();
    let (open, http) = gated_pages();
    let size = large_page().len();
    let ports = over(&env, &http);
    let done = RefCell::new(Vec::new());
    let budget = server.memory();
    block_on(async {
        let first = call(&server, ports, "first", &done, RUNS, runs_args());
        let second = call(&server, ports, "second", &done, RUNS, runs_args());
        let driver = async {
            settle().await;
            // The first page holds the budget at its gate; the second waits for room (each
            // request holding its own body).
            assert_eq!(
                budget.in_use(),
                size * BYTES_PER_BODY_BYTE + 2 * request_cost(RUNS, runs_args())
            );
            call(&server, ports, "small", &done, GET, json!({"path": "/me"})).await;
            assert_eq!(labels(&done), ["small"]);
            open.send(()).unwrap();
            settle().await;
            assert_eq!(labels(&done), ["small", "first"]);
            // The second looks again at its next poll, finds room and reads its page.
            ticks(&env, 1).await;
        };
        join3(first, second, driver).await;
    });
    assert_eq!(labels(&done), ["small", "first", "second"]);
    for (label, result) in done.borrow().iter() {
        assert_eq!(result.get("isError"), None, "{label}: {result}");
    }
    assert_eq!(budget.in_use(), 0);
}

#[test]
fn a_large_call_that_finds_no_room_in_time_gets_the_retryable_busy_error() {
    let server = server();
    let env = FakeEnv::new();
    let (open, http) = gated_pages();
    let ports = over(&env, &http);
    let done = RefCell::new(Vec::new());
    block_on(async {
        let first = call(&server, ports, "first", &done, RUNS, runs_args());
        let second = call(&server, ports, "second", &done, RUNS, runs_args());
        let driver = async {
            ticks(&env, WAIT_MS / POLL_MS - 1).await;
            assert!(labels(&done).is_empty());
            ticks(&env, 1).await;
            assert_eq!(labels(&done), ["second"]);
            open.send(()).unwrap();
        };
        join3(first, second, driver).await;
    });
    let done = done.borrow();
    assert_eq!(result(&done, "first").get("isError"), None);
    let busy = result(&done, "second");
    assert_eq!(busy["isError"], true);
    assert_eq!(busy["_meta"]["code"], "server_busy");
    let text = busy["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("busy with other large results") && text.contains("Retry"),
        "{text}"
    );
    assert!(text.contains("a projection (jq)"), "{text}");
    assert_eq!(server.memory().in_use(), 0);
    let logged = env.log.lines().join("\n");
    assert!(logged.contains(r#""outcome":"busy""#), "{logged}");
}

#[test]
fn a_request_body_finding_no_room_in_time_gets_503_before_any_tool_runs() {
    let server = server();
    let env = FakeEnv::new();
    let (open, http) = gated_pages();
    let ports = over(&env, &http);
    let done = RefCell::new(Vec::new());
    // 1.5 MB of a jq argument: the request costs more than the whole budget, so it runs only
    // when nothing else holds memory.
    let arguments = json!({"path": "/me", "jq": format!(".login #{}", "x".repeat(1_500_000))});
    let length = call_body(GET, arguments.clone()).len();
    block_on(async {
        let first = call(&server, ports, "first", &done, RUNS, runs_args());
        let driver = async {
            settle().await;
            let (response, ()) = join(
                server.handle(call_request(GET, arguments.clone()), ports),
                ticks(&env, WAIT_MS / POLL_MS),
            )
            .await;
            assert_eq!(response.status, 503);
            assert_eq!(response.header("Retry-After"), Some("2"));
            let reply = body_json(&response);
            assert_eq!(reply["error"]["code"], -32000);
            let message = reply["error"]["message"].as_str().unwrap();
            assert!(
                message.starts_with(&format!(
                    "Server busy: no memory for a request body of {length} bytes"
                )),
                "{message}"
            );
            assert!(labels(&done).is_empty());
            open.send(()).unwrap();
        };
        join(first, driver).await;
    });
    assert_eq!(labels(&done), ["first"]);
    assert_eq!(server.memory().in_use(), 0);
    let logged = env.log.lines().join("\n");
    assert!(logged.contains("request_busy"), "{logged}");
    // Alone, the same request is served.
    let response = block_on(server.handle(call_request(GET, arguments), ports));
    assert_eq!(response.status, 200);
    assert_eq!(server.memory().in_use(), 0);
}

#[test]
fn a_request_without_a_length_reserves_as_its_body_arrives() {
    let server = server();
    let env = FakeEnv::new();
    let (open, http) = gated_pages();
    let ports = over(&env, &http);
    let done = RefCell::new(Vec::new());
    let small = json!({"path": "/me"});
    let mut chunked = call_request(GET, small.clone());
    chunked
        .headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("Content-Length"));
    block_on(async {
        let first = call(&server, ports, "first", &done, RUNS, runs_args());
        let driver = async {
            settle().await;
            // Declared or not, a small call answers beside the held page: without a length its
            // body reserves what arrives, not the largest body it could have been.
            call(&server, ports, "declared", &done, GET, small.clone()).await;
            let response = server.handle(chunked.clone(), ports).await;
            assert_eq!(response.status, 200);
            done.borrow_mut().push(("chunked", body_json(&response)));
            open.send(()).unwrap();
        };
        join(first, driver).await;
    });
    assert_eq!(labels(&done), ["declared", "chunked", "first"]);
    assert_eq!(server.memory().in_use(), 0);
}

#[test]
fn a_body_without_a_length_grows_its_reservation_as_it_streams() {
    let server = server();
    let env = FakeEnv::new();
    let (open, gate) = gate();
    let page = large_page();
    let head = 1_500_000;
    let covered = head * BYTES_PER_BODY_BYTE;
    let http = upstream(move || {
        (
            None,
            vec![
                Piece::Bytes(page[..head].to_vec()),
                Piece::Wait(gate.clone()),
                Piece::Bytes(page[head..].to_vec()),
            ],
        )
    });
    let ports = over(&env, &http);
    let done = RefCell::new(Vec::new());
    let budget = server.memory();
    block_on(async {
        let first = call(&server, ports, "first", &done, RUNS, runs_args());
        let driver = async {
            settle().await;
            assert_eq!(budget.in_use(), covered + request_cost(RUNS, runs_args()));
            open.send(()).unwrap();
        };
        join(first, driver).await;
    });
    assert_eq!(result(&done.borrow(), "first").get("isError"), None);
    assert_eq!(budget.in_use(), 0);
}

#[test]
fn reservations_return_when_a_call_fails_after_reserving() {
    let server = server();
    let env = FakeEnv::new();
    let page = large_page();
    let http = upstream(move || {
        (
            Some(page.len()),
            vec![Piece::Bytes(page[..1000].to_vec()), Piece::Fail],
        )
    });
    let ports = over(&env, &http);
    let done = RefCell::new(Vec::new());
    block_on(call(&server, ports, "failed", &done, RUNS, runs_args()));
    let done = done.borrow();
    let failed = result(&done, "failed");
    assert_eq!(failed["isError"], true);
    assert_eq!(failed["_meta"].get("code"), None, "{failed}");
    assert_eq!(server.memory().in_use(), 0);
}

/// A `circleci_get` answered `body` and cached while nothing else holds memory, then asked
/// again while a runs page holds the budget at its gate (for as long as a body may wait): the
/// second call's result, after checking that it came from the cache and the others succeeded.
fn cached_beside_a_held_page(server: &Server, body: Vec<u8>) -> Json {
    let env = FakeEnv::new();
    let (open, gate) = gate();
    let page = large_page();
    let fetched = Rc::new(Cell::new(0));
    let count = fetched.clone();
    let http = GatedHttp {
        route: Box::new(move |request| match request.url.contains("/actions/runs") {
            true => (
                json_headers(Some(page.len())),
                vec![Piece::Wait(gate.clone()), Piece::Bytes(page.clone())],
            ),
            false => {
                count.set(count.get() + 1);
                (
                    json_headers(Some(body.len())),
                    vec![Piece::Bytes(body.clone())],
                )
            }
        }),
    };
    let ports = over(&env, &http);
    let done = RefCell::new(Vec::new());
    let args = || json!({"path": "/project/gh/o/r"});
    block_on(call(server, ports, "fetched", &done, GET, args()));
    block_on(async {
        let first = call(server, ports, "first", &done, RUNS, runs_args());
        let driver = async {
            settle().await;
            let cached = call(server, ports, "cached", &done, GET, args());
            join(cached, ticks(&env, WAIT_MS / POLL_MS)).await;
            open.send(()).unwrap();
        };
        join(first, driver).await;
    });
    assert_eq!(
        fetched.get(),
        1,
        "the second circleci_get is answered from the cache"
    );
    let done = done.borrow();
    assert_eq!(result(&done, "fetched").get("isError"), None);
    assert_eq!(result(&done, "first").get("isError"), None);
    assert_eq!(server.memory().in_use(), 0);
    result(&done, "cached").clone()
}

#[test]
fn a_large_cached_body_waits_for_room_as_a_fetched_one_does() {
    let server = server();
    let busy = cached_beside_a_held_page(&server, large_page());
    assert_eq!(busy["isError"], true, "{busy}");
    assert_eq!(busy["_meta"]["code"], "server_busy");
}

const S3: &str = "https://circle-production-action-output.s3.amazonaws.com";

/// Runs pages waiting at `gate`, and a CircleCI job whose one step's output is about as large.
fn circleci_job(gate: Gate) -> GatedHttp {
    let page = large_page();
    let message = "x".repeat(page.len());
    let output = json!([{"type": "out", "message": message}])
        .to_string()
        .into_bytes();
    GatedHttp {
        route: Box::new(move |request| {
            let url = request.url.as_str();
            let body = if url.contains("/actions/runs") {
                return (
                    json_headers(Some(page.len())),
                    vec![Piece::Wait(gate.clone()), Piece::Bytes(page.clone())],
                );
            } else if url.starts_with(S3) {
                output.clone()
            } else if url.ends_with("/tests") {
                br#"{"items":[],"next_page_token":null}"#.to_vec()
            } else {
                json!({"build_num": 42, "lifecycle": "finished", "outcome": "failed",
                       "steps": [{"name": "npm test", "actions": [{"name": "npm test", "index": 0,
                           "status": "failed", "failed": true, "exit_code": 1, "has_output": true,
                           "output_url": format!("{S3}/out/1?X-Amz-Signature=SIG")}]}]})
                .to_string()
                .into_bytes()
            };
            (json_headers(None), vec![Piece::Bytes(body)])
        }),
    }
}

/// `circleci_get_job_logs` of [`circleci_job`] while a large page holds its memory at its gate
/// for the whole wait: the results of both calls, `first` and `logs`.
fn job_logs_beside_a_held_page(server: &Server) -> Vec<(&'static str, Json)> {
    let env = FakeEnv::new();
    let (open, gate) = gate();
    let http = circleci_job(gate);
    let ports = over(&env, &http);
    let done = RefCell::new(Vec::new());
    let args = json!({"projectSlug": "gh/o/r", "jobNumber": 42});
    block_on(async {
        let first = call(server, ports, "first", &done, RUNS, runs_args());
        let driver = async {
            let logs = call(server, ports, "logs", &done, LOGS, args);
            join(logs, ticks(&env, WAIT_MS / POLL_MS)).await;
            open.send(()).unwrap();
        };
        join(first, driver).await;
    });
    done.into_inner()
}

#[test]
fn a_large_circleci_step_output_waits_for_room_and_its_refusal_is_the_jobs_log_error() {
    // Room for a large page's cost and the log's buffers (12 MiB), not for the step output's
    // cost (as large as the page's) too.
    let page = large_page().len() * BYTES_PER_BODY_BYTE;
    let server = server_of(with_large_room(page + 12 * 1024 * 1024 + page / 2));
    let done = job_logs_beside_a_held_page(&server);
    assert_eq!(result(&done, "first").get("isError"), None);
    // The job is answered; its log reports the refusal, as any other failed download.
    let logs = result(&done, "logs");
    assert_eq!(logs.get("isError"), None, "{logs}");
    let text = logs["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("logError: \"Error: the server is busy with other large results"),
        "{text}"
    );
    assert_eq!(server.memory().in_use(), 0);
}

#[test]
fn a_job_log_call_with_no_room_for_its_buffers_gets_the_busy_error() {
    let server = server();
    let done = job_logs_beside_a_held_page(&server);
    assert_eq!(result(&done, "first").get("isError"), None);
    let busy = result(&done, "logs");
    assert_eq!(busy["isError"], true, "{busy}");
    assert_eq!(busy["_meta"]["code"], "server_busy");
    let text = busy["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("no memory free to read a job log"), "{text}");
    assert_eq!(server.memory().in_use(), 0);
}

#[test]
fn a_large_artifact_read_waits_for_room_and_a_default_one_never_does() {
    let server = server();
    let env = FakeEnv::new();
    let (open, http) = gated_pages();
    let page = large_page();
    let ungated = upstream(move || (Some(page.len()), vec![Piece::Bytes(page.clone())]));
    let done = RefCell::new(Vec::new());
    // A page whose text is cut leaves an artifact.
    block_on(call(
        &server,
        over(&env, &ungated),
        "saved",
        &done,
        RUNS,
        runs_args(),
    ));
    let text = result(&done.borrow(), "saved")["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = text.find("artifact `").expect("an artifact is named") + "artifact `".len();
    let id = text[at..at + 36].to_owned();
    let ports = over(&env, &http);
    let read = |max: u64| json!({"artifactId": id, "maxBytes": max});
    block_on(async {
        let first = call(&server, ports, "first", &done, RUNS, runs_args());
        let driver = async {
            settle().await;
            call(
                &server,
                ports,
                "small",
                &done,
                "artifact_read",
                read(65_536),
            )
            .await;
            assert_eq!(labels(&done), ["saved", "small"]);
            let large = call(
                &server,
                ports,
                "large",
                &done,
                "artifact_read",
                read(1 << 20),
            );
            join(large, ticks(&env, WAIT_MS / POLL_MS)).await;
            open.send(()).unwrap();
        };
        join(first, driver).await;
    });
    let done = done.borrow();
    let small = result(&done, "small");
    assert_eq!(small.get("isError"), None, "{small}");
    let busy = result(&done, "large");
    assert_eq!(busy["isError"], true, "{busy}");
    assert_eq!(busy["_meta"]["code"], "server_busy");
    let text = busy["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("artifact chunk") && text.contains("maxBytes"),
        "{text}"
    );
    assert_eq!(server.memory().in_use(), 0);
}

#[test]
fn a_background_artifact_write_keeps_its_calls_memory_until_it_ends_and_a_large_call_waits_for_it()
{
    let server = server();
    let env = FakeEnv::new();
    let http = upstream(|| {
        let page = large_page();
        (Some(page.len()), vec![Piece::Bytes(page)])
    });
    let ports = Ports {
        http: &http,
        ..env.background_ports()
    };
    let done = RefCell::new(Vec::new());
    let budget = server.memory();
    block_on(async {
        // The page's text is cut, so its artifact is written after the reply.
        call(&server, ports, "first", &done, RUNS, runs_args()).await;
        assert_eq!(env.background.pending(), 1);
        let held = budget.in_use();
        assert!(held >= large_page().len() * BYTES_PER_BODY_BYTE, "{held}");
        let second = call(&server, ports, "second", &done, RUNS, runs_args());
        let driver = async {
            ticks(&env, 2).await;
            assert_eq!(labels(&done), ["first"], "the second waits for the write");
            assert_eq!(budget.in_use(), held + request_cost(RUNS, runs_args()));
            env.background.run();
            ticks(&env, 1).await;
        };
        join(second, driver).await;
    });
    assert_eq!(labels(&done), ["first", "second"]);
    for (label, result) in done.borrow().iter() {
        assert_eq!(result.get("isError"), None, "{label}: {result}");
    }
    env.background.run();
    assert_eq!(env.background.pending(), 0);
    assert_eq!(budget.in_use(), 0);
}

/// `[0,0,...]` of about `bytes`: each 2-byte value costs some 40 bytes parsed.
fn zeros(bytes: usize) -> String {
    format!("[{}0]", "0,".repeat(bytes / 2 - 1))
}

#[test]
fn an_answer_too_dense_for_the_memory_fails_coded_and_the_call_holds_nothing_after() {
    let server = server();
    let env = FakeEnv::new();
    // A large runs page (reserved, then grown from the budget) and a small CircleCI answer
    // (which never waits), each parsing to several times the budget.
    let page = format!(
        r#"{{"total_count":1,"workflow_runs":{}}}"#,
        zeros(3 * 1024 * 1024)
    );
    let small = zeros(900 * 1024);
    let http = GatedHttp {
        route: Box::new(move |request| {
            let body = match request.url.contains("/actions/runs") {
                true => page.clone(),
                false => small.clone(),
            };
            (
                json_headers(Some(body.len())),
                vec![Piece::Bytes(body.into_bytes())],
            )
        }),
    };
    let ports = over(&env, &http);
    let done = RefCell::new(Vec::new());
    block_on(call(&server, ports, "runs", &done, RUNS, runs_args()));
    assert_eq!(server.memory().in_use(), 0);
    block_on(call(
        &server,
        ports,
        "get",
        &done,
        GET,
        json!({"path": "/me"}),
    ));
    assert_eq!(server.memory().in_use(), 0);
    for (label, failed) in done.borrow().iter() {
        assert_eq!(failed["isError"], true, "{label}: {failed}");
        assert_eq!(
            failed["_meta"]["code"], "too_many_values",
            "{label}: {failed}"
        );
        let text = failed["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("too many values for the memory")
                && text.contains("fewer results per page"),
            "{label}: {text}"
        );
    }
}

#[test]
fn a_cached_answer_is_parsed_within_the_memory_free_when_it_is_read_back() {
    let server = server();
    // Fits beside nothing else (a few MiB once parsed), not beside a held page.
    let cached = cached_beside_a_held_page(&server, zeros(200 * 1024).into_bytes());
    assert_eq!(cached["_meta"]["code"], "too_many_values", "{cached}");
}
