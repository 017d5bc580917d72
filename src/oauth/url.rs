//! The little URL handling OAuth needs: splitting an absolute URL into its parts, deciding
//! whether a host is loopback or private (SSRF protection for client metadata documents), and
//! which redirect URIs a client may register.

use std::net::{Ipv4Addr, Ipv6Addr};

/// The longest URL accepted anywhere in OAuth (client ids, redirect URIs).
pub const MAX_URL_LEN: usize = 2_048;

/// An absolute URL, split. Percent-escapes are kept as they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// The scheme, lower case.
    pub scheme: String,
    /// The host, lower case, IPv6 literals without brackets; empty without an authority.
    pub host: String,
    /// The port, when given.
    pub port: Option<u16>,
    /// True when the authority carried `user[:password]@`.
    pub userinfo: bool,
    /// The path (empty, or starting with `/` when there is an authority).
    pub path: String,
    /// The query, without `?`.
    pub query: Option<String>,
    /// The fragment, without `#`.
    pub fragment: Option<String>,
}

impl Url {
    /// Splits `text`; errors say what is wrong and never echo more than the caller gave.
    pub fn parse(text: &str) -> Result<Url, String> {
        if text.len() > MAX_URL_LEN {
            return Err(format!("longer than {MAX_URL_LEN} bytes"));
        }
        if text.bytes().any(|b| b <= b' ' || b == 0x7f || b == b'\\') {
            return Err("contains spaces, control characters or backslashes".into());
        }
        let (scheme, rest) = text.split_once(':').ok_or("has no scheme")?;
        let valid_scheme = scheme
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        if !valid_scheme {
            return Err("has no valid scheme".into());
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
                let (h, tail) = v6.split_once(']').ok_or("has an unclosed IPv6 literal")?;
                (h, tail.strip_prefix(':'))
            } else {
                match host_port.split_once(':') {
                    Some((h, p)) => (h, Some(p)),
                    None => (host_port, None),
                }
            };
            url.port = match port {
                Some("") | None => None,
                Some(p) => Some(p.parse::<u16>().map_err(|_| "has an invalid port")?),
            };
            url.host = host.to_ascii_lowercase();
        }
        Ok(url)
    }

    /// `scheme://host[:port]`.
    pub fn origin(&self) -> String {
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

/// `localhost`, `*.localhost`, `127.0.0.0/8` or `::1`.
pub fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
        || host.parse::<Ipv6Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// True for hosts a server must not fetch on a client's say-so: loopback, private, link-local,
/// shared, multicast and reserved IPv4, every IPv6 literal (IPv4-mapped and unique-local forms
/// included, so none is checked piecemeal), and names that only resolve inside a network.
pub fn is_internal_host(host: &str) -> bool {
    if host.parse::<Ipv6Addr>().is_ok() {
        return true;
    }
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        let [a, b, ..] = ip.octets();
        return ip.is_loopback()
            || ip.is_private()
            || ip.is_link_local()
            || ip.is_unspecified()
            || ip.is_broadcast()
            || ip.is_multicast()
            || a == 0
            || (a == 100 && (64..128).contains(&b))
            || a >= 240;
    }
    // Dotted-decimal look-alikes (`0x7f.1`, `2130706433`) resolve to addresses in some stacks.
    let numeric = host.split('.').all(|label| {
        let hex = label
            .strip_prefix("0x")
            .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
        hex || (!label.is_empty() && label.bytes().all(|b| b.is_ascii_digit()))
    });
    numeric
        || is_loopback_host(host)
        || !host.contains('.')
        || [".local", ".internal", ".lan", ".home.arpa", ".corp"]
            .iter()
            .any(|suffix| host.ends_with(suffix))
}

/// Why a redirect URI cannot be registered, if it cannot: https; http only to loopback
/// (RFC 8252 native apps); or a private-use scheme such as `cursor://` or `com.example.app:`.
/// Schemes a browser runs or reads locally are refused, as are fragments.
pub fn redirect_uri_problem(text: &str) -> Option<String> {
    let url = match Url::parse(text) {
        Ok(url) => url,
        Err(e) => return Some(format!("{text:?} is not a URL: {e}")),
    };
    if url.fragment.is_some() {
        return Some(format!("{text:?} has a fragment"));
    }
    match url.scheme.as_str() {
        "https" if !url.host.is_empty() && !url.userinfo => None,
        "http" if is_loopback_host(&url.host) && !url.userinfo => None,
        "http" => Some(format!("{text:?}: http is only allowed to a loopback host")),
        "https" => Some(format!("{text:?} has no host or carries a user")),
        "javascript" | "data" | "file" | "blob" | "vbscript" | "about" | "ftp" | "ws" | "wss" => {
            Some(format!(
                "{text:?}: the {} scheme cannot be a redirect",
                url.scheme
            ))
        }
        _ => None,
    }
}

/// True when `presented` is the registered redirect `registered`: exactly equal, or (RFC 8252
/// section 7.3) both loopback http URIs differing only in the port.
pub fn redirect_matches(registered: &str, presented: &str) -> bool {
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
    fn internal_hosts() {
        for host in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "localhost",
            "a.localhost",
            "metadata",
            "printer.local",
            "0x7f.1",
            "2130706433",
            "db.internal",
        ] {
            assert!(is_internal_host(host), "{host}");
        }
        for host in [
            "example.com",
            "8.8.8.8",
            "client.example.org",
            "172.32.0.1",
            "cafe.be",
        ] {
            assert!(!is_internal_host(host), "{host}");
        }
    }

    #[test]
    fn redirect_uris() {
        for ok in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost/cb",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
            "com.example.app:/oauth",
        ] {
            assert_eq!(redirect_uri_problem(ok), None, "{ok}");
        }
        for bad in [
            "http://example.com/cb",
            "javascript:alert(1)",
            "data:text/html,x",
            "https://x/cb#frag",
            "https://u@x/cb",
            "relative/path",
        ] {
            assert!(redirect_uri_problem(bad).is_some(), "{bad}");
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
