//! The one way a tool call reaches a vendor: a [`Client`] holds the call's declared
//! [`Targets`] and sends nothing else, to the vendor's configured base (or, for a signed-in
//! person's Atlassian token, Atlassian's API gateway for the site), with the credential and
//! fixed headers per vendor, timeout and body bound from the vendor settings, redirects refused,
//! non-2xx statuses turned into [`UpstreamError`], and bodies decoded as the references do.
//! Every answer is read through the [`Scrubber`] of the credential its request carried.

use super::body::{self, Unread};
use super::error::{ErrorKind, MemberRefusal, UndeclaredDocument, UpstreamError};
use super::js;
use super::scrub::{self, Scrubber};
use super::stream::{self, Opened};
use super::target::{Declared, Target, Targets};
use super::vendor::{Endpoint, UpstreamSettings, Vendor};
use super::wire::{endpoint, transport_kind, vendor_request};
use crate::memory::CallMemory;
use crate::ports::{
    header, Clock, Headers, Level, Ports, StreamedResponse, TransportError, UpstreamRequest,
};
use crate::value::{parse_owned_within, parse_within, Map, Value};
use std::borrow::Cow;
use std::cell::RefCell;

/// Decides, while a call runs, on each member of a declared family before it is sent.
pub trait Admit {
    /// Whether `target` may go out as part of the call.
    fn admit(&self, target: &Target) -> Result<(), MemberRefusal>;
}

/// The upstream requests of one tool call: only those its plan declared, each member of a
/// declared family only once [`Admit`] lets it through.
pub struct Client<'a> {
    ports: Ports<'a>,
    memory: &'a CallMemory,
    settings: &'a UpstreamSettings,
    targets: &'a Targets,
    members: Option<&'a dyn Admit>,
    undeclared: RefCell<Option<String>>,
}

