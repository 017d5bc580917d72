//! What the CI-loop tools of every vendor share: conditional GETs, the wait for a run or workflow
//! to reach a final state, the answer's rendering, and a refused write's error.
//!
//! Every GitHub GET the tools make (and a CircleCI one, should CircleCI send an `ETag`) is a
//! conditional request: the answer of a 200 that carried an `ETag` is kept in the HTTP cache (KV
//! `HTTP_CACHE`, keyed like every entry there by principal, credential and URL), the next GET of
//! the same URL sends `If-None-Match` with it, and a `304 Not Modified` (which GitHub does not
//! count against the rate limit) is answered from the kept body. The request always goes out, so
//! the answer is as live as an unconditional one and policy decides it the same way. Only the
//! validator is read before the request; the kept body is read (its cost reserved first) once the
//! vendor has answered 304, so no call holds it across the round trip.

use crate::cache::{cache_key, CachedResponse, HttpCache, Tagged, UpstreamIdentity, Validator};
use crate::mcp::{CallToolResult, ToolAnnotations, ToolDescriptor};
use crate::ports::{header, Gone, Headers};
use crate::render::OutputFormat;
use crate::structured::{Contract, Envelope};
use crate::tools::args::{input_schema, Arguments, Fallback, Field};
use crate::tools::logs::int;
use crate::tools::output::Rendered;
use crate::tools::registry::{Access, ToolContext, ToolError, ToolSpec};
use crate::upstream::{self, RawReply, Target, UpstreamError, UpstreamReply};
use crate::value::{Map, Value};

/// How long a kept answer lives: a wait of ten minutes, then the model reading, fixing and
/// asking again. Only ever served after GitHub says it is current, so its age does not matter.
const TAGGED_TTL_SECONDS: u64 = 3_600;

/// A GET's answer.
pub(crate) struct Fetched {
    /// The decoded body.
    pub(crate) body: Value,
    /// The answer's headers (paging links, rate-limit counters); after a 304, the 304's with
    /// the kept `Link`.
    pub(crate) headers: Headers,
    /// True when the vendor answered 304 Not Modified and the body is the kept copy.
    pub(crate) revalidated: bool,
}

/// A GET of `target` with `query`, decoded; conditional when an answer of the same URL is kept.
pub(crate) async fn get(
    call: &ToolContext<'_>,
    target: &Target,
    query: &[(String, String)],
) -> Result<Fetched, UpstreamError> {
    let cache = HttpCache::new(&call.ports, TAGGED_TTL_SECONDS);
    // Without the credential there is nothing to key on; the client then answers "not
    // configured".
    let vendor = target.vendor;
    let key = call.upstream.endpoint(vendor).map(|endpoint| {
        let identity = UpstreamIdentity::new(vendor.id(), endpoint.credential.identity.expose());
        let url = target.path.url(&endpoint.base_url, query);
        cache_key(call.principal.name(), &identity, &url)
    });
    let kept = match &key {
        Some(key) => cache.lookup_tagged(key).await,
        None => None,
    };
    let mut raw = match &kept {
        Some(kept) => call.upstream.revalidate(target, query, &kept.etag).await?,
        None => call.upstream.send_raw(target, query, None).await?,
    };
    if let (304, Some(kept), Some(key)) = (raw.status, kept, &key) {
        let clock = call.ports.clock;
        match cache.kept(key, &kept.etag).await {
            Ok(Some(response)) => return from_kept(call, target, raw.headers, response, kept),
            Err(busy) => return Err(UpstreamError::busy(target, clock.now_ms(), busy)),
            // Gone, or replaced by another call's answer, since its validator was read.
            Ok(None) => raw = call.upstream.send_raw(target, query, None).await?,
        }
    }
    // A broken JSON body is an error, and never kept.
    let decoded = call.upstream.decode_checked(target, &raw)?;
    let RawReply {
        status,
        headers,
        body,
        received_at_ms,
        ..
    } = raw;
    if let (Some(key), Some(etag)) = (&key, header(&headers, "etag")) {
        let tagged = Tagged {
            validator: Validator {
                etag: etag.to_owned(),
                link: header(&headers, "link").map(str::to_owned),
            },
            response: CachedResponse {
                status,
                content_type: header(&headers, "content-type").map(str::to_owned),
                body,
                fetched_at_ms: received_at_ms,
            },
        };
        cache.store_tagged(key, tagged).await;
    }
    Ok(Fetched {
        body: decoded.value,
        headers,
        revalidated: false,
    })
}

