//! Turning outcomes into HTTP replies: JSON bodies and the status each JSON-RPC error code
//! earns. The only place a reply body is serialized.

use crate::http::HttpResponse;
use crate::jsonrpc::{ErrorCode, ErrorObject, Id, Response};
use serde::Serialize;
use std::any::Any;

const JSON: &str = "application/json";

/// Serializes `body` as the JSON reply with `status`. Serialization of these types cannot fail
/// in practice; if it ever did, the client still gets a well-formed -32603.
pub(crate) fn json_reply(status: u16, body: &impl Serialize) -> HttpResponse {
    let mut bytes = Vec::with_capacity(128);
    written(status, serde_json::to_writer(&mut bytes, body), bytes)
}

fn written(status: u16, outcome: serde_json::Result<()>, bytes: Vec<u8>) -> HttpResponse {
    match outcome {
        Ok(()) => HttpResponse::new(status, JSON, bytes),
        Err(_) => HttpResponse::new(
            500,
            JSON,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#,
        ),
    }
}

/// The reply holding `responses` (one, or a batch's array), each written by
/// [`Response::write_json`] into a buffer sized for their results, so that a large result is
/// copied once and not parsed again.
pub(crate) fn responses_reply(status: u16, responses: &[Response], batch: bool) -> HttpResponse {
    let results: usize = responses
        .iter()
        .filter_map(|r| r.result.as_ref())
        .map(|r| r.get().len())
        .sum();
    let mut bytes = Vec::with_capacity(results + 256 * responses.len());
    let outcome = (|| {
        if batch {
            bytes.push(b'[');
        }
        for (i, response) in responses.iter().enumerate() {
            if i > 0 {
                bytes.push(b',');
            }
            response.write_json(&mut bytes)?;
        }
        if batch {
            bytes.push(b']');
        }
        Ok(())
    })();
    written(status, outcome, bytes)
}

/// A reply holding one JSON-RPC error response.
pub(crate) fn rpc_error_reply(status: u16, id: Option<Id>, error: ErrorObject) -> HttpResponse {
    json_reply(status, &Response::failure(id, error))
}

/// The HTTP status for a single (non-batch) response carrying `error`: malformed or
/// unroutable input is the client's fault (400), a server fault is 500, and errors about what
/// a well-formed request asked for (unknown method or tool, bad params) ride on 200 like any
/// JSON-RPC response.
pub(crate) fn status_for(error: &ErrorObject) -> u16 {
    match error.code {
        ErrorCode::PARSE_ERROR
        | ErrorCode::INVALID_REQUEST
        | ErrorCode::HEADER_MISMATCH
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => 400,
        ErrorCode::INTERNAL_ERROR => 500,
        _ => 200,
    }
}

/// The text of a panic payload (`panic!` with a literal or a formatted message).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}
