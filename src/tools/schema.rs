//! Argument validation against a tool's input schema: the JSON Schema subset tool schemas here
//! use (type, properties, required, additionalProperties, enum, const, numeric and length
//! bounds, items, anyOf). Annotation keywords (`description`, `default`, `examples`, `format`,
//! `title`) are ignored; a validation keyword outside the subset makes registration fail (see
//! [`unsupported_keywords`]) rather than being silently unenforced.

use serde_json::{Map, Value as Json};

/// Checks `value` against `schema` and returns every violation found, each naming the path
/// (`arguments.filters[2].name`) and what was expected.
pub(crate) fn validate(schema: &Json, value: &Json) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    check(schema, value, "arguments", &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Validation keywords this module cannot enforce; a schema using one is refused at registration.
const UNSUPPORTED: &[&str] = &[
    "$ref",
    "allOf",
    "contains",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "maxProperties",
    "minProperties",
    "multipleOf",
    "not",
    "oneOf",
    "pattern",
    "patternProperties",
    "prefixItems",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "uniqueItems",
];

/// The paths of validation keywords in `schema` that [`validate`] would not enforce.
pub fn unsupported_keywords(schema: &Json) -> Vec<String> {
    let mut found = Vec::new();
    collect_unsupported(schema, "#", &mut found);
    found
}

fn collect_unsupported(schema: &Json, path: &str, found: &mut Vec<String>) {
    let Json::Object(schema) = schema else {
        return;
    };
    for (key, sub) in schema {
        if UNSUPPORTED.contains(&key.as_str()) {
            found.push(format!("{path}/{key}"));
        }
        match (key.as_str(), sub) {
            ("properties", Json::Object(props)) => {
                for (name, prop) in props {
                    collect_unsupported(prop, &format!("{path}/properties/{name}"), found);
                }
            }
            ("items" | "additionalProperties", _) => {
                collect_unsupported(sub, &format!("{path}/{key}"), found)
            }
            ("anyOf", Json::Array(options)) => {
                for (i, option) in options.iter().enumerate() {
                    collect_unsupported(option, &format!("{path}/anyOf/{i}"), found);
                }
            }
            _ => {}
        }
    }
}

/// The JSON Schema type names `value` satisfies, most specific first.
fn satisfies_type(value: &Json, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        // JSON Schema: an integer is any number with a zero fractional part (1.0 counts).
        "integer" => match value {
            Json::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => true,
    }
}

fn type_of(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn check(schema: &Json, value: &Json, path: &str, errors: &mut Vec<String>) {
    let schema = match schema {
        Json::Bool(true) => return,
        Json::Bool(false) => {
            errors.push(format!("{path}: no value is allowed here"));
            return;
        }
        Json::Object(schema) => schema,
        _ => return,
    };
    if let Some(expected) = schema.get("type") {
        let names: Vec<&str> = match expected {
            Json::String(s) => vec![s.as_str()],
            Json::Array(items) => items.iter().filter_map(Json::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.is_empty() && !names.iter().any(|n| satisfies_type(value, n)) {
            errors.push(format!(
                "{path}: expected {}, got {}",
                names.join(" or "),
                type_of(value)
            ));
            // Every other keyword would only repeat the type error.
            return;
        }
    }
    if let Some(Json::Array(allowed)) = schema.get("enum") {
        if !allowed.iter().any(|a| a == value) {
            let shown: Vec<String> = allowed.iter().map(Json::to_string).collect();
            errors.push(format!("{path}: must be one of {}", shown.join(", ")));
        }
    }
    if let Some(expected) = schema.get("const") {
        if expected != value {
            errors.push(format!("{path}: must be {expected}"));
        }
    }
    if let Some(Json::Array(options)) = schema.get("anyOf") {
        let matched = options.iter().any(|option| {
            let mut scratch = Vec::new();
            check(option, value, path, &mut scratch);
            scratch.is_empty()
        });
        if !matched {
            errors.push(format!("{path}: matches none of the allowed forms"));
        }
    }
    match value {
        Json::Number(n) => check_number(schema, n.as_f64().unwrap_or(f64::NAN), path, errors),
        Json::String(s) => check_string(schema, s, path, errors),
        Json::Array(items) => check_array(schema, items, path, errors),
        Json::Object(object) => check_object(schema, object, path, errors),
        Json::Null | Json::Bool(_) => {}
    }
}

fn bound(schema: &Map<String, Json>, key: &str) -> Option<f64> {
    schema.get(key).and_then(Json::as_f64)
}

fn check_number(schema: &Map<String, Json>, n: f64, path: &str, errors: &mut Vec<String>) {
    if let Some(min) = bound(schema, "minimum") {
        if n < min {
            errors.push(format!("{path}: must be at least {min}"));
        }
    }
    if let Some(max) = bound(schema, "maximum") {
        if n > max {
            errors.push(format!("{path}: must be at most {max}"));
        }
    }
    if let Some(min) = bound(schema, "exclusiveMinimum") {
        if n <= min {
            errors.push(format!("{path}: must be greater than {min}"));
        }
    }
    if let Some(max) = bound(schema, "exclusiveMaximum") {
        if n >= max {
            errors.push(format!("{path}: must be less than {max}"));
        }
    }
}

fn check_string(schema: &Map<String, Json>, s: &str, path: &str, errors: &mut Vec<String>) {
    // JSON Schema counts length in Unicode code points.
    let len = s.chars().count() as f64;
    if let Some(min) = bound(schema, "minLength") {
        if len < min {
            errors.push(format!("{path}: must be at least {min} characters long"));
        }
    }
    if let Some(max) = bound(schema, "maxLength") {
        if len > max {
            errors.push(format!("{path}: must be at most {max} characters long"));
        }
    }
}

fn check_array(schema: &Map<String, Json>, items: &[Json], path: &str, errors: &mut Vec<String>) {
    let len = items.len() as f64;
    if let Some(min) = bound(schema, "minItems") {
        if len < min {
            errors.push(format!("{path}: must have at least {min} items"));
        }
    }
    if let Some(max) = bound(schema, "maxItems") {
        if len > max {
            errors.push(format!("{path}: must have at most {max} items"));
        }
    }
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &format!("{path}[{i}]"), errors);
        }
    }
}

fn check_object(
    schema: &Map<String, Json>,
    object: &Map<String, Json>,
    path: &str,
    errors: &mut Vec<String>,
) {
    let empty = Map::new();
    let properties = match schema.get("properties") {
        Some(Json::Object(p)) => p,
        _ => &empty,
    };
    if let Some(Json::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Json::as_str) {
            if !object.contains_key(name) {
                errors.push(format!("{path}.{name}: is required"));
            }
        }
    }
    for (key, value) in object {
        let child = format!("{path}.{key}");
        match (properties.get(key), schema.get("additionalProperties")) {
            (Some(property), _) => check(property, value, &child, errors),
            (None, Some(Json::Bool(false))) => {
                let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                errors.push(format!(
                    "{child}: unknown argument (expected one of: {})",
                    known.join(", ")
                ));
            }
            (None, Some(extra @ Json::Object(_))) => check(extra, value, &child, errors),
            (None, _) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: Json, value: Json) -> Vec<String> {
        validate(&schema, &value).err().unwrap_or_default()
    }

    #[test]
    fn accepts_valid_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "repo": {"type": "string", "minLength": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "format": {"enum": ["json", "toon"]},
                "ids": {"type": "array", "items": {"type": ["integer", "string"]}, "maxItems": 3}
            },
            "required": ["repo"],
            "additionalProperties": false
        });
        let ok = json!({"repo": "a/b", "limit": 10.0, "format": "toon", "ids": [1, "x"]});
        assert_eq!(errors(schema, ok), Vec::<String>::new());
    }

    #[test]
    fn reports_each_violation_with_its_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "repo": {"type": "string", "minLength": 3},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "format": {"enum": ["json", "toon"]},
                "ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 1}
            },
            "required": ["repo", "owner"],
            "additionalProperties": false
        });
        let bad = json!({"repo": "ab", "limit": 1.5, "format": "xml", "ids": [1, "x"], "extra": 1});
        assert_eq!(
            errors(schema, bad),
            // serde_json's preserve_order: messages follow the schema's and the arguments'
            // document order.
            [
                "arguments.owner: is required",
                "arguments.repo: must be at least 3 characters long",
                "arguments.limit: expected integer, got number",
                "arguments.format: must be one of \"json\", \"toon\"",
                "arguments.ids: must have at most 1 items",
                "arguments.ids[1]: expected integer, got string",
                "arguments.extra: unknown argument (expected one of: repo, limit, format, ids)",
            ]
        );
    }

    #[test]
    fn numeric_bounds_and_any_of() {
        let schema =
            json!({"anyOf": [{"type": "string"}, {"type": "number", "exclusiveMinimum": 0}]});
        assert!(errors(schema.clone(), json!("x")).is_empty());
        assert!(errors(schema.clone(), json!(2)).is_empty());
        assert_eq!(
            errors(schema, json!(0)),
            ["arguments: matches none of the allowed forms"]
        );
        let bounded = json!({"type": "number", "maximum": 5, "exclusiveMaximum": 5});
        assert_eq!(
            errors(bounded, json!(6)),
            [
                "arguments: must be at most 5",
                "arguments: must be less than 5"
            ]
        );
    }

    #[test]
    fn finds_unenforceable_keywords_at_any_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "pattern": "^x"},
                "b": {"type": "array", "items": {"oneOf": [{}], "uniqueItems": true}}
            },
            "anyOf": [{"not": {}}]
        });
        assert_eq!(
            unsupported_keywords(&schema),
            [
                "#/properties/a/pattern",
                "#/properties/b/items/oneOf",
                "#/properties/b/items/uniqueItems",
                "#/anyOf/0/not"
            ]
        );
    }

    #[test]
    fn boolean_schemas_and_unknown_keywords() {
        assert!(errors(json!(true), json!({"a": 1})).is_empty());
        assert_eq!(
            errors(json!(false), json!(1)),
            ["arguments: no value is allowed here"]
        );
        let annotated =
            json!({"type": "string", "description": "d", "format": "uri", "default": "y"});
        assert!(errors(annotated.clone(), json!("z")).is_empty());
        assert!(unsupported_keywords(&annotated).is_empty());
        let extra_schema = json!({"type": "object", "additionalProperties": {"type": "boolean"}});
        assert_eq!(
            errors(extra_schema, json!({"flag": 1})),
            ["arguments.flag: expected boolean, got number"]
        );
    }

    #[test]
    fn the_unavailable_value_conforms_to_every_contract() {
        use crate::structured::{unavailable, Contract, Envelope, Incomplete};
        use crate::value::Value;
        let value: Json = serde_json::from_str(&unavailable().to_compact_json()).unwrap();
        for contract in [
            Contract::Paged,
            Contract::CircleCiRead,
            Contract::AtlassianRead,
        ] {
            let result = validate(&contract.output_schema(), &value);
            assert_eq!(result, Ok(()), "{contract:?}");
        }
        // ...and a size marker without the metadata does not pass for a paged tool.
        let sized = Envelope::DataOnly
            .into_incomplete(Value::Null, &Incomplete::size(1, 1, None))
            .to_compact_json();
        let sized: Json = serde_json::from_str(&sized).unwrap();
        assert!(validate(&Contract::Paged.output_schema(), &sized).is_err());
    }
}
