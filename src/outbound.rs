//! URLs that a client, a vendor or a document supplies and this server then fetches (client
//! metadata documents, signed log URLs): parsed once by a WHATWG URL parser, the `url` crate,
//! which reads them as the runtime's `fetch` does; checked on the host that parse found; fetched
//! as that parse's serialization. Checking the text and fetching what a parser makes of it let
//! `https://evil.example\.blob.core.windows.net/` (the authority ends at `\`),
//! `https://169.254.169.254./` and `https://%31%32%37.0.0.1/` through (decision 0077).

use std::net::{Ipv4Addr, Ipv6Addr};
use url::{Host, Url};

/// The longest outbound URL accepted.
pub(crate) const MAX_URL_LEN: usize = 2_048;

/// Where a URL may point.
#[derive(Clone, Copy, Debug)]
pub enum Reach<'a> {
    /// Public hosts only, over https: [`public_host_problem`] decides.
    Public,
    /// Public hosts over https, and loopback hosts over http or https: a server run on this
    /// computer fetches what other local programs serve.
    PublicOrLoopback,
    /// The hosts of an allow-list (entries `host`, `host:port` or `*.domain`, lower case), over
    /// https, or over http when the listed host is a loopback address.
    Listed {
        /// The entries.
        entries: &'a [String],
        /// The setting that holds them, for messages.
        setting: &'static str,
    },
}

/// What is wrong with a URL [`OutboundUrl::check`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlProblem {
    /// Not a URL this server fetches at all: too long, unparsable, no host, user information or
    /// a fragment.
    Form,
    /// Not https (nor http to a loopback host where that is allowed).
    Scheme,
    /// A host the reach does not allow: internal, or not listed.
    Host,
}

/// Why [`OutboundUrl::check`] refused a URL: its class, and a text that names the host at most,
/// never the path or query (which may hold a signature).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlRefused {
    /// What is wrong.
    pub(crate) problem: UrlProblem,
    text: String,
}

impl UrlRefused {
    /// The refusal of class `problem`, saying `text`.
    pub fn new(problem: UrlProblem, text: String) -> UrlRefused {
        UrlRefused { problem, text }
    }
}

impl std::fmt::Display for UrlRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// A URL that [`OutboundUrl::check`] accepted; the only form in which such a URL is fetched
/// ([`crate::ports::UpstreamRequest::get`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboundUrl(Url);

impl OutboundUrl {
    /// Parses `text` and checks what was parsed: http(s) only, no user information or fragment,
    /// and a host `reach` allows. Errors name the host at most, never the path or query (which
    /// may hold a signature).
    pub fn check(text: &str, reach: Reach<'_>) -> Result<OutboundUrl, UrlRefused> {
        use UrlProblem::{Form, Host as Place, Scheme};
        let refused = UrlRefused::new;
        if text.len() > MAX_URL_LEN {
            return Err(refused(
                Form,
                format!("the URL is longer than {MAX_URL_LEN} bytes"),
            ));
        }
        let url =
            Url::parse(text).map_err(|e| refused(Form, format!("the URL is not valid ({e})")))?;
        let host = url
            .host()
            .ok_or_else(|| refused(Form, "the URL has no host".into()))?;
        let authority = authority(&url);
        if !url.username().is_empty() || url.password().is_some() {
            return Err(refused(
                Form,
                format!("the URL on {authority} carries user information"),
            ));
        }
        if url.fragment().is_some() {
            return Err(refused(
                Form,
                format!("the URL on {authority} carries a fragment"),
            ));
        }
        let loopback = is_loopback(&host);
        match url.scheme() {
            "https" => {}
            "http" if loopback && !matches!(reach, Reach::Public) => {}
            _ => {
                return Err(refused(
                    Scheme,
                    format!("the URL on {authority} is not https"),
                ))
            }
        }
        match reach {
            Reach::Public => public_host_problem(&host).map_or(Ok(()), Err),
            Reach::PublicOrLoopback if loopback => Ok(()),
            Reach::PublicOrLoopback => public_host_problem(&host).map_or(Ok(()), Err),
            Reach::Listed { entries, setting } => {
                if !listed(entries, &host, url.port_or_known_default()) {
                    return Err(refused(
                        Place,
                        format!(
                            "the URL is on {authority}, which is not in {setting}; nothing was \
                             sent there"
                        ),
                    ));
                }
                Ok(())
            }
        }
        .map_err(|why| {
            refused(
                Place,
                format!("the URL's host {authority} is refused: {why}"),
            )
        })?;
        Ok(OutboundUrl(url))
    }

