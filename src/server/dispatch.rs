//! JSON-RPC dispatch for one `POST /mcp` body: single messages and batches, the protocol
//! revision each message is served under (negotiated by `initialize`, named by the
//! `MCP-Protocol-Version` header, or carried per request in 2026-07-28 `_meta`), and the
//! methods themselves.

use super::gate::{self, Gate};
use super::reply::{
    json_reply, json_reply_sized, log_event, panic_message, rpc_error_reply, status_for,
};
use super::version::{
    client_response_reply, effective_version, header_version, PROTOCOL_VERSION_HEADER,
    REFUSAL_STATUS,
};
use crate::auth::Principal;
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse};
use crate::jsonrpc::{self, ErrorCode, ErrorObject, Message, Request, Response};
use crate::mcp::{
    self, CacheHints, CacheScope, CallToolParams, CallToolResult, ContentBlock, DiscoverResult,
    Implementation, InitializeParams, InitializeResult, ListToolsParams, ListToolsResult,
    ProtocolVersion, ServerCapabilities,
};
use crate::ports::Ports;
use crate::structured;
use crate::tools::registry::{Registry, ToolCall, ToolError};
use crate::tools::schema;
use crate::upstream::UpstreamSettings;
use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value as Json};
use std::panic::AssertUnwindSafe;

/// How long a 2026-07-28 client may reuse `tools/list` and `server/discover` results. The tool
/// set only changes with a deployment, so a few minutes of staleness is harmless.
pub const LIST_CACHE_HINTS: CacheHints = CacheHints {
    ttl_ms: 300_000,
    // Private: the enterprise policy adds per-principal restriction notes to the descriptions.
    cache_scope: CacheScope::Private,
};

const INSTRUCTIONS: &str = "Tools here read CI and project data (GitHub Actions, CircleCI, Jira, \
Confluence, Bitbucket). Results are compact text; large results are truncated and say so.";

/// What one body is dispatched with.
pub struct Context<'a> {
    /// Settings.
    pub config: &'a Config,
    /// Tools.
    pub registry: &'a Registry,
    /// The authenticated caller.
    pub principal: &'a Principal,
    /// The outside world.
    pub ports: Ports<'a>,
    /// The HTTP request (headers are checked against the body).
    pub request: &'a HttpRequest,
}

/// Parses and answers one body (already authenticated, size- and type-checked).
pub async fn handle_body(cx: &Context<'_>) -> HttpResponse {
    let body: Json = match serde_json::from_slice(&cx.request.body) {
        Ok(body) => body,
        Err(e) => return rpc_error_reply(400, None, ErrorObject::parse_error(e)),
    };
    let header = cx.request.header(PROTOCOL_VERSION_HEADER).map(str::trim);
    match body {
        Json::Array(items) => batch(cx, items, header).await,
        single => single_message(cx, single, header).await,
    }
}

async fn single_message(cx: &Context<'_>, value: Json, header: Option<&str>) -> HttpResponse {
    let message = match jsonrpc::classify(value) {
        Ok(message) => message,
        Err(invalid) => return rpc_error_reply(400, invalid.id.clone(), invalid.to_error()),
    };
    match message {
        Message::Response => client_response_reply(header),
        Message::Notification(note) => {
            let version = match header_version(header, None) {
                Ok(v) => v,
                Err(reply) => return reply,
            };
            match effective_version(
                cx.request,
                &note.method,
                note.params.as_ref(),
                version,
                false,
            ) {
                Ok(_) => HttpResponse::empty(202),
                Err(error) => rpc_error_reply(REFUSAL_STATUS, None, error),
            }
        }
        Message::Request(request) => {
            // initialize negotiates the revision in its body; a legacy client may send any
            // header (or a stale one) with it, so only the stateless revision's header counts.
            let header = if request.method == "initialize"
                && header
                    .and_then(ProtocolVersion::parse)
                    .is_none_or(|v| !v.is_stateless())
            {
                None
            } else {
                header
            };
            let header = match header_version(header, Some(request.id.clone())) {
                Ok(v) => v,
                Err(reply) => return reply,
            };
            let version = match request_version(cx, &request, header) {
                Ok(version) => version,
                Err(error) => return rpc_error_reply(REFUSAL_STATUS, Some(request.id), error),
            };
            let response = answer(cx, request, version).await;
            // Sized for the result so a large reply is written once, not grown by doubling.
            let capacity = response.result.as_ref().map_or(0, |r| r.get().len()) + 256;
            let status = match &response.error {
                None => 200,
                // 2026-07-28 over HTTP: an unknown method is also an HTTP 404.
                Some(e) if e.code == ErrorCode::METHOD_NOT_FOUND && version.is_stateless() => 404,
                Some(e) => status_for(e),
            };
            json_reply_sized(status, &response, capacity)
        }
    }
}

