//! The approval ledger: approval records and the one state machine every store runs, pure and
//! synchronous. A store (the Durable Object in production, [`MemoryLedger`] in tests) holds a
//! [`Book`] and applies one [`Op`] at a time to it, so each operation is atomic: an approval is
//! consumed by exactly one call, two identical first calls share one request, and no bound can
//! be raced past. Ops and replies are plain data (JSON on the wire to the object).
//!
//! The book keeps only each record's [`Entry`] (who, what, where it stands, how large) in memory;
//! the [`Details`] (the requester's arguments and what was derived from them) stay in storage and
//! are read a page at a time, for `approval_list`. Every bound is checked against the entries:
//! a record's size, each requester's pending records and bytes, and the ledger's records and
//! bytes, so the object's memory and storage stay bounded whatever callers send.

use crate::time::iso8601_utc_ms;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt;

mod wire;

/// The most pending requests one principal may have at a time.
pub const MAX_PENDING_PER_REQUESTER: usize = 20;
/// The most bytes of pending records one principal may have at a time.
pub(crate) const MAX_REQUESTER_BYTES: usize = 128 * 1024;
/// The largest record the ledger keeps (its JSON, arguments included), in bytes.
pub const MAX_RECORD_BYTES: usize = 16 * 1024;
/// The most records the ledger holds, whatever their size.
pub(crate) const MAX_RECORDS: usize = 2000;
/// `MCP_APPROVAL_LEDGER_MAX_BYTES` when unset: the most bytes of records the ledger holds.
pub(crate) const DEFAULT_LEDGER_MAX_BYTES: usize = 8 * 1024 * 1024;
/// The most entries one `approval_list` page holds.
pub const PAGE_ITEMS: usize = 50;
/// The most bytes of text one `approval_list` page holds (about 6,000 tokens).
pub const PAGE_BYTES: usize = 24_000;
/// A margin a page counts for each entry beyond its record's bytes. A listed entry prints fewer
/// bytes than its record (the notice and timestamps it adds are shorter than the hash, approvers
/// and state it leaves out); the margin covers the page's own framing.
pub(crate) const LISTED_OVERHEAD_BYTES: usize = 64;

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

/// What the ledger keeps in memory of one approval request: everything but the requester's text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// `apr_` + 32 hex digits.
    pub id: String,
    /// The principal whose call it is.
    pub(crate) requester: String,
    /// The tool called.
    pub(crate) tool: String,
    /// SHA-256 of the canonical arguments, hex.
    pub(crate) arguments_hash: String,
    /// The rule that required approval.
    pub rule: String,
    /// The identity the rule chose to act for the call (`None`: the vendor's default).
    #[serde(default)]
    pub identity: Option<String>,
    /// Who may decide (resolved when the request was made).
    pub approvers: Vec<String>,
    /// Where it stands.
    pub status: Status,
    /// When it was made, Unix ms.
    pub(crate) created_at_ms: u64,
    /// When it stops being usable, Unix ms.
    pub(crate) expires_at_ms: u64,
    /// Who decided it.
    pub(crate) decided_by: Option<String>,
    /// The entry of `approvers` the decider was, when it is not their name (a verified alias
    /// such as a GitHub login, or a provider group such as `github:acme`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) decided_as: Option<String>,
    /// The approver's reason.
    pub(crate) decision_reason: Option<String>,
    /// The size of the whole record as the ledger measured it ([`Record::measure`]).
    #[serde(default)]
    pub bytes: usize,
}

/// The part of a record read only to show it to approvers: the requester's arguments and what
/// was derived from them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Details {
    /// The arguments, for approvers to judge.
    pub(crate) arguments: Map<String, Json>,
    /// The upstream method, if any.
    pub method: Option<String>,
    /// The normalised upstream path, if any.
    pub path: Option<String>,
    /// The rule's reason.
    pub(crate) reason: String,
}

/// One whole approval request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// What the ledger keeps in memory.
    pub(crate) entry: Entry,
    /// What it reads only to list the request.
    pub(crate) details: Details,
}

impl Record {
    /// The size of its JSON, in bytes: what every bound counts.
    pub(crate) fn measure(&self) -> usize {
        serde_json::to_vec(self).map_or(usize::MAX, |v| v.len())
    }
}

impl Entry {
    /// `expiresAt` as ISO 8601.
    pub(crate) fn expires_at(&self) -> String {
        iso8601_utc_ms(self.expires_at_ms)
    }

    /// The `approval` member of a decision.
    pub(crate) fn summary(&self) -> Json {
        serde_json::json!({
            "id": self.id,
            "status": self.status.as_str(),
            "expiresAt": self.expires_at(),
        })
    }

    /// Where a page that ends with this entry resumes.
    pub(crate) fn cursor(&self) -> Cursor {
        Cursor {
            created_at_ms: self.created_at_ms,
            id: self.id.clone(),
        }
    }

    fn is_live(&self, now_ms: u64) -> bool {
        self.expires_at_ms > now_ms
    }

    fn binds(&self, other: &Entry) -> bool {
        self.requester == other.requester
            && self.tool == other.tool
            && self.arguments_hash == other.arguments_hash
    }

