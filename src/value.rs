//! The JSON value model shared by projection and the renderers.
//!
//! Two properties set it apart from `serde_json::Value`, and both exist for parity with the
//! JavaScript reference servers:
//! - objects list their keys as a JavaScript object built by `JSON.parse` does: integer-like keys
//!   (`"0"` to `"4294967294"` in canonical form) first in ascending numeric order, then every other
//!   key in insertion order; a repeated key keeps its first place and takes the last value;
//! - numbers keep the literal they were parsed from, so structured results lose no precision, while
//!   text renderers print them the JavaScript way from [`Number::as_f64`].

mod key;
mod parse;

use std::fmt;

use crate::js::JsMap;

pub use key::{Interner, Key};
pub use parse::{
    parse, parse_bytes, parse_owned, parse_owned_within, parse_within, Allowance, OwnedParseError,
    ParseError, MAX_DEPTH, RELEASE_BYTES,
};

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A number, with the literal it came from.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, in JavaScript key order.
    Object(Map),
}

impl Value {
    /// The value at `key` when this is an object holding it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(map) => map.get(key),
            _ => None,
        }
    }

    /// The string slice when this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Compact JSON with numbers written as their original literals (lossless; for structured
    /// results and storage, not for text shown to a model).
    pub fn to_compact_json(&self) -> String {
        let mut out = String::new();
        write_compact(self, &mut out);
        out
    }

    /// Appends [`Value::to_compact_json`] to `out` (lets a caller presize a large buffer).
    pub(crate) fn write_compact_json(&self, out: &mut String) {
        write_compact(self, out);
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Number(Number::from_i64(n))
    }
}

impl From<Map> for Value {
    fn from(map: Map) -> Self {
        Value::Object(map)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Self {
        Value::Array(items)
    }
}

/// A JSON number: the literal as written in the source, and its IEEE 754 double value.
///
/// Both live in one heap allocation (the double's bytes, then the literal's), so that a number
/// takes no more room in a [`Value`] than a pointer and a length: every node of a parsed body is
/// the size of the largest variant, and the double's 8-byte alignment would make each larger.
#[derive(Clone)]
pub struct Number {
    repr: Box<[u8]>,
}

impl Number {
    fn new(literal: &str, value: f64) -> Number {
        let mut repr = Vec::with_capacity(8 + literal.len());
        repr.extend_from_slice(&value.to_le_bytes());
        repr.extend_from_slice(literal.as_bytes());
        Number {
            repr: repr.into_boxed_slice(),
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Number")
            .field("literal", &self.literal())
            .field("value", &self.as_f64())
            .finish()
    }
}

impl Number {
    /// A number from a JSON literal already known to be valid (the parser's grammar).
    pub(crate) fn from_literal_unchecked(literal: &str) -> Number {
        // A valid JSON literal always parses; out-of-range ones become infinities, as in JS.
        let value = literal.parse::<f64>().unwrap_or(f64::NAN);
        Number::new(literal, value)
    }

    /// A number from a JSON literal, or `None` when the text is not a JSON number.
    pub(crate) fn from_literal(literal: &str) -> Option<Number> {
        match parse(literal) {
            Ok(Value::Number(n)) => Some(n),
            _ => None,
        }
    }

    /// A number from an integer.
    pub(crate) fn from_i64(n: i64) -> Number {
        Number::new(&n.to_string(), n as f64)
    }

    /// A number from a double; `None` for NaN and infinities, which JSON cannot hold.
    /// The literal is Rust's shortest round-trip form, which JSON parsers read back exactly.
    pub(crate) fn from_f64(value: f64) -> Option<Number> {
        if !value.is_finite() {
            return None;
        }
        let literal = if value == value.trunc() && value.abs() < 1e16 {
            // Integral values print without a fraction, as JavaScript does.
            format!("{}", value as i64)
        } else {
            format!("{value:e}")
        };
        Some(Number::new(&literal, value))
    }

    /// The literal this number was parsed from (or built as).
    pub fn literal(&self) -> &str {
        // Always ASCII: built from a `&str` in `Number::new`.
        std::str::from_utf8(self.repr.get(8..).unwrap_or_default()).unwrap_or_default()
    }

    /// The double value JavaScript's `JSON.parse` would produce.
    pub fn as_f64(&self) -> f64 {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(self.repr.get(..8).unwrap_or(&[0; 8]));
        f64::from_le_bytes(bytes)
    }

