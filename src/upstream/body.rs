//! Reading a whole upstream body under the isolate's memory budget: the body's cost is reserved
//! from its `Content-Length` before a byte of it is read, or grown as it streams when no length
//! is declared, on the call's reservations ([`crate::memory`]), which outlive the body.

use super::scrub::{self, Scrubber};
use crate::memory::{BodyReservation, Busy, CallMemory, SMALL_BODY_BYTES};
use crate::ports::{
    header, BodyStream, Clock, TransportError, UpstreamHttp, UpstreamRequest, UpstreamResponse,
};

/// Why a body was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unread {
    /// No answer, or a body over the limit.
    Transport(TransportError),
    /// The isolate's memory budget had no room for the body.
    Busy(Busy),
}

/// Sends `request` and reads at most `max_body` bytes of the answer (through `scrubber`),
/// whatever its status, under the call's memory reservations. An answer declaring more than
/// `unread_over` bytes comes back with its headers and no body, for the caller to refuse from
/// its `Content-Length` (a vendor whose reference refuses such answers with a text of its own).
pub(crate) async fn fetch(
    http: &dyn UpstreamHttp,
    clock: &dyn Clock,
    memory: &CallMemory,
    request: UpstreamRequest,
    scrubber: &Scrubber,
    max_body: usize,
    unread_over: Option<usize>,
) -> Result<UpstreamResponse, Unread> {
    let mut opened = scrub::open(http, request, scrubber)
        .await
        .map_err(Unread::Transport)?;
    let declared = header(&opened.headers, "content-length")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|len| usize::try_from(len).unwrap_or(usize::MAX));
    let unread = declared
        .zip(unread_over)
        .is_some_and(|(len, limit)| len > limit);
    let body = if unread {
        Vec::new()
    } else {
        read(memory, clock, opened.body.as_mut(), declared, max_body).await?
    };
    Ok(UpstreamResponse {
        status: opened.status,
        status_text: opened.status_text,
        headers: opened.headers,
        body,
    })
}

/// Reads all of `stream` (at most `max_body` bytes; `declared` of them when the length is known)
/// under the call's memory reservations.
pub(crate) async fn read(
    memory: &CallMemory,
    clock: &dyn Clock,
    stream: &mut dyn BodyStream,
    declared: Option<usize>,
    max_body: usize,
) -> Result<Vec<u8>, Unread> {
    let too_large = || Unread::Transport(TransportError::TooLarge(max_body));
    if declared.is_some_and(|len| len > max_body) {
        return Err(too_large());
    }
    let mut reservation = memory.body();
    if let Some(len) = declared {
        cover(clock, &mut reservation, len).await?;
    }
    let mut body = Vec::with_capacity(declared.map_or(0, capacity));
    while let Some(chunk) = stream.next_chunk().await.map_err(Unread::Transport)? {
        let len = body.len() + chunk.len();
        if len > max_body {
            return Err(too_large());
        }
        let covered = reservation.covered();
        if len > covered {
            cover(clock, &mut reservation, grown(covered, len, max_body)).await?;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reserves the cost of a body of `bytes` already in hand (read back from a store) before what is
/// built from it: the call's share of the budget, waiting a while for room when there is none.
pub(crate) async fn reserve_held(
    memory: &CallMemory,
    clock: &dyn Clock,
    bytes: usize,
) -> Result<(), Busy> {
    memory
        .body()
        .cover(bytes, || clock.now_ms(), |ms| clock.sleep(ms))
        .await
}

/// Reserves `bytes` of memory for a buffer the call reads through besides its upstream bodies
/// (an artifact's chunk, a streamed log's part), before it is read: see
/// [`crate::memory::CallMemory::hold_buffer`].
pub(crate) async fn reserve_buffer(
    memory: &CallMemory,
    clock: &dyn Clock,
    bytes: usize,
) -> Result<(), Busy> {
    memory
        .hold_buffer(bytes, || clock.now_ms(), |ms| clock.sleep(ms))
        .await
}

/// Covers the first `bytes` of the body, waiting a while for room when there is none.
async fn cover(
    clock: &dyn Clock,
    reservation: &mut BodyReservation<'_>,
    bytes: usize,
) -> Result<(), Unread> {
    reservation
        .cover(bytes, || clock.now_ms(), |ms| clock.sleep(ms))
        .await
        .map_err(Unread::Busy)
}

/// How much of an undeclared body to cover once `len` bytes are in and `covered` are covered:
/// at least double, so a long body waits a few times rather than at every chunk, and never past
/// the small size before the body does, so a small body is covered as small.
fn grown(covered: usize, len: usize, max_body: usize) -> usize {
    let step = len.max(covered.saturating_mul(2)).max(64 * 1024);
    let limit = if len <= SMALL_BODY_BYTES {
        SMALL_BODY_BYTES
    } else {
        max_body
    };
    step.min(limit).max(len)
}

/// The buffer for a body of `declared` bytes: a little more than the body.
///
/// Wasm memory never shrinks. A body parsed whole and then dropped (one whose text is not
/// released as it is parsed, [`crate::value::parse_owned`]) leaves its buffer as a hole below the
/// parsed value; with this slack, what is allocated next for the call's result (an artifact's
/// buffer, the reply) fits in that hole even after the few small allocations made meanwhile have
/// taken their share, instead of growing memory by its whole size. A released body gives the
/// slack back at its first release.
pub(crate) fn capacity(declared: usize) -> usize {
    declared
        .saturating_add(declared / 32)
        .saturating_add(64 * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1024 * 1024;

    #[test]
    fn an_undeclared_body_is_covered_in_doubling_steps_that_stop_at_the_small_size() {
        assert_eq!(grown(0, 100, 16 * MIB), 64 * 1024);
        assert_eq!(grown(64 * 1024, 70_000, 16 * MIB), 128 * 1024);
        assert_eq!(grown(768 * 1024, 800 * 1024, 16 * MIB), MIB);
        assert_eq!(grown(MIB, MIB + 1, 16 * MIB), 2 * MIB);
        assert_eq!(grown(12 * MIB, 12 * MIB + 1, 16 * MIB), 16 * MIB);
        // A chunk larger than the step is covered whole.
        assert_eq!(grown(0, 5 * MIB, 16 * MIB), 5 * MIB);
    }
}