    /// Whether this approval was granted for what `request` asks now: the same rule, the same
    /// identity, and an approver the rule still names. A policy edited since the approval (the
    /// rule renamed, replaced by another, its identity or approvers changed) voids it.
    fn grant_holds_for(&self, request: &Entry) -> bool {
        self.rule == request.rule
            && self.identity == request.identity
            && self
                .decided_as
                .as_ref()
                .or(self.decided_by.as_ref())
                .is_some_and(|by| request.approvers.contains(by))
    }
}

/// Where an `approval_list` page resumes: past the entry made at `created_at_ms` with `id`
/// (pending entries are listed by creation time, then id). As text, `<ms>.<id>`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cursor {
    /// The creation time of the last entry listed, Unix ms.
    pub(crate) created_at_ms: u64,
    /// Its id.
    pub id: String,
}

impl Cursor {
    /// Reads the text [`fmt::Display`] writes; `None` for anything else.
    pub fn parse(text: &str) -> Option<Cursor> {
        let (ms, id) = text.trim().split_once('.')?;
        let well_formed = !ms.is_empty()
            && ms.len() <= 20
            && ms.bytes().all(|b| b.is_ascii_digit())
            && id.len() <= 64
            && id
                .strip_prefix("apr_")
                .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()));
        if !well_formed {
            return None;
        }
        Some(Cursor {
            created_at_ms: ms.parse().ok()?,
            id: id.to_owned(),
        })
    }

    fn precedes(&self, entry: &Entry) -> bool {
        (self.created_at_ms, self.id.as_str()) < (entry.created_at_ms, entry.id.as_str())
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.created_at_ms, self.id)
    }
}

/// Why an approval operation was refused; the text is for the caller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "refusal",
    rename_all = "camelCase",
    try_from = "wire::RefusalWire"
)]
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
    /// The requester's pending records would take more bytes than one principal may hold.
    #[serde(rename_all = "camelCase")]
    RequesterFull {
        /// The bytes they hold now.
        held: usize,
        /// The size of the new record.
        bytes: usize,
        /// The cap.
        limit: usize,
        /// When the oldest of their pending requests expires, Unix ms.
        oldest_expires_at_ms: u64,
    },
    /// The record (its arguments) is too large to keep.
    TooLarge {
        /// Its size in bytes.
        bytes: usize,
    },
    /// The ledger holds as many records, or bytes, as it may.
    #[serde(rename_all = "camelCase")]
    LedgerFull {
        /// The records it holds.
        records: usize,
        /// The bytes they take.
        held: usize,
        /// The byte cap (`MCP_APPROVAL_LEDGER_MAX_BYTES`).
        max_bytes: usize,
        /// When its oldest record expires, Unix ms.
        oldest_expires_at_ms: u64,
    },
}

impl Refusal {
    /// The stable code of a refusal that a bound made (`_meta.limit` of the refused call); `None`
    /// for the refusals of a decision.
    pub(crate) fn limit_code(&self) -> Option<&'static str> {
        match self {
            Refusal::TooManyPending { .. } => Some("pending_per_principal"),
            Refusal::RequesterFull { .. } => Some("bytes_per_principal"),
            Refusal::TooLarge { .. } => Some("record_too_large"),
            Refusal::LedgerFull { .. } => Some("ledger_full"),
            Refusal::NotFound
            | Refusal::NotApprover
            | Refusal::SelfApproval
            | Refusal::AlreadyDecided { .. } => None,
        }
    }
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
            Refusal::RequesterFull {
                held,
                bytes,
                limit,
                oldest_expires_at_ms,
            } => write!(
                f,
                "Your pending approval requests hold {held} bytes; this one ({bytes} bytes) would \
                 pass the {limit} bytes one principal may hold, so it is not recorded until an \
                 approver decides one or one expires (the oldest at {}).",
                iso8601_utc_ms(*oldest_expires_at_ms)
            ),
            Refusal::TooLarge { bytes } => write!(
                f,
                "The call's arguments are too large to hold for approval: the request would take \
                 {bytes} bytes, and an approval request holds at most {MAX_RECORD_BYTES} bytes \
                 ({} KiB). Make the call smaller (for example, fewer or shorter arguments).",
                MAX_RECORD_BYTES / 1024
            ),
            Refusal::LedgerFull {
                records,
                held,
                max_bytes,
                oldest_expires_at_ms,
            } => write!(
                f,
                "The approval ledger is full ({records} requests of at most {MAX_RECORDS}, \
                 {held} bytes of at most {max_bytes}), so no new request is recorded until \
                 requests are decided or expire (the oldest at {}).",
                iso8601_utc_ms(*oldest_expires_at_ms)
            ),
        }
    }
}

/// One operation on the ledger, with the caller's clock.
// One short-lived message per op: boxing its records would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", try_from = "wire::OpWire")]
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
    /// One page of the pending requests `approver` may decide, oldest first, past `after`.
    #[serde(rename_all = "camelCase")]
    Pending {
        /// Now, Unix ms.
        now_ms: u64,
        /// Who lists: their principal name.
        approver: String,
        /// The other names they answer to (see [`approver_entry`]).
        #[serde(default)]
        aliases: Vec<String>,
        /// Where the page starts: past this entry (`None`: the oldest).
        #[serde(default)]
        after: Option<Cursor>,
    },
}

