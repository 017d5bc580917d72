//! The arguments several tools share, defined once: their names, their schema fragments with one
//! wording ([`fragment`]), their typed form ([`CommonArgs`], [`QueryParams`]), and
//! [`WithCommon`], which deserializes a call's arguments once into the shared part and the
//! tool's own.

use crate::projection;
use crate::render::OutputFormat;
use crate::tools::registry::ToolError;
use crate::value::{Map as JsMap, Value};
use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{json, Map, Value as Json};
use std::fmt;

/// Argument name of the projection expression.
pub const JQ: &str = "jq";
/// Argument name of the output format.
pub const OUTPUT_FORMAT: &str = "outputFormat";
/// Argument name of the query parameter map.
pub const QUERY_PARAMS: &str = "queryParams";
/// The most entries `queryParams` may hold: far more than any API query takes, and small enough
/// that the URL stays within what upstreams accept; a larger map is refused before its entries
/// are read.
pub const MAX_QUERY_PARAMS: usize = 1_000;

/// The schema of the shared argument `name` (one of [`JQ`], [`OUTPUT_FORMAT`],
/// [`QUERY_PARAMS`]); `None` for any other name.
pub fn fragment(name: &str) -> Option<Json> {
    Some(match name {
        JQ => json!({"type": "string", "description": projection::TOOL_DESCRIPTION}),
        OUTPUT_FORMAT => json!({
            "type": "string",
            "enum": [OutputFormat::Toon.as_str(), OutputFormat::Json.as_str()],
            "default": OutputFormat::Toon.as_str(),
            "description": "`toon`: compact, tables for uniform arrays; `json`: indented JSON.",
        }),
        QUERY_PARAMS => json!({
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Query parameters, URL-encoded for you in the order given; numbers \
                and booleans as strings, e.g. {\"limit\": \"50\"}.",
        }),
        _ => return None,
    })
}

/// Adds the fragments of the shared arguments `names` to a schema's `properties`.
pub fn add_fragments(properties: &mut Map<String, Json>, names: &[&str]) {
    for name in names {
        if let Some(schema) = fragment(name) {
            properties.insert((*name).to_owned(), schema);
        }
    }
}

/// The shared arguments, typed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommonArgs {
    /// The projection expression, if any.
    #[serde(default)]
    pub jq: Option<String>,
    /// TOON or JSON.
    #[serde(default, deserialize_with = "output_format")]
    pub output_format: OutputFormat,
    /// Query parameters in JavaScript key order.
    #[serde(default)]
    pub query_params: QueryParams,
}

fn output_format<'de, D: Deserializer<'de>>(d: D) -> Result<OutputFormat, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    OutputFormat::from_arg(text.as_deref()).map_err(de::Error::custom)
}

/// `queryParams` as (name, value) pairs in JavaScript key order (as `new URLSearchParams(object)`
/// reads them): integer-like names first, ascending, then the rest as given. Every value must be
/// a string, and there are at most [`MAX_QUERY_PARAMS`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryParams(pub Vec<(String, String)>);

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

/// A call's arguments deserialized once: the shared ones and the tool's own `T`, which never
/// sees the shared names.
#[derive(Clone, Debug, PartialEq)]
pub struct WithCommon<T> {
    /// `jq`, `outputFormat` and `queryParams`.
    pub common: CommonArgs,
    /// The tool's own arguments.
    pub own: T,
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for WithCommon<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<WithCommon<T>, D::Error> {
        let mut own = Map::<String, Json>::deserialize(d)?;
        let mut shared = Map::new();
        for name in [JQ, OUTPUT_FORMAT, QUERY_PARAMS] {
            if let Some(value) = own.shift_remove(name) {
                shared.insert(name.to_owned(), value);
            }
        }
        Ok(WithCommon {
            common: CommonArgs::deserialize(Json::Object(shared)).map_err(de::Error::custom)?,
            own: T::deserialize(Json::Object(own)).map_err(de::Error::custom)?,
        })
    }
}

/// `value` deserialized as `T`; a mismatch is an invalid-arguments error naming what is wrong.
pub fn parse<T: DeserializeOwned>(value: &Json) -> Result<T, ToolError> {
    T::deserialize(value).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}

