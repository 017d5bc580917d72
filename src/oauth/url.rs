//! The little URL handling OAuth needs: splitting the operator's absolute URLs (issuer,
//! identity-provider endpoints) into their parts, and which redirect URIs a client may register.
//! What a client or a document supplies is read by the WHATWG parser (`url`, as in
//! [`crate::outbound`]), as a browser and `fetch` read it.

use crate::outbound::is_loopback;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The longest URL accepted anywhere in OAuth (client ids, redirect URIs).
pub(crate) const MAX_URL_LEN: usize = 2_048;

/// An absolute URL, split. Percent-escapes are kept as they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Url {
    /// The scheme, lower case.
    pub(crate) scheme: String,
    /// The host, lower case, IPv6 literals without brackets; empty without an authority.
    pub(crate) host: String,
    /// The port, when given.
    pub(crate) port: Option<u16>,
    /// True when the authority carried `user[:password]@`.
    pub(crate) userinfo: bool,
    /// The path (empty, or starting with `/` when there is an authority).
    pub path: String,
    /// The query, without `?`.
    pub query: Option<String>,
    /// The fragment, without `#`.
    pub(crate) fragment: Option<String>,
}

/// Why [`Url::parse`] cannot split a text; its text completes "the URL ...", and echoes nothing
/// of the URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// Longer than [`MAX_URL_LEN`].
    TooLong,
    /// Spaces, control characters or backslashes.
    Characters,
    /// No `scheme:`.
    NoScheme,
    /// A scheme that is not RFC 3986's.
    BadScheme,
    /// `[` without `]`.
    UnclosedIpv6,
    /// A port that is not a number up to 65535.
    BadPort,
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Malformed::TooLong => write!(f, "longer than {MAX_URL_LEN} bytes"),
            Malformed::Characters => {
                f.write_str("contains spaces, control characters or backslashes")
            }
            Malformed::NoScheme => f.write_str("has no scheme"),
            Malformed::BadScheme => f.write_str("has no valid scheme"),
            Malformed::UnclosedIpv6 => f.write_str("has an unclosed IPv6 literal"),
            Malformed::BadPort => f.write_str("has an invalid port"),
        }
    }
}

impl Url {
    /// Splits `text`; the error says what is wrong.
    pub(crate) fn parse(text: &str) -> Result<Url, Malformed> {
        if text.len() > MAX_URL_LEN {
            return Err(Malformed::TooLong);
        }
        if text.bytes().any(|b| b <= b' ' || b == 0x7f || b == b'\\') {
            return Err(Malformed::Characters);
        }
        let (scheme, rest) = text.split_once(':').ok_or(Malformed::NoScheme)?;
        if !is_scheme(scheme) {
            return Err(Malformed::BadScheme);
        }
        let (rest, fragment) = match rest.split_once('#') {
            Some((r, f)) => (r, Some(f.to_owned())),
            None => (rest, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q.to_owned())),
            None => (rest, None),
        };
        let mut url = Url {
            scheme: scheme.to_ascii_lowercase(),
            host: String::new(),
            port: None,
            userinfo: false,
            path: rest.to_owned(),
            query,
            fragment,
        };
        if let Some(after) = rest.strip_prefix("//") {
            let end = after.find('/').unwrap_or(after.len());
            let (authority, path) = after.split_at(end);
            url.path = path.to_owned();
            let host_port = match authority.rsplit_once('@') {
                Some((_, hp)) => {
                    url.userinfo = true;
                    hp
                }
                None => authority,
            };
            let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
                let (h, tail) = v6.split_once(']').ok_or(Malformed::UnclosedIpv6)?;
                (h, tail.strip_prefix(':'))
            } else {
                match host_port.split_once(':') {
                    Some((h, p)) => (h, Some(p)),
                    None => (host_port, None),
                }
            };
            url.port = match port {
                Some("") | None => None,
                Some(p) => Some(p.parse::<u16>().map_err(|_| Malformed::BadPort)?),
            };
            url.host = host.to_ascii_lowercase();
        }
        Ok(url)
    }

    /// `scheme://host[:port]`.
    pub(crate) fn origin(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.port {
            Some(p) => format!("{}://{host}:{p}", self.scheme),
            None => format!("{}://{host}", self.scheme),
        }
    }
}

/// An RFC 3986 scheme: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(text: &str) -> bool {
    text.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// `localhost`, `*.localhost`, `127.0.0.0/8` or `::1`.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
        || host.parse::<Ipv6Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// Schemes that hand the URL they carry (or themselves) to a browser, run script or read local
/// data: never a redirect, and never allowed by `MCP_OAUTH_REDIRECT_SCHEMES`.
const BROWSER_SCHEMES: &[&str] = &[
    "about",
    "android-app",
    "blob",
    "data",
    "file",
    "filesystem",
    "ftp",
    "javascript",
    "search-ms",
    "vbscript",
    "view-source",
    "ws",
    "wss",
];

