//! JSON-RPC dispatch for one `POST /mcp` body: single messages and batches, the protocol
//! revision each message is served under (negotiated by `initialize`, named by the
//! `MCP-Protocol-Version` header, or carried per request in 2026-07-28 `_meta`), and the
//! methods themselves.

use super::batch::{BatchBudget, MAX_BATCH_MESSAGES};
use super::call;
use super::context::{parse_required, server_info, to_json, Context};
use super::gate;
use super::reply::{panic_message, responses_reply, rpc_error_reply, status_for};
use super::version::{
    client_response_reply, effective_version, header_version, PROTOCOL_VERSION_HEADER,
    REFUSAL_STATUS,
};
use crate::http::HttpResponse;
use crate::jsonrpc::{self, ErrorCode, ErrorObject, Message, Request, Response, ResultJson};
use crate::mcp::{
    self, CacheHints, CacheScope, DiscoverResult, InitializeParams, InitializeResult,
    ListToolsParams, ListToolsResult, ProtocolVersion, ServerCapabilities,
};
use crate::ports::Level;
use crate::projection::Fuel;
use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value as Json};
use std::panic::AssertUnwindSafe;

/// How long a 2026-07-28 client may reuse `tools/list` and `server/discover` results. The tool
/// set only changes with a deployment, so a few minutes of staleness is harmless.
pub(crate) const LIST_CACHE_HINTS: CacheHints = CacheHints {
    ttl_ms: 300_000,
    // Private: the list depends on the connection's toolsets and, under a policy, on the principal.
    cache_scope: CacheScope::Private,
};

const INSTRUCTIONS: &str = "Tools here read CI and project data (GitHub Actions, CircleCI, Jira, \
Confluence, Bitbucket). Results are compact text; large results are truncated and say so.";

/// Parses and answers one body (already authenticated, size- and type-checked).
pub(crate) async fn handle_body(cx: &Context<'_>) -> HttpResponse {
    if jsonrpc::has_more_values_than(&cx.request.body, jsonrpc::MAX_VALUES) {
        let reason = format!(
            "the body holds more than {} JSON values, the most one request may hold; send \
             fewer (queryParams, for one, takes at most {} entries)",
            jsonrpc::MAX_VALUES,
            crate::tools::args::MAX_QUERY_PARAMS
        );
        return rpc_error_reply(400, None, ErrorObject::invalid_request(reason));
    }
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
            let now = cx.ports.clock.now_ms();
            let fuel = Fuel::request_of(cx.fuel, cx.principal.name(), now);
            let response = answer(cx, request, version, &fuel).await;
            let status = match &response.error {
                None => 200,
                // 2026-07-28 over HTTP: an unknown method is also an HTTP 404.
                Some(e) if e.code == ErrorCode::METHOD_NOT_FOUND && version.is_stateless() => 404,
                Some(e) => status_for(e),
            };
            responses_reply(status, &[response], false)
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
    if items.len() > MAX_BATCH_MESSAGES {
        return rpc_error_reply(
            400,
            None,
            ErrorObject::invalid_request(format!(
                "a batch holds at most {MAX_BATCH_MESSAGES} messages and this one holds {}; \
                 send the rest in further requests",
                items.len()
            )),
        );
    }
    // A batch's replies go out together as JSON: none of its calls streams.
    let cx = &Context {
        stream: None,
        ..*cx
    };
    let budget = BatchBudget::new(
        cx.memory,
        Fuel::request_of(cx.fuel, cx.principal.name(), cx.ports.clock.now_ms()),
        cx.ports.clock.now_ms(),
        cx.config.upstream.timeout_ms,
    );
    let mut responses = Vec::new();
    for item in items {
        let response = match jsonrpc::classify(item) {
            Err(invalid) => Response::failure(invalid.id.clone(), invalid.to_error()),
            Ok(Message::Response | Message::Notification(_)) => continue,
            Ok(Message::Request(request)) if request.method == "initialize" => Response::failure(
                Some(request.id),
                ErrorObject::invalid_request("initialize must not be part of a batch"),
            ),
            Ok(Message::Request(request)) => match request_version(cx, &request, version) {
                Err(error) => Response::failure(Some(request.id), error),
                Ok(revision) => match budget.exceeded(cx.ports.clock.now_ms()) {
                    Some(error) => Response::failure(Some(request.id), error),
                    None => answer(cx, request, revision, budget.fuel()).await,
                },
            },
        };
        budget.hold(&response);
        responses.push(response);
    }
    if responses.is_empty() {
        HttpResponse::empty(202)
    } else {
        responses_reply(200, &responses, true)
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

/// Answers one request under `version`, its projections drawing on `fuel`: runs the method and
/// contains panics.
async fn answer(
    cx: &Context<'_>,
    request: Request,
    version: ProtocolVersion,
    fuel: &Fuel,
) -> Response {
    let id = request.id.clone();
    let method = request.method.clone();
    match AssertUnwindSafe(run_method(cx, version, request, fuel))
        .catch_unwind()
        .await
    {
        Ok(Ok(result)) => Response::success(id, result),
        Ok(Err(error)) => Response::failure(Some(id), error),
        Err(payload) => {
            let detail = panic_message(payload.as_ref());
            cx.ports.log.event(
                Level::Error,
                "panic",
                &[("method", (&method).into()), ("detail", (&detail).into())],
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

/// `value` as a result's JSON text.
pub(super) fn to_result(value: &impl Serialize) -> Result<ResultJson, ErrorObject> {
    ResultJson::of(value, 128).map_err(|_| ErrorObject::internal())
}

async fn run_method(
    cx: &Context<'_>,
    version: ProtocolVersion,
    request: Request,
    fuel: &Fuel,
) -> Result<ResultJson, ErrorObject> {
    let Request { method, params, .. } = request;
    // The `tools` array as JSON text, when it comes from the entries serialized once per isolate.
    let mut tools_text = None;
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
            let policy = cx.config.policy.is_configured();
            if policy {
                let mut tools = cx.registry.descriptors(schemas, cx.selection, policy);
                gate::describe(
                    &mut tools,
                    cx.registry,
                    cx.principal,
                    &cx.config.policy,
                    cx.ports.state,
                    cx.ports.settings,
                )
                .await;
                to_json(&ListToolsResult { tools })?
            } else {
                // Without a policy no description changes per principal, so the list is made
                // of the entries serialized once per isolate.
                let tools = cx.registry.descriptors_json(schemas, cx.selection, false);
                tools_text = Some(tools.ok_or_else(ErrorObject::internal)?);
                json!({})
            }
        }
        // Serialized by itself: its structuredContent may be megabytes (see `call_reply`).
        (_, "tools/call") => return call::call_tool(cx, version, params, fuel).await,
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
    match tools_text {
        None => to_result(&result),
        Some(tools) => with_tools(&tools, &result),
    }
}

/// `{"tools": <tools>, ...the fields of rest}` as one JSON text, the array copied as it is.
fn with_tools(tools: &str, rest: &Json) -> Result<ResultJson, ErrorObject> {
    let rest = serde_json::to_string(rest).map_err(|_| ErrorObject::internal())?;
    let mut text = String::with_capacity(tools.len() + rest.len() + 12);
    text.push_str("{\"tools\":");
    text.push_str(tools);
    match rest.strip_prefix('{') {
        Some("}") | None => text.push('}'),
        Some(fields) => {
            text.push(',');
            text.push_str(fields);
        }
    }
    // Both parts are serde_json's output.
    Ok(ResultJson::written(text))
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
