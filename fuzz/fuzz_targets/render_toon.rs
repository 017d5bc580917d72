//! The TOON renderer against structural invariants that hold for every TOON v3 document the
//! reference encoder writes, plus exact decoding of primitive roots:
//! - lines are joined by `\n` with no trailing newline, no empty line, no `\r`, no trailing space;
//! - indentation is a multiple of two spaces, starts at zero, and grows by at most two levels
//!   per line (a list item's nested fields sit two levels under its `- `);
//! - every array in the value gets exactly one `[N]` header outside quoted text, with N its
//!   length (arrays under a `__proto__` key vanish, as in the reference, see render/toon.rs);
//! - a primitive root decodes back to the value (numbers as JavaScript prints them).
#![no_main]

use devtools_mcp_edge::render::{render, OutputFormat};
use devtools_mcp_edge::value::{parse, parse_bytes, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = parse_bytes(data) else {
        return;
    };
    let text = render(&value, OutputFormat::Toon);
    check_lines(&text);

    let mut want = Vec::new();
    array_lengths(&value, &mut want);
    let mut got = header_lengths(&text);
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(
        want, got,
        "array headers differ from the value's arrays:\n{text}"
    );

    match &value {
        Value::Array(_) | Value::Object(_) => {}
        primitive => {
            let decoded = decode_primitive(&text);
            let expected = match primitive {
                Value::Number(n) if !n.as_f64().is_finite() => Value::Null,
                other => other.clone(),
            };
            assert!(
                decoded == expected,
                "primitive root {text:?} decodes to {decoded:?}"
            );
        }
    }
});

fn check_lines(text: &str) {
    if text.is_empty() {
        return;
    }
    let mut previous = 0usize;
    for (n, line) in text.split('\n').enumerate() {
        assert!(!line.is_empty(), "line {n} is empty:\n{text}");
        assert!(!line.contains('\r'), "line {n} holds a raw CR:\n{text}");
        assert!(!line.ends_with(' '), "line {n} ends with a space:\n{text}");
        let indent = line.len() - line.trim_start_matches(' ').len();
        assert!(
            indent % 2 == 0,
            "line {n} is indented by {indent} spaces:\n{text}"
        );
        assert!(
            indent <= previous + 4,
            "line {n} jumps from {previous} to {indent}:\n{text}"
        );
        assert!(n > 0 || indent == 0, "the first line is indented:\n{text}");
        previous = indent;
    }
}

/// The lengths of the arrays the encoder must announce.
fn array_lengths(value: &Value, out: &mut Vec<usize>) {
    match value {
        Value::Array(items) => {
            out.push(items.len());
            items.iter().for_each(|v| array_lengths(v, out));
        }
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| k.as_str() != "__proto__")
            .for_each(|(_, v)| array_lengths(v, out)),
        _ => {}
    }
}

/// The N of every `[N]` outside quoted strings (bare keys and values never hold brackets).
fn header_lengths(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'[' => {
                let start = i + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end].is_ascii_digit() {
                    end += 1;
                }
                assert!(
                    end > start && bytes.get(end) == Some(&b']'),
                    "a bare '[' that is no header at byte {i}:\n{text}"
                );
                found.push(text[start..end].parse().unwrap_or(usize::MAX));
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// Decodes a primitive root: a keyword, a number, or a bare or quoted string.
fn decode_primitive(text: &str) -> Value {
    match text {
        "null" => return Value::Null,
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        let mut s = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                assert!(c != '"', "unescaped quote inside {text:?}");
                s.push(c);
                continue;
            }
            match chars.next() {
                Some('\\') => s.push('\\'),
                Some('"') => s.push('"'),
                Some('n') => s.push('\n'),
                Some('r') => s.push('\r'),
                Some('t') => s.push('\t'),
                other => panic!("escape \\{other:?} is not TOON in {text:?}"),
            }
        }
        return Value::String(s);
    }
    // Bare text that reads as a JSON number is a number (the encoder quotes numeric-like
    // strings); anything else is the string itself.
    match parse(text) {
        Ok(number @ Value::Number(_)) => number,
        _ => Value::String(text.to_owned()),
    }
}
