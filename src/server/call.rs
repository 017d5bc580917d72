//! One `tools/call` as a pipeline of small steps, each testable alone: [`validate`] (the input
//! schema, then the tool's typed arguments, deserialized once, and every upstream request the
//! call may make, planned once), the enterprise policy gate ([`gate::gate`], on those requests),
//! [`invoke`] (the tool with a client that sends only those requests, with the credential the
//! gate chose; panics contained) and [`finish`] (errors as results or -32602, the
//! structured-output rule, the acting identity in `_meta`, the revision's shape);
//! [`call_reply`] writes the result's JSON text.

use super::connection;
use super::context::{parse_required, server_info, to_json, Context};
use super::gate::{self, Gate};
use super::reply::panic_message;
use crate::jsonrpc::{ErrorObject, ResultJson};
use crate::mcp::{self, CallToolParams, CallToolResult, ContentBlock, ProtocolVersion};
use crate::ports::{Level, Log, Progress};
use crate::projection::Fuel;
use crate::structured;
use crate::tools::registry::{Prepared, Runner, Tool, ToolContext, ToolError, ToolSpec};
use crate::tools::schema;
use crate::upstream::{Acting, Admit, Client, UpstreamSettings};
use futures::FutureExt;
use serde_json::{Map, Value as Json};
use std::panic::AssertUnwindSafe;

/// The longest progress token honoured, in bytes: every notification repeats it, and a client
/// that stops reading leaves them queued.
const MAX_PROGRESS_TOKEN_BYTES: usize = 256;

/// The request's `_meta.progressToken`, when it is one (a string of at most
/// [`MAX_PROGRESS_TOKEN_BYTES`], or an integer); another is not answered with progress.
fn progress_token(meta: Option<&Map<String, Json>>) -> Option<Json> {
    let token = meta?.get("progressToken")?;
    let fits = token
        .as_str()
        .map_or(token.is_i64() || token.is_u64(), |s| {
            s.len() <= MAX_PROGRESS_TOKEN_BYTES
        });
    fits.then(|| token.clone())
}

/// Answers one `tools/call` request, its projections drawing on `fuel`.
pub(crate) async fn call_tool(
    cx: &Context<'_>,
    version: ProtocolVersion,
    params: Option<Map<String, Json>>,
    fuel: &Fuel,
) -> Result<ResultJson, ErrorObject> {
    let params: CallToolParams = parse_required(params)?;
    let tool = cx
        .registry
        .offered(&params.name, cx.selection, cx.config.policy.is_configured())
        .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown tool: {}", params.name)))?
        .map_err(|why| connection::not_offered(&params.name, why, cx.selection))?;
    let arguments = params.arguments.unwrap_or_default();
    // A client that sent a progress token and reads an event stream hears how the call goes.
    let progress = cx
        .stream
        .zip(progress_token(params.meta.as_ref()))
        .map(|(stream, token)| stream.progress(token));
    // What this call's upstream bodies reserve of the isolate's memory; held until its reply
    // is written, since everything built from a body lives that long.
    let memory = cx.memory.call();
    // Declared before the prepared call, which borrows them for the run; `call_upstream` holds
    // the identity the gate named, which `finish` reports.
    let mut call_upstream = None;
    let (members, targets, client);
    let outcome = match validate(tool, &arguments, &cx.config.upstream) {
        Err(error) => Err(error),
        Ok(prepared) => {
            // Enterprise policy decides before the tool runs, on every request the call may
            // make; an allowed call may run as the identity the decision names, which the
            // vendor settings resolve on this call.
            let runner = prepared.runner;
            targets = prepared.targets;
            let decided = gate::gate(
                tool.spec(),
                &targets,
                &arguments,
                cx.principal,
                &cx.config.policy,
                cx.ports,
            )
            .await;
            match decided {
                Err(error) => Err(error),
                Ok(Gate::Refuse(refusal)) => Ok(refusal),
                Ok(allowed) => {
                    members = match allowed {
                        Gate::Run { acting, members } => {
                            call_upstream = acting.map(|a| cx.config.upstream.acting_as(a));
                            members
                        }
                        Gate::Off | Gate::Refuse(_) => None,
                    };
                    let settings = call_upstream.as_ref().unwrap_or(&cx.config.upstream);
                    let admit = members.as_deref().map(|m| m as &dyn Admit);
                    client = Client::new(cx.ports, &memory, settings, &targets, admit);
                    let context = ToolContext {
                        principal: cx.principal,
                        protocol_version: version,
                        ports: cx.ports.for_call(&memory),
                        settings: &cx.config.tools,
                        upstream: &client,
                        fuel,
                        progress: progress.as_ref().map(|p| p as &dyn Progress),
                    };
                    let outcome = invoke(&params.name, runner, context).await?;
                    match client.undeclared() {
                        // What the tool made of the refusal does not matter: it is at fault.
                        Some(tried) => Err(ToolError::Internal(format!(
                            "asked for {tried}, a request its plan did not declare"
                        ))),
                        None => outcome,
                    }
                }
            }
        }
    };
    let mut result = finish(
        outcome,
        tool.spec(),
        cx.config.tools.structured_output,
        call_upstream.as_ref().and_then(|u| u.acting.as_deref()),
        version,
        cx.ports.log,
    )?;
    if result.is_error && memory.refused() {
        mark_busy(&mut result);
    }
    let reply = call_reply(result, version);
    drop(memory);
    reply
}

