//! The budget both projection languages run under: a fuel meter for the work done and a bound on
//! the size of every value built.
//!
//! Work and size are counted apart because values share their parts: `[., .]` copies one
//! pointer, so it costs one step, yet its printed form is twice the input. Fuel counts what the
//! machine does (steps, items copied, nodes walked); size counts what a value would be once
//! printed, converted or serialized, so forty doublings stop at the size bound after a few
//! dozen steps instead of building 2^40 copies later.
//!
//! The size of a value is its compact JSON length with each string counted by its bytes plus
//! its quotes (escapes are not counted); docs/projection.md and decision 0050 give the bounds.

use std::cell::{Cell, RefCell};

use crate::memory::heap;
use crate::value::Value;

/// Limits for one projection run.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Units of work: one per term or node evaluated, generator step and output, plus one per
    /// 16 items or bytes copied or walked.
    pub fuel: u64,
    /// Most outputs a jq program may produce.
    pub max_outputs: usize,
    /// Most bytes of compact JSON the result may have (all jq outputs together).
    pub max_output_bytes: usize,
    /// Largest size (compact JSON bytes) of any value built while running, counted as if
    /// shared parts were copied.
    pub max_value_bytes: u64,
    /// Most bytes of heap the run may hold beyond what it started with (its values, the
    /// buffers of its builtins, its output), counted by the allocator (`memory::heap`).
    pub max_memory_bytes: usize,
}

impl Default for Limits {
    /// About half a second of host CPU at most, above what `map`/`select` over a 16 MB
    /// response needs (examples/bench_projection.rs measures both); values no larger than a
    /// result may be; the memory a call may take at most ([`MAX_MEMORY_BYTES`]).
    fn default() -> Limits {
        Limits {
            fuel: 10_000_000,
            max_outputs: 100_000,
            max_output_bytes: 32 << 20,
            max_value_bytes: 32 << 20,
            max_memory_bytes: MAX_MEMORY_BYTES,
        }
    }
}

/// The most heap a projection's program may hold beyond its input once converted: room for what
/// `map`/`select` over a 16 MiB response build, within the isolate's default budget of 72 MiB
/// (docs/reliability.md, "The cost of a hostile call").
pub const MAX_MEMORY_BYTES: usize = 32 << 20;

/// How often, in units of fuel, the heap is looked at: often enough that no builtin allocates
/// more than a few MiB between two looks (a unit pays for 16 items copied).
const MEMORY_CHECK_EVERY: u64 = 1024;

