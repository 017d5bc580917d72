//! The passthrough tools' `path` validator. For every accepted path:
//! - the URL built on a base is read by a WHATWG URL parser (what `fetch` uses) with the base's
//!   scheme, host and port, and a path that stays under the base's path;
//! - the normalised path is `/`-rooted and holds no empty, `.` or `..` segment (escaped or not)
//!   except a trailing `/`;
//! - no control character, backslash, `@` or `#` survives;
//! - parsing the normalised path (with its query) again gives the same path: normalisation is a
//!   fixed point, so policy globs see one form;
//! - adding a prefix is idempotent;
//! - what the policy matches is what the upstream routes: for each product, on Atlassian Cloud
//!   and on Data Center, the path the target sends, read as that product's server reads it
//!   (Tomcat for Jira and Confluence: `;params` dropped, escapes decoded, dot segments resolved,
//!   empty and trailing segments ignored, then Atlassian's REST framework: a media-type ending
//!   cut, Jira's module versions read as numbers; the others: escapes decoded within each
//!   segment), names the same segments as the matched form the rules see (aliases read as one),
//!   and lies in the product's path space.
#![no_main]

use devtools_mcp_edge::upstream::{ApiPath, Flavor, Method, Target, Vendor};
use libfuzzer_sys::fuzz_target;
use url::Url;

const BASES: [&str; 3] = [
    "https://api.github.test",
    "https://circleci.test/api/v2",
    "http://127.0.0.1:9/base/",
];

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(parsed) = ApiPath::parse(raw) else {
        return;
    };
    let path = parsed.path();
    assert!(path.starts_with('/'), "{raw:?} -> {path:?} is not rooted");
    assert!(
        !path
            .chars()
            .any(|c| c.is_control() || matches!(c, '\\' | '@' | '#' | '?')),
        "{raw:?} -> {path:?} keeps a forbidden character"
    );
    let body = path.strip_prefix('/').unwrap_or(path);
    let body = body.strip_suffix('/').unwrap_or(body);
    if !body.is_empty() {
        for segment in body.split('/') {
            let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
            assert!(
                !segment.is_empty() && decoded != "." && decoded != "..",
                "{raw:?} -> {path:?} keeps segment {segment:?}"
            );
        }
    }
    if let Some(q) = parsed.query() {
        assert!(
            !q.chars()
                .any(|c| c.is_control() || matches!(c, '\\' | '@' | '#')),
            "{raw:?} -> query {q:?} keeps a forbidden character"
        );
    }

    let again_raw = match parsed.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_owned(),
    };
    let again = ApiPath::parse(&again_raw)
        .unwrap_or_else(|e| panic!("{raw:?} -> {again_raw:?} is refused the second time: {e}"));
    assert_eq!(again, parsed, "{raw:?}: normalisation is not a fixed point");

    let prefixed = parsed.clone().with_prefix("/2.0");
    assert_eq!(
        prefixed.clone().with_prefix("/2.0"),
        prefixed,
        "{raw:?}: prefix not idempotent"
    );

    let params = [("q".to_owned(), raw.to_owned())];
    for base in BASES {
        let base_url = Url::parse(base).unwrap_or_else(|e| panic!("base {base}: {e}"));
        let built = parsed.url(base, &params);
        let url = Url::parse(&built).unwrap_or_else(|e| panic!("{raw:?} -> {built:?}: {e}"));
        assert_eq!(url.scheme(), base_url.scheme(), "{raw:?} -> {built}");
        assert_eq!(
            url.host_str(),
            base_url.host_str(),
            "{raw:?} -> {built}: another host"
        );
        assert_eq!(
            url.port(),
            base_url.port(),
            "{raw:?} -> {built}: another port"
        );
        assert!(
            url.username().is_empty() && url.password().is_none(),
            "{raw:?} -> {built}"
        );
        assert!(url.fragment().is_none(), "{raw:?} -> {built}: a fragment");
        let root = base_url.path().trim_end_matches('/');
        assert!(
            url.path().starts_with(&format!("{root}/")),
            "{raw:?} -> {built}: path {} leaves the base path {root}",
            url.path()
        );
    }

    for (vendor, flavor) in Vendor::ALL
        .into_iter()
        .flat_map(|v| [(v, Flavor::Cloud), (v, Flavor::DataCenter)])
    {
        let Ok(target) = Target::checked(vendor, flavor, Method::Get, &parsed) else {
            continue;
        };
        let routed = route(vendor, flavor, target.path.path());
        let matched = policy_view(target.path());
        assert_eq!(
            routed,
            matched,
            "{raw:?} for {vendor} ({flavor:?}): sent {:?} routes elsewhere than the matched {:?}",
            target.path.path(),
            target.path()
        );
        let first = routed.first().map(Vec::as_slice).unwrap_or_default();
        match vendor {
            Vendor::Confluence if flavor == Flavor::DataCenter => {
                assert_eq!(
                    first, b"rest",
                    "{raw:?}: Confluence Data Center outside /rest"
                )
            }
            Vendor::Confluence => assert_eq!(first, b"wiki", "{raw:?}: Confluence outside /wiki"),
            Vendor::Jira => assert!(
                !first.eq_ignore_ascii_case(b"wiki"),
                "{raw:?}: Jira in /wiki"
            ),
            Vendor::Bitbucket if flavor == Flavor::DataCenter => {
                assert_eq!(first, b"rest", "{raw:?}: Bitbucket Data Center outside /rest")
            }
            Vendor::Bitbucket => assert_eq!(first, b"2.0", "{raw:?}: Bitbucket outside /2.0"),
            Vendor::CircleCi => assert!(
                !first.eq_ignore_ascii_case(b"api"),
                "{raw:?}: CircleCI root"
            ),
            Vendor::GitHub => {}
        }
        // Bitbucket Data Center names by key before a file's path (`.../repos/{slug}/raw/...`).
        let named = match vendor {
            Vendor::Jira | Vendor::Confluence | Vendor::CircleCi => routed.len(),
            Vendor::Bitbucket if flavor == Flavor::DataCenter => file_tail(&routed).unwrap_or(routed.len()),
            _ => 0,
        };
        assert!(
            routed[..named].iter().flatten().all(u8::is_ascii),
            "{raw:?} for {vendor}: a non-ASCII byte reaches a server that may fold it"
        );
    }
});

