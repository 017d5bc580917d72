//! JSON-RPC dispatch for one `POST /mcp` body: single messages and batches, the protocol
//! revision each message is served under (negotiated by `initialize`, named by the
//! `MCP-Protocol-Version` header, or carried per request in 2026-07-28 `_meta`), and the
//! methods themselves.

use super::reply::{json_reply, log_event, panic_message, rpc_error_reply, status_for};
use crate::auth::Principal;
use crate::config::Config;
use crate::http::{HttpRequest, HttpResponse};
use crate::jsonrpc::{self, ErrorCode, ErrorObject, Id, Message, Request, Response};
use crate::mcp::{
    self, CacheHints, CacheScope, CallToolParams, DiscoverResult, Implementation, InitializeParams,
    InitializeResult, ListToolsParams, ListToolsResult, ProtocolVersion, ServerCapabilities,
};
use crate::ports::Ports;
use crate::registry::{schema, Registry, ToolCall, ToolError, ToolResult};
use base64::Engine;
use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value as Json};
use std::panic::AssertUnwindSafe;

/// The header naming the request's protocol revision.
pub const PROTOCOL_VERSION_HEADER: &str = "MCP-Protocol-Version";
/// 2026-07-28: the header mirroring the body's `method`.
pub const METHOD_HEADER: &str = "Mcp-Method";
/// 2026-07-28: the header mirroring `params.name` of `tools/call`.
pub const NAME_HEADER: &str = "Mcp-Name";

/// How long a 2026-07-28 client may reuse `tools/list` and `server/discover` results. The tool
/// set only changes with a deployment, so a few minutes of staleness is harmless.
pub const LIST_CACHE_HINTS: CacheHints = CacheHints {
    ttl_ms: 300_000,
    // Private: a later policy layer may filter tools per principal.
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

/// The `MCP-Protocol-Version` header as a revision: `Ok(None)` when absent, `Err` (the reply)
/// when it names a revision this server does not speak.
fn header_version(
    header: Option<&str>,
    id: Option<Id>,
) -> Result<Option<ProtocolVersion>, HttpResponse> {
    match header {
        None => Ok(None),
        Some(text) => ProtocolVersion::parse(text)
            .map(Some)
            .ok_or_else(|| rpc_error_reply(400, id, unsupported_version(text))),
    }
}

fn unsupported_version(requested: &str) -> ErrorObject {
    let supported: Vec<&str> = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "Unsupported protocol version (supported versions: {})",
            supported.join(", ")
        ),
    )
    // Implementations read `supported` (the SDKs) or `supportedVersions` (the conformance
    // suite's wording, matching server/discover); both carry the same list.
    .with_data(json!({
        "supported": supported,
        "supportedVersions": supported,
        "requested": requested
    }))
}

async fn single_message(cx: &Context<'_>, value: Json, header: Option<&str>) -> HttpResponse {
    let message = match jsonrpc::classify(value) {
        Ok(message) => message,
        Err(invalid) => return rpc_error_reply(400, invalid.id.clone(), invalid.to_error()),
    };
    match message {
        // This server sends no requests, so a response from the client needs no action.
        Message::Response => HttpResponse::empty(202),
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
                Err(error) => rpc_error_reply(status_for(&error), None, error),
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
            let version = match header_version(header, Some(request.id.clone())) {
                Ok(v) => v,
                Err(reply) => return reply,
            };
            let response = answer(cx, request, version).await;
            let status = match &response.error {
                None => 200,
                // 2026-07-28 over HTTP: an unknown method is also an HTTP 404.
                Some(e)
                    if e.code == ErrorCode::METHOD_NOT_FOUND
                        && version.is_some_and(ProtocolVersion::is_stateless) =>
                {
                    404
                }
                Some(e) => status_for(e),
            };
            json_reply(status, &response)
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
            Ok(Message::Request(request)) => responses.push(answer(cx, request, version).await),
        }
    }
    if responses.is_empty() {
        HttpResponse::empty(202)
    } else {
        json_reply(200, &responses)
    }
}

/// Answers one request: decides its revision, runs the method, and contains panics.
async fn answer(cx: &Context<'_>, request: Request, header: Option<ProtocolVersion>) -> Response {
    let id = request.id.clone();
    let version = match effective_version(
        cx.request,
        &request.method,
        request.params.as_ref(),
        header,
        true,
    ) {
        Ok(version) => version,
        Err(error) => return Response::failure(Some(id), error),
    };
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

/// The revision a message is served under, after checking that the header and the body agree.
fn effective_version(
    http: &HttpRequest,
    method: &str,
    params: Option<&Map<String, Json>>,
    header: Option<ProtocolVersion>,
    is_request: bool,
) -> Result<ProtocolVersion, ErrorObject> {
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Json::as_object);
    let meta_version = meta.and_then(|m| m.get(mcp::META_PROTOCOL_VERSION));
    if let Some(Json::String(text)) = meta_version {
        if ProtocolVersion::parse(text).is_none() {
            return Err(unsupported_version(text));
        }
    }
    match header {
        Some(version) if version.is_stateless() => {
            stateless_checks(http, method, params, meta, version, is_request)?;
            Ok(version)
        }
        _ => {
            let version = header.unwrap_or(ProtocolVersion::DEFAULT_WITHOUT_HEADER);
            match meta_version {
                Some(Json::String(text)) if text != version.as_str() => {
                    Err(header_mismatch(if header.is_none() {
                        "the MCP-Protocol-Version header is required when _meta names a protocol \
                         version"
                    } else {
                        "the MCP-Protocol-Version header does not match \
                         io.modelcontextprotocol/protocolVersion in _meta"
                    }))
                }
                _ => Ok(version),
            }
        }
    }
}

