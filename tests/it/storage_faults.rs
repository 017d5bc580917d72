//! Storage faults, injected through the ports: KV (the HTTP cache) and R2 (artifacts)
//! that are slow, that fail on reads or on writes only, or that fail after a delay (a timeout).
//! Every call still answers: a cache that cannot be read or written is bypassed, an artifact that
//! cannot be saved gives `artifactId: null`, and each failure is logged once per call.
//! tests/it/http_cache.rs and tests/it/artifacts.rs cover the always-failing fakes.

use crate::common::ci::*;
use crate::common::protocol::*;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::{
    ArtifactChunk, ArtifactMeta, ArtifactStore, CacheEntry, CacheStore, OpenedEntry, PartUpload,
    Ports, StoreError, UpstreamRequest,
};
use devtools_mcp_edge::server::Server;
use futures::future::LocalBoxFuture;
use serde_json::{json, Value as Json};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// A future that completes after `until`, woken by a timer thread (block_on parks meanwhile).
struct Delay {
    until: Instant,
    armed: bool,
}

impl Future for Delay {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let now = Instant::now();
        if now >= self.until {
            return Poll::Ready(());
        }
        if !self.armed {
            self.armed = true;
            let waker = cx.waker().clone();
            let wait = self.until - now;
            std::thread::spawn(move || {
                std::thread::sleep(wait);
                waker.wake();
            });
        }
        Poll::Pending
    }
}

fn delay(d: Duration) -> Delay {
    Delay {
        until: Instant::now() + d,
        armed: false,
    }
}

/// What a faulty store does: wait `delay` before every operation, then fail reads and/or writes.
#[derive(Clone, Copy, Default)]
struct Fault {
    delay: Duration,
    fail_reads: bool,
    fail_writes: bool,
}

impl Fault {
    async fn apply(&self, write: bool) -> Result<(), StoreError> {
        if !self.delay.is_zero() {
            delay(self.delay).await;
        }
        if (write && self.fail_writes) || (!write && self.fail_reads) {
            return Err(StoreError("injected: the store timed out".into()));
        }
        Ok(())
    }
}

/// A cache store in front of another, with a [`Fault`]; counts the operations it saw.
struct FaultyCache<'a> {
    inner: &'a dyn CacheStore,
    fault: Fault,
    ops: Cell<u32>,
}

impl CacheStore for FaultyCache<'_> {
    fn get<'a>(
        &'a self,
        key: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<CacheEntry>, StoreError>> {
        self.ops.set(self.ops.get() + 1);
        Box::pin(async move {
            self.fault.apply(false).await?;
            self.inner.get(key).await
        })
    }

    fn open<'a>(
        &'a self,
        key: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<OpenedEntry>, StoreError>> {
        self.ops.set(self.ops.get() + 1);
        Box::pin(async move {
            self.fault.apply(false).await?;
            self.inner.open(key).await
        })
    }

    fn put<'a>(
        &'a self,
        key: &'a str,
        entry: CacheEntry,
        ttl_seconds: u64,
    ) -> LocalBoxFuture<'a, Result<(), StoreError>> {
        self.ops.set(self.ops.get() + 1);
        Box::pin(async move {
            self.fault.apply(true).await?;
            self.inner.put(key, entry, ttl_seconds).await
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.fault.apply(true).await?;
            self.inner.delete(key).await
        })
    }

    fn list<'a>(
        &'a self,
        prefix: &'a str,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            self.fault.apply(false).await?;
            self.inner.list(prefix, limit).await
        })
    }
}

/// An artifact store in front of another, with a [`Fault`].
struct FaultyArtifacts<'a> {
    inner: &'a dyn ArtifactStore,
    fault: Fault,
}

