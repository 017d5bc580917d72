//! `LOG_REDIRECT_HOSTS`: the hosts a log download may be sent to when the vendor hands out a
//! signed URL (GitHub's redirect, CircleCI's step output URLs). Nothing else is fetched, and
//! never with the vendor's credential.

use crate::outbound::{OutboundUrl, Reach, UrlRefused};
use std::fmt;

/// The hosts allowed when `LOG_REDIRECT_HOSTS` is not set: where GitHub's job-log redirects and
/// CircleCI's step output URLs point.
pub const DEFAULT_LOG_HOSTS: &[&str] = &[
    "*.actions.githubusercontent.com",
    "*.blob.core.windows.net",
    "circle-production-action-output.s3.amazonaws.com",
];

/// The allow-list: entries `host`, `host:port` or `*.domain` (any subdomain, not the domain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LogHosts(Vec<String>);

impl Default for LogHosts {
    fn default() -> LogHosts {
        LogHosts(DEFAULT_LOG_HOSTS.iter().map(|h| (*h).to_owned()).collect())
    }
}

impl LogHosts {
    /// The hosts allowed when `LOG_REDIRECT_HOSTS` is not set, for the GitHub at
    /// `github_api_url`: the cloud ones, and a GitHub Enterprise Server's own host (with its
    /// port), where its job-log redirects point unless its administrator put the logs in external
    /// storage. The host is the one a WHATWG parser reads in the setting, as for every URL fetched.
    pub(crate) fn default_for(github_api_url: &str) -> LogHosts {
        let mut hosts = LogHosts::default();
        let Ok(url) = url::Url::parse(github_api_url) else {
            return hosts;
        };
        let Some(host) = url.host_str().map(str::to_ascii_lowercase) else {
            return hosts;
        };
        if host != "api.github.com" {
            hosts.0.push(match url.port() {
                Some(port) => format!("{host}:{port}"),
                None => host,
            });
        }
        hosts
    }

    /// The entries, as configured.
    #[cfg(test)]
    fn entries(&self) -> &[String] {
        &self.0
    }

    /// Parses a comma-separated list; the error says which entry is wrong.
    pub(crate) fn parse(text: &str) -> Result<LogHosts, BadLogHosts> {
        let mut hosts = Vec::new();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let entry = entry.to_ascii_lowercase();
            let name = entry.strip_prefix("*.").unwrap_or(&entry);
            let (host, port) = split_port(name);
            let host_ok = !host.is_empty()
                && host.bytes().all(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'[' | b']' | b':')
                });
            let port_ok = port.is_none_or(|p| !p.is_empty() && p.parse::<u16>().is_ok());
            if !host_ok || !port_ok || host.contains('*') {
                return Err(BadLogHosts::Entry(entry));
            }
            hosts.push(entry);
        }
        if hosts.is_empty() {
            return Err(BadLogHosts::Empty);
        }
        Ok(LogHosts(hosts))
    }

    /// `url` as parsed, when it is an `https` URL (or `http` to a listed loopback address, for
    /// local runs) on an allowed host; otherwise why not, naming only the host.
    pub(crate) fn check(&self, url: &str) -> Result<OutboundUrl, UrlRefused> {
        let reach = Reach::Listed {
            entries: &self.0,
            setting: "LOG_REDIRECT_HOSTS",
        };
        OutboundUrl::check(url, reach)
            .map_err(|e| UrlRefused::new(e.problem, format!("The log URL was refused: {e}.")))
    }
}

/// Why `LOG_REDIRECT_HOSTS` cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BadLogHosts {
    /// An entry, lower-cased, that is not `host`, `host:port` or `*.domain`.
    Entry(String),
    /// No entry at all.
    Empty,
}

impl fmt::Display for BadLogHosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadLogHosts::Entry(entry) => {
                write!(f, "{entry:?} is not a host, host:port or *.domain entry")
            }
            BadLogHosts::Empty => {
                f.write_str("the list is empty; leave the setting unset for the defaults")
            }
        }
    }
}

