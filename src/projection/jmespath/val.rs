//! The interpreter's values: borrowed parts of the input (never copied while evaluating), new
//! JavaScript values built by the expression, and the two things JSON cannot hold that the
//! reference can produce, `undefined` and expression references.

use std::cmp::Ordering;
use std::rc::Rc;

use crate::js::{self, JsMap};
use crate::render::json::write_json_compact;
use crate::value::{write_json_string, Map, Number, Value};

use super::parser::Node;
use crate::projection::meter;

/// A JavaScript value as the reference interpreter sees it.
#[derive(Clone, Debug)]
pub(crate) enum Val<'a> {
    Undefined,
    Null,
    Bool(bool),
    Num(f64),
    Str(Rc<str>),
    /// A key of an input object, used as a string.
    Key(&'a str),
    /// A value of the input document or of a literal, by reference.
    Ref(&'a Value),
    /// An array built by the expression, and its size (`projection::meter`).
    Arr(Rc<Vec<Val<'a>>>, u64),
    /// An object built by the expression, and its size.
    Obj(Rc<Obj<'a>>, u64),
    Expref(&'a Node),
}

/// Type tags, as the reference's `_getTypeName` and `Object.prototype.toString` tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Undefined,
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
    Expref,
}

/// An object built by the expression, keeping JavaScript property order.
pub(crate) type Obj<'a> = JsMap<Rc<str>, Val<'a>>;

/// A view of either kind of array.
pub(crate) enum ArrView<'b, 'a> {
    Doc(&'a [Value]),
    Own(&'b [Val<'a>]),
}

impl<'b, 'a> ArrView<'b, 'a> {
    pub(super) fn len(&self) -> usize {
        match self {
            ArrView::Doc(items) => items.len(),
            ArrView::Own(items) => items.len(),
        }
    }

    pub(super) fn get(&self, i: usize) -> Option<Val<'a>> {
        match self {
            ArrView::Doc(items) => items.get(i).map(Val::Ref),
            ArrView::Own(items) => items.get(i).cloned(),
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = Val<'a>> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// A view of either kind of object.
pub(crate) enum ObjView<'b, 'a> {
    Doc(&'a Map),
    Own(&'b Obj<'a>),
}

impl<'b, 'a> ObjView<'b, 'a> {
    pub(super) fn len(&self) -> usize {
        match self {
            ObjView::Doc(m) => m.len(),
            ObjView::Own(o) => o.len(),
        }
    }

    pub(super) fn get(&self, key: &str) -> Option<Val<'a>> {
        match self {
            ObjView::Doc(m) => m.get(key).map(Val::Ref),
            ObjView::Own(o) => o.get(key).cloned(),
        }
    }

    /// Entries in `Object.keys` order.
    pub(crate) fn entries(&self) -> Vec<(Val<'a>, Val<'a>)> {
        match self {
            ObjView::Doc(m) => m.iter().map(|(k, v)| (Val::Key(k), Val::Ref(v))).collect(),
            ObjView::Own(o) => o
                .iter()
                .map(|(k, v)| (Val::Str(k.clone()), v.clone()))
                .collect(),
        }
    }

    pub(crate) fn values(&self) -> Vec<Val<'a>> {
        match self {
            ObjView::Doc(m) => m.values().map(Val::Ref).collect(),
            ObjView::Own(o) => o.values().cloned().collect(),
        }
    }
}

impl<'a> Val<'a> {
    pub(crate) fn str(s: &str) -> Val<'a> {
        Val::Str(Rc::from(s))
    }

    /// A new array, refused when its size, counting shared parts once per occurrence, is over
    /// the run's bound.
    pub(crate) fn arr(items: Vec<Val<'a>>) -> Result<Val<'a>, RuntimeError> {
        let mut size = 1 + items.len().max(1) as u64;
        for item in &items {
            size = size.saturating_add(item.size());
            admit(size)?;
        }
        charge_items(items.len() as u64)?;
        Ok(Val::Arr(Rc::new(items), size))
    }

    /// A new object, refused as [`Val::arr`] is.
    pub(crate) fn obj(obj: Obj<'a>) -> Result<Val<'a>, RuntimeError> {
        let mut size = 1 + obj.len().max(1) as u64;
        for (k, v) in obj.iter() {
            size = size
                .saturating_add(k.len() as u64 + 3)
                .saturating_add(v.size());
            admit(size)?;
        }
        charge_items(obj.len() as u64)?;
        Ok(Val::Obj(Rc::new(obj), size))
    }

    /// The size of this value as JSON; a part of the input is walked to find it, which is
    /// charged.
    pub(crate) fn size(&self) -> u64 {
        match self {
            Val::Undefined | Val::Null | Val::Bool(true) | Val::Expref(_) => 4,
            Val::Bool(false) => 5,
            Val::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => {
                (n.abs() as u64).checked_ilog10().unwrap_or(0) as u64 + 1 + u64::from(*n < 0.0)
            }
            // The longest shortest-round-trip form of a double.
            Val::Num(_) => 24,
            Val::Str(s) => s.len() as u64 + 2,
            Val::Key(s) => s.len() as u64 + 2,
            Val::Ref(v) => {
                let (size, nodes) = meter::value_size(v, meter::max_value_bytes());
                meter::charge_items(nodes);
                size
            }
            Val::Arr(_, size) | Val::Obj(_, size) => *size,
        }
    }

    /// Charges for work that walks this whole value (printing, comparing, converting it).
    pub(crate) fn charge_walk(&self) -> Result<(), RuntimeError> {
        charge_items(self.size())
    }

    pub(super) fn kind(&self) -> Kind {
        match self {
            Val::Undefined => Kind::Undefined,
            Val::Null | Val::Ref(Value::Null) => Kind::Null,
            Val::Bool(_) | Val::Ref(Value::Bool(_)) => Kind::Boolean,
            Val::Num(_) | Val::Ref(Value::Number(_)) => Kind::Number,
            Val::Str(_) | Val::Key(_) | Val::Ref(Value::String(_)) => Kind::String,
            Val::Arr(..) | Val::Ref(Value::Array(_)) => Kind::Array,
            Val::Obj(..) | Val::Ref(Value::Object(_)) => Kind::Object,
            Val::Expref(_) => Kind::Expref,
        }
    }

    pub(crate) fn as_num(&self) -> Option<f64> {
        match self {
            Val::Num(n) => Some(*n),
            Val::Ref(Value::Number(n)) => Some(n.as_f64()),
            _ => None,
        }
    }

    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            Val::Key(s) => Some(s),
            Val::Ref(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        match self {
            Val::Bool(b) | Val::Ref(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    pub(crate) fn as_arr(&self) -> Option<ArrView<'_, 'a>> {
        match self {
            Val::Ref(Value::Array(items)) => Some(ArrView::Doc(items)),
            Val::Arr(items, _) => Some(ArrView::Own(items)),
            _ => None,
        }
    }

    pub(crate) fn as_obj(&self) -> Option<ObjView<'_, 'a>> {
        match self {
            Val::Ref(Value::Object(m)) => Some(ObjView::Doc(m)),
            Val::Obj(o, _) => Some(ObjView::Own(o)),
            _ => None,
        }
    }

    /// The reference's `isFalse`: `""`, `false`, `null`, `[]` and `{}` (numbers never are).
    pub(crate) fn is_false(&self) -> bool {
        match self.kind() {
            Kind::Null => true,
            Kind::Boolean => self.as_bool() == Some(false),
            Kind::String => self.as_str() == Some(""),
            Kind::Array => self.as_arr().is_some_and(|a| a.len() == 0),
            Kind::Object => self.as_obj().is_some_and(|o| o.len() == 0),
            _ => false,
        }
    }

    /// JavaScript's `===`: by value for primitives, by identity for arrays and objects.
    pub(crate) fn strict_eq(&self, other: &Val<'a>) -> bool {
        match (self.kind(), other.kind()) {
            (Kind::Undefined, Kind::Undefined) | (Kind::Null, Kind::Null) => true,
            (Kind::Boolean, Kind::Boolean) => self.as_bool() == other.as_bool(),
            (Kind::Number, Kind::Number) => self.as_num() == other.as_num(),
            (Kind::String, Kind::String) => self.as_str() == other.as_str(),
            (Kind::Array, Kind::Array) | (Kind::Object, Kind::Object) => match (self, other) {
                (Val::Ref(a), Val::Ref(b)) => std::ptr::eq(*a, *b),
                (Val::Arr(a, _), Val::Arr(b, _)) => Rc::ptr_eq(a, b),
                (Val::Obj(a, _), Val::Obj(b, _)) => Rc::ptr_eq(a, b),
                _ => false,
            },
            (Kind::Expref, Kind::Expref) => match (self, other) {
                (Val::Expref(a), Val::Expref(b)) => std::ptr::eq(*a, *b),
                _ => false,
            },
            _ => false,
        }
    }

    /// The reference's `strictDeepEqual`.
    pub(crate) fn deep_eq(&self, other: &Val<'a>) -> bool {
        if self.strict_eq(other) {
            return true;
        }
        if self.kind() != other.kind() {
            return false;
        }
        if let (Some(a), Some(b)) = (self.as_arr(), other.as_arr()) {
            return a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.deep_eq(&y));
        }
        if let (Some(a), Some(b)) = (self.as_obj(), other.as_obj()) {
            // Keys holding `undefined` still count as present in `first`, but read as
            // `undefined` from `second` when absent, exactly as the reference's loops do.
            let mut seen = 0;
            for (k, v) in a.entries() {
                let key = k.as_str().unwrap_or_default();
                let w = b.get(key).unwrap_or(Val::Undefined);
                if !v.deep_eq(&w) {
                    return false;
                }
                if b.get(key).is_some() {
                    seen += 1;
                }
            }
            return seen == b.len();
        }
        false
    }

    /// ToString, as string concatenation and `String(v)` apply it.
    pub(crate) fn to_js_string(&self) -> String {
        match self.kind() {
            Kind::Undefined => "undefined".into(),
            Kind::Null => "null".into(),
            Kind::Boolean => self.as_bool().unwrap_or(false).to_string(),
            Kind::Number => js::number::to_string(self.as_num().unwrap_or(f64::NAN)),
            Kind::String => self.as_str().unwrap_or_default().to_owned(),
            Kind::Array => {
                let mut out = String::new();
                if let Some(items) = self.as_arr() {
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        if !matches!(item.kind(), Kind::Undefined | Kind::Null) {
                            out.push_str(&item.to_js_string());
                        }
                    }
                }
                out
            }
            Kind::Object | Kind::Expref => "[object Object]".into(),
        }
    }

    /// ToNumber of a primitive (arrays and objects go through [`Self::to_js_string`] first).
    fn to_js_number(&self) -> f64 {
        match self.kind() {
            Kind::Undefined => f64::NAN,
            Kind::Null => 0.0,
            Kind::Boolean => f64::from(u8::from(self.as_bool().unwrap_or(false))),
            Kind::Number => self.as_num().unwrap_or(f64::NAN),
            _ => js::string_to_number(self.as_str().unwrap_or_default()),
        }
    }

    /// JavaScript's abstract relational comparison `self < other`: `None` is its `undefined`
    /// (a NaN was involved), which makes every relational operator false.
    pub(crate) fn js_less(&self, other: &Val<'a>) -> Option<bool> {
        let prim = |v: &Val<'a>| -> Val<'a> {
            match v.kind() {
                Kind::Array | Kind::Object | Kind::Expref => Val::Str(Rc::from(v.to_js_string())),
                _ => v.clone(),
            }
        };
        let (a, b) = (prim(self), prim(other));
        if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
            return Some(js::cmp_utf16(x, y) == Ordering::Less);
        }
        let (x, y) = (a.to_js_number(), b.to_js_number());
        x.partial_cmp(&y).map(|o| o == Ordering::Less)
    }

    /// `JSON.stringify(v)`; `None` where it returns `undefined`.
    pub(crate) fn to_json(&self) -> Option<String> {
        let mut out = String::new();
        self.write_json(&mut out).then_some(out)
    }

    fn write_json(&self, out: &mut String) -> bool {
        match self {
            Val::Undefined | Val::Expref(_) => return false,
            Val::Ref(v) => write_json_compact(v, out),
            _ => match self.kind() {
                Kind::Null => out.push_str("null"),
                Kind::Boolean => out.push_str(&self.to_js_string()),
                Kind::Number => match self.as_num() {
                    Some(n) if n.is_finite() => out.push_str(&js::number::to_string(n)),
                    _ => out.push_str("null"),
                },
                Kind::String => write_json_string(self.as_str().unwrap_or_default(), out),
                Kind::Array => {
                    out.push('[');
                    for (i, item) in self.as_arr().iter().flat_map(|a| a.iter()).enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        if !item.write_json(out) {
                            out.push_str("null");
                        }
                    }
                    out.push(']');
                }
                _ => {
                    out.push('{');
                    let mut first = true;
                    for (k, v) in self.as_obj().iter().flat_map(|o| o.entries()) {
                        let mut member = String::new();
                        if v.write_json(&mut member) {
                            if !first {
                                out.push(',');
                            }
                            first = false;
                            write_json_string(k.as_str().unwrap_or_default(), out);
                            out.push(':');
                            out.push_str(&member);
                        }
                    }
                    out.push('}');
                }
            },
        }
        true
    }

    /// The result as a document value: parts of the input are cloned here and only here.
    /// `undefined`, NaN and infinities become `null`, as the TOON encoder normalizes them.
    pub(crate) fn into_value(self) -> Result<Value, Unrepresentable> {
        Ok(match self {
            Val::Undefined | Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(b),
            Val::Num(n) => Number::from_f64(n).map_or(Value::Null, Value::Number),
            Val::Str(s) => Value::String(s.to_string()),
            Val::Key(s) => Value::String(s.to_owned()),
            Val::Ref(v) => v.clone(),
            Val::Arr(items, _) => Value::Array(
                Rc::unwrap_or_clone(items)
                    .into_iter()
                    .map(Val::into_value)
                    .collect::<Result<_, _>>()?,
            ),
            Val::Obj(obj, _) => {
                let mut map = Map::new();
                for (k, v) in Rc::unwrap_or_clone(obj) {
                    map.insert(k.to_string().into(), v.into_value()?);
                }
                Value::Object(map)
            }
            Val::Expref(_) => return Err(Unrepresentable),
        })
    }
}

/// A runtime failure (the reference throws; the projection turns it into `_jqError`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RuntimeError(pub(crate) String);

impl RuntimeError {
    /// The failure with `msg`.
    pub(super) fn new(msg: impl Into<String>) -> RuntimeError {
        RuntimeError(msg.into())
    }
}

/// What evaluating a node gives.
pub(crate) type Eval<'a> = Result<Val<'a>, RuntimeError>;

/// Ends the run when a value of `size` may not be built.
fn admit(size: u64) -> Result<(), RuntimeError> {
    if meter::admit(size) {
        Ok(())
    } else {
        Err(RuntimeError::new(meter::reason()))
    }
}

/// Charges for `n` items or bytes of work.
pub(crate) fn charge_items(n: u64) -> Result<(), RuntimeError> {
    if meter::charge_items(n) {
        Ok(())
    } else {
        Err(RuntimeError::new(meter::reason()))
    }
}

/// An expression reference reached the result, where the reference would print its syntax tree.
#[derive(Debug)]
pub(crate) struct Unrepresentable;
