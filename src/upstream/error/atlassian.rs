//! Error texts of the Atlassian reference servers (Jira 3.3.0, Bitbucket 3.1.0, Confluence from
//! its 3.3.0 sources), reproduced stage by stage as docs/parity.md describes them: the transport
//! message, the controller's classification and wording, then the tool's formatting.
//!
//! The classification tests English substrings case-sensitively, exactly as the JavaScript does;
//! that is the point, not an oversight.

mod bitbucket;

use super::{ErrorKind, UpstreamError};
use crate::upstream::js;
use crate::upstream::vendor::{Vendor, BITBUCKET_MAX_RESPONSE};
use crate::value::{Map, Number, Value};

/// What the reference keeps as the error's `originalError`, which decides the last block.
enum Original {
    /// A parsed JSON body (or part of one).
    Body(Value),
    /// The raw body text (non-empty).
    Text(String),
    /// Nothing truthy: the reference falls back to the transport error object itself.
    TransportSelf,
    /// No upstream answer at all (timeouts, network): no vendor block.
    Absent,
}

/// Stage a: the transport error.
struct Transport {
    message: String,
    status_code: Option<u16>,
    /// `ErrorType` of the reference's McpError (`AUTH_INVALID` or `API_ERROR`).
    auth_invalid: bool,
    original: Original,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Code {
    NotFound,
    InvalidCursor,
    AccessDenied,
    Validation,
    Unexpected,
    Network,
    RateLimit,
    Jql,
    FieldValidation,
    ResourceLocked,
}

/// The complete text for an Atlassian vendor.
pub(super) fn text(error: &UpstreamError) -> String {
    let transport = transport(error);
    match error.vendor {
        Vendor::Bitbucket => bitbucket::text(error, transport),
        _ => jira_text(error, transport),
    }
}

fn transport(error: &UpstreamError) -> Transport {
    let vendor = error.vendor;
    let name = vendor.name();
    let plain = |message: String, status_code: Option<u16>| Transport {
        message,
        status_code,
        auth_invalid: false,
        original: Original::Absent,
    };
    match &error.kind {
        ErrorKind::Status {
            status,
            status_text,
            body,
            ..
        } => match vendor {
            Vendor::Bitbucket => bitbucket::transport(*status, status_text, body),
            _ => jira_transport(error, *status, status_text, body),
        },
        ErrorKind::Timeout { .. } => plain(
            error.transport_summary(&error.kind),
            (vendor == Vendor::Bitbucket).then_some(408),
        ),
        ErrorKind::Network => plain(
            if vendor == Vendor::Bitbucket {
                "Network error while calling Bitbucket API: fetch failed".to_owned()
            } else {
                format!("Network error connecting to {name} API: fetch failed")
            },
            Some(500),
        ),
        ErrorKind::DeclaredTooLarge { size } => {
            let mut detail = Map::new();
            detail.insert("responseSize".into(), number(*size as f64));
            detail.insert("limit".into(), number(BITBUCKET_MAX_RESPONSE));
            Transport {
                message: error.transport_summary(&error.kind),
                status_code: Some(413),
                auth_invalid: false,
                original: Original::Body(Value::Object(detail)),
            }
        }
        ErrorKind::TooLarge { .. } => plain(error.transport_summary(&error.kind), Some(413)),
        ErrorKind::MalformedJson => plain(error.transport_summary(&error.kind), Some(502)),
        ErrorKind::Redirect { status, .. } => {
            plain(error.transport_summary(&error.kind), Some(*status))
        }
        // Answered before any vendor wording (`UpstreamError::text`).
        ErrorKind::NotConfigured
        | ErrorKind::Undeclared
        | ErrorKind::Denied(_)
        | ErrorKind::Busy { .. }
        | ErrorKind::TooManyValues { .. } => plain(String::new(), None),
    }
}

fn number(v: f64) -> Value {
    Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// The body parsed when it starts with `{` or `[` (no trimming), as both references do.
fn parse_error_body(body: &str) -> Option<Result<Value, ()>> {
    (body.starts_with('{') || body.starts_with('[')).then(|| js::json_parse(body).ok_or(()))
}

fn jira_transport(error: &UpstreamError, status: u16, status_text: &str, body: &str) -> Transport {
    let name = error.vendor.name();
    let mut m = format!("{status} {status_text}");
    let mut parsed = None;
    match parse_error_body(body) {
        Some(Ok(value)) => {
            let parts = if error.vendor == Vendor::Confluence {
                confluence_parts(&value)
            } else {
                jira_parts(&value)
            };
            match parts {
                Ok(parts) if !parts.is_empty() => m = parts.join(" | "),
                Ok(_) => {}
                // A property read on null threw inside the reference's try block.
                Err(()) if !js::is_blank(body) => m = body.to_owned(),
                Err(()) => {}
            }
            parsed = Some(value);
        }
        Some(Err(())) if error.vendor == Vendor::Jira && !js::is_blank(body) => m = body.to_owned(),
        _ => {}
    }
    let original = match parsed {
        Some(v) => Original::Body(v),
        None if body.is_empty() => Original::TransportSelf,
        None => Original::Text(body.to_owned()),
    };
    let (message, status_code, auth_invalid) = if error.vendor == Vendor::Confluence {
        match status {
            401 => (format!("Authentication failed. {name} API: {m}"), 401, true),
            403 => (format!("Access denied. {name} API: {m}"), 403, false),
            404 => (format!("Resource not found. {name} API: {m}"), 404, false),
            429 => (format!("Rate limit exceeded. {name} API: {m}"), 429, false),
            s if s >= 500 => (format!("{name} service error. Detail: {m}"), s, false),
            s => (format!("{name} API request failed. Detail: {m}"), s, false),
        }
    } else {
        match status {
            401 => (format!("Authentication failed. {name} API: {m}"), 401, true),
            403 => (
                format!("Insufficient permissions. {name} API: {m}"),
                401,
                true,
            ),
            404 => (format!("Resource not found. {name} API: {m}"), 404, false),
            429 => (format!("Rate limit exceeded. {name} API: {m}"), 429, false),
            s if s >= 500 => (format!("{name} server error. Detail: {m}"), s, false),
            s => {
                let path = error.path.split('?').next().unwrap_or_default();
                let jql = match &original {
                    Original::Body(v) => v
                        .get("errors")
                        .and_then(|e| js::truthy_field(e, "jql"))
                        .is_some(),
                    _ => false,
                };
                let hint = if path.contains("/search") && jql {
                    " Check your JQL syntax for errors."
                } else if path.contains("/issue/") && error.method.as_str() == "POST" {
                    " Check issue fields for validation errors."
                } else {
                    ""
                };
                (
                    format!("{name} API request failed. Detail: {m}{hint}"),
                    s,
                    false,
                )
            }
        }
    };
    Transport {
        message,
        status_code: Some(status_code),
        auth_invalid,
        original,
    }
}

/// Jira's message parts; `Err` where the JavaScript would throw (`errors[0]` is null).
fn jira_parts(v: &Value) -> Result<Vec<String>, ()> {
    let mut parts = Vec::new();
    if let Some(Value::Array(items)) = js::truthy_field(v, "errorMessages") {
        if !items.is_empty() {
            parts.push(js::join(items, "; "));
        }
    }
    let errors = js::truthy_field(v, "errors");
    match errors {
        Some(Value::Object(map)) if !map.is_empty() => parts.push(
            map.iter()
                .map(|(k, v)| format!("{k}: {}", js::to_string(v)))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        // An array is an object to `typeof`: its entries are index/value pairs.
        Some(Value::Array(items)) if !items.is_empty() => parts.push(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{i}: {}", js::to_string(v)))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        _ => {}
    }
    if let Some(message) = js::truthy_field(v, "message") {
        parts.push(js::to_string(message));
    }
    if let Some(Value::Array(items)) = errors {
        match items.first() {
            Some(Value::Null) => return Err(()),
            Some(first) => {
                for key in ["title", "detail"] {
                    if let Some(x) = js::truthy_field(first, key) {
                        parts.push(js::to_string(x));
                    }
                }
            }
            None => {}
        }
    }
    if let Some(Value::Array(items)) = js::truthy_field(v, "warningMessages") {
        if !items.is_empty() {
            parts.push(format!("Warnings: {}", js::join(items, "; ")));
        }
    }
    Ok(parts)
}

/// Confluence's message: the first matching shape only (from its 3.3.0 transport source).
fn confluence_parts(v: &Value) -> Result<Vec<String>, ()> {
    if let Some(title) = js::truthy_field(v, "title") {
        let mut m = js::to_string(title);
        if let Some(detail) = js::truthy_field(v, "detail") {
            let detail = js::to_string(detail);
            if !m.contains(&detail) {
                m = format!("{m}: {detail}");
            }
        }
        return Ok(vec![m]);
    }
    if let Some(message) = js::truthy_field(v, "message") {
        let mut m = js::to_string(message);
        if let Some(reason) = js::truthy_field(v, "reason") {
            m = format!("{m}: {}", js::to_string(reason));
        }
        return Ok(vec![m]);
    }
    if let Some(Value::Array(errors)) = js::truthy_field(v, "errors") {
        if !errors.is_empty() {
            let mut texts = Vec::new();
            for e in errors.iter().take(3) {
                if matches!(e, Value::Null) {
                    return Err(());
                }
                if let Some(t) =
                    js::truthy_field(e, "message").or_else(|| js::truthy_field(e, "title"))
                {
                    texts.push(js::to_string(t));
                }
            }
            let mut m = texts.join("; ");
            if errors.len() > 3 {
                m.push_str(&format!("; and {} more errors", errors.len() - 3));
            }
            return Ok(vec![m]);
        }
    }
    if let Some(Value::Array(items)) = js::truthy_field(v, "errorMessages") {
        if !items.is_empty() {
            return Ok(vec![js::join(items, "; ")]);
        }
    }
    Ok(Vec::new())
}

const NETWORK_WORDS: [&str; 6] = [
    "network error",
    "fetch failed",
    "ECONNREFUSED",
    "ENOTFOUND",
    "Failed to fetch",
    "Network request failed",
];

/// Stage b for Jira (and Confluence without Jira's JQL, field and lock rules).
fn jira_classify(vendor: Vendor, t: &Transport) -> Code {
    let m = t.message.as_str();
    let sc = t.status_code;
    let has = |s: &str| m.contains(s);
    if NETWORK_WORDS.iter().any(|w| has(w)) {
        return Code::Network;
    }
    if has("rate limit") || has("too many requests") || sc == Some(429) {
        return Code::RateLimit;
    }
    if vendor == Vendor::Jira {
        if has("Error in the JQL Query")
            || has("The JQL query is invalid")
            || (has("JQL") && (has("syntax") || has("parse error") || has("invalid")))
        {
            return Code::Jql;
        }
        if has("Field")
            && (has("operation") || has("not found") || has("required") || has("invalid"))
        {
            return Code::FieldValidation;
        }
        if has("issue is locked") || has("currently being edited") || has("in use by another user")
        {
            return Code::ResourceLocked;
        }
        let original = match &t.original {
            Original::Body(v) => Some(v.clone()),
            // The reference re-parses a string original with JSON.parse.
            Original::Text(s) => js::json_parse(s),
            _ => None,
        };
        if let Some(o @ (Value::Object(_) | Value::Array(_))) = &original {
            if let Some(Value::Array(items)) = js::truthy_field(o, "errorMessages") {
                let joined = js::join(items, " ");
                if joined.contains("JQL") {
                    return Code::Jql;
                }
                if joined.contains("Field") {
                    return Code::FieldValidation;
                }
            }
            match js::truthy_field(o, "errors") {
                Some(Value::Object(map)) => {
                    if map.contains_key("jql") {
                        return Code::Jql;
                    }
                    if !map.is_empty() {
                        return Code::FieldValidation;
                    }
                }
                Some(Value::Array(items)) if !items.is_empty() => return Code::FieldValidation,
                _ => {}
            }
        }
    }
    generic_classify(m, sc)
}

/// The rules both references end with.
fn generic_classify(m: &str, sc: Option<u16>) -> Code {
    let has = |s: &str| m.contains(s);
    if has("not found") || has("does not exist") || sc == Some(404) {
        return Code::NotFound;
    }
    if has("access")
        || has("permission")
        || has("authorize")
        || has("authentication")
        || matches!(sc, Some(401 | 403))
    {
        return Code::AccessDenied;
    }
    if (has("cursor") || has("startAt") || has("page")) && (has("invalid") || has("not valid")) {
        return Code::InvalidCursor;
    }
    if has("validation") || has("invalid") || has("required") || matches!(sc, Some(400 | 422)) {
        return Code::Validation;
    }
    Code::Unexpected
}

fn jira_text(error: &UpstreamError, t: Transport) -> String {
    let name = error.vendor.name();
    let op = format!("{} request", error.method.as_str());
    let code = jira_classify(error.vendor, &t);
    let m = &t.message;
    let message = match code {
        Code::Validation | Code::Jql | Code::FieldValidation => m.clone(),
        _ => {
            let mut message = match code {
                Code::NotFound => {
                    "API not found. Verify the ID is correct and that you have access to this api."
                        .to_owned()
                }
                Code::AccessDenied => {
                    "Access denied for api. Verify your credentials and permissions.".to_owned()
                }
                Code::InvalidCursor => "Invalid pagination cursor. Use the exact cursor string \
                                        returned from previous results."
                    .to_owned(),
                Code::Network => format!(
                    "Network error while {op} {name}. Please check your internet connection and \
                     try again."
                ),
                Code::RateLimit => format!(
                    "Rate limit exceeded. Please wait a moment and try again, or reduce the \
                     frequency of requests to the {name} API."
                ),
                Code::ResourceLocked => "The api is currently locked or being edited by another \
                                         user. Please try again later."
                    .to_owned(),
                _ => format!("An unexpected error occurred while {op} api."),
            };
            if !matches!(code, Code::NotFound | Code::AccessDenied) && !message.contains(m.as_str())
            {
                message.push_str(" Error details: ");
                message.push_str(m);
            }
            message
        }
    };
    let mut out = format!("Error: {message}");
    let vendor_text = match &t.original {
        Original::Body(v) => Some(js::stringify(v)),
        Original::Text(s) => Some(s.clone()),
        Original::TransportSelf => Some(m.clone()),
        Original::Absent => None,
    };
    if let Some(vt) = vendor_text {
        if !out.contains(&vt) {
            out.push_str(&format!("\n{name} API Error: {vt}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse;

    fn parts(json: &str) -> Result<Vec<String>, ()> {
        jira_parts(&parse(json).unwrap())
    }

    #[test]
    fn jira_parts_follow_javascript_string_conversion() {
        assert_eq!(
            parts(r#"{"errorMessages":[{"a":1},null,2.50],"errors":{"f":[1,2],"g":null}}"#),
            Ok(vec![
                "[object Object]; ; 2.5".to_owned(),
                "f: 1,2; g: null".to_owned()
            ])
        );
        // Reading `title` of a null first error throws in the reference.
        assert_eq!(parts(r#"{"errors":[null]}"#), Err(()));
        assert_eq!(parts(r#"{"message":0,"errorMessages":[]}"#), Ok(vec![]));
    }

    #[test]
    fn confluence_takes_the_first_matching_shape() {
        let v = |j: &str| confluence_parts(&parse(j).unwrap());
        assert_eq!(
            v(r#"{"title":"T: d","detail":"d","message":"m"}"#),
            Ok(vec!["T: d".into()])
        );
        assert_eq!(
            v(r#"{"message":"m","reason":"r"}"#),
            Ok(vec!["m: r".into()])
        );
        assert_eq!(
            v(r#"{"errors":[{"message":"a"},{"title":"b"},{"message":"c"},{"title":"d"}]}"#),
            Ok(vec!["a; b; c; and 1 more errors".into()])
        );
        assert_eq!(v(r#"{"errorMessages":["x","y"]}"#), Ok(vec!["x; y".into()]));
        assert_eq!(v(r#"{"other":1}"#), Ok(vec![]));
    }
}
