//! The memory budget of one isolate: large upstream bodies reserve what they will cost before
//! they are read, and a call that finds the budget spent waits briefly for room, then is
//! refused with [`Busy`].
//!
//! A Workers isolate serves many requests at once in 128 MB shared by its JavaScript heap and
//! its WebAssembly memory, and linear memory never shrinks: the sum of the bodies in flight is
//! what has to stay bounded, not each one. A body costs up to [`BYTES_PER_BODY_BYTE`] times its
//! size while its call runs (the body while it is parsed, the parsed value), and the value lives
//! until the call's result has been produced, so
//! reservations belong to the call ([`CallMemory`]) and are returned when it is dropped,
//! whatever path the call ended on.
//!
//! The buffers a call reads through besides its bodies (an artifact's chunk read back, a job log
//! streamed into its artifact) reserve from the same budget ([`CallMemory::hold_buffer`]).
//!
//! A JSON-RPC batch holds its replies until its whole response is written; they reserve from
//! the same budget ([`BatchMemory`]), so the calls of other requests wait for them as for bodies.
//!
//! The request's own body reserves too, before it is read ([`CallMemory::request_body`]): a
//! tool call's arguments are held, parsed and copied for as long as the call runs.
//!
//! Bodies up to [`SMALL_BODY_BYTES`] are small. Large ones are admitted only while the last
//! [`SMALL_SHARE`]th of the budget stays free, which small ones may use: a small call does not
//! queue behind large ones. Small ones wait too once the whole budget is spent, as many of them
//! at once would otherwise hold memory without bound.
//!
//! A waiting call looks again every [`POLL_MS`] on a timer of its own, which the caller supplies
//! (the clock port), keeping this module free of any port. It is never woken by the call that
//! returns memory: that call is another request, and workerd cancels, as hung, a request whose
//! pending promise another request's code resolves (a waiting request woken that way fails
//! with a 500 in workerd).
//!
//! Workers run one thread per isolate; the count is atomic only because the server that owns
//! it may live in a `static`.

pub mod heap;

use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Bytes of memory a call holds per byte of upstream body, as measured in workerd with structured
/// output on (docs/reliability.md, Memory per byte of body): 1.57 for a 16 MiB page and 1.63 for
/// a 2 MiB page, whose text is released as it is parsed and whose artifact is streamed to the
/// store from the value. The larger, rounded up.
pub const BYTES_PER_BODY_BYTE: usize = 2;

/// Bodies of at most this many bytes are small: they may use the budget's last
/// [`SMALL_SHARE`]th, which large ones leave free.
pub(crate) const SMALL_BODY_BYTES: usize = 1024 * 1024;

/// The part of the budget only small bodies may use: one in this many bytes.
pub const SMALL_SHARE: usize = 8;

/// Bytes of memory a request holds per byte of its own body while its calls run, as measured in
/// workerd (docs/reliability.md, Request bodies): the bytes read, the parsed message, and the
/// arguments taken from it, 4.04 for one call of 3.9 MiB, rounded up with room for the
/// allocator's growth steps.
pub const BYTES_PER_REQUEST_BYTE: usize = 5;

/// What a request holds while it runs besides its body and headers, in bytes: the call's own
/// state, measured at about 216 KB for a call waiting on its upstream (docs/reliability.md,
/// Request bodies), rounded up. Its headers count twice their length (JavaScript's copy and
/// the module's).
pub const REQUEST_OVERHEAD_BYTES: usize = 256 * 1024;

/// The longest a large body waits for room before its call is refused, in milliseconds.
pub const WAIT_MS: u64 = 300;

/// How often a waiting body looks for room again, in milliseconds.
pub const POLL_MS: u64 = 10;

/// The budget when `MEMORY_BUDGET_BYTES` is not set: 72 MiB of the isolate's 128 MB.
pub(crate) const DEFAULT_BUDGET_BYTES: usize = 72 * 1024 * 1024;

/// The memory of one isolate available to upstream bodies and what is built from them. Clones
/// share one budget.
#[derive(Clone)]
pub struct MemoryBudget(Arc<Shared>);

struct Shared {
    limit: usize,
    used: AtomicUsize,
    /// Of `used`, what requests' own bodies hold ([`MemoryBudget::request`]).
    requests: AtomicUsize,
}

impl fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("limit", &self.0.limit)
            .field("used", &self.in_use())
            .finish()
    }
}