/// Beginnings of the schemes that browsers register for themselves and their variants
/// (`microsoft-edge-https`, `googlechrome-x-callback`, `firefox-focus`, `intent`, ...), and of
/// Windows' protocol handlers (`ms-`), any of which opens what it carries.
const BROWSER_SCHEME_FAMILIES: &[&str] = &[
    "brave",
    "chrome",
    "duckduckgo",
    "edge",
    "firefox",
    "focus",
    "googlechrome",
    "intent",
    "microsoft-edge",
    "ms-",
    "opera",
    "safari",
    "samsunginternet",
    "touch-",
    "vivaldi",
    "x-safari",
    "x-web-search",
    "yandexbrowser",
];

/// True for a scheme that hands what it carries to a browser or runs it: a listed one, one of
/// a browser's family, or any that names `http` (`x-safari-https`, `opera-http`), which can
/// only be carrying a web address.
pub(crate) fn is_browser_scheme(scheme: &str) -> bool {
    BROWSER_SCHEMES.contains(&scheme)
        || BROWSER_SCHEME_FAMILIES
            .iter()
            .any(|f| scheme.starts_with(f))
        || (scheme.contains("http") && !matches!(scheme, "http" | "https"))
}

/// Why a redirect URI cannot be registered, if it cannot (RFC 8252 section 7): `https`; `http`
/// only to a loopback host (127.0.0.0/8, `[::1]`, `localhost`); or a private-use scheme in
/// reverse-domain form (`com.example.app:/cb`) or listed in `extra_schemes`. The URI must be
/// written as the WHATWG parser writes it back (a bare origin may omit the `/`), so the consent
/// page shows what the browser will open; no user, no fragment.
pub(crate) fn redirect_uri_problem(text: &str, extra_schemes: &[String]) -> Option<String> {
    let url = match url::Url::parse(text) {
        Ok(url) => url,
        Err(e) => return Some(format!("{text:?} is not a URL: {e}")),
    };
    let scheme = url.scheme();
    if is_browser_scheme(scheme) {
        return Some(format!(
            "{text:?}: the {scheme} scheme hands the URL to a browser or runs it, so it cannot \
             be a redirect"
        ));
    }
    let canonical =
        url.as_str() == text || (url.path() == "/" && url.as_str() == format!("{text}/"));
    if !canonical {
        return Some(format!(
            "{text:?} is not written as a browser reads it ({:?})",
            url.as_str()
        ));
    }
    if url.fragment().is_some() {
        return Some(format!("{text:?} has a fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Some(format!("{text:?} carries a user"));
    }
    let host = url.host();
    match scheme {
        "https" if host.is_some() => None,
        "http" if host.as_ref().is_some_and(is_loopback) => None,
        "http" => Some(format!("{text:?}: http is only allowed to a loopback host")),
        "https" => Some(format!("{text:?} has no host")),
        _ if is_reverse_domain(scheme) || extra_schemes.iter().any(|s| s == scheme) => None,
        _ => Some(format!(
            "{text:?}: a private-use scheme must be in reverse-domain form, such as \
             com.example.app: (RFC 8252 section 7.1), or listed in MCP_OAUTH_REDIRECT_SCHEMES"
        )),
    }
}

/// A scheme in reverse-domain form: two or more non-empty labels of letters, digits and `-`.
fn is_reverse_domain(scheme: &str) -> bool {
    scheme.contains('.')
        && scheme.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// Reads `MCP_OAUTH_REDIRECT_SCHEMES`: comma-separated private-use schemes (lower case) that
/// redirect URIs may use although they are not in reverse-domain form; the error names the
/// entry that is not a scheme, or is one that hands URLs to a browser.
pub(crate) fn redirect_schemes(text: &str) -> Result<Vec<String>, BadScheme> {
    let mut schemes = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let scheme = entry.to_ascii_lowercase();
        if !is_scheme(&scheme) {
            return Err(BadScheme::NotAScheme(entry.to_owned()));
        }
        if matches!(scheme.as_str(), "http" | "https") || is_browser_scheme(&scheme) {
            return Err(BadScheme::Reserved(entry.to_owned()));
        }
        schemes.push(scheme);
    }
    Ok(schemes)
}

/// An entry of `MCP_OAUTH_REDIRECT_SCHEMES` that cannot be allowed, as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BadScheme {
    /// Not a URI scheme.
    NotAScheme(String),
    /// `http`, `https`, or a scheme that hands the URL to a browser.
    Reserved(String),
}

impl std::fmt::Display for BadScheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadScheme::NotAScheme(entry) => write!(f, "{entry:?} is not a URI scheme"),
            BadScheme::Reserved(entry) => write!(
                f,
                "{entry:?} cannot be allowed: http and https have their own rules, and the \
                 others hand the URL to a browser"
            ),
        }
    }
}

