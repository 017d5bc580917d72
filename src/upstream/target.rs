//! Policy targets: the upstream requests a tool call may make (vendor, method, canonical path),
//! built once from the call's arguments into its [`Targets`]. Policy decides on them and the
//! client sends only them, so what a rule matched is what goes out. [`Target::checked`] also
//! keeps each product to its own path space, puts the aliases a rule could miss in one form and
//! refuses the spellings a server routes elsewhere than they read.

use super::path::{ApiPath, PathError};
use super::vendor::{Flavor, Vendor};
use super::Method;

/// One upstream request, as policy sees it and as the client sends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The vendor.
    pub vendor: Vendor,
    /// The HTTP method.
    pub method: Method,
    /// The canonical path with the vendor's prefix (Bitbucket `/2.0`), and its own query.
    pub path: ApiPath,
    /// The API root the path is on.
    pub(crate) root: Root,
    /// The form policy matches: the path without its query or a trailing `/`, and with Jira's
    /// API aliases in one form: on Cloud `3` (`/rest/api/2/...` and `/rest/api/latest/...` are
    /// the same resources), on Data Center `2` (`latest` is its only other name).
    matched: String,
}

/// The root of a vendor's API a path is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// The configured base URL.
    Configured,
    /// CircleCI's API v1.1 beside the configured v2 (a job's steps with their output URLs);
    /// policy sees its paths under `/api/v1.1`, a prefix no v2 path given by a caller may take.
    CircleCiV1,
}

/// Where policy sees the paths of [`Root::CircleCiV1`].
const CIRCLECI_V1_MATCHED: &str = "/api/v1.1";

impl Target {
    /// The target of a request to `vendor` with `method` at `path`, with the vendor's prefix.
    /// For paths a tool built from checked parts; a path the caller gave goes through
    /// [`Target::checked`].
    pub fn new(vendor: Vendor, method: Method, path: &ApiPath) -> Target {
        Target::prefixed(
            vendor,
            Flavor::Cloud,
            method,
            vendor.request_path(Flavor::Cloud, path),
        )
    }

    /// The target of `path`, which already has the vendor's prefix, on a vendor speaking
    /// `flavor`.
    fn prefixed(vendor: Vendor, flavor: Flavor, method: Method, path: ApiPath) -> Target {
        Target {
            vendor,
            method,
            matched: matched_form(vendor, flavor, path.path()),
            path,
            root: Root::Configured,
        }
    }

    /// A GET of `path` on CircleCI's API v1.1 root.
    pub(crate) fn circleci_v1(path: &ApiPath) -> Target {
        let mut target = Target::new(Vendor::CircleCi, Method::Get, path);
        target.matched.insert_str(0, CIRCLECI_V1_MATCHED);
        target.root = Root::CircleCiV1;
        target
    }

    /// [`Target::new`] for a path the caller gave to `vendor` speaking `flavor`: refused when
    /// it lies outside the product's API (Confluence Cloud under `/wiki/`, Confluence Data
    /// Center under `/rest/`, Jira never under `/wiki/` and on Data Center never `/rest/api/3`,
    /// Bitbucket under `/2.0`, CircleCI relative to the v2 root) or holds characters outside
    /// ASCII where the server may fold them; CircleCI's `github`/`bitbucket` project slugs are
    /// sent as `gh`/`bb`.
    pub fn checked(
        vendor: Vendor,
        flavor: Flavor,
        method: Method,
        path: &ApiPath,
    ) -> Result<Target, PathError> {
        let data_center = flavor == Flavor::DataCenter;
        let given_first = path.segments().next().unwrap_or_default();
        if vendor == Vendor::Bitbucket && !data_center && given_first.eq_ignore_ascii_case("rest") {
            return Err(PathError::OutsideProduct(
                "this Bitbucket is Bitbucket Cloud: its API is under /2.0 (e.g. \
                 /2.0/repositories/{workspace}); /rest/api/1.0 paths are Bitbucket Data Center's",
            ));
        }
        let path = vendor.request_path(flavor, path);
        let first = path.segments().next().unwrap_or_default();
        let outside = match vendor {
            Vendor::Confluence if data_center && first != "rest" => Some(
                "this Confluence is Data Center: its API is under /rest/api at the server's \
                 root, without /wiki (e.g. /rest/api/content, /rest/api/search with CQL in \
                 queryParams.cql); /wiki/ paths are Confluence Cloud's",
            ),
            Vendor::Confluence if !data_center && first != "wiki" => Some(
                "Confluence paths start with /wiki/ (e.g. /wiki/api/v2/pages); \
                 for Jira use the jira_* tools",
            ),
            Vendor::Jira if first.eq_ignore_ascii_case("wiki") => {
                Some("/wiki/ is Confluence's API, never Jira's; use the conf_* tools")
            }
            Vendor::Bitbucket if data_center && first != "rest" => Some(
                "this Bitbucket is Data Center: its API is under /rest/api/1.0 at the server's \
                 root (e.g. /rest/api/1.0/projects/{key}/repos/{slug}/pull-requests); /2.0 \
                 paths are Bitbucket Cloud's",
            ),
            Vendor::Bitbucket if !data_center && first != "2.0" => {
                Some("Bitbucket paths are under /2.0 (e.g. /2.0/repositories/{workspace})")
            }
            Vendor::CircleCi if first.eq_ignore_ascii_case("api") => Some(
                "CircleCI paths are relative to the API v2 root (e.g. /me or \
                 /project/gh/{org}/{repo}/pipeline); other API roots are not served",
            ),
            _ => None,
        };
        if let Some(rule) = outside {
            return Err(PathError::OutsideProduct(rule));
        }
        // Bitbucket Cloud names branches with `/` as %2F and routes it inside the segment;
        // Tomcat (every Data Center product) refuses it or, configured so, decodes it first.
        let encoded_slash = path.path().contains("%2F");
        let routes_encoded_slash = match vendor {
            Vendor::Bitbucket => !data_center,
            Vendor::GitHub => true,
            _ => false,
        };
        if encoded_slash && !routes_encoded_slash {
            return Err(PathError::EncodedSeparator);
        }
        // Bitbucket Cloud does not fold; Data Center, a Java server, may in what it names by
        // key (`ſ` upper-cases to `S`), though not in a file's own path.
        let folds = match vendor {
            Vendor::Bitbucket if data_center => {
                path.has_non_ascii_in(bitbucket_file_tail(&path).unwrap_or(usize::MAX))
            }
            Vendor::Bitbucket => false,
            _ => path.has_non_ascii(),
        };
        if folds {
            return Err(PathError::NonAscii);
        }
        if format_suffix(vendor, flavor, &path) {
            return Err(PathError::FormatSuffix);
        }
        let path = match vendor {
            Vendor::CircleCi => circleci_slugs(path)?,
            Vendor::Jira => jira_versions(flavor, path)?,
            Vendor::Bitbucket if data_center => bitbucket_versions(path)?,
            _ => path,
        };
        Ok(Target::prefixed(vendor, flavor, method, path))
    }

