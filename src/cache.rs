//! The HTTP response cache over the [`CacheStore`] port (KV `HTTP_CACHE` in production): keys
//! partitioned by principal and upstream identity, entries holding the raw body with when it was
//! read, and a store failure that degrades to "no cache" instead of failing the call.
//!
//! An entry's metadata holds its body's size, so a body read back reserves its cost on the
//! call's memory before a byte of it is read, as a fetched one does from its `Content-Length`
//! (decision 0113).
//!
//! Keys are SHA-256 digests, so neither a principal's name, a credential nor a URL is ever
//! readable in the store, and every key fits KV's 512-byte limit whatever the URL's length.

use crate::hex::hex;
use crate::memory::{Busy, CallMemory};
use crate::ports::{
    BodyStream, CacheEntry, CacheStore, CallPorts, Clock, Level, Log, TransportError,
};
use crate::upstream::body::{self, Unread};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::cell::Cell;

/// Workers KV refuses values larger than 25 MiB; such bodies are served but not cached.
pub(crate) const MAX_CACHED_BODY: usize = 25 * 1024 * 1024;
/// Content types longer than this are not kept in the metadata (KV allows 1024 bytes of it,
/// which the largest of every field together fit, escaped twice, with a test to say so).
const MAX_CONTENT_TYPE: usize = 120;
/// Bumped when the key derivation or the metadata layout changes, so old entries are ignored.
const KEY_VERSION: &str = "v2";

/// Who the upstream sees: the vendor and a fingerprint of the credential used, so two
/// credentials for one vendor never share entries and rotating a token starts a fresh cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UpstreamIdentity {
    vendor: String,
    fingerprint: String,
}

impl UpstreamIdentity {
    /// The identity of `vendor` called with `credential` (any secret text; only a digest of it
    /// is kept).
    pub(crate) fn new(vendor: &str, credential: &str) -> UpstreamIdentity {
        let mut hasher = Sha256::new();
        hasher.update(b"devtools-mcp-edge upstream credential\0");
        hasher.update(credential.as_bytes());
        let digest = hasher.finalize();
        UpstreamIdentity {
            vendor: vendor.to_owned(),
            // 128 bits tell credentials apart; the full digest would only lengthen keys.
            fingerprint: hex(&digest[..16]),
        }
    }

    /// The credential's fingerprint (hex); it does not reveal the credential.
    #[cfg(test)]
    pub(crate) fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

/// The store key for `url` fetched by `principal` as `identity`:
/// `http:v2:<principal digest, 16 hex>:<digest of everything, 64 hex>`. The principal part is a
/// prefix so one principal's entries can be listed or purged together.
pub(crate) fn cache_key(principal: &str, identity: &UpstreamIdentity, url: &str) -> String {
    let mut all = Sha256::new();
    // Length prefixes keep ("ab", "c") and ("a", "bc") apart.
    for part in [
        principal,
        identity.vendor.as_str(),
        identity.fingerprint.as_str(),
        url,
    ] {
        all.update((part.len() as u64).to_be_bytes());
        all.update(part.as_bytes());
    }
    let principal_digest = Sha256::digest(principal.as_bytes());
    format!(
        "http:{KEY_VERSION}:{}:{}",
        hex(&principal_digest[..8]),
        hex(&all.finalize())
    )
}

/// A response as cached: the raw body (projection runs after the cache) and what is needed to
/// serve it again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CachedResponse {
    /// HTTP status (always 2xx: nothing else is stored).
    pub status: u16,
    /// The upstream `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The body bytes as read from upstream.
    pub body: Vec<u8>,
    /// When the body was read, in milliseconds since the Unix epoch (UTC).
    pub(crate) fetched_at_ms: u64,
}

/// The metadata stored beside the body, as JSON text.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    fetched_at: u64,
    status: u16,
    /// The body's length in bytes: what its reading reserves before it starts.
    size: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content_type: Option<String>,
    /// The upstream's validator, for a conditional request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    etag: Option<String>,
    /// The upstream's `Link` header (paging), which a `304` need not repeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    link: Option<String>,
}

/// A cached response with the validator it was sent with: served only after the upstream
/// answers a conditional request `304 Not Modified`, so its age does not matter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tagged {
    /// The response.
    pub(crate) response: CachedResponse,
    /// Its validator.
    pub(crate) validator: Validator,
}

