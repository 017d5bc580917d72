//! JSON-RPC 2.0 framing: classifying incoming messages, request ids, error codes and the
//! response objects the server writes back.
//!
//! Only the envelope lives here; what a method's `params` and `result` mean is `mcp`'s business.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value as Json};
use std::fmt;

/// The most JSON values (objects, arrays, keys and scalars) one request body may hold. A parsed
/// value costs a hundred bytes or more of memory where its text may cost two (`1,`), so a body
/// within its byte limit could still take more memory than an isolate has; this bounds what
/// parsing builds to a few megabytes. Tool arguments keep their own, lower limits (e.g.
/// `queryParams`).
pub(crate) const MAX_VALUES: usize = 100_000;

/// Whether `body` holds more than `limit` JSON values, counted without parsing and without
/// allocating: every value but the first follows a `,`, a `:` or an opening bracket outside a
/// string, so counting those bytes bounds the values from above (an empty container counts one
/// too many). Stops as soon as the count passes `limit`.
pub(crate) fn has_more_values_than(body: &[u8], limit: usize) -> bool {
    let mut count = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b':' | b'[' | b'{' => {
                count += 1;
                if count > limit {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// A JSON-RPC error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// The body is not valid JSON.
    pub(crate) const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON is not a valid request object (or the batch/transport rules forbid it).
    pub(crate) const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist in the negotiated protocol revision.
    pub(crate) const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// The params are missing, malformed, or name something that does not exist (e.g. a tool).
    pub(crate) const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// The server failed; the message is generic and the detail goes to the log.
    pub(crate) const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// Implementation-defined server error: transport-level refusals (origin, authentication,
    /// size, media type) carry it, as the reference TypeScript SDK does.
    pub(crate) const SERVER_ERROR: ErrorCode = ErrorCode(-32000);
    /// MCP 2026-07-28 `HeaderMismatch`: a required standard header (`MCP-Protocol-Version`,
    /// `Mcp-Method`, `Mcp-Name`) is missing, malformed, or disagrees with the body.
    pub(crate) const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// MCP 2026-07-28 `UnsupportedProtocolVersion`: the requested revision is not spoken here;
    /// `data.supported` lists the ones that are.
    pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A request id: JSON-RPC allows strings and numbers; MCP forbids `null`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Id {
    /// A numeric id, echoed back exactly as serde_json read it.
    Number(serde_json::Number),
    /// A string id.
    String(String),
}

/// The error member of a response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorObject {
    /// The code.
    pub(crate) code: ErrorCode,
    /// A short, client-safe description.
    pub(crate) message: String,
    /// Extra structured detail (never internal state).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) data: Option<Json>,
}

impl ErrorObject {
    /// An error with `code` and `message` and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// -32700 for a body that is not JSON.
    pub(crate) fn parse_error(detail: impl fmt::Display) -> ErrorObject {
        ErrorObject::new(ErrorCode::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// -32600 with a reason.
    pub(crate) fn invalid_request(reason: impl fmt::Display) -> ErrorObject {
        ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {reason}"),
        )
    }

    /// -32601 naming the method.
    pub(crate) fn method_not_found(method: &str) -> ErrorObject {
        ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// -32602 with a reason.
    pub(crate) fn invalid_params(reason: impl fmt::Display) -> ErrorObject {
        ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params: {reason}"),
        )
    }

    /// -32603 with the generic message; callers log the detail themselves.
    pub(crate) fn internal() -> ErrorObject {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, "Internal error")
    }

    /// Adds structured data.
    pub(crate) fn with_data(mut self, data: Json) -> ErrorObject {
        self.data = Some(data);
        self
    }
}

/// A method's result as JSON text that this server wrote itself, with serde_json or with the
/// crate's own JSON writers, and that is sent as it is: a tool result of megabytes goes
/// straight from the server's types to text, never through a `serde_json::Value` tree, and is
/// not parsed again to be checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultJson(String);

impl ResultJson {
    /// `value` as serde_json writes it, into a buffer of `capacity` bytes to start with (a good
    /// estimate spares a large result the copies of a growing buffer).
    pub(crate) fn of(
        value: &impl Serialize,
        capacity: usize,
    ) -> Result<ResultJson, serde_json::Error> {
        let mut buf = Vec::with_capacity(capacity);
        serde_json::to_writer(&mut buf, value)?;
        // serde_json writes UTF-8: the check never fails, and costs far less than a parse.
        String::from_utf8(buf)
            .map(ResultJson)
            .map_err(serde::ser::Error::custom)
    }

    /// Text one of the crate's JSON writers produced, which is one JSON value by construction
    /// (each caller's tests compare it with what serde_json writes).
    pub(crate) fn written(text: String) -> ResultJson {
        ResultJson(text)
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }
}

impl Serialize for ResultJson {
    /// Inside other serde output the text can only go in as a checked `RawValue`: the server
    /// writes its responses with [`Response::write_json`] instead, which copies it.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RawValue::from_string(self.0.clone())
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

/// A response object: exactly one of `result` and `error` is set.
#[derive(Clone, Debug, Serialize)]
pub struct Response {
    /// Always `"2.0"`.
    pub(crate) jsonrpc: &'static str,
    /// The request's id; `null` when it could not be read.
    pub id: Option<Id>,
    /// The result, on success, already serialized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<ResultJson>,
    /// The error, on failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<ErrorObject>,
}

impl Response {
    /// A success response.
    pub fn success(id: Id, result: ResultJson) -> Response {
        Response {
            jsonrpc: "2.0",
            id: Some(id),
            result: Some(result),
            error: None,
        }
    }

    /// Appends the response's JSON to `out`: what serde_json writes for it, the result copied
    /// as it is.
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        out.extend_from_slice(b"{\"jsonrpc\":");
        serde_json::to_writer(&mut *out, self.jsonrpc)?;
        out.extend_from_slice(b",\"id\":");
        serde_json::to_writer(&mut *out, &self.id)?;
        if let Some(result) = &self.result {
            out.extend_from_slice(b",\"result\":");
            out.extend_from_slice(result.get().as_bytes());
        }
        if let Some(error) = &self.error {
            out.extend_from_slice(b",\"error\":");
            serde_json::to_writer(&mut *out, error)?;
        }
        out.push(b'}');
        Ok(())
    }

    /// An error response; `id` is `None` when the request's id could not be determined.
    pub(crate) fn failure(id: Option<Id>, error: ErrorObject) -> Response {
        Response {
            jsonrpc: "2.0",
            id,
            result: None,
            error: Some(error),
        }
    }
}

/// One well-formed incoming message.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Message {
    /// A request: it has an id and expects a response.
    Request(Request),
    /// A notification: no id, no response.
    Notification(Notification),
    /// A response to a request the server sent (this server sends none, so it is acknowledged and
    /// dropped).
    Response,
}

/// A request with its id.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Request {
    /// The id to echo.
    pub id: Id,
    /// The method name.
    pub method: String,
    /// The params object (absent params read as `None`).
    pub(crate) params: Option<Map<String, Json>>,
}

