//! A jaq value type that meters itself: jaq-json's `Val` with a bound on its nesting depth and
//! its size (`projection::meter`).
//!
//! jaq calls these methods for every iteration, index, arithmetic operation and object built,
//! so once the run's meter is exhausted they fail, and a loop-free program that would do work
//! polynomial in the input collapses instead of running on. They also refuse values that would
//! be too large before building them: too many bytes or items allocated at once (`"x" * 1e9`),
//! too large once shared parts are counted as copies (forty `[., .]`), or nested deeper than
//! [`MAX_VALUE_DEPTH`], whose recursive printing or dropping could overflow the wasm stack.

use std::cell::Cell;
use std::cmp::Ordering;
use std::fmt;
use std::rc::Rc;

use jaq_core::box_iter::BoxIter;
use jaq_core::path::Opt;
use jaq_core::val::Range;
use jaq_core::{Error, Exn, ValR, ValX};
use jaq_json::Val;

use super::size;
use crate::projection::meter;

/// How many items an array being filled gets between two looks at the heap.
const ITEMS_PER_LOOK: usize = 4096;

/// The deepest value a program may build.
pub(crate) const MAX_VALUE_DEPTH: u32 = 512;
/// The longest string or array, in bytes or items, a single operation may build.
pub(crate) const MAX_VALUE_SIZE: usize = 16 << 20;

/// A jaq-json value, an upper bound on its nesting depth, and its size once known.
#[derive(Clone, Debug)]
pub(crate) struct M {
    pub(crate) v: Val,
    pub(crate) depth: u32,
    /// [`UNKNOWN`] until asked for: a part taken out of a value comes without its size.
    size: Cell<u64>,
}

const UNKNOWN: u64 = u64::MAX;

type R = ValR<M>;

fn budget_error() -> Error<M> {
    Error::str(meter::reason())
}

/// Converts an error about jaq-json values into one about metered values. Its text quotes the
/// values it is about whole (`cannot index [...] with "x"`), so printing it is paid for like any
/// other copy: a program that makes and catches such errors over a large value in a loop runs out
/// of fuel rather than printing the value on every turn.
pub(crate) fn conv(e: Error<Val>) -> Error<M> {
    let v = e.into_val();
    meter::charge_items(size_of(&v) as u64);
    Error::new(M::leaf(v))
}

fn guard() -> Result<(), Error<M>> {
    if meter::exhausted() {
        Err(budget_error())
    } else {
        Ok(())
    }
}

/// Charges for allocating a value of `size` bytes or items.
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

/// Charges for the copy that updating a container of `len` entries in place makes when it is
/// shared (`strong` holders), refusing it when it would not fit in the memory left.
fn copy_if_shared(len: usize, strong: usize) -> Result<(), Error<M>> {
    if strong > 1 {
        charge_size(len)?;
        if !meter::reserve(len.saturating_mul(std::mem::size_of::<(Val, Val)>())) {
            return Err(budget_error());
        }
    }
    Ok(())
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

/// Checks that a value of `size` may exist.
fn admit(size: u64) -> Result<(), Error<M>> {
    if meter::admit(size) {
        Ok(())
    } else {
        Err(budget_error())
    }
}

impl M {
    pub(crate) fn leaf(v: Val) -> M {
        M::new(v, 0)
    }

    /// A value whose size is found when first asked for.
    fn new(v: Val, depth: u32) -> M {
        M {
            v,
            depth,
            size: Cell::new(UNKNOWN),
        }
    }

    /// A value just built, of `size`: refused when over the bound, else remembered.
    pub(crate) fn built(v: Val, depth: u32, size: u64) -> Result<M, Error<M>> {
        admit(size)?;
        size::remember(&v, size);
        Ok(M {
            v,
            depth,
            size: Cell::new(size),
        })
    }

    /// A value just built whose size is measured now.
    pub(crate) fn measured(v: Val, depth: u32) -> Result<M, Error<M>> {
        let size = size::of(&v);
        M::built(v, depth, size)
    }

    fn child(&self, v: Val) -> M {
        M::new(v, self.depth.saturating_sub(1))
    }

    /// The size of this value as JSON, counting shared parts once per occurrence.
    pub(crate) fn size(&self) -> u64 {
        let known = self.size.get();
        if known != UNKNOWN {
            return known;
        }
        let size = size::of(&self.v);
        self.size.set(size);
        size
    }

    /// Charges for work that walks the whole value, such as printing or comparing it.
    pub(crate) fn charge_walk(&self) {
        meter::charge_items(self.size());
    }
}

/// The total size of the parts inside an array or object, given its size and length.
fn inner(size: u64, len: usize) -> u64 {
    size.saturating_sub(1 + len.max(1) as u64)
}

/// The size of an object's entries for `n` entries whose keys and values total `kv`.
fn entries(n: usize, kv: u64) -> u64 {
    kv.saturating_add(n as u64)
}

impl fmt::Display for M {
    /// Prints the value, paid for by its size: jaq prints values whole into error texts
    /// (`cannot use [...] as number`) when they are caught or reported, and `tojson` prints.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.charge_walk();
        self.v.fmt(f)
    }
}

