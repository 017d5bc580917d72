//! The output path every tool shares: the common arguments (`jq`, `outputFormat`,
//! `queryParams`), projection, rendering and truncation into a [`CallToolResult`].
//!
//! [`Rendered`] keeps the value the text was rendered from and where the text was cut;
//! [`Rendered::finish`] turns it into the result, saving the call's one artifact (the full value
//! behind a cut text) on the way, so the tools only render and finish.

use crate::artifacts::{ArtifactSlot, Artifacts};
use crate::mcp::CallToolResult;
use crate::mcp::ContentBlock;
use crate::projection;
use crate::render::{self, ArtifactRef, Cut, OutputFormat};
use crate::structured::{self, Envelope, Incomplete};
use crate::tools::registry::{ToolCall, ToolError, ToolSettings};
use crate::upstream::UpstreamError;
use crate::value::{Map, Number, Value};
use serde_json::{Map as JsonMap, Value as Json};

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

/// The arguments every data tool takes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommonArgs {
    /// The projection expression, if any.
    pub jq: Option<String>,
    /// TOON or JSON.
    pub output_format: OutputFormat,
    /// Query parameters in JavaScript key order (as `new URLSearchParams(object)` reads them).
    pub query_params: Vec<(String, String)>,
}

impl CommonArgs {
    /// Reads `jq`, `outputFormat` and `queryParams` from validated arguments.
    pub fn from_arguments(arguments: &JsonMap<String, Json>) -> Result<CommonArgs, ToolError> {
        let jq = match arguments.get(JQ) {
            None | Some(Json::Null) => None,
            Some(Json::String(s)) => Some(s.clone()),
            Some(_) => return Err(invalid("jq must be a string")),
        };
        let output_format = match arguments.get(OUTPUT_FORMAT) {
            None | Some(Json::Null) => OutputFormat::Toon,
            Some(Json::String(s)) => OutputFormat::from_arg(Some(s))
                .map_err(|e| ToolError::InvalidArguments(e.to_string()))?,
            Some(_) => return Err(invalid("outputFormat must be \"toon\" or \"json\"")),
        };
        Ok(CommonArgs {
            jq,
            output_format,
            query_params: query_params(arguments)?,
        })
    }
}

fn invalid(message: &str) -> ToolError {
    ToolError::InvalidArguments(message.to_owned())
}

/// `queryParams` as (name, value) pairs in JavaScript key order: integer-like names first,
/// ascending, then the rest as given. Every value must be a string, and there are at most
/// [`MAX_QUERY_PARAMS`].
pub fn query_params(arguments: &JsonMap<String, Json>) -> Result<Vec<(String, String)>, ToolError> {
    let map = match arguments.get(QUERY_PARAMS) {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Object(map)) => map,
        Some(_) => return Err(invalid("queryParams must be an object of strings")),
    };
    if map.len() > MAX_QUERY_PARAMS {
        return Err(ToolError::InvalidArguments(format!(
            "queryParams has {} entries; at most {MAX_QUERY_PARAMS} are allowed",
            map.len()
        )));
    }
    let mut ordered = Map::new();
    for (name, value) in map {
        let Json::String(text) = value else {
            return Err(ToolError::InvalidArguments(format!(
                "queryParams.{name} must be a string (write numbers and booleans as text, \
                 e.g. \"50\")"
            )));
        };
        ordered.insert(name.clone(), Value::String(text.clone()));
    }
    Ok(ordered
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
        .collect())
}

/// A JSON argument as a [`Value`], keys in JavaScript order (as the reference's
/// `JSON.stringify(body)` writes them).
pub fn json_to_value(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => Number::from_literal(&n.to_string()).map_or(Value::Null, Value::Number),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(json_to_value).collect()),
        Json::Object(map) => Value::Object(Map::from_entries(
            map.iter().map(|(k, v)| (k.clone(), json_to_value(v))),
        )),
    }
}

/// Applies the `jq` argument: the projected value, `body` itself when there is no expression,
/// or the `_jqError`/`_originalData` value when the expression fails (never an error).
pub fn project(body: Value, jq: Option<&str>) -> Value {
    projection::project(body, jq)
}

/// A value rendered for a tool result.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// The value the text was rendered from (after projection).
    pub value: Value,
    /// The format used.
    pub format: OutputFormat,
    /// The text; when it was cut, only the kept prefix (the guidance block, which names the
    /// artifact, is added by [`Rendered::finish`]).
    pub text: String,
    /// Where the full rendering was cut, if it was.
    pub cut: Option<Cut>,
    /// How the structured envelope is built from `value`, for the tools with an output schema.
    pub envelope: Option<Envelope>,
}

