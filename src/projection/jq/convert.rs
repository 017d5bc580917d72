//! Conversion between the crate's [`Value`] and jaq-json's `Val`.
//!
//! Numbers go in through jaq-json's own number reader, so integers (however large) and decimal
//! literals keep their exact text, as when jaq reads JSON; they come back by their printed form.
//! Objects go in in JavaScript key order and jaq keeps insertion order; objects coming back are
//! rebuilt with [`Map::insert`], so integer-like keys move first as `JSON.parse` would put them.
//! Sizes (`projection::meter`) are measured on the way in, and the way out builds nothing
//! larger than the caller allows.
//!
//! The way in is the cost of every jq call on a large body, so it allocates little: the bytes of
//! short strings are copied into shared blocks that each string's `Bytes` points into, every
//! object key is made once per distinct key (keys are shared since parsing, `value::Key`) and
//! then shared, objects are allocated at their final size, and sizes are added up as the value
//! is built rather than found by a second walk.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::rc::Rc;

use bytes::{Bytes, BytesMut};
use jaq_json::{Map as JMap, Val};

use crate::projection::meter;
use crate::value::{Map, Number, Value};

use super::metered::M;
use super::size::{self, AddressHasher};

/// Our value as a metered jaq value, or `None` when it is nested deeper than `max_depth`. Must
/// run inside a meter's run, which remembers the sizes of its large parts.
pub(crate) fn to_metered(v: &Value, max_depth: usize) -> Option<M> {
    let mut depth = 0;
    let mut into = ToJaq::default();
    let (v, total) = into.val(v, max_depth, &mut depth)?;
    let total = if total <= meter::max_value_bytes() {
        // What `size::of` would have found, charged and remembered walking the value.
        for (part, size) in &into.parts {
            size::remember(part, *size);
        }
        // As the walk, which charges nothing for a scalar.
        if into.containers > 0 {
            meter::charge_items(into.containers);
        }
        total
    } else {
        // Too large: the walk stops where the bound is passed, and charges and remembers what
        // it walked up to there.
        drop(into);
        size::of(&v)
    };
    M::built(v, depth, total).ok()
}

/// Strings up to this many bytes share a block; longer ones get their own allocation, so a
/// block wastes at most this much at its end.
const SHARED_MAX: usize = 1 << 10;
/// The size of a block of short strings.
const BLOCK: usize = 32 << 10;

/// The state of one conversion into jaq's values.
#[derive(Default)]
struct ToJaq {
    /// Where the next short string's bytes go.
    block: BytesMut,
    /// Every distinct key met, by the address of its text (alive while the value is borrowed).
    keys: HashMap<usize, Val, BuildHasherDefault<AddressHasher>>,
    /// Containers and their sizes that the size walk would remember, in its order.
    parts: Vec<(Val, u64)>,
    /// Containers built, which the size walk would have charged for.
    containers: u64,
}

impl ToJaq {
    fn bytes(&mut self, s: &str) -> Bytes {
        if s.len() > SHARED_MAX {
            return Bytes::copy_from_slice(s.as_bytes());
        }
        if self.block.capacity() - self.block.len() < s.len() {
            self.block = BytesMut::with_capacity(BLOCK);
        }
        self.block.extend_from_slice(s.as_bytes());
        self.block.split().freeze()
    }

    fn key(&mut self, k: &str) -> Val {
        if let Some(v) = self.keys.get(&(k.as_ptr() as usize)) {
            return v.clone();
        }
        let v = Val::utf8_str(self.bytes(k));
        self.keys.insert(k.as_ptr() as usize, v.clone());
        v
    }

