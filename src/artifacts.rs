//! Artifacts: full results saved to the artifact store (R2 `ARTIFACTS`) when a tool's text is
//! truncated or its structured value is too large, and read back in byte ranges by the principal
//! that made the call.
//!
//! Each artifact lives at `artifacts/v1/<owner>/<id>`, where `<owner>` is the first 16 hex digits
//! of SHA-256 of the principal's name and `<id>` a UUID v7 (its creation time in milliseconds,
//! random bits, then a tag bound to the owner; ids handed out before were random v4 UUIDs or
//! untagged v7 and stay readable). The key scopes every read to its owner; the stored metadata
//! (full owner digest, creation time) is checked again on every read, and retention is enforced
//! there, from the creation time, because the bucket's lifecycle rule only works in whole days.
//! Every way of not finding an artifact (another owner, an unknown, malformed or expired id)
//! gives the same [`NOT_FOUND`] text, so a caller learns nothing about artifacts that are not
//! theirs.
//!
//! A write may run after the reply that names its id ([`ArtifactSlot::save_in_background`]), so
//! a reader can ask before it lands, possibly in another isolate that knows nothing of it. The
//! id tells [`Artifacts::read`] whether a missing artifact may still be on its way: only an id
//! whose tag binds it to the caller ([`ArtifactId::minted_for`]) and whose creation time lies
//! within [`WRITE_WINDOW_MS`] is looked for again with backoff, and at the end of the window the
//! read says the write did not complete ([`ArtifactError::WriteIncomplete`]). Any other missing id,
//! another principal's included, is not found at once.

pub(crate) mod stream;

use crate::auth::Principal;
use crate::hex::hex;
use crate::memory::HeldMemory;
use crate::ports::{ArtifactMeta, Background, CallPorts, Level, StoreError};
use sha2::{Digest, Sha256};
use std::fmt;

/// The one text for an artifact that cannot be read: unknown, malformed, expired or not the
/// caller's.
pub const NOT_FOUND: &str = "Artifact not found or expired";

/// How long after an id's creation a missing artifact may still be in flight: a background
/// write and its one retry take a few R2 round trips (tens of milliseconds each, seconds at
/// worst), so a write that has not landed after this long never will. Short enough that a read
/// of a lost artifact gives up well within an MCP client's request timeout.
pub const WRITE_WINDOW_MS: u64 = 10_000;
/// The first wait before a missing in-flight artifact is read again; each wait doubles.
const FIRST_WAIT_MS: u64 = 25;
/// The longest wait between two reads of a missing in-flight artifact.
const MAX_WAIT_MS: u64 = 2_000;
/// The most reads of one missing in-flight artifact (the window ends first with the waits
/// above; this bounds the store calls even if the clock misbehaves).
const MAX_READS: u32 = 16;

/// Bytes at the end of a v7 id that bind it to its owner: the start of SHA-256 of the owner
/// digest and the id's other bytes. 32 bits make an id of someone else (or a made-up one) pass
/// for the caller's once in four billion, which costs that caller only a wait; 42 random bits
/// stay to keep one owner's ids of one millisecond apart.
const TAG_BYTES: usize = 4;

/// `_meta.code` of a read whose artifact's write did not complete: the original call must be
/// repeated, unlike for [`NOT_FOUND`].
pub(crate) const CODE_WRITE_INCOMPLETE: &str = "artifact_write_incomplete";

/// Content type of artifacts that hold a JSON value.
pub(crate) const JSON_CONTENT_TYPE: &str = "application/json";

/// Prefix of every artifact key; the version leaves room for another layout beside this one.
const KEY_PREFIX: &str = "artifacts/v1/";
/// How many hex digits of the owner digest go into the key.
const KEY_OWNER_HEX: usize = 16;
/// Custom metadata names.
const META_OWNER: &str = "owner";
const META_CREATED_AT: &str = "createdAt";
const META_EXPIRES_AT: &str = "expiresAt";

/// An artifact id: a UUID v7 (or, for artifacts saved before ids carried their time, v4) in
/// lower-case hyphenated form.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArtifactId(String);

