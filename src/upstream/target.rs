//! The policy target: the upstream request a tool call would make (vendor, method, normalised
//! path), worked out from the same [`ApiPath`] the request is sent to, so policy decides on
//! exactly what goes out.

use super::path::ApiPath;
use super::vendor::Vendor;
use super::Method;

/// The upstream request a tool call would make, as policy sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The vendor.
    pub vendor: Vendor,
    /// The HTTP method.
    pub method: Method,
    /// The normalised path, with the vendor's prefix (Bitbucket `/2.0`), without the query.
    pub path: String,
}

impl Target {
    /// The target of a request to `vendor` with `method` at `path`, prefixed as the client does.
    pub fn new(vendor: Vendor, method: Method, path: &ApiPath) -> Target {
        Target {
            vendor,
            method,
            path: vendor.request_path(path).path().to_owned(),
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
        assert_eq!(t.path, "/2.0/repositories/b");
        let t = target(Vendor::Bitbucket, Method::Get, "/2.0/x?q=1");
        assert_eq!(t.path, "/2.0/x");
        let t = target(Vendor::Jira, Method::Get, "/rest/api/3/issue/A-1/../A-2");
        assert_eq!(t.path, "/rest/api/3/issue/A-2");
    }
}
