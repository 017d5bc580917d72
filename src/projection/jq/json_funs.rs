//! jaq-json's own natives (`length`, `contains`, `has`, `indices`, `bsearch`, `tojson`,
//! `fromjson`, `tobytes`) for the metered value type, with jaq-json's semantics. jaq-json
//! implements them only for its own `Val`.

use std::rc::Rc;

use jaq_core::native::{bome, v, Fun};
use jaq_core::{Error, Native, ValR};
use jaq_json::Val;

use super::metered::M;
use super::{convert, Budgeted, MAX_INPUT_DEPTH};

fn length(x: &M) -> ValR<M> {
    Ok(M::leaf(match &x.v {
        Val::Null => Val::from(0usize),
        Val::Num(_) => Val::from(jaq_std::ValT::as_f64(&x.v).unwrap_or(0.0).abs()),
        Val::TStr(s) => Val::from(String::from_utf8_lossy(s).chars().count()),
        Val::BStr(b) => Val::from(b.len()),
        Val::Arr(a) => Val::from(a.len()),
        Val::Obj(o) => Val::from(o.len()),
        Val::Bool(_) => return Err(Error::str(format_args!("{x} has no length"))),
    }))
}

/// jq's containment: substrings, every element of `r` in some element of `l`, every field of
/// `r` contained in `l`'s; anything else by equality.
fn contains(l: &Val, r: &Val) -> bool {
    match (l, r) {
        (Val::TStr(a), Val::TStr(b)) | (Val::BStr(a), Val::BStr(b)) => {
            b.is_empty() || a.windows(b.len()).any(|w| w == &b[..])
        }
        (Val::Arr(a), Val::Arr(b)) => b.iter().all(|y| a.iter().any(|x| contains(x, y))),
        (Val::Obj(a), Val::Obj(b)) => b
            .iter()
            .all(|(k, y)| a.get(k).is_some_and(|x| contains(x, y))),
        _ => l == r,
    }
}

fn has(x: &M, k: &M) -> ValR<M> {
    Ok(M::from(match (&x.v, &k.v) {
        (Val::Obj(o), key) => o.contains_key(key),
        (Val::Arr(a), i) => match jaq_std::ValT::as_isize(i) {
            Some(i) => i >= 0 && (i as usize) < a.len(),
            None => return Err(Error::index(x.clone(), k.clone())),
        },
        _ => return Err(Error::index(x.clone(), k.clone())),
    }))
}

fn indices(x: &M, y: &M) -> ValR<M> {
    let idx: Vec<usize> = match (&x.v, &y.v) {
        (Val::TStr(a), Val::TStr(b)) | (Val::BStr(a), Val::BStr(b)) if b.is_empty() => Vec::new(),
        (Val::TStr(a), Val::TStr(b)) => {
            // Character positions of (overlapping) occurrences, as jaq counts them.
            let text = String::from_utf8_lossy(a);
            let needle = String::from_utf8_lossy(b);
            text.char_indices()
                .enumerate()
                .filter(|(_, (byte, _))| text[*byte..].starts_with(&*needle))
                .map(|(i, _)| i)
                .collect()
        }
        (Val::BStr(a), Val::BStr(b)) => a
            .windows(b.len())
            .enumerate()
            .filter(|(_, w)| *w == &b[..])
            .map(|(i, _)| i)
            .collect(),
        (Val::Arr(_), Val::Arr(b)) if b.is_empty() => Vec::new(),
        (Val::Arr(a), Val::Arr(b)) => a
            .windows(b.len())
            .enumerate()
            .filter(|(_, w)| *w == &b[..])
            .map(|(i, _)| i)
            .collect(),
        (Val::Arr(a), v) => a
            .iter()
            .enumerate()
            .filter(|(_, e)| *e == v)
            .map(|(i, _)| i)
            .collect(),
        (Val::Null, _) | (_, Val::Null) => return Ok(M::leaf(Val::Null)),
        _ => return Err(Error::index(x.clone(), y.clone())),
    };
    M::measured(
        Val::Arr(Rc::new(idx.into_iter().map(Val::from).collect())),
        1,
    )
}

fn bsearch(x: &M, target: &M) -> ValR<M> {
    match &x.v {
        Val::Arr(a) => {
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
