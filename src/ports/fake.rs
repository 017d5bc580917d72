//! In-memory implementations of the ports for host tests (feature `test-util`).
//!
//! They behave like the real stores where tests depend on it (expiry, ranged reads, missing
//! keys) and can be told to fail, so error paths are testable without Workers.

use super::*;
use crate::memory::{CallMemory, MemoryBudget};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// A clock that only moves when told to. Clones share the same time; a sleep ends when the
/// clock is moved past its end.
#[derive(Clone, Default)]
pub struct ManualClock {
    now: Rc<Cell<u64>>,
    sleepers: Rc<RefCell<Vec<std::task::Waker>>>,
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ManualClock").field(&self.now.get()).finish()
    }
}

impl ManualClock {
    /// A clock reading `now_ms`.
    pub(crate) fn at(now_ms: u64) -> ManualClock {
        ManualClock {
            now: Rc::new(Cell::new(now_ms)),
            sleepers: Rc::default(),
        }
    }

    /// Moves the clock forward, ending the sleeps it passes.
    pub fn advance(&self, ms: u64) {
        self.now.set(self.now.get() + ms);
        for waker in std::mem::take(&mut *self.sleepers.borrow_mut()) {
            waker.wake();
        }
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.get()
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'_, ()> {
        let end = self.now.get().saturating_add(ms);
        Box::pin(std::future::poll_fn(move |cx| {
            if self.now.get() >= end {
                return std::task::Poll::Ready(());
            }
            self.sleepers.borrow_mut().push(cx.waker().clone());
            std::task::Poll::Pending
        }))
    }
}

/// Pending once, waking itself, so that the other futures of a join run before the next step.
pub struct YieldOnce(bool);

/// A [`YieldOnce`] not yet polled.
pub fn yield_once() -> YieldOnce {
    YieldOnce(false)
}

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// Deterministic "randomness": a counter-driven xorshift, so ids differ but tests repeat.
#[derive(Debug)]
pub struct SeededRng(Cell<u64>);

impl SeededRng {
    /// A generator starting from `seed` (zero is replaced by a fixed non-zero seed).
    pub fn new(seed: u64) -> SeededRng {
        SeededRng(Cell::new(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        }))
    }
}

impl Rng for SeededRng {
    fn fill(&self, buf: &mut [u8]) {
        for b in buf {
            let mut x = self.0.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0.set(x);
            *b = (x >> 24) as u8;
        }
    }
}

/// A log that keeps its lines for assertions. Clones share the lines.
#[derive(Clone, Debug, Default)]
pub struct MemoryLog(Rc<RefCell<Vec<String>>>);

impl MemoryLog {
    /// All lines written so far.
    pub fn lines(&self) -> Vec<String> {
        self.0.borrow().clone()
    }
}

impl Log for MemoryLog {
    fn line(&self, line: &str) {
        self.0.borrow_mut().push(line.to_owned());
    }
}

/// A cache in memory with expiry read from a shared [`ManualClock`]; can be set to fail.
#[derive(Debug, Default)]
pub struct MemoryCache {
    clock: ManualClock,
    entries: RefCell<HashMap<String, (CacheEntry, u64)>>,
    /// When true, every call fails with a [`StoreError`].
    pub failing: Cell<bool>,
    /// When true, every call first yields once, as a network store does, so that the other
    /// futures of a join run between one call's start and its effect.
    pub(crate) yielding: Cell<bool>,
    /// Bytes of values handed out by the streams [`CacheStore::open`] returned.
    pub(crate) values_read: Rc<Cell<usize>>,
}

impl MemoryCache {
    /// A cache whose entries expire by `clock`.
    pub fn new(clock: ManualClock) -> MemoryCache {
        MemoryCache {
            clock,
            ..MemoryCache::default()
        }
    }

    /// The keys currently stored (expired ones included until read).
    pub fn keys(&self) -> Vec<String> {
        self.entries.borrow().keys().cloned().collect()
    }

    /// Every stored key with its value (expired ones included until read), for checking what a
    /// store keeps at rest.
    pub fn dump(&self) -> Vec<(String, Vec<u8>)> {
        self.entries
            .borrow()
            .iter()
            .map(|(k, (entry, _))| (k.clone(), entry.value.clone()))
            .collect()
    }