/// `_meta.code` of a call refused because the isolate's memory was spent on other large
/// results: retryable, unlike the tool's other errors.
pub(crate) const CODE_BUSY: &str = "server_busy";

/// Names a failed result as refused for want of memory, for clients that retry by code.
fn mark_busy(result: &mut CallToolResult) {
    result
        .meta
        .get_or_insert_with(Map::new)
        .insert("code".into(), Json::from(CODE_BUSY));
}

/// The arguments checked against the tool's input schema (every violation named), then
/// deserialized once into the tool's typed arguments, and the upstream request the call makes
/// built once from them: what the gate decides on is what the tool sends.
pub(crate) fn validate<'a>(
    tool: &'a dyn Tool,
    arguments: &Map<String, Json>,
    upstream: &UpstreamSettings,
) -> Result<Prepared<'a>, ToolError> {
    let arguments = Json::Object(arguments.clone());
    schema::validate(&tool.spec().descriptor.input_schema, &arguments)
        .map_err(|errors| ToolError::InvalidArguments(errors.join("; ")))?;
    tool.prepare(&arguments, upstream)
}

/// Runs the prepared call. A panic (on the host; on wasm32 it aborts the isolate) is logged and
/// answered as an internal error.
pub(crate) async fn invoke<'a>(
    name: &str,
    runner: Runner<'a>,
    cx: ToolContext<'a>,
) -> Result<Result<CallToolResult, ToolError>, ErrorObject> {
    let log = cx.ports.log;
    match AssertUnwindSafe(runner(cx)).catch_unwind().await {
        Ok(outcome) => Ok(outcome),
        Err(payload) => {
            let detail = panic_message(payload.as_ref());
            log.event(
                Level::Error,
                "panic",
                &[("tool", name.into()), ("detail", (&detail).into())],
            );
            Err(ErrorObject::internal())
        }
    }
}

/// The result the client gets: a tool error becomes an `isError` result (invalid arguments
/// before 2025-11-25 are -32602 instead; an internal error's detail goes to the log only), the
/// structured-output rule applies to schema tools, the identity that acted under policy is
/// named in `_meta`, and the result takes the revision's shape.
pub(crate) fn finish(
    outcome: Result<CallToolResult, ToolError>,
    spec: &ToolSpec,
    structured_output: bool,
    acting: Option<&Acting>,
    version: ProtocolVersion,
    log: &dyn Log,
) -> Result<CallToolResult, ErrorObject> {
    let name = &spec.descriptor.name;
    let result = match outcome {
        Ok(result) => result,
        Err(ToolError::InvalidArguments(reason)) if !version.argument_errors_are_tool_errors() => {
            return Err(ErrorObject::invalid_params(format!(
                "invalid arguments for tool {name}: {reason}"
            )));
        }
        Err(ToolError::InvalidArguments(reason)) => {
            CallToolResult::error(format!("Invalid arguments for tool {name}: {reason}"))
        }
        Err(ToolError::Upstream(error)) => crate::tools::output::upstream_error(&error),
        Err(ToolError::Failed(message)) => CallToolResult::error(message),
        Err(ToolError::Coded(code, message)) => {
            let meta = Map::from_iter([("code".to_owned(), Json::from(code))]);
            CallToolResult {
                meta: Some(meta),
                ..CallToolResult::error(message)
            }
        }
        Err(ToolError::Internal(detail)) => {
            log.event(
                Level::Error,
                "tool_internal_error",
                &[("tool", name.into()), ("detail", (&detail).into())],
            );
            CallToolResult::error(format!(
                "Tool {name} failed because of an internal error on the server."
            ))
        }
    };
    let mut result = structured::enforce(
        result,
        spec.descriptor.output_schema.is_some(),
        structured_output,
    );
    if let Some(acting) = acting {
        gate::add_upstream_meta(&mut result, acting.vendor, &acting.name);
    }
    Ok(result.for_revision(version))
}