/// The entry of `approvers` that means the principal called `name` who also answers to
/// `aliases` (verified aliases and namespaced provider groups, which ignore case); the name
/// itself is preferred.
pub(crate) fn approver_entry<'a>(
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
#[serde(
    tag = "outcome",
    rename_all = "camelCase",
    try_from = "wire::CallOutcomeWire"
)]
pub enum CallOutcome {
    /// The approval was consumed (this entry, status consumed): the call runs, once.
    Run {
        /// The consumed approval.
        record: Entry,
    },
    /// The call waits on this live request (pending or denied).
    Wait {
        /// The request.
        record: Entry,
        /// True when it was recorded by this call.
        created: bool,
        /// An approval this call would have used, voided because the policy changed since it
        /// was granted (another rule, identity or approver set decides now).
        voided: Option<Entry>,
    },
    /// No request could be recorded.
    Refused {
        /// Why.
        refusal: Refusal,
        /// An approval voided on the way, as in `Wait`.
        voided: Option<Entry>,
    },
}

/// The answer to an [`Op`].
// One short-lived message per op: boxing its records would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "camelCase", try_from = "wire::ReplyWire")]
pub enum Reply {
    /// To [`Op::Call`].
    Call {
        /// What became of the call.
        outcome: CallOutcome,
    },
    /// To [`Op::Decide`].
    Decided {
        /// The decided request, or why not.
        result: Result<Entry, Refusal>,
    },
    /// To [`Op::Pending`]: one page.
    #[serde(rename_all = "camelCase")]
    Pending {
        /// Oldest first.
        records: Vec<Record>,
        /// Where the next page starts; `None` on the last page.
        next_cursor: Option<Cursor>,
    },
}

/// What the book answers an op with: a reply, or the entries of a page whose details the store
/// reads before it replies.
// One short-lived value per op: boxing its records would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    /// The reply.
    Done(Reply),
    /// The page of an [`Op::Pending`].
    Page(Page),
}

/// The entries of one `approval_list` page, without their details.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Page {
    /// Oldest first.
    pub(crate) entries: Vec<Entry>,
    /// Where the next page starts; `None` on the last page.
    pub(crate) next_cursor: Option<Cursor>,
}

/// A store's fault the ledger finds in what it read: nothing a client did, and nothing it can
/// correct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LedgerFault {
    /// A page's details came back in another number than its entries.
    OutOfStep,
    /// The entry with this id has no details in storage.
    NoDetails(String),
}

impl std::fmt::Display for LedgerFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LedgerFault::OutOfStep => f.write_str("the ledger read a page's details out of step"),
            LedgerFault::NoDetails(id) => write!(f, "the ledger has no details for {id}"),
        }
    }
}

impl Page {
    /// The ids whose details the page needs, in order.
    pub(crate) fn ids(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.id.clone()).collect()
    }

    /// The reply, given each entry's details in order (`None`: not in storage, which the store
    /// reports as a fault rather than list a request without what it asks).
    pub(crate) fn reply(self, details: Vec<Option<Details>>) -> Result<Reply, LedgerFault> {
        if details.len() != self.entries.len() {
            return Err(LedgerFault::OutOfStep);
        }
        let records = self
            .entries
            .into_iter()
            .zip(details)
            .map(|(entry, details)| match details {
                Some(details) => Ok(Record { entry, details }),
                None => Err(LedgerFault::NoDetails(entry.id)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Reply::Pending {
            records,
            next_cursor: self.next_cursor,
        })
    }
}

/// A change to persist after an op.
// One short-lived value per op: boxing its records would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Change {
    /// Store this entry (new or updated), and the details of a new record.
    Put(Entry, Option<Details>),
    /// Remove the record with this id (entry and details).
    Delete(String),
}

/// Every live record's entry, by id, and the bounds they are held to.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Book {
    entries: BTreeMap<String, Entry>,
    /// The sum of the entries' `bytes`.
    bytes: usize,
    /// `MCP_APPROVAL_LEDGER_MAX_BYTES`.
    max_bytes: usize,
}

impl Book {
    /// An empty book holding at most `max_bytes` of records.
    #[cfg(any(test, feature = "test-util"))]
    pub(crate) fn new(max_bytes: usize) -> Book {
        Book {
            entries: BTreeMap::new(),
            bytes: 0,
            max_bytes,
        }
    }

    /// A book holding `entries` (as loaded from storage), each counted at the size it was
    /// measured at when recorded.
    #[cfg(any(test, target_arch = "wasm32"))]
    pub(crate) fn from_entries(max_bytes: usize, entries: impl IntoIterator<Item = Entry>) -> Book {
        let entries: BTreeMap<String, Entry> =
            entries.into_iter().map(|e| (e.id.clone(), e)).collect();
        Book {
            bytes: entries.values().map(|e| e.bytes).sum(),
            entries,
            max_bytes,
        }
    }

    /// How many records it holds.
    #[cfg(any(test, feature = "test-util"))]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when it holds none.
    #[cfg(any(test, feature = "test-util"))]
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The bytes its records take (as measured when each was recorded).
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Applies `op`; returns what it comes to and the changes to persist, in order.
    pub(crate) fn apply(&mut self, op: Op) -> (Step, Vec<Change>) {
        let mut changes = self.purge(op.now_ms());
        let step = match op {
            Op::Call { request, .. } => Step::Done(Reply::Call {
                outcome: self.call(request, &mut changes),
            }),
            Op::Decide {
                id,
                approver,
                aliases,
                approve,
                reason,
                ..
            } => Step::Done(Reply::Decided {
                result: self.decide(&id, (&approver, &aliases), approve, reason, &mut changes),
            }),
            Op::Pending {
                approver,
                aliases,
                after,
                ..
            } => Step::Page(self.page(&approver, &aliases, after.as_ref())),
        };
        (step, changes)
    }

