//! The jq work budget: budgeted replacements for jq's unbounded generators, and the check that
//! refuses self-recursive definitions (the meter itself is `projection::meter`).

use jaq_core::box_iter::BoxIter;
use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{BinaryOp, Def, Pattern, Term};
use jaq_core::native::{bome, v, Fun};
use jaq_core::path::Part;
use jaq_core::{Bind, Ctx, Error, Exn, Native, ValT, ValX, ValXs};

use super::metered::M;
use super::Budgeted;
use crate::projection::meter;

/// Whether the standard definition or native `name/arity` is replaced by a budgeted native.
pub(crate) fn is_replaced(name: &str, arity: usize) -> bool {
    matches!(
        (name, arity),
        ("range", 3)
            | ("repeat", 1)
            | ("recurse", 1)
            | ("while", 2)
            | ("until", 2)
            | ("jn", 2)
            | ("yn", 2)
    ) || super::regex::replaces(name, arity)
        || super::sort::replaces(name, arity)
}

type V = M;

fn exhausted<'a>() -> ValX<'a, V> {
    Err(Exn::from(Error::str(meter::reason())))
}

/// One step of a generator: an output, or a value to continue the recursion from.
enum Step<'a> {
    Out(ValX<'a, V>),
    Rec(V),
}

/// Expands `body` recursively without using the Rust stack: a `Rec(v)` item stands for the
/// whole stream `body(v)`. A `Rec` that ends its stream replaces it (a tail call), so `repeat`
/// runs in constant space.
fn unfold<'a, F>(ctx: Ctx<'a, Budgeted>, start: V, body: F) -> ValXs<'a, V>
where
    F: Fn(&Ctx<'a, Budgeted>, V) -> BoxIter<'a, Step<'a>> + 'a,
{
    let mut stack: Vec<std::iter::Peekable<BoxIter<'a, Step<'a>>>> =
        vec![body(&ctx, start).peekable()];
    let mut failed = false;
    Box::new(std::iter::from_fn(move || loop {
        if failed {
            return None;
        }
        if !meter::charge(1) {
            failed = true;
            return Some(exhausted());
        }
        let top = stack.last_mut()?;
        match top.next() {
            None => {
                stack.pop();
            }
            Some(Step::Out(y)) => return Some(y),
            Some(Step::Rec(v)) => {
                if top.peek().is_none() {
                    stack.pop();
                }
                stack.push(body(&ctx, v).peekable());
            }
        }
    }))
}

fn outs<'a>(ys: ValXs<'a, V>) -> BoxIter<'a, Step<'a>> {
    Box::new(ys.map(Step::Out))
}

fn recs<'a>(ys: ValXs<'a, V>) -> BoxIter<'a, Step<'a>> {
    Box::new(ys.map(|y| match y {
        Ok(v) => Step::Rec(v),
        Err(e) => Step::Out(Err(e)),
    }))
}

/// Runs `cond` on `v` and continues with `then` for each truthy output, `otherwise` else.
fn branch<'a>(
    cond: BoxIter<'a, ValX<'a, V>>,
    then: impl Fn() -> BoxIter<'a, Step<'a>> + 'a,
    otherwise: impl Fn() -> BoxIter<'a, Step<'a>> + 'a,
) -> BoxIter<'a, Step<'a>> {
    Box::new(cond.flat_map(move |c| -> BoxIter<'a, Step<'a>> {
        match c {
            Ok(c) if c.as_bool() => then(),
            Ok(_) => otherwise(),
            Err(e) => Box::new(std::iter::once(Step::Out(Err(e)))),
        }
    }))
}

