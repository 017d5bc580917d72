//! Helpers shared by the fuzz targets: splitting one fuzz input into fields, the value oracle
//! against serde_json, and JavaScript's view of a value after `JSON.stringify`.

use devtools_mcp_edge::projection::Limits;
use devtools_mcp_edge::value::{Map, Value};
use serde::Deserialize;
use serde_json::Value as Json;

/// Splits `data` at the first newline: (first line, rest). Both halves are text the fuzzer
/// mutates independently, which keeps seeds readable (`expression\n{json}`).
pub fn split_line(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// `value` as `JSON.stringify` then `JSON.parse` would give it back: numbers the double range
/// cannot hold (the parser reads `1e400` as infinity) become `null`, as JavaScript prints them.
pub fn js_round_trip(value: &Value) -> Value {
    match value {
        Value::Number(n) if !n.as_f64().is_finite() => Value::Null,
        Value::Array(items) => Value::Array(items.iter().map(js_round_trip).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), js_round_trip(v)))
                .collect::<Map>(),
        ),
        other => other.clone(),
    }
}

/// Where `ours` and serde_json's `theirs` differ, or `None` when they are the same JSON value:
/// same kinds, numbers equal as doubles, strings equal, arrays equal item by item, objects with
/// the same keys in the same order.
pub fn differs_from_serde(ours: &Value, theirs: &Json) -> Option<String> {
    match (ours, theirs) {
        (Value::Null, Json::Null) => None,
        (Value::Bool(a), Json::Bool(b)) if a == b => None,
        (Value::Number(a), Json::Number(b)) => {
            let b = b.as_f64().unwrap_or(f64::NAN);
            (a.as_f64() != b).then(|| format!("number {} != {b}", a.literal()))
        }
        (Value::String(a), Json::String(b)) if a == b => None,
        (Value::Array(a), Json::Array(b)) => {
            if a.len() != b.len() {
                return Some(format!("array length {} != {}", a.len(), b.len()));
            }
            a.iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| differs_from_serde(x, y).map(|d| format!("[{i}] {d}")))
        }
        (Value::Object(a), Json::Object(b)) => {
            if a.len() != b.len() {
                return Some(format!("object size {} != {}", a.len(), b.len()));
            }
            a.iter().zip(b).find_map(|((ka, va), (kb, vb))| {
                if ka != kb {
                    Some(format!("key {ka:?} != {kb:?}"))
                } else {
                    differs_from_serde(va, vb).map(|d| format!(".{ka} {d}"))
                }
            })
        }
        (a, b) => Some(format!("{} != {b}", a.to_compact_json())),
    }
}

/// True when a line of the server's log reports a panic caught by `Server::handle` (on wasm32
/// the same panic would have aborted the isolate, so the fuzzer must treat it as a crash).
pub fn is_panic_line(line: &str) -> bool {
    serde_json::from_str::<Json>(line)
        .ok()
        .and_then(|j| j.get("event").and_then(Json::as_str).map(|e| e == "panic"))
        .unwrap_or(false)
}

/// serde_json's reading of `text`, without its 128-level recursion limit (our parser allows
/// [`devtools_mcp_edge::value::MAX_DEPTH`] levels, and the oracle must read all of them).
pub fn serde_parse(text: &str) -> Result<Json, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = Json::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// The projection targets' budget, a fiftieth of the default, so that a program spending all of
/// it still runs fast enough for the fuzzer to try many.
pub fn projection_limits() -> Limits {
    Limits {
        fuel: 200_000,
        max_outputs: 2_000,
        max_output_bytes: 1 << 20,
        max_value_bytes: 1 << 20,
        max_memory_bytes: 16 << 20,
    }
}
