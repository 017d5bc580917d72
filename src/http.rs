//! Plain HTTP request and response values exchanged between the Workers adapter and the core, so
//! the core never sees `worker::Request`.

use crate::ports::{header, Headers};

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
    /// The body (the adapter stops reading past the body limit and sets `body_too_large`).
    pub body: Vec<u8>,
    /// True when the body was longer than the limit the adapter was given.
    pub body_too_large: bool,
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
    pub fn empty(status: u16) -> HttpResponse {
        HttpResponse {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &str, value: &str) -> HttpResponse {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}
