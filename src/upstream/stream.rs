//! Vendor answers too large to hold (job logs): the request is built and logged as every other,
//! and the answer comes back with its body unread, whatever its status, for the caller to stream
//! or to follow (GitHub answers a log request with a redirect).

use super::error::{ErrorKind, UpstreamError};
use super::scrub;
use super::target::{Root, Target};
use super::vendor::UpstreamSettings;
use super::wire::{endpoint, reason_phrase, transport_kind, vendor_request};
use super::{js, Method};
use crate::ports::{header, BodyStream, Clock, Headers, Level, Ports};

/// Most bytes of an error answer's body read for its message.
pub(crate) const MAX_ERROR_BODY: usize = 64 * 1024;

/// An answer whose body is still to be read.
pub(crate) struct Opened {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: Headers,
    /// The body.
    pub body: Box<dyn BodyStream>,
}

impl Opened {
    /// The `Location` of a redirect.
    pub(crate) fn location(&self) -> Option<&str> {
        header(&self.headers, "location")
    }
}

/// Sends a GET of `target` unchecked (see [`super::Client::open`]); only a request that got
/// no answer (or a vendor without settings) is an error here.
pub(super) async fn open(
    ports: Ports<'_>,
    settings: &UpstreamSettings,
    target: &Target,
) -> Result<Opened, UpstreamError> {
    let (vendor, path) = (target.vendor, &target.path);
    let started = ports.clock.now_ms();
    let fail =
        |kind| UpstreamError::new(vendor, Method::Get, path.path(), ports.clock.now_ms(), kind);
    let Some(endpoint) = endpoint(settings, target) else {
        return Err(fail(ErrorKind::NotConfigured));
    };
    let (request, scrubber) = vendor_request(settings, &endpoint, Method::Get, path, &[], None);
    let outcome = scrub::open(ports.http, request, &scrubber).await;
    let (status, label) = match &outcome {
        Ok(response) => (Some(response.status), "opened".to_owned()),
        Err(error) => (None, transport_kind(error.clone(), settings).1),
    };
    ports.log.event(
        if outcome.is_ok() {
            Level::Info
        } else {
            Level::Warn
        },
        "upstream",
        &[
            ("vendor", vendor.id().into()),
            ("method", "GET".into()),
            ("path", path.path().into()),
            ("root", (target.root != Root::Configured).into()),
            ("status", status.into()),
            ("ms", ports.clock.now_ms().saturating_sub(started).into()),
            ("outcome", (&label).into()),
        ],
    );
    match outcome {
        Ok(response) => Ok(Opened {
            status: response.status,
            headers: response.headers,
            body: response.body,
        }),
        Err(error) => Err(fail(transport_kind(error, settings).0)),
    }
}

/// The error a non-2xx answer is, with at most [`MAX_ERROR_BODY`] bytes of its body read for the
/// message (as [`super::send`] would report it).
pub(crate) async fn status_error(
    clock: &dyn Clock,
    target: &Target,
    mut opened: Opened,
) -> UpstreamError {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        match opened.body.next_chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(MAX_ERROR_BODY);
    let kind = if (300..400).contains(&opened.status) {
        ErrorKind::Redirect {
            status: opened.status,
            location_host: None,
        }
    } else {
        ErrorKind::Status {
            status: opened.status,
            status_text: reason_phrase(opened.status).to_owned(),
            body: js::response_text(&body),
            headers: opened.headers,
        }
    };
    let path = target.path.path();
    UpstreamError::new(target.vendor, target.method, path, clock.now_ms(), kind)
}
