//! Tree-walking evaluation with the reference's semantics, node type by node type.

use super::functions::call;
use super::lexer::Cmp;
use super::parser::Node;
use super::val::{charge_items, Eval, Kind, Obj, RuntimeError, Val};

/// Evaluates `node` against `value`, one unit of fuel per node evaluated.
pub(crate) fn visit<'a>(node: &'a Node, value: &Val<'a>) -> Eval<'a> {
    charge_items(0)?;
    match node {
        Node::Missing => Err(RuntimeError::new("cannot evaluate a missing expression")),
        Node::Field(name) => Ok(value
            .as_obj()
            .and_then(|o| o.get(name))
            .map(|v| match v {
                // A property holding `undefined` reads as null, as `field === undefined` does.
                Val::Undefined => Val::Null,
                v => v,
            })
            .unwrap_or(Val::Null)),
        Node::Subexpression(left, right) => {
            let base = visit(left, value)?;
            visit(right, &base)
        }
        Node::IndexExpression(left, right) => {
            let base = visit(left, value)?;
            visit(right, &base)
        }
        Node::Index(index) => Ok(index_array(value, *index)),
        Node::Slice(parts) => slice(value, parts),
        Node::Projection(left, right) => {
            let base = visit(left, value)?;
            let Some(items) = base.as_arr() else {
                return Ok(Val::Null);
            };
            project(items.iter(), right)
        }
        Node::ValueProjection(left, right) => {
            let base = visit(left, value)?;
            let Some(obj) = base.as_obj() else {
                return Ok(Val::Null);
            };
            project(obj.values().into_iter(), right)
        }
        Node::FilterProjection {
            left,
            right,
            condition,
        } => {
            let base = visit(left, value)?;
            let Some(items) = base.as_arr() else {
                return Ok(Val::Null);
            };
            let mut kept = Vec::new();
            for item in items.iter() {
                if !visit(condition, &item)?.is_false() {
                    kept.push(item);
                }
            }
            project(kept.into_iter(), right)
        }
        Node::Comparator(op, left, right) => {
            let a = visit(left, value)?;
            let b = visit(right, value)?;
            // Deep equality walks the smaller side; ordering prints arrays and objects.
            charge_items(match op {
                Cmp::Eq | Cmp::Ne => a.size().min(b.size()),
                _ => a.size().saturating_add(b.size()),
            })?;
            Ok(Val::Bool(match op {
                Cmp::Eq => a.deep_eq(&b),
                Cmp::Ne => !a.deep_eq(&b),
                Cmp::Lt => a.js_less(&b) == Some(true),
                Cmp::Gt => b.js_less(&a) == Some(true),
                Cmp::Lte => b.js_less(&a) == Some(false),
                Cmp::Gte => a.js_less(&b) == Some(false),
            }))
        }
        Node::Flatten(inner) => {
            let base = visit(inner, value)?;
            let Some(items) = base.as_arr() else {
                return Ok(Val::Null);
            };
            let mut merged = Vec::with_capacity(items.len());
            for item in items.iter() {
                match item.as_arr() {
                    Some(inner) => merged.extend(inner.iter()),
                    None => merged.push(item.clone()),
                }
            }
            Val::arr(merged)
        }
        Node::Identity | Node::Current => Ok(value.clone()),
        Node::MultiSelectList(items) => {
            if value.kind() == Kind::Null {
                return Ok(Val::Null);
            }
            let out = items
                .iter()
                .map(|n| visit(n, value))
                .collect::<Result<Vec<_>, _>>()?;
            Val::arr(out)
        }
        Node::MultiSelectHash(pairs) => {
            if value.kind() == Kind::Null {
                return Ok(Val::Null);
            }
            let mut obj = Obj::default();
            for (key, n) in pairs {
                obj.insert(key.clone(), visit(n, value)?);
            }
            Val::obj(obj)
        }
        Node::Or(left, right) => {
            let first = visit(left, value)?;
            if first.is_false() {
                visit(right, value)
            } else {
                Ok(first)
            }
        }
        Node::And(left, right) => {
            let first = visit(left, value)?;
            if first.is_false() {
                Ok(first)
            } else {
                visit(right, value)
            }
        }
        Node::Not(inner) => Ok(Val::Bool(visit(inner, value)?.is_false())),
        Node::Literal(v) => Ok(Val::Ref(v)),
        Node::Pipe(left, right) => {
            let base = visit(left, value)?;
            visit(right, &base)
        }
        Node::Function(name, args) => {
            let resolved = args
                .iter()
                .map(|n| visit(n, value))
                .collect::<Result<Vec<_>, _>>()?;
            call(name.as_deref(), resolved, visit)
        }
        Node::ExpressionReference(inner) => match **inner {
            // Tagging `undefined` as an expression reference throws in the reference.
            Node::Missing => Err(RuntimeError::new("expression reference to nothing")),
            ref n => Ok(Val::Expref(n)),
        },
    }
}

/// Applies `right` to each item, dropping nulls (but not `undefined`), as projections do.
fn project<'a>(items: impl Iterator<Item = Val<'a>>, right: &'a Node) -> Eval<'a> {
    let mut out = Vec::new();
    for item in items {
        let v = visit(right, &item)?;
        if v.kind() != Kind::Null {
            out.push(v);
        }
    }
    Val::arr(out)
}

/// `value[index]` with negative indexes counted from the end; anything else is null.
fn index_array<'a>(value: &Val<'a>, index: f64) -> Val<'a> {
    let Some(items) = value.as_arr() else {
        return Val::Null;
    };
    let len = items.len() as f64;
    let i = if index < 0.0 { len + index } else { index };
    if i >= 0.0 && i < len && i.fract() == 0.0 {
        items.get(i as usize).unwrap_or(Val::Null)
    } else {
        Val::Null
    }
}

/// The reference's slice loop, run on doubles exactly as written there.
fn slice<'a>(value: &Val<'a>, parts: &[Option<f64>; 3]) -> Eval<'a> {
    let Some(items) = value.as_arr() else {
        return Ok(Val::Null);
    };
    let len = items.len() as f64;
    let step = match parts[2] {
        None => 1.0,
        Some(0.0) => return Err(RuntimeError::new("Invalid slice, step cannot be 0")),
        Some(s) => s,
    };
    let negative = step < 0.0;
    let cap = |v: f64| {
        if v < 0.0 {
            let v = v + len;
            if v < 0.0 {
                if negative {
                    -1.0
                } else {
                    0.0
                }
            } else {
                v
            }
        } else if v >= len {
            if negative {
                len - 1.0
            } else {
                len
            }
        } else {
            v
        }
    };
    let start = parts[0].map_or(if negative { len - 1.0 } else { 0.0 }, cap);
    let stop = parts[1].map_or(if negative { -1.0 } else { len }, cap);
    let mut out = Vec::new();
    let mut i = start;
    // Bounds stay within [-1, len], and a NaN anywhere ends the loop at once, so the loop
    // runs at most `len + 1` times.
    // Defaults and capping test `step < 0`, the loop tests `step > 0`: a NaN step takes the
    // descending loop with ascending bounds, which ends at once.
    let ascending = step > 0.0;
    while (ascending && i < stop) || (!ascending && i > stop) {
        out.push(if i >= 0.0 && i < len {
            items.get(i as usize).unwrap_or(Val::Undefined)
        } else {
            Val::Undefined
        });
        i += step;
    }
    Val::arr(out)
}