/// The segments `vendor`'s server routes `path` to, with the aliases policy reads as one
/// resource put in one form (Jira's API version as 3; CircleCI's vcs slugs are sent canonical).
/// Tomcat (Jira, Confluence, Bitbucket Data Center) drops `;params` from each segment, then
/// decodes (with encoded slashes allowed, as some deployments configure it) and resolves;
/// Atlassian's REST framework then cuts a media-type ending (`.json`, `.xml`, ...) from a REST
/// path and reads a module's version as a number (`1` is `1.0`, `latest` the newest). The others
/// split first and decode inside each segment.
fn route(vendor: Vendor, flavor: Flavor, path: &str) -> Vec<Vec<u8>> {
    let tomcat = match vendor {
        Vendor::Jira | Vendor::Confluence => true,
        Vendor::Bitbucket => flavor == Flavor::DataCenter,
        _ => false,
    };
    let parts: Vec<Vec<u8>> = if tomcat {
        let stripped: Vec<&str> = path
            .split('/')
            .map(|s| s.split(';').next().unwrap_or_default())
            .collect();
        decode(&stripped.join("/"))
            .split(|b| *b == b'/')
            .map(<[u8]>::to_vec)
            .collect()
    } else {
        path.split('/').map(decode).collect()
    };
    let mut segments: Vec<Vec<u8>> = Vec::new();
    for segment in parts {
        match segment.as_slice() {
            b"" | b"." => {}
            b".." => {
                segments.pop();
            }
            _ => segments.push(segment),
        }
    }
    // Case is compared as the matcher does (ASCII only), so the alias is read in any case too.
    segments.iter_mut().for_each(|s| s.make_ascii_lowercase());
    let rest = match vendor {
        Vendor::Jira => segments.first().is_some_and(|s| s == b"rest"),
        Vendor::Confluence if flavor == Flavor::DataCenter => {
            segments.first().is_some_and(|s| s == b"rest")
        }
        Vendor::Confluence => segments.get(1).is_some_and(|s| s == b"rest" || s == b"api"),
        // A file's own name is taken as it is (decision 0112).
        Vendor::Bitbucket if flavor == Flavor::DataCenter => {
            segments.first().is_some_and(|s| s == b"rest") && file_tail(&segments).is_none()
        }
        _ => false,
    };
    if let Some(last) = segments.last_mut().filter(|_| rest) {
        let cut = [".json", ".xml", ".txt", ".htm", ".html", ".atom"]
            .iter()
            .find(|suffix| last.ends_with(suffix.as_bytes()));
        if let Some(suffix) = cut {
            last.truncate(last.len() - suffix.len());
        }
    }
    if vendor == Vendor::Jira && segments.len() > 2 && segments[0] == b"rest" {
        let number = version_number(&segments[2]);
        // The API's one version on Data Center is 2; on Cloud, 2 is read as an alias of 3.
        let api: &[u8] = match flavor {
            Flavor::Cloud => b"3",
            Flavor::DataCenter => b"2",
        };
        let version: Option<&[u8]> = match (segments[1].as_slice(), number.as_deref()) {
            (b"api", Some([2])) => Some(api),
            (b"api", Some([3])) if flavor == Flavor::Cloud => Some(api),
            (b"api", _) if segments[2] == b"latest" => Some(api),
            (b"agile", Some([1])) => Some(b"1.0"),
            (b"agile", _) if segments[2] == b"latest" => Some(b"1.0"),
            _ => None,
        };
        if let Some(version) = version {
            segments[2] = version.to_vec();
        }
    }
    // Every Bitbucket Data Center module has one version, 1.0, which it also calls latest.
    let bitbucket_dc = vendor == Vendor::Bitbucket && flavor == Flavor::DataCenter;
    if bitbucket_dc && segments.len() > 2 && segments[0] == b"rest" {
        if segments[2] == b"latest" || version_number(&segments[2]).as_deref() == Some(&[1]) {
            segments[2] = b"1.0".to_vec();
        }
    }
    segments
}

