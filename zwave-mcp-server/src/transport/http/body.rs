//! Request bodies, read whole before rmcp sees them: at most [`MAX_BODY_BYTES`] each, within
//! [`BODY_TIMEOUT`], copied into one buffer as they come (a body sent in one-byte chunks cost
//! some 40 bytes a byte when its chunks were kept: 40 MiB for one body), and what bodies hold
//! past their first [`FREE_BYTES`] within [`BODIES_HELD_BYTES`] for all of them together
//! ([`Budget`]): 512 connections each holding a body just under the limit took 553 MiB. Every
//! message a client has reason to send fits the free part, so bodies stalled at the limit
//! never keep an ordinary request out.

use std::{pin::pin, sync::Arc, time::Duration};

use bytes::{Buf as _, Bytes};
use http_body_util::BodyExt as _;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The largest request body read: the largest message either transport takes (why that size:
/// [`MAX_MESSAGE_BYTES`](crate::transport::shape::MAX_MESSAGE_BYTES)).
pub const MAX_BODY_BYTES: usize = crate::transport::shape::MAX_MESSAGE_BYTES;

/// How long a client has to send a request's body, from the end of its headers: a client
/// that trickles it is dropped, not waited for.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The most bytes past [`FREE_BYTES`] that request bodies hold at once, being read or being
/// handled: some 32 bodies at the largest.
pub const BODIES_HELD_BYTES: usize = 32 * 1024 * 1024;

/// What each body may hold before it counts against [`BODIES_HELD_BYTES`]: more than any
/// message a client has reason to send (512 connections: 32 MiB at most).
pub const FREE_BYTES: usize = 64 * 1024;

/// The unit the budget is counted in.
const GRAIN: usize = 16 * 1024;

/// The room all request bodies share, in [`GRAIN`]s.
#[derive(Clone)]
pub struct Budget(Arc<Semaphore>);

impl Default for Budget {
    fn default() -> Self {
        Self(Arc::new(Semaphore::new(BODIES_HELD_BYTES / GRAIN)))
    }
}

/// A body read whole, and its room in the [`Budget`], given back when this is dropped.
pub struct Held {
    /// The body.
    pub bytes: Bytes,
    _room: Option<OwnedSemaphorePermit>,
}

/// Why a body was not read.
#[derive(Debug, PartialEq, Eq)]
pub enum Unread {
    /// Larger than [`MAX_BODY_BYTES`].
    TooLarge,
    /// Broken off, or not a body hyper could read.
    Broken,
    /// Not all there within [`BODY_TIMEOUT`].
    Late,
    /// The [`Budget`] is spent: other bodies hold all of it.
    Busy,
}

/// `body` (of `declared` length, when the head said one) read whole within `budget`.
///
/// # Errors
/// [`Unread`]: why not.
pub async fn read<B>(body: B, declared: Option<u64>, budget: &Budget) -> Result<Held, Unread>
where
    B: hyper::body::Body,
    B::Error: std::fmt::Display,
{
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(Unread::TooLarge);
    }
    tokio::time::timeout(BODY_TIMEOUT, read_within(body, declared, budget))
        .await
        .unwrap_or(Err(Unread::Late))
}

async fn read_within<B>(body: B, declared: Option<u64>, budget: &Budget) -> Result<Held, Unread>
where
    B: hyper::body::Body,
    B::Error: std::fmt::Display,
{
    let mut room = Room {
        budget,
        held: None,
        grains: 0,
    };
    let mut data = Vec::new();
    if let Some(declared) = declared.and_then(|length| usize::try_from(length).ok()) {
        room.grow_to(declared)?;
        data.reserve_exact(declared);
    }
    let mut body = pin!(body);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| {
            tracing::debug!(%error, "a request's body could not be read");
            Unread::Broken
        })?;
        let Ok(mut chunk) = frame.into_data() else {
            continue;
        };
        let needed = data.len() + chunk.remaining();
        if needed > MAX_BODY_BYTES {
            return Err(Unread::TooLarge);
        }
        if needed > data.capacity() {
            // As a `Vec` grows, counted before it does.
            let capacity = needed.max(data.capacity() * 2).min(MAX_BODY_BYTES);
            room.grow_to(capacity)?;
            data.reserve_exact(capacity - data.len());
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            let taken = part.len();
            data.extend_from_slice(part);
            chunk.advance(taken);
        }
    }
    Ok(Held {
        bytes: Bytes::from(data),
        _room: room.held,
    })
}

