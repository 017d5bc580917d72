//! Which protocol revision a message is served under, and the checks that choose it: the
//! `MCP-Protocol-Version` header (absent means 2025-03-26; unknown means 400), and for the
//! stateless 2026-07-28 revision the per-request `_meta` and the `Mcp-Method`/`Mcp-Name` headers,
//! which must agree with the body.

use super::reply::rpc_error_reply;
use crate::http::{HttpRequest, HttpResponse};
use crate::jsonrpc::{ErrorCode, ErrorObject, Id};
use crate::mcp::{self, Implementation, ProtocolVersion};
use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Map, Value as Json};

/// The header naming the request's protocol revision.
pub(crate) const PROTOCOL_VERSION_HEADER: &str = "MCP-Protocol-Version";
/// 2026-07-28: the header mirroring the body's `method`.
pub(crate) const METHOD_HEADER: &str = "Mcp-Method";
/// 2026-07-28: the header mirroring `params.name` of `tools/call`.
pub(crate) const NAME_HEADER: &str = "Mcp-Name";

/// The `MCP-Protocol-Version` header as a revision: `Ok(None)` when absent, `Err` (the reply)
/// when it names a revision this server does not speak.
pub(crate) fn header_version(
    header: Option<&str>,
    id: Option<Id>,
) -> Result<Option<ProtocolVersion>, HttpResponse> {
    match header {
        None => Ok(None),
        Some(text) => ProtocolVersion::parse(text)
            .map(Some)
            .ok_or_else(|| rpc_error_reply(REFUSAL_STATUS, id, unsupported_version(text))),
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
/// The header names the revision (its support was checked by [`header_version`]); a
/// `_meta` protocol version must equal it, whatever it names, so a disagreement is always
/// HeaderMismatch and never depends on which of the two values this server happens to know.
/// Every error here is answered with HTTP 400 ([`REFUSAL_STATUS`]).
pub(crate) fn effective_version(
    http: &HttpRequest,
    method: &str,
    params: Option<&Map<String, Json>>,
    header: Option<ProtocolVersion>,
    is_request: bool,
) -> Result<ProtocolVersion, ErrorObject> {
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Json::as_object);
    match header {
        Some(version) if version.is_stateless() => {
            stateless_checks(http, method, params, meta, version, is_request)?;
            Ok(version)
        }
        _ => {
            let version = header.unwrap_or(ProtocolVersion::DEFAULT_WITHOUT_HEADER);
            match meta.and_then(|m| m.get(mcp::META_PROTOCOL_VERSION)) {
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

/// The HTTP status of every refusal [`effective_version`] returns: the malformed `_meta`
/// (-32602), header disagreements (-32020) and unsupported revisions (-32022) are all
/// `400 Bad Request` in 2026-07-28.
pub(crate) const REFUSAL_STATUS: u16 = 400;

/// The answer to a JSON-RPC response POSTed by the client. This server sends no requests, so
/// under the 2025 revisions one is acknowledged (202) and dropped; 2026-07-28 allows only a
/// request or a notification as a POST body, so there it is an invalid request.
pub(crate) fn client_response_reply(header: Option<&str>) -> HttpResponse {
    match header.and_then(ProtocolVersion::parse) {
        Some(version) if version.is_stateless() => rpc_error_reply(
            REFUSAL_STATUS,
            None,
            ErrorObject::invalid_request(format!(
                "protocol revision {} accepts only a request or a notification as a POST body, \
                 never a JSON-RPC response",
                version.as_str()
            )),
        ),
        _ => HttpResponse::empty(202),
    }
}

fn header_mismatch(reason: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::HEADER_MISMATCH,
        format!("Header mismatch: {reason}"),
    )
}

/// The log levels `io.modelcontextprotocol/logLevel` may name.
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

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
        request_meta_checks(meta, version)?;
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

/// The per-request fields of a 2026-07-28 request's `_meta`: `protocolVersion` (equal to the
/// header) and `clientCapabilities` are required; `clientInfo` and `logLevel` are optional
/// but, when sent, must have their schema's shape.
fn request_meta_checks(
    meta: Option<&Map<String, Json>>,
    version: ProtocolVersion,
) -> Result<(), ErrorObject> {
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
    if let Some(info) = meta.get(mcp::META_CLIENT_INFO) {
        if Implementation::deserialize(info).is_err() {
            return Err(ErrorObject::invalid_params(format!(
                "{} is optional, but when sent it must be an object with string name and version",
                mcp::META_CLIENT_INFO
            )));
        }
    }
    if let Some(level) = meta.get(mcp::META_LOG_LEVEL) {
        if !level.as_str().is_some_and(|l| LOG_LEVELS.contains(&l)) {
            return Err(ErrorObject::invalid_params(format!(
                "{} is optional, but when sent it must be one of {}",
                mcp::META_LOG_LEVEL,
                LOG_LEVELS.join(", ")
            )));
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
    // RFC 9110 field values: visible ASCII, space and tab. Anything else had to be sent in the
    // base64 form, so a raw one is malformed rather than compared.
    if !raw.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b)) {
        return Err(header_mismatch(&format!(
            "the {name} header holds characters a header value may not carry; send such a \
             value as =?base64?...?="
        )));
    }
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

    fn meta_2026() -> Json {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}
        })
    }

    /// `effective_version` for a `server/discover` request whose `_meta` is `meta_2026()` with
    /// `key` set to `value` (removed when `None`), under the given headers.
    fn discover(
        headers: &[(&str, &str)],
        key: &str,
        value: Option<Json>,
    ) -> Result<ProtocolVersion, ErrorObject> {
        let http = HttpRequest {
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..HttpRequest::default()
        };
        let mut meta = meta_2026().as_object().cloned().unwrap_or_default();
        match value {
            Some(value) => meta.insert(key.to_owned(), value),
            None => meta.remove(key),
        };
        let params = Map::from_iter([("_meta".to_owned(), Json::Object(meta))]);
        let header = headers
            .iter()
            .find(|(k, _)| *k == PROTOCOL_VERSION_HEADER)
            .and_then(|(_, v)| ProtocolVersion::parse(v));
        effective_version(&http, "server/discover", Some(&params), header, true)
    }

    const STATELESS: [(&str, &str); 2] = [
        (PROTOCOL_VERSION_HEADER, "2026-07-28"),
        (METHOD_HEADER, "server/discover"),
    ];

    fn code(result: Result<ProtocolVersion, ErrorObject>) -> i32 {
        result.map_or_else(|e| e.code.0, |_| 0)
    }

    #[test]
    fn a_meta_version_that_disagrees_with_the_header_is_header_mismatch_even_when_unknown() {
        let mismatch = ErrorCode::HEADER_MISMATCH.0;
        let legacy = [(PROTOCOL_VERSION_HEADER, "2025-11-25")];
        // With no header, the request still names a revision in _meta, and the header is required.
        let cases: [(&[(&str, &str)], &str); 5] = [
            (&STATELESS, "v999.0.0"),
            (&STATELESS, "2025-11-25"),
            (&legacy, "2026-07-28"),
            (&[], "v999.0.0"),
            (&[], "2026-07-28"),
        ];
        for (headers, named) in cases {
            let result = discover(headers, mcp::META_PROTOCOL_VERSION, Some(json!(named)));
            assert_eq!(code(result), mismatch, "{headers:?} with _meta {named}");
        }
        assert_eq!(
            discover(
                &STATELESS,
                mcp::META_PROTOCOL_VERSION,
                Some(json!("2026-07-28"))
            ),
            Ok(ProtocolVersion::V2026_07_28)
        );
    }

    #[test]
    fn required_meta_fields_are_invalid_params_and_the_optional_ones_are_checked_when_sent() {
        let invalid = ErrorCode::INVALID_PARAMS.0;
        let cases = [
            (
                "no protocolVersion",
                mcp::META_PROTOCOL_VERSION,
                None,
                invalid,
            ),
            (
                "protocolVersion a number",
                mcp::META_PROTOCOL_VERSION,
                Some(json!(2026)),
                invalid,
            ),
            (
                "no clientCapabilities",
                mcp::META_CLIENT_CAPABILITIES,
                None,
                invalid,
            ),
            (
                "clientCapabilities a list",
                mcp::META_CLIENT_CAPABILITIES,
                Some(json!([])),
                invalid,
            ),
            ("no clientInfo (a SHOULD)", mcp::META_CLIENT_INFO, None, 0),
            (
                "clientInfo without version",
                mcp::META_CLIENT_INFO,
                Some(json!({"name": "c"})),
                invalid,
            ),
            (
                "clientInfo a string",
                mcp::META_CLIENT_INFO,
                Some(json!("c/1")),
                invalid,
            ),
            (
                "logLevel debug",
                mcp::META_LOG_LEVEL,
                Some(json!("debug")),
                0,
            ),
            (
                "logLevel unknown",
                mcp::META_LOG_LEVEL,
                Some(json!("verbose")),
                invalid,
            ),
        ];
        for (case, key, value, expected) in cases {
            assert_eq!(code(discover(&STATELESS, key, value)), expected, "{case}");
        }
        let http = with_header(PROTOCOL_VERSION_HEADER, "2026-07-28");
        let no_meta = effective_version(
            &http,
            "tools/list",
            None,
            Some(ProtocolVersion::V2026_07_28),
            true,
        );
        assert_eq!(code(no_meta), invalid);
    }

    #[test]
    fn raw_header_values_outside_visible_ascii_are_malformed() {
        for bad in ["t\u{f6}\u{f6}l", "a\u{1}b"] {
            let err = decoded_header(&with_header(NAME_HEADER, bad), NAME_HEADER).unwrap_err();
            assert_eq!(err.code, ErrorCode::HEADER_MISMATCH, "{bad:?}");
        }
        assert_eq!(
            decoded_header(&with_header(NAME_HEADER, "a\tb c"), NAME_HEADER),
            Ok(Some("a\tb c".to_owned()))
        );
    }

    #[test]
    fn client_responses_are_refused_only_by_the_stateless_revision() {
        let refused = client_response_reply(Some("2026-07-28"));
        assert_eq!(refused.status, 400);
        let body: Json = serde_json::from_slice(&refused.body).unwrap_or_default();
        assert_eq!(body["error"]["code"], ErrorCode::INVALID_REQUEST.0);
        for header in [None, Some("2025-11-25"), Some("2025-03-26")] {
            let reply = client_response_reply(header);
            assert_eq!((reply.status, reply.body.len()), (202, 0), "{header:?}");
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
