//! The output path every tool shares: projection, rendering and truncation into a
//! [`CallToolResult`].
//!
//! [`Rendered`] keeps the value the text was rendered from and where the text was cut;
//! [`Rendered::finish`] turns it into the result, saving the call's one artifact (the full value
//! behind a cut text) on the way, so the tools only render and finish.

use crate::artifacts::{ArtifactSlot, Artifacts, Content};
use crate::mcp::CallToolResult;
use crate::mcp::ContentBlock;
use crate::projection;
use crate::render::{self, ArtifactRef, Cut, OutputFormat};
use crate::structured::{self, Envelope, Incomplete};
use crate::tools::args::CommonArgs;
use crate::tools::registry::{ToolContext, ToolSettings};
use crate::upstream::UpstreamError;
use crate::value::{CompactPieces, Map, Number, Value};
use serde_json::Value as Json;

/// The pieces an artifact is written in: small beside a large value, large enough that a
/// piece's overhead (a store write of its bytes) does not count.
const ARTIFACT_PIECE_BYTES: usize = 64 * 1024;

/// A JSON argument as a [`Value`], keys in JavaScript order (as the reference's
/// `JSON.stringify(body)` writes them).
pub(crate) fn json_to_value(json: &Json) -> Value {
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

/// Applies the `jq` argument within the call's fuel and memory: the projected value, `body`
/// itself when there is no expression, or the `_jqError`/`_originalData` value when the
/// expression fails (never an error).
pub(crate) fn project(body: Value, jq: Option<&str>, call: &ToolContext<'_>) -> Value {
    call.fuel.at(call.ports.clock.now_ms());
    projection::project_within(body, jq, call.fuel, Some(call.ports.memory))
}

/// A value rendered for a tool result.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Rendered {
    /// The value the text was rendered from (after projection).
    pub value: Value,
    /// The format used.
    pub(crate) format: OutputFormat,
    /// The text; when it was cut, only the kept prefix (the guidance block, which names the
    /// artifact, is added by [`Rendered::finish`]).
    pub text: String,
    /// Where the full rendering was cut, if it was.
    pub(crate) cut: Option<Cut>,
    /// How the structured envelope is built from `value`, for the tools with an output schema.
    pub(crate) envelope: Option<Envelope>,
}