    async fn check(&self) -> Result<(), StoreError> {
        if self.yielding.get() {
            yield_once().await;
        }
        if self.failing.get() {
            Err(StoreError("cache unavailable (injected)".into()))
        } else {
            Ok(())
        }
    }
}

impl CacheStore for MemoryCache {
    fn get<'a>(&'a self, key: &'a str) -> Stored<'a, Option<CacheEntry>> {
        Box::pin(async move {
            self.check().await?;
            let now = self.clock.now_ms();
            let mut entries = self.entries.borrow_mut();
            match entries.get(key) {
                Some((_, expires)) if *expires <= now => {
                    entries.remove(key);
                    Ok(None)
                }
                Some((entry, _)) => Ok(Some(entry.clone())),
                None => Ok(None),
            }
        })
    }

    fn open<'a>(&'a self, key: &'a str) -> Stored<'a, Option<OpenedEntry>> {
        Box::pin(async move {
            let Some(entry) = self.get(key).await? else {
                return Ok(None);
            };
            let value = StoredValue {
                rest: entry.value,
                read: Rc::clone(&self.values_read),
            };
            Ok(Some(OpenedEntry {
                metadata: entry.metadata,
                value: Box::new(value),
            }))
        })
    }

    fn put<'a>(&'a self, key: &'a str, entry: CacheEntry, ttl_seconds: u64) -> Stored<'a, ()> {
        Box::pin(async move {
            self.check().await?;
            check_kv_put(key, &entry)?;
            let expires = self.clock.now_ms() + ttl_seconds * 1000;
            self.entries
                .borrow_mut()
                .insert(key.to_owned(), (entry, expires));
            Ok(())
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> Stored<'a, ()> {
        Box::pin(async move {
            self.check().await?;
            self.entries.borrow_mut().remove(key);
            Ok(())
        })
    }

    fn list<'a>(&'a self, prefix: &'a str, limit: usize) -> Stored<'a, Vec<String>> {
        Box::pin(async move {
            self.check().await?;
            let now = self.clock.now_ms();
            // KV lists keys in lexicographic order and leaves out expired ones.
            let mut keys: Vec<String> = self
                .entries
                .borrow()
                .iter()
                .filter(|(k, (_, expires))| k.starts_with(prefix) && *expires > now)
                .map(|(k, _)| k.clone())
                .collect();
            keys.sort_unstable();
            keys.truncate(limit);
            Ok(keys)
        })
    }
}

/// A stored value handed out in pieces of at most 64 KiB, counting what it hands out.
struct StoredValue {
    rest: Vec<u8>,
    read: Rc<Cell<usize>>,
}

impl BodyStream for StoredValue {
    fn next_chunk(&mut self) -> Exchange<'_, Option<Vec<u8>>> {
        let len = self.rest.len().min(64 * 1024);
        let piece = (len > 0).then(|| self.rest.drain(..len).collect::<Vec<u8>>());
        self.read.set(self.read.get() + len);
        Box::pin(async move { Ok(piece) })
    }
}

/// Settings from a map, changeable during a test.
#[derive(Debug, Default)]
pub struct MemorySettings(RefCell<HashMap<String, String>>);

impl MemorySettings {
    /// Sets `name` to `value`.
    pub fn set(&self, name: &str, value: &str) {
        self.0
            .borrow_mut()
            .insert(name.to_owned(), value.to_owned());
    }
}

impl Settings for MemorySettings {
    fn get(&self, name: &str) -> Option<String> {
        self.0.borrow().get(name).cloned()
    }
}

/// Stored objects by key.
type Objects = HashMap<String, (Vec<u8>, ArtifactMeta)>;

/// An object store in memory; can be set to fail. Clones share the objects.
#[derive(Clone, Debug, Default)]
pub struct MemoryArtifacts {
    objects: Rc<RefCell<Objects>>,
    /// When true, every call fails with a [`StoreError`].
    pub failing: Rc<Cell<bool>>,
}

impl MemoryArtifacts {
    /// The keys currently stored.
    pub fn keys(&self) -> Vec<String> {
        self.objects.borrow().keys().cloned().collect()
    }

