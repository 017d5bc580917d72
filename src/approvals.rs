//! Pending approvals of `approval_required` calls, kept in the policy KV namespace: a record per
//! request (`approval/<id>`) and a binding from (requester, tool, arguments hash) to the live
//! request (`approval-binding/...`). Records expire with the approval TTL; a request is decided
//! once, by an approver who is not its requester, and an approval is consumed by one call.

use crate::hex::hex;
use crate::ports::{CacheEntry, CacheStore, Level, Ports, StoreError};
use crate::time::iso8601_utc_ms;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::fmt;
use std::sync::Mutex;

const RECORD_PREFIX: &str = "approval/";
const BINDING_PREFIX: &str = "approval-binding/";
/// KV refuses expirations below a minute, so a record can outlive its `expiresAt` by that much;
/// every read checks `expiresAt` against the clock.
const MIN_KV_TTL_SECONDS: u64 = 60;
/// The most records `approval_list` reads.
pub const LIST_LIMIT: usize = 200;

/// Where a request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Waiting for an approver.
    Pending,
    /// Approved; the requester's next identical call runs.
    Approved,
    /// Refused by an approver.
    Denied,
    /// Approved and used by one call.
    Consumed,
}

impl Status {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Denied => "denied",
            Status::Consumed => "consumed",
        }
    }
}

/// One approval request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// `apr_` + 32 hex digits.
    pub id: String,
    /// The principal whose call it is.
    pub requester: String,
    /// The tool called.
    pub tool: String,
    /// SHA-256 of the canonical arguments, hex.
    pub arguments_hash: String,
    /// The arguments, for approvers to judge.
    pub arguments: Map<String, Json>,
    /// The rule that required approval.
    pub rule: String,
    /// The rule's reason.
    pub reason: String,
    /// The upstream method, if any.
    pub method: Option<String>,
    /// The normalised upstream path, if any.
    pub path: Option<String>,
    /// Who may decide (resolved when the request was made).
    pub approvers: Vec<String>,
    /// Where it stands.
    pub status: Status,
    /// When it was made, Unix ms.
    pub created_at_ms: u64,
    /// When it stops being usable, Unix ms.
    pub expires_at_ms: u64,
    /// Who decided it.
    pub decided_by: Option<String>,
    /// The approver's reason.
    pub decision_reason: Option<String>,
}

impl Record {
    /// `expiresAt` as ISO 8601.
    pub fn expires_at(&self) -> String {
        iso8601_utc_ms(self.expires_at_ms)
    }

    /// The `approval` member of a decision.
    pub fn summary(&self) -> Json {
        serde_json::json!({
            "id": self.id,
            "status": self.status.as_str(),
            "expiresAt": self.expires_at(),
        })
    }
}

/// Why an approval operation failed; the text is for the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalError {
    /// No live request with that id.
    NotFound,
    /// The caller is not one of the request's approvers.
    NotApprover,
    /// The caller made the request.
    SelfApproval,
    /// The request was decided already.
    AlreadyDecided(Status),
    /// The store failed; the text is for logs.
    Store(String),
}

impl fmt::Display for ApprovalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApprovalError::NotFound => {
                f.write_str("No live approval request has this id (it may have expired).")
            }
            ApprovalError::NotApprover => f.write_str("You are not an approver of this request."),
            ApprovalError::SelfApproval => {
                f.write_str("You cannot decide your own approval request; another approver must.")
            }
            ApprovalError::AlreadyDecided(s) => {
                write!(
                    f,
                    "This request was already decided (status {}).",
                    s.as_str()
                )
            }
            ApprovalError::Store(_) => {
                f.write_str("The approval store is unavailable; try again shortly.")
            }
        }
    }
}

impl From<StoreError> for ApprovalError {
    fn from(e: StoreError) -> Self {
        ApprovalError::Store(e.0)
    }
}

