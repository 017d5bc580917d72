//! The core's view of the outside world: upstream HTTP, the cache store, the artifact store, the
//! clock, randomness and the log. The Workers adapter implements these with fetch, KV, R2 and JS
//! globals; [`fake`] implements them in memory for host tests.
//!
//! Workers futures are `!Send`, so every asynchronous method returns a [`LocalBoxFuture`]; that
//! keeps the traits object-safe and the core free of generics over its environment. The three
//! aliases below name the futures by the error they fail with.

#[cfg(any(test, feature = "test-util"))]
pub mod fake;
mod log;

pub use log::{Field, Level, MAX_LINE_BYTES, MAX_VALUE_BYTES};

use crate::ledger::{Op, Reply};
use crate::memory::CallMemory;
use crate::outbound::OutboundUrl;
use futures::future::LocalBoxFuture;
use std::fmt;
use std::rc::Rc;

/// A store's answer: KV, R2 or a Durable Object.
pub type Stored<'a, T> = LocalBoxFuture<'a, Result<T, StoreError>>;
/// A cipher's answer: the sealed or opened bytes.
pub type Ciphered<'a> = LocalBoxFuture<'a, Result<Vec<u8>, CryptoError>>;
/// An upstream exchange's answer.
pub type Exchange<'a, T> = LocalBoxFuture<'a, Result<T, TransportError>>;

/// An HTTP header list: names as sent (compared case-insensitively), in order.
pub(crate) type Headers = Vec<(String, String)>;

/// The first value of header `name` (case-insensitive).
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// A request to an upstream API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamRequest {
    /// HTTP method, upper case.
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Request headers, credentials included.
    pub headers: Headers,
    /// Request body, if any.
    pub body: Option<Vec<u8>>,
    /// Give up after this many milliseconds.
    pub timeout_ms: u64,
}

impl UpstreamRequest {
    /// A GET of a URL a client, a vendor or a document supplied: only a checked [`OutboundUrl`]
    /// is accepted, and its serialization (what the check read) is what is fetched.
    pub fn get(url: &OutboundUrl, headers: Headers, timeout_ms: u64) -> UpstreamRequest {
        UpstreamRequest {
            method: "GET".into(),
            url: url.as_str().to_owned(),
            headers,
            body: None,
            timeout_ms,
        }
    }
}

/// An upstream API's answer. Redirects are returned as they are, never followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamResponse {
    /// HTTP status code.
    pub status: u16,
    /// The reason phrase (`statusText`); reference error texts quote it. Empty when the
    /// upstream sent none (HTTP/2) and the adapter could not tell.
    pub status_text: String,
    /// Response headers.
    pub headers: Headers,
    /// Response body.
    pub body: Vec<u8>,
}

/// Why an upstream request produced no response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportError {
    /// No answer within the request's timeout.
    Timeout,
    /// The body was longer than the caller allowed; carries the limit in bytes.
    TooLarge(usize),
    /// Connection refused, reset, DNS failure and the like; the text is for logs.
    Network(String),
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Timeout => f.write_str("the upstream did not answer in time"),
            TransportError::TooLarge(limit) => {
                write!(f, "the upstream body is larger than {limit} bytes")
            }
            TransportError::Network(detail) => write!(f, "network error: {detail}"),
        }
    }
}

/// A storage port failed (KV or R2 unavailable, quota, timeout); the text is for logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "storage error: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

impl StoreError {
    /// The error of a store whose binding the deployment lacks.
    pub fn missing_binding(binding: &str) -> StoreError {
        StoreError(format!(
            "binding {binding} is not configured in wrangler.toml"
        ))
    }

    /// True for [`StoreError::missing_binding`]: a configuration problem, not a passing one.
    pub(crate) fn is_missing_binding(&self) -> bool {
        self.0.starts_with("binding ") && self.0.ends_with(" is not configured in wrangler.toml")
    }
}

/// Sends requests to upstream APIs.
pub trait UpstreamHttp {
    /// Sends one request and reads at most `max_body` bytes of the response body.
    fn send(&self, request: UpstreamRequest, max_body: usize) -> Exchange<'_, UpstreamResponse>;
    /// Sends one request and returns as soon as the headers are in, with the body to be read
    /// piece by piece (a job log can be far larger than memory). The request's timeout covers
    /// the whole exchange, body included.
    fn open(&self, request: UpstreamRequest) -> Exchange<'_, StreamedResponse>;
}

