//! MCP wire types: protocol revisions, `initialize`, `server/discover`, `tools/list`,
//! `tools/call`, content blocks and tool annotations. Plain serde types, no behaviour.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// The `_meta` key carrying a 2026-07-28 request's protocol revision.
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key carrying a 2026-07-28 request's client capabilities.
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key carrying a 2026-07-28 request's client identity.
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key carrying a 2026-07-28 request's minimum log level.
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The result `_meta` key carrying the server's identity in 2026-07-28.
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A protocol revision this server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// 2025-03-26: Streamable HTTP introduced; JSON-RPC batches allowed.
    V2025_03_26,
    /// 2025-06-18: batches removed; `MCP-Protocol-Version` header; structured tool output.
    V2025_06_18,
    /// 2025-11-25: input validation errors become tool execution errors.
    V2025_11_25,
    /// 2026-07-28: stateless; no `initialize`; per-request `_meta`; routing headers.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub(crate) const ALL: [ProtocolVersion; 4] = [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The newest revision reachable through `initialize` (the answer to an unknown request).
    pub(crate) const LATEST_INITIALIZE: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The revision assumed when a request after `initialize` carries no version header.
    pub(crate) const DEFAULT_WITHOUT_HEADER: ProtocolVersion = ProtocolVersion::V2025_03_26;

    /// The revision's date string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision named by `text`, if this server speaks it.
    pub fn parse(text: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == text)
    }

    /// True for the stateless revision, which has no `initialize` and needs `_meta` on every
    /// request.
    pub(crate) fn is_stateless(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// True when a POST body may be a JSON-RPC batch (only 2025-03-26 allowed them).
    pub(crate) fn allows_batch(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// True when invalid tool arguments are a tool execution error (`isError: true`) rather
    /// than a -32602 protocol error (SEP-1303, from 2025-11-25).
    pub(crate) fn argument_errors_are_tool_errors(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }
}

/// The revisions negotiable through `initialize`, newest first.
#[cfg(test)]
pub(crate) fn initialize_versions() -> impl Iterator<Item = ProtocolVersion> {
    ProtocolVersion::ALL
        .into_iter()
        .rev()
        .filter(|v| !v.is_stateless())
}

/// A client's or server's name and version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub(crate) version: String,
    /// Human-readable name (2025-06-18 and later; older clients ignore it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `initialize` params. Only the requested version matters to a stateless server; the rest is
/// checked for shape and otherwise ignored.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams {
    /// The revision the client asks for.
    pub protocol_version: String,
    /// The client's capabilities.
    #[serde(default)]
    pub(crate) capabilities: Map<String, Json>,
    /// The client's identity.
    pub(crate) client_info: Option<Implementation>,
}

/// The `tools` server capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolsCapability {
    /// Whether the server sends `notifications/tools/list_changed` (never: the list is static).
    pub(crate) list_changed: bool,
}

/// What the server offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct ServerCapabilities {
    /// Tools.
    pub tools: ToolsCapability,
}

/// `initialize` result.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeResult {
    /// The negotiated revision.
    pub protocol_version: &'static str,
    /// Server capabilities.
    pub(crate) capabilities: ServerCapabilities,
    /// Server identity.
    pub(crate) server_info: Implementation,
    /// How to use this server, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<String>,
}

/// Whether a cached result may be shared between authorization contexts (2026-07-28).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum CacheScope {
    /// The same for every caller.
    #[allow(
        dead_code,
        reason = "the wire enum names both scopes; every cacheable result is private today"
    )]
    Public,
    /// Only for the caller's authorization context.
    Private,
}

/// The caching hints 2026-07-28 requires on cacheable results (`tools/list`,
/// `server/discover`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CacheHints {
    /// How long the result stays fresh, in milliseconds.
    pub(crate) ttl_ms: u64,
    /// Who may share a cached copy.
    pub(crate) cache_scope: CacheScope,
}

/// `server/discover` result (2026-07-28, and the same shape when a client probes under an older
/// revision).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DiscoverResult {
    /// Every revision this server speaks, newest first.
    pub(crate) supported_versions: Vec<&'static str>,
    /// Server capabilities. The server's identity travels in the result's `_meta`, as on
    /// every 2026-07-28 result.
    pub(crate) capabilities: ServerCapabilities,
    /// How to use this server, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<String>,
}