/// Where a file's path starts in a Bitbucket Data Center repository path, as the target reads it.
fn file_tail(segments: &[Vec<u8>]) -> Option<usize> {
    let resource = segments.get(7)?.as_slice();
    let file = matches!(resource, b"raw" | b"browse" | b"diff" | b"files");
    (segments.get(5).map(Vec::as_slice) == Some(b"repos".as_slice()) && file).then_some(8)
}

/// A version segment's value as a version parser reads it: its leading dotted numbers without
/// leading zeros or trailing `.0` parts; `None` when it does not start with a digit.
fn version_number(segment: &[u8]) -> Option<Vec<u64>> {
    let mut parts = Vec::new();
    for part in segment.split(|b| *b == b'.') {
        let digits = part.iter().take_while(|b| b.is_ascii_digit()).count();
        let Some(n) = std::str::from_utf8(&part[..digits])
            .ok()
            .and_then(|d| d.parse::<u64>().ok())
        else {
            break;
        };
        parts.push(n);
        if digits != part.len() {
            break;
        }
    }
    while parts.len() > 1 && parts.last() == Some(&0) {
        parts.pop();
    }
    (!parts.is_empty()).then_some(parts)
}

/// The segments a path glob sees in the matched form: split on `/` only, each escape read as
/// its byte, ASCII case ignored.
fn policy_view(matched: &str) -> Vec<Vec<u8>> {
    matched
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| decode(s).to_ascii_lowercase())
        .collect()
}

/// `segment` with every `%XX` decoded.
fn decode(segment: &str) -> Vec<u8> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}