async fn batch(cx: &Context<'_>, items: Vec<Json>, header: Option<&str>) -> HttpResponse {
    let version = match header_version(header, None) {
        Ok(v) => v,
        Err(reply) => return reply,
    };
    let revision = version.unwrap_or(ProtocolVersion::DEFAULT_WITHOUT_HEADER);
    if !revision.allows_batch() {
        return rpc_error_reply(
            400,
            None,
            ErrorObject::invalid_request(format!(
                "JSON-RPC batches are not supported in protocol revision {}",
                revision.as_str()
            )),
        );
    }
    if items.is_empty() {
        return rpc_error_reply(400, None, ErrorObject::invalid_request("empty batch"));
    }
    let mut responses = Vec::new();
    for item in items {
        match jsonrpc::classify(item) {
            Err(invalid) => {
                responses.push(Response::failure(invalid.id.clone(), invalid.to_error()))
            }
            Ok(Message::Response | Message::Notification(_)) => {}
            Ok(Message::Request(request)) if request.method == "initialize" => {
                responses.push(Response::failure(
                    Some(request.id),
                    ErrorObject::invalid_request("initialize must not be part of a batch"),
                ));
            }
            Ok(Message::Request(request)) => match request_version(cx, &request, version) {
                Ok(revision) => responses.push(answer(cx, request, revision).await),
                Err(error) => responses.push(Response::failure(Some(request.id), error)),
            },
        }
    }
    if responses.is_empty() {
        HttpResponse::empty(202)
    } else {
        json_reply(200, &responses)
    }
}

/// The revision `request` is served under (see [`effective_version`]).
fn request_version(
    cx: &Context<'_>,
    request: &Request,
    header: Option<ProtocolVersion>,
) -> Result<ProtocolVersion, ErrorObject> {
    effective_version(
        cx.request,
        &request.method,
        request.params.as_ref(),
        header,
        true,
    )
}

/// Answers one request under `version`: runs the method and contains panics.
async fn answer(cx: &Context<'_>, request: Request, version: ProtocolVersion) -> Response {
    let id = request.id.clone();
    let method = request.method.clone();
    match AssertUnwindSafe(run_method(cx, version, request))
        .catch_unwind()
        .await
    {
        Ok(Ok(result)) => Response::success(id, result),
        Ok(Err(error)) => Response::failure(Some(id), error),
        Err(payload) => {
            log_event(
                cx.ports,
                "error",
                "panic",
                json!({ "method": method, "detail": panic_message(payload.as_ref()) }),
            );
            Response::failure(Some(id), ErrorObject::internal())
        }
    }
}

fn parse_params<T: DeserializeOwned + Default>(
    params: Option<Map<String, Json>>,
) -> Result<T, ErrorObject> {
    match params {
        None => Ok(T::default()),
        Some(p) => serde_json::from_value(Json::Object(p)).map_err(ErrorObject::invalid_params),
    }
}

fn parse_required<T: DeserializeOwned>(
    params: Option<Map<String, Json>>,
) -> Result<T, ErrorObject> {
    let params = params.ok_or_else(|| ErrorObject::invalid_params("params are required"))?;
    serde_json::from_value(Json::Object(params)).map_err(ErrorObject::invalid_params)
}

fn to_json(value: &impl Serialize) -> Result<Json, ErrorObject> {
    serde_json::to_value(value).map_err(|_| ErrorObject::internal())
}

/// `value` as JSON text in a buffer of `capacity` bytes to start with (a good estimate spares a
/// large result the copies of a growing buffer).
fn to_raw(value: &impl Serialize, capacity: usize) -> Result<Box<RawValue>, ErrorObject> {
    let mut buf = Vec::with_capacity(capacity);
    serde_json::to_writer(&mut buf, value).map_err(|_| ErrorObject::internal())?;
    let text = String::from_utf8(buf).map_err(|_| ErrorObject::internal())?;
    RawValue::from_string(text).map_err(|_| ErrorObject::internal())
}

