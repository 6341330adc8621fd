//! [`Watched`]: a connection's bytes, seen on their way to hyper, to find a request whose head
//! has both `Transfer-Encoding` and `Content-Length`. hyper drops the length before any service
//! sees the request (it reads the chunks, and closes the connection after the answer), so the
//! gate could not refuse such a request, which a proxy in front may read the other way (request
//! smuggling, RFC 9112 §6.1). Each head is found by following the framing of the one before
//! it: a length's bytes, or the chunks to their last one and its trailers. Once a request is
//! flagged, or the bytes are past following (a head or a line longer than hyper takes), the
//! rest of the connection is not looked at.

use std::{
    io,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The longest head followed; hyper refuses longer ones itself.
const MAX_HEAD: usize = 64 * 1024;

/// The longest chunk-size or trailer line followed.
const MAX_LINE: usize = 4 * 1024;

/// A connection whose requests' heads are looked at as hyper reads them.
pub struct Watched<T> {
    inner: T,
    framing: Framing,
    /// Set once a request on this connection has both headers; the gate refuses from then on
    /// (hyper closes the connection after that request's answer).
    pub flagged: Arc<AtomicBool>,
}

impl<T> Watched<T> {
    /// `inner`, watched.
    pub fn new(inner: T) -> Self {
        Self {
            inner,
            framing: Framing::Head(Vec::new()),
            flagged: Arc::default(),
        }
    }
}

/// Where in the stream of requests the bytes are.
#[derive(Debug, PartialEq, Eq)]
enum Framing {
    /// A request's head, up to its empty line.
    Head(Vec<u8>),
    /// This many bytes of a body with a length.
    Body(u64),
    /// A chunk-size line.
    ChunkSize(Vec<u8>),
    /// This many bytes of a chunk, then its CRLF.
    Chunk(u64),
    /// The CRLF after a chunk's data: how many of its bytes are still to come.
    ChunkEnd(u8),
    /// Trailer lines, up to an empty one.
    Trailers(Vec<u8>),
    /// No longer followed.
    Done,
}

impl Framing {
    /// Follows `bytes`; `true` when a head with both headers went by.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() {
            match self {
                Self::Done => return false,
                Self::Head(head) => {
                    let (byte, rest) = (bytes[0], &bytes[1..]);
                    bytes = rest;
                    // Empty lines before a request line are allowed (RFC 9112 §2.2).
                    if head.is_empty() && (byte == b'\r' || byte == b'\n') {
                        continue;
                    }
                    head.push(byte);
                    if head.len() > MAX_HEAD {
                        *self = Self::Done;
                    } else if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
                        match body_of(head) {
                            Some(next) => *self = next,
                            None => {
                                *self = Self::Done;
                                return true;
                            }
                        }
                    }
                }
                Self::Body(left) => {
                    let taken = usize::try_from(*left)
                        .unwrap_or(usize::MAX)
                        .min(bytes.len());
                    bytes = &bytes[taken..];
                    *left -= taken as u64;
                    if *left == 0 {
                        *self = Self::Head(Vec::new());
                    }
                }
                Self::ChunkSize(line) | Self::Trailers(line) => {
                    let (byte, rest) = (bytes[0], &bytes[1..]);
                    bytes = rest;
                    line.push(byte);
                    if line.len() > MAX_LINE {
                        *self = Self::Done;
                    } else if byte == b'\n' {
                        *self = self.after_line();
                    }
                }
                Self::Chunk(left) => {
                    let taken = usize::try_from(*left)
                        .unwrap_or(usize::MAX)
                        .min(bytes.len());
                    bytes = &bytes[taken..];
                    *left -= taken as u64;
                    if *left == 0 {
                        *self = Self::ChunkEnd(2);
                    }
                }
                Self::ChunkEnd(left) => {
                    bytes = &bytes[1..];
                    *left -= 1;
                    if *left == 0 {
                        *self = Self::ChunkSize(Vec::new());
                    }
                }
            }
        }
        false
    }

    /// What follows a whole chunk-size or trailer line.
    fn after_line(&self) -> Self {
        match self {
            Self::ChunkSize(line) => {
                let text = String::from_utf8_lossy(line);
                let size = text.split(';').next().unwrap_or_default().trim();
                match u64::from_str_radix(size, 16) {
                    Ok(0) => Self::Trailers(Vec::new()),
                    Ok(size) => Self::Chunk(size),
                    Err(_) => Self::Done,
                }
            }
            Self::Trailers(line) if line.trim_ascii().is_empty() => Self::Head(Vec::new()),
            Self::Trailers(_) => Self::Trailers(Vec::new()),
            _ => Self::Done,
        }
    }
}

