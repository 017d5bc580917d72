//! The Bitbucket 3.1.0 reference's error path: its body shapes, its classification (which
//! inspects the original error before the shared rules) and its `HTTP Status`/`Raw API Response`
//! layout.

use super::{generic_classify, parse_error_body, Code, Original, Transport, NETWORK_WORDS};
use crate::upstream::error::UpstreamError;
use crate::upstream::js;
use crate::value::{Map, Value};

/// Stage a for Bitbucket: the first matching body shape gives the message and the original.
pub(super) fn transport(status: u16, status_text: &str, body: &str) -> Transport {
    let mut m = format!("{status} {status_text}");
    let mut original = None;
    if let Some(Ok(parsed)) = parse_error_body(body) {
        let error = js::truthy_field(&parsed, "error");
        let error_message = error.and_then(|e| js::truthy_field(e, "message"));
        if parsed.get("type").and_then(Value::as_str) == Some("error") && error_message.is_some() {
            if let (Some(e), Some(msg)) = (error, error_message) {
                m = js::to_string(msg);
                if let Some(detail) = js::truthy_field(e, "detail") {
                    m.push_str(&format!(" Detail: {}", js::to_string(detail)));
                }
                original = Some(e.clone());
            }
        } else if let (Some(e), Some(msg)) = (error, error_message) {
            m = js::to_string(msg);
            original = Some(e.clone());
        } else if let Some(first) = non_empty_errors(&parsed) {
            // A null first item throws, which the reference swallows: status line, raw text.
            if let Some(title) = js::truthy_field(first, "title") {
                m = js::to_string(title);
                original = Some(first.clone());
            }
        } else if let Some(msg) = js::truthy_field(&parsed, "message") {
            m = js::to_string(msg);
            original = Some(parsed.clone());
        }
    }
    let original = match original {
        Some(v) if js::truthy(&v) => Original::Body(v),
        _ if body.is_empty() => Original::TransportSelf,
        _ => Original::Text(body.to_owned()),
    };
    let message = match status {
        401 => format!("Bitbucket API: Authentication failed - {m}"),
        403 => format!("Bitbucket API: Permission denied - {m}"),
        404 => format!("Bitbucket API: Resource not found - {m}"),
        429 => format!("Bitbucket API: Rate limit exceeded - {m}"),
        s if s >= 500 => format!("Bitbucket API: Service error - {m}"),
        _ => format!("Bitbucket API Error: {m}"),
    };
    Transport {
        message,
        status_code: Some(status),
        auth_invalid: status == 401,
        original,
    }
}

/// The first item of a non-empty `errors` array.
fn non_empty_errors(v: &Value) -> Option<&Value> {
    match v.get("errors") {
        Some(Value::Array(items)) => items.first(),
        _ => None,
    }
}

/// Stage b for Bitbucket: its own rules on the original error, then the shared ones.
fn classify(t: &Transport) -> Code {
    let m = t.message.as_str();
    let sc = t.status_code;
    let has = |s: &str| m.contains(s);
    if has("Invalid pull request ID") || has("Pull request ID must be a positive integer") {
        return Code::Validation;
    }
    if NETWORK_WORDS.iter().any(|w| has(w)) {
        return Code::Network;
    }
    if has("rate limit") || has("too many requests") || sc == Some(429) {
        return Code::RateLimit;
    }
    if let Original::Body(oe @ (Value::Object(_) | Value::Array(_))) = &t.original {
        if let Some(code) = original_rules(oe) {
            return code;
        }
    }
    generic_classify(m, sc)
}

fn original_rules(oe: &Value) -> Option<Code> {
    if let Some(bb @ (Value::Object(_) | Value::Array(_))) = js::truthy_field(oe, "error") {
        let msg = js::truthy_field(bb, "message")
            .map(js::to_string)
            .unwrap_or_default()
            .to_lowercase();
        let has = |s: &str| msg.contains(s);
        if has("repository not found")
            || has("does not exist")
            || has("no such resource")
            || has("not found")
        {
            return Some(Code::NotFound);
        }
        if [
            "access",
            "permission",
            "credentials",
            "unauthorized",
            "forbidden",
            "authentication",
        ]
        .iter()
        .any(|w| has(w))
        {
            return Some(Code::AccessDenied);
        }
        if has("invalid")
            || (has("parameter") && has("error"))
            || has("input")
            || has("validation")
            || has("required field")
            || has("bad request")
        {
            return Some(Code::Validation);
        }
        if has("rate limit") || has("too many requests") || has("throttled") {
            return Some(Code::RateLimit);
        }
    }
    let status_rule = |status: Option<&Value>| match status {
        // `=== 404` on a JavaScript number: 404.0 matches too, so compare doubles.
        Some(Value::Number(n)) => {
            let s = n.as_f64();
            if s == 404.0 {
                Some(Code::NotFound)
            } else if s == 403.0 || s == 401.0 {
                Some(Code::AccessDenied)
            } else if s == 400.0 {
                Some(Code::Validation)
            } else if s == 429.0 {
                Some(Code::RateLimit)
            } else {
                None
            }
        }
        _ => None,
    };
    if oe.get("type").and_then(Value::as_str) == Some("error") {
        if let Some(code) = status_rule(oe.get("status")) {
            return Some(code);
        }
    }
    if let Some(Value::Array(errors)) = oe.get("errors") {
        if let Some(first) = errors.first() {
            if let Some(code) = status_rule(first.get("status")) {
                return Some(code);
            }
            let text =
                js::truthy_field(first, "title").or_else(|| js::truthy_field(first, "message"));
            if let Some(text) = text {
                let text = js::to_string(text).to_lowercase();
                let has = |s: &str| text.contains(s);
                if has("not found") {
                    return Some(Code::NotFound);
                }
                if has("access") || has("permission") {
                    return Some(Code::AccessDenied);
                }
                if has("invalid") || has("required") {
                    return Some(Code::Validation);
                }
                if has("rate limit") || has("too many requests") {
                    return Some(Code::RateLimit);
                }
            }
        }
    }
    None
}