impl<'a> Client<'a> {
    /// A client for a call that declared `targets`, sending with `settings` (acting as the
    /// identity policy named, when it named one) and reading bodies under the call's `memory`. Without `members` (no
    /// policy), every member of a declared family goes out.
    pub fn new(
        ports: Ports<'a>,
        memory: &'a CallMemory,
        settings: &'a UpstreamSettings,
        targets: &'a Targets,
        members: Option<&'a dyn Admit>,
    ) -> Client<'a> {
        Client {
            ports,
            memory,
            settings,
            targets,
            members,
            undeclared: RefCell::new(None),
        }
    }

    /// The first request the tool asked for outside its plan, if any: a fault of the tool,
    /// which the call then answers as an internal error whatever the tool made of it.
    pub(crate) fn undeclared(&self) -> Option<String> {
        self.undeclared.borrow().clone()
    }

    /// Whether `target` could be sent: declared, and admitted by policy when a family member.
    /// An answer served from a cache in place of a request asks this first, so a rule that
    /// refuses the request refuses its cached answer too.
    pub(crate) fn admits(&self, target: &Target) -> bool {
        self.check(target).is_ok()
    }

    /// Refuses `target` unless the plan declared it, and a family member unless policy
    /// admits it.
    fn check(&self, target: &Target) -> Result<(), UpstreamError> {
        let fail = |kind| {
            UpstreamError::new(
                target.vendor,
                target.method,
                target.path.path(),
                self.ports.clock.now_ms(),
                kind,
            )
        };
        match self.targets.declares(target) {
            Declared::Fixed => Ok(()),
            Declared::Member => match self.members.map(|m| m.admit(target)) {
                None | Some(Ok(())) => Ok(()),
                Some(Err(reason)) => Err(fail(ErrorKind::Denied(reason))),
            },
            Declared::No => {
                let tried = format!(
                    "{} {} {}",
                    target.vendor.id(),
                    target.method.as_str(),
                    target.path()
                );
                self.undeclared.borrow_mut().get_or_insert(tried);
                Err(fail(ErrorKind::Undeclared))
            }
        }
    }

    /// Sends `target` with `query` after the path's own and `body`, and decodes the answer;
    /// see [`Client::send_raw`] and [`Client::decode_checked`].
    pub async fn send(
        &self,
        target: &Target,
        query: &[(String, String)],
        body: Option<&Value>,
    ) -> Result<UpstreamReply, UpstreamError> {
        let RawReply {
            status,
            headers,
            body,
            url,
            received_at_ms,
            ..
        } = self.send_raw(target, query, body).await?;
        // The body's text is given up to the parser, which releases it as the value grows, where
        // broken JSON is an error whatever the text was (so it need not be kept whole to answer
        // with): a vendor that promises JSON, declaring it.
        let release = target.vendor.requires_valid_json() && declares_json(&headers);
        let text = Cow::Owned(js::response_string(body));
        let decoded = decode_text(target.vendor, status, &headers, text, release, self.memory);
        let decoded = check(self.ports.clock, target, &headers, decoded)?;
        Ok(UpstreamReply {
            status,
            headers,
            body: decoded.value,
            parsed_json: decoded.parsed_json,
            url,
            received_at_ms,
        })
    }

    /// Sends `target` and returns a 2xx answer undecoded, or the error any other outcome is.
    /// The URL is the vendor's configured base plus the target's path plus `query`,
    /// form-encoded.
    pub(crate) async fn send_raw(
        &self,
        target: &Target,
        query: &[(String, String)],
        body: Option<&Value>,
    ) -> Result<RawReply, UpstreamError> {
        self.check(target)?;
        send_raw(
            self.ports,
            self.memory,
            self.settings,
            target,
            query,
            body,
            None,
        )
        .await
    }

    /// A GET of `target` with `query` carrying `If-None-Match: etag`: a 2xx answer undecoded,
    /// or GitHub's `304 Not Modified` as it came (status 304, its headers, no body), for the
    /// caller to answer from the copy it holds; any other outcome is the error it is.
    pub(crate) async fn revalidate(
        &self,
        target: &Target,
        query: &[(String, String)],
        etag: &str,
    ) -> Result<RawReply, UpstreamError> {
        self.check(target)?;
        let ports = self.ports;
        send_raw(
            ports,
            self.memory,
            self.settings,
            target,
            query,
            None,
            Some(etag),
        )
        .await
    }

    /// Sends a GET of `target` and returns the answer unread, whatever its status (a job log
    /// is streamed, or followed to where the vendor redirects).
    pub(crate) async fn open(&self, target: &Target) -> Result<Opened, UpstreamError> {
        self.check(target)?;
        stream::open(self.ports, self.settings, target).await
    }

    /// [`decode_text`] within the call's memory, refusing what a vendor that
    /// [promises JSON](Vendor::requires_valid_json) sent declared `application/json` (or
    /// `+json`) but broken: an error, not a string a program would mistake for data. Other
    /// vendors' bodies decode as the references do.
    pub(crate) fn decode_checked(
        &self,
        target: &Target,
        raw: &RawReply,
    ) -> Result<Decoded, UpstreamError> {
        self.decode_bytes(target, raw.status, &raw.headers, &raw.body)
    }

    /// [`Client::decode_checked`] of a body of `target` read whole by other means (a cache's
    /// copy, a download), with `headers` standing for its answer's.
    pub(crate) fn decode_bytes(
        &self,
        target: &Target,
        status: u16,
        headers: &Headers,
        body: &[u8],
    ) -> Result<Decoded, UpstreamError> {
        let text = js::response_str(body);
        let decoded = decode_text(target.vendor, status, headers, text, false, self.memory);
        check(self.ports.clock, target, headers, decoded)
    }

    /// The settings a document on an allowed log host is fetched under (its timeout, and the
    /// credentials its answer is scrubbed of); refused when the plan declared no documents.
    pub(crate) fn documents(&self) -> Result<&'a UpstreamSettings, UndeclaredDocument> {
        if self.targets.documents() {
            return Ok(self.settings);
        }
        let tried = "a document on a log host".to_owned();
        self.undeclared.borrow_mut().get_or_insert(tried);
        Err(UndeclaredDocument)
    }

    /// Opens `request`, a GET of a document on a log host built with the settings
    /// [`Client::documents`] gives (checked host, no credential), its answer scrubbed of every
    /// configured credential; refused, with nothing sent, when the plan declared no documents.
    pub(crate) async fn open_document(
        &self,
        request: UpstreamRequest,
    ) -> Result<StreamedResponse, TransportError> {
        let settings = self
            .documents()
            .map_err(|e| TransportError::Network(e.to_string()))?;
        scrub::open(self.ports.http, request, &Scrubber::new(settings, [])).await
    }

    /// The endpoint `vendor`'s requests go to, when it is configured (cache keys name its
    /// identity).
    pub(crate) fn endpoint(&self, vendor: Vendor) -> Option<Endpoint> {
        self.settings.endpoint(vendor)
    }

    /// The most bytes of a body read (`UPSTREAM_MAX_BYTES`).
    pub(crate) fn max_bytes(&self) -> usize {
        self.settings.max_bytes
    }
}

/// A successful (2xx) answer with its body still as bytes: what a cache stores; or, from
/// [`Client::revalidate`] only, a `304 Not Modified` without a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawReply {
    /// HTTP status (2xx).
    pub status: u16,
    /// Reason phrase as received (may be empty).
    pub status_text: String,
    /// Response headers.
    pub headers: Headers,
    /// The body bytes (at most `UPSTREAM_MAX_BYTES`).
    pub body: Vec<u8>,
    /// The URL requested (no credential is ever part of it).
    pub url: String,
    /// When the body was read, Unix milliseconds (the Clock port).
    pub(crate) received_at_ms: u64,
}