    /// Every stored key with its bytes, for checking what the store keeps.
    pub fn dump(&self) -> Vec<(String, Vec<u8>)> {
        self.objects
            .borrow()
            .iter()
            .map(|(k, (bytes, _))| (k.clone(), bytes.clone()))
            .collect()
    }

    fn check(&self) -> Result<(), StoreError> {
        if self.failing.get() {
            Err(StoreError("artifact store unavailable (injected)".into()))
        } else {
            Ok(())
        }
    }
}

impl ArtifactStore for MemoryArtifacts {
    fn put<'a>(&'a self, key: &'a str, bytes: Vec<u8>, mut meta: ArtifactMeta) -> Stored<'a, ()> {
        Box::pin(async move {
            self.check()?;
            meta.size = bytes.len() as u64;
            self.objects
                .borrow_mut()
                .insert(key.to_owned(), (bytes, meta));
            Ok(())
        })
    }

    fn get_range<'a>(
        &'a self,
        key: &'a str,
        offset: u64,
        length: u64,
    ) -> Stored<'a, Option<ArtifactChunk>> {
        Box::pin(async move {
            self.check()?;
            let objects = self.objects.borrow();
            Ok(objects.get(key).map(|(bytes, meta)| {
                let start = (offset as usize).min(bytes.len());
                let end = start.saturating_add(length as usize).min(bytes.len());
                ArtifactChunk {
                    bytes: bytes[start..end].to_vec(),
                    meta: meta.clone(),
                }
            }))
        })
    }

    fn head<'a>(&'a self, key: &'a str) -> Stored<'a, Option<ArtifactMeta>> {
        Box::pin(async move {
            self.check()?;
            Ok(self.objects.borrow().get(key).map(|(_, m)| m.clone()))
        })
    }

    fn begin_upload(
        &self,
        key: String,
        meta: ArtifactMeta,
    ) -> Stored<'_, Box<dyn PartUpload + '_>> {
        Box::pin(async move {
            self.check()?;
            let upload: Box<dyn PartUpload + '_> = Box::new(MemoryUpload {
                store: self,
                key,
                meta,
                parts: Vec::new(),
            });
            Ok(upload)
        })
    }
}

/// A multipart upload into [`MemoryArtifacts`], checking R2's rules on part sizes.
struct MemoryUpload<'a> {
    store: &'a MemoryArtifacts,
    key: String,
    meta: ArtifactMeta,
    parts: Vec<Vec<u8>>,
}

impl PartUpload for MemoryUpload<'_> {
    fn put_part(&mut self, bytes: Vec<u8>) -> Stored<'_, ()> {
        Box::pin(async move {
            self.store.check()?;
            self.parts.push(bytes);
            Ok(())
        })
    }

    fn complete(&mut self) -> Stored<'_, ()> {
        Box::pin(async move {
            self.store.check()?;
            let (last, rest) = self
                .parts
                .split_last()
                .ok_or_else(|| StoreError("a multipart upload needs a part".into()))?;
            let first = rest.first().map_or(last.len(), Vec::len);
            if rest
                .iter()
                .any(|p| p.len() != first || p.len() < MIN_PART_BYTES)
            {
                return Err(StoreError(
                    "parts before the last must be of one size, at least 5 MiB".into(),
                ));
            }
            let body = self.parts.concat();
            self.parts.clear();
            self.store.put(&self.key, body, self.meta.clone()).await
        })
    }

    fn abort(&mut self) -> Stored<'_, ()> {
        self.parts.clear();
        Box::pin(async { Ok(()) })
    }
}

type Responder = dyn Fn(&UpstreamRequest) -> Result<UpstreamResponse, TransportError>;

/// An upstream that answers from a closure and records every request it was sent.
pub struct ScriptedHttp {
    respond: Box<Responder>,
    sent: RefCell<Vec<UpstreamRequest>>,
    /// The size of the pieces [`UpstreamHttp::open`] hands a body out in.
    pub chunk_bytes: Cell<usize>,
    /// Pieces of streamed bodies handed out so far.
    pub chunks_read: Rc<Cell<usize>>,
}

