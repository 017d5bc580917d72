//! The `jq` argument: arbitrary expressions (first line) over arbitrary documents (the rest),
//! through the production path (compile by the selection rule, apply, render both formats)
//! under a budget a fiftieth of the default, so that a program spending all of it still runs
//! fast enough for the fuzzer to try many.
//!
//! Cost is checked by counting, not by timing (a shared machine makes any wall-clock bound
//! report false crashes). The meter's own count proves nothing by itself (`spent <= fuel` holds
//! by construction), so the target counts the work independently: a global allocator counts
//! every heap allocation and byte the run makes, and both must stay within a fixed multiple of
//! the fuel the meter says was spent plus the size of the input and the result ([`Work::bound`]).
//! Work the meter misses then shows as allocations it did not charge for. What the run returns
//! must be no larger than its size bounds allow, however much the program shares values
//! (`[.,.]` forty times). An error text longer than [`MAX_ERROR_TEXT`] is a crash too. Work that
//! allocates nothing is left to libFuzzer's -timeout, memory to its -rss_limit_mb.
#![no_main]

use devtools_mcp_edge::projection::{last_spent, Projection};
use devtools_mcp_edge::render::{render, OutputFormat};
use devtools_mcp_edge::value::{parse, parse_bytes, Value};
use devtools_mcp_edge_fuzz::{projection_limits, split_line};
use libfuzzer_sys::fuzz_target;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The longest `_jqError` text allowed (the message cap in projection/jq.rs, the quoted source
/// and the fixed words around them).
const MAX_ERROR_TEXT: usize = 1024 + 64;

/// The most bytes one byte of a value's size can become in compact JSON (a control character
/// is counted as one byte and printed as a six-byte `\u00XX` escape).
const ESCAPE_GROWTH: usize = 6;

const FALLBACK: &str =
    r#"{"items":[{"id":1,"name":"a","tags":["x","y"]},{"id":2,"name":"b","n":null}],"total":2}"#;

/// Heap allocations and bytes allocated since the process started.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED_BYTES: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting: the observer of the projection's work that does not rely on
/// the meter.
struct Counting;

fn count(bytes: usize) {
    ALLOCATIONS.fetch_add(1, Relaxed);
    ALLOCATED_BYTES.fetch_add(bytes as u64, Relaxed);
}

// SAFETY: every call is passed to `System` unchanged; counting touches no allocation.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// What a stretch of the target allocated.
#[derive(Debug)]
struct Work {
    allocations: u64,
    bytes: u64,
}

// The bound on the work of a run, `PER_FUEL * spent + PER_BYTE * (input + output) + BASE` for
// allocations and for bytes allocated. A unit of fuel pays for one term evaluated, generator
// step or output, or for up to 16 items or bytes copied, walked or printed; converting the
// document into the language's values and the result back, and the error text, grow with the
// input and output; the base is the run's fixed setup (jaq's context, the size memo). Measured
// over the corpus and a few minutes of fuzzing: at most about 4 allocations and 400 bytes per
// unit of fuel, 0.5 allocations and 25 bytes per byte of input and output, and 50 allocations
// and 45 KB of setup; the constants leave four times that or more, so that only work the meter
// does not see at all (a loop of it, or a copy as large as a value may be) crosses them.

/// Most allocations per unit of fuel spent.
const ALLOCATIONS_PER_FUEL: u64 = 16;
/// Most bytes allocated per unit of fuel spent.
const BYTES_PER_FUEL: u64 = 2_048;
/// Most allocations per byte of the document and expression, and of the result's compact JSON.
const ALLOCATIONS_PER_BYTE: u64 = 4;
/// Most bytes allocated per byte of the document and expression, and of the result.
const BYTES_PER_BYTE: u64 = 256;
/// Allocations any run may make besides.
const ALLOCATIONS_BASE: u64 = 1_024;
/// Bytes any run may allocate besides.
const BYTES_BASE: u64 = 256 << 10;

impl Work {
    /// Runs `f`, counting what it allocates.
    fn of<T>(f: impl FnOnce() -> T) -> (T, Work) {
        let (allocations, bytes) = (ALLOCATIONS.load(Relaxed), ALLOCATED_BYTES.load(Relaxed));
        let out = f();
        let work = Work {
            allocations: ALLOCATIONS.load(Relaxed) - allocations,
            bytes: ALLOCATED_BYTES.load(Relaxed) - bytes,
        };
        (out, work)
    }

    /// The most a run may allocate after spending `spent` fuel on `input_bytes` of input
    /// (document and expression) and returning `output_bytes` of compact JSON.
    fn bound(spent: u64, input_bytes: u64, output_bytes: u64) -> Work {
        let io = input_bytes + output_bytes;
        Work {
            allocations: ALLOCATIONS_PER_FUEL * spent
                + ALLOCATIONS_PER_BYTE * io
                + ALLOCATIONS_BASE,
            bytes: BYTES_PER_FUEL * spent + BYTES_PER_BYTE * io + BYTES_BASE,
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (expr, doc) = split_line(data);
    let Ok(expr) = std::str::from_utf8(expr) else {
        return;
    };
    let doc = match parse_bytes(doc) {
        Ok(v) => v,
        Err(_) => match parse(FALLBACK) {
            Ok(v) => v,
            Err(e) => panic!("fallback document: {e}"),
        },
    };
    let limits = projection_limits();
    let projection = Projection::compile(expr);
    let input = doc.clone();
    let (result, work) = Work::of(|| projection.apply_or_error_value_with(input, &limits));
    let spent = last_spent();
    assert!(
        spent <= limits.fuel,
        "{expr:?} spent {spent} fuel of {}",
        limits.fuel
    );
    let mut failed = false;
    if let Value::Object(map) = &result {
        if let (Some(Value::String(_)), Some(original)) =
            (map.get("_jqError"), map.get("_originalData"))
        {
            if map.len() == 2 && projection.apply_with(&doc, &limits).is_err() {
                failed = true;
                assert!(*original == doc, "_originalData is not the data");
                if let Some(Value::String(message)) = map.get("_jqError") {
                    assert!(
                        message.len() <= MAX_ERROR_TEXT + 2 * expr.len(),
                        "a {}-byte _jqError for {expr:?}",
                        message.len()
                    );
                }
            }
        }
    }
    // The bounds are on compact JSON (the rendered form adds indentation, which grows with the
    // depth and is bounded by the text sink's cut, not by the meter).
    let json = result.to_compact_json();
    // A result is the document itself (blank expression), the projection within its bounds (jq
    // outputs gathered into an array), or the error value around the document.
    let doc_json = doc.to_compact_json().len();
    let projected =
        limits.max_output_bytes.max(limits.max_value_bytes as usize) + limits.max_outputs;
    let bound = if failed {
        doc_json + ESCAPE_GROWTH * (MAX_ERROR_TEXT + 2 * expr.len()) + 64
    } else {
        doc_json.max(ESCAPE_GROWTH * projected)
    };
    assert!(
        json.len() <= bound,
        "{expr:?} returned {} bytes of compact JSON, over its bound of {bound}",
        json.len()
    );
    let bound = Work::bound(spent, (doc_json + expr.len()) as u64, json.len() as u64);
    assert!(
        work.allocations <= bound.allocations && work.bytes <= bound.bytes,
        "{expr:?} did {work:?} for {spent} fuel on {doc_json} bytes of document, returning {} \
         bytes, over {bound:?}",
        json.len()
    );
    render(&result, OutputFormat::Json);
    render(&result, OutputFormat::Toon);
});
