//! `artifact_read`: reads a saved artifact (the full value behind a truncated text or an oversized
//! `structuredContent`) back in base64 chunks, one ranged store read per call.
//!
//! The tool is offered whatever `MCP_STRUCTURED_OUTPUT` says, and is text-only: its one text block
//! is the JSON object `{artifactId, offset, nextOffset, totalBytes, eof, encoding, data}`, never
//! truncated (its size is bounded by `maxBytes` instead: cutting base64 would corrupt it).

use crate::artifacts::{ArtifactError, Artifacts, CODE_WRITE_INCOMPLETE};
use crate::mcp::CallToolResult;
use crate::mcp::{ToolAnnotations, ToolDescriptor};
use crate::ports::Level;
use crate::tools::args::{
    arguments, input_schema, ArgError, ArgProblem, ArgValue, Fallback, Field,
};
use crate::tools::registry::{Access, ToolContext, ToolError, ToolSpec, TypedTool};
use crate::upstream::body::reserve_buffer;
use base64::Engine as _;
use serde::Serialize;
use serde_json::Value as Json;

/// The tool's name.
pub(crate) const NAME: &str = "artifact_read";
/// Bytes per chunk when `maxBytes` is not given.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 65_536;
/// The smallest chunk `maxBytes` is clamped to.
pub(crate) const MIN_MAX_BYTES: u64 = 1;
/// The largest chunk `maxBytes` is clamped to (1 MiB; its base64 is about 1.4 MB of text).
pub(crate) const MAX_MAX_BYTES: u64 = 1_048_576;
/// Bytes of memory a read holds per byte of its chunk: the bytes, their base64, the text that
/// holds it and the reply written from that text.
pub(crate) const MEMORY_PER_CHUNK_BYTE: usize = 5;
/// The only encoding of `data`.
pub(crate) const ENCODING: &str = "base64";

const DESCRIPTION: &str = "Reads an artifact: the complete result a tool saved when its text \
was truncated (the notice names the id) or its structuredContent was too large \
(`incomplete.artifactId`), or a job log (`logArtifactId`). Artifacts hold JSON or text, belong to \
the caller and expire (by default after an hour). Each call returns one chunk as JSON: \
`{artifactId, offset, nextOffset, totalBytes, eof, encoding: \"base64\", data}`; call again with \
`offset: nextOffset` until `eof`, then base64-decode the `data` chunks and join them in order. An \
unknown, expired or another caller's artifact gives \"Artifact not found or expired\". A result's \
artifact may still be being written when the result arrives: a read waits for it (a few seconds at \
most), and if its write failed adds so to that text (`_meta.code` `artifact_write_incomplete`): \
repeat the original call.";

/// The `artifact_read` tool.
pub(crate) struct ArtifactRead(ToolSpec);

impl ArtifactRead {
    /// The tool with its spec.
    pub(crate) fn new() -> ArtifactRead {
        ArtifactRead(spec())
    }
}

impl Default for ArtifactRead {
    fn default() -> Self {
        ArtifactRead::new()
    }
}

fn spec() -> ToolSpec {
    ToolSpec {
        descriptor: ToolDescriptor {
            name: NAME.to_owned(),
            title: Some("Read an artifact".to_owned()),
            description: DESCRIPTION.to_owned(),
            input_schema: input_schema::<Args>(),
            // Text only, like every tool but the six schema tools; decision 0014 says why the chunk
            // is JSON text rather than structuredContent.
            output_schema: None,
            annotations: Some(ToolAnnotations {
                title: Some("Read an artifact".to_owned()),
                read_only_hint: Some(true),
                destructive_hint: Some(false),
                idempotent_hint: Some(true),
                // It reads this server's own store, not an outside system.
                open_world_hint: Some(false),
            }),
        },
        // Artifacts belong to their caller, which `Artifacts::read` checks.
        access: Access::Own,
    }
}

arguments! {
    /// The tool's arguments.
    #[derive(Clone, PartialEq, Eq)]
    pub(crate) struct Args: closed {
        /// The artifact's id.
        artifact_id: String = Field::string("artifactId").describe(
            "The artifact id (a UUID) from a truncation notice or from `incomplete.artifactId`.",
        ),
        /// Where the chunk starts.
        offset: u64 = Field::integer("offset")
            .min(0)
            .default(Fallback::Integer(0))
            .describe("Byte offset: 0, then the previous chunk's `nextOffset`.")
            => offset,
        /// The chunk size, clamped to `MIN_MAX_BYTES..=MAX_MAX_BYTES`.
        max_bytes: u64 = Field::integer("maxBytes")
            .default(Fallback::Integer(DEFAULT_MAX_BYTES))
            .describe("Chunk size in bytes before base64, clamped to 1..1048576.")
            => max_bytes,
    }
}

fn offset(value: Option<Json>, field: &Field) -> Result<u64, ArgError> {
    match value {
        None | Some(Json::Null) => u64::read(None, field),
        Some(n) => whole(&n)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| field.refused(ArgProblem::NotWhole(Some(0)))),
    }
}

fn max_bytes(value: Option<Json>, field: &Field) -> Result<u64, ArgError> {
    match value {
        None | Some(Json::Null) => u64::read(None, field),
        Some(n) => {
            let n = whole(&n).ok_or_else(|| field.refused(ArgProblem::NotWhole(None)))?;
            let clamped = n.clamp(i128::from(MIN_MAX_BYTES), i128::from(MAX_MAX_BYTES));
            Ok(u64::try_from(clamped).unwrap_or(DEFAULT_MAX_BYTES))
        }
    }
}