impl ScriptedHttp {
    /// An upstream answering with `respond`.
    pub fn new(
        respond: impl Fn(&UpstreamRequest) -> Result<UpstreamResponse, TransportError> + 'static,
    ) -> ScriptedHttp {
        ScriptedHttp {
            respond: Box::new(respond),
            sent: RefCell::new(Vec::new()),
            chunk_bytes: Cell::new(4096),
            chunks_read: Rc::new(Cell::new(0)),
        }
    }

    /// An upstream that must not be called: every request is a network error.
    pub fn unreachable() -> ScriptedHttp {
        ScriptedHttp::new(|_| Err(TransportError::Network("no upstream in this test".into())))
    }

    /// The requests sent so far.
    pub fn sent(&self) -> Vec<UpstreamRequest> {
        self.sent.borrow().clone()
    }
}

impl UpstreamHttp for ScriptedHttp {
    fn send(&self, request: UpstreamRequest, max_body: usize) -> Exchange<'_, UpstreamResponse> {
        let result = (self.respond)(&request).and_then(|r| {
            if r.body.len() > max_body {
                Err(TransportError::TooLarge(max_body))
            } else {
                Ok(r)
            }
        });
        self.sent.borrow_mut().push(request);
        Box::pin(async move { result })
    }

    fn open(&self, request: UpstreamRequest) -> Exchange<'_, StreamedResponse> {
        let result = (self.respond)(&request).map(|r| StreamedResponse {
            status: r.status,
            status_text: r.status_text,
            headers: r.headers,
            body: Box::new(ChunkedBody {
                body: r.body,
                at: 0,
                chunk: self.chunk_bytes.get().max(1),
                read: self.chunks_read.clone(),
            }),
        });
        self.sent.borrow_mut().push(request);
        Box::pin(async move { result })
    }
}

/// A scripted body handed out in fixed-size pieces.
struct ChunkedBody {
    body: Vec<u8>,
    at: usize,
    chunk: usize,
    read: Rc<Cell<usize>>,
}

impl BodyStream for ChunkedBody {
    fn next_chunk(&mut self) -> Exchange<'_, Option<Vec<u8>>> {
        let end = self.at.saturating_add(self.chunk).min(self.body.len());
        let piece = (end > self.at).then(|| self.body[self.at..end].to_vec());
        self.at = end;
        if piece.is_some() {
            self.read.set(self.read.get() + 1);
        }
        Box::pin(async move { Ok(piece) })
    }
}

/// An authenticated stream cipher built from SHA-256, standing in for AES-GCM on the host: it
/// fails where AES-GCM fails (another key, another context, any altered byte), so the code above
/// it is tested for those cases, but it is no substitute for AES-GCM anywhere else.
#[derive(Debug, Default)]
pub struct HashCipher {
    nonces: Cell<u64>,
}

const HASH_CIPHER_NONCE: usize = 12;
const HASH_CIPHER_TAG: usize = 16;

impl HashCipher {
    fn keystream(key: &[u8; 32], nonce: &[u8], len: usize) -> Vec<u8> {
        use sha2::{Digest, Sha256};
        let mut out = Vec::with_capacity(len + 32);
        let mut counter = 0u32;
        while out.len() < len {
            let mut h = Sha256::new();
            h.update(key);
            h.update(nonce);
            h.update(counter.to_be_bytes());
            out.extend_from_slice(&h.finalize());
            counter += 1;
        }
        out.truncate(len);
        out
    }

    fn tag(key: &[u8; 32], context: &[u8], nonce: &[u8], body: &[u8]) -> Vec<u8> {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"tag");
        h.update(key);
        h.update((context.len() as u64).to_be_bytes());
        h.update(context);
        h.update(nonce);
        h.update(body);
        h.finalize()[..HASH_CIPHER_TAG].to_vec()
    }
}

/// A limiter that admits `limit` requests per key (every request while no limit is set), and
/// fails like an absent binding when `unbound` is set.
#[derive(Debug, Default)]
pub struct CountingLimiter {
    /// Requests admitted per key; `None` admits all.
    pub(crate) limit: Cell<Option<u32>>,
    /// Answer every request with an error, as a deployment without the binding does.
    pub(crate) unbound: Cell<bool>,
    counts: RefCell<HashMap<String, u32>>,
}

impl CountingLimiter {
    /// Admits `limit` requests per key from now on.
    pub fn limit_to(&self, limit: u32) {
        self.limit.set(Some(limit));
    }
}

