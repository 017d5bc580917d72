//! [`UpstreamError`]: why a vendor call produced no usable body, and the text a model reads.
//!
//! The Atlassian texts reproduce the reference servers byte for byte (see `error/atlassian.rs`
//! and docs/parity.md); GitHub and CircleCI texts follow the same shape (`Error: <summary>`,
//! then the vendor's own body) and add when to retry after a rate limit.

mod atlassian;

use super::target::Target;
use super::vendor::{Flavor, Vendor};
use super::{js, Method};
use crate::memory::Busy;
use crate::ports::{header, Headers};
use crate::time::{iso8601_utc_ms, parse_http_date};
use crate::value::Value;
use std::fmt;

/// Why enterprise policy keeps a request a call learned while it ran (a member of a family its
/// plan declared) from going out. Its `Display` is the reason the tool's error gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemberRefusal {
    /// The policy denies the request: its reason.
    Denied(String),
    /// The request needs an approval and the call did not run on one: the policy's reason.
    NeedsApproval(String),
    /// The policy decides the request as another identity than the one the call acts as.
    OtherIdentity {
        /// The identity the policy decides the request as.
        decided: String,
        /// The identity the call acts as.
        acting: String,
    },
}

impl fmt::Display for MemberRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemberRefusal::Denied(reason) => f.write_str(reason),
            MemberRefusal::NeedsApproval(reason) => write!(
                f,
                "{reason} The approval this call would need covers a request it learned only \
                 while running; call again once an approver has approved it."
            ),
            MemberRefusal::OtherIdentity { decided, acting } => write!(
                f,
                "The enterprise policy decides this request as identity {decided:?}, and the \
                 call acts as {acting:?}."
            ),
        }
    }
}

impl std::error::Error for MemberRefusal {}

/// A log document fetched by a call whose plan declared none; nothing was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UndeclaredDocument;

impl fmt::Display for UndeclaredDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "Error: the tool asked for a log document its plan did not declare; nothing was \
             sent.",
        )
    }
}

impl std::error::Error for UndeclaredDocument {}

/// What went wrong, for callers that branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The vendor's settings are incomplete.
    NotConfigured,
    /// The tool asked for a request its plan did not declare; nothing was sent.
    Undeclared,
    /// Enterprise policy refused a request learned while the call ran.
    Denied(MemberRefusal),
    /// The vendor answered with a non-2xx, non-3xx status.
    Status {
        /// HTTP status.
        status: u16,
        /// The reason phrase as received (may be empty).
        status_text: String,
        /// Response headers.
        headers: Headers,
        /// The body, decoded as `response.text()` does.
        body: String,
    },
    /// The vendor answered with a redirect, which is never followed.
    Redirect {
        /// HTTP status.
        status: u16,
        /// The host of the `Location` target, when there was one (never its path or query).
        location_host: Option<String>,
    },
    /// A declared `Content-Length` over the Bitbucket reference's 10 MiB limit.
    DeclaredTooLarge {
        /// The declared size in bytes.
        size: u64,
    },
    /// The body was longer than `UPSTREAM_MAX_BYTES`.
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// No complete answer within `UPSTREAM_TIMEOUT_MS`.
    Timeout {
        /// The timeout in milliseconds.
        after_ms: u64,
    },
    /// The connection failed (DNS, refused, reset); details go to the log only.
    Network,
    /// The isolate's memory budget had no room for the body while the call waited; retryable.
    Busy {
        /// The body size that did not fit, in bytes.
        body_bytes: usize,
    },
    /// The body's parsed value needed more memory than the call could take: what the body
    /// reserved, then what the isolate's budget had free. Nothing of the value is used.
    TooManyValues {
        /// The body's size in bytes.
        body_bytes: usize,
        /// Bytes of memory the parse could take, and needed more than.
        held: usize,
    },
    /// A GitHub or CircleCI body declared JSON that does not parse (the Atlassian references
    /// pass such a body on as text, so Atlassian tools never report this).
    MalformedJson,
}

/// A failed vendor call. `Display` gives the full text for the model (no credential is ever
/// part of it: none is stored here).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamError {
    vendor: Vendor,
    /// The API the vendor speaks on this deployment (its settings and texts differ).
    flavor: Flavor,
    method: Method,
    path: String,
    now_ms: u64,
    kind: ErrorKind,
}

impl UpstreamError {
    /// An error of `kind` for a `method` call to `path` on `vendor`, observed at `now_ms`.
    pub fn new(vendor: Vendor, method: Method, path: &str, now_ms: u64, kind: ErrorKind) -> Self {
        UpstreamError {
            vendor,
            flavor: Flavor::Cloud,
            method,
            path: path.to_owned(),
            now_ms,
            kind,
        }
    }