/// An upstream answer whose body is still to be read.
pub struct StreamedResponse {
    /// HTTP status code.
    pub status: u16,
    /// The reason phrase, as in [`UpstreamResponse::status_text`].
    pub status_text: String,
    /// Response headers.
    pub headers: Headers,
    /// The body; dropping it releases the connection.
    pub body: Box<dyn BodyStream>,
}

/// The body of a [`StreamedResponse`].
pub trait BodyStream {
    /// The next piece of the body, `None` at its end.
    fn next_chunk(&mut self) -> Exchange<'_, Option<Vec<u8>>>;
}

/// One cache entry: the stored bytes and the metadata string written with them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheEntry {
    /// The cached value.
    pub value: Vec<u8>,
    /// Metadata stored beside the value (JSON text chosen by the caller).
    pub metadata: String,
}

/// One cache entry opened for reading: its metadata, and its value not read yet, so that the
/// reader can reserve memory for the value from the metadata first.
pub struct OpenedEntry {
    /// Metadata stored beside the value (JSON text chosen by the caller).
    pub metadata: String,
    /// The value, read piece by piece; dropping it unread releases it.
    pub value: Box<dyn BodyStream>,
}

/// The longest key a [`CacheStore`] takes, in bytes (Workers KV's limit).
pub(crate) const KV_MAX_KEY_BYTES: usize = 512;

/// The longest metadata a [`CacheStore`] takes, in bytes of its JSON string form (Workers KV's
/// limit).
pub(crate) const KV_MAX_METADATA_BYTES: usize = 1024;

/// Refuses a put that KV would refuse for its size. Every [`CacheStore`] checks this before
/// writing, the in-memory one too, so host tests fail where production would.
pub(crate) fn check_kv_put(key: &str, entry: &CacheEntry) -> Result<(), StoreError> {
    if key.len() > KV_MAX_KEY_BYTES {
        return Err(StoreError(format!(
            "KV key longer than {KV_MAX_KEY_BYTES} bytes"
        )));
    }
    let metadata_json = serde_json::to_string(&entry.metadata)
        .map_err(|e| StoreError(format!("KV metadata: {e}")))?;
    if metadata_json.len() > KV_MAX_METADATA_BYTES {
        return Err(StoreError(format!(
            "KV metadata longer than {KV_MAX_METADATA_BYTES} bytes"
        )));
    }
    Ok(())
}

/// A key/value cache whose entries expire (Workers KV in production).
pub trait CacheStore {
    /// The entry at `key`, if present and not expired.
    fn get<'a>(&'a self, key: &'a str) -> Stored<'a, Option<CacheEntry>>;
    /// The entry at `key`, if present and not expired, with its value still unread.
    fn open<'a>(&'a self, key: &'a str) -> Stored<'a, Option<OpenedEntry>>;
    /// Stores `entry` at `key` for `ttl_seconds` (KV's minimum is 60); refuses what
    /// [`check_kv_put`] refuses.
    fn put<'a>(&'a self, key: &'a str, entry: CacheEntry, ttl_seconds: u64) -> Stored<'a, ()>;
    /// Removes the entry at `key`, if any.
    fn delete<'a>(&'a self, key: &'a str) -> Stored<'a, ()>;
    /// The keys starting with `prefix`, at most `limit` of them (KV list: eventually consistent,
    /// so a key written moments ago elsewhere may be missing).
    fn list<'a>(&'a self, prefix: &'a str, limit: usize) -> Stored<'a, Vec<String>>;
}

/// What is known of a stored artifact without reading its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactMeta {
    /// Body size in bytes.
    pub size: u64,
    /// MIME type of the body.
    pub content_type: String,
    /// Custom metadata (owner, expiry, ...), as stored.
    pub custom: Vec<(String, String)>,
}

/// A byte range of an artifact, with its metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactChunk {
    /// The bytes of the requested range (shorter at the end of the object).
    pub bytes: Vec<u8>,
    /// The artifact's metadata.
    pub(crate) meta: ArtifactMeta,
}