impl MemoryBudget {
    /// A budget of `limit` bytes of memory, none of it reserved.
    pub fn new(limit: usize) -> MemoryBudget {
        MemoryBudget(Arc::new(Shared {
            limit,
            used: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
        }))
    }

    /// The budget in bytes of memory.
    pub(crate) fn limit(&self) -> usize {
        self.0.limit
    }

    /// Bytes of memory reserved now, by every call.
    pub fn in_use(&self) -> usize {
        self.0.used.load(Ordering::Relaxed)
    }

    /// The reservations of one new call, none yet.
    pub fn call(&self) -> CallMemory {
        self.holder(false)
    }

    /// The reservation of one request's own body ([`CallMemory::request_body`]), none yet.
    /// What requests hold does not keep a call's body from running alone (see
    /// [`CallMemory::fits`]): each request holds one, the call's own among them.
    pub(crate) fn request(&self) -> CallMemory {
        self.holder(true)
    }

    fn holder(&self, request: bool) -> CallMemory {
        CallMemory {
            budget: self.clone(),
            held: Cell::new(0),
            buffers: Cell::new(0),
            refused: Cell::new(false),
            request,
        }
    }

    fn take(&self, bytes: usize, request: bool) {
        self.0.used.fetch_add(bytes, Ordering::Relaxed);
        if request {
            self.0.requests.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    fn release(&self, bytes: usize, request: bool) {
        // Never more than was taken: every release is a holder's own total.
        self.0.used.fetch_sub(bytes, Ordering::Relaxed);
        if request {
            self.0.requests.fetch_sub(bytes, Ordering::Relaxed);
        }
    }
}

/// What one call has reserved; everything is returned to the budget when it is dropped.
pub struct CallMemory {
    budget: MemoryBudget,
    held: Cell<usize>,
    /// Of `held`, what [`CallMemory::hold_buffer`] reserved: the largest buffer asked for.
    buffers: Cell<usize>,
    refused: Cell<bool>,
    /// Whether this holds a request's own body rather than a call's reservations.
    request: bool,
}

impl fmt::Debug for CallMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallMemory")
            .field("held", &self.held.get())
            .field("refused", &self.refused.get())
            .finish()
    }
}

impl CallMemory {
    /// Bytes of memory this call holds.
    pub(crate) fn held(&self) -> usize {
        self.held.get()
    }

    /// True once a body of this call was refused for want of room.
    pub(crate) fn refused(&self) -> bool {
        self.refused.get()
    }

    /// A reservation for one more upstream body of this call, covering nothing yet.
    pub(crate) fn body(&self) -> BodyReservation<'_> {
        BodyReservation {
            call: self,
            bytes: 0,
            per_byte: BYTES_PER_BODY_BYTE,
        }
    }

    /// A reservation for the request's own body, covering nothing yet.
    pub(crate) fn request_body(&self) -> BodyReservation<'_> {
        BodyReservation {
            call: self,
            bytes: 0,
            per_byte: BYTES_PER_REQUEST_BYTE,
        }
    }

    /// Reserves `bytes` of memory for a buffer the call reads through besides its upstream
    /// bodies (an artifact's chunk read back, a job log streamed through its artifact part), before
    /// it is read. A call reads through one such buffer at a time, so it holds the largest it
    /// asked for, not their sum: asking again for as much or less takes nothing more. It waits
    /// and fails as [`BodyReservation::cover`] does.
    pub(crate) async fn hold_buffer<F: Future<Output = ()>>(
        &self,
        bytes: usize,
        now_ms: impl Fn() -> u64,
        sleep: impl FnMut(u64) -> F,
    ) -> Result<(), Busy> {
        let held = self.buffers.get();
        if bytes <= held {
            return Ok(());
        }
        self.admit(
            bytes - held,
            bytes <= SMALL_BODY_BYTES,
            bytes,
            now_ms,
            sleep,
        )
        .await?;
        self.buffers.set(bytes);
        Ok(())
    }

    /// Takes `cost` bytes of the budget once they fit (see [`CallMemory::fits`]), looking again
    /// every [`POLL_MS`] until [`WAIT_MS`] have passed on `now_ms`, then failing with [`Busy`]
    /// (for `asked` bytes) and marking the call refused. Wall time, not a count of looks: while
    /// another call holds the isolate's one thread (parsing a large page takes a second or more),
    /// timers fire late.
    async fn admit<F: Future<Output = ()>>(
        &self,
        cost: usize,
        small: bool,
        asked: usize,
        now_ms: impl Fn() -> u64,
        mut sleep: impl FnMut(u64) -> F,
    ) -> Result<(), Busy> {
        let started = now_ms();
        while !self.fits(cost, small) {
            if now_ms().saturating_sub(started) >= WAIT_MS {
                self.refused.set(true);
                return Err(Busy { body_bytes: asked });
            }
            sleep(POLL_MS).await;
        }
        self.take(cost);
        Ok(())
    }

    fn take(&self, bytes: usize) {
        self.budget.take(bytes, self.request);
        self.held.set(self.held.get().saturating_add(bytes));
    }

    /// Whether `bytes` more fit: within the budget (for a large body, within all of it but the
    /// small bodies' share), or this call alone holds memory besides the requests' own bodies
    /// (a body costing more than the whole budget then runs by itself rather than never).
    fn fits(&self, bytes: usize, small: bool) -> bool {
        let room = self.room(small);
        let used = self.budget.in_use();
        let others = if self.request {
            used
        } else {
            used - self.budget.0.requests.load(Ordering::Relaxed)
        };
        used.saturating_add(bytes) <= room || others == self.held()
    }

    /// What bodies may fill of the budget: all of it for a small one, all but the small ones'
    /// share for a large one.
    fn room(&self, small: bool) -> usize {
        let limit = self.budget.limit();
        if small {
            limit
        } else {
            limit - limit / SMALL_SHARE
        }
    }
}

