//! Every GitHub GET the tools make is a conditional request: the answer of a 200 that carried an
//! `ETag` is kept in the HTTP cache (KV `HTTP_CACHE`, keyed like every entry there by principal,
//! credential and URL), the next GET of the same URL sends `If-None-Match` with it, and a
//! `304 Not Modified` (which GitHub does not count against the rate limit) is answered from the
//! kept body. The request always goes out, so the answer is as live as an unconditional one and
//! policy decides it the same way. Only the validator is read before the request; the kept body
//! is read (its cost reserved first) once GitHub has answered 304, so no call holds it across
//! the round trip.

use crate::cache::{cache_key, CachedResponse, HttpCache, Tagged, UpstreamIdentity, Validator};
use crate::ports::{header, Headers};
use crate::tools::registry::ToolContext;
use crate::upstream::{RawReply, Target, UpstreamError, Vendor};
use crate::value::Value;

/// How long a kept answer lives: a wait of ten minutes, then the model reading, fixing and
/// asking again. Only ever served after GitHub says it is current, so its age does not matter.
const TAGGED_TTL_SECONDS: u64 = 3_600;

/// A GET's answer.
pub(crate) struct Fetched {
    /// The decoded body.
    pub(crate) body: Value,
    /// The answer's headers (paging links, rate-limit counters); after a 304, the 304's with
    /// the kept `Link`.
    pub(crate) headers: Headers,
    /// True when GitHub answered 304 Not Modified and the body is the kept copy.
    pub(crate) revalidated: bool,
}

/// A GET of `target` with `query`, decoded; conditional when an answer of the same URL is kept.
pub(crate) async fn get(
    call: &ToolContext<'_>,
    target: &Target,
    query: &[(String, String)],
) -> Result<Fetched, UpstreamError> {
    let cache = HttpCache::new(&call.ports, TAGGED_TTL_SECONDS);
    // Without the credential there is nothing to key on; the client then answers "not
    // configured".
    let key = call.upstream.endpoint(Vendor::GitHub).map(|endpoint| {
        let identity =
            UpstreamIdentity::new(Vendor::GitHub.id(), endpoint.credential.identity.expose());
        let url = target.path.url(&endpoint.base_url, query);
        cache_key(call.principal.name(), &identity, &url)
    });
    let kept = match &key {
        Some(key) => cache.lookup_tagged(key).await,
        None => None,
    };
    let mut raw = match &kept {
        Some(kept) => call.upstream.revalidate(target, query, &kept.etag).await?,
        None => call.upstream.send_raw(target, query, None).await?,
    };
    if let (304, Some(kept), Some(key)) = (raw.status, kept, &key) {
        let clock = call.ports.clock;
        match cache.kept(key, &kept.etag).await {
            Ok(Some(response)) => return from_kept(call, target, raw.headers, response, kept),
            Err(busy) => return Err(UpstreamError::busy(target, clock.now_ms(), busy)),
            // Gone, or replaced by another call's answer, since its validator was read.
            Ok(None) => raw = call.upstream.send_raw(target, query, None).await?,
        }
    }
    // A broken JSON body is an error, and never kept.
    let decoded = call.upstream.decode_checked(target, &raw)?;
    let RawReply {
        status,
        headers,
        body,
        received_at_ms,
        ..
    } = raw;
    if let (Some(key), Some(etag)) = (&key, header(&headers, "etag")) {
        let tagged = Tagged {
            validator: Validator {
                etag: etag.to_owned(),
                link: header(&headers, "link").map(str::to_owned),
            },
            response: CachedResponse {
                status,
                content_type: header(&headers, "content-type").map(str::to_owned),
                body,
                fetched_at_ms: received_at_ms,
            },
        };
        cache.store_tagged(key, tagged).await;
    }
    Ok(Fetched {
        body: decoded.value,
        headers,
        revalidated: false,
    })
}

/// The kept answer GitHub just said is current, with the 304's headers (its rate-limit
/// counters) and the kept `Content-Type` and `Link`.
fn from_kept(
    call: &ToolContext<'_>,
    target: &Target,
    mut headers: Headers,
    response: CachedResponse,
    kept: Validator,
) -> Result<Fetched, UpstreamError> {
    for (name, value) in [("Content-Type", response.content_type), ("Link", kept.link)] {
        if let Some(value) = value {
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
            headers.push((name.to_owned(), value));
        }
    }
    let decoded = call
        .upstream
        .decode_bytes(target, response.status, &headers, &response.body)?;
    Ok(Fetched {
        body: decoded.value,
        headers,
        revalidated: true,
    })
}
