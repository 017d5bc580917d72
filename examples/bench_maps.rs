//! JavaScript-ordered map benchmark (`make bench` runs it through bench/maps.mjs): builds an object
//! of `KEYS` keys in the key order `ORDER` (`named`, `integers ascending`, `integers descending`,
//! `integers scattered`), by assignment (`Map::insert`, as projections and argument maps build
//! objects) and by parsing its JSON text (as an upstream body arrives), and prints one JSON line:
//! the fastest of several runs, in nanoseconds per key.
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

/// The fastest of enough runs to fill about 200 ms, in nanoseconds per key.
fn fastest(n: usize, mut run: impl FnMut() -> usize) -> f64 {
    let mut best = f64::INFINITY;
    let started = Instant::now();
    let mut runs = 0;
    while runs < 3 || (started.elapsed().as_millis() < 200 && runs < 50) {
        let t = Instant::now();
        let len = run();
        best = best.min(t.elapsed().as_secs_f64());
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
            map.insert(k.clone(), Value::Null);
        }
        map.len()
    });
    let parse = fastest(n, || match value::parse(&text) {
        Ok(Value::Object(map)) => map.len(),
        _ => 0,
    });
    println!("{{\"insertNsPerKey\":{insert:.1},\"parseNsPerKey\":{parse:.1}}}");
}