impl ArtifactId {
    /// A fresh id from 16 random bytes.
    pub fn from_random_bytes(bytes: [u8; 16]) -> ArtifactId {
        let uuid = uuid::Builder::from_random_bytes(bytes).into_uuid();
        ArtifactId(uuid.hyphenated().to_string())
    }

    /// An id created at `unix_ms`, with 10 random bytes (74 random bits survive), and no owner
    /// tag: the form ids had before they carried one.
    #[cfg(test)]
    fn from_time_and_random(unix_ms: u64, random: [u8; 10]) -> ArtifactId {
        let uuid = uuid::Builder::from_unix_timestamp_millis(unix_ms, &random).into_uuid();
        ArtifactId(uuid.hyphenated().to_string())
    }

    /// A fresh id of the owner with digest `owner` ([`owner_digest`]), created at `unix_ms`: a
    /// UUID v7 from the time and 10 random bytes, its last [`TAG_BYTES`] replaced by the owner's
    /// tag.
    fn minted(owner: &str, unix_ms: u64, random: [u8; 10]) -> ArtifactId {
        let mut bytes = *uuid::Builder::from_unix_timestamp_millis(unix_ms, &random)
            .into_uuid()
            .as_bytes();
        let tag = tag(owner, &bytes);
        bytes[16 - TAG_BYTES..].copy_from_slice(&tag);
        ArtifactId(uuid::Uuid::from_bytes(bytes).hyphenated().to_string())
    }

    /// True when this is a v7 id whose tag names the owner with digest `owner`: one this module
    /// handed out to that owner (or, once in 2^32, a stranger's id that happens to match).
    fn minted_for(&self, owner: &str) -> bool {
        let Ok(uuid) = uuid::Uuid::try_parse(&self.0) else {
            return false;
        };
        let bytes = uuid.as_bytes();
        uuid.get_version_num() == 7 && bytes[16 - TAG_BYTES..] == tag(owner, bytes)
    }

    /// When a v7 id was created, in milliseconds since the Unix epoch (its first 48 bits); `None`
    /// for a v4 id, which carries no time.
    pub(crate) fn created_ms(&self) -> Option<u64> {
        let uuid = uuid::Uuid::try_parse(&self.0).ok()?;
        (uuid.get_version_num() == 7).then(|| {
            let b = uuid.as_bytes();
            u64::from_be_bytes([0, 0, b[0], b[1], b[2], b[3], b[4], b[5]])
        })
    }

    /// `text` as an id, when it is exactly the form this module hands out (36 characters, lower
    /// case, version 7 or 4, RFC 4122 variant); anything else names no artifact.
    pub fn parse(text: &str) -> Option<ArtifactId> {
        if text.len() != 36 {
            return None;
        }
        let uuid = uuid::Uuid::try_parse(text).ok()?;
        let canonical = uuid.hyphenated().to_string();
        let version = matches!(uuid.get_version_num(), 4 | 7);
        let ours = version && uuid.get_variant() == uuid::Variant::RFC4122;
        (ours && canonical == text).then_some(ArtifactId(canonical))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ArtifactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why an artifact could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArtifactError {
    /// Unknown, malformed, expired or another principal's: always shown as [`NOT_FOUND`].
    NotFound,
    /// The offset lies beyond the artifact's last byte (an offset equal to the size reads an
    /// empty last chunk).
    OffsetPastEnd {
        /// The offset asked for.
        offset: u64,
        /// The artifact's size in bytes.
        total_bytes: u64,
    },
    /// A recent id of the caller's whose artifact did not appear within [`WRITE_WINDOW_MS`] of
    /// its creation: its write, after the reply that named it, failed. Shown as [`NOT_FOUND`]
    /// followed by that reason.
    WriteIncomplete,
    /// The store failed; the text is for logs.
    Store(StoreError),
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactError::NotFound => f.write_str(NOT_FOUND),
            ArtifactError::OffsetPastEnd {
                offset,
                total_bytes,
            } => write!(
                f,
                "offset {offset} is past the end of the artifact ({total_bytes} bytes): \
                 read from an offset between 0 and {total_bytes}"
            ),
            ArtifactError::WriteIncomplete => write!(
                f,
                "{NOT_FOUND}: its write did not complete, so it cannot be read; repeat the \
                 original tool call to get a new artifact."
            ),
            ArtifactError::Store(_) => {
                f.write_str("The artifact store is unavailable; try again shortly.")
            }
        }
    }
}