    /// The path policy matches: canonical, prefixed, without the query or a trailing `/`, with
    /// the aliases of one resource in one form.
    pub fn path(&self) -> &str {
        &self.matched
    }
}

/// Requests whose paths differ only in one id learned while the call runs (the jobs of a run):
/// `{head}/{id}{tail}` on one vendor, method and root. The plan declares the family; the client
/// sends a member only once policy has decided on that member's own target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    vendor: Vendor,
    method: Method,
    head: String,
    tail: String,
}

impl Family {
    /// The GETs of `{head}/{id}{tail}` on `vendor`'s configured root; `head` and `tail` are
    /// paths built from checked parts (`tail` empty or starting with `/`).
    pub fn get(vendor: Vendor, head: &str, tail: &str) -> Family {
        Family {
            vendor,
            method: Method::Get,
            head: head.to_owned(),
            tail: tail.to_owned(),
        }
    }

    /// The member for `id`; `None` when its path does not parse (a head or tail that was not
    /// built from checked parts).
    pub(crate) fn member(&self, id: u64) -> Option<Target> {
        let path = ApiPath::parse(&format!("{}/{id}{}", self.head, self.tail)).ok()?;
        Some(Target::new(self.vendor, self.method, &path))
    }

    /// Whether `target` is a member: the target of some id, exactly as [`Family::member`]
    /// builds it.
    fn contains(&self, target: &Target) -> bool {
        if (target.vendor, target.method, target.root)
            != (self.vendor, self.method, Root::Configured)
        {
            return false;
        }
        let Some(first) = self.member(0) else {
            return false;
        };
        let head = first.path.path().len().saturating_sub(self.tail.len() + 1);
        let sent = target.path.path();
        let id = sent
            .get(head..sent.len().saturating_sub(self.tail.len()))
            .and_then(|id| id.parse::<u64>().ok());
        id.and_then(|id| self.member(id)).as_ref() == Some(target)
    }
}

/// Every request one call may make: the targets known when it is planned, the families whose
/// members it learns as it runs, and whether it follows a vendor's redirect (or a link in its
/// answer) to a document on an allowed log host, sent without any credential.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Targets {
    fixed: Vec<Target>,
    families: Vec<Family>,
    documents: bool,
}

/// How [`Targets`] holds a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Declared {
    /// A target decided with the call.
    Fixed,
    /// A member of a declared family, to be decided by itself before it is sent.
    Member,
    /// Not a request of this call.
    No,
}

impl Targets {
    /// A call that makes no upstream request.
    pub(crate) const fn none() -> Targets {
        Targets {
            fixed: Vec::new(),
            families: Vec::new(),
            documents: false,
        }
    }

    /// A call that makes exactly `target`.
    pub fn one(target: Target) -> Targets {
        Targets::none().and(target)
    }

    /// These targets and `target`.
    pub(crate) fn and(mut self, target: Target) -> Targets {
        if !self.fixed.contains(&target) {
            self.fixed.push(target);
        }
        self
    }

    /// These targets and the members of `family`.
    pub(crate) fn and_family(mut self, family: Family) -> Targets {
        self.families.push(family);
        self
    }

    /// These targets and documents on the allowed log hosts.
    pub(crate) fn and_documents(mut self) -> Targets {
        self.documents = true;
        self
    }

    /// The targets decided with the call, in the order the plan named them.
    pub(crate) fn fixed(&self) -> &[Target] {
        &self.fixed
    }

