//! Conversion between the crate's [`Value`] and jaq-json's `Val`.
//!
//! Numbers go in through jaq-json's own number reader, so integers (however large) and decimal
//! literals keep their exact text, as when jaq reads JSON; they come back by their printed form.
//! Objects go in in JavaScript key order and jaq keeps insertion order; objects coming back are
//! rebuilt with [`Map::insert`], so integer-like keys move first as `JSON.parse` would put them.
//! Sizes (`projection::meter`) are measured on the way in, and the way out builds nothing
//! larger than the caller allows.

use std::rc::Rc;

use jaq_json::{Map as JMap, Val};

use crate::value::{Map, Number, Value};

use super::metered::M;
use super::size;

/// Our value as a metered jaq value, or `None` when it is nested deeper than `max_depth`. Must
/// run inside a meter's run, which remembers the sizes of its large parts.
pub(crate) fn to_metered(v: &Value, max_depth: usize) -> Option<M> {
    let mut depth = 0;
    let v = to_jaq(v, max_depth, &mut depth)?;
    let total = size::of(&v);
    M::built(v, depth, total).ok()
}

/// Our value as a jaq value; `depth` receives its nesting depth.
fn to_jaq(v: &Value, max_depth: usize, depth: &mut u32) -> Option<Val> {
    let limit = max_depth.checked_sub(1)?;
    let mut inner = 0;
    let out = match v {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Number(n) => jaq_json::read::parse_single_num(n.literal().as_bytes())
            .map(Val::Num)
            .unwrap_or_else(|| Val::from(n.as_f64())),
        Value::String(s) => Val::utf8_str(s.clone().into_bytes()),
        Value::Array(items) => Val::Arr(Rc::new(
            items
                .iter()
                .map(|v| to_jaq(v, limit, &mut inner))
                .collect::<Option<_>>()?,
        )),
        Value::Object(map) => {
            let mut out = JMap::default();
            for (k, v) in map.iter() {
                out.insert(
                    Val::utf8_str(k.as_bytes().to_vec()),
                    to_jaq(v, limit, &mut inner)?,
                );
            }
            Val::obj(out)
        }
    };
    if matches!(v, Value::Array(_) | Value::Object(_)) {
        *depth = (*depth).max(inner + 1);
    }
    Some(out)
}

/// A jaq value as ours, or `None` when it is nested deeper than `max_depth`. Byte strings and
/// invalid UTF-8 become text with U+FFFD; NaN and the infinities, which JSON cannot hold,
/// become null.
pub(crate) fn from_jaq(v: &Val, max_depth: usize) -> Option<Value> {
    let depth = max_depth.checked_sub(1)?;
    Some(match v {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Num(n) => Number::from_literal(&n.to_string())
            .or_else(|| n.to_string().parse::<f64>().ok().and_then(Number::from_f64))
            .map_or(Value::Null, Value::Number),
        Val::TStr(b) | Val::BStr(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        Val::Arr(items) => Value::Array(
            items
                .iter()
                .map(|v| from_jaq(v, depth))
                .collect::<Option<_>>()?,
        ),
        Val::Obj(map) => {
            let mut out = Map::new();
            for (k, v) in map.iter() {
                let key = match k {
                    Val::TStr(b) | Val::BStr(b) => String::from_utf8_lossy(b).into_owned(),
                    other => other.to_string(),
                };
                out.insert(key.into(), from_jaq(v, depth)?);
            }
            Value::Object(out)
        }
    })
}
