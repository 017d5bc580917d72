//! The policy target: the upstream request a tool call makes (vendor, method, canonical path),
//! built once from the call's arguments. Policy decides on it and the tool sends it, so what a
//! rule matched is what goes out.

use super::client::UpstreamCall;
use super::path::ApiPath;
use super::vendor::Vendor;
use super::Method;
use crate::value::Value;

/// The upstream request a tool call makes, as policy sees it and as the tool sends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The vendor.
    pub vendor: Vendor,
    /// The HTTP method.
    pub method: Method,
    /// The canonical path with the vendor's prefix (Bitbucket `/2.0`), and its own query.
    pub path: ApiPath,
}

impl Target {
    /// The target of a request to `vendor` with `method` at `path`, prefixed as the client does.
    pub fn new(vendor: Vendor, method: Method, path: &ApiPath) -> Target {
        Target {
            vendor,
            method,
            path: vendor.request_path(path),
        }
    }

    /// The path policy matches: canonical, prefixed, without the query.
    pub fn path(&self) -> &str {
        self.path.path()
    }

    /// The request to send for this target, with `query` after the path's own and `body`.
    pub fn call<'a>(
        &'a self,
        query: &'a [(String, String)],
        body: Option<&'a Value>,
    ) -> UpstreamCall<'a> {
        UpstreamCall {
            vendor: self.vendor,
            method: self.method,
            path: &self.path,
            query,
            body,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(vendor: Vendor, method: Method, path: &str) -> Target {
        Target::new(vendor, method, &ApiPath::parse(path).unwrap())
    }

    #[test]
    fn targets_are_prefixed_like_requests() {
        let t = target(Vendor::Bitbucket, Method::Get, "/repositories/a/../b");
        assert_eq!(t.path(), "/2.0/repositories/b");
        let t = target(Vendor::Bitbucket, Method::Get, "/2.0/x?q=1");
        assert_eq!(t.path(), "/2.0/x");
        assert_eq!(t.path.query(), Some("q=1"));
        let t = target(Vendor::Jira, Method::Get, "/rest/api/3/issue/A-1/../A-2");
        assert_eq!(t.path(), "/rest/api/3/issue/A-2");
    }
}
