//! The `jq` argument: arbitrary expressions (first line) over arbitrary documents (the rest),
//! through the production path (compile by the selection rule, apply with the default budget,
//! render both formats). A unit slower than [`SLOW`] is a crash: a model-written expression must
//! not be able to hold the isolate, and an error text longer than [`MAX_ERROR_TEXT`] is one too (libFuzzer's own -timeout and -rss_limit_mb catch hangs and
//! memory blow-ups).
#![no_main]

use std::time::{Duration, Instant};

use devtools_mcp_edge::projection::Projection;
use devtools_mcp_edge::render::{render, OutputFormat};
use devtools_mcp_edge::value::{parse, parse_bytes, Value};
use devtools_mcp_edge_fuzz::split_line;
use libfuzzer_sys::fuzz_target;

/// Ten times the jq budget's design point (about half a second of host CPU in a release build,
/// docs/decisions/0010): the fuzz build's coverage instrumentation and debug assertions make a
/// program that spends the whole budget (`[range(5000000)] | length`) take 2.6 s here.
const SLOW: Duration = Duration::from_secs(5);

/// The longest `_jqError` text allowed (the message cap in projection/jq.rs, the quoted source
/// and the fixed words around them).
const MAX_ERROR_TEXT: usize = 1024 + 64;

const FALLBACK: &str =
    r#"{"items":[{"id":1,"name":"a","tags":["x","y"]},{"id":2,"name":"b","n":null}],"total":2}"#;

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
    let started = Instant::now();
    let projection = Projection::compile(expr);
    let result = projection.apply_or_error_value(doc.clone());
    if let Value::Object(map) = &result {
        if let (Some(Value::String(_)), Some(original)) =
            (map.get("_jqError"), map.get("_originalData"))
        {
            if map.len() == 2 && projection.apply(&doc).is_err() {
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
    let toon = render(&result, OutputFormat::Toon);
    let json = render(&result, OutputFormat::Json);
    let elapsed = started.elapsed();
    assert!(
        elapsed < SLOW,
        "slow projection: {elapsed:?} for {expr:?} over {} bytes (rendered {} + {} bytes)",
        data.len(),
        toon.len(),
        json.len()
    );
});