/// A JSON number with no fractional part (`250.0` counts, as the schema validator says), widened
/// so that clamping never overflows; very large floats saturate.
fn whole(value: &Json) -> Option<i128> {
    let Json::Number(n) = value else {
        return None;
    };
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    // `as` saturates at i128's bounds, which every clamp here lies within.
    (f.is_finite() && f.fract() == 0.0).then_some(f as i128)
}

/// One chunk as the tool's text shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Page<'a> {
    artifact_id: &'a str,
    offset: u64,
    next_offset: u64,
    total_bytes: u64,
    eof: bool,
    encoding: &'a str,
    data: String,
}

impl TypedTool for ArtifactRead {
    type Args = Args;

    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn run(&self, args: Args, cx: ToolContext<'_>) -> Result<CallToolResult, ToolError> {
        read(args, cx).await
    }
}

async fn read(args: Args, call: ToolContext<'_>) -> Result<CallToolResult, ToolError> {
    // Before the read, from the chunk asked for: what the store returns is at most that.
    let chunk_bytes = usize::try_from(args.max_bytes).unwrap_or(usize::MAX);
    let cost = chunk_bytes.saturating_mul(MEMORY_PER_CHUNK_BYTE);
    if let Err(busy) = reserve_buffer(call.ports.memory, call.ports.clock, cost).await {
        return Err(ToolError::Failed(format!(
            "Error: the server is busy with other large results and has no memory free for this \
             artifact chunk ({} bytes of memory) right now. Retry in a few seconds, or read \
             smaller chunks (maxBytes).",
            busy.body_bytes
        )));
    }
    let artifacts = Artifacts::new(call.ports, call.settings.artifact_retention_seconds);
    let chunk = match artifacts
        .read(
            call.principal,
            &args.artifact_id,
            args.offset,
            args.max_bytes,
        )
        .await
    {
        Ok(chunk) => chunk,
        Err(ArtifactError::Store(error)) => {
            call.ports.log.event(
                Level::Warn,
                "artifact_read_failed",
                &[("error", (&error.0).into())],
            );
            return Err(ToolError::Failed(ArtifactError::Store(error).to_string()));
        }
        Err(ArtifactError::WriteIncomplete) => {
            let text = ArtifactError::WriteIncomplete.to_string();
            return Err(ToolError::Coded(CODE_WRITE_INCOMPLETE, text));
        }
        Err(other) => return Err(ToolError::Failed(other.to_string())),
    };
    let page = Page {
        artifact_id: &args.artifact_id,
        offset: chunk.offset,
        next_offset: chunk.next_offset,
        total_bytes: chunk.total_bytes,
        eof: chunk.eof,
        encoding: ENCODING,
        data: base64::engine::general_purpose::STANDARD.encode(&chunk.bytes),
    };
    let text = serde_json::to_string(&page)
        .map_err(|e| ToolError::Internal(format!("artifact_read: {e}")))?;
    Ok(CallToolResult::text(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_numbers_include_integral_floats() {
        let cases = [
            (json!(5), Some(5)),
            (json!(-3), Some(-3)),
            (json!(250.0), Some(250)),
            (json!(2.5), None),
            (json!(u64::MAX), Some(i128::from(u64::MAX))),
            (json!(1e300), Some(i128::MAX)),
            (json!("5"), None),
        ];
        for (value, expected) in cases {
            assert_eq!(whole(&value), expected, "{value}");
        }
    }

    #[test]
    fn arguments_default_clamp_and_refuse() {
        let parse = |v: Json| crate::tools::registry::read_args::<Args>(&v);
        assert_eq!(
            parse(json!({"artifactId": "a"})).unwrap(),
            Args {
                artifact_id: "a".into(),
                offset: 0,
                max_bytes: DEFAULT_MAX_BYTES
            }
        );
        let clamped = parse(json!({"artifactId": "a", "offset": 5.0, "maxBytes": 1e300})).unwrap();
        assert_eq!((clamped.offset, clamped.max_bytes), (5, MAX_MAX_BYTES));
        let low = parse(json!({"artifactId": "a", "maxBytes": -7})).unwrap();
        assert_eq!(low.max_bytes, MIN_MAX_BYTES);
        for (bad, says) in [
            (json!({"artifactId": "a", "offset": -1}), "offset must be"),
            (
                json!({"artifactId": "a", "maxBytes": 1.5}),
                "maxBytes must be",
            ),
            (json!({"offset": 0}), "artifactId"),
        ] {
            match parse(bad) {
                Err(ToolError::InvalidArguments(m)) => assert!(m.contains(says), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn the_schema_registers_and_describes_the_result() {
        let mut registry = crate::tools::registry::Registry::new();
        registry
            .register(Box::new(ArtifactRead::new()))
            .expect("the schema uses only enforceable keywords");
        let spec = ArtifactRead::new().0;
        assert!(spec.descriptor.output_schema.is_none());
        for word in ["nextOffset", "eof", "base64", crate::artifacts::NOT_FOUND] {
            assert!(spec.descriptor.description.contains(word), "{word}");
        }
    }
}