impl CallMemory {
    /// Takes up to `bytes` at once, without waiting, for work that runs to its end without
    /// yielding (a projection): what the budget has free, but at least [`SMALL_BODY_BYTES`], as
    /// such work cannot wait and runs one at a time on the isolate's one thread. Returns what
    /// was taken.
    pub(crate) fn take_up_to(&self, bytes: usize) -> usize {
        let free = self.budget.limit().saturating_sub(self.budget.in_use());
        let taken = bytes.min(free.max(SMALL_BODY_BYTES));
        self.take(taken);
        taken
    }

    /// Returns `bytes` of what this call holds to the budget (at most all of it), when work
    /// that took memory with [`CallMemory::take_up_to`] kept less.
    pub(crate) fn give_back(&self, bytes: usize) {
        let given = bytes.min(self.held.get());
        self.held.set(self.held.get() - given);
        self.budget.release(given, self.request);
    }
}

impl CallMemory {
    /// Takes `bytes` at once, without waiting, for work that runs to its end without yielding
    /// (a parse), when they fit in what a `small` or large body may fill of the budget; never
    /// past it, not even for a call alone. False, taking nothing, otherwise.
    pub(crate) fn take_now(&self, bytes: usize, small: bool) -> bool {
        if self.budget.in_use().saturating_add(bytes) > self.room(small) {
            return false;
        }
        self.take(bytes);
        true
    }
}

impl CallMemory {
    /// Moves everything this call holds into an owned reservation, for work that outlives the
    /// call (an artifact written after the reply); the call then holds nothing.
    pub(crate) fn hand_over(&self) -> HeldMemory {
        self.buffers.set(0);
        HeldMemory {
            budget: self.budget.clone(),
            bytes: self.held.replace(0),
            request: self.request,
        }
    }
}

/// Memory handed over from a call by [`CallMemory::hand_over`]; returned to the budget when
/// dropped.
#[derive(Debug)]
pub(crate) struct HeldMemory {
    budget: MemoryBudget,
    bytes: usize,
    request: bool,
}

impl Drop for HeldMemory {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.release(self.bytes, self.request);
        }
    }
}

impl Drop for CallMemory {
    fn drop(&mut self) {
        let held = self.held.replace(0);
        if held > 0 {
            self.budget.release(held, self.request);
        }
    }
}

/// Bytes of memory a batch holds per byte of its replies until the response is written, as
/// measured in workerd (docs/reliability.md, Batches): the replies, the response body they are
/// copied into, and the holes each call's freed buffers leave below the reply it keeps (3.9 for
/// 1 MiB `artifact_read` chunks), rounded up.
pub const BYTES_PER_REPLY_BYTE: usize = 4;

