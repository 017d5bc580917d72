//! A vendor request as it goes out and comes back on the wire, shared by the answers read whole
//! (`client`) and the ones streamed (`stream`): the endpoint a target goes to, the request with
//! its credential and the scrubber of that credential, the kind of a transport failure, and
//! the reason phrase of a status.

use super::error::ErrorKind;
use super::js;
use super::path::ApiPath;
use super::scrub::Scrubber;
use super::target::{Root, Target};
use super::vendor::{Endpoint, UpstreamSettings};
use super::Method;
use crate::ports::{Headers, TransportError, UpstreamRequest};
use crate::value::Value;

/// The endpoint `target` goes to: the vendor's, on the target's root.
pub(crate) fn endpoint(settings: &UpstreamSettings, target: &Target) -> Option<Endpoint> {
    let mut endpoint = settings.endpoint(target.vendor)?;
    if target.root == Root::CircleCiV1 {
        endpoint.base_url = settings.circleci_v1_url();
    }
    Some(endpoint)
}

/// The request to `endpoint` for `path` (with the vendor's prefix) and `query`: the URL on the
/// configured base, the credential and fixed headers, and `body` as compact JSON; with the
/// scrubber of the credential it carries, which its answer is to be read through.
pub(crate) fn vendor_request(
    settings: &UpstreamSettings,
    endpoint: &Endpoint,
    method: Method,
    path: &ApiPath,
    query: &[(String, String)],
    body: Option<&Value>,
) -> (UpstreamRequest, Scrubber) {
    let credential = endpoint.credential.value.expose();
    let mut headers: Headers = vec![(endpoint.credential.header.to_owned(), credential.to_owned())];
    headers.extend(endpoint.headers.iter().cloned());
    headers.extend(endpoint.access.iter().flat_map(|token| token.headers()));
    if body.is_some()
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
    }
    let request = UpstreamRequest {
        method: method.as_str().to_owned(),
        url: path.url(&endpoint.base_url, query),
        headers,
        body: body.map(|b| js::stringify(b).into_bytes()),
        timeout_ms: settings.timeout_ms,
    };
    (request, Scrubber::new(settings, [credential]))
}

/// The error kind of a request that got no answer, and the label its log line carries (a
/// network error's detail, scrubbed when the answer was opened).
pub(crate) fn transport_kind(
    error: TransportError,
    settings: &UpstreamSettings,
) -> (ErrorKind, String) {
    match error {
        TransportError::Timeout => (
            ErrorKind::Timeout {
                after_ms: settings.timeout_ms,
            },
            "timeout".to_owned(),
        ),
        TransportError::TooLarge(limit) => (ErrorKind::TooLarge { limit }, "too_large".to_owned()),
        TransportError::Network(detail) => (ErrorKind::Network, format!("network: {detail}")),
    }
}

/// The standard reason phrase of `status` (RFC 9110), or `""` for codes without one.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Payload Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        422 => "Unprocessable Entity",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        511 => "Network Authentication Required",
        _ => "",
    }
}
