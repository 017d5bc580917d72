//! Render throughput on the host.
//!
//! `bench_render FILE...` parses each JSON file once, renders it as TOON and as JSON repeatedly
//! for at least a second each, and prints one JSON line per format with the throughput in MB/s of
//! input JSON, from the fastest render. Parse time is excluded.
//!
//! `bench_render --serve FILE...` parses the files, then answers requests on stdin for
//! bench/render.mjs, which interleaves them with the reference's renders so that load on the
//! shared machine hits both sides alike. A request line is `<file index> <toon|json> <runs>`; the
//! reply is `<milliseconds> <output bytes>` for the fastest of `runs` fresh renders.

use devtools_mcp_edge::render::{render, OutputFormat};
use devtools_mcp_edge::value::{parse, Value};
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

/// Measures for at least this long, and at least [`MIN_RUNS`] renders.
const MIN_TIME: Duration = Duration::from_secs(1);
const MIN_RUNS: u32 = 3;

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let serve = args.first().is_some_and(|a| a == "--serve");
    if serve {
        args.remove(0);
    }
    let mut docs = Vec::new();
    for path in &args {
        let text = std::fs::read_to_string(path)?;
        let start = Instant::now();
        let value = parse(&text)?;
        docs.push((path.as_str(), text.len(), value, start.elapsed()));
    }
    if serve {
        return serve_requests(&docs);
    }
    for (path, input_bytes, value, parse_time) in &docs {
        let mb = *input_bytes as f64 / 1e6;
        for format in [OutputFormat::Toon, OutputFormat::Json] {
            let (mut runs, mut best, mut output_bytes) = (0u32, f64::INFINITY, 0);
            let start = Instant::now();
            while runs < MIN_RUNS || start.elapsed() < MIN_TIME {
                let (secs, len) = time_render(value, format);
                best = best.min(secs);
                output_bytes = len;
                runs += 1;
            }
            println!(
                "{{\"file\":{path:?},\"input_bytes\":{input_bytes},\"format\":\"{}\",\"output_bytes\":{output_bytes},\"runs\":{runs},\"ms_per_render\":{:.3},\"mb_per_s\":{:.1},\"parse_mb_per_s\":{:.1}}}",
                format.as_str(),
                best * 1e3,
                mb / best,
                mb / parse_time.as_secs_f64()
            );
        }
    }
    Ok(())
}

/// One fresh render (a new String, as a tool call renders): seconds and output length.
fn time_render(value: &Value, format: OutputFormat) -> (f64, usize) {
    let start = Instant::now();
    let len = std::hint::black_box(render(value, format)).len();
    (start.elapsed().as_secs_f64(), len)
}

fn serve_requests(docs: &[(&str, usize, Value, Duration)]) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let mut parts = line.split_whitespace();
        let index: usize = parts.next().ok_or("missing file index")?.parse()?;
        let format: OutputFormat = parts.next().ok_or("missing format")?.parse()?;
        let runs: u32 = parts.next().unwrap_or("1").parse()?;
        let (_, _, value, _) = docs.get(index).ok_or("no such file index")?;
        let (mut best, mut len) = (f64::INFINITY, 0);
        for _ in 0..runs.max(1) {
            let (secs, bytes) = time_render(value, format);
            best = best.min(secs);
            len = bytes;
        }
        writeln!(out, "{:.6} {len}", best * 1e3)?;
        out.flush()?;
    }
    Ok(())
}
