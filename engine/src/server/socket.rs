//! A connection's socket for tokio, registered for readability only.
//!
//! Tokio's `UnixStream` asks to be woken when its socket can be written as well, and a
//! Unix socket becomes writable again each time its peer reads from it: every reply or
//! frame a client read would wake a server thread that has nothing to do. For an attached
//! pane that is one wake-up per keystroke, paid by the client right between reading the
//! echo and drawing it. Here the socket is registered for readability alone; a write that
//! finds it full waits on a registration of a duplicate for writability, made for that
//! wait only.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// The reading side of a connection.
pub struct SocketRead {
    socket: Arc<AsyncFd<UnixStream>>,
}

/// The writing side of a connection; dropping it shuts the socket down for writing, as
/// tokio's `OwnedWriteHalf` does.
pub struct SocketWrite {
    socket: Arc<AsyncFd<UnixStream>>,
    /// While a write waits for room: the duplicate registered for writability.
    waiting: Option<AsyncFd<UnixStream>>,
}

fn register(socket: UnixStream, interest: Interest) -> std::io::Result<AsyncFd<UnixStream>> {
    // SAFETY: the AsyncFd owns the socket, whose descriptor stays open and the same until
    // the AsyncFd is dropped.
    unsafe { AsyncFd::register_with_interest(socket, interest) }
        .map_err(|error| error.into_parts().1)
}

/// Splits an accepted connection (must run inside the runtime).
pub fn split(stream: tokio::net::UnixStream) -> std::io::Result<(SocketRead, SocketWrite)> {
    let socket = stream.into_std()?;
    socket.set_nonblocking(true)?;
    let socket = Arc::new(register(socket, Interest::READABLE)?);
    Ok((
        SocketRead {
            socket: socket.clone(),
        },
        SocketWrite {
            socket,
            waiting: None,
        },
    ))
}

impl AsRawFd for SocketRead {
    fn as_raw_fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }
}

impl AsyncRead for SocketRead {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        loop {
            let mut ready = ready!(self.socket.poll_read_ready(context))?;
            let unfilled = buffer.initialize_unfilled();
            let wanted = unfilled.len();
            match ready.try_io(|socket| socket.get_ref().read(unfilled)) {
                Ok(Ok(count)) => {
                    // A short read emptied the socket (as tokio's own streams assume).
                    if count > 0 && count < wanted {
                        ready.clear_ready();
                    }
                    buffer.advance(count);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                Err(_would_block) => {}
            }
        }
    }
}

impl AsyncWrite for SocketWrite {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        loop {
            match this.socket.get_ref().write(bytes) {
                Ok(count) => {
                    this.waiting = None;
                    return Poll::Ready(Ok(count));
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    if this.waiting.is_none() {
                        let duplicate = this.socket.get_ref().try_clone()?;
                        this.waiting = Some(register(duplicate, Interest::WRITABLE)?);
                    }
                    let waiting = this.waiting.as_ref().expect("registered just above");
                    ready!(waiting.poll_write_ready(context))?.clear_ready();
                }
                Err(error) => return Poll::Ready(Err(error)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: Pin<&mut Self>,
        _context: &mut Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        Poll::Ready(self.socket.get_ref().shutdown(std::net::Shutdown::Write))
    }
}

impl Drop for SocketWrite {
    fn drop(&mut self) {
        let _ = self.socket.get_ref().shutdown(std::net::Shutdown::Write);
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn lines_go_both_ways_and_a_full_socket_waits_for_room() {
        let (server, client) = UnixStream::pair().unwrap();
        server.set_nonblocking(true).unwrap();
        client.set_nonblocking(true).unwrap();
        let (mut read, mut write) =
            split(tokio::net::UnixStream::from_std(server).unwrap()).unwrap();
        let mut client = tokio::net::UnixStream::from_std(client).unwrap();

        client.write_all(b"ping\n").await.unwrap();
        let mut buffer = [0u8; 5];
        read.read_exact(&mut buffer).await.unwrap();
        assert_eq!(&buffer, b"ping\n");

        // More than the socket holds: the write waits until the client reads.
        let big = vec![b'x'; 4 * 1024 * 1024];
        let writer = tokio::spawn(async move {
            write.write_all(&big).await.unwrap();
            drop(write);
        });
        let mut received = Vec::new();
        client.read_to_end(&mut received).await.unwrap();
        writer.await.unwrap();
        assert_eq!(received.len(), 4 * 1024 * 1024);
        assert!(received.iter().all(|byte| *byte == b'x'));
    }
}