/// The kept answer the vendor just said is current, with the 304's headers (its rate-limit
/// counters) and the kept `Content-Type` and `Link`.
fn from_kept(
    call: &ToolContext<'_>,
    target: &Target,
    mut headers: Headers,
    response: CachedResponse,
    kept: Validator,
) -> Result<Fetched, UpstreamError> {
    for (name, value) in [("Content-Type", response.content_type), ("Link", kept.link)] {
        if let Some(value) = value {
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
            headers.push((name.to_owned(), value));
        }
    }
    let decoded = call
        .upstream
        .decode_bytes(target, response.status, &headers, &response.body)?;
    Ok(Fetched {
        body: decoded.value,
        headers,
        revalidated: true,
    })
}

/// The longest wait a call may ask for, in seconds.
const MAX_WAIT_SECONDS: u64 = 600;
/// `waitSeconds`, the wait every CI-loop read takes.
pub(crate) const WAIT_SECONDS: Field = Field::integer("waitSeconds")
    .max(MAX_WAIT_SECONDS)
    .default(Fallback::Integer(0))
    .describe("Wait up to this long for it to complete.");
/// The first pause between polls; each next one doubles, up to [`MAX_DELAY_MS`].
const FIRST_DELAY_MS: u64 = 5_000;
/// The longest pause between polls.
const MAX_DELAY_MS: u64 = 30_000;
/// The shortest pause a rate limit makes, so a `Retry-After: 0` cannot make a busy loop.
const MIN_PAUSE_MS: u64 = 1_000;

/// How a wait went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Waited {
    /// Whether the run was in a final state at the last poll.
    pub(crate) completed: bool,
    /// Milliseconds from the first poll to the answer.
    pub(crate) waited_ms: u64,
    /// Requests for the run made.
    pub(crate) polls: u64,
    /// Of those, the ones the vendor answered 304 Not Modified.
    pub(crate) revalidated: u64,
    /// Why the wait stopped before the run completed or the time passed, if it did.
    pub(crate) note: Option<String>,
}

impl Waited {
    /// Adds `completed`, `waitedMs`, `polls`, `revalidated` and any `note` to an answer.
    pub(crate) fn write(self, map: &mut Map) {
        map.insert("completed".into(), Value::Bool(self.completed));
        map.insert("waitedMs".into(), int(self.waited_ms));
        map.insert("polls".into(), int(self.polls));
        map.insert("revalidated".into(), int(self.revalidated));
        if let Some(note) = self.note {
            map.insert("note".into(), Value::String(note));
        }
    }
}

