//! The `path` argument of the passthrough tools: validation, normalisation and query strings.
//!
//! A path is only ever appended to a configured base URL, so the request host is always the
//! configured one. Everything that could make a URL parser read a different host or climb out of
//! the API base is refused rather than repaired, so a model gets a clear error instead of a
//! surprising request. What is left is put in one canonical form ([`ApiPath::canonical_segment`]),
//! which is both what is sent and what policy globs match, so no spelling of a path reaches the
//! upstream as one thing and the policy as another.

use std::fmt;

pub use crate::js::form::encode as form_urlencode;

/// Why a `path` argument was refused. The message is safe to show to a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathError {
    /// The path is empty.
    Empty,
    /// The path is an absolute URL or starts with a scheme.
    AbsoluteUrl,
    /// The path starts with `//` (a network-path reference naming another host).
    NetworkPath,
    /// The path contains a character that is never allowed (named in the message).
    ForbiddenChar(char),
    /// A `..` segment would climb above the API base.
    EscapesBase,
    /// A percent escape is malformed.
    BadEscape,
    /// A segment carries a `;` path parameter, which Tomcat strips before routing.
    PathParameter,
    /// A segment holds an encoded `\` (`%5C`), or an encoded `/` (`%2F`) where the product's
    /// server may decode it before routing.
    EncodedSeparator,
    /// A character outside ASCII, which a Java server may fold onto an ASCII letter.
    NonAscii,
    /// The path is outside the product's API: the text says where its paths are.
    OutsideProduct(&'static str),
    /// A Jira, Confluence or Bitbucket Data Center REST path ending in a media-type suffix
    /// (`.json`, `.xml`, ...), which the server drops before routing.
    FormatSuffix,
    /// A REST API version (Jira's, Bitbucket Data Center's) written otherwise than the server's
    /// own spelling of it; holds the spellings of the versions the deployment serves.
    ApiVersion(&'static str),
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Invalid path: ")?;
        match self {
            PathError::Empty => f.write_str("the path is empty; give an API path such as /rest/api/3/myself"),
            PathError::AbsoluteUrl => f.write_str(
                "give a path on the configured API (e.g. /rest/api/3/issue/ABC-1), not a URL",
            ),
            PathError::NetworkPath => {
                f.write_str("a path must not start with '//'; give a path on the configured API")
            }
            PathError::ForbiddenChar(c) => match c {
                '@' => f.write_str(
                    "'@' is not allowed in a path; pass such values in queryParams, which are encoded",
                ),
                '\\' => f.write_str("backslashes are not allowed in a path"),
                '#' => f.write_str("fragments ('#') are not allowed in a path"),
                c => write!(f, "control character U+{:04X} is not allowed in a path", *c as u32),
            },
            PathError::EscapesBase => {
                f.write_str("'..' segments may not climb above the API base")
            }
            PathError::BadEscape => f.write_str("malformed percent escape"),
            PathError::PathParameter => f.write_str(
                "';' path parameters are not allowed (Jira and Confluence servers drop them \
                 before routing, so the path would name another resource); write a literal ';' \
                 as %3B",
            ),
            PathError::EncodedSeparator => f.write_str(
                "encoded backslashes (%5C) are not allowed in a path, nor encoded slashes (%2F) \
                 in this product's paths: some servers decode them before routing; give the \
                 segments separately",
            ),
            PathError::NonAscii => f.write_str(
                "characters outside ASCII are not allowed in this product's paths (its server \
                 may fold them onto ASCII letters); pass such values in queryParams",
            ),
            PathError::OutsideProduct(rule) => f.write_str(rule),
            PathError::FormatSuffix => f.write_str(
                "a .json, .xml, .txt, .htm, .html or .atom ending is not allowed on a Jira, \
                 Confluence or Bitbucket Data Center REST path (the server drops it before \
                 routing, so the path would name another resource); give the path without it: \
                 the API answers JSON",
            ),
            PathError::ApiVersion(versions) => write!(
                f,
                "write the API version as the server does: {versions} (other spellings of a \
                 version may reach another one)",
            ),
        }
    }
}

impl std::error::Error for PathError {}

/// A validated path: `/`-rooted, with `.` and `..` segments resolved, and an optional query string
/// that came with it (without the `?`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiPath {
    path: String,
    query: Option<String>,
}