/// The room one body holds in the budget.
struct Room<'a> {
    budget: &'a Budget,
    held: Option<OwnedSemaphorePermit>,
    grains: usize,
}

impl Room<'_> {
    /// Room for `bytes` in all, or [`Unread::Busy`].
    fn grow_to(&mut self, bytes: usize) -> Result<(), Unread> {
        let grains = bytes.saturating_sub(FREE_BYTES).div_ceil(GRAIN);
        if grains <= self.grains {
            return Ok(());
        }
        let more = u32::try_from(grains - self.grains).map_err(|_| Unread::Busy)?;
        let taken = Arc::clone(&self.budget.0)
            .try_acquire_many_owned(more)
            .map_err(|_| Unread::Busy)?;
        match &mut self.held {
            Some(held) => held.merge(taken),
            None => self.held = Some(taken),
        }
        self.grains = grains;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt as _;

    use super::*;

    /// A body of `chunks`, then (with `hang`) nothing more, ever.
    fn trickled(
        chunks: Vec<Result<Bytes, std::io::Error>>,
        hang: bool,
    ) -> impl hyper::body::Body<Data = Bytes, Error = std::io::Error> {
        let frames = futures_util::stream::iter(chunks)
            .chain(futures_util::stream::pending().take(usize::from(hang)))
            .map(|chunk| chunk.map(hyper::body::Frame::data));
        http_body_util::StreamBody::new(frames)
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_arriving_is_late_after_the_deadline() {
        let started = tokio::time::Instant::now();
        let body = trickled(vec![Ok(Bytes::from_static(b"{\"jsonrpc\""))], true);
        let read = read(body, None, &Budget::default()).await;
        assert_eq!(read.err(), Some(Unread::Late));
        assert_eq!(started.elapsed(), BODY_TIMEOUT);
    }

    #[tokio::test]
    async fn a_body_broken_off_or_too_large_is_not_read_and_a_whole_one_is() {
        let budget = Budget::default();
        let broken = trickled(
            vec![
                Ok(Bytes::from_static(b"{")),
                Err(std::io::Error::other("connection reset")),
            ],
            false,
        );
        assert_eq!(
            read(broken, None, &budget).await.err(),
            Some(Unread::Broken)
        );
        let chunk = Bytes::from(vec![b' '; 512 * 1024]);
        let large = trickled((0..3).map(|_| Ok(chunk.clone())).collect(), false);
        assert_eq!(
            read(large, None, &budget).await.err(),
            Some(Unread::TooLarge)
        );
        let declared = trickled(vec![], false);
        let over = Some(MAX_BODY_BYTES as u64 + 1);
        assert_eq!(
            read(declared, over, &budget).await.err(),
            Some(Unread::TooLarge)
        );
        let whole = trickled(vec![Ok(Bytes::from_static(b"{}"))], false);
        assert_eq!(read(whole, None, &budget).await.unwrap().bytes, "{}");
        // Nothing is held once the bodies are gone.
        assert_eq!(budget.0.available_permits(), BODIES_HELD_BYTES / GRAIN);
    }

    #[tokio::test]
    async fn one_byte_chunks_cost_their_bytes_and_bodies_held_at_once_are_bounded() {
        let budget = Budget::default();
        let bytes: Vec<Result<Bytes, std::io::Error>> = (0..MAX_BODY_BYTES)
            .map(|_| Ok(Bytes::from_static(b" ")))
            .collect();
        let held = read(trickled(bytes, false), None, &budget).await.unwrap();
        assert_eq!(held.bytes.len(), MAX_BODY_BYTES);
        // The largest bodies, held at once, until the budget is spent.
        let mut holding = vec![held];
        loop {
            let body = trickled(vec![Ok(Bytes::from(vec![b' '; MAX_BODY_BYTES]))], false);
            match read(body, Some(MAX_BODY_BYTES as u64), &budget).await {
                Ok(held) => holding.push(held),
                Err(unread) => {
                    assert_eq!(unread, Unread::Busy);
                    break;
                }
            }
        }
        let counted = MAX_BODY_BYTES - FREE_BYTES;
        assert_eq!(holding.len(), BODIES_HELD_BYTES / counted);
        // A body an ordinary client sends is read even now: it fits the free part.
        let small = trickled(vec![Ok(Bytes::from(vec![b' '; FREE_BYTES]))], false);
        assert!(read(small, None, &budget).await.is_ok());
        holding.pop();
        let body = trickled(vec![Ok(Bytes::from(vec![b' '; MAX_BODY_BYTES]))], false);
        assert!(read(body, None, &budget).await.is_ok());
    }
}
