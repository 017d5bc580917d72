//! The GitHub GETs of the Actions tools, each answered with its body, headers and whether
//! GitHub revalidated a cached copy.

use crate::ports::Headers;
use crate::tools::registry::ToolContext;
use crate::upstream::{Target, UpstreamError};
use crate::value::Value;

/// A GET's answer.
pub(crate) struct Fetched {
    /// The decoded body.
    pub(crate) body: Value,
    /// The answer's headers (paging links, rate-limit counters).
    pub(crate) headers: Headers,
    /// True when GitHub answered 304 Not Modified and the body is the cached copy.
    pub(crate) revalidated: bool,
}

/// A GET of `target` with `query`, decoded.
pub(crate) async fn get(
    call: &ToolContext<'_>,
    target: &Target,
    query: &[(String, String)],
) -> Result<Fetched, UpstreamError> {
    let reply = call.upstream.send(target, query, None).await?;
    Ok(Fetched {
        body: reply.body,
        headers: reply.headers,
        revalidated: false,
    })
}
