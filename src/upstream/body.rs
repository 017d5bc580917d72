//! Reading a whole upstream body under the isolate's memory budget: the body's cost is reserved
//! from its `Content-Length` before a byte of it is read, or grown as it streams when no length
//! is declared, on the call's reservations ([`crate::memory`]), which outlive the body.

use super::scrub::{self, Scrubber};
use crate::memory::{BodyReservation, Busy, CallMemory, BYTES_PER_BODY_BYTE, SMALL_BODY_BYTES};
use crate::ports::{
    header, BodyStream, Clock, TransportError, UpstreamHttp, UpstreamRequest, UpstreamResponse,
};
use crate::value::Allowance;

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

/// Runs `parse` on a body of `body_bytes` that this call read (or holds) under its reservation,
/// with the room its value may take: what the body reserved ([`BYTES_PER_BODY_BYTE`] per byte),
/// then more taken from the budget without waiting (a parse runs to its end without yielding)
/// while it fits where the body's reservation could have ([`CallMemory::take_now`]). What was
/// taken and not used is given back; a parse that needs more than it can get stops with
/// [`crate::value::ParseError::over_allowance`]. Returns what `parse` did and the bytes it could
/// take in all.
pub(crate) fn within_reservation<R>(
    memory: &CallMemory,
    body_bytes: usize,
    parse: impl FnOnce(&mut Allowance<'_>) -> R,
) -> (R, usize) {
    let reserved = body_bytes.saturating_mul(BYTES_PER_BODY_BYTE);
    let small = body_bytes <= SMALL_BODY_BYTES;
    let mut grown = 0usize;
    let mut more = |bytes: usize| {
        let taken = memory.take_now(bytes, small);
        if taken {
            grown += bytes;
        }
        taken
    };
    let mut room = Allowance::growing(reserved, &mut more);
    let parsed = parse(&mut room);
    let (allowed, spent) = (room.allowed(), room.spent());
    memory.give_back(allowed.saturating_sub(spent).min(grown));
    (parsed, allowed)
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

    /// A text of `n` zeros: some 40 bytes of value per 2 bytes of text.
    fn zeros(n: usize) -> String {
        format!("[{}0]", "0,".repeat(n - 1))
    }

    /// What parsing `text` counts, with no bound.
    fn needed(text: &str) -> usize {
        let mut room = Allowance::unbounded();
        crate::value::parse_within(text, &mut room).unwrap();
        room.spent()
    }

    #[test]
    fn a_value_grows_past_its_reservation_from_the_budget_and_gives_back_what_it_did_not_use() {
        let text = zeros(2 * MIB);
        let (needed, reserved) = (needed(&text), text.len() * BYTES_PER_BODY_BYTE);
        let budget = crate::memory::MemoryBudget::new(128 * MIB);
        let call = budget.call();
        let (parsed, held) = within_reservation(&call, text.len(), |room| {
            crate::value::parse_within(&text, room)
        });
        assert!(parsed.is_ok());
        assert!(held >= needed, "{held} for {needed}");
        // What the reservation did not pay for stays held by the call, and no more.
        assert_eq!(call.held(), needed - reserved);
        drop(call);
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn a_value_the_budget_has_no_room_for_stops_the_parse_within_the_budget() {
        let text = zeros(2 * MIB);
        let budget = crate::memory::MemoryBudget::new(32 * MIB);
        let call = budget.call();
        let (parsed, held) = within_reservation(&call, text.len(), |room| {
            crate::value::parse_within(&text, room)
        });
        assert!(parsed.unwrap_err().over_allowance());
        assert!(held < needed(&text));
        assert!(budget.in_use() <= 32 * MIB, "{}", budget.in_use());
        drop(call);
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn a_small_bodys_value_may_fill_the_budget_and_a_large_ones_leaves_the_small_ones_share() {
        let budget = crate::memory::MemoryBudget::new(8 * MIB);
        let other = budget.call();
        assert!(other.take_now(13 * MIB / 2, true));
        // Each needs more past its reservation than the 0.5 MiB large bodies have left, and less
        // than the 1.5 MiB left in all (by more than the last step may overshoot).
        let (small, large) = (zeros(20_000), zeros(62_000));
        let large_bytes = SMALL_BODY_BYTES + 1;
        let growth = |text: &str, bytes: usize| needed(text) - bytes * BYTES_PER_BODY_BYTE;
        for need in [growth(&small, 1), growth(&large, large_bytes)] {
            assert!((MIB / 2..5 * MIB / 4).contains(&need), "{need}");
        }
        for (text, body_bytes, ok) in [(&small, 1, true), (&large, large_bytes, false)] {
            let call = budget.call();
            let (parsed, _) = within_reservation(&call, body_bytes, |room| {
                crate::value::parse_within(text, room)
            });
            assert_eq!(parsed.is_ok(), ok);
            let room = if ok { 8 * MIB } else { 7 * MIB };
            assert!(budget.in_use() <= room, "{}", budget.in_use());
        }
    }
}
