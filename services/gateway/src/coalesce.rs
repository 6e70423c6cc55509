//! Write coalescing for client connections.
//!
//! hyper's HTTP/2 connection flushes after every frame it queues, so a watch
//! event fanned out to 50 streams of one connection became 50 TLS records
//! and 50 `write` syscalls. [`Coalesce`] buffers writes and, on flush,
//! yields to the scheduler once before writing: the other streams of the
//! same connection queue their frames in the meantime, and the whole batch
//! goes out as one TLS write. The delay is one scheduler round, not a timer.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Bytes buffered before a write is forced without waiting for a flush.
const MAX_BUFFER: usize = 256 * 1024;

/// An IO whose writes are buffered until a flush, and whose flushes yield
/// once before writing.
pub struct Coalesce<S> {
    inner: S,
    buf: Vec<u8>,
    /// Bytes of `buf` already written.
    written: usize,
    yielded: bool,
}

impl<S> Coalesce<S> {
    /// Wrap a connection.
    pub fn new(inner: S) -> Self {
        Coalesce {
            inner,
            buf: Vec::new(),
            written: 0,
            yielded: false,
        }
    }
}

impl<S: AsyncWrite + Unpin> Coalesce<S> {
    /// Write the whole buffer out.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.buf.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.buf[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.buf.clear();
        self.written = 0;
        if self.buf.capacity() > MAX_BUFFER {
            self.buf.shrink_to(MAX_BUFFER);
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Coalesce<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Coalesce<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.buf.len() >= MAX_BUFFER {
            ready!(this.poll_drain(cx))?;
        }
        let n = data.len().min(MAX_BUFFER - this.buf.len());
        this.buf.extend_from_slice(&data[..n]);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.buf.len() > this.written && !this.yielded {
            // Let the connection's other streams queue their data first.
            this.yielded = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        ready!(this.poll_drain(cx))?;
        this.yielded = false;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn writes_arrive_whole_and_in_order_after_a_flush() {
        let (a, mut b) = tokio::io::duplex(1 << 20);
        let mut w = Coalesce::new(a);
        for i in 0..1000u32 {
            w.write_all(&i.to_be_bytes()).await.unwrap();
        }
        let big = vec![7u8; 3 * MAX_BUFFER];
        w.write_all(&big).await.unwrap();
        w.flush().await.unwrap();
        w.shutdown().await.unwrap();
        drop(w);
        let mut got = Vec::new();
        b.read_to_end(&mut got).await.unwrap();
        assert_eq!(got.len(), 4000 + big.len());
        for i in 0..1000u32 {
            let at = i as usize * 4;
            assert_eq!(&got[at..at + 4], &i.to_be_bytes());
        }
        assert!(got[4000..].iter().all(|b| *b == 7));
    }
}
