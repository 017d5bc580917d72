//! Structured output for code-mode harnesses: the `{data, ...}` envelopes the six
//! schema tools put in `structuredContent`, the size bound that turns an oversized value into
//! `data: null` plus `incomplete`, their output schemas ([`schema`]), and the server-wide rule
//! `tools/call` applies to every result of a schema tool ([`enforce`]).
//!
//! `MCP_STRUCTURED_OUTPUT` is server-wide, not per call: once a tool advertises an output schema,
//! every successful result must carry a conforming value (the SDK clients check), and with the
//! flag off nothing here may change a byte of `tools/list` or of a result.

pub(crate) mod schema;

use crate::mcp::CallToolResult;
use crate::value::{Map, Number, Value};

pub use schema::Contract;

/// Name of the member holding the upstream body after projection.
pub(crate) const DATA: &str = "data";
/// Name of the member saying `data` is not the whole result.
pub(crate) const INCOMPLETE: &str = "incomplete";

/// Why `data` is not the whole result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// The value was larger than `MCP_STRUCTURED_MAX_BYTES`; it is in an artifact.
    Size,
    /// A schema tool answered without a value: a server defect, never expected.
    Unavailable,
}

impl Reason {
    /// The wire name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Reason::Size => "size",
            Reason::Unavailable => "unavailable",
        }
    }
}

/// The `incomplete` member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Incomplete {
    /// Why.
    pub(crate) reason: Reason,
    /// Length of the whole value's compact JSON in UTF-8 bytes (0 when unavailable).
    pub bytes: u64,
    /// The bound in force (0 when unavailable).
    pub(crate) limit_bytes: u64,
    /// The artifact holding the whole value; `None` when it could not be saved.
    pub(crate) artifact_id: Option<String>,
}

impl Incomplete {
    /// The marker of a result a schema tool failed to give a value for.
    pub(crate) fn unavailable() -> Incomplete {
        Incomplete {
            reason: Reason::Unavailable,
            bytes: 0,
            limit_bytes: 0,
            artifact_id: None,
        }
    }

    /// The marker of an oversized value of `bytes` bytes against `limit_bytes`.
    pub(crate) fn size(
        bytes: usize,
        limit_bytes: usize,
        artifact_id: Option<String>,
    ) -> Incomplete {
        Incomplete {
            reason: Reason::Size,
            bytes: bytes as u64,
            limit_bytes: limit_bytes as u64,
            artifact_id,
        }
    }

    /// `{reason, bytes, limitBytes, artifactId}`.
    pub(crate) fn to_value(&self) -> Value {
        let integer =
            |n: u64| Value::Number(Number::from_i64(i64::try_from(n).unwrap_or(i64::MAX)));
        let mut map = Map::new();
        map.insert("reason".into(), Value::from(self.reason.as_str()));
        map.insert("bytes".into(), integer(self.bytes));
        map.insert("limitBytes".into(), integer(self.limit_bytes));
        map.insert(
            "artifactId".into(),
            self.artifact_id.clone().map_or(Value::Null, Value::String),
        );
        Value::Object(map)
    }
}

/// How the value a tool's text is rendered from relates to its structured envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Envelope {
    /// The text is rendered from the envelope itself, `{data, <metadata>}` (the GitHub lists
    /// and `circleci_get`, whose text has always shown `nextPage` and `cache`).
    Whole,
    /// The text is the bare body; the envelope is `{"data": <body>}` (the Atlassian reads, whose
    /// text matches the reference servers).
    DataOnly,
}

impl Envelope {
    /// The envelope of `rendered` as compact, lossless JSON: what `structuredContent` would be,
    /// byte for byte what an artifact holds.
    ///
    /// Written once into a buffer of the exact size: a large value's JSON would otherwise grow
    /// by doubling (up to twice its size at once) and, for a data-only envelope, be copied.
    pub fn to_json(self, rendered: &Value) -> String {
        let (open, close) = self.wrapping();
        let mut out = String::with_capacity(self.json_len(rendered));
        out.push_str(open);
        rendered.write_compact_json(&mut out);
        out.push_str(close);
        out
    }

    /// The length of [`Envelope::to_json`] of `rendered`, without writing it.
    pub(crate) fn json_len(self, rendered: &Value) -> usize {
        compact_len(rendered) + self.overhead()
    }

