//! Every jq builtin offered (`projection::jq::builtins`), one per input, applied to values of
//! adversarial sizes the input picks: long strings (and near-copies of them, for searches),
//! long arrays, wide objects, deep nesting, and large or negative counts (`jn`, `range`,
//! `limit`). The builtin must stop within its fuel (decision 0094).
//!
//! The meter's own count proves nothing by itself (`spent <= fuel` holds by construction), so
//! the work is counted apart from it: the crate's counting allocator (`memory::heap::Tracked`,
//! installed here as in the wasm build, so the run's memory bound is live too) gives the bytes
//! the run allocated, which must stay within the projection target's multiple of the fuel spent
//! and of the input and output; and the thread's CPU time (not wall time, which a shared machine
//! lengthens) must stay within a multiple of what a plain loop takes per unit of fuel, measured
//! once when the target starts (a loop that allocates nothing still shows there). libFuzzer's
//! -timeout stays the last resort.
#![no_main]

use devtools_mcp_edge::memory::heap::{self, Tracked};
use devtools_mcp_edge::ports::fake::thread_cpu_ns;
use devtools_mcp_edge::projection::jq::{builtins, JqProgram};
use devtools_mcp_edge::projection::last_spent;
use devtools_mcp_edge::value::{parse, Value};
use devtools_mcp_edge_fuzz::projection_limits;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

#[global_allocator]
static HEAP: Tracked<std::alloc::System> = Tracked(std::alloc::System);

/// Bytes allocated per unit of fuel, and per byte of input and output (the projection target's
/// constants, decision 0092), and besides.
const BYTES_PER_FUEL: u64 = 2_048;
const BYTES_PER_BYTE: u64 = 256;
const BYTES_BASE: u64 = 256 << 10;
/// CPU time per unit of fuel, as a multiple of a plain loop's.
const CPU_MULTIPLE: f64 = 50.0;

/// Nanoseconds of CPU a plain loop takes per unit of fuel, measured once.
fn ns_per_unit() -> f64 {
    static NS: OnceLock<f64> = OnceLock::new();
    *NS.get_or_init(|| {
        let p = JqProgram::compile("[range(1e9)] | length").expect("compiles");
        let t = thread_cpu_ns();
        let _ = p.run(&Value::Null, &projection_limits());
        (thread_cpu_ns() - t) as f64 / last_spent().max(1) as f64
    })
}

/// A value of kind `kind` and size `n`, as JSON text.
fn value(kind: u8, n: usize) -> String {
    match kind % 8 {
        0 => format!("\"{}\"", "ab".repeat(n / 2)),
        1 => format!("\"{}c\"", "ab".repeat(n / 4)),
        2 => format!(
            "[{}]",
            (0..n / 8)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
        3 => format!(
            "{{{}}}",
            (0..n / 16)
                .map(|i| format!("\"k{i}\":[{i}]"))
                .collect::<Vec<_>>()
                .join(",")
        ),
        4 => format!("{}1{}", "[".repeat(n % 250), "]".repeat(n % 250)),
        5 => format!("{}", n as u64 * 1_000),
        6 => format!("-{}", n as u64 * 1_000),
        _ => "null".to_owned(),
    }
}

fuzz_target!(|data: &[u8]| {
    let [a, b, c, d, e, ..] = *data else { return };
    let list = builtins();
    let (name, arity) = list[usize::from(u16::from_le_bytes([a, b])) % list.len()];
    // Up to 1 MB of input, in steps, so that small sizes stay common.
    let n = (usize::from(e) + 1).pow(2) * 16;
    let input = parse(&format!("[{},{}]", value(c, n), value(d, n))).expect("valid JSON");
    let args = vec!["$a"; arity].join("; ");
    let call = if arity == 0 {
        name.to_owned()
    } else {
        format!("{name}({args})")
    };
    let program = JqProgram::compile(&format!(". as [$in, $a] | $in | {call}"))
        .unwrap_or_else(|e| panic!("{call} does not compile: {e}"));
    let size = input.to_compact_json().len() as u64;
    let per_unit = ns_per_unit();
    let limits = projection_limits();
    let (allocated, t) = (heap::allocated(), thread_cpu_ns());
    let result = program.run(&input, &limits);
    let (allocated, ns) = (heap::allocated() - allocated, (thread_cpu_ns() - t) as f64);
    let spent = last_spent();
    let output = result.map_or(0, |v| v.to_compact_json().len() as u64);
    assert!(spent <= limits.fuel, "{call}: spent {spent}");
    let bound = BYTES_PER_FUEL * spent + BYTES_PER_BYTE * (size + output) + BYTES_BASE;
    assert!(
        allocated <= bound,
        "{call} on kinds {c}, {d} (size {n}): {allocated} bytes allocated for {spent} fuel, over {bound}"
    );
    // The base covers a run's fixed cost: compiling nothing, but touching fresh pages.
    let cpu_bound = CPU_MULTIPLE * per_unit * (spent + size / 16 + 10_000) as f64;
    assert!(
        ns <= cpu_bound,
        "{call} on kinds {c}, {d} (size {n}): {ns} ns for {spent} fuel, over {cpu_bound}"
    );
});
