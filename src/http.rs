//! Plain HTTP request and response values exchanged between the Workers adapter and the core, so
//! the core never sees `worker::Request`.

use crate::ports::{header, BodyRead, BodyRoom, Headers, RequestBody};
use futures::future::LocalBoxFuture;
use std::cell::RefCell;

/// An incoming HTTP request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpRequest {
    /// Method, upper case.
    pub method: String,
    /// Path without the query string, e.g. `/mcp`.
    pub path: String,
    /// The query string without `?` (empty when there is none).
    pub query: String,
    /// Headers as received.
    pub headers: Headers,
    /// The body, once read: the server reads it through a [`RequestBody`] only when the route
    /// needs it, after authentication, and stores it here (longer than the limit: empty, with
    /// `body_too_large` set). Given already read to `Server::handle`.
    pub body: Vec<u8>,
    /// True when the body was longer than the limit it was read with.
    pub body_too_large: bool,
}

/// A body already in memory, as the [`RequestBody`] of a request that was read whole.
#[derive(Debug, Default)]
pub(crate) struct BufferedBody(RefCell<BodyRead>);

impl BufferedBody {
    /// `bytes`, flagged `too_large` when the reader that produced them stopped at its limit.
    pub(crate) fn new(bytes: Vec<u8>, too_large: bool) -> BufferedBody {
        BufferedBody(RefCell::new(BodyRead {
            bytes,
            too_large,
            ..BodyRead::default()
        }))
    }
}

impl RequestBody for BufferedBody {
    fn read<'a>(&'a self, limit: usize, room: &'a dyn BodyRoom) -> LocalBoxFuture<'a, BodyRead> {
        let read = std::mem::take(&mut *self.0.borrow_mut());
        Box::pin(async move {
            if read.bytes.len() > limit {
                return BodyRead {
                    too_large: true,
                    ..BodyRead::default()
                };
            }
            if !room.grow(read.bytes.len()).await {
                return BodyRead {
                    no_room: true,
                    ..BodyRead::default()
                };
            }
            read
        })
    }
}

impl HttpRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

/// An HTTP response to send back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Headers to send.
    pub headers: Headers,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// A response with `status`, a content type and a body.
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> HttpResponse {
        HttpResponse {
            status,
            headers: vec![("Content-Type".to_owned(), content_type.to_owned())],
            body: body.into(),
        }
    }

    /// A response with `status` and no body.
    pub(crate) fn empty(status: u16) -> HttpResponse {
        HttpResponse {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Adds a header.
    pub(crate) fn with_header(mut self, name: &str, value: &str) -> HttpResponse {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}