/// The JSON text of a `tools/call` result, written straight from the result: a 16 MiB
/// `structuredContent` converted to a `serde_json::Value` first would cost several times its
/// size in memory, against the Workers 128 MB limit (decision 0020). Number literals survive,
/// and the text is not parsed again on its way out ([`CallToolResult::write_json_open`]).
/// 2026-07-28 adds `resultType` and the server's identity in `_meta`, after the result's own
/// members (or inside its `_meta`), in the key order the other methods' results have.
pub fn call_reply(
    mut result: CallToolResult,
    version: ProtocolVersion,
) -> Result<ResultJson, ErrorObject> {
    let mut out = String::with_capacity(reply_capacity(&result));
    let meta = if version.is_stateless() {
        let server = to_json(&server_info())?;
        match result.meta.as_mut() {
            Some(meta) => {
                meta.insert(mcp::META_SERVER_INFO.into(), server);
                None
            }
            None => Some(Map::from_iter([(mcp::META_SERVER_INFO.to_owned(), server)])),
        }
    } else {
        None
    };
    let internal = |_| ErrorObject::internal();
    result.write_json_open(&mut out).map_err(internal)?;
    if version.is_stateless() {
        out.push_str(",\"resultType\":\"complete\"");
    }
    if let Some(meta) = meta {
        out.push_str(",\"_meta\":");
        out.push_str(&serde_json::to_string(&meta).map_err(internal)?);
    }
    out.push('}');
    Ok(ResultJson::written(out))
}