/// Compact JSON with object keys sorted (recursively), so argument order never matters.
pub fn canonical_json(value: &Json) -> String {
    fn sorted(value: &Json) -> Json {
        match value {
            Json::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_unstable();
                let mut out = Map::new();
                for k in keys {
                    if let Some(v) = map.get(k) {
                        out.insert(k.clone(), sorted(v));
                    }
                }
                Json::Object(out)
            }
            Json::Array(items) => Json::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// The hex SHA-256 of the canonical form of `arguments`.
pub fn arguments_hash(arguments: &Map<String, Json>) -> String {
    hex(&Sha256::digest(
        canonical_json(&Json::Object(arguments.clone())).as_bytes(),
    ))
}

/// Approval ids this isolate has claimed for use, newest last. KV has no compare-and-set: two
/// identical calls in one isolate can both read an approval as unused before either marks it
/// consumed. Claiming the id here, with no await between the check and the insert, lets only
/// the first of them through. Old ids fall out; by then their records say consumed.
static CLAIMED: Mutex<VecDeque<String>> = Mutex::new(VecDeque::new());
/// How many claimed ids an isolate remembers.
const CLAIMS_KEPT: usize = 4096;

/// Claims approval `id` for one use in this isolate: true the first time, false after.
pub fn claim(id: &str) -> bool {
    // A poisoned lock only means a panic elsewhere; the list itself is always consistent.
    let mut claimed = CLAIMED.lock().unwrap_or_else(|e| e.into_inner());
    if claimed.iter().any(|c| c == id) {
        return false;
    }
    if claimed.len() == CLAIMS_KEPT {
        claimed.pop_front();
    }
    claimed.push_back(id.to_owned());
    true
}

/// One log line per approval event (requested, approved, denied, consumed); never the arguments.
pub fn log_event(ports: Ports<'_>, action: &str, record: &Record, by: &str) {
    ports.log.event(
        Level::Info,
        "approval",
        &[
            ("action", action.into()),
            ("approvalId", (&record.id).into()),
            ("requester", (&record.requester).into()),
            ("tool", (&record.tool).into()),
            ("rule", (&record.rule).into()),
            ("by", by.into()),
        ],
    );
}

fn binding_key(requester: &str, tool: &str, hash: &str) -> String {
    format!("{BINDING_PREFIX}{requester}/{tool}/{hash}")
}

fn record_key(id: &str) -> Option<String> {
    let ok = id.len() == 36
        && id.starts_with("apr_")
        && id[4..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
    ok.then(|| format!("{RECORD_PREFIX}{id}"))
}

/// The approvals of one request's environment.
pub struct Approvals<'a> {
    store: &'a dyn CacheStore,
    ports: Ports<'a>,
}

impl<'a> Approvals<'a> {
    /// Approvals in `ports.state`.
    pub fn new(ports: Ports<'a>) -> Approvals<'a> {
        Approvals {
            store: ports.state,
            ports,
        }
    }

    fn ttl_seconds(&self, record: &Record) -> u64 {
        let now = self.ports.clock.now_ms();
        record
            .expires_at_ms
            .saturating_sub(now)
            .div_ceil(1000)
            .max(MIN_KV_TTL_SECONDS)
    }

    async fn save(&self, record: &Record) -> Result<(), ApprovalError> {
        let key = record_key(&record.id).ok_or(ApprovalError::NotFound)?;
        let value = serde_json::to_vec(record).map_err(|e| ApprovalError::Store(e.to_string()))?;
        let entry = CacheEntry {
            value,
            metadata: String::new(),
        };
        self.store
            .put(&key, entry, self.ttl_seconds(record))
            .await?;
        Ok(())
    }

    /// The live record `id` (`None` when absent, unreadable or past `expiresAt`).
    pub async fn get(&self, id: &str) -> Result<Option<Record>, ApprovalError> {
        let Some(key) = record_key(id) else {
            return Ok(None);
        };
        let Some(entry) = self.store.get(&key).await? else {
            return Ok(None);
        };
        let Ok(record) = serde_json::from_slice::<Record>(&entry.value) else {
            return Ok(None);
        };
        Ok((record.expires_at_ms > self.ports.clock.now_ms()).then_some(record))
    }

    /// The live request bound to this requester, tool and arguments hash, if any.
    pub async fn bound(
        &self,
        requester: &str,
        tool: &str,
        hash: &str,
    ) -> Result<Option<Record>, ApprovalError> {
        let Some(entry) = self.store.get(&binding_key(requester, tool, hash)).await? else {
            return Ok(None);
        };
        let id = String::from_utf8_lossy(&entry.value).into_owned();
        Ok(self
            .get(&id)
            .await?
            .filter(|r| r.requester == requester && r.tool == tool && r.arguments_hash == hash))
    }

    /// Records a new pending request and binds it.
    pub async fn create(
        &self,
        mut record: Record,
        ttl_seconds: u64,
    ) -> Result<Record, ApprovalError> {
        let mut random = [0u8; 16];
        self.ports.rng.fill(&mut random);
        record.id = format!("apr_{}", hex(&random));
        record.status = Status::Pending;
        record.created_at_ms = self.ports.clock.now_ms();
        record.expires_at_ms = record.created_at_ms + ttl_seconds * 1000;
        self.save(&record).await?;
        let binding = CacheEntry {
            value: record.id.clone().into_bytes(),
            metadata: String::new(),
        };
        let key = binding_key(&record.requester, &record.tool, &record.arguments_hash);
        self.store
            .put(&key, binding, self.ttl_seconds(&record))
            .await?;
        Ok(record)
    }

    /// Approves or denies `id` as `approver`.
    pub async fn decide(
        &self,
        id: &str,
        approver: &str,
        approve: bool,
        reason: Option<String>,
    ) -> Result<Record, ApprovalError> {
        let mut record = self.get(id).await?.ok_or(ApprovalError::NotFound)?;
        if record.requester == approver {
            return Err(ApprovalError::SelfApproval);
        }
        if !record.approvers.iter().any(|a| a == approver) {
            return Err(ApprovalError::NotApprover);
        }
        if record.status != Status::Pending {
            return Err(ApprovalError::AlreadyDecided(record.status));
        }
        record.status = if approve {
            Status::Approved
        } else {
            Status::Denied
        };
        record.decided_by = Some(approver.to_owned());
        record.decision_reason = reason;
        self.save(&record).await?;
        Ok(record)
    }

    /// Marks an approved request used and unbinds it, before the call it allows runs. The
    /// caller must have [`claim`]ed the id first.
    pub async fn consume(&self, mut record: Record) -> Result<Record, ApprovalError> {
        record.status = Status::Consumed;
        self.save(&record).await?;
        self.store
            .delete(&binding_key(
                &record.requester,
                &record.tool,
                &record.arguments_hash,
            ))
            .await?;
        Ok(record)
    }

    /// The pending requests `approver` may decide (not their own), oldest first.
    pub async fn pending_for(&self, approver: &str) -> Result<Vec<Record>, ApprovalError> {
        let keys = self.store.list(RECORD_PREFIX, LIST_LIMIT).await?;
        let mut out = Vec::new();
        for key in keys {
            let Some(id) = key.strip_prefix(RECORD_PREFIX) else {
                continue;
            };
            if let Some(record) = self.get(id).await? {
                if record.status == Status::Pending
                    && record.requester != approver
                    && record.approvers.iter().any(|a| a == approver)
                {
                    out.push(record);
                }
            }
        }
        out.sort_by_key(|r| r.created_at_ms);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let a = json!({"b": 1, "a": {"y": [ {"d": 1, "c": 2} ], "x": null}});
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[{"c":2,"d":1}]},"b":1}"#
        );
        let (Json::Object(x), Json::Object(y)) = (
            json!({"path": "/a", "body": {"k": 1, "j": 2}}),
            json!({"body": {"j": 2, "k": 1}, "path": "/a"}),
        ) else {
            unreachable!()
        };
        assert_eq!(arguments_hash(&x), arguments_hash(&y));
        let Json::Object(z) = json!({"path": "/b", "body": {"j": 2, "k": 1}}) else {
            unreachable!()
        };
        assert_ne!(arguments_hash(&x), arguments_hash(&z));
        assert_eq!(arguments_hash(&x).len(), 64);
    }

    #[test]
    fn an_approval_is_claimed_once_per_isolate() {
        let id = "claim-test-5d0c6f1e";
        assert!(claim(id));
        assert!(!claim(id));
        assert!(claim("claim-test-other"));
    }

    #[test]
    fn record_keys_accept_only_approval_ids() {
        assert!(record_key("apr_0123456789abcdef0123456789abcdef").is_some());
        for bad in [
            "apr_0123",
            "xyz_0123456789abcdef0123456789abcdef",
            "apr_0123456789ABCDEF0123456789abcdef",
            "apr_../../0123456789abcdef0123456789ab",
        ] {
            assert!(record_key(bad).is_none(), "{bad}");
        }
    }
}
