//! The two glob forms of a policy: tool-name globs (`*` = any run of characters) and path globs
//! (matched segment by segment; `*` stays within a segment, a whole `**` segment spans any
//! number of segments) over the canonical request path, ASCII case ignored.

use super::error::PolicyError;
use crate::upstream::ApiPath;
use std::cell::Cell;
use std::fmt;

thread_local! {
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// Comparison steps glob matching has taken on this thread: what the policy fuzz target counts
/// (against the sizes of the globs and the path) instead of time.
pub fn steps() -> u64 {
    STEPS.with(Cell::get)
}

fn count(n: usize) {
    STEPS.with(|s| s.set(s.get() + n as u64));
}

/// A tool-name glob: `*` matches any run of characters, everything else matches itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolGlob(String);

impl ToolGlob {
    /// Accepts a non-empty glob of tool-name characters and `*`.
    pub fn parse(text: &str) -> Result<ToolGlob, PolicyError> {
        let ok = !text.is_empty()
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'*'));
        if ok {
            Ok(ToolGlob(text.to_owned()))
        } else {
            Err(PolicyError::Invalid(format!(
                "tool glob {text:?} must be tool-name characters (A-Z a-z 0-9 _ - .) and '*'"
            )))
        }
    }

    /// True when `name` matches.
    pub(crate) fn matches(&self, name: &str) -> bool {
        wildcard(self.0.as_bytes(), name.as_bytes())
    }
}

impl fmt::Display for ToolGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One segment of a path glob.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    /// `**`: zero or more whole segments.
    Any,
    /// A segment pattern (canonical, lower-cased), `*` within it.
    Pattern(Vec<u8>),
}

/// A path glob such as `/rest/api/3/issue/**` or `/2.0/repositories/acme/*/pullrequests`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PathGlob {
    text: String,
    segments: Vec<Segment>,
}

impl PathGlob {
    /// Parses a glob: it starts with `/`, and `**` is only ever a whole segment.
    pub(crate) fn parse(text: &str) -> Result<PathGlob, PolicyError> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err(PolicyError::Invalid(format!(
                "path glob {text:?} must start with '/'"
            )));
        };
        if text.contains(['?', '#']) {
            return Err(PolicyError::Invalid(format!(
                "path glob {text:?}: the query string is not matched, so a glob cannot contain '?' or '#'"
            )));
        }
        if text
            .chars()
            .any(|c| c.is_control() || c == ' ' || c == '\\')
        {
            return Err(PolicyError::Invalid(format!(
                "path glob {text:?} contains a space, a backslash or a control character"
            )));
        }
        let mut segments = Vec::new();
        for segment in rest.split('/') {
            if segment == "**" {
                segments.push(Segment::Any);
            } else if segment.contains("**") {
                return Err(PolicyError::Invalid(format!(
                    "path glob {text:?}: \"**\" must be a whole segment"
                )));
            } else if segment == "." || segment == ".." {
                return Err(PolicyError::Invalid(format!(
                    "path glob {text:?}: '.' and '..' segments never occur in a normalised path"
                )));
            } else {
                let canonical = ApiPath::canonical_segment(segment).to_ascii_lowercase();
                segments.push(Segment::Pattern(canonical.into_bytes()));
            }
        }
        // The form requests are matched in (`Target::path`): no trailing `/`, the REST API
        // versions folded as [`one_version`] says.
        if segments.len() > 1 && segments.last() == Some(&Segment::Pattern(Vec::new())) {
            segments.pop();
        }
        if let [Segment::Pattern(rest), Segment::Pattern(api), Segment::Pattern(version), ..] =
            segments.as_mut_slice()
        {
            if let Some(one) = one_version(rest, api, version) {
                *version = one.to_vec();
            }
        }
        Ok(PathGlob {
            text: text.to_owned(),
            segments,
        })
    }

    /// True when `path`, an [`ApiPath::path`], matches. ASCII case is ignored: GitHub owners
    /// and Jira keys are case-insensitive upstream, so `/ADMIN` must not slip past a rule on
    /// `/admin`.
    ///
    /// REST API versions are folded as in the glob: a Data Center target keeps `/rest/api/2`
    /// (Jira) or `/rest/api/1.0` (Bitbucket) as the API it speaks, and a rule written in any
    /// spelling still covers it.
    pub(crate) fn matches(&self, path: &str) -> bool {
        let path = path.to_ascii_lowercase();
        let path = path.strip_prefix('/').unwrap_or(&path);
        let mut parts: Vec<&[u8]> = path.split('/').map(str::as_bytes).collect();
        if let [rest, api, version, ..] = parts.as_mut_slice() {
            if let Some(one) = one_version(rest, api, version) {
                *version = one;
            }
        }
        match_segments(&self.segments, &parts)
    }
}