    /// The value as an `i64`, when it is integral and within range.
    pub(crate) fn as_i64(&self) -> Option<i64> {
        let v = self.as_f64();
        (v.fract() == 0.0 && v >= -(2f64.powi(63)) && v < 2f64.powi(63)).then_some(v as i64)
    }
}

impl PartialEq for Number {
    /// Numbers are equal when their doubles are, as in JavaScript (`1.0 == 1`).
    fn eq(&self, other: &Self) -> bool {
        self.as_f64() == other.as_f64()
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.literal())
    }
}

/// An object's entries in JavaScript key order.
pub type Map = JsMap<Key, Value>;

/// Appends `s` to `out` as a JSON string literal with the escapes `JSON.stringify` uses
/// ([`crate::js::write_json_string`] into a `String`).
pub fn write_json_string(s: &str, out: &mut String) {
    crate::js::write_json_string(s, |piece| out.push_str(piece));
}

fn write_compact(value: &Value, out: &mut String) {
    CompactPieces::new(value).fill(out, usize::MAX);
}

/// [`Value::to_compact_json`] written a piece at a time, so that a large value's JSON never
/// exists whole (an artifact is sent to the store as it is written).
pub(crate) struct CompactPieces<'v> {
    stack: Vec<Frame<'v>>,
}