impl Rendered {
    /// Renders `value` in `format` and finds where it must be cut to fit
    /// `settings.text_max_chars`.
    pub fn new(value: Value, format: OutputFormat, settings: &ToolSettings) -> Rendered {
        // Only the shown prefix is ever held: the full rendering of a large body can be several
        // times its size, and would otherwise sit in memory beside the parsed value.
        let (text, cut) = render::render_bounded(&value, format, settings.text_max_chars);
        Rendered {
            value,
            format,
            text,
            cut,
            envelope: None,
        }
    }

    /// Marks the result as one of a tool with an output schema, whose envelope is built from
    /// the rendered value as `envelope` says.
    pub fn with_envelope(mut self, envelope: Envelope) -> Rendered {
        self.envelope = Some(envelope);
        self
    }

    /// The artifact's content, as compact JSON: for a tool with an output schema, the envelope
    /// exactly as `structuredContent` would hold it (whatever `MCP_STRUCTURED_OUTPUT` says, so
    /// an artifact's content never depends on the flag); for any other tool, the value the
    /// text was rendered from.
    pub fn artifact_json(&self) -> Vec<u8> {
        // A whole envelope's JSON is the value's own compact JSON, written at its exact size.
        self.envelope
            .unwrap_or(Envelope::Whole)
            .to_json(&self.value)
            .into_bytes()
    }

    /// The tool result: one text block and, for a tool with an output schema while
    /// `MCP_STRUCTURED_OUTPUT` is on, `structuredContent`. When the text was cut or the
    /// structured value is over `MCP_STRUCTURED_MAX_BYTES`, the full value is saved as the
    /// call's one artifact, named by both the guidance block and `incomplete.artifactId` (or,
    /// if saving failed, by neither).
    pub async fn finish(mut self, call: &ToolCall<'_>) -> CallToolResult {
        let limit = call.settings.structured_max_bytes;
        let structured = self.envelope.filter(|_| call.settings.structured_output);
        if self.envelope.is_some() && (structured.is_some() || self.cut.is_some()) {
            // Before measuring, so the size, the artifact and structuredContent agree.
            structured::null_non_finite(&mut self.value);
        }
        let oversized = structured.is_some_and(|envelope| !envelope.fits(&self.value, limit));
        let mut slot = ArtifactSlot::new(
            Artifacts::new(call.ports, call.settings.artifact_retention_seconds),
            call.principal,
        );
        let mut full_bytes = 0;
        let artifact = if self.cut.is_some() || oversized {
            slot.save(|| {
                let json = self.artifact_json();
                full_bytes = json.len();
                json
            })
            .await
        } else {
            None
        };
        let text = match &self.cut {
            None => self.text,
            Some(cut) => {
                let named = artifact
                    .as_ref()
                    .map(|id| ArtifactRef { id: id.to_string() });
                cut.apply(&self.text, named.as_ref())
            }
        };
        let mut result = CallToolResult::text(text);
        result.structured_content = structured.map(|envelope| {
            if oversized {
                let id = artifact.map(|id| id.to_string());
                envelope.into_incomplete(self.value, &Incomplete::size(full_bytes, limit, id))
            } else {
                envelope.into_value(self.value)
            }
        });
        result
    }
}

/// Projects `body` with `args.jq` and renders it in `args.output_format`.
pub fn render_body(body: Value, args: &CommonArgs, settings: &ToolSettings) -> Rendered {
    let value = project(body, args.jq.as_deref());
    Rendered::new(value, args.output_format, settings)
}

