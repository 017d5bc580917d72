//! How the ledger's tagged enums are read from JSON. Each is read as one flat struct holding
//! every variant's members, then checked for the members its tag needs: serde's own reading of
//! an internally tagged enum buffers the object first (its `Content` tree), whose code for every
//! type inside was tens of KiB of the bundle. What is written stays serde's derive, so the wire
//! format is the one those enums always had.

use super::{CallOutcome, Cursor, Entry, Op, Record, Refusal, Reply, Status};
use serde::Deserialize;

/// Why a tagged object could not be read: the member its tag needs and did not find.
#[derive(Debug)]
pub(crate) struct Missing(&'static str);

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "missing field `{}`", self.0)
    }
}

fn need<T>(value: Option<T>, name: &'static str) -> Result<T, Missing> {
    value.ok_or(Missing(name))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum OpTag {
    Call,
    Decide,
    Pending,
}

/// An [`Op`] as read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OpWire {
    op: OpTag,
    now_ms: u64,
    request: Option<Record>,
    id: Option<String>,
    approver: Option<String>,
    #[serde(default)]
    aliases: Vec<String>,
    approve: Option<bool>,
    reason: Option<String>,
    after: Option<Cursor>,
}

impl TryFrom<OpWire> for Op {
    type Error = Missing;

