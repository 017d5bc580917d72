//! Downloading a log: the vendor answers with the log or with a redirect to it; a redirect (or a
//! CircleCI output URL) is followed once, only to a host `LOG_REDIRECT_HOSTS` allows, without the
//! vendor's credential and under the same timeout; bytes reach the excerpt and the artifact as
//! they arrive, up to [`MAX_LOG_BYTES`].

use crate::artifacts::stream::ArtifactWriter;
use crate::logs::excerpt::Excerpter;
use crate::logs::pattern::OverBudget;
use crate::ports::{BodyStream, CallPorts, Clock, Level, Log, TransportError, UpstreamRequest};
use crate::upstream::body::Unread;
use crate::upstream::error::busy_text;
use crate::upstream::stream::{status_error, Opened};
use crate::upstream::vendor::USER_AGENT;
use crate::upstream::{Client, Target, UpstreamError, UpstreamSettings, Vendor};

/// The largest log read. Memory does not depend on it (nothing is held); it bounds the time
/// and the artifact's size.
pub(crate) const MAX_LOG_BYTES: u64 = 512 * 1024 * 1024;

/// Bytes of log handled between two turns given to the event loop (decision 0093).
pub(crate) const YIELD_BYTES: usize = 256 * 1024;

/// Gives the isolate's event loop a turn (a 0 ms timer) after every [`YIELD_BYTES`] of log
/// handled. A body whose bytes are already buffered resolves each read without returning to the
/// event loop, so a large log would otherwise hold the thread for seconds: other requests wait,
/// and timers due meanwhile (a connection's keep-alive) fire late, all at once.
pub(crate) struct Pacer<'p> {
    clock: &'p dyn Clock,
    since: usize,
}

impl<'p> Pacer<'p> {
    /// A pacer that has handled nothing yet, its turns timed on `clock`.
    pub(crate) fn new(clock: &'p dyn Clock) -> Pacer<'p> {
        Pacer { clock, since: 0 }
    }

    /// Counts `bytes` more handled, yielding once they add up to [`YIELD_BYTES`].
    pub(crate) async fn handled(&mut self, bytes: usize) {
        self.since += bytes;
        if self.since >= YIELD_BYTES {
            self.since = 0;
            self.clock.sleep(0).await;
        }
    }
}

/// Why a log could not be read.
#[derive(Debug)]
pub(crate) enum LogError {
    /// The vendor API refused or failed.
    Upstream(UpstreamError),
    /// The download went wrong; the text says how, naming hosts only (never a signed URL).
    Download(String),
    /// The grep pattern spent its work budget; the rest of the log is not read.
    Grep(OverBudget),
}

impl LogError {
    /// The text the model reads.
    pub(crate) fn text(&self) -> String {
        match self {
            LogError::Upstream(e) => e.text(),
            LogError::Download(text) => text.clone(),
            LogError::Grep(over) => over.to_string(),
        }
    }
}

/// Where the bytes of a log go.
pub(crate) struct Sink<'s, 'a> {
    /// The excerpt being built.
    pub(crate) excerpter: &'s mut Excerpter,
    /// The artifact being written.
    pub(crate) writer: &'s mut ArtifactWriter<'a>,
}

/// Reads the log the vendor answered `target` with: the body of a 2xx, or the document a
/// redirect names (followed once, see [`open_url`]).
pub(crate) async fn from_vendor(
    ports: CallPorts<'_>,
    client: &Client<'_>,
    target: &Target,
    opened: Opened,
    sink: Sink<'_, '_>,
) -> Result<u64, LogError> {
    let vendor = target.vendor;
    match opened.status {
        200..=299 => pump(ports.clock, opened.body, None, sink).await,
        300..=399 => {
            let Some(location) = opened.location().map(str::to_owned) else {
                return Err(LogError::Download(format!(
                    "{vendor} redirected the log request without a Location"
                )));
            };
            drop(opened);
            let (host, body) = open_url(ports.log, client, &location).await?;
            pump(ports.clock, body, Some(&host), sink).await
        }
        _ => Err(LogError::Upstream(
            status_error(ports.clock, target, opened).await,
        )),
    }
}

/// Opens a signed log URL, when the call's plan declared such documents: only on an allowed
/// host, with no credential, under the upstream timeout, the body scrubbed of the deployment's
/// credentials. Returns the host (for messages) and the body.
pub(crate) async fn open_url(
    log: &dyn Log,
    client: &Client<'_>,
    url: &str,
) -> Result<(String, Box<dyn BodyStream>), LogError> {
    let settings = client
        .documents()
        .map_err(|e| LogError::Download(e.to_string()))?;
    let checked = settings
        .log_hosts
        .check(url)
        .map_err(|e| LogError::Download(e.to_string()))?;
    let host = checked.authority();
    let request = UpstreamRequest::get(
        &checked,
        vec![("User-Agent".to_owned(), USER_AGENT.to_owned())],
        settings.timeout_ms,
    );
    let outcome = client.open_document(request).await;
    let status = outcome.as_ref().ok().map(|r| r.status);
    log.event(
        if matches!(status, Some(200..=299)) {
            Level::Info
        } else {
            Level::Warn
        },
        "log_download",
        &[("host", (&host).into()), ("status", status.into())],
    );
    let response = outcome.map_err(|e| LogError::Download(transport_text(&host, &e, settings)))?;
    match response.status {
        200..=299 => Ok((host, response.body)),
        403 | 404 | 410 => Err(LogError::Download(format!(
            "The log's signed URL on {host} was refused (HTTP {}): it has expired or was \
             revoked. Call the tool again: every call gets a fresh URL.",
            response.status
        ))),
        300..=399 => Err(LogError::Download(format!(
            "The log host {host} redirected again (HTTP {}); only one redirect is followed.",
            response.status
        ))),
        status => Err(LogError::Download(format!(
            "The log host {host} answered HTTP {status}; try again later."
        ))),
    }
}

fn transport_text(host: &str, error: &TransportError, settings: &UpstreamSettings) -> String {
    match error {
        TransportError::Timeout => format!(
            "The log download from {host} did not finish within {} ms.",
            settings.timeout_ms
        ),
        TransportError::TooLarge(limit) => {
            format!("The log on {host} is larger than {limit} bytes.")
        }
        TransportError::Network(_) => format!("The log host {host} could not be reached."),
    }
}

/// Streams `body` into `sink`; returns the bytes read.
async fn pump(
    clock: &dyn Clock,
    mut body: Box<dyn BodyStream>,
    host: Option<&str>,
    sink: Sink<'_, '_>,
) -> Result<u64, LogError> {
    let mut pacer = Pacer::new(clock);
    let mut total = 0u64;
    let host = host.unwrap_or("the API");
    loop {
        let chunk = match body.next_chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return Ok(total),
            Err(TransportError::Timeout) => {
                return Err(LogError::Download(format!(
                    "The log download from {host} did not finish in time, after {total} bytes."
                )))
            }
            Err(_) => {
                return Err(LogError::Download(format!(
                    "The log download from {host} broke off after {total} bytes."
                )))
            }
        };
        total += chunk.len() as u64;
        if total > MAX_LOG_BYTES {
            return Err(LogError::Download(format!(
                "The log is larger than {MAX_LOG_BYTES} bytes, the most this server reads."
            )));
        }
        sink.excerpter.push(&chunk);
        if let Some(over) = sink.excerpter.over_budget() {
            return Err(LogError::Grep(over));
        }
        sink.writer.write(&chunk).await;
        pacer.handled(chunk.len()).await;
    }
}