fn server_info() -> Implementation {
    Implementation {
        name: super::SERVER_NAME.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        title: Some("DevTools MCP (CI and project data)".to_owned()),
    }
}

async fn run_method(
    cx: &Context<'_>,
    version: ProtocolVersion,
    request: Request,
) -> Result<Box<RawValue>, ErrorObject> {
    let Request { method, params, .. } = request;
    let mut result = match (version.is_stateless(), method.as_str()) {
        (false, "initialize") => initialize(params)?,
        (false, "ping") => json!({}),
        // Part of 2026-07-28, and answered under every revision so that a client can probe
        // with it before choosing one.
        (_, "server/discover") => to_json(&DiscoverResult {
            supported_versions: ProtocolVersion::ALL
                .iter()
                .rev()
                .map(|v| v.as_str())
                .collect(),
            capabilities: ServerCapabilities::default(),
            instructions: Some(INSTRUCTIONS.to_owned()),
        })?,
        (_, "tools/list") => {
            let list: ListToolsParams = parse_params(params)?;
            if list.cursor.is_some() {
                // Every list is one page, so no cursor was ever handed out.
                return Err(ErrorObject::invalid_params("unknown cursor"));
            }
            // 2025-03-26 predates structuredContent, whose results drop it (decision 0007), so
            // its clients are not promised an outputSchema either.
            let schemas =
                cx.config.tools.structured_output && version >= ProtocolVersion::V2025_06_18;
            let mut tools = cx.registry.descriptors(schemas);
            gate::describe(
                &mut tools,
                cx.registry,
                cx.principal,
                &cx.config.policy,
                cx.ports,
            )
            .await;
            to_json(&ListToolsResult { tools })?
        }
        // Serialized by itself: its structuredContent may be megabytes (see `call_reply`).
        (_, "tools/call") => return call_tool(cx, version, params).await,
        _ => return Err(ErrorObject::method_not_found(&method)),
    };
    // server/discover is a 2026-07-28 method: a client probing with it under an older header
    // gets the same result a stateless client does.
    if version.is_stateless() || method == "server/discover" {
        if let Json::Object(fields) = &mut result {
            fields.insert("resultType".into(), json!("complete"));
            // 2026-07-28 has no initialize, so every result names the server in its _meta.
            let meta = fields
                .entry("_meta")
                .or_insert_with(|| Json::Object(Map::new()));
            if let Json::Object(meta) = meta {
                meta.insert(mcp::META_SERVER_INFO.into(), to_json(&server_info())?);
            }
            if matches!(method.as_str(), "tools/list" | "server/discover") {
                if let Json::Object(hints) = to_json(&LIST_CACHE_HINTS)? {
                    fields.extend(hints);
                }
            }
        }
    }
    to_raw(&result, 128)
}

fn initialize(params: Option<Map<String, Json>>) -> Result<Json, ErrorObject> {
    let params: InitializeParams = parse_required(params)?;
    // Spec: answer with the requested revision when supported, otherwise with our latest.
    let version = ProtocolVersion::parse(&params.protocol_version)
        .filter(|v| !v.is_stateless())
        .unwrap_or(ProtocolVersion::LATEST_INITIALIZE);
    to_json(&InitializeResult {
        protocol_version: version.as_str(),
        capabilities: ServerCapabilities::default(),
        server_info: server_info(),
        instructions: Some(INSTRUCTIONS.to_owned()),
    })
}

