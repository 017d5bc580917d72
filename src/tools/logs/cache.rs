//! A completed job's log never changes, so once read it is cached per principal and credential
//! (the HTTP cache's keys): the entry holds the job's fields and steps and names the log's
//! artifact, and a later question about the job, with any options, is answered from the
//! artifact without an upstream call. Entries live as long as artifacts do.

use crate::artifacts::{ArtifactId, Artifacts};
use crate::cache::{cache_key, CachedResponse, HttpCache, UpstreamIdentity};
use crate::logs::excerpt::Step;
use crate::logs::Excerpter;
use crate::tools::logs::download::{Pacer, YIELD_BYTES};
use crate::tools::registry::ToolContext;
use crate::upstream::Vendor;
use crate::value::{Map, Value};
use serde::{Deserialize, Serialize};

/// Bytes of the artifact read per store call when replaying a cached log.
const REPLAY_CHUNK: u64 = 1024 * 1024;

/// What is cached for a job.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// The job's result fields, compact JSON.
    fields: String,
    /// (number, name, conclusion, started_at) of each step.
    steps: Vec<(u64, String, Option<String>, Option<u64>)>,
    /// The complete log.
    artifact: String,
}

/// The cache of completed jobs' logs for one call.
pub(crate) struct LogCache<'c, 'a> {
    call: &'c ToolContext<'a>,
    cache: HttpCache<'a>,
    identity: Option<UpstreamIdentity>,
    vendor: Vendor,
}

/// A job served from the cache: its fields, steps and log artifact.
pub(crate) struct Hit {
    /// The job's result fields.
    pub(crate) fields: Map,
    /// Its steps.
    pub(crate) steps: Vec<Step>,
    /// The artifact holding its complete log.
    pub(crate) artifact: ArtifactId,
}

impl<'c, 'a> LogCache<'c, 'a> {
    /// The cache for `vendor`'s jobs; without the vendor's credential nothing is cached.
    pub(crate) fn new(call: &'c ToolContext<'a>, vendor: Vendor) -> LogCache<'c, 'a> {
        let identity = call
            .upstream
            .endpoint(vendor)
            .map(|e| UpstreamIdentity::new(vendor.id(), e.credential.identity.expose()));
        LogCache {
            call,
            cache: HttpCache::new(&call.ports, call.settings.artifact_retention_seconds),
            identity,
            vendor,
        }
    }

    fn key(&self, job: &str) -> Option<String> {
        let identity = self.identity.as_ref()?;
        let name = format!("job-log:{}:{job}", self.vendor.id());
        Some(cache_key(self.call.principal.name(), identity, &name))
    }

    /// The cached job `job` (a vendor-unique name such as `o/r/123`), when its entry and its
    /// artifact are both still there.
    pub(crate) async fn lookup(&self, job: &str) -> Option<Hit> {
        // No room for the entry is a miss: the job is then read as if it had none.
        let hit = self.cache.lookup(&self.key(job)?).await.ok()??;
        let entry: Entry = serde_json::from_slice(&hit.body).ok()?;
        let Ok(Value::Object(fields)) = crate::value::parse(&entry.fields) else {
            return None;
        };
        let artifact = ArtifactId::parse(&entry.artifact)?;
        let artifacts = Artifacts::new(
            self.call.ports,
            self.call.settings.artifact_retention_seconds,
        );
        // An artifact past retention (or deleted) makes the entry useless.
        artifacts
            .read(self.call.principal, artifact.as_str(), 0, 0)
            .await
            .ok()?;
        let steps = entry
            .steps
            .into_iter()
            .map(|(number, name, conclusion, started_at)| Step {
                number,
                name,
                conclusion,
                started_at,
            })
            .collect();
        Some(Hit {
            fields,
            steps,
            artifact,
        })
    }

    /// Remembers a completed job whose log is `artifact`.
    pub(crate) async fn store(
        &self,
        job: &str,
        fields: &Map,
        steps: &[Step],
        artifact: &ArtifactId,
    ) {
        let Some(key) = self.key(job) else { return };
        let entry = Entry {
            fields: Value::Object(fields.clone()).to_compact_json(),
            steps: steps
                .iter()
                .map(|s| (s.number, s.name.clone(), s.conclusion.clone(), s.started_at))
                .collect(),
            artifact: artifact.to_string(),
        };
        let Ok(body) = serde_json::to_vec(&entry) else {
            return;
        };
        let response = CachedResponse {
            status: 200,
            content_type: Some("application/json".into()),
            body,
            fetched_at_ms: self.call.ports.clock.now_ms(),
        };
        self.cache.store(&key, response).await;
    }

    /// Feeds the artifact `id` into `excerpter`; false when it could not be read to the end.
    pub(crate) async fn replay(&self, id: &ArtifactId, excerpter: &mut Excerpter) -> bool {
        let artifacts = Artifacts::new(
            self.call.ports,
            self.call.settings.artifact_retention_seconds,
        );
        let mut pacer = Pacer::new(self.call.ports.clock);
        let mut offset = 0;
        loop {
            match artifacts
                .read(self.call.principal, id.as_str(), offset, REPLAY_CHUNK)
                .await
            {
                Ok(chunk) => {
                    for piece in chunk.bytes.chunks(YIELD_BYTES) {
                        excerpter.push(piece);
                        pacer.handled(piece.len()).await;
                    }
                    // A grep out of budget fails the call: the rest is not needed.
                    if chunk.eof || excerpter.over_budget().is_some() {
                        return true;
                    }
                    offset = chunk.next_offset;
                }
                Err(_) => return false,
            }
        }
    }
}
