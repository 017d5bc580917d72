//! The approval ledger: approval records and the one state machine every store runs, pure and
//! synchronous. A store (the Durable Object in production, memory in tests) holds a [`Book`] and
//! applies one [`Op`] at a time to it, so each operation is atomic: an approval is consumed by
//! exactly one call, two identical first calls share one request, and the per-requester cap
//! cannot be raced past. Ops and replies are plain data (JSON on the wire to the object).

use crate::time::iso8601_utc_ms;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt;

/// The most pending requests one principal may have at a time.
pub const MAX_PENDING_PER_REQUESTER: usize = 20;
/// The most entries one `approval_list` answer holds (oldest first).
pub const LIST_LIMIT: usize = 50;
/// The largest record a store keeps (its JSON, arguments included), in bytes.
pub const MAX_RECORD_BYTES: usize = 256 * 1024;

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
    /// Approved and used by one call (no longer stored).
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
    /// The identity the rule chose to act for the call (`None`: the vendor's default).
    #[serde(default)]
    pub identity: Option<String>,
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
    /// The entry of `approvers` the decider was, when it is not their name (a verified alias
    /// such as a GitHub login, or a provider group such as `github:acme`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_as: Option<String>,
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

    fn is_live(&self, now_ms: u64) -> bool {
        self.expires_at_ms > now_ms
    }

    fn binds(&self, other: &Record) -> bool {
        self.requester == other.requester
            && self.tool == other.tool
            && self.arguments_hash == other.arguments_hash
    }

    /// Whether this approval was granted for what `request` asks now: the same rule, the same
    /// identity, and an approver the rule still names. A policy edited since the approval (the
    /// rule renamed, replaced by another, its identity or approvers changed) voids it.
    fn grant_holds_for(&self, request: &Record) -> bool {
        self.rule == request.rule
            && self.identity == request.identity
            && self
                .decided_as
                .as_ref()
                .or(self.decided_by.as_ref())
                .is_some_and(|by| request.approvers.contains(by))
    }
}

/// Why an approval operation was refused; the text is for the caller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "refusal", rename_all = "camelCase")]
pub enum Refusal {
    /// No live request with that id.
    NotFound,
    /// The caller is not one of the request's approvers.
    NotApprover,
    /// The caller made the request.
    SelfApproval,
    /// The request was decided already.
    AlreadyDecided {
        /// Its status.
        status: Status,
    },
    /// The requester has too many pending requests.
    #[serde(rename_all = "camelCase")]
    TooManyPending {
        /// The cap.
        limit: usize,
        /// When the oldest of them expires, Unix ms.
        oldest_expires_at_ms: u64,
    },
    /// The record (its arguments) is too large to keep.
    TooLarge {
        /// Its size in bytes.
        bytes: usize,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotFound => {
                f.write_str("No live approval request has this id (it may have expired).")
            }
            Refusal::NotApprover => f.write_str("You are not an approver of this request."),
            Refusal::SelfApproval => {
                f.write_str("You cannot decide your own approval request; another approver must.")
            }
            Refusal::AlreadyDecided { status } => write!(
                f,
                "This request was already decided (status {}).",
                status.as_str()
            ),
            Refusal::TooManyPending {
                limit,
                oldest_expires_at_ms,
            } => write!(
                f,
                "You already have {limit} pending approval requests, the most one principal may \
                 have; no new one is recorded until an approver decides one or one expires (the \
                 oldest at {}).",
                iso8601_utc_ms(*oldest_expires_at_ms)
            ),
            Refusal::TooLarge { bytes } => write!(
                f,
                "The call's arguments are too large to hold for approval ({bytes} bytes recorded; \
                 at most {MAX_RECORD_BYTES})."
            ),
        }
    }
}

/// One operation on the ledger, with the caller's clock.
// One short-lived message per op: boxing its records would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Op {
    /// The gate's step for a call an `approval_required` rule decides: consume its approval when
    /// one was granted for it under the same rule, else answer with its live request, else
    /// record `request` (pending, id and times set by the caller).
    #[serde(rename_all = "camelCase")]
    Call {
        /// Now, Unix ms.
        now_ms: u64,
        /// The request this call would make.
        request: Record,
    },
    /// Approves or denies request `id` as `approver`.
    #[serde(rename_all = "camelCase")]
    Decide {
        /// Now, Unix ms.
        now_ms: u64,
        /// The request.
        id: String,
        /// Who decides: their principal name.
        approver: String,
        /// The other names they answer to (see [`approver_entry`]).
        #[serde(default)]
        aliases: Vec<String>,
        /// True approves.
        approve: bool,
        /// Why.
        reason: Option<String>,
    },
    /// The pending requests `approver` may decide, oldest first, at most [`LIST_LIMIT`].
    #[serde(rename_all = "camelCase")]
    Pending {
        /// Now, Unix ms.
        now_ms: u64,
        /// Who lists: their principal name.
        approver: String,
        /// The other names they answer to (see [`approver_entry`]).
        #[serde(default)]
        aliases: Vec<String>,
    },
}