/// True when `text`, in the canonical form, escapes a byte outside ASCII (`%80` to `%FF`).
fn escapes_non_ascii(text: &str) -> bool {
    text.as_bytes()
        .windows(2)
        .any(|w| w[0] == b'%' && matches!(w[1], b'8'..=b'9' | b'A'..=b'F'))
}

impl ApiPath {
    /// Validates and normalises a path argument.
    pub fn parse(raw: &str) -> Result<ApiPath, PathError> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(PathError::Empty);
        }
        for c in raw.chars() {
            if c.is_control() || c == '\\' || c == '@' || c == '#' {
                return Err(PathError::ForbiddenChar(c));
            }
        }
        let bytes = raw.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'%'
                && !bytes
                    .get(i + 1..i + 3)
                    .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
            {
                return Err(PathError::BadEscape);
            }
        }
        if has_scheme(raw) || raw.contains("://") {
            return Err(PathError::AbsoluteUrl);
        }
        if raw.starts_with("//") {
            return Err(PathError::NetworkPath);
        }
        let (path_part, query) = match raw.split_once('?') {
            Some((p, q)) => (p, (!q.is_empty()).then(|| encode_set(q, QUERY_KEEP))),
            None => (raw, None),
        };
        if path_part.contains(';') {
            return Err(PathError::PathParameter);
        }
        if path_part.to_ascii_uppercase().contains("%5C") {
            return Err(PathError::EncodedSeparator);
        }
        let mut segments: Vec<&str> = Vec::new();
        for segment in path_part.split('/') {
            match decoded_dots(segment) {
                Dots::One => {}
                Dots::Two => {
                    if segments.pop().is_none() {
                        return Err(PathError::EscapesBase);
                    }
                }
                Dots::None if segment.is_empty() => {}
                Dots::None if hides_dot_segment(segment) => return Err(PathError::EscapesBase),
                Dots::None => segments.push(segment),
            }
        }
        let mut path = String::with_capacity(path_part.len() + 1);
        for segment in &segments {
            path.push('/');
            path.push_str(&ApiPath::canonical_segment(segment));
        }
        let trailing =
            path_part.ends_with('/') || path_part.ends_with("/.") || path_part.ends_with("/..");
        if path.is_empty() || (trailing && !segments.is_empty()) {
            path.push('/');
        }
        Ok(ApiPath { path, query })
    }

    /// A path segment in canonical form: escapes of unreserved characters decoded (`%61dmin` is
    /// `admin` to every server, RFC 3986 section 6.2.2.2), other escapes kept with upper-case hex
    /// digits (`%2f` is `%2F`), and every other byte outside the segment's allowed characters
    /// percent-encoded, a `%` that starts no escape included. Policy globs put their segments
    /// through the same function, so both sides of a match have one spelling.
    pub(crate) fn canonical_segment(segment: &str) -> String {
        let bytes = segment.as_bytes();
        let mut out = String::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let escaped = (b == b'%')
                .then(|| bytes.get(i + 1..i + 3))
                .flatten()
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match escaped {
                Some(d) if is_unreserved(d) => out.push(char::from(d)),
                Some(d) => push_escape(&mut out, d),
                None if b.is_ascii_alphanumeric() || PATH_KEEP.contains(&b) => {
                    out.push(char::from(b));
                }
                None => push_escape(&mut out, b),
            }
            i += if escaped.is_some() { 3 } else { 1 };
        }
        out
    }

    /// Prefixes the path with `prefix` (e.g. `/2.0`) unless it already starts with that segment.
    pub fn with_prefix(mut self, prefix: &str) -> ApiPath {
        let already = self.path == prefix
            || (self.path.starts_with(prefix) && self.path[prefix.len()..].starts_with('/'));
        if !already {
            self.path = format!("{prefix}{}", self.path);
        }
        self
    }

    /// The canonical path: what is sent, and what policy globs match against.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The path's segments, without the leading `/` (a trailing `/` gives an empty last one).
    pub(crate) fn segments(&self) -> impl Iterator<Item = &str> {
        self.path.strip_prefix('/').unwrap_or(&self.path).split('/')
    }

    /// True when the path holds a byte outside ASCII (the canonical form escapes them, so as
    /// `%80` to `%FF`).
    pub(crate) fn has_non_ascii(&self) -> bool {
        escapes_non_ascii(&self.path)
    }

    /// [`ApiPath::has_non_ascii`] for the first `count` segments only.
    pub(crate) fn has_non_ascii_in(&self, count: usize) -> bool {
        self.segments().take(count).any(escapes_non_ascii)
    }

    /// The query string that came with the path, if any (without `?`).
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// The full URL: `base` (without trailing `/`) + path + the path's own query + `params`,
    /// form-encoded as `URLSearchParams` does and joined with `&` when a query exists already.
    pub fn url(&self, base: &str, params: &[(String, String)]) -> String {
        let mut url = String::with_capacity(base.len() + self.path.len() + 64);
        url.push_str(base.trim_end_matches('/'));
        url.push_str(&self.path);
        let mut sep = '?';
        if let Some(q) = &self.query {
            url.push('?');
            url.push_str(q);
            sep = '&';
        }
        if !params.is_empty() {
            url.push(sep);
            url.push_str(&form_urlencode(params));
        }
        url
    }
}

