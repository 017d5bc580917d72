//! The Atlassian passthrough tools: `jira_*`, `conf_*` and `bb_*` for GET, POST, PUT, PATCH and
//! DELETE. One generic tool parameterised by vendor and verb; the request, the body decoding,
//! the text and the error texts match the reference servers byte for byte (docs/parity.md).

use crate::mcp::CallToolResult;
use crate::mcp::ToolAnnotations;
use crate::projection;
use crate::structured::{Contract, Envelope};
use crate::tools::output::{self, CommonArgs};
use crate::tools::registry::{Access, Tool, ToolCall, ToolError, ToolSpec};
use crate::upstream::{self, ApiPath, Method, Target, Vendor};
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value as Json};

/// Argument name of the API path.
pub const PATH: &str = "path";
/// Argument name of the request body.
pub const BODY: &str = "body";

/// The verbs, in the order the tools are listed.
const METHODS: [Method; 5] = [
    Method::Get,
    Method::Post,
    Method::Put,
    Method::Patch,
    Method::Delete,
];

/// A passthrough tool: one vendor, one HTTP method.
pub struct Passthrough {
    vendor: Vendor,
    method: Method,
    spec: ToolSpec,
}

impl Passthrough {
    /// The tool for `vendor` and `method`.
    pub fn new(vendor: Vendor, method: Method) -> Passthrough {
        Passthrough {
            vendor,
            method,
            spec: spec(vendor, method),
        }
    }

    async fn run(&self, call: ToolCall<'_>) -> Result<CallToolResult, ToolError> {
        let raw_path = call
            .arguments
            .get(PATH)
            .and_then(Json::as_str)
            .ok_or_else(|| ToolError::InvalidArguments("path must be a string".into()))?;
        let path =
            ApiPath::parse(raw_path).map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
        let args = CommonArgs::from_arguments(&call.arguments)?;
        // The reference sends a body only for POST, PUT and PATCH (a delete's is dropped).
        let body = if self.method.has_body() {
            match call.arguments.get(BODY) {
                Some(b @ Json::Object(_)) => Some(output::json_to_value(b)),
                None | Some(Json::Null) => None,
                Some(_) => {
                    return Err(ToolError::InvalidArguments("body must be an object".into()))
                }
            }
        } else {
            None
        };
        let reply = upstream::send(
            call.ports,
            call.upstream,
            self.vendor,
            self.method,
            &path,
            &args.query_params,
            body.as_ref(),
        )
        .await;
        Ok(match reply {
            Ok(reply) => {
                let mut rendered = output::render_body(reply.body, &args, call.settings);
                if self.spec.output_schema.is_some() {
                    // The text stays the bare body (reference parity); the envelope wraps it.
                    rendered = rendered.with_envelope(Envelope::DataOnly);
                }
                rendered.finish(&call).await
            }
            Err(error) => output::upstream_error(&error),
        })
    }
}

impl Tool for Passthrough {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        call: ToolCall<'a>,
    ) -> LocalBoxFuture<'a, Result<CallToolResult, ToolError>> {
        Box::pin(self.run(call))
    }

    fn upstream_target(&self, arguments: &Map<String, Json>) -> Option<Result<Target, ToolError>> {
        let path = arguments
            .get(PATH)
            .and_then(Json::as_str)
            .ok_or_else(|| ToolError::InvalidArguments("path must be a string".into()))
            .and_then(|raw| {
                ApiPath::parse(raw).map_err(|e| ToolError::InvalidArguments(e.to_string()))
            });
        Some(path.map(|p| Target::new(self.vendor, self.method, &p)))
    }
}

/// All fifteen tools: Jira, Confluence, Bitbucket; GET, POST, PUT, PATCH, DELETE.
pub fn tools() -> Vec<Passthrough> {
    [Vendor::Jira, Vendor::Confluence, Vendor::Bitbucket]
        .into_iter()
        .flat_map(|vendor| {
            METHODS
                .into_iter()
                .map(move |m| Passthrough::new(vendor, m))
        })
        .collect()
}

/// The tool name: `jira_get`, `conf_post`, `bb_delete`...
pub fn tool_name(vendor: Vendor, method: Method) -> String {
    let prefix = match vendor {
        Vendor::Confluence => "conf",
        Vendor::Bitbucket => "bb",
        _ => "jira",
    };
    format!("{prefix}_{}", method.as_str().to_ascii_lowercase())
}

