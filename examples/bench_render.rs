//! Render throughput on the host: `cargo run --release --example bench_render -- FILE...`.
//!
//! For each JSON file, parses it once, then renders it as TOON and as JSON repeatedly for at
//! least a second each and prints one JSON line per format with the throughput in MB/s of input
//! JSON, from the fastest render (the machine is shared: the fastest run is the one least
//! disturbed; bench/render.mjs measures the references the same way). Parse time is excluded.

use devtools_mcp_edge::render::{render, OutputFormat};
use devtools_mcp_edge::value::parse;
use std::time::{Duration, Instant};

/// Measures for at least this long, and at least [`MIN_RUNS`] renders.
const MIN_TIME: Duration = Duration::from_secs(1);
const MIN_RUNS: u32 = 3;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path)?;
        let parse_start = Instant::now();
        let value = parse(&text)?;
        let parse_secs = parse_start.elapsed().as_secs_f64();
        let mb = text.len() as f64 / 1e6;
        for format in [OutputFormat::Toon, OutputFormat::Json] {
            let mut runs = 0u32;
            let mut output_bytes = 0;
            let mut best = f64::INFINITY;
            let start = Instant::now();
            while runs < MIN_RUNS || start.elapsed() < MIN_TIME {
                let one = Instant::now();
                // A fresh String each time, as a tool call renders (and as the Node side does).
                output_bytes = std::hint::black_box(render(&value, format)).len();
                best = best.min(one.elapsed().as_secs_f64());
                runs += 1;
            }
            let secs = best;
            println!(
                "{{\"file\":{:?},\"input_bytes\":{},\"format\":\"{}\",\"output_bytes\":{},\"runs\":{},\"ms_per_render\":{:.3},\"mb_per_s\":{:.1},\"parse_mb_per_s\":{:.1}}}",
                path,
                text.len(),
                format.as_str(),
                output_bytes,
                runs,
                secs * 1e3,
                mb / secs,
                mb / parse_secs
            );
        }
    }
    Ok(())
}