async fn call_tool(
    cx: &Context<'_>,
    version: ProtocolVersion,
    params: Option<Map<String, Json>>,
) -> Result<Box<RawValue>, ErrorObject> {
    let meta = params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(Json::as_object)
        .cloned();
    let params: CallToolParams = parse_required(params)?;
    let tool = cx
        .registry
        .get(&params.name)
        .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown tool: {}", params.name)))?;
    let arguments = params.arguments.unwrap_or_default();
    // Enterprise policy decides before the tool runs; an allowed call may run with another
    // identity's credential (a per-call copy of the vendor settings) and reports which one acted.
    let mut upstream_meta = None;
    let call_upstream: UpstreamSettings;
    let outcome = match schema::validate(
        &tool.spec().input_schema,
        &Json::Object(arguments.clone()),
    ) {
        Err(errors) => Err(ToolError::InvalidArguments(errors.join("; "))),
        Ok(()) => match gate::gate(
            tool,
            &arguments,
            cx.principal,
            &cx.config.policy,
            &cx.config.upstream,
            cx.ports,
        )
        .await
        {
            Err(error) => Err(error),
            Ok(Gate::Refuse(refusal)) => Ok(refusal),
            Ok(gate) => {
                let upstream = match gate {
                    Gate::Run { settings, acting } => {
                        upstream_meta = acting;
                        match settings {
                            Some(settings) => {
                                call_upstream = settings;
                                &call_upstream
                            }
                            None => &cx.config.upstream,
                        }
                    }
                    Gate::Off | Gate::Refuse(_) => &cx.config.upstream,
                };
                let call = ToolCall {
                    principal: cx.principal,
                    arguments,
                    protocol_version: version,
                    meta,
                    ports: cx.ports,
                    settings: &cx.config.tools,
                    upstream,
                };
                match AssertUnwindSafe(tool.call(call)).catch_unwind().await {
                    Ok(outcome) => outcome,
                    Err(payload) => {
                        log_event(
                            cx.ports,
                            "error",
                            "panic",
                            json!({ "tool": params.name, "detail": panic_message(payload.as_ref()) }),
                        );
                        return Err(ErrorObject::internal());
                    }
                }
            }
        },
    };
    let result = match outcome {
        Ok(result) => result,
        Err(ToolError::InvalidArguments(reason)) if !version.argument_errors_are_tool_errors() => {
            return Err(ErrorObject::invalid_params(format!(
                "invalid arguments for tool {}: {reason}",
                params.name
            )));
        }
        Err(ToolError::InvalidArguments(reason)) => CallToolResult::error(format!(
            "Invalid arguments for tool {}: {reason}",
            params.name
        )),
        Err(ToolError::Failed(message)) => CallToolResult::error(message),
        Err(ToolError::Internal(detail)) => {
            log_event(
                cx.ports,
                "error",
                "tool_internal_error",
                json!({ "tool": params.name, "detail": detail }),
            );
            CallToolResult::error(format!(
                "Tool {} failed because of an internal error on the server.",
                params.name
            ))
        }
    };
    let mut result = structured::enforce(
        result,
        tool.spec().output_schema.is_some(),
        cx.config.tools.structured_output,
    );
    if let Some((vendor, identity)) = &upstream_meta {
        gate::add_upstream_meta(&mut result, *vendor, identity);
    }
    call_reply(result.for_revision(version), version)
}

/// A `tools/call` result under 2026-07-28: `resultType` and the server's identity in `_meta`,
/// as [`run_method`] adds them to the other results, in the same key order.
#[derive(Serialize)]
struct StatelessCallResult {
    #[serde(flatten)]
    result: CallToolResult,
    #[serde(rename = "resultType")]
    result_type: &'static str,
    /// `_meta` when the result had none (otherwise the server's identity joins the result's own).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Map<String, Json>>,
}

/// The JSON text of a `tools/call` result, written straight from the result: a 16 MiB
/// `structuredContent` converted to a `serde_json::Value` first would cost several times its
/// size in memory, against the Workers 128 MB limit (decision 0020). Number literals survive
/// either way.
fn call_reply(
    mut result: CallToolResult,
    version: ProtocolVersion,
) -> Result<Box<RawValue>, ErrorObject> {
    let capacity = reply_capacity(&result);
    if !version.is_stateless() {
        return to_raw(&result, capacity);
    }
    let server = to_json(&server_info())?;
    let meta = match result.meta.as_mut() {
        Some(meta) => {
            meta.insert(mcp::META_SERVER_INFO.into(), server);
            None
        }
        None => Some(Map::from_iter([(mcp::META_SERVER_INFO.to_owned(), server)])),
    };
    let stateless = StatelessCallResult {
        result,
        result_type: "complete",
        meta,
    };
    to_raw(&stateless, capacity)
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

    fn result(meta: Option<Map<String, Json>>) -> CallToolResult {
        let structured = crate::value::parse(r#"{"data":[1.50,2e3,-0],"nextPage":null}"#).unwrap();
        CallToolResult {
            content: vec![ContentBlock::text("line\nline")],
            structured_content: Some(structured),
            is_error: false,
            meta,
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