/// Hints about a tool's behaviour; clients must not rely on them for security.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates (meaningful only when not read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of external entities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// A tool that only reads an outside system: read-only, not destructive, idempotent, open
    /// world, titled `title`.
    pub(crate) fn reads_upstream(title: &str) -> ToolAnnotations {
        ToolAnnotations {
            title: Some(title.to_owned()),
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(true),
        }
    }
}

/// A tool as listed by `tools/list`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDescriptor {
    /// Unique name.
    pub name: String,
    /// Human-readable title (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments (always an object schema).
    pub input_schema: Json,
    /// JSON Schema of `structuredContent` (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Json>,
    /// Behaviour hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

/// `tools/list` params.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(crate) struct ListToolsParams {
    /// Pagination cursor (this server returns one page, so any cursor is unknown).
    pub(crate) cursor: Option<String>,
}

/// `tools/list` result.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListToolsResult {
    /// The tools.
    pub tools: Vec<ToolDescriptor>,
}

/// `tools/call` params.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub(crate) struct CallToolParams {
    /// The tool to run.
    pub name: String,
    /// Its arguments (absent means none).
    #[serde(default)]
    pub(crate) arguments: Option<Map<String, Json>>,
    /// The request's metadata: `progressToken` asks for progress notifications.
    #[serde(default, rename = "_meta")]
    pub(crate) meta: Option<Map<String, Json>>,
}

/// A resource's contents embedded in a result.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourceContents {
    /// The resource's URI.
    pub(crate) uri: String,
    /// Its MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mime_type: Option<String>,
    /// Text contents (exactly one of `text` and `blob` is set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 binary contents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) blob: Option<String>,
}

/// One block of a tool result's `content`.
#[allow(
    dead_code,
    reason = "the wire enum names every block MCP defines; the tools build text and resource links"
)]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentBlock {
    /// Text for the model.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Base64 bytes.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource the client may fetch (2025-06-18 and later).
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// What it is.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// An embedded resource.
    Resource {
        /// The contents.
        resource: ResourceContents,
    },
}

impl ContentBlock {
    /// A text block.
    pub(crate) fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock::Text { text: text.into() }
    }
}

/// `tools/call` result.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// What the model reads.
    pub(crate) content: Vec<ContentBlock>,
    /// Machine-readable result (2025-06-18 and later), losslessly serialized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) structured_content: Option<crate::value::Value>,
    /// True when the tool ran and failed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) is_error: bool,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Map<String, Json>>,
}

