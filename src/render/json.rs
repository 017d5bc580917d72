//! The JSON renderer: byte-identical to JavaScript's `JSON.stringify(value, null, 2)`.

use super::sink::{Counter, Sink};
use super::{write_number, MAX_RENDER_DEPTH};
use crate::js::{json_string_units, write_json_string};
use crate::value::Value;

/// Appends `JSON.stringify(value, null, 2)` to `out`.
pub(crate) fn write_json(value: &Value, out: &mut impl Sink) {
    write_value(value, 0, true, out);
}

/// `JSON.stringify(value)`: compact, numbers printed the JavaScript way.
pub fn stringify(value: &Value) -> String {
    let mut out = String::new();
    write_json_compact(value, &mut out);
    out
}

/// Appends `JSON.stringify(value)` (compact, numbers printed the JavaScript way) to `out`.
pub(crate) fn write_json_compact(value: &Value, out: &mut impl Sink) {
    write_value(value, 0, false, out);
}

/// Both forms: `pretty` puts each member on its own line, indented two spaces a level, and
/// renders containers nested past [`MAX_RENDER_DEPTH`] as `null`; compact has neither.
fn write_value(value: &Value, depth: usize, pretty: bool, out: &mut impl Sink) {
    if pretty && depth > MAX_RENDER_DEPTH && matches!(value, Value::Array(_) | Value::Object(_)) {
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
            out.push('[');
            members(items.iter().map(|item| (None, item)), 0, depth, pretty, out);
            if !items.is_empty() {
                line(pretty, depth, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            let entries = map.iter().map(|(key, item)| (Some(key.as_str()), item));
            members(entries, 0, depth, pretty, out);
            if !map.is_empty() {
                line(pretty, depth, out);
            }
            out.push('}');
        }
    }
}

/// The members of a container at `depth` (values, with their keys in an object), the first
/// being its `index`th: each after a comma unless it is the container's first.
fn members<'v, S: Sink>(
    mut entries: impl Iterator<Item = (Option<&'v str>, &'v Value)>,
    mut index: usize,
    depth: usize,
    pretty: bool,
    out: &mut S,
) {
    while let Some((key, item)) = entries.next() {
        if index > 0 {
            out.push(',');
        }
        line(pretty, depth + 1, out);
        if let Some(key) = key {
            write_string(key, out);
            out.push_str(if pretty { ": " } else { ":" });
        }
        write_value(item, depth + 1, pretty, out);
        index += 1;
        if S::HANDS_OVER && !out.keeps() {
            // The rest only counted, by the same code into a sink that only counts.
            let rest = Counter::units_of(|c| members(entries, index, depth, pretty, c));
            out.count(rest);
            return;
        }
    }
}

/// A new line indented to `depth`, in the pretty form only.
fn line(pretty: bool, depth: usize, out: &mut impl Sink) {
    if pretty {
        newline_indent(depth, out);
    }
}

/// A newline and a run of spaces long enough for the usual nesting, written with one copy.
const NEWLINE_SPACES: &str = "\n                                                                ";

fn newline_indent(depth: usize, out: &mut impl Sink) {
    let width = depth * 2;
    if !out.keeps() {
        out.count(1 + width);
        return;
    }
    if let Some(line_start) = NEWLINE_SPACES.get(..1 + width) {
        out.push_str(line_start);
        return;
    }
    out.push('\n');
    out.push_spaces(width);
}

/// Writes `s` as a JSON string literal with `JSON.stringify`'s escapes.
#[inline]
pub(crate) fn write_string(s: &str, out: &mut impl Sink) {
    if !out.keeps() {
        out.count(json_string_units(s));
        return;
    }
    write_json_string(s, |piece| out.push_str(piece));
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
    fn deep_nesting_indents_past_the_space_run() {
        let depth = 40;
        let src = "[".repeat(depth) + &"]".repeat(depth);
        let out = render(&src);
        let innermost = format!("\n{}[]", " ".repeat((depth - 1) * 2));
        assert!(out.contains(&innermost));
        assert_eq!(out.lines().count(), 2 * depth - 1);
    }

    /// Deep indentation reaches the sink as one run of spaces, which a sink past its bound only
    /// counts: written space by space, a deeply nested value cost its depth times its size.
    #[test]
    fn deep_indentation_is_one_run_per_line() {
        #[derive(Default)]
        struct Counting {
            spaces_pushed_one_by_one: usize,
            runs: usize,
        }
        impl crate::render::sink::Sink for Counting {
            fn push_str(&mut self, _: &str) {}
            fn push(&mut self, c: char) {
                if c == ' ' {
                    self.spaces_pushed_one_by_one += 1;
                }
            }
            fn push_spaces(&mut self, _: usize) {
                self.runs += 1;
            }
        }
        let depth = 200;
        let value = crate::value::parse(&("[".repeat(depth) + &"]".repeat(depth))).unwrap();
        let mut sink = Counting::default();
        write_json(&value, &mut sink);
        assert_eq!(sink.spaces_pushed_one_by_one, 0);
        assert!(sink.runs > depth, "{} runs", sink.runs);
    }
}