fn header_mismatch(reason: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::HEADER_MISMATCH,
        format!("Header mismatch: {reason}"),
    )
}

/// 2026-07-28: the per-request `_meta` and the standard headers, which must mirror the body.
fn stateless_checks(
    http: &HttpRequest,
    method: &str,
    params: Option<&Map<String, Json>>,
    meta: Option<&Map<String, Json>>,
    version: ProtocolVersion,
    is_request: bool,
) -> Result<(), ErrorObject> {
    if is_request {
        let meta = meta.ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "params._meta is required in protocol revision {} and must carry {} and {}",
                version.as_str(),
                mcp::META_PROTOCOL_VERSION,
                mcp::META_CLIENT_CAPABILITIES
            ))
        })?;
        match meta.get(mcp::META_PROTOCOL_VERSION) {
            Some(Json::String(text)) if text == version.as_str() => {}
            Some(Json::String(_)) => {
                return Err(header_mismatch(
                    "the MCP-Protocol-Version header does not match \
                     io.modelcontextprotocol/protocolVersion in _meta",
                ))
            }
            _ => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta must carry {} as a string",
                    mcp::META_PROTOCOL_VERSION
                )))
            }
        }
        if !meta
            .get(mcp::META_CLIENT_CAPABILITIES)
            .is_some_and(Json::is_object)
        {
            return Err(ErrorObject::invalid_params(format!(
                "_meta must carry {} as an object (empty when the client has none)",
                mcp::META_CLIENT_CAPABILITIES
            )));
        }
        let info = meta.get(mcp::META_CLIENT_INFO).cloned();
        if info.is_none_or(|info| serde_json::from_value::<Implementation>(info).is_err()) {
            return Err(ErrorObject::invalid_params(format!(
                "_meta must carry {} as an object with string name and version",
                mcp::META_CLIENT_INFO
            )));
        }
    }
    match decoded_header(http, METHOD_HEADER)? {
        // Required on requests; the revision leaves notifications' headers undefined, so a
        // notification is only held to a header it chose to send.
        None if !is_request => {}
        None => return Err(header_mismatch("the Mcp-Method header is required")),
        Some(value) if value != method => {
            return Err(header_mismatch(
                "the Mcp-Method header does not match the method in the body",
            ))
        }
        Some(_) => {}
    }
    if method == "tools/call" {
        if let Some(Json::String(name)) = params.and_then(|p| p.get("name")) {
            match decoded_header(http, NAME_HEADER)? {
                None => {
                    return Err(header_mismatch(
                        "the Mcp-Name header is required for tools/call",
                    ))
                }
                Some(value) if value != *name => {
                    return Err(header_mismatch(
                        "the Mcp-Name header does not match params.name",
                    ))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// A standard header's value, decoding the `=?base64?...?=` form clients use for values that
/// are not plain header text.
fn decoded_header(http: &HttpRequest, name: &str) -> Result<Option<String>, ErrorObject> {
    let Some(raw) = http.header(name) else {
        return Ok(None);
    };
    let raw = raw.trim();
    let Some(encoded) = raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    else {
        return Ok(Some(raw.to_owned()));
    };
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .map(Some)
        .ok_or_else(|| header_mismatch(&format!("the {name} header is not valid base64 UTF-8")))
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
) -> Result<Json, ErrorObject> {
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
            server_info: server_info(),
            instructions: Some(INSTRUCTIONS.to_owned()),
        })?,
        (_, "tools/list") => {
            let list: ListToolsParams = parse_params(params)?;
            if list.cursor.is_some() {
                // Every list is one page, so no cursor was ever handed out.
                return Err(ErrorObject::invalid_params("unknown cursor"));
            }
            to_json(&ListToolsResult {
                tools: cx.registry.descriptors(),
            })?
        }
        (_, "tools/call") => call_tool(cx, version, params).await?,
        _ => return Err(ErrorObject::method_not_found(&method)),
    };
    if version.is_stateless() {
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
    Ok(result)
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
) -> Result<Json, ErrorObject> {
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
    let outcome = match schema::validate(
        &tool.spec().input_schema,
        &Json::Object(arguments.clone()),
    ) {
        Err(errors) => Err(ToolError::InvalidArguments(errors.join("; "))),
        Ok(()) => {
            let call = ToolCall {
                principal: cx.principal,
                arguments,
                protocol_version: version,
                meta,
                ports: cx.ports,
                config: cx.config,
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
    };
    let result = match outcome {
        Ok(result) => result,
        Err(ToolError::InvalidArguments(reason)) if !version.argument_errors_are_tool_errors() => {
            return Err(ErrorObject::invalid_params(format!(
                "invalid arguments for tool {}: {reason}",
                params.name
            )));
        }
        Err(ToolError::InvalidArguments(reason)) => error_result(format!(
            "Invalid arguments for tool {}: {reason}",
            params.name
        )),
        Err(ToolError::Failed(message)) => error_result(message),
        Err(ToolError::Internal(detail)) => {
            log_event(
                cx.ports,
                "error",
                "tool_internal_error",
                json!({ "tool": params.name, "detail": detail }),
            );
            error_result(format!(
                "Tool {} failed because of an internal error on the server.",
                params.name
            ))
        }
    };
    to_json(&result.into_wire())
}

fn error_result(text: String) -> ToolResult {
    ToolResult {
        is_error: true,
        ..ToolResult::text(text)
    }
}
