//! The bytes the heap holds on this thread, counted by a wrapper around the global allocator.
//!
//! A projection's values are reference-counted and shared, so what a program holds cannot be
//! read from its values: an array of three million small numbers prints to 20 MB yet takes
//! several times that in memory. Counting what the allocator hands out is the measure that
//! cannot miss a part. The wasm build and the host unit tests install [`Tracked`] as the global
//! allocator; anywhere else the count stays at zero and no bound that reads it ever trips.
//!
//! The count is per thread: Workers run one thread per isolate, and the host tests run many
//! at once, each of which must see only its own allocations.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

thread_local! {
    /// Bytes allocated minus bytes freed on this thread. Signed: a block freed on another
    /// thread than the one that allocated it lowers that thread's count.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    /// Bytes ever allocated on this thread: a count of work that does not come from any meter.
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

fn add(bytes: isize) {
    // During thread teardown the slots may be gone; the counts no longer matter then.
    let _ = LIVE.try_with(|l| l.set(l.get().wrapping_add(bytes)));
    if bytes > 0 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get().wrapping_add(bytes as u64)));
    }
}

/// The bytes ever allocated on this thread (growing a block counts what it grew by).
pub fn allocated() -> u64 {
    ALLOCATED.try_with(Cell::get).unwrap_or(0)
}

/// The bytes allocated and not yet freed on this thread since it started.
pub(crate) fn live() -> isize {
    LIVE.try_with(Cell::get).unwrap_or(0)
}

/// A global allocator that counts, around the allocator `A` that does the work.
pub struct Tracked<A>(pub A);

// SAFETY: every call goes to `A` unchanged; counting only updates a thread-local integer and
// allocates nothing.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Tracked<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc(layout);
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc_zeroed(layout);
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.0.realloc(ptr, layout, new_size);
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout);
        add(-(layout.size() as isize));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_follows_what_is_held() {
        let before = live();
        let v = vec![0u8; 1 << 20];
        assert!(live() - before >= 1 << 20);
        drop(v);
        assert!(live() - before < 1 << 10);
        let total = allocated();
        drop(vec![0u8; 4096]);
        assert!(allocated() - total >= 4096);
    }
}
