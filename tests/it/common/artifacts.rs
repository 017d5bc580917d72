//! Shared harness for the artifact host tests: a counting artifact store, a `tools/call` helper
//! over caller-built ports, and readers that fetch an artifact through `artifact_read`.

use crate::common::ci::ci_builder;
use crate::common::server::{tools_call, STATELESS};
use base64::Engine as _;
use devtools_mcp_edge::artifacts::{ArtifactId, Artifacts};
use devtools_mcp_edge::auth::Principal;
use devtools_mcp_edge::config::Config;
use devtools_mcp_edge::memory::MemoryBudget;
use devtools_mcp_edge::ports::fake::MemoryArtifacts;
use devtools_mcp_edge::ports::{
    ArtifactChunk, ArtifactMeta, ArtifactStore, PartUpload, Ports, StoreError,
};
use devtools_mcp_edge::server::Server;
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use serde_json::{json, Value as Json};
use std::cell::{Cell, RefCell};

/// The tool under test.
pub const READ: &str = "artifact_read";
/// A tool whose text is easy to make long.
pub const RUNS: &str = "github_list_workflow_runs";
/// A token of principal `alice` (the base settings' second principal).
pub const ALICE: &str = "alice-token-1-0123456789";

/// An artifact store that records every ranged read (offset, length asked, bytes returned) and
/// every head, over an in-memory store.
#[derive(Default)]
pub struct Counting {
    /// The store underneath.
    pub inner: MemoryArtifacts,
    /// Every ranged read: (offset, length asked, bytes returned).
    pub ranges: RefCell<Vec<(u64, u64, usize)>>,
    /// How many heads were made.
    pub heads: Cell<usize>,
}

impl ArtifactStore for Counting {
    fn put<'a>(
        &'a self,
        key: &'a str,
        bytes: Vec<u8>,
        meta: ArtifactMeta,
    ) -> LocalBoxFuture<'a, Result<(), StoreError>> {
        self.inner.put(key, bytes, meta)
    }

    fn get_range<'a>(
        &'a self,
        key: &'a str,
        offset: u64,
        length: u64,
    ) -> LocalBoxFuture<'a, Result<Option<ArtifactChunk>, StoreError>> {
        Box::pin(async move {
            let chunk = self.inner.get_range(key, offset, length).await?;
            let got = chunk.as_ref().map_or(0, |c| c.bytes.len());
            self.ranges.borrow_mut().push((offset, length, got));
            Ok(chunk)
        })
    }

    fn head<'a>(
        &'a self,
        key: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<ArtifactMeta>, StoreError>> {
        self.heads.set(self.heads.get() + 1);
        self.inner.head(key)
    }

    fn begin_upload(
        &self,
        key: String,
        meta: ArtifactMeta,
    ) -> LocalBoxFuture<'_, Result<Box<dyn PartUpload + '_>, StoreError>> {
        self.inner.begin_upload(key, meta)
    }
}

/// What `tools/call` answered: the first text block, `isError`, and the whole result.
pub struct Reply {
    /// The first text block.
    pub text: String,
    /// `isError`.
    pub is_error: bool,
    /// The whole result.
    pub result: Json,
}

/// Calls tool `name` through `server` on `ports` as the holder of `token`.
pub fn call_with(server: &Server, ports: Ports<'_>, token: &str, name: &str, args: Json) -> Reply {
    let reply = tools_call(server, ports, STATELESS, token, name, args);
    Reply {
        text: reply.text().to_owned(),
        is_error: reply.is_error(),
        result: reply.result().clone(),
    }
}

/// A server with the production registry, GitHub configured, and `extra` settings.
pub fn artifact_server(extra: &[(&str, &str)]) -> Server {
    ci_builder(extra).build().server
}

/// One `artifact_read` chunk, parsed.
pub fn read(server: &Server, ports: Ports<'_>, token: &str, args: Json) -> Json {
    let reply = call_with(server, ports, token, READ, args);
    assert!(!reply.is_error, "artifact_read failed: {}", reply.text);
    assert!(reply.result.get("structuredContent").is_none());
    serde_json::from_str(&reply.text).unwrap_or_else(|e| panic!("{e}: {}", reply.text))
}

/// Reads artifact `id` whole, `max_bytes` at a time, checking each chunk's bookkeeping.
pub fn read_all(
    server: &Server,
    ports: Ports<'_>,
    token: &str,
    id: &str,
    max_bytes: u64,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offset = 0;
    loop {
        let page = read(
            server,
            ports,
            token,
            json!({"artifactId": id, "offset": offset, "maxBytes": max_bytes}),
        );
        let keys: Vec<&str> = page
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "artifactId",
                "offset",
                "nextOffset",
                "totalBytes",
                "eof",
                "encoding",
                "data"
            ]
        );
        assert_eq!(page["artifactId"], id);
        assert_eq!(page["offset"], offset);
        assert_eq!(page["encoding"], "base64");
        let data = base64::engine::general_purpose::STANDARD
            .decode(page["data"].as_str().unwrap())
            .unwrap();
        assert!(data.len() as u64 <= max_bytes);
        out.extend_from_slice(&data);
        let next = page["nextOffset"].as_u64().unwrap();
        assert_eq!(next, offset + data.len() as u64);
        assert_eq!(page["eof"], next == page["totalBytes"].as_u64().unwrap());
        if page["eof"] == true {
            assert_eq!(out.len() as u64, page["totalBytes"].as_u64().unwrap());
            return out;
        }
        assert!(!data.is_empty(), "a chunk before the end is never empty");
        offset = next;
    }
}

/// Bytes that are not UTF-8 and not JSON: artifacts are bytes.
pub fn noise(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7919 % 251) as u8).collect()
}

/// Saves `bytes` as `owner`'s artifact through the API.
pub fn save(ports: Ports<'_>, config: &Config, owner: &str, bytes: Vec<u8>) -> ArtifactId {
    let memory = MemoryBudget::new(usize::MAX).call();
    block_on(
        Artifacts::new(
            ports.for_call(&memory),
            config.tools.artifact_retention_seconds,
        )
        .save(&Principal::named(owner), bytes, "application/json"),
    )
    .expect("the in-memory store accepts the artifact")
}

/// True for a lower-case hyphenated UUID v7 (or v4, the ids handed out before v7).
pub fn is_artifact_uuid(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            14 => matches!(c, b'4' | b'7'),
            19 => matches!(c, b'8' | b'9' | b'a' | b'b'),
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
        })
}