impl RateLimit for CountingLimiter {
    fn admit<'a>(&'a self, key: &'a str) -> Stored<'a, bool> {
        let answer = if self.unbound.get() {
            Err(StoreError("no rate limiter is bound".into()))
        } else {
            let mut counts = self.counts.borrow_mut();
            let seen = counts.entry(key.to_owned()).or_default();
            *seen += 1;
            Ok(self.limit.get().is_none_or(|limit| *seen <= limit))
        };
        Box::pin(async move { answer })
    }
}

impl Cipher for HashCipher {
    fn seal<'a>(&'a self, key: &'a [u8; 32], context: &'a [u8], plain: &'a [u8]) -> Ciphered<'a> {
        let n = self.nonces.get() + 1;
        self.nonces.set(n);
        let mut nonce = [0u8; HASH_CIPHER_NONCE];
        nonce[4..].copy_from_slice(&n.to_be_bytes());
        let body: Vec<u8> = plain
            .iter()
            .zip(Self::keystream(key, &nonce, plain.len()))
            .map(|(p, k)| p ^ k)
            .collect();
        let mut sealed = nonce.to_vec();
        sealed.extend_from_slice(&body);
        sealed.extend(Self::tag(key, context, &nonce, &body));
        Box::pin(async move { Ok(sealed) })
    }

    fn open<'a>(&'a self, key: &'a [u8; 32], context: &'a [u8], sealed: &'a [u8]) -> Ciphered<'a> {
        let result = if sealed.len() < HASH_CIPHER_NONCE + HASH_CIPHER_TAG {
            Err(CryptoError("sealed value too short".into()))
        } else {
            let (nonce, rest) = sealed.split_at(HASH_CIPHER_NONCE);
            let (body, tag) = rest.split_at(rest.len() - HASH_CIPHER_TAG);
            if Self::tag(key, context, nonce, body) != tag {
                Err(CryptoError("authentication failed".into()))
            } else {
                Ok(body
                    .iter()
                    .zip(Self::keystream(key, nonce, body.len()))
                    .map(|(c, k)| c ^ k)
                    .collect())
            }
        };
        Box::pin(async move { result })
    }
}

/// The approval ledger in memory: one [`MemoryLedger`](crate::ledger::MemoryLedger), each op
/// sent through JSON as it is to the Durable Object; can be set to fail like an unreachable or
/// unbound store.
#[derive(Debug)]
pub struct MemoryApprovals {
    ledger: RefCell<crate::ledger::MemoryLedger>,
    fail: RefCell<Option<StoreError>>,
    ops: Cell<usize>,
}

impl Default for MemoryApprovals {
    /// An empty ledger with the default byte bound.
    fn default() -> Self {
        MemoryApprovals {
            ledger: RefCell::new(crate::ledger::MemoryLedger::new(
                crate::ledger::DEFAULT_LEDGER_MAX_BYTES,
            )),
            fail: RefCell::default(),
            ops: Cell::default(),
        }
    }
}

impl MemoryApprovals {
    /// From now on every op fails with `error` (`None`: works again).
    pub fn fail_with(&self, error: Option<StoreError>) {
        *self.fail.borrow_mut() = error;
    }

    /// How many records it holds.
    pub fn len(&self) -> usize {
        self.ledger.borrow().book().len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.ledger.borrow().book().is_empty()
    }

    /// How many ops were applied.
    pub fn ops(&self) -> usize {
        self.ops.get()
    }
}

impl ApprovalStore for MemoryApprovals {
    fn apply(&self, op: Op) -> Stored<'_, Reply> {
        let result = match self.fail.borrow().clone() {
            Some(error) => Err(error),
            None => {
                self.ops.set(self.ops.get() + 1);
                let wire = serde_json::to_string(&op).map_err(|e| StoreError(e.to_string()));
                wire.and_then(|text| {
                    let op = serde_json::from_str(&text).map_err(|e| StoreError(e.to_string()))?;
                    let reply = self
                        .ledger
                        .borrow_mut()
                        .apply(op)
                        .map_err(|e| StoreError(e.to_string()))?;
                    let text =
                        serde_json::to_string(&reply).map_err(|e| StoreError(e.to_string()))?;
                    serde_json::from_str(&text).map_err(|e| StoreError(e.to_string()))
                })
            }
        };
        Box::pin(async move { result })
    }
}

