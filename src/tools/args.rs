//! Tool arguments, each declared once. A [`Field`] names an argument and says what its value
//! must be (type, enum, bounds, default) and how it is described; [`arguments!`] declares a
//! tool's argument struct as a list of such fields, which yields the struct, its reading from a
//! call's arguments ([`Arguments::take`]) and its input schema ([`input_schema`]), so the schema
//! the client sees and the type the tool gets cannot disagree. The server checks a call against
//! that schema (`tools::schema`) before reading it. The arguments several tools share are
//! declared here once: the repository ([`OWNER`], [`REPO`]), paging ([`PER_PAGE`], [`PAGE`]) and
//! the common ones ([`CommonArgs`]: [`JQ`], [`OUTPUT_FORMAT`], [`QUERY_PARAMS`]), which
//! [`WithCommon`] reads apart from the tool's own.

use crate::projection;
use crate::render::{OutputFormat, RenderError};
use crate::value::{Map as JsMap, Value};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{json, Map, Value as Json};
use std::fmt;

/// The most entries `queryParams` may hold: far more than any API query takes, and small enough
/// that the URL stays within what upstreams accept; a larger map is refused before its entries
/// are read.
pub(crate) const MAX_QUERY_PARAMS: usize = 1_000;

/// The JSON Schema form of a [`Field`]'s value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Type {
    /// A string; `min`/`max` bound its length in characters.
    String,
    /// A whole number; `min`/`max` bound it.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// Any JSON object.
    Object,
    /// An object of strings.
    StringMap,
    /// A whole number of at least `min`, or a name of 1 to `max` characters.
    IdOrName,
}

/// The value a [`Field`] takes when a call leaves it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// A whole number.
    Integer(u64),
    /// A boolean.
    Boolean(bool),
    /// A string.
    Text(&'static str),
}

/// One argument, declared once: its name, what its value must be, and its description. Its
/// schema fragment is [`Field::schema`]; the Rust type it reads into implements [`ArgValue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The argument's name in a call.
    pub name: &'static str,
    /// The value's form.
    pub(crate) ty: Type,
    /// The allowed strings, when only some are (empty: any).
    pub(crate) one_of: &'static [&'static str],
    /// The least value or length.
    pub min: Option<u64>,
    /// The greatest value or length.
    pub max: Option<u64>,
    /// The value when left out; also the schema's `default`.
    pub default: Option<Fallback>,
    /// What the model reads about it.
    pub description: &'static str,
}

impl Field {
    const fn new(name: &'static str, ty: Type) -> Field {
        Field {
            name,
            ty,
            one_of: &[],
            min: None,
            max: None,
            default: None,
            description: "",
        }
    }

    /// A string argument.
    pub const fn string(name: &'static str) -> Field {
        Field::new(name, Type::String)
    }

    /// A whole-number argument.
    pub(crate) const fn integer(name: &'static str) -> Field {
        Field::new(name, Type::Integer)
    }

    /// A boolean argument.
    pub(crate) const fn boolean(name: &'static str) -> Field {
        Field::new(name, Type::Boolean)
    }

    /// An argument of any JSON object.
    pub(crate) const fn object(name: &'static str) -> Field {
        Field::new(name, Type::Object)
    }

    /// An object of strings.
    pub(crate) const fn string_map(name: &'static str) -> Field {
        Field::new(name, Type::StringMap)
    }

