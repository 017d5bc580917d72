//! Vendor answers too large to hold (job logs): the request is built and logged as every other,
//! and the answer comes back with its body unread, whatever its status, for the caller to stream
//! or to follow (GitHub answers a log request with a redirect).

use super::error::{ErrorKind, UpstreamError};
use super::js;
use super::scrub;
use super::target::{Root, Target};
use super::vendor::UpstreamSettings;
use super::wire::{endpoint, reason_phrase, transport_kind, vendor_request};
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

/// Sends `target` (its own method, with no body) unchecked (see [`super::Client::open`]); only
/// a request that got no answer (or a vendor without settings) is an error here.
pub(super) async fn open(
    ports: Ports<'_>,
    settings: &UpstreamSettings,
    target: &Target,
) -> Result<Opened, UpstreamError> {
    let (vendor, method, path) = (target.vendor, target.method, &target.path);
    let started = ports.clock.now_ms();
    let fail = |kind| {
        UpstreamError::new(vendor, method, path.path(), ports.clock.now_ms(), kind)
            .on(settings.flavor(vendor))
    };
    let Some(endpoint) = endpoint(settings, target) else {
        return Err(fail(ErrorKind::NotConfigured));
    };
    let (request, scrubber) = vendor_request(settings, &endpoint, method, path, &[], None);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::ports::fake::{FakeEnv, ScriptedHttp};
    use crate::ports::UpstreamResponse;
    use crate::upstream::{ApiPath, Method, Vendor};
    use futures::executor::block_on;

    /// What a stream sends is what was decided: the target's method, not a GET in its place.
    #[test]
    fn a_stream_goes_out_with_its_targets_method() {
        let env = FakeEnv::with_http(ScriptedHttp::new(|_| {
            Ok(UpstreamResponse {
                status: 204,
                status_text: String::new(),
                headers: Vec::new(),
                body: Vec::new(),
            })
        }));
        let config = Config::from_settings(&|name: &str| {
            (name == "GITHUB_TOKEN").then(|| "ghp-test-0123456789".to_owned())
        })
        .unwrap();
        let path = ApiPath::parse("/repos/o/r/actions/runs/1/cancel").unwrap();
        for method in [Method::Get, Method::Post] {
            let target = Target::new(Vendor::GitHub, method, &path);
            assert!(block_on(open(env.ports(), &config.upstream, &target)).is_ok());
        }
        let sent: Vec<String> = env.http.sent().into_iter().map(|r| r.method).collect();
        assert_eq!(sent, ["GET", "POST"]);
    }
}
