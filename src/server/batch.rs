//! What one JSON-RPC batch may spend, shared by its calls: a batch is one request, so its calls
//! draw on one request's jq fuel and time, and the replies it holds until its response is
//! written count against the isolate's memory budget. Past any of these bounds the calls not yet
//! started are answered with [`CODE_BATCH_BUDGET`] instead of running.

use crate::jsonrpc::{ErrorCode, ErrorObject, Response};
use crate::memory::{BatchMemory, MemoryBudget};
use crate::projection::Fuel;
use serde_json::json;

/// The most messages one batch may hold; a longer batch is refused as a whole.
pub(crate) const MAX_BATCH_MESSAGES: usize = 50;

/// `error.data.code` of a batch call refused because the batch spent one request's budget.
pub(crate) const CODE_BATCH_BUDGET: &str = "batch_budget_exceeded";

/// The budget of one batch's calls.
#[derive(Debug)]
pub(crate) struct BatchBudget {
    memory: BatchMemory,
    fuel: Fuel,
    deadline_ms: u64,
}

impl BatchBudget {
    /// A batch starting now: the memory its replies may hold, one request's `fuel`, and a
    /// deadline `time_ms` from `now_ms` after which it starts no call.
    pub(super) fn new(memory: &MemoryBudget, fuel: Fuel, now_ms: u64, time_ms: u64) -> BatchBudget {
        BatchBudget {
            memory: memory.batch(),
            fuel,
            deadline_ms: now_ms.saturating_add(time_ms),
        }
    }

    /// The fuel the batch's projections draw on.
    pub(crate) fn fuel(&self) -> &Fuel {
        &self.fuel
    }

    /// Counts `response` as held until the batch's response is written.
    pub(crate) fn hold(&self, response: &Response) {
        self.memory.hold_reply(reply_bytes(response));
    }

    /// The error a call not yet started gets at `now_ms`, when the batch has spent a bound.
    pub(crate) fn exceeded(&self, now_ms: u64) -> Option<ErrorObject> {
        let (bound, detail) = if now_ms >= self.deadline_ms {
            (
                "time",
                "its time (as long as one upstream request may take) is up".to_owned(),
            )
        } else if self.fuel.spent() {
            (
                "fuel",
                "its projections spent one request's jq fuel".to_owned(),
            )
        } else if self.memory.spent() {
            (
                "memory",
                format!(
                    "its replies hold {} bytes of memory, its share of the isolate's budget",
                    self.memory.limit()
                ),
            )
        } else if self.memory.isolate_spent() {
            (
                "memory",
                "the isolate's memory is taken by the requests in flight".to_owned(),
            )
        } else {
            return None;
        };
        Some(
            ErrorObject::new(
                ErrorCode::SERVER_ERROR,
                format!(
                    "Batch budget exceeded: this call was not run because its batch has spent \
                     what one request may ({detail}). Send it again in a request of its own."
                ),
            )
            .with_data(json!({"code": CODE_BATCH_BUDGET, "bound": bound})),
        )
    }
}

/// The JSON text a response adds to the batch's reply, near enough: its result or its error's
/// message and data, the envelope aside.
fn reply_bytes(response: &Response) -> usize {
    let result = response.result.as_ref().map_or(0, |r| r.get().len());
    let error = response.error.as_ref().map_or(0, |e| {
        e.message.len() + e.data.as_ref().map_or(0, |d| d.to_string().len())
    });
    result + error
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{Id, ResultJson};
    use crate::memory::{BATCH_SHARE, BYTES_PER_REPLY_BYTE};

    const MIB: usize = 1024 * 1024;

    /// A reply whose result is a number of `bytes` digits.
    fn reply(bytes: usize) -> Response {
        Response::success(Id::Number(1.into()), ResultJson::written("7".repeat(bytes)))
    }

    fn code(error: &ErrorObject) -> (&str, &str) {
        let data = error.data.as_ref().unwrap();
        (
            data["code"].as_str().unwrap(),
            data["bound"].as_str().unwrap(),
        )
    }

    #[test]
    fn replies_held_past_the_batchs_share_stop_the_calls_not_yet_started() {
        let budget = MemoryBudget::new(16 * MIB);
        let batch = BatchBudget::new(&budget, Fuel::request(), 0, 1_000);
        let share = 16 * MIB / BATCH_SHARE / BYTES_PER_REPLY_BYTE;
        batch.hold(&reply(share - 1));
        assert_eq!(batch.exceeded(0), None);
        assert_eq!(budget.in_use(), (share - 1) * BYTES_PER_REPLY_BYTE);
        batch.hold(&reply(1));
        let error = batch.exceeded(0).unwrap();
        assert_eq!(error.code, ErrorCode::SERVER_ERROR);
        assert_eq!(code(&error), (CODE_BATCH_BUDGET, "memory"));
        assert!(
            error.message.contains("Batch budget exceeded"),
            "{}",
            error.message
        );
        drop(batch);
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn error_replies_count_too() {
        let budget = MemoryBudget::new(16 * MIB);
        let batch = BatchBudget::new(&budget, Fuel::request(), 0, 1_000);
        let error = ErrorObject::invalid_request("x".repeat(1000));
        batch.hold(&Response::failure(None, error));
        assert!(budget.in_use() >= 1000 * BYTES_PER_REPLY_BYTE);
    }

    #[test]
    fn the_deadline_and_the_fuel_stop_the_calls_not_yet_started() {
        let budget = MemoryBudget::new(16 * MIB);
        let batch = BatchBudget::new(&budget, Fuel::request(), 5_000, 1_000);
        assert_eq!(batch.exceeded(5_999), None);
        assert_eq!(code(&batch.exceeded(6_000).unwrap()).1, "time");
        let program = crate::projection::Projection::compile("last(range(1e9))");
        let out =
            program.apply_or_error_value_within(crate::value::Value::Null, batch.fuel(), None);
        assert!(out.get("_jqError").is_some(), "{out:?}");
        assert_eq!(code(&batch.exceeded(5_000).unwrap()).1, "fuel");
    }
}