impl std::error::Error for ArtifactError {}

/// One byte range of an artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Where the range starts.
    pub offset: u64,
    /// The bytes read (at most the length asked for).
    pub bytes: Vec<u8>,
    /// Where the next range starts: `offset + bytes.len()`.
    pub next_offset: u64,
    /// The artifact's size in bytes.
    pub total_bytes: u64,
    /// True when this range reaches the artifact's end.
    pub eof: bool,
    /// The artifact's MIME type.
    pub content_type: String,
}

/// Saves and reads artifacts for one request.
#[derive(Clone, Copy)]
pub struct Artifacts<'a> {
    ports: CallPorts<'a>,
    retention_ms: u64,
}

impl<'a> Artifacts<'a> {
    /// Artifacts over `ports.artifacts`, readable for `retention_seconds` after they are saved.
    pub fn new(ports: CallPorts<'a>, retention_seconds: u64) -> Artifacts<'a> {
        Artifacts {
            ports,
            retention_ms: retention_seconds.saturating_mul(1000),
        }
    }

    /// Stores `bytes` as a new artifact of `owner` and returns its id. A failure is logged (one
    /// `artifact_save_failed` line) and returned; callers report the artifact as missing (`null`)
    /// and carry on.
    pub async fn save(
        &self,
        owner: &Principal,
        bytes: Vec<u8>,
        content_type: &str,
    ) -> Result<ArtifactId, StoreError> {
        let size = bytes.len() as u64;
        let (id, key, meta) = self.new_object(owner, content_type, size);
        match self.ports.artifacts.put(&key, bytes, meta).await {
            Ok(()) => Ok(id),
            Err(error) => {
                self.log_save_failure(size, &error);
                Err(error)
            }
        }
    }

    /// A fresh id for an artifact of `owner`, its key, and the metadata to store with it.
    fn new_object(
        &self,
        owner: &Principal,
        content_type: &str,
        size: u64,
    ) -> (ArtifactId, String, ArtifactMeta) {
        let mut random = [0u8; 10];
        self.ports.rng.fill(&mut random);
        let created_at = self.ports.clock.now_ms();
        let digest = owner_digest(owner);
        let id = ArtifactId::minted(&digest, created_at, random);
        let meta = ArtifactMeta {
            size,
            content_type: content_type.to_owned(),
            custom: vec![
                (META_OWNER.to_owned(), digest.clone()),
                (META_CREATED_AT.to_owned(), created_at.to_string()),
                (
                    META_EXPIRES_AT.to_owned(),
                    created_at.saturating_add(self.retention_ms).to_string(),
                ),
            ],
        };
        let key = key_for(&digest, &id);
        (id, key, meta)
    }

    /// Reads at most `max_bytes` bytes of `owner`'s artifact `id` from `offset`, with one ranged
    /// get (the owner and retention checks use the metadata that comes with the range). A
    /// missing artifact whose id was minted for `owner` less than [`WRITE_WINDOW_MS`] ago may
    /// still be being written: it is read again with backoff until it appears or the window ends.
    /// Any other missing id is not found after the one read, whoever it belongs to.
    pub async fn read(
        &self,
        owner: &Principal,
        id: &str,
        offset: u64,
        max_bytes: u64,
    ) -> Result<Chunk, ArtifactError> {
        let id = ArtifactId::parse(id).ok_or(ArtifactError::NotFound)?;
        let digest = owner_digest(owner);
        let key = key_for(&digest, &id);
        // Only the caller's own ids are worth waiting for: another principal's artifact is never
        // under this key, and answering its id at once, like an unknown one, tells nothing of it.
        let ours = id.minted_for(&digest);
        let mut deadline = None;
        let mut wait = FIRST_WAIT_MS;
        let mut reads = 0;
        let chunk = loop {
            let found = self.ports.artifacts.get_range(&key, offset, max_bytes);
            if let Some(chunk) = found.await.map_err(ArtifactError::Store)? {
                break chunk;
            }
            reads += 1;
            let now = self.ports.clock.now_ms();
            // From the id's time, or from now for an id claiming to come from the future:
            // nobody waits longer than the window.
            let end = *deadline.get_or_insert_with(|| {
                id.created_ms()
                    .filter(|_| ours)
                    .map(|created| created.min(now).saturating_add(WRITE_WINDOW_MS))
            });
            let Some(end) = end.filter(|end| now < *end) else {
                return Err(if reads > 1 {
                    ArtifactError::WriteIncomplete
                } else {
                    ArtifactError::NotFound
                });
            };
            if reads >= MAX_READS {
                return Err(ArtifactError::WriteIncomplete);
            }
            self.ports.clock.sleep(wait.min(end - now)).await;
            wait = (wait * 2).min(MAX_WAIT_MS);
        };
        if !self.readable_by(&chunk.meta, &digest) {
            return Err(ArtifactError::NotFound);
        }
        let total_bytes = chunk.meta.size;
        if offset > total_bytes {
            return Err(ArtifactError::OffsetPastEnd {
                offset,
                total_bytes,
            });
        }
        let mut bytes = chunk.bytes;
        // A store that returns more than was asked must not make a chunk overrun the bound the
        // caller set for its reply.
        bytes.truncate(usize::try_from(max_bytes).unwrap_or(usize::MAX));
        let next_offset = offset.saturating_add(bytes.len() as u64).min(total_bytes);
        Ok(Chunk {
            offset,
            bytes,
            next_offset,
            total_bytes,
            eof: next_offset >= total_bytes,
            content_type: chunk.meta.content_type,
        })
    }

    /// True when `meta` names `digest` as owner and the artifact is still within retention.
    /// Metadata that is missing or unreadable makes the artifact unreadable.
    fn readable_by(&self, meta: &ArtifactMeta, digest: &str) -> bool {
        let custom = |name: &str| {
            meta.custom
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let Some(created_at) = custom(META_CREATED_AT).and_then(|t| t.parse::<u64>().ok()) else {
            return false;
        };
        let now = self.ports.clock.now_ms();
        custom(META_OWNER) == Some(digest) && now < created_at.saturating_add(self.retention_ms)
    }

    fn log_save_failure(&self, size: u64, error: &StoreError) {
        self.ports.log.event(
            Level::Warn,
            "artifact_save_failed",
            &[("bytes", size.into()), ("error", (&error.0).into())],
        );
    }
}

/// The one artifact a tool call may save: when the text is cut and the structured value is too
/// large, both name the same artifact. The first [`ArtifactSlot::save_pieces`] or
/// [`ArtifactSlot::save_in_background`] stores it; later calls
/// return the first outcome without storing again.
pub struct ArtifactSlot<'a> {
    artifacts: Artifacts<'a>,
    owner: &'a Principal,
    saved: Option<Option<ArtifactId>>,
}

impl<'a> ArtifactSlot<'a> {
    /// An empty slot for a call made by `owner`.
    pub fn new(artifacts: Artifacts<'a>, owner: &'a Principal) -> ArtifactSlot<'a> {
        ArtifactSlot {
            artifacts,
            owner,
            saved: None,
        }
    }