    /// The URL as it is fetched.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// `host[:port]` as parsed, IPv6 in brackets: what messages and logs name.
    pub(crate) fn authority(&self) -> String {
        authority(&self.0)
    }

    /// The parsed host (the check refuses a URL without one, so the empty name never appears).
    pub fn host(&self) -> Host<&str> {
        self.0.host().unwrap_or(Host::Domain(""))
    }

    /// The path, as parsed.
    pub fn path(&self) -> &str {
        self.0.path()
    }
}

fn authority(url: &Url) -> String {
    let host = url.host().map(|h| h.to_string()).unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    }
}

/// A URL setting as a refusal may quote it: its scheme, host and port in quotes when it parses,
/// with `/…` for any path or query, never the user information; else `the value`, since then
/// nothing in it is known to be safe to show. A refusal of configuration is written to every
/// caller and to the log, and an operator may have put a credential in any part of the text.
pub(crate) fn setting_shown(text: &str) -> String {
    let Some(url) = Url::parse(text.trim())
        .ok()
        .filter(|u| u.host_str().is_some())
    else {
        return "the value".to_owned();
    };
    let host = url.host_str().unwrap_or_default();
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    let more = if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        "/…"
    } else {
        ""
    };
    format!("{:?}", format!("{}://{host}{port}{more}", url.scheme()))
}

/// `localhost`, `127.0.0.0/8` or `::1`, as a parser reads the host.
pub(crate) fn is_loopback(host: &Host<&str>) -> bool {
    match host {
        // One trailing dot is the root; "localhost.." has an empty label and names nothing.
        Host::Domain(name) => name.strip_suffix('.').unwrap_or(name) == "localhost",
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
    }
}

/// True when the allow-list `entries` names `host` on `port` (when an entry has one); a
/// `*.domain` entry names the domain's subdomains, never an address.
pub(crate) fn listed(entries: &[String], host: &Host<&str>, port: Option<u16>) -> bool {
    let name = match host {
        Host::Domain(name) => name.to_string(),
        other => other.to_string(),
    };
    entries.iter().any(|entry| {
        let after_bracket = entry.rfind(']').map_or(0, |i| i + 1);
        let (entry_host, entry_port) = match entry[after_bracket..].rfind(':') {
            Some(i) => (
                &entry[..after_bracket + i],
                Some(&entry[after_bracket + i + 1..]),
            ),
            None => (entry.as_str(), None),
        };
        let port_ok = entry_port.is_none_or(|p| p.parse::<u16>().ok() == port);
        let host_ok = match entry_host.strip_prefix("*.") {
            Some(domain) => {
                matches!(host, Host::Domain(_))
                    && name
                        .strip_suffix(domain)
                        .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.'))
            }
            None => name == entry_host,
        };
        port_ok && host_ok
    })
}

/// Why `host` is not a public host a document may be fetched from, if it is not: loopback,
/// private, link-local, shared (CGNAT), multicast, documentation, reserved and unspecified
/// addresses, IPv6 outside global unicast (and IPv4 embedded in IPv6 that is one of those),
/// single-label names and names that only resolve inside a network.
pub fn public_host_problem(host: &Host<&str>) -> Option<String> {
    match host {
        Host::Ipv4(ip) => v4_problem(*ip).map(str::to_owned),
        Host::Ipv6(ip) => v6_problem(*ip).map(str::to_owned),
        Host::Domain(name) => domain_problem(name).map(str::to_owned),
    }
}

fn domain_problem(name: &str) -> Option<&'static str> {
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.is_empty() || name.split('.').any(str::is_empty) {
        return Some("it has an empty label");
    }
    if !name.contains('.') {
        return Some("a single-label name resolves only inside a network");
    }
    let internal = [
        "localhost",
        "local",
        "internal",
        "lan",
        "home.arpa",
        "corp",
        "intranet",
        "private",
    ];
    let inside = internal
        .iter()
        .any(|suffix| name == *suffix || name.ends_with(&format!(".{suffix}")));
    inside.then_some("the name resolves only inside a network")
}