/// A JSON number with no fractional part (`250.0` counts, as the schema validator says), as a
/// whole number of at most 2^53 - 1; the schema's own bounds are checked by the validator.
pub fn whole<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let n = serde_json::Number::deserialize(d)?;
    n.as_u64()
        .or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER).contains(f))
                .map(|f| f as u64)
        })
        .ok_or_else(|| de::Error::custom(format!("expected a whole number >= 0, got {n}")))
}

/// [`whole`] for an optional argument.
pub fn whole_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Option::<WholeNumber>::deserialize(d).map(|n| n.map(|n| n.0))
}

/// The largest integer JSON numbers carry exactly (2^53 - 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A whole number read with [`whole`].
struct WholeNumber(u64);

impl<'de> Deserialize<'de> for WholeNumber {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<WholeNumber, D::Error> {
        whole(d).map(WholeNumber)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Own {
        path: String,
    }

    #[test]
    fn common_arguments_are_split_from_the_tools_own() {
        let args: WithCommon<Own> = parse(&json!({
            "jq": "key", "path": "/x", "outputFormat": "json",
            "queryParams": {"b": "1", "2": "x", "a": "y"}
        }))
        .unwrap();
        assert_eq!(args.own, Own { path: "/x".into() });
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
        let bare: WithCommon<Own> = parse(&json!({"path": "/"})).unwrap();
        assert_eq!(bare.common, CommonArgs::default());
    }

    #[test]
    fn bad_common_arguments_say_what_is_wrong() {
        let err = parse::<WithCommon<Own>>(&json!({"path": "/", "queryParams": {"n": 5}}));
        assert!(matches!(err, Err(ToolError::InvalidArguments(m)) if m.contains("queryParams.n")));
        let err = parse::<WithCommon<Own>>(&json!({"path": "/", "outputFormat": "yaml"}));
        assert!(matches!(err, Err(ToolError::InvalidArguments(m)) if m.contains("yaml")));
        let err = parse::<WithCommon<Own>>(&json!({"jq": "x"}));
        assert!(matches!(err, Err(ToolError::InvalidArguments(m)) if m.contains("path")));
    }

    #[test]
    fn query_params_are_capped() {
        let params = |n: usize| {
            let map: Map<String, Json> = (0..n).map(|i| (i.to_string(), Json::from("v"))).collect();
            json!({ "path": "/", "queryParams": map })
        };
        let most = parse::<WithCommon<Own>>(&params(MAX_QUERY_PARAMS)).unwrap();
        assert_eq!(most.common.query_params.0.len(), MAX_QUERY_PARAMS);
        for n in [MAX_QUERY_PARAMS + 1, 300_000] {
            let Err(ToolError::InvalidArguments(m)) = parse::<WithCommon<Own>>(&params(n)) else {
                panic!("{n} entries accepted");
            };
            assert_eq!(
                m,
                format!("queryParams has {n} entries; at most 1000 are allowed")
            );
        }
    }

    #[test]
    fn whole_numbers_include_integral_floats() {
        #[derive(Deserialize)]
        struct N {
            #[serde(deserialize_with = "whole")]
            n: u64,
            #[serde(default, deserialize_with = "whole_opt")]
            m: Option<u64>,
        }
        let n = |v: Json| parse::<N>(&json!({"n": v})).map(|n| n.n).ok();
        assert_eq!(n(json!(5)), Some(5));
        assert_eq!(n(json!(250.0)), Some(250));
        assert_eq!(n(json!(2.5)), None);
        assert_eq!(n(json!(-1)), None);
        assert_eq!(n(json!(1e300)), None);
        assert_eq!(n(json!("5")), None);
        let m = parse::<N>(&json!({"n": 1, "m": 3.0})).unwrap();
        assert_eq!(m.m, Some(3));
        assert_eq!(parse::<N>(&json!({"n": 1})).unwrap().m, None);
    }

    #[test]
    fn every_shared_name_has_one_fragment() {
        for name in [JQ, OUTPUT_FORMAT, QUERY_PARAMS] {
            assert!(fragment(name).is_some(), "{name}");
        }
        assert_eq!(fragment("path"), None);
    }
}
