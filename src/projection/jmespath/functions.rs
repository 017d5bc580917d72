//! The reference's built-in functions: the same signatures, type checks and JavaScript behaviour
//! (including `sort` by string form, `starts_with` via `lastIndexOf`, and `max_by` comparing
//! against `-Infinity`).

use std::cmp::Ordering;
use std::rc::Rc;

use super::parser::Node;
use super::val::{charge_items, Eval, Kind, Obj, RuntimeError, Val};
use crate::js;
use crate::projection::meter;

/// An argument type of a signature.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ty {
    Num,
    Any,
    Str,
    Arr,
    Obj,
    Expref,
    ArrNum,
    ArrStr,
}

/// One function's signature: the types allowed per argument, and whether the last repeats.
struct Sig(&'static [&'static [Ty]], bool);

fn signature(name: &str) -> Option<Sig> {
    use Ty::*;
    Some(match name {
        "abs" | "ceil" | "floor" => Sig(&[&[Num]], false),
        "avg" | "sum" => Sig(&[&[ArrNum]], false),
        "contains" => Sig(&[&[Str, Arr], &[Any]], false),
        "ends_with" | "starts_with" => Sig(&[&[Str], &[Str]], false),
        "length" => Sig(&[&[Str, Arr, Obj]], false),
        "map" => Sig(&[&[Expref], &[Arr]], false),
        "max" | "min" => Sig(&[&[ArrNum, ArrStr]], false),
        "merge" => Sig(&[&[Obj]], true),
        "max_by" | "min_by" | "sort_by" => Sig(&[&[Arr], &[Expref]], false),
        "type" | "to_array" | "to_string" | "to_number" => Sig(&[&[Any]], false),
        "keys" | "values" => Sig(&[&[Obj]], false),
        "sort" => Sig(&[&[ArrStr, ArrNum]], false),
        "join" => Sig(&[&[Str], &[ArrStr]], false),
        "reverse" => Sig(&[&[Str, Arr]], false),
        "not_null" => Sig(&[&[Any]], true),
        _ => return None,
    })
}

fn matches(ty: Ty, v: &Val<'_>) -> bool {
    let all = |k: Kind| v.as_arr().is_some_and(|a| a.iter().all(|x| x.kind() == k));
    match ty {
        Ty::Any => true,
        Ty::Num => v.kind() == Kind::Number,
        Ty::Str => v.kind() == Kind::String,
        Ty::Arr => v.kind() == Kind::Array,
        Ty::Obj => v.kind() == Kind::Object,
        Ty::Expref => v.kind() == Kind::Expref,
        Ty::ArrNum => all(Kind::Number),
        Ty::ArrStr => all(Kind::String),
    }
}

fn type_error(name: &str) -> RuntimeError {
    RuntimeError::new(format!(
        "TypeError: {name}() received an argument of the wrong type"
    ))
}

