//! jq's sorting builtins (`sort`, `sort_by`, `group_by`, `min_by`/`max_by` and what is defined
//! on them: `unique`, `unique_by`, `min`, `max`), with jaq-std's semantics, paid for before
//! they sort.
//!
//! A sort compares each element with others about log2(n) times, and a comparison walks both
//! keys: keys that share one large value (`sort_by($big)`) cost nothing to make and a great deal
//! to compare. A sort cannot stop half-way (a comparison that changed its answer when the fuel
//! ran out would break the sort's contract), so the whole of it is charged first: the keys'
//! sizes, shared parts counted per occurrence, times the comparisons each takes part in.

use std::cmp::Ordering;

use jaq_core::box_iter::box_once;
use jaq_core::native::{v, Fun};
use jaq_core::{Bind, Error, Exn, Native, ValX};
use jaq_std::ValT as _;

use super::metered::M;
use super::Budgeted;
use crate::projection::meter;

/// Charges for sorting (or scanning, once more per element) `n` keys that total `size`.
fn pay_for_sorting(n: usize, size: u64) -> Result<(), Error<M>> {
    let comparisons = u64::from(usize::BITS - n.leading_zeros()) + 2;
    if meter::charge_items(size.saturating_mul(comparisons)) {
        Ok(())
    } else {
        Err(Error::str(meter::reason()))
    }
}

/// Compares two keys, each the outputs of the key filter for one element, as jaq does.
fn cmp_keys(a: &[M], b: &[M]) -> Ordering {
    a.iter().map(|m| &m.v).cmp(b.iter().map(|m| &m.v))
}

/// The elements of an array input.
fn elements<'a>(input: M) -> Result<Vec<M>, Exn<'a, M>> {
    input
        .into_seq()
        .map_err(|v| Exn::from(Error::typ(v, "array")))
}

/// Each element with its key (the outputs of `f` on it), paid for by the keys' sizes.
fn keyed<'a>(
    xs: Vec<M>,
    f: impl Fn(M) -> jaq_core::ValXs<'a, M>,
) -> Result<Vec<(Vec<M>, M)>, Exn<'a, M>> {
    let keyed = xs
        .into_iter()
        .map(|x| Ok((f(x.clone()).collect::<Result<Vec<M>, _>>()?, x)))
        .collect::<Result<Vec<_>, Exn<'a, M>>>()?;
    let size = keyed
        .iter()
        .flat_map(|(k, _)| k.iter().map(M::size))
        .fold(0u64, u64::saturating_add);
    pay_for_sorting(keyed.len(), size)?;
    Ok(keyed)
}

fn sort<'a>(input: M) -> ValX<'a, M> {
    let mut xs = elements(input)?;
    let size = xs.iter().map(M::size).fold(0u64, u64::saturating_add);
    pay_for_sorting(xs.len(), size)?;
    xs.sort_by(|a, b| a.v.cmp(&b.v));
    Ok(xs.into_iter().collect())
}

fn sort_by<'a>(input: M, f: impl Fn(M) -> jaq_core::ValXs<'a, M>) -> ValX<'a, M> {
    let mut keyed = keyed(elements(input)?, f)?;
    keyed.sort_by(|(a, _), (b, _)| cmp_keys(a, b));
    Ok(keyed.into_iter().map(|(_, x)| x).collect())
}

fn group_by<'a>(input: M, f: impl Fn(M) -> jaq_core::ValXs<'a, M>) -> ValX<'a, M> {
    let mut keyed = keyed(elements(input)?, f)?;
    keyed.sort_by(|(a, _), (b, _)| cmp_keys(a, b));
    let mut groups: Vec<M> = Vec::new();
    let mut group: Vec<M> = Vec::new();
    let mut last: Option<Vec<M>> = None;
    for (k, x) in keyed {
        if last
            .as_ref()
            .is_some_and(|l| cmp_keys(l, &k) != Ordering::Equal)
        {
            groups.push(std::mem::take(&mut group).into_iter().collect());
        }
        group.push(x);
        last = Some(k);
    }
    if !group.is_empty() {
        groups.push(group.into_iter().collect());
    }
    Ok(groups.into_iter().collect())
}

/// The element whose key wins under `replace(best, candidate)`, or none for an empty array.
fn best_by<'a>(
    input: M,
    f: impl Fn(M) -> jaq_core::ValXs<'a, M>,
    replace: fn(Ordering) -> bool,
) -> Result<Option<M>, Exn<'a, M>> {
    let mut best: Option<(Vec<M>, M)> = None;
    for (k, x) in keyed(elements(input)?, f)? {
        match &best {
            Some((bk, _)) if !replace(cmp_keys(bk, &k)) => {}
            _ => best = Some((k, x)),
        }
    }
    Ok(best.map(|(_, x)| x))
}

/// The natives, under jaq-std's names and arities.
pub(crate) fn natives() -> impl Iterator<Item = Fun<Budgeted>> {
    let f = || -> Box<[Bind]> { [Bind::Fun(())].into() };
    // `replace(best, candidate)` on the keys' order picks the element kept.
    macro_rules! best_by {
        ($replace:expr) => {
            Native::new(|mut cv| {
                let (f, fc) = cv.0.pop_fun();
                let best = best_by(cv.1, move |x| f.run((fc.clone(), x)), $replace);
                Box::new(best.transpose().into_iter())
            })
        };
    }
    let list: [Fun<Budgeted>; 5] = [
        ("sort", v(0), Native::new(|cv| box_once(sort(cv.1)))),
        (
            "sort_by",
            f(),
            Native::new(|mut cv| {
                let (f, fc) = cv.0.pop_fun();
                box_once(sort_by(cv.1, move |x| f.run((fc.clone(), x))))
            }),
        ),
        (
            "group_by",
            f(),
            Native::new(|mut cv| {
                let (f, fc) = cv.0.pop_fun();
                box_once(group_by(cv.1, move |x| f.run((fc.clone(), x))))
            }),
        ),
        // jaq keeps the first of equal minima and the last of equal maxima.
        ("min_by_or_empty", f(), best_by!(Ordering::is_gt)),
        ("max_by_or_empty", f(), best_by!(Ordering::is_le)),
    ];
    list.into_iter()
}

/// Whether `name/arity` is one of the natives here.
pub(crate) fn replaces(name: &str, arity: usize) -> bool {
    matches!(
        (name, arity),
        ("sort", 0)
            | ("sort_by", 1)
            | ("group_by", 1)
            | ("min_by_or_empty", 1)
            | ("max_by_or_empty", 1)
    )
}
