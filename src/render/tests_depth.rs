//! The renderers recurse once per nesting level: the deepest value the parser accepts must render
//! on a wasm-sized stack (1 MiB, the Rust default for wasm32), in both formats, for every shape of
//! nesting the TOON encoder treats differently.

use crate::render::{render, render_bounded, OutputFormat, MAX_RENDER_DEPTH};
use crate::value::{parse, Value, MAX_DEPTH};
use std::hint::black_box;

const WASM_STACK: usize = 1 << 20;

/// `open` repeated, a leaf, then `close` repeated, nested `levels` deep.
fn nested(open: &str, leaf: &str, close: &str, levels: usize) -> String {
    open.repeat(levels) + leaf + &close.repeat(levels)
}

#[test]
fn deepest_parsable_values_render_on_a_wasm_sized_stack() {
    let shapes = [
        ("[", "1", "]", MAX_DEPTH),
        ("{\"a\":", "1", "}", MAX_DEPTH),
        ("[{\"a\":", "1", "}]", MAX_DEPTH / 2 - 1),
        ("[{\"t\":[{\"x\":1}],\"a\":", "[]", "}]", MAX_DEPTH / 2 - 1),
        ("{\"a\":[", "{}", "]}", MAX_DEPTH / 2 - 1),
        ("[[1],", "2", "]", MAX_DEPTH - 1),
    ];
    for (open, leaf, close, levels) in shapes {
        let text = nested(open, leaf, close, levels);
        let value = parse(&text).expect("within the parser's depth limit");
        let handle = std::thread::Builder::new()
            .stack_size(WASM_STACK)
            .spawn(move || {
                let toon = render(&value, OutputFormat::Toon);
                let json = render(&value, OutputFormat::Json);
                // Bounded, the levels past the bound are counted by the encoders handed over to a
                // counting sink partway down: the same depth again, on the same stack.
                for format in [OutputFormat::Toon, OutputFormat::Json] {
                    for max in [0, 1_000] {
                        black_box(render_bounded(&value, format, max));
                    }
                }
                (toon.len(), json.len())
            })
            .expect("thread starts");
        let (toon, json) = handle
            .join()
            .unwrap_or_else(|_| panic!("{open}…{close} overflowed"));
        assert!(toon > levels && json > levels, "{open}…{close}");
    }
}

/// A value `levels` deep built directly (the parser would refuse it): `[[[…[1]…]]]`.
fn deep_array(levels: usize) -> Value {
    let mut v = Value::from(1i64);
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

#[test]
fn values_deeper_than_the_render_bound_end_in_null() {
    let handle = std::thread::Builder::new()
        // Enough for a debug build to recurse to the bound (and to drop the value).
        .stack_size(64 << 20)
        .spawn(|| {
            let value = deep_array(MAX_RENDER_DEPTH + 50);
            let json = render(&value, OutputFormat::Json);
            let toon = render(&value, OutputFormat::Toon);
            (json, toon)
        })
        .expect("thread starts");
    let (json, toon) = handle.join().expect("no overflow");
    // JSON: MAX_RENDER_DEPTH + 1 arrays open, then the cut-off one is `null`.
    assert_eq!(json.matches('[').count(), MAX_RENDER_DEPTH + 1);
    assert!(json.contains("null") && !json.contains('1'));
    // TOON: one list item per level, ending in `- null`.
    assert!(
        toon.trim_end().ends_with("- null"),
        "{}",
        &toon[toon.len() - 40..]
    );
    assert!(!toon.contains(": 1"));
}