/// The share of the budget one batch's replies may hold: one in this many bytes.
pub const BATCH_SHARE: usize = 4;

/// What the replies of one batch hold until its response is written, reserved from the
/// isolate's budget (so that other calls wait for it as for a body) and returned when dropped.
/// Replies already exist when they are counted, so they never wait; a batch stops starting
/// calls once they pass [`BatchMemory::limit`] instead.
pub(crate) struct BatchMemory {
    budget: MemoryBudget,
    held: Cell<usize>,
}

impl fmt::Debug for BatchMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchMemory")
            .field("held", &self.held.get())
            .field("limit", &self.limit())
            .finish()
    }
}

impl MemoryBudget {
    /// The reservation of one new batch's replies, none yet.
    pub(crate) fn batch(&self) -> BatchMemory {
        BatchMemory {
            budget: self.clone(),
            held: Cell::new(0),
        }
    }
}

impl BatchMemory {
    /// Counts a reply of `bytes` of JSON text, held until the batch's response is written.
    pub(crate) fn hold_reply(&self, bytes: usize) {
        let cost = bytes.saturating_mul(BYTES_PER_REPLY_BYTE);
        self.budget.take(cost, false);
        self.held.set(self.held.get().saturating_add(cost));
    }

    /// Bytes of memory the replies hold.
    pub(crate) fn held(&self) -> usize {
        self.held.get()
    }

    /// The most the replies may hold before the batch starts no further call: a
    /// [`BATCH_SHARE`]th of the budget, leaving the rest to other requests.
    pub(crate) fn limit(&self) -> usize {
        self.budget.limit() / BATCH_SHARE
    }

    /// Whether the replies hold their limit or more.
    pub(crate) fn spent(&self) -> bool {
        self.held() >= self.limit()
    }

    /// Whether the isolate's budget, but for the small bodies' share, is taken (by this batch
    /// and everything else in flight): replies are made before they are counted, so concurrent
    /// batches stop here rather than each filling its own share.
    pub(crate) fn isolate_spent(&self) -> bool {
        let limit = self.budget.limit();
        self.budget.in_use() >= limit - limit / SMALL_SHARE
    }
}

impl Drop for BatchMemory {
    fn drop(&mut self) {
        let held = self.held.replace(0);
        if held > 0 {
            self.budget.release(held, false);
        }
    }
}

/// A body's share of its call's reservation, grown as more of the body is known.
#[derive(Debug)]
pub(crate) struct BodyReservation<'a> {
    call: &'a CallMemory,
    bytes: usize,
    /// Bytes of memory per byte of body.
    per_byte: usize,
}

impl BodyReservation<'_> {
    /// Bytes of body covered so far.
    pub(crate) fn covered(&self) -> usize {
        self.bytes
    }

    /// Covers the first `body_bytes` bytes of the body. When the budget has no room, it looks
    /// again every [`POLL_MS`] (sleeping with `sleep`) until [`WAIT_MS`] have passed on
    /// `now_ms`, and then fails with [`Busy`].
    pub(crate) async fn cover<F: Future<Output = ()>>(
        &mut self,
        body_bytes: usize,
        now_ms: impl Fn() -> u64,
        sleep: impl FnMut(u64) -> F,
    ) -> Result<(), Busy> {
        if body_bytes <= self.bytes {
            return Ok(());
        }
        let cost = (body_bytes - self.bytes).saturating_mul(self.per_byte);
        let small = body_bytes <= SMALL_BODY_BYTES;
        self.call
            .admit(cost, small, body_bytes, now_ms, sleep)
            .await?;
        self.bytes = body_bytes;
        Ok(())
    }
}

/// A body (or a buffer) was refused: the isolate's memory budget stayed spent for the whole
/// wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Busy {
    /// The body size (or the buffer's) that did not fit, in bytes.
    pub(crate) body_bytes: usize,
}