thread_local! {
    static FUEL: Cell<u64> = const { Cell::new(0) };
    /// What the last finished run spent, which tests count instead of time.
    static SPENT: Cell<u64> = const { Cell::new(0) };
    static MAX_VALUE_BYTES: Cell<u64> = const { Cell::new(0) };
    /// The heap count when the run started, when its input was ready (where its memory bound
    /// is counted from), and the most it may grow by from there.
    static HEAP_START: Cell<isize> = const { Cell::new(0) };
    static HEAP_BASE: Cell<isize> = const { Cell::new(0) };
    static MAX_MEMORY: Cell<isize> = const { Cell::new(0) };
    /// The most the heap grew by during the run so far, as last looked at.
    static PEAK: Cell<isize> = const { Cell::new(0) };
    /// Fuel left when the heap is next looked at.
    static NEXT_LOOK: Cell<u64> = const { Cell::new(0) };
    /// What the last finished run's heap grew by at most, and still held at its end.
    static LAST_PEAK: Cell<usize> = const { Cell::new(0) };
    static LAST_KEPT: Cell<usize> = const { Cell::new(0) };
    /// What the last run's input took once converted into the language's values.
    static LAST_INPUT: Cell<usize> = const { Cell::new(0) };
    static EXHAUSTED: Cell<bool> = const { Cell::new(false) };
    static REASON: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The installed meter; dropping it leaves the thread with no fuel and no room for values.
pub(crate) struct Run {
    fuel: u64,
}

impl Drop for Run {
    fn drop(&mut self) {
        let left = FUEL.with(|f| f.replace(0));
        SPENT.with(|s| s.set(self.fuel - left));
        MAX_VALUE_BYTES.with(|m| m.set(0));
        look_at_heap();
        LAST_PEAK.with(|p| p.set(PEAK.with(Cell::get).max(0) as usize));
        LAST_KEPT.with(|k| k.set((heap::live() - HEAP_START.with(Cell::get)).max(0) as usize));
    }
}

/// Installs a meter for one run under `limits`. The language's values reach the meter through
/// this thread-local (jaq gives its values no context), so a run installs it and the returned
/// [`Run`] removes it.
pub(crate) fn start(limits: &Limits) -> Run {
    FUEL.with(|f| f.set(limits.fuel));
    MAX_VALUE_BYTES.with(|m| m.set(limits.max_value_bytes));
    EXHAUSTED.with(|e| e.set(false));
    REASON.with(|r| r.borrow_mut().clear());
    HEAP_START.with(|b| b.set(heap::live()));
    HEAP_BASE.with(|b| b.set(heap::live()));
    LAST_INPUT.with(|i| i.set(0));
    MAX_MEMORY.with(|m| m.set(limits.max_memory_bytes.min(isize::MAX as usize) as isize));
    PEAK.with(|p| p.set(0));
    NEXT_LOOK.with(|n| n.set(limits.fuel.saturating_sub(MEMORY_CHECK_EVERY)));
    Run { fuel: limits.fuel }
}

/// Spends `n` units; false once the budget is gone. Every [`MEMORY_CHECK_EVERY`] units it also
/// looks at the heap, and ends the run once that has grown past the run's memory bound.
pub(crate) fn charge(n: u64) -> bool {
    let left = FUEL.with(Cell::get);
    if left < n {
        // All of it counts as spent, so that a run that stops here leaves none to share.
        FUEL.with(|f| f.set(0));
        exhaust("evaluation budget exhausted (runaway program?)".into());
        return false;
    }
    let left = left - n;
    FUEL.with(|f| f.set(left));
    if left <= NEXT_LOOK.with(Cell::get) {
        NEXT_LOOK.with(|l| l.set(left.saturating_sub(MEMORY_CHECK_EVERY)));
        look_at_heap();
    }
    !exhausted()
}

/// Records how far the heap has grown since the run started, ending the run past its bound.
fn look_at_heap() {
    let grown = heap::live() - HEAP_BASE.with(Cell::get);
    PEAK.with(|p| p.set(p.get().max(grown)));
    let max = MAX_MEMORY.with(Cell::get);
    if grown > max {
        exhaust(format!("more than {max} bytes of memory held"));
    }
}

/// Converts the run's input with `convert`: what that takes is the input's (proportional to the
/// input, which the caller already holds and has reserved), and the run's memory bound counts
/// from after it.
pub(crate) fn input<T>(convert: impl FnOnce() -> T) -> T {
    let max = MAX_MEMORY.with(|m| m.replace(isize::MAX));
    let out = convert();
    MAX_MEMORY.with(|m| m.set(max));
    LAST_INPUT.with(|i| i.set(heap_grown()));
    HEAP_BASE.with(|b| b.set(heap::live()));
    PEAK.with(|p| p.set(0));
    out
}

/// What the last run's input took in memory once converted (zero where no counting allocator
/// is installed).
pub fn last_input_memory() -> usize {
    LAST_INPUT.with(Cell::get)
}

/// Looks at the heap now, for a loop that allocates without charging; false once the run has
/// ended.
pub(crate) fn within_memory() -> bool {
    look_at_heap();
    !exhausted()
}

/// Whether `bytes` more may be allocated at once: checked before a builtin allocates a block
/// in one piece (a string split into pieces, a parsed text), which the periodic look would
/// only see afterwards. Ends the run when they may not.
pub(crate) fn reserve(bytes: usize) -> bool {
    let grown = heap::live() - HEAP_BASE.with(Cell::get);
    let max = MAX_MEMORY.with(Cell::get);
    if grown.saturating_add(bytes.min(isize::MAX as usize) as isize) > max {
        exhaust(format!("more than {max} bytes of memory held"));
        return false;
    }
    !exhausted()
}

/// Whether `items` may take one more item: when full, growing doubles it, and while the items
/// are copied the old block and the new one (twice its size) are both held, which is checked
/// (as [`reserve`]) before it happens.
pub(crate) fn room_for_one_more<T>(items: &Vec<T>) -> bool {
    items.len() < items.capacity()
        || reserve(
            items
                .capacity()
                .max(4)
                .saturating_mul(2 * std::mem::size_of::<T>()),
        )
}

/// The bytes the run may still allocate before its memory bound.
pub(crate) fn memory_left() -> usize {
    (MAX_MEMORY.with(Cell::get) - (heap::live() - HEAP_BASE.with(Cell::get))).max(0) as usize
}

/// How much the heap grew since the run started, now (never negative).
pub(crate) fn heap_grown() -> usize {
    (heap::live() - HEAP_BASE.with(Cell::get)).max(0) as usize
}

/// What the heap held at the end of the last finished run on this thread beyond what it held
/// at its start: the run's result.
pub(crate) fn last_kept_memory() -> usize {
    LAST_KEPT.with(Cell::get)
}

/// The most the heap grew by during the last finished run on this thread, as counted by the
/// allocator (zero where no counting allocator is installed).
pub fn last_peak_memory() -> usize {
    LAST_PEAK.with(Cell::get)
}

/// Spends the units for `n` items or bytes copied or walked.
pub(crate) fn charge_items(n: u64) -> bool {
    charge(1 + n / 16)
}

/// The fuel left in the run in progress.
#[cfg(test)]
pub(crate) fn fuel_left() -> u64 {
    FUEL.with(Cell::get)
}

/// The fuel the last finished run on this thread spent: what tests and fuzz targets count
/// instead of time.
pub fn last_spent() -> u64 {
    SPENT.with(Cell::get)
}

/// The largest size a value may have in the run in progress.
pub(crate) fn max_value_bytes() -> u64 {
    MAX_VALUE_BYTES.with(Cell::get)
}

/// Checks that a value of `size` may be built; ends the run when it may not.
pub(crate) fn admit(size: u64) -> bool {
    let max = max_value_bytes();
    if size > max {
        exhaust(format!("value larger than {max} bytes as JSON"));
        return false;
    }
    !exhausted()
}

/// Ends the run for `reason` (the first reason given is kept).
pub(crate) fn exhaust(reason: String) {
    if !EXHAUSTED.with(|e| e.replace(true)) {
        REASON.with(|r| *r.borrow_mut() = reason);
    }
}

/// Whether the run has ended.
pub(crate) fn exhausted() -> bool {
    EXHAUSTED.with(Cell::get)
}

/// Why the run ended.
pub(crate) fn reason() -> String {
    REASON.with(|r| r.borrow().clone())
}

/// The compact JSON length of a number's literal, string quotes, brackets and separators: the
/// size of `value`, walking no further once it passes `cap`. Also returns the nodes walked.
pub(crate) fn value_size(value: &Value, cap: u64) -> (u64, u64) {
    let mut nodes = 0;
    let size = walk(value, cap, &mut nodes);
    (size, nodes)
}

fn walk(value: &Value, cap: u64, nodes: &mut u64) -> u64 {
    *nodes += 1;
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => n.literal().len() as u64,
        Value::String(s) => s.len() as u64 + 2,
        Value::Array(items) => {
            let mut size = 1 + items.len().max(1) as u64;
            for item in items {
                if size > cap {
                    break;
                }
                size = size.saturating_add(walk(item, cap, nodes));
            }
            size
        }
        Value::Object(map) => {
            let mut size = 1 + map.len().max(1) as u64;
            for (k, v) in map.iter() {
                if size > cap {
                    break;
                }
                size = size.saturating_add(k.len() as u64 + 3 + walk(v, cap, nodes));
            }
            size
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse;

    #[test]
    fn size_is_the_compact_json_length() {
        for text in [
            "null",
            "false",
            "[]",
            "{}",
            "[1]",
            "[1,2.50,\"ab\"]",
            r#"{"a":[true,{"b":"c"}],"10":-1e5}"#,
        ] {
            let v = parse(text).unwrap();
            assert_eq!(value_size(&v, u64::MAX).0, text.len() as u64, "{text}");
        }
    }

    #[test]
    fn walking_stops_past_the_cap() {
        let v = parse(&format!("[{}]", vec!["[1,2,3]"; 1000].join(","))).unwrap();
        let (size, nodes) = value_size(&v, 100);
        assert!(size > 100);
        assert!(nodes < 60, "{nodes} nodes walked");
    }

    #[test]
    fn fuel_and_size_end_the_run() {
        let limits = Limits {
            fuel: 10,
            max_value_bytes: 100,
            ..Limits::default()
        };
        let _run = start(&limits);
        assert!(charge(4));
        assert!(charge_items(80));
        assert_eq!(fuel_left(), 0);
        assert!(!charge(1));
        assert!(exhausted());
        assert!(reason().contains("budget exhausted"));
        drop(_run);
        assert_eq!(last_spent(), 10);
        let _run = start(&limits);
        assert!(admit(100));
        assert!(!admit(101));
        assert_eq!(reason(), "value larger than 100 bytes as JSON");
    }
}