/// What a conditional request needs of a kept response, read without its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Validator {
    /// The `ETag`, sent back as `If-None-Match`.
    pub(crate) etag: String,
    /// The `Link` header, if the response had one.
    pub(crate) link: Option<String>,
}

/// Validators longer than this are not kept (KV allows 1024 bytes of metadata).
const MAX_ETAG: usize = 200;
/// `Link` headers longer than this are not kept; their response is not cached either, since a
/// `304` answered from it would lose its paging.
const MAX_LINK: usize = 560;

/// The cache as one call sees it. A store failure is logged once per call and then treated as
/// a miss (reads) or skipped (writes): the cache may make a call faster, never make it fail.
pub(crate) struct HttpCache<'a> {
    store: &'a dyn CacheStore,
    clock: &'a dyn Clock,
    memory: &'a CallMemory,
    log: &'a dyn Log,
    ttl_seconds: u64,
    logged_failure: Cell<bool>,
}

impl<'a> HttpCache<'a> {
    /// A cache over the ports' store whose entries live `ttl_seconds`.
    pub(crate) fn new(ports: &CallPorts<'a>, ttl_seconds: u64) -> HttpCache<'a> {
        HttpCache {
            store: ports.cache,
            clock: ports.clock,
            memory: ports.memory,
            log: ports.log,
            ttl_seconds,
            logged_failure: Cell::new(false),
        }
    }

    /// The entry at `key` when present, readable and younger than the TTL (KV expiry is
    /// approximate, so age is checked here too); `None` otherwise. Its body is read once its
    /// cost is reserved on the call's memory: [`Busy`] when the budget had no room for it.
    pub(crate) async fn lookup(&self, key: &str) -> Result<Option<CachedResponse>, Busy> {
        let Some((meta, value)) = self.open(key).await else {
            return Ok(None);
        };
        let age = self.clock.now_ms().saturating_sub(meta.fetched_at);
        if age >= self.ttl_seconds.saturating_mul(1000) {
            return Ok(None);
        }
        self.read(meta, value).await
    }

    /// Stores `response` at `key`, replacing any entry there. Non-2xx responses and bodies over
    /// [`MAX_CACHED_BODY`] are not stored.
    pub(crate) async fn store(&self, key: &str, response: CachedResponse) {
        self.write(key, response, None, None).await;
    }

    /// The validator of the entry at `key`, whatever its age (KV drops it at its TTL), without
    /// its body: that is read by [`HttpCache::kept`] once the upstream has said it is current.
    pub(crate) async fn lookup_tagged(&self, key: &str) -> Option<Validator> {
        let (meta, _) = self.open(key).await?;
        Some(Validator {
            etag: meta.etag?,
            link: meta.link,
        })
    }

    /// The response kept at `key` with the validator `etag`, read as [`HttpCache::lookup`]
    /// reads; `None` when the entry is gone or now holds another validator.
    pub(crate) async fn kept(&self, key: &str, etag: &str) -> Result<Option<CachedResponse>, Busy> {
        match self.open(key).await {
            Some((meta, value)) if meta.etag.as_deref() == Some(etag) => {
                self.read(meta, value).await
            }
            _ => Ok(None),
        }
    }

    /// Stores `tagged` at `key`, replacing any entry there; nothing when its status is not 2xx,
    /// its body is over [`MAX_CACHED_BODY`], or its validator or `Link` is too long to keep.
    pub(crate) async fn store_tagged(&self, key: &str, tagged: Tagged) {
        let Tagged {
            response,
            validator: Validator { etag, link },
        } = tagged;
        if etag.len() > MAX_ETAG || link.as_ref().is_some_and(|l| l.len() > MAX_LINK) {
            return;
        }
        self.write(key, response, Some(etag), link).await;
    }

    /// The readable 2xx entry at `key`: its metadata, and its body unread.
    async fn open(&self, key: &str) -> Option<(Metadata, Box<dyn BodyStream>)> {
        let entry = match self.store.open(key).await {
            Ok(entry) => entry?,
            Err(e) => {
                self.log_failure("get", &e.0);
                return None;
            }
        };
        let meta: Metadata = serde_json::from_str(&entry.metadata).ok()?;
        let readable = (200..300).contains(&meta.status) && meta.size <= MAX_CACHED_BODY;
        readable.then_some((meta, entry.value))
    }

    /// The response whose metadata is `meta` and body `value`: the body's cost is reserved
    /// first, then it is read; a body of another length than `meta` says is not the one written
    /// with it (a miss).
    async fn read(
        &self,
        meta: Metadata,
        mut value: Box<dyn BodyStream>,
    ) -> Result<Option<CachedResponse>, Busy> {
        let size = meta.size;
        let body = match body::read(self.memory, self.clock, value.as_mut(), Some(size), size).await
        {
            Ok(body) => body,
            Err(Unread::Busy(busy)) => return Err(busy),
            Err(Unread::Transport(TransportError::TooLarge(_))) => return Ok(None),
            Err(Unread::Transport(e)) => {
                self.log_failure("get", &e.to_string());
                return Ok(None);
            }
        };
        Ok((body.len() == size).then_some(CachedResponse {
            status: meta.status,
            content_type: meta.content_type,
            body,
            fetched_at_ms: meta.fetched_at,
        }))
    }

    /// Stores `response` with its validator and `Link`; non-2xx responses and bodies over
    /// [`MAX_CACHED_BODY`] are not stored.
    async fn write(
        &self,
        key: &str,
        response: CachedResponse,
        etag: Option<String>,
        link: Option<String>,
    ) {
        if !(200..300).contains(&response.status) || response.body.len() > MAX_CACHED_BODY {
            return;
        }
        let content_type = response
            .content_type
            .filter(|ct| ct.len() <= MAX_CONTENT_TYPE);
        let meta = Metadata {
            fetched_at: response.fetched_at_ms,
            status: response.status,
            size: response.body.len(),
            content_type,
            etag,
            link,
        };
        let Ok(metadata) = serde_json::to_string(&meta) else {
            return;
        };
        let entry = CacheEntry {
            value: response.body,
            metadata,
        };
        if let Err(e) = self.store.put(key, entry, self.ttl_seconds).await {
            self.log_failure("put", &e.0);
        }
    }

    fn log_failure(&self, op: &str, detail: &str) {
        if self.logged_failure.replace(true) {
            return;
        }
        self.log.event(
            Level::Warn,
            "http_cache_unavailable",
            &[("op", op.into()), ("error", detail.into())],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{MemoryBudget, BYTES_PER_BODY_BYTE, POLL_MS, WAIT_MS};
    use crate::ports::fake::yield_once;
    use crate::ports::fake::FakeEnv;
    use crate::ports::KV_MAX_KEY_BYTES;
    use futures::executor::block_on;
    use futures::future::join;

    /// What `lookup` found, failing the test on [`Busy`].
    fn found(cache: &HttpCache<'_>, key: &str) -> Option<CachedResponse> {
        block_on(cache.lookup(key)).expect("room for the body")
    }

    #[test]
    fn keys_hide_secrets_fit_kv_and_separate_everyone() {
        let github = UpstreamIdentity::new("circleci", "secret-token-abc");
        let other = UpstreamIdentity::new("circleci", "secret-token-abd");
        let url = format!("https://circleci.com/api/v2/me?q={}", "x".repeat(10_000));
        let key = cache_key("alice", &github, &url);
        assert!(
            key.len() <= KV_MAX_KEY_BYTES && key.starts_with("http:v2:"),
            "{key}"
        );
        assert!(!key.contains("alice") && !key.contains("secret") && !key.contains("circleci"));
        assert!(!github.fingerprint().contains("secret"));
        assert_eq!(github.fingerprint().len(), 32);
        let same = cache_key(
            "alice",
            &UpstreamIdentity::new("circleci", "secret-token-abc"),
            &url,
        );
        assert_eq!(key, same);
        let variants = [
            cache_key("bob", &github, &url),
            cache_key("alice", &other, &url),
            cache_key(
                "alice",
                &UpstreamIdentity::new("github", "secret-token-abc"),
                &url,
            ),
            cache_key("alice", &github, "https://circleci.com/api/v2/me"),
        ];
        for v in &variants {
            assert_ne!(&key, v);
        }
        // The principal prefix is shared by one principal's keys only.
        let prefix = |k: &str| k.rsplit_once(':').map(|(p, _)| p.to_owned());
        assert_eq!(prefix(&key), prefix(&variants[1]));
        assert_ne!(prefix(&key), prefix(&variants[0]));
        // Length prefixes: moving a byte between parts changes the key.
        assert_ne!(cache_key("ab", &github, "c"), cache_key("a", &github, "bc"));
    }

    fn response(at: u64) -> CachedResponse {
        CachedResponse {
            status: 200,
            content_type: Some("application/json".into()),
            body: b"{\"a\":1}".to_vec(),
            fetched_at_ms: at,
        }
    }

    #[test]
    fn tagged_entries_keep_their_validator_and_link_whatever_their_age() {
        let env = FakeEnv::new();
        let ports = env.call_ports();
        let cache = HttpCache::new(&ports, 60);
        let now = env.clock.now_ms();
        let validator = |link: Option<String>| Validator {
            etag: "W/\"abc\"".into(),
            link,
        };
        let tagged = |link: Option<String>| Tagged {
            response: response(now),
            validator: validator(link),
        };
        let link = || Some("<x?page=2>; rel=\"next\"".to_owned());
        block_on(cache.store_tagged("k", tagged(link())));
        env.clock.advance(59_000);
        // The validator is read without the body, which is read for its own validator only.
        assert_eq!(block_on(cache.lookup_tagged("k")), Some(validator(link())));
        assert_eq!(env.cache.values_read.get(), 0);
        assert_eq!(block_on(cache.kept("k", "W/\"abd\"")), Ok(None));
        assert_eq!(
            block_on(cache.kept("k", "W/\"abc\"")),
            Ok(Some(response(now)))
        );
        // An untagged entry is no validator; a link too long to keep stores nothing.
        block_on(cache.store("plain", response(now)));
        assert_eq!(block_on(cache.lookup_tagged("plain")), None);
        assert_eq!(block_on(cache.kept("plain", "W/\"abc\"")), Ok(None));
        block_on(cache.store_tagged("long", tagged(Some("x".repeat(MAX_LINK + 1)))));
        assert_eq!(block_on(cache.lookup_tagged("long")), None);
        assert!(found(&cache, "long").is_none());
    }

    #[test]
    fn the_largest_metadata_fits_kv() {
        let env = FakeEnv::new();
        let ports = env.call_ports();
        let cache = HttpCache::new(&ports, 60);
        let quoted = |len: usize| format!("W/\"{}\"", "a".repeat(len - 4));
        let mut largest = response(env.clock.now_ms());
        largest.content_type = Some(quoted(MAX_CONTENT_TYPE));
        largest.body = vec![b' '; MAX_CACHED_BODY];
        let validator = Validator {
            etag: quoted(MAX_ETAG),
            link: Some(quoted(MAX_LINK)),
        };
        block_on(cache.store_tagged(
            "k",
            Tagged {
                response: largest.clone(),
                validator,
            },
        ));
        assert!(env.log.lines().is_empty(), "{:?}", env.log.lines());
        assert_eq!(
            found(&cache, "k").map(|r| r.body.len()),
            Some(MAX_CACHED_BODY)
        );
    }

    /// A body of `size` bytes stored at `key`, with the metadata of one of `said` bytes.
    fn stored_as(env: &FakeEnv, key: &str, size: usize, said: usize) {
        let now = env.clock.now_ms();
        let metadata =
            format!(r#"{{"fetchedAt":{now},"status":200,"size":{said},"etag":"\"e\""}}"#);
        let entry = CacheEntry {
            value: vec![b'0'; size],
            metadata,
        };
        block_on(env.cache.put(key, entry, 60)).unwrap();
    }

    #[test]
    fn a_body_is_reserved_before_it_is_read_and_one_refused_for_room_is_never_read() {
        const MIB: usize = 1024 * 1024;
        let env = FakeEnv::new();
        let size = 3 * MIB;
        stored_as(&env, "k", size, size);
        let budget = MemoryBudget::new(8 * MIB);
        let other = budget.call();
        assert!(other.take_now(2 * MIB, false));
        let call = budget.call();
        let ports = env.ports().for_call(&call);
        let cache = HttpCache::new(&ports, 60);
        let ticks = || async {
            for _ in 0..=WAIT_MS / POLL_MS {
                yield_once().await;
                env.clock.advance(POLL_MS);
            }
        };
        for (key, validator) in [("k", None), ("k", Some("\"e\""))] {
            let refused = match validator {
                None => block_on(join(cache.lookup(key), ticks())).0,
                Some(etag) => block_on(join(cache.kept(key, etag), ticks())).0,
            };
            assert_eq!(refused.map(|_| ()), Err(Busy { body_bytes: size }));
            assert_eq!(env.cache.values_read.get(), 0, "nothing read while refused");
        }
        drop(other);
        assert_eq!(found(&cache, "k").map(|r| r.body.len()), Some(size));
        assert_eq!(call.held(), size * BYTES_PER_BODY_BYTE);
        assert_eq!(env.cache.values_read.get(), size);
    }

    #[test]
    fn a_body_of_another_length_than_its_metadata_says_is_a_miss() {
        let env = FakeEnv::new();
        stored_as(&env, "short", 100, 101);
        stored_as(&env, "long", 70_000, 69_999);
        stored_as(&env, "huge", 1, MAX_CACHED_BODY + 1);
        let ports = env.call_ports();
        let cache = HttpCache::new(&ports, 60);
        for key in ["short", "long", "huge"] {
            assert_eq!(found(&cache, key), None, "{key}");
            assert_eq!(block_on(cache.kept(key, "\"e\"")), Ok(None), "{key}");
        }
        // A longer body is not read past what its metadata said.
        assert!(env.cache.values_read.get() <= 2 * (100 + 69_999 + 64 * 1024));
        assert!(env.log.lines().is_empty(), "{:?}", env.log.lines());
        stored_as(&env, "right", 100, 100);
        assert!(found(&cache, "right").is_some());
    }

    #[test]
    fn stores_and_expires_by_ttl() {
        let env = FakeEnv::new();
        let ports = env.call_ports();
        let cache = HttpCache::new(&ports, 60);
        let now = env.clock.now_ms();
        block_on(cache.store("k", response(now)));
        assert_eq!(found(&cache, "k"), Some(response(now)));
        env.clock.advance(59_999);
        assert!(found(&cache, "k").is_some());
        env.clock.advance(1);
        assert_eq!(found(&cache, "k"), None);
        assert!(env.log.lines().is_empty());
    }

    #[test]
    fn an_entry_older_than_the_ttl_is_a_miss_even_if_the_store_kept_it() {
        let env = FakeEnv::new();
        let ports = env.call_ports();
        // Stored with a long store-side TTL, read by a cache whose TTL is shorter.
        block_on(HttpCache::new(&ports, 3600).store("k", response(env.clock.now_ms())));
        env.clock.advance(61_000);
        assert_eq!(found(&HttpCache::new(&ports, 60), "k"), None);
        assert!(found(&HttpCache::new(&ports, 3600), "k").is_some());
    }

    #[test]
    fn only_successful_bodies_are_stored() {
        let env = FakeEnv::new();
        let ports = env.call_ports();
        let cache = HttpCache::new(&ports, 60);
        for status in [204, 299] {
            let mut r = response(env.clock.now_ms());
            r.status = status;
            block_on(cache.store(&format!("ok{status}"), r));
        }
        for status in [199, 301, 304, 404, 429, 500] {
            let mut r = response(env.clock.now_ms());
            r.status = status;
            block_on(cache.store(&format!("no{status}"), r));
        }
        let mut keys = env.cache.keys();
        keys.sort();
        assert_eq!(keys, ["ok204", "ok299"]);
    }

    #[test]
    fn unreadable_metadata_is_a_miss() {
        let env = FakeEnv::new();
        // The second is the layout before the body's size was kept.
        let layouts = [
            "not json".to_owned(),
            format!(r#"{{"fetchedAt":{},"status":200}}"#, env.clock.now_ms()),
        ];
        for metadata in layouts {
            let entry = CacheEntry {
                value: b"x".to_vec(),
                metadata,
            };
            block_on(env.cache.put("k", entry, 60)).unwrap();
            let ports = env.call_ports();
            assert_eq!(found(&HttpCache::new(&ports, 60), "k"), None);
        }
    }

    #[test]
    fn a_failing_store_is_a_miss_logged_once() {
        let env = FakeEnv::new();
        env.cache.failing.set(true);
        let ports = env.call_ports();
        let cache = HttpCache::new(&ports, 60);
        assert_eq!(found(&cache, "k"), None);
        block_on(cache.store("k", response(0)));
        assert_eq!(found(&cache, "k"), None);
        let lines = env.log.lines();
        assert_eq!(lines.len(), 1, "{lines:?}");
        let line: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(line["event"], "http_cache_unavailable");
        assert_eq!(line["level"], "warn");
        assert_eq!(line["op"], "get");
    }
}