    /// The object a first save of `len` bytes of JSON writes (its id, key and metadata), or the
    /// outcome of the save that came first.
    fn first_save(
        &self,
        len: u64,
    ) -> Result<(ArtifactId, String, ArtifactMeta), Option<ArtifactId>> {
        match &self.saved {
            Some(saved) => Err(saved.clone()),
            None => Ok(self
                .artifacts
                .new_object(self.owner, JSON_CONTENT_TYPE, len)),
        }
    }

    /// The artifact's id, saving a JSON value of `len` bytes as `application/json` on the first
    /// call; `None` when saving failed (already logged). `fill` appends the next piece to the
    /// empty buffer it is given and returns false after the last; it runs only on the first call.
    /// The store takes each piece as it comes ([`crate::ports::ArtifactStore::put_pieces`]), so
    /// the JSON never exists whole in memory.
    pub async fn save_pieces(
        &mut self,
        len: u64,
        mut fill: impl FnMut(&mut String) -> bool,
    ) -> Option<ArtifactId> {
        let (id, key, meta) = match self.first_save(len) {
            Ok(object) => object,
            Err(earlier) => return earlier,
        };
        let store = self.artifacts.ports.artifacts;
        let saved = match store.put_pieces(&key, len, &mut fill, meta).await {
            Ok(()) => Some(id),
            Err(error) => {
                self.artifacts.log_save_failure(len, &error);
                None
            }
        };
        self.saved = Some(saved.clone());
        saved
    }