/// The entry of `approvers` that means the principal called `name` who also answers to
/// `aliases` (verified aliases and namespaced provider groups, which ignore case); the name
/// itself is preferred.
pub fn approver_entry<'a>(
    approvers: &'a [String],
    name: &str,
    aliases: &[String],
) -> Option<&'a str> {
    approvers
        .iter()
        .find(|a| *a == name)
        .or_else(|| {
            approvers
                .iter()
                .find(|a| aliases.iter().any(|b| b.eq_ignore_ascii_case(a)))
        })
        .map(String::as_str)
}

impl Op {
    fn now_ms(&self) -> u64 {
        match self {
            Op::Call { now_ms, .. } | Op::Decide { now_ms, .. } | Op::Pending { now_ms, .. } => {
                *now_ms
            }
        }
    }
}

/// What a [`Op::Call`] comes to.
// One short-lived message per op: boxing its records would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum CallOutcome {
    /// The approval was consumed (this record, status consumed): the call runs, once.
    Run {
        /// The consumed approval.
        record: Record,
    },
    /// The call waits on this live request (pending or denied).
    Wait {
        /// The request.
        record: Record,
        /// True when it was recorded by this call.
        created: bool,
        /// An approval this call would have used, voided because the policy changed since it
        /// was granted (another rule, identity or approver set decides now).
        voided: Option<Record>,
    },
    /// No request could be recorded.
    Refused {
        /// Why.
        refusal: Refusal,
        /// An approval voided on the way, as in `Wait`.
        voided: Option<Record>,
    },
}

/// The answer to an [`Op`].
// One short-lived message per op: boxing its records would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "camelCase")]
pub enum Reply {
    /// To [`Op::Call`].
    Call {
        /// What became of the call.
        outcome: CallOutcome,
    },
    /// To [`Op::Decide`].
    Decided {
        /// The decided request, or why not.
        result: Result<Record, Refusal>,
    },
    /// To [`Op::Pending`].
    Pending {
        /// Oldest first.
        records: Vec<Record>,
        /// How many more there are past [`LIST_LIMIT`].
        omitted: usize,
    },
}

/// A change to persist after an op.
// One short-lived message per op: boxing its records would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// Store this record (new or updated).
    Put(Record),
    /// Remove the record with this id.
    Delete(String),
}

/// Every live record, by id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Book {
    records: BTreeMap<String, Record>,
}

impl Book {
    /// A book holding `records` (as loaded from storage).
    pub fn from_records(records: impl IntoIterator<Item = Record>) -> Book {
        Book {
            records: records.into_iter().map(|r| (r.id.clone(), r)).collect(),
        }
    }

    /// How many records it holds.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Applies `op`; returns the reply and the changes to persist, in order.
    pub fn apply(&mut self, op: Op) -> (Reply, Vec<Change>) {
        let mut changes = self.purge(op.now_ms());
        let reply = match op {
            Op::Call { request, .. } => Reply::Call {
                outcome: self.call(request, &mut changes),
            },
            Op::Decide {
                id,
                approver,
                aliases,
                approve,
                reason,
                ..
            } => Reply::Decided {
                result: self.decide(&id, (&approver, &aliases), approve, reason, &mut changes),
            },
            Op::Pending {
                approver, aliases, ..
            } => {
                let mut records: Vec<Record> = self
                    .records
                    .values()
                    .filter(|r| {
                        r.status == Status::Pending
                            && r.requester != approver
                            && approver_entry(&r.approvers, &approver, &aliases).is_some()
                    })
                    .cloned()
                    .collect();
                records.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
                let omitted = records.len().saturating_sub(LIST_LIMIT);
                records.truncate(LIST_LIMIT);
                Reply::Pending { records, omitted }
            }
        };
        (reply, changes)
    }

    /// Drops the records past their expiry.
    fn purge(&mut self, now_ms: u64) -> Vec<Change> {
        let expired: Vec<String> = self
            .records
            .values()
            .filter(|r| !r.is_live(now_ms))
            .map(|r| r.id.clone())
            .collect();
        expired
            .into_iter()
            .map(|id| {
                self.records.remove(&id);
                Change::Delete(id)
            })
            .collect()
    }

