//! How many requests each principal has in flight in this isolate. Every request holds memory
//! while it runs ([`crate::memory::REQUEST_OVERHEAD_BYTES`] at least), so without a bound per
//! principal one caller's burst of slow calls fills the isolate's budget and every other caller
//! is refused until it drains.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The most requests one principal may have in flight at once in one isolate: a quarter of the
/// default budget's room at the per-request overhead, well above what a code-mode program's
/// `Promise.all` of tool calls needs.
pub(crate) const MAX_PER_PRINCIPAL: usize = 64;

/// The most request-body bytes one principal's requests may hold at once in one isolate,
/// counted as they are declared or arrive: two bodies of the largest size. Each byte reserves
/// [`crate::memory::BYTES_PER_REQUEST_BYTE`] of the budget, so one principal's bodies hold at
/// most 40 MiB of the default 72, and the others keep room for a large call.
pub(crate) const BODY_BYTES_PER_PRINCIPAL: usize = 2 * super::MAX_BODY_BYTES;

/// The most sign-in requests in flight at once in one isolate, from every address together.
/// Anyone may send them, so together they may hold only a small part of the memory budget:
/// at most [`crate::memory::REQUEST_OVERHEAD_BYTES`], twice their headers and their body each,
/// about 15 MiB of the default 72 (checked when the crate is compiled).
pub(crate) const SIGN_IN_TOTAL: usize = 24;

/// The most sign-in requests one address (an IPv4 address, an IPv6 /48) has in flight at once,
/// so that no one address takes the sign-in endpoints from the others.
pub(crate) const SIGN_IN_PER_ADDRESS: usize = 6;

/// The key under which every sign-in request is counted: no principal's name holds a NUL.
pub(crate) const SIGN_IN: &str = "\0sign-in";

/// The key under which the sign-in requests of the address keyed `address` are counted.
pub(crate) fn sign_in_from(address: &str) -> String {
    format!("{SIGN_IN} {address}")
}

/// The request-body bytes each principal's requests hold.
#[derive(Clone, Debug, Default)]
pub(crate) struct BodyShares(Arc<Mutex<HashMap<String, usize>>>);

/// One request's part of its principal's body bytes, given back when dropped.
#[derive(Debug)]
pub(crate) struct BodyShare {
    shares: BodyShares,
    principal: String,
    bytes: Cell<usize>,
}

impl BodyShares {
    /// An empty part for one request of `principal`.
    pub(crate) fn open(&self, principal: &str) -> BodyShare {
        BodyShare {
            shares: self.clone(),
            principal: principal.to_owned(),
            bytes: Cell::new(0),
        }
    }
}

impl BodyShare {
    /// Grows this request's part to `bytes`, when its principal's total stays within
    /// [`BODY_BYTES_PER_PRINCIPAL`]; false, taking nothing, otherwise.
    pub(crate) fn grow(&self, bytes: usize) -> bool {
        let more = bytes.saturating_sub(self.bytes.get());
        if more == 0 {
            return true;
        }
        let mut totals = self.shares.0.lock().unwrap_or_else(PoisonError::into_inner);
        let total = totals.entry(self.principal.clone()).or_default();
        if *total + more > BODY_BYTES_PER_PRINCIPAL {
            if *total == 0 {
                totals.remove(&self.principal);
            }
            return false;
        }
        *total += more;
        self.bytes.set(bytes);
        true
    }
}

impl Drop for BodyShare {
    fn drop(&mut self) {
        let mut totals = self.shares.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(total) = totals.get_mut(&self.principal) {
            *total -= self.bytes.get().min(*total);
            if *total == 0 {
                totals.remove(&self.principal);
            }
        }
    }
}

/// The requests in flight, per principal.
#[derive(Clone, Debug, Default)]
pub(crate) struct InFlight(Arc<Mutex<HashMap<String, usize>>>);

/// One request's place among its principal's, given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    counts: InFlight,
    key: String,
}

impl InFlight {
    /// A place for one more request counted under `key`, or `None` when `max` are in flight
    /// under it already.
    pub(crate) fn enter(&self, key: &str, max: usize) -> Option<Slot> {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(key.to_owned()).or_default();
        if *count >= max {
            return None;
        }
        *count += 1;
        Some(Slot {
            counts: self.clone(),
            key: key.to_owned(),
        })
    }

    /// Requests in flight under `key`.
    #[cfg(test)]
    fn of(&self, key: &str) -> usize {
        let counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        counts.get(key).copied().unwrap_or(0)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_principal_has_its_own_bound_and_a_slot_is_given_back_when_dropped() {
        let inflight = InFlight::default();
        let mut slots: Vec<Slot> = (0..MAX_PER_PRINCIPAL)
            .map(|_| inflight.enter("alice", MAX_PER_PRINCIPAL).unwrap())
            .collect();
        assert!(inflight.enter("alice", MAX_PER_PRINCIPAL).is_none());
        let bob = inflight.enter("bob", MAX_PER_PRINCIPAL).unwrap();
        slots.pop();
        assert_eq!(inflight.of("alice"), MAX_PER_PRINCIPAL - 1);
        let again = inflight.enter("alice", MAX_PER_PRINCIPAL);
        assert!(again.is_some());
        assert_eq!(inflight.of("alice"), MAX_PER_PRINCIPAL);
        drop(bob);
        assert_eq!(inflight.of("bob"), 0);
        assert!(inflight.0.lock().unwrap().get("bob").is_none());
    }

    #[test]
    fn a_principal_s_body_bytes_are_bounded_and_given_back() {
        let shares = BodyShares::default();
        let first = shares.open("alice");
        let second = shares.open("alice");
        assert!(first.grow(BODY_BYTES_PER_PRINCIPAL / 2));
        assert!(second.grow(BODY_BYTES_PER_PRINCIPAL / 2));
        let third = shares.open("alice");
        assert!(!third.grow(1));
        assert!(shares.open("bob").grow(BODY_BYTES_PER_PRINCIPAL));
        // Growing again counts only what is new; shrinking is not a thing.
        assert!(first.grow(BODY_BYTES_PER_PRINCIPAL / 2));
        drop(second);
        assert!(third.grow(BODY_BYTES_PER_PRINCIPAL / 2));
        drop((first, third));
        assert!(shares.0.lock().unwrap().get("alice").is_none());
    }

    #[test]
    fn sign_in_addresses_have_their_own_bound_within_the_total() {
        let inflight = InFlight::default();
        let one = sign_in_from("203.0.113.7");
        let slots: Vec<Slot> = (0..SIGN_IN_PER_ADDRESS)
            .map(|_| inflight.enter(&one, SIGN_IN_PER_ADDRESS).unwrap())
            .collect();
        assert!(inflight.enter(&one, SIGN_IN_PER_ADDRESS).is_none());
        assert!(inflight
            .enter(&sign_in_from("203.0.113.8"), SIGN_IN_PER_ADDRESS)
            .is_some());
        assert_ne!(one, SIGN_IN);
        drop(slots);
        assert_eq!(inflight.of(&one), 0);
    }
}
