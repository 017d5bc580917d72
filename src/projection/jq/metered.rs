//! A jaq value type that meters itself: jaq-json's `Val` with a bound on its nesting depth.
//!
//! jaq calls these methods for every iteration, index, arithmetic operation and object built,
//! so once the run's meter (see `budget.rs`) is exhausted they fail, and a loop-free program
//! that would do work polynomial in the input collapses instead of running on. They also refuse
//! values that would be too large (`"x" * 1e9`, repeated self-concatenation) before allocating
//! them, and values nested deeper than [`MAX_VALUE_DEPTH`], whose recursive printing or
//! dropping could overflow the wasm stack.

use std::cmp::Ordering;
use std::fmt;
use std::rc::Rc;

use jaq_core::box_iter::BoxIter;
use jaq_core::path::Opt;
use jaq_core::val::Range;
use jaq_core::{Error, Exn, ValR, ValX};
use jaq_json::Val;

use super::budget::meter;

/// The deepest value a program may build.
pub const MAX_VALUE_DEPTH: u32 = 512;
/// The longest string or array, in bytes or items, a single operation may build.
pub const MAX_VALUE_SIZE: usize = 16 << 20;

/// A jaq-json value and an upper bound on its nesting depth.
#[derive(Clone, Debug)]
pub(crate) struct M {
    pub(crate) v: Val,
    pub(crate) depth: u32,
}

type R = ValR<M>;

fn budget_error() -> Error<M> {
    Error::str(meter::reason())
}

/// Converts an error about jaq-json values into one about metered values.
pub(crate) fn conv(e: Error<Val>) -> Error<M> {
    Error::new(M::leaf(e.into_val()))
}

fn guard() -> Result<(), Error<M>> {
    if meter::exhausted() {
        Err(budget_error())
    } else {
        Ok(())
    }
}

/// Charges for building a value of `size` bytes or items.
fn charge_size(size: usize) -> Result<(), Error<M>> {
    if size > MAX_VALUE_SIZE {
        meter::exhaust(format!("value larger than {MAX_VALUE_SIZE} bytes or items"));
        return Err(budget_error());
    }
    if meter::charge(1 + size as u64 / 16) {
        Ok(())
    } else {
        Err(budget_error())
    }
}

fn check_depth(depth: u32) -> Result<(), Error<M>> {
    if depth > MAX_VALUE_DEPTH {
        meter::exhaust(format!("value nested deeper than {MAX_VALUE_DEPTH} levels"));
        return Err(budget_error());
    }
    Ok(())
}

/// The size an operation's result will have, known before it is built.
fn size_of(v: &Val) -> usize {
    match v {
        Val::TStr(b) | Val::BStr(b) => b.len(),
        Val::Arr(a) => a.len(),
        Val::Obj(o) => o.len(),
        _ => 0,
    }
}

impl M {
    pub(crate) fn leaf(v: Val) -> M {
        M { v, depth: 0 }
    }

    fn child(&self, v: Val) -> M {
        M {
            v,
            depth: self.depth.saturating_sub(1),
        }
    }
}

impl fmt::Display for M {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.v.fmt(f)
    }
}

impl PartialEq for M {
    fn eq(&self, other: &M) -> bool {
        self.v == other.v
    }
}

impl Eq for M {}

