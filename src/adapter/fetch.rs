//! Upstream HTTP over the Workers `fetch`: redirects are never followed, a timeout aborts the
//! request through an `AbortController`, and bodies are streamed and cut off past the caller's
//! limit, or handed to the core piece by piece ([`UpstreamHttp::open`]).
//!
//! A streamed body is read with a BYOB reader into large buffers: workerd's default reader hands
//! out 4 KiB chunks, about 77 crossings into wasm for a 300 KB page, each a JS promise and a
//! copy. One timer covers the whole request rather than one per read ([`Deadline`]).

use crate::ports::{
    BodyStream, Exchange, StreamedResponse, TransportError, UpstreamHttp, UpstreamRequest,
    UpstreamResponse,
};
use futures::future::{select, Either};
use futures::io::AsyncReadExt;
use futures::StreamExt;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_streams::readable::IntoAsyncRead;
use worker::{
    AbortController, Delay, Fetch, Headers, Method, Request, RequestInit, RequestRedirect,
    Response, ResponseBody,
};

/// The most one read of a streamed body takes: the JS buffer the BYOB reader fills, and the
/// chunk handed to the core. A read returns what has arrived, up to this.
const READ_BYTES: usize = 64 * 1024;

/// Sends upstream requests with the global `fetch`.
pub(crate) struct FetchHttp;

impl UpstreamHttp for FetchHttp {
    fn send(&self, request: UpstreamRequest, max_body: usize) -> Exchange<'_, UpstreamResponse> {
        Box::pin(send(request, max_body))
    }

    fn open(&self, request: UpstreamRequest) -> Exchange<'_, StreamedResponse> {
        Box::pin(open(request))
    }
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &worker::js_sys::Function, ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);
}

/// A request's deadline: one `setTimeout` for the exchange and every read of its body, cleared
/// when dropped.
///
/// `worker::Delay` keeps the waker of its first poll only, so it cannot be shared by waits made
/// from different futures; this one takes the waker of every poll ([`Deadline::passed`]).
struct Deadline {
    state: Rc<DeadlineState>,
    timer: JsValue,
    _callback: Closure<dyn FnMut()>,
}

#[derive(Default)]
struct DeadlineState {
    passed: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Deadline {
    fn after(ms: u64) -> Self {
        let state = Rc::new(DeadlineState::default());
        let fired = Rc::clone(&state);
        let callback = Closure::<dyn FnMut()>::new(move || {
            fired.passed.set(true);
            if let Some(waker) = fired.waker.borrow_mut().take() {
                waker.wake();
            }
        });
        // setTimeout takes a 32-bit signed delay and fires at once past it.
        let ms = ms.min(i32::MAX as u64) as f64;
        let timer = set_timeout(callback.as_ref().unchecked_ref(), ms);
        Self {
            state,
            timer,
            _callback: callback,
        }
    }

    fn has_passed(&self) -> bool {
        self.state.passed.get()
    }

    /// Resolves once the deadline has passed.
    fn passed(&self) -> DeadlinePassed<'_> {
        DeadlinePassed(&self.state)
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        clear_timeout(&self.timer);
    }
}

struct DeadlinePassed<'a>(&'a DeadlineState);

impl Future for DeadlinePassed<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.passed.get() {
            return Poll::Ready(());
        }
        let mut waker = self.0.waker.borrow_mut();
        match waker.as_ref() {
            Some(held) if held.will_wake(cx.waker()) => {}
            _ => *waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

async fn open(request: UpstreamRequest) -> Result<StreamedResponse, TransportError> {
    let controller = AbortController::default();
    let signal = controller.signal();
    let deadline = Deadline::after(request.timeout_ms);
    let exchange = async {
        let outgoing = build_request(&request)?;
        Fetch::Request(outgoing)
            .send_with_signal(&signal)
            .await
            .map_err(|e| TransportError::Network(e.to_string()))
    };
    let outcome = match select(pin!(exchange), deadline.passed()).await {
        Either::Left((outcome, _)) => outcome,
        Either::Right(_) => Err(TransportError::Timeout),
    };
    let response = match outcome {
        Ok(response) => response,
        Err(error) => {
            controller.abort();
            return Err(error);
        }
    };
    let status = response.status_code();
    let headers: Vec<(String, String)> = response.headers().entries().collect();
    let reader = match response.body() {
        ResponseBody::Stream(stream) => Some(byob(stream.clone())?),
        _ => None,
    };
    Ok(StreamedResponse {
        status,
        // As in `send`: workers-rs drops `statusText`.
        status_text: crate::upstream::reason_phrase(status).to_owned(),
        headers,
        body: Box::new(FetchBody {
            reader,
            controller: Some(controller),
            deadline: Some(deadline),
        }),
    })
}

/// `stream` read through a BYOB reader, which cancels it when dropped.
fn byob(stream: worker::web_sys::ReadableStream) -> Result<IntoAsyncRead<'static>, TransportError> {
    wasm_streams::ReadableStream::from_raw(stream)
        .try_into_async_read()
        .map_err(|(e, _)| TransportError::Network(format!("unreadable body: {e:?}")))
}