    fn call(&mut self, request: Record, changes: &mut Vec<Change>) -> CallOutcome {
        let mut voided = None;
        let bound = self
            .records
            .values()
            .find(|r| r.binds(&request))
            .map(|r| r.id.clone());
        if let Some(id) = bound {
            let record = self.records[&id].clone();
            match record.status {
                Status::Approved if record.grant_holds_for(&request) => {
                    self.records.remove(&id);
                    changes.push(Change::Delete(id));
                    return CallOutcome::Run {
                        record: Record {
                            status: Status::Consumed,
                            ..record
                        },
                    };
                }
                Status::Approved | Status::Consumed => {
                    self.records.remove(&id);
                    changes.push(Change::Delete(id));
                    voided = Some(record);
                }
                Status::Pending | Status::Denied => {
                    return CallOutcome::Wait {
                        record,
                        created: false,
                        voided: None,
                    }
                }
            }
        }
        let mut pending: Vec<u64> = self
            .records
            .values()
            .filter(|r| r.requester == request.requester && r.status == Status::Pending)
            .map(|r| r.expires_at_ms)
            .collect();
        if pending.len() >= MAX_PENDING_PER_REQUESTER {
            pending.sort_unstable();
            return CallOutcome::Refused {
                refusal: Refusal::TooManyPending {
                    limit: MAX_PENDING_PER_REQUESTER,
                    oldest_expires_at_ms: pending[0],
                },
                voided,
            };
        }
        let bytes = serde_json::to_vec(&request).map_or(usize::MAX, |v| v.len());
        if bytes > MAX_RECORD_BYTES {
            return CallOutcome::Refused {
                refusal: Refusal::TooLarge { bytes },
                voided,
            };
        }
        let record = Record {
            status: Status::Pending,
            decided_by: None,
            decided_as: None,
            decision_reason: None,
            ..request
        };
        self.records.insert(record.id.clone(), record.clone());
        changes.push(Change::Put(record.clone()));
        CallOutcome::Wait {
            record,
            created: true,
            voided,
        }
    }