impl PartialOrd for M {
    fn partial_cmp(&self, other: &M) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for M {
    fn cmp(&self, other: &M) -> Ordering {
        self.v.cmp(&other.v)
    }
}

impl From<bool> for M {
    fn from(b: bool) -> M {
        M::leaf(Val::from(b))
    }
}

impl From<isize> for M {
    fn from(n: isize) -> M {
        M::leaf(Val::from(n))
    }
}

impl From<usize> for M {
    fn from(n: usize) -> M {
        M::leaf(Val::from(n))
    }
}

impl From<f64> for M {
    fn from(n: f64) -> M {
        M::leaf(Val::from(n))
    }
}

impl From<String> for M {
    fn from(s: String) -> M {
        M::leaf(Val::from(s))
    }
}

impl From<Range<M>> for M {
    fn from(r: Range<M>) -> M {
        let depth = 1 + [&r.start, &r.end]
            .iter()
            .flat_map(|x| x.as_ref())
            .map(|x| x.depth)
            .max()
            .unwrap_or(0);
        M {
            v: Val::from(r.start.map(|x| x.v)..r.end.map(|x| x.v)),
            depth,
        }
    }
}

impl FromIterator<M> for M {
    fn from_iter<T: IntoIterator<Item = M>>(iter: T) -> M {
        // Infallible in jaq's interface: an oversized result ends the run through the meter.
        let mut depth = 0;
        let mut items = Vec::new();
        for x in iter {
            depth = depth.max(x.depth);
            items.push(x.v);
            if items.len() > MAX_VALUE_SIZE {
                break;
            }
        }
        if charge_size(items.len()).is_err() || check_depth(depth + 1).is_err() {
            return M::leaf(Val::Null);
        }
        M {
            v: Val::Arr(Rc::new(items)),
            depth: depth + 1,
        }
    }
}

macro_rules! binary_op {
    ($trait:ident, $method:ident) => {
        impl std::ops::$trait for M {
            type Output = R;
            fn $method(self, rhs: M) -> R {
                guard()?;
                // Strings, arrays and objects grow at most to the sum of both sides, and
                // string repetition to the string times the count: refuse before allocating.
                let size = result_size(stringify!($method), &self.v, &rhs.v);
                charge_size(size)?;
                let depth = self.depth.max(rhs.depth);
                let v = std::ops::$trait::$method(self.v, rhs.v).map_err(conv)?;
                Ok(M { v, depth })
            }
        }
    };
}

/// An upper bound on the size of `l op r`.
fn result_size(op: &str, l: &Val, r: &Val) -> usize {
    let is_str = |v: &Val| matches!(v, Val::TStr(_) | Val::BStr(_));
    let count = |v: &Val| {
        jaq_std::ValT::as_f64(v).map_or(0, |f| f.max(0.0).min(usize::MAX as f64) as usize)
    };
    match op {
        "mul" if is_str(l) => size_of(l).saturating_mul(count(r)),
        "mul" if is_str(r) => size_of(r).saturating_mul(count(l)),
        _ => size_of(l) + size_of(r),
    }
}

binary_op!(Add, add);
binary_op!(Sub, sub);
binary_op!(Mul, mul);
binary_op!(Div, div);
binary_op!(Rem, rem);

impl std::ops::Neg for M {
    type Output = R;
    fn neg(self) -> R {
        guard()?;
        Ok(M::leaf((-self.v).map_err(conv)?))
    }
}

impl jaq_core::ValT for M {
    fn from_num(n: &str) -> R {
        guard()?;
        Ok(M::leaf(Val::from_num(n).map_err(conv)?))
    }

    fn from_map<I: IntoIterator<Item = (M, M)>>(iter: I) -> R {
        guard()?;
        let pairs: Vec<(M, M)> = iter.into_iter().collect();
        charge_size(pairs.len())?;
        let depth = 1 + pairs.iter().map(|(_, v)| v.depth).max().unwrap_or(0);
        check_depth(depth)?;
        let v = Val::from_map(pairs.into_iter().map(|(k, v)| (k.v, v.v))).map_err(conv)?;
        Ok(M { v, depth })
    }

    fn key_values(self) -> BoxIter<'static, ValR<(M, M), M>> {
        // Iterating a shared container copies its elements first: charge for that.
        if let Err(e) = guard().and_then(|()| charge_size(size_of(&self.v))) {
            return Box::new(std::iter::once(Err(e)));
        }
        let d = self.depth.saturating_sub(1);
        Box::new(self.v.key_values().map(move |kv| {
            guard()?;
            let (k, v) = kv.map_err(conv)?;
            Ok((M::leaf(k), M { v, depth: d }))
        }))
    }

