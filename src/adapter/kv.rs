//! The cache store on Workers KV. For the HTTP cache, writes run after the response through
//! `ctx.wait_until`, so a cache fill never adds KV's write latency to the request that produced
//! it; for policy and sign-in state they complete before the call returns.

use super::env::ConsoleLog;
use crate::ports::{
    check_kv_put, CacheEntry, CacheStore, Level, Log, OpenedEntry, StoreError, Stored,
};
use std::rc::Rc;
use worker::{Context, KvStore};

/// KV refuses expirations shorter than this many seconds.
const MIN_TTL_SECONDS: u64 = 60;

/// The longest an opened value takes to be read, from its opening, in milliseconds: far more
/// than KV needs for its largest value, and a bound on a read that stalls.
const VALUE_READ_MS: u64 = 30_000;

/// A [`CacheStore`] over a KV namespace; without the binding every call fails.
pub(crate) struct KvCache {
    store: Result<KvStore, StoreError>,
    /// Where deferred writes are scheduled; `None` when writes are awaited.
    ctx: Option<Rc<Context>>,
}

impl KvCache {
    /// A cache over `store` (or the reason it is missing), scheduling writes on `ctx`.
    pub(super) fn new(store: Result<KvStore, StoreError>, ctx: Rc<Context>) -> KvCache {
        KvCache {
            store,
            ctx: Some(ctx),
        }
    }

    /// A store whose writes finish before `put` returns: sign-in state must be readable by the
    /// next request.
    pub(crate) fn awaited(store: Result<KvStore, StoreError>) -> KvCache {
        KvCache { store, ctx: None }
    }

    fn store(&self) -> Result<&KvStore, StoreError> {
        self.store.as_ref().map_err(StoreError::clone)
    }
}

fn kv_error(error: worker::KvError) -> StoreError {
    StoreError(format!("KV: {error}"))
}

impl CacheStore for KvCache {
    fn get<'a>(&'a self, key: &'a str) -> Stored<'a, Option<CacheEntry>> {
        Box::pin(async move {
            let (value, metadata) = self
                .store()?
                .get(key)
                .bytes_with_metadata::<String>()
                .await
                .map_err(kv_error)?;
            Ok(value.map(|value| CacheEntry {
                value,
                metadata: metadata.unwrap_or_default(),
            }))
        })
    }

    fn open<'a>(&'a self, key: &'a str) -> Stored<'a, Option<OpenedEntry>> {
        Box::pin(async move {
            let (value, metadata) = self
                .store()?
                .get(key)
                .stream_with_metadata::<String>()
                .await
                .map_err(kv_error)?;
            let Some(value) = value else { return Ok(None) };
            let value = super::fetch::stored_body(value, VALUE_READ_MS)
                .map_err(|e| StoreError(format!("KV: {e}")))?;
            Ok(Some(OpenedEntry {
                metadata: metadata.unwrap_or_default(),
                value,
            }))
        })
    }

    fn put<'a>(&'a self, key: &'a str, entry: CacheEntry, ttl_seconds: u64) -> Stored<'a, ()> {
        Box::pin(async move {
            let store = self.store()?.clone();
            // Limits KV would reject are checked here, where the caller can still see the error;
            // once the write is handed to wait_until only the log hears about failures.
            check_kv_put(key, &entry)?;
            let write = store
                .put_bytes(key, &entry.value)
                .and_then(|put| put.metadata(entry.metadata))
                .map(|put| put.expiration_ttl(ttl_seconds.max(MIN_TTL_SECONDS)))
                .map_err(kv_error)?;
            let Some(ctx) = &self.ctx else {
                return write.execute().await.map_err(kv_error);
            };
            ctx.wait_until(async move {
                if let Err(error) = write.execute().await {
                    ConsoleLog.event(
                        Level::Error,
                        "cache_write_failed",
                        &[("error", (&error.to_string()).into())],
                    );
                }
            });
            Ok(())
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> Stored<'a, ()> {
        Box::pin(async move { self.store()?.delete(key).await.map_err(kv_error) })
    }

    fn list<'a>(&'a self, prefix: &'a str, limit: usize) -> Stored<'a, Vec<String>> {
        Box::pin(async move {
            let store = self.store()?;
            let mut keys = Vec::new();
            let mut cursor: Option<String> = None;
            // KV pages hold at most 1000 keys; follow the cursor until `limit` or the end.
            loop {
                let mut request = store.list().prefix(prefix.to_owned());
                if let Some(c) = cursor.take() {
                    request = request.cursor(c);
                }
                let page = request.execute().await.map_err(kv_error)?;
                keys.extend(page.keys.into_iter().map(|k| k.name));
                if keys.len() >= limit || page.list_complete {
                    break;
                }
                match page.cursor {
                    Some(c) if !c.is_empty() => cursor = Some(c),
                    _ => break,
                }
            }
            keys.truncate(limit);
            Ok(keys)
        })
    }
}
