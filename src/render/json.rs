//! The JSON renderer: byte-identical to JavaScript's `JSON.stringify(value, null, 2)`.

use super::number::write_number;
use super::sink::Sink;
use super::MAX_RENDER_DEPTH;
use crate::value::Value;

/// Appends `JSON.stringify(value, null, 2)` to `out`.
pub fn write_json(value: &Value, out: &mut impl Sink) {
    write_value(value, 0, out);
}

fn write_value(value: &Value, depth: usize, out: &mut impl Sink) {
    if depth > MAX_RENDER_DEPTH && matches!(value, Value::Array(_) | Value::Object(_)) {
        out.push_str("null");
        return;
    }
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(n, "null", out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline_indent(depth + 1, out);
                write_value(item, depth + 1, out);
            }
            newline_indent(depth, out);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline_indent(depth + 1, out);
                write_string(key, out);
                out.push_str(": ");
                write_value(item, depth + 1, out);
            }
            newline_indent(depth, out);
            out.push('}');
        }
    }
}

/// Appends `JSON.stringify(value)` (compact, numbers printed the JavaScript way) to `out`.
pub fn write_json_compact(value: &Value, out: &mut impl Sink) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(n, "null", out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_compact(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_json_compact(item, out);
            }
            out.push('}');
        }
    }
}

/// A newline and a run of spaces long enough for the usual nesting, written with one copy.
const NEWLINE_SPACES: &str = "\n                                                                ";

fn newline_indent(depth: usize, out: &mut impl Sink) {
    let width = depth * 2;
    if let Some(line_start) = NEWLINE_SPACES.get(..1 + width) {
        out.push_str(line_start);
        return;
    }
    out.push('\n');
    for _ in 0..width {
        out.push(' ');
    }
}

/// Which bytes `JSON.stringify` escapes: controls, `"` and `\`. All are ASCII, so a byte scan
/// never lands inside a multi-byte UTF-8 sequence.
static NEEDS_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Writes `s` as a JSON string literal with `JSON.stringify`'s escapes.
pub fn write_string(s: &str, out: &mut impl Sink) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    loop {
        let i = next_escape(bytes, start);
        out.push_str(s.get(start..i).unwrap_or_default());
        let Some(&b) = bytes.get(i) else { break };
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
        }
        start = i + 1;
    }
    out.push('"');
}

/// The index of the first byte at or after `from` that needs an escape, or `bytes.len()`.
///
/// Eight bytes at a time: most strings (keys, URLs, names, dates) need no escape at all.
fn next_escape(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        if word_needs_escape(u64::from_le_bytes(word)) {
            break;
        }
        i += 8;
    }
    // The tail: short keys and values end here, so check it as one word before looking byte by
    // byte. A long string's last eight bytes overlap bytes already found clean; a short one is
    // assembled in a register (a copy through memory would stall the load that follows).
    let tail_len = bytes.len() - i.min(bytes.len());
    if tail_len > 0 && tail_len < 8 {
        let word = match bytes.get(bytes.len().saturating_sub(8)..) {
            Some(last) if last.len() == 8 => <[u8; 8]>::try_from(last).map(u64::from_le_bytes).ok(),
            _ => Some(
                bytes
                    .get(i..)
                    .unwrap_or_default()
                    .iter()
                    .rev()
                    .fold(u64::from_le_bytes([b'a'; 8]), |w, &b| {
                        (w << 8) | u64::from(b)
                    }),
            ),
        };
        if word.is_some_and(|w| !word_needs_escape(w)) {
            return bytes.len();
        }
    }
    while let Some(&b) = bytes.get(i) {
        if NEEDS_ESCAPE[usize::from(b)] {
            return i;
        }
        i += 1;
    }
    bytes.len()
}

/// Whether any of the eight bytes is a control character, `"` or `\\` (SWAR: each term has a
/// high bit set exactly when some byte is below 0x20, or zero after the xor).
#[inline(always)]
fn word_needs_escape(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let quote = x ^ (ONES * u64::from(b'"'));
    let backslash = x ^ (ONES * u64::from(b'\\'));
    let hits = (x.wrapping_sub(ONES * 0x20) & !x)
        | (quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash);
    hits & HIGHS != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse;

    fn render(src: &str) -> String {
        let mut out = String::new();
        write_json(&parse(src).unwrap(), &mut out);
        out
    }

    #[test]
    fn matches_json_stringify_layout() {
        let cases = [
            ("null", "null"),
            ("true", "true"),
            ("[]", "[]"),
            ("{}", "{}"),
            ("[1,[],{}]", "[\n  1,\n  [],\n  {}\n]"),
            (
                r#"{"a":{"b":[1.50,"x"]},"c":null}"#,
                "{\n  \"a\": {\n    \"b\": [\n      1.5,\n      \"x\"\n    ]\n  },\n  \"c\": null\n}",
            ),
            (r#"{"b":1,"2":2,"1":3}"#, "{\n  \"1\": 3,\n  \"2\": 2,\n  \"b\": 1\n}"),
            ("[-0, 1e21, 1.5e-7, 1e400]", "[\n  0,\n  1e+21,\n  1.5e-7,\n  null\n]"),
            (
                r#""a\"\\\n\r\t\b\f\u0001\u001f\u007fé😀\u2028""#,
                "\"a\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f}é😀\u{2028}\"",
            ),
        ];
        for (src, want) in cases {
            assert_eq!(render(src), want, "input {src}");
        }
    }

    #[test]
    fn escape_scan_finds_every_position() {
        for len in 0..20 {
            for at in 0..len {
                for special in [b'"', b'\\', 0u8, 0x1f, b'\n'] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    assert_eq!(
                        next_escape(&bytes, 0),
                        at,
                        "len {len} at {at} byte {special}"
                    );
                    assert_eq!(next_escape(&bytes, at + 1), len);
                }
            }
        }
        // Bytes just above the escaped ranges and non-ASCII bytes need no escape.
        let clean = "!#[]~\u{7f}é😀 !#[]~\u{7f}é😀";
        assert_eq!(next_escape(clean.as_bytes(), 0), clean.len());
    }

    #[test]
    fn deep_nesting_indents_past_the_space_run() {
        let depth = 40;
        let src = "[".repeat(depth) + &"]".repeat(depth);
        let out = render(&src);
        let innermost = format!("\n{}[]", " ".repeat((depth - 1) * 2));
        assert!(out.contains(&innermost));
        assert_eq!(out.lines().count(), 2 * depth - 1);
    }
}
