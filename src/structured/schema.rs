//! The output schemas of the six schema tools. Each is an object schema without `$schema` that
//! uses only keywords meaning the same in JSON Schema draft-07 and 2020-12 (`type`, `properties`,
//! `required`, `additionalProperties`, `anyOf`, `enum`, `minimum`, `description`), so the
//! TypeScript SDK's Ajv and the Python SDK's `jsonschema` read them alike.

use super::{Reason, DATA, INCOMPLETE};
use serde_json::{json, Value as Json};

/// The result contracts of the schema tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contract {
    /// `github_list_workflow_runs`, `github_list_workflow_jobs`: `{data, nextPage, incomplete?}`.
    Paged,
    /// `circleci_get`: `{data, cache: {hit, ageMs, fetchedAt}, incomplete?}`.
    CircleCiRead,
    /// `jira_get`, `conf_get`, `bb_get`: `{data, incomplete?}`.
    AtlassianRead,
    /// `github_get_job_logs`, `circleci_get_job_logs`: `{data, incomplete?}`.
    JobLogs,
    /// `github_get_workflow_run`, `circleci_get_workflow`: `{data, incomplete?}`.
    Actions,
}

/// Name of the paged contract's metadata member.
pub(crate) const NEXT_PAGE: &str = "nextPage";
/// Name of the CircleCI contract's metadata member.
pub(crate) const CACHE: &str = "cache";

impl Contract {
    /// The JSON Schema advertised as the tool's `outputSchema` when structured output is on.
    pub fn output_schema(self) -> Json {
        let mut properties = serde_json::Map::new();
        properties.insert(DATA.into(), data_schema(self));
        let metadata = match self {
            Contract::Paged => Some((
                NEXT_PAGE,
                json!({
                    "type": ["integer", "null"],
                    "minimum": 1,
                    "description": "The page to ask for next (pass it as `page`), or null when \
                        this is the last page. The same value the text shows."
                }),
            )),
            Contract::CircleCiRead => Some((CACHE, cache_schema())),
            Contract::AtlassianRead | Contract::JobLogs | Contract::Actions => None,
        };
        if let Some((name, schema)) = &metadata {
            properties.insert((*name).into(), schema.clone());
        }
        properties.insert(INCOMPLETE.into(), incomplete_schema());
        let mut schema = json!({
            "type": "object",
            "properties": properties,
            "required": [DATA],
            "additionalProperties": false,
        });
        if let (Some((name, _)), Some(object)) = (metadata, schema.as_object_mut()) {
            // The metadata is always there, except on the `unavailable` result (a server
            // defect), which has nothing to report beside `data: null`.
            object.insert(
                "anyOf".into(),
                json!([
                    {"required": [name]},
                    {
                        "required": [INCOMPLETE],
                        "properties": {
                            INCOMPLETE: {"properties": {"reason": {"enum": [Reason::Unavailable.as_str()]}}}
                        }
                    }
                ]),
            );
        }
        schema
    }
}

fn data_schema(contract: Contract) -> Json {
    let what = match contract {
        Contract::Paged => "The GitHub response body after the optional `jq` projection",
        Contract::CircleCiRead => {
            "The CircleCI response body after the optional `jq` projection (CircleCI's own \
             shape; lists continue with its `next_page_token`, passed back as queryParams \
             `page-token`)"
        }
        Contract::AtlassianRead => {
            "The response body after the optional `jq` projection: the text block's value \
             (a JSON string for text endpoints such as diffs and raw files; {} for an empty \
             204)"
        }
        Contract::JobLogs => {
            "`{jobs: [{id, name, status, conclusion, url, annotations, failedTests, log: {lines, \
             bytes, errorCount, errors, steps: [{number, name, conclusion, firstLine, lastLine, \
             tail}], grep}, logArtifactId, cached}], moreJobs}` after the optional `jq` \
             projection: the text block's value. `logArtifactId` names the complete log \
             (text/plain), read with `artifact_read`"
        }
        Contract::Actions => {
            "The tool's answer as its description gives it, after the optional `jq` \
             projection: the text block's value"
        }
    };
    json!({
        "description": format!(
            "{what}. Any JSON value. null when `incomplete` says the value is not here."
        )
    })
}