impl Rendered {
    /// Renders `value` in `format` and finds where it must be cut to fit
    /// `settings.text_max_chars`.
    pub(crate) fn new(value: Value, format: OutputFormat, settings: &ToolSettings) -> Rendered {
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
    pub(crate) fn with_envelope(mut self, envelope: Envelope) -> Rendered {
        self.envelope = Some(envelope);
        self
    }

    /// The tool result: one text block and, for a tool with an output schema while
    /// `MCP_STRUCTURED_OUTPUT` is on, `structuredContent`. When the text was cut or the
    /// structured value is over `MCP_STRUCTURED_MAX_BYTES`, the full value is saved as the
    /// call's one artifact, named by both the guidance block and `incomplete.artifactId` (or,
    /// if saving failed, by neither).
    pub(crate) async fn finish(mut self, call: &ToolContext<'_>) -> CallToolResult {
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
        // The artifact's content is compact JSON: for a tool with an output schema, the envelope
        // exactly as `structuredContent` would hold it (whatever `MCP_STRUCTURED_OUTPUT` says, so
        // an artifact's content never depends on the flag); for any other tool, the value the
        // text was rendered from. It is written a piece at a time from the value, never whole.
        // When the reply does not carry the value (no structuredContent, or only the part of an
        // oversized envelope that names the artifact), the value goes to a write that runs after
        // the reply, with the call's memory; otherwise the reply needs it and the write is
        // awaited here, from the same value, never a copy.
        let background = call
            .ports
            .background
            .filter(|_| structured.is_none() || oversized);
        let (artifact, full_bytes) = if self.cut.is_some() || oversized {
            let envelope = self.envelope.unwrap_or(Envelope::Whole);
            let len = envelope.json_len(&self.value);
            let id = match background {
                None => {
                    let pieces = artifact_pieces(envelope, &self.value);
                    slot.save_pieces(len as u64, pieces).await
                }
                Some(background) => {
                    let kept = structured.map_or(Value::Null, |e| e.incomplete_part(&self.value));
                    let value = std::mem::replace(&mut self.value, kept);
                    let content = Box::new(ArtifactContent { envelope, value });
                    let memory = Some(call.ports.memory.hand_over());
                    slot.save_in_background(background, len as u64, content, memory)
                }
            };
            (id, len)
        } else {
            (None, 0)
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

/// The writer of an artifact's JSON from `value`, a piece at a time, in `envelope`'s wrapping.
fn artifact_pieces(envelope: Envelope, value: &Value) -> impl FnMut(&mut String) -> bool + '_ {
    let (open, close) = envelope.wrapping();
    let mut pieces = CompactPieces::new(value);
    let mut opened = false;
    move |out| {
        if !std::mem::replace(&mut opened, true) {
            out.push_str(open);
        }
        let more = pieces.fill(out, ARTIFACT_PIECE_BYTES);
        if !more {
            out.push_str(close);
        }
        more
    }
}

/// An artifact's value, owned by a write that runs after the reply.
struct ArtifactContent {
    envelope: Envelope,
    value: Value,
}

impl Content for ArtifactContent {
    fn pieces(&self) -> Box<dyn FnMut(&mut String) -> bool + '_> {
        Box::new(artifact_pieces(self.envelope, &self.value))
    }
}

/// Projects `body` with `args.jq` (within the call's fuel and memory) and renders it in
/// `args.output_format`.
pub(crate) fn render_body(body: Value, args: &CommonArgs, call: &ToolContext<'_>) -> Rendered {
    let value = project(body, args.jq.as_deref(), call);
    Rendered::new(value, args.output_format, call.settings)
}

/// The `isError` result for a failed vendor call. Atlassian texts match the reference servers
/// byte for byte and so cannot say when to retry; for them the retry hint of a 429 (or a 503 with
/// Retry-After) goes
/// in a second text block (GitHub and CircleCI texts carry it already).
pub(crate) fn upstream_error(error: &UpstreamError) -> CallToolResult {
    let mut result = CallToolResult::error(error.text());
    if let Some(code) = error.code() {
        let code = ("code".to_owned(), serde_json::Value::from(code));
        result.meta = Some(serde_json::Map::from_iter([code]));
    }
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

    #[test]
    fn body_arguments_keep_javascript_order() {
        let v = json_to_value(&json!({"title": "t", "2": 1.5, "a": [true, null], "1": 10}));
        assert_eq!(
            crate::upstream::js::stringify(&v),
            r#"{"1":10,"2":1.5,"title":"t","a":[true,null]}"#
        );
    }

    use crate::ports::fake::FakeEnv;
    use crate::ports::{ArtifactStore, CallPorts};

    /// The tests' settings: the text bounded at 1,000 characters.
    fn bounded() -> ToolSettings {
        ToolSettings {
            text_max_chars: 1_000,
            ..ToolSettings::default()
        }
    }

    /// Runs `f` with a tool context over fresh fakes, the text bounded at 1,000 characters.
    fn in_call(f: impl FnOnce(&ToolContext<'_>, &FakeEnv, &ToolSettings)) {
        let settings = bounded();
        let upstream = crate::upstream::UpstreamSettings::default();
        let env = FakeEnv::new();
        let principal = crate::auth::Principal::named("p");
        let fuel = projection::Fuel::request();
        let call = ToolContext::for_test(&principal, env.ports(), &settings, &upstream, &fuel);
        f(&call, &env, &settings);
    }

    #[test]
    fn renders_and_truncates() {
        in_call(renders_and_truncates_in);
    }

    fn renders_and_truncates_in(call: &ToolContext<'_>, env: &FakeEnv, settings: &ToolSettings) {
        let long = Value::Array((0..500).map(|i| Value::from(format!("item {i}"))).collect());
        let r = Rendered::new(long.clone(), OutputFormat::Json, settings);
        assert!(r.cut.is_some());
        let result = futures::executor::block_on(r.finish(call));
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
        let small = Rendered::new(Value::from("x"), OutputFormat::Toon, settings);
        assert_eq!(
            futures::executor::block_on(small.finish(call)),
            CallToolResult::text("x")
        );
        assert_eq!(env.artifacts.keys().len(), 1);
    }

    #[test]
    fn an_artifact_larger_than_an_upload_part_is_the_envelopes_compact_json() {
        in_call(large_artifact_in);
    }

    fn large_artifact_in(call: &ToolContext<'_>, env: &FakeEnv, settings: &ToolSettings) {
        let item = "é\"".repeat(40);
        let value = Value::Array(
            (0..70_000)
                .map(|i| Value::from(format!("{i}{item}")))
                .collect(),
        );
        let whole = format!(r#"{{"data":{}}}"#, value.to_compact_json());
        assert!(whole.len() > 2 * crate::ports::MIN_PART_BYTES);
        let rendered =
            Rendered::new(value, OutputFormat::Json, settings).with_envelope(Envelope::DataOnly);
        futures::executor::block_on(rendered.finish(call));
        let keys = env.artifacts.keys();
        assert_eq!(keys.len(), 1);
        let stored = futures::executor::block_on(env.artifacts.get_range(&keys[0], 0, u64::MAX));
        let stored = stored.unwrap().unwrap();
        assert_eq!(stored.meta.size, whole.len() as u64);
        assert!(stored.bytes == whole.as_bytes());
    }

    /// The result of finishing `rendered` with the text bounded at 1,000 characters and the
    /// structured output as given, over fresh fakes (the same ids each time), writing in the
    /// background when `background`; with the fakes, for a look at what was stored.
    fn finish_with(
        rendered: impl Fn(&ToolSettings) -> Rendered,
        structured_max_bytes: Option<usize>,
        background: bool,
        check: impl FnOnce(&CallToolResult, &FakeEnv),
    ) {
        let settings = ToolSettings {
            structured_output: structured_max_bytes.is_some(),
            structured_max_bytes: structured_max_bytes.unwrap_or(usize::MAX),
            ..bounded()
        };
        let upstream = crate::upstream::UpstreamSettings::default();
        let env = FakeEnv::new();
        let principal = crate::auth::Principal::named("p");
        let ports = if background {
            env.background_ports()
        } else {
            env.ports()
        };
        let fuel = projection::Fuel::request();
        let call = ToolContext::for_test(&principal, ports, &settings, &upstream, &fuel);
        let result = futures::executor::block_on(rendered(&settings).finish(&call));
        check(&result, &env);
    }

    fn stored(env: &FakeEnv) -> Vec<Vec<u8>> {
        let keys = env.artifacts.keys();
        keys.iter()
            .map(|k| {
                let chunk = futures::executor::block_on(env.artifacts.get_range(k, 0, u64::MAX));
                chunk.unwrap().unwrap().bytes
            })
            .collect()
    }

    #[test]
    fn a_write_the_reply_does_not_need_runs_after_it_and_stores_the_same() {
        let long = || Value::Array((0..500).map(|i| Value::from(format!("item {i}"))).collect());
        let envelope = || {
            Value::Object(Map::from_entries([
                ("total".to_owned(), Value::from("500")),
                ("data".to_owned(), long()),
                ("page".to_owned(), Value::from("1")),
            ]))
        };
        let cut = |s: &ToolSettings| Rendered::new(long(), OutputFormat::Json, s);
        let oversized = |s: &ToolSettings| {
            Rendered::new(envelope(), OutputFormat::Json, s).with_envelope(Envelope::Whole)
        };
        // A cut text without structuredContent, and an oversized envelope (which keeps its
        // metadata beside `incomplete`): the reply names the id before anything is stored, and
        // is what the awaited write gives.
        for (case, limit) in [
            (&cut as &dyn Fn(&ToolSettings) -> Rendered, None),
            (&oversized, Some(100)),
        ] {
            let mut awaited = None;
            finish_with(case, limit, false, |result, env| {
                awaited = Some((result.clone(), stored(env)));
            });
            let (awaited, awaited_stored) = awaited.unwrap();
            assert_eq!(awaited_stored.len(), 1);
            finish_with(case, limit, true, |result, env| {
                assert_eq!(result, &awaited);
                assert!(env.artifacts.keys().is_empty());
                assert_eq!(env.background.pending(), 1);
                env.background.run();
                assert_eq!(stored(env), awaited_stored);
            });
        }
        // structuredContent that carries the whole value: the write is awaited, from that value.
        finish_with(oversized, Some(usize::MAX), true, |result, env| {
            assert!(result
                .structured_content
                .as_ref()
                .is_some_and(|v| v.get("data") == Some(&long())));
            assert_eq!(env.background.pending(), 0);
            assert_eq!(stored(env).len(), 1);
        });
    }

    #[test]
    fn the_calls_memory_is_held_until_the_background_write_ends() {
        let settings = bounded();
        let upstream = crate::upstream::UpstreamSettings::default();
        let env = FakeEnv::new();
        let principal = crate::auth::Principal::named("p");
        let budget = crate::memory::MemoryBudget::new(1 << 30);
        let memory = budget.call();
        let clock = &env.clock;
        futures::executor::block_on(memory.hold_buffer(
            1 << 20,
            || crate::ports::Clock::now_ms(clock),
            |ms| crate::ports::Clock::sleep(clock, ms),
        ))
        .unwrap();
        let fuel = projection::Fuel::request();
        let call = ToolContext::for_test(
            &principal,
            env.background_ports(),
            &settings,
            &upstream,
            &fuel,
        );
        let call = ToolContext {
            ports: CallPorts {
                memory: &memory,
                ..call.ports
            },
            ..call
        };
        let long = Value::Array((0..500).map(|i| Value::from(format!("item {i}"))).collect());
        let rendered = Rendered::new(long, OutputFormat::Json, &settings);
        futures::executor::block_on(rendered.finish(&call));
        drop(memory);
        assert_eq!(budget.in_use(), 1 << 20);
        env.background.run();
        assert_eq!(budget.in_use(), 0);
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
        let v = projection::project(crate::value::parse(r#"{"a":1}"#).unwrap(), Some("a.["));
        assert!(v.get("_jqError").is_some(), "{v:?}");
    }
}