/// The one form of an Atlassian REST API version a glob and a path are matched in, when
/// `/rest/{module}/{version}` (lower case) is an alias: `/rest/api/`'s `2` and `latest` (Jira)
/// and `1.0` (Bitbucket Data Center's one version, which it also calls `latest`) as `3`, and
/// any other module's `latest` as `1.0` (the agile API's and every Bitbucket module's one
/// version). Folding more spellings together only makes a rule cover more: a deny rule
/// written in Bitbucket's documented spelling (`/rest/api/latest/...`) still holds.
fn one_version(rest: &[u8], module: &[u8], version: &[u8]) -> Option<&'static [u8]> {
    match (rest, module, version) {
        (b"rest", b"api", b"2" | b"latest" | b"1.0") => Some(b"3"),
        (b"rest", _, b"latest") => Some(b"1.0"),
        _ => None,
    }
}

impl fmt::Display for PathGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Dynamic programming over (glob segment, path segment): `reach[j]` says the first `j` path
/// segments are matched by the globs seen so far. Linear in globs x segments, so no glob can
/// make matching slow.
fn match_segments(globs: &[Segment], parts: &[&[u8]]) -> bool {
    let mut reach = vec![false; parts.len() + 1];
    reach[0] = true;
    for glob in globs {
        let mut next = vec![false; parts.len() + 1];
        match glob {
            Segment::Any => {
                count(next.len());
                let mut seen = false;
                for (j, slot) in next.iter_mut().enumerate() {
                    seen |= reach[j];
                    *slot = seen;
                }
            }
            Segment::Pattern(p) => {
                count(parts.len());
                for (j, part) in parts.iter().enumerate() {
                    next[j + 1] = reach[j] && wildcard(p, part);
                }
            }
        }
        reach = next;
    }
    reach[parts.len()]
}

