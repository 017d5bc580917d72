//! The `fetch` entry point: converts the Workers request into an [`HttpRequest`], builds the
//! ports for this request, runs the core [`Server`] and converts its answer back. It never returns
//! `Err`, so the runtime's generic error page never reaches a client.

use super::approvals::DoApprovals;
use super::claims::DoClaims;
use super::crypto::SubtleCipher;
use super::env::{
    setting, BindingLimiter, ConsoleLog, CryptoRng, EnvSettings, JsClock, ARTIFACTS_BINDING,
    CACHE_BINDING, OAUTH_BINDING, POLICY_BINDING,
};
use super::fetch::FetchHttp;
use super::kv::KvCache;
use super::r2::R2Artifacts;
use crate::http::{HttpRequest, HttpResponse};
use crate::ports::{
    ArtifactStore, Background, BodyRead, BodyRoom, Gone, Level, Log, Ports, ReplyStream,
    RequestBody, StoreError,
};
use crate::server::{Server, MAX_BODY_BYTES};
use futures::future::{poll_fn, select, Either, LocalBoxFuture};
use futures::{FutureExt, Stream, StreamExt};
use std::cell::{OnceCell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll, Waker};
use worker::js_sys::Promise;
use worker::wasm_bindgen::closure::Closure;
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::{event, ByteStream, Context, Env, Headers, Request, Response, ResponseBuilder};

thread_local! {
    /// The server, built on the first request: settings are only reachable through that
    /// request's `Env`, and they stay fixed for the isolate's life (a change is a new deployment).
    static SERVER: OnceCell<Rc<Server>> = const { OnceCell::new() };
}