    /// The next page of pending entries `approver` may decide: at most [`PAGE_ITEMS`], and at
    /// most [`PAGE_BYTES`] of listed text (always at least one entry, which a record's own
    /// bound keeps within it).
    fn page(&self, approver: &str, aliases: &[String], after: Option<&Cursor>) -> Page {
        let mut candidates: Vec<&Entry> = self
            .entries
            .values()
            .filter(|e| {
                e.status == Status::Pending
                    && e.requester != approver
                    && after.is_none_or(|c| c.precedes(e))
                    && approver_entry(&e.approvers, approver, aliases).is_some()
            })
            .collect();
        // Ids are the map's keys, so no two keys tie: the unstable sort's order is the same.
        candidates.sort_unstable_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
        let mut entries = Vec::new();
        let mut used = 0usize;
        for entry in &candidates {
            let cost = entry.bytes.saturating_add(LISTED_OVERHEAD_BYTES);
            if entries.len() == PAGE_ITEMS || (!entries.is_empty() && used + cost > PAGE_BYTES) {
                break;
            }
            used += cost;
            entries.push((*entry).clone());
        }
        let next_cursor = (entries.len() < candidates.len())
            .then(|| entries.last().map(Entry::cursor))
            .flatten();
        Page {
            entries,
            next_cursor,
        }
    }

    fn remove(&mut self, id: &str, changes: &mut Vec<Change>) -> Option<Entry> {
        let entry = self.entries.remove(id)?;
        self.bytes -= entry.bytes;
        changes.push(Change::Delete(entry.id.clone()));
        Some(entry)
    }

    /// Drops the records past their expiry.
    fn purge(&mut self, now_ms: u64) -> Vec<Change> {
        let expired: Vec<String> = self
            .entries
            .values()
            .filter(|e| !e.is_live(now_ms))
            .map(|e| e.id.clone())
            .collect();
        let mut changes = Vec::new();
        for id in expired {
            self.remove(&id, &mut changes);
        }
        changes
    }

    fn oldest_expiry<'a>(entries: impl Iterator<Item = &'a Entry>) -> u64 {
        entries.map(|e| e.expires_at_ms).min().unwrap_or_default()
    }

    fn call(&mut self, request: Record, changes: &mut Vec<Change>) -> CallOutcome {
        let mut voided = None;
        let bound = self
            .entries
            .values()
            .find(|e| e.binds(&request.entry))
            .map(|e| e.id.clone());
        if let Some(id) = bound {
            let entry = self.entries[&id].clone();
            match entry.status {
                Status::Approved if entry.grant_holds_for(&request.entry) => {
                    self.remove(&id, changes);
                    return CallOutcome::Run {
                        record: Entry {
                            status: Status::Consumed,
                            ..entry
                        },
                    };
                }
                Status::Approved | Status::Consumed => {
                    voided = self.remove(&id, changes);
                }
                Status::Pending | Status::Denied => {
                    return CallOutcome::Wait {
                        record: entry,
                        created: false,
                        voided: None,
                    }
                }
            }
        }
        let mut record = Record {
            entry: Entry {
                status: Status::Pending,
                decided_by: None,
                decided_as: None,
                decision_reason: None,
                bytes: 0,
                ..request.entry
            },
            details: request.details,
        };
        let bytes = record.measure();
        if let Err(refusal) = self.admits(&record.entry.requester, bytes) {
            return CallOutcome::Refused { refusal, voided };
        }
        record.entry.bytes = bytes;
        self.bytes += bytes;
        self.entries
            .insert(record.entry.id.clone(), record.entry.clone());
        changes.push(Change::Put(record.entry.clone(), Some(record.details)));
        CallOutcome::Wait {
            record: record.entry,
            created: true,
            voided,
        }
    }

    /// Whether a new pending record of `bytes` by `requester` fits every bound.
    fn admits(&self, requester: &str, bytes: usize) -> Result<(), Refusal> {
        if bytes > MAX_RECORD_BYTES {
            return Err(Refusal::TooLarge { bytes });
        }
        let pending = || {
            self.entries
                .values()
                .filter(|e| e.requester == requester && e.status == Status::Pending)
        };
        if pending().count() >= MAX_PENDING_PER_REQUESTER {
            return Err(Refusal::TooManyPending {
                limit: MAX_PENDING_PER_REQUESTER,
                oldest_expires_at_ms: Self::oldest_expiry(pending()),
            });
        }
        let held: usize = pending().map(|e| e.bytes).sum();
        if held + bytes > MAX_REQUESTER_BYTES {
            return Err(Refusal::RequesterFull {
                held,
                bytes,
                limit: MAX_REQUESTER_BYTES,
                oldest_expires_at_ms: Self::oldest_expiry(pending()),
            });
        }
        if self.entries.len() >= MAX_RECORDS || self.bytes + bytes > self.max_bytes {
            return Err(Refusal::LedgerFull {
                records: self.entries.len(),
                held: self.bytes,
                max_bytes: self.max_bytes,
                oldest_expires_at_ms: Self::oldest_expiry(self.entries.values()),
            });
        }
        Ok(())
    }

    fn decide(
        &mut self,
        id: &str,
        (approver, aliases): (&str, &[String]),
        approve: bool,
        reason: Option<String>,
        changes: &mut Vec<Change>,
    ) -> Result<Entry, Refusal> {
        let entry = self.entries.get_mut(id).ok_or(Refusal::NotFound)?;
        if entry.requester == approver {
            return Err(Refusal::SelfApproval);
        }
        let Some(named) = approver_entry(&entry.approvers, approver, aliases) else {
            return Err(Refusal::NotApprover);
        };
        let decided_as = (named != approver).then(|| named.to_owned());
        if entry.status != Status::Pending {
            return Err(Refusal::AlreadyDecided {
                status: entry.status,
            });
        }
        entry.status = if approve {
            Status::Approved
        } else {
            Status::Denied
        };
        entry.decided_by = Some(approver.to_owned());
        entry.decided_as = decided_as;
        entry.decision_reason = reason;
        changes.push(Change::Put(entry.clone(), None));
        Ok(entry.clone())
    }
}

