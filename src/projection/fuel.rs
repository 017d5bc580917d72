//! The fuel of one request, which its projections draw on in turn: the calls of a batch share
//! what one request may spend, rather than each starting afresh. A principal's requests draw on
//! a bucket of their own too ([`FuelShares`]): the isolate has one thread, and a projection holds
//! it until it ends, so without it one caller's concurrent projections would run back to back
//! while every other caller waits.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::meter::Limits;

/// What a principal's bucket refills by, in units of fuel per second: a tenth of one request's
/// fuel, so that after a full run the next ones of the same caller are short until it has
/// waited, and other callers' requests run between them.
pub(crate) const REFILL_PER_SECOND: u64 = 1_000_000;

/// The most principals whose buckets are kept; past it the full ones are forgotten.
const MAX_BUCKETS: usize = 4096;

/// Fuel left to one request's projections.
#[derive(Debug)]
pub struct Fuel {
    left: Cell<u64>,
    share: Option<Share>,
}

/// Each principal's bucket of fuel, per isolate: one request's fuel at most, refilled with time.
#[derive(Clone, Debug, Default)]
pub(crate) struct FuelShares(Arc<Mutex<HashMap<String, Bucket>>>);

/// A bucket drawn down to `level` at `at_ms`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    level: u64,
    at_ms: u64,
}

impl Bucket {
    fn at(self, now_ms: u64) -> u64 {
        let refill = now_ms
            .saturating_sub(self.at_ms)
            .saturating_mul(REFILL_PER_SECOND)
            / 1000;
        self.level.saturating_add(refill).min(capacity())
    }
}

/// A full bucket: one request's fuel.
fn capacity() -> u64 {
    Limits::default().fuel
}

impl FuelShares {
    fn available(&self, principal: &str, now_ms: u64) -> u64 {
        let buckets = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        buckets
            .get(principal)
            .map_or(capacity(), |bucket| bucket.at(now_ms))
    }

    fn take(&self, principal: &str, now_ms: u64, units: u64) {
        let mut buckets = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let level = buckets
            .get(principal)
            .map_or(capacity(), |bucket| bucket.at(now_ms))
            .saturating_sub(units);
        buckets.insert(
            principal.to_owned(),
            Bucket {
                level,
                at_ms: now_ms,
            },
        );
        if buckets.len() > MAX_BUCKETS {
            buckets.retain(|_, bucket| bucket.at(now_ms) < capacity());
        }
    }
}

/// The principal a request draws for, and the time its next run starts at.
#[derive(Debug)]
struct Share {
    shares: FuelShares,
    principal: String,
    now_ms: Cell<u64>,
}

impl Fuel {
    /// `units` of fuel.
    pub fn new(units: u64) -> Fuel {
        Fuel {
            left: Cell::new(units),
            share: None,
        }
    }

    /// What one request may spend: one projection run's default fuel.
    pub(crate) fn request() -> Fuel {
        Fuel::new(Limits::default().fuel)
    }

    /// What one request of `principal`, made at `now_ms`, may spend: [`Fuel::request`], and no
    /// more than the principal's bucket holds when each run starts ([`Fuel::at`]).
    pub(crate) fn request_of(shares: &FuelShares, principal: &str, now_ms: u64) -> Fuel {
        Fuel {
            share: Some(Share {
                shares: shares.clone(),
                principal: principal.to_owned(),
                now_ms: Cell::new(now_ms),
            }),
            ..Fuel::request()
        }
    }

    /// Sets the time the next run starts at, which the principal's bucket is read at.
    pub(crate) fn at(&self, now_ms: u64) {
        if let Some(share) = &self.share {
            share.now_ms.set(now_ms);
        }
    }

    /// Units left.
    pub(crate) fn left(&self) -> u64 {
        let own = self.left.get();
        match &self.share {
            Some(share) => own.min(share.shares.available(&share.principal, share.now_ms.get())),
            None => own,
        }
    }

    /// Whether nothing is left.
    pub(crate) fn spent(&self) -> bool {
        self.left() == 0
    }

    /// The limits of the next run: `limits` with no more fuel than is left.
    pub(super) fn limits(&self, limits: Limits) -> Limits {
        Limits {
            fuel: limits.fuel.min(self.left()),
            ..limits
        }
    }

    /// Takes `units` spent by a run.
    pub(super) fn spend(&self, units: u64) {
        self.left.set(self.left.get().saturating_sub(units));
        if let Some(share) = &self.share {
            share
                .shares
                .take(&share.principal, share.now_ms.get(), units);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::Projection;
    use crate::value::{parse, Value};

    #[test]
    fn runs_drawing_on_one_fuel_share_it() {
        let program = Projection::compile(".[0] | [range(.)] | length");
        let input = || parse("[20000]").unwrap();
        let alone = Fuel::request();
        assert_eq!(
            program.apply_or_error_value_within(input(), &alone, None),
            parse("20000").unwrap()
        );
        let one_run = Limits::default().fuel - alone.left();
        assert!(one_run > 20_000, "{one_run}");
        // Room for one run and a half: the second run stops where the fuel ends.
        let shared = Fuel::new(one_run + one_run / 2);
        assert_eq!(
            program.apply_or_error_value_within(input(), &shared, None),
            parse("20000").unwrap()
        );
        let second = program.apply_or_error_value_within(input(), &shared, None);
        let reason = format!("{:?}", second.get("_jqError"));
        assert!(reason.contains("budget exhausted"), "{reason}");
        assert!(shared.spent());
    }

    #[test]
    fn a_principals_requests_draw_on_one_bucket_refilled_with_time() {
        let program = Projection::compile(".[0] | [range(.)] | length");
        let input = || parse("[20000]").unwrap();
        let full = Limits::default().fuel;
        let shares = FuelShares::default();
        let first = Fuel::request_of(&shares, "alice", 0);
        let second = Fuel::request_of(&shares, "alice", 0);
        let other = Fuel::request_of(&shares, "bob", 0);
        program.apply_or_error_value_within(input(), &first, None);
        let one_run = full - first.left();
        assert!(one_run > 20_000, "{one_run}");
        // The same caller's other request, at once: what the bucket has left.
        assert_eq!(second.left(), full - one_run);
        assert_eq!(other.left(), full);
        // A second later the bucket has refilled by a second's worth.
        second.at(1_000);
        assert_eq!(
            second.left(),
            (full - one_run + REFILL_PER_SECOND).min(full)
        );
        // Drained, the next run stops at once, and is charged nothing more.
        shares.take("alice", 1_000, full);
        assert!(second.spent());
        let stopped = program.apply_or_error_value_within(input(), &second, None);
        assert!(format!("{:?}", stopped.get("_jqError")).contains("budget exhausted"));
        second.at(1_000 + 10_000);
        assert_eq!(second.left(), full);
    }

    #[test]
    fn what_does_not_run_spends_nothing() {
        let fuel = Fuel::new(5);
        for blank_or_broken in ["", "  ", ".[ | ("] {
            Projection::compile(blank_or_broken).apply_or_error_value_within(
                Value::Null,
                &fuel,
                None,
            );
            assert_eq!(fuel.left(), 5, "{blank_or_broken:?}");
        }
    }
}