/// True when a segment holds an encoded `/` (`%2F`) and, decoded, contains a `.` or `..` part:
/// servers that decode encoded slashes before resolving (Tomcat and Jetty options, some proxies)
/// would climb out of the path that policy globs were matched against.
fn hides_dot_segment(segment: &str) -> bool {
    let upper = segment.to_ascii_uppercase();
    upper.contains("%2F")
        && upper
            .split("%2F")
            .any(|part| !matches!(decoded_dots(part), Dots::None))
}

enum Dots {
    None,
    One,
    Two,
}

/// Classifies a segment as `.`, `..` or neither, looking through percent escapes (`%2e`), since
/// servers decode those before resolving. Escapes must already be known to be well formed.
fn decoded_dots(segment: &str) -> Dots {
    if segment.len() > 6 {
        return Dots::None;
    }
    let mut dots = 0;
    let bytes = segment.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'.' {
            i += 1;
        } else if bytes[i] == b'%' {
            // Escapes were validated by the caller.
            if !bytes[i + 1..i + 3].eq_ignore_ascii_case(b"2e") {
                return Dots::None;
            }
            i += 3;
        } else {
            return Dots::None;
        }
        dots += 1;
    }
    match dots {
        1 => Dots::One,
        2 => Dots::Two,
        _ => Dots::None,
    }
}

fn has_scheme(raw: &str) -> bool {
    let Some((scheme, _)) = raw.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !scheme.contains('/')
}

/// Characters kept as they are in a path segment besides alphanumerics (RFC 3986 pchar; `%`
/// starts an escape and is handled apart).
const PATH_KEEP: &[u8] = b"-._~!$&'()*+,;=:";
/// Characters kept as they are in a query string.
const QUERY_KEEP: &[u8] = b"-._~!$&'()*+,;=:%/?";

/// Percent-encodes every byte that is not alphanumeric or in `keep` (existing escapes are kept).
fn encode_set(s: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || keep.contains(&b) {
            out.push(b as char);
        } else {
            push_escape(&mut out, b);
        }
    }
    out
}