/// Polls `target` (a run, a workflow) until `is_final` says it is done or `wait_seconds` (at most
/// [`MAX_WAIT_SECONDS`]) have passed,
/// and answers it as it stands. Pauses double from [`FIRST_DELAY_MS`] to [`MAX_DELAY_MS`], never
/// past the deadline. A rate limit (Retry-After, or no requests remaining until the reset)
/// pauses the wait until it lifts when that is within the time left, and stops it with a note
/// otherwise; any other failure ends the call (the first poll's) or the wait (a later one's,
/// with a note).
pub(crate) async fn wait(
    call: &ToolContext<'_>,
    target: &Target,
    wait_seconds: u64,
    is_final: fn(&Value) -> bool,
) -> Result<(Value, Waited), ToolError> {
    let wait_ms = wait_seconds.min(MAX_WAIT_SECONDS) * 1000;
    let clock = call.ports.clock;
    let start = clock.now_ms();
    let deadline = start.saturating_add(wait_ms);
    let vendor = target.vendor.name();
    let mut delay = FIRST_DELAY_MS;
    let mut waited = Waited::default();
    let mut last: Option<Value> = None;
    let memory = call.ports.memory;
    // What the poll whose value is `last` reserved: the call holds one poll's worth, however
    // many polls it makes.
    let mut last_held = 0;
    loop {
        waited.polls += 1;
        let before = memory.held();
        let polled = get(call, target, &[]).await;
        let taken = memory.held().saturating_sub(before);
        let pause = match polled {
            Ok(reply) => {
                waited.revalidated += u64::from(reply.revalidated);
                waited.completed = is_final(&reply.body);
                last = Some(reply.body);
                // The previous poll's value is gone with it.
                memory.give_back(std::mem::replace(&mut last_held, taken));
                let now = clock.now_ms();
                if waited.completed || now >= deadline {
                    break;
                }
                if told(call, last.as_ref(), &waited, now - start, wait_ms).is_err() {
                    // Nobody is left to read the answer: the polls stop here.
                    waited.note = Some("Stopped waiting: the client went away.".to_owned());
                    break;
                }
                let limited = upstream::error::retry_after_ms(200, &reply.headers, now);
                match limited {
                    Some(ms) if now.saturating_add(ms) > deadline => {
                        waited.note = Some(rate_note(vendor, ms));
                        break;
                    }
                    Some(ms) => ms.max(delay.min(deadline - now)),
                    None => delay.min(deadline - now),
                }
            }
            Err(error) => {
                // A failed poll keeps nothing.
                memory.give_back(taken);
                let now = clock.now_ms();
                match (error.retry_after_ms(), &last) {
                    (Some(ms), _) if now.saturating_add(ms) <= deadline => ms.max(MIN_PAUSE_MS),
                    (None, None) | (Some(_), None) => return Err(error.into()),
                    (Some(ms), Some(_)) => {
                        waited.note = Some(rate_note(vendor, ms));
                        break;
                    }
                    (None, Some(_)) => {
                        waited.note =
                            Some(format!("Stopped waiting: a poll failed. {}", error.text()));
                        break;
                    }
                }
            }
        };
        clock.sleep(pause).await;
        delay = delay.saturating_mul(2).min(MAX_DELAY_MS);
    }
    waited.waited_ms = clock.now_ms().saturating_sub(start);
    // The loop leaves only with a value read, or returns the first poll's error.
    let value = last.ok_or_else(|| ToolError::Internal("wait ended without a run".into()))?;
    Ok((value, waited))
}

/// Tells the client, when it asked for progress, how the wait stands: seconds waited of those
/// asked for, and the status the vendor gave.
fn told(
    call: &ToolContext<'_>,
    value: Option<&Value>,
    waited: &Waited,
    elapsed_ms: u64,
    wait_ms: u64,
) -> Result<(), Gone> {
    let Some(progress) = call.progress else {
        return Ok(());
    };
    let status = value
        .and_then(|v| v.get("status"))
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let message = format!(
        "{status}; {} polls, {} s of {} s",
        waited.polls,
        elapsed_ms / 1000,
        wait_ms / 1000
    );
    progress.report(elapsed_ms / 1000, Some(wait_ms / 1000), &message)
}

fn rate_note(vendor: &str, ms: u64) -> String {
    format!(
        "Stopped waiting: {vendor}'s rate limit lifts in {} s, after the time asked for; call again then.",
        ms.div_ceil(1000)
    )
}

/// The answer: `value` rendered as TOON (the default format; the tools that change or wait
/// for a run take no `outputFormat` or `jq`, their answers being small), with the data-only
/// envelope when the tool has an output schema (`structured`).
pub(crate) async fn respond(
    call: &ToolContext<'_>,
    value: Map,
    structured: bool,
) -> CallToolResult {
    let rendered = Rendered::new(Value::Object(value), OutputFormat::Toon, call.settings);
    let rendered = if structured {
        rendered.with_envelope(Envelope::DataOnly)
    } else {
        rendered
    };
    rendered.finish(call).await
}

