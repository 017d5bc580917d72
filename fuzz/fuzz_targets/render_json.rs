//! The JSON renderer against two oracles: our own parser and serde_json must both read the text
//! back as the value that was rendered (as JavaScript's `JSON.parse(JSON.stringify(v))` would).
#![no_main]

use devtools_mcp_edge::render::{render, OutputFormat};
use devtools_mcp_edge::value::{parse, parse_bytes};
use devtools_mcp_edge_fuzz::{differs_from_serde, js_round_trip, serde_parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = parse_bytes(data) else {
        return;
    };
    let expected = js_round_trip(&value);
    let text = render(&value, OutputFormat::Json);

    let ours = parse(&text).unwrap_or_else(|e| panic!("our parser rejects our JSON ({e}): {text}"));
    assert!(
        ours == expected,
        "our parser reads back another value:\n{text}"
    );

    let theirs =
        serde_parse(&text).unwrap_or_else(|e| panic!("serde_json rejects our JSON ({e}): {text}"));
    if let Some(diff) = differs_from_serde(&expected, &theirs) {
        panic!("serde_json reads back another value ({diff}):\n{text}");
    }

    // The compact form (artifacts, structured output) must carry the same value, literals kept.
    let compact = value.to_compact_json();
    let again =
        parse(&compact).unwrap_or_else(|e| panic!("compact JSON unreadable ({e}): {compact}"));
    assert!(
        again == value,
        "compact JSON reads back another value:\n{compact}"
    );
});
