//! JavaScript-ordered map benchmark (`make bench` runs it through bench/maps.mjs): builds an object
//! of `KEYS` keys in the key order `ORDER` (`named`, `integers ascending`, `integers descending`,
//! `integers scattered`), by assignment (`Map::insert`, as projections and argument maps build
//! objects) and by parsing its JSON text (as an upstream body arrives), and prints one JSON line:
//! the fastest of several runs, in nanoseconds of this thread's CPU time per key (on a shared
//! machine a run longer than a scheduler slice is interrupted, which wall-clock time would count).
//!
//!   cargo run --release --example bench_maps -- ORDER KEYS

use std::time::Instant;

use devtools_mcp_edge::value::{self, Map, Value};

/// The keys of an object of `n` entries in the named order.
fn keys(order: &str, n: usize) -> Vec<String> {
    match order {
        "named" => (0..n).map(|i| format!("key{i}")).collect(),
        "integers ascending" => (0..n).map(|i| i.to_string()).collect(),
        "integers descending" => (0..n).rev().map(|i| i.to_string()).collect(),
        // A fixed permutation (multiplication by a number coprime to n, modulo n).
        _ => (0..n).map(|i| ((i * 7_919 + 13) % n).to_string()).collect(),
    }
}

/// This thread's CPU time, in seconds.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// The fastest of enough runs to fill about 200 ms, in nanoseconds of CPU time per key.
fn fastest(n: usize, mut run: impl FnMut() -> usize) -> f64 {
    let mut best = f64::INFINITY;
    let started = Instant::now();
    let mut runs = 0;
    while runs < 3 || (started.elapsed().as_millis() < 200 && runs < 50) {
        let t = cpu_seconds();
        let len = run();
        best = best.min(cpu_seconds() - t);
        assert_eq!(len, n, "every key must be kept");
        runs += 1;
    }
    best * 1e9 / n as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(order), Some(n)) = (args.next(), args.next().and_then(|n| n.parse().ok())) else {
        eprintln!("usage: bench_maps ORDER KEYS");
        std::process::exit(2);
    };
    let keys = keys(&order, n);
    let text = format!(
        "{{{}}}",
        keys.iter()
            .map(|k| format!("\"{k}\":0"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let insert = fastest(n, || {
        let mut map = Map::new();
        for k in &keys {
            map.insert(k.as_str().into(), Value::Null);
        }
        map.len()
    });
    let parse = fastest(n, || match value::parse(&text) {
        Ok(Value::Object(map)) => map.len(),
        _ => 0,
    });
    println!("{{\"insertNsPerKey\":{insert:.1},\"parseNsPerKey\":{parse:.1}}}");
}