    /// What [`Envelope::to_json`] writes before and after the value's compact JSON.
    pub(crate) fn wrapping(self) -> (&'static str, &'static str) {
        match self {
            Envelope::Whole => ("", ""),
            Envelope::DataOnly => (r#"{"data":"#, "}"),
        }
    }

    /// The bytes [`Envelope::to_json`] adds around the value.
    fn overhead(self) -> usize {
        let (open, close) = self.wrapping();
        open.len() + close.len()
    }

    /// True when [`Envelope::to_json`] of `rendered` is at most `limit` bytes. Counts without
    /// serializing and stops as soon as the count passes `limit`.
    pub fn fits(self, rendered: &Value, limit: usize) -> bool {
        let Some(budget) = limit.checked_sub(self.overhead()) else {
            return false;
        };
        let mut counter = Counter { used: 0, budget };
        counter.value(rendered)
    }

    /// The `structuredContent` value for `rendered`.
    pub(crate) fn into_value(self, rendered: Value) -> Value {
        match self {
            Envelope::Whole => rendered,
            Envelope::DataOnly => {
                let mut map = Map::new();
                map.insert(DATA.into(), rendered);
                Value::Object(map)
            }
        }
    }

    /// What [`Envelope::into_incomplete`] keeps of `rendered`, copied, with `data` already null:
    /// `into_incomplete` of it gives what `into_incomplete` of `rendered` gives, so `rendered`
    /// itself can go elsewhere (to an artifact written after the reply).
    pub(crate) fn incomplete_part(self, rendered: &Value) -> Value {
        match (self, rendered) {
            (Envelope::Whole, Value::Object(map)) => {
                Value::Object(Map::from_entries(map.iter().map(|(k, v)| {
                    let kept = if k == DATA { Value::Null } else { v.clone() };
                    (k.clone(), kept)
                })))
            }
            _ => Value::Null,
        }
    }

    /// The `structuredContent` value for `rendered` when its data is not given: `data` is null,
    /// the metadata is kept, and `incomplete` follows.
    pub(crate) fn into_incomplete(self, rendered: Value, incomplete: &Incomplete) -> Value {
        let mut map = match (self, rendered) {
            (Envelope::Whole, Value::Object(mut map)) => {
                if let Some(data) = map.get_mut(DATA) {
                    *data = Value::Null;
                } else {
                    map.insert(DATA.into(), Value::Null);
                }
                map
            }
            // A whole envelope is always an object; anything else keeps no metadata.
            _ => Map::from_entries([(DATA.to_owned(), Value::Null)]),
        };
        map.insert(INCOMPLETE.into(), incomplete.to_value());
        Value::Object(map)
    }
}

/// The length of [`Value::to_compact_json`] of `value`, in bytes, without serializing it.
pub fn compact_len(value: &Value) -> usize {
    let mut counter = Counter {
        used: 0,
        budget: usize::MAX,
    };
    counter.value(value);
    counter.used
}

/// Counts compact-JSON bytes (as `Value::to_compact_json` writes them) against a budget.
struct Counter {
    used: usize,
    budget: usize,
}

impl Counter {
    /// Adds `n`; false once the count is past the budget.
    fn add(&mut self, n: usize) -> bool {
        self.used = self.used.saturating_add(n);
        self.used <= self.budget
    }

    fn value(&mut self, value: &Value) -> bool {
        match value {
            Value::Null => self.add(4),
            Value::Bool(b) => self.add(if *b { 4 } else { 5 }),
            Value::Number(n) => self.add(n.literal().len()),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                let commas = items.len().saturating_sub(1);
                self.add(2 + commas) && items.iter().all(|item| self.value(item))
            }
            Value::Object(map) => {
                let commas = map.len().saturating_sub(1);
                self.add(2 + commas)
                    && map
                        .iter()
                        .all(|(k, v)| self.string(k) && self.add(1) && self.value(v))
            }
        }
    }

    /// A string literal with `write_json_string`'s escapes.
    fn string(&mut self, s: &str) -> bool {
        self.add(crate::js::json_string_len(s))
    }
}

/// Replaces numbers outside the double range (`1e400`) with null, as `JSON.stringify` writes
/// `Infinity` and as the text shows them: the JSON-RPC layer cannot carry them, and an envelope
/// must serialize.
pub fn null_non_finite(value: &mut Value) {
    match value {
        Value::Number(n) if !n.as_f64().is_finite() => *value = Value::Null,
        Value::Array(items) => items.iter_mut().for_each(null_non_finite),
        Value::Object(map) => map.values_mut().for_each(null_non_finite),
        _ => {}
    }
}