    /// Like [`ArtifactSlot::save_pieces`], but the write runs in `background` after the reply:
    /// the id is returned at once, before anything is stored. `content` owns what is written and
    /// makes a fresh writer for each attempt; a failed write is logged and tried once more, and
    /// `memory` (what the call held) is returned when the write ends.
    pub(crate) fn save_in_background(
        &mut self,
        background: &dyn Background,
        len: u64,
        content: Box<dyn Content>,
        memory: Option<HeldMemory>,
    ) -> Option<ArtifactId> {
        let (id, key, meta) = match self.first_save(len) {
            Ok(object) => object,
            Err(earlier) => return earlier,
        };
        let store = background.artifacts();
        let log = background.log();
        background.spawn(Box::pin(async move {
            let _memory = memory;
            for attempt in 1..=2u64 {
                let mut fill = content.pieces();
                match store.put_pieces(&key, len, &mut *fill, meta.clone()).await {
                    Ok(()) => return,
                    // The key names the owner's digest only; the error is the store's.
                    Err(error) => log.event(
                        Level::Warn,
                        "artifact_save_failed",
                        &[
                            ("bytes", len.into()),
                            ("attempt", attempt.into()),
                            ("background", true.into()),
                            ("error", (&error.0).into()),
                        ],
                    ),
                }
            }
        }));
        self.saved = Some(Some(id.clone()));
        Some(id)
    }

    /// The outcome so far: `None` when nothing was saved yet, `Some(None)` after a failed save.
    pub fn saved(&self) -> Option<Option<&ArtifactId>> {
        self.saved.as_ref().map(Option::as_ref)
    }
}

/// What a background write stores, owned by the write.
pub(crate) trait Content {
    /// A writer of the content from its start, as [`ArtifactSlot::save_pieces`] takes it.
    fn pieces(&self) -> Box<dyn FnMut(&mut String) -> bool + '_>;
}

/// SHA-256 of the principal's name, in lower-case hex.
fn owner_digest(owner: &Principal) -> String {
    hex(&Sha256::digest(owner.name().as_bytes()))
}

/// The tag that binds the id `bytes` to the owner with digest `owner`; the tag's own place in
/// `bytes` is not hashed.
fn tag(owner: &str, bytes: &[u8; 16]) -> [u8; TAG_BYTES] {
    let mut hash = Sha256::new();
    hash.update(owner.as_bytes());
    hash.update(&bytes[..16 - TAG_BYTES]);
    let digest = hash.finalize();
    let mut tag = [0; TAG_BYTES];
    tag.copy_from_slice(&digest[..TAG_BYTES]);
    tag
}

