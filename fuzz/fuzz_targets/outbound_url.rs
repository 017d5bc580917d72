//! `OutboundUrl::check`, the one check on every URL a client, a vendor or a document supplies
//! before it is fetched, against the WHATWG parser `fetch` reads URLs with (the `url` crate).
//! For every URL accepted under each reach (public only; public or loopback; the default
//! log-host allow-list plus a loopback entry):
//! - what is fetched is what the parser makes of the input, and reads back as itself;
//! - the parser's reading of what is fetched has the scheme, no user information, no fragment,
//!   and a host the allow rule accepts: the target's own classification of IPv4 and IPv6
//!   ranges and names (written apart from the checker's tables) and the checker's rule itself,
//!   so the host checked is never another host than the one fetched.
#![no_main]

use devtools_mcp_edge::outbound::{public_host_problem, OutboundUrl, Reach};
use devtools_mcp_edge::upstream::hosts::DEFAULT_LOG_HOSTS;
use libfuzzer_sys::fuzz_target;
use std::net::{Ipv4Addr, Ipv6Addr};
use url::{Host, Url};

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let mut entries: Vec<String> = DEFAULT_LOG_HOSTS.iter().map(|h| (*h).to_owned()).collect();
    entries.push("127.0.0.2:8123".to_owned());
    let reaches = [
        Reach::Public,
        Reach::PublicOrLoopback,
        Reach::Listed {
            entries: &entries,
            setting: "LOG_REDIRECT_HOSTS",
        },
    ];
    for reach in reaches {
        let Ok(checked) = OutboundUrl::check(raw, reach) else {
            continue;
        };
        let fetched = checked.as_str();
        let direct = Url::parse(raw).unwrap_or_else(|e| panic!("{raw:?} accepted, unparsable: {e}"));
        assert_eq!(direct.as_str(), fetched, "{raw:?}: fetched is not what fetch reads");
        let url = Url::parse(fetched).unwrap_or_else(|e| panic!("{fetched:?} does not reparse: {e}"));
        assert_eq!(url.as_str(), fetched, "{raw:?}: the serialization is not a fixed point");
        assert!(url.username().is_empty() && url.password().is_none(), "{raw:?}: user");
        assert!(url.fragment().is_none(), "{raw:?}: fragment");
        let host = url.host().unwrap_or_else(|| panic!("{raw:?}: no host"));
        assert_eq!(host, checked.host(), "{raw:?}: checked another host than fetched");
        let loopback = oracle_loopback(&host);
        match url.scheme() {
            "https" => {}
            "http" => assert!(
                loopback && !matches!(reach, Reach::Public),
                "{raw:?}: plain http to {host} under {reach:?}"
            ),
            other => panic!("{raw:?}: scheme {other}"),
        }
        match reach {
            Reach::Public => {
                assert!(oracle_public(&host), "{raw:?}: {host} is not public");
                assert_eq!(public_host_problem(&host), None, "{raw:?}");
            }
            Reach::PublicOrLoopback => {
                assert!(loopback || oracle_public(&host), "{raw:?}: {host} is internal");
            }
            Reach::Listed { .. } => {
                let port = url.port_or_known_default();
                let ok = match &host {
                    Host::Domain(d) => {
                        [".actions.githubusercontent.com", ".blob.core.windows.net"]
                            .iter()
                            .any(|s| d.len() > s.len() && d.ends_with(s))
                            || *d == "circle-production-action-output.s3.amazonaws.com"
                    }
                    Host::Ipv4(ip) => *ip == Ipv4Addr::new(127, 0, 0, 2) && port == Some(8123),
                    Host::Ipv6(_) => false,
                };
                assert!(ok, "{raw:?}: {host}:{port:?} is not on the list");
            }
        }
    }
});

fn oracle_loopback(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(d) => *d == "localhost" || *d == "localhost.",
        Host::Ipv4(ip) => ip.octets()[0] == 127,
        Host::Ipv6(ip) => *ip == Ipv6Addr::LOCALHOST,
    }
}

/// Public as the standard library and the IANA registries read it, written apart from the
/// checker's tables.
fn oracle_public(host: &Host<&str>) -> bool {
    match host {
        Host::Ipv4(ip) => v4_public(*ip),
        Host::Ipv6(ip) => {
            let [.., hi, lo] = ip.segments();
            if ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                return v4_public(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
            }
            if ip.to_ipv4().is_some() {
                return false;
            }
            let first = ip.segments()[0];
            !(ip.is_unspecified()
                || ip.is_loopback()
                || ip.is_multicast()
                || first & 0xfe00 == 0xfc00
                || first & 0xffc0 == 0xfe80
                || (first == 0x2001 && ip.segments()[1] == 0x0db8)
                || first & 0xe000 != 0x2000)
        }
        Host::Domain(d) => {
            let name = d.strip_suffix('.').unwrap_or(d);
            let last = name.rsplit('.').next().unwrap_or_default();
            name.contains('.')
                && !name.split('.').any(str::is_empty)
                && !["localhost", "local", "internal"].contains(&last)
                && !name.chars().all(|c| c.is_ascii_digit() || c == '.')
        }
    }
}

fn v4_public(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || a >= 240
        || (a == 100 && (64..128).contains(&b))
        || (a == 198 && (b == 18 || b == 19))
        || (a == 192 && b == 0 && c == 0))
}