/// The budgeted generators, with the semantics of the jaq definitions they replace.
pub(crate) fn natives() -> impl Iterator<Item = Fun<Budgeted>> {
    let f = || -> Box<[Bind]> { [Bind::Fun(())].into() };
    let ff = || -> Box<[Bind]> { [Bind::Fun(()), Bind::Fun(())].into() };
    let list: [Fun<Budgeted>; 7] = [
        // def repeat(f): def rec: f, rec; rec;
        (
            "repeat",
            f(),
            Native::new(|mut cv| {
                let (f, fc) = cv.0.pop_fun();
                unfold(cv.0, cv.1, move |_, v| {
                    Box::new(
                        outs(f.run((fc.clone(), v.clone()))).chain(std::iter::once(Step::Rec(v))),
                    )
                })
            }),
        ),
        // def recurse(f): def rec: ., (f | rec); rec;
        (
            "recurse",
            f(),
            Native::new(|mut cv| {
                let (f, fc) = cv.0.pop_fun();
                unfold(cv.0, cv.1, move |_, v| {
                    let next = recs(f.run((fc.clone(), v.clone())));
                    Box::new(std::iter::once(Step::Out(Ok(v))).chain(next))
                })
            }),
        ),
        // def while(cond; update): def rec: if cond then ., (update | rec) else empty end; rec;
        (
            "while",
            ff(),
            Native::new(|mut cv| {
                let (update, uc) = cv.0.pop_fun();
                let (cond, cc) = cv.0.pop_fun();
                unfold(cv.0, cv.1, move |_, v| {
                    let (uc, v2) = (uc.clone(), v.clone());
                    branch(
                        cond.run((cc.clone(), v.clone())),
                        move || {
                            let next = recs(update.run((uc.clone(), v2.clone())));
                            Box::new(std::iter::once(Step::Out(Ok(v2.clone()))).chain(next))
                        },
                        || Box::new(std::iter::empty()),
                    )
                })
            }),
        ),
        // def until(cond; update): def rec: if cond then . else update | rec end; rec;
        (
            "until",
            ff(),
            Native::new(|mut cv| {
                let (update, uc) = cv.0.pop_fun();
                let (cond, cc) = cv.0.pop_fun();
                unfold(cv.0, cv.1, move |_, v| {
                    let (uc, v2, v3) = (uc.clone(), v.clone(), v.clone());
                    branch(
                        cond.run((cc.clone(), v.clone())),
                        move || Box::new(std::iter::once(Step::Out(Ok(v2.clone())))),
                        move || recs(update.run((uc.clone(), v3.clone()))),
                    )
                })
            }),
        ),
        // range($from; $to; $by), as jaq's native: from, from+by, ... while short of `to`.
        (
            "range",
            v(3),
            Native::new(|mut cv| {
                let by = cv.0.pop_var();
                let to = cv.0.pop_var();
                let from = cv.0.pop_var();
                let zero = M::from(0isize);
                let dir = by.partial_cmp(&zero);
                let mut next: Option<V> = Some(from);
                Box::new(std::iter::from_fn(move || {
                    let x = next.take()?;
                    let more = match dir {
                        Some(std::cmp::Ordering::Greater) => x < to,
                        Some(std::cmp::Ordering::Less) => x > to,
                        _ => x != to,
                    };
                    if !more {
                        return None;
                    }
                    if !meter::charge(1) {
                        return Some(exhausted());
                    }
                    match x.clone() + by.clone() {
                        Ok(n) => next = Some(n),
                        Err(e) => return Some(Err(Exn::from(e))),
                    }
                    Some(Ok(x))
                }))
            }),
        ),
        // jn($n; $x) and yn($n; $x): Bessel functions that loop |n| times inside libm.
        ("jn", v(2), Native::new(|cv| bome(bessel(cv, libm::jn)))),
        ("yn", v(2), Native::new(|cv| bome(bessel(cv, libm::yn)))),
    ];
    list.into_iter()
}

/// Runs a Bessel function of order `$n` after paying one unit per step of its loop.
fn bessel(mut cv: jaq_core::Cv<'_, Budgeted>, f: fn(i32, f64) -> f64) -> jaq_core::ValR<V> {
    let x = cv.0.pop_var();
    let n = cv.0.pop_var();
    let order = jaq_std::ValT::as_isize(&n)
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| Error::typ(n.clone(), "integer"))?;
    let x = jaq_std::ValT::as_f64(&x).ok_or_else(|| Error::typ(x.clone(), "number"))?;
    if !meter::charge(1 + u64::from(order.unsigned_abs())) {
        return Err(Error::str(meter::reason()));
    }
    Ok(V::from(f(order, x)))
}

/// Names of definitions in `term` that call themselves (directly, or from a nested definition
/// calling an enclosing one): recursion the budget could only stop by overflowing the stack.
pub(crate) fn recursive_defs<'s>(term: &Term<&'s str>) -> Vec<&'s str> {
    let mut found = Vec::new();
    let mut enclosing = Vec::new();
    walk_term(term, &mut enclosing, &mut found);
    found
}

