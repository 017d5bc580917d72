//! Projection benchmark (`make bench` runs it through bench/projection.mjs): builds a 16 MB
//! list response, then times parsing, JMESPath and jq projection on it, and how long runaway jq
//! programs take to hit the default budget. Prints one line per measurement.

use std::time::Instant;

use devtools_mcp_edge::projection::Projection;
use devtools_mcp_edge::value::{self, Value};

fn document(target_bytes: usize) -> String {
    let mut out = String::from("{\"total_count\":0,\"items\":[");
    let mut i = 0u64;
    while out.len() < target_bytes {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"id\":{},\"name\":\"item-{i}\",\"status\":\"{}\",\"score\":{}.5,\"tags\":[\"a\",\"b\"],\
             \"owner\":{{\"login\":\"user{}\",\"id\":{}}},\"created_at\":\"2024-01-0{}T00:00:00Z\",\
             \"description\":\"Lorem ipsum dolor sit amet, consectetur adipiscing elit {i}\"}}",
            1_000_000 + i,
            ["open", "closed", "merged"][(i % 3) as usize],
            i % 100,
            i % 50,
            i % 50,
            1 + i % 9
        ));
        i += 1;
    }
    out.push_str("]}");
    out
}

fn time<T>(label: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    println!("{label}: {:.1} ms", start.elapsed().as_secs_f64() * 1000.0);
    out
}

fn main() {
    let text = document(16 << 20);
    println!("document: {:.1} MB", text.len() as f64 / (1 << 20) as f64);
    let data: Value = time("parse", || value::parse(&text).expect("valid JSON"));
    for expr in [
        "items[*].{id: id, name: name}",
        "items[?status == 'open'].owner.login",
        "length(items)",
        ".items | map({id, name})",
        "[.items[] | select(.status == \"open\") | .owner.login]",
    ] {
        let p = Projection::compile(expr);
        let out = time(&format!("project {expr} ({:?})", p.language()), || {
            p.apply(&data)
        });
        match out {
            Ok(v) => println!("  -> {} bytes of JSON", v.to_compact_json().len()),
            Err(e) => println!("  -> error: {e}"),
        }
    }
    // 300 elements: the nested-iteration program would take 300^4 steps.
    let small = value::parse(&format!("[{}]", vec!["1"; 300].join(","))).expect("valid JSON");
    for runaway in [
        "[range(1e9)]",
        "repeat(1)",
        "last(range(1e9))",
        "[limit(1e8; repeat(\"x\"))] | join(\"\")",
        "until(false; .)",
        "def f: f; f",
        "[.[] as $a | .[] as $b | .[] as $c | .[] as $d | 1] | length",
        "\"x\" * 1e10",
        "reduce range(100000) as $i (1; [.])",
    ] {
        let p = Projection::compile(runaway);
        let out = time(&format!("runaway {runaway}"), || {
            p.apply_or_error_value(small.clone())
        });
        println!(
            "  -> {}",
            out.get("_jqError")
                .map(Value::to_compact_json)
                .unwrap_or_default()
        );
    }
}
