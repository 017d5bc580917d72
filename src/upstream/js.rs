//! The JavaScript semantics over JSON values that the reference servers' error texts depend on:
//! `String(x)`, truthiness, `JSON.stringify` and `response.text()` decoding, beside the value-free
//! ones of [`crate::js`] (`trim`, `parseInt`), so the error formatters read like the JavaScript
//! they reproduce.

use crate::memory::{BYTES_PER_BODY_BYTE, SMALL_BODY_BYTES};
use crate::render::json::write_json;
use crate::render::write_number;
use crate::value::{parse_within, Allowance, Value};
use std::borrow::Cow;

pub(crate) use crate::js::{is_blank, parse_int};
pub(crate) use crate::render::json::stringify;

/// JavaScript truthiness of a JSON value (`""`, `0`, `-0`, `NaN`, `false` and `null` are falsy).
pub(crate) fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => {
            let v = n.as_f64();
            v != 0.0 && !v.is_nan()
        }
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The value at `key` when truthy, as JavaScript's `x.key && ...` tests it.
pub(crate) fn truthy_field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.get(key).filter(|v| truthy(v))
}

/// `String(value)`: strings as they are, numbers the JavaScript way, arrays joined with `,`
/// (null items empty), objects as `[object Object]`.
pub(crate) fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_js_string(value, &mut out);
    out
}

fn write_js_string(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // A literal beyond f64's range (1e400) is Infinity to JSON.parse.
        Value::Number(n) if n.as_f64().is_infinite() => out.push_str(if n.as_f64() > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        }),
        Value::Number(n) => write_number(n, "NaN", out),
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                // Array.prototype.join writes null items as empty strings.
                if !matches!(item, Value::Null) {
                    write_js_string(item, out);
                }
            }
        }
        Value::Object(_) => out.push_str("[object Object]"),
    }
}

/// `array.join(separator)` over a JSON array.
pub(crate) fn join(items: &[Value], separator: &str) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        if !matches!(item, Value::Null) {
            write_js_string(item, &mut out);
        }
    }
    out
}

/// `JSON.stringify(value, null, 2)`.
pub(crate) fn stringify_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_json(value, &mut out);
    out
}

/// `await response.text()`: UTF-8 with invalid sequences replaced and a leading BOM removed.
pub(crate) fn response_text(bytes: &[u8]) -> String {
    response_str(bytes).into_owned()
}

/// [`response_text`] borrowed when the bytes are valid UTF-8, so a large body is not copied
/// just to be parsed.
pub(crate) fn response_str(bytes: &[u8]) -> Cow<'_, str> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // The strict check first: it takes ASCII a word at a time, where the lossy decoder's scan
    // is several times slower on a valid body, which almost every body is.
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// [`response_text`] of a body the caller gives up: its own buffer when it is valid UTF-8 without
/// a BOM, as almost every body is, so a large body is never copied.
pub(crate) fn response_string(mut bytes: Vec<u8>) -> String {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// `JSON.parse(text)` of an error body, for the message in it: `None` where JavaScript would
/// throw, and where the value would take more memory than the body's reservation leaves beside
/// its text (or than a small body may take), so that a body of tiny values is shown as its text
/// instead of costing many times its size.
pub(crate) fn json_parse(text: &str) -> Option<Value> {
    let room = (text.len().saturating_mul(BYTES_PER_BODY_BYTE - 1))
        .max(SMALL_BODY_BYTES * BYTES_PER_BODY_BYTE);
    parse_within(text, &mut Allowance::fixed(room)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse;

    fn v(text: &str) -> Value {
        parse(text).unwrap()
    }

    #[test]
    fn string_conversion_follows_javascript() {
        for (json, want) in [
            (r#""x""#, "x"),
            ("1.50", "1.5"),
            ("1e21", "1e+21"),
            ("null", "null"),
            ("true", "true"),
            (r#"[1,null,"a",[2,3]]"#, "1,,a,2,3"),
            (r#"{"a":1}"#, "[object Object]"),
            (r#"[{"a":1}]"#, "[object Object]"),
            ("-1e400", "-Infinity"),
        ] {
            assert_eq!(to_string(&v(json)), want, "{json}");
        }
        assert_eq!(join(&[v("1"), v("null"), v("\"b\"")], "; "), "1; ; b");
    }

    #[test]
    fn truthiness() {
        for (json, want) in [
            ("0", false),
            ("-0", false),
            ("0.0", false),
            ("\"\"", false),
            ("null", false),
            ("false", false),
            ("[]", true),
            ("{}", true),
            ("\"0\"", true),
            ("2", true),
        ] {
            assert_eq!(truthy(&v(json)), want, "{json}");
        }
    }

    #[test]
    fn stringify_prints_numbers_the_javascript_way() {
        assert_eq!(
            stringify(&v(r#"{"b":1.0,"a":[12345678901234567890,"é\n"]}"#)),
            r#"{"b":1,"a":[12345678901234567000,"é\n"]}"#
        );
    }

    #[test]
    fn response_text_decoding() {
        assert_eq!(response_text(b"\xEF\xBB\xBF{}"), "{}");
        assert_eq!(response_text(b"a\xFFb"), "a\u{FFFD}b");
    }

    #[test]
    fn an_error_body_too_dense_for_its_reservation_is_not_parsed() {
        let values = |n: usize| format!("[{}0]", "0,".repeat(n - 1));
        assert_eq!(json_parse("[0,1]"), Some(v("[0,1]")));
        assert!(json_parse(&values(20_000)).is_some());
        // 2 MB of text would take some 40 MB parsed.
        assert_eq!(json_parse(&values(1_000_000)), None);
    }
}