impl PartialEq for M {
    fn eq(&self, other: &M) -> bool {
        // Comparing walks both values as far as the smaller one goes.
        meter::charge_items(self.size().min(other.size()));
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
        meter::charge_items(self.size().min(other.size()));
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
        M::new(Val::from(r.start.map(|x| x.v)..r.end.map(|x| x.v)), depth)
    }
}

impl FromIterator<M> for M {
    fn from_iter<T: IntoIterator<Item = M>>(iter: T) -> M {
        // Infallible in jaq's interface: an oversized result ends the run through the meter.
        let mut depth = 0;
        let mut total = 0u64;
        let mut items = Vec::new();
        for x in iter {
            depth = depth.max(x.depth);
            total = total.saturating_add(x.size());
            if !meter::room_for_one_more(&items) {
                return M::leaf(Val::Null);
            }
            items.push(x.v);
            if items.len() > MAX_VALUE_SIZE || total > meter::max_value_bytes() {
                break;
            }
            // A builtin can fill an array from a string (`explode`) without any other charge
            // between items: the heap is looked at as it grows.
            if items.len() % ITEMS_PER_LOOK == 0 && !meter::within_memory() {
                return M::leaf(Val::Null);
            }
        }
        if charge_size(items.len()).is_err() || check_depth(depth + 1).is_err() {
            return M::leaf(Val::Null);
        }
        let size = size::array(items.len(), total);
        M::built(Val::Arr(Rc::new(items)), depth + 1, size).unwrap_or_else(|_| M::leaf(Val::Null))
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
                charge_size(result_size(stringify!($method), &self.v, &rhs.v))?;
                let op = stringify!($method);
                let size = result_json_size(op, &self, &rhs)?;
                let depth = self.depth.max(rhs.depth);
                let v = std::ops::$trait::$method(self.v, rhs.v).map_err(conv)?;
                match size {
                    Some(size) => M::built(v, depth, size),
                    None => {
                        let m = M::new(v, depth);
                        admit(m.size())?;
                        Ok(m)
                    }
                }
            }
        }
    };
}

/// An upper bound on the bytes or items `l op r` allocates.
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

