//! What a body is dispatched with, and the helpers the methods and `tools/call` share.

use super::stream::Streamed;
use crate::auth::Principal;
use crate::config::Config;
use crate::http::HttpRequest;
use crate::jsonrpc::ErrorObject;
use crate::mcp::Implementation;
use crate::memory::MemoryBudget;
use crate::ports::Ports;
use crate::projection::FuelShares;
use crate::tools::registry::Registry;
use crate::tools::Selection;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value as Json};

/// What one body is dispatched with.
pub(crate) struct Context<'a> {
    /// Settings.
    pub(crate) config: &'a Config,
    /// Tools.
    pub(crate) registry: &'a Registry,
    /// The authenticated caller.
    pub principal: &'a Principal,
    /// The outside world.
    pub(crate) ports: Ports<'a>,
    /// The HTTP request (headers are checked against the body).
    pub(crate) request: &'a HttpRequest,
    /// The tools this connection is offered.
    pub(crate) selection: &'a Selection,
    /// The isolate's memory budget, which each call's upstream bodies are read under.
    pub memory: &'a MemoryBudget,
    /// Each principal's bucket of fuel.
    pub(crate) fuel: &'a FuelShares,
    /// Where a call that reports progress answers as it runs, for a single message whose
    /// client reads an event stream.
    pub(crate) stream: Option<&'a Streamed<'a>>,
}

/// `params` as the method's required parameters.
pub(super) fn parse_required<T: DeserializeOwned>(
    params: Option<Map<String, Json>>,
) -> Result<T, ErrorObject> {
    let params = params.ok_or_else(|| ErrorObject::invalid_params("params are required"))?;
    serde_json::from_value(Json::Object(params)).map_err(ErrorObject::invalid_params)
}

/// `value` as JSON, or an internal error.
pub(super) fn to_json(value: &impl Serialize) -> Result<Json, ErrorObject> {
    serde_json::to_value(value).map_err(|_| ErrorObject::internal())
}

/// The server's name, version and title.
pub(super) fn server_info() -> Implementation {
    Implementation {
        name: super::SERVER_NAME.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        title: Some("DevTools MCP (CI and project data)".to_owned()),
    }
}