impl std::error::Error for BadScheme {}

/// True when `presented` is the registered redirect `registered`: exactly equal, or (RFC 8252
/// section 7.3) both loopback http URIs differing only in the port.
pub(crate) fn redirect_matches(registered: &str, presented: &str) -> bool {
    if registered == presented {
        return true;
    }
    let (Ok(r), Ok(p)) = (Url::parse(registered), Url::parse(presented)) else {
        return false;
    };
    r.scheme == "http"
        && p.scheme == "http"
        && is_loopback_host(&r.host)
        && r.host == p.host
        && r.path == p.path
        && r.query == p.query
        && !p.userinfo
        && p.fragment.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_parts() {
        let u = Url::parse("HTTPS://User@Example.COM:8443/a/b?x=1#f").unwrap();
        assert_eq!(
            (u.scheme.as_str(), u.host.as_str(), u.port, u.userinfo),
            ("https", "example.com", Some(8443), true)
        );
        assert_eq!(u.path, "/a/b");
        assert_eq!(u.query.as_deref(), Some("x=1"));
        assert_eq!(u.fragment.as_deref(), Some("f"));
        let v6 = Url::parse("http://[::1]:3000/cb").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", Some(3000)));
        assert_eq!(v6.origin(), "http://[::1]:3000");
        let app = Url::parse("com.example.app:/oauth").unwrap();
        assert_eq!((app.host.as_str(), app.path.as_str()), ("", "/oauth"));
        for bad in [
            "no-scheme",
            "1http://x",
            "https://x:99999/",
            "https://x y",
            "a\\b:c",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn redirect_uris() {
        let cursor = ["cursor".to_owned()];
        for ok in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://app.example/cb?tenant=a",
            "https://app.example",
            "http://127.0.0.1:33418/callback",
            "http://127.9.9.9/cb",
            "http://localhost/cb",
            "http://[::1]:3000/cb",
            "com.example.app:/oauth",
            "com.example.app://callback",
        ] {
            assert_eq!(redirect_uri_problem(ok, &[]), None, "{ok}");
        }
        let app = "cursor://anysphere.cursor-retrieval/oauth/callback";
        assert!(redirect_uri_problem(app, &[]).is_some());
        assert_eq!(redirect_uri_problem(app, &cursor), None);
        for (bad, says) in [
            ("http://example.com/cb", "loopback"),
            ("http://10.0.0.1/cb", "loopback"),
            ("http://127.0.0.1.example/cb", "loopback"),
            ("microsoft-edge:https://evil.example/cb", "browser"),
            ("x-safari-https://evil.example/cb", "browser"),
            (
                "intent://evil.example/cb#Intent;scheme=https;end",
                "browser",
            ),
            ("googlechrome://evil.example/cb", "browser"),
            ("firefox:https://evil.example", "browser"),
            ("javascript:alert(1)", "browser"),
            ("data:text/html,x", "browser"),
            ("file:///etc/passwd", "browser"),
            ("blob:https://a.example/x", "browser"),
            ("myapp:/cb", "reverse-domain"),
            ("com..app:/cb", "reverse-domain"),
            ("https://x/cb#frag", "fragment"),
            ("https://u@x/cb", "user"),
            ("https://evil.example\\.app.example/cb", "written"),
            ("https://%61pp.example/cb", "written"),
            ("HTTPS://app.example/cb", "written"),
            ("relative/path", "not a URL"),
        ] {
            let problem = redirect_uri_problem(bad, &cursor).unwrap_or_default();
            assert!(problem.contains(says), "{bad}: {problem:?}");
        }
    }

    #[test]
    fn operators_may_allow_schemes_but_not_browsers() {
        assert_eq!(
            redirect_schemes(" Cursor, vscode-insiders ,"),
            Ok(vec!["cursor".to_owned(), "vscode-insiders".to_owned()])
        );
        for bad in [
            "microsoft-edge",
            "https",
            "intent",
            "1abc",
            "a b",
            "x:",
            "googlechrome-x-callback",
            "microsoft-edge-https",
            "firefox-focus",
            "touch-https",
            "android-app",
            "search-ms",
            "ms-msdt",
            "my-http-wrapper",
        ] {
            assert!(redirect_schemes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn loopback_redirects_may_change_port_only() {
        assert!(redirect_matches(
            "http://127.0.0.1/cb",
            "http://127.0.0.1:5555/cb"
        ));
        assert!(redirect_matches(
            "https://a.example/cb",
            "https://a.example/cb"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1/cb",
            "http://127.0.0.1:5555/other"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1/cb",
            "http://localhost:5555/cb"
        ));
        assert!(!redirect_matches(
            "https://a.example/cb",
            "https://a.example/cb2"
        ));
        assert!(!redirect_matches(
            "https://a.example/cb",
            "https://a.example:444/cb"
        ));
    }
}