/// Evaluates an expression reference's node against a value: the interpreter's, handed to
/// [`call`] so that the functions taking one (`map`, `sort_by`, ...) need not name it.
pub(crate) type Visit = for<'a, 'v> fn(&'a Node, &'v Val<'a>) -> Eval<'a>;

/// Calls the function `name` (None: the callee had no name) with evaluated arguments, evaluating
/// expression references with `visit`.
pub(crate) fn call<'a>(name: Option<&str>, args: Vec<Val<'a>>, visit: Visit) -> Eval<'a> {
    let name = name.unwrap_or("undefined");
    let Some(Sig(types, variadic)) = signature(name) else {
        return Err(RuntimeError::new(format!("Unknown function: {name}()")));
    };
    let arity_ok = if variadic {
        args.len() >= types.len()
    } else {
        args.len() == types.len()
    };
    if !arity_ok {
        return Err(RuntimeError::new(format!(
            "ArgumentError: {name}() takes {} arguments but received {}",
            types.len(),
            args.len()
        )));
    }
    // Only the declared positions are checked; extra variadic arguments pass unchecked.
    for (allowed, arg) in types.iter().zip(&args) {
        if !allowed.iter().any(|t| matches(*t, arg)) {
            return Err(type_error(name));
        }
    }
    let num = |v: &Val<'a>| v.as_num().unwrap_or(f64::NAN);
    let first = &args[0];
    Ok(match name {
        "abs" => Val::Num(num(first).abs()),
        "ceil" => Val::Num(num(first).ceil()),
        "floor" => Val::Num(num(first).floor()),
        "avg" | "sum" => {
            let items = first.as_arr().ok_or_else(|| type_error(name))?;
            let sum = items.iter().fold(0.0, |acc, v| acc + num(&v));
            if name == "sum" {
                Val::Num(sum)
            } else {
                Val::Num(sum / items.len() as f64)
            }
        }
        "contains" => Val::Bool(match first.as_arr() {
            Some(items) => items.iter().any(|v| v.strict_eq(&args[1])),
            None => {
                args[1].charge_walk()?;
                first
                    .as_str()
                    .unwrap_or_default()
                    .contains(args[1].to_js_string().as_str())
            }
        }),
        "ends_with" => Val::Bool(str_arg(first).ends_with(str_arg(&args[1]))),
        // `lastIndexOf(prefix) === 0`: true only when the prefix occurs nowhere later.
        "starts_with" => Val::Bool(str_arg(first).rfind(str_arg(&args[1])) == Some(0)),
        "length" => Val::Num(match (first.as_str(), first.as_arr(), first.as_obj()) {
            (Some(s), _, _) => js::utf16_len(s),
            (_, Some(a), _) => a.len(),
            (_, _, Some(o)) => o.len(),
            _ => 0,
        } as f64),
        "map" => {
            let node = expref(first)?;
            let items = args[1].as_arr().ok_or_else(|| type_error(name))?;
            let out = items
                .iter()
                .map(|item| visit(node, &item))
                .collect::<Result<Vec<_>, _>>()?;
            Val::arr(out)?
        }
        "max" | "min" => extreme(first, name == "max"),
        "merge" => merge(&args)?,
        "max_by" | "min_by" => extreme_by(first, expref(&args[1])?, name == "max_by", visit)?,
        "sort_by" => sort_by(first, expref(&args[1])?, visit)?,
        "type" => match first.kind() {
            Kind::Number => Val::str("number"),
            Kind::String => Val::str("string"),
            Kind::Array => Val::str("array"),
            Kind::Object => Val::str("object"),
            Kind::Boolean => Val::str("boolean"),
            Kind::Expref => Val::str("expref"),
            Kind::Null => Val::str("null"),
            Kind::Undefined => Val::Undefined,
        },
        "keys" | "values" => {
            let obj = first.as_obj().ok_or_else(|| type_error(name))?;
            if name == "keys" {
                Val::arr(obj.entries().into_iter().map(|(k, _)| k).collect())?
            } else {
                Val::arr(obj.values())?
            }
        }
        "sort" => {
            let items = first.as_arr().ok_or_else(|| type_error(name))?;
            // Array.prototype.sort without a comparator: stable, by the elements' string forms.
            first.charge_walk()?;
            let mut keyed: Vec<(String, Val<'a>)> =
                items.iter().map(|v| (v.to_js_string(), v)).collect();
            keyed.sort_by(|a, b| js::cmp_utf16(&a.0, &b.0));
            Val::arr(keyed.into_iter().map(|(_, v)| v).collect())?
        }
        "join" => {
            let items = args[1].as_arr().ok_or_else(|| type_error(name))?;
            // The parts may be one shared string many times: size the result first.
            let glue = str_arg(first).len() as u64;
            let joined = items.iter().fold(0u64, |n, v| {
                n.saturating_add(str_arg(&v).len() as u64)
                    .saturating_add(glue)
            });
            if !meter::admit(joined) {
                return Err(RuntimeError::new(meter::reason()));
            }
            charge_items(joined)?;
            let parts: Vec<String> = items.iter().map(|v| v.to_js_string()).collect();
            Val::str(&parts.join(str_arg(first)))
        }
        "reverse" => match first.as_arr() {
            Some(items) => {
                let mut out: Vec<Val<'a>> = items.iter().collect();
                out.reverse();
                Val::arr(out)?
            }
            None => {
                // Reversed UTF-16 code units; split surrogate pairs become U+FFFD (decision 0002).
                let mut units: Vec<u16> = str_arg(first).encode_utf16().collect();
                units.reverse();
                Val::str(&String::from_utf16_lossy(&units))
            }
        },
        "to_array" => match first.kind() {
            Kind::Array => first.clone(),
            _ => Val::arr(vec![first.clone()])?,
        },
        "to_string" => match first.kind() {
            Kind::String => first.clone(),
            Kind::Expref => return Err(RuntimeError::new("cannot stringify an expression")),
            _ => {
                first.charge_walk()?;
                first.to_json().map_or(Val::Undefined, |s| Val::str(&s))
            }
        },
        "to_number" => match first.kind() {
            Kind::Number => first.clone(),
            Kind::String => {
                let n = js::string_to_number(str_arg(first));
                if n.is_nan() {
                    Val::Null
                } else {
                    Val::Num(n)
                }
            }
            _ => Val::Null,
        },
        "not_null" => args
            .iter()
            .find(|v| v.kind() != Kind::Null)
            .cloned()
            .unwrap_or(Val::Null),
        _ => return Err(RuntimeError::new(format!("Unknown function: {name}()"))),
    })
}

fn str_arg<'b>(v: &'b Val<'_>) -> &'b str {
    v.as_str().unwrap_or_default()
}

