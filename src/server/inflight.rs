//! How many requests each principal has in flight in this isolate. Every request holds memory
//! while it runs ([`crate::memory::REQUEST_OVERHEAD_BYTES`] at least), so without a bound per
//! principal one caller's burst of slow calls fills the isolate's budget and every other caller
//! is refused until it drains.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The most requests one principal may have in flight at once in one isolate: a quarter of the
/// default budget's room at the per-request overhead, well above what a code-mode program's
/// `Promise.all` of tool calls needs.
pub(crate) const MAX_PER_PRINCIPAL: usize = 64;

/// The key under which the sign-in endpoints' requests, unauthenticated by design, are counted
/// together: no principal's name holds a NUL.
pub(crate) const SIGN_IN: &str = "\0sign-in";

/// The requests in flight, per principal.
#[derive(Clone, Debug, Default)]
pub(crate) struct InFlight(Arc<Mutex<HashMap<String, usize>>>);

/// One request's place among its principal's, given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    counts: InFlight,
    principal: String,
}

impl InFlight {
    /// A place for one more request of `principal`, or `None` when it has
    /// [`MAX_PER_PRINCIPAL`] in flight already.
    pub(crate) fn enter(&self, principal: &str) -> Option<Slot> {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(principal.to_owned()).or_default();
        if *count >= MAX_PER_PRINCIPAL {
            return None;
        }
        *count += 1;
        Some(Slot {
            counts: self.clone(),
            principal: principal.to_owned(),
        })
    }

    /// Requests `principal` has in flight.
    #[cfg(test)]
    fn of(&self, principal: &str) -> usize {
        let counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        counts.get(principal).copied().unwrap_or(0)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.principal) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.principal);
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
            .map(|_| inflight.enter("alice").unwrap())
            .collect();
        assert!(inflight.enter("alice").is_none());
        let bob = inflight.enter("bob").unwrap();
        slots.pop();
        assert_eq!(inflight.of("alice"), MAX_PER_PRINCIPAL - 1);
        let again = inflight.enter("alice");
        assert!(again.is_some());
        assert_eq!(inflight.of("alice"), MAX_PER_PRINCIPAL);
        drop(bob);
        assert_eq!(inflight.of("bob"), 0);
        assert!(inflight.0.lock().unwrap().get("bob").is_none());
    }
}