/// The IPv4 blocks that are not public (RFC 6890 and the IANA special-purpose registry).
const V4_NOT_PUBLIC: &[([u8; 4], u8, &str)] = &[
    ([0, 0, 0, 0], 8, "this network"),
    ([10, 0, 0, 0], 8, "private"),
    ([100, 64, 0, 0], 10, "shared (CGNAT)"),
    ([127, 0, 0, 0], 8, "loopback"),
    ([169, 254, 0, 0], 16, "link-local"),
    ([172, 16, 0, 0], 12, "private"),
    ([192, 0, 0, 0], 24, "IETF protocol assignments"),
    ([192, 0, 2, 0], 24, "documentation"),
    ([192, 88, 99, 0], 24, "6to4 relay"),
    ([192, 168, 0, 0], 16, "private"),
    ([198, 18, 0, 0], 15, "benchmarking"),
    ([198, 51, 100, 0], 24, "documentation"),
    ([203, 0, 113, 0], 24, "documentation"),
    ([224, 0, 0, 0], 4, "multicast"),
    ([240, 0, 0, 0], 4, "reserved"),
];

fn v4_problem(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    V4_NOT_PUBLIC.iter().find_map(|(base, len, what)| {
        let mask = u32::MAX << (32 - len);
        (bits & mask == u32::from_be_bytes(*base)).then_some(*what)
    })
}