/// A little over the JSON size of `result`: the compact size of its structured value plus its
/// texts (escapes such as `\n` add a few bytes), and room for the rest.
fn reply_capacity(result: &CallToolResult) -> usize {
    let structured = result
        .structured_content
        .as_ref()
        .map_or(0, structured::compact_len);
    let texts: usize = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.len(),
            _ => 0,
        })
        .sum();
    let estimate = structured + texts;
    estimate + estimate / 32 + 1024
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::ToolDescriptor;
    use crate::ports::fake::FakeEnv;
    use crate::tools::registry::Access;
    use serde_json::json;

    fn spec(output_schema: Option<Json>) -> ToolSpec {
        ToolSpec {
            descriptor: ToolDescriptor {
                name: "t".into(),
                title: None,
                description: "d".into(),
                input_schema: json!({"type": "object"}),
                output_schema,
                annotations: None,
            },
            access: Access::Rules,
        }
    }

    #[test]
    fn validation_names_every_violation_then_types_the_arguments() {
        let registry = crate::tools::all().unwrap();
        let tool = registry.get("artifact_read").unwrap();
        let args = |v: Json| v.as_object().cloned().unwrap();
        let upstream = UpstreamSettings::default();
        match validate(tool, &args(json!({"offset": -1})), &upstream) {
            Err(ToolError::InvalidArguments(m)) => {
                assert!(m.contains("artifactId") && m.contains("offset"), "{m}")
            }
            other => panic!("{:?}", other.err()),
        }
        let prepared = validate(tool, &args(json!({"artifactId": "a"})), &upstream).unwrap();
        assert_eq!(prepared.targets.first(), None);
    }

    #[test]
    fn finishing_maps_errors_by_revision_and_keeps_details_in_the_log() {
        let env = FakeEnv::new();
        let plain = spec(None);
        let finish_at = |outcome, version| finish(outcome, &plain, false, None, version, &env.log);
        let invalid = || Err(ToolError::InvalidArguments("bad".into()));
        let old = finish_at(invalid(), ProtocolVersion::V2025_06_18).unwrap_err();
        assert_eq!(old.code, crate::jsonrpc::ErrorCode::INVALID_PARAMS);
        let new = finish_at(invalid(), ProtocolVersion::V2025_11_25).unwrap();
        assert_eq!(
            new,
            CallToolResult::error("Invalid arguments for tool t: bad")
        );
        let internal = finish_at(
            Err(ToolError::Internal("quota".into())),
            ProtocolVersion::V2025_11_25,
        )
        .unwrap();
        assert!(!format!("{internal:?}").contains("quota"));
        assert!(env.log.lines().iter().any(|l| l.contains("quota")));
    }

    #[test]
    fn finishing_applies_the_structured_rule_and_names_the_acting_identity() {
        let env = FakeEnv::new();
        let schema_tool = spec(Some(json!({"type": "object"})));
        let acting = Acting::configured(crate::upstream::Vendor::Jira, "team");
        let ok = || Ok(CallToolResult::text("x").with_structured(crate::value::Value::from("s")));
        let on = finish(
            ok(),
            &schema_tool,
            true,
            Some(&acting),
            ProtocolVersion::V2025_11_25,
            &env.log,
        )
        .unwrap();
        assert!(on.structured_content.is_some());
        assert_eq!(
            Json::Object(on.meta.unwrap()),
            json!({"mcp-devtools/upstream": {"vendor": "jira", "identity": "team"}})
        );
        let off = finish(
            ok(),
            &schema_tool,
            false,
            None,
            ProtocolVersion::V2025_11_25,
            &env.log,
        )
        .unwrap();
        assert_eq!((off.structured_content, off.meta), (None, None));
    }

    fn result(meta: Option<Map<String, Json>>) -> CallToolResult {
        let structured = crate::value::parse(r#"{"data":[1.50,2e3,-0],"nextPage":null}"#).unwrap();
        CallToolResult {
            content: vec![ContentBlock::text("line\nline")],
            structured_content: Some(structured),
            is_error: false,
            meta,
        }
    }

    /// What serde writes for a 2026-07-28 result: its members flattened, then `resultType` and
    /// the `_meta` it had none of.
    #[derive(serde::Serialize)]
    struct StatelessCallResult {
        #[serde(flatten)]
        result: CallToolResult,
        #[serde(rename = "resultType")]
        result_type: &'static str,
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Json>>,
    }

    /// A reply as serde writes it, for comparison.
    fn serde_reply(mut result: CallToolResult, version: ProtocolVersion) -> String {
        if !version.is_stateless() {
            return serde_json::to_string(&result).unwrap();
        }
        let server = to_json(&server_info()).unwrap();
        let meta = match result.meta.as_mut() {
            Some(meta) => {
                meta.insert(mcp::META_SERVER_INFO.into(), server);
                None
            }
            None => Some(Map::from_iter([(mcp::META_SERVER_INFO.to_owned(), server)])),
        };
        serde_json::to_string(&StatelessCallResult {
            result,
            result_type: "complete",
            meta,
        })
        .unwrap()
    }

    #[test]
    fn call_replies_are_what_serde_writes() {
        let text = "q\"b\\ \u{1}\u{1f}\u{7f} é 𝄞 \t\r\u{8}\u{c}</script>".repeat(3);
        let structured = crate::value::parse(
            r#"{"2":1,"a\"\u0000":[1.50,-0,1e400,"\ud834\udd1e"],"b":{},"c":[]}"#,
        )
        .unwrap();
        let link = ContentBlock::ResourceLink {
            uri: "devtools://artifacts/a".into(),
            name: "a".into(),
            description: Some("d\n".into()),
            mime_type: None,
        };
        let results = [
            CallToolResult::text(""),
            CallToolResult::error(text.clone()),
            CallToolResult {
                content: vec![
                    ContentBlock::text(text.clone()),
                    link,
                    ContentBlock::text("x"),
                ],
                structured_content: Some(structured),
                is_error: true,
                meta: Some(Map::from_iter([("k".to_owned(), json!([1, "v"]))])),
            },
            CallToolResult {
                content: vec![],
                structured_content: Some(crate::value::Value::Null),
                is_error: false,
                meta: None,
            },
        ];
        for result in results {
            for version in ProtocolVersion::ALL {
                let ours = call_reply(result.clone(), version).unwrap();
                assert_eq!(
                    ours.get(),
                    serde_reply(result.clone(), version),
                    "{version:?}"
                );
            }
        }
    }

    #[test]
    fn call_replies_keep_literals_and_the_stateless_additions_in_order() {
        let old = call_reply(result(None), ProtocolVersion::V2025_06_18).unwrap();
        assert_eq!(
            old.get(),
            r#"{"content":[{"type":"text","text":"line\nline"}],"structuredContent":{"data":[1.50,2e3,-0],"nextPage":null}}"#
        );
        let info = serde_json::to_string(&server_info()).unwrap();
        let bare = call_reply(result(None), ProtocolVersion::V2026_07_28).unwrap();
        assert!(
            bare.get().ends_with(&format!(
                r#""nextPage":null}},"resultType":"complete","_meta":{{"{}":{info}}}}}"#,
                mcp::META_SERVER_INFO
            )),
            "{}",
            bare.get()
        );
        let own = Map::from_iter([("x".to_owned(), json!(1))]);
        let merged = call_reply(result(Some(own)), ProtocolVersion::V2026_07_28).unwrap();
        assert!(
            merged.get().ends_with(&format!(
                r#""_meta":{{"x":1,"{}":{info}}},"resultType":"complete"}}"#,
                mcp::META_SERVER_INFO
            )),
            "{}",
            merged.get()
        );
    }

    #[test]
    fn the_reply_buffer_is_sized_for_the_result() {
        let wire = result(None);
        let text = serde_json::to_string(&wire).unwrap();
        let capacity = reply_capacity(&wire);
        assert!(capacity >= text.len(), "{capacity} < {}", text.len());
    }
}
