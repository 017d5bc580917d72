//! Upstream HTTP over the Workers `fetch`: redirects are never followed, a timeout aborts the
//! request through an `AbortController`, and bodies are streamed and cut off past the caller's
//! limit, or handed to the core piece by piece ([`UpstreamHttp::open`]).

use crate::ports::{
    BodyStream, StreamedResponse, TransportError, UpstreamHttp, UpstreamRequest, UpstreamResponse,
};
use futures::future::{select, Either, LocalBoxFuture};
use futures::StreamExt;
use std::pin::pin;
use std::pin::Pin;
use std::time::Duration;
use worker::{
    AbortController, ByteStream, Delay, Fetch, Headers, Method, Request, RequestInit,
    RequestRedirect, Response, ResponseBody,
};

/// Sends upstream requests with the global `fetch`.
pub struct FetchHttp;

impl UpstreamHttp for FetchHttp {
    fn send(
        &self,
        request: UpstreamRequest,
        max_body: usize,
    ) -> LocalBoxFuture<'_, Result<UpstreamResponse, TransportError>> {
        Box::pin(send(request, max_body))
    }

    fn open(
        &self,
        request: UpstreamRequest,
    ) -> LocalBoxFuture<'_, Result<StreamedResponse, TransportError>> {
        Box::pin(open(request))
    }
}

/// Milliseconds since the epoch, for the deadline a streamed body is read under.
fn now_ms() -> f64 {
    worker::js_sys::Date::now()
}

async fn open(request: UpstreamRequest) -> Result<StreamedResponse, TransportError> {
    let controller = AbortController::default();
    let signal = controller.signal();
    let deadline = now_ms() + request.timeout_ms as f64;
    let timeout = Delay::from(Duration::from_millis(request.timeout_ms));
    let exchange = async {
        let outgoing = build_request(&request)?;
        Fetch::Request(outgoing)
            .send_with_signal(&signal)
            .await
            .map_err(|e| TransportError::Network(e.to_string()))
    };
    let outcome = match select(pin!(exchange), timeout).await {
        Either::Left((outcome, _)) => outcome,
        Either::Right(_) => Err(TransportError::Timeout),
    };
    let mut response = match outcome {
        Ok(response) => response,
        Err(error) => {
            controller.abort();
            return Err(error);
        }
    };
    let status = response.status_code();
    let headers: Vec<(String, String)> = response.headers().entries().collect();
    let stream = match response.body() {
        ResponseBody::Stream(_) => Some(Box::pin(
            response
                .stream()
                .map_err(|e| TransportError::Network(e.to_string()))?,
        )),
        _ => None,
    };
    Ok(StreamedResponse {
        status,
        // As in `send`: workers-rs drops `statusText`.
        status_text: crate::upstream::reason_phrase(status).to_owned(),
        headers,
        body: Box::new(FetchBody {
            stream,
            controller: Some(controller),
            deadline,
        }),
    })
}

/// A `fetch` body read under the request's deadline; dropping it aborts the request.
struct FetchBody {
    stream: Option<Pin<Box<ByteStream>>>,
    controller: Option<AbortController>,
    deadline: f64,
}

impl BodyStream for FetchBody {
    fn next_chunk(&mut self) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, TransportError>> {
        Box::pin(async move {
            let Some(stream) = self.stream.as_mut() else {
                return Ok(None);
            };
            let left = self.deadline - now_ms();
            if left <= 0.0 {
                return Err(TransportError::Timeout);
            }
            let timeout = Delay::from(Duration::from_millis(left as u64));
            match select(stream.next(), timeout).await {
                Either::Left((Some(Ok(chunk)), _)) => Ok(Some(chunk)),
                Either::Left((None, _)) => {
                    self.stream = None;
                    Ok(None)
                }
                Either::Left((Some(Err(e)), _)) => Err(TransportError::Network(e.to_string())),
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