    fn decide(
        &mut self,
        id: &str,
        (approver, aliases): (&str, &[String]),
        approve: bool,
        reason: Option<String>,
        changes: &mut Vec<Change>,
    ) -> Result<Record, Refusal> {
        let record = self.records.get_mut(id).ok_or(Refusal::NotFound)?;
        if record.requester == approver {
            return Err(Refusal::SelfApproval);
        }
        let Some(entry) = approver_entry(&record.approvers, approver, aliases) else {
            return Err(Refusal::NotApprover);
        };
        let decided_as = (entry != approver).then(|| entry.to_owned());
        if record.status != Status::Pending {
            return Err(Refusal::AlreadyDecided {
                status: record.status,
            });
        }
        record.status = if approve {
            Status::Approved
        } else {
            Status::Denied
        };
        record.decided_by = Some(approver.to_owned());
        record.decided_as = decided_as;
        record.decision_reason = reason;
        changes.push(Change::Put(record.clone()));
        Ok(record.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: u64 = 3_600_000;

    fn request(id: &str, requester: &str, hash: &str, now: u64) -> Record {
        Record {
            id: id.into(),
            requester: requester.into(),
            tool: "bb_post".into(),
            arguments_hash: hash.into(),
            arguments: Map::new(),
            rule: "merges".into(),
            reason: "Because.".into(),
            method: Some("POST".into()),
            path: Some("/2.0/x".into()),
            identity: Some("bb-release".into()),
            approvers: vec!["carol".into(), "dave".into()],
            status: Status::Pending,
            created_at_ms: now,
            expires_at_ms: now + HOUR,
            decided_by: None,
            decided_as: None,
            decision_reason: None,
        }
    }

    #[test]
    fn an_approver_named_by_alias_or_provider_group_decides_and_the_entry_is_kept() {
        let mut book = Book::default();
        let mut r = request("apr_1", "github~1", "h", 0);
        r.approvers = vec!["Carol".into(), "github:acme".into()];
        call(&mut book, r.clone());
        let decide_as = |book: &mut Book, name: &str, aliases: &[&str]| {
            let op = Op::Decide {
                now_ms: 1,
                id: "apr_1".into(),
                approver: name.into(),
                aliases: aliases.iter().map(|a| a.to_string()).collect(),
                approve: true,
                reason: None,
            };
            match book.apply(op).0 {
                Reply::Decided { result } => result,
                other => panic!("{other:?}"),
            }
        };
        // A login that is not the approver's alias, or an organisation they are not in: refused.
        assert_eq!(
            decide_as(&mut book, "github~2", &["dave", "github:other"]),
            Err(Refusal::NotApprover)
        );
        let listed = |book: &mut Book, aliases: &[&str]| {
            let op = Op::Pending {
                now_ms: 1,
                approver: "github~3".into(),
                aliases: aliases.iter().map(|a| a.to_string()).collect(),
            };
            match book.apply(op).0 {
                Reply::Pending { records, .. } => records.len(),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(listed(&mut book, &["GitHub:ACME"]), 1);
        assert_eq!(listed(&mut book, &["github:acme-evil"]), 0);
        let decided = decide_as(&mut book, "github~3", &["carol", "github:acme"]).unwrap();
        assert_eq!(decided.decided_by.as_deref(), Some("github~3"));
        assert_eq!(decided.decided_as.as_deref(), Some("Carol"));
        // The approval holds while the approver list still names that entry.
        assert!(matches!(call(&mut book, r), CallOutcome::Run { .. }));
    }

    fn call(book: &mut Book, request: Record) -> CallOutcome {
        let now_ms = request.created_at_ms;
        match book.apply(Op::Call { now_ms, request }).0 {
            Reply::Call { outcome } => outcome,
            other => panic!("{other:?}"),
        }
    }

    fn decide(book: &mut Book, id: &str, approver: &str, now_ms: u64) -> Result<Record, Refusal> {
        let op = Op::Decide {
            now_ms,
            id: id.into(),
            approver: approver.into(),
            aliases: Vec::new(),
            approve: true,
            reason: None,
        };
        match book.apply(op).0 {
            Reply::Decided { result } => result,
            other => panic!("{other:?}"),
        }
    }

    fn pending(book: &mut Book, approver: &str, now_ms: u64) -> (Vec<String>, usize) {
        let op = Op::Pending {
            now_ms,
            approver: approver.into(),
            aliases: Vec::new(),
        };
        match book.apply(op).0 {
            Reply::Pending { records, omitted } => {
                (records.into_iter().map(|r| r.id).collect(), omitted)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_approval_is_consumed_once_and_identical_first_calls_share_a_request() {
        let mut book = Book::default();
        let first = call(&mut book, request("apr_1", "bob", "h", 0));
        assert!(matches!(first, CallOutcome::Wait { created: true, .. }));
        let second = call(&mut book, request("apr_2", "bob", "h", 1));
        let CallOutcome::Wait {
            record, created, ..
        } = second
        else {
            panic!("{second:?}")
        };
        assert_eq!((record.id.as_str(), created), ("apr_1", false));
        assert_eq!(
            decide(&mut book, "apr_1", "bob", 2),
            Err(Refusal::SelfApproval)
        );
        assert_eq!(
            decide(&mut book, "apr_1", "eve", 2),
            Err(Refusal::NotApprover)
        );
        decide(&mut book, "apr_1", "carol", 2).expect("carol approves");
        let run = call(&mut book, request("apr_3", "bob", "h", 3));
        assert!(
            matches!(&run, CallOutcome::Run { record } if record.id == "apr_1" && record.status == Status::Consumed),
            "{run:?}"
        );
        // Spent: the same call again is a new request.
        let again = call(&mut book, request("apr_4", "bob", "h", 4));
        assert!(
            matches!(&again, CallOutcome::Wait { record, created: true, .. } if record.id == "apr_4"),
            "{again:?}"
        );
    }

    #[test]
    fn a_policy_edited_since_the_approval_voids_it() {
        for edit in [
            |r: &mut Record| r.rule = "other-rule".into(),
            |r: &mut Record| r.identity = None,
            |r: &mut Record| r.approvers = vec!["dave".into()],
        ] {
            let mut book = Book::default();
            call(&mut book, request("apr_1", "bob", "h", 0));
            decide(&mut book, "apr_1", "carol", 1).expect("approved");
            let mut now = request("apr_2", "bob", "h", 2);
            edit(&mut now);
            let outcome = call(&mut book, now);
            let CallOutcome::Wait {
                record,
                created,
                voided,
            } = outcome
            else {
                panic!("{outcome:?}")
            };
            assert_eq!((record.id.as_str(), created), ("apr_2", true));
            assert_eq!(voided.map(|v| v.id), Some("apr_1".into()));
        }
    }

    #[test]
    fn pending_requests_are_capped_per_requester() {
        let mut book = Book::default();
        for i in 0..MAX_PENDING_PER_REQUESTER {
            let outcome = call(
                &mut book,
                request(&format!("apr_{i}"), "bob", &i.to_string(), 0),
            );
            assert!(matches!(outcome, CallOutcome::Wait { created: true, .. }));
        }
        let over = call(&mut book, request("apr_x", "bob", "x", 5));
        assert_eq!(
            over,
            CallOutcome::Refused {
                refusal: Refusal::TooManyPending {
                    limit: MAX_PENDING_PER_REQUESTER,
                    oldest_expires_at_ms: HOUR,
                },
                voided: None,
            }
        );
        // Another requester is not affected, and a decision frees a place.
        assert!(matches!(
            call(&mut book, request("apr_a", "alice", "x", 5)),
            CallOutcome::Wait { created: true, .. }
        ));
        decide(&mut book, "apr_0", "carol", 6).expect("approved");
        assert!(matches!(
            call(&mut book, request("apr_y", "bob", "y", 7)),
            CallOutcome::Wait { created: true, .. }
        ));
    }

    #[test]
    fn decided_records_never_crowd_pending_ones_out_of_the_list() {
        let mut book = Book::default();
        // Many decided requests, made before the one pending request.
        for i in 0..(3 * LIST_LIMIT) {
            let requester = format!("p{i}");
            call(
                &mut book,
                request(&format!("apr_d{i:03}"), &requester, "h", i as u64),
            );
            decide(&mut book, &format!("apr_d{i:03}"), "carol", 1000).expect("decided");
        }
        call(&mut book, request("apr_pending", "bob", "h", 2000));
        assert_eq!(
            pending(&mut book, "carol", 2001),
            (vec!["apr_pending".into()], 0)
        );
        // Past the limit, the oldest are listed and the rest counted.
        for i in 0..(LIST_LIMIT + 5) {
            let requester = format!("q{}", i % 10);
            call(
                &mut book,
                request(
                    &format!("apr_q{i:03}"),
                    &requester,
                    &i.to_string(),
                    3000 + i as u64,
                ),
            );
        }
        let (ids, omitted) = pending(&mut book, "carol", 4000);
        assert_eq!((ids.len(), omitted), (LIST_LIMIT, 6));
        assert_eq!(ids[0], "apr_pending");
        // Not listed to the requester, nor to someone who is not an approver.
        assert!(!pending(&mut book, "bob", 4000)
            .0
            .contains(&"apr_pending".to_string()));
        assert_eq!(pending(&mut book, "eve", 4000), (Vec::new(), 0));
    }

    #[test]
    fn expired_records_are_purged_and_cannot_be_used_or_decided() {
        let mut book = Book::default();
        call(&mut book, request("apr_1", "bob", "h", 0));
        decide(&mut book, "apr_1", "carol", 1).expect("approved");
        let (_, changes) = book.apply(Op::Pending {
            now_ms: HOUR,
            approver: "carol".into(),
            aliases: Vec::new(),
        });
        assert_eq!(changes, vec![Change::Delete("apr_1".into())]);
        assert!(book.is_empty());
        assert_eq!(
            decide(&mut book, "apr_1", "carol", HOUR),
            Err(Refusal::NotFound)
        );
        assert!(matches!(
            call(&mut book, request("apr_2", "bob", "h", HOUR)),
            CallOutcome::Wait { created: true, .. }
        ));
    }

    #[test]
    fn records_too_large_to_keep_are_refused() {
        let mut book = Book::default();
        let mut big = request("apr_1", "bob", "h", 0);
        big.arguments
            .insert("body".into(), Json::String("x".repeat(MAX_RECORD_BYTES)));
        assert!(matches!(
            call(&mut book, big),
            CallOutcome::Refused {
                refusal: Refusal::TooLarge { .. },
                ..
            }
        ));
        assert!(book.is_empty());
    }

    #[test]
    fn ops_and_replies_survive_json() {
        let op = Op::Call {
            now_ms: 5,
            request: request("apr_1", "bob", "h", 5),
        };
        let text = serde_json::to_string(&op).unwrap();
        assert_eq!(serde_json::from_str::<Op>(&text).unwrap(), op);
        let mut book = Book::default();
        let (reply, _) = book.apply(op);
        let text = serde_json::to_string(&reply).unwrap();
        assert_eq!(serde_json::from_str::<Reply>(&text).unwrap(), reply);
        let refused = Reply::Decided {
            result: Err(Refusal::TooManyPending {
                limit: 2,
                oldest_expires_at_ms: 3,
            }),
        };
        let text = serde_json::to_string(&refused).unwrap();
        assert_eq!(serde_json::from_str::<Reply>(&text).unwrap(), refused);
    }
}