fn key_for(owner_digest: &str, id: &ArtifactId) -> String {
    let owner = owner_digest.get(..KEY_OWNER_HEX).unwrap_or(owner_digest);
    format!("{KEY_PREFIX}{owner}/{id}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::fake::FakeEnv;
    use crate::ports::Clock;
    use futures::executor::block_on;

    #[test]
    fn ids_are_canonical_v4_uuids() {
        let id = ArtifactId::from_random_bytes([0xff; 16]);
        assert_eq!(id.as_str(), "ffffffff-ffff-4fff-bfff-ffffffffffff");
        assert_eq!(ArtifactId::parse(id.as_str()), Some(id.clone()));
        for bad in [
            "",
            "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF",
            "ffffffffffff4fffbfffffffffffffff",
            "{ffffffff-ffff-4fff-bfff-ffffffffffff}",
            "ffffffff-ffff-1fff-bfff-ffffffffffff",
            "ffffffff-ffff-4fff-7fff-ffffffffffff",
            "../../etc/passwd-aaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            assert_eq!(ArtifactId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn new_ids_are_v7_and_carry_their_creation_time() {
        let env = FakeEnv::new();
        let now = env.clock.now_ms();
        let artifacts = Artifacts::new(env.call_ports(), 3_600);
        let owner = Principal::named("alice");
        let id = block_on(artifacts.save(&owner, b"{}".to_vec(), "x/y")).unwrap();
        assert_eq!(&id.as_str()[14..15], "7", "{id}");
        assert_eq!(ArtifactId::parse(id.as_str()), Some(id.clone()));
        assert_eq!(id.created_ms(), Some(now));
        assert_eq!(ArtifactId::from_random_bytes([7; 16]).created_ms(), None);
    }

    /// A content whose writer starts over on each attempt; `extra` bytes beyond the declared
    /// length make every write fail.
    struct Text(&'static str);

    impl Content for Text {
        fn pieces(&self) -> Box<dyn FnMut(&mut String) -> bool + '_> {
            Box::new(|out| {
                out.push_str(self.0);
                false
            })
        }
    }

    type Read<'a> =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Chunk, ArtifactError>> + 'a>>;

    fn read_of<'a>(env: &'a FakeEnv, owner: &'a Principal, id: impl ToString) -> Read<'a> {
        let id = id.to_string();
        Box::pin(async move {
            Artifacts::new(env.call_ports(), 3_600)
                .read(owner, &id, 0, 100)
                .await
        })
    }

    /// Polls `read` once, without blocking: `None` while it waits.
    fn poll(read: &mut Read<'_>) -> Option<Result<Chunk, ArtifactError>> {
        futures::FutureExt::now_or_never(read.as_mut())
    }

    fn save_in_background(
        env: &FakeEnv,
        owner: &Principal,
        text: &'static str,
        len: u64,
    ) -> ArtifactId {
        let mut slot = ArtifactSlot::new(Artifacts::new(env.call_ports(), 3_600), owner);
        slot.save_in_background(&env.background, len, Box::new(Text(text)), None)
            .unwrap()
    }

    #[test]
    fn a_read_waits_for_a_write_still_in_flight() {
        let env = FakeEnv::new();
        let owner = Principal::named("alice");
        let id = save_in_background(&env, &owner, "[1,2]", 5);
        assert!(env.artifacts.keys().is_empty());
        let mut read = read_of(&env, &owner, id.as_str());
        assert!(poll(&mut read).is_none());
        env.background.run();
        assert!(poll(&mut read).is_none(), "it sleeps before reading again");
        env.clock.advance(FIRST_WAIT_MS);
        assert_eq!(poll(&mut read).unwrap().unwrap().bytes, b"[1,2]");
    }

    #[test]
    fn a_failed_background_write_is_retried_once_then_reads_say_so_after_the_window() {
        let env = FakeEnv::new();
        let owner = Principal::named("alice");
        let id = save_in_background(&env, &owner, "[1,2]", 4);
        env.background.run();
        assert_eq!(env.background.pending(), 0);
        let failures = env
            .log
            .lines()
            .iter()
            .filter(|l| l.contains("artifact_save_failed"))
            .count();
        assert_eq!(failures, 2, "{:?}", env.log.lines());
        assert!(!env.log.lines().join("\n").contains("alice"));
        let mut read = read_of(&env, &owner, id.as_str());
        let mut waited = 0;
        let outcome = loop {
            if let Some(outcome) = poll(&mut read) {
                break outcome;
            }
            env.clock.advance(100);
            waited += 100;
        };
        assert_eq!(outcome, Err(ArtifactError::WriteIncomplete));
        assert_eq!(waited, WRITE_WINDOW_MS);
        let text = ArtifactError::WriteIncomplete.to_string();
        assert!(
            text.contains("did not complete") && text.contains("repeat the"),
            "{text}"
        );
    }

    #[test]
    fn ids_are_bound_to_their_owner() {
        let (alice, bob) = (Principal::named("alice"), Principal::named("bob"));
        let id = ArtifactId::minted(&owner_digest(&alice), 1_700_000_000_000, [0xa5; 10]);
        assert_eq!(ArtifactId::parse(id.as_str()), Some(id.clone()));
        assert_eq!(id.created_ms(), Some(1_700_000_000_000));
        assert!(id.minted_for(&owner_digest(&alice)));
        assert!(!id.minted_for(&owner_digest(&bob)));
        let untagged = ArtifactId::from_time_and_random(1_700_000_000_000, [0xa5; 10]);
        assert!(!untagged.minted_for(&owner_digest(&alice)));
        assert!(!ArtifactId::from_random_bytes([0xa5; 16]).minted_for(&owner_digest(&alice)));
    }

    #[test]
    fn a_recent_id_of_another_owner_is_not_found_at_once_like_a_recent_unknown_id() {
        let env = FakeEnv::new();
        let (alice, bob) = (Principal::named("alice"), Principal::named("bob"));
        let written =
            block_on(Artifacts::new(env.call_ports(), 3_600).save(&alice, b"{}".to_vec(), "x/y"));
        let in_flight = save_in_background(&env, &alice, "[1,2]", 5);
        let unknown = ArtifactId::from_time_and_random(env.clock.now_ms(), [7; 10]);
        for id in [written.unwrap(), in_flight.clone(), unknown] {
            let mut read = read_of(&env, &bob, id.as_str());
            assert_eq!(poll(&mut read), Some(Err(ArtifactError::NotFound)), "{id}");
        }
        // The owner's own id, still in flight, is waited for.
        let mut read = read_of(&env, &alice, in_flight.as_str());
        assert!(poll(&mut read).is_none());
        env.background.run();
        env.clock.advance(FIRST_WAIT_MS);
        assert_eq!(poll(&mut read).unwrap().unwrap().bytes, b"[1,2]");
    }

    #[test]
    fn every_not_found_text_starts_with_the_one_text() {
        for error in [ArtifactError::NotFound, ArtifactError::WriteIncomplete] {
            assert!(error.to_string().starts_with(NOT_FOUND), "{error}");
        }
    }

    #[test]
    fn missing_v4_and_old_v7_ids_answer_at_once_and_future_ids_wait_no_longer_than_the_window() {
        let env = FakeEnv::new();
        let owner = Principal::named("alice");
        let digest = owner_digest(&owner);
        let now = env.clock.now_ms();
        let v4 = ArtifactId::from_random_bytes([7; 16]);
        let old = ArtifactId::minted(&digest, now - WRITE_WINDOW_MS, [7; 10]);
        for id in [&v4, &old] {
            let mut read = read_of(&env, &owner, id.as_str());
            assert_eq!(poll(&mut read), Some(Err(ArtifactError::NotFound)), "{id}");
        }
        let forged = ArtifactId::minted(&digest, now + 86_400_000, [7; 10]);
        let mut read = read_of(&env, &owner, forged.as_str());
        assert!(poll(&mut read).is_none());
        env.clock.advance(WRITE_WINDOW_MS - 1);
        while poll(&mut read).is_none() {
            env.clock.advance(1);
        }
        assert_eq!(env.clock.now_ms(), now + WRITE_WINDOW_MS);
    }

    #[test]
    fn pieces_that_do_not_add_up_to_the_declared_length_store_nothing() {
        let env = FakeEnv::new();
        let owner = Principal::named("alice");
        let save = |len: u64| {
            let mut slot = ArtifactSlot::new(Artifacts::new(env.call_ports(), 3_600), &owner);
            let mut left = 3;
            block_on(slot.save_pieces(len, |out| {
                out.push_str("ab");
                left -= 1;
                left > 0
            }))
        };
        assert!(save(7).is_none());
        assert!(env.artifacts.keys().is_empty());
        assert!(env.log.lines().join("\n").contains("artifact_save_failed"));
        let id = save(6).unwrap();
        let chunk =
            block_on(Artifacts::new(env.call_ports(), 3_600).read(&owner, id.as_str(), 0, 100));
        assert_eq!(chunk.unwrap().bytes, b"ababab");
    }

    #[test]
    fn keys_scope_by_a_digest_of_the_owner() {
        let env = FakeEnv::new();
        let artifacts = Artifacts::new(env.call_ports(), 3_600);
        let id =
            block_on(artifacts.save(&Principal::named("alice"), b"{}".to_vec(), "x/y")).unwrap();
        let keys = env.artifacts.keys();
        let digest = owner_digest(&Principal::named("alice"));
        assert_eq!(keys, [format!("artifacts/v1/{}/{id}", &digest[..16])]);
        assert!(!keys[0].contains("alice"));
    }
}