/// The server-wide rule, applied as a `tools/call` finishes to every result of a tool with an
/// output schema: with the flag off no structured content leaves the server; error results never carry it;
/// a successful result without it (a server defect) gets `{data: null, incomplete: {reason:
/// "unavailable", ...}}` so it still conforms to the advertised schema.
pub(crate) fn enforce(
    mut result: CallToolResult,
    has_output_schema: bool,
    structured_output: bool,
) -> CallToolResult {
    if !has_output_schema {
        return result;
    }
    if !structured_output || result.is_error {
        result.structured_content = None;
    } else if result.structured_content.is_none() {
        result.structured_content = Some(unavailable());
    }
    result
}

/// The value a schema tool's successful result gets when it has none.
pub(crate) fn unavailable() -> Value {
    Envelope::DataOnly.into_incomplete(Value::Null, &Incomplete::unavailable())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        crate::value::parse(text).unwrap()
    }

    #[test]
    fn counting_agrees_with_serializing() {
        let samples = [
            "null",
            "true",
            "false",
            "0",
            "-1.50e+10",
            r#""""#,
            r#""a\"b\\c\n\r\t\b\f\u0001\u001f é 😀 \/""#,
            r#"[]"#,
            r#"{}"#,
            r#"[1,[2,[3,{}]],"x",null]"#,
            r#"{"b":1,"2":[true,false],"a":{"nested":{"k":"v"}},"":""}"#,
        ];
        for text in samples {
            let value = parse(text);
            assert_eq!(compact_len(&value), value.to_compact_json().len(), "{text}");
            for envelope in [Envelope::Whole, Envelope::DataOnly] {
                let json = envelope.to_json(&value);
                // Presized exactly: never grown, never over-allocated.
                assert_eq!(json.capacity(), json.len(), "{text} {envelope:?}");
                let len = json.len();
                assert!(envelope.fits(&value, len), "{text} {envelope:?} at {len}");
                assert!(
                    !envelope.fits(&value, len - 1),
                    "{text} {envelope:?} below {len}"
                );
            }
        }
    }

    #[test]
    fn envelopes() {
        let whole = parse(r#"{"data":{"a":1.0},"nextPage":2}"#);
        assert_eq!(
            Envelope::Whole.to_json(&whole),
            r#"{"data":{"a":1.0},"nextPage":2}"#
        );
        assert_eq!(
            Envelope::DataOnly.to_json(&parse(r#""diff --git""#)),
            r#"{"data":"diff --git"}"#
        );
        let incomplete = Incomplete::size(300_000, 262_144, Some("id-1".into()));
        assert_eq!(
            Envelope::Whole
                .into_incomplete(whole, &incomplete)
                .to_compact_json(),
            r#"{"data":null,"nextPage":2,"incomplete":{"reason":"size","bytes":300000,"limitBytes":262144,"artifactId":"id-1"}}"#
        );
        assert_eq!(
            Envelope::DataOnly
                .into_incomplete(parse("[1]"), &Incomplete::size(10, 5, None))
                .to_compact_json(),
            r#"{"data":null,"incomplete":{"reason":"size","bytes":10,"limitBytes":5,"artifactId":null}}"#
        );
        assert_eq!(
            Envelope::DataOnly.into_value(parse("{}")).to_compact_json(),
            r#"{"data":{}}"#
        );
    }

    #[test]
    fn enforcement_follows_the_flag_and_the_schema() {
        let (on, off) = (true, false);
        let (schema_tool, plain_tool) = (true, false);
        let with = CallToolResult::text("x").with_structured(Value::from("s"));
        let bare = CallToolResult::text("x");
        let error = CallToolResult {
            is_error: true,
            ..with.clone()
        };
        // Tools without a schema are never touched.
        assert_eq!(enforce(with.clone(), plain_tool, off), with);
        assert_eq!(enforce(bare.clone(), plain_tool, on), bare);
        // Flag off: a schema tool's structured content is dropped.
        assert_eq!(enforce(with.clone(), schema_tool, off), bare);
        // Flag on: kept; errors lose it; a missing value is reported as unavailable.
        assert_eq!(enforce(with.clone(), schema_tool, on), with);
        assert_eq!(enforce(error, schema_tool, on).structured_content, None);
        let guarded = enforce(bare, schema_tool, on).structured_content.unwrap();
        assert_eq!(
            guarded.to_compact_json(),
            r#"{"data":null,"incomplete":{"reason":"unavailable","bytes":0,"limitBytes":0,"artifactId":null}}"#
        );
    }
}