fn expref<'a>(v: &Val<'a>) -> Result<&'a Node, RuntimeError> {
    match v {
        Val::Expref(node) => Ok(node),
        _ => Err(RuntimeError::new("expected an expression reference")),
    }
}

/// `max`/`min`: `Math.max`/`Math.min` for numbers, `localeCompare` for strings.
fn extreme<'a>(arg: &Val<'a>, max: bool) -> Val<'a> {
    let Some(items) = arg.as_arr() else {
        return Val::Null;
    };
    let Some(head) = items.get(0) else {
        return Val::Null;
    };
    if head.kind() == Kind::Number {
        let mut best = if max {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        for v in items.iter() {
            let x = v.as_num().unwrap_or(f64::NAN);
            if x.is_nan() {
                return Val::Num(f64::NAN);
            }
            let better = if max {
                x > best || (x == 0.0 && best == 0.0 && best.is_sign_negative())
            } else {
                x < best || (x == 0.0 && best == 0.0 && x.is_sign_negative())
            };
            if better {
                best = x;
            }
        }
        return Val::Num(best);
    }
    let mut best = head;
    for v in items.iter().skip(1) {
        let (a, b) = (str_arg(&best), str_arg(&v));
        let replace = if max {
            js::locale_compare(a, b) == Ordering::Less
        } else {
            js::locale_compare(b, a) == Ordering::Less
        };
        if replace {
            best = v;
        }
    }
    best
}

fn merge<'a>(args: &[Val<'a>]) -> Eval<'a> {
    // A string adds an entry of at least `"0":"x",` per UTF-16 unit: refuse before building.
    let units = args
        .iter()
        .filter_map(|a| a.as_str())
        .fold(0u64, |n, s| n.saturating_add(s.len() as u64));
    if !meter::admit(units.saturating_mul(8)) {
        return Err(RuntimeError::new(meter::reason()));
    }
    let mut out = Obj::default();
    for arg in args {
        // `for (key in value)`: own enumerable keys of objects, indexes of arrays and strings.
        if let Some(obj) = arg.as_obj() {
            for (k, v) in obj.entries() {
                out.insert(Rc::from(k.as_str().unwrap_or_default()), v);
            }
        } else if let Some(items) = arg.as_arr() {
            for (i, v) in items.iter().enumerate() {
                out.insert(Rc::from(i.to_string()), v);
            }
        } else if let Some(s) = arg.as_str() {
            for (i, unit) in s.encode_utf16().enumerate() {
                out.insert(
                    Rc::from(i.to_string()),
                    Val::str(&String::from_utf16_lossy(&[unit])),
                );
            }
        }
    }
    Val::obj(out)
}

/// The key of `item` under `node`, which must be a number or a string.
fn sort_key<'a>(node: &'a Node, item: &Val<'a>, visit: Visit) -> Eval<'a> {
    let key = visit(node, item)?;
    match key.kind() {
        Kind::Number | Kind::String => Ok(key),
        _ => Err(RuntimeError::new("TypeError: expected one of 0,2")),
    }
}

fn extreme_by<'a>(arg: &Val<'a>, node: &'a Node, max: bool, visit: Visit) -> Eval<'a> {
    let items = arg.as_arr().ok_or_else(|| type_error("max_by"))?;
    let mut best_key = Val::Num(if max {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    });
    let mut best = Val::Undefined;
    for item in items.iter() {
        let key = sort_key(node, &item, visit)?;
        // `current > maxNumber` with JavaScript coercion: string keys meet the initial
        // ±Infinity as numbers, so non-numeric strings never win.
        let wins = if max {
            best_key.js_less(&key) == Some(true)
        } else {
            key.js_less(&best_key) == Some(true)
        };
        if wins {
            best_key = key;
            best = item;
        }
    }
    Ok(best)
}

fn sort_by<'a>(arg: &Val<'a>, node: &'a Node, visit: Visit) -> Eval<'a> {
    let items = arg.as_arr().ok_or_else(|| type_error("sort_by"))?;
    if items.len() == 0 {
        return Val::arr(Vec::new());
    }
    let mut keyed = Vec::with_capacity(items.len());
    for item in items.iter() {
        keyed.push((visit(node, &item)?, item));
    }
    let required = keyed[0].0.kind();
    if !matches!(required, Kind::Number | Kind::String) {
        return Err(RuntimeError::new("TypeError"));
    }
    // With two or more elements every key meets the comparator, which checks its type.
    if keyed.len() > 1 && keyed.iter().any(|(k, _)| k.kind() != required) {
        return Err(RuntimeError::new("TypeError: sort_by keys of mixed types"));
    }
    keyed.sort_by(|(a, _), (b, _)| {
        if b.js_less(a) == Some(true) {
            Ordering::Greater
        } else if a.js_less(b) == Some(true) {
            Ordering::Less
        } else {
            Ordering::Equal
        }
    });
    Val::arr(keyed.into_iter().map(|(_, v)| v).collect())
}