    /// The first fixed target, if any.
    #[cfg(test)]
    pub(crate) fn first(&self) -> Option<&Target> {
        self.fixed.first()
    }

    /// Whether the call learns some of its requests as it runs.
    pub(crate) fn has_families(&self) -> bool {
        !self.families.is_empty()
    }

    /// Whether the call may fetch documents on the allowed log hosts.
    pub(crate) fn documents(&self) -> bool {
        self.documents
    }

    /// How the call's plan holds `target`.
    pub(crate) fn declares(&self, target: &Target) -> Declared {
        if self.fixed.contains(target) {
            Declared::Fixed
        } else if self.families.iter().any(|f| f.contains(target)) {
            Declared::Member
        } else {
            Declared::No
        }
    }
}

/// Segments after which CircleCI reads a project slug (`{vcs}/{org}/{repo}`).
const SLUG_AFTER: [&str; 4] = ["project", "insights", "pages", "time-series"];

/// `path` with a `github` or `bitbucket` vcs segment of a project slug written `gh` or `bb`, the
/// form CircleCI answers for both.
fn circleci_slugs(path: ApiPath) -> Result<ApiPath, PathError> {
    let segments: Vec<&str> = path.segments().collect();
    let mut changed = false;
    let mut out = String::new();
    for (i, segment) in segments.iter().enumerate() {
        let after_slug_word = i > 0
            && SLUG_AFTER
                .iter()
                .any(|w| segments[i - 1].eq_ignore_ascii_case(w));
        let canonical = match *segment {
            s if after_slug_word && s.eq_ignore_ascii_case("github") => "gh",
            s if after_slug_word && s.eq_ignore_ascii_case("bitbucket") => "bb",
            s => s,
        };
        changed |= canonical != *segment;
        out.push('/');
        out.push_str(canonical);
    }
    if !changed {
        return Ok(path);
    }
    if let Some(q) = path.query() {
        out.push('?');
        out.push_str(q);
    }
    ApiPath::parse(&out)
}

/// The endings Atlassian's REST framework reads as an `Accept` header and cuts from the path
/// before routing (`/issue/SECRET-1.json` is `/issue/SECRET-1`), on every module it serves.
const FORMAT_SUFFIXES: [&str; 6] = [".json", ".xml", ".txt", ".htm", ".html", ".atom"];

/// True for a Jira or Confluence REST path (Jira's `/rest/...`, Confluence Cloud's
/// `/wiki/rest/...` and `/wiki/api/...`, Confluence Data Center's `/rest/...`) that ends in one
/// of [`FORMAT_SUFFIXES`], in any ASCII case. Refused rather than cut: whether a module excludes
/// itself from the cut is the server's configuration, so the resource such a path names cannot
/// be known here.
fn format_suffix(vendor: Vendor, flavor: Flavor, path: &ApiPath) -> bool {
    let segments: Vec<&str> = path.segments().collect();
    let rest = match vendor {
        Vendor::Jira => segments
            .first()
            .is_some_and(|s| s.eq_ignore_ascii_case("rest")),
        Vendor::Confluence if flavor == Flavor::DataCenter => segments
            .first()
            .is_some_and(|s| s.eq_ignore_ascii_case("rest")),
        Vendor::Confluence => segments
            .get(1)
            .is_some_and(|s| s.eq_ignore_ascii_case("rest") || s.eq_ignore_ascii_case("api")),
        // A file's path ends the resources that name one (`.../repos/{slug}/raw/package.json`):
        // a cut there, if the server makes it, still names a file of the same repository.
        Vendor::Bitbucket if flavor == Flavor::DataCenter => {
            segments
                .first()
                .is_some_and(|s| s.eq_ignore_ascii_case("rest"))
                && bitbucket_file_tail(path).is_none()
        }
        _ => false,
    };
    // With a trailing `/` too, which a proxy in front of the server may drop.
    let end = path.path().trim_end_matches('/').to_ascii_lowercase();
    rest && FORMAT_SUFFIXES.iter().any(|suffix| end.ends_with(suffix))
}

/// The Bitbucket Data Center resources whose path ends in a file's path.
const BITBUCKET_FILE_RESOURCES: [&str; 4] = ["raw", "browse", "diff", "files"];

/// Where a file's path starts in a Bitbucket Data Center repository path
/// (`/rest/api/1.0/{projects|users}/{key}/repos/{slug}/raw/{file}`: the segment after the
/// resource), or `None` when the path names no file.
fn bitbucket_file_tail(path: &ApiPath) -> Option<usize> {
    let segments: Vec<&str> = path.segments().collect();
    let resource = segments.get(7)?;
    (segments.get(5) == Some(&"repos") && BITBUCKET_FILE_RESOURCES.contains(resource)).then_some(8)
}