/// An object store for oversized results (Workers R2 in production).
pub trait ArtifactStore {
    /// Stores `bytes` at `key` with `meta` (its `size` is ignored and taken from `bytes`).
    fn put<'a>(&'a self, key: &'a str, bytes: Vec<u8>, meta: ArtifactMeta) -> Stored<'a, ()>;
    /// Reads `length` bytes from `offset`; `None` when there is no such object.
    fn get_range<'a>(
        &'a self,
        key: &'a str,
        offset: u64,
        length: u64,
    ) -> Stored<'a, Option<ArtifactChunk>>;
    /// The metadata of the object at `key`, if any.
    fn head<'a>(&'a self, key: &'a str) -> Stored<'a, Option<ArtifactMeta>>;
    /// Stores at `key` the `len` bytes `fill` writes a piece at a time (it appends the next piece
    /// to the empty buffer it is given and returns false after the last), with `meta` (its `size`
    /// is ignored). Fails, storing nothing, when the pieces do not add up to `len` bytes, as a
    /// stream of known length does. This default collects the pieces and [puts](Self::put)
    /// them; the R2 store streams them, holding one piece at a time.
    fn put_pieces<'a>(
        &'a self,
        key: &'a str,
        len: u64,
        fill: &'a mut dyn FnMut(&mut String) -> bool,
        meta: ArtifactMeta,
    ) -> Stored<'a, ()> {
        Box::pin(async move {
            let mut all = String::new();
            let mut piece = String::new();
            loop {
                piece.clear();
                let more = fill(&mut piece);
                all.push_str(&piece);
                if !more {
                    break;
                }
            }
            if all.len() as u64 != len {
                return Err(StoreError(format!(
                    "{} bytes written where {len} were declared",
                    all.len()
                )));
            }
            self.put(key, all.into_bytes(), meta).await
        })
    }
    /// Starts writing the object at `key` in parts (R2 multipart upload), for bodies too large
    /// to hold at once; `meta.size` is ignored. Every part but the last must have the same
    /// length, at least [`MIN_PART_BYTES`].
    fn begin_upload(&self, key: String, meta: ArtifactMeta)
        -> Stored<'_, Box<dyn PartUpload + '_>>;
}

/// R2's smallest part (except the last) of a multipart upload.
pub(crate) const MIN_PART_BYTES: usize = 5 * 1024 * 1024;

/// An object being written in parts; nothing is readable until [`PartUpload::complete`].
pub trait PartUpload {
    /// Uploads the next part.
    fn put_part(&mut self, bytes: Vec<u8>) -> Stored<'_, ()>;
    /// Makes the object readable from the parts uploaded, in order.
    fn complete(&mut self) -> Stored<'_, ()>;
    /// Gives up, discarding the parts.
    fn abort(&mut self) -> Stored<'_, ()>;
}

/// What reading a request body gave.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BodyRead {
    /// The body, empty when it was longer than the limit.
    pub bytes: Vec<u8>,
    /// True when the body was longer than the limit the reader was given.
    pub too_large: bool,
    /// True when the body stopped before its end: the connection failed or closed mid-body.
    pub cut_short: bool,
    /// True when reading stopped for want of room: the [`BodyRoom`] refused the next piece.
    pub no_room: bool,
}

/// Room for a request body while it is read, asked before each piece of it is kept.
pub trait BodyRoom {
    /// Whether the body may be `total` bytes long; waits briefly for room, false when there is
    /// none.
    fn grow(&self, total: usize) -> LocalBoxFuture<'_, bool>;
}

/// The body of the incoming request, read only once a route needs it: a `POST /mcp` is
/// authenticated from its headers first, so a request without valid credentials is answered
/// without its body (up to the size limit, and more drained past it) ever being read.
pub trait RequestBody {
    /// Reads the body when it is at most `limit` bytes, each piece kept only once `room` has
    /// grown to hold it; a longer one is flagged `too_large` and not kept. Called at most once
    /// per request.
    fn read<'a>(&'a self, limit: usize, room: &'a dyn BodyRoom) -> LocalBoxFuture<'a, BodyRead>;
}

/// The client went away: nothing more reaches it, and work on its behalf may stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gone;