impl fmt::Display for Busy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no memory for a {} byte body: the isolate is busy with large results",
            self.body_bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::fake::{yield_once, ManualClock};
    use crate::ports::Clock;
    use futures::executor::block_on;
    use futures::future::{join, join3};

    const MIB: usize = 1024 * 1024;
    /// Room for one 16 MiB body and a few small ones, not for two 16 MiB bodies.
    const ROOM_FOR_ONE: usize = 20 * MIB * BYTES_PER_BODY_BYTE;

    fn zero() -> u64 {
        0
    }

    fn never(_: u64) -> futures::future::Pending<()> {
        futures::future::pending()
    }

    /// A call of `budget` that holds a 16 MiB body, leaving room only for small ones.
    fn holding_a_large_body(budget: &MemoryBudget) -> CallMemory {
        let call = budget.call();
        block_on(call.body().cover(16 * MIB, zero, never)).unwrap();
        call
    }

    /// Moves `clock` on by `polls` waiting rounds, letting the waiting body look each time.
    async fn tick(clock: &ManualClock, polls: u64) {
        for _ in 0..polls {
            yield_once().await;
            clock.advance(POLL_MS);
        }
        yield_once().await;
    }

    #[test]
    fn work_that_cannot_wait_takes_what_is_free_and_gives_back_what_it_did_not_keep() {
        let budget = MemoryBudget::new(40 * MIB);
        let other = budget.call();
        block_on(other.body().cover(16 * MIB, zero, never)).unwrap();
        let call = budget.call();
        // 8 MiB are free: that much is taken, not the 32 asked for.
        assert_eq!(call.take_up_to(32 * MIB), 8 * MIB);
        assert_eq!(budget.in_use(), 40 * MIB);
        // With nothing free, the small floor is still taken: work that cannot wait runs alone.
        assert_eq!(budget.call().take_up_to(32 * MIB), SMALL_BODY_BYTES);
        call.give_back(6 * MIB);
        assert_eq!(call.held(), 2 * MIB);
        // Never more than the call holds.
        call.give_back(100 * MIB);
        assert_eq!(call.held(), 0);
        assert_eq!(budget.in_use(), 32 * MIB);
    }

    #[test]
    fn a_large_body_that_fits_is_admitted_at_once_and_costs_its_factor() {
        let budget = MemoryBudget::new(ROOM_FOR_ONE);
        let call = budget.call();
        let mut body = call.body();
        assert_eq!(block_on(body.cover(16 * MIB, zero, never)), Ok(()));
        assert_eq!(body.covered(), 16 * MIB);
        assert_eq!(call.held(), 16 * MIB * BYTES_PER_BODY_BYTE);
        assert_eq!(budget.in_use(), 16 * MIB * BYTES_PER_BODY_BYTE);
        // Covering what is covered already takes nothing more.
        assert_eq!(block_on(body.cover(8 * MIB, zero, never)), Ok(()));
        assert_eq!(budget.in_use(), 16 * MIB * BYTES_PER_BODY_BYTE);
    }

    #[test]
    fn a_waiting_body_is_admitted_at_its_next_look_after_another_call_ends() {
        let clock = ManualClock::at(0);
        let budget = MemoryBudget::new(ROOM_FOR_ONE);
        let first = holding_a_large_body(&budget);
        let second = budget.call();
        let mut body = second.body();
        let (admitted, ()) = block_on(join(
            body.cover(16 * MIB, || clock.now_ms(), |ms| clock.sleep(ms)),
            async {
                tick(&clock, 3).await;
                // Still waiting: nothing was returned.
                assert_eq!(second.held(), 0);
                drop(first);
                tick(&clock, 1).await;
            },
        ));
        assert_eq!(admitted, Ok(()));
        assert_eq!(budget.in_use(), 16 * MIB * BYTES_PER_BODY_BYTE);
        assert!(!second.refused());
    }

    #[test]
    fn a_body_that_finds_no_room_for_the_whole_wait_is_refused_as_busy() {
        let clock = ManualClock::at(0);
        let budget = MemoryBudget::new(ROOM_FOR_ONE);
        let _first = holding_a_large_body(&budget);
        let second = budget.call();
        let mut body = second.body();
        let polls = WAIT_MS / POLL_MS;
        let (outcome, ()) = block_on(join(
            body.cover(16 * MIB, || clock.now_ms(), |ms| clock.sleep(ms)),
            async {
                tick(&clock, polls - 1).await;
                assert!(!second.refused());
                tick(&clock, 1).await;
                assert!(second.refused());
            },
        ));
        assert_eq!(
            outcome,
            Err(Busy {
                body_bytes: 16 * MIB
            })
        );
        assert_eq!(second.held(), 0);
        assert_eq!(budget.in_use(), 16 * MIB * BYTES_PER_BODY_BYTE);
    }

    #[test]
    fn small_bodies_pass_while_a_large_one_waits() {
        let clock = ManualClock::at(0);
        let budget = MemoryBudget::new(ROOM_FOR_ONE);
        let _first = holding_a_large_body(&budget);
        let large = budget.call();
        let small = budget.call();
        let mut large_body = large.body();
        let mut small_body = small.body();
        let (large_outcome, small_outcome, ()) = block_on(join3(
            large_body.cover(16 * MIB, || clock.now_ms(), |ms| clock.sleep(ms)),
            // In the share large bodies leave free, without waiting.
            small_body.cover(MIB, zero, never),
            async {
                yield_once().await;
                assert_eq!(budget.in_use(), 17 * MIB * BYTES_PER_BODY_BYTE);
                tick(&clock, WAIT_MS / POLL_MS).await;
            },
        ));
        assert_eq!(small_outcome, Ok(()));
        assert!(large_outcome.is_err());
        assert_eq!(small.held(), MIB * BYTES_PER_BODY_BYTE);
    }

    #[test]
    fn large_bodies_leave_the_small_share_free() {
        let clock = ManualClock::at(0);
        let budget = MemoryBudget::new(16 * MIB);
        let first = budget.call();
        // 12 MiB of 16 fit; 2 more would reach into the last eighth, which is for small bodies.
        block_on(first.body().cover(6 * MIB, zero, never)).unwrap();
        let second = budget.call();
        let (outcome, ()) = block_on(join(
            second
                .body()
                .cover(MIB + 1, || clock.now_ms(), |ms| clock.sleep(ms)),
            tick(&clock, WAIT_MS / POLL_MS),
        ));
        assert!(outcome.is_err());
        // A small body fits into that share at once.
        assert_eq!(block_on(second.body().cover(MIB, zero, never)), Ok(()));
        assert_eq!(budget.in_use(), 14 * MIB);
    }

    #[test]
    fn small_bodies_wait_once_the_whole_budget_is_spent_and_are_refused_as_large_ones_are() {
        let clock = ManualClock::at(0);
        let budget = MemoryBudget::new(8 * MIB);
        let calls: Vec<CallMemory> = (0..4).map(|_| budget.call()).collect();
        for call in &calls {
            block_on(call.body().cover(MIB, zero, never)).unwrap();
        }
        assert_eq!(budget.in_use(), budget.limit());
        let late = budget.call();
        let mut body = late.body();
        let (outcome, ()) = block_on(join(
            body.cover(64 * 1024, || clock.now_ms(), |ms| clock.sleep(ms)),
            tick(&clock, WAIT_MS / POLL_MS),
        ));
        assert_eq!(
            outcome,
            Err(Busy {
                body_bytes: 64 * 1024
            })
        );
        assert!(late.refused());
        drop(calls);
        assert_eq!(block_on(body.cover(64 * 1024, zero, never)), Ok(()));
    }

    #[test]
    fn a_request_body_costs_its_own_factor_and_waits_like_an_upstream_body() {
        let clock = ManualClock::at(0);
        let budget = MemoryBudget::new(16 * MIB);
        let request = budget.request();
        assert_eq!(
            block_on(request.request_body().cover(2 * MIB, zero, never)),
            Ok(())
        );
        assert_eq!(budget.in_use(), 2 * MIB * BYTES_PER_REQUEST_BYTE);
        let other = budget.request();
        let (outcome, ()) = block_on(join(
            other
                .request_body()
                .cover(2 * MIB, || clock.now_ms(), |ms| clock.sleep(ms)),
            tick(&clock, WAIT_MS / POLL_MS),
        ));
        assert!(outcome.is_err());
        drop(request);
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn a_body_over_the_whole_budget_runs_alone_beside_the_requests_own_bodies() {
        let budget = MemoryBudget::new(16 * MIB);
        let request = budget.request();
        block_on(request.request_body().cover(1024, zero, never)).unwrap();
        let call = budget.call();
        assert_eq!(block_on(call.body().cover(10 * MIB, zero, never)), Ok(()));
        // Another call's reservation is not a request's: a second such body waits.
        let clock = ManualClock::at(0);
        let other = budget.call();
        let (outcome, ()) = block_on(join(
            other
                .body()
                .cover(10 * MIB, || clock.now_ms(), |ms| clock.sleep(ms)),
            tick(&clock, WAIT_MS / POLL_MS),
        ));
        assert!(outcome.is_err());
        drop((call, request));
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn a_streamed_body_grows_its_reservation_and_waits_only_past_the_small_size() {
        let clock = ManualClock::at(0);
        let budget = MemoryBudget::new(2 * MIB * BYTES_PER_BODY_BYTE);
        let other = budget.call();
        block_on(other.body().cover(MIB, zero, never)).unwrap();
        let call = budget.call();
        let mut body = call.body();
        for covered in [64 * 1024, 512 * 1024, MIB] {
            // The budget is full (the other call holds half, this one as much), yet no wait.
            assert_eq!(block_on(body.cover(covered, zero, never)), Ok(()));
        }
        assert_eq!(budget.in_use(), budget.limit());
        let (grown, ()) = block_on(join(
            body.cover(MIB + 1, || clock.now_ms(), |ms| clock.sleep(ms)),
            tick(&clock, WAIT_MS / POLL_MS),
        ));
        assert!(grown.is_err());
        assert_eq!(body.covered(), MIB);
    }

    #[test]
    fn a_body_over_the_whole_budget_runs_alone() {
        let budget = MemoryBudget::new(16 * MIB);
        let call = budget.call();
        assert_eq!(block_on(call.body().cover(8 * MIB, zero, never)), Ok(()));
        assert_eq!(budget.in_use(), 8 * MIB * BYTES_PER_BODY_BYTE);
    }

    #[test]
    fn a_call_holds_its_largest_buffer_not_the_sum_and_waits_for_a_large_one() {
        let clock = ManualClock::at(0);
        let budget = MemoryBudget::new(16 * MIB);
        let call = budget.call();
        block_on(call.hold_buffer(4 * MIB, zero, never)).unwrap();
        block_on(call.hold_buffer(2 * MIB, zero, never)).unwrap();
        assert_eq!(call.held(), 4 * MIB);
        block_on(call.hold_buffer(6 * MIB, zero, never)).unwrap();
        assert_eq!(budget.in_use(), 6 * MIB);
        let other = budget.call();
        // A small buffer may use the share large ones leave free.
        block_on(other.hold_buffer(SMALL_BODY_BYTES, zero, never)).unwrap();
        let (outcome, ()) = block_on(join(
            other.hold_buffer(12 * MIB, || clock.now_ms(), |ms| clock.sleep(ms)),
            tick(&clock, WAIT_MS / POLL_MS),
        ));
        assert_eq!(
            outcome,
            Err(Busy {
                body_bytes: 12 * MIB
            })
        );
        assert!(other.refused());
        assert_eq!(other.held(), SMALL_BODY_BYTES);
        drop(call);
        drop(other);
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn a_batchs_replies_hold_their_factor_until_dropped_and_make_large_bodies_wait() {
        let clock = ManualClock::at(0);
        let budget = MemoryBudget::new(16 * MIB);
        let batch = budget.batch();
        assert_eq!(batch.limit(), 16 * MIB / BATCH_SHARE);
        let half = batch.limit() / BYTES_PER_REPLY_BYTE / 2;
        batch.hold_reply(half);
        assert!(!batch.spent());
        batch.hold_reply(half);
        assert_eq!(batch.held(), 2 * half * BYTES_PER_REPLY_BYTE);
        assert!(batch.spent());
        assert_eq!(budget.in_use(), batch.held());
        // Another call's large body counts the replies as spent memory.
        let call = budget.call();
        let mut body = call.body();
        let (outcome, ()) = block_on(join(
            body.cover(7 * MIB, || clock.now_ms(), |ms| clock.sleep(ms)),
            tick(&clock, WAIT_MS / POLL_MS),
        ));
        assert!(outcome.is_err());
        drop(batch);
        assert_eq!(budget.in_use(), 0);
        assert_eq!(block_on(body.cover(7 * MIB, zero, never)), Ok(()));
    }

    #[test]
    fn every_reservation_of_a_call_returns_when_it_is_dropped() {
        let budget = MemoryBudget::new(ROOM_FOR_ONE);
        let call = budget.call();
        block_on(call.body().cover(2 * MIB, zero, never)).unwrap();
        block_on(call.body().cover(3 * MIB, zero, never)).unwrap();
        assert_eq!(budget.in_use(), 5 * MIB * BYTES_PER_BODY_BYTE);
        drop(call);
        assert_eq!(budget.in_use(), 0);
    }
}
