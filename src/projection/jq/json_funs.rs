//! jaq-json's own natives (`length`, `contains`, `has`, `indices`, `bsearch`, `tojson`,
//! `fromjson`, `tobytes`) for the metered value type, with jaq-json's semantics. jaq-json
//! implements them only for its own `Val`.

use std::rc::Rc;

use jaq_core::native::{bome, v, Fun};
use jaq_core::{Error, Native, ValR};
use jaq_json::Val;
use memchr::memmem::Finder;

use super::metered::M;
use super::{convert, size, Budgeted, MAX_INPUT_DEPTH};
use crate::projection::meter;

/// Positions found by `indices` between two looks at the heap.
const FOUND_PER_LOOK: usize = 4096;

/// Heap bytes one JSON value may take once parsed and converted (our value, its entry, jaq's
/// value), to refuse before parsing a text that could not fit.
const BYTES_PER_PARSED_VALUE: usize = 96;

fn length(x: &M) -> ValR<M> {
    Ok(M::leaf(match &x.v {
        Val::Null => Val::from(0usize),
        Val::Num(_) => Val::from(jaq_std::ValT::as_f64(&x.v).unwrap_or(0.0).abs()),
        Val::TStr(s) => {
            meter::charge_items(s.len() as u64);
            Val::from(chars(s))
        }
        Val::BStr(b) => Val::from(b.len()),
        Val::Arr(a) => Val::from(a.len()),
        Val::Obj(o) => Val::from(o.len()),
        Val::Bool(_) => return Err(Error::str(format_args!("{x} has no length"))),
    }))
}

/// The characters of UTF-8 text: the bytes that do not continue a character, which counts an
/// invalid byte as one character, as the lossy decoding jaq uses does.
fn chars(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c & 0xC0 != 0x80).count()
}

/// jq's containment: substrings, every element of `r` in some element of `l`, every field of
/// `r` contained in `l`'s; anything else by equality. Paid for as it goes (a substring search
/// by both lengths, one unit per pair of elements tried), and false once the run has ended.
fn contains(l: &Val, r: &Val) -> bool {
    if meter::exhausted() {
        return false;
    }
    match (l, r) {
        (Val::TStr(a), Val::TStr(b)) | (Val::BStr(a), Val::BStr(b)) => {
            meter::charge_items((a.len() + b.len()) as u64)
                && (b.is_empty() || Finder::new(&b[..]).find(a).is_some())
        }
        (Val::Arr(a), Val::Arr(b)) => b
            .iter()
            .all(|y| a.iter().any(|x| meter::charge(1) && contains(x, y))),
        (Val::Obj(a), Val::Obj(b)) => b.iter().all(|(k, y)| {
            meter::charge_items(size::scalar_size(k).unwrap_or(0))
                && a.get(k).is_some_and(|x| contains(x, y))
        }),
        _ => {
            // Scalars of one kind, or values of two kinds, which compare at once.
            let walk = |v: &Val| size::scalar_size(v).unwrap_or(0);
            meter::charge_items(walk(l).min(walk(r))) && l == r
        }
    }
}

fn has(x: &M, k: &M) -> ValR<M> {
    Ok(M::from(match (&x.v, &k.v) {
        (Val::Obj(o), key) => {
            k.charge_walk();
            o.contains_key(key)
        }
        (Val::Arr(a), i) => match jaq_std::ValT::as_isize(i) {
            Some(i) => i >= 0 && (i as usize) < a.len(),
            None => return Err(Error::index(x.clone(), k.clone())),
        },
        _ => return Err(Error::index(x.clone(), k.clone())),
    }))
}

/// Every start of `needle` in `text`, overlapping ones too: a linear search from each start
/// found on, paid for by the text's length and then by the needle's length per start found.
fn find_all(text: &[u8], needle: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    if !meter::charge_items(text.len() as u64) {
        return found;
    }
    let finder = Finder::new(needle);
    let mut from = 0;
    while let Some(i) = text.get(from..).and_then(|rest| finder.find(rest)) {
        if !meter::charge_items(needle.len() as u64) || !meter::room_for_one_more(&found) {
            break;
        }
        found.push(from + i);
        from += i + 1;
        if found.len() % FOUND_PER_LOOK == 0 && !meter::within_memory() {
            break;
        }
    }
    found
}

/// The start of every window of `a` equal to `b`, paid for per window by `b`'s size (comparing
/// a window walks no more than `b`).
fn windows_equal(a: &[Val], b: &[Val], b_size: u64) -> Vec<usize> {
    let mut found = Vec::new();
    for (i, w) in a.windows(b.len()).enumerate() {
        if !meter::charge_items(b_size) || !meter::room_for_one_more(&found) {
            break;
        }
        if w == b {
            found.push(i);
        }
    }
    found
}