impl ArtifactStore for FaultyArtifacts<'_> {
    fn put<'a>(
        &'a self,
        key: &'a str,
        bytes: Vec<u8>,
        meta: ArtifactMeta,
    ) -> LocalBoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.fault.apply(true).await?;
            self.inner.put(key, bytes, meta).await
        })
    }

    fn get_range<'a>(
        &'a self,
        key: &'a str,
        offset: u64,
        length: u64,
    ) -> LocalBoxFuture<'a, Result<Option<ArtifactChunk>, StoreError>> {
        Box::pin(async move {
            self.fault.apply(false).await?;
            self.inner.get_range(key, offset, length).await
        })
    }

    fn head<'a>(
        &'a self,
        key: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<ArtifactMeta>, StoreError>> {
        Box::pin(async move {
            self.fault.apply(false).await?;
            self.inner.head(key).await
        })
    }

    fn begin_upload(
        &self,
        key: String,
        meta: ArtifactMeta,
    ) -> LocalBoxFuture<'_, Result<Box<dyn PartUpload + '_>, StoreError>> {
        Box::pin(async move {
            self.fault.apply(true).await?;
            self.inner.begin_upload(key, meta).await
        })
    }
}

/// The fakes of `env` with faulty KV and R2 in front of its stores.
struct Faulty<'a> {
    env: &'a FakeEnv,
    cache: FaultyCache<'a>,
    artifacts: FaultyArtifacts<'a>,
}

impl<'a> Faulty<'a> {
    fn new(env: &'a FakeEnv, kv: Fault, r2: Fault) -> Faulty<'a> {
        Faulty {
            env,
            cache: FaultyCache {
                inner: &env.cache,
                fault: kv,
                ops: Cell::new(0),
            },
            artifacts: FaultyArtifacts {
                inner: &env.artifacts,
                fault: r2,
            },
        }
    }

    fn ports(&self) -> Ports<'_> {
        Ports {
            cache: &self.cache,
            artifacts: &self.artifacts,
            ..self.env.ports()
        }
    }

    /// Calls tool `name` as the test principal; returns the result object and the elapsed time.
    fn call(&self, server: &Server, name: &str, arguments: Json) -> (Json, Duration) {
        let body = request(
            1,
            "tools/call",
            json!({"name": name, "arguments": arguments, "_meta": meta_2026()}),
        );
        let auth = format!("Bearer {TOKEN}");
        let mut headers = headers_2026("tools/call", Some(name));
        headers.push(("Authorization", auth.as_str()));
        let start = Instant::now();
        let response = futures::executor::block_on(
            server.handle(post(&body.to_string(), &headers), self.ports()),
        );
        let took = start.elapsed();
        assert_eq!(response.status, 200);
        let reply = body_json(&response);
        let raw = String::from_utf8_lossy(&response.body).into_owned();
        for secret in [GITHUB_TOKEN, CIRCLECI_TOKEN, TOKEN] {
            assert!(!raw.contains(secret), "a secret in the reply: {raw}");
        }
        (reply["result"].clone(), took)
    }

    /// Log lines of event `event` so far.
    fn logged(&self, event: &str) -> Vec<Json> {
        self.env
            .log
            .lines()
            .iter()
            .filter_map(|l| serde_json::from_str::<Json>(l).ok())
            .filter(|l| l["event"] == event)
            .collect()
    }
}

fn text(result: &Json) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn is_error(result: &Json) -> bool {
    result["isError"].as_bool().unwrap_or(false)
}

const SLOW: Duration = Duration::from_millis(120);

/// An upstream whose body counts the fetches, so a cached body is told from a fresh one.
fn counting_env() -> FakeEnv {
    let count = Rc::new(Cell::new(0u32));
    FakeEnv::with_http(ScriptedHttp::new(move |_: &UpstreamRequest| {
        count.set(count.get() + 1);
        Ok(json_response(
            200,
            &json!({"fetch": count.get()}).to_string(),
            &[],
        ))
    }))
}