fn spec(vendor: Vendor, method: Method) -> ToolSpec {
    let verb = method.as_str();
    let mut properties = json!({
        "path": {
            "type": "string",
            "minLength": 1,
            "description": path_description(vendor),
        },
        "queryParams": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Query parameters as a map of strings, URL-encoded for you and \
                appended in the order given, e.g. {\"maxResults\": \"50\", \"startAt\": \"0\"}. \
                Numbers and booleans must be written as strings.",
        },
        "jq": {
            "type": "string",
            "description": projection::TOOL_DESCRIPTION,
        },
        "outputFormat": {
            "type": "string",
            "enum": ["toon", "json"],
            "description": "Text format of the result: \"toon\" (default; compact, tables for \
                uniform arrays) or \"json\" (2-space indented JSON).",
        },
    });
    let mut required = vec![json!(PATH)];
    if method.has_body() {
        if let Some(props) = properties.as_object_mut() {
            props.insert(
                BODY.to_owned(),
                json!({
                    "type": "object",
                    "description": format!(
                        "The JSON request body, sent as is with Content-Type: application/json. {}",
                        body_hint(vendor, method)
                    ),
                }),
            );
        }
        required.push(json!(BODY));
    }
    let annotations = ToolAnnotations {
        title: None,
        read_only_hint: Some(method == Method::Get),
        destructive_hint: (method != Method::Get).then_some(method == Method::Delete),
        idempotent_hint: Some(matches!(method, Method::Get | Method::Put | Method::Delete)),
        open_world_hint: Some(true),
    };
    ToolSpec {
        name: tool_name(vendor, method),
        title: Some(format!("{} {verb}", product(vendor))),
        description: description(vendor, method),
        input_schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
        }),
        // The reads are the Atlassian schema tools; the write verbs stay text only.
        output_schema: (method == Method::Get).then(|| Contract::AtlassianRead.output_schema()),
        annotations,
        access: Access::Rules,
    }
}

fn product(vendor: Vendor) -> &'static str {
    match vendor {
        Vendor::Confluence => "Confluence",
        Vendor::Bitbucket => "Bitbucket",
        _ => "Jira",
    }
}

fn path_description(vendor: Vendor) -> &'static str {
    match vendor {
        Vendor::Confluence => {
            "API path on the Confluence site, starting with /wiki, e.g. \
            /wiki/api/v2/pages, /wiki/api/v2/pages/123456?body-format=storage, \
            /wiki/rest/api/search (CQL in queryParams.cql). A path, never a full URL."
        }
        Vendor::Bitbucket => {
            "API path under https://api.bitbucket.org/2.0 (the /2.0 prefix is \
            added when missing), e.g. /repositories/{workspace}, \
            /repositories/{workspace}/{repo}/pullrequests, \
            /repositories/{workspace}/{repo}/diff/{spec}. A path, never a full URL."
        }
        _ => {
            "API path on the Jira site, e.g. /rest/api/3/issue/PROJ-123, \
            /rest/api/3/search/jql (JQL in queryParams.jql), /rest/api/3/project/search. \
            A path, never a full URL."
        }
    }
}

fn body_hint(vendor: Vendor, method: Method) -> &'static str {
    match (vendor, method) {
        (Vendor::Jira, Method::Post) => {
            "E.g. creating an issue at /rest/api/3/issue: \
            {\"fields\": {\"project\": {\"key\": \"PROJ\"}, \"summary\": \"...\", \
            \"issuetype\": {\"name\": \"Task\"}}}; text fields use Atlassian Document Format."
        }
        (Vendor::Confluence, Method::Post) => {
            "E.g. creating a page at /wiki/api/v2/pages: \
            {\"spaceId\": \"123\", \"status\": \"current\", \"title\": \"...\", \"body\": \
            {\"representation\": \"storage\", \"value\": \"<p>...</p>\"}}."
        }
        (Vendor::Bitbucket, Method::Post) => {
            "E.g. a pull request comment at \
            /repositories/{workspace}/{repo}/pullrequests/{id}/comments: {\"content\": \
            {\"raw\": \"...\"}}. Pass {} for endpoints that take no body (approve)."
        }
        (_, Method::Put) => {
            "A PUT replaces the resource's fields you send (Confluence page \
            updates need the next version number)."
        }
        _ => "Send only the fields to change.",
    }
}