    fn values(self) -> Box<dyn Iterator<Item = R>> {
        if let Err(e) = guard().and_then(|()| charge_size(size_of(&self.v))) {
            return Box::new(std::iter::once(Err(e)));
        }
        let d = self.depth.saturating_sub(1);
        Box::new(self.v.values().map(move |v| {
            guard()?;
            Ok(M {
                v: v.map_err(conv)?,
                depth: d,
            })
        }))
    }

    fn index(self, index: &M) -> R {
        guard()?;
        let v = self.v.clone().index(&index.v).map_err(conv)?;
        Ok(self.child(v))
    }

    fn range(self, range: Range<&M>) -> R {
        guard()?;
        let r = range.start.map(|x| &x.v)..range.end.map(|x| &x.v);
        let depth = self.depth;
        Ok(M {
            v: self.v.range(r).map_err(conv)?,
            depth,
        })
    }

    fn map_values<'a, I: Iterator<Item = ValX<'a, M>>>(
        self,
        opt: Opt,
        f: impl Fn(M) -> I,
    ) -> ValX<'a, M> {
        guard()?;
        let d = self.depth.saturating_sub(1);
        match self.v {
            Val::Arr(a) => {
                // Every output of `f` for each element takes the element's place.
                let mut out = Vec::with_capacity(a.len());
                let mut depth = 0;
                for x in Rc::unwrap_or_clone(a) {
                    for y in f(M { v: x, depth: d }) {
                        let y = y?;
                        depth = depth.max(y.depth);
                        out.push(y.v);
                    }
                }
                charge_size(out.len())?;
                check_depth(depth + 1)?;
                Ok(M {
                    v: Val::Arr(Rc::new(out)),
                    depth: depth + 1,
                })
            }
            Val::Obj(o) => {
                // The first output of `f` replaces the value; no output removes the key.
                let mut out = jaq_json::Map::default();
                let mut depth = 0;
                for (k, v) in Rc::unwrap_or_clone(o) {
                    if let Some(y) = f(M { v, depth: d }).next() {
                        let y = y?;
                        depth = depth.max(y.depth);
                        out.insert(k, y.v);
                    }
                }
                check_depth(depth + 1)?;
                Ok(M {
                    v: Val::obj(out),
                    depth: depth + 1,
                })
            }
            v => opt.fail(M::leaf(v), |v| Exn::from(Error::typ(v, "iterable"))),
        }
    }

    fn map_index<'a, I: Iterator<Item = ValX<'a, M>>>(
        mut self,
        index: &M,
        opt: Opt,
        f: impl Fn(M) -> I,
    ) -> ValX<'a, M> {
        guard()?;
        if let (Val::Arr(_), Val::Obj(o)) = (&self.v, &index.v) {
            let start = o.get(&Val::from("start".to_owned())).cloned().map(M::leaf);
            let end = o.get(&Val::from("end".to_owned())).cloned().map(M::leaf);
            return self.map_range(start.as_ref()..end.as_ref(), opt, f);
        }
        let d = self.depth.saturating_sub(1);
        let outer = self.depth;
        match &mut self.v {
            Val::Obj(o) => {
                let map = Rc::make_mut(o);
                let old = map.get(&index.v).cloned();
                let present = old.is_some();
                let y = f(M {
                    v: old.unwrap_or(Val::Null),
                    depth: d,
                })
                .next()
                .transpose()?;
                let depth = match y {
                    Some(y) => {
                        let depth = outer.max(y.depth + 1);
                        check_depth(depth)?;
                        map.insert(index.v.clone(), y.v);
                        depth
                    }
                    None => {
                        if present {
                            map.shift_remove(&index.v);
                        }
                        outer
                    }
                };
                Ok(M { v: self.v, depth })
            }
            Val::Arr(a) => {
                let len = a.len() as isize;
                let i = jaq_std::ValT::as_isize(&index.v)
                    .map(|i| if i < 0 { i + len } else { i })
                    .filter(|i| (0..len).contains(i));
                let Some(i) = i else {
                    let msg = format!("index {} out of bounds", index.v);
                    return opt.fail(self, |_| Exn::from(Error::str(msg)));
                };
                let items = Rc::make_mut(a);
                let x = std::mem::take(&mut items[i as usize]);
                let depth = match f(M { v: x, depth: d }).next().transpose()? {
                    Some(y) => {
                        let depth = outer.max(y.depth + 1);
                        check_depth(depth)?;
                        items[i as usize] = y.v;
                        depth
                    }
                    None => {
                        items.remove(i as usize);
                        outer
                    }
                };
                Ok(M { v: self.v, depth })
            }
            _ => opt.fail(self, |v| Exn::from(Error::typ(v, "iterable"))),
        }
    }

    fn map_range<'a, I: Iterator<Item = ValX<'a, M>>>(
        mut self,
        range: Range<&M>,
        opt: Opt,
        f: impl Fn(M) -> I,
    ) -> ValX<'a, M> {
        guard()?;
        let outer = self.depth;
        let Val::Arr(a) = &mut self.v else {
            // jaq also updates string slices; here only array slices can be updated.
            return opt.fail(self, |v| Exn::from(Error::typ(v, "array")));
        };
        let len = a.len() as isize;
        let bound = |b: Option<&M>, default: isize| -> Result<isize, Error<M>> {
            match b.map(|m| &m.v) {
                None | Some(Val::Null) => Ok(default),
                Some(v) => jaq_std::ValT::as_f64(v)
                    .map(|f| f.floor() as isize)
                    .map(|i| if i < 0 { (i + len).max(0) } else { i.min(len) })
                    .ok_or_else(|| Error::typ(M::leaf(v.clone()), "integer")),
            }
        };
        let start = bound(range.start, 0)?;
        let end = bound(range.end, len)?.max(start);
        let (skip, take) = (start as usize, (end - start) as usize);
        let slice: Vec<Val> = a.iter().skip(skip).take(take).cloned().collect();
        let y = f(M {
            v: Val::Arr(Rc::new(slice)),
            depth: outer,
        })
        .next()
        .transpose()?;
        let (new, depth) = match y {
            Some(M {
                v: Val::Arr(b),
                depth,
            }) => (Rc::unwrap_or_clone(b), depth),
            Some(other) => return Err(Exn::from(Error::typ(other, "array"))),
            None => (Vec::new(), 0),
        };
        charge_size(a.len() + new.len())?;
        Rc::make_mut(a).splice(skip..skip + take, new);
        let depth = outer.max(depth);
        check_depth(depth)?;
        Ok(M { v: self.v, depth })
    }

    fn as_bool(&self) -> bool {
        self.v.as_bool()
    }

    fn into_string(self) -> M {
        let s = self.v.into_string();
        // Printing is as large as the value printed; it cannot fail here, so only charge.
        meter::charge(1 + size_of(&s) as u64 / 64);
        M::leaf(s)
    }
}