impl std::error::Error for BadLogHosts {}

/// (`host`, `port`) of `host[:port]`; IPv6 literals keep their brackets.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    let after_bracket = authority.rfind(']').map_or(0, |i| i + 1);
    match authority[after_bracket..].rfind(':') {
        Some(i) => {
            let at = after_bracket + i;
            (&authority[..at], Some(&authority[at + 1..]))
        }
        None => (authority, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_allow_the_vendor_hosts_only() {
        let hosts = LogHosts::default();
        for ok in [
            "https://pipelinesghubeus2.actions.githubusercontent.com/x/_apis/logs?sig=abc",
            "https://productionresultssa0.blob.core.windows.net/actions-results/x?sv=1&sig=2",
            "https://circle-production-action-output.s3.amazonaws.com/abc?X-Amz-Signature=1",
            "HTTPS://Circle-Production-Action-Output.S3.Amazonaws.com/abc",
        ] {
            assert!(hosts.check(ok).is_ok(), "{ok}");
        }
        for (bad, says) in [
            (
                "https://actions.githubusercontent.com/x",
                "not in LOG_REDIRECT_HOSTS",
            ),
            (
                "https://evil.example/x.actions.githubusercontent.com",
                "evil.example",
            ),
            (
                "https://evil.example\\.blob.core.windows.net/x?sig=1",
                "on evil.example, which is not in LOG_REDIRECT_HOSTS",
            ),
            (
                "http://127.0.0.3\\.blob.core.windows.net/x?sig=1",
                "on 127.0.0.3, which is not in LOG_REDIRECT_HOSTS",
            ),
            (
                "https://x.actions.githubusercontent.com.evil.example/",
                "not in",
            ),
            ("http://x.blob.core.windows.net/x", "not https"),
            ("https://user@x.blob.core.windows.net/x", "user information"),
            ("/relative/path", "not valid"),
            ("https://other-bucket.s3.amazonaws.com/abc", "not in"),
        ] {
            let err = hosts.check(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
            assert!(!err.contains("sig="), "{err}");
        }
    }

    #[test]
    fn configured_entries_with_ports_and_loopback() {
        let hosts = LogHosts::parse(" 127.0.0.2:8123 , *.logs.example ").unwrap();
        assert_eq!(hosts.entries(), ["127.0.0.2:8123", "*.logs.example"]);
        assert!(hosts.check("http://127.0.0.2:8123/log").is_ok());
        assert!(hosts.check("http://127.0.0.2:8124/log").is_err());
        assert!(hosts.check("https://a.b.logs.example/x").is_ok());
        assert!(hosts.check("https://logs.example/x").is_err());
        assert_eq!(
            hosts
                .check("http://127.0.0.2:8123/log?sig=1")
                .unwrap()
                .authority(),
            "127.0.0.2:8123"
        );
        for bad in ["", " , ", "a b", "x:notaport", "*.*.x", "host/path"] {
            assert!(LogHosts::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_enterprise_servers_own_host_is_allowed_by_default() {
        let cloud = LogHosts::default_for("https://api.github.com");
        assert_eq!(cloud, LogHosts::default());
        let ghes = LogHosts::default_for("https://GHE.example.com/api/v3");
        assert!(ghes
            .check("https://ghe.example.com/_services/pipelines/logs/1?sig=x")
            .is_ok());
        assert!(ghes.check("https://x.blob.core.windows.net/logs").is_ok());
        assert!(ghes
            .check("https://ghe.example.com.evil.example/logs")
            .is_err());
        let port = LogHosts::default_for("https://ghe.example.com:8443/api/v3");
        assert!(port.check("https://ghe.example.com:8443/logs").is_ok());
        assert!(port.check("https://ghe.example.com/logs").is_err());
    }
}