fn description(vendor: Vendor, method: Method) -> String {
    let (api, auth) = match vendor {
        Vendor::Confluence => (
            "the Confluence Cloud REST API (v2 under /wiki/api/v2, v1 under /wiki/rest/api)",
            "Confluence",
        ),
        Vendor::Bitbucket => ("the Bitbucket Cloud REST API 2.0", "Bitbucket"),
        _ => (
            "the Jira Cloud REST API (v3 under /rest/api/3, Agile under /rest/agile/1.0)",
            "Jira",
        ),
    };
    let what = match method {
        Method::Get => "Reads from",
        Method::Post => "Creates or triggers something through",
        Method::Put => "Replaces or updates a resource through",
        Method::Patch => "Partially updates a resource through",
        Method::Delete => "Deletes a resource through",
    };
    let paging = match vendor {
        Vendor::Confluence => {
            "Paging: v2 lists return _links.next (a cursor): pass its cursor \
            value in queryParams.cursor; use limit to size pages."
        }
        Vendor::Bitbucket => {
            "Paging: lists return values, page, pagelen and next (a full URL): \
            pass its page value in queryParams.page; pagelen sizes pages (max 100). Filter with \
            queryParams.q and sort with queryParams.sort; diffs and raw files come back as text."
        }
        _ => {
            "Paging: /rest/api/3/search/jql returns nextPageToken (pass it back in \
            queryParams.nextPageToken); other lists use startAt and maxResults. Use \
            queryParams.fields to ask for fewer fields."
        }
    };
    let effect = match method {
        Method::Get => "",
        Method::Delete => " This cannot be undone.",
        _ => " This changes data.",
    };
    format!(
        "{what} {api} with the server's {auth} credentials: {verb} {{path}} and returns the \
         response body. {paging} Use jq to keep only the fields you need (it runs before the \
         text is rendered and truncated); results longer than the text limit are cut with a note. \
         An empty response (204) renders as {{}} in JSON and as an empty text in TOON. Errors \
         come back as isError results with the vendor's message.{effect}",
        verb = method.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::registry::Registry;

    #[test]
    fn fifteen_tools_register_with_enforceable_schemas() {
        let mut registry = Registry::new();
        for tool in tools() {
            registry.register(Box::new(tool)).unwrap();
        }
        assert_eq!(registry.len(), 15);
        assert_eq!(
            &registry.names()[..5],
            [
                "jira_get",
                "jira_post",
                "jira_put",
                "jira_patch",
                "jira_delete"
            ]
        );
        assert!(registry.get("conf_patch").is_some() && registry.get("bb_delete").is_some());
    }

    #[test]
    fn annotations_follow_the_verb() {
        let get = Passthrough::new(Vendor::Jira, Method::Get);
        let a = &get.spec().annotations;
        assert_eq!(
            (a.read_only_hint, a.idempotent_hint, a.destructive_hint),
            (Some(true), Some(true), None)
        );
        let delete = Passthrough::new(Vendor::Bitbucket, Method::Delete);
        let a = &delete.spec().annotations;
        assert_eq!(
            (a.read_only_hint, a.destructive_hint, a.idempotent_hint),
            (Some(false), Some(true), Some(true))
        );
        let put = Passthrough::new(Vendor::Confluence, Method::Put);
        assert_eq!(put.spec().annotations.idempotent_hint, Some(true));
        assert_eq!(put.spec().annotations.destructive_hint, Some(false));
        let post = Passthrough::new(Vendor::Confluence, Method::Post);
        assert_eq!(post.spec().annotations.idempotent_hint, Some(false));
        for tool in tools() {
            assert_eq!(tool.spec().annotations.open_world_hint, Some(true));
            let required = tool.spec().input_schema["required"]
                .as_array()
                .unwrap()
                .len();
            assert_eq!(
                required,
                if tool.method.has_body() { 2 } else { 1 },
                "{}",
                tool.spec().name
            );
        }
    }
}