/// A body decoded to a value.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    /// The value: parsed JSON, `{}` for 204 or blank bodies, or the text as a string.
    pub value: Value,
    /// True when the body was parsed as JSON (the reference saves a raw file only then, so
    /// only then does its truncation block name one).
    pub(crate) parsed_json: bool,
}

/// A successful answer, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct UpstreamReply {
    /// HTTP status (2xx).
    pub status: u16,
    /// Response headers (paging links, rate-limit counters).
    pub headers: Headers,
    /// The decoded body.
    pub body: Value,
    /// True when the body was parsed as JSON.
    pub(crate) parsed_json: bool,
    /// The URL requested.
    pub url: String,
    /// When the body was read, Unix milliseconds.
    pub(crate) received_at_ms: u64,
}

/// Sends `target` unchecked (see [`Client::send_raw`]); with `if_none_match`, as a conditional
/// request whose `304 Not Modified` is answered as it is.
async fn send_raw(
    ports: Ports<'_>,
    memory: &CallMemory,
    settings: &UpstreamSettings,
    target: &Target,
    query: &[(String, String)],
    body: Option<&Value>,
    if_none_match: Option<&str>,
) -> Result<RawReply, UpstreamError> {
    let (vendor, method, path) = (target.vendor, target.method, &target.path);
    let started = ports.clock.now_ms();
    let fail = |kind| {
        UpstreamError::new(vendor, method, path.path(), ports.clock.now_ms(), kind)
            .on(settings.flavor(vendor))
    };
    let Some(endpoint) = endpoint(settings, target) else {
        return Err(fail(ErrorKind::NotConfigured));
    };
    let (mut request, scrubber) = vendor_request(settings, &endpoint, method, path, query, body);
    if let Some(etag) = if_none_match {
        request
            .headers
            .push(("If-None-Match".to_owned(), etag.to_owned()));
    }
    let url = request.url.clone();
    // Whole bytes: the limit is an integer held as a JavaScript number.
    let unread_over = vendor.declared_length_limit().map(|limit| limit as usize);
    let outcome = body::fetch(
        ports.http,
        ports.clock,
        memory,
        request,
        &scrubber,
        settings.max_bytes,
        unread_over,
    )
    .await;
    let elapsed = ports.clock.now_ms().saturating_sub(started);
    let log = |status: Option<u16>, bytes: usize, outcome: &str| {
        ports.log.event(
            if outcome == "ok" {
                Level::Info
            } else {
                Level::Warn
            },
            "upstream",
            &[
                ("vendor", vendor.id().into()),
                ("method", method.as_str().into()),
                ("path", path.path().into()),
                ("status", status.into()),
                ("bytes", bytes.into()),
                ("ms", elapsed.into()),
                ("outcome", outcome.into()),
            ],
        );
    };
    let response = match outcome {
        Ok(response) => response,
        Err(Unread::Busy(busy)) => {
            log(None, busy.body_bytes, "busy");
            return Err(fail(ErrorKind::Busy {
                body_bytes: busy.body_bytes,
            }));
        }
        Err(Unread::Transport(error)) => {
            let (kind, label) = transport_kind(error, settings);
            log(None, 0, &label);
            return Err(fail(kind));
        }
    };
    let status = response.status;
    if let Some(limit) = vendor.declared_length_limit() {
        // The reference refuses a declared length over its limit before looking at the status.
        if let Some(size) = header(&response.headers, "content-length").and_then(js::parse_int) {
            if size > limit {
                log(Some(status), response.body.len(), "declared_too_large");
                // Whole bytes: the declared length is an integer, and f64 holds any plausible one.
                return Err(fail(ErrorKind::DeclaredTooLarge { size: size as u64 }));
            }
        }
    }
    if status == 304 && if_none_match.is_some() {
        log(Some(status), 0, "not_modified");
        return Ok(RawReply {
            status,
            status_text: response.status_text,
            headers: response.headers,
            body: Vec::new(),
            url,
            received_at_ms: ports.clock.now_ms(),
        });
    }
    if (300..400).contains(&status) {
        log(Some(status), response.body.len(), "redirect");
        let location_host = header(&response.headers, "location").and_then(location_host);
        return Err(fail(ErrorKind::Redirect {
            status,
            location_host,
        }));
    }
    if !(200..300).contains(&status) {
        log(Some(status), response.body.len(), "status");
        return Err(fail(ErrorKind::Status {
            status,
            status_text: response.status_text,
            body: js::response_text(&response.body),
            headers: response.headers,
        }));
    }
    log(Some(status), response.body.len(), "ok");
    Ok(RawReply {
        status,
        status_text: response.status_text,
        headers: response.headers,
        body: response.body,
        url,
        received_at_ms: ports.clock.now_ms(),
    })
}