/// Stages b and c for Bitbucket.
pub(super) fn text(error: &UpstreamError, t: Transport) -> String {
    let op = format!("{} request", error.method.as_str());
    let code = classify(&t);
    let m = &t.message;
    let message = if code == Code::Validation {
        m.clone()
    } else {
        let mut message = match code {
            Code::NotFound => {
                "API not found. Verify the ID is correct and that you have access to this api."
                    .to_owned()
            }
            Code::AccessDenied => "Access denied for api. Verify your credentials and \
                permissions. Ensure your Bitbucket API token/app password has sufficient \
                privileges and hasn't expired. If using a workspace/repository name, check that \
                it's spelled correctly."
                .to_owned(),
            Code::InvalidCursor => "Invalid pagination cursor. Use the exact cursor string \
                returned from previous results. Bitbucket pagination typically uses page \
                numbers. Check that the page number is valid and within range."
                .to_owned(),
            Code::Network => format!(
                "Network error while {op} the Bitbucket API. Please check your internet \
                 connection and try again."
            ),
            Code::RateLimit => "Bitbucket API rate limit exceeded. Please wait a moment and try \
                again, or reduce the frequency of requests. Bitbucket's API has rate limits per \
                IP address and additional limits for authenticated users."
                .to_owned(),
            _ => format!("An unexpected error occurred while {op} api."),
        };
        if !matches!(code, Code::NotFound | Code::AccessDenied) {
            message.push_str(" Error details: ");
            message.push_str(m);
        }
        message
    };
    let mut out = format!("Error: {message}");
    if let Some(sc) = t.status_code {
        out.push_str(&format!("\nHTTP Status: {sc}"));
    }
    let raw = match &t.original {
        Original::Body(v) => Some(js::stringify_pretty(v)),
        Original::Text(s) if *s != message => Some(s.clone()),
        Original::Text(_) | Original::Absent => None,
        Original::TransportSelf => Some(js::stringify_pretty(&mcp_error_object(&t))),
    };
    if let Some(raw) = raw {
        out.push_str("\n\nRaw API Response:\n");
        out.push_str(&raw);
    }
    out
}

/// The enumerable fields of the reference's `McpError`, as `JSON.stringify` shows them.
fn mcp_error_object(t: &Transport) -> Value {
    let sc = t.status_code.unwrap_or_default();
    let (kind, error_type) = if t.auth_invalid {
        ("AUTH_INVALID", "AUTHENTICATION_REQUIRED")
    } else {
        let error_type = match sc {
            404 => "NOT_FOUND",
            429 => "RATE_LIMIT_EXCEEDED",
            _ => "API_ERROR",
        };
        ("API_ERROR", error_type)
    };
    let mut map = Map::new();
    map.insert("name".into(), "McpError".into());
    map.insert("type".into(), kind.into());
    map.insert("statusCode".into(), Value::from(i64::from(sc)));
    map.insert("originalError".into(), "".into());
    map.insert("errorType".into(), error_type.into());
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse;

    #[test]
    fn rules_on_the_original_error_the_goldens_never_reach() {
        for (original, want) in [
            (
                r#"{"error":{"message":"Repository Not Found"}}"#,
                Some(Code::NotFound),
            ),
            (
                r#"{"error":{"message":"Bad credentials"}}"#,
                Some(Code::AccessDenied),
            ),
            (
                r#"{"error":{"message":"Required field missing: INPUT"}}"#,
                Some(Code::Validation),
            ),
            (
                r#"{"error":{"message":"Throttled"}}"#,
                Some(Code::RateLimit),
            ),
            (r#"{"type":"error","status":404.0}"#, Some(Code::NotFound)),
            (r#"{"type":"error","status":"404"}"#, None),
            (r#"{"errors":[{"status":401}]}"#, Some(Code::AccessDenied)),
            (
                r#"{"errors":[{"message":"page is Invalid"}]}"#,
                Some(Code::Validation),
            ),
            (r#"{"message":"x"}"#, None),
        ] {
            assert_eq!(
                original_rules(&parse(original).unwrap()),
                want,
                "{original}"
            );
        }
    }

    #[test]
    fn body_shapes_pick_message_and_original() {
        let t = transport(400, "Bad Request", r#"{"errors":[],"message":"fallback"}"#);
        assert_eq!(t.message, "Bitbucket API Error: fallback");
        let t = transport(400, "Bad Request", r#"{"errors":[null],"message":"m"}"#);
        assert_eq!(t.message, "Bitbucket API Error: 400 Bad Request");
        assert!(matches!(t.original, Original::Text(_)));
        let t = transport(404, "", "");
        assert_eq!(t.message, "Bitbucket API: Resource not found - 404 ");
        assert!(matches!(t.original, Original::TransportSelf));
    }
}