/// Sends the write `target` with `body` once, never retried: the vendor's answer, or its failure.
/// A refusal (a run too old or still going, a workflow not in a final state, a missing input...)
/// reads `<Vendor> refused to <what> (HTTP <status>): <its reason>. Nothing was retried.`; other
/// failures (not found, authentication, rate limits, transport) as every error of that vendor.
pub(crate) async fn send_write(
    call: &ToolContext<'_>,
    target: &Target,
    body: Option<&Value>,
    what: &str,
) -> Result<UpstreamReply, ToolError> {
    call.upstream
        .send(target, &[], body)
        .await
        .map_err(|e| refused(what, e))
}

fn refused(what: &str, error: UpstreamError) -> ToolError {
    match (error.status(), error.reason()) {
        (Some(status @ (400 | 403 | 409 | 422)), Some(reason))
            if error.retry_after_ms().is_none() =>
        {
            ToolError::Failed(format!(
                "Error: {} refused to {what} (HTTP {status}): {}. Nothing was retried.",
                error.vendor().name(),
                reason.trim_end_matches('.')
            ))
        }
        _ => ToolError::Upstream(error),
    }
}

/// A CI-loop read's metadata (a run or workflow and its failed jobs): read-only, open-world,
/// with the output schema structured output lists.
pub(crate) fn read_spec<A: Arguments>(name: &str, title: &str, description: &str) -> ToolSpec {
    let annotations = ToolAnnotations {
        title: None,
        ..ToolAnnotations::reads_upstream(title)
    };
    let schema = Some(Contract::Actions.output_schema());
    spec::<A>(name, title, description, schema, annotations)
}

/// A write tool's metadata: not read-only, open-world, `destructive` and `idempotent` as given;
/// text only, as the other write tools (the Atlassian verbs): no output schema to list.
pub(crate) fn write_spec<A: Arguments>(
    name: &str,
    title: &str,
    description: &str,
    (destructive, idempotent): (bool, bool),
) -> ToolSpec {
    let annotations = ToolAnnotations {
        title: None,
        read_only_hint: Some(false),
        destructive_hint: Some(destructive),
        idempotent_hint: Some(idempotent),
        open_world_hint: Some(true),
    };
    spec::<A>(name, title, description, None, annotations)
}

fn spec<A: Arguments>(
    name: &str,
    title: &str,
    description: &str,
    output_schema: Option<serde_json::Value>,
    annotations: ToolAnnotations,
) -> ToolSpec {
    ToolSpec {
        descriptor: ToolDescriptor {
            name: name.into(),
            title: Some(title.into()),
            description: description.into(),
            input_schema: input_schema::<A>(),
            output_schema,
            annotations: Some(annotations),
        },
        access: Access::Rules,
    }
}

/// Adds `failedJobs` to an answer, or, when the job list could not be read, `failedJobs: null`
/// and the reason as `failedJobsError`: the run itself was read, and is worth answering.
pub(crate) fn write_failed_jobs(map: &mut Map, jobs: Result<Value, UpstreamError>) {
    match jobs {
        Ok(jobs) => {
            map.insert("failedJobs".into(), jobs);
        }
        Err(error) => {
            map.insert("failedJobs".into(), Value::Null);
            map.insert("failedJobsError".into(), Value::String(error.text()));
        }
    }
}

/// The number at `key` of an upstream object.
pub(crate) fn number(value: &Value, key: &str) -> Option<u64> {
    match value.get(key) {
        Some(Value::Number(n)) => n.as_i64().and_then(|n| u64::try_from(n).ok()),
        _ => None,
    }
}

/// The text at `key` of an upstream object, or null.
pub(crate) fn text_or_null(value: &Value, key: &str) -> Value {
    value
        .get(key)
        .and_then(Value::as_str)
        .map_or(Value::Null, |t| Value::String(t.to_owned()))
}