#[event(start)]
fn start() {
    console_error_panic_hook::set_once();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> worker::Result<Response> {
    let reply = Rc::new(StreamedReply::default());
    let ctx = Rc::new(ctx);
    let work = serve(req, env, ctx.clone(), reply.clone());
    // The request's work is one task from its start to its end, whatever its reply turns into:
    // a future polled by two tasks may wake the first when it is ready (worker::Delay keeps the
    // waker it was first polled with).
    let finished = reply.clone();
    ctx.wait_until(async move {
        let response = work.await;
        finished.finish(response);
    });
    match poll_fn(|cx| reply.poll_outcome(cx)).await {
        // A call reports progress: the reply is a stream from now on, its answer the last event.
        Outcome::Stream(headers) => ResponseBuilder::new()
            .with_status(200)
            .with_headers(write_headers(&headers))
            .from_stream(Pieces(reply).map(Ok::<Vec<u8>, worker::Error>)),
        Outcome::Whole(response) => Ok(write_response(response)),
    }
}

/// Serves `req` with this request's ports, its reply streamed through `reply` when a call asks
/// to; stops where it waits once the client goes away.
async fn serve(req: Request, env: Env, ctx: Rc<Context>, reply: Rc<StreamedReply>) -> HttpResponse {
    let server = SERVER.with(|cell| {
        cell.get_or_init(|| Rc::new(Server::new(&|name: &str| setting(&env, name))))
            .clone()
    });
    let gone = client_gone(&req);
    let (request, body) = split_request(req);
    let cache = KvCache::new(
        env.kv(CACHE_BINDING).map_err(missing(CACHE_BINDING)),
        ctx.clone(),
    );
    // Optional: only a policy held in KV needs it; without it that policy fails closed.
    let state = KvCache::awaited(env.kv(POLICY_BINDING).map_err(missing(POLICY_BINDING)));
    // Optional: only OAuth sign-in needs it; without it sign-in fails and static tokens serve.
    let oauth = KvCache::awaited(env.kv(OAUTH_BINDING).map_err(missing(OAUTH_BINDING)));
    // Optional: only approval_required rules need it; without it they fail closed.
    let approvals = DoApprovals::new(&env);
    // Needed by sign-in alone: without it no code or refresh token is ever spent (fail closed).
    let claims = DoClaims::new(&env);
    // Optional: without it anonymous sign-in requests are not limited (and a warning is logged).
    let limiter = BindingLimiter::new(&env);
    let settings = EnvSettings(&env);
    let artifacts = Rc::new(R2Artifacts::new(
        env.bucket(ARTIFACTS_BINDING)
            .map_err(missing(ARTIFACTS_BINDING)),
    ));
    let background = WaitUntil {
        ctx,
        artifacts: artifacts.clone(),
    };
    let ports = Ports {
        http: &FetchHttp,
        cache: &cache,
        state: &state,
        oauth: &oauth,
        approvals: &approvals,
        claims: &claims,
        cipher: &SubtleCipher,
        limiter: &limiter,
        settings: &settings,
        artifacts: &*artifacts,
        clock: &JsClock,
        rng: &CryptoRng,
        log: &ConsoleLog,
        background: Some(&background),
    };
    let served = pin!(server.serve_streaming(request, &body, ports, Some(&*reply)));
    match select(served, gone).await {
        Either::Left((response, _)) => response,
        Either::Right(_) => {
            // Dropping the request's work stops it where it waits (a wait on a CI run polls no
            // more) and gives back what it held; work handed to `waitUntil` goes on.
            ConsoleLog.event(Level::Info, "client_gone", &[]);
            HttpResponse::empty(499)
        }
    }
}

/// Resolves when the client that sent `req` goes away: the runtime aborts the request's signal
/// (compatibility flag `enable_request_signal`). Without the flag it never resolves.
fn client_gone(req: &Request) -> impl Future<Output = ()> + Unpin {
    let signal = req.inner().signal();
    let gone = Promise::new(&mut |resolve, _| {
        if signal.aborted() {
            let _ = resolve.call0(&JsValue::UNDEFINED);
            return;
        }
        let on_abort = Closure::once_into_js(move || resolve.call0(&JsValue::UNDEFINED));
        let _ = signal.add_event_listener_with_callback("abort", on_abort.unchecked_ref());
    });
    JsFuture::from(gone).map(drop)
}

/// The headers of a streamed reply (its status is 200).
type Head = Vec<(String, String)>;

/// A request's reply, shared by its task (which makes it) and the fetch handler (which sends
/// it): whole when the task ends first, or a stream once a call starts one, its pieces queued
/// until the response's body reads them.
#[derive(Default)]
struct StreamedReply(RefCell<ReplyState>);

#[derive(Default)]
struct ReplyState {
    head: Option<Head>,
    started: bool,
    whole: Option<HttpResponse>,
    pieces: VecDeque<Vec<u8>>,
    /// The task has ended.
    ended: bool,
    /// The response's body is no longer read: the client went away.
    gone: bool,
    /// Whoever waits: the fetch handler for the outcome, then the body's reader for pieces.
    waker: Option<Waker>,
}

/// How the reply goes out.
enum Outcome {
    Stream(Head),
    Whole(HttpResponse),
}

impl StreamedReply {
    /// The reply's outcome once known.
    fn poll_outcome(&self, cx: &mut TaskContext<'_>) -> Poll<Outcome> {
        let mut state = self.0.borrow_mut();
        if let Some(head) = state.head.take() {
            return Poll::Ready(Outcome::Stream(head));
        }
        if let Some(whole) = state.whole.take() {
            return Poll::Ready(Outcome::Whole(whole));
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    /// The task's `response`: the whole reply, or the stream's last piece.
    fn finish(&self, response: HttpResponse) {
        let mut state = self.0.borrow_mut();
        if state.started {
            state.pieces.push_back(response.body);
        } else {
            state.whole = Some(response);
        }
        state.ended = true;
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
    }
}

impl ReplyStream for StreamedReply {
    fn start(&self, headers: Head) {
        let mut state = self.0.borrow_mut();
        if !std::mem::replace(&mut state.started, true) {
            state.head = Some(headers);
        }
    }

    fn send(&self, bytes: Vec<u8>) -> Result<(), Gone> {
        let mut state = self.0.borrow_mut();
        if state.gone {
            return Err(Gone);
        }
        state.pieces.push_back(bytes);
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
        Ok(())
    }
}

/// The pieces of a streamed reply, as the response's body reads them; dropped when the runtime
/// stops reading (the client went away).
struct Pieces(Rc<StreamedReply>);

impl Stream for Pieces {
    type Item = Vec<u8>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Vec<u8>>> {
        let mut state = self.0 .0.borrow_mut();
        if let Some(piece) = state.pieces.pop_front() {
            return Poll::Ready(Some(piece));
        }
        if state.ended {
            return Poll::Ready(None);
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Pieces {
    fn drop(&mut self) {
        self.0 .0.borrow_mut().gone = true;
    }
}

/// How long background work waits before it starts. `waitUntil` polls a task in a microtask,
/// before workerd has even taken the response, and a response whose reader runs on the isolate's
/// thread (a caller through a service binding, Miniflare's proxy) is sent in later turns of the
/// event loop; the runtime says nothing when it is gone. Work started meanwhile (writing an
/// artifact's pieces, or a local R2 simulator's side of the put) delays the reply, so it waits a
/// few milliseconds: nothing next to R2's own write latency, and `artifact_read` waits for an
/// artifact in flight.
const AFTER_REPLY: std::time::Duration = std::time::Duration::from_millis(5);

/// Work after the response through `ctx.waitUntil`, which keeps the request alive until it ends.
struct WaitUntil {
    ctx: Rc<Context>,
    artifacts: Rc<R2Artifacts>,
}

impl Background for WaitUntil {
    fn artifacts(&self) -> Rc<dyn ArtifactStore> {
        self.artifacts.clone()
    }

    fn log(&self) -> Rc<dyn Log> {
        Rc::new(ConsoleLog)
    }

    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        self.ctx.wait_until(async move {
            worker::Delay::from(AFTER_REPLY).await;
            task.await
        });
    }
}

/// The error text for a binding that is absent from the worker's configuration.
fn missing(binding: &'static str) -> impl Fn(worker::Error) -> StoreError {
    move |_| {
        StoreError(format!(
            "binding {binding} is not configured in wrangler.toml"
        ))
    }
}

/// The plain request without its body, and the body to be read when the server asks for it.
fn split_request(req: Request) -> (HttpRequest, WorkerBody) {
    // `Request::method` maps unknown methods to GET; the raw string keeps e.g. PROPFIND distinct.
    let method = req.inner().method().to_ascii_uppercase();
    let path = req.path();
    let query = req
        .url()
        .ok()
        .and_then(|url| url.query().map(str::to_owned))
        .unwrap_or_default();
    let headers: Vec<(String, String)> = req.headers().entries().collect();
    let declared =
        crate::ports::header(&headers, "Content-Length").and_then(|v| v.trim().parse::<u64>().ok());
    let request = HttpRequest {
        method,
        path,
        query,
        headers,
        body: Vec::new(),
        body_too_large: false,
    };
    let body = WorkerBody {
        request: RefCell::new(Some(req)),
        declared,
    };
    (request, body)
}

/// The body of the Workers request, read on demand: a request the server refuses from its
/// headers (no valid credentials) never has its body read.
struct WorkerBody {
    request: RefCell<Option<Request>>,
    /// `Content-Length`, when given.
    declared: Option<u64>,
}

impl RequestBody for WorkerBody {
    fn read<'a>(&'a self, limit: usize, room: &'a dyn BodyRoom) -> LocalBoxFuture<'a, BodyRead> {
        Box::pin(async move {
            let Some(mut req) = self.request.borrow_mut().take() else {
                return BodyRead::default();
            };
            read_body(&mut req, self.declared, limit, room).await
        })
    }
}

/// How many bytes past the limit are read and thrown away before a 413 goes out to an
/// authenticated caller. Closing a connection with unread request bytes makes the kernel reset
/// it, and a client connected directly (wrangler dev, tests) then loses the 413 itself; bigger
/// uploads are cut off anyway.
const DRAIN_MAX_BYTES: usize = 4 * MAX_BODY_BYTES;

/// Reads the body up to `limit`, each piece kept once `room` holds it.
async fn read_body(
    req: &mut Request,
    declared: Option<u64>,
    limit: usize,
    room: &dyn BodyRoom,
) -> BodyRead {
    let too_large = BodyRead {
        too_large: true,
        ..BodyRead::default()
    };
    if req.inner().body().is_none() {
        return BodyRead::default();
    }
    let Ok(mut stream) = req.stream() else {
        return BodyRead {
            cut_short: true,
            ..BodyRead::default()
        };
    };
    if let Some(len) = declared.filter(|&len| len > limit as u64) {
        if len <= (limit + DRAIN_MAX_BYTES) as u64 {
            drain(&mut stream, limit + DRAIN_MAX_BYTES).await;
        }
        return too_large;
    }
    let mut bytes = Vec::with_capacity(declared.map_or(0, |len| len as usize).min(limit));
    while let Some(chunk) = stream.next().await {
        // What arrived before the connection failed is a prefix, which may parse as another
        // request: it is never handed on as the body.
        let Ok(chunk) = chunk else {
            return BodyRead {
                cut_short: true,
                ..BodyRead::default()
            };
        };
        if bytes.len() + chunk.len() > limit {
            drain(&mut stream, DRAIN_MAX_BYTES).await;
            return too_large;
        }
        if !room.grow(bytes.len() + chunk.len()).await {
            return BodyRead {
                no_room: true,
                ..BodyRead::default()
            };
        }
        bytes.extend_from_slice(&chunk);
    }
    BodyRead {
        bytes,
        ..BodyRead::default()
    }
}

/// Reads and discards up to about `budget` bytes of what is left of the body.
async fn drain(stream: &mut ByteStream, budget: usize) {
    let mut seen = 0usize;
    while seen <= budget {
        match stream.next().await {
            Some(Ok(chunk)) => seen += chunk.len(),
            _ => return,
        }
    }
}

/// Workers headers for `headers`; an invalid one is dropped and logged.
fn write_headers(headers: &[(String, String)]) -> Headers {
    let written = Headers::new();
    for (name, value) in headers {
        if written.append(name, value).is_err() {
            worker::console_error!("dropped an invalid response header {name:?}");
        }
    }
    written
}

/// The Workers response for `response`.
fn write_response(response: HttpResponse) -> Response {
    let headers = write_headers(&response.headers);
    // The Response constructor throws (and `worker` then panics) on a status outside 200..=599
    // or on a body with a null-body status, so both are made impossible here.
    let status = if (200..=599).contains(&response.status) {
        response.status
    } else {
        500
    };
    let builder = ResponseBuilder::new()
        .with_status(status)
        .with_headers(headers);
    if response.body.is_empty() || matches!(status, 204 | 205 | 304) {
        builder.empty()
    } else {
        builder.fixed(response.body)
    }
}