    /// The memory budget had no room, at `now_ms`, for a body of `target` read back from a store
    /// (a cached or kept answer).
    pub(crate) fn busy(target: &Target, now_ms: u64, busy: Busy) -> Self {
        let kind = ErrorKind::Busy {
            body_bytes: busy.body_bytes,
        };
        UpstreamError::new(
            target.vendor,
            target.method,
            target.path.path(),
            now_ms,
            kind,
        )
    }

    /// This error, from a vendor speaking `flavor`.
    pub(crate) fn on(self, flavor: Flavor) -> Self {
        UpstreamError { flavor, ..self }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The vendor called.
    pub(crate) fn vendor(&self) -> Vendor {
        self.vendor
    }

    /// The upstream HTTP status, when there was an answer.
    pub fn status(&self) -> Option<u16> {
        match &self.kind {
            ErrorKind::Status { status, .. } | ErrorKind::Redirect { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Milliseconds to wait before retrying, when the vendor said (Retry-After, or GitHub's
    /// X-RateLimit-Reset with no requests remaining).
    pub fn retry_after_ms(&self) -> Option<u64> {
        let ErrorKind::Status {
            status, headers, ..
        } = &self.kind
        else {
            return None;
        };
        retry_after_ms(*status, headers, self.now_ms)
    }

    /// The vendor's own reason for a refused request (GitHub's and CircleCI's `message` and
    /// `errors[]`, else the status line), when it answered with a status.
    pub(crate) fn reason(&self) -> Option<String> {
        match &self.kind {
            ErrorKind::Status {
                status,
                status_text,
                body,
                ..
            } => Some(ci_detail(*status, status_text, body)),
            _ => None,
        }
    }

    /// The text shown to the model.
    pub fn text(&self) -> String {
        if let ErrorKind::NotConfigured = self.kind {
            return format!(
                "Error: {} is not configured on this server: set {}.",
                self.vendor.name(),
                self.vendor.required_settings(self.flavor)
            );
        }
        if let ErrorKind::Busy { body_bytes } = self.kind {
            return busy_text(self.vendor, body_bytes);
        }
        if let ErrorKind::TooManyValues { body_bytes, held } = self.kind {
            return too_many_values_text(self.vendor, body_bytes, held);
        }
        if let ErrorKind::Denied(reason) = &self.kind {
            return format!(
                "Error: {reason} ({} {} on {} was not sent.)",
                self.method.as_str(),
                self.path,
                self.vendor.name()
            );
        }
        if let ErrorKind::Undeclared = self.kind {
            return format!(
                "Error: the tool asked for {} {} on {}, a request its plan did not declare; \
                 nothing was sent.",
                self.method.as_str(),
                self.path,
                self.vendor.name()
            );
        }
        let text = if self.vendor.is_atlassian() {
            atlassian::text(self)
        } else {
            self.ci_text()
        };
        match self.expired_token_note() {
            Some(note) => format!("{text}\n{note}"),
            None => text,
        }
    }

    /// On a self-hosted server, what a 401 most often means: the personal access token expired
    /// or was revoked. Names the setting, never its value.
    fn expired_token_note(&self) -> Option<String> {
        let setting = match (self.flavor, self.vendor) {
            (Flavor::DataCenter, Vendor::Jira) => "JIRA_PERSONAL_TOKEN",
            (Flavor::DataCenter, Vendor::Confluence) => "CONFLUENCE_PERSONAL_TOKEN",
            (Flavor::DataCenter, Vendor::Bitbucket) => "BITBUCKET_PERSONAL_TOKEN",
            _ => return None,
        };
        // Bitbucket's are HTTP access tokens, made per user, project or repository.
        let (kind, place) = match self.vendor {
            Vendor::Bitbucket => (
                "HTTP access",
                "Manage account or the project's or repository's settings, HTTP access tokens",
            ),
            _ => ("personal access", "profile, Personal Access Tokens"),
        };
        (self.status() == Some(401)).then(|| {
            format!(
                "{name} Data Center did not accept the server's credential: the {kind} token in \
                 {setting} may have expired or been revoked. An administrator of this MCP server \
                 can create a new one in {name} ({place}) and set the secret {setting} again.",
                name = self.vendor.name()
            )
        })
    }

    /// GitHub and CircleCI: `Error: <summary>[ retry hint]` and the vendor body on its own line.
    fn ci_text(&self) -> String {
        let name = self.vendor.name();
        let (summary, body) = match &self.kind {
            ErrorKind::Status {
                status,
                status_text,
                headers,
                body,
            } => {
                let detail = ci_detail(*status, status_text, body);
                let rate_limited = *status == 429 || self.github_rate_limited(*status, headers);
                let summary = match status {
                    _ if rate_limited => format!("Rate limit exceeded. {name} API: {detail}"),
                    401 => format!("Authentication failed. {name} API: {detail}"),
                    403 => format!("Insufficient permissions. {name} API: {detail}"),
                    404 => format!("Resource not found. {name} API: {detail}"),
                    s if *s >= 500 => format!("{name} server error. Detail: {detail}"),
                    _ => format!("{name} API request failed. Detail: {detail}"),
                };
                let summary = match self.retry_hint() {
                    // The vendor's message may lack a final stop; the hint is its own sentence.
                    Some(hint) if summary.ends_with('.') => format!("{summary} {hint}"),
                    Some(hint) => format!("{summary}. {hint}"),
                    None => summary,
                };
                (summary, vendor_body(body))
            }
            kind => (self.transport_summary(kind), None),
        };
        match body {
            Some(body) => format!("Error: {summary}\n{name} API Error: {body}"),
            None => format!("Error: {summary}"),
        }
    }

    fn github_rate_limited(&self, status: u16, headers: &Headers) -> bool {
        self.vendor == Vendor::GitHub
            && status == 403
            && (header(headers, "x-ratelimit-remaining").map(str::trim) == Some("0")
                || header(headers, "retry-after").is_some())
    }

    /// When to retry, as a sentence for the model, for a rate limit (429, GitHub's rate-limit
    /// 403) or a 503: `Retry after N seconds (at <UTC time>).`, or advice to wait when the vendor
    /// gave no time. `None` for every other failure.
    pub(crate) fn retry_hint(&self) -> Option<String> {
        let ErrorKind::Status {
            status, headers, ..
        } = &self.kind
        else {
            return None;
        };
        let rate_limited = *status == 429 || self.github_rate_limited(*status, headers);
        match retry_after_ms(*status, headers, self.now_ms) {
            Some(ms) if rate_limited || *status == 503 => {
                let seconds = ms.div_ceil(1000);
                Some(format!(
                    "Retry after {seconds} seconds (at {}).",
                    iso8601_utc_ms(self.now_ms.saturating_add(seconds * 1000))
                ))
            }
            None if rate_limited => {
                Some("The API gave no retry time: wait a minute before retrying.".to_owned())
            }
            _ => None,
        }
    }

    /// The summary of a failure that has no vendor body, shared by every vendor's wording.
    fn transport_summary(&self, kind: &ErrorKind) -> String {
        let name = self.vendor.name();
        match kind {
            ErrorKind::Timeout { after_ms } => format!(
                "Request timeout: {name} API did not respond within {} seconds",
                js_seconds(*after_ms)
            ),
            ErrorKind::Network => format!("Network error connecting to {name} API: fetch failed"),
            ErrorKind::MalformedJson => format!(
                "Invalid response from {name} API: the body is declared as JSON but is not valid \
                 JSON (cut off or corrupted on the way); try the call again"
            ),
            ErrorKind::TooLarge { limit } => format!(
                "Response size exceeds the maximum of {} bytes (UPSTREAM_MAX_BYTES); request \
                 less data, e.g. smaller pages or fewer fields",
                limit
            ),
            ErrorKind::DeclaredTooLarge { size } => format!(
                "Response size ({}MB) exceeds maximum limit of 10MB",
                (*size as f64 / (1024.0 * 1024.0)).round()
            ),
            ErrorKind::Redirect {
                status,
                location_host,
            } => {
                let to = location_host
                    .as_deref()
                    .map(|h| format!(" to {h}"))
                    .unwrap_or_default();
                format!(
                    "{name} API answered {status} (a redirect{to}); redirects are not followed. \
                     Check the path, or point the base URL setting at the API's final address"
                )
            }
            ErrorKind::NotConfigured
            | ErrorKind::Undeclared
            | ErrorKind::Denied(_)
            | ErrorKind::Status { .. }
            | ErrorKind::Busy { .. }
            | ErrorKind::TooManyValues { .. } => String::new(),
        }
    }

    /// The stable code a client may branch on (`_meta.code`), for the failures that have one.
    pub(crate) fn code(&self) -> Option<&'static str> {
        match self.kind {
            ErrorKind::TooManyValues { .. } => Some(CODE_TOO_MANY_VALUES),
            _ => None,
        }
    }
}

/// `_meta.code` of a call whose upstream answer held more values than the memory this server
/// can give one call: narrowing the request helps, retrying it as it is may not.
pub(crate) const CODE_TOO_MANY_VALUES: &str = "too_many_values";

/// The text of a call whose upstream answer held too many values for its memory: the same for
/// every vendor (no reference server has this failure), saying how to ask for less.
pub(crate) fn too_many_values_text(vendor: Vendor, body_bytes: usize, held: usize) -> String {
    format!(
        "Error: the {} API response ({body_bytes} bytes) holds too many values for the memory \
         this server can give one call right now (it needed more than {held} bytes once \
         parsed). Ask for less: fewer results per page (perPage, limit or maxResults), fewer \
         fields, or a narrower query.",
        vendor.name()
    )
}

impl fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl std::error::Error for UpstreamError {}

/// The text of a call refused for want of memory: the same for every vendor (no reference
/// server has this failure), saying that it is temporary and how to ask for less.
pub(crate) fn busy_text(vendor: Vendor, body_bytes: usize) -> String {
    format!(
        "Error: the server is busy with other large results and has no memory free for this {} \
         API response ({body_bytes} bytes) right now. Retry in a few seconds, or narrow the \
         request: a projection (jq) or fewer fields, a smaller page (perPage), or a narrower \
         query.",
        vendor.name()
    )
}

/// The vendor's message for GitHub/CircleCI bodies (`message`, plus GitHub's `errors[]`), else
/// the status line.
fn ci_detail(status: u16, status_text: &str, body: &str) -> String {
    let line = format!("{status} {status_text}");
    let Some(parsed) = js::json_parse(body) else {
        return line;
    };
    let mut parts = Vec::new();
    if let Some(message) = js::truthy_field(&parsed, "message") {
        parts.push(js::to_string(message));
    }
    if let Some(Value::Array(errors)) = parsed.get("errors") {
        for e in errors.iter().take(5) {
            let text = js::truthy_field(e, "message")
                .or_else(|| js::truthy_field(e, "code"))
                .map(js::to_string);
            let field = js::truthy_field(e, "field").map(js::to_string);
            match (field, text) {
                (Some(f), Some(t)) => parts.push(format!("{f}: {t}")),
                (None, Some(t)) => parts.push(t),
                _ => {}
            }
        }
    }
    if parts.is_empty() {
        line
    } else {
        parts.join(" | ")
    }
}

/// The body as shown after the summary: compact JSON when it parses, else the text; `None`
/// when blank.
fn vendor_body(body: &str) -> Option<String> {
    if js::is_blank(body) {
        return None;
    }
    Some(match js::json_parse(body) {
        Some(v @ (Value::Object(_) | Value::Array(_))) => js::stringify(&v),
        _ => body.to_owned(),
    })
}

/// `Retry-After` (seconds or an HTTP date) on any status, else GitHub's reset time when no
/// requests remain; milliseconds from `now_ms`.
pub(crate) fn retry_after_ms(status: u16, headers: &Headers, now_ms: u64) -> Option<u64> {
    let _ = status;
    if let Some(value) = header(headers, "retry-after") {
        let value = value.trim();
        if let Ok(seconds) = value.parse::<u64>() {
            return Some(seconds.saturating_mul(1000));
        }
        if let Some(at) = parse_http_date(value) {
            return Some(at.saturating_sub(now_ms));
        }
    }
    if header(headers, "x-ratelimit-remaining").map(str::trim) == Some("0") {
        let reset = header(headers, "x-ratelimit-reset")?
            .trim()
            .parse::<u64>()
            .ok()?;
        return Some(reset.saturating_mul(1000).saturating_sub(now_ms));
    }
    None
}

/// Seconds as JavaScript prints `ms / 1000` (`30`, `1.5`).
fn js_seconds(ms: u64) -> String {
    crate::js::number::to_string(ms as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    fn status(vendor: Vendor, code: u16, headers: &[(&str, &str)], body: &str) -> UpstreamError {
        UpstreamError::new(
            vendor,
            Method::Get,
            "/repos/o/r/actions/runs",
            NOW,
            ErrorKind::Status {
                status: code,
                status_text: crate::upstream::reason_phrase(code).to_owned(),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                body: body.to_owned(),
            },
        )
    }

    #[test]
    fn github_rate_limit_403_says_when() {
        let reset = (NOW / 1000 + 300).to_string();
        let e = status(
            Vendor::GitHub,
            403,
            &[
                ("X-RateLimit-Remaining", "0"),
                ("X-RateLimit-Reset", &reset),
            ],
            r#"{"message":"API rate limit exceeded for installation ID 1.","documentation_url":"https://docs.github.com/rest"}"#,
        );
        assert_eq!(e.retry_after_ms(), Some(300_000));
        assert_eq!(
            e.text(),
            "Error: Rate limit exceeded. GitHub API: API rate limit exceeded for installation ID 1. \
             Retry after 300 seconds (at 2026-01-01T00:05:00.000Z).\nGitHub API Error: \
             {\"message\":\"API rate limit exceeded for installation ID 1.\",\"documentation_url\":\"https://docs.github.com/rest\"}"
        );
        // A 403 with requests left is a permission problem, not a rate limit.
        let e = status(Vendor::GitHub, 403, &[("X-RateLimit-Remaining", "10")], "");
        assert_eq!(
            e.text(),
            "Error: Insufficient permissions. GitHub API: 403 Forbidden"
        );
    }

    #[test]
    fn retry_after_on_429() {
        let e = status(Vendor::CircleCi, 429, &[("Retry-After", "17")], "");
        assert_eq!(
            e.text(),
            "Error: Rate limit exceeded. CircleCI API: 429 Too Many Requests. Retry after 17 \
             seconds (at 2026-01-01T00:00:17.000Z)."
        );
        let e = status(
            Vendor::CircleCi,
            429,
            &[("Retry-After", "Thu, 01 Jan 2026 00:01:00 GMT")],
            "{\"message\":\"slow down\"}",
        );
        assert_eq!(e.retry_after_ms(), Some(60_000));
        let e = status(Vendor::GitHub, 429, &[], "");
        assert!(e
            .text()
            .ends_with("The API gave no retry time: wait a minute before retrying."));
    }

    #[test]
    fn github_validation_errors_are_listed() {
        let e = status(
            Vendor::GitHub,
            422,
            &[],
            r#"{"message":"Validation Failed","errors":[{"resource":"Run","field":"status","code":"invalid"}]}"#,
        );
        assert!(
            e.text().starts_with(
                "Error: GitHub API request failed. Detail: Validation Failed | status: invalid\n"
            ),
            "{}",
            e.text()
        );
    }

    #[test]
    fn transport_failures() {
        let e = |kind| UpstreamError::new(Vendor::GitHub, Method::Get, "/x", NOW, kind);
        assert_eq!(
            e(ErrorKind::Timeout { after_ms: 30_000 }).text(),
            "Error: Request timeout: GitHub API did not respond within 30 seconds"
        );
        assert_eq!(
            e(ErrorKind::Network).text(),
            "Error: Network error connecting to GitHub API: fetch failed"
        );
        assert!(e(ErrorKind::TooLarge { limit: 1024 })
            .text()
            .contains("1024 bytes"));
        let redirect = e(ErrorKind::Redirect {
            status: 301,
            location_host: Some("elsewhere.example".into()),
        });
        assert!(redirect
            .text()
            .contains("301 (a redirect to elsewhere.example)"));
        assert_eq!(
            e(ErrorKind::NotConfigured).text(),
            "Error: GitHub is not configured on this server: set the secret GITHUB_TOKEN."
        );
        let dc = UpstreamError::new(
            Vendor::Confluence,
            Method::Get,
            "/x",
            NOW,
            ErrorKind::NotConfigured,
        )
        .on(Flavor::DataCenter);
        assert_eq!(
            dc.text(),
            "Error: Confluence is not configured on this server: set CONFLUENCE_BASE_URL and \
             the secret CONFLUENCE_PERSONAL_TOKEN."
        );
    }

    #[test]
    fn a_refused_personal_access_token_names_its_setting() {
        let body = r#"{"message":"Client must be authenticated to access this resource."}"#;
        let cloud = status(Vendor::Jira, 401, &[], body);
        let dc = status(Vendor::Jira, 401, &[], body).on(Flavor::DataCenter);
        let text = dc.text();
        // The reference's text first, unchanged; then what to do about it.
        assert!(text.starts_with(&format!("{}\n", cloud.text())), "{text}");
        assert!(text.contains("personal access token in JIRA_PERSONAL_TOKEN may have expired"));
        assert!(!cloud.text().contains("JIRA_PERSONAL_TOKEN"));
        let other = status(Vendor::Jira, 403, &[], body).on(Flavor::DataCenter);
        assert!(!other.text().contains("JIRA_PERSONAL_TOKEN"));
        let bb = status(Vendor::Bitbucket, 401, &[], body).on(Flavor::DataCenter);
        assert!(bb
            .text()
            .contains("HTTP access token in BITBUCKET_PERSONAL_TOKEN may have expired"));
        assert!(!status(Vendor::Bitbucket, 401, &[], body)
            .text()
            .contains("BITBUCKET_PERSONAL_TOKEN"));
    }
}