/// First-claim-wins markers in memory, expiring by a shared [`ManualClock`]; can be set to fail
/// like an unreachable or unbound store.
#[derive(Debug, Default)]
pub struct MemoryClaims {
    clock: ManualClock,
    held: RefCell<HashMap<String, (String, u64)>>,
    fail: RefCell<Option<StoreError>>,
}

impl MemoryClaims {
    /// Markers that expire by `clock`.
    pub fn new(clock: ManualClock) -> MemoryClaims {
        MemoryClaims {
            clock,
            ..MemoryClaims::default()
        }
    }

    /// From now on every claim fails with `error` (`None`: works again).
    #[cfg(test)]
    pub fn fail_with(&self, error: Option<StoreError>) {
        *self.fail.borrow_mut() = error;
    }
}

impl ClaimStore for MemoryClaims {
    fn claim<'a>(&'a self, key: &'a str, holder: &'a str, ttl_seconds: u64) -> Stored<'a, Claim> {
        let result = match self.fail.borrow().clone() {
            Some(error) => Err(error),
            None => {
                let now = self.clock.now_ms();
                let mut held = self.held.borrow_mut();
                match held.get(key) {
                    Some((first, expires)) if *expires > now => Ok(Claim::Taken(first.clone())),
                    _ => {
                        held.insert(
                            key.to_owned(),
                            (holder.to_owned(), now + ttl_seconds * 1000),
                        );
                        Ok(Claim::First)
                    }
                }
            }
        };
        Box::pin(async move { result })
    }

    fn holder<'a>(&'a self, key: &'a str) -> Stored<'a, Option<String>> {
        let result = match self.fail.borrow().clone() {
            Some(error) => Err(error),
            None => {
                let now = self.clock.now_ms();
                Ok(self
                    .held
                    .borrow()
                    .get(key)
                    .filter(|(_, expires)| *expires > now)
                    .map(|(holder, _)| holder.clone()))
            }
        };
        Box::pin(async move { result })
    }
}

/// Background work held until the test runs it, over the same artifacts and log as the
/// [`FakeEnv`] it belongs to.
pub struct FakeBackground {
    artifacts: MemoryArtifacts,
    log: MemoryLog,
    tasks: RefCell<Vec<LocalBoxFuture<'static, ()>>>,
}

impl FakeBackground {
    /// Tasks spawned and not yet finished.
    pub fn pending(&self) -> usize {
        self.tasks.borrow().len()
    }

    /// Polls every task spawned so far once, keeping those that have not finished (the
    /// in-memory stores finish in one poll).
    pub fn run(&self) {
        let tasks = std::mem::take(&mut *self.tasks.borrow_mut());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let left: Vec<_> = tasks
            .into_iter()
            .filter_map(|mut task| task.as_mut().poll(&mut cx).is_pending().then_some(task))
            .collect();
        self.tasks.borrow_mut().extend(left);
    }
}

impl Background for FakeBackground {
    fn artifacts(&self) -> Rc<dyn ArtifactStore> {
        Rc::new(self.artifacts.clone())
    }

    fn log(&self) -> Rc<dyn Log> {
        Rc::new(self.log.clone())
    }

    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        self.tasks.borrow_mut().push(task);
    }
}

/// A full set of fakes, owned, for building [`Ports`] in tests.
pub struct FakeEnv {
    /// Upstream.
    pub http: ScriptedHttp,
    /// Cache.
    pub cache: MemoryCache,
    /// Policy state (the `POLICY` namespace).
    pub state: MemoryCache,
    /// Sign-in state (the `OAUTH` namespace).
    pub oauth: MemoryCache,
    /// The approval ledger (the `APPROVALS` object).
    pub approvals: MemoryApprovals,
    /// One-time credentials' claims (the `CLAIMS` objects).
    pub claims: MemoryClaims,
    /// Encryption at rest.
    pub cipher: HashCipher,
    /// The per-address limiter (unlimited until a limit is set).
    pub limiter: CountingLimiter,
    /// Settings read at request time.
    pub settings: MemorySettings,
    /// Artifacts.
    pub artifacts: MemoryArtifacts,
    /// Clock (shared with the cache).
    pub clock: ManualClock,
    /// Randomness.
    pub rng: SeededRng,
    /// Log.
    pub log: MemoryLog,
    /// Work after the reply; only [`FakeEnv::background_ports`] hands it out.
    pub background: FakeBackground,
    /// The reservations of the calls made through [`FakeEnv::call_ports`], on a budget that
    /// never runs out.
    pub memory: CallMemory,
}