/// RFC 3986 unreserved characters: an escape of one means the character itself.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn push_escape(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(HEX[(b >> 4) as usize] as char);
    out.push(HEX[(b & 15) as usize] as char);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str) -> String {
        let p = ApiPath::parse(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
        match p.query() {
            Some(q) => format!("{}?{q}", p.path()),
            None => p.path().to_owned(),
        }
    }

    #[test]
    fn normalises_ordinary_paths() {
        for (raw, want) in [
            ("/rest/api/3/myself", "/rest/api/3/myself"),
            ("rest/api/3/myself", "/rest/api/3/myself"),
            ("  /wiki/api/v2/pages  ", "/wiki/api/v2/pages"),
            ("/a//b/./c/../d", "/a/b/d"),
            ("/a/b/", "/a/b/"),
            ("/", "/"),
            ("/a/%2e%2E/b", "/b"),
            ("/search?jql=project = X", "/search?jql=project%20=%20X"),
            // A literal semicolon is written as an escape, which no server splits on.
            ("/a/b%3bc", "/a/b%3Bc"),
            ("/a/x?q=1;2", "/a/x?q=1;2"),
            ("/files/a b/ü", "/files/a%20b/%C3%BC"),
            ("/a/...", "/a/..."),
            // One spelling: unreserved escapes decoded, the rest with upper-case hex.
            ("/rest/api/3/%61dmin", "/rest/api/3/admin"),
            ("/a/%7E%2d%5f%2E", "/a/~-_."),
            ("/a/b%2fc%c3%bc", "/a/b%2Fc%C3%BC"),
            (
                "/repos/o/r/branches/feat%2Fx",
                "/repos/o/r/branches/feat%2Fx",
            ),
            ("/a/100%25", "/a/100%25"),
            ("/a/x?q=%61", "/a/x?q=%61"),
        ] {
            assert_eq!(ok(raw), want, "{raw}");
        }
    }

    #[test]
    fn refuses_escapes_and_other_hosts() {
        for (raw, err) in [
            ("", PathError::Empty),
            ("https://evil.example/x", PathError::AbsoluteUrl),
            ("javascript:alert(1)", PathError::AbsoluteUrl),
            ("/redirect?to=http://evil", PathError::AbsoluteUrl),
            ("//evil.example/x", PathError::NetworkPath),
            ("/x@evil.example", PathError::ForbiddenChar('@')),
            ("/a\\..\\..\\etc", PathError::ForbiddenChar('\\')),
            ("/a\r\nHost: evil", PathError::ForbiddenChar('\r')),
            ("/a\u{0}", PathError::ForbiddenChar('\u{0}')),
            ("/a#frag", PathError::ForbiddenChar('#')),
            ("/..", PathError::EscapesBase),
            ("/a/../../b", PathError::EscapesBase),
            ("/%2e%2e/admin", PathError::EscapesBase),
            ("/%2E%2E%2Fadmin", PathError::EscapesBase),
            ("/a/..%2f..%2fadmin", PathError::EscapesBase),
            ("/a/..%5C..%5Cadmin", PathError::EncodedSeparator),
            ("/a/x%2F.%2Fy", PathError::EscapesBase),
            // Spellings a server routes elsewhere than the path reads.
            ("/a/b%5cc", PathError::EncodedSeparator),
            ("/rest/api/3/issue;x=1/SECRET-1", PathError::PathParameter),
            ("/rest/api/3/issue/..;/project", PathError::PathParameter),
            ("/rest/api/3/issue/SECRET-1;", PathError::PathParameter),
            ("/a/%zz", PathError::BadEscape),
            ("/a/long-segment%4", PathError::BadEscape),
            ("/a?q=%", PathError::BadEscape),
        ] {
            assert_eq!(ApiPath::parse(raw), Err(err), "{raw:?}");
        }
    }

    #[test]
    fn prefixes_only_when_missing() {
        let p = ApiPath::parse("/repositories/ws")
            .unwrap()
            .with_prefix("/2.0");
        assert_eq!(p.path(), "/2.0/repositories/ws");
        let p = ApiPath::parse("/2.0/user").unwrap().with_prefix("/2.0");
        assert_eq!(p.path(), "/2.0/user");
        let p = ApiPath::parse("/2.0x/user").unwrap().with_prefix("/2.0");
        assert_eq!(p.path(), "/2.0/2.0x/user");
    }

    #[test]
    fn url_joins_base_path_and_form_encoded_params() {
        let p = ApiPath::parse("/rest/api/3/search?maxResults=5").unwrap();
        let params = vec![
            (
                "jql".to_owned(),
                "project = \"AB\" & status ~ x/y".to_owned(),
            ),
            ("fields".to_owned(), "summary,*all".to_owned()),
        ];
        assert_eq!(
            p.url("https://x.atlassian.net/", &params),
            "https://x.atlassian.net/rest/api/3/search?maxResults=5&jql=project+%3D+%22AB%22+%26+status+%7E+x%2Fy&fields=summary%2C*all"
        );
        let p = ApiPath::parse("/user").unwrap();
        assert_eq!(
            p.url("https://api.example/v3", &[]),
            "https://api.example/v3/user"
        );
        assert_eq!(
            p.url("https://api.example", &[("q".into(), "é 😀".into())]),
            "https://api.example/user?q=%C3%A9+%F0%9F%98%80"
        );
    }
}
