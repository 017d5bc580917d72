//! The little URL handling OAuth needs: reading the operator's absolute URLs (issuer,
//! identity-provider endpoints), and which redirect URIs a client may register. Every URL is
//! read by the WHATWG parser (`url`, as in [`crate::outbound`]), as a browser and `fetch` read it.

use crate::outbound::is_loopback;

/// Reads an operator's URL setting (issuer, identity-provider endpoints) as `fetch` will read
/// it: what is checked and then used is the parser's serialization, never the text as written.
pub(crate) fn parse_setting(text: &str) -> Result<url::Url, url::ParseError> {
    url::Url::parse(text)
}

/// True when `url` is `http` or `https` to a loopback host, as [`is_loopback`] reads it.
pub(crate) fn is_loopback_url(url: &url::Url) -> bool {
    url.host().is_some_and(|h| is_loopback(&h))
}

/// An RFC 3986 scheme: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(text: &str) -> bool {
    text.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
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
    if !written_as_parsed(&url, text) {
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

/// Whether `text` is `url` as the parser writes it back (a bare origin may omit the `/`).
fn written_as_parsed(url: &url::Url, text: &str) -> bool {
    url.as_str() == text || (url.path() == "/" && url.as_str().strip_suffix('/') == Some(text))
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
    let (Ok(mut r), Ok(mut p)) = (url::Url::parse(registered), url::Url::parse(presented)) else {
        return false;
    };
    let loopback_http = |u: &url::Url| u.scheme() == "http" && is_loopback_url(u);
    if !(loopback_http(&r) && loopback_http(&p) && written_as_parsed(&p, presented)) {
        return false;
    }
    // Only the port may differ; both parse as http URLs, which always take one.
    let _ = (r.set_port(None), p.set_port(None));
    r == p
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(redirect_matches(
            "http://localhost",
            "http://localhost:5555"
        ));
        // Read as a browser reads them: only a presented URI written as it parses may differ
        // in its port, so the redirect sent is the one checked.
        for other in [
            "http://127.0.0.1:5555@evil.example/cb",
            "http://u@127.0.0.1:5555/cb",
            "http://127.0.0.1:5555/cb#f",
            "http://127.0.0.1:5555/cb?x",
            "http://127.0.0.1:5555\\evil.example/cb",
            "HTTP://127.0.0.1:5555/cb",
            "http://127.0.0.1:5555/a/../cb",
            "http://0x7f.1:5555/cb",
            "http://127.0.0.1:5555/cb/",
        ] {
            assert!(!redirect_matches("http://127.0.0.1/cb", other), "{other}");
        }
    }
}