    /// A string that must be one of `choices`.
    pub(crate) const fn one_of(name: &'static str, choices: &'static [&'static str]) -> Field {
        Field {
            one_of: choices,
            ..Field::new(name, Type::String)
        }
    }

    /// A positive id of at least `min`, or a name of 1 to `max_len` characters.
    pub(crate) const fn id_or_name(name: &'static str, min: u64, max_len: u64) -> Field {
        Field {
            min: Some(min),
            max: Some(max_len),
            ..Field::new(name, Type::IdOrName)
        }
    }

    /// The same field with at least `min` (a value, or a string's length).
    pub(crate) const fn min(self, min: u64) -> Field {
        Field {
            min: Some(min),
            ..self
        }
    }

    /// The same field with at most `max` (a value, or a string's length).
    pub(crate) const fn max(self, max: u64) -> Field {
        Field {
            max: Some(max),
            ..self
        }
    }

    /// The same field taking `value` when left out.
    pub(crate) const fn default(self, value: Fallback) -> Field {
        Field {
            default: Some(value),
            ..self
        }
    }

    /// The same field described by `text`.
    pub(crate) const fn describe(self, text: &'static str) -> Field {
        Field {
            description: text,
            ..self
        }
    }

    /// The field's schema fragment. Keywords come in one order for every field (type, enum,
    /// bounds, default, description), which is the order the listed schemas have always had.
    pub(crate) fn schema(&self) -> Json {
        let mut s = Map::new();
        let (lower, upper) = match self.ty {
            Type::String => ("minLength", "maxLength"),
            _ => ("minimum", "maximum"),
        };
        match self.ty {
            Type::IdOrName => {
                s.insert(
                    "anyOf".into(),
                    json!([
                        {"type": "integer", "minimum": self.min},
                        {"type": "string", "minLength": 1, "maxLength": self.max},
                    ]),
                );
            }
            ty => {
                let name = match ty {
                    Type::String => "string",
                    Type::Integer => "integer",
                    Type::Boolean => "boolean",
                    _ => "object",
                };
                s.insert("type".into(), name.into());
                if !self.one_of.is_empty() {
                    s.insert("enum".into(), self.one_of.into());
                }
                for (key, bound) in [(lower, self.min), (upper, self.max)] {
                    if let Some(n) = bound {
                        s.insert(key.into(), n.into());
                    }
                }
                if ty == Type::StringMap {
                    s.insert("additionalProperties".into(), json!({"type": "string"}));
                }
            }
        }
        if let Some(value) = self.default {
            let value = match value {
                Fallback::Integer(n) => n.into(),
                Fallback::Boolean(b) => b.into(),
                Fallback::Text(t) => t.into(),
            };
            s.insert("default".into(), value);
        }
        // A name every model knows the meaning of (`owner`, `repo`) goes without one, rather
        // than with an empty one.
        if !self.description.is_empty() {
            s.insert("description".into(), self.description.into());
        }
        Json::Object(s)
    }

    /// Why `value` cannot be read as this field (`expected`: what it should have been).
    fn wrong(&self, expected: &'static str) -> ArgError {
        self.refused(ArgProblem::Expected(expected))
    }

    /// This field's argument refused for `problem`.
    pub(crate) fn refused(&self, problem: ArgProblem) -> ArgError {
        ArgError {
            name: self.name,
            problem,
        }
    }
}

/// Why a call's argument cannot be read: which argument and what is wrong with it. Its
/// `Display` is the text of the tool's invalid-arguments error, written where the registry
/// turns it into [`ToolError::InvalidArguments`](super::registry::ToolError::InvalidArguments).
#[derive(Debug)]
pub struct ArgError {
    /// The argument's name in a call.
    pub name: &'static str,
    /// What is wrong with it.
    pub(crate) problem: ArgProblem,
}

/// What is wrong with an argument.
#[derive(Debug)]
pub(crate) enum ArgProblem {
    /// Left out, and it has no default.
    Missing,
    /// Not of its declared type: what it should have been.
    Expected(&'static str),
    /// Not a whole number, or less than the least it may be (`None`: any whole number).
    NotWhole(Option<u64>),
    /// `outputFormat` names no format.
    Format(RenderError),
    /// `queryParams` is not an object of at most [`MAX_QUERY_PARAMS`] strings.
    Query(serde_json::Error),
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name;
        match &self.problem {
            ArgProblem::Missing => write!(f, "arguments.{name}: is required"),
            ArgProblem::Expected(expected) => write!(f, "arguments.{name}: expected {expected}"),
            ArgProblem::NotWhole(None) => write!(f, "{name} must be a whole number"),
            ArgProblem::NotWhole(Some(least)) => {
                write!(f, "{name} must be a whole number, {least} or more")
            }
            // Both say which argument themselves.
            ArgProblem::Format(error) => error.fmt(f),
            ArgProblem::Query(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ArgError {}

/// A Rust type an argument reads into. The value has passed the schema check already, so a
/// mismatch here is a field declared with the wrong type; it is still refused with the field's
/// name rather than read wrongly.
pub trait ArgValue: Sized {
    /// Whether a call may leave the argument out without a default (an `Option`).
    const OPTIONAL: bool = false;
    /// `value` (`None`: left out) read as `field`.
    fn read(value: Option<Json>, field: &Field) -> Result<Self, ArgError>;
}

/// The declared default of `field`, or the error of a missing required argument.
fn fallback(field: &Field) -> Result<Fallback, ArgError> {
    field
        .default
        .ok_or_else(|| field.refused(ArgProblem::Missing))
}

impl ArgValue for String {
    fn read(value: Option<Json>, field: &Field) -> Result<String, ArgError> {
        match value {
            Some(Json::String(s)) => Ok(s),
            None => match fallback(field)? {
                Fallback::Text(t) => Ok(t.to_owned()),
                _ => Err(field.wrong("string")),
            },
            Some(_) => Err(field.wrong("string")),
        }
    }
}

impl ArgValue for u64 {
    fn read(value: Option<Json>, field: &Field) -> Result<u64, ArgError> {
        match value {
            Some(Json::Number(n)) => whole(&n).ok_or_else(|| field.wrong("a whole number >= 0")),
            None => match fallback(field)? {
                Fallback::Integer(n) => Ok(n),
                _ => Err(field.wrong("integer")),
            },
            Some(_) => Err(field.wrong("integer")),
        }
    }
}

impl ArgValue for bool {
    fn read(value: Option<Json>, field: &Field) -> Result<bool, ArgError> {
        match value {
            Some(Json::Bool(b)) => Ok(b),
            None => match fallback(field)? {
                Fallback::Boolean(b) => Ok(b),
                _ => Err(field.wrong("boolean")),
            },
            Some(_) => Err(field.wrong("boolean")),
        }
    }
}

impl ArgValue for Map<String, Json> {
    fn read(value: Option<Json>, field: &Field) -> Result<Map<String, Json>, ArgError> {
        match value {
            Some(Json::Object(m)) => Ok(m),
            None => fallback(field).and_then(|_| Err(field.wrong("object"))),
            Some(_) => Err(field.wrong("object")),
        }
    }
}

impl<T: ArgValue> ArgValue for Option<T> {
    const OPTIONAL: bool = true;
    fn read(value: Option<Json>, field: &Field) -> Result<Option<T>, ArgError> {
        match value {
            None | Some(Json::Null) => Ok(None),
            some => T::read(some, field).map(Some),
        }
    }
}

impl ArgValue for OutputFormat {
    fn read(value: Option<Json>, field: &Field) -> Result<OutputFormat, ArgError> {
        let text = Option::<String>::read(value, field)?;
        OutputFormat::from_arg(text.as_deref()).map_err(|e| field.refused(ArgProblem::Format(e)))
    }
}

impl ArgValue for QueryParams {
    fn read(value: Option<Json>, field: &Field) -> Result<QueryParams, ArgError> {
        value.map_or(Ok(QueryParams::default()), |v| {
            QueryParams::deserialize(v).map_err(|e| field.refused(ArgProblem::Query(e)))
        })
    }
}

/// A tool's arguments as [`arguments!`] declares them.
pub trait Arguments: Sized {
    /// Whether an argument that is not declared is refused (`additionalProperties: false`).
    const CLOSED: bool;
    /// The declared arguments in listed order, each with whether a call must give it.
    fn properties() -> Vec<(Field, bool)>;
    /// Reads the declared arguments out of `map`, leaving any others in it.
    fn take(map: &mut Map<String, Json>) -> Result<Self, ArgError>;
}

/// Arguments taken whole and undeclared: for a tool outside this crate (the integration tests')
/// whose schema is its own business.
impl Arguments for Map<String, Json> {
    const CLOSED: bool = false;
    fn properties() -> Vec<(Field, bool)> {
        Vec::new()
    }
    fn take(map: &mut Map<String, Json>) -> Result<Map<String, Json>, ArgError> {
        Ok(std::mem::take(map))
    }
}

/// The input schema of `A`: every declared argument's fragment, the required ones, and whether
/// others are refused.
pub(crate) fn input_schema<A: Arguments>() -> Json {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (field, needed) in A::properties() {
        properties.insert(field.name.into(), field.schema());
        if needed {
            required.push(Json::from(field.name));
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Json::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Json::Array(required));
    }
    if A::CLOSED {
        schema.insert("additionalProperties".into(), false.into());
    }
    Json::Object(schema)
}

/// Replaces the description of the argument `name` in `schema`, for a tool whose wording
/// depends on its instance (a vendor, a verb) while its argument type is shared.
pub(crate) fn describe(schema: &mut Json, name: &str, text: impl Into<String>) {
    if let Some(property) = schema
        .get_mut("properties")
        .and_then(|p| p.get_mut(name))
        .and_then(Json::as_object_mut)
    {
        property.insert("description".into(), Json::String(text.into()));
    }
}

/// Reads `field` out of `map` as a `T`.
pub fn take<T: ArgValue>(map: &mut Map<String, Json>, field: &Field) -> Result<T, ArgError> {
    T::read(map.shift_remove(field.name), field)
}

/// Whether a call must give `field` when read as a `T`: neither optional nor defaulted.
pub(crate) const fn required<T: ArgValue>(field: &Field) -> bool {
    !T::OPTIONAL && field.default.is_none()
}

/// Declares a tool's argument struct, each field once: `name: Type = FIELD,` where `FIELD` is a
/// [`Field`] (its JSON name, bounds, default and description), `=> reader` after it for a value
/// read by a function of its own rather than by its type's [`ArgValue`]; `flatten name: Group,` for a
/// group of arguments declared the same way and shared by several tools; `shared FIELD,` for a
/// common argument that [`WithCommon`] reads, listed at that place in the schema. `closed`
/// refuses arguments not declared, `open` lets them through. A field is required when its type
/// is not an `Option` and it has no default; an `Option` field's default is the upstream's own,
/// stated for the model and not applied here.
macro_rules! arguments {
    ($(#[$attr:meta])* $vis:vis struct $name:ident: $mode:ident { $($body:tt)* }) => {
        $crate::tools::args::arguments!(@field [$(#[$attr])* $vis struct $name $mode] [] [] $($body)*);
    };
    (@field $head:tt [$($fields:tt)*] [$($listed:tt)*] shared $field:expr, $($rest:tt)*) => {
        $crate::tools::args::arguments!(@field $head [$($fields)*]
            [$($listed)* (vec![($field, false)])] $($rest)*);
    };
    (@field $head:tt [$($fields:tt)*] [$($listed:tt)*]
        $(#[$doc:meta])* flatten $f:ident: $ty:ty, $($rest:tt)*) => {
        $crate::tools::args::arguments!(@field $head
            [$($fields)* ($(#[$doc])* $f: $ty, (|map: &mut serde_json::Map<String, serde_json::Value>|
                <$ty as $crate::tools::args::Arguments>::take(map)))]
            [$($listed)* (<$ty as $crate::tools::args::Arguments>::properties())] $($rest)*);
    };
    (@field $head:tt [$($fields:tt)*] [$($listed:tt)*]
        $(#[$doc:meta])* $f:ident: $ty:ty = $field:expr => $read:path, $($rest:tt)*) => {
        $crate::tools::args::arguments!(@field $head
            [$($fields)* ($(#[$doc])* $f: $ty, (|map: &mut serde_json::Map<String, serde_json::Value>|
                $read(map.shift_remove($field.name), &$field)))]
            [$($listed)* (vec![($field, $crate::tools::args::required::<$ty>(&$field))])] $($rest)*);
    };
    (@field $head:tt [$($fields:tt)*] [$($listed:tt)*]
        $(#[$doc:meta])* $f:ident: $ty:ty = $field:expr, $($rest:tt)*) => {
        $crate::tools::args::arguments!(@field $head
            [$($fields)* ($(#[$doc])* $f: $ty, (|map: &mut serde_json::Map<String, serde_json::Value>|
                $crate::tools::args::take::<$ty>(map, &$field)))]
            [$($listed)* (vec![($field, $crate::tools::args::required::<$ty>(&$field))])] $($rest)*);
    };
    (@field [$(#[$attr:meta])* $vis:vis struct $name:ident $mode:ident]
        [$(($(#[$doc:meta])* $f:ident: $ty:ty, $read:expr))*] [$($listed:tt)*]) => {
        $(#[$attr])*
        #[derive(Debug)]
        $vis struct $name {
            $($(#[$doc])* pub(crate) $f: $ty,)*
        }

        impl $crate::tools::args::Arguments for $name {
            const CLOSED: bool = $crate::tools::args::arguments!(@closed $mode);
            fn properties() -> Vec<($crate::tools::args::Field, bool)> {
                let parts: &[Vec<($crate::tools::args::Field, bool)>] = &[$($listed),*];
                parts.concat()
            }
            // A declaration without fields reads nothing from `map`.
            #[allow(unused_variables)]
            fn take(
                map: &mut serde_json::Map<String, serde_json::Value>,
            ) -> Result<$name, $crate::tools::args::ArgError> {
                Ok($name {
                    $($f: ($read)(map)?,)*
                })
            }
        }
    };
    (@closed closed) => { true };
    (@closed open) => { false };
}
pub(crate) use arguments;

/// `owner` of a GitHub repository.
pub(crate) const OWNER: Field = Field::string("owner")
    .min(1)
    .max(100)
    .describe("User or organization login, e.g. `octo-org`.");
/// `repo`, a GitHub repository's name.
pub(crate) const REPO: Field = Field::string("repo")
    .min(1)
    .max(100)
    .describe("Repository name, e.g. `hello-world`.");
/// GitHub's page size when none is given (its own default).
pub(crate) const DEFAULT_PER_PAGE: u64 = 30;
/// GitHub's largest page.
pub(crate) const MAX_PER_PAGE: u64 = 100;
/// `perPage`: items per page of a paged list.
pub(crate) const PER_PAGE: Field = Field::integer("perPage")
    .min(1)
    .max(MAX_PER_PAGE)
    .default(Fallback::Integer(DEFAULT_PER_PAGE))
    .describe("Items per page.");
/// `page`: which page of a paged list.
pub(crate) const PAGE: Field = Field::integer("page")
    .min(1)
    .describe("Page to read: 1, or a result's `nextPage`.");
/// `jq`: the projection expression.
pub(crate) const JQ: Field = Field::string("jq").describe(projection::TOOL_DESCRIPTION);
/// `outputFormat`: TOON or JSON.
pub(crate) const OUTPUT_FORMAT: Field = Field::one_of("outputFormat", &["toon", "json"])
    .default(Fallback::Text("toon"))
    .describe("`toon`: compact, tables for uniform arrays; `json`: indented JSON.");
/// `queryParams`: the query parameter map of a passthrough.
pub(crate) const QUERY_PARAMS: Field = Field::string_map("queryParams").describe(
    "Query parameters, URL-encoded for you in the order given; numbers and booleans as \
     strings, e.g. {\"limit\": \"50\"}.",
);

arguments! {
    /// The shared arguments, typed.
    #[derive(Clone, Default, PartialEq, Eq)]
    pub(crate) struct CommonArgs: open {
        /// The projection expression, if any.
        jq: Option<String> = JQ,
        /// TOON or JSON.
        output_format: OutputFormat = OUTPUT_FORMAT,
        /// Query parameters in JavaScript key order.
        query_params: QueryParams = QUERY_PARAMS,
    }
}

/// `queryParams` as (name, value) pairs in JavaScript key order (as `new URLSearchParams(object)`
/// reads them): integer-like names first, ascending, then the rest as given. Every value must be
/// a string, and there are at most [`MAX_QUERY_PARAMS`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct QueryParams(pub Vec<(String, String)>);

impl<'de> Deserialize<'de> for QueryParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<QueryParams, D::Error> {
        struct Pairs;
        impl<'de> Visitor<'de> for Pairs {
            type Value = QueryParams;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of strings")
            }
            fn visit_unit<E: de::Error>(self) -> Result<QueryParams, E> {
                Ok(QueryParams::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<QueryParams, A::Error> {
                let too_many = |n: &dyn fmt::Display| {
                    de::Error::custom(format!(
                        "queryParams has {n} entries; at most {MAX_QUERY_PARAMS} are allowed"
                    ))
                };
                if let Some(n) = map.size_hint().filter(|&n| n > MAX_QUERY_PARAMS) {
                    return Err(too_many(&n));
                }
                let mut ordered = JsMap::new();
                while let Some(name) = map.next_key::<String>()? {
                    if ordered.len() == MAX_QUERY_PARAMS {
                        return Err(too_many(&format_args!("more than {MAX_QUERY_PARAMS}")));
                    }
                    let Json::String(text) = map.next_value::<Json>()? else {
                        return Err(de::Error::custom(format!(
                            "queryParams.{name} must be a string (write numbers and booleans \
                             as text, e.g. \"50\")"
                        )));
                    };
                    ordered.insert(name.into(), Value::String(text));
                }
                Ok(QueryParams(
                    ordered
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.as_str().unwrap_or_default().to_owned()))
                        .collect(),
                ))
            }
        }
        d.deserialize_any(Pairs)
    }
}

/// A call's arguments read once: the shared ones and the tool's own `T`, which never sees the
/// shared names.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct WithCommon<T> {
    /// `jq`, `outputFormat` and `queryParams`.
    pub(crate) common: CommonArgs,
    /// The tool's own arguments.
    pub(crate) own: T,
}

impl<T: Arguments> Arguments for WithCommon<T> {
    const CLOSED: bool = T::CLOSED;
    /// The tool's own list, which places the shared arguments it takes.
    fn properties() -> Vec<(Field, bool)> {
        T::properties()
    }
    fn take(map: &mut Map<String, Json>) -> Result<WithCommon<T>, ArgError> {
        Ok(WithCommon {
            common: CommonArgs::take(map)?,
            own: T::take(map)?,
        })
    }
}

/// A JSON number with no fractional part (`250.0` counts, as the schema validator says), as a
/// whole number of at most 2^53 - 1; the schema's own bounds are checked by the validator.
fn whole(n: &serde_json::Number) -> Option<u64> {
    n.as_u64().or_else(|| {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER).contains(f))
            .map(|f| f as u64)
    })
}

/// The largest integer JSON numbers carry exactly (2^53 - 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<T: Arguments>(value: Json) -> Result<T, ArgError> {
        let Json::Object(mut map) = value else {
            panic!("not an object")
        };
        T::take(&mut map)
    }

    const PATH: Field = Field::string("path").min(1).describe("p");

    arguments! {
        /// A tool's own arguments, for these tests.
        pub(crate) struct Own: closed {
            path: String = PATH,
            shared QUERY_PARAMS,
            shared JQ,
            /// A count.
            n: Option<u64> = Field::integer("n").min(1).describe("n"),
            deep: bool = Field::boolean("deep").default(Fallback::Boolean(true)).describe("d"),
            shared OUTPUT_FORMAT,
        }
    }

    #[test]
    fn common_arguments_are_split_from_the_tools_own() {
        let args: WithCommon<Own> = parse(json!({
            "jq": "key", "path": "/x", "outputFormat": "json",
            "queryParams": {"b": "1", "2": "x", "a": "y"}
        }))
        .unwrap();
        assert_eq!(args.own.path, "/x");
        assert_eq!(args.common.jq.as_deref(), Some("key"));
        assert_eq!(args.common.output_format, OutputFormat::Json);
        let names: Vec<&str> = args
            .common
            .query_params
            .0
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(names, ["2", "b", "a"]);
        let bare: WithCommon<Own> = parse(json!({"path": "/"})).unwrap();
        assert_eq!(bare.common, CommonArgs::default());
        assert_eq!((bare.own.n, bare.own.deep), (None, true));
    }

    #[test]
    fn bad_common_arguments_say_what_is_wrong() {
        let err = parse::<WithCommon<Own>>(json!({"path": "/", "queryParams": {"n": 5}}));
        assert!(matches!(err, Err(m) if m.to_string().contains("queryParams.n")));
        let err = parse::<WithCommon<Own>>(json!({"path": "/", "outputFormat": "yaml"}));
        assert!(matches!(err, Err(m) if m.to_string().contains("yaml")));
        let err = parse::<WithCommon<Own>>(json!({"jq": "x"}));
        assert!(matches!(err, Err(m) if m.to_string().contains("path")));
    }

    #[test]
    fn query_params_are_capped() {
        let params = |n: usize| {
            let map: Map<String, Json> = (0..n).map(|i| (i.to_string(), Json::from("v"))).collect();
            json!({ "path": "/", "queryParams": map })
        };
        let most = parse::<WithCommon<Own>>(params(MAX_QUERY_PARAMS)).unwrap();
        assert_eq!(most.common.query_params.0.len(), MAX_QUERY_PARAMS);
        for n in [MAX_QUERY_PARAMS + 1, 300_000] {
            let Err(m) = parse::<WithCommon<Own>>(params(n)) else {
                panic!("{n} entries accepted");
            };
            assert_eq!(
                m.to_string(),
                format!("queryParams has {n} entries; at most 1000 are allowed")
            );
        }
    }

    #[test]
    fn whole_numbers_include_integral_floats() {
        let n = |v: Json| parse::<Own>(json!({"path": "/", "n": v})).map(|a| a.n).ok();
        assert_eq!(n(json!(5)), Some(Some(5)));
        assert_eq!(n(json!(250.0)), Some(Some(250)));
        assert_eq!(n(json!(2.5)), None);
        assert_eq!(n(json!(-1)), None);
        assert_eq!(n(json!(1e300)), None);
        assert_eq!(n(json!("5")), None);
        assert_eq!(n(json!(null)), Some(None));
    }

    /// One declaration gives the schema: fields and shared arguments in listed order, required
    /// exactly when neither optional nor defaulted, and keywords in one order.
    #[test]
    fn the_declaration_is_the_schema() {
        let schema = serde_json::to_string(&input_schema::<WithCommon<Own>>()).unwrap();
        assert!(schema.starts_with(
            r#"{"type":"object","properties":{"path":{"type":"string","minLength":1,"description":"p"},"queryParams":{"type":"object","additionalProperties":{"type":"string"},"#
        ));
        assert!(schema.contains(
            r#""n":{"type":"integer","minimum":1,"description":"n"},"deep":{"type":"boolean","default":true,"description":"d"},"outputFormat":{"type":"string","enum":["toon","json"],"default":"toon","#
        ));
        assert!(schema.ends_with(r#"},"required":["path"],"additionalProperties":false}"#));
    }

    #[test]
    fn every_output_format_choice_parses() {
        for choice in OUTPUT_FORMAT.one_of {
            assert_eq!(
                OutputFormat::from_arg(Some(choice)).unwrap().as_str(),
                *choice
            );
        }
    }
}