/// A stored value's `stream` (a KV read) as a body, read within `timeout_ms` of now; dropping it
/// cancels the read.
pub(super) fn stored_body(
    stream: worker::web_sys::ReadableStream,
    timeout_ms: u64,
) -> Result<Box<dyn BodyStream>, TransportError> {
    Ok(Box::new(FetchBody {
        reader: Some(byob(stream)?),
        controller: None,
        deadline: Some(Deadline::after(timeout_ms)),
    }))
}

/// A `fetch` body read under the request's deadline; dropping it aborts the request (a stored
/// value's has no request, and is cancelled by its reader).
struct FetchBody {
    reader: Option<IntoAsyncRead<'static>>,
    controller: Option<AbortController>,
    /// Cleared (dropped) at the end of the body.
    deadline: Option<Deadline>,
}

impl BodyStream for FetchBody {
    fn next_chunk(&mut self) -> Exchange<'_, Option<Vec<u8>>> {
        Box::pin(async move {
            let (Some(reader), Some(deadline)) = (self.reader.as_mut(), self.deadline.as_ref())
            else {
                // No body, or its end was read: either way the timer has nothing left to guard.
                self.deadline = None;
                return Ok(None);
            };
            if deadline.has_passed() {
                return Err(TransportError::Timeout);
            }
            let mut chunk = vec![0; READ_BYTES];
            match select(reader.read(&mut chunk), deadline.passed()).await {
                Either::Left((Ok(0), _)) => {
                    self.reader = None;
                    self.deadline = None;
                    Ok(None)
                }
                Either::Left((Ok(len), _)) => {
                    chunk.truncate(len);
                    Ok(Some(chunk))
                }
                Either::Left((Err(e), _)) => Err(TransportError::Network(e.to_string())),
                Either::Right(_) => Err(TransportError::Timeout),
            }
        })
    }
}

impl Drop for FetchBody {
    fn drop(&mut self) {
        // A no-op after a complete read; otherwise releases the connection.
        if let Some(controller) = self.controller.take() {
            controller.abort();
        }
    }
}

async fn send(
    request: UpstreamRequest,
    max_body: usize,
) -> Result<UpstreamResponse, TransportError> {
    let controller = AbortController::default();
    let signal = controller.signal();
    let timeout = Delay::from(Duration::from_millis(request.timeout_ms));
    let exchange = async {
        let outgoing = build_request(&request)?;
        let mut response = Fetch::Request(outgoing)
            .send_with_signal(&signal)
            .await
            .map_err(|e| TransportError::Network(e.to_string()))?;
        let status = response.status_code();
        let headers: Vec<(String, String)> = response.headers().entries().collect();
        let body = read_body(&mut response, max_body).await?;
        Ok(UpstreamResponse {
            status,
            // workers-rs drops `statusText` when it wraps the JS response; the standard phrase
            // is what an HTTP/1.1 upstream sends (docs/decisions/0011-upstream-client-and-atlassian-errors.md).
            status_text: crate::upstream::reason_phrase(status).to_owned(),
            headers,
            body,
        })
    };
    // The timeout covers the whole exchange, body included: a server that trickles its body
    // must not hold the request open past the deadline.
    let outcome = match select(pin!(exchange), timeout).await {
        Either::Left((outcome, _)) => outcome,
        Either::Right(_) => Err(TransportError::Timeout),
    };
    // Aborting is a no-op after a complete read, and releases the connection when the body was
    // cut off or the deadline passed.
    controller.abort();
    outcome
}

/// The `fetch` request for `request`: manual redirects, headers and body as given.
fn build_request(request: &UpstreamRequest) -> Result<Request, TransportError> {
    let headers = Headers::new();
    for (name, value) in &request.headers {
        // The value may be a credential: name the header, never the value.
        headers
            .append(name, value)
            .map_err(|_| TransportError::Network(format!("invalid request header {name:?}")))?;
    }
    let mut init = RequestInit::new();
    init.with_method(method(&request.method)?)
        .with_headers(headers)
        .with_redirect(RequestRedirect::Manual);
    if let Some(body) = &request.body {
        init.with_body(Some(
            worker::js_sys::Uint8Array::from(body.as_slice()).into(),
        ));
    }
    Request::new_with_init(&request.url, &init)
        .map_err(|e| TransportError::Network(format!("cannot build the request: {e}")))
}

/// The `worker` method for `name`; `worker::Method::from` maps unknown names to GET, which would
/// silently change a request's meaning, so only exact matches pass.
fn method(name: &str) -> Result<Method, TransportError> {
    Method::all()
        .into_iter()
        .find(|m| m.as_ref() == name)
        .ok_or_else(|| TransportError::Network(format!("unsupported method {name:?}")))
}

/// Reads at most `max_body` bytes of the body, failing as soon as it is known to be longer.
async fn read_body(response: &mut Response, max_body: usize) -> Result<Vec<u8>, TransportError> {
    let declared = response
        .headers()
        .get("Content-Length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|len| len > max_body as u64) {
        return Err(TransportError::TooLarge(max_body));
    }
    if !matches!(response.body(), ResponseBody::Stream(_)) {
        return Ok(Vec::new());
    }
    let mut stream = response
        .stream()
        .map_err(|e| TransportError::Network(e.to_string()))?;
    let mut body =
        Vec::with_capacity(declared.map_or(0, |len| crate::upstream::body::capacity(len as usize)));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| TransportError::Network(e.to_string()))?;
        if body.len() + chunk.len() > max_body {
            return Err(TransportError::TooLarge(max_body));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