fn cache_schema() -> Json {
    json!({
        "type": "object",
        "description": "Whether the body came from this server's cache, and how old it is.",
        "properties": {
            "hit": {"type": "boolean", "description": "true when served from the cache."},
            "ageMs": {"type": "integer", "minimum": 0,
                      "description": "Milliseconds since the body was fetched from CircleCI."},
            "fetchedAt": {"type": "string",
                          "description": "When the body was fetched (UTC, ISO 8601 with milliseconds)."}
        },
        "required": ["hit", "ageMs", "fetchedAt"],
        "additionalProperties": false
    })
}

fn incomplete_schema() -> Json {
    json!({
        "type": "object",
        "description": "Present only when `data` is not the whole result. reason `size`: the \
            value was larger than the server's bound; `data` is null and the whole value (as it \
            would have appeared here) is the artifact `artifactId`, read with the \
            `artifact_read` tool (null when it could not be saved). reason `unavailable`: a \
            server defect; there is no value.",
        "properties": {
            "reason": {"type": "string", "enum": [Reason::Size.as_str(), Reason::Unavailable.as_str()]},
            "bytes": {"type": "integer", "minimum": 0,
                      "description": "Length of the whole value serialized as compact JSON, in UTF-8 bytes."},
            "limitBytes": {"type": "integer", "minimum": 0,
                           "description": "The bound in force (MCP_STRUCTURED_MAX_BYTES)."},
            "artifactId": {"type": ["string", "null"],
                           "description": "The artifact holding the whole value, or null."}
        },
        "required": ["reason", "bytes", "limitBytes", "artifactId"],
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keywords whose meaning differs between draft-07 and 2020-12, or that only one has.
    const NOT_PORTABLE: &[&str] = &[
        "$schema",
        "$id",
        "$ref",
        "$defs",
        "definitions",
        "items",
        "additionalItems",
        "prefixItems",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
        "$recursiveRef",
        "$dynamicRef",
        "format",
    ];

    fn keywords(schema: &Json, found: &mut Vec<String>) {
        if let Json::Object(map) = schema {
            for (key, value) in map {
                found.push(key.clone());
                match key.as_str() {
                    "properties" => {
                        if let Json::Object(props) = value {
                            props.values().for_each(|s| keywords(s, found));
                        }
                    }
                    "anyOf" => {
                        if let Json::Array(items) = value {
                            items.iter().for_each(|s| keywords(s, found));
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn schemas_are_portable_object_schemas() {
        for contract in [
            Contract::Paged,
            Contract::CircleCiRead,
            Contract::AtlassianRead,
            Contract::JobLogs,
        ] {
            let schema = contract.output_schema();
            assert_eq!(schema["type"], "object", "{contract:?}");
            assert_eq!(schema["required"], json!(["data"]));
            assert!(
                schema["properties"]["data"].get("type").is_none(),
                "data is untyped"
            );
            let mut found = Vec::new();
            keywords(&schema, &mut found);
            for bad in NOT_PORTABLE {
                assert!(!found.iter().any(|k| k == bad), "{contract:?} uses {bad}");
            }
        }
    }

    #[test]
    fn metadata_is_typed_exactly() {
        let paged = Contract::Paged.output_schema();
        assert_eq!(
            paged["properties"]["nextPage"]["type"],
            json!(["integer", "null"])
        );
        assert_eq!(paged["properties"]["nextPage"]["minimum"], 1);
        let circle = Contract::CircleCiRead.output_schema();
        let cache = &circle["properties"]["cache"];
        assert_eq!(cache["required"], json!(["hit", "ageMs", "fetchedAt"]));
        assert_eq!(cache["properties"]["ageMs"]["minimum"], 0);
        let atlassian = Contract::AtlassianRead.output_schema();
        let names: Vec<&String> = atlassian["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(names, ["data", "incomplete"]);
        assert!(atlassian.get("anyOf").is_none());
        let incomplete = &paged["properties"]["incomplete"];
        assert_eq!(
            incomplete["properties"]["reason"]["enum"],
            json!(["size", "unavailable"])
        );
        assert_eq!(
            incomplete["properties"]["artifactId"]["type"],
            json!(["string", "null"])
        );
    }
}