fn v6_problem(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    let embedded = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..6] == [0, 0, 0, 0, 0, 0] {
        return Some("an IPv4-compatible, loopback or unspecified IPv6 address");
    }
    if s[..6] == [0, 0, 0, 0, 0, 0xffff] {
        return Some("an IPv4-mapped IPv6 address");
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return v4_problem(embedded());
    }
    // Only global unicast (2000::/3) is public, less the blocks carved out of it.
    if s[0] & 0xe000 != 0x2000 {
        return Some(
            "not a global unicast IPv6 address (unique-local, link-local, multicast or reserved)",
        );
    }
    match (s[0], s[1]) {
        (0x2001, 0x0db8) => Some("documentation"),
        (0x2001, b) if b < 0x0200 => Some("IETF protocol assignments (Teredo and others)"),
        (0x2002, _) => Some("6to4, which embeds an IPv4 address"),
        (a, _) if a & 0xfff0 == 0x3ff0 => Some("documentation"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(text: &str) -> Result<String, UrlRefused> {
        OutboundUrl::check(text, Reach::Public).map(|u| u.as_str().to_owned())
    }

    #[test]
    fn every_spelling_of_an_internal_host_is_refused() {
        for bad in [
            "https://169.254.169.254./x",
            "https://169.254.169.254/latest/meta-data",
            "https://%31%32%37.0.0.1/",
            "https://\u{ff11}\u{ff12}\u{ff17}.0.0.1/",
            "https://127.1/",
            "https://0x7f.1/",
            "https://2130706433/",
            "https://017700000001/",
            "https://0/",
            "https://localhost./",
            "https://LOCALHOST/",
            "https://a.localhost/",
            "https://metadata.google.internal./computeMetadata",
            "https://metadata/",
            "https://printer.local/",
            "https://router.home.arpa/",
            "https://10.0.0.1/",
            "https://172.31.255.255/",
            "https://192.168.0.1/",
            "https://100.64.0.1/",
            "https://100.127.255.255/",
            "https://224.0.0.1/",
            "https://255.255.255.255/",
            "https://198.18.0.1/",
            "https://192.0.2.1/",
            "https://[::1]/",
            "https://[::]/",
            "https://[::ffff:127.0.0.1]/",
            "https://[::ffff:8.8.8.8]/",
            "https://[::127.0.0.1]/",
            "https://[fc00::1]/",
            "https://[fd12:3456::1]/",
            "https://[fe80::1]/",
            "https://[ff02::1]/",
            "https://[2001:db8::1]/",
            "https://[3fff::1]/",
            "https://[64:ff9b::a9fe:a9fe]/",
            "https://[64:ff9b::10.0.0.1]/",
            "https://[2002:7f00:1::]/",
            "https://[2001::1]/",
            "http://example.com/doc",
            "https://user@example.com/doc",
            "https://example.com/doc#frag",
            "ftp://example.com/doc",
            "file:///etc/passwd",
            "https:///x",
            "not a url",
        ] {
            assert!(public(bad).is_err(), "{bad} accepted as {:?}", public(bad));
        }
    }

    #[test]
    fn public_hosts_are_fetched_as_parsed() {
        for (ok, fetched) in [
            (
                "https://client.example.org/cimd.json",
                "https://client.example.org/cimd.json",
            ),
            (
                "HTTPS://Client.Example.ORG/a/../b",
                "https://client.example.org/b",
            ),
            ("https://8.8.8.8/x", "https://8.8.8.8/x"),
            ("https://[2606:4700::1111]/x", "https://[2606:4700::1111]/x"),
            (
                "https://[64:ff9b::808:808]/x",
                "https://[64:ff9b::808:808]/x",
            ),
            ("https://172.32.0.1/x", "https://172.32.0.1/x"),
            ("https://cafe.be/x", "https://cafe.be/x"),
        ] {
            assert_eq!(public(ok).as_deref(), Ok(fetched), "{ok}");
        }
    }

    #[test]
    fn each_refusal_is_classified() {
        for (bad, problem) in [
            ("/relative", UrlProblem::Form),
            ("https://u@example.com/x", UrlProblem::Form),
            ("http://example.com/x", UrlProblem::Scheme),
            ("https://10.0.0.1/x", UrlProblem::Host),
        ] {
            assert_eq!(
                OutboundUrl::check(bad, Reach::Public).unwrap_err().problem,
                problem,
                "{bad}"
            );
        }
    }

    #[test]
    fn errors_name_the_host_not_the_signature() {
        let err = public("https://10.0.0.1/x?sig=SECRET")
            .unwrap_err()
            .to_string();
        assert!(err.contains("10.0.0.1") && err.contains("private"), "{err}");
        assert!(!err.contains("SECRET"), "{err}");
        let err = public("http://example.com/x?sig=SECRET")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not https") && !err.contains("SECRET"),
            "{err}"
        );
    }

    #[test]
    fn a_setting_is_shown_without_its_user_path_or_query() {
        for (text, shown) in [
            (
                "https://bot:ghp_SECRET@ghe.example.com/api/v3",
                "\"https://ghe.example.com/…\"",
            ),
            ("https://ghe.example.com", "\"https://ghe.example.com\""),
            (
                "http://127.0.0.1:8787/?key=SECRET",
                "\"http://127.0.0.1:8787/…\"",
            ),
            ("ghp_SECRET", "the value"),
            ("https://SECRET@", "the value"),
            ("mailto:SECRET@example.com", "the value"),
        ] {
            assert_eq!(setting_shown(text), shown, "{text}");
        }
    }

    #[test]
    fn local_runs_may_fetch_loopback_only() {
        for (text, allowed) in [
            ("http://127.0.0.1:8787/cimd.json", true),
            ("http://localhost:3000/x", true),
            ("http://localhost.:3000/x", true),
            ("http://localhost..:3000/x", false),
            ("https://localhost../x", false),
            ("http://[::1]:3000/x", true),
            ("https://example.com/x", true),
            ("http://10.0.0.1/x", false),
            ("https://192.168.1.1/x", false),
            ("http://example.com/x", false),
        ] {
            let got = OutboundUrl::check(text, Reach::PublicOrLoopback);
            assert_eq!(got.is_ok(), allowed, "{text}: {got:?}");
        }
    }

    #[test]
    fn an_allow_list_matches_the_parsed_host() {
        let entries: Vec<String> = ["*.blob.core.windows.net", "127.0.0.2:8123", "[::1]:9"]
            .iter()
            .map(|e| (*e).to_owned())
            .collect();
        let reach = Reach::Listed {
            entries: &entries,
            setting: "LOG_REDIRECT_HOSTS",
        };
        let listed = |text: &str| OutboundUrl::check(text, reach);
        for ok in [
            "https://x.blob.core.windows.net/a?sig=1",
            "https://X.Blob.Core.Windows.NET/a",
            "http://127.0.0.2:8123/log",
            "http://[::1]:9/log",
        ] {
            assert!(listed(ok).is_ok(), "{ok}");
        }
        for (bad, says) in [
            (
                "https://evil.example\\.blob.core.windows.net/x",
                "evil.example",
            ),
            ("http://127.0.0.3\\.blob.core.windows.net/", "127.0.0.3"),
            (
                "http://127.0.0.3:8123\\.x.blob.core.windows.net:8123/x",
                "127.0.0.3:8123",
            ),
            (
                "https://blob.core.windows.net/x",
                "not in LOG_REDIRECT_HOSTS",
            ),
            ("http://x.blob.core.windows.net/x", "not https"),
            ("http://127.0.0.2:8124/log", "not in LOG_REDIRECT_HOSTS"),
            ("https://u:p@x.blob.core.windows.net/x", "user information"),
            ("/relative", "not valid"),
        ] {
            let err = listed(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert_eq!(
            listed("http://127.0.0.2:8123/log?sig=1")
                .unwrap()
                .authority(),
            "127.0.0.2:8123"
        );
    }
}