    /// `v` as a jaq value and its size; `depth` receives its nesting depth.
    fn val(&mut self, v: &Value, max_depth: usize, depth: &mut u32) -> Option<(Val, u64)> {
        let limit = max_depth.checked_sub(1)?;
        let mut inner = 0;
        let (out, size) = match v {
            Value::Null => (Val::Null, 4),
            Value::Bool(b) => (Val::Bool(*b), if *b { 4 } else { 5 }),
            Value::Number(n) => {
                let n = jaq_json::read::parse_single_num(n.literal().as_bytes())
                    .map(Val::Num)
                    .unwrap_or_else(|| Val::from(n.as_f64()));
                let size = size::scalar_size(&n).unwrap_or_default();
                (n, size)
            }
            Value::String(s) => (Val::utf8_str(self.bytes(s)), s.len() as u64 + 2),
            Value::Array(items) => {
                let mut entries = 0u64;
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let (item, size) = self.val(item, limit, &mut inner)?;
                    entries = entries.saturating_add(size);
                    out.push(item);
                }
                self.container(Val::Arr(Rc::new(out)), size::array(items.len(), entries))
            }
            Value::Object(map) => {
                let mut entries = 0u64;
                let mut out = JMap::with_capacity_and_hasher(map.len(), Default::default());
                for (k, v) in map.iter() {
                    let (v, size) = self.val(v, limit, &mut inner)?;
                    entries = entries
                        .saturating_add(size)
                        .saturating_add(k.len() as u64 + 2);
                    let old = out.insert(self.key(k), v);
                    debug_assert!(old.is_none(), "an object's keys are distinct");
                }
                self.container(Val::obj(out), size::object(map.len(), entries))
            }
        };
        if matches!(v, Value::Array(_) | Value::Object(_)) {
            *depth = (*depth).max(inner + 1);
        }
        Some((out, size))
    }

    fn container(&mut self, v: Val, size: u64) -> (Val, u64) {
        self.containers += 1;
        if size::remembered(size) {
            self.parts.push((v.clone(), size));
        }
        (v, size)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::meter::Limits;
    use crate::value::parse;

    /// A page of items repeating the same keys, some strings past [`SHARED_MAX`].
    fn page() -> Value {
        let long = "l".repeat(SHARED_MAX + 1);
        let items: Vec<String> = (0..40)
            .map(|i| {
                format!(r#"{{"id":{i},"name":"n{i}","tags":["a","b"],"x":1.50,"long":"{long}"}}"#)
            })
            .collect();
        parse(&format!(r#"{{"items":[{}],"total":40}}"#, items.join(","))).unwrap()
    }

    fn bytes_of(v: &Val) -> &Bytes {
        match v {
            Val::TStr(b) => b,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_object_shares_one_string_per_distinct_key() {
        let _run = meter::start(&Limits::default());
        let _memo = size::Scope::new();
        let m = to_metered(&page(), 64).unwrap();
        let Val::Obj(top) = &m.v else { panic!() };
        let Val::Arr(items) = &top[&Val::from("items".to_owned())] else {
            panic!()
        };
        let keys = |v: &Val| match v {
            Val::Obj(o) => o.keys().map(|k| bytes_of(k).as_ptr()).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(keys(&items[0]).len(), 5);
        assert!(items.iter().all(|item| keys(item) == keys(&items[0])));
    }

    #[test]
    fn short_strings_share_blocks_and_long_ones_do_not() {
        let _run = meter::start(&Limits::default());
        let _memo = size::Scope::new();
        let long = "y".repeat(SHARED_MAX + 1);
        let v = parse(&format!(r#"["ab","cde","{long}","f"]"#)).unwrap();
        let m = to_metered(&v, 8).unwrap();
        let Val::Arr(items) = &m.v else { panic!() };
        let b: Vec<&Bytes> = items.iter().map(bytes_of).collect();
        assert_eq!(b[0].as_ref(), b"ab");
        assert_eq!(b[1].as_ptr(), b[0].as_ptr().wrapping_add(2));
        assert_eq!(b[2].as_ref(), long.as_bytes());
        assert_eq!(b[3].as_ptr(), b[1].as_ptr().wrapping_add(3));
    }

    /// The size, the fuel and the memo a conversion leaves are those of walking the converted
    /// value afresh (`size::of`), under the value bound and over it.
    #[test]
    fn sizes_and_fuel_are_those_of_the_walk() {
        let v = page();
        for max_value_bytes in [u64::MAX, 2_000, 50, 3] {
            let limits = Limits {
                max_value_bytes,
                ..Limits::default()
            };
            let (converted, spent) = {
                let _run = meter::start(&limits);
                let _memo = size::Scope::new();
                let before = meter::fuel_left();
                let m = to_metered(&v, 64);
                let size = m.as_ref().map(|m| (m.size(), size::of(&m.v)));
                (size, before - meter::fuel_left())
            };
            let whole = {
                let _run = meter::start(&Limits::default());
                let _memo = size::Scope::new();
                to_metered(&v, 64).unwrap().v
            };
            let _run = meter::start(&limits);
            let _memo = size::Scope::new();
            let before = meter::fuel_left();
            let walked = size::of(&whole);
            let admitted = meter::admit(walked);
            let walk_spent = before - meter::fuel_left();
            match converted {
                Some((size, again)) => {
                    assert!(admitted, "{max_value_bytes}");
                    assert_eq!(size, walked);
                    assert_eq!(again, walked);
                    // The second `of` found the top remembered: one unit, no node walked.
                    assert_eq!(spent, walk_spent + 1, "{max_value_bytes}");
                }
                None => {
                    assert!(!admitted, "{max_value_bytes}");
                    assert_eq!(spent, walk_spent, "{max_value_bytes}");
                }
            }
        }
        // A scalar input is charged nothing, as the walk charges nothing for one.
        let _run = meter::start(&Limits::default());
        let _memo = size::Scope::new();
        let before = meter::fuel_left();
        assert_eq!(to_metered(&Value::from("abc"), 1).unwrap().size(), 5);
        assert_eq!(before, meter::fuel_left());
    }

    #[test]
    fn depth_is_bounded_and_reported() {
        let _run = meter::start(&Limits::default());
        let _memo = size::Scope::new();
        let v = parse(r#"{"a":[[1]],"b":2}"#).unwrap();
        assert!(to_metered(&v, 3).is_none());
        assert_eq!(to_metered(&v, 4).unwrap().depth, 3);
    }
}