/// An upstream answering a runs page far over the small text and structured bounds.
fn big_runs_env() -> FakeEnv {
    let runs: Vec<Json> = (1..=400)
        .map(|n| json!({"id": n, "name": "build", "status": "completed", "conclusion": "success", "head_branch": "main"}))
        .collect();
    let body = json!({"total_count": 400, "workflow_runs": runs}).to_string();
    FakeEnv::with_http(ScriptedHttp::new(move |_| {
        Ok(json_response(200, &body, &[]))
    }))
}

fn me() -> Json {
    json!({"path": "/me", "outputFormat": "json"})
}

fn runs() -> Json {
    json!({"owner": "o", "repo": "r", "perPage": 100})
}

/// Structured output on, with the smallest bounds, so the runs page is cut and saved.
fn bounded_server() -> Server {
    ci_builder(&[
        ("MCP_STRUCTURED_OUTPUT", "true"),
        ("MCP_STRUCTURED_MAX_BYTES", "16384"),
        ("MCP_TEXT_MAX_CHARS", "1000"),
    ])
    .build()
    .server
}

#[test]
fn slow_kv_answers_and_still_caches() {
    let server = ci_server();
    let env = counting_env();
    let kv = Fault {
        delay: SLOW,
        ..Fault::default()
    };
    let faulty = Faulty::new(&env, kv, Fault::default());
    let (first, took) = faulty.call(&server, "circleci_get", me());
    assert!(!is_error(&first), "{first}");
    assert!(took >= SLOW, "the delay applied ({took:?})");
    let (second, _) = faulty.call(&server, "circleci_get", me());
    let value: Json = serde_json::from_str(text(&second)).unwrap();
    assert_eq!(value["data"]["fetch"], 1, "served from the slow cache");
    assert_eq!(value["cache"]["hit"], true);
    assert_eq!(env.http.sent().len(), 1);
    assert!(faulty.logged("http_cache_unavailable").is_empty());
}

#[test]
fn kv_writes_failing_bypass_the_cache_and_log_once_per_call() {
    let server = ci_server();
    let env = counting_env();
    let kv = Fault {
        fail_writes: true,
        ..Fault::default()
    };
    let faulty = Faulty::new(&env, kv, Fault::default());
    for n in 1..=3 {
        let (result, _) = faulty.call(&server, "circleci_get", me());
        assert!(!is_error(&result), "{result}");
        let value: Json = serde_json::from_str(text(&result)).unwrap();
        assert_eq!(value["data"]["fetch"], n, "every call goes upstream");
        assert_eq!(value["cache"]["hit"], false);
    }
    let lines = faulty.logged("http_cache_unavailable");
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines.iter().all(|l| l["op"] == "put"), "{lines:?}");
    assert!(env.cache.keys().is_empty());
}

#[test]
fn kv_timing_out_is_a_miss_the_call_answers_and_one_line_per_call() {
    let server = ci_server();
    let env = counting_env();
    let kv = Fault {
        delay: SLOW,
        fail_reads: true,
        fail_writes: true,
    };
    let faulty = Faulty::new(&env, kv, Fault::default());
    for n in 1..=2 {
        let (result, _) = faulty.call(&server, "circleci_get", me());
        let value: Json = serde_json::from_str(text(&result)).unwrap();
        assert_eq!(value["data"]["fetch"], n);
    }
    assert!(faulty.cache.ops.get() >= 2, "the cache was tried");
    let lines = faulty.logged("http_cache_unavailable");
    assert_eq!(
        lines.len(),
        2,
        "once per call although reads and writes failed: {lines:?}"
    );
    assert!(lines.iter().all(|l| l["op"] == "get"));
}