    fn try_from(w: OpWire) -> Result<Op, Missing> {
        Ok(match w.op {
            OpTag::Call => Op::Call {
                now_ms: w.now_ms,
                request: need(w.request, "request")?,
            },
            OpTag::Decide => Op::Decide {
                now_ms: w.now_ms,
                id: need(w.id, "id")?,
                approver: need(w.approver, "approver")?,
                aliases: w.aliases,
                approve: need(w.approve, "approve")?,
                reason: w.reason,
            },
            OpTag::Pending => Op::Pending {
                now_ms: w.now_ms,
                approver: need(w.approver, "approver")?,
                aliases: w.aliases,
                after: w.after,
            },
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum OutcomeTag {
    Run,
    Wait,
    Refused,
}

/// A [`CallOutcome`] as read.
#[derive(Deserialize)]
pub(crate) struct CallOutcomeWire {
    outcome: OutcomeTag,
    record: Option<Entry>,
    created: Option<bool>,
    voided: Option<Entry>,
    refusal: Option<Refusal>,
}

impl TryFrom<CallOutcomeWire> for CallOutcome {
    type Error = Missing;

    fn try_from(w: CallOutcomeWire) -> Result<CallOutcome, Missing> {
        Ok(match w.outcome {
            OutcomeTag::Run => CallOutcome::Run {
                record: need(w.record, "record")?,
            },
            OutcomeTag::Wait => CallOutcome::Wait {
                record: need(w.record, "record")?,
                created: need(w.created, "created")?,
                voided: w.voided,
            },
            OutcomeTag::Refused => CallOutcome::Refused {
                refusal: need(w.refusal, "refusal")?,
                voided: w.voided,
            },
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum ReplyTag {
    Call,
    Decided,
    Pending,
}

/// A [`Reply`] as read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReplyWire {
    reply: ReplyTag,
    outcome: Option<CallOutcome>,
    result: Option<Result<Entry, Refusal>>,
    records: Option<Vec<Record>>,
    next_cursor: Option<Cursor>,
}

impl TryFrom<ReplyWire> for Reply {
    type Error = Missing;

    fn try_from(w: ReplyWire) -> Result<Reply, Missing> {
        Ok(match w.reply {
            ReplyTag::Call => Reply::Call {
                outcome: need(w.outcome, "outcome")?,
            },
            ReplyTag::Decided => Reply::Decided {
                result: need(w.result, "result")?,
            },
            ReplyTag::Pending => Reply::Pending {
                records: need(w.records, "records")?,
                next_cursor: w.next_cursor,
            },
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum RefusalTag {
    NotFound,
    NotApprover,
    SelfApproval,
    AlreadyDecided,
    TooManyPending,
    RequesterFull,
    TooLarge,
    LedgerFull,
}

/// A [`Refusal`] as read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RefusalWire {
    refusal: RefusalTag,
    status: Option<Status>,
    limit: Option<usize>,
    oldest_expires_at_ms: Option<u64>,
    held: Option<usize>,
    bytes: Option<usize>,
    records: Option<usize>,
    max_bytes: Option<usize>,
}

impl TryFrom<RefusalWire> for Refusal {
    type Error = Missing;

    fn try_from(w: RefusalWire) -> Result<Refusal, Missing> {
        let oldest = || need(w.oldest_expires_at_ms, "oldestExpiresAtMs");
        Ok(match w.refusal {
            RefusalTag::NotFound => Refusal::NotFound,
            RefusalTag::NotApprover => Refusal::NotApprover,
            RefusalTag::SelfApproval => Refusal::SelfApproval,
            RefusalTag::AlreadyDecided => Refusal::AlreadyDecided {
                status: need(w.status, "status")?,
            },
            RefusalTag::TooManyPending => Refusal::TooManyPending {
                limit: need(w.limit, "limit")?,
                oldest_expires_at_ms: oldest()?,
            },
            RefusalTag::RequesterFull => Refusal::RequesterFull {
                held: need(w.held, "held")?,
                bytes: need(w.bytes, "bytes")?,
                limit: need(w.limit, "limit")?,
                oldest_expires_at_ms: oldest()?,
            },
            RefusalTag::TooLarge => Refusal::TooLarge {
                bytes: need(w.bytes, "bytes")?,
            },
            RefusalTag::LedgerFull => Refusal::LedgerFull {
                records: need(w.records, "records")?,
                held: need(w.held, "held")?,
                max_bytes: need(w.max_bytes, "maxBytes")?,
                oldest_expires_at_ms: oldest()?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::Details;
    use super::*;

    fn entry() -> Entry {
        Entry {
            id: "apr_1".into(),
            requester: "bob".into(),
            tool: "bb_post".into(),
            arguments_hash: "h".into(),
            rule: "merges".into(),
            identity: None,
            approvers: vec!["carol".into()],
            status: Status::Pending,
            created_at_ms: 1,
            expires_at_ms: 2,
            decided_by: None,
            decided_as: None,
            decision_reason: None,
            bytes: 3,
        }
    }

    fn record() -> Record {
        Record {
            entry: entry(),
            details: Details {
                arguments: serde_json::Map::new(),
                method: None,
                path: None,
                reason: "Because.".into(),
            },
        }
    }

    fn refusals() -> Vec<Refusal> {
        vec![
            Refusal::NotFound,
            Refusal::NotApprover,
            Refusal::SelfApproval,
            Refusal::AlreadyDecided {
                status: Status::Denied,
            },
            Refusal::TooManyPending {
                limit: 1,
                oldest_expires_at_ms: 2,
            },
            Refusal::RequesterFull {
                held: 1,
                bytes: 2,
                limit: 3,
                oldest_expires_at_ms: 4,
            },
            Refusal::TooLarge { bytes: 5 },
            Refusal::LedgerFull {
                records: 1,
                held: 2,
                max_bytes: 3,
                oldest_expires_at_ms: 4,
            },
        ]
    }

    fn round_trip<T>(value: &T)
    where
        T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let text = serde_json::to_string(value).unwrap();
        assert_eq!(&serde_json::from_str::<T>(&text).unwrap(), value, "{text}");
    }

    #[test]
    fn every_variant_reads_back_what_serde_writes() {
        let after = Some(entry().cursor());
        for op in [
            Op::Call {
                now_ms: 1,
                request: record(),
            },
            Op::Decide {
                now_ms: 1,
                id: "apr_1".into(),
                approver: "carol".into(),
                aliases: vec!["github:acme".into()],
                approve: true,
                reason: Some("ok".into()),
            },
            Op::Pending {
                now_ms: 1,
                approver: "carol".into(),
                aliases: Vec::new(),
                after,
            },
        ] {
            round_trip(&op);
        }
        let outcomes = [
            CallOutcome::Run { record: entry() },
            CallOutcome::Wait {
                record: entry(),
                created: true,
                voided: Some(entry()),
            },
            CallOutcome::Refused {
                refusal: Refusal::NotFound,
                voided: None,
            },
        ];
        for outcome in outcomes {
            round_trip(&Reply::Call { outcome });
        }
        for refusal in refusals() {
            round_trip(&refusal);
            round_trip(&Reply::Decided {
                result: Err(refusal),
            });
        }
        round_trip(&Reply::Decided {
            result: Ok(entry()),
        });
        round_trip(&Reply::Pending {
            records: vec![record()],
            next_cursor: None,
        });
    }

    #[test]
    fn the_wire_text_is_the_tagged_objects() {
        let text = r#"{"reply":"decided","result":{"Err":{"refusal":"ledgerFull","records":1,"held":2,"maxBytes":3,"oldestExpiresAtMs":4}}}"#;
        let reply = Reply::Decided {
            result: Err(refusals().pop().unwrap()),
        };
        assert_eq!(serde_json::to_string(&reply).unwrap(), text);
        assert_eq!(serde_json::from_str::<Reply>(text).unwrap(), reply);
        let text = r#"{"op":"pending","nowMs":7,"approver":"carol"}"#;
        let op = Op::Pending {
            now_ms: 7,
            approver: "carol".into(),
            aliases: Vec::new(),
            after: None,
        };
        assert_eq!(serde_json::from_str::<Op>(text).unwrap(), op);
    }

    #[test]
    fn a_member_the_tag_needs_is_missing_or_the_tag_unknown() {
        let missing = |text: &str| serde_json::from_str::<Op>(text).unwrap_err().to_string();
        assert!(missing(r#"{"op":"call","nowMs":1}"#).contains("missing field `request`"));
        assert!(
            missing(r#"{"op":"decide","nowMs":1,"id":"apr_1","approver":"c"}"#)
                .contains("missing field `approve`")
        );
        assert!(missing(r#"{"op":"sweep","nowMs":1}"#).contains("unknown variant"));
        let refusal = r#"{"refusal":"tooManyPending","limit":1}"#;
        let error = serde_json::from_str::<Refusal>(refusal)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("missing field `oldestExpiresAtMs`"),
            "{error}"
        );
    }
}