/// `*`-only wildcard matching (iterative, linear backtracking on the last star).
fn wildcard(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    let mut steps = 1;
    while t < text.len() {
        steps += 1;
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => {
                    count(steps);
                    return false;
                }
            },
        }
    }
    count(steps + pattern.len().saturating_sub(p));
    pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(glob: &str, p: &str) -> bool {
        let p = ApiPath::parse(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        PathGlob::parse(glob).unwrap().matches(p.path())
    }

    #[test]
    fn a_bitbucket_data_center_path_is_covered_by_a_rule_in_any_spelling() {
        use crate::upstream::{Flavor, Method, Target, Vendor};
        for raw in [
            "/rest/api/1.0/projects/SECRET/repos",
            "/rest/api/LATEST/projects/secret/repos/",
        ] {
            let p = ApiPath::parse(raw).unwrap();
            let t =
                Target::checked(Vendor::Bitbucket, Flavor::DataCenter, Method::Get, &p).unwrap();
            assert!(
                t.path()
                    .eq_ignore_ascii_case("/rest/api/1.0/projects/SECRET/repos"),
                "{raw}: {}",
                t.path()
            );
            for glob in [
                "/rest/api/1.0/projects/SECRET/**",
                "/rest/api/latest/projects/SECRET/**",
            ] {
                assert!(
                    PathGlob::parse(glob).unwrap().matches(t.path()),
                    "{glob} {raw}"
                );
            }
        }
        let p = ApiPath::parse("/rest/build-status/latest/commits/abc").unwrap();
        let t = Target::checked(Vendor::Bitbucket, Flavor::DataCenter, Method::Get, &p).unwrap();
        assert!(PathGlob::parse("/rest/build-status/latest/**")
            .unwrap()
            .matches(t.path()));
    }

    #[test]
    fn a_data_center_path_is_covered_by_a_rule_in_either_spelling() {
        use crate::upstream::{Flavor, Method, Target, Vendor};
        let dc = |raw: &str| {
            let p = ApiPath::parse(raw).unwrap();
            let t = Target::checked(Vendor::Jira, Flavor::DataCenter, Method::Get, &p).unwrap();
            t.path().to_owned()
        };
        for raw in [
            "/rest/api/2/issue/SECRET-1",
            "/REST/api/latest/issue/SECRET-1/",
        ] {
            let matched = dc(raw);
            assert_eq!(matched, "/rest/api/2/issue/SECRET-1");
            for glob in [
                "/rest/api/2/issue/SECRET-*",
                "/rest/api/latest/issue/SECRET-*",
                "/rest/api/3/issue/SECRET-*",
            ] {
                assert!(
                    PathGlob::parse(glob).unwrap().matches(&matched),
                    "{glob} {raw}"
                );
            }
            assert!(!PathGlob::parse("/rest/api/2/project/**")
                .unwrap()
                .matches(&matched));
        }
    }

    /// Matching is counted, and the count stays within (glob + 1) x (text + 1) for the globs
    /// that make a backtracking matcher exponential.
    #[test]
    fn matching_steps_are_bounded_by_the_sizes() {
        let text = "a".repeat(2_000);
        let tool = ToolGlob::parse(&format!("{}b", "*a".repeat(50))).unwrap();
        let before = steps();
        assert!(!tool.matches(&text));
        let taken = steps() - before;
        assert!(taken > 2_000, "the matcher's steps are counted: {taken}");
        assert!(taken <= 102 * 2_001, "{taken} steps");

        let glob = PathGlob::parse(&format!("/**/{}b/**", "*a".repeat(20))).unwrap();
        let path = format!("/{}", vec!["a".repeat(50); 40].join("/"));
        let before = steps();
        assert!(!glob.matches(&path));
        let taken = steps() - before;
        assert!(taken <= 4 * 46 * (path.len() as u64 + 2), "{taken} steps");
    }

    #[test]
    fn tool_globs() {
        let cases = [
            ("jira_*", "jira_get", true),
            ("jira_*", "jira_", true),
            ("jira_*", "conf_get", false),
            ("*_get", "bb_get", true),
            ("*_get", "bb_get_x", false),
            ("*", "anything", true),
            ("github_*_runs", "github_list_workflow_runs", true),
            ("jira_get", "jira_get", true),
            ("jira_get", "jira_gett", false),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXcYYb", false),
        ];
        for (glob, name, expected) in cases {
            assert_eq!(
                ToolGlob::parse(glob).unwrap().matches(name),
                expected,
                "{glob} ~ {name}"
            );
        }
        for bad in ["", "jira get", "jira/x", "a?"] {
            assert!(ToolGlob::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn path_globs() {
        let cases = [
            ("/rest/api/3/issue/*", "/rest/api/3/issue/PROJ-1", true),
            (
                "/rest/api/3/issue/*",
                "/rest/api/3/issue/PROJ-1/comment",
                false,
            ),
            (
                "/rest/api/3/issue/**",
                "/rest/api/3/issue/PROJ-1/comment",
                true,
            ),
            ("/rest/api/3/issue/**", "/rest/api/3/issue", true),
            // The agile API's `latest` is its 1.0, which requests are sent and matched as.
            (
                "/rest/agile/latest/issue/*",
                "/rest/agile/1.0/issue/SECRET-1",
                true,
            ),
            ("/rest/**", "/rest/", true),
            ("/**", "/", true),
            ("/**/admin/**", "/rest/api/3/admin/x", true),
            ("/**/admin/**", "/admin", true),
            ("/**/admin/**", "/rest/administrators", false),
            ("/**/admin", "/a/b/admin", true),
            (
                "/repos/*/*/actions/runs",
                "/repos/acme/web/actions/runs",
                true,
            ),
            ("/repos/*/*/actions/runs", "/repos/acme/actions/runs", false),
            (
                "/rest/api/3/issue/PROJ-*",
                "/rest/api/3/issue/proj-12",
                true,
            ),
            (
                "/rest/api/3/issue/PROJ-*",
                "/rest/api/3/issue/OPS-12",
                false,
            ),
            ("/x/*.json", "/x/a.json", true),
            ("/x/*.json", "/x/a.yaml", false),
            // Escapes of unreserved characters are the same path to the server.
            ("/**/admin/**", "/rest/api/3/%61dmin", true),
            ("/**/admin/**", "/rest/api/3/ADMIN", true),
            ("/**/%61dmin/**", "/rest/api/3/admin", true),
            // An encoded slash stays inside its segment, in either case of hex digit.
            ("/a/*", "/a/b%2Fc", true),
            ("/a/b/c", "/a/b%2Fc", false),
            ("/a/b%2fc", "/a/b%2Fc", true),
            // Both sides are encoded alike: a glob written with the character matches the
            // request that had to escape it, and the other way round.
            ("/files/ü/*", "/files/ü/x", true),
            ("/files/%C3%BC", "/files/ü", true),
            ("/files/a%20b", "/files/a b", true),
            ("/a/100%", "/a/100%25", true),
            // `?` and `[` are literal.
            ("/a/[x]", "/a/[x]", true),
            ("/a/[x]", "/a/x", false),
        ];
        for (glob, p, expected) in cases {
            assert_eq!(path(glob, p), expected, "{glob} ~ {p}");
        }
    }

    #[test]
    fn bad_path_globs_name_the_problem() {
        let cases = [
            ("rest/**", "must start with '/'"),
            ("/a**/b", "whole segment"),
            ("/a/../b", "'..'"),
            ("/a?x=1", "query string"),
            ("/a b", "space"),
        ];
        for (glob, expected) in cases {
            let err = PathGlob::parse(glob).unwrap_err().to_string();
            assert!(err.contains(expected), "{glob}: {err}");
        }
    }

    #[test]
    fn many_double_stars_stay_fast() {
        let glob = PathGlob::parse("/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/z").unwrap();
        let long = format!("/{}", vec!["a"; 40].join("/"));
        assert!(!glob.matches(&long));
    }
}
