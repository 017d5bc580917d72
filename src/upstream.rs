//! Requests to the vendor APIs: vendor settings ([`vendor`]), the one way a call sends them
//! ([`client::Client`]), bodies read under the memory budget ([`body`]), typed failures with the texts models read ([`error`]), path validation
//! and URL building ([`path`]), the policy target of a request ([`target`]), paging links
//! ([`link`]), streamed responses ([`stream`]), the hosts job logs may come from ([`hosts`]) and
//! the scrubbing of credentials from every answer ([`scrub`]).

pub(crate) mod body;
pub(crate) mod client;
pub(crate) mod error;
pub mod hosts;
pub(crate) mod js;
pub(crate) mod link;
pub mod path;
pub mod scrub;
pub(crate) mod stream;
pub(crate) mod target;
pub(crate) mod vendor;
pub(crate) mod wire;

pub use client::{Admit, Client, Decoded, RawReply, UpstreamReply};
pub use error::{ErrorKind, MemberRefusal, UndeclaredDocument, UpstreamError};
pub use path::{ApiPath, PathError};
pub use target::{Family, Root, Target, Targets};
pub use vendor::{Acting, Endpoint, Flavor, Secret, UpstreamSettings, Vendor};
pub use wire::reason_phrase;

use std::fmt;

/// The HTTP methods the tools use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// GET
    Get,
    /// POST
    Post,
    /// PUT
    Put,
    /// PATCH
    Patch,
    /// DELETE
    Delete,
}

impl Method {
    /// The method's name, upper case.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// True for the methods that carry a request body.
    pub(crate) fn has_body(self) -> bool {
        matches!(self, Method::Post | Method::Put | Method::Patch)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