enum Frame<'v> {
    Value(&'v Value),
    Items(std::slice::Iter<'v, Value>, bool),
    Entries(crate::js::map::Iter<'v, Key, Value>, bool),
    /// What is left to write of a string, after its opening quote.
    Text(&'v str),
    /// The colon after a key.
    Colon,
}

/// The most bytes of a string written at once: a string of control characters is six times as
/// long escaped, and a piece holds at most one such slice past what it was asked for.
const TEXT_SLICE_BYTES: usize = 16 * 1024;

impl<'v> CompactPieces<'v> {
    /// The pieces of `value`'s compact JSON.
    pub(crate) fn new(value: &'v Value) -> CompactPieces<'v> {
        CompactPieces {
            stack: vec![Frame::Value(value)],
        }
    }

    /// Appends the next piece to `out`, until `out` holds at least `min` bytes or the JSON is
    /// complete (`out` may grow past `min` by one slice of a string, at most
    /// [`TEXT_SLICE_BYTES`] escaped). Returns false once the JSON is complete.
    pub(crate) fn fill(&mut self, out: &mut String, min: usize) -> bool {
        while out.len() < min {
            let Some(top) = self.stack.last_mut() else {
                return false;
            };
            match top {
                Frame::Value(value) => {
                    let value: &'v Value = value;
                    self.stack.pop();
                    match value {
                        Value::Array(items) => {
                            out.push('[');
                            self.stack.push(Frame::Items(items.iter(), true));
                        }
                        Value::Object(map) => {
                            out.push('{');
                            self.stack.push(Frame::Entries(map.iter(), true));
                        }
                        Value::Null => out.push_str("null"),
                        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                        Value::Number(n) => out.push_str(n.literal()),
                        Value::String(s) => {
                            out.push('"');
                            self.stack.push(Frame::Text(s));
                        }
                    }
                }
                Frame::Text(rest) => {
                    if rest.is_empty() {
                        out.push('"');
                        self.stack.pop();
                    } else {
                        let mut end = rest.len().min(TEXT_SLICE_BYTES);
                        while !rest.is_char_boundary(end) {
                            end += 1;
                        }
                        let (slice, left) = rest.split_at(end);
                        crate::js::write_json_chars(slice, |piece| out.push_str(piece));
                        *rest = left;
                    }
                }
                Frame::Colon => {
                    out.push(':');
                    self.stack.pop();
                }
                Frame::Items(items, first) => match items.next() {
                    Some(item) => {
                        if !std::mem::replace(first, false) {
                            out.push(',');
                        }
                        self.stack.push(Frame::Value(item));
                    }
                    None => {
                        out.push(']');
                        self.stack.pop();
                    }
                },
                Frame::Entries(entries, first) => match entries.next() {
                    Some((key, value)) => {
                        if !std::mem::replace(first, false) {
                            out.push(',');
                        }
                        out.push('"');
                        self.stack.push(Frame::Value(value));
                        self.stack.push(Frame::Colon);
                        self.stack.push(Frame::Text(key));
                    }
                    None => {
                        out.push('}');
                        self.stack.pop();
                    }
                },
            }
        }
        !self.stack.is_empty()
    }
}

impl serde::Serialize for Value {
    /// Serializes losslessly: numbers go out as their original literals.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(n) => {
                let raw = serde_json::value::RawValue::from_string(n.literal().to_owned())
                    .map_err(serde::ser::Error::custom)?;
                raw.serialize(serializer)
            }
            Value::String(s) => serializer.serialize_str(s),
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut m = serializer.serialize_map(Some(map.len()))?;
                for (k, v) in map.iter() {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

// Every node of a parsed body is a `Value` and every object entry a key and a `Value`: on wasm32,
// 16 and 24 bytes, where they were 24 and 40 (a number's double and literal share one allocation,
// so no variant needs 8-byte alignment and the tag fits in an object's spare bits; an object key
// is a shared pointer).
#[cfg(target_arch = "wasm32")]
const _: () = {
    assert!(std::mem::size_of::<Value>() == 16);
    assert!(std::mem::size_of::<(Key, Value)>() == 24);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_two_words_and_a_key_too() {
        let word = std::mem::size_of::<usize>();
        assert_eq!(std::mem::size_of::<Number>(), 2 * word);
        assert_eq!(std::mem::size_of::<Key>(), 2 * word);
    }

    fn keys(v: &Value) -> Vec<&str> {
        match v {
            Value::Object(m) => m.keys().map(Key::as_str).collect(),
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn integer_like_keys_come_first_in_numeric_order() {
        let v = parse(r#"{"b":1,"10":2,"a":3,"2":4,"01":5,"-1":6,"4294967295":7,"4294967294":8}"#)
            .unwrap();
        assert_eq!(
            keys(&v),
            ["2", "10", "4294967294", "b", "a", "01", "-1", "4294967295"]
        );
    }

    #[test]
    fn repeated_key_keeps_first_place_and_last_value() {
        let v = parse(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(keys(&v), ["a", "b"]);
        assert_eq!(v.get("a").unwrap().to_compact_json(), "3");
    }

    #[test]
    fn large_objects_dedupe_and_order_like_json_parse() {
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k3\":\"again\",\"7\":true}");
        let v = parse(&text).unwrap();
        let Value::Object(m) = &v else { panic!() };
        assert_eq!(m.len(), 41);
        assert_eq!(m.keys().next().map(Key::as_str), Some("7"));
        assert_eq!(m.keys().nth(4).map(Key::as_str), Some("k3"));
        assert_eq!(m.get("k3"), Some(&Value::from("again")));
    }

    #[test]
    fn compact_json_in_pieces_is_the_compact_json() {
        let v = parse(
            r#"{"a":[1,2.50,{"b":null,"c":[]}],"é\n":"x\"y","3":{},"d":[[true,false]],"e":-0}"#,
        )
        .unwrap();
        let whole = v.to_compact_json();
        for min in [1, 2, 5, 16, 1000] {
            let mut pieces = CompactPieces::new(&v);
            let mut out = String::new();
            loop {
                let mut piece = String::new();
                let more = pieces.fill(&mut piece, min);
                out.push_str(&piece);
                if !more {
                    break;
                }
                assert!(piece.len() >= min, "{min}: {piece}");
            }
            assert_eq!(out, whole, "{min}");
        }
        let mut pieces = CompactPieces::new(&Value::Null);
        let mut out = String::new();
        assert!(!pieces.fill(&mut out, 100));
        assert_eq!(out, "null");
    }

    #[test]
    fn a_long_string_is_written_a_slice_at_a_time() {
        // Control characters are six bytes each escaped; a key as long as a value.
        let long = "\u{1}é".repeat(40_000);
        let v = Value::Array(vec![
            Value::String(long.clone()),
            Value::Object(Map::from_entries([(long.clone(), Value::from("v"))])),
        ]);
        let whole = v.to_compact_json();
        let min = 64 * 1024;
        let mut pieces = CompactPieces::new(&v);
        let mut out = String::new();
        loop {
            let mut piece = String::new();
            let more = pieces.fill(&mut piece, min);
            assert!(
                piece.len() <= min + 6 * (TEXT_SLICE_BYTES + 4),
                "{}",
                piece.len()
            );
            out.push_str(&piece);
            if !more {
                break;
            }
        }
        assert_eq!(out, whole);
    }

    #[test]
    fn numbers_keep_their_literal() {
        let v = parse("[12345678901234567890123, 1.10, -0, 1e400]").unwrap();
        assert_eq!(
            v.to_compact_json(),
            "[12345678901234567890123,1.10,-0,1e400]"
        );
        let Value::Array(items) = &v else { panic!() };
        let Value::Number(n) = &items[3] else {
            panic!()
        };
        assert!(n.as_f64().is_infinite());
        assert_eq!(items[1], Value::Number(Number::from_f64(1.1).unwrap()));
    }

    #[test]
    fn serde_serialization_is_lossless() {
        let v = parse(r#"{"n":1.50,"big":123456789012345678901,"s":"é\n"}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"n":1.50,"big":123456789012345678901,"s":"é\n"}"#
        );
    }

    #[test]
    fn from_f64_round_trips() {
        for f in [
            0.0,
            1.0,
            -2.5,
            1e21,
            1.5e-7,
            123456789.125,
            5e-324,
            1.7976931348623157e308,
        ] {
            let n = Number::from_f64(f).unwrap();
            assert_eq!(n.literal().parse::<f64>().unwrap(), f, "{}", n.literal());
            assert_eq!(parse(n.literal()).unwrap(), Value::Number(n));
        }
        assert!(Number::from_f64(f64::NAN).is_none());
    }
}