/// The ledger in memory, as a store runs it: a [`Book`] and the details it keeps apart.
#[cfg(any(test, feature = "test-util"))]
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MemoryLedger {
    book: Book,
    details: BTreeMap<String, Details>,
}

#[cfg(any(test, feature = "test-util"))]
impl MemoryLedger {
    /// An empty ledger holding at most `max_bytes` of records.
    pub(crate) fn new(max_bytes: usize) -> MemoryLedger {
        MemoryLedger {
            book: Book::new(max_bytes),
            details: BTreeMap::new(),
        }
    }

    /// Its book.
    pub(crate) fn book(&self) -> &Book {
        &self.book
    }

    /// How many records' details it keeps (the book's records, when the two agree).
    #[cfg(test)]
    pub(crate) fn details_len(&self) -> usize {
        self.details.len()
    }

    /// Applies `op` and its changes; `Err` when a page's details are missing.
    pub(crate) fn apply(&mut self, op: Op) -> Result<Reply, LedgerFault> {
        let (step, changes) = self.book.apply(op);
        for change in changes {
            match change {
                Change::Put(entry, Some(details)) => {
                    self.details.insert(entry.id, details);
                }
                Change::Put(_, None) => {}
                Change::Delete(id) => {
                    self.details.remove(&id);
                }
            }
        }
        match step {
            Step::Done(reply) => Ok(reply),
            Step::Page(page) => {
                let details = page
                    .ids()
                    .iter()
                    .map(|id| self.details.get(id).cloned())
                    .collect();
                page.reply(details)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: u64 = 3_600_000;
    const MIB: usize = 1024 * 1024;

    fn request(id: &str, requester: &str, hash: &str, now: u64) -> Record {
        Record {
            entry: Entry {
                id: id.into(),
                requester: requester.into(),
                tool: "bb_post".into(),
                arguments_hash: hash.into(),
                rule: "merges".into(),
                identity: Some("bb-release".into()),
                approvers: vec!["carol".into(), "dave".into()],
                status: Status::Pending,
                created_at_ms: now,
                expires_at_ms: now + HOUR,
                decided_by: None,
                decided_as: None,
                decision_reason: None,
                bytes: 0,
            },
            details: Details {
                arguments: Map::new(),
                method: Some("POST".into()),
                path: Some("/2.0/x".into()),
                reason: "Because.".into(),
            },
        }
    }

    /// `request` whose arguments carry a body of `body` bytes.
    fn sized(id: &str, requester: &str, now: u64, body: usize) -> Record {
        let mut r = request(id, requester, id, now);
        r.details
            .arguments
            .insert("body".into(), Json::String("x".repeat(body)));
        r
    }

    fn ledger() -> MemoryLedger {
        MemoryLedger::new(DEFAULT_LEDGER_MAX_BYTES)
    }

    fn call(ledger: &mut MemoryLedger, request: Record) -> CallOutcome {
        let now_ms = request.entry.created_at_ms;
        match ledger.apply(Op::Call { now_ms, request }) {
            Ok(Reply::Call { outcome }) => outcome,
            other => panic!("{other:?}"),
        }
    }

    fn decide(
        ledger: &mut MemoryLedger,
        id: &str,
        approver: &str,
        now_ms: u64,
    ) -> Result<Entry, Refusal> {
        decide_as(ledger, id, approver, &[], now_ms)
    }

    fn decide_as(
        ledger: &mut MemoryLedger,
        id: &str,
        approver: &str,
        aliases: &[&str],
        now_ms: u64,
    ) -> Result<Entry, Refusal> {
        let op = Op::Decide {
            now_ms,
            id: id.into(),
            approver: approver.into(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            approve: true,
            reason: None,
        };
        match ledger.apply(op) {
            Ok(Reply::Decided { result }) => result,
            other => panic!("{other:?}"),
        }
    }

    fn page(
        ledger: &mut MemoryLedger,
        approver: &str,
        aliases: &[&str],
        after: Option<Cursor>,
        now_ms: u64,
    ) -> (Vec<Record>, Option<Cursor>) {
        let op = Op::Pending {
            now_ms,
            approver: approver.into(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            after,
        };
        match ledger.apply(op) {
            Ok(Reply::Pending {
                records,
                next_cursor,
            }) => (records, next_cursor),
            other => panic!("{other:?}"),
        }
    }

    /// Every pending id `approver` may decide, page by page, and the pages' sizes.
    fn all_pages(ledger: &mut MemoryLedger, approver: &str, now_ms: u64) -> Vec<Vec<String>> {
        let mut pages = Vec::new();
        let mut after = None;
        loop {
            let (records, next) = page(ledger, approver, &[], after, now_ms);
            pages.push(records.into_iter().map(|r| r.entry.id).collect());
            match next {
                Some(cursor) => after = Some(cursor),
                None => return pages,
            }
        }
    }

    fn pending_ids(ledger: &mut MemoryLedger, approver: &str, now_ms: u64) -> Vec<String> {
        all_pages(ledger, approver, now_ms).concat()
    }

    fn refusal(outcome: CallOutcome) -> Refusal {
        match outcome {
            CallOutcome::Refused { refusal, .. } => refusal,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_approver_named_by_alias_or_provider_group_decides_and_the_entry_is_kept() {
        let mut ledger = ledger();
        let mut r = request("apr_1", "github~1", "h", 0);
        r.entry.approvers = vec!["Carol".into(), "github:acme".into()];
        call(&mut ledger, r.clone());
        // A login that is not the approver's alias, or an organisation they are not in: refused.
        assert_eq!(
            decide_as(
                &mut ledger,
                "apr_1",
                "github~2",
                &["dave", "github:other"],
                1
            ),
            Err(Refusal::NotApprover)
        );
        assert_eq!(
            page(&mut ledger, "github~3", &["GitHub:ACME"], None, 1)
                .0
                .len(),
            1
        );
        assert_eq!(
            page(&mut ledger, "github~3", &["github:acme-evil"], None, 1)
                .0
                .len(),
            0
        );
        let decided = decide_as(
            &mut ledger,
            "apr_1",
            "github~3",
            &["carol", "github:acme"],
            1,
        )
        .unwrap();
        assert_eq!(decided.decided_by.as_deref(), Some("github~3"));
        assert_eq!(decided.decided_as.as_deref(), Some("Carol"));
        // The approval holds while the approver list still names that entry.
        assert!(matches!(call(&mut ledger, r), CallOutcome::Run { .. }));
    }

    #[test]
    fn an_approval_is_consumed_once_and_identical_first_calls_share_a_request() {
        let mut ledger = ledger();
        let first = call(&mut ledger, request("apr_1", "bob", "h", 0));
        assert!(matches!(first, CallOutcome::Wait { created: true, .. }));
        let second = call(&mut ledger, request("apr_2", "bob", "h", 1));
        let CallOutcome::Wait {
            record, created, ..
        } = second
        else {
            panic!("{second:?}")
        };
        assert_eq!((record.id.as_str(), created), ("apr_1", false));
        assert_eq!(
            decide(&mut ledger, "apr_1", "bob", 2),
            Err(Refusal::SelfApproval)
        );
        assert_eq!(
            decide(&mut ledger, "apr_1", "eve", 2),
            Err(Refusal::NotApprover)
        );
        decide(&mut ledger, "apr_1", "carol", 2).expect("carol approves");
        let run = call(&mut ledger, request("apr_3", "bob", "h", 3));
        assert!(
            matches!(&run, CallOutcome::Run { record } if record.id == "apr_1" && record.status == Status::Consumed),
            "{run:?}"
        );
        // Spent: the same call again is a new request.
        let again = call(&mut ledger, request("apr_4", "bob", "h", 4));
        assert!(
            matches!(&again, CallOutcome::Wait { record, created: true, .. } if record.id == "apr_4"),
            "{again:?}"
        );
        assert_eq!((ledger.book().len(), ledger.details_len()), (1, 1));
    }

    #[test]
    fn a_policy_edited_since_the_approval_voids_it() {
        for edit in [
            |r: &mut Record| r.entry.rule = "other-rule".into(),
            |r: &mut Record| r.entry.identity = None,
            |r: &mut Record| r.entry.approvers = vec!["dave".into()],
        ] {
            let mut ledger = ledger();
            call(&mut ledger, request("apr_1", "bob", "h", 0));
            decide(&mut ledger, "apr_1", "carol", 1).expect("approved");
            let mut now = request("apr_2", "bob", "h", 2);
            edit(&mut now);
            let outcome = call(&mut ledger, now);
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
        let mut ledger = ledger();
        for i in 0..MAX_PENDING_PER_REQUESTER {
            let outcome = call(
                &mut ledger,
                request(&format!("apr_{i}"), "bob", &i.to_string(), 0),
            );
            assert!(matches!(outcome, CallOutcome::Wait { created: true, .. }));
        }
        let over = call(&mut ledger, request("apr_x", "bob", "x", 5));
        assert_eq!(
            refusal(over),
            Refusal::TooManyPending {
                limit: MAX_PENDING_PER_REQUESTER,
                oldest_expires_at_ms: HOUR,
            }
        );
        // Another requester is not affected, and a decision frees a place.
        assert!(matches!(
            call(&mut ledger, request("apr_a", "alice", "x", 5)),
            CallOutcome::Wait { created: true, .. }
        ));
        decide(&mut ledger, "apr_0", "carol", 6).expect("approved");
        assert!(matches!(
            call(&mut ledger, request("apr_y", "bob", "y", 7)),
            CallOutcome::Wait { created: true, .. }
        ));
    }

    #[test]
    fn a_requesters_pending_bytes_are_capped() {
        let mut ledger = ledger();
        let body = MAX_RECORD_BYTES - 1024;
        let mut made = 0;
        let over = loop {
            match call(
                &mut ledger,
                sized(&format!("apr_{made:02}"), "bob", 0, body),
            ) {
                CallOutcome::Wait { created: true, .. } => made += 1,
                other => break refusal(other),
            }
        };
        assert_eq!(made, MAX_REQUESTER_BYTES / (body + 1024), "{over:?}");
        let Refusal::RequesterFull {
            held, bytes, limit, ..
        } = over
        else {
            panic!("{over:?}")
        };
        assert!(held + bytes > limit && held <= limit && limit == MAX_REQUESTER_BYTES);
        assert_eq!(over.limit_code(), Some("bytes_per_principal"));
        // Small requests from another principal still fit.
        assert!(matches!(
            call(&mut ledger, request("apr_a", "alice", "a", 1)),
            CallOutcome::Wait { created: true, .. }
        ));
        // Deciding one of bob's frees its bytes.
        decide(&mut ledger, "apr_00", "carol", 2).expect("approved");
        assert!(matches!(
            call(&mut ledger, sized("apr_b", "bob", 3, body)),
            CallOutcome::Wait { created: true, .. }
        ));
    }

    #[test]
    fn records_too_large_to_keep_are_refused_and_nothing_is_kept() {
        let mut ledger = ledger();
        let fits = sized("apr_1", "bob", 0, MAX_RECORD_BYTES - 1024);
        assert!(fits.measure() <= MAX_RECORD_BYTES);
        assert!(matches!(
            call(&mut ledger, fits),
            CallOutcome::Wait { created: true, .. }
        ));
        let big = sized("apr_2", "bob", 0, MAX_RECORD_BYTES);
        let over = refusal(call(&mut ledger, big.clone()));
        assert_eq!(
            over,
            Refusal::TooLarge {
                bytes: big.measure()
            }
        );
        assert!(over.to_string().contains("at most 16384 bytes"), "{over}");
        assert_eq!((ledger.book().len(), ledger.details_len()), (1, 1));
    }

    #[test]
    fn the_ledger_holds_at_most_its_bytes_then_its_records() {
        // Bytes: three requesters fill a small ledger; a fourth is refused, nothing is dropped.
        let mut ledger = MemoryLedger::new(64 * 1024);
        let body = 12 * 1024;
        let mut made = 0;
        let full = loop {
            let requester = ["alice", "bob", "mallory"][made % 3];
            match call(
                &mut ledger,
                sized(&format!("apr_{made:02}"), requester, 0, body),
            ) {
                CallOutcome::Wait { created: true, .. } => made += 1,
                other => break refusal(other),
            }
        };
        assert_eq!(made, 5, "{full:?}");
        assert_eq!(full.limit_code(), Some("ledger_full"));
        assert!(ledger.book().bytes() <= 64 * 1024);
        assert!(matches!(
            refusal(call(&mut ledger, sized("apr_x", "zed", 0, body))),
            Refusal::LedgerFull { records: 5, .. }
        ));
        assert_eq!((ledger.book().len(), ledger.details_len()), (5, 5));
        // Expiry frees the ledger.
        assert!(matches!(
            call(&mut ledger, sized("apr_y", "zed", HOUR, body)),
            CallOutcome::Wait { created: true, .. }
        ));
        assert_eq!((ledger.book().len(), ledger.details_len()), (1, 1));

        // Records: many small requests from many requesters stop at MAX_RECORDS.
        let mut ledger = MemoryLedger::new(64 * MIB);
        for i in 0..MAX_RECORDS {
            let requester = format!("p{}", i / MAX_PENDING_PER_REQUESTER);
            let id = format!("apr_{i}");
            let outcome = call(&mut ledger, request(&id, &requester, &id, 0));
            assert!(
                matches!(outcome, CallOutcome::Wait { created: true, .. }),
                "{i}"
            );
        }
        let over = refusal(call(&mut ledger, request("apr_z", "zed", "h", 0)));
        assert!(
            matches!(
                over,
                Refusal::LedgerFull {
                    records: MAX_RECORDS,
                    ..
                }
            ),
            "{over:?}"
        );
        assert!(over.to_string().contains("at most 2000"), "{over}");
    }

    #[test]
    fn pages_keep_to_their_item_and_byte_budgets_and_list_every_request_once() {
        let mut ledger = ledger();
        // Small requests, then large ones, from many requesters, in creation order.
        let mut want = Vec::new();
        for i in 0..(PAGE_ITEMS + 7) {
            let id = format!("apr_{i:03}");
            call(
                &mut ledger,
                request(&id, &format!("q{}", i % 5), &id, i as u64),
            );
            want.push(id);
        }
        for i in 0..9 {
            let id = format!("apr_{:03}", 100 + i);
            call(
                &mut ledger,
                sized(&id, &format!("r{i}"), 100 + i, MAX_RECORD_BYTES - 1024),
            );
            want.push(id);
        }
        let pages = all_pages(&mut ledger, "carol", 200);
        assert_eq!(pages.concat(), want);
        assert!(pages.iter().all(|ids| ids.len() <= PAGE_ITEMS));
        for ids in &pages {
            let bytes: usize = ids
                .iter()
                .map(|id| ledger.book().entries[id].bytes + LISTED_OVERHEAD_BYTES)
                .sum();
            assert!(ids.len() == 1 || bytes <= PAGE_BYTES, "{ids:?}: {bytes}");
        }
        assert!(
            pages.len() >= 5,
            "large records take a page or two each: {pages:?}"
        );
        // A request made between pages is listed by a later page, never twice.
        let (first, next) = page(&mut ledger, "carol", &[], None, 300);
        call(&mut ledger, request("apr_late", "z", "late", 300));
        let (second, _) = page(&mut ledger, "carol", &[], next, 301);
        assert!(first
            .iter()
            .chain(&second)
            .all(|r| r.entry.id != "apr_late"));
        assert_eq!(
            pending_ids(&mut ledger, "carol", 302).last().unwrap(),
            "apr_late"
        );
    }

    #[test]
    fn decided_records_never_crowd_pending_ones_out_of_the_list() {
        let mut ledger = ledger();
        for i in 0..(3 * PAGE_ITEMS) {
            let requester = format!("p{i}");
            call(
                &mut ledger,
                request(&format!("apr_d{i:03}"), &requester, "h", i as u64),
            );
            decide(&mut ledger, &format!("apr_d{i:03}"), "carol", 1000).expect("decided");
        }
        call(&mut ledger, request("apr_pending", "bob", "h", 2000));
        assert_eq!(pending_ids(&mut ledger, "carol", 2001), vec!["apr_pending"]);
        // Not listed to the requester, nor to someone who is not an approver.
        assert!(!pending_ids(&mut ledger, "bob", 2001).contains(&"apr_pending".to_string()));
        assert!(pending_ids(&mut ledger, "eve", 2001).is_empty());
    }

    #[test]
    fn a_cursor_reads_back_what_it_writes_and_nothing_else() {
        let cursor = Cursor {
            created_at_ms: 1_700_000_000_123,
            id: "apr_0123abcdef".into(),
        };
        assert_eq!(Cursor::parse(&cursor.to_string()), Some(cursor));
        for bad in [
            "",
            "12",
            ".apr_1",
            "12.",
            "12.apr_",
            "x.apr_1",
            "1.apr_xyz",
            "1.other_1",
        ] {
            assert_eq!(Cursor::parse(bad), None, "{bad:?}");
        }
        assert_eq!(Cursor::parse(&format!("{}.apr_1", "9".repeat(21))), None);
    }

    #[test]
    fn expired_records_are_purged_and_cannot_be_used_or_decided() {
        let mut ledger = ledger();
        call(&mut ledger, request("apr_1", "bob", "h", 0));
        decide(&mut ledger, "apr_1", "carol", 1).expect("approved");
        let (_, changes) = ledger.book.apply(Op::Pending {
            now_ms: HOUR,
            approver: "carol".into(),
            aliases: Vec::new(),
            after: None,
        });
        assert_eq!(changes, vec![Change::Delete("apr_1".into())]);
        assert!(ledger.book().is_empty());
        assert_eq!(ledger.book().bytes(), 0);
        assert_eq!(
            decide(&mut ledger, "apr_1", "carol", HOUR),
            Err(Refusal::NotFound)
        );
        assert!(matches!(
            call(&mut ledger, request("apr_2", "bob", "h", HOUR)),
            CallOutcome::Wait { created: true, .. }
        ));
    }

    #[test]
    fn a_book_loaded_from_its_entries_counts_their_bytes_and_pages_report_missing_details() {
        let mut ledger = ledger();
        call(&mut ledger, sized("apr_1", "bob", 0, 2000));
        call(&mut ledger, request("apr_2", "alice", "h", 1));
        let entries: Vec<Entry> = ledger.book().entries.values().cloned().collect();
        let loaded = Book::from_entries(DEFAULT_LEDGER_MAX_BYTES, entries);
        assert_eq!(loaded.bytes(), ledger.book().bytes());
        assert!(loaded.bytes() > 2000);
        let mut loaded = loaded;
        let (Step::Page(page), _) = loaded.apply(Op::Pending {
            now_ms: 2,
            approver: "carol".into(),
            aliases: Vec::new(),
            after: None,
        }) else {
            panic!("a page")
        };
        assert_eq!(page.ids(), vec!["apr_1", "apr_2"]);
        let missing = page.reply(vec![None, None]).unwrap_err().to_string();
        assert!(missing.contains("apr_1"), "{missing}");
    }

    #[test]
    fn ops_and_replies_survive_json() {
        let op = Op::Call {
            now_ms: 5,
            request: request("apr_1", "bob", "h", 5),
        };
        let text = serde_json::to_string(&op).unwrap();
        assert_eq!(serde_json::from_str::<Op>(&text).unwrap(), op);
        let mut ledger = ledger();
        let reply = ledger.apply(op).unwrap();
        let text = serde_json::to_string(&reply).unwrap();
        assert_eq!(serde_json::from_str::<Reply>(&text).unwrap(), reply);
        let (records, next_cursor) = page(&mut ledger, "carol", &[], None, 6);
        let listed = Reply::Pending {
            records,
            next_cursor,
        };
        let text = serde_json::to_string(&listed).unwrap();
        assert_eq!(serde_json::from_str::<Reply>(&text).unwrap(), listed);
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