/// The error for a decoded body of `target` that must not be used: broken JSON declared as JSON
/// from a vendor that promises JSON, broken JSON whose text was released while it was parsed,
/// or a value the call had no memory for.
fn check(
    clock: &dyn Clock,
    target: &Target,
    headers: &Headers,
    decoded: Result<Decoded, Unusable>,
) -> Result<Decoded, UpstreamError> {
    let decoded = decoded.map_err(|why| unusable(clock, target, why))?;
    if target.vendor.requires_valid_json()
        && declares_json(headers)
        && !decoded.parsed_json
        && matches!(decoded.value, Value::String(_))
    {
        return Err(unusable(clock, target, Unusable::Malformed));
    }
    Ok(decoded)
}

/// The error an unusable body of `target` is.
fn unusable(clock: &dyn Clock, target: &Target, why: Unusable) -> UpstreamError {
    let kind = match why {
        Unusable::Malformed => ErrorKind::MalformedJson,
        Unusable::TooManyValues { body_bytes, held } => {
            ErrorKind::TooManyValues { body_bytes, held }
        }
    };
    UpstreamError::new(
        target.vendor,
        target.method,
        target.path.path(),
        clock.now_ms(),
        kind,
    )
}

/// Whether `headers` declare JSON.
fn declares_json(headers: &Headers) -> bool {
    header(headers, "content-type").is_some_and(is_json_media_type)
}

/// Whether a Content-Type names JSON: `application/json` or any `+json` suffix type.
fn is_json_media_type(content_type: &str) -> bool {
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    media == "application/json" || media.ends_with("+json")
}

/// Why a decoded body must not be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unusable {
    /// It was not JSON, where JSON was promised (declared, by a vendor that promises it), or
    /// the parser had released part of its text by the time it found out (only when asked to,
    /// and only past the first [`crate::value::RELEASE_BYTES`]): there is no text left to answer
    /// with.
    Malformed,
    /// Its value needed more memory than the call could take
    /// ([`body::within_reservation`]); the part parsed is dropped.
    TooManyValues {
        /// The body's size in bytes.
        body_bytes: usize,
        /// Bytes the parse could take.
        held: usize,
    },
}

/// Decodes a 2xx body's text as the reference servers do: 204 -> `{}`; `text/plain` from a
/// vendor that [keeps it](Vendor::keeps_plain_text) -> the text as a string, even empty; blank ->
/// `{}`; JSON -> its value, parsed within the call's `memory`; anything else -> the text. With
/// `release`, an owned text is given to the parser, which releases it as it goes
/// ([`crate::value::parse_owned`]).
fn decode_text(
    vendor: Vendor,
    status: u16,
    headers: &Headers,
    text: Cow<'_, str>,
    release: bool,
    memory: &CallMemory,
) -> Result<Decoded, Unusable> {
    let empty = || Decoded {
        value: Value::Object(Map::new()),
        parsed_json: false,
    };
    if status == 204 {
        return Ok(empty());
    }
    if vendor.keeps_plain_text()
        && header(headers, "content-type").is_some_and(|ct| ct.contains("text/plain"))
    {
        return Ok(Decoded {
            value: Value::String(text.into_owned()),
            parsed_json: false,
        });
    }
    if js::is_blank(&text) {
        return Ok(empty());
    }
    let body_bytes = text.len();
    let (parsed, held) = body::within_reservation(memory, body_bytes, |room| match text {
        Cow::Owned(text) if release => {
            parse_owned_within(text, room).map_err(|failed| (failed.error, failed.text))
        }
        text => parse_within(&text, room).map_err(|error| (error, Some(text.into_owned()))),
    });
    match parsed {
        Ok(value) => Ok(Decoded {
            value,
            parsed_json: true,
        }),
        // JSON all the same: no partial value and no text stands for it.
        Err((error, _)) if error.over_allowance() => {
            Err(Unusable::TooManyValues { body_bytes, held })
        }
        Err((_, Some(text))) => Ok(Decoded {
            value: Value::String(text),
            parsed_json: false,
        }),
        Err((_, None)) => Err(Unusable::Malformed),
    }
}

/// The host of a `Location` value, when it names one; never the path or query, which may hold
/// signed tokens.
fn location_host(location: &str) -> Option<String> {
    let rest = location.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    (!host.is_empty()).then(|| host.to_owned())
}
