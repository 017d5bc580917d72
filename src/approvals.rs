//! Approvals of `approval_required` calls, kept in the approval ledger (the `APPROVALS` Durable
//! Object, through the [`ApprovalStore`](crate::ports::ApprovalStore) port): the requests the
//! gate makes and consumes, the approvers' list and decisions, the arguments hash that binds an
//! approval to one call, and one log line per event. Each operation is one atomic op on the
//! ledger ([`crate::ledger`]), so an approval is consumed by exactly one call, globally.

use crate::auth::Principal;
use crate::hex::hex;
use crate::ledger::{CallOutcome, Op, Refusal, Reply};
use crate::ports::{ApprovalStore, Clock, Level, Log, Rng, StoreError};
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};
use std::fmt;

pub use crate::ledger::{
    Cursor, Details, Entry, Record, Status, MAX_PENDING_PER_REQUESTER, MAX_RECORD_BYTES,
    PAGE_BYTES, PAGE_ITEMS,
};

/// Why an approval operation failed; the text is for the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ApprovalError {
    /// The ledger refused it.
    Refused(Refusal),
    /// The store failed or is not configured; the text is for logs.
    Store(StoreError),
    /// The store answered an op with the reply of another.
    Protocol,
}

impl fmt::Display for ApprovalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApprovalError::Refused(refusal) => refusal.fmt(f),
            ApprovalError::Store(error) if error.is_missing_binding() => f.write_str(
                "The approval store (the APPROVALS Durable Object) is not configured for this \
                 deployment, so no approval can be requested, listed, decided or used.",
            ),
            ApprovalError::Store(_) | ApprovalError::Protocol => {
                f.write_str("The approval store is unavailable; try again shortly.")
            }
        }
    }
}

impl From<StoreError> for ApprovalError {
    fn from(e: StoreError) -> Self {
        ApprovalError::Store(e)
    }
}

/// Compact JSON with object keys sorted (recursively), so argument order never matters.
pub(crate) fn canonical_json(value: &Json) -> String {
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
pub(crate) fn arguments_hash(arguments: &Map<String, Json>) -> String {
    hex(&Sha256::digest(
        canonical_json(&Json::Object(arguments.clone())).as_bytes(),
    ))
}

/// One log line per approval event (requested, approved, denied, consumed, voided); never the
/// arguments.
pub(crate) fn log_event(log: &dyn Log, action: &str, record: &Entry, by: &str) {
    log.event(
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

/// The approvals of one request's environment.
pub(crate) struct Approvals<'a> {
    store: &'a dyn ApprovalStore,
    clock: &'a dyn Clock,
    rng: &'a dyn Rng,
}

impl<'a> Approvals<'a> {
    /// Approvals in `store`, timed on `clock`, their ids drawn from `rng`.
    pub(crate) fn new(
        store: &'a dyn ApprovalStore,
        clock: &'a dyn Clock,
        rng: &'a dyn Rng,
    ) -> Approvals<'a> {
        Approvals { store, clock, rng }
    }

    /// The gate's step for a call an `approval_required` rule decides: `request` describes the
    /// call (requester, tool, arguments and their hash, rule, identity, approvers); its id and
    /// times are set here, and it is recorded only when the call has no live request yet. A
    /// request larger than a record may be is refused here, before it is sent to the ledger.
    pub(crate) async fn call(
        &self,
        mut request: Record,
        ttl_seconds: u64,
    ) -> Result<CallOutcome, ApprovalError> {
        let mut random = [0u8; 16];
        self.rng.fill(&mut random);
        let now_ms = self.clock.now_ms();
        let entry = &mut request.entry;
        entry.id = format!("apr_{}", hex(&random));
        entry.status = Status::Pending;
        entry.created_at_ms = now_ms;
        entry.expires_at_ms = now_ms + ttl_seconds * 1000;
        let bytes = request.measure();
        if bytes > MAX_RECORD_BYTES {
            return Ok(CallOutcome::Refused {
                refusal: Refusal::TooLarge { bytes },
                voided: None,
            });
        }
        match self.store.apply(Op::Call { now_ms, request }).await? {
            Reply::Call { outcome } => Ok(outcome),
            _ => Err(ApprovalError::Protocol),
        }
    }

    /// Approves or denies `id` as `approver`, an approver under any of their names.
    pub(crate) async fn decide(
        &self,
        id: &str,
        approver: &Principal,
        approve: bool,
        reason: Option<String>,
    ) -> Result<Entry, ApprovalError> {
        let op = Op::Decide {
            now_ms: self.clock.now_ms(),
            id: id.to_owned(),
            approver: approver.name().to_owned(),
            aliases: other_names(approver),
            approve,
            reason,
        };
        match self.store.apply(op).await? {
            Reply::Decided { result } => result.map_err(ApprovalError::Refused),
            _ => Err(ApprovalError::Protocol),
        }
    }

    /// One page of the pending requests `approver` may decide (not their own), oldest first,
    /// past `after`, and where the next page starts.
    pub(crate) async fn pending_for(
        &self,
        approver: &Principal,
        after: Option<Cursor>,
    ) -> Result<(Vec<Record>, Option<Cursor>), ApprovalError> {
        let op = Op::Pending {
            now_ms: self.clock.now_ms(),
            approver: approver.name().to_owned(),
            aliases: other_names(approver),
            after,
        };
        match self.store.apply(op).await? {
            Reply::Pending {
                records,
                next_cursor,
            } => Ok((records, next_cursor)),
            _ => Err(ApprovalError::Protocol),
        }
    }
}

/// The names besides its own that a policy's approver list may know `principal` by: its
/// verified aliases and its namespaced provider groups.
fn other_names(principal: &Principal) -> Vec<String> {
    principal
        .aliases()
        .iter()
        .chain(principal.groups())
        .cloned()
        .collect()
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
}