/// The `isError` result for a failed vendor call. Atlassian texts match the reference servers
/// byte for byte and so cannot say when to retry; for them the retry hint of a 429 (or a 503 with
/// Retry-After) goes
/// in a second text block (GitHub and CircleCI texts carry it already).
pub fn upstream_error(error: &UpstreamError) -> CallToolResult {
    let mut result = CallToolResult::error(error.text());
    if error.vendor().is_atlassian() {
        if let Some(hint) = error.retry_hint() {
            result.content.push(ContentBlock::text(hint));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Json) -> JsonMap<String, Json> {
        match v {
            Json::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn common_arguments() {
        let a = CommonArgs::from_arguments(&args(json!({
            "jq": "key", "outputFormat": "json", "queryParams": {"b": "1", "2": "x", "a": "y"}
        })))
        .unwrap();
        assert_eq!(a.jq.as_deref(), Some("key"));
        assert_eq!(a.output_format, OutputFormat::Json);
        let names: Vec<&str> = a.query_params.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["2", "b", "a"]);
        assert_eq!(
            CommonArgs::from_arguments(&args(json!({}))).unwrap(),
            CommonArgs::default()
        );
        let err = CommonArgs::from_arguments(&args(json!({"queryParams": {"n": 5}}))).unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(m) if m.contains("queryParams.n")));
        let err = CommonArgs::from_arguments(&args(json!({"outputFormat": "yaml"}))).unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(_)));
    }

    #[test]
    fn query_params_are_capped() {
        let params = |n: usize| {
            let map: JsonMap<String, Json> =
                (0..n).map(|i| (i.to_string(), Json::from("v"))).collect();
            args(json!({ "queryParams": map }))
        };
        let most = query_params(&params(MAX_QUERY_PARAMS)).unwrap();
        assert_eq!(most.len(), MAX_QUERY_PARAMS);
        for n in [MAX_QUERY_PARAMS + 1, 300_000] {
            let err = query_params(&params(n)).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("invalid arguments: queryParams has {n} entries; at most 1000 are allowed")
            );
        }
    }

    #[test]
    fn body_arguments_keep_javascript_order() {
        let v = json_to_value(&json!({"title": "t", "2": 1.5, "a": [true, null], "1": 10}));
        assert_eq!(
            crate::upstream::js::stringify(&v),
            r#"{"1":10,"2":1.5,"title":"t","a":[true,null]}"#
        );
    }

    #[test]
    fn renders_and_truncates() {
        let settings = ToolSettings {
            text_max_chars: 1_000,
            ..ToolSettings::default()
        };
        let upstream = crate::upstream::UpstreamSettings::default();
        use crate::ports::ArtifactStore;
        let env = crate::ports::fake::FakeEnv::new();
        let principal = crate::auth::Principal::named("p");
        let call = ToolCall {
            principal: &principal,
            arguments: JsonMap::new(),
            protocol_version: crate::mcp::ProtocolVersion::LATEST_INITIALIZE,
            meta: None,
            ports: env.ports(),
            settings: &settings,
            upstream: &upstream,
        };
        let long = Value::Array((0..500).map(|i| Value::from(format!("item {i}"))).collect());
        let r = Rendered::new(long.clone(), OutputFormat::Json, &settings);
        assert!(r.cut.is_some());
        let result = futures::executor::block_on(r.finish(&call));
        let crate::mcp::ContentBlock::Text { text, .. } = &result.content[0] else {
            panic!("{result:?}")
        };
        assert!(text.contains("## Response Truncated"), "{text}");
        // One artifact, holding the value the text was rendered from, named in the guidance.
        let keys = env.artifacts.keys();
        assert_eq!(keys.len(), 1);
        let id = keys[0].rsplit('/').next().unwrap_or_default();
        assert!(text.contains(&format!("artifact `{id}`")), "{text}");
        let stored = futures::executor::block_on(env.artifacts.get_range(&keys[0], 0, u64::MAX));
        assert_eq!(
            stored.unwrap().unwrap().bytes,
            long.to_compact_json().into_bytes()
        );
        let small = Rendered::new(Value::from("x"), OutputFormat::Toon, &settings);
        assert_eq!(
            futures::executor::block_on(small.finish(&call)),
            CallToolResult::text("x")
        );
        assert_eq!(env.artifacts.keys().len(), 1);
    }

    #[test]
    fn atlassian_rate_limits_say_when_to_retry_in_a_second_block() {
        use crate::upstream::{ErrorKind, Method, Vendor};
        let limited = |vendor, retry_after: Option<&str>| {
            let headers = retry_after
                .map(|v| vec![("Retry-After".to_owned(), v.to_owned())])
                .unwrap_or_default();
            let kind = ErrorKind::Status {
                status: 429,
                status_text: "Too Many Requests".into(),
                headers,
                body: String::new(),
            };
            upstream_error(&UpstreamError::new(
                vendor,
                Method::Get,
                "/x",
                1_767_225_600_000,
                kind,
            ))
        };
        let jira = limited(Vendor::Jira, Some("30"));
        assert!(jira.is_error);
        assert_eq!(jira.content.len(), 2);
        assert_eq!(
            jira.content[1],
            ContentBlock::text("Retry after 30 seconds (at 2026-01-01T00:00:30.000Z).")
        );
        let bitbucket = limited(Vendor::Bitbucket, None);
        assert_eq!(
            bitbucket.content[1],
            ContentBlock::text("The API gave no retry time: wait a minute before retrying.")
        );
        // GitHub's text carries the hint itself: one block.
        let github = limited(Vendor::GitHub, Some("30"));
        assert_eq!(github.content.len(), 1);
    }

    #[test]
    fn projection_failures_become_values() {
        let v = project(crate::value::parse(r#"{"a":1}"#).unwrap(), Some("a.["));
        assert!(v.get("_jqError").is_some(), "{v:?}");
    }
}