impl FakeEnv {
    /// Fakes with an unreachable upstream, empty stores and the clock at 2026-01-01T00:00:00Z.
    pub fn new() -> FakeEnv {
        FakeEnv::with_http(ScriptedHttp::unreachable())
    }

    /// Fakes with the given upstream.
    pub fn with_http(http: ScriptedHttp) -> FakeEnv {
        let clock = ManualClock::at(1_767_225_600_000);
        let artifacts = MemoryArtifacts::default();
        let log = MemoryLog::default();
        FakeEnv {
            background: FakeBackground {
                artifacts: artifacts.clone(),
                log: log.clone(),
                tasks: RefCell::default(),
            },
            http,
            cache: MemoryCache::new(clock.clone()),
            state: MemoryCache::new(clock.clone()),
            oauth: MemoryCache::new(clock.clone()),
            approvals: MemoryApprovals::default(),
            claims: MemoryClaims::new(clock.clone()),
            cipher: HashCipher::default(),
            limiter: CountingLimiter::default(),
            settings: MemorySettings::default(),
            artifacts,
            clock,
            rng: SeededRng::new(42),
            log,
            memory: MemoryBudget::new(usize::MAX).call(),
        }
    }

    /// Borrows the fakes as [`Ports`].
    pub fn ports(&self) -> Ports<'_> {
        Ports {
            http: &self.http,
            cache: &self.cache,
            state: &self.state,
            oauth: &self.oauth,
            approvals: &self.approvals,
            claims: &self.claims,
            cipher: &self.cipher,
            limiter: &self.limiter,
            settings: &self.settings,
            artifacts: &self.artifacts,
            clock: &self.clock,
            rng: &self.rng,
            log: &self.log,
            background: None,
        }
    }

    /// [`FakeEnv::ports`] as one tool call gets them, with [`FakeEnv::memory`].
    pub fn call_ports(&self) -> CallPorts<'_> {
        self.ports().for_call(&self.memory)
    }

    /// [`FakeEnv::ports`] with writes that may run after the reply going to
    /// [`FakeEnv::background`], where they wait until it is run.
    pub fn background_ports(&self) -> Ports<'_> {
        Ports {
            background: Some(&self.background),
            ..self.ports()
        }
    }
}

impl Default for FakeEnv {
    fn default() -> Self {
        FakeEnv::new()
    }
}

/// CPU time of this thread, in nanoseconds: what tests bound instead of wall time, which other
/// processes on a shared machine lengthen.
pub fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    fn entry(metadata: String) -> CacheEntry {
        CacheEntry {
            value: b"v".to_vec(),
            metadata,
        }
    }

    #[test]
    fn the_memory_cache_refuses_what_kv_refuses() {
        let cache = MemoryCache::default();
        let longest = "k".repeat(KV_MAX_KEY_BYTES);
        assert_eq!(
            block_on(cache.put(&longest, entry(String::new()), 60)),
            Ok(())
        );
        let too_long = format!("{longest}k");
        let refused = block_on(cache.put(&too_long, entry(String::new()), 60));
        assert_eq!(
            refused,
            Err(StoreError(format!(
                "KV key longer than {KV_MAX_KEY_BYTES} bytes"
            )))
        );
        // Measured as JSON: the two quotes count.
        let metadata = "m".repeat(KV_MAX_METADATA_BYTES - 2);
        assert_eq!(
            block_on(cache.put("a", entry(metadata.clone()), 60)),
            Ok(())
        );
        let refused = block_on(cache.put("b", entry(format!("{metadata}m")), 60));
        assert!(refused.is_err(), "{refused:?}");
        assert_eq!(cache.keys().len(), 2, "refused puts store nothing");
    }
}