#[test]
fn slow_r2_still_saves_and_reads_back() {
    let server = bounded_server();
    let env = big_runs_env();
    let r2 = Fault {
        delay: SLOW,
        ..Fault::default()
    };
    let faulty = Faulty::new(&env, Fault::default(), r2);
    let (result, took) = faulty.call(&server, "github_list_workflow_runs", runs());
    assert!(!is_error(&result), "{result}");
    assert!(took >= SLOW);
    let id = result["structuredContent"]["incomplete"]["artifactId"]
        .as_str()
        .expect("an artifact id")
        .to_owned();
    assert!(
        text(&result).contains(&id),
        "the cut text names the artifact"
    );
    let (chunk, _) = faulty.call(
        &server,
        "artifact_read",
        json!({"artifactId": id, "maxBytes": 4096}),
    );
    assert!(!is_error(&chunk), "{chunk}");
    let page: Json = serde_json::from_str(text(&chunk)).unwrap();
    assert_eq!(page["offset"], 0);
    assert_eq!(page["nextOffset"], 4096);
    assert!(page["totalBytes"].as_u64().unwrap() > 16384);
}

#[test]
fn r2_failing_after_a_delay_gives_a_null_artifact_and_one_line() {
    let server = bounded_server();
    let env = big_runs_env();
    let r2 = Fault {
        delay: SLOW,
        fail_reads: true,
        fail_writes: true,
    };
    let faulty = Faulty::new(&env, Fault::default(), r2);
    let (result, _) = faulty.call(&server, "github_list_workflow_runs", runs());
    assert!(!is_error(&result), "{result}");
    assert_eq!(
        result["structuredContent"]["incomplete"]["artifactId"],
        Json::Null
    );
    assert_eq!(result["structuredContent"]["incomplete"]["reason"], "size");
    assert!(
        text(&result).contains("Response Truncated"),
        "{}",
        text(&result)
    );
    assert_eq!(faulty.logged("artifact_save_failed").len(), 1);
    assert!(env.artifacts.keys().is_empty());
    // The next call, with R2 back, saves its artifact.
    let healthy = Faulty::new(&env, Fault::default(), Fault::default());
    let (next, _) = healthy.call(&server, "github_list_workflow_runs", runs());
    assert!(next["structuredContent"]["incomplete"]["artifactId"].is_string());
    assert_eq!(env.artifacts.keys().len(), 1);
}

#[test]
fn r2_reads_failing_make_artifact_read_a_clear_error_logged_once() {
    let server = bounded_server();
    let env = big_runs_env();
    let healthy = Faulty::new(&env, Fault::default(), Fault::default());
    let (result, _) = healthy.call(&server, "github_list_workflow_runs", runs());
    let id = result["structuredContent"]["incomplete"]["artifactId"].clone();
    let r2 = Fault {
        fail_reads: true,
        ..Fault::default()
    };
    let faulty = Faulty::new(&env, Fault::default(), r2);
    let (read, _) = faulty.call(&server, "artifact_read", json!({"artifactId": id}));
    assert!(is_error(&read), "{read}");
    assert!(
        text(&read).to_lowercase().contains("storage") || text(&read).contains("unavailable"),
        "{}",
        text(&read)
    );
    assert!(
        !text(&read).contains("injected"),
        "store detail stays in the log"
    );
    assert_eq!(faulty.logged("artifact_read_failed").len(), 1);
    let (again, _) = healthy.call(&server, "artifact_read", json!({"artifactId": id}));
    assert!(!is_error(&again), "{again}");
}

#[test]
fn kv_and_r2_down_together_still_answer_with_one_line_each() {
    let server = bounded_server();
    let env = big_runs_env();
    let down = Fault {
        fail_reads: true,
        fail_writes: true,
        ..Fault::default()
    };
    let faulty = Faulty::new(&env, down, down);
    // circleci_get reads through the cache; the page is cut, so it also tries to save.
    let (result, _) = faulty.call(
        &server,
        "circleci_get",
        json!({"path": "/insights/gh/o/r/workflows"}),
    );
    assert!(!is_error(&result), "{result}");
    assert!(text(&result).contains("Response Truncated"));
    assert_eq!(
        result["structuredContent"]["incomplete"]["artifactId"],
        Json::Null
    );
    assert_eq!(faulty.logged("http_cache_unavailable").len(), 1);
    assert_eq!(faulty.logged("artifact_save_failed").len(), 1);
    assert_eq!(env.http.sent().len(), 1);
}