/// A Bitbucket Data Center REST `path` with its module's `latest` written `1.0`, the one version
/// every module of it has, so sent and matched as such; refused when the version is another
/// spelling of `1.0` (`/rest/api/1/`, `/rest/api/01.0/`), which the REST framework parses to the
/// same version under a name a rule does not match.
fn bitbucket_versions(path: ApiPath) -> Result<ApiPath, PathError> {
    let segments: Vec<&str> = path.segments().collect();
    let [rest, module, version, ..] = segments.as_slice() else {
        return Ok(path);
    };
    if !rest.eq_ignore_ascii_case("rest") || *version == "1.0" {
        return Ok(path);
    }
    if !version.eq_ignore_ascii_case("latest") {
        return if version_number(version) == version_number("1.0") {
            Err(PathError::ApiVersion(
                "/rest/{module}/1.0 or /rest/{module}/latest",
            ))
        } else {
            Ok(path)
        };
    }
    let tail = &path.path()[format!("/{rest}/{module}/{version}").len()..];
    let mut out = format!("/{rest}/{module}/1.0{tail}");
    if let Some(q) = path.query() {
        out.push('?');
        out.push_str(q);
    }
    ApiPath::parse(&out)
}

/// `path` with the agile API's `latest` written `1.0`, the one version it has, so sent and
/// matched as such; refused when the version of `/rest/api/` or `/rest/agile/` is another
/// spelling of a number the module serves (`/rest/agile/1/`, `/rest/api/3.0/`,
/// `/rest/api/03/`): the REST framework parses versions, so such a spelling may reach the
/// version a rule names under a name it does not match. On Cloud the API's `2` and `latest`
/// are sent as asked, as they answer in another format than `3`, and matched as `3`
/// ([`matched_form`]); on Data Center, which has no `3`, any spelling of `3` is refused as Cloud's.
fn jira_versions(flavor: Flavor, path: ApiPath) -> Result<ApiPath, PathError> {
    let segments: Vec<&str> = path.segments().collect();
    let [rest, module, version, ..] = segments.as_slice() else {
        return Ok(path);
    };
    if !rest.eq_ignore_ascii_case("rest") {
        return Ok(path);
    }
    let agile = module.eq_ignore_ascii_case("agile");
    let data_center = flavor == Flavor::DataCenter;
    let (api, spellings): (&[&str], _) = if data_center {
        (
            &["2", "latest"],
            "/rest/api/2 or /rest/api/latest, and /rest/agile/1.0 or /rest/agile/latest",
        )
    } else {
        (
            &["2", "3", "latest"],
            "/rest/api/3, /rest/api/2 or /rest/api/latest, and /rest/agile/1.0 or \
             /rest/agile/latest",
        )
    };
    let served: &[&str] = if agile {
        &["1.0", "latest"]
    } else if module.eq_ignore_ascii_case("api") {
        api
    } else {
        return Ok(path);
    };
    if !served.iter().any(|v| version.eq_ignore_ascii_case(v)) {
        let number = version_number(version);
        if !agile && data_center && number == version_number("3") {
            return Err(PathError::OutsideProduct(
                "this Jira is Data Center: it speaks REST API v2 (/rest/api/2/..., also \
                 /rest/api/latest/...; JQL search at /rest/api/2/search with startAt and \
                 maxResults); /rest/api/3 is Jira Cloud's",
            ));
        }
        let respelt = number.is_some() && served.iter().any(|v| version_number(v) == number);
        return if respelt {
            Err(PathError::ApiVersion(spellings))
        } else {
            Ok(path)
        };
    }
    if !(agile && version.eq_ignore_ascii_case("latest")) {
        return Ok(path);
    }
    let tail = &path.path()[format!("/{rest}/{module}/{version}").len()..];
    let mut out = format!("/{rest}/{module}/1.0{tail}");
    if let Some(q) = path.query() {
        out.push('?');
        out.push_str(q);
    }
    ApiPath::parse(&out)
}

/// The value of a version segment as a version parser reads it: its leading dotted numbers,
/// without leading zeros or trailing `.0` parts (`01.0.0` and `1` are `[1]`); `None` when it
/// does not start with a number.
fn version_number(version: &str) -> Option<Vec<u64>> {
    let mut parts: Vec<u64> = Vec::new();
    for part in version.split('.') {
        let digits: &str = &part[..part
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(part.len())];
        let Ok(n) = digits.parse::<u64>() else {
            break;
        };
        parts.push(n);
        if digits.len() != part.len() {
            break;
        }
    }
    while parts.len() > 1 && parts.last() == Some(&0) {
        parts.pop();
    }
    (!parts.is_empty()).then_some(parts)
}

