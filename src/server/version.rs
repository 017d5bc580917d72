//! Which protocol revision a message is served under, and the checks that choose it: the
//! `MCP-Protocol-Version` header (absent means 2025-03-26; unknown means 400), and for the
//! stateless 2026-07-28 revision the per-request `_meta` and the `Mcp-Method`/`Mcp-Name` headers,
//! which must agree with the body.

use super::reply::rpc_error_reply;
use crate::http::{HttpRequest, HttpResponse};
use crate::jsonrpc::{ErrorCode, ErrorObject, Id};
use crate::mcp::{self, Implementation, ProtocolVersion};
use base64::Engine;
use serde_json::{json, Map, Value as Json};

/// The header naming the request's protocol revision.
pub const PROTOCOL_VERSION_HEADER: &str = "MCP-Protocol-Version";
/// 2026-07-28: the header mirroring the body's `method`.
pub const METHOD_HEADER: &str = "Mcp-Method";
/// 2026-07-28: the header mirroring `params.name` of `tools/call`.
pub const NAME_HEADER: &str = "Mcp-Name";

/// The `MCP-Protocol-Version` header as a revision: `Ok(None)` when absent, `Err` (the reply)
/// when it names a revision this server does not speak.
pub fn header_version(
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

/// The revision a message is served under, after checking that the header and the body agree.
pub fn effective_version(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn with_header(name: &str, value: &str) -> HttpRequest {
        HttpRequest {
            headers: vec![(name.to_owned(), value.to_owned())],
            ..HttpRequest::default()
        }
    }

    #[test]
    fn decodes_plain_and_base64_header_values() {
        let cases = [
            ("tools/call", Some("tools/call")),
            (" echo ", Some("echo")),
            ("=?base64?dMO2w7ZsX3VuaWNvZGU=?=", Some("tööl_unicode")),
            ("=?base64?ZWNobw==?=", Some("echo")),
        ];
        for (raw, expected) in cases {
            let decoded = decoded_header(&with_header(NAME_HEADER, raw), NAME_HEADER);
            assert_eq!(decoded, Ok(expected.map(str::to_owned)), "{raw}");
        }
        assert_eq!(
            decoded_header(&HttpRequest::default(), NAME_HEADER),
            Ok(None)
        );
        for bad in ["=?base64?***?=", "=?base64?/w==?="] {
            let err = decoded_header(&with_header(NAME_HEADER, bad), NAME_HEADER).unwrap_err();
            assert_eq!(err.code, ErrorCode::HEADER_MISMATCH, "{bad}");
        }
    }

    #[test]
    fn header_versions() {
        assert_eq!(header_version(None, None).ok(), Some(None));
        assert_eq!(
            header_version(Some("2025-06-18"), None).ok(),
            Some(Some(ProtocolVersion::V2025_06_18))
        );
        let refused = header_version(Some("2024-11-05"), None).unwrap_err();
        assert_eq!(refused.status, 400);
    }
}