/// How the body after `head` is framed; `None` when the head has both `Transfer-Encoding`
/// and `Content-Length`.
fn body_of(head: &[u8]) -> Option<Framing> {
    let text = String::from_utf8_lossy(head);
    let (mut length, mut chunked, mut encoded) = (None, false, false);
    for line in text.lines().skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.trim().parse::<u64>().ok());
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            encoded = true;
            chunked = value
                .rsplit(',')
                .next()
                .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
        }
    }
    match (encoded, length) {
        (true, Some(_)) => None,
        (true, None) if chunked => Some(Framing::ChunkSize(Vec::new())),
        // hyper refuses an encoding that does not end in chunked, and an unreadable length.
        (true, None) | (false, Some(None)) => Some(Framing::Done),
        (false, Some(Some(0)) | None) => Some(Framing::Head(Vec::new())),
        (false, Some(Some(length))) => Some(Framing::Body(length)),
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) && this.framing.feed(&buf.filled()[before..]) {
            this.flagged.store(true, Ordering::Relaxed);
        }
        read
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `stream` in pieces of `step` bytes; whether it flagged a request.
    fn flagged(stream: &[u8], step: usize) -> bool {
        let mut framing = Framing::Head(Vec::new());
        stream.chunks(step).any(|piece| framing.feed(piece))
    }

    #[test]
    fn a_head_with_both_framings_is_flagged_wherever_it_comes_in_a_connection() {
        let post = |headers: &str, body: &str| {
            format!("POST /mcp HTTP/1.1\r\nHost: x\r\n{headers}\r\n{body}")
        };
        let both = post(
            "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n",
            "0\r\n\r\n",
        );
        let reversed = post(
            "content-length: 4\r\ntransfer-encoding: chunked\r\n",
            "0\r\n\r\n",
        );
        let sized = post("Content-Length: 5\r\n", "hello");
        let chunked = post(
            "Transfer-Encoding: chunked\r\n",
            "5;x=1\r\nhello\r\n3\r\n\r\nA\r\n0\r\nTrailer: t\r\n\r\n",
        );
        let bare = "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n".to_owned();
        for step in [1, 3, 7, 4096] {
            assert!(flagged(both.as_bytes(), step), "{step}");
            assert!(flagged(reversed.as_bytes(), step), "{step}");
            for fine in [&sized, &chunked, &bare] {
                assert!(!flagged(fine.as_bytes(), step), "{step}: {fine:?}");
            }
            // Behind requests of each framing, on one connection: still found.
            let pipelined = format!("{sized}{chunked}{bare}\r\n{both}");
            assert!(flagged(pipelined.as_bytes(), step), "{step}");
            // A body that reads like a head is a body: not flagged.
            let inside = post(&format!("Content-Length: {}\r\n", both.len()), &both);
            assert!(!flagged(inside.as_bytes(), step), "{step}");
        }
        // Past following: a head longer than hyper takes.
        let mut framing = Framing::Head(Vec::new());
        assert!(!framing.feed(&vec![b'a'; MAX_HEAD + 1]));
        assert_eq!(framing, Framing::Done);
    }
}