/// The reply of the request being served, sent while it is still being made: its head at once,
/// then its body in pieces (Server-Sent Events). Given by the adapter to a request that may
/// stream; a call that reports progress starts it.
pub trait ReplyStream {
    /// Sends the reply's head now (status 200 and `headers`); at most once, later calls do
    /// nothing.
    fn start(&self, headers: Headers);
    /// Sends `bytes` of the body; `Err(Gone)` once the client has gone away.
    fn send(&self, bytes: Vec<u8>) -> Result<(), Gone>;
}

/// Where a tool reports how far it has got (MCP `notifications/progress`), given to a call whose
/// client asked for progress and reads the reply as a stream.
pub trait Progress {
    /// Reports `done` of `total` (when known) with `message`; `Err(Gone)` once the client has
    /// gone away, when the call should stop.
    fn report(&self, done: u64, total: Option<u64>, message: &str) -> Result<(), Gone>;
}

/// The approval ledger (a Durable Object in production): applies one [`ledger::Op`] at a time
/// to the one book of approvals, so that each op is atomic across every isolate and location.
///
/// [`ledger::Op`]: crate::ledger::Op
pub trait ApprovalStore {
    /// Applies `op` and returns its reply; an `Err` when the store could not be reached.
    fn apply(&self, op: Op) -> Stored<'_, Reply>;
}

/// What a [`ClaimStore::claim`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Nobody held the key: the caller now does.
    First,
    /// The key was claimed before, by the holder named here.
    Taken(String),
}

/// First-claim-wins markers (a Durable Object per key in production): of every claim of one key
/// within its lifetime, in any isolate or location, exactly one is [`Claim::First`]. One-time
/// credentials are spent through it, since KV has no compare-and-set.
pub trait ClaimStore {
    /// Claims `key` for `holder` for `ttl_seconds` from now; an `Err` when the store could not be
    /// reached, which the caller must treat as not claimed.
    fn claim<'a>(&'a self, key: &'a str, holder: &'a str, ttl_seconds: u64) -> Stored<'a, Claim>;

    /// The holder of `key` while its claim lasts, without claiming it; an `Err` when the store
    /// could not be reached.
    fn holder<'a>(&'a self, key: &'a str) -> Stored<'a, Option<String>>;
}

/// Wall-clock time, and timers.
pub trait Clock {
    /// Milliseconds since the Unix epoch, UTC.
    fn now_ms(&self) -> u64;
    /// Completes after `ms` milliseconds.
    fn sleep(&self, ms: u64) -> LocalBoxFuture<'_, ()>;
}

/// Cryptographically secure randomness.
pub trait Rng {
    /// Fills `buf` with random bytes.
    fn fill(&self, buf: &mut [u8]);
}

/// Why a cipher operation failed: a sealed value that was tampered with, sealed under another
/// key or for another record, or a runtime without the algorithm. The text is for logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CryptoError(pub String);

impl fmt::Display for CryptoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "crypto error: {}", self.0)
    }
}

/// Authenticated encryption of small values at rest (WebCrypto AES-256-GCM in production).
pub trait Cipher {
    /// Encrypts `plain` under `key`, binding `context` (authenticated, not stored); the
    /// result carries its own random nonce.
    fn seal<'a>(&'a self, key: &'a [u8; 32], context: &'a [u8], plain: &'a [u8]) -> Ciphered<'a>;
    /// Decrypts what [`Cipher::seal`] produced with the same key and context; any other input
    /// is an error, never garbage.
    fn open<'a>(&'a self, key: &'a [u8; 32], context: &'a [u8], sealed: &'a [u8]) -> Ciphered<'a>;
}

/// Work that goes on after the response is sent (`ctx.waitUntil` in Workers): the runtime keeps
/// the request alive until each task ends, so a task owns everything it uses.
pub trait Background {
    /// The artifact store, owned, for a task that outlives the request's borrowed ports.
    fn artifacts(&self) -> Rc<dyn ArtifactStore>;
    /// The log, owned likewise.
    fn log(&self) -> Rc<dyn Log>;
    /// Runs `task` to its end, its start deferred so that it does not compete with sending the
    /// response (the runtime does not say when the response is gone).
    fn spawn(&self, task: LocalBoxFuture<'static, ()>);
}

/// Where diagnostic lines go (`console.log` in Workers). Lines are single-line JSON objects and
/// never contain credentials.
pub trait Log {
    /// Writes one finished line; the core writes through [`Log::event`].
    fn line(&self, line: &str);