fn walk_def<'s>(
    def: &Def<&'s str>,
    enclosing: &mut Vec<(&'s str, usize)>,
    found: &mut Vec<&'s str>,
) {
    enclosing.push((def.name, def.args.len()));
    walk_term(&def.body, enclosing, found);
    enclosing.pop();
}

fn walk_term<'s>(
    t: &Term<&'s str>,
    enclosing: &mut Vec<(&'s str, usize)>,
    found: &mut Vec<&'s str>,
) {
    let mut go = |t: &Term<&'s str>, found: &mut Vec<&'s str>| walk_term(t, enclosing, found);
    match t {
        Term::Id | Term::Recurse | Term::Num(_) | Term::Var(_) | Term::Break(_) => {}
        Term::Str(_, parts) => {
            for part in parts {
                if let StrPart::Term(t) = part {
                    go(t, found);
                }
            }
        }
        Term::Arr(inner) => {
            if let Some(t) = inner {
                go(t, found);
            }
        }
        Term::Obj(entries) => {
            for (k, v) in entries {
                go(k, found);
                if let Some(v) = v {
                    go(v, found);
                }
            }
        }
        Term::Neg(t) | Term::Label(_, t) => go(t, found),
        Term::BinOp(l, op, r) => {
            go(l, found);
            if let BinaryOp::Pipe(Some(p)) = op {
                walk_pattern(p, enclosing, found);
            }
            walk_term(r, enclosing, found);
        }
        Term::Fold(_, xs, pat, args) => {
            go(xs, found);
            walk_pattern(pat, enclosing, found);
            for a in args {
                walk_term(a, enclosing, found);
            }
        }
        Term::TryCatch(t, c) => {
            go(t, found);
            if let Some(c) = c {
                go(c, found);
            }
        }
        Term::IfThenElse(branches, otherwise) => {
            for (c, b) in branches {
                go(c, found);
                go(b, found);
            }
            if let Some(o) = otherwise {
                go(o, found);
            }
        }
        Term::Def(defs, body) => {
            for d in defs {
                walk_def(d, enclosing, found);
            }
            walk_term(body, enclosing, found);
        }
        Term::Call(name, args) => {
            // jq scoping: inside `def f`, a call to f with f's arity can only mean f itself
            // (or an inner redefinition, which this over-approximation also refuses).
            if enclosing.contains(&(*name, args.len())) && !found.contains(name) {
                found.push(name);
            }
            for a in args {
                walk_term(a, enclosing, found);
            }
        }
        Term::Path(t, path) => {
            go(t, found);
            for (part, _) in &path.0 {
                match part {
                    Part::Index(i) => walk_term(i, enclosing, found),
                    Part::Range(a, b) => {
                        for x in [a, b].into_iter().flatten() {
                            walk_term(x, enclosing, found);
                        }
                    }
                }
            }
        }
    }
}

fn walk_pattern<'s>(
    p: &Pattern<&'s str>,
    enclosing: &mut Vec<(&'s str, usize)>,
    found: &mut Vec<&'s str>,
) {
    match p {
        Pattern::Var(_) => {}
        Pattern::Arr(ps) => {
            for p in ps {
                walk_pattern(p, enclosing, found);
            }
        }
        Pattern::Obj(entries) => {
            for (k, p) in entries {
                walk_term(k, enclosing, found);
                walk_pattern(p, enclosing, found);
            }
        }
    }
}

/// The most term evaluations a program may unfold to, counting each call of a definition of its
/// own as its body evaluated again (see [`unfolds_too_far`]).
pub(crate) const MAX_UNFOLDED_TERMS: u64 = 100_000;

/// Whether `term` unfolds to more than [`MAX_UNFOLDED_TERMS`] term evaluations for one input.
///
/// Fuel is charged per term evaluation but only noticed by the next operation on a value, so
/// the evaluations between two such operations run whatever fuel is left. Definitions that call
/// one another twice (`def f1: f0 | f0; def f2: f1 | f1; ...`) unfold exponentially without
/// touching a value: bounding the unfolded size bounds that stretch. Calls of the standard
/// library count their arguments once; definitions are not recursive here ([`recursive_defs`]),
/// so the walk ends, and it stops as soon as the count passes the bound, so it costs at most as
/// many steps.
pub(crate) fn unfolds_too_far(term: &Term<&str>) -> bool {
    let mut count = 0;
    expand(term, &Scope::Root, &mut count).is_err()
}

