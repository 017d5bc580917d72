//! [`UpstreamError`]: why a vendor call produced no usable body, and the text a model reads.
//!
//! The Atlassian texts reproduce the reference servers byte for byte (see `error/atlassian.rs`
//! and docs/parity.md); GitHub and CircleCI texts follow the same shape (`Error: <summary>`,
//! then the vendor's own body) and add when to retry after a rate limit.

mod atlassian;

pub use atlassian::BITBUCKET_MAX_RESPONSE;

use super::vendor::Vendor;
use super::{js, Method};
use crate::ports::{header, Headers};
use crate::value::Value;
use std::fmt;

/// What went wrong, for callers that branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The vendor's settings are incomplete.
    NotConfigured,
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
}

/// A failed vendor call. `Display` gives the full text for the model (no credential is ever
/// part of it: none is stored here).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamError {
    vendor: Vendor,
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
            method,
            path: path.to_owned(),
            now_ms,
            kind,
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The vendor called.
    pub fn vendor(&self) -> Vendor {
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

    /// The text shown to the model.
    pub fn text(&self) -> String {
        if let ErrorKind::NotConfigured = self.kind {
            return format!(
                "Error: {} is not configured on this server: set {}.",
                self.vendor.name(),
                self.vendor.required_settings()
            );
        }
        if self.vendor.is_atlassian() {
            atlassian::text(self)
        } else {
            self.ci_text()
        }
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
                let hint = if rate_limited || *status == 503 {
                    self.retry_hint(*status, headers)
                } else {
                    String::new()
                };
                (format!("{summary}{hint}"), vendor_body(body))
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

    /// ` Retry after N seconds (at <UTC time>).`, or advice to wait when the vendor gave no time.
    fn retry_hint(&self, status: u16, headers: &Headers) -> String {
        match retry_after_ms(status, headers, self.now_ms) {
            Some(ms) => {
                let seconds = ms.div_ceil(1000);
                format!(
                    " Retry after {seconds} seconds (at {}).",
                    iso_utc(self.now_ms.saturating_add(seconds * 1000))
                )
            }
            None if status == 429 || status == 403 => {
                " The API gave no retry time: wait a minute before retrying.".to_owned()
            }
            None => String::new(),
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
            ErrorKind::NotConfigured | ErrorKind::Status { .. } => String::new(),
        }
    }
}

impl fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl std::error::Error for UpstreamError {}

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
pub fn retry_after_ms(status: u16, headers: &Headers, now_ms: u64) -> Option<u64> {
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
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        let mut out = String::new();
        crate::render::number::write_f64(ms as f64 / 1000.0, "NaN", &mut out);
        out
    }
}

/// `Date.prototype.toISOString()` of a Unix time in milliseconds.
pub fn iso_utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard Hinnant's
/// algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`) as Unix milliseconds.
fn parse_http_date(text: &str) -> Option<u64> {
    let mut parts = text.split_whitespace();
    let _weekday = parts.next()?;
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, mi, s) = (hms.next()??, hms.next()??, hms.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, day)).ok()?;
    Some((days * 86_400 + h * 3600 + mi * 60 + s) * 1000)
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
    fn dates() {
        assert_eq!(iso_utc(NOW), "2026-01-01T00:00:00.000Z");
        assert_eq!(iso_utc(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(
            parse_http_date("Thu, 01 Jan 2026 00:05:00 GMT"),
            Some(NOW + 300_000)
        );
        assert_eq!(parse_http_date("soon"), None);
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
            "Error: Rate limit exceeded. CircleCI API: 429 Too Many Requests Retry after 17 \
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
    }
}