impl CallToolResult {
    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> CallToolResult {
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            structured_content: None,
            is_error: false,
            meta: None,
        }
    }

    /// An `isError` result of one text block: the tool ran and failed, and `text` says how.
    pub(crate) fn error(text: impl Into<String>) -> CallToolResult {
        CallToolResult {
            is_error: true,
            ..CallToolResult::text(text)
        }
    }

    /// Appends this result's JSON to `out` without its closing brace, so that a caller can add
    /// members: byte for byte what serde_json writes for it, but texts and `structuredContent`
    /// are written by the crate's own writers ([`crate::js::write_json_string`], which escapes a
    /// word at a time where serde_json's byte-at-a-time escaping of a text of hundreds of
    /// kilobytes takes several times as long in wasm; [`crate::value::Value`]'s compact JSON,
    /// numbers as their literals), and nothing written is parsed again.
    pub(crate) fn write_json_open(&self, out: &mut String) -> Result<(), serde_json::Error> {
        out.push_str("{\"content\":[");
        for (i, block) in self.content.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match block {
                ContentBlock::Text { text } => {
                    out.push_str("{\"type\":\"text\",\"text\":");
                    crate::value::write_json_string(text, out);
                    out.push('}');
                }
                other => out.push_str(&serde_json::to_string(other)?),
            }
        }
        out.push(']');
        if let Some(value) = &self.structured_content {
            out.push_str(",\"structuredContent\":");
            value.write_compact_json(out);
        }
        if self.is_error {
            out.push_str(",\"isError\":true");
        }
        if let Some(meta) = &self.meta {
            out.push_str(",\"_meta\":");
            out.push_str(&serde_json::to_string(meta)?);
        }
        Ok(())
    }

    /// The result with `value` as its `structuredContent`.
    pub fn with_structured(mut self, value: crate::value::Value) -> CallToolResult {
        self.structured_content = Some(value);
        self
    }

    /// The result as a client of `version` can parse it. 2025-03-26 predates `structuredContent`
    /// and `resource_link` blocks: the structured copy is dropped (tools also return it as text,
    /// as 2025-06-18 asks) and a link becomes a text block naming it.
    pub(crate) fn for_revision(mut self, version: ProtocolVersion) -> CallToolResult {
        if version >= ProtocolVersion::V2025_06_18 {
            return self;
        }
        self.structured_content = None;
        for block in &mut self.content {
            if let ContentBlock::ResourceLink {
                uri,
                name,
                description,
                ..
            } = block
            {
                let text = match description {
                    Some(d) => format!("{name}: {uri} ({d})"),
                    None => format!("{name}: {uri}"),
                };
                *block = ContentBlock::text(text);
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_round_trip_and_order() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
        }
        assert_eq!(ProtocolVersion::parse("2024-11-05"), None);
        let offered: Vec<_> = initialize_versions().map(ProtocolVersion::as_str).collect();
        assert_eq!(offered, ["2025-11-25", "2025-06-18", "2025-03-26"]);
        assert!(ProtocolVersion::V2025_03_26.allows_batch());
        assert!(!ProtocolVersion::V2025_06_18.allows_batch());
        assert!(!ProtocolVersion::V2026_07_28.allows_batch());
    }

    #[test]
    fn content_blocks_serialize_with_wire_names() {
        let blocks = vec![
            ContentBlock::text("hi"),
            ContentBlock::Image {
                data: "AA==".into(),
                mime_type: "image/png".into(),
            },
            ContentBlock::ResourceLink {
                uri: "r://x".into(),
                name: "x".into(),
                description: None,
                mime_type: Some("text/plain".into()),
            },
        ];
        assert_eq!(
            serde_json::to_value(blocks).unwrap(),
            json!([
                {"type":"text","text":"hi"},
                {"type":"image","data":"AA==","mimeType":"image/png"},
                {"type":"resource_link","uri":"r://x","name":"x","mimeType":"text/plain"}
            ])
        );
    }

    /// A text block's literal is the one serde_json writes for the string, escapes included.
    #[test]
    fn text_blocks_escape_as_serde_json_does() {
        let text: String = (0u8..0x80).map(char::from).collect::<String>()
            + "\u{80}é\u{2028}\u{2029}😀\u{fffd}\"\\/"
            + &"line\n".repeat(50);
        let written = serde_json::to_string(&ContentBlock::text(text.clone())).unwrap();
        let expected = format!(
            r#"{{"type":"text","text":{}}}"#,
            serde_json::to_string(&text).unwrap()
        );
        assert_eq!(written, expected);
        let reply = serde_json::to_value(CallToolResult::text(text.clone())).unwrap();
        assert_eq!(reply["content"][0]["text"], Json::String(text));
    }

    #[test]
    fn call_result_omits_false_is_error() {
        assert_eq!(
            serde_json::to_value(CallToolResult::text("x")).unwrap(),
            json!({"content":[{"type":"text","text":"x"}]})
        );
        assert_eq!(
            serde_json::to_value(CallToolResult::error("x")).unwrap(),
            json!({"content":[{"type":"text","text":"x"}],"isError":true})
        );
    }

    #[test]
    fn results_for_2025_03_26_drop_what_it_cannot_parse() {
        let result = CallToolResult {
            content: vec![
                ContentBlock::text("t"),
                ContentBlock::ResourceLink {
                    uri: "r://a".into(),
                    name: "a".into(),
                    description: Some("log".into()),
                    mime_type: None,
                },
            ],
            structured_content: Some(crate::value::Value::from("s")),
            is_error: false,
            meta: None,
        };
        let old = result.clone().for_revision(ProtocolVersion::V2025_03_26);
        assert_eq!(old.structured_content, None);
        assert_eq!(
            old.content,
            vec![
                ContentBlock::text("t"),
                ContentBlock::text("a: r://a (log)")
            ]
        );
        for v in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
            assert_eq!(result.clone().for_revision(v), result);
        }
    }

    #[test]
    fn annotations_use_camel_case() {
        let a = ToolAnnotations {
            read_only_hint: Some(true),
            open_world_hint: Some(true),
            ..ToolAnnotations::default()
        };
        assert_eq!(
            serde_json::to_value(a).unwrap(),
            json!({"readOnlyHint":true,"openWorldHint":true})
        );
    }
}