/// The size of `l op r` when known before computing it; `None` when it must be measured after
/// (the operation's own bound, checked here first, keeps that measuring cheap).
fn result_json_size(op: &str, l: &M, r: &M) -> Result<Option<u64>, Error<M>> {
    let (sl, sr) = (l.size(), r.size());
    let is_str = |v: &Val| matches!(v, Val::TStr(_) | Val::BStr(_));
    let len = |v: &Val| size_of(v);
    match (op, &l.v, &r.v) {
        ("add", Val::Null, _) => Ok(Some(sr)),
        ("add", _, Val::Null) => Ok(Some(sl)),
        ("add", Val::Arr(a), Val::Arr(b)) => Ok(Some(size::array(
            a.len() + b.len(),
            inner(sl, a.len()).saturating_add(inner(sr, b.len())),
        ))),
        ("add", Val::Obj(a), Val::Obj(b)) => {
            // A key of `r` already in `l` replaces its entry in place.
            let mut kv = inner(sl, a.len()).saturating_sub(entries(a.len(), 0));
            kv = kv.saturating_add(inner(sr, b.len()).saturating_sub(entries(b.len(), 0)));
            let mut n = a.len() + b.len();
            for (k, _) in b.iter() {
                if let Some(old) = a.get(k) {
                    kv = kv.saturating_sub(size::of(k).saturating_add(size::of(old)));
                    n -= 1;
                }
            }
            Ok(Some(size::object(n, kv)))
        }
        ("add", a, b) if is_str(a) && is_str(b) => Ok(Some(sl + sr - 2)),
        ("mul", s, n) | ("mul", n, s) if is_str(s) && !is_str(n) => {
            let count = jaq_std::ValT::as_f64(n).map_or(0.0, |f| f.max(0.0));
            let bytes = (len(s) as f64 * count).min(u64::MAX as f64) as u64;
            admit(bytes.saturating_add(2))?;
            // Made in one piece: checked against the memory left before.
            if !meter::reserve(bytes as usize) {
                return Err(budget_error());
            }
            Ok(None)
        }
        // Splitting a string adds at most quotes and a comma per byte, and each piece takes a
        // value's room in memory, which is made in one piece: checked before.
        ("div", a, b) if is_str(a) && is_str(b) => {
            admit(sl.saturating_mul(4))?;
            let pieces = len(a) / len(b).max(1) + 1;
            if !meter::reserve(pieces.saturating_mul(std::mem::size_of::<Val>())) {
                return Err(budget_error());
            }
            Ok(None)
        }
        _ => {
            // Numbers (a product has at most the digits of both factors), array difference,
            // object merging: never larger than both sides together. Comparing or merging
            // walks them, which is charged.
            admit(sl.saturating_add(sr))?;
            if !matches!((&l.v, &r.v), (Val::Num(_), Val::Num(_))) {
                meter::charge_items(sl.saturating_add(sr));
            }
            Ok(None)
        }
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
        let m = M::leaf((-self.v).map_err(conv)?);
        admit(m.size())?;
        Ok(m)
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
        // Keys are hashed, which walks them.
        let keys = pairs
            .iter()
            .map(|(k, _)| k.size())
            .fold(0u64, u64::saturating_add);
        meter::charge_items(keys);
        let values = pairs
            .iter()
            .map(|(_, v)| v.size())
            .fold(0u64, u64::saturating_add);
        admit(keys.saturating_add(values))?;
        let n = pairs.len();
        let v = Val::from_map(pairs.into_iter().map(|(k, v)| (k.v, v.v))).map_err(conv)?;
        match &v {
            Val::Obj(o) if o.len() == n => {
                M::built(v, depth, size::object(n, keys.saturating_add(values)))
            }
            // A repeated key kept one entry: measure what was built.
            _ => {
                let size = size::of(&v);
                M::built(v, depth, size)
            }
        }
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
            Ok((M::leaf(k), M::new(v, d)))
        }))
    }

    fn values(self) -> Box<dyn Iterator<Item = R>> {
        if let Err(e) = guard().and_then(|()| charge_size(size_of(&self.v))) {
            return Box::new(std::iter::once(Err(e)));
        }
        let d = self.depth.saturating_sub(1);
        Box::new(self.v.values().map(move |v| {
            guard()?;
            Ok(M::new(v.map_err(conv)?, d))
        }))
    }

    fn index(self, index: &M) -> R {
        guard()?;
        if !matches!(index.v, Val::Num(_)) {
            // A key is hashed or compared whole.
            index.charge_walk();
        }
        let v = self.v.clone().index(&index.v).map_err(conv)?;
        Ok(self.child(v))
    }

    fn range(self, range: Range<&M>) -> R {
        guard()?;
        let r = range.start.map(|x| &x.v)..range.end.map(|x| &x.v);
        let depth = self.depth;
        Ok(M::new(self.v.range(r).map_err(conv)?, depth))
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
                let (mut depth, mut total) = (0, 0u64);
                for x in Rc::unwrap_or_clone(a) {
                    for y in f(M::new(x, d)) {
                        let y = y?;
                        depth = depth.max(y.depth);
                        total = total.saturating_add(y.size());
                        admit(total)?;
                        out.push(y.v);
                    }
                }
                charge_size(out.len())?;
                check_depth(depth + 1)?;
                let size = size::array(out.len(), total);
                Ok(M::built(Val::Arr(Rc::new(out)), depth + 1, size)?)
            }
            Val::Obj(o) => {
                // The first output of `f` replaces the value; no output removes the key.
                let mut out = jaq_json::Map::default();
                let (mut depth, mut total) = (0, 0u64);
                for (k, v) in Rc::unwrap_or_clone(o) {
                    if let Some(y) = f(M::new(v, d)).next() {
                        let y = y?;
                        depth = depth.max(y.depth);
                        total = total.saturating_add(size::of(&k)).saturating_add(y.size());
                        admit(total)?;
                        out.insert(k, y.v);
                    }
                }
                check_depth(depth + 1)?;
                let size = size::object(out.len(), total);
                Ok(M::built(Val::obj(out), depth + 1, size)?)
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
        // The entry's size leaves the total and its replacement's joins it.
        let outer_size = self.size();
        let key_size = index.size();
        match &mut self.v {
            Val::Obj(o) => {
                copy_if_shared(o.len(), Rc::strong_count(o))?;
                let map = Rc::make_mut(o);
                let old = map.get(&index.v).cloned();
                let n = map.len();
                let mut kv = inner(outer_size, n).saturating_sub(n as u64);
                if let Some(old) = &old {
                    kv = kv.saturating_sub(key_size.saturating_add(size::of(old)));
                }
                let present = old.is_some();
                let y = f(M::new(old.unwrap_or(Val::Null), d)).next().transpose()?;
                let depth = match y {
                    Some(y) => {
                        let depth = outer.max(y.depth + 1);
                        check_depth(depth)?;
                        kv = kv.saturating_add(key_size).saturating_add(y.size());
                        admit(size::object(n + usize::from(!present), kv))?;
                        map.insert(index.v.clone(), y.v);
                        depth
                    }
                    None => {
                        if present {
                            // Removing keeps the order: the entries after it move.
                            charge_size(n)?;
                            map.shift_remove(&index.v);
                        }
                        outer
                    }
                };
                let size = size::object(map.len(), kv);
                M::built(self.v, depth, size).map_err(Exn::from)
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
                copy_if_shared(a.len(), Rc::strong_count(a))?;
                let items = Rc::make_mut(a);
                let x = std::mem::take(&mut items[i as usize]);
                let mut total = inner(outer_size, items.len()).saturating_sub(size::of(&x));
                let depth = match f(M::new(x, d)).next().transpose()? {
                    Some(y) => {
                        let depth = outer.max(y.depth + 1);
                        check_depth(depth)?;
                        total = total.saturating_add(y.size());
                        admit(size::array(items.len(), total))?;
                        items[i as usize] = y.v;
                        depth
                    }
                    None => {
                        charge_size(items.len() - i as usize)?;
                        items.remove(i as usize);
                        outer
                    }
                };
                let size = size::array(items.len(), total);
                M::built(self.v, depth, size).map_err(Exn::from)
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
        let outer_size = self.size();
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
        let slice = M::new(Val::Arr(Rc::new(slice)), outer);
        let mut total = inner(outer_size, a.len()).saturating_sub(inner(slice.size(), take));
        let y = f(slice).next().transpose()?;
        let (new, depth) = match y {
            Some(y) => {
                total = total.saturating_add(inner(y.size(), size_of(&y.v)));
                match y.v {
                    Val::Arr(b) => (Rc::unwrap_or_clone(b), y.depth),
                    other => return Err(Exn::from(Error::typ(M::leaf(other), "array"))),
                }
            }
            None => (Vec::new(), 0),
        };
        charge_size(a.len() + new.len())?;
        let n = a.len() - take + new.len();
        admit(size::array(n, total))?;
        Rc::make_mut(a).splice(skip..skip + take, new);
        let depth = outer.max(depth);
        check_depth(depth)?;
        M::built(self.v, depth, size::array(n, total)).map_err(Exn::from)
    }

    fn as_bool(&self) -> bool {
        self.v.as_bool()
    }

    fn into_string(self) -> M {
        // Printing walks the value as often as its parts are shared, and every value is within
        // the size bound, so charging by size before printing bounds the work.
        self.charge_walk();
        M::leaf(self.v.into_string())
    }
}

impl jaq_std::ValT for M {
    fn into_seq<S: FromIterator<M>>(self) -> Result<S, M> {
        let d = self.depth.saturating_sub(1);
        match self.v {
            // The builtins that take an array (`sort`, `implode`, `group_by`) copy it whole
            // first: paid for, and refused when the copy would not fit, before it is made.
            Val::Arr(a)
                if charge_size(a.len()).is_err()
                    || !meter::reserve(a.len().saturating_mul(std::mem::size_of::<M>())) =>
            {
                Ok(std::iter::empty().collect())
            }
            Val::Arr(a) => Ok(Rc::unwrap_or_clone(a)
                .into_iter()
                .map(|v| M::new(v, d))
                .collect()),
            v => Err(M {
                v,
                depth: self.depth,
                size: self.size,
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

    /// The bytes of a string, paid for by their length: every string builtin reads them
    /// through here (`ltrimstr`, `startswith`, `ascii_downcase`, `explode`, `@base64`, regexes,
    /// dates), so the work of each is charged without replacing it.
    fn as_bytes(&self) -> Option<&[u8]> {
        let b = jaq_std::ValT::as_bytes(&self.v)?;
        meter::charge_items(b.len() as u64);
        Some(b)
    }

    fn as_sub_str(&self, sub: &[u8]) -> M {
        M::leaf(jaq_std::ValT::as_sub_str(&self.v, sub))
    }

    /// A string a builtin made, paid for by its length and refused (ending the run) past the
    /// size bound.
    fn from_utf8_bytes(b: impl AsRef<[u8]> + Send + 'static) -> M {
        let len = b.as_ref().len() as u64;
        meter::charge_items(len);
        meter::admit(len + 2);
        M::leaf(<Val as jaq_std::ValT>::from_utf8_bytes(b))
    }
}
