//! The `jq` argument: arbitrary expressions (first line) over arbitrary documents (the rest),
//! through the production path (compile by the selection rule, apply, render both formats)
//! under a budget a fiftieth of the default, so that a program spending all of it still runs
//! fast enough for the fuzzer to try many.
//!
//! Cost is checked by counting, not by timing (a shared machine makes any wall-clock bound
//! report false crashes): the run spends no more fuel than its budget, and what it returns is
//! no larger than its size bounds allow, however much the program shares values (`[.,.]`
//! forty times). An error text longer than [`MAX_ERROR_TEXT`] is a crash too. Work the meter
//! does not see is left to libFuzzer's -timeout and -rss_limit_mb.
#![no_main]

use devtools_mcp_edge::projection::{last_spent, Limits, Projection};
use devtools_mcp_edge::render::{render, OutputFormat};
use devtools_mcp_edge::value::{parse, parse_bytes, Value};
use devtools_mcp_edge_fuzz::split_line;
use libfuzzer_sys::fuzz_target;

/// The longest `_jqError` text allowed (the message cap in projection/jq.rs, the quoted source
/// and the fixed words around them).
const MAX_ERROR_TEXT: usize = 1024 + 64;

/// The most bytes one byte of a value's size can become in compact JSON (a control character
/// is counted as one byte and printed as a six-byte `\u00XX` escape).
const ESCAPE_GROWTH: usize = 6;

const FALLBACK: &str =
    r#"{"items":[{"id":1,"name":"a","tags":["x","y"]},{"id":2,"name":"b","n":null}],"total":2}"#;

fn limits() -> Limits {
    Limits {
        fuel: 200_000,
        max_outputs: 2_000,
        max_output_bytes: 1 << 20,
        max_value_bytes: 1 << 20,
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
    let limits = limits();
    let projection = Projection::compile(expr);
    let result = projection.apply_or_error_value_with(doc.clone(), &limits);
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
    render(&result, OutputFormat::Json);
    render(&result, OutputFormat::Toon);
});