/// A notification.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Notification {
    /// The method name.
    pub method: String,
    /// The params object.
    pub(crate) params: Option<Map<String, Json>>,
}

/// Why a JSON value is not a valid message; carries the id when one could be read, so the error
/// response can still name the request.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct InvalidMessage {
    /// The id, if the object had a usable one.
    pub id: Option<Id>,
    /// What is wrong, client-safe.
    pub(crate) reason: String,
}

impl InvalidMessage {
    fn new(id: Option<Id>, reason: impl Into<String>) -> InvalidMessage {
        InvalidMessage {
            id,
            reason: reason.into(),
        }
    }

    /// The -32600 error object for this problem.
    pub(crate) fn to_error(&self) -> ErrorObject {
        ErrorObject::invalid_request(&self.reason)
    }
}

/// Reads one JSON value (an element of a batch, or the whole body) as a message.
pub(crate) fn classify(value: Json) -> Result<Message, InvalidMessage> {
    let Json::Object(mut object) = value else {
        return Err(InvalidMessage::new(None, "a message must be a JSON object"));
    };
    let id = match object.remove("id") {
        None => None,
        Some(Json::String(s)) => Some(Id::String(s)),
        Some(Json::Number(n)) => Some(Id::Number(n)),
        Some(Json::Null) => {
            return Err(InvalidMessage::new(None, "the id must not be null"));
        }
        Some(_) => {
            return Err(InvalidMessage::new(
                None,
                "the id must be a string or a number",
            ))
        }
    };
    if object.get("jsonrpc").and_then(Json::as_str) != Some("2.0") {
        return Err(InvalidMessage::new(id, "\"jsonrpc\" must be \"2.0\""));
    }
    let method = match object.remove("method") {
        Some(Json::String(m)) => m,
        Some(_) => return Err(InvalidMessage::new(id, "\"method\" must be a string")),
        None => {
            return if id.is_some()
                && (object.contains_key("result") || object.contains_key("error"))
            {
                Ok(Message::Response)
            } else {
                Err(InvalidMessage::new(id, "\"method\" is missing"))
            };
        }
    };
    let params = match object.remove("params") {
        None => None,
        Some(Json::Object(p)) => Some(p),
        // JSON-RPC allows positional params, but no MCP method takes them.
        Some(_) => return Err(InvalidMessage::new(id, "\"params\" must be an object")),
    };
    Ok(match id {
        Some(id) => Message::Request(Request { id, method, params }),
        None => Message::Notification(Notification { method, params }),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_are_counted_from_above_outside_strings() {
        use super::has_more_values_than as over;
        // {"a":1,"b":[2,3]}: the object, two keys, 1, the array, 2 and 3.
        let body = br#"{"a":1,"b":[2,3]}"#;
        assert!(!over(body, 7));
        assert!(over(body, 6));
        // Separators inside strings, escaped quotes included, are not values.
        let body = br#"{"k":"a,b:[c{\",d"}"#;
        assert!(!over(body, 3));
        assert!(over(body, 2));
        // Three hundred thousand entries stop at the limit.
        let mut big = String::from("{");
        for i in 0..300_000 {
            big.push_str(&format!("\"{i}\":\"v\","));
        }
        big.push_str("\"end\":1}");
        assert!(over(big.as_bytes(), super::MAX_VALUES));
        assert!(!over(b"[]", 2));
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_requests_notifications_and_responses() {
        let request = classify(json!({"jsonrpc":"2.0","id":7,"method":"ping"})).unwrap();
        assert_eq!(
            request,
            Message::Request(Request {
                id: Id::Number(7.into()),
                method: "ping".into(),
                params: None
            })
        );
        let note = classify(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        assert!(
            matches!(note, Ok(Message::Notification(n)) if n.method == "notifications/initialized")
        );
        let response = classify(json!({"jsonrpc":"2.0","id":"a","result":{}}));
        assert_eq!(response, Ok(Message::Response));
    }

    #[test]
    fn rejects_malformed_messages_keeping_the_id() {
        let cases = [
            (json!([1]), None, "a message must be a JSON object"),
            (
                json!({"jsonrpc":"2.0","id":null,"method":"x"}),
                None,
                "the id must not be null",
            ),
            (
                json!({"jsonrpc":"2.0","id":true,"method":"x"}),
                None,
                "the id must be a string or a number",
            ),
            (
                json!({"jsonrpc":"1.0","id":1,"method":"x"}),
                Some(Id::Number(1.into())),
                "\"jsonrpc\" must be \"2.0\"",
            ),
            (
                json!({"jsonrpc":"2.0","id":"k","method":3}),
                Some(Id::String("k".into())),
                "\"method\" must be a string",
            ),
            (
                json!({"jsonrpc":"2.0","id":1}),
                Some(Id::Number(1.into())),
                "\"method\" is missing",
            ),
            (
                json!({"jsonrpc":"2.0","id":1,"method":"x","params":[1]}),
                Some(Id::Number(1.into())),
                "\"params\" must be an object",
            ),
        ];
        for (input, id, reason) in cases {
            let err = classify(input.clone()).expect_err(&input.to_string());
            assert_eq!(err.id, id, "{input}");
            assert_eq!(err.reason, reason, "{input}");
        }
    }

    /// Both ways of writing a response: [`Response::write_json`], and serde for a caller that
    /// embeds one.
    fn written(response: &Response) -> String {
        let mut out = Vec::new();
        response.write_json(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(out, serde_json::to_string(response).unwrap());
        out
    }

    #[test]
    fn responses_serialize_with_null_id_and_one_member() {
        let result = ResultJson::of(&json!({}), 0).unwrap();
        let ok = Response::success(Id::String("x".into()), result);
        assert_eq!(written(&ok), r#"{"jsonrpc":"2.0","id":"x","result":{}}"#);
        let err = Response::failure(None, ErrorObject::parse_error("eof"));
        assert_eq!(
            written(&err),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: eof"}}"#
        );
        let id = Id::Number(7.into());
        let with_data = ErrorObject::invalid_params("x").with_data(json!({"a": [1, "é\n"]}));
        assert_eq!(
            written(&Response::failure(Some(id), with_data)),
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: x","data":{"a":[1,"é\n"]}}}"#
        );
    }

    #[test]
    fn a_written_result_is_copied_as_it_is() {
        // Not JSON: a result is never parsed again on its way out, so the text shows unchanged.
        let text = ResultJson::written("{\"k\": 01}".into());
        let response = Response::success(Id::String("x".into()), text);
        let mut out = Vec::new();
        response.write_json(&mut out).unwrap();
        assert_eq!(out, br#"{"jsonrpc":"2.0","id":"x","result":{"k": 01}}"#);
        // serde can only embed it checked.
        assert!(serde_json::to_string(&response).is_err());
    }

    #[test]
    fn large_and_fractional_numeric_ids_echo_exactly() {
        let Message::Request(r) =
            classify(json!({"jsonrpc":"2.0","id":18446744073709551615u64,"method":"m"})).unwrap()
        else {
            panic!("not a request")
        };
        let result = ResultJson::of(&json!(null), 0).unwrap();
        let out = written(&Response::success(r.id, result));
        assert!(out.contains("18446744073709551615"), "{out}");
    }
}