/// The form of `path` policy matches (see [`Target::path`]) on a vendor speaking `flavor`.
fn matched_form(vendor: Vendor, flavor: Flavor, path: &str) -> String {
    let mut matched = match path.strip_suffix('/') {
        Some(stripped) if !stripped.is_empty() => stripped.to_owned(),
        _ => path.to_owned(),
    };
    // Policy globs ignore ASCII case, so the alias is recognised in any case too: otherwise
    // `/Rest/api/2/...` would escape a rule on `/rest/api/3/...`.
    const API: &str = "/rest/api/";
    let has_api_prefix = matched
        .get(..API.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(API));
    if vendor == Vendor::Jira && has_api_prefix {
        let v = matched[API.len()..].split('/').next().unwrap_or_default();
        // On Data Center `2` is the API itself, and `latest` its alias.
        let canonical = match flavor {
            Flavor::Cloud => "3",
            Flavor::DataCenter => "2",
        };
        if v == "2" || v.eq_ignore_ascii_case("latest") {
            matched = format!("/rest/api/{canonical}{}", &matched[API.len() + v.len()..]);
        }
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(vendor: Vendor, method: Method, path: &str) -> Target {
        Target::new(vendor, method, &ApiPath::parse(path).unwrap())
    }

    /// The flavors, short: the tables below give each row its own.
    const C: Flavor = Flavor::Cloud;
    const DC: Flavor = Flavor::DataCenter;

    fn checked(flavor: Flavor, vendor: Vendor, raw: &str) -> Result<Target, PathError> {
        Target::checked(vendor, flavor, Method::Get, &ApiPath::parse(raw)?)
    }

    fn refused(flavor: Flavor, vendor: Vendor, raw: &str) -> String {
        match checked(flavor, vendor, raw) {
            Ok(t) => panic!("{raw} was accepted as {}", t.path.path()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn each_product_keeps_to_its_path_space() {
        let says = |flavor, vendor, raw, text: &str| {
            let message = refused(flavor, vendor, raw);
            assert!(message.contains(text), "{raw}: {message}");
        };
        says(
            C,
            Vendor::Confluence,
            "/rest/api/3/search/jql",
            "start with /wiki/",
        );
        says(
            C,
            Vendor::Confluence,
            "/WIKI/api/v2/pages",
            "start with /wiki/",
        );
        says(C, Vendor::Confluence, "/", "start with /wiki/");
        says(C, Vendor::Jira, "/wiki/api/v2/pages", "Confluence's API");
        says(
            C,
            Vendor::Jira,
            "/Wiki/rest/api/content",
            "Confluence's API",
        );
        says(C, Vendor::Jira, "/rest/../wiki/x", "Confluence's API");
        // A Cloud path sent to Data Center is refused naming the API it speaks, and the reverse.
        says(
            DC,
            Vendor::Confluence,
            "/wiki/rest/api/content",
            "Data Center",
        );
        says(
            DC,
            Vendor::Confluence,
            "/wiki/api/v2/pages",
            "/rest/api at the server's root",
        );
        says(DC, Vendor::Confluence, "/REST/api/content", "Data Center");
        says(DC, Vendor::Confluence, "/", "Data Center");
        says(
            DC,
            Vendor::Jira,
            "/wiki/rest/api/content",
            "Confluence's API",
        );
        says(
            DC,
            Vendor::Jira,
            "/rest/api/3/search/jql",
            "speaks REST API v2",
        );
        says(
            DC,
            Vendor::Jira,
            "/REST/Api/3/issue/A-1",
            "/rest/api/3 is Jira Cloud's",
        );
        says(
            DC,
            Vendor::Jira,
            "/rest/api/3.0/issue/A-1",
            "/rest/api/3 is Jira Cloud's",
        );
        says(
            DC,
            Vendor::Jira,
            "/rest/api/03/myself",
            "/rest/api/3 is Jira Cloud's",
        );
        says(
            C,
            Vendor::Confluence,
            "/rest/api/content",
            "start with /wiki/",
        );
        says(
            C,
            Vendor::CircleCi,
            "/api/v1.1/me",
            "relative to the API v2 root",
        );
        for (flavor, vendor, raw, sent) in [
            (
                C,
                Vendor::Confluence,
                "/wiki/api/v2/pages",
                "/wiki/api/v2/pages",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/3/issue/A-1",
                "/rest/api/3/issue/A-1",
            ),
            (C, Vendor::Jira, "/wikis/x", "/wikis/x"),
            (
                C,
                Vendor::Bitbucket,
                "/repositories/w",
                "/2.0/repositories/w",
            ),
            (C, Vendor::Bitbucket, "/2.0/user", "/2.0/user"),
            (C, Vendor::CircleCi, "/me", "/me"),
        ] {
            let t = checked(flavor, vendor, raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(t.path.path(), sent, "{raw}");
        }
        // Data Center's own paths are sent as given, the query apart, with no /2.0 for Bitbucket.
        let jira = ["/rest/api/2/search", "/rest/agile/1.0/board"].map(|p| (Vendor::Jira, p));
        let conf = ["/rest/api/content", "/rest/api/search?cql=x"].map(|p| (Vendor::Confluence, p));
        let bb = [
            "/rest/api/1.0/projects/OPS/repos",
            "/rest/api/1.0/projects/OPS/repos/app/raw/package.json?at=main",
            "/rest/build-status/1.0/commits/abc",
        ]
        .map(|p| (Vendor::Bitbucket, p));
        for (vendor, raw) in jira.into_iter().chain(conf).chain(bb) {
            let t = checked(DC, vendor, raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(t.path.path(), raw.split('?').next().unwrap(), "{raw}");
        }
        // A Cloud path sent to Bitbucket Data Center, and the reverse.
        says(
            DC,
            Vendor::Bitbucket,
            "/repositories/w",
            "Bitbucket is Data Center",
        );
        says(
            DC,
            Vendor::Bitbucket,
            "/2.0/user",
            "/2.0 paths are Bitbucket Cloud's",
        );
        says(
            C,
            Vendor::Bitbucket,
            "/rest/api/1.0/projects",
            "Bitbucket Data Center's",
        );
        says(
            C,
            Vendor::Bitbucket,
            "/REST/api/latest/projects",
            "Bitbucket Data Center's",
        );
    }

    #[test]
    fn bitbucket_data_center_versions_are_sent_and_matched_in_one_spelling() {
        // `latest` is sent, and matched, as 1.0, the one version every module has.
        for (raw, sent) in [
            (
                "/rest/api/latest/projects/OPS/repos?limit=25",
                "/rest/api/1.0/projects/OPS/repos",
            ),
            (
                "/rest/build-status/LATEST/commits/abc",
                "/rest/build-status/1.0/commits/abc",
            ),
        ] {
            let t = checked(DC, Vendor::Bitbucket, raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(t.path.path(), sent);
            assert_eq!(t.matched, sent);
        }
        let q = checked(DC, Vendor::Bitbucket, "/rest/api/latest/projects?limit=25").unwrap();
        assert_eq!(q.path.query(), Some("limit=25"));
        // Another spelling of 1.0 is parsed to it by the server: refused, naming the spellings.
        for raw in [
            "/rest/api/1/projects/SECRET/repos",
            "/rest/api/01.0/projects/SECRET/repos",
            "/rest/api/1.0.0/projects/SECRET/repos",
            "/rest/branch-utils/1/branches",
        ] {
            let message = refused(DC, Vendor::Bitbucket, raw);
            assert!(message.contains("/rest/{module}/1.0"), "{raw}: {message}");
        }
        // A suffix the REST framework cuts is refused, but for a file's own name.
        for raw in [
            "/rest/api/1.0/projects/SECRET.json",
            "/rest/api/1.0/projects/OPS/repos/app.xml",
        ] {
            let message = refused(DC, Vendor::Bitbucket, raw);
            assert!(message.contains(".json, .xml"), "{raw}: {message}");
        }
        for raw in [
            "/rest/api/1.0/projects/OPS/repos/app/browse/docs/index.html",
            "/rest/api/1.0/users/ann/repos/dots/raw/settings.json",
        ] {
            assert!(checked(DC, Vendor::Bitbucket, raw).is_ok(), "{raw}");
        }
        // A non-ASCII letter a Java server may fold, but in a file's own path.
        assert!(matches!(
            checked(
                DC,
                Vendor::Bitbucket,
                "/rest/api/1.0/projects/%C5%BFECRET/repos"
            ),
            Err(PathError::NonAscii)
        ));
        assert!(checked(
            DC,
            Vendor::Bitbucket,
            "/rest/api/1.0/projects/OPS/repos/app/raw/caf%C3%A9.md"
        )
        .is_ok());
        assert!(checked(C, Vendor::Bitbucket, "/2.0/repositories/w/caf%C3%A9").is_ok());
        // Tomcat decodes or refuses %2F: refused on Data Center, routed inside a segment on Cloud.
        let encoded = "/rest/api/1.0/projects/OPS/repos/app/branches/feature%2Fx";
        assert!(matches!(
            checked(DC, Vendor::Bitbucket, encoded),
            Err(PathError::EncodedSeparator)
        ));
        assert!(checked(
            C,
            Vendor::Bitbucket,
            "/2.0/repositories/w/r/refs/branches/a%2Fb"
        )
        .is_ok());
    }

    #[test]
    fn spellings_a_server_routes_elsewhere_are_refused() {
        // Each hostile spelling of a Jira or Confluence path has its Data Center twin, spelt in
        // the API that flavor speaks.
        for (flavor, vendor, raw, text) in [
            (
                C,
                Vendor::Jira,
                "/rest/api/3/issue;x=1/SECRET-1",
                "';' path parameters",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/2/issue;x=1/SECRET-1",
                "';' path parameters",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/3/issue/..;/project",
                "';' path parameters",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/2/issue/..;/project",
                "';' path parameters",
            ),
            (
                C,
                Vendor::Confluence,
                "/wiki;a/rest/api/content",
                "';' path parameters",
            ),
            (
                DC,
                Vendor::Confluence,
                "/rest;a/api/content",
                "';' path parameters",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/3/issue/SECRET-1%2F..",
                "'..' segments",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/2/issue/SECRET-1%2F..",
                "'..' segments",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/3/issue%2FSECRET-1",
                "encoded slashes (%2F)",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/2/issue%2FSECRET-1",
                "encoded slashes (%2F)",
            ),
            (
                C,
                Vendor::Confluence,
                "/wiki/rest%2Fapi/content",
                "encoded slashes (%2F)",
            ),
            (
                DC,
                Vendor::Confluence,
                "/rest/api%2Fcontent",
                "encoded slashes (%2F)",
            ),
            (
                C,
                Vendor::CircleCi,
                "/project/gh%2Fo/r",
                "encoded slashes (%2F)",
            ),
            (
                C,
                Vendor::Bitbucket,
                "/repositories/w/r%5Cx",
                "encoded backslashes",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/3/issue/\u{17F}ECRET-1",
                "outside ASCII",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/2/issue/\u{17F}ECRET-1",
                "outside ASCII",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/3/issue/%C5%BFECRET-1",
                "outside ASCII",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/latest/issue/%C5%BFECRET-1",
                "outside ASCII",
            ),
            (
                C,
                Vendor::Confluence,
                "/wiki/rest/api/space/\u{212A}EY",
                "outside ASCII",
            ),
            (
                DC,
                Vendor::Confluence,
                "/rest/api/space/\u{212A}EY",
                "outside ASCII",
            ),
            (
                C,
                Vendor::CircleCi,
                "/project/gh/\u{f6}rg/r",
                "outside ASCII",
            ),
            // The REST framework parses the version, and cuts a media-type ending.
            (
                C,
                Vendor::Jira,
                "/rest/agile/1/issue/SECRET-1",
                "API version",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/agile/1/issue/SECRET-1",
                "API version",
            ),
            (C, Vendor::Jira, "/rest/agile/1.0.0/board/7", "API version"),
            (DC, Vendor::Jira, "/rest/agile/1.0.0/board/7", "API version"),
            (C, Vendor::Jira, "/rest/Agile/01.00/board/7", "API version"),
            (DC, Vendor::Jira, "/rest/Agile/01.00/board/7", "API version"),
            (
                C,
                Vendor::Jira,
                "/rest/api/3.0/issue/SECRET-1",
                "API version",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/2.0/issue/SECRET-1",
                "API version",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/03/issue/SECRET-1",
                "API version",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/02/issue/SECRET-1",
                "API version",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/2.0.0/issue/SECRET-1",
                "API version",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/2.0.0/issue/SECRET-1",
                "API version",
            ),
            (C, Vendor::Jira, "/rest/api/3/issue/SECRET-1.json", ".json"),
            (DC, Vendor::Jira, "/rest/api/2/issue/SECRET-1.json", ".json"),
            (C, Vendor::Jira, "/rest/api/3/issue/SECRET-1.XML", ".json"),
            (
                DC,
                Vendor::Jira,
                "/rest/api/latest/issue/SECRET-1.XML",
                ".json",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/3/issue/SECRET-1%2Ejson/",
                ".json",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/2/issue/SECRET-1%2Ejson/",
                ".json",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/agile/1.0/issue/SECRET-1.atom",
                ".json",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/agile/1.0/issue/SECRET-1.atom",
                ".json",
            ),
            (
                C,
                Vendor::Confluence,
                "/wiki/rest/api/content/123.json",
                ".json",
            ),
            (
                DC,
                Vendor::Confluence,
                "/rest/api/content/123.json",
                ".json",
            ),
            (
                C,
                Vendor::Confluence,
                "/wiki/api/v2/pages/123.html",
                ".json",
            ),
            (
                DC,
                Vendor::Confluence,
                "/rest/api/content/123.html",
                ".json",
            ),
        ] {
            let message = refused(flavor, vendor, raw);
            assert!(message.contains(text), "{raw}: {message}");
        }
        // Bitbucket routes an encoded slash inside its segment (branch names), and does not fold
        // file names.
        let t = checked(
            C,
            Vendor::Bitbucket,
            "/repositories/w/r/refs/branches/feat%2fx",
        )
        .unwrap();
        assert_eq!(t.path(), "/2.0/repositories/w/r/refs/branches/feat%2Fx");
        let t = checked(C, Vendor::Bitbucket, "/repositories/w/r/src/main/ü.txt").unwrap();
        assert_eq!(t.path(), "/2.0/repositories/w/r/src/main/%C3%BC.txt");
    }

    #[test]
    fn unambiguous_spellings_and_aliases_have_one_matched_form() {
        for (flavor, vendor, raw, matched, sent) in [
            // A trailing slash names the same resource on every server called.
            (
                C,
                Vendor::Jira,
                "/rest/api/3/issue/SECRET-1/",
                "/rest/api/3/issue/SECRET-1",
                "/rest/api/3/issue/SECRET-1/",
            ),
            // Jira's API versions are one resource for policy; the version asked for is sent.
            (
                C,
                Vendor::Jira,
                "/rest/api/2/issue/SECRET-1",
                "/rest/api/3/issue/SECRET-1",
                "/rest/api/2/issue/SECRET-1",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/latest/issue/SECRET-1",
                "/rest/api/3/issue/SECRET-1",
                "/rest/api/latest/issue/SECRET-1",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/LATEST/",
                "/rest/api/3",
                "/rest/api/LATEST/",
            ),
            (
                C,
                Vendor::Jira,
                "/Rest/API/2/issue/SECRET-1",
                "/rest/api/3/issue/SECRET-1",
                "/Rest/API/2/issue/SECRET-1",
            ),
            (
                C,
                Vendor::Jira,
                "/REST/api/Latest",
                "/rest/api/3",
                "/REST/api/Latest",
            ),
            (
                C,
                Vendor::Jira,
                "/rest/api/20/x",
                "/rest/api/20/x",
                "/rest/api/20/x",
            ),
            (
                C,
                Vendor::Confluence,
                "/wiki/rest/api/2/x",
                "/wiki/rest/api/2/x",
                "/wiki/rest/api/2/x",
            ),
            // On Data Center `/rest/api/2` is the API, and `latest` its alias, in any case.
            (
                DC,
                Vendor::Jira,
                "/rest/api/2/issue/SECRET-1/",
                "/rest/api/2/issue/SECRET-1",
                "/rest/api/2/issue/SECRET-1/",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/latest/issue/SECRET-1",
                "/rest/api/2/issue/SECRET-1",
                "/rest/api/latest/issue/SECRET-1",
            ),
            (
                DC,
                Vendor::Jira,
                "/Rest/API/2/issue/SECRET-1",
                "/rest/api/2/issue/SECRET-1",
                "/Rest/API/2/issue/SECRET-1",
            ),
            (
                DC,
                Vendor::Jira,
                "/REST/api/Latest",
                "/rest/api/2",
                "/REST/api/Latest",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/api/20/x",
                "/rest/api/20/x",
                "/rest/api/20/x",
            ),
            (
                DC,
                Vendor::Jira,
                "/rest/agile/latest/board/?x=1",
                "/rest/agile/1.0/board",
                "/rest/agile/1.0/board/",
            ),
            (
                DC,
                Vendor::Confluence,
                "/rest/api/content/123/",
                "/rest/api/content/123",
                "/rest/api/content/123/",
            ),
            // CircleCI's vcs slugs: `github` is `gh`, `bitbucket` is `bb`, sent so.
            (
                C,
                Vendor::CircleCi,
                "/project/github/o/r/pipeline",
                "/project/gh/o/r/pipeline",
                "/project/gh/o/r/pipeline",
            ),
            (
                C,
                Vendor::CircleCi,
                "/project/BitBucket/o/r?x=1",
                "/project/bb/o/r",
                "/project/bb/o/r",
            ),
            (
                C,
                Vendor::CircleCi,
                "/insights/github/o/r/workflows",
                "/insights/gh/o/r/workflows",
                "/insights/gh/o/r/workflows",
            ),
            (
                C,
                Vendor::CircleCi,
                "/insights/pages/github/o/r/summary",
                "/insights/pages/gh/o/r/summary",
                "/insights/pages/gh/o/r/summary",
            ),
            (
                C,
                Vendor::CircleCi,
                "/me/github",
                "/me/github",
                "/me/github",
            ),
            // The agile API has one version: `latest` is sent and matched as it.
            (
                C,
                Vendor::Jira,
                "/rest/agile/latest/issue/SECRET-1?fields=x",
                "/rest/agile/1.0/issue/SECRET-1",
                "/rest/agile/1.0/issue/SECRET-1",
            ),
            (
                C,
                Vendor::Jira,
                "/REST/Agile/LATEST/board/",
                "/REST/Agile/1.0/board",
                "/REST/Agile/1.0/board/",
            ),
            // A version no module serves is no spelling of one; it stays (and is not found).
            (
                C,
                Vendor::Jira,
                "/rest/agile/2/board",
                "/rest/agile/2/board",
                "/rest/agile/2/board",
            ),
            // Media-type endings are cut only under the REST roots, and not by Bitbucket.
            (
                C,
                Vendor::Jira,
                "/secure/views/x.xml",
                "/secure/views/x.xml",
                "/secure/views/x.xml",
            ),
            (
                C,
                Vendor::Bitbucket,
                "/repositories/w/r/src/main/package.json",
                "/2.0/repositories/w/r/src/main/package.json",
                "/2.0/repositories/w/r/src/main/package.json",
            ),
        ] {
            let t = checked(flavor, vendor, raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!((t.path(), t.path.path()), (matched, sent), "{raw}");
        }
    }

    #[test]
    fn a_family_holds_exactly_the_members_it_builds() {
        let family = Family::get(Vendor::GitHub, "/repos/o/r/actions/jobs", "/logs");
        let member = family.member(42).unwrap();
        assert_eq!(member.path(), "/repos/o/r/actions/jobs/42/logs");
        let targets =
            Targets::one(target(Vendor::GitHub, Method::Get, "/repos/o/r")).and_family(family);
        assert_eq!(targets.declares(&member), Declared::Member);
        assert_eq!(
            targets.declares(&target(Vendor::GitHub, Method::Get, "/repos/o/r")),
            Declared::Fixed
        );
        for other in [
            "/repos/o/r/actions/jobs/x/logs",
            "/repos/o/r/actions/jobs/42/logs/x",
            "/repos/o/r/actions/jobs/4/2/logs",
            "/repos/o/other/actions/jobs/42/logs",
            "/repos/o/r/actions/jobs/042/logs",
            "/repos/o/r/actions/jobs/42",
        ] {
            let t = target(Vendor::GitHub, Method::Get, other);
            assert_eq!(targets.declares(&t), Declared::No, "{other}");
        }
        let post = target(
            Vendor::GitHub,
            Method::Post,
            "/repos/o/r/actions/jobs/42/logs",
        );
        assert_eq!(targets.declares(&post), Declared::No);
        let v1 = Target::circleci_v1(&ApiPath::parse("/project/gh/o/r/7").unwrap());
        assert_eq!(v1.path(), "/api/v1.1/project/gh/o/r/7");
        assert_eq!(v1.path.path(), "/project/gh/o/r/7");
        assert_eq!(targets.declares(&v1), Declared::No);
    }

    #[test]
    fn targets_are_prefixed_like_requests() {
        let t = target(Vendor::Bitbucket, Method::Get, "/repositories/a/../b");
        assert_eq!(t.path(), "/2.0/repositories/b");
        let t = target(Vendor::Bitbucket, Method::Get, "/2.0/x/?q=1");
        assert_eq!(t.path(), "/2.0/x");
        assert_eq!(t.path.query(), Some("q=1"));
        let t = target(Vendor::Jira, Method::Get, "/rest/api/3/issue/A-1/../A-2");
        assert_eq!(t.path(), "/rest/api/3/issue/A-2");
    }
}