impl jaq_std::ValT for M {
    fn into_seq<S: FromIterator<M>>(self) -> Result<S, M> {
        let d = self.depth.saturating_sub(1);
        match self.v {
            Val::Arr(a) => Ok(Rc::unwrap_or_clone(a)
                .into_iter()
                .map(|v| M { v, depth: d })
                .collect()),
            v => Err(M {
                v,
                depth: self.depth,
            }),
        }
    }

    fn is_int(&self) -> bool {
        jaq_std::ValT::is_int(&self.v)
    }

    fn as_isize(&self) -> Option<isize> {
        jaq_std::ValT::as_isize(&self.v)
    }

    fn as_f64(&self) -> Option<f64> {
        jaq_std::ValT::as_f64(&self.v)
    }

    fn is_utf8_str(&self) -> bool {
        jaq_std::ValT::is_utf8_str(&self.v)
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        jaq_std::ValT::as_bytes(&self.v)
    }

    fn as_sub_str(&self, sub: &[u8]) -> M {
        M::leaf(jaq_std::ValT::as_sub_str(&self.v, sub))
    }

    fn from_utf8_bytes(b: impl AsRef<[u8]> + Send + 'static) -> M {
        M::leaf(<Val as jaq_std::ValT>::from_utf8_bytes(b))
    }
}