    /// Writes `event` at `level` with `fields`, bounded in size (see [`MAX_LINE_BYTES`]).
    fn event(&self, level: Level, event: &str, fields: &[(&str, Field<'_>)]) {
        self.line(&log::format(level, event, fields));
    }
}

/// Admission of anonymous requests that cost work (client registrations, authorizations), counted
/// per caller address by the runtime's own limiter (the Workers Rate Limiting binding).
pub trait RateLimit {
    /// Whether one more request under `key` stays within the limit; `Err` when no limiter is
    /// bound or it could not answer.
    fn admit<'a>(&'a self, key: &'a str) -> Stored<'a, bool>;
}

/// The worker's settings (secrets first, then vars), read by name at request time: a policy held
/// in KV names the secrets of its identities, which are only known once it is read.
pub trait Settings {
    /// The setting `name`, if set.
    fn get(&self, name: &str) -> Option<String>;
}

/// Everything the core needs from its environment, borrowed for one request.
#[derive(Clone, Copy)]
pub struct Ports<'a> {
    /// Upstream HTTP.
    pub http: &'a dyn UpstreamHttp,
    /// The HTTP cache (KV `HTTP_CACHE`).
    pub cache: &'a dyn CacheStore,
    /// Policy state (KV `POLICY`): a KV-held policy document.
    pub state: &'a dyn CacheStore,
    /// Approvals (the Durable Object `APPROVALS`).
    pub approvals: &'a dyn ApprovalStore,
    /// Sign-in state (KV `OAUTH`): clients, pending authorizations, codes, grants and token
    /// hashes. Writes complete before the call returns.
    pub oauth: &'a dyn CacheStore,
    /// One-time sign-in credentials spent exactly once (the Durable Object `CLAIMS`).
    pub claims: &'a dyn ClaimStore,
    /// Encryption at rest of what a grant carries (upstream tokens).
    pub cipher: &'a dyn Cipher,
    /// The per-address limit on anonymous sign-in requests (`OAUTH_RATE_LIMIT`).
    pub limiter: &'a dyn RateLimit,
    /// Settings by name.
    pub settings: &'a dyn Settings,
    /// The artifact store (R2 `ARTIFACTS`).
    pub artifacts: &'a dyn ArtifactStore,
    /// The clock.
    pub clock: &'a dyn Clock,
    /// Randomness.
    pub rng: &'a dyn Rng,
    /// The log.
    pub log: &'a dyn Log,
    /// Where work that need not delay the response goes; `None` where every write completes
    /// before the call returns.
    pub background: Option<&'a dyn Background>,
}

impl<'a> Ports<'a> {
    /// What one tool call may use, its upstream bodies and buffers reserved on `memory`.
    pub fn for_call(&self, memory: &'a CallMemory) -> CallPorts<'a> {
        CallPorts {
            cache: self.cache,
            approvals: self.approvals,
            artifacts: self.artifacts,
            clock: self.clock,
            rng: self.rng,
            log: self.log,
            memory,
            background: self.background,
        }
    }
}

/// What one tool call may use of the outside world, built by the server for each call. No
/// sign-in state, secrets, settings or raw HTTP: a tool reaches a vendor only through the
/// call's `upstream::Client`, which holds what sending needs.
#[derive(Clone, Copy)]
pub struct CallPorts<'a> {
    /// The call's memory reservations, which the bodies it reads and the buffers it reads
    /// through are held under.
    pub memory: &'a CallMemory,
    /// The artifact store (R2 `ARTIFACTS`).
    pub artifacts: &'a dyn ArtifactStore,
    /// The HTTP cache (KV `HTTP_CACHE`).
    pub cache: &'a dyn CacheStore,
    /// Where the call's artifact goes when the reply does not need it; `None` where every
    /// write completes before the call returns.
    pub background: Option<&'a dyn Background>,
    /// Approvals (the Durable Object `APPROVALS`), which the approval tools list and
    /// decide.
    pub approvals: &'a dyn ApprovalStore,
    /// The clock.
    pub clock: &'a dyn Clock,
    /// Randomness (artifact ids, approval ids).
    pub rng: &'a dyn Rng,
    /// The log.
    pub log: &'a dyn Log,
}