/// What a name means where a term is: definitions and filter arguments, innermost first.
enum Scope<'a, 's> {
    Root,
    /// Definitions made together, seen from their own bodies and from the term after them.
    Defs(&'a [Def<&'s str>], &'a Scope<'a, 's>),
    /// A definition's filter arguments, each the caller's term in the caller's scope.
    Args(
        &'a [(&'s str, &'a Term<&'s str>, &'a Scope<'a, 's>)],
        &'a Scope<'a, 's>,
    ),
}

/// What a call resolves to.
enum Callee<'a, 's> {
    Def(&'a Def<&'s str>, &'a Scope<'a, 's>),
    Arg(&'a Term<&'s str>, &'a Scope<'a, 's>),
    Builtin,
}

impl<'a, 's> Scope<'a, 's> {
    fn resolve(&'a self, name: &str, arity: usize) -> Callee<'a, 's> {
        match self {
            Scope::Root => Callee::Builtin,
            Scope::Defs(defs, parent) => {
                match defs
                    .iter()
                    .rev()
                    .find(|d| d.name == name && d.args.len() == arity)
                {
                    Some(def) => Callee::Def(def, self),
                    None => parent.resolve(name, arity),
                }
            }
            Scope::Args(args, parent) => match args.iter().find(|(n, ..)| *n == name) {
                Some((_, term, scope)) if arity == 0 => Callee::Arg(term, scope),
                _ => parent.resolve(name, arity),
            },
        }
    }
}

/// The bound was passed.
struct Unfolded;

fn expand<'a, 's>(
    t: &'a Term<&'s str>,
    scope: &'a Scope<'a, 's>,
    count: &mut u64,
) -> Result<(), Unfolded> {
    *count += 1;
    if *count > MAX_UNFOLDED_TERMS {
        return Err(Unfolded);
    }
    let go = |t: &'a Term<&'s str>, count: &mut u64| expand(t, scope, count);
    match t {
        Term::Id | Term::Recurse | Term::Num(_) | Term::Var(_) | Term::Break(_) => Ok(()),
        Term::Str(_, parts) => parts.iter().try_for_each(|part| match part {
            StrPart::Term(t) => go(t, count),
            _ => Ok(()),
        }),
        Term::Arr(inner) => inner.iter().try_for_each(|t| go(t, count)),
        Term::Obj(entries) => entries.iter().try_for_each(|(k, v)| {
            go(k, count)?;
            v.iter().try_for_each(|v| go(v, count))
        }),
        Term::Neg(t) | Term::Label(_, t) => go(t, count),
        Term::BinOp(l, _, r) => {
            go(l, count)?;
            go(r, count)
        }
        Term::Fold(_, xs, _, args) => {
            go(xs, count)?;
            args.iter().try_for_each(|a| go(a, count))
        }
        Term::TryCatch(t, c) => {
            go(t, count)?;
            c.iter().try_for_each(|c| go(c, count))
        }
        Term::IfThenElse(branches, otherwise) => {
            for (c, b) in branches {
                go(c, count)?;
                go(b, count)?;
            }
            otherwise.iter().try_for_each(|o| go(o, count))
        }
        // A definition costs nothing until it is called.
        Term::Def(defs, body) => expand(body, &Scope::Defs(defs, scope), count),
        Term::Call(name, args) => match scope.resolve(name, args.len()) {
            Callee::Builtin => args.iter().try_for_each(|a| go(a, count)),
            Callee::Arg(term, caller) => expand(term, caller, count),
            Callee::Def(def, defined) => {
                // A `$x` argument is evaluated once, here, and is a variable in the body; a
                // filter argument is the caller's term, unfolded wherever the body calls it.
                let mut filters = Vec::new();
                for (param, arg) in def.args.iter().zip(args) {
                    match param.strip_prefix('$') {
                        Some(_) => go(arg, count)?,
                        None => filters.push((*param, arg, scope)),
                    }
                }
                expand(&def.body, &Scope::Args(&filters, defined), count)
            }
        },
        Term::Path(t, path) => {
            go(t, count)?;
            path.0.iter().try_for_each(|(part, _)| match part {
                Part::Index(i) => go(i, count),
                Part::Range(a, b) => [a, b].into_iter().flatten().try_for_each(|x| go(x, count)),
            })
        }
    }
}