fn indices(x: &M, y: &M) -> ValR<M> {
    let idx: Vec<usize> = match (&x.v, &y.v) {
        (Val::TStr(a), Val::TStr(b)) | (Val::BStr(a), Val::BStr(b)) if b.is_empty() => Vec::new(),
        (Val::TStr(a), Val::TStr(b)) => {
            // Character positions, as jaq counts them: the characters before each start.
            let mut counted = (0, 0);
            find_all(a, b)
                .into_iter()
                .map(|at| {
                    counted = (at, counted.1 + chars(&a[counted.0..at]));
                    counted.1
                })
                .collect()
        }
        (Val::BStr(a), Val::BStr(b)) => find_all(a, b),
        (Val::Arr(_), Val::Arr(b)) if b.is_empty() => Vec::new(),
        (Val::Arr(a), Val::Arr(b)) => windows_equal(a, b, y.size()),
        (Val::Arr(a), v) => windows_equal(a, std::slice::from_ref(v), y.size()),
        (Val::Null, _) | (_, Val::Null) => return Ok(M::leaf(Val::Null)),
        _ => return Err(Error::index(x.clone(), y.clone())),
    };
    if !meter::reserve(idx.len().saturating_mul(std::mem::size_of::<Val>())) {
        return Err(Error::str(meter::reason()));
    }
    M::measured(
        Val::Arr(Rc::new(idx.into_iter().map(Val::from).collect())),
        1,
    )
}

fn bsearch(x: &M, target: &M) -> ValR<M> {
    match &x.v {
        Val::Arr(a) => {
            // Each of the halvings compares with the target, walking it at most.
            let steps = u64::from(usize::BITS - a.len().leading_zeros()) + 1;
            meter::charge_items(target.size().saturating_mul(steps));
            let i = match a.binary_search(&target.v) {
                Ok(i) => i as isize,
                Err(i) => -1 - i as isize,
            };
            Ok(M::from(i))
        }
        _ => Err(Error::typ(x.clone(), "array")),
    }
}

fn fromjson(x: &M) -> ValR<M> {
    // Our parser bounds nesting, which jaq-json's reader does not.
    let text = jaq_std::ValT::as_utf8_bytes(&x.v).ok_or_else(|| Error::typ(x.clone(), "string"))?;
    meter::charge_items(text.len() as u64);
    // Parsing builds every value before the heap can be looked at again.
    let room = meter::memory_left() / BYTES_PER_PARSED_VALUE;
    if crate::jsonrpc::has_more_values_than(text, room) {
        meter::exhaust(format!(
            "fromjson: more JSON values than fit in the memory left ({room})"
        ));
        return Err(Error::str(meter::reason()));
    }
    let text = String::from_utf8_lossy(text);
    let value = crate::value::parse(&text)
        .map_err(|e| Error::str(format_args!("cannot parse {x} as JSON: {e}")))?;
    convert::to_metered(&value, MAX_INPUT_DEPTH)
        .ok_or_else(|| Error::str(format_args!("JSON in {x} is nested too deeply")))
}

fn tobytes(x: &M) -> ValR<M> {
    match &x.v {
        Val::TStr(b) | Val::BStr(b) => Ok(M::leaf(Val::byte_str(b.as_ref().clone()))),
        _ => Err(Error::str(format_args!("cannot convert {x} to bytes"))),
    }
}

/// The natives above, under jaq-json's names and arities.
pub(crate) fn natives() -> impl Iterator<Item = Fun<Budgeted>> {
    let list: [Fun<Budgeted>; 8] = [
        ("length", v(0), Native::new(|cv| bome(length(&cv.1)))),
        (
            "tojson",
            v(0),
            // Printing charges by size before it walks the value (`M`'s `Display`).
            Native::new(|cv| bome(Ok(M::leaf(Val::from(cv.1.to_string()))))),
        ),
        ("fromjson", v(0), Native::new(|cv| bome(fromjson(&cv.1)))),
        ("tobytes", v(0), Native::new(|cv| bome(tobytes(&cv.1)))),
        (
            "contains",
            v(1),
            Native::new(|mut cv| {
                let y = cv.0.pop_var();
                bome(Ok(M::from(contains(&cv.1.v, &y.v))))
            }),
        ),
        (
            "has",
            v(1),
            Native::new(|mut cv| {
                let k = cv.0.pop_var();
                bome(has(&cv.1, &k))
            }),
        ),
        (
            "indices",
            v(1),
            Native::new(|mut cv| {
                let y = cv.0.pop_var();
                bome(indices(&cv.1, &y))
            }),
        ),
        (
            "bsearch",
            v(1),
            Native::new(|mut cv| {
                let t = cv.0.pop_var();
                bome(bsearch(&cv.1, &t))
            }),
        ),
    ];
    list.into_iter()
}