/// Reads all of `body` (a document of `vendor`'s that must be parsed whole, such as a CircleCI
/// step's JSON output) under the call's memory reservations, refusing more than `limit` bytes.
pub(crate) async fn read_all(
    ports: CallPorts<'_>,
    vendor: Vendor,
    mut body: Box<dyn BodyStream>,
    host: &str,
    limit: usize,
) -> Result<Vec<u8>, LogError> {
    let read = crate::upstream::body::read(ports.memory, ports.clock, body.as_mut(), None, limit);
    match read.await {
        Ok(out) => Ok(out),
        Err(Unread::Transport(TransportError::TooLarge(_))) => Err(LogError::Download(format!(
            "A step's output on {host} is larger than {limit} bytes (UPSTREAM_MAX_BYTES)."
        ))),
        Err(Unread::Transport(_)) => Err(LogError::Download(format!(
            "The download from {host} broke off or did not finish in time."
        ))),
        Err(Unread::Busy(busy)) => Err(LogError::Download(busy_text(vendor, busy.body_bytes))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::future::LocalBoxFuture;
    use std::cell::RefCell;

    /// A clock that records the timers asked for and fires them at once.
    #[derive(Default)]
    struct Timers(RefCell<Vec<u64>>);

    impl Clock for Timers {
        fn now_ms(&self) -> u64 {
            0
        }
        fn sleep(&self, ms: u64) -> LocalBoxFuture<'_, ()> {
            self.0.borrow_mut().push(ms);
            Box::pin(async {})
        }
    }

    #[test]
    fn the_event_loop_gets_a_turn_after_every_256_kib() {
        let timers = Timers::default();
        let mut pacer = Pacer::new(&timers);
        futures::executor::block_on(async {
            pacer.handled(YIELD_BYTES - 1).await;
            assert!(timers.0.borrow().is_empty());
            pacer.handled(1).await;
            assert_eq!(*timers.0.borrow(), [0]);
            // 10 MiB in 64 KiB chunks: 40 turns.
            for _ in 0..160 {
                pacer.handled(64 * 1024).await;
            }
        });
        assert_eq!(timers.0.borrow().len(), 41);
    }
}
