//! An artifact written as its bytes arrive (a job log far larger than memory): buffered into
//! parts of one size and sent as an R2 multipart upload, or as one put when it never fills a
//! part. At most one part is held at a time.

use super::{ArtifactId, Artifacts};
use crate::auth::Principal;
use crate::ports::{ArtifactMeta, PartUpload, StoreError, MIN_PART_BYTES};

/// Writes one artifact in parts. A store failure is logged once and turns the writer into a
/// sink: the call goes on without an artifact.
pub(crate) struct ArtifactWriter<'a> {
    artifacts: Artifacts<'a>,
    id: ArtifactId,
    key: String,
    meta: ArtifactMeta,
    part_bytes: usize,
    buffer: Vec<u8>,
    upload: Option<Box<dyn PartUpload + 'a>>,
    written: u64,
    failed: bool,
}

impl<'a> ArtifactWriter<'a> {
    /// A writer of a new artifact of `owner`, uploaded in parts of [`MIN_PART_BYTES`].
    pub(crate) fn new(artifacts: Artifacts<'a>, owner: &Principal, content_type: &str) -> Self {
        ArtifactWriter::with_part_size(artifacts, owner, content_type, MIN_PART_BYTES)
    }

    /// [`ArtifactWriter::new`] with parts of `part_bytes` (tests use small parts).
    pub(crate) fn with_part_size(
        artifacts: Artifacts<'a>,
        owner: &Principal,
        content_type: &str,
        part_bytes: usize,
    ) -> Self {
        let (id, key, meta) = artifacts.new_object(owner, content_type, 0);
        ArtifactWriter {
            artifacts,
            id,
            key,
            meta,
            part_bytes: part_bytes.max(1),
            buffer: Vec::new(),
            upload: None,
            written: 0,
            failed: false,
        }
    }

    /// Appends `bytes`, uploading every part that fills.
    pub(crate) async fn write(&mut self, mut bytes: &[u8]) {
        self.written += bytes.len() as u64;
        while !self.failed && !bytes.is_empty() {
            let take = (self.part_bytes - self.buffer.len()).min(bytes.len());
            self.buffer.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.buffer.len() == self.part_bytes {
                let part = std::mem::take(&mut self.buffer);
                if let Err(e) = self.put_part(part).await {
                    self.fail(e).await;
                }
            }
        }
    }

    async fn put_part(&mut self, part: Vec<u8>) -> Result<(), StoreError> {
        if self.upload.is_none() {
            let store = self.artifacts.ports.artifacts;
            self.upload = Some(
                store
                    .begin_upload(self.key.clone(), self.meta.clone())
                    .await?,
            );
        }
        match &mut self.upload {
            Some(upload) => upload.put_part(part).await,
            None => Err(StoreError("no upload".into())),
        }
    }

    async fn fail(&mut self, error: StoreError) {
        self.failed = true;
        self.buffer = Vec::new();
        self.artifacts.log_save_failure(self.written, &error);
        if let Some(upload) = &mut self.upload {
            // Best effort: R2 also drops unfinished uploads after a week.
            let _ = upload.abort().await;
        }
    }

    /// Gives up: an upload already begun is aborted, nothing becomes readable.
    pub(crate) async fn abandon(mut self) {
        if let Some(upload) = &mut self.upload {
            let _ = upload.abort().await;
        }
    }

    /// Makes the artifact readable and returns its id; `None` when storing failed (logged).
    pub(crate) async fn finish(mut self) -> Option<ArtifactId> {
        if self.failed {
            return None;
        }
        let last = std::mem::take(&mut self.buffer);
        let outcome = match &mut self.upload {
            None => {
                let store = self.artifacts.ports.artifacts;
                store.put(&self.key, last, self.meta.clone()).await
            }
            Some(upload) => {
                let put = if last.is_empty() {
                    Ok(())
                } else {
                    upload.put_part(last).await
                };
                match put {
                    Ok(()) => upload.complete().await,
                    Err(e) => Err(e),
                }
            }
        };
        match outcome {
            Ok(()) => Some(self.id.clone()),
            Err(e) => {
                self.fail(e).await;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::fake::FakeEnv;
    use crate::ports::ArtifactStore;
    use futures::executor::block_on;

    fn written(env: &FakeEnv, part: usize, pieces: &[&[u8]]) -> Option<Vec<u8>> {
        let artifacts = Artifacts::new(env.call_ports(), 3_600);
        let owner = Principal::named("p");
        block_on(async {
            let mut w = ArtifactWriter::with_part_size(artifacts, &owner, "text/plain", part);
            for piece in pieces {
                w.write(piece).await;
            }
            let id = w.finish().await?;
            let chunk = artifacts.read(&owner, id.as_str(), 0, 1).await.ok()?;
            assert_eq!(chunk.content_type, "text/plain");
            let key = env
                .artifacts
                .keys()
                .into_iter()
                .find(|k| k.ends_with(id.as_str()))?;
            let whole = env.artifacts.get_range(&key, 0, u64::MAX).await.ok()??;
            Some(whole.bytes)
        })
    }

    #[test]
    fn parts_reassemble_in_order() {
        // The fake refuses parts under R2's 5 MiB, so real-size parts are written.
        let env = FakeEnv::new();
        let a = vec![b'a'; MIN_PART_BYTES - 3];
        let b = vec![b'b'; MIN_PART_BYTES + 10];
        let got = written(&env, MIN_PART_BYTES, &[&a, &b, b"end"]).unwrap();
        let mut want = a.clone();
        want.extend_from_slice(&b);
        want.extend_from_slice(b"end");
        assert!(
            got == want,
            "{} bytes back, {} written",
            got.len(),
            want.len()
        );
        // Small bodies are one put; empty ones too.
        assert_eq!(written(&env, MIN_PART_BYTES, &[b"x", b"y"]).unwrap(), b"xy");
        assert_eq!(written(&env, MIN_PART_BYTES, &[]).unwrap(), b"");
    }

    #[test]
    fn a_store_failure_means_no_artifact_and_one_log_line() {
        let env = FakeEnv::new();
        env.artifacts.failing.set(true);
        assert_eq!(written(&env, 4, &[b"0123456789", b"more"]), None);
        let lines = env.log.lines();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("artifact_save_failed"), "{lines:?}");
        // Parts of an uneven size are refused by the store's rules, and reported.
        let env = FakeEnv::new();
        assert_eq!(written(&env, 4, &[b"0123456789"]), None);
    }
}
