//! The passthrough tools' `path` validator. For every accepted path:
//! - the URL built on a base is read by a WHATWG URL parser (what `fetch` uses) with the base's
//!   scheme, host and port, and a path that stays under the base's path;
//! - the normalised path is `/`-rooted and holds no empty, `.` or `..` segment (escaped or not)
//!   except a trailing `/`;
//! - no control character, backslash, `@` or `#` survives;
//! - parsing the normalised path (with its query) again gives the same path: normalisation is a
//!   fixed point, so policy globs see one form;
//! - adding a prefix is idempotent.
#![no_main]

use devtools_mcp_edge::upstream::ApiPath;
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
});
